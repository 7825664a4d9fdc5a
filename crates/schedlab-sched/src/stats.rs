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
