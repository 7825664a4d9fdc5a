//! One simulation run: platform + kernel string + workload lines -> results.
//!
//! Errors are user-input errors (bad platform, kernel string, workload line, duration, or an
//! unsupported configuration) and carry a one-line message naming the culprit; the CLI turns
//! them into exit code 2. A trace is written to a temporary file next to the target and moved
//! into place only when the run succeeded, so a failed run never leaves a half-written file.

use crate::trace_file::TraceFile;
use crate::trace_mem::{ColumnSink, Tee, TraceColumns};
pub use schedlab_engine::input::one_line;
use schedlab_platform::{Platform, PlatformError};
use schedlab_sched::cgroup::CgroupStat;
use schedlab_sched::fair::FairOp;
use schedlab_sched::pelt::UTIL_AVG_UNCHANGED;
use schedlab_sched::sched::{Policy, TaskId};
use schedlab_sched::{Kernel, KernelConfig, KernelSpecError, MachineDesc, Procfs, Sys};
use schedlab_workloads::{parse_workload, Env, Metric, Placement, Workload, WorkloadError};
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

/// What to simulate.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// Platform name, `smp:N`, or a TOML file path.
    pub platform: String,
    /// Kernel string (`v6.18+78cde54ea5f0 NO_DELAY_DEQUEUE ...`).
    pub kernel: String,
    /// Workload lines, each optionally preceded by placement tokens.
    pub workloads: Vec<String>,
    /// Simulated duration; `None` = until the workloads end if they all end after work of
    /// unknown length (see [`run_length`]), else the workloads' own duration (or 10 s).
    pub duration_ns: Option<u64>,
    pub seed: u64,
    /// Stop at the first violated invariant (and check them after every event).
    pub strict: bool,
    /// Write the trace here.
    pub trace: Option<PathBuf>,
    /// Keep the trace in memory as columns ([`crate::trace_mem`]), returned in
    /// [`RunResult::trace_columns`] (with or without [`RunSpec::trace`]).
    pub trace_columns: bool,
    /// Refuse a trace expected to exceed this many bytes (`--trace-limit`); `None` = only a
    /// warning above [`crate::trace_file::WARN_BYTES`].
    pub trace_limit: Option<u64>,
    /// Show a progress bar on stderr for long runs.
    pub progress: bool,
    /// Record every wakeup of the tasks with this comm: what ran on the CPU, why the wakee
    /// did not preempt, how long it waited (`--explain-wakeups COMM[:LONG]`).
    pub explain_wakeups: Option<String>,
    /// Groups to create and configure before any workload starts (`[cgroups]`, `--cgroup`).
    pub cgroups: crate::cgroups::Cgroups,
}

/// Waits of at least this long count as long in `--explain-wakeups` reports by default.
pub const DEFAULT_LONG_WAIT_NS: u64 = 500_000;

/// `COMM[:LONG]` of `--explain-wakeups`: the comm and the long-wait threshold in ns.
pub fn parse_explain_wakeups(v: &str) -> Result<(String, u64), String> {
    let (comm, long) = match v.rsplit_once(':') {
        Some((c, l)) => (
            c,
            schedlab_engine::parse_duration(l)
                .map_err(|e| format!("--explain-wakeups {v}: {e}"))?
                .0,
        ),
        None => (v, DEFAULT_LONG_WAIT_NS),
    };
    if comm.is_empty() || comm.len() > 15 {
        return Err(format!(
            "--explain-wakeups {v}: the comm must be 1 to 15 characters (TASK_COMM_LEN - 1)"
        ));
    }
    if long == 0 {
        return Err(format!(
            "--explain-wakeups {v}: the long-wait threshold must be > 0"
        ));
    }
    Ok((comm.to_string(), long))
}

impl RunSpec {
    pub fn new(platform: &str, kernel: &str, workloads: &[&str]) -> RunSpec {
        RunSpec {
            platform: platform.to_string(),
            kernel: kernel.to_string(),
            workloads: workloads.iter().map(|s| s.to_string()).collect(),
            duration_ns: None,
            seed: 1,
            strict: false,
            trace: None,
            trace_columns: false,
            trace_limit: None,
            progress: false,
            explain_wakeups: None,
            cgroups: Default::default(),
        }
    }
}

/// Why a run could not be done.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{}", one_line(&.0.to_string()))]
    Platform(#[from] PlatformError),
    #[error("{}", one_line(&.0.to_string()))]
    Kernel(#[from] KernelSpecError),
    #[error("{}", one_line(&.0.to_string()))]
    Workload(#[from] WorkloadError),
    #[error("{}", one_line(.0))]
    Config(String),
    #[error("trace file {path}: {source}")]
    Trace {
        path: String,
        source: std::io::Error,
    },
    #[error("invariant violated: {0}")]
    Invariant(String),
}

/// Per-task results (as `/proc/PID/sched` and getrusage report them).
#[derive(Clone, Debug)]
pub struct TaskResult {
    pub pid: i32,
    pub comm: String,
    pub policy: Policy,
    pub nice: i32,
    pub slice_ns: u64,
    pub sum_exec_runtime_ns: u64,
    pub nr_switches: u64,
    pub nr_voluntary_switches: u64,
    pub nr_involuntary_switches: u64,
    pub nr_migrations: u64,
    pub run_delay_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub last_cpu: usize,
    pub exited: bool,
    /// The task's cgroup at the end of the run (`/proc/PID/cgroup`'s `0::PATH`; `/` = root).
    pub cgroup: String,
    /// The task's `/proc/PID/sched` at the end of the run.
    pub sched: ProcSched,
}

/// The fields of `/proc/PID/sched` (kernel/sched/debug.c `proc_sched_show_task()`) that the
/// simulator keeps, as they stand at the end of the run (PELT values as last updated, not
/// decayed to the end, as the kernel prints them). The kernel prints `se.exec_start`,
/// `se.vruntime` and `se.sum_exec_runtime` in ms with six decimals; here every time is an
/// integer in ns. Weights are at full resolution (`se.load.weight` 1048576 for nice 0, as a
/// 64-bit kernel prints it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcSched {
    /// `se.exec_start`: the task's rq `clock_task` at its last accounting (0 after a
    /// migration until it runs again).
    pub exec_start: u64,
    /// `se.vruntime`, printed as the kernel's `(long long)` cast.
    pub vruntime: i64,
    pub sum_exec_runtime: u64,
    pub nr_migrations: u64,
    /// schedstat `nr_wakeups`: wakeups through `try_to_wake_up` (fork wakeups not counted).
    pub nr_wakeups: u64,
    /// ... of them with `WF_SYNC`.
    pub nr_wakeups_sync: u64,
    /// ... of them placed on another CPU (`WF_MIGRATED`).
    pub nr_wakeups_migrate: u64,
    /// `nvcsw + nivcsw`.
    pub nr_switches: u64,
    pub nr_voluntary_switches: u64,
    pub nr_involuntary_switches: u64,
    pub load_weight: u64,
    pub load_sum: u64,
    pub runnable_sum: u64,
    pub util_sum: u64,
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
    /// `se.avg.last_update_time` (ns of the cfs_rq's PELT clock; 0 = detached by a migration).
    pub last_update_time: u64,
    /// `se.avg.util_est` without the UTIL_AVG_UNCHANGED flag bit (as debug.c masks it).
    pub util_est: u64,
    /// `p->policy` as a number (SCHED_OTHER 0, SCHED_BATCH 3, SCHED_IDLE 5, ...).
    pub policy: u32,
    /// `p->prio` (120 + nice for the fair policies).
    pub prio: i32,
    /// `se.slice` (ns; printed for fair tasks).
    pub slice: u64,
}

/// Per-CPU results.
#[derive(Clone, Debug)]
pub struct CpuResult {
    pub cpu: usize,
    pub idle_ns: u64,
    /// Context switches on this CPU (its `sched_switch` events).
    pub nr_switches: u64,
    /// Migrations onto this CPU (`sched_migrate_task` with `dest_cpu` = this CPU).
    pub migrations_in: u64,
    /// Migrations off this CPU (`sched_migrate_task` with `orig_cpu` = this CPU).
    pub migrations_out: u64,
}

/// One workload's output.
#[derive(Clone, Debug)]
pub struct WorkloadResult {
    pub line: String,
    pub program: String,
    pub output: String,
    pub metrics: Vec<Metric>,
    /// The workload's per-event series ([`schedlab_workloads::Workload::series`]).
    pub series: Vec<(String, Vec<(u64, u64)>)>,
    /// The run stopped the program before its own end ([`Workload::completed`]): `output` is
    /// what it printed so far and `metrics` is empty (its figures would be partial).
    pub cut: bool,
}

/// How the length of a run was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunLength {
    /// `--duration`.
    Given,
    /// The workloads' own length ([`Workload::duration_hint`], the longest of them).
    Hint,
    /// [`DEFAULT_DURATION_NS`]: some workload runs until stopped and none says how long.
    Default,
    /// Until every workload has ended: they all end by themselves after an amount of work
    /// whose length is not known before ([`Workload::ends_by_itself`]); [`SAFETY_LIMIT_NS`] at
    /// most.
    UntilEnd,
}

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub platform: String,
    pub kernel: String,
    pub preempt: String,
    pub hz: u32,
    /// `sysctl_sched_base_slice`, which v6.5 calls `sysctl_sched_min_granularity`.
    pub base_slice_ns: u64,
    /// v6.5 (CFS): (latency, min_granularity, wakeup_granularity) in ns after boot.
    pub cfs_tunables: Option<(u64, u64, u64)>,
    pub ncpus: usize,
    pub seed: u64,
    pub sim_time_ns: u64,
    pub events: u64,
    pub tasks: Vec<TaskResult>,
    pub cpus: Vec<CpuResult>,
    pub workloads: Vec<WorkloadResult>,
    /// How the run's length (`duration_ns`) was chosen.
    pub length: RunLength,
    /// The simulated time the run was allowed (it stops earlier when every workload ended).
    pub duration_ns: u64,
    /// `sched_switch` events of the run (= Σ `cpus[].nr_switches`).
    pub nr_switches: u64,
    /// `sched_migrate_task` events of the run (= Σ `cpus[].migrations_in` = Σ
    /// `cpus[].migrations_out` = Σ `tasks[].nr_migrations`).
    pub nr_migrations: u64,
    pub ttwu_local: u64,
    pub ttwu_remote: u64,
    pub ttwu_delayed_requeue: u64,
    pub ttwu_delayed_requeue_busy_while_idle: u64,
    /// Placements of SCHED_IDLE tasks (wake-up, fork, exec) and those that stacked the task on
    /// a CPU running only SCHED_IDLE tasks, with the run-queue wait the stacked ones had.
    pub sched_idle_placed: [u64; 3],
    pub sched_idle_stacked: [u64; 3],
    pub sched_idle_stacked_wait_ns: u64,
    pub fair_ops: Vec<(String, u64)>,
    pub ipis: u64,
    /// Wake-ups of an idle CPU that needed no IPI (polling idle).
    pub ipi_avoided: u64,
    /// Newidle balances that passed the first gate.
    pub newidle_balances: u64,
    /// Per-path totals of the scheduler's own costs (idle scan, newidle and periodic
    /// balancing, IPI sends, idle exits), summed over CPUs.
    pub paths: schedlab_sched::stats::PathTotals,
    pub ticks: u64,
    /// Time-average of `nr_running` per CPU (delayed tasks included).
    pub mean_nr_running: Vec<f64>,
    pub warnings: u64,
    pub first_warning: Option<String>,
    pub trace_path: Option<PathBuf>,
    /// The trace as columns, when [`RunSpec::trace_columns`] asked for it.
    pub trace_columns: Option<crate::trace_mem::TraceColumns>,
    /// Input accepted with a warning (kernel string tokens with no effect or not modelled,
    /// ignored workload words), one line each; also printed on stderr.
    pub input_warnings: Vec<String>,
    /// The fair_server's runs at deadline priority (rt-dl.md §4), from the kernel's server log.
    pub dl_server_runs: Vec<DlServerRun>,
    /// The recorded wakeups of the `--explain-wakeups` comm (empty without it).
    pub wakeups: Vec<schedlab_sched::stats::WakeupRecord>,
    /// The `--explain-wakeups` comm and long-wait threshold.
    pub wakeups_comm: Option<(String, u64)>,
    /// `cpu.stat` of every non-root cgroup at the end of the run, by path (creation order).
    pub cgroups: Vec<(String, CgroupStat)>,
    /// Loopback network counters (docs/model.md N§1.12): all zero when nothing used a socket.
    pub net: schedlab_sched::net::NetStats,
}

/// One fair_server run at deadline priority: from its entry into the DL tree (state D) to its
/// throttle or stop.
#[derive(Clone, Debug, PartialEq)]
pub struct DlServerRun {
    pub cpu: u32,
    pub t_start: u64,
    /// End of the run (throttle, stop, or the end of the simulation).
    pub t_end: u64,
    /// Whether a zero-laxity expiry preceded it (`dl_defer_running`: the fair class was starved).
    pub starved: bool,
    /// What made the server runnable: "zero-laxity timer", "replenishment timer" or "restart at
    /// a fair wakeup".
    pub how: &'static str,
    /// Runtime and deadline the server got (ns; absolute deadline).
    pub runtime: i64,
    pub deadline: u64,
    /// The task running when the server became runnable ("comm (SCHED_FIFO prio 50)").
    pub preempted: Option<String>,
    /// The top RT task that waited for the server when it ended, and how long it waited.
    pub held_off: Option<(String, u64)>,
}

/// "comm (SCHED_FIFO 50)" for an RT task (user priority), "comm (SCHED_OTHER)" otherwise.
fn who(k: &schedlab_sched::Kernel, t: TaskId) -> String {
    let task = &k.tasks[t.index()];
    if task.rt_priority > 0 && !task.policy.is_fair() {
        format!(
            "{} ({} {})",
            task.comm,
            task.policy.name(),
            task.rt_priority
        )
    } else {
        format!("{} ({})", task.comm, task.policy.name())
    }
}

/// The fair_server runs of the kernel's server log.
fn dl_server_runs(k: &schedlab_sched::Kernel, end: u64) -> Vec<DlServerRun> {
    use schedlab_sched::deadline::DlServerEventKind as K;
    let mut out: Vec<DlServerRun> = Vec::new();
    let mut open: Vec<Option<usize>> = vec![None; k.ncpus];
    let log = &k.dl_server_log;
    for (i, ev) in log.iter().enumerate() {
        let c = ev.cpu as usize;
        match ev.kind {
            K::Activate { starved } => {
                // the handler that enqueued it logs at the same instant, before or after
                let near = |kind: fn(&K) -> bool| {
                    log[i.saturating_sub(3)..(i + 4).min(log.len())]
                        .iter()
                        .any(|e| e.cpu == ev.cpu && e.time == ev.time && kind(&e.kind))
                };
                let how = if near(|k| matches!(k, K::Timer)) {
                    if starved {
                        "zero-laxity or replenishment timer"
                    } else {
                        "replenishment timer"
                    }
                } else if near(|k| matches!(k, K::Start)) {
                    "restart at a fair wakeup"
                } else {
                    "enqueue"
                };
                let curr = &k.tasks[ev.curr.index()];
                let preempted = (!curr.is_idle_task && !curr.policy.is_fair())
                    .then(|| who(k, ev.curr))
                    .or_else(|| curr.is_idle_task.then(|| "the idle task".to_string()));
                open[c] = Some(out.len());
                out.push(DlServerRun {
                    cpu: ev.cpu,
                    t_start: ev.time,
                    t_end: end,
                    starved,
                    how,
                    runtime: ev.runtime,
                    deadline: ev.deadline,
                    preempted,
                    held_off: None,
                });
            }
            K::Throttle | K::Stop | K::PickEmpty => {
                if let Some(j) = open[c].take() {
                    let r = &mut out[j];
                    r.t_end = ev.time;
                    r.held_off = ev
                        .rt_waiting
                        .map(|(t, since)| (who(k, t), ev.time - since.max(r.t_start)));
                }
            }
            _ => {}
        }
    }
    out
}

/// Most tasks all workload lines of one run may create together: the default `pid_max`
/// (32768), the same cap as one line's ([`schedlab_workloads::cmdline::MAX_TASKS`]).
pub const MAX_TASKS_PER_RUN: u64 = schedlab_workloads::cmdline::MAX_TASKS;

/// How many [`quiet_warnings`] calls are in progress (process-wide: scenario runs happen on
/// worker threads).
static QUIET_WARNINGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One workload line of a scenario on one platform, kernel and seed, with the scenario's
/// cgroups, `duration_ns` (`None`: the workload's own length) and input warnings kept off
/// stderr (the reproduction tables run every configuration many times); errors as one line.
pub fn run_scenario_line(
    platform: &str,
    kernel: &str,
    line: &str,
    seed: u64,
    duration_ns: Option<u64>,
    cgroups: &crate::cgroups::Cgroups,
) -> Result<RunResult, String> {
    let mut spec = RunSpec::new(platform, kernel, &[line]);
    spec.duration_ns = duration_ns;
    spec.seed = seed;
    spec.cgroups = cgroups.clone();
    quiet_warnings(|| run(&spec)).map_err(|e| e.to_string())
}

/// Runs `f` without printing input warnings on stderr (repeated runs of one configuration,
/// e.g. compare's second and later seeds; the warnings are still in the results).
pub fn quiet_warnings<T>(f: impl FnOnce() -> T) -> T {
    use std::sync::atomic::Ordering::SeqCst;
    struct Guard;
    impl Drop for Guard {
        fn drop(&mut self) {
            QUIET_WARNINGS.fetch_sub(1, SeqCst);
        }
    }
    QUIET_WARNINGS.fetch_add(1, SeqCst);
    let _g = Guard;
    f()
}

impl RunSpec {
    fn print_warnings(&self) -> bool {
        QUIET_WARNINGS.load(std::sync::atomic::Ordering::SeqCst) == 0
    }
}

/// The checks of a workload's placement that need the platform: CPUs the platform does not
/// have. (A `cgroup=` path was checked when the line was parsed; the run creates it.)
fn check_placement(
    line: &str,
    placement: &Placement,
    ncpus: usize,
    platform: &str,
) -> Result<(), RunError> {
    if let Some(cpus) = &placement.cpus {
        if let Some(c) = cpus.last().filter(|&c| c >= ncpus) {
            let src = placement
                .cpus_src
                .clone()
                .unwrap_or_else(|| format!("cpus={cpus}"));
            return Err(RunError::Config(format!(
                "workload '{line}': {src}: CPU {c} does not exist, platform '{platform}' has CPUs \
                 0-{}",
                ncpus - 1
            )));
        }
    }
    Ok(())
}

/// Admission control for the SCHED_DEADLINE tasks the lines ask for at start
/// ([`crate::admission`]).
fn check_admission(
    platform: &Platform,
    cfg: &KernelConfig,
    lines: &[(&str, &Placement, &dyn Workload)],
) -> Result<(), RunError> {
    let mut a = crate::admission::Admission::new(platform, cfg);
    let all = platform.all_cpus();
    for (line, placement, w) in lines {
        for r in w.dl_reservations(placement) {
            a.admit(&r, &all)
                .map_err(|m| RunError::Config(format!("workload '{line}': {m}")))?;
        }
    }
    Ok(())
}

/// Checks everything [`run`] checks before it simulates (platform, kernel string on that
/// platform, workload lines and placements, duration) without simulating: `compare` checks
/// every kernel this way before it runs anything.
pub fn validate(spec: &RunSpec) -> Result<(), RunError> {
    let platform = Platform::resolve(&spec.platform)?;
    let cfg = KernelConfig::parse(&spec.kernel)?;
    let machine = MachineDesc::from_platform(&platform);
    let mut k = Kernel::new(cfg, machine, spec.seed).map_err(|e| {
        RunError::Config(format!(
            "kernel '{}' on platform '{}': {e}",
            spec.kernel, platform.name
        ))
    })?;
    if spec.workloads.is_empty() {
        return Err(RunError::Config("no --workload given".into()));
    }
    spec.cgroups.apply(&mut k).map_err(RunError::Config)?;
    let mut parsed = Vec::new();
    for line in &spec.workloads {
        let (placement, w) = parse_workload(line)?;
        check_placement(line, &placement, k.ncpus, &platform.name)?;
        parsed.push((line.as_str(), placement, w));
    }
    let lines: Vec<(&str, &Placement, &dyn Workload)> =
        parsed.iter().map(|(l, p, w)| (*l, p, w.as_ref())).collect();
    check_admission(&platform, &k.cfg, &lines)?;
    if spec.duration_ns == Some(0) {
        return Err(RunError::Config("--duration must be > 0".into()));
    }
    Ok(())
}

/// Default simulated time when no workload says how long it runs.
pub const DEFAULT_DURATION_NS: u64 = 10_000_000_000;

/// Most simulated time a run without `--duration` is given to let its workloads end by
/// themselves ([`RunLength::UntilEnd`]): one simulated day (a `make -j1` kernel build takes
/// about 4 400 s). A run that reaches it says so on stderr and marks its workloads cut.
pub const SAFETY_LIMIT_NS: u64 = 86_400 * 1_000_000_000;

/// The run's length and how it was chosen: `--duration`; else, when every workload ends by
/// itself after work of unknown length (hackbench, a build), until they have ended
/// ([`SAFETY_LIMIT_NS`] at most); else the longest of the workloads' own lengths (a workload of
/// unknown length beside them is a background load, stopped — and marked cut — with them);
/// else [`DEFAULT_DURATION_NS`].
pub fn run_length(given: Option<u64>, workloads: &[&dyn Workload]) -> (u64, RunLength) {
    run_length_limited(given, workloads, SAFETY_LIMIT_NS)
}

/// [`run_length`] with another safety limit (tests).
fn run_length_limited(
    given: Option<u64>,
    workloads: &[&dyn Workload],
    safety_limit_ns: u64,
) -> (u64, RunLength) {
    if let Some(d) = given {
        return (d, RunLength::Given);
    }
    if !workloads.is_empty() && workloads.iter().all(|w| w.ends_by_itself()) {
        return (safety_limit_ns, RunLength::UntilEnd);
    }
    let hint = workloads.iter().filter_map(|w| w.duration_hint()).max();
    match hint {
        Some(h) => (h, RunLength::Hint),
        None => (DEFAULT_DURATION_NS, RunLength::Default),
    }
}

/// Runs one simulation.
pub fn run(spec: &RunSpec) -> Result<RunResult, RunError> {
    run_on(Platform::resolve(&spec.platform)?, spec)
}

/// [`run`] on an already loaded platform (`spec.platform` is not read).
pub fn run_on(platform: Platform, spec: &RunSpec) -> Result<RunResult, RunError> {
    run_on_limited(platform, spec, SAFETY_LIMIT_NS)
}

/// [`run_on`] with another safety limit for a run that lasts until its workloads end (tests).
fn run_on_limited(
    platform: Platform,
    spec: &RunSpec,
    safety_limit_ns: u64,
) -> Result<RunResult, RunError> {
    let cfg = KernelConfig::parse(&spec.kernel)?;
    let cfg_warnings = cfg.warnings.clone();
    let machine = MachineDesc::from_platform(&platform);
    let mut k = Kernel::new(cfg, machine, spec.seed).map_err(|e| {
        RunError::Config(format!(
            "kernel '{}' on platform '{}': {e}",
            spec.kernel, platform.name
        ))
    })?;
    // --strict: check every invariant after every event and stop at the first violation,
    // which is reported as RunError::Invariant (one line, exit 1), not as a panic.
    k.strict = false;
    k.stop_on_warning = spec.strict;
    k.check_invariants = spec.strict;
    let explain = match &spec.explain_wakeups {
        Some(v) => Some(parse_explain_wakeups(v).map_err(RunError::Config)?),
        None => None,
    };
    k.observe_comm = explain.as_ref().map(|e| e.0.clone());

    let mut workloads: Vec<(String, Placement, Box<dyn Workload>)> = Vec::new();
    if spec.workloads.is_empty() {
        return Err(RunError::Config("no --workload given".into()));
    }
    for line in &spec.workloads {
        let (placement, w) = parse_workload(line)?;
        check_placement(line, &placement, k.ncpus, &platform.name)?;
        workloads.push((line.clone(), placement, w));
    }
    let lines: Vec<(&str, &Placement, &dyn Workload)> = workloads
        .iter()
        .map(|(l, p, w)| (l.as_str(), p, w.as_ref()))
        .collect();
    check_admission(&platform, &k.cfg, &lines)?;
    // One cap on the tasks of a run, whatever the number of lines (each line is also
    // checked on its own by its option parser).
    let mut total_tasks: u64 = 0;
    for (line, placement, w) in &workloads {
        let ncpus = placement
            .cpus
            .as_ref()
            .map(|m| m.weight())
            .unwrap_or(k.ncpus);
        total_tasks = total_tasks.saturating_add(w.max_tasks(ncpus));
        if total_tasks > MAX_TASKS_PER_RUN {
            return Err(RunError::Config(format!(
                "workload '{line}': the workloads create up to {total_tasks} tasks in total, \
                 more than the {MAX_TASKS_PER_RUN} schedlab allows in one run (the default pid_max)"
            )));
        }
        if spec.duration_ns.is_none() && w.needs_duration() {
            return Err(RunError::Config(format!(
                "workload '{line}': {} runs until stopped: give it a run length of its own or \
                 --duration",
                w.program()
            )));
        }
    }
    if let Some(d) = spec.duration_ns {
        if d > schedlab_engine::MAX_SIM_NS {
            return Err(RunError::Config(format!(
                "--duration {d} ns is longer than the {} s (2^33 s) schedlab can simulate",
                schedlab_engine::MAX_SIM_SECS
            )));
        }
    }
    let mut input_warnings: Vec<String> = cfg_warnings
        .iter()
        .map(|w| format!("kernel '{}': {w}", spec.kernel))
        .collect();
    for (line, placement, w) in &workloads {
        input_warnings.extend(
            placement
                .notes
                .iter()
                .cloned()
                .chain(w.warnings())
                .map(|m| format!("workload '{line}': {m}")),
        );
    }
    if spec.print_warnings() {
        for w in &input_warnings {
            eprintln!("schedlab: warning: {w}");
        }
    }
    let ws: Vec<&dyn Workload> = workloads.iter().map(|(_, _, w)| w.as_ref()).collect();
    let (duration, length) = run_length_limited(spec.duration_ns, &ws, safety_limit_ns);
    // the horizon of the trace's size estimate: the run's length if it is known, else 10 s
    // (the estimate is per 10 s; the size itself is still checked against --trace-limit)
    let trace_horizon = match length {
        RunLength::UntilEnd => DEFAULT_DURATION_NS,
        _ => duration,
    };
    if duration == 0 {
        return Err(RunError::Config("--duration must be > 0".into()));
    }

    let mut trace = match &spec.trace {
        Some(p) => Some(
            TraceFile::create(p, k.ncpus as u32, trace_horizon, spec.trace_limit).map_err(|e| {
                RunError::Trace {
                    path: p.display().to_string(),
                    source: e,
                }
            })?,
        ),
        None => None,
    };
    let columns = spec
        .trace_columns
        .then(|| Rc::new(RefCell::new(TraceColumns::new())));
    match (&trace, &columns) {
        (Some(t), Some(c)) => k.set_trace(Box::new(Tee(
            Box::new(t.sink()),
            Box::new(ColumnSink(c.clone())),
        ))),
        (Some(t), None) => k.set_trace(Box::new(t.sink())),
        (None, Some(c)) => k.set_trace(Box::new(ColumnSink(c.clone()))),
        (None, None) => {}
    }

    // The [cgroups] groups and their files first, before any task exists; then each line's
    // `cgroup=` (mkdir -p; an existing group is used as it is).
    if let Err(e) = spec.cgroups.apply(&mut k) {
        if let Some(t) = trace.take() {
            t.discard();
        }
        return Err(RunError::Config(e));
    }
    // Workloads see the kernel only through the set-up handle and, after the run, the
    // read-only /proc view (schedlab_sched::sys).
    for (i, (line, placement, w)) in workloads.iter_mut().enumerate() {
        let tg = match &placement.cgroup {
            Some(path) => match Sys::cgroup_mkdir(&mut k, path) {
                Ok(tg) => Some(tg),
                Err(e) => {
                    if let Some(t) = trace.take() {
                        t.discard();
                    }
                    return Err(RunError::Config(format!(
                        "workload '{line}': cgroup {path}: {e}"
                    )));
                }
            },
            None => None,
        };
        let env = Env {
            placement: placement.clone(),
            tg,
            index: i,
            // no length is imposed on a run that lasts until its workloads end
            duration_ns: (length != RunLength::UntilEnd).then_some(duration),
        };
        if let Err(e) = w.setup(&mut k as &mut dyn Sys, &env) {
            if let Some(t) = trace.take() {
                t.discard();
            }
            return Err(e.into());
        }
    }

    let stop = run_with_progress(&mut k, duration, length, spec.progress);
    if let Some(msg) = k.first_warning.clone() {
        if spec.strict {
            if let Some(t) = trace.take() {
                t.discard();
            }
            return Err(RunError::Invariant(msg));
        }
    }
    drop(k.take_trace());
    let trace_path = match trace.take() {
        Some(t) => Some(t.finish().map_err(|(p, e)| RunError::Trace {
            path: p.display().to_string(),
            source: e,
        })?),
        None => None,
    };

    let mut results = collect(
        &k,
        &platform,
        spec,
        (stop, duration, length),
        &workloads,
        trace_path,
    );
    // the kernel's sink (the other holder) was dropped above
    results.trace_columns = columns.map(|c| match Rc::try_unwrap(c) {
        Ok(c) => c.into_inner(),
        Err(c) => c.borrow().clone(),
    });
    if length == RunLength::UntilEnd {
        for w in results.workloads.iter().filter(|w| w.cut) {
            let m = format!(
                "workload '{}': had not ended after {} s of simulated time, the safety limit of a \
                 run without --duration: the run stopped there and its figures are partial",
                w.line,
                duration / 1_000_000_000
            );
            if spec.print_warnings() {
                eprintln!("schedlab: warning: {m}");
            }
            input_warnings.push(m);
        }
    }
    // Warnings that setup added (cyclictest's, once it knows the CPU count).
    for (line, _, w) in &workloads {
        for m in w.warnings() {
            let m = format!("workload '{line}': {m}");
            if !input_warnings.contains(&m) {
                if spec.print_warnings() {
                    eprintln!("schedlab: warning: {m}");
                }
                input_warnings.push(m);
            }
        }
    }
    results.input_warnings = input_warnings;
    Ok(results)
}

/// Whether progress may be drawn on stderr: asked for, and stderr is a terminal (or
/// `--progress always` / `SCHEDLAB_PROGRESS=always` forces it, e.g. to check that drawing
/// changes nothing).
pub fn progress_wanted(asked: bool) -> bool {
    crate::progress::wanted(asked)
}

/// Draws progress even when stderr is not a terminal (`--progress always`).
pub fn force_progress(on: bool) {
    crate::progress::force(on)
}

/// Runs the simulation, drawing progress on stderr for long runs. The drawing only observes
/// the simulated clock (every 65 536 events): the run does the same work with or without it,
/// so the output is byte-identical. Wall-clock time only decides whether to draw. The bar
/// counts simulated milliseconds and ends at 100 % when the run ends, also when every workload
/// finished before the duration.
fn run_with_progress(k: &mut Kernel, duration: u64, length: RunLength, progress: bool) -> u64 {
    if !progress_wanted(progress) {
        return k.run_until(duration);
    }
    let total_ms = duration.div_ceil(1_000_000);
    let secs = |ns: u64| ns as f64 / 1e9;
    if length == RunLength::UntilEnd {
        // no known end: the simulated time so far, without a bar
        let mut bar = crate::progress::Bar::new(true, total_ms, "simulated {msg}", "");
        let stop = k.run_until_observed(duration, 1 << 16, &mut |now| {
            let now = now.min(duration);
            bar.set(now / 1_000_000, || {
                format!("{:.1} s (until the workloads end)", secs(now))
            });
        });
        bar.finish(|| format!("{:.1} s", secs(stop)));
        return stop;
    }
    let mut bar = crate::progress::Bar::new(
        true,
        total_ms,
        "[{bar:40}] {percent:>3}% simulated {msg}",
        "",
    );
    let stop = k.run_until_observed(duration, 1 << 16, &mut |now| {
        let now = now.min(duration);
        bar.set(now / 1_000_000, || {
            format!("{:.1}/{:.1} s", secs(now), secs(duration))
        });
    });
    bar.finish(|| {
        if stop < duration {
            format!("{:.1} s: every workload ended", secs(stop))
        } else {
            format!("{:.1}/{:.1} s", secs(duration), secs(duration))
        }
    });
    stop
}

fn collect(
    k: &Kernel,
    platform: &Platform,
    spec: &RunSpec,
    (stop, duration_ns, length): (u64, u64, RunLength),
    workloads: &[(String, Placement, Box<dyn Workload>)],
    trace_path: Option<PathBuf>,
) -> RunResult {
    let mut tasks = Vec::new();
    for (i, t) in k.tasks.iter().enumerate() {
        if t.is_idle_task {
            continue;
        }
        let se = &k.se[t.se.index()];
        let cgroup = k.task_cgroup_path(TaskId::new(i)).to_string();
        let sched = ProcSched {
            exec_start: se.exec_start,
            vruntime: se.vruntime as i64,
            sum_exec_runtime: se.sum_exec_runtime,
            nr_migrations: se.nr_migrations,
            nr_wakeups: t.stats.nr_wakeups,
            nr_wakeups_sync: t.stats.nr_wakeups_sync,
            nr_wakeups_migrate: t.stats.nr_wakeups_migrate,
            nr_switches: t.stats.nr_voluntary_switches + t.stats.nr_involuntary_switches,
            nr_voluntary_switches: t.stats.nr_voluntary_switches,
            nr_involuntary_switches: t.stats.nr_involuntary_switches,
            load_weight: se.load.weight,
            load_sum: se.avg.load_sum,
            runnable_sum: se.avg.runnable_sum,
            util_sum: u64::from(se.avg.util_sum),
            load_avg: se.avg.load_avg,
            runnable_avg: se.avg.runnable_avg,
            util_avg: se.avg.util_avg,
            last_update_time: se.avg.last_update_time,
            util_est: u64::from(se.avg.util_est & !UTIL_AVG_UNCHANGED),
            policy: t.policy.number(),
            prio: t.prio(),
            slice: se.slice,
        };
        let adjusted = schedlab_sched::stats::cputime_adjust(
            t.stats.user_ns,
            t.stats.sys_ns,
            se.sum_exec_runtime,
        );
        tasks.push(TaskResult {
            pid: t.pid,
            comm: t.comm.clone(),
            policy: t.policy,
            nice: t.nice,
            slice_ns: se.slice,
            sum_exec_runtime_ns: se.sum_exec_runtime,
            nr_switches: t.stats.nr_switches,
            nr_voluntary_switches: t.stats.nr_voluntary_switches,
            nr_involuntary_switches: t.stats.nr_involuntary_switches,
            nr_migrations: se.nr_migrations,
            run_delay_ns: t.stats.run_delay_ns,
            user_ns: adjusted.0,
            sys_ns: adjusted.1,
            last_cpu: t.cpu,
            exited: t.state == schedlab_sched::sched::TaskState::Dead,
            cgroup,
            sched,
        });
    }
    let cpus = k
        .rqs
        .iter()
        .map(|rq| CpuResult {
            cpu: rq.cpu,
            idle_ns: rq.stats.idle_ns,
            nr_switches: rq.stats.nr_switches,
            migrations_in: rq.stats.migrations_in,
            migrations_out: rq.stats.migrations_out,
        })
        .collect();
    let procfs: &dyn Procfs = k;
    let cgroups = k
        .tgs
        .iter()
        .skip(1)
        .filter_map(|g| procfs.cgroup_stat(&g.path).map(|st| (g.path.clone(), st)))
        .collect();
    let wl = workloads
        .iter()
        .map(|(line, _, w)| {
            let cut = w.completed() == Some(false);
            WorkloadResult {
                line: line.clone(),
                program: w.program().to_string(),
                output: w.output(procfs),
                // a cut program's figures are partial: not reported as if complete
                metrics: if cut { Vec::new() } else { w.metrics(procfs) },
                series: w.series(),
                cut,
            }
        })
        .collect();
    RunResult {
        platform: platform.name.clone(),
        kernel: k.cfg.spec.clone(),
        preempt: k.preempt_model().name().to_string(),
        hz: k.hz,
        base_slice_ns: if k.cfg.has(schedlab_sched::Patch::EevdfPolicy) {
            k.base_slice
        } else {
            k.cfs_tun.min_granularity
        },
        cfs_tunables: (!k.cfg.has(schedlab_sched::Patch::EevdfPolicy)).then_some((
            k.cfs_tun.latency,
            k.cfs_tun.min_granularity,
            k.cfs_tun.wakeup_granularity,
        )),
        ncpus: k.ncpus,
        seed: spec.seed,
        sim_time_ns: stop,
        events: k.events_processed(),
        tasks,
        cpus,
        workloads: wl,
        length,
        duration_ns,
        nr_switches: k.stats.nr_switches,
        nr_migrations: k.stats.migrations,
        ttwu_local: k.stats.ttwu_local,
        ttwu_remote: k.stats.ttwu_remote,
        ttwu_delayed_requeue: k.stats.ttwu_delayed_requeue,
        ttwu_delayed_requeue_busy_while_idle: k.stats.ttwu_delayed_requeue_busy_while_idle,
        sched_idle_placed: k.stats.sched_idle_placed,
        sched_idle_stacked: k.stats.sched_idle_stacked,
        sched_idle_stacked_wait_ns: k.stats.sched_idle_stacked_wait_ns,
        // each class's own counters (no delayed dequeue in CFS, no CFS buddies in EEVDF)
        fair_ops: FairOp::ALL
            .iter()
            .filter(|op| op.counted_by(!k.cfg.has(schedlab_sched::Patch::EevdfPolicy)))
            .map(|op| (op.name().to_string(), k.stats.fair_ops[*op as usize]))
            .collect(),
        ipis: k.stats.ipis,
        ipi_avoided: k.stats.ipi_avoided,
        newidle_balances: k.stats.newidle_balances,
        paths: k.stats.paths.clone(),
        ticks: k.stats.ticks,
        mean_nr_running: (0..k.ncpus).map(|c| k.mean_nr_running(c)).collect(),
        warnings: k.warnings,
        first_warning: k.first_warning.clone(),
        trace_path,
        trace_columns: None,
        input_warnings: Vec::new(),
        dl_server_runs: dl_server_runs(k, stop),
        wakeups: k.wakeup_log.clone(),
        wakeups_comm: k.observe_comm.clone().map(|c| {
            let long = spec
                .explain_wakeups
                .as_deref()
                .and_then(|v| parse_explain_wakeups(v).ok())
                .map_or(DEFAULT_LONG_WAIT_NS, |e| e.1);
            (c, long)
        }),
        cgroups,
        net: k.net.stats.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One CPU whose AF_UNIX sends cost 20 ms each: hackbench `-g 1 -f 1 -l 600` (one sender,
    /// one receiver, sockets by default) needs at least 600 × 20 ms = 12 s of simulated time.
    const SLOW_SEND: &str = r#"
name = "slow-send"
description = "one CPU, 20 ms per AF_UNIX send"
extends = "smp:1"
[costs]
c_unix_send = 20000
"#;
    const SLOW_HACKBENCH: &str = "hackbench -g 1 -f 1 -l 600";

    fn length(given: Option<u64>, lines: &[&str]) -> (u64, RunLength) {
        let ws: Vec<Box<dyn Workload>> =
            lines.iter().map(|l| parse_workload(l).unwrap().1).collect();
        let refs: Vec<&dyn Workload> = ws.iter().map(|w| w.as_ref()).collect();
        run_length(given, &refs)
    }

    #[test]
    fn the_run_length_follows_the_workloads() {
        let s = 1_000_000_000u64;
        // --duration wins
        assert_eq!(length(Some(s), &["hackbench"]), (s, RunLength::Given));
        // workloads that end after an unknown amount of work: until they end, a day at most
        let until = (SAFETY_LIMIT_NS, RunLength::UntilEnd);
        assert_eq!(length(None, &["hackbench -l 100"]), until);
        assert_eq!(length(None, &["hackbench -l 100", "hackbench -p"]), until);
        // beside one with its own length (stress-ng --timeout 5: 5 s plus its margin; seed
        // 004's hackbench -l 16000000 beside cyclictest -D): that length, hackbench is the
        // background load and is marked cut if it has not ended by then
        let (d, l) = length(None, &["hackbench", "stress-ng --pipe 1 --timeout 5"]);
        assert_eq!(l, RunLength::Hint);
        assert!(d > 5 * s && d < 10 * s, "{d}");
        // beside one that runs until stopped (stress-ng --timeout 0): the 10 s default, and
        // hackbench is marked cut if it has not ended by then
        assert_eq!(
            length(None, &["hackbench", "stress-ng --pipe 1 --timeout 0"]),
            (DEFAULT_DURATION_NS, RunLength::Default)
        );
        // only workloads with a length of their own: the longest (unchanged)
        let (d, l) = length(None, &["stress-ng --pipe 1 --timeout 5"]);
        assert_eq!(l, RunLength::Hint);
        assert!(d > 5 * s && d < 10 * s, "{d}");
    }

    fn slow_run(duration_ns: Option<u64>, limit: u64) -> RunResult {
        let p = Platform::from_toml_str(SLOW_SEND, "slow-send.toml").unwrap();
        let mut spec = RunSpec::new("slow-send.toml", "v6.19", &[SLOW_HACKBENCH]);
        spec.duration_ns = duration_ns;
        quiet_warnings(|| run_on_limited(p, &spec, limit)).unwrap()
    }

    #[test]
    fn a_finite_workload_runs_to_its_end_without_duration() {
        // ≥ 12 s of sends: past the old 10 s default, and it ends by itself
        let r = slow_run(None, SAFETY_LIMIT_NS);
        assert_eq!(r.length, RunLength::UntilEnd);
        assert!(r.sim_time_ns >= 12_000_000_000, "{}", r.sim_time_ns);
        assert!(r.sim_time_ns < SAFETY_LIMIT_NS);
        let w = &r.workloads[0];
        assert!(!w.cut);
        assert!(w.output.contains("\nTime: "), "{}", w.output);
        let t = w.metrics.iter().find(|m| m.name == "time_s").unwrap();
        assert!(t.value >= 12.0, "{}", t.value);
        assert!(r.input_warnings.is_empty(), "{:?}", r.input_warnings);
        assert!(!crate::report::text(&r).contains("was cut"));
    }

    #[test]
    fn a_finite_workload_stopped_by_duration_is_marked_cut() {
        let r = slow_run(Some(1_000_000_000), SAFETY_LIMIT_NS);
        assert_eq!((r.length, r.sim_time_ns), (RunLength::Given, 1_000_000_000));
        let w = &r.workloads[0];
        assert!(w.cut);
        assert!(w.metrics.is_empty(), "{:?}", w.metrics);
        assert!(!w.output.contains("Time:"), "{}", w.output);
        let text = crate::report::text(&r);
        assert!(
            text.contains(&format!(
                "schedlab: workload '{SLOW_HACKBENCH}' was cut: the run stopped at 1.000 s \
                 (--duration) before the program ended"
            )),
            "{text}"
        );
        let j = crate::report::json(&r);
        assert_eq!(j["workloads"][0]["cut"], true);
        assert_eq!(j["workloads"][0]["metrics"], serde_json::json!({}));
    }

    #[test]
    fn dbench_is_cut_before_its_throughput_line() {
        // dbench -t 1 prints `Throughput` and the operation table once the parent has reaped
        // its client after the warm-up and the 1 s run: its own length (the default) lets it
        // get there; a 1 s run stops it during the execute phase.
        let spec = |d: Option<u64>| {
            let mut s = RunSpec::new("smp:2", "v6.19", &["dbench -t 1 1"]);
            s.duration_ns = d;
            quiet_warnings(|| run(&s)).unwrap()
        };
        let r = spec(None);
        assert_eq!(r.length, RunLength::Hint);
        assert!(!r.workloads[0].cut);
        assert!(r.workloads[0].output.contains("Throughput"));
        assert!(!r.workloads[0].metrics.is_empty());
        let r = spec(Some(1_000_000_000));
        assert!(r.workloads[0].cut);
        assert!(!r.workloads[0].output.contains("Throughput"));
        assert!(r.workloads[0].metrics.is_empty());
    }

    #[test]
    fn the_safety_limit_is_reported_never_taken_for_the_end() {
        // the limit lowered to 2 s for the test: the run stops there, warns and marks the
        // workload cut
        let r = slow_run(None, 2_000_000_000);
        assert_eq!(
            (r.length, r.sim_time_ns),
            (RunLength::UntilEnd, 2_000_000_000)
        );
        assert!(r.workloads[0].cut);
        assert!(r.workloads[0].metrics.is_empty());
        assert_eq!(r.input_warnings.len(), 1, "{:?}", r.input_warnings);
        assert!(
            r.input_warnings[0]
                .contains("had not ended after 2 s of simulated time, the safety limit"),
            "{:?}",
            r.input_warnings
        );
        assert!(crate::report::text(&r).contains("(the safety limit of a run without --duration)"));
    }
}
