//! Compiles a parsed rt-app file ([`RtAppFile`]) into what the task programs run: resources
//! resolved to indices (mutexes, condition variables, semaphores, barriers, timers), each task's
//! scheduling attributes merged with the workload line's placement, and the checks for what
//! the kernel model cannot run yet (affinity changes between phases, SCHED_DEADLINE entered,
//! left or changed between phases).
//!
//! Precedence of attributes (decided for schedlab; real rt-app always applies its own policy and
//! nice 0 at thread start, which would make `nice=`/`policy=` on the workload line useless):
//!
//! * policy: the task's `policy`, else the line's `policy=`, else `global.default_policy`;
//! * nice (fair policies): the task's `priority`, else the line's `nice=`, else 0 (inherited
//!   from main);
//! * RT priority (SCHED_FIFO/RR): the task's `priority`, else the line's (`chrt -f 80`,
//!   `policy=fifo:80`) when the line gives the policy, else rt-app's default 10;
//! * SCHED_DEADLINE: the task's `dl-runtime`/`dl-period`/`dl-deadline` (rt-app's defaults:
//!   period = runtime, deadline = period), else the line's `chrt -d`/`policy=deadline:`;
//! * slice: the task's `dl-runtime` (fair policies; 0 = default slice), else the line's `slice=`;
//! * affinity: the task's or its phases' `cpus`, else the line's `cpus=`;
//! * cgroup: the task's `taskgroup` (the thread starts in it), else the line's `cgroup=`
//!   (inherited from main). A phase's `taskgroup` moves the thread at phase start
//!   (`set_thread_taskgroup()`: a write of its tid to the group's `cgroup.procs`, skipped when
//!   the thread is in that group already); a phase without one leaves it where it is. The groups
//!   are created at set-up (`mkdir -p`, as rt-app's `cgroup_setup()`). rt-app's move of each
//!   thread back to `/` just before it exits is not modelled: the per-task output shows the
//!   group a thread was in when it ended.
//!
//! Phase-level `policy`, `priority` and `dl-runtime` become `sched_setscheduler`/`setpriority`/
//! `sched_setattr` calls at phase start (a phase that names a policy without a priority gets
//! rt-app's default: nice 0, or RT priority 10). A phase may not change the affinity, nor
//! enter, leave or change SCHED_DEADLINE (no kernel operation for them yet).

use std::collections::BTreeMap;

use schedlab_platform::CpuMask;
use schedlab_sched::sched::Policy as KPolicy;
use schedlab_sched::TaskAttrs;

use super::model::{Calibration, EventKind, Policy, RtAppFile, TaskDef};
use crate::workload::Placement;

/// Why a file cannot run in this model (becomes `WorkloadError::Unsupported` or `Option`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PlanError {
    Unsupported(String),
    Invalid(String),
}

/// Which timer a `timer` event uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimerRef {
    /// Shared by every thread naming it (index into the process's timers).
    Shared(usize),
    /// One per thread (index into the thread's own timers); `ref` starts with `unique`.
    Unique(usize),
}

/// A compiled event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ev {
    Run(u64),
    Runtime(u64),
    Sleep(u64),
    Timer { timer: TimerRef, period_us: u64 },
    Lock(usize),
    Unlock(usize),
    Wait { cond: usize, mutex: usize },
    Signal(usize),
    Broad(usize),
    Barrier(usize),
    Suspend,
    Resume(usize),
    SemPost(usize),
    SemWait(usize),
    Yield,
    Fork(usize),
}

impl Ev {
    /// `lock`/`unlock` still run while rt-app shuts down (its "dry run" of a phase).
    pub fn runs_when_stopping(&self) -> bool {
        matches!(self, Ev::Lock(_) | Ev::Unlock(_))
    }

    /// Longest time the event can take by itself (µs), for the duration hint.
    fn span_us(&self) -> u64 {
        match self {
            Ev::Run(us) | Ev::Runtime(us) | Ev::Sleep(us) => *us,
            Ev::Timer { period_us, .. } => *period_us,
            _ => 0,
        }
    }
}

/// A compiled phase.
#[derive(Clone, Debug)]
pub(crate) struct PhasePlan {
    /// −1 = forever.
    pub loop_count: i64,
    /// `priority` named by the phase: `setpriority()` at phase start (fair policies).
    pub nice: Option<i32>,
    /// `priority` named by the phase of an RT task: `sched_setscheduler()` at phase start.
    pub rt_priority: Option<u32>,
    /// `policy` named by the phase: `sched_setscheduler(policy, nice, RT priority)` at phase
    /// start.
    pub sched: Option<(KPolicy, i32, u32)>,
    /// `dl-runtime` named by the phase (ns, 0 = default): `sched_setattr()` at phase start.
    pub slice_ns: Option<u64>,
    /// `taskgroup` named by the phase (index into [`Plan::taskgroups`]): the thread moves
    /// there at phase start.
    pub taskgroup: Option<usize>,
    pub events: Vec<Ev>,
}

/// A compiled task (the template of its threads).
#[derive(Clone, Debug)]
pub(crate) struct TaskPlan {
    pub name: String,
    pub instance: u32,
    pub delay_us: u64,
    /// −1 = forever.
    pub loop_count: i64,
    pub policy: Policy,
    /// The nice value the thread starts with (`None` = inherited from main, i.e. the line's).
    pub nice: Option<i32>,
    /// What the log header and summary show as priority (the starting nice value, or the RT
    /// priority; 0 for SCHED_DEADLINE).
    pub prio: i32,
    /// SCHED_FIFO/SCHED_RR priority the thread starts with.
    pub rt_priority: Option<u32>,
    /// SCHED_DEADLINE parameters the thread starts with.
    pub dl: Option<schedlab_sched::DlAttr>,
    pub slice_ns: Option<u64>,
    pub cpus: Option<CpuMask>,
    /// The task's `taskgroup` (index into [`Plan::taskgroups`]): its threads start there.
    pub taskgroup: Option<usize>,
    pub phases: Vec<PhasePlan>,
    /// The mutex and condition variable of the thread's `suspend` (shared by its instances).
    pub suspend: (usize, usize),
    /// Relative mode of each of the task's unique timers, by local index.
    pub unique_timers: Vec<bool>,
}

/// A shared timer.
#[derive(Clone, Debug)]
pub(crate) struct TimerPlan {
    pub relative: bool,
}

/// A barrier: its internal mutex and condvar, and how many threads use it.
#[derive(Clone, Debug)]
pub(crate) struct BarrierPlan {
    pub mutex: usize,
    pub cond: usize,
    pub users: u64,
}

/// A compiled rt-app file.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub duration_ns: Option<u64>,
    pub calibration: Calibration,
    /// `speed` of the calibration CPU (1024 = reference core); `run` work scales by it.
    pub run_speed: u64,
    pub tasks: Vec<TaskPlan>,
    pub n_mutexes: usize,
    /// `pi_enabled`: every mutex resource is PTHREAD_PRIO_INHERIT (rt-app's
    /// `init_mutex_resource`).
    pub pi_mutexes: bool,
    pub n_conds: usize,
    pub n_sems: usize,
    pub barriers: Vec<BarrierPlan>,
    pub timers: Vec<TimerPlan>,
    /// Task index of each thread created at start, in rt-app's order (file order, instances
    /// consecutive).
    pub initial: Vec<usize>,
    /// Things accepted with a reduced meaning, for the output.
    pub notes: Vec<String>,
    /// The distinct `taskgroup` paths, in order of first appearance (created at set-up).
    pub taskgroups: Vec<String>,
}

impl Plan {
    /// Work at the reference core (ns) of a `run` event of `us` µs at the calibration CPU.
    pub fn run_work_ns(&self, us: u64) -> u64 {
        let ns = us.saturating_mul(1000);
        if self.run_speed == 1024 {
            ns
        } else {
            (ns as u128 * self.run_speed as u128 / 1024) as u64
        }
    }

    /// rt-app's `perf` for a `run` event: `exec / p_load` with `exec` in µs. With a "CPUn"
    /// calibration schedlab has no loop to time, so p_load is taken as 1 (perf = µs of work).
    pub fn perf(&self, us: u64) -> u64 {
        match self.calibration {
            Calibration::NsPerLoop(p) => us / p.max(1),
            Calibration::Cpu(_) => us,
        }
    }

    /// The attributes of a new thread of task `def` named `name`.
    pub fn attrs(&self, def: usize, name: &str) -> TaskAttrs {
        let t = &self.tasks[def];
        TaskAttrs {
            comm: Some(comm_for(name)),
            policy: Some(kernel_policy(t.policy)),
            nice: t.nice,
            // rt-app sets the thread's policy itself: a fair thread of an RT main gets 0
            rt_priority: Some(t.rt_priority.unwrap_or(0)),
            slice_ns: t.slice_ns,
            cpus: t.cpus.clone(),
            tg: None,
            reset_on_fork: None,
            dl: t.dl,
        }
    }

    /// A bound on how long the process runs (ns): its duration plus the longest single event
    /// (threads finish the event in progress when rt-app stops) plus one second of margin.
    pub fn duration_hint(&self) -> Option<u64> {
        let d = self.duration_ns?;
        let longest = self
            .tasks
            .iter()
            .flat_map(|t| t.phases.iter().flat_map(|p| p.events.iter()))
            .map(Ev::span_us)
            .max()
            .unwrap_or(0);
        Some(d + longest.saturating_mul(1000) + 1_000_000_000)
    }
}

/// `pthread_setname_np` fails for names longer than 15 bytes; the thread then keeps the
/// process name.
pub(crate) fn comm_for(name: &str) -> String {
    if name.len() <= 15 {
        name.to_string()
    } else {
        "rt-app".to_string()
    }
}

/// The kernel's policy for a fair rt-app policy.
pub(crate) fn kernel_policy(p: Policy) -> KPolicy {
    match p {
        Policy::Other => KPolicy::Normal,
        Policy::Batch => KPolicy::Batch,
        Policy::Idle => KPolicy::Idle,
        Policy::Fifo => KPolicy::Fifo,
        Policy::Rr => KPolicy::Rr,
        Policy::Deadline => KPolicy::Deadline,
    }
}

fn file_policy(p: KPolicy) -> Policy {
    match p {
        KPolicy::Normal => Policy::Other,
        KPolicy::Batch => Policy::Batch,
        KPolicy::Idle => Policy::Idle,
        KPolicy::Fifo => Policy::Fifo,
        KPolicy::Rr => Policy::Rr,
        KPolicy::Deadline => Policy::Deadline,
    }
}

/// rt-app's `DEFAULT_THREAD_PRIORITY` for SCHED_FIFO/SCHED_RR threads without a priority
/// (workloads.md §10.3).
const DEFAULT_RT_PRIORITY: u32 = 10;

/// Names → dense indices in order of first appearance.
#[derive(Default)]
struct Names {
    map: BTreeMap<String, usize>,
    n: usize,
}

impl Names {
    fn get(&mut self, name: &str) -> usize {
        if let Some(&i) = self.map.get(name) {
            return i;
        }
        let i = self.n;
        self.map.insert(name.to_string(), i);
        self.n += 1;
        i
    }
    fn fresh(&mut self) -> usize {
        self.n += 1;
        self.n - 1
    }
}

/// What compilation needs to know of the machine: the speed of each CPU (1024 = reference).
pub(crate) struct MachineInfo<'a> {
    pub speed: &'a [u64],
}

/// Compiles `file` for the workload line's `placement` on `machine` (`None`: check only what
/// does not depend on the machine).
pub(crate) fn compile(
    file: &RtAppFile,
    placement: &Placement,
    machine: Option<&MachineInfo<'_>>,
) -> Result<Plan, PlanError> {
    let mut notes = Vec::new();
    check_supported(file, placement)?;

    let run_speed = match (file.global.calibration, machine) {
        (Calibration::Cpu(n), Some(m)) => match m.speed.get(n as usize) {
            Some(&s) => s,
            None => {
                return Err(PlanError::Invalid(format!(
                    "calibration \"CPU{n}\": the machine has CPUs 0-{}",
                    m.speed.len() - 1
                )))
            }
        },
        _ => 1024,
    };
    if file.global.pi_enabled {
        notes.push(
            "pi_enabled: mutexes are modelled as default (non-PI) mutexes; with only fair \
             threads priority inheritance boosts nothing"
                .to_string(),
        );
    }

    let mut mutexes = Names::default();
    let mut conds = Names::default();
    let mut sems = Names::default();
    let mut barrier_names = Names::default();
    let mut barriers: Vec<BarrierPlan> = Vec::new();
    let mut looped_barriers: Vec<usize> = Vec::new();
    let mut timer_names = Names::default();
    let mut timers: Vec<TimerPlan> = Vec::new();
    let mut taskgroups: Vec<String> = Vec::new();
    let mut tg_index = |path: &Option<String>| -> Option<usize> {
        let path = path.as_ref()?;
        Some(match taskgroups.iter().position(|g| g == path) {
            Some(i) => i,
            None => {
                taskgroups.push(path.clone());
                taskgroups.len() - 1
            }
        })
    };
    let task_index: BTreeMap<&str, usize> = file
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();

    // Barrier users (§10.4: Σ instances of the tasks whose events name the barrier).
    let mut barrier_users: BTreeMap<&str, u64> = BTreeMap::new();
    for t in &file.tasks {
        let mut here: Vec<&str> = t
            .events()
            .filter_map(|e| match &e.kind {
                EventKind::Barrier(b) => Some(b.as_str()),
                _ => None,
            })
            .collect();
        here.sort_unstable();
        here.dedup();
        for b in here {
            *barrier_users.entry(b).or_default() += u64::from(t.instance);
        }
    }
    // A shared timer is absolute for everybody if any user says so (rt-app); likewise a
    // unique timer for all the events of its task.
    let mut shared_absolute: BTreeMap<&str, bool> = BTreeMap::new();
    for t in &file.tasks {
        for e in t.events() {
            if let EventKind::Timer(tm) = &e.kind {
                if !tm.unique {
                    *shared_absolute.entry(tm.reference.as_str()).or_default() |=
                        tm.mode == super::model::TimerMode::Absolute;
                }
            }
        }
    }

    let mut tasks = Vec::new();
    // Each task's suspend condition and its mutex (shared by the task's instances, as rt-app
    // names the resource after the task).
    let suspend_of: Vec<(usize, usize)> = file
        .tasks
        .iter()
        .map(|_| (mutexes.fresh(), conds.fresh()))
        .collect();

    for (ti, t) in file.tasks.iter().enumerate() {
        let policy = start_policy(file, t, placement);
        let from_line = t.properties.policy.is_none() && placement.policy.is_some();
        let (nice, prio, slice_ns, rt_priority, dl) = if policy.is_fair() {
            let nice = match t.properties.priority {
                Some(p) => Some(p),
                None => placement.nice,
            };
            let slice_ns = match t.properties.dl_runtime_us {
                Some(us) => Some(us * 1000),
                None => placement.slice_ns,
            };
            (nice, nice.unwrap_or(0), slice_ns, None, None)
        } else if policy.is_rt() {
            let rp = match t.properties.priority {
                Some(p) => p,
                None if from_line => placement.rt_priority.unwrap_or(DEFAULT_RT_PRIORITY) as i32,
                None => DEFAULT_RT_PRIORITY as i32,
            };
            if !(1..=99).contains(&rp) {
                return Err(PlanError::Invalid(format!(
                    "task {:?}: priority {rp} with {policy} (the line's {}): expected an RT \
                     priority 1..=99",
                    t.name,
                    placement.policy_src.as_deref().unwrap_or("policy")
                )));
            }
            (None, rp, None, Some(rp as u32), None)
        } else {
            let dl = match super::parse::dl_attr(&t.properties) {
                Some(a) => a,
                None => match placement.dl {
                    Some((runtime, deadline, period)) if from_line => schedlab_sched::DlAttr {
                        runtime,
                        deadline,
                        period,
                        sched_flags: placement.dl_flags,
                    },
                    _ => {
                        return Err(PlanError::Invalid(format!(
                            "task {:?}: SCHED_DEADLINE needs \"dl-runtime\"",
                            t.name
                        )))
                    }
                },
            };
            if let Err(m) = schedlab_sched::deadline::checkparam_dl(&dl) {
                return Err(PlanError::Invalid(format!("task {:?}: {m}", t.name)));
            }
            (None, 0, None, None, Some(dl))
        };
        let cpus = effective_cpus(t, placement)?;
        if let (Some(m), Some(list)) = (machine, cpus.as_ref()) {
            if let Some(c) = list.iter().find(|&c| c >= m.speed.len()) {
                return Err(PlanError::Invalid(format!(
                    "task {:?}: cpus include CPU {c}, but the machine has CPUs 0-{}",
                    t.name,
                    m.speed.len() - 1
                )));
            }
        }
        if t.properties.util_min.is_some()
            || t.properties.util_max.is_some()
            || t.phases
                .iter()
                .any(|p| p.properties.util_min.is_some() || p.properties.util_max.is_some())
        {
            notes.push(format!(
                "task {:?}: util_min/util_max ignored (uclamp is not modelled)",
                t.name
            ));
        }

        let taskgroup = tg_index(&t.properties.taskgroup);
        let mut in_force = policy;
        let mut unique: Names = Names::default();
        let mut unique_absolute: Vec<bool> = Vec::new();
        let mut phases = Vec::new();
        for p in &t.phases {
            let mut events = Vec::new();
            for e in &p.events {
                let ev = match &e.kind {
                    EventKind::Run(us) => Ev::Run(*us),
                    EventKind::Runtime(us) => Ev::Runtime(*us),
                    EventKind::Sleep(us) => Ev::Sleep(*us),
                    EventKind::Timer(tm) => {
                        let timer = if tm.unique {
                            let i = unique.get(&tm.reference);
                            if i == unique_absolute.len() {
                                unique_absolute.push(false);
                            }
                            unique_absolute[i] |= tm.mode == super::model::TimerMode::Absolute;
                            TimerRef::Unique(i)
                        } else {
                            let i = timer_names.get(&tm.reference);
                            if i == timers.len() {
                                let abs = shared_absolute
                                    .get(tm.reference.as_str())
                                    .copied()
                                    .unwrap_or(false);
                                timers.push(TimerPlan { relative: !abs });
                            }
                            TimerRef::Shared(i)
                        };
                        Ev::Timer {
                            timer,
                            period_us: tm.period_us,
                        }
                    }
                    EventKind::Lock(m) => Ev::Lock(mutexes.get(m)),
                    EventKind::Unlock(m) => Ev::Unlock(mutexes.get(m)),
                    EventKind::Wait { cond, mutex } => Ev::Wait {
                        cond: conds.get(cond),
                        mutex: mutexes.get(mutex),
                    },
                    EventKind::Signal(c) => Ev::Signal(conds.get(c)),
                    EventKind::Broad(c) => Ev::Broad(conds.get(c)),
                    EventKind::Barrier(b) => {
                        let i = barrier_names.get(b);
                        let repeats = p.loop_count != 1 || t.loop_count != 1;
                        if repeats && !looped_barriers.contains(&i) {
                            looped_barriers.push(i);
                            notes.push(format!(
                                "barrier {b:?} is met in a loop (task {:?}): as in rt-app, a \
                                 thread that passes it can come back before the woken threads \
                                 have re-registered and pass again, so users may drift apart",
                                t.name
                            ));
                        }
                        if i == barriers.len() {
                            barriers.push(BarrierPlan {
                                mutex: mutexes.fresh(),
                                cond: conds.fresh(),
                                users: barrier_users.get(b.as_str()).copied().unwrap_or(0),
                            });
                        }
                        Ev::Barrier(i)
                    }
                    EventKind::Suspend => Ev::Suspend,
                    EventKind::Resume(target) => Ev::Resume(lookup(&task_index, target)?),
                    EventKind::SemPost(s) => Ev::SemPost(sems.get(s)),
                    EventKind::SemWait(s) => Ev::SemWait(sems.get(s)),
                    EventKind::Yield => Ev::Yield,
                    EventKind::Fork(target) => Ev::Fork(lookup(&task_index, target)?),
                };
                events.push(ev);
            }
            // the policy in force: the last one a phase named, in file order; a phase that
            // names the policy already in force only sets its priority
            let sched = match p.properties.policy {
                Some(pp) if pp != in_force => {
                    in_force = pp;
                    let prio = p.properties.priority;
                    Some(if pp.is_rt() {
                        (
                            kernel_policy(pp),
                            0,
                            prio.unwrap_or(DEFAULT_RT_PRIORITY as i32) as u32,
                        )
                    } else {
                        (kernel_policy(pp), prio.unwrap_or(0), 0)
                    })
                }
                _ => None,
            };
            let fair = in_force.is_fair();
            let own_prio = p.properties.priority.filter(|_| sched.is_none());
            phases.push(PhasePlan {
                loop_count: p.loop_count,
                nice: own_prio.filter(|_| fair),
                rt_priority: own_prio.filter(|_| in_force.is_rt()).map(|p| p as u32),
                sched,
                slice_ns: p
                    .properties
                    .dl_runtime_us
                    .filter(|_| fair)
                    .map(|us| us * 1000),
                taskgroup: tg_index(&p.properties.taskgroup),
                events,
            });
        }
        tasks.push(TaskPlan {
            name: t.name.clone(),
            instance: t.instance,
            delay_us: t.delay_us,
            loop_count: t.loop_count,
            policy,
            nice,
            prio,
            rt_priority,
            dl,
            slice_ns,
            cpus,
            taskgroup,
            phases,
            suspend: suspend_of[ti],
            unique_timers: unique_absolute.iter().map(|a| !a).collect(),
        });
    }

    let initial: Vec<usize> = tasks
        .iter()
        .enumerate()
        .flat_map(|(i, t)| std::iter::repeat_n(i, t.instance as usize))
        .collect();
    if initial.is_empty() {
        return Err(PlanError::Invalid(
            "no task has \"instance\" ≥ 1: rt-app would start no thread".to_string(),
        ));
    }
    Ok(Plan {
        duration_ns: file.global.duration_s.map(|s| s * 1_000_000_000),
        calibration: file.global.calibration,
        run_speed,
        tasks,
        n_mutexes: mutexes.n,
        pi_mutexes: file.global.pi_enabled,
        n_conds: conds.n,
        n_sems: sems.n,
        barriers,
        timers,
        initial,
        notes,
        taskgroups,
    })
}

fn lookup(index: &BTreeMap<&str, usize>, name: &str) -> Result<usize, PlanError> {
    index
        .get(name)
        .copied()
        .ok_or_else(|| PlanError::Invalid(format!("unknown task {name:?}")))
}

/// The policy a thread of `t` starts with (module docs: task, then line, then default).
fn start_policy(file: &RtAppFile, t: &TaskDef, placement: &Placement) -> Policy {
    t.properties
        .policy
        .or(placement.policy.map(file_policy))
        .unwrap_or(file.global.default_policy)
}

/// The affinity of `t`: constant over its phases, or an error.
fn effective_cpus(t: &TaskDef, placement: &Placement) -> Result<Option<CpuMask>, PlanError> {
    let mask = |list: &Vec<u32>| list.iter().map(|&c| c as usize).collect::<CpuMask>();
    let task_level = t.properties.cpus.as_ref().map(mask);
    let base = task_level.clone().or_else(|| placement.cpus.clone());
    let mut first: Option<Option<CpuMask>> = None;
    for p in &t.phases {
        let eff = p
            .properties
            .cpus
            .as_ref()
            .map(mask)
            .or_else(|| base.clone());
        match &first {
            None => first = Some(eff),
            Some(f) if *f != eff => {
                return Err(PlanError::Unsupported(format!(
                    "task {:?}, phase {:?}: changes the CPU affinity (\"cpus\") between \
                     phases; the kernel model has no sched_setaffinity operation yet",
                    t.name, p.name
                )))
            }
            Some(_) => {}
        }
    }
    Ok(first.flatten())
}

/// Taskgroups, policy changes between phases, and SCHED_DEADLINE parameter changes.
fn check_supported(file: &RtAppFile, placement: &Placement) -> Result<(), PlanError> {
    for t in &file.tasks {
        let start = start_policy(file, t, placement);
        for p in &t.phases {
            let names_dl = p.properties.dl_runtime_us.is_some()
                || p.properties.dl_period_us.is_some()
                || p.properties.dl_deadline_us.is_some();
            if start == Policy::Deadline
                && names_dl
                && super::parse::dl_attr(&p.properties) != super::parse::dl_attr(&t.properties)
            {
                return Err(PlanError::Unsupported(format!(
                    "task {:?}, phase {:?}: changes the SCHED_DEADLINE parameters between \
                     phases; schedlab does not model that sched_setattr yet",
                    t.name, p.name
                )));
            }
            if let Some(pp) = p.properties.policy {
                if pp != start && (pp == Policy::Deadline || start == Policy::Deadline) {
                    return Err(PlanError::Unsupported(format!(
                        "task {:?}, phase {:?}: changes the policy from {start} to {pp}; \
                         schedlab does not model entering or leaving SCHED_DEADLINE between \
                         phases yet",
                        t.name, p.name
                    )));
                }
            }
        }
        // The checks of `mkdir -p` on each taskgroup path; and rt-app's
        // check_taskgroup_policy_dep() once more with the line's policy, which a thread that
        // names none takes (parse.rs checked the file's own policies).
        let start = start_policy(file, t, placement);
        let mut in_force = (start, t.properties.taskgroup.as_deref());
        let phases = std::iter::once(&t.properties).chain(t.phases.iter().map(|p| &p.properties));
        for (i, props) in phases.enumerate() {
            if i > 0 {
                if let Some(pp) = props.policy {
                    in_force.0 = pp;
                }
                if let Some(g) = props.taskgroup.as_deref() {
                    in_force.1 = Some(g);
                }
            }
            if let Some(g) = props.taskgroup.as_deref() {
                schedlab_sched::cgroup::parse_cgroup_path(g).map_err(|e| {
                    PlanError::Invalid(format!("task {:?}: taskgroup: {}", t.name, e.reason))
                })?;
            }
            if let (pol, Some(g)) = in_force {
                if !pol.is_fair() {
                    return Err(PlanError::Invalid(format!(
                        "task {:?}: taskgroup {g:?} with {pol} (the line's {}): rt-app supports \
                         taskgroups only for SCHED_OTHER, SCHED_BATCH and SCHED_IDLE",
                        t.name,
                        placement.policy_src.as_deref().unwrap_or("policy")
                    )));
                }
            }
        }
        effective_cpus(t, placement)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtapp::parse_rtapp;

    fn plan(text: &str) -> Result<Plan, PlanError> {
        let f = parse_rtapp(text, "t.json").unwrap_or_else(|e| panic!("{e}"));
        compile(&f, &Placement::default(), None)
    }

    #[test]
    fn resources_are_resolved_by_name_per_kind() {
        let p = plan(
            r#"{ "tasks": {
              "a": { "instance": 2, "loop": 1, "lock": "m", "signal": "c", "unlock": "m",
                     "sem_post": "s", "barrier": "b" },
              "b": { "loop": 1, "lock": "m", "wait": { "ref": "c", "mutex": "m" },
                     "unlock": "m", "sem_wait": "s", "barrier": "b" } } }"#,
        )
        .unwrap();
        // Suspend objects first (one mutex + condvar per task: 2 each), then "m", then the
        // barrier's own mutex; conds: 2 suspend + "c" + the barrier's.
        assert_eq!(p.tasks[0].suspend, (0, 0));
        assert_eq!(p.tasks[1].suspend, (1, 1));
        assert_eq!(p.tasks[0].phases[0].events[0], Ev::Lock(2));
        assert_eq!(
            p.tasks[1].phases[0].events[1],
            Ev::Wait { cond: 2, mutex: 2 }
        );
        assert_eq!((p.n_mutexes, p.n_conds, p.n_sems), (4, 4, 1));
        // Users of "b" = 2 instances of a + 1 of b (§10.4).
        assert_eq!(p.barriers[0].users, 3);
        assert_eq!(p.initial, vec![0, 0, 1]);
    }

    /// Thread attributes for RT and DEADLINE tasks: rt-app's defaults (priority 10; dl-period =
    /// dl-runtime, dl-deadline = dl-period; µs → ns) and the line's policy as the default.
    #[test]
    fn rt_and_deadline_attributes() {
        let p = plan(
            r#"{ "tasks": {
              "f": { "policy": "SCHED_FIFO", "priority": 80, "run": 1 },
              "r": { "policy": "SCHED_RR", "run": 1 },
              "d": { "instance": 2, "policy": "SCHED_DEADLINE", "dl-runtime": 2000,
                     "run": 1 },
              "e": { "policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-period": 10000,
                     "dl-deadline": 5000, "run": 1 } } }"#,
        )
        .unwrap();
        let a = |i: usize| p.attrs(i, "x");
        assert_eq!(
            (a(0).policy, a(0).rt_priority, a(0).nice),
            (Some(KPolicy::Fifo), Some(80), None)
        );
        assert_eq!(
            (a(1).policy, a(1).rt_priority),
            (Some(KPolicy::Rr), Some(10))
        );
        assert_eq!(p.tasks[1].prio, 10);
        assert_eq!(a(2).policy, Some(KPolicy::Deadline));
        let dl = |runtime, deadline, period| {
            Some(schedlab_sched::DlAttr {
                runtime,
                deadline,
                period,
                sched_flags: 0,
            })
        };
        assert_eq!(a(2).dl, dl(2_000_000, 2_000_000, 2_000_000));
        assert_eq!(a(3).dl, dl(1_000_000, 5_000_000, 10_000_000));
        assert_eq!(p.initial, vec![0, 1, 2, 2, 3]);
        // the line's policy is the default of a task that names none
        let f = parse_rtapp(
            r#"{ "tasks": { "a": { "run": 1 }, "b": { "priority": 3, "run": 1 } } }"#,
            "t.json",
        )
        .unwrap();
        let (pl, _) = crate::workload::parse_placement("chrt -f 42 rt-app t.json").unwrap();
        let p = compile(&f, &pl, None).unwrap();
        assert_eq!(
            (p.attrs(0, "a").policy, p.attrs(0, "a").rt_priority),
            (Some(KPolicy::Fifo), Some(42))
        );
        assert_eq!(p.attrs(1, "b").rt_priority, Some(3));
        let (pl, _) =
            crate::workload::parse_placement("policy=deadline:1ms/4ms/0 rt-app t.json").unwrap();
        let p = compile(&f, &pl, None).unwrap();
        assert_eq!(p.attrs(0, "a").dl, dl(1_000_000, 4_000_000, 0));
        // a nice value from the file is no RT priority
        let f = parse_rtapp(
            r#"{ "tasks": { "a": { "priority": -5, "run": 1 } } }"#,
            "t.json",
        )
        .unwrap();
        let (pl, _) = crate::workload::parse_placement("chrt -r 5 rt-app t.json").unwrap();
        let e = compile(&f, &pl, None).unwrap_err();
        assert!(
            matches!(&e, PlanError::Invalid(m) if m.contains("priority -5") && m.contains("chrt -r 5")),
            "{e:?}"
        );
    }

    #[test]
    fn taskgroups_are_compiled_and_mid_run_changes_are_refused() {
        // distinct paths in order of first appearance; the task's own group, each phase's
        let p = plan(
            r#"{ "tasks": {
                 "g": { "taskgroup": "/a", "run": 1 },
                 "h": { "phases": { "one": { "taskgroup": "/b", "run": 1 },
                                    "two": { "run": 1 },
                                    "three": { "taskgroup": "/a", "run": 1 } } } } }"#,
        )
        .unwrap();
        assert_eq!(p.taskgroups, vec!["/a", "/b"]);
        assert_eq!(p.tasks[0].taskgroup, Some(0));
        assert_eq!(p.tasks[1].taskgroup, None);
        let ph: Vec<Option<usize>> = p.tasks[1].phases.iter().map(|p| p.taskgroup).collect();
        assert_eq!(ph, vec![Some(1), None, Some(0)]);
        let e = plan(
            r#"{ "tasks": { "p": { "phases": {
                 "one": { "run": 1 }, "two": { "policy": "SCHED_DEADLINE", "dl-runtime": 100,
                                               "dl-period": 1000, "run": 1 } } } } }"#,
        )
        .unwrap_err();
        assert!(
            matches!(&e, PlanError::Unsupported(m) if m.contains("phase \"two\"") && m.contains("SCHED_DEADLINE")),
            "{e:?}"
        );
        // fair <-> RT between phases: a sched_setscheduler at phase start, with rt-app's
        // default priority when the phase names none
        let p = plan(
            r#"{ "tasks": { "p": { "phases": {
                 "one": { "run": 1 },
                 "two": { "policy": "SCHED_FIFO", "run": 1 },
                 "three": { "priority": 30, "run": 1 },
                 "four": { "policy": "SCHED_IDLE", "priority": 3, "run": 1 } } } } }"#,
        )
        .unwrap();
        let ph = &p.tasks[0].phases;
        assert_eq!(ph[0].sched, None);
        assert_eq!(ph[1].sched, Some((KPolicy::Fifo, 0, 10)));
        assert_eq!(
            (ph[2].sched, ph[2].rt_priority, ph[2].nice),
            (None, Some(30), None)
        );
        assert_eq!(ph[3].sched, Some((KPolicy::Idle, 3, 0)));
        let e = plan(
            r#"{ "tasks": { "p": { "phases": {
                 "one": { "cpus": [0], "run": 1 }, "two": { "cpus": [1], "run": 1 } } } } }"#,
        )
        .unwrap_err();
        assert!(
            matches!(&e, PlanError::Unsupported(m) if m.contains("phase \"two\"") && m.contains("sched_setaffinity")),
            "{e:?}"
        );
        // The same cpus in every phase is one affinity, set when the thread is created.
        let p = plan(
            r#"{ "tasks": { "p": { "phases": {
                 "one": { "cpus": [1], "run": 1 }, "two": { "cpus": [1], "run": 1 } } } } }"#,
        )
        .unwrap();
        assert_eq!(p.tasks[0].cpus, Some(CpuMask::single(1)));
    }

    #[test]
    fn placement_applies_unless_the_task_sets_its_own() {
        let f = parse_rtapp(
            r#"{ "tasks": {
                 "own": { "policy": "SCHED_OTHER", "priority": 3, "dl-runtime": 2000,
                          "cpus": [0], "run": 1 },
                 "line": { "run": 1 } } }"#,
            "t.json",
        )
        .unwrap();
        let placement = Placement {
            policy: Some(KPolicy::Batch),
            nice: Some(7),
            slice_ns: Some(5_000_000),
            cpus: Some(CpuMask::single(1)),
            ..Placement::default()
        };
        let p = compile(&f, &placement, None).unwrap();
        let own = &p.tasks[0];
        assert_eq!(
            (own.policy, own.nice, own.slice_ns, own.cpus.clone()),
            (
                Policy::Other,
                Some(3),
                Some(2_000_000),
                Some(CpuMask::single(0))
            )
        );
        let line = &p.tasks[1];
        assert_eq!(
            (line.policy, line.nice, line.slice_ns, line.cpus.clone()),
            (
                Policy::Batch,
                Some(7),
                Some(5_000_000),
                Some(CpuMask::single(1))
            )
        );
    }

    #[test]
    fn calibration_cpu_scales_run_work() {
        let f = parse_rtapp(
            r#"{ "global": { "calibration": "CPU1" }, "tasks": { "t": { "run": 1000 } } }"#,
            "t.json",
        )
        .unwrap();
        let speed = [1024, 512];
        let m = MachineInfo { speed: &speed };
        let p = compile(&f, &Placement::default(), Some(&m)).unwrap();
        // 1000 µs at CPU1, which does half the reference core's work per ns: 500 µs of
        // reference work.
        assert_eq!(p.run_work_ns(1000), 500_000);
        let speed = [1024];
        let m = MachineInfo { speed: &speed };
        let e = compile(&f, &Placement::default(), Some(&m)).unwrap_err();
        assert!(
            matches!(&e, PlanError::Invalid(s) if s.contains("CPU1")),
            "{e:?}"
        );
    }

    #[test]
    fn timer_modes_and_uniqueness() {
        let p = plan(
            r#"{ "tasks": {
              "a": { "loop": 1, "timer": { "ref": "tick", "period": 1000 },
                     "timer1": { "ref": "unique_a", "period": 500, "mode": "absolute" } },
              "b": { "loop": 1, "timer": { "ref": "tick", "period": 1000, "mode": "absolute" } } } }"#,
        )
        .unwrap();
        // "tick" is shared and absolute because b says so; unique_a is a's own.
        assert_eq!(p.timers.len(), 1);
        assert!(!p.timers[0].relative);
        assert_eq!(p.tasks[0].unique_timers, vec![false]);
        assert_eq!(
            p.tasks[0].phases[0].events[1],
            Ev::Timer {
                timer: TimerRef::Unique(0),
                period_us: 500
            }
        );
    }

    #[test]
    fn comm_follows_pthread_setname_np() {
        assert_eq!(comm_for("probe-0"), "probe-0");
        // 16 bytes: too long for TASK_COMM_LEN, the thread keeps the process name.
        assert_eq!(comm_for("abcdefghijklmn-0"), "rt-app");
    }
}
