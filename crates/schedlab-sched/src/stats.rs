//! Statistics the kernel exports: per task (as `/proc/PID/sched` and schedstat), per CPU and
//! for the whole run. Reports read these; they never reach into scheduler state.

use crate::fair::FairOp;

/// Per-task counters (`/proc/PID/sched`, `/proc/PID/schedstat`, getrusage).
#[derive(Clone, Debug, Default)]
pub struct TaskStats {
    pub nr_switches: u64,
    pub nr_voluntary_switches: u64,
    pub nr_involuntary_switches: u64,
    /// Time runnable but waiting for a CPU (schedstat run_delay).
    pub run_delay_ns: u64,
    /// Times scheduled in (schedstat pcount).
    pub pcount: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub nr_wakeups: u64,
    pub nr_wakeups_sync: u64,
    pub nr_wakeups_migrate: u64,
    /// When the task last became runnable-but-waiting (None while running or sleeping).
    pub last_queued: Option<u64>,
}

/// kernel: sched/cputime.c cputime_adjust() — what /proc/PID/stat and getrusage() report:
/// the user/system split of the executed time scaled so that the two add up to
/// `sum_exec_runtime` (`rtime`). They differ because `rq_clock_skip_update()` charges the
/// time between a preempting wakeup and the switch to the next task's runtime.
pub fn cputime_adjust(user_ns: u64, sys_ns: u64, rtime: u64) -> (u64, u64) {
    if sys_ns == 0 {
        return (rtime, 0);
    }
    if user_ns == 0 {
        return (0, rtime);
    }
    let stime = (sys_ns as u128 * rtime as u128 / (sys_ns as u128 + user_ns as u128)) as u64;
    (rtime - stime, stime)
}

/// Per-CPU counters.
#[derive(Clone, Debug, Default)]
pub struct CpuStats {
    pub idle_ns: u64,
    /// ∫ nr_running dt (ns·tasks): the time-average of runnable tasks is this / time.
    pub runnable_integral: u128,
    /// When `nr_running` last changed.
    pub runnable_since: u64,
    pub nr_switches: u64,
    /// Tasks moved onto this CPU by `set_task_cpu` (each is one `sched_migrate_task` with
    /// `dest_cpu` = this CPU).
    pub migrations_in: u64,
    /// Tasks moved off this CPU by `set_task_cpu` (`orig_cpu` = this CPU).
    pub migrations_out: u64,
}

/// Kinds of placement in [`KernelStats::sched_idle_placed`].
pub const PLACE_WAKE: usize = 0;
pub const PLACE_FORK: usize = 1;
pub const PLACE_EXEC: usize = 2;

/// Whole-run counters.
#[derive(Clone, Debug, Default)]
pub struct KernelStats {
    pub events: u64,
    /// "sched: DL replenish lagged too much" (deadline.c replenish_dl_entity()).
    pub dl_replenish_lagged: u64,
    pub nr_switches: u64,
    pub repicks: u64,
    pub migrations: u64,
    pub ticks: u64,
    pub timer_irqs: u64,
    pub ipis: u64,
    pub ipi_avoided: u64,
    pub ttwu_local: u64,
    pub ttwu_remote: u64,
    /// Wakeups that requeued a delayed task in place (ttwu_runnable with sched_delayed).
    pub ttwu_delayed_requeue: u64,
    /// ... of which on a busy CPU while another CPU of the LLC was idle (smp.md §3.5).
    pub ttwu_delayed_requeue_busy_while_idle: u64,
    /// Placements of SCHED_IDLE tasks by `select_task_rq()`, per kind (wake-up, fork, exec:
    /// [`PLACE_WAKE`], [`PLACE_FORK`], [`PLACE_EXEC`]), and how many of them chose a CPU that
    /// was running only SCHED_IDLE tasks (`sched_idle_rq()`: stacked on busy SCHED_IDLE work
    /// rather than given an idle CPU; seed 003). An exec that stays on its CPU is not a
    /// placement here.
    pub sched_idle_placed: [u64; 3],
    pub sched_idle_stacked: [u64; 3],
    /// Run-queue wait of the stacked placements: from the placement to the task's next switch
    /// in (wherever it then runs).
    pub sched_idle_stacked_wait_ns: u64,
    pub fair_ops: [u64; FairOp::COUNT],
    /// Tasks moved by the load balancer (periodic, newidle, nohz and active balance).
    pub lb_migrations: u64,
    /// Tasks pulled by newidle balancing.
    pub newidle_pulls: u64,
    /// Tasks moved by active balance (the stopper), included in `lb_migrations`.
    pub lb_active_migrations: u64,
    /// Tasks moved by `sched_exec()`'s stopper (exec balancing).
    pub exec_migrations: u64,
    /// Cache-hot tasks migrated after too many failed passes (schedstat nr_forced_migrations).
    pub lb_forced_migrations: u64,
    /// Newidle balances that passed the first gate (rd overloaded, avg_idle vs cost).
    pub newidle_balances: u64,
    /// NOHZ idle-balance kicks (IPIs to an idle CPU).
    pub nohz_kicks: u64,
    /// Per-path totals of the scheduler's own costs (the run summary's `path` lines).
    pub paths: PathTotals,
}

/// What the scheduler's own paths cost over a run, summed over CPUs: the CPU time charged to
/// tasks (and interrupted tasks) for each path, and how often it ran. Counters only: nothing
/// here feeds back into the simulation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathTotals {
    /// Wake-ups whose idle-CPU scan (`select_idle_cpu` / `_core` / `_smt` / `_capacity`)
    /// tested at least one CPU, counted where the waker is charged for it (a task's wake-up or
    /// a timer interrupt on a busy CPU).
    pub idle_scans: u64,
    /// CPUs those scans tested (one per `available_idle_cpu()` / `sched_idle_cpu()` probe of a
    /// CPU).
    pub idle_scan_cpus: u64,
    /// CPU time charged for them on the wakers' CPUs (`c_select_idle_per_cpu` per CPU tested).
    pub idle_scan_ns: u64,
    /// `sched_balance_rq()` passes run by newidle balancing (levels not skipped by the gates or
    /// the NI_RANDOM dice).
    pub newidle_passes: u64,
    /// The modelled (`sched_clock`-measured) cost of those passes, charged or not.
    pub newidle_cost_ns: u64,
    /// Newidle balances whose cost was charged (a pass that pulled a task delays it; one that
    /// pulled nothing leaves the CPU idle and is not charged).
    pub newidle_charged: u64,
    /// CPU time charged for them.
    pub newidle_charged_ns: u64,
    /// Periodic balance softirqs charged to the interrupted task of a busy CPU.
    pub periodic_lb_charged: u64,
    /// CPU time charged for them.
    pub periodic_lb_ns: u64,
    /// Remote wake-ups whose waker paid `c_ipi_send`.
    pub ipi_sends: u64,
    /// CPU time charged for them.
    pub ipi_send_ns: u64,
    /// Wake-ups of an idle CPU out of a non-polling idle state (IPI or timer interrupt).
    pub idle_exits: u64,
    /// Their exit latencies: time before the CPU runs, not CPU time charged to a task.
    pub idle_exit_ns: u64,
}

#[cfg(test)]
mod cputime_tests {
    use super::cputime_adjust;

    #[test]
    fn cputime_adjust_scales_the_split_to_the_runtime() {
        // 300 ns user + 700 ns system executed, 1 200 ns charged: stime = 700 × 1200 / 1000
        // = 840, utime = 1200 − 840 = 360.
        assert_eq!(cputime_adjust(300, 700, 1_200), (360, 840));
        // one mode only: all of rtime goes to it
        assert_eq!(cputime_adjust(0, 500, 450), (0, 450));
        assert_eq!(cputime_adjust(500, 0, 450), (450, 0));
    }
}

/// Why a woken task did not preempt the task running on its CPU, as far as the wakeup
/// preemption hook could tell (the reason is read back from the state after the hook ran).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeupVerdict {
    /// The hook asked for a reschedule (or the CPU was idle): the wakee runs next.
    Preempted,
    /// A reschedule was already pending on the CPU.
    ReschedPending,
    /// The running task is in a higher scheduling class (stop, deadline, RT).
    HigherClass,
    /// The wakee (or its entity at the matched level) is SCHED_IDLE / an idle group, or a
    /// SCHED_BATCH / SCHED_IDLE task (never preempts).
    IdlePolicy,
    /// The short-slice or normal probe returned the next buddy (`cfs_rq->next`); `self_buddy`
    /// when the buddy is the running entity at that level itself (fair.md §5.6).
    Buddy { self_buddy: bool },
    /// The wakee's entity at the matched level is not eligible (negative lag).
    NotEligible,
    /// The running entity is inside its protected slice (RUN_TO_PARITY) and the wakee has no
    /// shorter slice to cancel it with.
    Protected,
    /// Another entity has an earlier eligible deadline (the running one or a third).
    EarlierDeadline,
    /// v6.5 CFS: the wakee is not left of the running entity by more than its wakeup
    /// granularity (`wakeup_preempt_entity() < 1`).
    WakeupGranularity,
    /// A forked child or a requeued delayed task (no preemption check by rule).
    ForkOrDelayed,
}

impl WakeupVerdict {
    pub fn name(self) -> &'static str {
        match self {
            WakeupVerdict::Preempted => "preempted",
            WakeupVerdict::ReschedPending => "resched_pending",
            WakeupVerdict::HigherClass => "higher_class",
            WakeupVerdict::IdlePolicy => "idle_policy",
            WakeupVerdict::Buddy { self_buddy: true } => "self_buddy",
            WakeupVerdict::Buddy { self_buddy: false } => "buddy",
            WakeupVerdict::NotEligible => "not_eligible",
            WakeupVerdict::Protected => "protected_slice",
            WakeupVerdict::EarlierDeadline => "earlier_deadline",
            WakeupVerdict::WakeupGranularity => "within_wakeup_gran",
            WakeupVerdict::ForkOrDelayed => "fork_or_delayed",
        }
    }

    /// A sentence for reports.
    pub fn explain(self) -> &'static str {
        match self {
            WakeupVerdict::Preempted => "the wakeup preempted (or the CPU was idle)",
            WakeupVerdict::ReschedPending => "a reschedule was already pending",
            WakeupVerdict::HigherClass => "the running task is in a higher class",
            WakeupVerdict::IdlePolicy => "idle/batch policy rules: no preemption",
            WakeupVerdict::Buddy { self_buddy: true } => {
                "the probe returned the next buddy, which is the running entity itself (stale self-buddy)"
            }
            WakeupVerdict::Buddy { self_buddy: false } => "the probe returned the next buddy",
            WakeupVerdict::NotEligible => "the wakee's entity was not eligible",
            WakeupVerdict::Protected => "the running entity's slice was protected (RUN_TO_PARITY)",
            WakeupVerdict::EarlierDeadline => "another entity had an earlier eligible deadline",
            WakeupVerdict::WakeupGranularity => "not left of the running entity by more than the wakee's wakeup granularity (CFS)",
            WakeupVerdict::ForkOrDelayed => "forked or delayed wakee: no check by rule",
        }
    }
}

/// One wakeup of an observed task (`Kernel::observe_comm`): when it became runnable, where,
/// what ran there and why it did not preempt, and when the task got the CPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WakeupRecord {
    pub pid: i32,
    pub woke_at: u64,
    pub cpu: usize,
    /// pid and comm of the task running on `cpu` at the wakeup.
    pub curr_pid: i32,
    pub curr_comm: String,
    /// The running task's entity at the level where the two hierarchies meet: its cgroup
    /// path for a group entity, else its comm (fair-vs-fair only).
    pub curr_entity: String,
    pub verdict: WakeupVerdict,
    /// When it was switched in (None: not yet at the end of the run).
    pub ran_at: Option<u64>,
    /// The task switched out for it blocked (a voluntary switch); false: it was preempted.
    pub prev_blocked: bool,
}

/// One `try_to_wake_up()` of a sleeping task, as `Kernel::ttwu_log` records it when enabled
/// (tests of the wake flags and waker context of each wake-up type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TtwuRecord {
    /// `current` on the waking CPU (the waker; the idle task for an interrupt on an idle CPU).
    pub waker: crate::sched::TaskId,
    pub wakee: crate::sched::TaskId,
    /// The wake flags, `WF_TTWU` included.
    pub wake_flags: u32,
    /// `in_task()`: false for interrupt and softirq context.
    pub in_task: bool,
}
