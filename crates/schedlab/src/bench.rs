//! Simulator speed (`schedlab bench`, and the criterion benches): simulated context switches
//! per wall-clock second for (a) two tasks ping-ponging through futexes on one CPU and (b) many
//! CPU hogs on one CPU, plus an SMP wakeup/sleep pattern on a large machine. Wall-clock time is
//! read only here, to measure the simulator; it never enters a simulation.

use schedlab_platform::Platform;
use schedlab_sched::ipc::FutexId;
use schedlab_sched::sched::TaskId;
use schedlab_sched::{Ctx, Kernel, KernelConfig, MachineDesc, Op, Program, SysResult, TaskAttrs};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

/// Resident set size of this process in bytes (Linux `/proc/self/statm`), used only to report
/// memory per simulated task; `None` where it cannot be read.
fn heap_live() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// One side of a futex ping-pong: wake the partner, wait for our turn, repeat.
struct PingPong {
    me: Rc<Cell<Option<FutexId>>>,
    other: Rc<Cell<Option<FutexId>>>,
    step: u8,
    first: bool,
}

impl Program for PingPong {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        let (me, other) = (self.me.get().unwrap(), self.other.get().unwrap());
        loop {
            match self.step {
                0 => {
                    self.step = 1;
                    if !self.first {
                        // wait for our turn
                        if cx.futex_load(me) == 0 {
                            return Op::FutexWait { futex: me, val: 0 };
                        }
                    }
                }
                1 => {
                    self.first = false;
                    cx.futex_store(me, 0);
                    self.step = 2;
                    return Op::Run(200);
                }
                _ => {
                    cx.futex_store(other, 1);
                    self.step = 0;
                    return Op::FutexWake {
                        futex: other,
                        nr: 1,
                    };
                }
            }
        }
    }
}

struct Hog;
impl Program for Hog {
    fn next(&mut self, _cx: &mut Ctx<'_>, _l: SysResult) -> Op {
        Op::Run(u64::MAX / 4)
    }
}

/// Runs `run` µs, then sleeps until `period` µs after the start of the run, forever.
struct RunSleep {
    run: u64,
    period: u64,
    next: u64,
    sleeping: bool,
}
impl Program for RunSleep {
    fn next(&mut self, cx: &mut Ctx<'_>, _l: SysResult) -> Op {
        if self.sleeping {
            self.sleeping = false;
            Op::SleepUntil(self.next)
        } else {
            self.sleeping = true;
            self.next = cx.now() + self.period;
            Op::Run(self.run)
        }
    }
}

/// Result of one benchmark.
pub struct BenchResult {
    pub name: &'static str,
    pub switches: u64,
    pub sim_ns: u64,
    pub wall_s: f64,
    /// Growth of the resident set per task over the run (kernel, tasks, event queue).
    pub bytes_per_task: Option<f64>,
}

impl BenchResult {
    pub fn rate(&self) -> f64 {
        self.switches as f64 / self.wall_s
    }
}

fn machine(n: usize) -> MachineDesc {
    MachineDesc::from_platform(&Platform::smp(n).expect("smp"))
}

/// A task named `comm` running `prog`, created but not started.
fn new_task(k: &mut Kernel, prog: Box<dyn Program>, comm: String) -> TaskId {
    let attrs = TaskAttrs {
        comm: Some(comm),
        ..Default::default()
    };
    k.create_task(prog, &attrs, None, false)
}

/// (a) Two tasks ping-ponging through futexes on one CPU for `sim_ns`.
pub fn pingpong(sim_ns: u64) -> BenchResult {
    let mut k = pingpong_kernel();
    let t0 = Instant::now();
    k.run_until(sim_ns);
    BenchResult {
        name: "futex ping-pong, 2 tasks, 1 CPU",
        switches: k.stats.nr_switches,
        sim_ns,
        wall_s: t0.elapsed().as_secs_f64(),
        bytes_per_task: None,
    }
}

/// The kernel of the ping-pong benchmark, with both tasks started and nothing run yet.
pub fn pingpong_kernel() -> Kernel {
    let cfg = KernelConfig::parse("v6.18").unwrap();
    let mut k = Kernel::new(cfg, machine(1), 1).unwrap();
    let fa = Rc::new(Cell::new(None));
    let fb = Rc::new(Cell::new(None));
    let a = new_task(
        &mut k,
        Box::new(PingPong {
            me: fa.clone(),
            other: fb.clone(),
            step: 0,
            first: true,
        }),
        "ping".into(),
    );
    let b = new_task(
        &mut k,
        Box::new(PingPong {
            me: fb.clone(),
            other: fa.clone(),
            step: 0,
            first: false,
        }),
        "pong".into(),
    );
    fa.set(Some(k.ipc.new_futex(0)));
    fb.set(Some(k.ipc.new_futex(0)));
    k.start_task(b);
    k.start_task(a);
    k
}

/// (b) `n` hogs on one CPU for `sim_ns` (HZ=1000: one switch per expired slice).
pub fn hogs(n: usize, sim_ns: u64) -> BenchResult {
    let cfg = KernelConfig::parse("v6.18 CONFIG_HZ=1000").unwrap();
    let mut k = Kernel::new(cfg, machine(1), 1).unwrap();
    for i in 0..n {
        let t = new_task(&mut k, Box::new(Hog), format!("hog{i}"));
        k.start_task(t);
    }
    let t0 = Instant::now();
    k.run_until(sim_ns);
    BenchResult {
        name: "1000 hogs, 1 CPU",
        switches: k.stats.nr_switches,
        sim_ns,
        wall_s: t0.elapsed().as_secs_f64(),
        bytes_per_task: None,
    }
}

/// (c) A 256-CPU machine with `ntasks` tasks each running 50 µs of every 500 µs (period
/// staggered per task so they do not move in lockstep): wakeups, idle entry and exit, wakeup
/// placement and load balancing at scale.
pub fn smp_wakeups(ncpus: usize, ntasks: usize, sim_ns: u64) -> BenchResult {
    let cfg = KernelConfig::parse("v6.18").unwrap();
    let mut k = Kernel::new(cfg, machine(ncpus), 1).unwrap();
    // per-task memory: growth from the empty machine (runqueues, domains) to the end of the run
    let before = heap_live();
    for i in 0..ntasks as u64 {
        let t = new_task(
            &mut k,
            Box::new(RunSleep {
                run: 50_000,
                period: 450_000 + (i * 7919) % 100_000,
                next: 0,
                sleeping: false,
            }),
            format!("w{i}"),
        );
        k.start_task(t);
    }
    let t0 = Instant::now();
    k.run_until(sim_ns);
    let wall_s = t0.elapsed().as_secs_f64();
    let bytes_per_task = match (before, heap_live()) {
        (Some(b), Some(a)) => Some(a.saturating_sub(b) as f64 / ntasks as f64),
        _ => None,
    };
    BenchResult {
        name: "256 CPUs, 2560 tasks wake/sleep",
        switches: k.stats.nr_switches,
        sim_ns,
        wall_s,
        bytes_per_task,
    }
}

/// The seed-000 workload (`stress-ng --pipe 4` on `rpi5`, v6.6.78) for `sim_ns` simulated, the
/// way `schedlab run` does it (workloads.md §12.1; the "20 s run in ≤ 10 s wall").
pub fn stress_ng_rpi5(sim_ns: u64) -> BenchResult {
    let secs = sim_ns / 1_000_000_000;
    let line = format!("stress-ng --pipe 4 --timeout {secs}s --metrics-brief");
    let mut spec = crate::RunSpec::new("rpi5", "v6.6.78", &[line.as_str()]);
    spec.progress = false;
    let t0 = Instant::now();
    let r = crate::run(&spec).expect("built-in configuration");
    BenchResult {
        name: "seed 000: stress-ng --pipe 4, rpi5 v6.6",
        switches: r.nr_switches,
        sim_ns: r.sim_time_ns,
        wall_s: t0.elapsed().as_secs_f64(),
        bytes_per_task: None,
    }
}

/// Issue #19's speed case: a 60-client tbench on `x86-2s-80` (v6.18) for `secs` simulated
/// seconds without warm-up (`tbench --warmup 0 -t SECS 60`), the way `schedlab run` does it.
pub fn tbench_x86(secs: u64) -> BenchResult {
    let line = format!("tbench --warmup 0 -t {secs} 60");
    let mut spec = crate::RunSpec::new("x86-2s-80", "v6.18", &[line.as_str()]);
    spec.progress = false;
    spec.duration_ns = Some(secs * 1_000_000_000);
    let t0 = Instant::now();
    // the built-in loadfile's warning would be printed once per run
    let r = crate::run::quiet_warnings(|| crate::run(&spec)).expect("built-in configuration");
    BenchResult {
        name: "tbench 60 clients, x86-2s-80 v6.18",
        switches: r.nr_switches,
        sim_ns: r.sim_time_ns,
        wall_s: t0.elapsed().as_secs_f64(),
        bytes_per_task: None,
    }
}

/// The benchmarks `schedlab bench` knows, by name.
pub const BENCHMARKS: &[&str] = &["pingpong", "hogs", "smp", "stress-ng", "tbench"];

fn run_one(name: &str, quick: bool) -> BenchResult {
    let scale = if quick { 1 } else { 5 };
    match name {
        "pingpong" => pingpong(200_000_000 * scale),
        "hogs" => hogs(1000, 20_000_000_000 * scale),
        "smp" => smp_wakeups(256, 2560, 100_000_000 * scale),
        "tbench" => tbench_x86(if quick { 1 } else { 10 }),
        _ => stress_ng_rpi5(if quick { 2_000_000_000 } else { 20_000_000_000 }),
    }
}

/// `schedlab bench [NAME...] [--quick]`: each benchmark is run three times and the fastest run
/// is reported (wall time on a shared machine only ever gets worse by interference).
pub fn run_benchmarks(quick: bool, names: &[String]) -> Result<String, String> {
    for n in names {
        if !BENCHMARKS.contains(&n.as_str()) {
            return Err(format!(
                "bench: unknown benchmark '{n}' (known: {})",
                BENCHMARKS.join(", ")
            ));
        }
    }
    let selected: Vec<&str> = if names.is_empty() {
        BENCHMARKS.to_vec()
    } else {
        names.iter().map(|s| s.as_str()).collect()
    };
    let results: Vec<BenchResult> = selected
        .iter()
        .map(|n| {
            let runs: Vec<BenchResult> = (0..3).map(|_| run_one(n, quick)).collect();
            // memory: the first run's growth (later runs reuse pages the allocator kept)
            let mem = runs[0].bytes_per_task;
            let mut best = runs
                .into_iter()
                .min_by(|a, b| a.wall_s.total_cmp(&b.wall_s))
                .expect("three runs");
            best.bytes_per_task = mem;
            best
        })
        .collect();
    let mut s = String::new();
    s.push_str(&format!(
        "{:<40} {:>12} {:>12} {:>10} {:>16} {:>11}\n",
        "BENCHMARK (best of 3)", "SWITCHES", "SIMULATED", "WALL", "SWITCHES/WALL-S", "BYTES/TASK"
    ));
    for r in &results {
        let mem = r
            .bytes_per_task
            .map_or_else(|| "-".to_string(), |b| format!("{b:.0}"));
        s.push_str(&format!(
            "{:<40} {:>12} {:>10.2} s {:>8.3} s {:>16.0} {:>11}\n",
            r.name,
            r.switches,
            r.sim_ns as f64 / 1e9,
            r.wall_s,
            r.rate(),
            mem
        ));
    }
    Ok(s)
}
