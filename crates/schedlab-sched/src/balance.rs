//! Load balancing (smp.md §4): periodic balancing from the tick (`sched_balance_trigger` →
//! `sched_balance_softirq` → `sched_balance_domains` → `sched_balance_rq`), active balance
//! through a modelled CPU stopper, newidle balance (`sched_balance_newidle`) with its version
//! deltas, and NOHZ idle balancing through kicks (IPIs) from busy CPUs to an idle one.
//!
//! Model notes (what differs from a real kernel, and why):
//!
//! * **Idle CPUs do not tick** (NO_HZ_IDLE, and the tick is always stopped in idle). An idle
//!   CPU joins `nohz.idle_cpus_mask` when it goes idle after a failed newidle balance (and, as
//!   a fallback, when a busy tick finds it idle and not yet in the mask); it leaves at its first
//!   busy tick. Idle CPUs are balanced only by nohz kicks (`on_ipi_balance`).
//! * **Blocked PELT of idle CPUs** is decayed exactly where the kernel decays it — periodic
//!   softirq of busy CPUs, newidle balance, the nohz STATS kick and the NEWILB pass — by
//!   `sched_balance_update_blocked_averages`, which brings every cfs_rq of the CPU to "now".
//!   Between those points the signals of an idle CPU are stale, as in the kernel.
//! * **Measured cost** (`sched_clock` deltas of the kernel) is modelled as cache-line
//!   transfers (platform `c_line_llc` / `c_line_cross_llc` / `c_line_remote`, smp.md §8.2):
//!   [`LB_LINES_PER_CPU`] lines per CPU whose statistics a pass reads, [`LB_LINES_LOCK`] lines
//!   to lock the busiest runqueue, one per task examined and [`LB_LINES_PER_MIGRATION`] per task
//!   moved; a blocked-load update costs one `c_line_llc` per cfs_rq it updates, and before
//!   v7.0 (45e09225085f) newidle also pays this rq's lock bounce (2 × `c_atomic`). A level's
//!   newidle cost is at least 1 ns (a real pass is never free, and `update_newidle_cost()`
//!   ignores zero costs). The same cost is charged as CPU time: a periodic pass as an interrupt
//!   segment after the tick; a newidle pass that pulled a task as part of `schedule()`, before
//!   the task pulled last runs (a pass that pulls nothing delays nothing: the CPU idles).
//!   Passes run by a kicked idle CPU on behalf of others are not charged (the CPU is idle).
//! * **Active balance**: the stopper is not a task. `stop_one_cpu_nowait()` sets
//!   `need_resched` on the busiest CPU (an IPI if remote); the IPI handler charges the stopper's
//!   switch (`c_ctxsw_thread`, the second switch is the ordinary one to the next task), and at
//!   the next `__schedule()` on that CPU the pick runs the stopper first
//!   (`Kernel::cpu_stopper_run`): the current task is put back, and
//!   `active_load_balance_cpu_stop()` moves one task (possibly that one) with `LBF_ACTIVE_LB`.
//! * **`rq->cfs_tasks` order** (detach walks it from the tail) is derived rather than kept as a
//!   list: a task's position is its last enqueue (`last_queued`) or, if it has run since, its
//!   last accounting (`se.exec_start`), overridden by the balancer's own rotations.
//! * Not modelled: asym packing (no platform sets `SD_ASYM_PACKING`), NUMA balancing
//!   (`fbq_type`, `migrate_degrades_locality`), CFS bandwidth (`throttled_lb_pair`), EAS
//!   (perf domains: the root domain counts as overutilized), RT/IRQ capacity pressure
//!   (`capacity_of() == capacity_orig`), `SD_SERIALIZE` contention (the simulation is
//!   sequential, the token is always free), core scheduling cookies.

use std::collections::VecDeque;
use std::sync::Arc;

use schedlab_platform::cpumask::CpuMask;
use schedlab_platform::topology::{
    SchedDomain, SchedDomains, SchedGroup, SD_ASYM_CPUCAPACITY, SD_BALANCE_NEWIDLE, SD_NUMA,
    SD_PREFER_SIBLING, SD_SHARE_CPUCAPACITY, SD_SHARE_LLC,
};

use crate::exec::{Mode, Seg, SegKind};
use crate::features::Feature as F;
use crate::patches::Patch as P;
use crate::pelt;
use crate::presets::{kernel_preemptible, PreemptModel};
use crate::sched::*;
use crate::select::capacity_greater;
use crate::tree;
use crate::Kernel;

// ------------------------------------------------------------------------------- constants

/// `SCHED_CAPACITY_SCALE`.
const SCHED_CAPACITY_SCALE: u64 = 1024;
/// `MAX_PINNED_INTERVAL` (ms): balance_interval ceiling when every task was pinned.
const MAX_PINNED_INTERVAL: u64 = 512;
/// `NUMA_IMBALANCE_MIN`.
const NUMA_IMBALANCE_MIN: i64 = 2;
/// `LOAD_AVG_PERIOD` (ms): nohz blocked-load update period.
const LOAD_AVG_PERIOD_MS: u64 = 32;

/// `nohz_flags()` bits (kernel/sched/sched.h).
pub const NOHZ_BALANCE_KICK: u32 = 1 << 0;
pub const NOHZ_STATS_KICK: u32 = 1 << 1;
pub const NOHZ_NEWILB_KICK: u32 = 1 << 2;
pub const NOHZ_NEXT_KICK: u32 = 1 << 3;
pub const NOHZ_KICK_MASK: u32 = NOHZ_BALANCE_KICK | NOHZ_STATS_KICK | NOHZ_NEXT_KICK;

/// `lb_env.flags` (kernel/sched/fair.c).
const LBF_ALL_PINNED: u32 = 0x01;
const LBF_NEED_BREAK: u32 = 0x02;
const LBF_DST_PINNED: u32 = 0x04;
const LBF_SOME_PINNED: u32 = 0x08;
const LBF_ACTIVE_LB: u32 = 0x10;

/// Cost model (simulator): cache lines read per CPU whose statistics a pass collects
/// (`rq->nr_running` and the cfs counters, the cfs `sched_avg`, `util_est` and capacity).
pub const LB_LINES_PER_CPU: u64 = 3;
/// Cost model: lines to take and release the busiest runqueue's lock.
pub const LB_LINES_LOCK: u64 = 2;
/// Cost model: lines per task moved (task and entity, both runqueues' counters).
pub const LB_LINES_PER_MIGRATION: u64 = 4;

// ------------------------------------------------------------------------------- types

/// `enum cpu_idle_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuIdleType {
    /// `__CPU_NOT_IDLE`
    NotIdle,
    /// `CPU_IDLE`
    Idle,
    /// `CPU_NEWLY_IDLE`
    NewlyIdle,
}

impl CpuIdleType {
    fn idx(self) -> usize {
        match self {
            CpuIdleType::NotIdle => 0,
            CpuIdleType::Idle => 1,
            CpuIdleType::NewlyIdle => 2,
        }
    }
    /// `env->idle` used as a truth value (idle or newly idle).
    fn is_idle(self) -> bool {
        self != CpuIdleType::NotIdle
    }
}

/// `enum group_type`, in increasing order of pull priority (smp.md §4.3.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum GroupType {
    #[default]
    HasSpare,
    FullyBusy,
    MisfitTask,
    SmtBalance,
    AsymPacking,
    Imbalanced,
    Overloaded,
}

/// `enum migration_type`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MigrationType {
    #[default]
    Load,
    Util,
    Task,
    Misfit,
}

/// `struct sg_lb_stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SgLbStats {
    pub avg_load: u64,
    pub group_load: u64,
    pub group_capacity: u64,
    pub group_util: u64,
    pub group_runnable: u64,
    pub sum_nr_running: u32,
    pub sum_h_nr_running: u32,
    pub idle_cpus: u32,
    pub group_weight: u32,
    pub group_type: GroupType,
    pub group_asym_packing: bool,
    pub group_smt_balance: bool,
    pub group_misfit_task_load: u64,
}

/// `struct sd_lb_stats`, plus the facts of the local and busiest groups that the decision
/// reads (`cores`, `flags`), copied so that the decision is a pure function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SdLbStats {
    /// Index of the busiest group in `sd.groups`.
    pub busiest: Option<usize>,
    pub local: Option<usize>,
    pub total_load: u64,
    pub total_capacity: u64,
    pub avg_load: u64,
    pub prefer_sibling: bool,
    pub busiest_stat: SgLbStats,
    pub local_stat: SgLbStats,
    pub busiest_cores: u32,
    pub local_cores: u32,
    pub busiest_flags: u32,
    pub local_flags: u32,
    /// The form of the SMT balancing rules the decision applies.
    pub rules: LbRules,
}

/// Which of the v6.6 SMT load-balancing commits the kernel carries (cfs.md §15.2), copied
/// into [`SdLbStats`] so that the decision functions stay pure. The default is v6.6 onwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LbRules {
    /// fee1759e4f04: `group_smt_balance`, and a has-spare SMT group with one task is not
    /// picked over a non-SMT group.
    pub smt_balance: bool,
    /// 7ff1693236f5: `prefer_sibling` spreads by `sibling_imbalance()` (tasks per core)
    /// instead of the task difference.
    pub sibling_imbalance: bool,
    /// 450e749707bc: a `group_smt_balance` group with idle CPUs is compared as a has-spare
    /// group; `sibling_imbalance()` rounds an imbalance of 1 into an empty group up to 2.
    pub smt_balance_fix: bool,
    /// 7f1a7229718d (v6.9): of two misfit groups only one with a strictly larger misfit
    /// load replaces the busiest (before: an equal one too).
    pub misfit_strict: bool,
}

impl Default for LbRules {
    fn default() -> Self {
        LbRules {
            smt_balance: true,
            sibling_imbalance: true,
            smt_balance_fix: true,
            misfit_strict: true,
        }
    }
}

impl Default for SdLbStats {
    /// kernel: fair.c init_sd_lb_stats() @ v6.12
    fn default() -> Self {
        SdLbStats {
            busiest: None,
            local: None,
            total_load: 0,
            total_capacity: 0,
            avg_load: 0,
            prefer_sibling: false,
            busiest_stat: SgLbStats {
                idle_cpus: u32::MAX,
                group_type: GroupType::HasSpare,
                ..Default::default()
            },
            local_stat: SgLbStats::default(),
            busiest_cores: 0,
            local_cores: 0,
            busiest_flags: 0,
            local_flags: 0,
            rules: LbRules::default(),
        }
    }
}

/// `struct lb_env`. The domain is `per_cpu[sd_cpu].domains[level]`.
#[derive(Clone, Debug)]
pub(crate) struct LbEnv {
    pub sd_cpu: usize,
    pub level: usize,
    pub dst_cpu: usize,
    pub src_cpu: usize,
    pub idle: CpuIdleType,
    pub imbalance: i64,
    pub cpus: CpuMask,
    pub dst_grpmask: CpuMask,
    pub new_dst_cpu: usize,
    pub migration_type: MigrationType,
    pub flags: u32,
    pub loop_: u32,
    pub loop_break: u32,
    pub loop_max: u32,
}

impl LbEnv {
    fn new(this_cpu: usize, level: usize, sd: &SchedDomain, idle: CpuIdleType, brk: u32) -> Self {
        LbEnv {
            sd_cpu: this_cpu,
            level,
            dst_cpu: this_cpu,
            src_cpu: this_cpu,
            idle,
            imbalance: 0,
            // cpu_active_mask: every CPU with domains is active
            cpus: sd.span.clone(),
            dst_grpmask: sd.groups[0].balance_mask.clone(),
            new_dst_cpu: this_cpu,
            migration_type: MigrationType::Load,
            flags: 0,
            loop_: 0,
            loop_break: brk,
            loop_max: 0,
        }
    }
}

/// Runtime fields of one CPU's `struct sched_domain` (the static ones are in
/// [`SchedDomain`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SdRuntime {
    /// `balance_interval` (ms).
    pub balance_interval: u64,
    /// `last_balance` (jiffies).
    pub last_balance: u64,
    pub nr_balance_failed: u32,
    /// `max_newidle_lb_cost` (ns).
    pub max_newidle_lb_cost: u64,
    /// `last_decay_max_lb_cost` (jiffies).
    pub last_decay_max_lb_cost: u64,
    /// v6.19+ (33cf66d88306): newidle attempts, weighted successes and their ratio per 1024.
    pub newidle_call: u32,
    pub newidle_success: u32,
    pub newidle_ratio: u32,
    /// v7.1 (9fe89f022c05): time of the last ratio update (ns).
    pub newidle_stamp: u64,
    /// schedstat `lb_count[idle]` (indexed not idle / idle / newly idle).
    pub lb_count: [u64; 3],
    /// schedstat `lb_failed[idle]`.
    pub lb_failed: [u64; 3],
    /// schedstat `lb_gained[idle]`.
    pub lb_gained: [u64; 3],
}

/// The outcome of the last balance pass that found a busiest runqueue (observability).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LbRecord {
    pub cpu: usize,
    pub level: usize,
    pub idle: CpuIdleType,
    pub migration_type: MigrationType,
    /// `env->imbalance` as computed by `calculate_imbalance()`.
    pub imbalance: i64,
    pub busiest: usize,
    pub moved: u32,
}

/// Runtime state of load balancing: per CPU and domain level (`balance_interval`,
/// `last_balance`, `nr_balance_failed`, newidle cost and ratio), per rq (`misfit_task_load`,
/// `active_balance`, blocked-load status), per root domain (`overloaded`), per
/// `sched_group_capacity` (`imbalance`), per LLC (`nr_busy_cpus`) and the nohz state.
/// (`rq->next_balance`, `avg_idle`, `idle_stamp` and `max_idle_balance_cost` live in [`Rq`].)
///
/// [`Rq`]: crate::sched::Rq
#[derive(Clone, Debug)]
pub struct BalanceState {
    /// The domains (shared, so that a pass can read them while it mutates the kernel).
    topo: Arc<SchedDomains>,
    /// `[cpu][level]`, bottom-up like `topo.per_cpu[cpu].domains`.
    pub sd: Vec<Vec<SdRuntime>>,
    /// `sgc->imbalance`, indexed like `SchedDomains::sgc`.
    pub sgc_imbalance: Vec<bool>,
    /// Root domain of each CPU (index into `SchedDomains::root_domains`).
    pub(crate) rd_of: Vec<usize>,
    /// `rd->overloaded`.
    pub rd_overloaded: Vec<bool>,
    /// `rd->max_cpu_capacity`.
    rd_max_cap: Vec<u64>,
    /// `rq->misfit_task_load`.
    pub misfit_task_load: Vec<u64>,
    /// `rq->active_balance` with its `push_cpu`.
    pub active_balance: Vec<Option<usize>>,
    /// The CPU whose stopper is running (its current task counts as off the CPU).
    pub(crate) stopper_running: Option<usize>,
    /// `rq->has_blocked_load`.
    pub has_blocked_load: Vec<bool>,
    /// `rq->last_blocked_load_update_tick` (jiffies).
    last_blocked_load_update_tick: Vec<u64>,
    /// `nohz.idle_cpus_mask`.
    pub nohz_idle_cpus: CpuMask,
    pub nohz_has_blocked: bool,
    pub nohz_needs_update: bool,
    /// `nohz.next_balance` (jiffies).
    pub nohz_next_balance: u64,
    /// `nohz.next_blocked` (jiffies).
    pub nohz_next_blocked: u64,
    /// `nohz_flags(cpu)`.
    pub nohz_flags: Vec<u32>,
    /// `rq->nohz_tick_stopped`.
    nohz_tick_stopped: Vec<bool>,
    /// `sd_llc->nohz_idle` of each CPU's LLC domain.
    sd_llc_nohz_idle: Vec<bool>,
    /// `sd_llc_shared->nr_busy_cpus`, indexed like `SchedDomains::shared`.
    pub nr_busy_cpus: Vec<u32>,
    /// `max_load_balance_interval` (jiffies).
    max_load_balance_interval: u64,
    /// Rotations of `rq->cfs_tasks` by the balancer, per task: (time, sequence).
    list_rot: Vec<(u64, u64)>,
    rot_seq: u64,
    /// Modelled cost of the balancing work done since the last reset (ns).
    cost_acc: u64,
    /// The last pass that found a busiest runqueue.
    pub last_lb: Option<LbRecord>,
    /// The last task moved by the balancer and its destination.
    last_moved: Option<(TaskId, usize)>,
}

fn empty_domains() -> SchedDomains {
    SchedDomains {
        nr_cpus: 0,
        cpu_map: CpuMask::new(),
        per_cpu: Vec::new(),
        shared: Vec::new(),
        sgc: Vec::new(),
        levels: Vec::new(),
        numa_distances: Vec::new(),
        sched_asym_cpucapacity: false,
        sched_cluster_active: false,
        root_domains: Vec::new(),
    }
}

impl Default for BalanceState {
    fn default() -> Self {
        BalanceState {
            topo: Arc::new(empty_domains()),
            sd: Vec::new(),
            sgc_imbalance: Vec::new(),
            rd_of: Vec::new(),
            rd_overloaded: Vec::new(),
            rd_max_cap: Vec::new(),
            misfit_task_load: Vec::new(),
            active_balance: Vec::new(),
            stopper_running: None,
            has_blocked_load: Vec::new(),
            last_blocked_load_update_tick: Vec::new(),
            nohz_idle_cpus: CpuMask::new(),
            nohz_has_blocked: false,
            nohz_needs_update: false,
            nohz_next_balance: 0,
            nohz_next_blocked: 0,
            nohz_flags: Vec::new(),
            nohz_tick_stopped: Vec::new(),
            sd_llc_nohz_idle: Vec::new(),
            nr_busy_cpus: Vec::new(),
            max_load_balance_interval: 1,
            list_rot: Vec::new(),
            rot_seq: 0,
            cost_acc: 0,
            last_lb: None,
            last_moved: None,
        }
    }
}

// ------------------------------------------------------------------------------- pure rules

/// `shr_bound()`: a shift bounded by the word size.
fn shr_bound(val: u64, shift: u32) -> u64 {
    val >> shift.min(63)
}

/// kernel: fair.c group_is_overloaded() @ v6.12
pub fn group_is_overloaded(imbalance_pct: u64, sgs: &SgLbStats) -> bool {
    if sgs.sum_nr_running <= sgs.group_weight {
        return false;
    }
    if sgs.group_capacity * 100 < sgs.group_util * imbalance_pct {
        return true;
    }
    sgs.group_capacity * imbalance_pct < sgs.group_runnable * 100
}

/// kernel: fair.c group_has_capacity() @ v6.12
pub fn group_has_capacity(imbalance_pct: u64, sgs: &SgLbStats) -> bool {
    if sgs.sum_nr_running < sgs.group_weight {
        return true;
    }
    if sgs.group_capacity * imbalance_pct < sgs.group_runnable * 100 {
        return false;
    }
    sgs.group_capacity * 100 > sgs.group_util * imbalance_pct
}

/// kernel: fair.c group_classify() @ v6.12 — `imbalanced` is `sg_imbalanced(group)`.
/// Deviation: the v7.1 EAS filter (d3d663faa1d4) is not applied (EAS is not modelled).
pub fn group_classify(imbalance_pct: u64, sgs: &SgLbStats, imbalanced: bool) -> GroupType {
    if group_is_overloaded(imbalance_pct, sgs) {
        GroupType::Overloaded
    } else if imbalanced {
        GroupType::Imbalanced
    } else if sgs.group_asym_packing {
        GroupType::AsymPacking
    } else if sgs.group_smt_balance {
        GroupType::SmtBalance
    } else if sgs.group_misfit_task_load != 0 {
        GroupType::MisfitTask
    } else if !group_has_capacity(imbalance_pct, sgs) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

/// The facts of a candidate group `update_sd_pick_busiest()` reads besides its statistics.
#[derive(Clone, Copy, Debug)]
pub struct GroupFacts {
    pub flags: u32,
    pub min_capacity: u64,
    pub max_capacity: u64,
}

/// kernel: fair.c update_sd_pick_busiest() @ v6.12 — does `sg` replace `sds.busiest`?
/// (fee1759e4f04 and 450e749707bc switchable through `sds.rules`)
pub fn update_sd_pick_busiest(
    sd_flags: u32,
    dst_capacity: u64,
    sds: &SdLbStats,
    sg: GroupFacts,
    sgs: &SgLbStats,
) -> bool {
    let busiest = &sds.busiest_stat;
    // Make sure that there is at least one task to pull.
    if sgs.sum_h_nr_running == 0 {
        return false;
    }
    // Don't try to pull misfit tasks we can't help.
    if sd_flags & SD_ASYM_CPUCAPACITY != 0
        && sgs.group_type == GroupType::MisfitTask
        && (!capacity_greater(dst_capacity, sg.max_capacity)
            || sds.local_stat.group_type != GroupType::HasSpare)
    {
        return false;
    }
    if sgs.group_type > busiest.group_type {
        return true;
    }
    if sgs.group_type < busiest.group_type {
        return false;
    }
    let busiest_smt = sds.busiest.is_some() && sds.busiest_flags & SD_SHARE_CPUCAPACITY != 0;
    // smt_vs_nonsmt_groups(sds->busiest, sg)
    let smt_vs_nonsmt =
        sds.busiest.is_some() && busiest_smt != (sg.flags & SD_SHARE_CPUCAPACITY != 0);
    let has_spare_rule = |sgs: &SgLbStats| -> bool {
        // Select the not overloaded group with the fewest idle CPUs and the most tasks.
        !(sgs.idle_cpus > busiest.idle_cpus
            || (sgs.idle_cpus == busiest.idle_cpus && sgs.sum_nr_running <= busiest.sum_nr_running))
    };
    match sgs.group_type {
        GroupType::Overloaded => return sgs.avg_load > busiest.avg_load,
        GroupType::Imbalanced => return false,
        // Deviation: asym packing is not modelled (no group is ever of this type).
        GroupType::AsymPacking => return false,
        GroupType::MisfitTask => {
            // (before 7f1a7229718d an equal misfit load also replaced the busiest; the final
            // capacity test below never applies to a misfit group)
            return if sds.rules.misfit_strict {
                sgs.group_misfit_task_load > busiest.group_misfit_task_load
            } else {
                sgs.group_misfit_task_load >= busiest.group_misfit_task_load
            };
        }
        // (450e749707bc: an SMT group with spare CPUs on either side compares as has-spare)
        GroupType::SmtBalance
            if sds.rules.smt_balance_fix && (sgs.idle_cpus != 0 || busiest.idle_cpus != 0) =>
        {
            if !has_spare_rule(sgs) {
                return false;
            }
        }
        GroupType::SmtBalance | GroupType::FullyBusy => {
            if sgs.avg_load < busiest.avg_load {
                return false;
            }
            if sgs.avg_load == busiest.avg_load && busiest_smt {
                return false;
            }
        }
        GroupType::HasSpare => {
            // (fee1759e4f04: do not empty an SMT core with one task for a non-SMT group)
            if sds.rules.smt_balance && smt_vs_nonsmt {
                return !(sg.flags & SD_SHARE_CPUCAPACITY != 0 && sgs.sum_h_nr_running <= 1);
            }
            if !has_spare_rule(sgs) {
                return false;
            }
        }
    }
    // Don't move work down to CPUs of lower capacity.
    !(sd_flags & SD_ASYM_CPUCAPACITY != 0
        && sgs.group_type <= GroupType::FullyBusy
        && capacity_greater(sg.min_capacity, dst_capacity))
}

/// kernel: fair.c sibling_imbalance() @ v6.12 (450e749707bc switchable)
pub fn sibling_imbalance(idle: CpuIdleType, sds: &SdLbStats) -> i64 {
    let busiest = &sds.busiest_stat;
    let local = &sds.local_stat;
    if !idle.is_idle() || busiest.sum_nr_running == 0 {
        return 0;
    }
    let ncores_busiest = sds.busiest_cores as i64;
    let ncores_local = sds.local_cores as i64;
    if ncores_busiest == ncores_local {
        return (busiest.sum_nr_running as i64 - local.sum_nr_running as i64).max(0);
    }
    // Balance such that nr_running/ncores ratio are the same on both groups.
    let mut imb = (ncores_local * busiest.sum_nr_running as i64
        - ncores_busiest * local.sum_nr_running as i64)
        .max(0);
    imb = (2 * imb + ncores_local + ncores_busiest) / (ncores_local + ncores_busiest);
    // Take advantage of resources in an empty sched group (before 450e749707bc only an
    // imbalance rounded down to 0 was raised).
    let small = if sds.rules.smt_balance_fix {
        imb <= 1
    } else {
        imb == 0
    };
    if small && local.sum_nr_running == 0 && busiest.sum_nr_running > 1 {
        imb = 2;
    }
    imb
}

/// kernel: fair.c adjust_numa_imbalance() @ v6.12
fn adjust_numa_imbalance(imbalance: i64, dst_running: u32, imb_numa_nr: u32) -> i64 {
    if dst_running > imb_numa_nr {
        return imbalance;
    }
    if imbalance <= NUMA_IMBALANCE_MIN {
        return 0;
    }
    imbalance
}

/// kernel: fair.c calculate_imbalance() @ v6.12 — the migration type and the amount.
/// (7ff1693236f5 switchable through `sds.rules`)
pub fn calculate_imbalance(
    idle: CpuIdleType,
    sds: &mut SdLbStats,
    sd_flags: u32,
    imb_numa_nr: u32,
) -> (MigrationType, i64) {
    let busiest = sds.busiest_stat;
    match busiest.group_type {
        GroupType::MisfitTask => {
            return if sd_flags & SD_ASYM_CPUCAPACITY != 0 {
                (MigrationType::Misfit, 1)
            } else {
                // moving a task off a CPU of reduced capacity
                (MigrationType::Load, busiest.group_misfit_task_load as i64)
            };
        }
        GroupType::AsymPacking => {
            return (MigrationType::Task, busiest.sum_h_nr_running as i64);
        }
        GroupType::SmtBalance | GroupType::Imbalanced => return (MigrationType::Task, 1),
        _ => {}
    }
    let local = sds.local_stat;
    // Try to use the spare capacity of local without overloading it or emptying busiest.
    if local.group_type == GroupType::HasSpare {
        if busiest.group_type > GroupType::FullyBusy && sd_flags & SD_SHARE_LLC == 0 {
            let imb = local.group_capacity.max(local.group_util) - local.group_util;
            if idle.is_idle() && imb == 0 {
                return (MigrationType::Task, 1);
            }
            return (MigrationType::Util, imb as i64);
        }
        let mut imb = if busiest.group_weight == 1 || sds.prefer_sibling {
            // spread the running tasks evenly over the groups: per core (7ff1693236f5), or
            // the plain difference in tasks (v6.5)
            if sds.rules.sibling_imbalance {
                sibling_imbalance(idle, sds)
            } else {
                (busiest.sum_nr_running as i64 - local.sum_nr_running as i64).max(0)
            }
        } else {
            // even out the number of idle CPUs
            (local.idle_cpus as i64 - busiest.idle_cpus as i64).max(0)
        };
        if sd_flags & SD_NUMA != 0 {
            imb = adjust_numa_imbalance(imb, local.sum_nr_running + 1, imb_numa_nr);
        }
        return (MigrationType::Task, imb >> 1);
    }
    // Local is fully busy but has to take more load to relieve the busiest group.
    if local.group_type < GroupType::Overloaded {
        let lavg = local.group_load * SCHED_CAPACITY_SCALE / local.group_capacity.max(1);
        sds.local_stat.avg_load = lavg;
        if lavg >= busiest.avg_load {
            return (MigrationType::Load, 0);
        }
        sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity.max(1);
        if lavg >= sds.avg_load {
            return (MigrationType::Load, 0);
        }
    }
    // Both are (or will be) overloaded: bring both to the domain average.
    // (unsigned long arithmetic, as in the kernel)
    let local = sds.local_stat;
    let a = busiest
        .avg_load
        .wrapping_sub(sds.avg_load)
        .wrapping_mul(busiest.group_capacity);
    let b = sds
        .avg_load
        .wrapping_sub(local.avg_load)
        .wrapping_mul(local.group_capacity);
    (
        MigrationType::Load,
        (a.min(b) / SCHED_CAPACITY_SCALE) as i64,
    )
}

/// The decision half of `sched_balance_find_src_group()` (find_busiest_group) after the
/// statistics: `None` = balanced before any imbalance is computed; otherwise the result of
/// `calculate_imbalance()` (the caller treats an imbalance of 0 as balanced).
/// kernel: fair.c sched_balance_find_src_group() @ v6.12 (7ff1693236f5 switchable through
/// `sds.rules`)
/// Deviation: no perf domains (EAS), so the "root domain not overutilized" exit never applies.
pub fn find_src_group_decide(
    idle: CpuIdleType,
    sds: &mut SdLbStats,
    sd_flags: u32,
    imbalance_pct: u64,
    imb_numa_nr: u32,
) -> Option<(MigrationType, i64)> {
    sds.busiest?;
    let busiest = sds.busiest_stat;
    let force = matches!(
        busiest.group_type,
        GroupType::MisfitTask | GroupType::AsymPacking | GroupType::Imbalanced
    );
    if !force {
        let local = sds.local_stat;
        if local.group_type > busiest.group_type {
            return None;
        }
        if local.group_type == GroupType::Overloaded {
            if local.avg_load >= busiest.avg_load {
                return None;
            }
            sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity.max(1);
            if local.avg_load >= sds.avg_load {
                return None;
            }
            if 100 * busiest.avg_load <= imbalance_pct * local.avg_load {
                return None;
            }
        }
        // v6.5: more than one task more in busiest; 7ff1693236f5: sibling_imbalance() > 1
        let sibling = sds.prefer_sibling
            && local.group_type == GroupType::HasSpare
            && if sds.rules.sibling_imbalance {
                sibling_imbalance(idle, sds) > 1
            } else {
                busiest.sum_nr_running > local.sum_nr_running + 1
            };
        if !sibling && busiest.group_type != GroupType::Overloaded {
            if !idle.is_idle() {
                // let an idle CPU pull
                return None;
            }
            let local_smt = sds.local_flags & SD_SHARE_CPUCAPACITY != 0;
            let busiest_smt = sds.busiest_flags & SD_SHARE_CPUCAPACITY != 0;
            let smt_pull = busiest.group_type == GroupType::SmtBalance && local_smt != busiest_smt;
            if !smt_pull {
                if busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1 {
                    return None;
                }
                if busiest.sum_h_nr_running == 1 {
                    return None;
                }
            }
        }
    }
    Some(calculate_imbalance(idle, sds, sd_flags, imb_numa_nr))
}

/// NI_RANDOM's dice (33cf66d88306): with `d1k` uniform in [0, 1023], run the level iff
/// `d1k ≤ 1 + ratio`; a success then counts with the inverse probability as its weight.
/// kernel: fair.c sched_balance_newidle() @ v6.19
pub fn ni_random_dice(d1k: u32, newidle_ratio: u32) -> Option<u32> {
    let weight = 1u32.saturating_add(newidle_ratio);
    if d1k > weight {
        None
    } else {
        Some((1024 + weight / 2) / weight)
    }
}

// ------------------------------------------------------------------------------- the kernel

impl Kernel {
    // ============================================================================ state

    /// Initialises [`BalanceState`] once the machine is known.
    /// kernel: topology.c sd_init() (runtime fields) @ v6.19
    pub(crate) fn init_balance_state(&mut self) {
        let topo = Arc::new(self.machine.domains.clone());
        let n = self.ncpus;
        let now_j = self.jiffies();
        let sd = (0..n)
            .map(|c| {
                topo.per_cpu
                    .get(c)
                    .map(|pc| {
                        pc.domains
                            .iter()
                            .map(|d| SdRuntime {
                                balance_interval: d.balance_interval.max(1),
                                last_balance: now_j,
                                nr_balance_failed: 0,
                                max_newidle_lb_cost: 0,
                                last_decay_max_lb_cost: now_j,
                                // "50% success rate"
                                newidle_call: 512,
                                newidle_success: 256,
                                newidle_ratio: 512,
                                newidle_stamp: self.now,
                                lb_count: [0; 3],
                                lb_failed: [0; 3],
                                lb_gained: [0; 3],
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect();
        let rd_of: Vec<usize> = (0..n)
            .map(|c| {
                topo.root_domains
                    .iter()
                    .position(|m| m.contains(c))
                    .unwrap_or(0)
            })
            .collect();
        let nrd = topo.root_domains.len().max(1);
        let mut rd_max_cap = vec![0u64; nrd];
        for (c, &r) in rd_of.iter().enumerate() {
            rd_max_cap[r] = rd_max_cap[r].max(self.machine.capacity_orig[c]);
        }
        self.lb = BalanceState {
            sd,
            sgc_imbalance: vec![false; topo.sgc.len()],
            rd_of,
            rd_overloaded: vec![false; nrd],
            rd_max_cap,
            misfit_task_load: vec![0; n],
            active_balance: vec![None; n],
            has_blocked_load: vec![false; n],
            last_blocked_load_update_tick: vec![0; n],
            nohz_next_balance: now_j,
            nohz_next_blocked: now_j,
            nohz_flags: vec![0; n],
            nohz_tick_stopped: vec![false; n],
            sd_llc_nohz_idle: vec![false; n],
            nr_busy_cpus: topo.shared.iter().map(|s| s.nr_busy_cpus).collect(),
            max_load_balance_interval: (self.hz as u64 * n as u64 / 10).max(1),
            topo,
            ..Default::default()
        };
    }

    /// The domains (a shared handle, so that a pass can read them while it mutates the
    /// kernel).
    fn lb_topo(&self) -> Arc<SchedDomains> {
        self.lb.topo.clone()
    }

    fn has_domains(&self, cpu: usize) -> bool {
        self.lb
            .topo
            .per_cpu
            .get(cpu)
            .is_some_and(|pc| !pc.domains.is_empty())
    }

    /// `sysctl_sched_nr_migrate` (32, 8 under PREEMPT_RT).
    fn sysctl_nr_migrate(&self) -> u32 {
        self.cfg
            .sysctl
            .nr_migrate
            .unwrap_or(if self.preempt == PreemptModel::Rt {
                8
            } else {
                32
            })
    }

    /// `SCHED_NR_MIGRATE_BREAK` (32, 8 under PREEMPT_RT).
    fn nr_migrate_break(&self) -> u32 {
        if self.preempt == PreemptModel::Rt {
            8
        } else {
            32
        }
    }

    /// `msecs_to_jiffies()` (rounding up).
    fn msecs_to_jiffies(&self, ms: u64) -> u64 {
        (ms * self.hz as u64).div_ceil(1000)
    }

    /// `check_cpu_capacity()`: the CPU's capacity is noticeably reduced by other classes.
    fn check_cpu_capacity(&self, cpu: usize, sd: &SchedDomain) -> bool {
        self.capacity_of(cpu) * (sd.imbalance_pct as u64) < self.rqs[cpu].capacity_orig * 100
    }

    /// The balancer's count of a CPU's fair tasks: `cfs.h_nr_running` (delayed tasks
    /// included, ≤ v6.13) or `cfs.h_nr_runnable` (1a49104496d3, v6.14), smp.md §3.3.
    pub fn lb_h_nr_running(&self, cpu: usize) -> u32 {
        let c = &self.cfs[self.rqs[cpu].cfs.index()];
        if self.cfg.has(P::LbUseHNrRunnable) {
            c.h_nr_runnable
        } else {
            c.h_nr_queued
        }
    }

    /// `cpu_util_cfs_boost()`: `max(util_avg, runnable_avg)`, then util_est, clipped to the
    /// original capacity (smp.md §5.3).
    /// kernel: fair.c cpu_util(cpu, NULL, -1, 1) @ v6.12
    pub fn cpu_util_cfs_boost(&self, cpu: usize) -> u64 {
        let c = &self.cfs[self.rqs[cpu].cfs.index()];
        let mut u = c.avg.util_avg.max(c.avg.runnable_avg);
        if self.cfg.feat(F::UTIL_EST) {
            u = u.max(c.util_est as u64);
        }
        u.min(self.rqs[cpu].capacity_orig)
    }

    /// Cost model: one cache-line transfer from `from`'s point of view to data of `to`.
    pub(crate) fn line_cost(&self, from: usize, to: usize) -> u64 {
        if from == to {
            return 0;
        }
        let c = &self.costs[from];
        let llc = c.c_line_llc.map(|n| n.0).unwrap_or(0);
        if self.machine.llc_id[from] == self.machine.llc_id[to] {
            return llc;
        }
        let cross = c.c_line_cross_llc.map(|n| n.0).unwrap_or(llc);
        let numa = self
            .lb
            .topo
            .per_cpu
            .get(from)
            .and_then(|pc| pc.domains.iter().find(|d| d.span.contains(to)))
            .is_some_and(|d| d.has(SD_NUMA));
        if numa {
            c.c_line_remote.map(|n| n.0).unwrap_or(cross)
        } else {
            cross
        }
    }

    /// Modelled cost (ns) of the balancing work done since the last reset.
    fn take_lb_cost(&mut self) -> u64 {
        std::mem::take(&mut self.lb.cost_acc)
    }

    // ============================================================================ hooks

    /// IPI on `cpu` (after the wake list): the stopper's wakeup of an active balance, and a
    /// kicked nohz idle balance (`nohz_csd_func` + `sched_balance_softirq`).
    pub(crate) fn on_ipi_balance(&mut self, cpu: usize) {
        if cpu >= self.lb.nohz_flags.len() {
            return;
        }
        if self.active_balance_pending(cpu) && !self.cpu_is_idle(cpu) {
            // The stopper thread is woken: switching to it costs a thread switch (the switch
            // back to a fair task is charged by context_switch as usual).
            let c = self.cost(cpu, |c| c.c_ctxsw_thread.0);
            if c > 0 {
                self.push_irq(cpu, c);
            }
            self.rqs[cpu].resched = Resched::Full;
        }
        // kernel: fair.c nohz_csd_func() @ v6.12
        let flags = self.lb.nohz_flags[cpu] & (NOHZ_KICK_MASK | NOHZ_NEWILB_KICK);
        self.lb.nohz_flags[cpu] &= !(NOHZ_KICK_MASK | NOHZ_NEWILB_KICK);
        if flags & NOHZ_KICK_MASK != 0 && self.idle_cpu(cpu) {
            // sched_balance_softirq() -> nohz_idle_balance()
            self.lb.cost_acc = 0;
            self._nohz_idle_balance(cpu, flags);
            // Deviation: the work of an idle CPU on behalf of others is not charged.
            self.lb.cost_acc = 0;
        }
    }

    /// kernel: fair.c sched_balance_trigger() @ v6.12 — from the tick of a busy CPU (idle CPUs
    /// do not tick here). Also `update_misfit_status()` of task_tick_fair().
    pub(crate) fn sched_balance_trigger(&mut self, cpu: usize) {
        if !self.has_domains(cpu) {
            return;
        }
        let curr = self.rqs[cpu].curr;
        if !self.tasks[curr.index()].is_idle_task
            && self.tasks[curr.index()].class == SchedClass::Fair
        {
            self.update_misfit_status(Some(curr), cpu);
        }
        // The softirq runs at interrupt exit, after nohz_balancer_kick().
        self.nohz_balancer_kick(cpu);
        if self.jiffies() >= self.rqs[cpu].next_balance {
            self.lb.cost_acc = 0;
            let idle = if self.idle_cpu(cpu) {
                CpuIdleType::Idle
            } else {
                CpuIdleType::NotIdle
            };
            self.sched_balance_softirq(cpu, idle);
            let c = self.take_lb_cost();
            if c > 0 && !self.cpu_is_idle(cpu) {
                self.stats.paths.periodic_lb_charged += 1;
                self.stats.paths.periodic_lb_ns += c;
                self.push_irq(cpu, c);
            }
        }
    }

    /// kernel: fair.c sched_balance_softirq() @ v6.12 (the normal part; a kicked idle CPU's
    /// `nohz_idle_balance()` runs from [`Self::on_ipi_balance`]).
    fn sched_balance_softirq(&mut self, cpu: usize, idle: CpuIdleType) {
        self.sched_balance_update_blocked_averages(cpu);
        self.sched_balance_domains(cpu, idle);
    }

    // ============================================================================ PELT

    /// kernel: fair.c sched_balance_update_blocked_averages() @ v6.12 — decay the signals of
    /// every cfs_rq of `cpu` (leaves first, then their group entities, then the root) and
    /// record whether blocked load remains.
    pub(crate) fn sched_balance_update_blocked_averages(&mut self, cpu: usize) {
        if cpu >= self.lb.has_blocked_load.len() {
            return;
        }
        self.lb.last_blocked_load_update_tick[cpu] = self.jiffies();
        // group cfs_rqs, deepest first
        let mut groups: Vec<(u32, usize)> = (1..self.tgs.len())
            .map(|g| {
                let mut d = 0u32;
                let mut t = self.tgs[g].parent;
                while let Some(p) = t {
                    d += 1;
                    t = self.tgs[p.index()].parent;
                }
                (d, g)
            })
            .collect();
        groups.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let per_cfs = self.costs[cpu].c_line_llc.map(|n| n.0).unwrap_or(0);
        let mut has_blocked = false;
        for (_, g) in groups {
            let cfs = self.tgs[g].cfs_rq[cpu];
            self.update_cfs_rq_blocked(cfs);
            // propagate pending load changes to the parent, if any
            if let Some(gse) = self.tgs[g].se[cpu] {
                let pending = self.cfs[cfs.index()].propagate;
                if !pelt::skip_blocked_update(&self.se[gse.index()].avg, pending) {
                    let pc = self.se[gse.index()].cfs_rq;
                    self.update_load_avg(pc, gse, crate::fair_pelt::UPDATE_TG);
                }
            }
            let a = &self.cfs[cfs.index()].avg;
            has_blocked |= a.load_avg != 0 || a.util_avg != 0;
            self.lb.cost_acc += per_cfs;
        }
        let root = self.rqs[cpu].cfs;
        self.update_cfs_rq_blocked(root);
        self.lb.cost_acc += per_cfs;
        let a = &self.cfs[root.index()].avg;
        has_blocked |= a.load_avg != 0 || a.util_avg != 0;
        self.lb.has_blocked_load[cpu] = has_blocked;
    }

    /// `update_cfs_rq_load_avg()` of a cfs_rq with its current inputs (and `tg->load_avg`).
    fn update_cfs_rq_blocked(&mut self, cfs: CfsRqId) {
        let now = self.cfs_rq_clock_pelt(cfs);
        // the same version switches as fair_pelt.rs (pelt_fold, cfs_nr_runnable)
        let fold = self.cfg.has(P::ZeroVruntimeTracking);
        let c = &self.cfs[cfs.index()];
        let nr = if self.cfg.has(P::HNrDelayed) || self.cfg.has(P::HNrRunnable) {
            c.h_nr_runnable as u64
        } else {
            c.h_nr_queued as u64
        };
        let lw = scale_load_down(c.load.weight);
        let curr = c.curr.is_some();
        let c = &mut self.cfs[cfs.index()];
        let mut removed = c.removed;
        let (decayed, prop) =
            pelt::update_cfs_rq_load_avg(now, &mut c.avg, &mut removed, lw, nr, curr, fold);
        c.removed = removed;
        if let Some(r) = prop {
            // removed load: its group entity follows at its update below
            pelt::add_tg_cfs_propagate(&mut c.propagate, &mut c.prop_runnable_sum, r);
        }
        if decayed {
            self.update_tg_load_avg(cfs);
        }
    }

    // ============================================================================ misfit

    /// kernel: fair.c update_misfit_status() @ v6.12 (smp.md §6.3; 22d5607400c6 switchable).
    fn update_misfit_status(&mut self, p: Option<TaskId>, cpu: usize) {
        if !self.lb.topo.sched_asym_cpucapacity || cpu >= self.lb.misfit_task_load.len() {
            return;
        }
        let cap = self.rqs[cpu].capacity_orig;
        let load = match p {
            None => 0,
            Some(p) => {
                let t = &self.tasks[p.index()];
                let max_allowed = t
                    .cpus_allowed
                    .iter()
                    .filter(|&c| c < self.ncpus)
                    .map(|c| self.rqs[c].capacity_orig)
                    .max()
                    .unwrap_or(cap);
                // (22d5607400c6, v6.10: not misfit on the biggest CPU the task may use)
                let on_biggest = self.cfg.has(P::MisfitFittingCpu) && cap == max_allowed;
                if t.nr_cpus_allowed == 1 || on_biggest || self.task_fits_cpu(p, cpu) {
                    0
                } else {
                    self.task_h_load(p).max(1)
                }
            }
        };
        self.lb.misfit_task_load[cpu] = load;
    }

    /// kernel: fair.c check_misfit_status() @ v6.12
    fn check_misfit_status(&self, cpu: usize, sd: &SchedDomain) -> bool {
        let rd = self.lb.rd_of[cpu];
        self.lb.misfit_task_load[cpu] != 0
            && (self.rqs[cpu].capacity_orig < self.lb.rd_max_cap[rd]
                || self.check_cpu_capacity(cpu, sd))
    }

    // ============================================================================ periodic

    /// kernel: fair.c get_sd_balance_interval() @ v6.12 (jiffies).
    fn get_sd_balance_interval(
        &self,
        cpu: usize,
        level: usize,
        busy: bool,
        sd: &SchedDomain,
    ) -> u64 {
        let mut ms = self.lb.sd[cpu][level].balance_interval;
        if busy {
            ms *= sd.busy_factor as u64;
        }
        let mut j = self.msecs_to_jiffies(ms);
        if busy {
            j = j.saturating_sub(1);
        }
        j.clamp(1, self.lb.max_load_balance_interval)
    }

    /// kernel: fair.c sched_balance_domains() @ v6.12 (rebalance_domains).
    pub(crate) fn sched_balance_domains(&mut self, cpu: usize, idle: CpuIdleType) {
        let topo = self.lb_topo();
        let Some(pc) = topo.per_cpu.get(cpu) else {
            return;
        };
        let mut idle = idle;
        let mut busy = idle != CpuIdleType::Idle && !self.sched_idle_rq(cpu);
        let now = self.jiffies();
        let mut next_balance = now + 60 * self.hz as u64;
        let mut update_next_balance = false;
        let mut continue_balancing = true;
        let mut need_decay = false;
        let mut max_cost = 0u64;
        for (level, sd) in pc.domains.iter().enumerate() {
            // decay the newidle max times here: a regular visit to all the domains
            need_decay = self.update_newidle_cost(cpu, level, 0, 0);
            max_cost += self.lb.sd[cpu][level].max_newidle_lb_cost;
            if !continue_balancing {
                if need_decay {
                    continue;
                }
                break;
            }
            let mut interval = self.get_sd_balance_interval(cpu, level, busy, sd);
            // SD_SERIALIZE: the global token is always free in a sequential simulation.
            if now >= self.lb.sd[cpu][level].last_balance + interval {
                if self.sched_balance_rq(cpu, level, idle, &mut continue_balancing) > 0 {
                    idle = if self.idle_cpu(cpu) {
                        CpuIdleType::Idle
                    } else {
                        CpuIdleType::NotIdle
                    };
                    busy = idle != CpuIdleType::Idle && !self.sched_idle_rq(cpu);
                }
                self.lb.sd[cpu][level].last_balance = now;
                interval = self.get_sd_balance_interval(cpu, level, busy, sd);
            }
            let nb = self.lb.sd[cpu][level].last_balance + interval;
            if next_balance > nb {
                next_balance = nb;
                update_next_balance = true;
            }
        }
        if need_decay {
            // the rq-wide value also decays, with a floor
            self.rqs[cpu].max_idle_balance_cost = self.cfg.sysctl.migration_cost_ns.max(max_cost);
        }
        if update_next_balance {
            self.rqs[cpu].next_balance = next_balance;
        }
    }

    // ============================================================================ sched_balance_rq

    /// kernel: fair.c should_we_balance() @ v6.12 (b1bfeab9b002, 6d7e4782bcf5 switchable)
    fn should_we_balance(&self, env: &LbEnv, sd: &SchedDomain) -> bool {
        if !env.cpus.contains(env.dst_cpu) {
            return false;
        }
        if env.idle == CpuIdleType::NewlyIdle {
            let rq = &self.rqs[env.dst_cpu];
            return !(rq.nr_running > 0 || rq.ttwu_pending);
        }
        let sg = &sd.groups[0];
        let mut skip = CpuMask::new();
        let mut idle_smt: Option<usize> = None;
        // v6.5: the first idle CPU balances, whether or not its core is idle
        let prefer_idle_core = self.cfg.has(P::IdleCoreShouldBalance);
        for cpu in sg.balance_mask.and(&env.cpus).iter() {
            if skip.contains(cpu) || !self.idle_cpu(cpu) {
                continue;
            }
            if prefer_idle_core && sd.flags & SD_SHARE_CPUCAPACITY == 0 && !self.is_core_idle(cpu) {
                // an idle SMT thread of a busy core: only if no CPU of an idle core exists
                idle_smt.get_or_insert(cpu);
                skip = skip.or(&self.machine.smt_mask[cpu]);
                continue;
            }
            return cpu == env.dst_cpu;
        }
        if let Some(c) = idle_smt {
            // b1bfeab9b002 alone: only a yes for the remembered CPU; anyone else falls through
            // to the balance CPU (6d7e4782bcf5 makes the remembered CPU the only one)
            if c == env.dst_cpu || self.cfg.has(P::IdleSmtShouldBalance) {
                return c == env.dst_cpu;
            }
        }
        sg.balance_cpu() == env.dst_cpu
    }

    /// kernel: fair.c is_core_idle() @ v6.12
    fn is_core_idle(&self, cpu: usize) -> bool {
        self.machine.smt_mask[cpu]
            .iter()
            .filter(|&s| s != cpu)
            .all(|s| self.idle_cpu(s))
    }

    /// kernel: fair.c update_sg_lb_stats() @ v6.12 — returns the statistics, their modelled
    /// cost and the root "overloaded" indicator.
    fn update_sg_lb_stats(
        &self,
        env: &LbEnv,
        sd: &SchedDomain,
        group: &SchedGroup,
        local_group: bool,
        balancing_at_rd: bool,
    ) -> (SgLbStats, u64, bool) {
        let mut sgs = SgLbStats::default();
        let mut overloaded = false;
        let mut cost = 0u64;
        for i in group.span.and(&env.cpus).iter() {
            cost += LB_LINES_PER_CPU * self.line_cost(env.dst_cpu, i);
            let rq = &self.rqs[i];
            let load = self.cpu_load(i);
            sgs.group_load += load;
            sgs.group_util += self.cpu_util_cfs(i);
            sgs.group_runnable += self.cpu_runnable(i);
            sgs.sum_h_nr_running += self.lb_h_nr_running(i);
            let nr_running = rq.nr_running;
            sgs.sum_nr_running += nr_running;
            // (cpu_overutilized: EAS is not modelled)
            if nr_running == 0 && self.idle_cpu(i) {
                sgs.idle_cpus += 1;
                continue; // an idle CPU can't have a misfit task
            }
            if balancing_at_rd && nr_running > 1 {
                overloaded = true;
            }
            if local_group {
                continue;
            }
            if sd.flags & SD_ASYM_CPUCAPACITY != 0 {
                let m = self.lb.misfit_task_load[i];
                if sgs.group_misfit_task_load < m {
                    sgs.group_misfit_task_load = m;
                    overloaded = true;
                }
            } else if env.idle.is_idle()
                && self.lb_h_nr_running(i) == 1
                && self.check_cpu_capacity(i, sd)
            {
                // sched_reduced_capacity(): a task running on a CPU of reduced capacity
                if sgs.group_misfit_task_load < load {
                    sgs.group_misfit_task_load = load;
                }
            }
        }
        sgs.group_capacity = group.capacity;
        sgs.group_weight = group.group_weight;
        // (sched_group_asym(): asym packing is not modelled)
        // smt_balance(): a loaded SMT group to be balanced to an idle dst (fee1759e4f04)
        if self.cfg.has(P::SmtActiveBalance)
            && !local_group
            && env.idle.is_idle()
            && group.flags & SD_SHARE_CPUCAPACITY != 0
            && sgs.sum_h_nr_running > 1
        {
            sgs.group_smt_balance = true;
        }
        let imbalanced = self
            .lb
            .sgc_imbalance
            .get(group.sgc)
            .copied()
            .unwrap_or(false);
        sgs.group_type = group_classify(sd.imbalance_pct as u64, &sgs, imbalanced);
        if sgs.group_type == GroupType::Overloaded {
            sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity.max(1);
        }
        (sgs, cost, overloaded)
    }

    /// kernel: fair.c update_sd_lb_stats() @ v6.12
    fn update_sd_lb_stats(&mut self, env: &LbEnv, sd: &SchedDomain, at_rd: bool) -> SdLbStats {
        let mut sds = SdLbStats {
            rules: LbRules {
                smt_balance: self.cfg.has(P::SmtActiveBalance),
                sibling_imbalance: self.cfg.has(P::SiblingImbalance),
                smt_balance_fix: self.cfg.has(P::SmtBalanceFix),
                misfit_strict: self.cfg.has(P::MisfitStrictBusiest),
            },
            ..SdLbStats::default()
        };
        let mut sg_overloaded = false;
        let mut sum_util = 0u64;
        let dst_cap = self.capacity_of(env.dst_cpu);
        for (gi, g) in sd.groups.iter().enumerate() {
            let local = g.span.contains(env.dst_cpu);
            // (update_group_capacity: capacities do not change in this model)
            let (sgs, cost, over) = self.update_sg_lb_stats(env, sd, g, local, at_rd);
            self.lb.cost_acc += cost;
            sg_overloaded |= over;
            if local {
                sds.local = Some(gi);
                sds.local_stat = sgs;
                sds.local_cores = g.cores;
                sds.local_flags = g.flags;
            } else {
                let facts = GroupFacts {
                    flags: g.flags,
                    min_capacity: g.min_capacity as u64,
                    max_capacity: g.max_capacity as u64,
                };
                if update_sd_pick_busiest(sd.flags, dst_cap, &sds, facts, &sgs) {
                    sds.busiest = Some(gi);
                    sds.busiest_stat = sgs;
                    sds.busiest_cores = g.cores;
                    sds.busiest_flags = g.flags;
                }
            }
            sds.total_load += sgs.group_load;
            sds.total_capacity += sgs.group_capacity;
            sum_util += sgs.group_util;
        }
        // the child domain of the busiest group prefers its siblings (group flags = child's)
        if sds.busiest.is_some() {
            sds.prefer_sibling = sds.busiest_flags & SD_PREFER_SIBLING != 0;
        }
        if at_rd {
            let rd = self.lb.rd_of[env.dst_cpu];
            self.lb.rd_overloaded[rd] = sg_overloaded;
        }
        // SIS_UTIL budget of the LLC (smp.md §2.6.3): periodic passes at the LLC level only.
        let llc_size = self.lb.topo.per_cpu[env.dst_cpu].sd_llc_size;
        if env.idle != CpuIdleType::NewlyIdle && sd.span_weight == llc_size {
            self.update_idle_cpu_scan(env.dst_cpu, sum_util);
        }
        sds
    }

    /// kernel: fair.c sched_balance_find_src_group() @ v6.12 (find_busiest_group): the
    /// statistics, then [`find_src_group_decide`]; sets `env.migration_type` and
    /// `env.imbalance`.
    fn find_src_group(
        &mut self,
        env: &mut LbEnv,
        sd: &SchedDomain,
        at_rd: bool,
    ) -> Option<SdLbStats> {
        let mut sds = self.update_sd_lb_stats(env, sd, at_rd);
        match find_src_group_decide(
            env.idle,
            &mut sds,
            sd.flags,
            sd.imbalance_pct as u64,
            sd.imb_numa_nr,
        ) {
            Some((mt, imb)) => {
                env.migration_type = mt;
                env.imbalance = imb;
                if imb != 0 {
                    return Some(sds);
                }
                None
            }
            None => {
                env.imbalance = 0;
                None
            }
        }
    }

    /// kernel: fair.c sched_balance_find_src_rq() @ v6.12 (find_busiest_queue).
    fn find_src_rq(&self, env: &LbEnv, sd: &SchedDomain, group: &SchedGroup) -> Option<usize> {
        let mut busiest = None;
        let (mut busiest_util, mut busiest_load, mut busiest_capacity, mut busiest_nr) =
            (0u64, 0u64, 1u64, 0u32);
        for i in group.span.and(&env.cpus).iter() {
            // (fbq_classify_rq: NUMA balancing is not modelled)
            let nr_running = self.lb_h_nr_running(i);
            if nr_running == 0 {
                continue;
            }
            let capacity = self.capacity_of(i);
            // don't pick a CPU that could lead to active balancing high -> low capacity
            if sd.flags & SD_ASYM_CPUCAPACITY != 0
                && !capacity_greater(self.capacity_of(env.dst_cpu), capacity)
                && nr_running == 1
            {
                continue;
            }
            match env.migration_type {
                MigrationType::Load => {
                    let load = self.cpu_load(i);
                    if nr_running == 1
                        && load as i64 > env.imbalance
                        && !self.check_cpu_capacity(i, sd)
                    {
                        continue;
                    }
                    // max(load_i / capacity_i), cross-multiplied
                    if load * busiest_capacity > busiest_load * capacity {
                        busiest_load = load;
                        busiest_capacity = capacity;
                        busiest = Some(i);
                    }
                }
                MigrationType::Util => {
                    let util = self.cpu_util_cfs_boost(i);
                    if nr_running <= 1 {
                        continue;
                    }
                    if busiest_util < util {
                        busiest_util = util;
                        busiest = Some(i);
                    }
                }
                MigrationType::Task => {
                    if busiest_nr < nr_running {
                        busiest_nr = nr_running;
                        busiest = Some(i);
                    }
                }
                MigrationType::Misfit => {
                    let m = self.lb.misfit_task_load[i];
                    if m > busiest_load {
                        busiest_load = m;
                        busiest = Some(i);
                    }
                }
            }
        }
        busiest
    }

    /// `rq->cfs_tasks` of `cpu`, head (most recently enqueued or picked) first. See the module
    /// docs: the order is derived from `last_queued` / `exec_start` and the balancer's
    /// rotations; ties go to the lower task id as the older.
    fn cfs_tasks(&self, cpu: usize) -> VecDeque<TaskId> {
        let mut out: Vec<TaskId> = Vec::new();
        let mut stack = vec![self.rqs[cpu].cfs];
        while let Some(c) = stack.pop() {
            let cfs = &self.cfs[c.index()];
            let mut ents = tree::in_order(&self.se, cfs.root);
            if let Some(cu) = cfs.curr {
                if self.se[cu.index()].on_rq {
                    ents.push(cu);
                }
            }
            for se in ents {
                if let Some(t) = self.se[se.index()].task {
                    out.push(t);
                } else if let Some(q) = self.se[se.index()].my_q {
                    stack.push(q);
                }
            }
        }
        let key = |t: TaskId| -> ((u64, u64), usize) {
            let task = &self.tasks[t.index()];
            let nat = task
                .stats
                .last_queued
                .unwrap_or(self.se[task.se.index()].exec_start);
            let rot = self.lb.list_rot.get(t.index()).copied().unwrap_or((0, 0));
            ((nat, 0).max(rot), t.index())
        };
        // each key computed once; keys are unique (they end in the task id), so an unstable
        // sort gives the order the stable one did
        let mut keyed: Vec<(((u64, u64), usize), TaskId)> =
            out.into_iter().map(|t| (key(t), t)).collect();
        keyed.sort_unstable_by_key(|&(k, _)| std::cmp::Reverse(k));
        keyed.into_iter().map(|(_, t)| t).collect()
    }

    /// `list_move(&p->se.group_node, tasks)`: the balancer moves `p` to the list head.
    fn rotate_to_head(&mut self, p: TaskId) {
        if self.lb.list_rot.len() <= p.index() {
            self.lb
                .list_rot
                .resize(self.tasks.len().max(p.index() + 1), (0, 0));
        }
        self.lb.rot_seq += 1;
        self.lb.list_rot[p.index()] = (self.now, self.lb.rot_seq);
    }

    /// `task_on_cpu()`: `p` runs on `cpu` (the current task of a CPU whose stopper runs has
    /// been switched out).
    fn task_on_cpu(&self, cpu: usize, p: TaskId) -> bool {
        self.rqs[cpu].curr == p && self.lb.stopper_running != Some(cpu)
    }

    /// kernel: fair.c task_is_ineligible_on_dst_cpu() @ v6.14 (873199d27bb2)
    fn task_is_ineligible_on_dst_cpu(&self, p: TaskId, dst: usize) -> bool {
        let t = &self.tasks[p.index()];
        let dst_cfs = self.tgs[t.tg.index()].cfs_rq[dst];
        let se = t.se;
        self.cfg.feat(F::PLACE_LAG)
            && self.cfs[dst_cfs.index()].nr_queued != 0
            && !self.entity_eligible(self.se[se.index()].cfs_rq, se)
    }

    /// kernel: fair.c task_hot() @ v6.12 (smp.md §4.3.8).
    /// Deviation: a zeroed `exec_start` (never ran, or just migrated) counts as long ago; the
    /// kernel's `rq_clock_task` is far past the migration cost after boot, the simulated clock
    /// starts at 0.
    fn task_hot(&self, p: TaskId, env: &LbEnv, sd: &SchedDomain) -> bool {
        let t = &self.tasks[p.index()];
        if t.class != SchedClass::Fair || t.policy == Policy::Idle {
            return false;
        }
        // SMT siblings share cache
        if sd.flags & SD_SHARE_CPUCAPACITY != 0 {
            return false;
        }
        let se = t.se;
        let e = &self.se[se.index()];
        // buddy candidates are cache hot (the last buddy exists only in the CFS class of
        // v6.5; EEVDF kernels never set it)
        let c = &self.cfs[e.cfs_rq.index()];
        if self.cfg.feat(F::CACHE_HOT_BUDDY)
            && self.rqs[env.dst_cpu].nr_running > 0
            && (c.next == Some(se) || c.last == Some(se))
        {
            return true;
        }
        let mc = self.cfg.sysctl.migration_cost_ns;
        if mc == 0 || e.exec_start == 0 {
            return false;
        }
        // rq_clock_task(src) - exec_start < sysctl_sched_migration_cost
        (self.now as i64 - e.exec_start as i64) < mc as i64
    }

    /// kernel: fair.c can_migrate_task() @ v6.14 (61b82dfb6b7e, 873199d27bb2 switchable).
    fn can_migrate_task(&mut self, p: TaskId, env: &mut LbEnv, sd: &SchedDomain) -> bool {
        let se = self.tasks[p.index()].se;
        let failed = self.lb.sd[env.sd_cpu][env.level].nr_balance_failed;
        // 1) delayed tasks only when migrating load (v6.14+)
        if self.cfg.has(P::LbSkipDelayed)
            && self.se[se.index()].sched_delayed
            && env.migration_type != MigrationType::Load
        {
            return false;
        }
        // 2) throttled_lb_pair(): the task's group is throttled on either CPU (until
        // 5b726e9bf954, v6.18: with task-based throttling a task below a throttle is queued
        // only while it runs in the kernel, and may move)
        let tg = self.tasks[p.index()].tg;
        if self.cfs_bandwidth_used() && !self.cfg.has(P::NoThrottledLbPair) {
            let (src, dst) = (
                self.tgs[tg.index()].cfs_rq[env.src_cpu],
                self.tgs[tg.index()].cfs_rq[env.dst_cpu],
            );
            if self.throttled_hierarchy(src) || self.throttled_hierarchy(dst) {
                return false;
            }
        }
        // ineligible tasks only after a failed pass (v6.14+)
        if self.cfg.has(P::LbEligibleFirst)
            && failed == 0
            && self.task_is_ineligible_on_dst_cpu(p, env.dst_cpu)
        {
            return false;
        }
        let t = &self.tasks[p.index()];
        // per-CPU kthreads are where they are for a reason
        if t.kthread && t.nr_cpus_allowed == 1 {
            return false;
        }
        if !t.cpus_allowed.contains(env.dst_cpu) {
            env.flags |= LBF_SOME_PINNED;
            if env.idle == CpuIdleType::NewlyIdle
                || env.flags & (LBF_DST_PINNED | LBF_ACTIVE_LB) != 0
            {
                return false;
            }
            // remember a CPU of our group the task may run on
            let alt = env.dst_grpmask.and(&env.cpus).and(&t.cpus_allowed).first();
            if let Some(c) = alt {
                env.flags |= LBF_DST_PINNED;
                env.new_dst_cpu = c;
            }
            return false;
        }
        // at least one task could run on dst
        env.flags &= !LBF_ALL_PINNED;
        if self.task_on_cpu(env.src_cpu, p) {
            return false;
        }
        if env.flags & LBF_ACTIVE_LB != 0 {
            return true;
        }
        // (migrate_degrades_locality: NUMA balancing is not modelled)
        let hot = self.task_hot(p, env, sd);
        if !hot || failed > sd.cache_nice_tries {
            if hot {
                self.stats.lb_forced_migrations += 1;
            }
            return true;
        }
        false
    }

    /// Moves `p` from `src` to `dst` (`detach_task()` + `attach_task()`). The stopper may move
    /// the task it has just switched out, which is still `rq->curr` until the context switch.
    fn lb_move_task(&mut self, src: usize, dst: usize, p: TaskId) {
        self.stats.lb_migrations += 1;
        self.lb.last_moved = Some((p, dst));
        self.move_queued_task(src, dst, p);
    }

    /// kernel: fair.c detach_tasks() @ v6.12 (+ attach_tasks(): tasks are moved at once).
    /// Returns the number of tasks moved.
    fn detach_tasks(&mut self, env: &mut LbEnv, sd: &SchedDomain) -> u32 {
        let src = env.src_cpu;
        if self.rqs[src].nr_running <= 1 {
            env.flags &= !LBF_ALL_PINNED;
            return 0;
        }
        if env.imbalance <= 0 {
            return 0;
        }
        let line = self.line_cost(env.dst_cpu, src);
        self.lb.cost_acc += LB_LINES_LOCK * line;
        let preemption = kernel_preemptible(self.preempt);
        let brk = self.nr_migrate_break();
        let mut tasks = self.cfs_tasks(src);
        let mut detached = 0u32;
        while let Some(&p) = tasks.back() {
            // don't steal everything
            if env.idle.is_idle() && self.rqs[src].nr_running <= 1 {
                break;
            }
            env.loop_ += 1;
            if env.loop_ > env.loop_max {
                break;
            }
            if env.loop_ > env.loop_break {
                env.loop_break += brk;
                env.flags |= LBF_NEED_BREAK;
                break;
            }
            tasks.pop_back();
            self.lb.cost_acc += line;
            let failed = self.lb.sd[env.sd_cpu][env.level].nr_balance_failed;
            let mut ok = self.can_migrate_task(p, env, sd);
            if ok {
                match env.migration_type {
                    MigrationType::Load => {
                        // task_h_load() can be 0; make sure the imbalance decreases
                        let load = self.task_h_load(p).max(1);
                        if (self.cfg.feat(F::LB_MIN) && load < 16 && failed == 0)
                            || shr_bound(load, failed) > env.imbalance as u64
                        {
                            ok = false;
                        } else {
                            env.imbalance -= load as i64;
                        }
                    }
                    MigrationType::Util => {
                        let util = self.task_util_est(p);
                        if shr_bound(util, failed) > env.imbalance as u64 {
                            ok = false;
                        } else {
                            env.imbalance -= util as i64;
                        }
                    }
                    MigrationType::Task => env.imbalance -= 1,
                    MigrationType::Misfit => {
                        if self.task_fits_cpu(p, src) {
                            ok = false;
                        } else {
                            env.imbalance = 0;
                        }
                    }
                }
            }
            if !ok {
                tasks.push_front(p);
                self.rotate_to_head(p);
                continue;
            }
            self.lb_move_task(src, env.dst_cpu, p);
            self.lb.cost_acc += LB_LINES_PER_MIGRATION * line;
            detached += 1;
            // NEWIDLE balancing is a source of latency: preemptible kernels stop at one task.
            // Deviation: CONFIG_PREEMPTION is taken from the preemption model in use.
            if preemption && env.idle == CpuIdleType::NewlyIdle {
                break;
            }
            if env.imbalance <= 0 {
                break;
            }
        }
        self.lb.sd[env.sd_cpu][env.level].lb_gained[env.idle.idx()] += detached as u64;
        detached
    }

    /// kernel: fair.c need_active_balance() @ v6.12 (asym packing not modelled).
    fn need_active_balance(&self, env: &LbEnv, sd: &SchedDomain) -> bool {
        let failed = self.lb.sd[env.sd_cpu][env.level].nr_balance_failed;
        // imbalanced_active_balance()
        if env.migration_type == MigrationType::Task && failed > sd.cache_nice_tries + 2 {
            return true;
        }
        // dst idle, src has one fair task on a CPU of reduced capacity
        if env.idle.is_idle()
            && self.lb_h_nr_running(env.src_cpu) == 1
            && self.check_cpu_capacity(env.src_cpu, sd)
            && self.capacity_of(env.src_cpu) * (sd.imbalance_pct as u64)
                < self.capacity_of(env.dst_cpu) * 100
        {
            return true;
        }
        env.migration_type == MigrationType::Misfit
    }

    /// `stop_one_cpu_nowait()`: queue the stopper work on `cpu` and make it reschedule.
    fn stop_one_cpu_nowait(&mut self, cpu: usize) {
        self.resched_curr(cpu);
        // resched_curr() sends no IPI when a reschedule is already pending; the stopper's
        // wakeup still interrupts the CPU
        if self.executing != Some(cpu) && !self.rqs[cpu].ipi_pending {
            let lat = self.cost(cpu, |c| c.lat_ipi.0);
            self.schedule_ipi(cpu, lat);
        }
    }

    /// kernel: fair.c sched_balance_rq() @ v6.12 (load_balance) — balance `this_cpu`'s domain
    /// `level`; returns the number of tasks moved.
    pub(crate) fn sched_balance_rq(
        &mut self,
        this_cpu: usize,
        level: usize,
        idle: CpuIdleType,
        continue_balancing: &mut bool,
    ) -> u32 {
        let topo = self.lb_topo();
        let doms = &topo.per_cpu[this_cpu].domains;
        let Some(sd) = doms.get(level) else {
            return 0;
        };
        let at_rd = level + 1 == doms.len();
        let parent_sgc = doms.get(level + 1).map(|p| p.groups[0].sgc);
        self.lb.sd[this_cpu][level].lb_count[idle.idx()] += 1;
        let brk = self.nr_migrate_break();
        let mut env = LbEnv::new(this_cpu, level, sd, idle, brk);
        enum Out {
            Balanced,
            AllPinned,
            OnePinned,
        }
        let out = 'redo: loop {
            if !self.should_we_balance(&env, sd) {
                *continue_balancing = false;
                break Out::Balanced;
            }
            let Some(sds) = self.find_src_group(&mut env, sd, at_rd) else {
                break Out::Balanced;
            };
            let Some(gi) = sds.busiest else {
                break Out::Balanced;
            };
            let Some(busiest) = self.find_src_rq(&env, sd, &sd.groups[gi]) else {
                break Out::Balanced;
            };
            self.sched_warn_on(busiest == env.dst_cpu, "sched_balance_rq: busiest is dst");
            let computed_imbalance = env.imbalance;
            env.src_cpu = busiest;
            let mut ld_moved = 0u32;
            // cleared as soon as a pullable task is found
            env.flags |= LBF_ALL_PINNED;
            if self.rqs[busiest].nr_running > 1 {
                env.loop_max = self.sysctl_nr_migrate().min(self.rqs[busiest].nr_running);
                loop {
                    ld_moved += self.detach_tasks(&mut env, sd);
                    if env.flags & LBF_NEED_BREAK != 0 {
                        env.flags &= !LBF_NEED_BREAK;
                        continue;
                    }
                    // revisit affine tasks with an alternative dst in our group
                    if env.flags & LBF_DST_PINNED != 0 && env.imbalance > 0 {
                        env.cpus.clear(env.dst_cpu);
                        env.dst_cpu = env.new_dst_cpu;
                        env.flags &= !LBF_DST_PINNED;
                        env.loop_ = 0;
                        env.loop_break = brk;
                        continue;
                    }
                    break;
                }
                // affinity left an imbalance: tell the parent level
                if let Some(psgc) = parent_sgc {
                    if env.flags & LBF_SOME_PINNED != 0 && env.imbalance > 0 {
                        self.lb.sgc_imbalance[psgc] = true;
                    }
                }
                if env.flags & LBF_ALL_PINNED != 0 {
                    env.cpus.clear(busiest);
                    if !env.cpus.is_subset_of(&env.dst_grpmask) {
                        env.loop_ = 0;
                        env.loop_break = brk;
                        continue 'redo;
                    }
                    break Out::AllPinned;
                }
            }
            let mut active_balance = false;
            if ld_moved == 0 {
                self.lb.sd[this_cpu][level].lb_failed[idle.idx()] += 1;
                // only periodic balance counts failures (and, from 58eeb2d79b54, v6.10, not
                // misfit migrations)
                let misfit_exempt =
                    self.cfg.has(P::MisfitNoBackoff) && env.migration_type == MigrationType::Misfit;
                if idle != CpuIdleType::NewlyIdle && !misfit_exempt {
                    self.lb.sd[this_cpu][level].nr_balance_failed += 1;
                }
                if self.need_active_balance(&env, sd) {
                    let curr = self.rqs[busiest].curr;
                    if !self.tasks[curr.index()].cpus_allowed.contains(this_cpu) {
                        self.record_lb(this_cpu, level, &env, computed_imbalance, busiest, 0);
                        break Out::OnePinned;
                    }
                    env.flags &= !LBF_ALL_PINNED;
                    if self.lb.active_balance[busiest].is_none() {
                        self.lb.active_balance[busiest] = Some(this_cpu);
                        active_balance = true;
                    }
                    if active_balance {
                        self.stop_one_cpu_nowait(busiest);
                    }
                }
            } else {
                self.lb.sd[this_cpu][level].nr_balance_failed = 0;
            }
            if !active_balance || self.need_active_balance(&env, sd) {
                // we were unbalanced: reset the balancing interval
                self.lb.sd[this_cpu][level].balance_interval = sd.min_interval.max(1);
            }
            self.record_lb(this_cpu, level, &env, computed_imbalance, busiest, ld_moved);
            return ld_moved;
        };
        match out {
            Out::Balanced => {
                // clear the imbalance flag only if other tasks got a chance to move
                if let Some(psgc) = parent_sgc {
                    if env.flags & LBF_ALL_PINNED == 0 {
                        self.lb.sgc_imbalance[psgc] = false;
                    }
                }
                self.lb.sd[this_cpu][level].nr_balance_failed = 0;
            }
            Out::AllPinned => self.lb.sd[this_cpu][level].nr_balance_failed = 0,
            Out::OnePinned => {}
        }
        // newidle disregards intervals, and misfit migration is not an imbalance: don't back off
        // (the misfit exemption is 58eeb2d79b54, v6.10)
        if idle == CpuIdleType::NewlyIdle
            || (self.cfg.has(P::MisfitNoBackoff) && env.migration_type == MigrationType::Misfit)
        {
            return 0;
        }
        let s = &mut self.lb.sd[this_cpu][level];
        if (env.flags & LBF_ALL_PINNED != 0 && s.balance_interval < MAX_PINNED_INTERVAL)
            || s.balance_interval < sd.max_interval
        {
            s.balance_interval *= 2;
        }
        0
    }

    fn record_lb(
        &mut self,
        cpu: usize,
        level: usize,
        env: &LbEnv,
        imbalance: i64,
        busiest: usize,
        moved: u32,
    ) {
        self.lb.last_lb = Some(LbRecord {
            cpu,
            level,
            idle: env.idle,
            migration_type: env.migration_type,
            imbalance,
            busiest,
            moved,
        });
    }

    // ============================================================================ active balance

    /// kernel: fair.c active_load_balance_cpu_stop() @ v6.12 — on the busiest CPU, move one
    /// task to `push_cpu` ignoring cache hotness.
    pub(crate) fn active_load_balance_cpu_stop(&mut self, busiest: usize) {
        let Some(target) = self.lb.active_balance[busiest].take() else {
            return;
        };
        // Is there any task to move? (the stopper is not counted in this model)
        if self.rqs[busiest].nr_running == 0 || target == busiest {
            return;
        }
        let topo = self.lb_topo();
        let doms = &topo.per_cpu[target].domains;
        let Some(level) = doms.iter().position(|d| d.span.contains(busiest)) else {
            return;
        };
        let sd = &doms[level];
        let mut env = LbEnv::new(
            target,
            level,
            sd,
            CpuIdleType::Idle,
            self.nr_migrate_break(),
        );
        env.src_cpu = busiest;
        env.flags = LBF_ACTIVE_LB;
        // detach_one_task(): the first migratable task from the tail
        let tasks = self.cfs_tasks(busiest);
        for &p in tasks.iter().rev() {
            if !self.can_migrate_task(p, &mut env, sd) {
                continue;
            }
            self.lb_move_task(busiest, target, p);
            self.stats.lb_active_migrations += 1;
            let s = &mut self.lb.sd[target][level];
            s.lb_gained[CpuIdleType::Idle.idx()] += 1;
            // active balancing done: reset the failure counter
            s.nr_balance_failed = 0;
            return;
        }
    }

    // ============================================================================ newidle

    /// kernel: fair.c update_newidle_stats() @ v6.19 / v7.1 (smp.md §4.5
    /// record_newidle_attempt).
    pub(crate) fn update_newidle_stats(&mut self, cpu: usize, level: usize, success: u32) {
        let rate_patch = self.cfg.has(P::NiRate);
        let ni_rate = self.cfg.feat(F::NI_RATE);
        let now = self.now;
        let sd = &mut self.lb.sd[cpu][level];
        sd.newidle_call += 1;
        sd.newidle_success = sd.newidle_success.saturating_add(success);
        if sd.newidle_call >= 1024 {
            let mut ratio: u64 = 0;
            if rate_patch {
                let dt = now.saturating_sub(sd.newidle_stamp);
                sd.newidle_stamp = now;
                if ni_rate {
                    // ns -> ~4.19 ms units: 1024 attempts over 4.3 s add 1024
                    ratio = dt >> 22;
                }
            }
            ratio += sd.newidle_success as u64;
            sd.newidle_ratio = if rate_patch {
                ratio.min(1024) as u32
            } else {
                ratio.min(u32::MAX as u64) as u32
            };
            sd.newidle_call /= 2;
            sd.newidle_success /= 2;
        }
    }

    /// kernel: fair.c update_newidle_cost() @ v6.12 / v6.17 (155213a2aed4 cap) / v6.19
    /// (stats) — track the maximum newidle cost of a domain and decay it by ~1 %/s. Returns
    /// whether it decayed.
    pub(crate) fn update_newidle_cost(
        &mut self,
        cpu: usize,
        level: usize,
        cost: u64,
        success: u32,
    ) -> bool {
        if self.cfg.has(P::NiRandom) && cost != 0 {
            self.update_newidle_stats(cpu, level, success);
        }
        let cap = (self.cfg.has(P::NewidleCostBump) && !self.cfg.has(P::NewidleBumpRevert))
            .then_some(self.cfg.sysctl.migration_cost_ns + 200);
        let now = self.jiffies();
        let hz = self.hz as u64;
        let sd = &mut self.lb.sd[cpu][level];
        if cost > sd.max_newidle_lb_cost {
            sd.max_newidle_lb_cost = match cap {
                Some(c) => cost.min(c),
                None => cost,
            };
            sd.last_decay_max_lb_cost = now;
        } else if now > sd.last_decay_max_lb_cost + hz {
            sd.max_newidle_lb_cost = sd.max_newidle_lb_cost * 253 / 256;
            sd.last_decay_max_lb_cost = now;
            return true;
        }
        false
    }

    /// kernel: fair.c update_next_balance() @ v6.12 (idle intervals).
    fn update_next_balance(&self, cpu: usize, level: usize, sd: &SchedDomain, next: &mut u64) {
        let interval = self.get_sd_balance_interval(cpu, level, false, sd);
        let n = self.lb.sd[cpu][level].last_balance + interval;
        if *next > n {
            *next = n;
        }
    }

    /// kernel: fair.c sched_balance_newidle() @ v6.12 … v7.1 (smp.md §4.5) — called by the
    /// pick when the fair class is empty; returns the number of tasks pulled.
    pub(crate) fn sched_balance_newidle(&mut self, cpu: usize) -> u32 {
        if cpu >= self.lb.sd.len() {
            return 0;
        }
        let now_j = self.jiffies();
        let mut next_balance = now_j + self.hz as u64;
        let mut continue_balancing = true;
        let mut pulled: u32 = 0;
        let mut charge = 0u64;
        self.lb.last_moved = None;
        self.update_misfit_status(None, cpu);
        // a task is waiting to be enqueued: no need to search for one
        if self.rqs[cpu].ttwu_pending {
            return 0;
        }
        // idle time starts now
        self.rqs[cpu].idle_stamp = self.now;
        let topo = self.lb_topo();
        let doms = &topo.per_cpu[cpu].domains;
        let rd = self.lb.rd_of[cpu];
        let overloaded = self.lb.rd_overloaded[rd];
        let avg_idle = self.rqs[cpu].avg_idle;
        // gate 1
        if !overloaded || (!doms.is_empty() && avg_idle < self.lb.sd[cpu][0].max_newidle_lb_cost) {
            if let Some(sd) = doms.first() {
                self.update_next_balance(cpu, 0, sd, &mut next_balance);
            }
        } else {
            self.stats.newidle_balances += 1;
            self.lb.cost_acc = 0;
            // t0 is taken before the blocked-load update in every version: before v7.0 the
            // update re-takes this rq's lock that was just dropped (sched_balance_newidle(),
            // v6.6..v6.19: unlock; t0 = sched_clock_cpu(); update_blocked_averages()), and
            // 45e09225085f keeps the lock instead. The lock bounce (two uncontended atomics)
            // is therefore the measured difference.
            // Deviation (from the smp.md §4.5 wording "earlier: outside the window"): follows
            // the kernel source, where the update was inside the window already.
            if !self.cfg.has(P::NewidleLockBounce) {
                self.lb.cost_acc += 2 * self.costs[cpu].c_atomic.0;
            }
            let mut t0 = 0u64;
            self.sched_balance_update_blocked_averages(cpu);
            let mut curr_cost = 0u64;
            let ni_random = self.cfg.feat(F::NI_RANDOM);
            let skip_dice_at_full = self.cfg.has(P::NiRate);
            let bump = self.cfg.has(P::NewidleCostBump) && !self.cfg.has(P::NewidleBumpRevert);
            for (level, sd) in doms.iter().enumerate() {
                self.update_next_balance(cpu, level, sd, &mut next_balance);
                // gate 2
                if self.rqs[cpu].avg_idle < curr_cost + self.lb.sd[cpu][level].max_newidle_lb_cost {
                    break;
                }
                if sd.has(SD_BALANCE_NEWIDLE) {
                    let mut weight = 1u32;
                    let ratio = self.lb.sd[cpu][level].newidle_ratio;
                    if ni_random && !(skip_dice_at_full && ratio >= 1024) {
                        let d1k = self.cpu_rng[cpu].next_u32() % 1024;
                        match ni_random_dice(d1k, ratio) {
                            Some(w) => weight = w,
                            None => {
                                self.update_newidle_stats(cpu, level, 0);
                                continue;
                            }
                        }
                    }
                    pulled = self.sched_balance_rq(
                        cpu,
                        level,
                        CpuIdleType::NewlyIdle,
                        &mut continue_balancing,
                    );
                    let t1 = self.lb.cost_acc;
                    let mut domain_cost = t1.saturating_sub(t0).max(1);
                    curr_cost += domain_cost;
                    self.stats.paths.newidle_passes += 1;
                    t0 = t1;
                    if bump && pulled == 0 {
                        // v6.17-v6.18: a failing newidle balance is not effective
                        domain_cost = 3 * self.lb.sd[cpu][level].max_newidle_lb_cost / 2;
                    }
                    let success = if pulled > 0 { weight } else { 0 };
                    self.update_newidle_cost(cpu, level, domain_cost, success);
                }
                if pulled > 0 || !continue_balancing {
                    break;
                }
            }
            charge = self.take_lb_cost();
            self.stats.paths.newidle_cost_ns += charge;
            if curr_cost > self.rqs[cpu].max_idle_balance_cost {
                self.rqs[cpu].max_idle_balance_cost = curr_cost;
            }
            // a fair task appeared meanwhile: we are not going idle
            if self.cfs[self.rqs[cpu].cfs.index()].h_nr_queued > 0 && pulled == 0 {
                pulled = 1;
            }
        }
        // out:
        if self.rqs[cpu].next_balance > next_balance {
            self.rqs[cpu].next_balance = next_balance;
        }
        if pulled > 0 {
            self.rqs[cpu].idle_stamp = 0;
            self.stats.newidle_pulls += pulled as u64;
            // __schedule() clears need_resched after the pick: an attach's preemption request
            // on this CPU is consumed by the switch to the pulled task
            self.rqs[cpu].resched = Resched::None;
            self.charge_newidle(cpu, charge);
        } else {
            self.nohz_newidle_balance(cpu);
            self.nohz_balance_enter_idle(cpu);
        }
        pulled
    }

    /// The newidle pass ran inside `schedule()` before the pulled task runs: charge its time
    /// as a non-preemptible part of the switch, on the task pulled last (the only one under
    /// CONFIG_PREEMPTION; otherwise an approximation, as the pick may choose another one).
    fn charge_newidle(&mut self, cpu: usize, cost: u64) {
        let Some((t, dst)) = self.lb.last_moved else {
            return;
        };
        if cost == 0 || dst != cpu || self.tasks[t.index()].cpu != cpu {
            return;
        }
        if self.se[self.tasks[t.index()].se.index()].sched_delayed {
            return; // it will not run before it is woken
        }
        self.stats.paths.newidle_charged += 1;
        self.stats.paths.newidle_charged_ns += cost;
        self.tasks[t.index()].exec.segs.push(Seg {
            rem: cost,
            mode: Mode::NoPreempt,
            kind: SegKind::SwitchIn,
            until: None,
        });
    }

    // ============================================================================ nohz

    /// kernel: fair.c set_cpu_sd_state_idle() @ v6.12
    fn set_cpu_sd_state_idle(&mut self, cpu: usize) {
        let Some(s) = self.lb.topo.per_cpu[cpu].sd_llc_shared else {
            return;
        };
        if self.lb.sd_llc_nohz_idle[cpu] {
            return;
        }
        self.lb.sd_llc_nohz_idle[cpu] = true;
        self.lb.nr_busy_cpus[s] = self.lb.nr_busy_cpus[s].saturating_sub(1);
    }

    /// kernel: fair.c set_cpu_sd_state_busy() @ v6.12
    fn set_cpu_sd_state_busy(&mut self, cpu: usize) {
        let Some(s) = self.lb.topo.per_cpu[cpu].sd_llc_shared else {
            return;
        };
        if !self.lb.sd_llc_nohz_idle[cpu] {
            return;
        }
        self.lb.sd_llc_nohz_idle[cpu] = false;
        self.lb.nr_busy_cpus[s] += 1;
    }

    /// kernel: fair.c nohz_balance_enter_idle() @ v6.12 — the CPU stops its tick in idle.
    pub(crate) fn nohz_balance_enter_idle(&mut self, cpu: usize) {
        if !self.has_domains(cpu) {
            return;
        }
        self.lb.has_blocked_load[cpu] = true;
        if !self.lb.nohz_tick_stopped[cpu] {
            self.lb.nohz_tick_stopped[cpu] = true;
            self.lb.nohz_idle_cpus.set(cpu);
            self.set_cpu_sd_state_idle(cpu);
            self.lb.nohz_needs_update = true;
        }
        // each idle entry may leave blocked load
        self.lb.nohz_has_blocked = true;
    }

    /// kernel: fair.c nohz_balance_exit_idle() @ v6.12 — at the first busy tick.
    fn nohz_balance_exit_idle(&mut self, cpu: usize) {
        if !self.lb.nohz_tick_stopped[cpu] {
            return;
        }
        self.lb.nohz_tick_stopped[cpu] = false;
        self.lb.nohz_idle_cpus.clear(cpu);
        self.set_cpu_sd_state_busy(cpu);
    }

    /// CPUs that are idle but have not been seen entering idle (they went idle without a
    /// failed newidle pass, e.g. at boot) stop their tick now.
    fn nohz_sync_idle(&mut self) {
        for c in 0..self.ncpus {
            if !self.lb.nohz_tick_stopped[c] && self.cpu_is_idle(c) && self.rqs[c].nr_running == 0 {
                self.nohz_balance_enter_idle(c);
            }
        }
    }

    /// kernel: fair.c nohz_balancer_kick() @ v6.12 (v7.0 ordering, smp.md §4.6) — on each tick
    /// of a busy CPU: kick an idle CPU to balance on behalf of the tickless ones.
    pub(crate) fn nohz_balancer_kick(&mut self, cpu: usize) {
        if !self.has_domains(cpu) {
            return;
        }
        let now = self.jiffies();
        self.nohz_balance_exit_idle(cpu);
        self.nohz_sync_idle();
        // no CPU is tickless: nothing to do
        if self.lb.nohz_idle_cpus.is_empty() {
            return;
        }
        let mut flags = 0u32;
        if self.lb.nohz_has_blocked && now > self.lb.nohz_next_blocked {
            flags = NOHZ_STATS_KICK;
        }
        if now >= self.lb.nohz_next_balance {
            let topo = self.lb_topo();
            let pc = &topo.per_cpu[cpu];
            let kick = 'k: {
                // delayed tasks count here (smp.md §3.3)
                if self.rqs[cpu].nr_running >= 2 {
                    break 'k true;
                }
                if let Some(sd) = pc.domains.first() {
                    if self.lb_h_nr_running(cpu) >= 1 && self.check_cpu_capacity(cpu, sd) {
                        break 'k true;
                    }
                }
                // (sd_asym_packing: not modelled)
                if let Some(l) = pc.sd_asym_cpucapacity {
                    // embrace asymmetry: only a misfit task matters, skip the LLC test
                    break 'k self.check_misfit_status(cpu, &pc.domains[l]);
                }
                if let Some(s) = pc.sd_llc_shared {
                    if self.lb.nr_busy_cpus[s] > 1 {
                        break 'k true;
                    }
                }
                false
            };
            if kick {
                flags = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
            }
        }
        if self.lb.nohz_needs_update {
            flags |= NOHZ_NEXT_KICK;
        }
        if flags != 0 {
            self.kick_ilb(cpu, flags);
        }
    }

    /// kernel: fair.c find_new_ilb() @ v6.12
    fn find_new_ilb(&self, this_cpu: usize) -> Option<usize> {
        self.lb
            .nohz_idle_cpus
            .and(&self.lb.topo.cpu_map)
            .iter()
            .find(|&c| c != this_cpu && self.idle_cpu(c))
    }

    /// kernel: fair.c kick_ilb() @ v6.12
    fn kick_ilb(&mut self, this_cpu: usize, flags: u32) {
        if flags & NOHZ_BALANCE_KICK != 0 {
            self.lb.nohz_next_balance = self.jiffies() + 1;
        }
        let Some(ilb) = self.find_new_ilb(this_cpu) else {
            return;
        };
        // nothing new for the ilb CPU
        if self.lb.nohz_flags[ilb] & flags == flags {
            return;
        }
        let old = self.lb.nohz_flags[ilb];
        self.lb.nohz_flags[ilb] |= flags;
        if old & NOHZ_KICK_MASK != 0 {
            return;
        }
        self.stats.nohz_kicks += 1;
        let polling = self.cpu_is_idle(ilb) && self.idle_exit_latency(ilb).1;
        let lat = if polling {
            0
        } else {
            self.cost(ilb, |c| c.lat_ipi.0)
        };
        self.schedule_ipi(ilb, lat);
    }

    /// kernel: fair.c update_nohz_stats() @ v6.12
    fn update_nohz_stats(&mut self, cpu: usize) -> bool {
        if !self.lb.has_blocked_load[cpu] || !self.lb.nohz_idle_cpus.contains(cpu) {
            return false;
        }
        if self.jiffies() <= self.lb.last_blocked_load_update_tick[cpu] {
            return true;
        }
        self.sched_balance_update_blocked_averages(cpu);
        self.lb.has_blocked_load[cpu]
    }

    /// kernel: fair.c _nohz_idle_balance() @ v6.12 — on an idle CPU, for each tickless idle
    /// CPU (starting after this one, ending with it): update blocked load (STATS) and run its
    /// due periodic balance on its behalf (BALANCE).
    pub(crate) fn _nohz_idle_balance(&mut self, this_cpu: usize, flags: u32) {
        let now = self.jiffies();
        let mut next_balance = now + 60 * self.hz as u64;
        let mut update_next_balance = false;
        let mut has_blocked_load = false;
        // assume no idle load remains after this update (a CPU entering idle sets it again)
        if flags & NOHZ_STATS_KICK != 0 {
            self.lb.nohz_has_blocked = false;
        }
        if flags & NOHZ_NEXT_KICK != 0 {
            self.lb.nohz_needs_update = false;
        }
        let order: Vec<usize> = self.lb.nohz_idle_cpus.iter_wrap(this_cpu + 1).collect();
        let mut aborted = false;
        for bc in order {
            if !self.idle_cpu(bc) {
                continue;
            }
            // this CPU got work: stop balancing for the others
            if !self.idle_cpu(this_cpu) && self.need_resched(this_cpu) {
                if flags & NOHZ_STATS_KICK != 0 {
                    has_blocked_load = true;
                }
                if flags & NOHZ_NEXT_KICK != 0 {
                    self.lb.nohz_needs_update = true;
                }
                aborted = true;
                break;
            }
            if flags & NOHZ_STATS_KICK != 0 {
                self.lb.cost_acc += self.line_cost(this_cpu, bc);
                has_blocked_load |= self.update_nohz_stats(bc);
            }
            if now >= self.rqs[bc].next_balance && flags & NOHZ_BALANCE_KICK != 0 {
                self.sched_balance_domains(bc, CpuIdleType::Idle);
            }
            if next_balance > self.rqs[bc].next_balance {
                next_balance = self.rqs[bc].next_balance;
                update_next_balance = true;
            }
        }
        if !aborted {
            if update_next_balance {
                self.lb.nohz_next_balance = next_balance;
            }
            if flags & NOHZ_STATS_KICK != 0 {
                self.lb.nohz_next_blocked = now + self.msecs_to_jiffies(LOAD_AVG_PERIOD_MS);
            }
        }
        if has_blocked_load {
            self.lb.nohz_has_blocked = true;
        }
    }

    /// kernel: fair.c nohz_newidle_balance() @ v6.12 + nohz_run_idle_balance() — a CPU going
    /// idle for a while updates the stale blocked load of idle CPUs itself (stats only).
    fn nohz_newidle_balance(&mut self, cpu: usize) {
        if !self.has_domains(cpu) {
            return;
        }
        // will wake up very soon: no time for anything else
        if self.rqs[cpu].avg_idle < self.cfg.sysctl.migration_cost_ns {
            return;
        }
        if !self.lb.nohz_has_blocked || self.jiffies() < self.lb.nohz_next_blocked {
            return;
        }
        // NOHZ_NEWILB_KICK is acted on at idle entry only if no kick is pending
        if self.lb.nohz_flags[cpu] & NOHZ_KICK_MASK != 0 {
            return;
        }
        self._nohz_idle_balance(cpu, NOHZ_STATS_KICK);
        self.lb.cost_acc = 0;
    }
}

#[cfg(test)]
mod tests {
    //! smp.md §11 test vectors TV-11 … TV-16 at function level: machine states are set
    //! directly on the runqueue counters and PELT fields the balancer reads, tasks are queued
    //! without running any event.
    use super::*;
    use crate::presets::KernelConfig;
    use crate::syscalls::{Ctx, Op, Program, SysResult, TaskAttrs};
    use crate::MachineDesc;
    use schedlab_engine::Nanos;
    use schedlab_platform::Platform;

    struct Spin;
    impl Program for Spin {
        fn next(&mut self, _cx: &mut Ctx<'_>, _last: SysResult) -> Op {
            Op::Run(1_000_000)
        }
    }

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;

    /// A zero-cost machine from a TOML overlay on `smp:4` (HZ 250).
    fn machine(extra: &str) -> MachineDesc {
        let text = format!("extends = \"smp:4\"\nname = \"t\"\ndescription = \"t\"\n{extra}");
        let p = Platform::from_toml_str(&text, "t.toml").unwrap();
        let mut m = MachineDesc::from_platform(&p);
        let ideal = MachineDesc::ideal(m.ncpus, 250, PreemptModel::Full);
        m.preempt_default = PreemptModel::Full;
        m.costs = ideal.costs;
        m.idle_exit_ns = ideal.idle_exit_ns;
        m.idle_polling = ideal.idle_polling;
        m
    }

    fn kernel(spec: &str, m: MachineDesc) -> Kernel {
        let mut k = Kernel::new(KernelConfig::parse(spec).unwrap(), m, 1).unwrap();
        k.strict = true;
        k
    }

    /// Two LLCs of four CPUs: MC{4} below PKG{8} (not LLC-sharing).
    fn two_llc(spec: &str) -> Kernel {
        kernel(
            spec,
            machine("[topology]\ncpus = 8\nllc = [0, 0, 0, 0, 1, 1, 1, 1]\n"),
        )
    }

    /// Queues `n` fair tasks on `cpu` (started there as wakeups, then allowed everywhere).
    fn queue(k: &mut Kernel, cpu: usize, n: usize, policy: Policy) -> Vec<TaskId> {
        (0..n)
            .map(|i| {
                let attrs = TaskAttrs {
                    comm: Some(format!("c{cpu}t{i}")),
                    policy: Some(policy),
                    cpus: Some(CpuMask::single(cpu)),
                    ..Default::default()
                };
                let t = k.create_task(Box::new(Spin), &attrs, None, false);
                k.start_task_as_wakeup(t);
                assert_eq!(k.tasks[t.index()].cpu, cpu);
                k.tasks[t.index()].cpus_allowed = CpuMask::first_n(k.ncpus);
                k.tasks[t.index()].nr_cpus_allowed = k.ncpus as u32;
                t
            })
            .collect()
    }

    /// Fakes a busy CPU for the statistics: `nr` tasks (`runnable` of them not delayed) and
    /// root cfs_rq signals.
    fn fake_cpu(k: &mut Kernel, cpu: usize, nr: u32, runnable: u32, util: u64, run_avg: u64) {
        k.rqs[cpu].nr_running = nr;
        let c = &mut k.cfs[k.rqs[cpu].cfs.index()];
        c.h_nr_queued = nr;
        c.h_nr_runnable = runnable;
        c.avg.util_avg = util;
        c.avg.runnable_avg = run_avg;
        c.util_est = 0;
        k.update_idle_masks(cpu);
    }

    fn set_signals(k: &mut Kernel, cpu: usize, util: u64, run_avg: u64) {
        let c = &mut k.cfs[k.rqs[cpu].cfs.index()];
        c.avg.util_avg = util;
        c.avg.runnable_avg = run_avg;
        c.util_est = 0;
    }

    fn env(k: &Kernel, dst: usize, level: usize, idle: CpuIdleType, src: usize) -> LbEnv {
        let topo = k.lb_topo();
        let mut e = LbEnv::new(dst, level, &topo.per_cpu[dst].domains[level], idle, 32);
        e.src_cpu = src;
        e
    }

    #[test]
    fn tv11_classification_with_a_delayed_task() {
        // smp.md TV-11: 4 CPUs (capacity 4096), imbalance_pct 117, 4 running + 1 delayed,
        // group_util 3500.
        let base = SgLbStats {
            sum_nr_running: 5,
            group_weight: 4,
            group_capacity: 4096,
            group_util: 3500,
            ..Default::default()
        };
        // v6.12: runnable includes the delayed task: 4096·117 = 479 232 < 512 000 → overloaded
        let v612 = SgLbStats {
            group_runnable: 5120,
            ..base
        };
        assert_eq!(group_classify(117, &v612, false), GroupType::Overloaded);
        // v6.13+: runnable 4096: 409 600 < 409 500? no; has_capacity: 409 600 > 409 500
        let v613 = SgLbStats {
            group_runnable: 4096,
            ..base
        };
        assert!(!group_is_overloaded(117, &v613));
        assert_eq!(group_classify(117, &v613, false), GroupType::HasSpare);

        // The same state read by update_sg_lb_stats per version: group {0-3} seen from CPU4 at
        // PKG; CPU0 holds a running and a delayed task.
        for (spec, sum_h, runnable, expect) in [
            ("v6.12", 5, 1280, GroupType::Overloaded),
            ("v6.12+76f2f783294d", 5, 1024, GroupType::HasSpare), // v6.13
            ("v6.18", 4, 1024, GroupType::HasSpare),
        ] {
            let mut k = two_llc(spec);
            fake_cpu(&mut k, 0, 2, 1, 875, runnable);
            for c in 1..4 {
                fake_cpu(&mut k, c, 1, 1, 875, runnable);
            }
            let topo = k.lb_topo();
            let sd = &topo.per_cpu[4].domains[1];
            assert_eq!(sd.name, "PKG");
            let g = sd.groups.iter().find(|g| g.span.contains(0)).unwrap();
            let e = env(&k, 4, 1, CpuIdleType::NotIdle, 4);
            let (sgs, _, _) = k.update_sg_lb_stats(&e, sd, g, false, true);
            assert_eq!(
                sgs.sum_nr_running, 5,
                "{spec}: delayed tasks always in nr_running"
            );
            assert_eq!(sgs.sum_h_nr_running, sum_h, "{spec}");
            assert_eq!(sgs.group_util, 3500, "{spec}");
            assert_eq!(sgs.group_type, expect, "{spec}");
        }
    }

    #[test]
    fn tv12_migrate_util_at_pkg() {
        // smp.md TV-12: PKG{0..7}; A = {0..3} local, dst CPU0 idle, CPUs 1–3 one task each
        // (util 3072, nr 3); B = {4..7}: CPU4 three tasks, 5–7 one each (nr 6, util 4096,
        // runnable 6144). B overloaded, A has_spare → migrate_util, imbalance
        // max(4096, 3072) − 3072 = 1024; busiest rq CPU4; util_est 341 each: two tasks move
        // (1024 → 683 → 342), then CPU4 has one task left and dst is idle → stop.
        for spec in ["v6.12", "v6.18", "v7.1"] {
            let mut k = two_llc(spec);
            k.now = 10 * MS; // tasks never ran: cold
            let ts = queue(&mut k, 4, 3, Policy::Normal);
            for &t in &ts {
                let se = k.tasks[t.index()].se;
                k.se[se.index()].avg.util_avg = 341;
                k.se[se.index()].avg.util_est = 341;
            }
            set_signals(&mut k, 4, 1024, 3072);
            for c in [1, 2, 3, 5, 6, 7] {
                fake_cpu(&mut k, c, 1, 1, 1024, 1024);
            }
            let mut cont = true;
            let moved = k.sched_balance_rq(0, 1, CpuIdleType::Idle, &mut cont);
            let r = k.lb.last_lb.unwrap();
            assert_eq!(r.migration_type, MigrationType::Util, "{spec}");
            assert_eq!(r.imbalance, 1024, "{spec}");
            assert_eq!(r.busiest, 4, "{spec}");
            assert_eq!(moved, 2, "{spec}");
            assert_eq!(k.rqs[0].nr_running, 2, "{spec}");
            assert_eq!(k.rqs[4].nr_running, 1, "{spec}");
            assert_eq!(k.stats.lb_migrations, 2);
            assert!(k.invariant_errors().is_ok(), "{spec}");
        }
        // The pure rule on the same statistics.
        let mut sds = SdLbStats {
            busiest: Some(1),
            local: Some(0),
            busiest_stat: SgLbStats {
                sum_nr_running: 6,
                sum_h_nr_running: 6,
                group_weight: 4,
                group_capacity: 4096,
                group_util: 4096,
                group_runnable: 6144,
                group_type: GroupType::Overloaded,
                ..Default::default()
            },
            local_stat: SgLbStats {
                sum_nr_running: 3,
                sum_h_nr_running: 3,
                idle_cpus: 1,
                group_weight: 4,
                group_capacity: 4096,
                group_util: 3072,
                group_runnable: 3072,
                group_type: GroupType::HasSpare,
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(
            find_src_group_decide(CpuIdleType::Idle, &mut sds, 0, 117, 0),
            Some((MigrationType::Util, 1024))
        );
    }

    /// SMT{0,1}{2,3} below MC{0-3}; Q (and R) queued on `src`, CPU0 the destination.
    fn tv13_setup(spec: &str, src: usize, policy: Policy) -> (Kernel, TaskId) {
        let mut k = kernel(spec, machine("[topology]\ncpus = 4\ncore = [0, 0, 1, 1]\n"));
        k.now = 10 * MS;
        let ts = queue(&mut k, src, 2, policy);
        (k, ts[1])
    }

    fn can_migrate(k: &mut Kernel, q: TaskId, level: usize, src: usize, failed: u32) -> bool {
        k.lb.sd[0][level].nr_balance_failed = failed;
        let mut e = env(k, 0, level, CpuIdleType::Idle, src);
        let topo = k.lb_topo();
        let sd = &topo.per_cpu[0].domains[level];
        k.can_migrate_task(q, &mut e, sd)
    }

    #[test]
    fn tv13_task_hot() {
        // smp.md TV-13 (MC level: cache_nice_tries = 1).
        let (mut k, q) = tv13_setup("v6.12", 2, Policy::Normal);
        let topo = k.lb_topo();
        assert_eq!(topo.per_cpu[0].domains[1].name, "MC");
        assert_eq!(topo.per_cpu[0].domains[1].cache_nice_tries, 1);
        let se = k.tasks[q.index()].se;
        // descheduled 0.3 ms ago → hot while nr_balance_failed ≤ 1
        k.se[se.index()].exec_start = k.now - 300 * US;
        assert!(!can_migrate(&mut k, q, 1, 2, 0));
        assert!(!can_migrate(&mut k, q, 1, 2, 1));
        // nr_balance_failed = 2 → migrates, counted as forced
        assert!(can_migrate(&mut k, q, 1, 2, 2));
        assert_eq!(k.stats.lb_forced_migrations, 1);
        // descheduled 0.7 ms ago → cold
        k.se[se.index()].exec_start = k.now - 700 * US;
        assert!(can_migrate(&mut k, q, 1, 2, 0));
        // just migrated in: exec_start zeroed → cold
        k.se[se.index()].exec_start = 0;
        assert!(can_migrate(&mut k, q, 1, 2, 0));
        // next buddy of its cfs_rq and dst has a task → hot regardless of time
        k.se[se.index()].exec_start = k.now - 700 * US;
        let root = k.rqs[2].cfs;
        k.cfs[root.index()].next = Some(se);
        assert!(
            can_migrate(&mut k, q, 1, 2, 0),
            "dst empty: the buddy rule needs dst tasks"
        );
        queue(&mut k, 0, 1, Policy::Normal);
        assert!(!can_migrate(&mut k, q, 1, 2, 0));
        assert!(!can_migrate(&mut k, q, 1, 2, 1));
        assert!(can_migrate(&mut k, q, 1, 2, 2));
        // NO_CACHE_HOT_BUDDY
        let (mut k, q) = tv13_setup("v6.12 NO_CACHE_HOT_BUDDY", 2, Policy::Normal);
        queue(&mut k, 0, 1, Policy::Normal);
        let se = k.tasks[q.index()].se;
        k.se[se.index()].exec_start = k.now - 700 * US;
        let root = k.rqs[2].cfs;
        k.cfs[root.index()].next = Some(se);
        assert!(can_migrate(&mut k, q, 1, 2, 0));

        // the same Q in an SMT domain (src CPU1, sibling of CPU0) → never hot
        let (mut k, q) = tv13_setup("v6.12", 1, Policy::Normal);
        let se = k.tasks[q.index()].se;
        k.se[se.index()].exec_start = k.now - 300 * US;
        assert_eq!(k.lb_topo().per_cpu[0].domains[0].name, "SMT");
        assert!(can_migrate(&mut k, q, 0, 1, 0));
        // SCHED_IDLE policy → never hot
        let (mut k, q) = tv13_setup("v6.12", 2, Policy::Idle);
        let se = k.tasks[q.index()].se;
        k.se[se.index()].exec_start = k.now - 300 * US;
        assert!(can_migrate(&mut k, q, 1, 2, 0));
        // migration_cost_ns = 0 → never hot
        let (mut k, q) = tv13_setup("v6.12 migration_cost_ns=0", 2, Policy::Normal);
        let se = k.tasks[q.index()].se;
        k.se[se.index()].exec_start = k.now - 1;
        assert!(can_migrate(&mut k, q, 1, 2, 0));
    }

    #[test]
    fn tv13_newidle_never_counts_failures() {
        // smp.md TV-13: "Newidle balancing never increments nr_balance_failed". Three hot tasks
        // on CPU2 (fake signals make it overloaded), CPU0 newly idle vs idle.
        for (idle, failed) in [(CpuIdleType::NewlyIdle, 0), (CpuIdleType::Idle, 1)] {
            let (mut k, _) = tv13_setup("v6.12", 2, Policy::Normal);
            let extra = queue(&mut k, 2, 1, Policy::Normal);
            let mut all = extra;
            all.extend(k.cfs_tasks(2));
            for t in all {
                let se = k.tasks[t.index()].se;
                k.se[se.index()].exec_start = k.now - 100 * US;
            }
            set_signals(&mut k, 2, 1024, 3072);
            let mut cont = true;
            let moved = k.sched_balance_rq(0, 1, idle, &mut cont);
            assert_eq!(moved, 0, "{idle:?}: every candidate is hot");
            assert_eq!(k.lb.last_lb.unwrap().busiest, 2, "{idle:?}");
            assert_eq!(k.lb.sd[0][1].nr_balance_failed, failed, "{idle:?}");
        }
    }

    #[test]
    fn two_socket_cache_hot_protection() {
        // Two nodes of two CPUs: MC{2} below NUMA{4} (cache_nice_tries 2). CPU2 holds three
        // tasks that all ran within the last 0.3 ms; CPU0 (idle, node 0) balances the NUMA
        // level with CPU_IDLE: migrate_util (busiest overloaded, not LLC-sharing), but every
        // candidate is cache hot, so the first three passes fail (nr_balance_failed 1, 2, 3)
        // and the fourth forces one migration (3 > cache_nice_tries). With
        // migration_cost_ns=0 nothing is hot and the first pass pulls.
        let numa =
            "[topology]\ncores_per_cluster = 2\npackages = 2\nnuma_distance = [[10, 21], [21, 10]]\n";
        for (spec, first_success) in [("v6.18", 4), ("v6.18 migration_cost_ns=0", 1)] {
            let mut k = kernel(spec, machine(numa));
            k.now = 10 * MS;
            let ts = queue(&mut k, 2, 3, Policy::Normal);
            queue(&mut k, 3, 1, Policy::Normal);
            let topo = k.lb_topo();
            let sd = &topo.per_cpu[0].domains[1];
            assert_eq!((sd.name, sd.cache_nice_tries), ("NUMA", 2));
            let mut pass = 0;
            let moved = loop {
                pass += 1;
                for &t in &ts {
                    let se = k.tasks[t.index()].se;
                    if k.tasks[t.index()].cpu == 2 {
                        k.se[se.index()].exec_start = k.now - 300 * US;
                        k.se[se.index()].avg.util_avg = 100;
                    }
                }
                set_signals(&mut k, 2, 1024, 3072);
                set_signals(&mut k, 3, 1024, 1024);
                let mut cont = true;
                let moved = k.sched_balance_rq(0, 1, CpuIdleType::Idle, &mut cont);
                let r = k.lb.last_lb.unwrap();
                assert_eq!(
                    (r.migration_type, r.busiest),
                    (MigrationType::Util, 2),
                    "{spec}"
                );
                if moved > 0 || pass == 10 {
                    break moved;
                }
                assert_eq!(k.lb.sd[0][1].nr_balance_failed, pass, "{spec}");
            };
            assert_eq!(pass, first_success, "{spec}");
            assert!(moved >= 1, "{spec}");
            let forced = if first_success > 1 { moved as u64 } else { 0 };
            assert_eq!(k.stats.lb_forced_migrations, forced, "{spec}");
            assert_eq!(
                k.lb.sd[0][1].nr_balance_failed, 0,
                "{spec}: reset by the success"
            );
        }
    }

    #[test]
    fn tv14_newidle_gates() {
        // smp.md TV-14: MC max cost 50 µs, PKG 400 µs, rd.overloaded, avg_idle 300 µs. The MC
        // pass is made to cost 40 µs by the cost model: 3 remote CPUs × 3 lines + 1 cfs_rq
        // blocked update = 10 lines of 4 µs (c_atomic 0: no lock-bounce cost).
        let mut m = machine("[topology]\ncpus = 8\nllc = [0, 0, 0, 0, 1, 1, 1, 1]\n");
        for c in m.costs.iter_mut() {
            c.c_line_llc = Some(Nanos(4 * US));
        }
        for (overloaded, mc_runs) in [(true, 1), (false, 0)] {
            let mut k = kernel("v6.12", m.clone());
            let rd = k.lb.rd_of[0];
            k.lb.rd_overloaded[rd] = overloaded;
            k.lb.sd[0][0].max_newidle_lb_cost = 50 * US;
            k.lb.sd[0][1].max_newidle_lb_cost = 400 * US;
            k.rqs[0].avg_idle = 300 * US;
            assert_eq!(k.sched_balance_newidle(0), 0);
            // gate 1: 300 ≥ 50; MC: 300 ≥ 0 + 50 → balance (40 µs, fails);
            // PKG: 300 < 40 + 400 → stop. Without rd.overloaded: skip entirely.
            let nl = CpuIdleType::NewlyIdle.idx();
            assert_eq!(
                k.lb.sd[0][0].lb_count[nl], mc_runs,
                "overloaded {overloaded}"
            );
            assert_eq!(k.lb.sd[0][1].lb_count[nl], 0, "overloaded {overloaded}");
            assert_eq!(k.lb.sd[0][0].max_newidle_lb_cost, 50 * US);
            assert_eq!(
                k.rqs[0].max_idle_balance_cost,
                500 * US,
                "max(500 µs, 40 µs)"
            );
        }
        // gate 1 on the lowest domain's cost: avg_idle 40 µs < 50 µs → nothing runs
        let mut k = kernel("v6.12", m.clone());
        let rd = k.lb.rd_of[0];
        k.lb.rd_overloaded[rd] = true;
        k.lb.sd[0][0].max_newidle_lb_cost = 50 * US;
        k.rqs[0].avg_idle = 40 * US;
        k.sched_balance_newidle(0);
        assert_eq!(k.stats.newidle_balances, 0);
        // the measured cost raises the domain's maximum
        let mut k = kernel("v6.12", m);
        let rd = k.lb.rd_of[0];
        k.lb.rd_overloaded[rd] = true;
        k.rqs[0].avg_idle = 300 * US;
        k.sched_balance_newidle(0);
        assert_eq!(k.lb.sd[0][0].max_newidle_lb_cost, 40 * US);
        // PKG reads all 7 other CPUs of its span: 21 lines; the other LLC's lines cost
        // c_line_cross_llc, absent here → c_line_llc: 84 µs
        assert_eq!(k.lb.sd[0][1].max_newidle_lb_cost, 84 * US);
    }

    #[test]
    fn newidle_pass_cost_grows_with_the_domain_span_on_x86_2s_80() {
        // Issue #14 item 2. x86-2s-80: SMT{2}, MC{40}, NUMA{80}; c_line_llc 50 ns,
        // c_line_remote 200 ns, c_atomic 20 ns. An idle machine (nothing to pull) on v6.12
        // (measured costs, no bump), rd overloaded and avg_idle large enough for every level:
        // each level's pass reads LB_LINES_PER_CPU = 3 lines of every other CPU of its span,
        //   SMT:  2 × c_atomic (lock bounce) + 1 root cfs_rq blocked update (50) + 1 × 3 × 50
        //         = 40 + 50 + 150 = 240 ns
        //   MC:   39 × 3 × 50 = 5 850 ns
        //   NUMA: 39 × 3 × 50 + 40 × 3 × 200 = 5 850 + 24 000 = 29 850 ns
        // i.e. linear in the span as the kernel's update_sd_lb_stats() walk, 36 µs for a whole
        // failed balance: far below the 0.5 ms that gate 2 compares with avg_idle.
        let p = Platform::builtin("x86-2s-80").unwrap();
        let mut k = kernel("v6.12", MachineDesc::from_platform(&p));
        let rd = k.lb.rd_of[0];
        k.lb.rd_overloaded[rd] = true;
        k.rqs[0].avg_idle = 10 * MS;
        assert_eq!(k.lb.sd[0].len(), 3, "SMT, MC, NUMA");
        assert_eq!(k.sched_balance_newidle(0), 0);
        let costs: Vec<u64> = k.lb.sd[0].iter().map(|d| d.max_newidle_lb_cost).collect();
        assert_eq!(costs, vec![240, 5_850, 29_850]);
        assert_eq!(k.stats.paths.newidle_passes, 3);
        assert_eq!(k.stats.paths.newidle_cost_ns, 240 + 5_850 + 29_850);
        // nothing pulled: the CPU idles, no CPU time is charged
        assert_eq!(k.stats.paths.newidle_charged_ns, 0);
    }

    #[test]
    fn tv14_ni_random_dice() {
        // smp.md TV-14: ratio 512 → run iff d ≤ 513 (514/1024), success weight
        // ⌊(1024 + 256)/513⌋ = 2; ratio 0 → run iff d ≤ 1 (2/1024).
        assert_eq!(ni_random_dice(513, 512), Some(2));
        assert_eq!(ni_random_dice(514, 512), None);
        assert_eq!(
            (0..1024)
                .filter(|&d| ni_random_dice(d, 512).is_some())
                .count(),
            514
        );
        assert_eq!(
            (0..1024)
                .filter(|&d| ni_random_dice(d, 0).is_some())
                .count(),
            2
        );
        assert_eq!(ni_random_dice(1, 0), Some(1024));
        assert_eq!(ni_random_dice(1023, 1024), Some(1));

        // v6.19+: a success at ratio 512 is credited with weight 2 (only when the pass cost
        // something: `if (cost)`), the sampling state starts at 512/256/512.
        let mut k = kernel("v6.19", MachineDesc::ideal(4, 250, PreemptModel::Full));
        assert_eq!(
            (
                k.lb.sd[0][0].newidle_call,
                k.lb.sd[0][0].newidle_success,
                k.lb.sd[0][0].newidle_ratio
            ),
            (512, 256, 512)
        );
        k.update_newidle_cost(0, 0, 1, 2);
        k.update_newidle_cost(0, 0, 0, 2);
        assert_eq!(
            (k.lb.sd[0][0].newidle_call, k.lb.sd[0][0].newidle_success),
            (513, 258)
        );
        // v6.18 has no statistics
        let mut k = kernel("v6.18", MachineDesc::ideal(4, 250, PreemptModel::Full));
        k.update_newidle_cost(0, 0, 1, 2);
        assert_eq!(k.lb.sd[0][0].newidle_call, 512);
    }

    #[test]
    fn tv14_ni_rate() {
        // smp.md TV-14: 1024 recorded attempts spanning 1.0 s → (10⁹ >> 22) = 238 added to the
        // successes before clamping at 1024 (v7.1); v6.19 uses the successes alone.
        for (spec, ratio) in [
            ("v7.1", 100 + 238),
            ("v6.19", 100),
            ("v7.1 NO_NI_RATE", 100),
        ] {
            let mut k = kernel(spec, MachineDesc::ideal(4, 250, PreemptModel::Full));
            k.now = 5_000_000_000;
            let s = &mut k.lb.sd[0][0];
            s.newidle_call = 1023;
            s.newidle_success = 100;
            s.newidle_stamp = 4_000_000_000;
            k.update_newidle_stats(0, 0, 0);
            let s = &k.lb.sd[0][0];
            assert_eq!(s.newidle_ratio, ratio, "{spec}");
            assert_eq!((s.newidle_call, s.newidle_success), (512, 50), "{spec}");
        }
        let mut k = kernel("v7.1", MachineDesc::ideal(4, 250, PreemptModel::Full));
        k.now = 10_000_000_000;
        k.lb.sd[0][0].newidle_call = 1023;
        k.lb.sd[0][0].newidle_success = 900;
        k.update_newidle_stats(0, 0, 0);
        assert_eq!(k.lb.sd[0][0].newidle_ratio, 1024, "clamped");
    }

    #[test]
    fn newidle_cost_bump_and_decay() {
        // smp.md §4.5: v6.17–v6.18 cap the max at migration_cost + 200 ns; the max decays by
        // 253/256 once more than 1 s (HZ jiffies) after the last update.
        let mut k = kernel("v6.18", MachineDesc::ideal(4, 250, PreemptModel::Full));
        k.update_newidle_cost(0, 0, 900 * US, 0);
        assert_eq!(k.lb.sd[0][0].max_newidle_lb_cost, 500_200);
        let mut k = kernel("v6.19", MachineDesc::ideal(4, 250, PreemptModel::Full));
        k.update_newidle_cost(0, 0, 900 * US, 1);
        assert_eq!(k.lb.sd[0][0].max_newidle_lb_cost, 900 * US);
        k.now = 1_000 * MS; // jiffy 250: not after 0 + 250
        assert!(!k.update_newidle_cost(0, 0, 0, 0));
        k.now = 1_004 * MS;
        assert!(k.update_newidle_cost(0, 0, 0, 0));
        assert_eq!(k.lb.sd[0][0].max_newidle_lb_cost, 900_000 * 253 / 256);
    }

    #[test]
    fn balance_intervals() {
        // smp.md §4.2 example (HZ 250, MC{4}): idle → 4 ms = 1 jiffy; busy → 4·16 = 64 ms →
        // 16 jiffies − 1 = 15.
        let k = kernel("v6.12", MachineDesc::ideal(4, 250, PreemptModel::Full));
        let topo = k.lb_topo();
        let sd = &topo.per_cpu[0].domains[0];
        assert_eq!(k.get_sd_balance_interval(0, 0, false, sd), 1);
        assert_eq!(k.get_sd_balance_interval(0, 0, true, sd), 15);
    }

    #[test]
    fn tv16_nohz_kick() {
        // smp.md TV-16 on smp:4. CPUs 1 and 2 run one task each, CPU3 is idle (tickless).
        let mk = |spec: &str, n0: usize| {
            let mut k = kernel(spec, MachineDesc::ideal(4, 250, PreemptModel::Full));
            for (cpu, n) in [(0, n0), (1, 1), (2, 1)] {
                let ts = queue(&mut k, cpu, n, Policy::Normal);
                for t in ts {
                    k.tasks[t.index()].cpus_allowed = CpuMask::single(cpu);
                    k.tasks[t.index()].nr_cpus_allowed = 1;
                }
            }
            k.run_until(MS);
            k.now = 10 * MS; // jiffy 2: after nohz.next_blocked (0)
            k
        };
        // CPU0 busy with nr_running 2 at a tick; CPU3 in the mask; now ≥ nohz.next_balance →
        // kick CPU3 with STATS|BALANCE (IPI), nohz.next_balance = now + 1.
        let mut k = mk("v6.18", 2);
        let ipis = k.stats.ipis;
        k.nohz_balancer_kick(0);
        assert_eq!(k.lb.nohz_idle_cpus, CpuMask::single(3));
        let f = k.lb.nohz_flags[3];
        assert_eq!(
            f & (NOHZ_STATS_KICK | NOHZ_BALANCE_KICK),
            NOHZ_STATS_KICK | NOHZ_BALANCE_KICK
        );
        assert_eq!(k.lb.nohz_next_balance, k.jiffies() + 1);
        assert_eq!(k.stats.ipis, ipis + 1);
        assert_eq!(k.stats.nohz_kicks, 1);
        // Same with nr_running = 1 and the LLC's nr_busy_cpus = 1 (CPUs 1–3 idle) → no BALANCE
        // kick; STATS only because blocked load is stale (has_blocked after the idle entries,
        // jiffies past nohz.next_blocked).
        let mut k = kernel("v6.18", MachineDesc::ideal(4, 250, PreemptModel::Full));
        queue(&mut k, 0, 1, Policy::Normal);
        k.run_until(MS);
        k.now = 10 * MS;
        let nb = k.lb.nohz_next_balance;
        k.nohz_balancer_kick(0);
        let s = k.lb.topo.per_cpu[0].sd_llc_shared.unwrap();
        assert_eq!(k.lb.nr_busy_cpus[s], 1);
        let ilb = k.lb.nohz_flags.iter().position(|&f| f != 0).unwrap();
        assert_eq!(ilb, 1, "find_new_ilb: first idle CPU of the mask");
        assert_eq!(k.lb.nohz_flags[ilb] & NOHZ_BALANCE_KICK, 0);
        assert_ne!(k.lb.nohz_flags[ilb] & NOHZ_STATS_KICK, 0);
        assert_eq!(
            k.lb.nohz_next_balance, nb,
            "only a BALANCE kick moves next_balance"
        );
        // (nr_running 1 but CPUs 1 and 2 busy: nr_busy_cpus = 3 > 1 → BALANCE kick)
        let mut k = mk("v6.18", 1);
        k.nohz_balancer_kick(0);
        assert_ne!(k.lb.nohz_flags[3] & NOHZ_BALANCE_KICK, 0);
        // nr_running 2 where one is a delayed task → still kicks (rq.nr_running counts it);
        // CPUs 1–3 idle, so nr_busy_cpus = 1 cannot be the reason
        let mut k = kernel("v6.18", MachineDesc::ideal(4, 250, PreemptModel::Full));
        queue(&mut k, 0, 1, Policy::Normal);
        k.run_until(MS);
        k.now = 10 * MS;
        k.rqs[0].nr_running = 2;
        let root = k.rqs[0].cfs;
        k.cfs[root.index()].h_nr_queued = 2; // h_nr_runnable stays 1: one delayed
        k.nohz_balancer_kick(0);
        assert_ne!(k.lb.nohz_flags[1] & NOHZ_BALANCE_KICK, 0);
        k.rqs[0].nr_running = 1;
        k.cfs[root.index()].h_nr_queued = 1;
        // before next_balance: no BALANCE kick
        let mut k = mk("v6.18", 2);
        k.lb.nohz_next_balance = k.jiffies() + 5;
        k.nohz_balancer_kick(0);
        assert_eq!(k.lb.nohz_flags[3] & NOHZ_BALANCE_KICK, 0);
    }

    #[test]
    fn add_nr_running_sets_rd_overloaded() {
        // sched.h add_nr_running(): a runqueue reaching two tasks marks the root domain
        // overloaded (gate 1 of newidle balancing, smp.md §4.5).
        let mut k = kernel("v6.12", MachineDesc::ideal(4, 250, PreemptModel::Full));
        queue(&mut k, 1, 1, Policy::Normal);
        assert!(!k.lb.rd_overloaded[0]);
        queue(&mut k, 1, 1, Policy::Normal);
        assert!(k.lb.rd_overloaded[0]);
    }

    #[test]
    fn sibling_imbalance_normalises_by_cores() {
        // smp.md §4.3.5: equal core counts → busiest.nr − local.nr; otherwise
        // (2·(nl·nb_run − nb·nl_run) + nl + nb) / (nl + nb), at least 2 into an empty group.
        let mut sds = SdLbStats {
            busiest_cores: 2,
            local_cores: 2,
            ..Default::default()
        };
        sds.busiest_stat.sum_nr_running = 5;
        sds.local_stat.sum_nr_running = 2;
        assert_eq!(sibling_imbalance(CpuIdleType::Idle, &sds), 3);
        assert_eq!(sibling_imbalance(CpuIdleType::NotIdle, &sds), 0);
        sds.local_cores = 4;
        // (2·(4·5 − 2·2) + 6) / 6 = 38 / 6 = 6
        assert_eq!(sibling_imbalance(CpuIdleType::Idle, &sds), 6);
        sds.busiest_stat.sum_nr_running = 2;
        sds.local_stat.sum_nr_running = 0;
        sds.busiest_cores = 8;
        // (2·(4·2) + 12) / 12 = 28 / 12 = 2
        assert_eq!(sibling_imbalance(CpuIdleType::Idle, &sds), 2);
    }

    // ------------------------------------------------------------- v6.5 vs v6.6 (cfs.md §15.2)

    /// Two LLCs of two SMT cores each: SMT{2} below MC{4} below PKG{8}.
    fn smt_two_llc(spec: &str) -> Kernel {
        kernel(
            spec,
            machine(
                "[topology]\ncpus = 8\ncore = [0, 0, 1, 1, 2, 2, 3, 3]\n\
                 llc = [0, 0, 0, 0, 1, 1, 1, 1]\n",
            ),
        )
    }

    fn swb(k: &Kernel, dst: usize, idle: CpuIdleType) -> bool {
        let topo = k.lb_topo();
        let sd = &topo.per_cpu[dst].domains[2];
        assert_eq!(sd.name, "PKG");
        let e = env(k, dst, 2, idle, dst);
        k.should_we_balance(&e, sd)
    }

    #[test]
    fn should_we_balance_idle_core_preference_by_version() {
        // PKG level, local group = LLC {0-3} = cores {0,1} {2,3}. CPU0 busy, 1–3 idle.
        // v6.5: the first idle CPU of the group (CPU1) balances. b1bfeab9b002 (v6.6): CPU1's
        // core is busy, so it is only remembered; CPU2 (idle core) balances.
        for (spec, cpu1, cpu2) in [
            ("v6.5", true, false),
            ("v6.5+b1bfeab9b002", false, true),
            ("v6.6", false, true),
            ("v6.6 -b1bfeab9b002", true, false),
            ("v6.18", false, true),
        ] {
            let mut k = smt_two_llc(spec);
            queue(&mut k, 0, 1, Policy::Normal);
            assert_eq!(swb(&k, 1, CpuIdleType::Idle), cpu1, "{spec}: dst 1");
            assert_eq!(swb(&k, 2, CpuIdleType::Idle), cpu2, "{spec}: dst 2");
            assert!(!swb(&k, 3, CpuIdleType::Idle), "{spec}: dst 3");
        }
        // CPU0 and CPU2 busy, 1 and 3 idle: no idle core. v6.5: CPU1 (first idle) only.
        // v6.6.0: CPU1 (the remembered idle SMT thread) says yes, any other CPU falls through to
        // the group's balance CPU, CPU0, which also says yes although busy. 6d7e4782bcf5
        // (v6.7, in 6.6.y): the remembered CPU only.
        for (spec, cpu0) in [
            ("v6.5", false),
            ("v6.6", true),
            ("v6.6+6d7e4782bcf5", false),
            ("v6.6.78", false),
            ("v6.12", false),
        ] {
            let mut k = smt_two_llc(spec);
            queue(&mut k, 0, 1, Policy::Normal);
            queue(&mut k, 2, 1, Policy::Normal);
            assert_eq!(swb(&k, 0, CpuIdleType::NotIdle), cpu0, "{spec}: dst 0");
            assert!(swb(&k, 1, CpuIdleType::Idle), "{spec}: dst 1");
            assert!(!swb(&k, 3, CpuIdleType::Idle), "{spec}: dst 3");
        }
    }

    #[test]
    fn smt_balance_group_type_only_from_v6_6() {
        // MC{0-3} of SMT{0,1}{2,3}: two tasks on CPU2, CPU0 idle pulls. fee1759e4f04 marks the
        // SMT group {2,3} (two tasks sharing a core) group_smt_balance; v6.5 has no such type.
        for (spec, smt) in [
            ("v6.5", false),
            ("v6.5+fee1759e4f04", true),
            ("v6.6", true),
            ("v6.6 -fee1759e4f04", false),
        ] {
            let (k, _) = tv13_setup(spec, 2, Policy::Normal);
            let topo = k.lb_topo();
            let sd = &topo.per_cpu[0].domains[1];
            assert_eq!(sd.name, "MC");
            let g = sd.groups.iter().find(|g| g.span.contains(2)).unwrap();
            let e = env(&k, 0, 1, CpuIdleType::Idle, 2);
            let (sgs, _, _) = k.update_sg_lb_stats(&e, sd, g, false, false);
            assert_eq!(sgs.sum_h_nr_running, 2, "{spec}");
            assert_eq!(sgs.group_smt_balance, smt, "{spec}");
            assert_eq!(sgs.group_type == GroupType::SmtBalance, smt, "{spec}");
        }
    }

    const V65_RULES: LbRules = LbRules {
        smt_balance: false,
        sibling_imbalance: false,
        smt_balance_fix: false,
        misfit_strict: false,
    };

    #[test]
    fn prefer_sibling_v6_5_task_difference() {
        // cfs.md §15.2: v6.5 forces a balance when busiest has more than one task more than
        // local, idle or not, and moves half the difference; 7ff1693236f5 uses
        // sibling_imbalance(), 0 for a busy dst.
        let sds_for = |rules: LbRules, nb: u32, nl: u32, cb: u32, cl: u32| SdLbStats {
            busiest: Some(1),
            local: Some(0),
            prefer_sibling: true,
            busiest_cores: cb,
            local_cores: cl,
            busiest_stat: SgLbStats {
                sum_nr_running: nb,
                sum_h_nr_running: nb,
                idle_cpus: 4 - nb.min(4),
                group_weight: 8,
                group_capacity: 8192,
                group_type: GroupType::HasSpare,
                ..Default::default()
            },
            local_stat: SgLbStats {
                sum_nr_running: nl,
                sum_h_nr_running: nl,
                idle_cpus: 8 - nl,
                group_weight: 8,
                group_capacity: 8192,
                group_type: GroupType::HasSpare,
                ..Default::default()
            },
            rules,
            ..Default::default()
        };
        // busy dst, 3 vs 0 tasks, equal cores. v6.5: 3 > 0 + 1 → force; imbalance
        // (3 − 0) >> 1 = 1 task. v6.6: sibling_imbalance(NotIdle) = 0 → no force, and a busy
        // dst leaves a not-overloaded busiest to an idle CPU → balanced.
        let mut s = sds_for(V65_RULES, 3, 0, 4, 4);
        assert_eq!(
            find_src_group_decide(CpuIdleType::NotIdle, &mut s, 0, 117, 0),
            Some((MigrationType::Task, 1))
        );
        let mut s = sds_for(LbRules::default(), 3, 0, 4, 4);
        assert_eq!(
            find_src_group_decide(CpuIdleType::NotIdle, &mut s, 0, 117, 0),
            None
        );
        // idle dst, 4 vs 0 tasks, busiest 4 cores, local 2. v6.5: 4 > 1 → force, (4 − 0) >> 1
        // = 2. v6.6: (2·(2·4 − 4·0) + 6) / 6 = 22 / 6 = 3 > 1 → force, 3 >> 1 = 1.
        let mut s = sds_for(V65_RULES, 4, 0, 4, 2);
        assert_eq!(
            find_src_group_decide(CpuIdleType::Idle, &mut s, 0, 117, 0),
            Some((MigrationType::Task, 2))
        );
        let mut s = sds_for(LbRules::default(), 4, 0, 4, 2);
        assert_eq!(sibling_imbalance(CpuIdleType::Idle, &s), 3);
        assert_eq!(
            find_src_group_decide(CpuIdleType::Idle, &mut s, 0, 117, 0),
            Some((MigrationType::Task, 1))
        );
        // 1 vs 0 tasks: no force in either (v6.5: 1 > 1 is false)
        let mut s = sds_for(V65_RULES, 1, 0, 4, 4);
        assert_eq!(
            find_src_group_decide(CpuIdleType::NotIdle, &mut s, 0, 117, 0),
            None
        );
    }

    #[test]
    fn sibling_imbalance_rounding_before_the_smt4_fix() {
        // local 1 core, empty; busiest 4 cores, 2 tasks: (2·(1·2 − 0) + 5) / 5 = 9 / 5 = 1.
        // 450e749707bc raises an imbalance ≤ 1 into an empty group to 2; 7ff1693236f5 alone
        // raised only 0.
        let mut sds = SdLbStats {
            busiest_cores: 4,
            local_cores: 1,
            ..Default::default()
        };
        sds.busiest_stat.sum_nr_running = 2;
        assert_eq!(sibling_imbalance(CpuIdleType::Idle, &sds), 2);
        sds.rules.smt_balance_fix = false;
        assert_eq!(sibling_imbalance(CpuIdleType::Idle, &sds), 1);
    }

    #[test]
    fn pick_busiest_smt_rules_by_version() {
        let facts = |flags: u32| GroupFacts {
            flags,
            min_capacity: 1024,
            max_capacity: 1024,
        };
        let spare = |idle: u32, nr: u32| SgLbStats {
            idle_cpus: idle,
            sum_nr_running: nr,
            sum_h_nr_running: nr,
            group_weight: 2,
            group_capacity: 2048,
            group_type: GroupType::HasSpare,
            ..Default::default()
        };
        // busiest so far: an SMT group with one task (1 idle CPU); candidate: a non-SMT group
        // with two tasks and 2 idle CPUs. fee1759e4f04: an SMT-vs-non-SMT has-spare pair picks
        // the non-SMT group (the SMT core is not emptied). v6.5: more idle CPUs → not busier.
        let mut sds = SdLbStats {
            busiest: Some(1),
            busiest_flags: SD_SHARE_CPUCAPACITY,
            busiest_stat: spare(1, 1),
            ..Default::default()
        };
        let cand = spare(2, 2);
        assert!(update_sd_pick_busiest(0, 1024, &sds, facts(0), &cand));
        sds.rules = V65_RULES;
        assert!(!update_sd_pick_busiest(0, 1024, &sds, facts(0), &cand));

        // both group_smt_balance, same avg_load (0: only overloaded groups compute it),
        // busiest SMT with 1 idle CPU, candidate with none. 450e749707bc: idle CPUs on either
        // side → compare as has-spare: fewer idle CPUs → busier. fee1759e4f04 alone: the
        // fully-busy rule: equal avg_load and an SMT busiest → keep busiest.
        let smt_bal = |idle: u32| SgLbStats {
            group_type: GroupType::SmtBalance,
            group_smt_balance: true,
            ..spare(idle, 3)
        };
        let mut sds = SdLbStats {
            busiest: Some(1),
            busiest_flags: SD_SHARE_CPUCAPACITY,
            busiest_stat: smt_bal(1),
            ..Default::default()
        };
        let cand = smt_bal(0);
        assert!(update_sd_pick_busiest(
            0,
            1024,
            &sds,
            facts(SD_SHARE_CPUCAPACITY),
            &cand
        ));
        sds.rules.smt_balance_fix = false;
        assert!(!update_sd_pick_busiest(
            0,
            1024,
            &sds,
            facts(SD_SHARE_CPUCAPACITY),
            &cand
        ));
    }

    #[test]
    fn misfit_rules_by_version() {
        // 7f1a7229718d (v6.9): of two misfit groups with equal misfit load the first stays
        // busiest; before it the later one replaces it.
        let mis = SgLbStats {
            sum_nr_running: 1,
            sum_h_nr_running: 1,
            group_weight: 1,
            group_capacity: 284,
            group_type: GroupType::MisfitTask,
            group_misfit_task_load: 500,
            ..Default::default()
        };
        let facts = GroupFacts {
            flags: 0,
            min_capacity: 284,
            max_capacity: 284,
        };
        let mut sds = SdLbStats {
            busiest: Some(1),
            busiest_stat: mis,
            ..Default::default()
        };
        assert!(!update_sd_pick_busiest(0, 1024, &sds, facts, &mis));
        sds.rules.misfit_strict = false;
        assert!(update_sd_pick_busiest(0, 1024, &sds, facts, &mis));

        // 22d5607400c6 (v6.10): a task too big for every CPU is not misfit on the biggest CPU
        // it may use (CPU7, 1024, on rb5); before it, it stays misfit there (util 1000:
        // 1000·1280 = 1 280 000 ≥ 1024·1024, fits nowhere). On little CPU1 misfit in both.
        let p = Platform::builtin("rb5").unwrap();
        for (spec, on_biggest) in [("v6.5", true), ("v6.6", true), ("v6.12", false)] {
            let mut k = kernel(spec, MachineDesc::from_platform(&p));
            let t = queue(&mut k, 7, 1, Policy::Normal)[0];
            let se = k.tasks[t.index()].se;
            k.se[se.index()].avg.util_avg = 1000;
            k.se[se.index()].avg.util_est = 1000;
            k.update_misfit_status(Some(t), 7);
            assert_eq!(k.lb.misfit_task_load[7] != 0, on_biggest, "{spec}");
            k.update_misfit_status(Some(t), 1);
            assert!(k.lb.misfit_task_load[1] != 0, "{spec}");
        }
    }

    #[test]
    fn failed_misfit_pass_counts_as_a_failure_before_v6_10() {
        // rb5: a hog (util 600, does not fit 284) runs on little CPU1; idle big CPU7 balances
        // MC: migrate_misfit cannot detach the running task → ld_moved 0, active balance.
        // 58eeb2d79b54 (v6.10): such a pass does not count in nr_balance_failed; before it,
        // it does.
        let p = Platform::builtin("rb5").unwrap();
        for (spec, failed) in [("v6.5", 1), ("v6.6", 1), ("v6.12", 0)] {
            let mut k = kernel(spec, MachineDesc::from_platform(&p));
            k.now = 10 * MS;
            let t = queue(&mut k, 1, 1, Policy::Normal)[0];
            k.rqs[1].curr = t;
            k.tasks[t.index()].on_cpu = true;
            let se = k.tasks[t.index()].se;
            k.se[se.index()].avg.util_avg = 600;
            k.se[se.index()].avg.util_est = 600;
            set_signals(&mut k, 1, 600, 600);
            k.update_misfit_status(Some(t), 1);
            assert!(k.lb.misfit_task_load[1] != 0, "{spec}");
            let level = k.lb_topo().per_cpu[7].domains.len() - 1;
            let mut cont = true;
            let moved = k.sched_balance_rq(7, level, CpuIdleType::Idle, &mut cont);
            assert_eq!(moved, 0, "{spec}");
            assert_eq!(
                k.lb.last_lb.unwrap().migration_type,
                MigrationType::Misfit,
                "{spec}"
            );
            assert_eq!(k.lb.sd[7][level].nr_balance_failed, failed, "{spec}");
        }
    }

    #[test]
    fn util_est_boosting_changes_nothing_without_a_task() {
        // cfs.md §15.2: v6.5's cpu_util(cpu, NULL, -1, 1) raises util_est to runnable_avg
        // before the max; c2e164ac33f7 (6.5.3, v6.6) stops that. Without a task to add, both
        // are max(util_avg, runnable_avg, util_est): the patch is listed as not modelled.
        for spec in ["v6.5", "v6.5.y-3", "v6.6"] {
            let mut k = two_llc(spec);
            let c = k.rqs[1].cfs;
            // util 300, runnable 500, util_est 400: v6.5 max(300, 500, max(400, 500)) = 500;
            // v6.6 max(max(300, 500), 400) = 500
            k.cfs[c.index()].avg.util_avg = 300;
            k.cfs[c.index()].avg.runnable_avg = 500;
            k.cfs[c.index()].util_est = 400;
            assert_eq!(k.cpu_util_cfs_boost(1), 500, "{spec}");
            // util_est 700 above both: 700 either way
            k.cfs[c.index()].util_est = 700;
            assert_eq!(k.cpu_util_cfs_boost(1), 700, "{spec}");
        }
    }

    #[test]
    fn v6_5_last_buddy_is_cache_hot() {
        // cfs.md §15.2: with CACHE_HOT_BUDDY, v6.5's task_hot() also counts the last buddy
        // (dst not idle). Q descheduled 0.7 ms ago is cold by time (TV-13).
        let (mut k, q) = tv13_setup("v6.5", 2, Policy::Normal);
        queue(&mut k, 0, 1, Policy::Normal);
        let se = k.tasks[q.index()].se;
        k.se[se.index()].exec_start = k.now - 700 * US;
        let root = k.rqs[2].cfs;
        k.cfs[root.index()].next = None;
        k.cfs[root.index()].last = None;
        assert!(can_migrate(&mut k, q, 1, 2, 0), "no buddy: cold");
        k.cfs[root.index()].last = Some(se);
        assert!(!can_migrate(&mut k, q, 1, 2, 0), "last buddy: hot");
        // the other buddy slot does not make Q hot
        let other = k.cfs_tasks(2).into_iter().find(|&t| t != q).unwrap();
        k.cfs[root.index()].last = Some(k.tasks[other.index()].se);
        assert!(can_migrate(&mut k, q, 1, 2, 0));
        // NO_CACHE_HOT_BUDDY: the buddy rule is off
        let (mut k, q) = tv13_setup("v6.5 NO_CACHE_HOT_BUDDY", 2, Policy::Normal);
        queue(&mut k, 0, 1, Policy::Normal);
        let se = k.tasks[q.index()].se;
        k.se[se.index()].exec_start = k.now - 700 * US;
        let root = k.rqs[2].cfs;
        k.cfs[root.index()].next = None;
        k.cfs[root.index()].last = Some(se);
        assert!(can_migrate(&mut k, q, 1, 2, 0));
    }
}
