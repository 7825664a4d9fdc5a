//! The cyclictest simulation (workloads.md §5.2): the main thread and the measurement threads
//! (`timerthread()` of rt-tests 2.5 in its default mode, `clock_nanosleep(TIMER_ABSTIME)` on
//! `CLOCK_MONOTONIC`) as task programs, and the [`Workload`] that creates them and renders
//! what cyclictest prints.
//!
//! ```text
//! main ──clone──▶ thread i: now = clock_gettime(); next = now + I; stop = now + D
//!  │ pthread_join      loop { clock_nanosleep(ABS, next); now = clock_gettime();
//!  ▼ histogram            lat = calcdiff(now, next); record;
//!                         next += I; while now > next: next += I;
//!                         if now >= stop: shutdown }
//! ```
//!
//! The latency therefore is everything between the timer's expiry time and the thread's
//! return to user space: the 50 µs timer slack of a fair sleeper (§1.6, the kernel's range
//! hrtimer expired early by any other timer interrupt in `[T, T + slack]`), the interrupt,
//! wakeup and preemption decision, the wait for the running task, and the switch.
//!
//! Model decisions (where the spec is silent):
//!
//! * **Clock.** `CLOCK_MONOTONIC` is the simulated time (boot at 0). The clock is read at the
//!   instant `clock_nanosleep` returns to user space; the call's `c_clock` is charged after
//!   the reading.
//! * **Policy.** Each measurement thread calls `sched_setscheduler()` itself, so its policy is
//!   cyclictest's, whatever `policy=` the shell gave (the main thread keeps that one). In
//!   rt-tests 2.5 that is SCHED_OTHER unless the policy is FIFO/RR with a priority
//!   (`force_sched_other`): `--policy=batch|idle|fair` threads run SCHED_OTHER. Nice, slice (`slice=` is the seed-004 `sched_setattr` runtime, which
//!   `sched_setscheduler` keeps) and the CPU mask are inherited. SCHED_FIFO/RR (`-p PRIO`
//!   alone means FIFO) is refused until the RT class exists.
//! * **Main thread.** It creates the threads and joins them. The real one also wakes every
//!   10 ms (`usleep(10000)`) to refresh the screen; §5.2 leaves it out, and so do we.
//! * **Stopping.** The first thread that wakes at or after its own `start + D`
//!   (`calcdiff(now, stop) >= 0`) sets the global `shutdown`; every thread records the sample
//!   of its current wakeup and exits at its next loop test (the real main thread would
//!   interrupt the others' sleeps within ~10 ms instead). Without `-D` the thread stops at the
//!   simulated run length (`--duration`), as if interrupted; `-l N` stops a thread after N
//!   samples.
//! * **`/dev/cpu_dma_latency`.** Writing 0 (the default; `--latency` sets another value)
//!   restricts idle to the states whose exit latency fits (§1.6: the shallowest for 0); the
//!   cpuidle governor then never enters a deeper one. `--laptop` / `--default-system` skip it.
//! * **`--secaligned`.** The first thread to start picks the next full second (the one after,
//!   if less than 0.1 s remains) plus the offset; the others use the same instant.

use super::options::{parse, Options, Policy as CtPolicy, Resolved};
use super::output::{render, Results, ThreadResult};
use super::stats::{calcdiff_us, ThreadStats};
use crate::workload::{Better, Env, Metric, Workload, WorkloadError};
use schedlab_platform::CpuMask;
use schedlab_sched::sched::{Policy, TaskId};
use schedlab_sched::{Ctx, Op, Procfs, Program, Spawn, Sys, SysResult, TaskAttrs};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

const NSEC_PER_SEC: u64 = 1_000_000_000;

/// Builds the cyclictest workload from the words after `cyclictest`.
pub fn workload(line: &str, args: &[String]) -> Result<Box<dyn Workload>, WorkloadError> {
    let opts = parse(args).map_err(|e| WorkloadError::option(line, e.to_string()))?;
    Ok(Box::new(Cyclictest {
        line: line.to_string(),
        opts,
        resolved: None,
        shared: None,
    }))
}

/// The cyclictest model.
pub struct Cyclictest {
    line: String,
    opts: Options,
    resolved: Option<Resolved>,
    shared: Option<Rc<RefCell<Shared>>>,
}

/// One measurement thread's `struct thread_param` + `struct thread_stat`.
#[derive(Debug)]
struct ThreadData {
    interval_ns: u64,
    stats: ThreadStats,
    /// Every sample (µs → count), for the metrics whatever `-h` says.
    all: BTreeMap<u64, u64>,
    pid: i32,
    task: Option<TaskId>,
}

/// What the threads share.
#[derive(Debug)]
struct Shared {
    duration_ns: Option<u64>,
    loops: Option<u64>,
    /// `--secaligned` offset, ns.
    secaligned_ns: Option<u64>,
    /// The common first instant of `--secaligned`.
    globalt: Option<u64>,
    shutdown: bool,
    threads: Vec<ThreadData>,
    main_task: Option<TaskId>,
}

type Sh = Rc<RefCell<Shared>>;

// ========================================================================= main thread

struct MainProg {
    sh: Sh,
    /// Attributes of each measurement thread.
    attrs: Vec<TaskAttrs>,
    spawned: usize,
}

impl Program for MainProg {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        if self.spawned == 0 {
            self.sh.borrow_mut().main_task = Some(cx.task());
        }
        if self.spawned < self.attrs.len() {
            let i = self.spawned;
            self.spawned += 1;
            return Op::Spawn(Box::new(Spawn {
                program: Box::new(TimerThread::new(self.sh.clone(), i)),
                thread: true,
                attrs: self.attrs[i].clone(),
            }));
        }
        // pthread_join every thread, then leave
        match last {
            SysResult::NoChild => Op::Exit,
            _ => Op::WaitChild,
        }
    }
}

// ========================================================================= timerthread()

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TState {
    Start,
    /// Charging `c_clock`, then sleeping until `next`.
    Sleep,
    /// Back from `clock_nanosleep`.
    Woken,
    Exit,
}

struct TimerThread {
    sh: Sh,
    idx: usize,
    st: TState,
    next: u64,
    stop: Option<u64>,
    clock_pending: u64,
}

impl TimerThread {
    fn new(sh: Sh, idx: usize) -> TimerThread {
        TimerThread {
            sh,
            idx,
            st: TState::Start,
            next: 0,
            stop: None,
            clock_pending: 0,
        }
    }
}

impl Program for TimerThread {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        loop {
            match self.st {
                TState::Start => {
                    let mut sh = self.sh.borrow_mut();
                    let mut now = cx.now();
                    if let Some(offset) = sh.secaligned_ns {
                        let g = *sh.globalt.get_or_insert_with(|| {
                            // "ensure that the thread start timestamp is not in the past"
                            let sec = now / NSEC_PER_SEC;
                            let add = if now % NSEC_PER_SEC > 900_000_000 {
                                2
                            } else {
                                1
                            };
                            (sec + add) * NSEC_PER_SEC
                        });
                        now = g + offset;
                    }
                    self.stop = sh.duration_ns.map(|d| now + d);
                    let t = &mut sh.threads[self.idx];
                    t.pid = cx.pid();
                    t.task = Some(cx.task());
                    self.next = now + t.interval_ns;
                    self.clock_pending = cx.costs().c_clock.0;
                    self.st = TState::Sleep;
                }
                TState::Sleep => {
                    if self.clock_pending > 0 {
                        return Op::Run(std::mem::take(&mut self.clock_pending));
                    }
                    self.st = TState::Woken;
                    return Op::SleepUntil(self.next);
                }
                TState::Woken => {
                    let now = cx.now();
                    self.clock_pending = cx.costs().c_clock.0;
                    let mut sh = self.sh.borrow_mut();
                    let diff = calcdiff_us(now, self.next).max(0) as u64;
                    let t = &mut sh.threads[self.idx];
                    t.stats.record(diff);
                    *t.all.entry(diff).or_insert(0) += 1;
                    let cycles = t.stats.cycles;
                    let interval = t.interval_ns;
                    if let Some(stop) = self.stop {
                        if calcdiff_us(now, stop) >= 0 {
                            sh.shutdown = true;
                        }
                    }
                    self.next += interval;
                    while now > self.next {
                        self.next += interval;
                    }
                    let done = sh.shutdown || sh.loops == Some(cycles);
                    self.st = if done { TState::Exit } else { TState::Sleep };
                }
                TState::Exit => {
                    if self.clock_pending > 0 {
                        return Op::Run(std::mem::take(&mut self.clock_pending));
                    }
                    return Op::Exit;
                }
            }
        }
    }
}

// ========================================================================= the workload

impl Cyclictest {
    fn bad_option(&self, message: String) -> WorkloadError {
        WorkloadError::option(&self.line, message)
    }

    fn shared(&self) -> std::cell::Ref<'_, Shared> {
        self.shared
            .as_ref()
            .expect("cyclictest: output before setup")
            .borrow()
    }

    /// The parsed command line.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Everything the printer needs.
    pub fn results(&self) -> Results {
        let sh = self.shared();
        Results {
            resolved: self.resolved.clone().expect("set up"),
            threads: sh
                .threads
                .iter()
                .map(|t| ThreadResult {
                    tid: t.pid.max(0) as u32,
                    stats: t.stats.clone(),
                })
                .collect(),
            loadavg: None,
        }
    }

    /// All samples of all threads (µs → count).
    fn all_samples(&self) -> BTreeMap<u64, u64> {
        let sh = self.shared();
        let mut all = BTreeMap::new();
        for t in &sh.threads {
            for (&v, &n) in &t.all {
                *all.entry(v).or_insert(0) += n;
            }
        }
        all
    }
}

/// Percentile `p` of a sample map with the rule of [`super::histogram_percentile`]: the
/// smallest value whose cumulative count reaches `p / 100 × total`, compared exactly in
/// integers (`p` to a thousandth of a percent).
pub fn percentile(samples: &BTreeMap<u64, u64>, p: f64) -> Option<u64> {
    let total: u64 = samples.values().sum();
    if total == 0 {
        return None;
    }
    let threshold = (p * 1000.0).round().clamp(0.0, 100_000.0) as u128 * total as u128;
    let mut cum = 0u64;
    for (&v, &n) in samples {
        cum += n;
        if cum as u128 * 100_000 >= threshold {
            return Some(v);
        }
    }
    samples.keys().next_back().copied()
}

impl Workload for Cyclictest {
    fn max_tasks(&self, ncpus: usize) -> u64 {
        // The main thread plus one measurement thread per -t (-t without a number: per CPU).
        1 + u64::from(self.opts.resolve(ncpus as u32).num_threads)
    }

    fn needs_duration(&self) -> bool {
        self.opts.duration_secs.is_none() && self.opts.loops.is_none()
    }

    fn warnings(&self) -> Vec<String> {
        // the option parser's messages already name the program
        fn prefixed(m: &str) -> String {
            if m.starts_with("cyclictest: ") {
                m.to_string()
            } else {
                format!("cyclictest: {m}")
            }
        }
        let mut w: Vec<String> = self.opts.warnings.iter().map(|m| prefixed(m)).collect();
        if let Some(r) = &self.resolved {
            w.extend(r.warnings.iter().map(|m| prefixed(m)));
        }
        w
    }

    fn program(&self) -> &str {
        "cyclictest"
    }

    fn setup(&mut self, sys: &mut dyn Sys, env: &Env) -> Result<(), WorkloadError> {
        let o = &self.opts;
        if o.set_cpu_dma_latency {
            sys.cpu_dma_latency(o.latency_target_us as u64);
        }
        let ncpus = sys.ncpus();
        let available = env
            .placement
            .cpus
            .as_ref()
            .map(|m| m.weight())
            .unwrap_or(ncpus);
        let r = o.resolve(available as u32);
        let mut attrs = Vec::new();
        for i in 0..r.num_threads {
            // cyclictest 2.5 gives a thread SCHED_OTHER unless its policy is FIFO/RR with a
            // priority (`force_sched_other`), so batch and idle end up here as other too.
            // With -p > 0 (or --policy=fifo|rr) the thread sets itself SCHED_FIFO/RR at its
            // priority (`--priospread` lowers it per thread), whatever the shell gave main.
            let (policy, rt_priority) = match o.thread_policy(&r, i) {
                CtPolicy::Other => (Policy::Normal, Some(0)),
                CtPolicy::Batch => (Policy::Batch, Some(0)),
                CtPolicy::Idle => (Policy::Idle, Some(0)),
                CtPolicy::Fifo => (Policy::Fifo, Some(o.thread_priority(&r, i))),
                CtPolicy::Rr => (Policy::Rr, Some(o.thread_priority(&r, i))),
            };
            if let Some(p) = rt_priority.filter(|&p| p > 99) {
                return Err(self.bad_option(format!(
                    "cyclictest: thread {i} would get the default priority {p} (threads + 1), \
                     above 99: sched_setscheduler fails with EINVAL; give -p"
                )));
            }
            let cpus = match o.thread_cpu(i, ncpus as u32) {
                Some(c) if c as usize >= ncpus => {
                    return Err(self.bad_option(format!(
                        "cyclictest: -a: thread {i} would run on CPU {c}, which this \
                         {ncpus}-CPU machine does not have"
                    )))
                }
                Some(c) => Some(CpuMask::single(c as usize)),
                // --mainaffinity applies to the main thread only
                None if o.main_affinity.is_some() => Some(
                    env.placement
                        .cpus
                        .clone()
                        .unwrap_or_else(|| CpuMask::first_n(ncpus)),
                ),
                None => None,
            };
            attrs.push(TaskAttrs {
                comm: Some("cyclictest".to_string()),
                policy: Some(policy),
                rt_priority,
                cpus,
                ..TaskAttrs::default()
            });
        }
        let duration_ns = match (o.duration_secs, env.duration_ns) {
            (Some(d), _) => Some(d * NSEC_PER_SEC),
            (None, Some(d)) => Some(d),
            (None, None) if o.loops.is_some() => None,
            (None, None) => {
                return Err(self.bad_option(
                    "cyclictest: without -D or -l it runs until interrupted; give -D, -l or \
                     the simulation's --duration"
                        .to_string(),
                ))
            }
        };
        let mut main_attrs = env.placement.attrs("cyclictest", env.tg);
        if let Some(list) = &o.main_affinity {
            let mut m = CpuMask::default();
            for &c in list.iter().filter(|&&c| (c as usize) < ncpus) {
                m.set(c as usize);
            }
            if m.is_empty() {
                return Err(self.bad_option(format!(
                    "cyclictest: --mainaffinity: no CPU of {list:?} exists on this \
                     {ncpus}-CPU machine"
                )));
            }
            main_attrs.cpus = Some(m);
        }
        let threads = (0..r.num_threads)
            .map(|i| ThreadData {
                interval_ns: o.thread_interval_us(i) * 1000,
                stats: ThreadStats::new(o.histogram),
                all: BTreeMap::new(),
                pid: 0,
                task: None,
            })
            .collect();
        let sh = Rc::new(RefCell::new(Shared {
            duration_ns,
            loops: o.loops,
            secaligned_ns: o.secaligned.map(|us| us as u64 * 1000),
            globalt: None,
            shutdown: false,
            threads,
            main_task: None,
        }));
        self.shared = Some(sh.clone());
        self.resolved = Some(r);
        let prog = MainProg {
            sh,
            attrs,
            spawned: 0,
        };
        let main = sys.fork(Box::new(prog), &main_attrs);
        sys.wake_up_new_task(main);
        Ok(())
    }

    fn output(&self, _procfs: &dyn Procfs) -> String {
        render(&self.opts, &self.results())
    }

    fn metrics(&self, _procfs: &dyn Procfs) -> Vec<Metric> {
        let all = self.all_samples();
        let (sum, n) = {
            let sh = self.shared();
            sh.threads.iter().fold((0i64, 0u64), |(s, n), t| {
                (s + t.stats.sum, n + t.stats.cycles)
            })
        };
        let avg = if n == 0 { 0 } else { sum / n as i64 };
        let pct = |p| percentile(&all, p).unwrap_or(0) as f64;
        let us = |name: &str, v: f64| Metric::new(name, v, "us", Better::Lower);
        vec![
            us("lat_avg_us", avg as f64),
            us("lat_p50_us", pct(50.0)),
            us("lat_p90_us", pct(90.0)),
            us("lat_p99_us", pct(99.0)),
            us("lat_p999_us", pct(99.9)),
            us(
                "lat_max_us",
                all.keys().next_back().copied().unwrap_or(0) as f64,
            ),
            Metric::new("samples", n as f64, "samples", Better::Higher),
        ]
    }

    /// `-D` (or `-l` × the longest interval) plus one second for the thread start-up and the
    /// last wakeup at or after the stop time; `None` (run until stopped) without either.
    fn duration_hint(&self) -> Option<u64> {
        let o = &self.opts;
        let threads = match o.threads {
            super::options::Threads::Count(n) => n,
            super::options::Threads::AllCpus => 1,
        };
        let longest = (0..threads)
            .map(|i| o.thread_interval_us(i))
            .max()
            .unwrap_or(o.interval_us as u64)
            * 1000;
        let run = match (o.duration_secs, o.loops) {
            (Some(d), _) => d * NSEC_PER_SEC,
            (None, Some(l)) => l * longest,
            (None, None) => return None,
        };
        Some(run + longest + NSEC_PER_SEC)
    }

    fn tasks(&self) -> Vec<TaskId> {
        let Some(sh) = self.shared.as_ref() else {
            return Vec::new();
        };
        let sh = sh.borrow();
        sh.main_task
            .into_iter()
            .chain(sh.threads.iter().filter_map(|t| t.task))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::parse_placement;
    use schedlab_platform::Platform;
    use schedlab_sched::{Kernel, KernelConfig, MachineDesc, PreemptModel};

    /// Parses `line` (placement + cyclictest command line) into the concrete model.
    fn build(line: &str) -> (crate::Placement, Cyclictest) {
        let (placement, words) = parse_placement(line).unwrap();
        assert_eq!(words[0], "cyclictest");
        let w = Cyclictest {
            line: line.to_string(),
            opts: parse(&words[1..]).unwrap(),
            resolved: None,
            shared: None,
        };
        (placement, w)
    }

    fn kernel(spec: &str, m: MachineDesc) -> Kernel {
        let mut k = Kernel::new(KernelConfig::parse(spec).unwrap(), m, 1).unwrap();
        k.strict = true;
        k.check_invariants = true;
        k
    }

    fn env(placement: crate::Placement) -> Env {
        Env {
            placement,
            tg: None,
            index: 0,
            duration_ns: None,
        }
    }

    /// Sets up and runs for the workload's own duration hint.
    fn run(mut k: Kernel, line: &str) -> (Kernel, Cyclictest) {
        let (placement, mut w) = build(line);
        w.setup(&mut k, &env(placement)).unwrap();
        let hint = w.duration_hint().expect("finite run");
        k.run_until(hint);
        (k, w)
    }

    fn metric(w: &Cyclictest, k: &Kernel, name: &str) -> f64 {
        w.metrics(k)
            .into_iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no metric {name}"))
            .value
    }

    fn ideal1() -> MachineDesc {
        MachineDesc::ideal(1, 1000, PreemptModel::Full)
    }

    /// Runs forever.
    struct Hog;
    impl Program for Hog {
        fn next(&mut self, _cx: &mut Ctx<'_>, _last: SysResult) -> Op {
            Op::Run(1_000_000_000)
        }
    }

    fn hog(k: &mut Kernel, slice_ns: Option<u64>) {
        let attrs = TaskAttrs {
            comm: Some("hog".to_string()),
            slice_ns,
            ..TaskAttrs::default()
        };
        let t = k.create_task(Box::new(Hog), &attrs, None, false);
        k.start_task(t);
    }

    #[test]
    fn idle_cpu_fair_thread_measures_the_timer_slack() {
        // Idle 1-CPU zero-cost machine, HZ 1000. A fair sleeper's hrtimer is a range timer
        // [T, T + 50 µs] expired early only by another timer interrupt on its CPU (§1.6).
        // With NO_HZ idle the tick is stopped when the CPU enters idle (and even the one tick
        // a busy period leaves pending would come at most 1 ms after the wakeup, while the
        // next window opens 2777 − 50 = 2727 µs after it). So no interrupt ever falls in a
        // window and every sample is exactly the slack, 50 µs.
        // Count (§5.1): the thread starts at t0 = 0 and stops after the first wakeup at or
        // after 63 s: 22686 × 2777 µs + 50 = 62.999072 s < 63 s, 22687 × 2777 µs = 63.001799 s,
        // so 22687 samples, none skipped.
        let (k, w) = run(
            kernel("v6.18", ideal1()),
            "cyclictest -t 1 -i 2777 -D 63 --policy=fair --mlock -h 20000 -q",
        );
        let r = w.results();
        let s = &r.threads[0].stats;
        assert_eq!(s.cycles, 22_687);
        assert_eq!((s.min, s.max, s.avg()), (50, 50, 50));
        assert_eq!(s.histogram[50], 22_687);
        let out = w.output(&k);
        assert!(out.starts_with("# /dev/cpu_dma_latency set to 0us\n# Histogram\n"));
        assert!(out.contains("\n000049 000000\n000050 022687\n000051 000000\n"));
        assert!(out.contains("\n# Total: 000022687\n# Min Latencies: 00050\n"));
        for (name, v) in [
            ("lat_avg_us", 50.0),
            ("lat_p50_us", 50.0),
            ("lat_p99_us", 50.0),
            ("lat_p999_us", 50.0),
            ("lat_max_us", 50.0),
            ("samples", 22_687.0),
        ] {
            assert_eq!(metric(&w, &k, name), v, "{name}");
        }
        // The stop: the last wakeup at 63.001799 s + 50 µs; then the thread and main exit.
        assert_eq!(k.nr_live, 0);
        assert_eq!(k.all_exited_at, Some(63_001_849_000));
    }

    #[test]
    fn busy_cpu_tick_cuts_the_slack_short() {
        // The same thread beside a CPU hog (default slices, v6.18): the CPU is busy, so the
        // HZ 1000 tick runs at every ms boundary b. A window [T, T + 50] that contains a
        // boundary is cut short there: latency 1000 − r for r = T mod 1000 µs in 951..=999,
        // 0 for r = 0 (the tick at T), else 50. The woken thread preempts the hog at once:
        // it is eligible with the earlier deadline, and the hog, picked when the thread went
        // to sleep 2.7 ms before, has used up its 0.7 ms protected slice.
        // T = t0 + n × 2777 µs with t0 on a µs boundary; gcd(777, 1000) = 1, so 1000
        // consecutive samples take every residue r once: each value 0..=49 occurs
        // floor(N/1000) or ceil(N/1000) times (N = 7202 or 7203: the last sample
        // t0 + 7202 × 2777 µs = t0 + 19.999954 s is at or after the 20-s stop only if its
        // latency is ≥ 46 µs).
        let mut k = kernel("v6.18", ideal1());
        hog(&mut k, None);
        let (placement, mut w) = build("cyclictest -t 1 -i 2777 -D 20 --policy=fair -h 100 -q");
        w.setup(&mut k, &env(placement)).unwrap();
        k.run_until(w.duration_hint().unwrap());
        let r = w.results();
        let s = &r.threads[0].stats;
        let n = s.cycles;
        assert!(n == 7202 || n == 7203, "{n}");
        for v in 0..50 {
            let c = s.histogram[v];
            assert!(
                c == n / 1000 || c == n.div_ceil(1000),
                "latency {v}: {c} samples"
            );
        }
        let early: u64 = s.histogram[..50].iter().sum();
        assert_eq!(s.histogram[50], n - early);
        assert_eq!(s.max, 50);
    }

    #[test]
    fn hog_slice_protection_delays_the_wakee_unless_preempt_short() {
        // Two CPU hogs with a 20 ms custom slice (sched_attr runtime) on one CPU, HZ 1000,
        // and the default-slice cyclictest thread. The hogs alternate every 20 ms; under
        // RUN_TO_PARITY the running hog is protected for its slice, so without PREEMPT_SHORT
        // a wakeup that lands in a protected stretch waits for its end. The wait is bounded:
        // the protected hog is rescheduled at the first tick after its 20 ms, so a latency is
        // at most slack + slice + one tick = 50 + 20000 + 1000 µs.
        // With PREEMPT_SHORT (v6.12+) the wakee's 0.7 ms slice is shorter than the hog's
        // 20 ms, so the protection is cancelled and the wakee preempts at once: the samples
        // are the slack (or the tick cutting it short) apart from the start-up, when both
        // hogs and the new threads are still being placed.
        let go = |spec: &str, line: &str| {
            let mut k = kernel(spec, ideal1());
            hog(&mut k, Some(20_000_000));
            hog(&mut k, Some(20_000_000));
            let (placement, mut w) = build(line);
            w.setup(&mut k, &env(placement)).unwrap();
            k.run_until(w.duration_hint().unwrap());
            (k, w)
        };
        let line = "cyclictest -t 1 -i 2777 -D 20 --policy=fair -h 40000 -q";
        let (k, w) = go("v6.18 NO_PREEMPT_SHORT", line);
        let p99 = metric(&w, &k, "lat_p99_us");
        let max = metric(&w, &k, "lat_max_us");
        assert!(p99 >= 10_000.0, "p99 {p99}");
        assert!(max <= 21_050.0, "max {max}");
        assert!(metric(&w, &k, "lat_avg_us") > 1000.0);
        // Missed periods are skipped (§5.1): after a sample of latency L the catch-up loop
        // skips floor(L / I) grid points, so the last sample's grid index is
        // samples + Σ floor(L / I) − floor(L_last / I) (its own skip happens after it).
        // That sample is the first wakeup at or after t0 + 20 s: its grid point n satisfies
        // n × 2777 µs + L_last ≥ 20 s, and n ≤ 7203 (7203 × 2777 µs = 20.0027 s).
        let s = &w.results().threads[0].stats;
        assert_eq!(s.hist_overflow, 0);
        let skipped: u64 = s
            .histogram
            .iter()
            .enumerate()
            .map(|(lat, &c)| c * (lat as u64 / 2777))
            .sum();
        assert!(skipped > 0);
        let last_lat = s.act as u64;
        let n_last = s.cycles + skipped - last_lat / 2777;
        assert!(n_last * 2777 + last_lat >= 20_000_000, "{n_last}");
        assert!(n_last <= 7203, "{n_last}");
        assert!(s.cycles < 7202);

        for spec in ["v6.18", "v6.12"] {
            let (k, w) = go(spec, line);
            assert_eq!(metric(&w, &k, "lat_p999_us"), 50.0, "{spec}");
            assert!(metric(&w, &k, "lat_avg_us") <= 50.0, "{spec}");
            assert!(metric(&w, &k, "samples") >= 7202.0, "{spec}");
        }
        // v6.6 has neither custom slices (the hogs' 20 ms is ignored) nor PREEMPT_SHORT: the
        // hogs run 0.75 ms slices and the wakee is not held up either.
        let (k, w) = go("v6.6", line);
        assert_eq!(metric(&w, &k, "lat_p99_us"), 50.0);
    }

    #[test]
    fn rb5_idle_cpu_measures_timer_plus_wakeup_cost() {
        // RB5, thread pinned to the idle prime core (CPU 7: capacity 1024, so no cost
        // scaling), jitter off, HZ 1000 so that no tick falls in a slack window (as in
        // the idle test above). §1.6 and §5.2: the timer interrupt takes the CPU out of WFI
        // (exit latency 1 µs), runs the hrtimer expiry (c_hrtimer_irq 1.0 µs) which wakes
        // the thread (c_ttwu 0.26 µs), then idle switches to it (c_ctxsw_process 0.9 µs):
        // 50 + 1 + 1.0 + 0.26 + 0.9 = 53.16 µs -> 53 µs per sample.
        let p = Platform::builtin("rb5").unwrap();
        let mut m = MachineDesc::from_platform(&p);
        m.hz = 1000;
        let c = &m.costs[7];
        let chain =
            50_000 + m.idle_exit_ns[7] + c.c_hrtimer_irq.0 + c.c_ttwu.0 + c.c_ctxsw_process.0;
        assert_eq!(chain, 53_160);
        let (k, w) = run(
            kernel("v6.18 NO_SIM_JITTER HZ=1000", m),
            "cpus=7 cyclictest -t 1 -i 2777 -D 5 --policy=fair -h 100 -q",
        );
        let s = &w.results().threads[0].stats;
        assert_eq!((s.min, s.max), (53, 53), "{}", w.output(&k));
    }

    #[test]
    fn two_threads_and_loops() {
        // -t 2 with -h: both threads use the same 1 ms interval (distance 0) and start at
        // t0 = 0, so both timers are [T, T + 50 µs] with T on ms boundaries. The CPU is idle
        // when they are due and its tick is stopped (NO_HZ_IDLE), so both expire at the hard
        // time T + 50 µs and both threads run at that instant (zero costs): 50 µs each.
        // The first thread to wake at or after 1 s stops both:
        // 1000 × 1 ms + 50 µs ≥ 1 s > 999 × 1 ms + 50 µs -> 1000 samples each.
        let (k, w) = run(
            kernel("v6.18", ideal1()),
            "cyclictest -t 2 -i 1000 -D 1 -h 60 -q",
        );
        let out = w.output(&k);
        assert!(out.contains("\n000050 001000\t001000\n"), "{out}");
        assert!(out.contains("# Total: 000001000 000001000\n"));
        assert_eq!(w.tasks().len(), 3);
        // -l 100 with the 2777 µs interval: 100 samples of exactly the slack (see the idle
        // test), then the thread exits on its own.
        let (k, w) = run(kernel("v6.18", ideal1()), "cyclictest -l 100 -i 2777 -q");
        assert_eq!(metric(&w, &k, "samples"), 100.0);
        assert_eq!(k.nr_live, 0);
        // Without -h: the summary line.
        let out = w.output(&k);
        assert!(out.contains("T: 0 ("), "{out}");
        assert!(
            out.contains("P: 0 I:2777 C:    100 Min:     50 Act:   50 Avg:   50 Max:      50\n")
        );
    }

    #[test]
    fn policies_and_placement() {
        // The thread applies cyclictest's own policy; nice and CPUs come from the shell.
        // cyclictest 2.5 runs a thread SCHED_OTHER unless its policy is FIFO/RR with a
        // priority (force_sched_other), so --policy=batch still gives SCHED_OTHER.
        let mut k = kernel("v6.18", MachineDesc::ideal(4, 1000, PreemptModel::Full));
        let (placement, mut w) = build("policy=idle nice=5 cpus=2 cyclictest --policy=batch -l 3");
        w.setup(&mut k, &env(placement)).unwrap();
        k.run_until(w.duration_hint().unwrap());
        let tasks = w.tasks();
        let main = &k.tasks[tasks[0].index()];
        let thread = &k.tasks[tasks[1].index()];
        assert_eq!((main.policy, main.nice), (Policy::Idle, 5));
        assert_eq!(
            (thread.policy, thread.nice, thread.cpu),
            (Policy::Normal, 5, 2)
        );
        assert_eq!(thread.comm, "cyclictest");
        // --policy=fair falls back to SCHED_OTHER (§5.1)
        let mut k = kernel("v6.18", ideal1());
        let (placement, mut w) = build("policy=batch cyclictest --policy=fair -l 2");
        w.setup(&mut k, &env(placement)).unwrap();
        k.run_until(w.duration_hint().unwrap());
        assert_eq!(k.tasks[w.tasks()[1].index()].policy, Policy::Normal);
        // -a 1 pins the thread
        let mut k = kernel("v6.18", MachineDesc::ideal(2, 1000, PreemptModel::Full));
        let (placement, mut w) = build("cyclictest -a 1 -l 2");
        w.setup(&mut k, &env(placement)).unwrap();
        k.run_until(w.duration_hint().unwrap());
        let t = &k.tasks[w.tasks()[1].index()];
        assert_eq!((t.cpu, t.nr_cpus_allowed), (1, 1));
    }

    /// cyclictest 2.5: `-p N` (N > 0) without `--policy` runs the threads SCHED_FIFO N;
    /// `--policy=rr -p N` SCHED_RR N; `--policy=fifo` without `-p` defaults the priority to
    /// threads + 1; `--priospread` lowers it by one per thread. The shell's `chrt` only
    /// changes the main thread.
    #[test]
    fn rt_threads_take_cyclictest_policy_and_priority() {
        let threads = |line: &str| {
            let mut k = kernel("v6.18", MachineDesc::ideal(4, 1000, PreemptModel::Full));
            let (placement, mut w) = build(line);
            w.setup(&mut k, &env(placement)).unwrap();
            k.run_until(w.duration_hint().unwrap());
            w.tasks()
                .iter()
                .map(|t| (k.tasks[t.index()].policy, k.tasks[t.index()].rt_priority))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            threads("chrt -o 0 cyclictest -p 80 -l 3"),
            vec![(Policy::Normal, 0), (Policy::Fifo, 80)]
        );
        assert_eq!(
            threads("cyclictest --policy=rr -p 5 -l 3")[1],
            (Policy::Rr, 5)
        );
        assert_eq!(
            threads("cyclictest --policy=fifo -t 2 -l 3")[1..],
            [(Policy::Fifo, 3), (Policy::Fifo, 3)]
        );
        assert_eq!(
            threads("cyclictest -p 10 --priospread -t 2 -l 3")[1..],
            [(Policy::Fifo, 10), (Policy::Fifo, 9)]
        );
        assert_eq!(
            threads("chrt -f 50 cyclictest -l 3"),
            vec![(Policy::Fifo, 50), (Policy::Normal, 0)]
        );
    }

    #[test]
    fn refused_configurations() {
        let err = |line: &str, duration_ns: Option<u64>| {
            let (placement, words) = parse_placement(line).unwrap();
            let mut w = match workload(line, &words[1..]) {
                Ok(w) => w,
                Err(e) => return e.to_string(),
            };
            let mut k = kernel("v6.18", MachineDesc::ideal(4, 1000, PreemptModel::Full));
            let env = Env {
                duration_ns,
                ..env(placement)
            };
            w.setup(&mut k, &env).expect_err(line).to_string()
        };
        let d = Some(1_000_000_000);
        assert!(err("cyclictest -a 5 -D 1", d).contains("CPU 5"));
        // the default RT priority is threads + 1 = 100 here
        assert!(err("cyclictest --policy=fifo -t 99 -D 1", d).contains("priority 100"));
        assert!(err("cyclictest -i 1000", None).contains("give -D, -l or"));
        assert!(err("cyclictest -v", None).contains("cyclictest"));
        // with the simulation's --duration, an endless cyclictest stops there
        let (placement, mut w) = build("cyclictest -i 1000 -q");
        let mut k = kernel("v6.18", ideal1());
        let env = Env {
            duration_ns: Some(100_000_000),
            ..env(placement)
        };
        w.setup(&mut k, &env).unwrap();
        assert_eq!(w.duration_hint(), None);
        k.run_until(200_000_000);
        // 100 × 1 ms + 50 µs ≥ 100 ms: 100 samples
        assert_eq!(w.results().threads[0].stats.cycles, 100);
    }

    #[test]
    fn percentile_rule() {
        // Same rule as histogram_percentile: 10 samples 1..=10 -> 5, 9, 10, 10.
        let m: BTreeMap<u64, u64> = (1..=10).map(|v| (v, 1)).collect();
        let p: Vec<Option<u64>> = [50.0, 90.0, 99.0, 99.9]
            .iter()
            .map(|&p| percentile(&m, p))
            .collect();
        assert_eq!(p, vec![Some(5), Some(9), Some(10), Some(10)]);
        assert_eq!(percentile(&BTreeMap::new(), 50.0), None);
    }
}
