//! Scheduler tunables under their kernel names (sysctl and debugfs), with defaults and units.

/// One tunable: its name as written in a kernel string, its documentation and default.
#[derive(Clone, Copy, Debug)]
pub struct SysctlInfo {
    pub name: &'static str,
    pub doc: &'static str,
    /// Default as text (some defaults depend on the CPU count or the preset).
    pub default: &'static str,
    pub units: &'static str,
}

pub const SYSCTLS: &[SysctlInfo] = &[
    SysctlInfo {
        name: "base_slice_ns",
        doc: "debugfs sched/base_slice_ns: sysctl_sched_base_slice, the default request size",
        default: "normalized slice (750000 before 2ae891b82695, 700000 after) x (1 + ilog2(min(ncpus, 8)))",
        units: "ns",
    },
    SysctlInfo {
        name: "latency_ns",
        doc: "v6.5 only: debugfs sched/latency_ns, sysctl_sched_latency: the period in which every runnable task runs once (up to sched_nr_latency tasks); a plain store (cfs.md §2.3)",
        default: "6000000 x (1 + ilog2(min(ncpus, 8)))",
        units: "ns",
    },
    SysctlInfo {
        name: "min_granularity_ns",
        doc: "v6.5 only (v6.6 renamed it base_slice_ns): sysctl_sched_min_granularity, the slice floor and the per-task period share beyond sched_nr_latency tasks",
        default: "750000 x (1 + ilog2(min(ncpus, 8)))",
        units: "ns",
    },
    SysctlInfo {
        name: "wakeup_granularity_ns",
        doc: "v6.5 only: sysctl_sched_wakeup_granularity, the vruntime margin a wakee needs to preempt (and a buddy may lag the leftmost by)",
        default: "1000000 x (1 + ilog2(min(ncpus, 8)))",
        units: "ns",
    },
    SysctlInfo {
        name: "idle_min_granularity_ns",
        doc: "v6.5 only: sysctl_sched_idle_min_granularity, the slice floor of an idle entity among non-idle ones (not scaled)",
        default: "750000",
        units: "ns",
    },
    SysctlInfo {
        name: "child_runs_first",
        doc: "v6.5 only: /proc/sys/kernel/sched_child_runs_first (also accepted under that name): a forked child takes the parent's earlier vruntime and runs first",
        default: "0",
        units: "bool",
    },
    SysctlInfo {
        name: "migration_cost_ns",
        doc: "debugfs sched/migration_cost_ns: sysctl_sched_migration_cost, task_hot window and newidle floor",
        default: "500000",
        units: "ns",
    },
    SysctlInfo {
        name: "nr_migrate",
        doc: "debugfs sched/nr_migrate: sysctl_sched_nr_migrate, tasks examined per balance pass",
        default: "32 (8 with PREEMPT_RT)",
        units: "tasks",
    },
    SysctlInfo {
        name: "tunable_scaling",
        doc: "debugfs sched/tunable_scaling: 0 = none, 1 = log, 2 = linear scaling of base_slice_ns (v6.5: written after boot, it recomputes sched_nr_latency and the normalised values from the current ones, cfs.md §2.3)",
        default: "1",
        units: "enum",
    },
    SysctlInfo {
        name: "sched_rt_runtime_us",
        doc: "/proc/sys/kernel/sched_rt_runtime_us: RT bandwidth (v6.6 throttling) / DL admission limit",
        default: "950000",
        units: "us",
    },
    SysctlInfo {
        name: "sched_rt_period_us",
        doc: "/proc/sys/kernel/sched_rt_period_us",
        default: "1000000",
        units: "us",
    },
    SysctlInfo {
        name: "sched_rr_timeslice_ms",
        doc: "/proc/sys/kernel/sched_rr_timeslice_ms: SCHED_RR time slice, converted to ticks (rounded up); <= 0 restores the default",
        default: "100",
        units: "ms",
    },
    SysctlInfo {
        name: "fair_server_runtime_ns",
        doc: "debugfs sched/fair_server/cpuN/runtime for every CPU: the fair_server budget (0 disables the server; v6.12+)",
        default: "50000000",
        units: "ns",
    },
    SysctlInfo {
        name: "fair_server_period_ns",
        doc: "debugfs sched/fair_server/cpuN/period for every CPU: the fair_server period (100 us ..= 2^22 us; runtime <= period)",
        default: "1000000000",
        units: "ns",
    },
    SysctlInfo {
        name: "fair_server/cpuN/runtime",
        doc: "debugfs sched/fair_server/cpuN/runtime of one CPU (after fair_server_runtime_ns; N must exist)",
        default: "fair_server_runtime_ns",
        units: "ns",
    },
    SysctlInfo {
        name: "fair_server/cpuN/period",
        doc: "debugfs sched/fair_server/cpuN/period of one CPU (after fair_server_period_ns; N must exist)",
        default: "fair_server_period_ns",
        units: "ns",
    },
    SysctlInfo {
        name: "sched_cfs_bandwidth_slice_us",
        doc: "/proc/sys/kernel/sched_cfs_bandwidth_slice_us: runtime a cfs_rq takes from its group's cpu.max pool at a time (1..=INT_MAX)",
        default: "5000",
        units: "us",
    },
    SysctlInfo {
        name: "timer_slack_ns",
        doc: "prctl PR_SET_TIMERSLACK default for fair tasks (hrtimer range)",
        default: "50000",
        units: "ns",
    },
    SysctlInfo {
        name: "preempt",
        doc: "debugfs sched/preempt (PREEMPT_DYNAMIC) / Kconfig preemption model: none, voluntary, full, lazy, rt",
        default: "the platform's kernel configuration",
        units: "model",
    },
    SysctlInfo {
        name: "CONFIG_HZ",
        doc: "tick rate of the kernel build",
        default: "the platform's kernel configuration",
        units: "Hz",
    },
];

/// Values of the tunables for one simulated kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sysctls {
    /// Explicit `base_slice_ns`; `None` derives it from the CPU count and the preset.
    pub base_slice_ns: Option<u64>,
    pub migration_cost_ns: u64,
    /// Explicit `nr_migrate`; `None` = 32, or 8 under PREEMPT_RT.
    pub nr_migrate: Option<u32>,
    pub tunable_scaling: u32,
    pub sched_rt_runtime_us: i64,
    pub sched_rt_period_us: u64,
    /// `sched_rr_timeslice_ms` (RR_TIMESLICE = 100 ms).
    pub sched_rr_timeslice_ms: i64,
    /// `sched_cfs_bandwidth_slice_us` (CFS bandwidth slice, 5 ms).
    pub sched_cfs_bandwidth_slice_us: u64,
    pub timer_slack_ns: u64,
    pub fair_server_runtime_ns: u64,
    pub fair_server_period_ns: u64,
    /// Per-CPU writes `fair_server/cpuN/runtime=NS` / `fair_server/cpuN/period=NS` (the debugfs
    /// files of that CPU), applied after the all-CPU values: (cpu, runtime, period).
    pub fair_server_cpu: Vec<(u32, Option<u64>, Option<u64>)>,
    /// v6.5: writes to the CFS tunables (`latency_ns`, `min_granularity_ns`,
    /// `wakeup_granularity_ns`, `idle_min_granularity_ns`, `tunable_scaling`,
    /// `child_runs_first`) in the order given, applied after boot (fair_cfs.rs `CfsTunables`).
    pub cfs_writes: Vec<(String, u64)>,
}

impl Default for Sysctls {
    fn default() -> Self {
        Sysctls {
            base_slice_ns: None,
            migration_cost_ns: 500_000,
            nr_migrate: None,
            tunable_scaling: 1,
            sched_rt_runtime_us: 950_000,
            sched_rt_period_us: 1_000_000,
            sched_rr_timeslice_ms: 100,
            sched_cfs_bandwidth_slice_us: 5_000,
            timer_slack_ns: 50_000,
            fair_server_runtime_ns: 50_000_000,
            fair_server_period_ns: 1_000_000_000,
            fair_server_cpu: Vec::new(),
            cfs_writes: Vec::new(),
        }
    }
}

/// `1 + ilog2(min(ncpus, 8))` for log scaling, `min(ncpus, 8)` for linear, 1 for none.
/// kernel: fair.c get_update_sysctl_factor()
pub fn sysctl_factor(tunable_scaling: u32, ncpus: u32) -> u64 {
    let n = ncpus.clamp(1, 8);
    match tunable_scaling {
        0 => 1,
        2 => n as u64,
        _ => 1 + n.ilog2() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factor_matches_fair_md_tv5() {
        // fair.md TV-5-arith: online CPUs 1/2/3/4/7/8/64 -> factor 1/2/2/3/3/4/4
        let f: Vec<u64> = [1, 2, 3, 4, 7, 8, 64]
            .iter()
            .map(|&n| sysctl_factor(1, n))
            .collect();
        assert_eq!(f, vec![1, 2, 2, 3, 3, 4, 4]);
        assert_eq!(sysctl_factor(0, 64), 1);
        assert_eq!(sysctl_factor(2, 4), 4);
    }
}
