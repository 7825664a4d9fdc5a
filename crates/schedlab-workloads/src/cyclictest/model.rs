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
//!   cyclictest's (`--policy`, `-p`), whatever `policy=` the shell gave (the main thread keeps
//!   that one); nice, slice (`slice=` is the seed-004 `sched_setattr` runtime, which
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
//! * **`/dev/cpu_dma_latency`.** Writing 0 restricts idle to the shallowest state (§1.6); the
//!   current kernel already exits every idle CPU from its shallowest state, so the write has
//!   no further effect (the line `# /dev/cpu_dma_latency set to 0us` is still printed).
//! * **`--secaligned`.** The first thread to start picks the next full second (the one after,
//!   if less than 0.1 s remains) plus the offset; the others use the same instant.

use super::options::{parse, Options, Policy as CtPolicy, Resolved};
use super::output::{render, Results, ThreadResult};
use super::stats::{calcdiff_us, ThreadStats};
use crate::workload::{Better, Env, Metric, Workload, WorkloadError};
use schedlab_platform::CpuMask;
use schedlab_sched::sched::{Policy, TaskId};
use schedlab_sched::{Ctx, Kernel, Op, Program, Spawn, SysResult, TaskAttrs};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

const NSEC_PER_SEC: u64 = 1_000_000_000;

/// Builds the cyclictest workload from the words after `cyclictest`.
pub fn workload(line: &str, args: &[String]) -> Result<Box<dyn Workload>, WorkloadError> {
    let opts = parse(args).map_err(|e| WorkloadError::Option {
        line: line.to_string(),
        message: e.to_string(),
    })?;
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
    fn unsupported(&self, message: &str) -> WorkloadError {
        WorkloadError::Unsupported {
            line: self.line.clone(),
            message: message.to_string(),
        }
    }

    fn bad_option(&self, message: String) -> WorkloadError {
        WorkloadError::Option {
            line: self.line.clone(),
            message,
        }
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
    fn program(&self) -> &str {
        "cyclictest"
    }

    fn setup(&mut self, k: &mut Kernel, env: &Env) -> Result<(), WorkloadError> {
        if env.placement.cgroup.is_some() {
            return Err(self.unsupported("cgroups are not modelled yet"));
        }
        match env.placement.policy {
            Some(Policy::Fifo | Policy::Rr) => {
                return Err(self.unsupported("RT class not modelled yet"))
            }
            Some(Policy::Deadline) => {
                return Err(self.unsupported("SCHED_DEADLINE not modelled yet"))
            }
            _ => {}
        }
        let o = &self.opts;
        let ncpus = k.ncpus;
        let available = env
            .placement
            .cpus
            .as_ref()
            .map(|m| m.weight())
            .unwrap_or(ncpus);
        let r = o.resolve(available as u32);
        let mut attrs = Vec::new();
        for i in 0..r.num_threads {
            let policy = match o.thread_policy(&r, i) {
                CtPolicy::Other => Policy::Normal,
                CtPolicy::Batch => Policy::Batch,
                CtPolicy::Idle => Policy::Idle,
                CtPolicy::Fifo | CtPolicy::Rr => {
                    return Err(self.unsupported(&format!(
                        "RT class not modelled yet (cyclictest runs its threads SCHED_{} \
                         priority {})",
                        o.thread_policy(&r, i).name().to_uppercase(),
                        o.thread_priority(&r, i)
                    )))
                }
            };
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
        let main = k.create_task(Box::new(prog), &main_attrs, None, false);
        k.start_task(main);
        Ok(())
    }

    fn output(&self, _k: &Kernel) -> String {
        render(&self.opts, &self.results())
    }

    fn metrics(&self, _k: &Kernel) -> Vec<Metric> {
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
