//! The private header of the simulated kernel (kernel/sched/sched.h): runqueue, entity and
//! task structures, their ids, and the flag bits shared by core and the classes.

use crate::exec::Exec;
use crate::pelt::SchedAvg;
use crate::stats::{CpuStats, TaskStats};
use crate::syscalls::{Program, Spawn};
use crate::Kernel;
use schedlab_engine::define_id;
use schedlab_engine::Rng;
use schedlab_platform::cpumask::CpuMask;
use std::collections::VecDeque;

define_id!(
    /// A task (thread).
    TaskId
);
define_id!(
    /// A scheduling entity: a task's `se` or a task group's per-CPU entity.
    SeId
);
define_id!(
    /// A fair runqueue: a CPU's root `rq->cfs` or a task group's per-CPU `cfs_rq`.
    CfsRqId
);
define_id!(
    /// A task group (cgroup with the cpu controller). Group 0 is the root.
    TgId
);

/// Null link in the intrusive timeline tree.
pub const NIL: u32 = u32::MAX;

// ---- wake flags (kernel/sched/sched.h) -------------------------------------------------
pub const WF_EXEC: u32 = 0x02;
pub const WF_FORK: u32 = 0x04;
pub const WF_TTWU: u32 = 0x08;
pub const WF_SYNC: u32 = 0x10;
pub const WF_MIGRATED: u32 = 0x20;
pub const WF_CURRENT_CPU: u32 = 0x40;
pub const WF_RQ_SELECTED: u32 = 0x80;

/// kernel: sched.h `rq->clock_update_flags` bits (only the request is modelled).
pub const RQCF_REQ_SKIP: u8 = 0x01;

// ---- enqueue / dequeue flags --------------------------------------------------------------
pub const DEQUEUE_SLEEP: u32 = 0x01;
pub const DEQUEUE_SAVE: u32 = 0x02;
pub const DEQUEUE_MOVE: u32 = 0x04;
pub const DEQUEUE_NOCLOCK: u32 = 0x08;
pub const DEQUEUE_SPECIAL: u32 = 0x10;
pub const DEQUEUE_MIGRATING: u32 = 0x100;
pub const DEQUEUE_DELAYED: u32 = 0x200;
/// v6.18+ (eb962f251fbb): the dequeue of a task throttled on its return to user space.
pub const DEQUEUE_THROTTLE: u32 = 0x800;

pub const ENQUEUE_WAKEUP: u32 = 0x01;
pub const ENQUEUE_RESTORE: u32 = 0x02;
pub const ENQUEUE_MOVE: u32 = 0x04;
pub const ENQUEUE_NOCLOCK: u32 = 0x08;
pub const ENQUEUE_HEAD: u32 = 0x10;
pub const ENQUEUE_REPLENISH: u32 = 0x20;
pub const ENQUEUE_MIGRATED: u32 = 0x40;
pub const ENQUEUE_INITIAL: u32 = 0x80;
pub const ENQUEUE_MIGRATING: u32 = 0x100;
pub const ENQUEUE_DELAYED: u32 = 0x200;
pub const ENQUEUE_RQ_SELECTED: u32 = 0x400;

// ---- weights (fair.md §1) ------------------------------------------------------------------
pub const SCHED_FIXEDPOINT_SHIFT: u32 = 10;
pub const NICE_0_LOAD_SHIFT: u32 = 20;
pub const NICE_0_LOAD: u64 = 1 << NICE_0_LOAD_SHIFT;
pub const WEIGHT_IDLEPRIO: u64 = 3;
/// kernel: sched.h MIN_SHARES / MAX_SHARES — the range of a group's (unscaled) shares.
pub const MIN_SHARES: u64 = 2;
pub const MAX_SHARES: u64 = 1 << 18;
pub const WMULT_IDLEPRIO: u32 = 1_431_655_765;
pub const WMULT_CONST: u64 = 0xFFFF_FFFF;
pub const WMULT_SHIFT: u32 = 32;

/// `sched_prio_to_weight[]`, index `nice + 20`. Used verbatim; checked by a test.
pub const SCHED_PRIO_TO_WEIGHT: [u32; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// `sched_prio_to_wmult[]` ≈ 2^32 / weight, index `nice + 20`. Used verbatim (four entries
/// are one below round-to-nearest, fair.md §1.2); checked by a test.
pub const SCHED_PRIO_TO_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, 147320, 184698, 229616, 287308, 360437, 449829, 563644,
    704093, 875809, 1099582, 1376151, 1717300, 2157191, 2708050, 3363326, 4194304, 5237765,
    6557202, 8165337, 10153587, 12820798, 15790321, 19976592, 24970740, 31350126, 39045157,
    49367440, 61356676, 76695844, 95443717, 119304647, 148102320, 186737708, 238609294, 286331153,
];

#[inline]
pub const fn scale_load(w: u64) -> u64 {
    w << SCHED_FIXEDPOINT_SHIFT
}

/// `scale_load_down`: 0 stays 0, anything else at least 2 (fair.md §1.1).
#[inline]
pub fn scale_load_down(w: u64) -> u64 {
    if w == 0 {
        0
    } else {
        (w >> SCHED_FIXEDPOINT_SHIFT).max(2)
    }
}

/// `struct load_weight`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadWeight {
    pub weight: u64,
    /// Cached inverse for `__calc_delta`; 0 = recompute lazily.
    pub inv_weight: u32,
}

/// Scheduling policy (`p->policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Policy {
    Normal,
    Batch,
    Idle,
    Fifo,
    Rr,
    Deadline,
}

impl Policy {
    pub fn is_fair(self) -> bool {
        matches!(self, Policy::Normal | Policy::Batch | Policy::Idle)
    }
    pub fn name(self) -> &'static str {
        match self {
            Policy::Normal => "SCHED_OTHER",
            Policy::Batch => "SCHED_BATCH",
            Policy::Idle => "SCHED_IDLE",
            Policy::Fifo => "SCHED_FIFO",
            Policy::Rr => "SCHED_RR",
            Policy::Deadline => "SCHED_DEADLINE",
        }
    }
    /// Number as in `/proc/PID/sched` "policy".
    pub fn number(self) -> u32 {
        match self {
            Policy::Normal => 0,
            Policy::Fifo => 1,
            Policy::Rr => 2,
            Policy::Batch => 3,
            Policy::Idle => 5,
            Policy::Deadline => 6,
        }
    }
}

/// The class a task belongs to (`p->sched_class`), in kernel order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SchedClass {
    Stop,
    Dl,
    Rt,
    Fair,
    Idle,
}

/// `p->__state` as far as the scheduler cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    Running,
    /// TASK_INTERRUPTIBLE ("S")
    Interruptible,
    /// TASK_UNINTERRUPTIBLE ("D")
    Uninterruptible,
    /// TASK_DEAD ("X")
    Dead,
    /// Created, not yet woken by wake_up_new_task.
    New,
}

impl TaskState {
    /// The `prev_state` letter of sched_switch.
    pub fn letter(self) -> &'static str {
        match self {
            TaskState::Running | TaskState::New => "R",
            TaskState::Interruptible => "S",
            TaskState::Uninterruptible => "D",
            TaskState::Dead => "X",
        }
    }
}

/// `p->on_rq` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnRq {
    No,
    Queued,
    Migrating,
}

/// `struct sched_entity` (fair.md §2.1).
#[derive(Clone, Debug)]
pub struct SchedEntity {
    pub load: LoadWeight,
    pub vruntime: u64,
    pub deadline: u64,
    pub vlag: i64,
    /// Slice protection. Before 74eec63661d4 it holds the deadline stashed at pick (protected
    /// while it equals `deadline`); after, the protected vruntime (protected while
    /// `vruntime < vprot`). The kernel shared this storage with `vlag` until 80390ead2080; a
    /// separate field is equivalent because `vlag` is never read while the entity is queued.
    pub vprot: u64,
    pub slice: u64,
    pub custom_slice: bool,
    pub rel_deadline: bool,
    pub on_rq: bool,
    pub sched_delayed: bool,
    pub exec_start: u64,
    pub sum_exec_runtime: u64,
    pub prev_sum_exec_runtime: u64,
    pub nr_migrations: u64,
    /// The cfs_rq this entity is queued on (`cfs_rq_of(se)`).
    pub cfs_rq: CfsRqId,
    /// For group entities: the group's cfs_rq on this CPU (`group_cfs_rq(se)`).
    pub my_q: Option<CfsRqId>,
    pub parent: Option<SeId>,
    pub depth: u32,
    /// For group entities: the runnable count of `my_q` as of the last `se_update_runnable()`
    /// (the group entity's PELT runnable input, `se_runnable()`).
    pub runnable_weight: u32,
    /// For task entities: the task.
    pub task: Option<TaskId>,
    pub avg: SchedAvg,
    // ---- intrusive timeline tree (tree.rs) ----
    pub rb_left: u32,
    pub rb_right: u32,
    pub rb_parent: u32,
    pub rb_black: bool,
    pub min_vruntime: u64,
    pub min_deadline: u64,
    pub min_slice: u64,
    pub max_slice: u64,
    /// v6.5 (fair_cfs.rs): `vruntime` is relative to the cfs_rq's `min_vruntime` (normalised
    /// for a move, cfs.md §3.6), not absolute. Kept by the CFS class for invariant C-4; the
    /// kernel has no such field and decides from its flags and `vruntime_normalized()`.
    pub cfs_rel: bool,
}

impl SchedEntity {
    pub fn new(cfs_rq: CfsRqId) -> SchedEntity {
        SchedEntity {
            load: LoadWeight {
                weight: NICE_0_LOAD,
                inv_weight: SCHED_PRIO_TO_WMULT[20],
            },
            vruntime: 0,
            deadline: 0,
            vlag: 0,
            vprot: 0,
            slice: 0,
            custom_slice: false,
            rel_deadline: false,
            on_rq: false,
            sched_delayed: false,
            exec_start: 0,
            sum_exec_runtime: 0,
            prev_sum_exec_runtime: 0,
            nr_migrations: 0,
            cfs_rq,
            my_q: None,
            parent: None,
            depth: 0,
            runnable_weight: 0,
            task: None,
            avg: SchedAvg::default(),
            rb_left: NIL,
            rb_right: NIL,
            rb_parent: NIL,
            rb_black: false,
            min_vruntime: 0,
            min_deadline: 0,
            min_slice: 0,
            max_slice: 0,
            cfs_rel: false,
        }
    }
}

/// `struct cfs_rq` (fair.md §2, §7.6).
#[derive(Clone, Debug)]
pub struct CfsRq {
    pub cpu: usize,
    pub tg: TgId,
    /// Sum of the weights of queued entities (tree + curr, delayed included).
    pub load: LoadWeight,
    /// Entities queued here, curr and delayed included (`nr_running` before v6.14).
    pub nr_queued: u32,
    /// Tasks queued in the hierarchy, delayed included (`h_nr_running` before v6.14).
    pub h_nr_queued: u32,
    /// Tasks in the hierarchy that want to run (excludes delayed); kept in every version, read
    /// only where the version does (`h_nr_running - h_nr_delayed` in v6.13).
    pub h_nr_runnable: u32,
    /// SCHED_IDLE tasks (or tasks below an idle group) in the hierarchy, delayed included.
    pub h_nr_idle: u32,
    /// Σ key·aw over the tree (`avg_vruntime` before v7.0). i128 so that no product can wrap.
    pub sum_w_vruntime: i128,
    /// Σ aw over the tree (`avg_load` before v7.0).
    pub sum_weight: i128,
    /// The reference point `z` (min_vruntime up to v6.18, zero_vruntime from v6.19).
    pub zero_vruntime: u64,
    pub curr: Option<SeId>,
    pub next: Option<SeId>,
    /// v6.5 CFS only: the last and skip buddies (cfs.md §6.4).
    pub last: Option<SeId>,
    pub skip: Option<SeId>,
    /// v6.5 CFS only: entities at this level that are idle (`idle_nr_running`, cfs.md §3.2).
    pub idle_nr_running: u32,
    pub root: u32,
    /// The group entity representing this cfs_rq in its parent (None for a CPU's root).
    pub my_se: Option<SeId>,
    /// `cfs_rq->idle` (cpu.idle = 1).
    pub idle: bool,
    pub avg: SchedAvg,
    pub tg_load_avg_contrib: u64,
    pub last_update_tg_load_avg: u64,
    /// util_est sum of the enqueued tasks.
    pub util_est: u32,
    /// PELT "removed" accumulators (wakeup migrations away from this cfs_rq).
    pub removed: crate::pelt::RemovedLoad,
    /// `cfs_rq->propagate`: an attach, detach or removal changed this group cfs_rq's sums;
    /// its group entity and the parent follow at the entity's next `update_load_avg()`.
    pub propagate: bool,
    /// `cfs_rq->prop_runnable_sum`: the pending signed change of load_sum (unweighted).
    pub prop_runnable_sum: i64,
    /// `h_load` cache for task_h_load and its jiffy stamp.
    pub h_load: u64,
    pub last_h_load_update: u64,
    // ---- CFS bandwidth (fair_bandwidth.rs) ----
    /// The group has a quota (`cpu.max` not "max"): runtime is charged here.
    pub runtime_enabled: bool,
    /// Local runtime left from the slices taken from the group's pool (ns; may go negative).
    pub runtime_remaining: i64,
    /// This cfs_rq is throttled (its group entity is out of the parent).
    pub throttled: bool,
    /// Throttled cfs_rqs at or above this one on this CPU (`throttled_hierarchy`).
    pub throttle_count: u32,
    /// `rq_clock` when the throttled time started (0 = not counting).
    pub throttled_clock: u64,
    /// Tasks throttled at this level, off the queue (v6.18+ `throttled_limbo_list`).
    pub throttled_limbo_list: Vec<TaskId>,
}

impl CfsRq {
    pub fn new(cpu: usize, tg: TgId) -> CfsRq {
        CfsRq {
            cpu,
            tg,
            load: LoadWeight::default(),
            nr_queued: 0,
            h_nr_queued: 0,
            h_nr_runnable: 0,
            h_nr_idle: 0,
            sum_w_vruntime: 0,
            sum_weight: 0,
            zero_vruntime: 0,
            curr: None,
            next: None,
            last: None,
            skip: None,
            idle_nr_running: 0,
            root: NIL,
            my_se: None,
            idle: false,
            avg: SchedAvg::default(),
            tg_load_avg_contrib: 0,
            last_update_tg_load_avg: 0,
            util_est: 0,
            removed: Default::default(),
            propagate: false,
            prop_runnable_sum: 0,
            h_load: 0,
            last_h_load_update: 0,
            runtime_enabled: false,
            runtime_remaining: 0,
            throttled: false,
            throttle_count: 0,
            throttled_clock: 0,
            throttled_limbo_list: Vec::new(),
        }
    }
}

/// `struct task_group`.
#[derive(Clone, Debug)]
pub struct TaskGroup {
    pub path: String,
    pub parent: Option<TgId>,
    /// `tg->shares` at full resolution (cpu.weight 100 -> 1 048 576).
    pub shares: u64,
    pub idle: bool,
    /// Per CPU: the group's cfs_rq and its entity in the parent (None for the root group).
    pub cfs_rq: Vec<CfsRqId>,
    pub se: Vec<Option<SeId>>,
    /// `tg->load_avg`.
    pub load_avg: i64,
    /// `tg->cfs_bandwidth` (cpu.max).
    pub cfs_bandwidth: crate::fair_bandwidth::CfsBandwidth,
    /// Run time of this group's own tasks (ns), for `cpu.stat` usage_usec.
    pub usage_ns: u64,
}

/// The kind of resched request pending on a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Resched {
    None,
    /// TIF_NEED_RESCHED_LAZY
    Lazy,
    /// TIF_NEED_RESCHED
    Full,
}

/// `struct task_struct` (the parts the model needs) plus the program it runs.
pub struct Task {
    pub pid: i32,
    pub tgid: i32,
    pub comm: String,
    pub policy: Policy,
    pub nice: i32,
    pub rt_priority: u32,
    pub class: SchedClass,
    /// `p->dl`: the deadline entity (SCHED_DEADLINE parameters and CBS state).
    pub dl: crate::deadline::SchedDlEntity,
    /// `p->rt`: the RT entity (SCHED_RR slice).
    pub rt: crate::rt::SchedRtEntity,
    /// PI boost (`rt_mutex_setprio()`): the effective priority of the top waiter of the PI
    /// futexes this task owns, if any; `p->prio` is the better of it and `normal_prio`.
    pub pi_prio: Option<i32>,
    /// The PI futex this task sleeps on (`p->pi_blocked_on`).
    pub pi_blocked_on: Option<crate::ipc::FutexId>,
    /// The PI futexes this task owns.
    pub pi_held: Vec<crate::ipc::FutexId>,
    pub se: SeId,
    pub tg: TgId,
    pub cpu: usize,
    pub wake_cpu: usize,
    pub recent_used_cpu: usize,
    pub on_rq: OnRq,
    pub on_cpu: bool,
    pub state: TaskState,
    pub cpus_allowed: CpuMask,
    pub nr_cpus_allowed: u32,
    pub mm: u32,
    pub parent: Option<TaskId>,
    pub children: u32,
    pub zombies: VecDeque<TaskId>,
    pub waiting_child: bool,
    /// Asleep in `Op::Pselect`: a child process's exit (SIGCHLD) wakes it.
    pub sigchld_wait: bool,
    pub wakee_flips: u32,
    pub wakee_flip_decay_ts: u64,
    pub last_wakee: Option<TaskId>,
    pub sched_reset_on_fork: bool,
    pub timer_slack_ns: u64,
    pub is_idle_task: bool,
    /// `PF_KTHREAD`: a kernel thread (a per-CPU kthread when also pinned to one CPU, which
    /// `select_idle_sibling` lets the wakee stack behind, smp.md §2.5 rule 3).
    pub kthread: bool,
    /// `p->throttled` (v6.18+ task-based CFS throttling): on its cfs_rq's limbo list, off
    /// the queue while `on_rq` stays queued.
    pub throttled: bool,
    /// `p->sched_throttle_work` is queued: dequeue to the limbo list on the return to user.
    pub throttle_work: bool,
    pub rng: Rng,
    pub(crate) prog: Option<Box<dyn Program>>,
    pub(crate) exec: Exec,
    pub stats: TaskStats,
    /// Spawn requests parked while the parent pays the fork cost.
    pub(crate) spawn_slots: Vec<Option<Box<Spawn>>>,
    /// Last CPU the task ran on (for the migration cache penalty).
    pub last_ran_cpu: Option<usize>,
    /// Set when a SCHED_IDLE placement stacked the task on a SCHED_IDLE-only CPU: the time,
    /// until it next runs (`KernelStats::sched_idle_stacked_wait_ns`).
    pub stacked_at: Option<u64>,
    /// Its wakeups are recorded in `Kernel::wakeup_log` (comm matched `observe_comm`).
    pub observe: bool,
    /// `p->dl_server`: the CPU whose fair_server this (fair) task was picked through for its
    /// current run (rt-dl.md §1.3); its run time is charged to that server (§4.5 E8).
    pub dl_server: Option<usize>,
}

impl Task {
    /// kernel: sched.h realtime_task_policy() (`task_is_realtime()` before v6.10): SCHED_FIFO,
    /// SCHED_RR or SCHED_DEADLINE.
    pub fn policy_is_realtime(&self) -> bool {
        matches!(self.policy, Policy::Fifo | Policy::Rr | Policy::Deadline)
    }

    /// `p->prio` (rt-dl.md §1.2): `normal_prio`, or better while PI-boosted (§2.11).
    pub fn prio(&self) -> i32 {
        let normal = self.normal_prio();
        match self.pi_prio {
            Some(b) if b < normal => b,
            _ => normal,
        }
    }

    /// `p->normal_prio`: the priority of the policy.
    pub fn normal_prio(&self) -> i32 {
        Task::prio_of(self.policy, self.nice, self.rt_priority)
    }

    /// `normal_prio()` of a policy with its nice value or RT priority.
    pub fn prio_of(policy: Policy, nice: i32, rt_priority: u32) -> i32 {
        match policy {
            Policy::Deadline => -1,
            Policy::Fifo | Policy::Rr => 99 - rt_priority as i32,
            _ => 120 + nice,
        }
    }
}

/// `struct rq`.
pub struct Rq {
    pub cpu: usize,
    pub curr: TaskId,
    pub idle: TaskId,
    pub cfs: CfsRqId,
    /// The RT class's runqueue (rt.rs).
    pub rt: crate::rt::RtRq,
    /// The deadline class's runqueue (deadline.rs).
    pub dl: crate::deadline::DlRq,
    /// `rq->fair_server`: the per-CPU dl_server that runs fair tasks (rt-dl.md §4).
    pub fair_server: crate::deadline::SchedDlEntity,
    /// `rq->dl_server`: set by the DL pick when the next task came through the fair_server.
    pub dl_server: bool,
    /// Inside `__pick_next_task()` (newidle balancing may enqueue here). The kernel clears
    /// prev's TIF_NEED_RESCHED after the pick, so a reschedule raised during it is dropped;
    /// the model clears the flag before the pick, so code that raises one during the pick
    /// checks this instead (deadline.rs dl_server_start).
    pub in_pick: bool,
    /// Counters of this CPU's fair_server (see [`crate::deadline::DlServerStats`]).
    pub dl_server_stats: crate::deadline::DlServerStats,
    pub nr_running: u32,
    pub resched: Resched,
    pub ttwu_pending: bool,
    pub wake_list: Vec<(TaskId, u32)>,
    pub ipi_pending: bool,
    /// Generation of the armed segment end; bumped whenever the running segment changes.
    pub gen: u64,
    /// Wall time at which the top segment started (or resumed) running.
    pub seg_start: u64,
    pub tick_armed: bool,
    /// Generation of the armed tick (a tick stopped at idle entry is ignored when it fires).
    pub tick_gen: u32,
    /// `rq->hrtick_timer` is armed (`hrtimer_active()`; HRTICK, CFS class only).
    pub hrtick_armed: bool,
    /// Generation of the hrtick timer (a cancelled or re-armed one is ignored when it fires).
    pub hrtick_gen: u32,
    pub idle_since: Option<u64>,
    pub avg_idle: u64,
    pub idle_stamp: u64,
    pub max_idle_balance_cost: u64,
    pub next_balance: u64,
    pub speed: u64,
    pub capacity_orig: u64,
    pub stats: CpuStats,
    /// hrtimers armed on this CPU whose soft expiry (range start) has passed or will pass,
    /// expired early by any other timer interrupt (timer slack, workloads.md §1.6).
    pub range_timers: Vec<u32>,
    /// Every sleeper hrtimer armed on this CPU (the governor's next timer event).
    pub hrtimers: Vec<u32>,
    /// cpuidle: the idle state the idle loop entered (index into the platform's states), or
    /// None while the CPU runs or when the platform has a single state.
    pub idle_state: Option<u8>,
    /// cpuidle: when the CPU last entered idle, and its last `IDLE_HIST` idle durations (ring).
    pub idle_enter: u64,
    pub idle_hist: [u64; crate::idle::IDLE_HIST],
    pub idle_hist_n: u32,
    /// `rq->clock_task`: the time the fair class sees, refreshed only by `update_rq_clock()`
    /// at the points where the kernel calls it (taking the runqueue lock, `__schedule`, the
    /// tick...). Work done between two refreshes under one lock hold is invisible to
    /// `update_curr()`: in `ttwu_do_activate()` the enqueue and the preemption check read the
    /// same clock, so the waker's own enqueue work never counts against its eligibility.
    pub clock_task: u64,
    /// `rq->clock_update_flags`, the one bit the simulation needs: `RQCF_REQ_SKIP`, set by
    /// `rq_clock_skip_update()` when a wakeup (or `sched_yield()`) has just updated the clock
    /// and asked for a reschedule. The next `__schedule()` promotes it to `RQCF_ACT_SKIP` and
    /// does not update the clock, so the time from the request to the switch is charged to
    /// the *next* task (its `exec_start` is the stale clock), not to the one switched out.
    pub clock_update_flags: u8,
    /// Work queued for this CPU's stopper by `sched_exec()`: `migration_cpu_stop` moving the
    /// task to the CPU exec balancing chose. It runs at the next `__schedule()` here, before
    /// any class picks (the stop class).
    pub stop_migration: Option<(TaskId, usize)>,
    /// PREEMPT_RT: this CPU's `ktimers/N` thread (softirq.c `ktimerd`, SCHED_FIFO 1), which
    /// expires the soft hrtimers, and the sleepers whose soft hrtimers it has yet to expire.
    pub ktimers: Option<TaskId>,
    pub ktimers_pending: Vec<TaskId>,
    /// `rq->clock_pelt` and `lost_idle_time` (pelt.h): the PELT clock runs at capacity ×
    /// frequency while a task runs and is synced to the task clock while the CPU idles.
    /// `pelt_stamp` is the wall time up to which `clock_pelt` has been advanced; readers
    /// extrapolate from it (`rq_clock_pelt()` in fair_pelt.rs).
    pub pelt_clock: crate::pelt::PeltClock,
    pub pelt_stamp: u64,
}

impl Kernel {
    /// kernel: sched.h set_task_rq() — a task's fair entity sits on its group's cfs_rq of
    /// its CPU, below that group's entity there.
    pub(crate) fn set_task_rq(&mut self, t: TaskId) {
        let (tg, cpu, se) = {
            let task = &self.tasks[t.index()];
            (task.tg, task.cpu, task.se)
        };
        let parent = self.tgs[tg.index()].se[cpu];
        let depth = parent.map_or(0, |p| self.se[p.index()].depth + 1);
        let e = &mut self.se[se.index()];
        e.cfs_rq = self.tgs[tg.index()].cfs_rq[cpu];
        e.parent = parent;
        e.depth = depth;
    }

    /// `need_resched()`: the hard flag is set on this CPU's current task.
    pub(crate) fn need_resched(&self, cpu: usize) -> bool {
        self.rqs[cpu].resched == Resched::Full
    }

    /// `SCHED_WARN_ON`: panics in strict mode (tests), counts otherwise; with
    /// `stop_on_warning` the run loop ends after the current event.
    pub(crate) fn sched_warn_on(&mut self, cond: bool, msg: &str) {
        if !cond {
            return;
        }
        self.warnings += 1;
        let full = format!(
            "sched_warn_on at t={} ns (event {}): {}",
            self.now, self.stats.events, msg
        );
        if self.strict {
            panic!("{}\n{}", full, self.state_dump());
        }
        if self.first_warning.is_none() {
            self.first_warning = Some(full);
        }
    }

    /// kernel: sched.h rq_clock_task()
    #[inline]
    pub(crate) fn rq_clock_task(&self, cpu: usize) -> u64 {
        self.rqs[cpu].clock_task
    }

    /// kernel: sched.h rq_clock_skip_update() — ask the next `__schedule()` on `cpu` not to
    /// update the clock ("save a useless back to back clock update").
    pub(crate) fn rq_clock_skip_update(&mut self, cpu: usize) {
        self.rqs[cpu].clock_update_flags |= RQCF_REQ_SKIP;
    }

    /// Integrates `nr_running` over time before it changes.
    pub(crate) fn account_nr_running(&mut self, cpu: usize) {
        let rq = &mut self.rqs[cpu];
        let dt = self.now - rq.stats.runnable_since;
        rq.stats.runnable_integral += dt as u128 * rq.nr_running as u128;
        rq.stats.runnable_since = self.now;
    }

    /// kernel: sched.h add_nr_running()
    pub(crate) fn add_nr_running(&mut self, cpu: usize, n: u32) {
        self.account_nr_running(cpu);
        let prev_nr = self.rqs[cpu].nr_running;
        self.rqs[cpu].nr_running += n;
        self.update_idle_masks(cpu);
        // A runqueue reaching two tasks marks its root domain overloaded, which opens
        // newidle balancing (`set_rd_overloaded()`, gate 1 of smp.md §4.5).
        if prev_nr < 2 && self.rqs[cpu].nr_running >= 2 {
            if let Some(&rd) = self.lb.rd_of.get(cpu) {
                self.lb.rd_overloaded[rd] = true;
            }
        }
    }

    /// kernel: sched.h sub_nr_running()
    pub(crate) fn sub_nr_running(&mut self, cpu: usize, n: u32) {
        self.account_nr_running(cpu);
        self.rqs[cpu].nr_running -= n;
        self.update_idle_masks(cpu);
    }

    pub(crate) fn cpu_is_idle(&self, cpu: usize) -> bool {
        let c = self.rqs[cpu].curr;
        self.tasks[c.index()].is_idle_task
    }

    /// kernel: sched.h sched_idle_rq() — only SCHED_IDLE work queued (delayed included).
    pub(crate) fn sched_idle_rq(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        rq.nr_running > 0 && rq.nr_running == self.cfs[rq.cfs.index()].h_nr_idle
    }

    /// `idle_cpu()`: the idle task runs, nothing is queued and no wake-list activation is
    /// pending.
    /// kernel: core.c idle_cpu() @ v6.12
    pub(crate) fn idle_cpu(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        rq.curr == rq.idle && rq.nr_running == 0 && !rq.ttwu_pending
    }

    /// `available_idle_cpu()`: `idle_cpu()` and the vCPU is not preempted (never, here).
    /// kernel: core.c available_idle_cpu() @ v6.12
    pub(crate) fn available_idle_cpu(&self, cpu: usize) -> bool {
        self.idle_cpu(cpu)
    }

    /// Brings `cpu`'s bits of [`SelectState::idle_cpus`] and
    /// [`SelectState::sched_idle_cpus`] up to date. Called wherever `rq->curr`,
    /// `rq->nr_running` (the root `h_nr_idle` changes with it) or `rq->ttwu_pending` changes.
    pub(crate) fn update_idle_masks(&mut self, cpu: usize) {
        let idle = self.available_idle_cpu(cpu);
        if self.sel.idle_cpus.contains(cpu) != idle {
            if idle {
                self.sel.idle_cpus.set(cpu);
            } else {
                self.sel.idle_cpus.clear(cpu);
            }
        }
        let sched_idle = self.sched_idle_rq(cpu);
        if self.sel.sched_idle_cpus.contains(cpu) != sched_idle {
            if sched_idle {
                self.sel.sched_idle_cpus.set(cpu);
            } else {
                self.sel.sched_idle_cpus.clear(cpu);
            }
        }
    }

    /// Whether stopper work is queued on `cpu` (the stop task would be runnable, and
    /// `pick_task_stop()` would return it; see stop_task.rs).
    pub(crate) fn stop_work_pending(&self, cpu: usize) -> bool {
        self.active_balance_pending(cpu) || self.rqs[cpu].stop_migration.is_some()
    }

    /// Whether stopper work (an active balance) is queued on `cpu`.
    pub(crate) fn active_balance_pending(&self, cpu: usize) -> bool {
        matches!(self.lb.active_balance.get(cpu), Some(Some(_)))
    }
}
