//! Wakeup, fork and exec placement: core `select_task_rq()` and fair `select_task_rq_fair()`
//! with `wake_wide`/`wake_affine`, the fork/exec slow path (`find_idlest_cpu` and friends), the
//! fast path `select_idle_sibling` with its idle scanners and SIS_UTIL budget, and the fit tests
//! of asymmetric machines (smp.md §1.4, §2, §6.2–§6.3). Owns the per-LLC `sd_llc_shared` hints
//! (`has_idle_cores`, `nr_idle_scan`).
//!
//! Version differences honoured here, each switched by its patch:
//!
//! | patch | where |
//! |---|---|
//! | `fd54d81c2c0e` [`P::SkipSchedIdleRq`] | every "idle or SCHED_IDLE-only" test becomes wakee-aware (`choose_idle_cpu`, `choose_sched_idle_rq`), smp.md §2.7.1 |
//! | `aa3ee4f0b754` [`P::WakeSyncDelayed`] | `wake_affine_idle` sync count excludes delayed tasks |
//! | `82d6e01a0699` [`P::SlowpathAllowedCpus`] | `update_sg_wakeup_stats` over allowed CPUs only |
//! | `1a49104496d3` [`P::LbUseHNrRunnable`] | slow-path `sum_h_nr_running` reads `h_nr_runnable` |
//! | `f207dc2dcdcf` [`P::RqSelected`] | `select_task_rq` sets `WF_RQ_SELECTED` |
//!
//! Deviations (model-wide):
//! * EAS (`find_energy_efficient_cpu`) is off: CPUs run at a fixed frequency (the
//!   `performance` governor model of smp.md §7.3), so the root domain counts as overutilized
//!   and wakeups skip it, as smp.md §6.4 allows (on rb5 it is effectively off in seed 004 too).
//! * `record_wakee` is done by the waker's code path before `try_to_wake_up` (exec.rs), not
//!   here: it also runs for in-place (`ttwu_runnable`) wakeups and not for wakeups from
//!   interrupt context, unlike the kernel.
//! * No uclamp: `util_fits_cpu` is `fits_capacity` and never returns −1.
//! * No RT/DL/IRQ pressure: `capacity_of` is `capacity_orig`; group capacities are the
//!   topology's static sums.
//! * No core scheduling (cookies always match), no paravirt (`vcpu_is_preempted` false), no
//!   NUMA balancing (`numa_preferred_nid` is NUMA_NO_NODE), no migration-disabled tasks.
//! * `SIS_PROP` (off by default in v6.6, later removed) is not modelled.
//! * The cluster scan of `select_idle_cpu` and the `prev_aff`/`recent_used_cpu` fallbacks
//!   (v6.7, Yicong Yang's series) are applied in every preset, v6.6 included: no named patch
//!   exists for them. They only matter where a cluster level lies below the LLC, which no
//!   built-in platform has.

use crate::patches::Patch as P;
use crate::pelt;
use crate::sched::*;
use crate::Kernel;
use schedlab_platform::cpumask::CpuMask;
use schedlab_platform::topology::{
    SchedDomain, SchedGroup, SD_ASYM_CPUCAPACITY, SD_BALANCE_FORK, SD_CLUSTER, SD_NUMA,
    SD_WAKE_AFFINE,
};

/// The first CPU of `cpus ∩ ok` in `for_each_cpu_wrap(cpu, cpus, target + 1)` order, with
/// its 1-based position among the CPUs of `cpus` in that order (how many CPUs a scan of
/// `cpus` tests up to and including it). Simulator-side helper of `select_idle_cpu`.
fn first_in_wrap_order(cpus: &CpuMask, ok: &CpuMask, target: usize) -> Option<(usize, usize)> {
    let cand = cpus.and(ok);
    if let Some(c) = cand.next_from(target + 1) {
        return Some((c, cpus.weight_range(target + 1, c + 1)));
    }
    let c = cand.first()?;
    // wrapped: all of cpus above target, then those up to c
    Some((
        c,
        cpus.weight_range(target + 1, usize::MAX) + cpus.weight_range(0, c + 1),
    ))
}

/// A `for_each_cpu_wrap(cpu, cpus, target + 1)` scan with the SIS_UTIL budget `nr` (the
/// kernel's `if (--nr <= 0) return -1;` before each test) that stops at the first CPU of `ok`:
/// the CPU it returns and how many CPUs it tests. Without a hit within the budget it tests
/// `min(|cpus|, nr − 1)` CPUs. Simulator-side helper of `select_idle_cpu`.
fn budgeted_wrap_scan(
    cpus: &CpuMask,
    ok: &CpuMask,
    target: usize,
    nr: i64,
) -> (Option<usize>, u32) {
    match first_in_wrap_order(cpus, ok, target) {
        Some((cpu, pos)) if (pos as i64) < nr => (Some(cpu), pos as u32),
        _ => (None, (cpus.weight() as i64).min(nr - 1).max(0) as u32),
    }
}

/// `SCHED_CAPACITY_SCALE`
const SCHED_CAPACITY_SCALE: u64 = 1024;
/// `NUMA_IMBALANCE_MIN`: idle-CPU difference tolerated between nodes for a lightly loaded
/// destination (fair.c adjust_numa_imbalance()).
const NUMA_IMBALANCE_MIN: u32 = 2;

/// The runtime part of one `struct sched_domain_shared` (one per LLC), indexed like
/// `SchedDomains::shared`. (`nr_busy_cpus` belongs to nohz balancing and lives there.)
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LlcShared {
    /// Hint that the LLC has a fully idle SMT core: set when a CPU enters idle and all its
    /// siblings are idle, cleared by a failed full core scan.
    pub has_idle_cores: bool,
    /// SIS_UTIL budget: how many CPUs `select_idle_cpu` may probe (smp.md §2.6.3).
    pub nr_idle_scan: u32,
}

/// Runtime state of wakeup placement.
#[derive(Clone, Debug, Default)]
pub struct SelectState {
    /// Per LLC (`sd_llc_shared`).
    pub llc: Vec<LlcShared>,
    /// Static key `sched_smt_present` (`sched_smt_active()`): some core has two threads.
    pub smt_active: bool,
    /// Simulator-side index, not a kernel structure: exactly the CPUs for which
    /// `available_idle_cpu()` holds, kept up to date wherever that test's inputs change
    /// (`rq->curr`, `rq->nr_running`, `rq->ttwu_pending`; see [`Kernel::update_idle_masks`]).
    /// `select_idle_cpu` reads its intersection with the LLC span (the LLC's idle CPUs) to
    /// jump to the CPUs its scan would accept instead of testing every CPU in turn; the kernel
    /// tests each CPU, which this reproduces in result and in `SIS_UTIL` budget.
    pub idle_cpus: CpuMask,
    /// Simulator-side index like `idle_cpus`: the CPUs for which `sched_idle_rq()` holds
    /// (only SCHED_IDLE work queued; inputs `rq->nr_running` and the root `h_nr_idle`).
    pub sched_idle_cpus: CpuMask,
    /// Simulator-side accumulator, not a kernel structure: the CPUs the idle scanners have
    /// tested since the current `try_to_wake_up()` began (reset there), which the waker is
    /// charged for by [`Kernel::take_select_idle_cost`].
    pub scan_visited: u32,
}

/// A sched domain: the `idx`-th level (bottom-up) of CPU `cpu`'s hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SdRef {
    pub cpu: usize,
    pub idx: usize,
}

impl SdRef {
    /// `sd->child`
    fn child(self) -> Option<SdRef> {
        self.idx
            .checked_sub(1)
            .map(|idx| SdRef { cpu: self.cpu, idx })
    }
}

/// `enum group_type` (fair.c), in the kernel's order: a lower value is a less busy group.
/// `SmtBalance`, `AsymPacking` and `Imbalanced` are set only by the balancer's statistics.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum GroupType {
    HasSpare,
    FullyBusy,
    MisfitTask,
    SmtBalance,
    AsymPacking,
    Imbalanced,
    Overloaded,
}

/// `struct sg_lb_stats` as filled by `update_sg_wakeup_stats()` (smp.md §2.4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SgWakeupStats {
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
    pub group_misfit_task_load: u64,
}

impl SgWakeupStats {
    /// The sentinel "idlest" group of `find_idlest_group()`: overloaded with `avg_load =
    /// UINT_MAX`.
    fn sentinel() -> SgWakeupStats {
        SgWakeupStats {
            avg_load: u32::MAX as u64,
            group_load: 0,
            group_capacity: 0,
            group_util: 0,
            group_runnable: 0,
            sum_nr_running: 0,
            sum_h_nr_running: 0,
            idle_cpus: 0,
            group_weight: 0,
            group_type: GroupType::Overloaded,
            group_misfit_task_load: 0,
        }
    }
}

/// `fits_capacity(cap, max)`: `cap` is below 80 % of `max` (smp.md §6.2).
/// kernel: fair.c fits_capacity() @ v6.12
#[inline]
pub(crate) fn fits_capacity(util: u64, capacity: u64) -> bool {
    util * 1280 < capacity * 1024
}

/// `capacity_greater(cap1, cap2)`: `cap1` is ≈ 5 % larger.
/// kernel: fair.c capacity_greater() @ v6.12
#[inline]
#[allow(dead_code)] // misfit balancing (balance.rs)
pub(crate) fn capacity_greater(cap1: u64, cap2: u64) -> bool {
    cap1 * 1024 > cap2 * 1078
}

/// The decision of `wake_affine_weight()` from its inputs: true if the waking CPU wins.
/// `current_load` is `Some(task_h_load(current))` for a sync wakeup.
/// kernel: fair.c wake_affine_weight() @ v6.12 (arithmetic only; s64 as in the kernel)
#[allow(clippy::too_many_arguments)]
pub(crate) fn wake_affine_weight_eff(
    this_load: u64,
    prev_load: u64,
    current_load: Option<u64>,
    task_load: u64,
    capacity_this: u64,
    capacity_prev: u64,
    imbalance_pct: u32,
    wa_bias: bool,
) -> bool {
    let mut this_eff_load = this_load as i64;
    if let Some(cur) = current_load {
        if cur as i64 > this_eff_load {
            return true;
        }
        this_eff_load -= cur as i64;
    }
    this_eff_load += task_load as i64;
    if wa_bias {
        this_eff_load *= 100;
    }
    this_eff_load *= capacity_prev as i64;

    // cpu_load(prev) still holds the wakee's blocked load if it slept there: may go negative.
    let mut prev_eff_load = prev_load as i64 - task_load as i64;
    if wa_bias {
        prev_eff_load *= 100 + (imbalance_pct as i64 - 100) / 2;
    }
    prev_eff_load *= capacity_this as i64;
    // sync: a tie goes to this_cpu, so select_idle_sibling() may stack the wakee on the waker
    if current_load.is_some() {
        prev_eff_load += 1;
    }
    this_eff_load < prev_eff_load
}

/// The SIS_UTIL budget from the LLC's summed utilisation (smp.md §2.6.3):
///
/// ```text
///   x = sum_util / llc_w                      (average utilisation, capacity scale)
///   t = min(1024, x² · pct² / (10000 · 1024)) (t reaches 1024 at x = 1024 · 100/pct)
///   nr_idle_scan = (1024 − t) · llc_w / 1024  (integer floor: 0 once (1024 − t)·llc_w < 1024)
/// ```
/// kernel: fair.c update_idle_cpu_scan() @ v6.12 (arithmetic only)
pub(crate) fn idle_cpu_scan_budget(sum_util: u64, llc_weight: u64, imbalance_pct: u64) -> u32 {
    let x = sum_util / llc_weight;
    let tmp = (x * x * imbalance_pct * imbalance_pct / (10000 * SCHED_CAPACITY_SCALE))
        .min(SCHED_CAPACITY_SCALE);
    let y = SCHED_CAPACITY_SCALE - tmp;
    (y * llc_weight / SCHED_CAPACITY_SCALE) as u32
}

impl Kernel {
    // ===================================================================== state

    /// Initialises [`SelectState`] once the machine is known.
    ///
    /// Initial values (the kernel's depend on what ran during boot, smp.md App. B item 5):
    /// `nr_idle_scan = sd_llc_size` (as if a balance pass had seen an idle LLC; the kernel's
    /// zeroed allocation would forbid any scan until the first periodic balance of the LLC
    /// domain, smp.md §2.6.3), and `has_idle_cores` set when SMT is present (every CPU of a
    /// freshly booted machine is idle, and each idle entry with idle siblings sets it).
    pub(crate) fn init_select_state(&mut self) {
        let d = &self.machine.domains;
        let smt_active = d
            .cpu_map
            .iter()
            .any(|c| self.machine.smt_mask[c].weight() > 1);
        self.sel = SelectState {
            llc: d
                .shared
                .iter()
                .map(|s| LlcShared {
                    has_idle_cores: smt_active,
                    nr_idle_scan: s.span.weight() as u32,
                })
                .collect(),
            smt_active,
            idle_cpus: CpuMask::new(),
            sched_idle_cpus: CpuMask::new(),
            scan_visited: 0,
        };
        for cpu in 0..self.ncpus {
            self.update_idle_masks(cpu);
        }
    }

    /// Checks the idle masks against the tests they index, for the CPUs of `span` (debug
    /// builds and `--strict`).
    pub(crate) fn idle_masks_consistent(&self, span: &CpuMask) -> Result<(), String> {
        for cpu in span.iter().filter(|&c| c < self.ncpus) {
            let (a, b) = (self.available_idle_cpu(cpu), self.sched_idle_rq(cpu));
            if self.sel.idle_cpus.contains(cpu) != a || self.sel.sched_idle_cpus.contains(cpu) != b
            {
                return Err(format!(
                    "cpu {cpu}: idle mask {} / sched_idle mask {} but available_idle_cpu {a} / \
                     sched_idle_rq {b}",
                    self.sel.idle_cpus.contains(cpu),
                    self.sel.sched_idle_cpus.contains(cpu)
                ));
            }
        }
        Ok(())
    }

    /// The CPUs `sis_idle_ok(·, p)` accepts, from the idle masks.
    fn sis_idle_ok_mask(&self, p: TaskId) -> CpuMask {
        if self.cfg.has(P::SkipSchedIdleRq) && self.tasks[p.index()].policy == Policy::Idle {
            // choose_idle_cpu(): a SCHED_IDLE wakee does not take a SCHED_IDLE-only runqueue
            self.sel.idle_cpus.clone()
        } else {
            self.sel.idle_cpus.or(&self.sel.sched_idle_cpus)
        }
    }

    /// A CPU switches to its idle task (`set_next_task_idle` → `update_idle_core`).
    pub(crate) fn select_idle_enter(&mut self, cpu: usize) {
        if self.sel.smt_active {
            self.__update_idle_core(cpu);
        }
    }

    /// Sets `has_idle_cores` of the CPU's LLC if all its SMT siblings are idle too.
    /// kernel: fair.c __update_idle_core() @ v6.12
    fn __update_idle_core(&mut self, core: usize) {
        if self.test_idle_cores(core) {
            return;
        }
        let all_idle = self.machine.smt_mask[core]
            .iter()
            .filter(|&c| c != core)
            .all(|c| self.available_idle_cpu(c));
        if all_idle {
            self.set_idle_cores(core, true);
        }
    }

    /// kernel: fair.c test_idle_cores() @ v6.12
    fn test_idle_cores(&self, cpu: usize) -> bool {
        match self.machine.domains.per_cpu[cpu].sd_llc_shared {
            Some(s) => self.sel.llc[s].has_idle_cores,
            None => false,
        }
    }

    /// kernel: fair.c set_idle_cores() @ v6.12
    fn set_idle_cores(&mut self, cpu: usize, val: bool) {
        if let Some(s) = self.machine.domains.per_cpu[cpu].sd_llc_shared {
            self.sel.llc[s].has_idle_cores = val;
        }
    }

    /// The SIS_UTIL budget of `cpu`'s LLC (`sd_llc_shared->nr_idle_scan`), if it has one.
    pub fn nr_idle_scan(&self, cpu: usize) -> Option<u32> {
        self.machine.domains.per_cpu[cpu]
            .sd_llc_shared
            .map(|s| self.sel.llc[s].nr_idle_scan)
    }

    /// Sets the SIS_UTIL budget of `cpu`'s LLC (tests and what-if experiments).
    pub fn set_nr_idle_scan(&mut self, cpu: usize, nr: u32) {
        if let Some(s) = self.machine.domains.per_cpu[cpu].sd_llc_shared {
            self.sel.llc[s].nr_idle_scan = nr;
        }
    }

    /// Updates the SIS_UTIL budget of `cpu`'s LLC from `sum_util`, the sum of `cpu_util_cfs`
    /// over the LLC (smp.md §2.6.3, [`idle_cpu_scan_budget`]).
    ///
    /// Contract for the caller (balance.rs): call it only from a *periodic* balance pass
    /// (never newidle) at the domain whose `span_weight == sd_llc_size(cpu)`, with `cpu` the
    /// balancing (dst) CPU — the kernel's `env->idle != CPU_NEWLY_IDLE` and span checks.
    /// kernel: fair.c update_idle_cpu_scan() @ v6.12
    #[allow(dead_code)] // called by balance.rs
    pub(crate) fn update_idle_cpu_scan(&mut self, cpu: usize, sum_util: u64) {
        if !self.cfg.feat(crate::features::Feature::SIS_UTIL) {
            return;
        }
        let pcd = &self.machine.domains.per_cpu[cpu];
        let (Some(s), Some(llc)) = (pcd.sd_llc_shared, pcd.sd_llc()) else {
            return;
        };
        let llc_weight = pcd.sd_llc_size as u64;
        let pct = llc.imbalance_pct as u64;
        self.sel.llc[s].nr_idle_scan = idle_cpu_scan_budget(sum_util, llc_weight, pct);
    }

    // ===================================================================== predicates (§2.7)

    /// `sched_idle_cpu()`: only SCHED_IDLE work is queued (helper removed in v7.1).
    /// kernel: fair.c sched_idle_cpu() @ v6.12
    pub(crate) fn sched_idle_cpu(&self, cpu: usize) -> bool {
        self.sched_idle_rq(cpu)
    }

    /// `choose_sched_idle_rq()`: a SCHED_IDLE-only runqueue, and the wakee is not SCHED_IDLE
    /// itself (its policy only: a normal task in an idle cgroup still prefers it).
    /// kernel: fair.c choose_sched_idle_rq() @ v7.1 (fd54d81c2c0e)
    pub(crate) fn choose_sched_idle_rq(&self, cpu: usize, p: TaskId) -> bool {
        self.sched_idle_rq(cpu) && self.tasks[p.index()].policy != Policy::Idle
    }

    /// `choose_idle_cpu()`: truly idle, or SCHED_IDLE-only and acceptable for `p`.
    /// kernel: fair.c choose_idle_cpu() @ v7.1 (fd54d81c2c0e)
    pub(crate) fn choose_idle_cpu(&self, cpu: usize, p: TaskId) -> bool {
        self.available_idle_cpu(cpu) || self.choose_sched_idle_rq(cpu, p)
    }

    /// `IDLE_OK(c, p)` of smp.md §2.5: the "idle enough" test of the fast path, per version.
    fn sis_idle_ok(&self, cpu: usize, p: TaskId) -> bool {
        if self.cfg.has(P::SkipSchedIdleRq) {
            self.choose_idle_cpu(cpu, p)
        } else {
            self.available_idle_cpu(cpu) || self.sched_idle_cpu(cpu)
        }
    }

    /// The SCHED_IDLE-only preference of `find_idlest_group_cpu` and the fallback of
    /// `select_idle_core`, per version (smp.md §2.4.4, §2.6.1).
    fn sis_sched_idle_ok(&self, cpu: usize, p: TaskId) -> bool {
        if self.cfg.has(P::SkipSchedIdleRq) {
            self.choose_sched_idle_rq(cpu, p)
        } else {
            self.sched_idle_cpu(cpu)
        }
    }

    /// `cpus_share_cache()`: same `sd_llc_id`.
    /// kernel: core.c cpus_share_cache() @ v6.12
    pub(crate) fn cpus_share_cache(&self, a: usize, b: usize) -> bool {
        a == b || self.machine.llc_id[a] == self.machine.llc_id[b]
    }

    /// `cpus_share_resources()`: same `sd_share_id` (cluster, else LLC).
    /// kernel: core.c cpus_share_resources() @ v6.12
    fn cpus_share_resources(&self, a: usize, b: usize) -> bool {
        let pc = &self.machine.domains.per_cpu;
        a == b || pc[a].sd_share_id == pc[b].sd_share_id
    }

    /// `is_per_cpu_kthread()`: a kernel thread pinned to one CPU.
    fn is_per_cpu_kthread(&self, t: TaskId) -> bool {
        let t = &self.tasks[t.index()];
        t.kthread && t.nr_cpus_allowed == 1
    }

    // ===================================================================== capacity (§6.2)

    /// `capacity_of()`: CPU capacity left to CFS. Deviation: no RT/DL/IRQ pressure is
    /// modelled, so it is `capacity_orig`.
    pub(crate) fn capacity_of(&self, cpu: usize) -> u64 {
        self.rqs[cpu].capacity_orig
    }

    /// `util_fits_cpu()`: 1 if `util` fits `cpu`, 0 if not; −1 (fits but not the uclamp_min
    /// request) cannot happen without uclamp.
    /// kernel: fair.c util_fits_cpu() @ v6.12 (uclamp not in use)
    pub(crate) fn util_fits_cpu(&self, util: u64, cpu: usize) -> i32 {
        fits_capacity(util, self.capacity_of(cpu)) as i32
    }

    /// kernel: fair.c task_fits_cpu() @ v6.12
    pub(crate) fn task_fits_cpu(&self, p: TaskId, cpu: usize) -> bool {
        self.util_fits_cpu(self.task_util_est(p), cpu) > 0
    }

    /// `asym_fits_cpu()`: always true on symmetric machines.
    /// kernel: fair.c asym_fits_cpu() @ v6.12
    fn asym_fits_cpu(&self, util: u64, cpu: usize) -> bool {
        if self.machine.domains.sched_asym_cpucapacity {
            return self.util_fits_cpu(util, cpu) > 0;
        }
        true
    }

    // ===================================================================== PELT readers

    /// `sync_entity_load_avg()`: decay a sleeping task's signals to its cfs_rq's last update.
    /// Deviation: skipped when the task has no PELT timestamp (a new task started as a wakeup,
    /// which the kernel never sees).
    /// kernel: fair.c sync_entity_load_avg() @ v6.12
    pub(crate) fn sync_entity_load_avg(&mut self, p: TaskId) {
        let se = self.tasks[p.index()].se;
        if self.se[se.index()].avg.last_update_time == 0 {
            return;
        }
        let cfs = self.se[se.index()].cfs_rq;
        let last = self.cfs[cfs.index()].avg.last_update_time;
        let w = scale_load_down(self.se[se.index()].load.weight);
        pelt::__update_load_avg_blocked_se(last, &mut self.se[se.index()].avg, w);
    }

    /// `p` is accounted on `cpu`: its CPU, with PELT history, and queued.
    /// kernel: fair.c task_running_on_cpu() @ v6.12
    fn task_running_on_cpu(&self, cpu: usize, p: TaskId) -> bool {
        let t = &self.tasks[p.index()];
        cpu == t.cpu && self.se[t.se.index()].avg.last_update_time != 0 && t.on_rq == OnRq::Queued
    }

    /// `p`'s signals are part of `cpu`'s (the test shared by the `*_without` helpers).
    fn pelt_accounted_on(&self, cpu: usize, p: TaskId) -> bool {
        let t = &self.tasks[p.index()];
        cpu == t.cpu && self.se[t.se.index()].avg.last_update_time != 0
    }

    /// kernel: fair.c cpu_load_without() @ v6.12
    fn cpu_load_without(&self, cpu: usize, p: TaskId) -> u64 {
        if !self.pelt_accounted_on(cpu, p) {
            return self.cpu_load(cpu);
        }
        self.cpu_load(cpu).saturating_sub(self.task_h_load(p))
    }

    /// kernel: fair.c cpu_runnable_without() @ v6.12
    fn cpu_runnable_without(&self, cpu: usize, p: TaskId) -> u64 {
        if !self.pelt_accounted_on(cpu, p) {
            return self.cpu_runnable(cpu);
        }
        let se = self.tasks[p.index()].se;
        self.cpu_runnable(cpu)
            .saturating_sub(self.se[se.index()].avg.runnable_avg)
    }

    /// `cpu_util_without()` = `cpu_util(cpu, p, -1, 0)` with `p` discounted where it is
    /// accounted (smp.md §5.8).
    /// kernel: fair.c cpu_util_without() / cpu_util() @ v6.12
    fn cpu_util_without(&self, cpu: usize, p: TaskId) -> u64 {
        let c = &self.cfs[self.rqs[cpu].cfs.index()];
        let mut util = c.avg.util_avg;
        let accounted = self.pelt_accounted_on(cpu, p);
        let se = &self.se[self.tasks[p.index()].se.index()];
        if accounted {
            util = util.saturating_sub(se.avg.util_avg);
        }
        if self.cfg.feat(crate::features::Feature::UTIL_EST) {
            let mut util_est = c.util_est as u64;
            let t = &self.tasks[p.index()];
            // during exec p is enqueued and contributes to the cfs_rq's util_est
            if accounted && (t.on_rq == OnRq::Queued || self.rqs[cpu].curr == p) {
                util_est = util_est.saturating_sub(pelt::_task_util_est(se.avg.util_est) as u64);
            }
            util = util.max(util_est);
        }
        util.min(self.rqs[cpu].capacity_orig)
    }

    /// `idle_cpu_without()`: idle but for `p` (the caller checked the reduced nr_running).
    /// kernel: fair.c idle_cpu_without() @ v6.12
    fn idle_cpu_without(&self, cpu: usize, p: TaskId) -> bool {
        let rq = &self.rqs[cpu];
        (rq.curr == rq.idle || rq.curr == p) && !rq.ttwu_pending
    }

    // ===================================================================== select_task_rq

    /// The `idx`-th domain of `cpu`.
    fn sd(&self, r: SdRef) -> &SchedDomain {
        &self.machine.domains.per_cpu[r.cpu].domains[r.idx]
    }

    /// Placement of a waking, forked or exec'ing fair task (smp.md §2.1). `prev_cpu` is
    /// `p->wake_cpu` (wakeup) or `task_cpu(p)` (fork); `this_cpu` the CPU running the
    /// wakeup, fork or exec, whose current task is the kernel's `current`.
    ///
    /// `record_wakee(p)` is not called here: the waker's code path (exec.rs) records it
    /// before `try_to_wake_up`. EAS is inactive (module docs), so `find_energy_efficient_cpu`
    /// is skipped.
    /// kernel: fair.c select_task_rq_fair() @ v6.12
    pub(crate) fn select_task_rq_fair(
        &mut self,
        p: TaskId,
        prev_cpu: usize,
        wake_flags: u32,
        this_cpu: usize,
        in_task: bool,
    ) -> usize {
        let cpu = this_cpu;
        let current = self.rqs[cpu].curr;
        // PF_EXITING: the waker is in do_exit()
        let sync =
            wake_flags & WF_SYNC != 0 && self.tasks[current.index()].state != TaskState::Dead;
        let mut new_cpu = prev_cpu;
        // SD_flags and WF_flags share the first nibble
        let sd_flag = wake_flags & 0xF;
        let mut want_affine = false;

        if wake_flags & WF_TTWU != 0 {
            let allowed_here = self.tasks[p.index()].cpus_allowed.contains(cpu);
            // (ab83f455f04d, v6.6: the flag does not exist before it)
            if self.cfg.has(P::WfCurrentCpu) && wake_flags & WF_CURRENT_CPU != 0 && allowed_here {
                return cpu;
            }
            want_affine = !self.wake_wide(p, cpu) && allowed_here;
        }

        let mut sd: Option<SdRef> = None;
        let nr_domains = self.machine.domains.per_cpu[cpu].domains.len();
        for idx in 0..nr_domains {
            let r = SdRef { cpu, idx };
            let (flags, has_prev) = {
                let d = self.sd(r);
                (d.flags, d.span.contains(prev_cpu))
            };
            // If both 'cpu' and 'prev_cpu' are part of this domain, cpu is a valid
            // SD_WAKE_AFFINE target.
            if want_affine && flags & SD_WAKE_AFFINE != 0 && has_prev {
                if cpu != prev_cpu {
                    new_cpu = self.wake_affine(r, p, cpu, prev_cpu, sync);
                }
                sd = None; // prefer wake_affine over balance flags
                break;
            }
            if flags & sd_flag != 0 {
                sd = Some(r);
            } else if !want_affine {
                break;
            }
        }

        if let Some(sd) = sd {
            // slow path
            new_cpu = self.find_idlest_cpu(sd, p, cpu, prev_cpu, sd_flag);
        } else if wake_flags & WF_TTWU != 0 {
            // fast path
            new_cpu = self.select_idle_sibling(p, prev_cpu, new_cpu, this_cpu, in_task);
        }
        new_cpu
    }

    // ===================================================================== wake_wide / affine

    /// Wake "wide" (skip the affine path) when waker and wakee both switch partners at least
    /// `sd_llc_size` times per decay period and one `sd_llc_size` times more than the other.
    /// kernel: fair.c wake_wide() @ v6.12
    pub(crate) fn wake_wide(&self, p: TaskId, this_cpu: usize) -> bool {
        let current = self.rqs[this_cpu].curr;
        let mut master = self.tasks[current.index()].wakee_flips;
        let mut slave = self.tasks[p.index()].wakee_flips;
        let factor = self.machine.domains.per_cpu[this_cpu].sd_llc_size;
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave.saturating_mul(factor))
    }

    /// `this_cpu` if the wakee should be pulled towards the waker, else `prev_cpu`.
    /// kernel: fair.c wake_affine() @ v6.12
    fn wake_affine(
        &self,
        sd: SdRef,
        p: TaskId,
        this_cpu: usize,
        prev_cpu: usize,
        sync: bool,
    ) -> usize {
        use crate::features::Feature as F;
        let mut target = None;
        if self.cfg.feat(F::WA_IDLE) {
            target = self.wake_affine_idle(this_cpu, prev_cpu, sync);
        }
        if self.cfg.feat(F::WA_WEIGHT) && target.is_none() {
            target = self.wake_affine_weight(sd, p, this_cpu, prev_cpu, sync);
        }
        if target != Some(this_cpu) {
            return prev_cpu;
        }
        this_cpu
    }

    /// `None` is the kernel's `nr_cpumask_bits` ("no opinion").
    /// kernel: fair.c wake_affine_idle() @ v6.16 (aa3ee4f0b754 switchable)
    pub(crate) fn wake_affine_idle(
        &self,
        this_cpu: usize,
        prev_cpu: usize,
        sync: bool,
    ) -> Option<usize> {
        // An idle this_cpu means an interrupt-context wakeup: only move within the cache.
        if self.available_idle_cpu(this_cpu) && self.cpus_share_cache(this_cpu, prev_cpu) {
            return Some(if self.available_idle_cpu(prev_cpu) {
                prev_cpu
            } else {
                this_cpu
            });
        }
        if sync {
            let rq = &self.rqs[this_cpu];
            let mut n = rq.nr_running as i64;
            if self.cfg.has(P::WakeSyncDelayed) {
                // cfs_h_nr_delayed(rq) = h_nr_queued - h_nr_runnable (smp.md §3.1)
                let c = &self.cfs[rq.cfs.index()];
                n -= c.h_nr_queued as i64 - c.h_nr_runnable as i64;
            }
            if n == 1 {
                return Some(this_cpu);
            }
        }
        if self.available_idle_cpu(prev_cpu) {
            return Some(prev_cpu);
        }
        None
    }

    /// kernel: fair.c wake_affine_weight() @ v6.12
    fn wake_affine_weight(
        &self,
        sd: SdRef,
        p: TaskId,
        this_cpu: usize,
        prev_cpu: usize,
        sync: bool,
    ) -> Option<usize> {
        let current = self.rqs[this_cpu].curr;
        let current_load = sync.then(|| self.task_h_load(current));
        let this_wins = wake_affine_weight_eff(
            self.cpu_load(this_cpu),
            self.cpu_load(prev_cpu),
            current_load,
            self.task_h_load(p),
            self.capacity_of(this_cpu),
            self.capacity_of(prev_cpu),
            self.sd(sd).imbalance_pct,
            self.cfg.feat(crate::features::Feature::WA_BIAS),
        );
        this_wins.then_some(this_cpu)
    }

    // ===================================================================== slow path (§2.4)

    /// Walks down from `sd` to the idlest CPU for a fork or exec (smp.md §2.4).
    /// kernel: fair.c sched_balance_find_dst_cpu() (find_idlest_cpu) @ v6.12
    fn find_idlest_cpu(
        &mut self,
        sd: SdRef,
        p: TaskId,
        cpu: usize,
        prev_cpu: usize,
        sd_flag: u32,
    ) -> usize {
        if !self
            .sd(sd)
            .span
            .intersects(&self.tasks[p.index()].cpus_allowed)
        {
            return prev_cpu;
        }
        // the task's util is needed by cpu_util_without: sync it to its cfs_rq
        if sd_flag & SD_BALANCE_FORK == 0 {
            self.sync_entity_load_avg(p);
        }
        let mut cpu = cpu;
        let mut new_cpu = cpu;
        let mut sd = Some(sd);
        while let Some(r) = sd {
            if self.sd(r).flags & sd_flag == 0 {
                sd = r.child();
                continue;
            }
            let Some(group) = self.find_idlest_group(r, p, cpu) else {
                sd = r.child();
                continue;
            };
            new_cpu = self.find_idlest_group_cpu(&group.span, p, cpu);
            if new_cpu == cpu {
                // now try balancing at a lower domain level of 'cpu'
                sd = r.child();
                continue;
            }
            // now try balancing at a lower domain level of 'new_cpu'
            cpu = new_cpu;
            let weight = self.sd(r).span_weight;
            sd = None;
            for (idx, t) in self.machine.domains.per_cpu[cpu].domains.iter().enumerate() {
                if weight <= t.span_weight {
                    break;
                }
                if t.flags & sd_flag != 0 {
                    sd = Some(SdRef { cpu, idx });
                }
            }
        }
        new_cpu
    }

    /// `group_classify()` for the wakeup statistics (`sg_imbalanced`, asym packing and SMT
    /// balance are balancer state and never set here).
    /// kernel: fair.c group_classify() @ v6.12
    fn group_classify_wakeup(imbalance_pct: u32, sgs: &SgWakeupStats) -> GroupType {
        let pct = imbalance_pct as u64;
        // group_is_overloaded()
        if sgs.sum_nr_running > sgs.group_weight
            && (sgs.group_capacity * 100 < sgs.group_util * pct
                || sgs.group_capacity * pct < sgs.group_runnable * 100)
        {
            return GroupType::Overloaded;
        }
        if sgs.group_misfit_task_load != 0 {
            return GroupType::MisfitTask;
        }
        // group_has_capacity()
        let has_capacity = if sgs.sum_nr_running < sgs.group_weight {
            true
        } else if sgs.group_capacity * pct < sgs.group_runnable * 100 {
            false
        } else {
            sgs.group_capacity * 100 > sgs.group_util * pct
        };
        if !has_capacity {
            return GroupType::FullyBusy;
        }
        GroupType::HasSpare
    }

    /// Statistics of one group for the slow path (smp.md §2.4.1): all CPUs of the group up to
    /// v6.18, only `p`'s allowed CPUs from `82d6e01a0699`.
    /// kernel: fair.c update_sg_wakeup_stats() @ v6.19
    pub(crate) fn update_sg_wakeup_stats(
        &self,
        sd: SdRef,
        group: &SchedGroup,
        p: TaskId,
    ) -> SgWakeupStats {
        let d = self.sd(sd);
        let mut sgs = SgWakeupStats {
            avg_load: 0,
            group_load: 0,
            group_capacity: group.capacity,
            group_util: 0,
            group_runnable: 0,
            sum_nr_running: 0,
            sum_h_nr_running: 0,
            idle_cpus: 0,
            group_weight: group.group_weight,
            group_type: GroupType::HasSpare,
            // assume that the task cannot fit any CPU of the group
            group_misfit_task_load: (d.flags & SD_ASYM_CPUCAPACITY != 0) as u64,
        };
        let span = if self.cfg.has(P::SlowpathAllowedCpus) {
            group.span.and(&self.tasks[p.index()].cpus_allowed)
        } else {
            group.span.clone()
        };
        let h_nr_runnable = self.cfg.has(P::LbUseHNrRunnable);
        for i in span.iter() {
            let rq = &self.rqs[i];
            sgs.group_load += self.cpu_load_without(i, p);
            sgs.group_util += self.cpu_util_without(i, p);
            sgs.group_runnable += self.cpu_runnable_without(i, p);
            let local = self.task_running_on_cpu(i, p) as u32;
            let c = &self.cfs[rq.cfs.index()];
            let h = if h_nr_runnable {
                c.h_nr_runnable
            } else {
                c.h_nr_queued
            };
            sgs.sum_h_nr_running += h.saturating_sub(local);
            // rq->nr_running counts delayed tasks in every version (smp.md §3.3)
            let nr_running = rq.nr_running.saturating_sub(local);
            sgs.sum_nr_running += nr_running;
            if nr_running == 0 && self.idle_cpu_without(i, p) {
                sgs.idle_cpus += 1;
            }
            if d.flags & SD_ASYM_CPUCAPACITY != 0
                && sgs.group_misfit_task_load != 0
                && self.task_fits_cpu(p, i)
            {
                sgs.group_misfit_task_load = 0;
            }
        }
        sgs.group_type = Self::group_classify_wakeup(d.imbalance_pct, &sgs);
        // avg_load only makes sense when the group is fully busy or overloaded
        if matches!(sgs.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
            sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity.max(1);
        }
        sgs
    }

    /// Whether `sgs` (group `g`) is idler than the current idlest (smp.md §2.4.2).
    /// kernel: fair.c update_pick_idlest() @ v6.12
    fn update_pick_idlest(
        idlest: Option<&SchedGroup>,
        idlest_sgs: &SgWakeupStats,
        g: &SchedGroup,
        sgs: &SgWakeupStats,
    ) -> bool {
        if sgs.group_type < idlest_sgs.group_type {
            return true;
        }
        if sgs.group_type > idlest_sgs.group_type {
            return false;
        }
        match sgs.group_type {
            GroupType::Overloaded | GroupType::FullyBusy => idlest_sgs.avg_load > sgs.avg_load,
            GroupType::Imbalanced | GroupType::AsymPacking | GroupType::SmtBalance => false,
            GroupType::MisfitTask => {
                // same type as the sentinel only for overloaded; an idlest group exists here
                let imax = idlest.map(|i| i.max_capacity).unwrap_or(0);
                imax < g.max_capacity
            }
            GroupType::HasSpare => {
                if idlest_sgs.idle_cpus > sgs.idle_cpus {
                    return false;
                }
                !(idlest_sgs.idle_cpus == sgs.idle_cpus && idlest_sgs.group_util <= sgs.group_util)
            }
        }
    }

    /// The idlest group of `sd` if `p` should go there rather than stay in the local group
    /// (smp.md §2.4.2–§2.4.3). `this_cpu` names the local group.
    /// Deviation: NUMA balancing's preferred node is never set (NUMA_NO_NODE).
    /// kernel: fair.c sched_balance_find_dst_group() (find_idlest_group) @ v6.12
    pub(crate) fn find_idlest_group(
        &self,
        sd: SdRef,
        p: TaskId,
        this_cpu: usize,
    ) -> Option<SchedGroup> {
        let d = self.sd(sd);
        let allowed = &self.tasks[p.index()].cpus_allowed;
        let mut idlest: Option<&SchedGroup> = None;
        let mut idlest_sgs = SgWakeupStats::sentinel();
        let mut local: Option<(&SchedGroup, SgWakeupStats)> = None;
        for g in &d.groups {
            // skip over this group if it has no CPUs allowed
            if !g.span.intersects(allowed) {
                continue;
            }
            let sgs = self.update_sg_wakeup_stats(sd, g, p);
            if g.span.contains(this_cpu) {
                local = Some((g, sgs));
                continue;
            }
            if Self::update_pick_idlest(idlest, &idlest_sgs, g, &sgs) {
                idlest = Some(g);
                idlest_sgs = sgs;
            }
        }
        // there is no idlest group to push tasks to
        let idlest = idlest?;
        // the local group has been skipped because of CPU affinity
        let Some((local, local_sgs)) = local else {
            return Some(idlest.clone());
        };
        // if the local group is idler than the idlest group, don't try and push the task
        if local_sgs.group_type < idlest_sgs.group_type {
            return None;
        }
        // if the local group is busier than the idlest group, try and push the task
        if local_sgs.group_type > idlest_sgs.group_type {
            return Some(idlest.clone());
        }
        match local_sgs.group_type {
            GroupType::Overloaded | GroupType::FullyBusy => {
                // allowed imbalance based on load: 1024 · (pct − 100) / 100 (174 for 117)
                let imbalance = scale_load_down(NICE_0_LOAD) * (d.imbalance_pct as u64 - 100) / 100;
                // across NUMA nodes, add the imbalance to the remote load and consider
                // staying local
                if d.flags & SD_NUMA != 0 && idlest_sgs.avg_load + imbalance >= local_sgs.avg_load {
                    return None;
                }
                // if the local group is less loaded than the idlest, don't push
                if idlest_sgs.avg_load >= local_sgs.avg_load + imbalance {
                    return None;
                }
                if 100 * local_sgs.avg_load <= d.imbalance_pct as u64 * idlest_sgs.avg_load {
                    return None;
                }
            }
            // not used in the slow wakeup path
            GroupType::Imbalanced | GroupType::AsymPacking | GroupType::SmtBalance => return None,
            GroupType::MisfitTask => {
                // select the group with the highest max capacity
                if local.max_capacity >= idlest.max_capacity {
                    return None;
                }
            }
            GroupType::HasSpare => {
                if d.flags & SD_NUMA != 0 {
                    // Keep the task close to the wakeup source while the number of running
                    // tasks stays below the allowed NUMA imbalance, limited to the local
                    // CPUs the task may use (the kernel's p->nr_cpus_allowed != NR_CPUS).
                    let imb_numa_nr = (local.span.and(allowed).weight() as u32).min(d.imb_numa_nr);
                    let imbalance = local_sgs.idle_cpus.abs_diff(idlest_sgs.idle_cpus);
                    // adjust_numa_imbalance(imbalance, dst_running, imb_numa_nr): 0 when
                    // allow_numa_imbalance() (dst_running <= imb_numa_nr) and small
                    let dst_running = local_sgs.sum_nr_running + 1;
                    if dst_running <= imb_numa_nr && imbalance <= NUMA_IMBALANCE_MIN {
                        return None;
                    }
                }
                // select the group with the highest number of idle CPUs
                if local_sgs.idle_cpus >= idlest_sgs.idle_cpus {
                    return None;
                }
            }
        }
        Some(idlest.clone())
    }

    /// The best CPU of `group` for `p` (smp.md §2.4.4): a SCHED_IDLE-only CPU at once (v7.1:
    /// only for a non-SCHED_IDLE task), else the idle CPU with the shallowest idle state
    /// (ties: the most recently idled), else the least loaded.
    /// An idle CPU's state is the one its cpuidle governor entered (idle.rs).
    /// kernel: fair.c sched_balance_find_dst_group_cpu() (find_idlest_group_cpu) @ v7.1
    pub(crate) fn find_idlest_group_cpu(
        &self,
        group_span: &CpuMask,
        p: TaskId,
        this_cpu: usize,
    ) -> usize {
        // check if we have any choice
        if group_span.weight() == 1 {
            return group_span.first().unwrap_or(this_cpu);
        }
        let mut min_load = u64::MAX;
        let mut min_exit_latency = u64::MAX;
        let mut latest_idle_timestamp = 0u64;
        let mut least_loaded_cpu = this_cpu;
        let mut shallowest_idle_cpu: Option<usize> = None;
        let cpus = group_span.and(&self.tasks[p.index()].cpus_allowed);
        for i in cpus.iter() {
            if self.sis_sched_idle_ok(i, p) {
                return i;
            }
            if self.available_idle_cpu(i) {
                let state =
                    (!self.machine.idle_states[i].is_empty()).then(|| self.idle_exit_latency(i).0);
                let stamp = self.rqs[i].idle_stamp;
                match state {
                    Some(exit) if exit < min_exit_latency => {
                        // priority to the smallest exit latency, whatever the timestamp
                        min_exit_latency = exit;
                        latest_idle_timestamp = stamp;
                        shallowest_idle_cpu = Some(i);
                    }
                    _ if (state.is_none() || state == Some(min_exit_latency))
                        && stamp > latest_idle_timestamp =>
                    {
                        // equal or no idle state: the most recently idled has a warmer cache
                        latest_idle_timestamp = stamp;
                        shallowest_idle_cpu = Some(i);
                    }
                    _ => {}
                }
            } else if shallowest_idle_cpu.is_none() {
                let load = self.cpu_load(i);
                if load < min_load {
                    min_load = load;
                    least_loaded_cpu = i;
                }
            }
        }
        shallowest_idle_cpu.unwrap_or(least_loaded_cpu)
    }

    /// The waker's CPU time for the idle-CPU scan of the wake-up being charged: the CPUs the
    /// scanners tested since `try_to_wake_up()` began × the platform's
    /// `c_select_idle_per_cpu` on `cpu` (issue #14; counted in the run's path totals). A
    /// platform without the constant (or with 0) is charged nothing and draws no jitter, so
    /// its cost streams are those of a model without the charge.
    pub(crate) fn take_select_idle_cost(&mut self, cpu: usize) -> u64 {
        let k = std::mem::take(&mut self.sel.scan_visited);
        if k == 0 {
            return 0;
        }
        let ns = self.cost(cpu, |c| {
            c.c_select_idle_per_cpu.map_or(0, |v| v.0) * u64::from(k)
        });
        let t = &mut self.stats.paths;
        t.idle_scans += 1;
        t.idle_scan_cpus += u64::from(k);
        t.idle_scan_ns += ns;
        ns
    }

    // ===================================================================== fast path (§2.5)

    /// `static_branch_unlikely(&sched_cluster_active)` as the wake-up path reads it: the key
    /// and its readers came with 8881e1639f1f (v6.7); before it the wake-up path ignores
    /// clusters (cfs.md §15.2).
    fn sis_cluster_active(&self) -> bool {
        self.machine.domains.sched_cluster_active && self.cfg.has(P::ClusterScan)
    }

    /// The wakeup fast path: an idle (or idle-enough) CPU sharing the LLC with `target`,
    /// in the kernel's rule order (smp.md §2.5). `this_cpu` is the waking CPU and `in_task`
    /// its context (rule 3).
    /// kernel: fair.c select_idle_sibling() @ v7.1 (fd54d81c2c0e switchable)
    pub(crate) fn select_idle_sibling(
        &mut self,
        p: TaskId,
        prev: usize,
        target: usize,
        this_cpu: usize,
        in_task: bool,
    ) -> usize {
        let asym = self.machine.domains.sched_asym_cpucapacity;
        let cluster = self.sis_cluster_active();
        // on asymmetric systems, update the task's utilization: it is checked against the
        // CPUs' capacities
        let mut task_util = 0;
        if asym {
            self.sync_entity_load_avg(p);
            task_util = self.task_util_est(p);
        }
        let mut prev_aff = None;

        // 1. target
        if self.sis_idle_ok(target, p) && self.asym_fits_cpu(task_util, target) {
            return target;
        }
        // 2. if the previous CPU is cache affine and idle, don't be stupid
        if prev != target
            && self.cpus_share_cache(prev, target)
            && self.sis_idle_ok(prev, p)
            && self.asym_fits_cpu(task_util, prev)
        {
            if !cluster || self.cpus_share_resources(prev, target) {
                return prev;
            }
            // (22165f61d0c4: remembered for a failed scan)
            if self.cfg.has(P::ClusterPrevFallback) {
                prev_aff = Some(prev);
            }
        }
        // 3. a per-CPU kthread (e.g. an I/O completion kworker) lets the wakee stack behind
        //    it when the wakee queued the work from here: essentially a sync wakeup
        let current = self.rqs[this_cpu].curr;
        if self.is_per_cpu_kthread(current)
            && in_task
            && prev == this_cpu
            && self.rqs[this_cpu].nr_running <= 1
            && self.asym_fits_cpu(task_util, prev)
        {
            return prev;
        }
        // 4. a recently used CPU as a potential idle candidate
        let r = self.tasks[p.index()].recent_used_cpu;
        self.tasks[p.index()].recent_used_cpu = prev;
        let mut recent_used_cpu = None;
        if r != prev
            && r != target
            && self.cpus_share_cache(r, target)
            && self.sis_idle_ok(r, p)
            && self.tasks[p.index()].cpus_allowed.contains(r)
            && self.asym_fits_cpu(task_util, r)
        {
            if !cluster || self.cpus_share_resources(r, target) {
                return r;
            }
            if self.cfg.has(P::ClusterPrevFallback) {
                recent_used_cpu = Some(r);
            }
        }
        // 5. asymmetric capacity: the domain of interest is sd_asym_cpucapacity
        if asym {
            let pcd = &self.machine.domains.per_cpu[target];
            if let Some(idx) = pcd.sd_asym_cpucapacity {
                let sd = SdRef { cpu: target, idx };
                let mut visited = 0;
                let c = self.select_idle_capacity(p, sd, target, &mut visited);
                self.sel.scan_visited += visited;
                return c.unwrap_or(target);
            }
        }
        // 6. the LLC
        let Some(llc_idx) = self.machine.domains.per_cpu[target].sd_llc else {
            return target;
        };
        let sd = SdRef {
            cpu: target,
            idx: llc_idx,
        };
        // 7. SMT
        let mut has_idle_core = false;
        if self.sel.smt_active {
            has_idle_core = self.test_idle_cores(target);
            if !has_idle_core && self.cpus_share_cache(prev, target) {
                let mut visited = 0;
                let c = self.select_idle_smt(p, sd, prev, &mut visited);
                self.sel.scan_visited += visited;
                if let Some(i) = c {
                    return i;
                }
            }
        }
        // 8. scan the LLC
        if let Some(i) = self.select_idle_cpu(p, sd, has_idle_core, target) {
            return i;
        }
        // 9. cluster machines: prev or the recent CPU when the scan failed
        if let Some(c) = prev_aff {
            return c;
        }
        if let Some(c) = recent_used_cpu {
            return c;
        }
        target
    }

    /// `__select_idle_cpu()`: `cpu` if it is idle enough for `p`.
    /// kernel: fair.c __select_idle_cpu() @ v7.1 (fd54d81c2c0e switchable)
    fn __select_idle_cpu(&self, cpu: usize, p: TaskId) -> Option<usize> {
        self.sis_idle_ok(cpu, p).then_some(cpu)
    }

    /// Scans the SMT siblings of `core`: `core` if all are idle; otherwise records the first
    /// usable idle (or SCHED_IDLE-only fallback) sibling in `idle_cpu` and removes the core
    /// from `cpus` (smp.md §2.6.1). Adds the siblings it tests to `visited`.
    /// kernel: fair.c select_idle_core() @ v7.1 (fd54d81c2c0e, 23d04d8c6b8e switchable)
    fn select_idle_core(
        &self,
        p: TaskId,
        core: usize,
        cpus: &mut CpuMask,
        idle_cpu: &mut Option<usize>,
        visited: &mut u32,
    ) -> Option<usize> {
        let mut idle = true;
        let smt = &self.machine.smt_mask[core];
        // the fallback must lie in the scanned cpus (23d04d8c6b8e); before it, only in the
        // task's allowed CPUs, which may include a sibling outside the LLC domain
        let span_check = self.cfg.has(P::SelectIdleCoreSpan);
        let allowed = &self.tasks[p.index()].cpus_allowed;
        let candidate = |c: usize| {
            if span_check {
                cpus.contains(c)
            } else {
                allowed.contains(c)
            }
        };
        for cpu in smt.iter() {
            *visited += 1;
            if !self.available_idle_cpu(cpu) {
                idle = false;
                if idle_cpu.is_none() {
                    if self.sis_sched_idle_ok(cpu, p) && candidate(cpu) {
                        *idle_cpu = Some(cpu);
                        break;
                    }
                    continue;
                }
                break;
            }
            if idle_cpu.is_none() && candidate(cpu) {
                *idle_cpu = Some(cpu);
            }
        }
        if idle {
            return Some(core);
        }
        *cpus = cpus.andnot(smt);
        None
    }

    /// The first idle-enough SMT sibling of `target` (≠ target) in `sd` (smp.md §2.6.2; before
    /// 8aeaffef8c6e, v6.9, any allowed sibling, cfs.md §15.2). Adds the siblings it tests to
    /// `visited`.
    /// kernel: fair.c select_idle_smt() @ v7.1 (fd54d81c2c0e, 8aeaffef8c6e switchable)
    fn select_idle_smt(
        &self,
        p: TaskId,
        sd: SdRef,
        target: usize,
        visited: &mut u32,
    ) -> Option<usize> {
        let span = &self.sd(sd).span;
        let allowed = &self.tasks[p.index()].cpus_allowed;
        // (8aeaffef8c6e: a sibling outside the LLC domain, e.g. isolcpus=domain, is skipped)
        let span_check = self.cfg.has(P::SelectIdleSmtSpan);
        self.machine.smt_mask[target]
            .and(allowed)
            .iter()
            .filter(|&c| c != target && (!span_check || span.contains(c)))
            .find(|&c| {
                *visited += 1;
                self.sis_idle_ok(c, p)
            })
    }

    /// Scans the LLC for an idle core (when the hint says there is one) or an idle CPU,
    /// starting after `target` and bounded by the SIS_UTIL budget (smp.md §2.6.3). The CPUs it
    /// tests are added to `sel.scan_visited` (the waker's charge, issue #14).
    /// kernel: fair.c select_idle_cpu() @ v7.1
    fn select_idle_cpu(
        &mut self,
        p: TaskId,
        sd: SdRef,
        has_idle_core: bool,
        target: usize,
    ) -> Option<usize> {
        let mut visited = 0u32;
        let c = self.select_idle_cpu_scan(p, sd, has_idle_core, target, &mut visited);
        self.sel.scan_visited += visited;
        c
    }

    /// [`Self::select_idle_cpu`]'s body; `visited` counts the CPUs whose idleness the kernel's
    /// loops test (`__select_idle_cpu()` calls, and each sibling `select_idle_core()` reads).
    fn select_idle_cpu_scan(
        &mut self,
        p: TaskId,
        sd: SdRef,
        has_idle_core: bool,
        target: usize,
        visited: &mut u32,
    ) -> Option<usize> {
        let mut cpus = self.sd(sd).span.and(&self.tasks[p.index()].cpus_allowed);
        let mut idle_cpu: Option<usize> = None;
        // "because !--nr is the condition to stop scan"
        let mut nr: i64 = i64::MAX;
        if self.cfg.feat(crate::features::Feature::SIS_UTIL) {
            if let Some(s) = self.machine.domains.per_cpu[target].sd_llc_shared {
                nr = self.sel.llc[s].nr_idle_scan as i64 + 1;
                // an overloaded LLC is unlikely to have an idle CPU or core
                if nr == 1 {
                    return None;
                }
            }
        }
        let n = self.ncpus;
        #[cfg(debug_assertions)]
        if let Err(e) = self.idle_masks_consistent(&cpus) {
            panic!("select_idle_cpu: stale idle mask: {e}");
        }
        // Without an idle-core hint every CPU of the scan costs one unit of the budget and the
        // scan stops at the first idle-enough one: find that CPU through the idle masks
        // (simulator-side index) and charge the budget, and the scan's cost, for the CPUs the
        // kernel's loop tests up to it (`budgeted_wrap_scan`), which gives the loop's result
        // without testing each CPU.
        if !has_idle_core {
            let ok = self.sis_idle_ok_mask(p);
            #[cfg(debug_assertions)]
            let reference = self.select_idle_cpu_literal(p, &cpus, target, nr);
            let mut cluster_visits = 0u32;
            let mut found = None;
            let mut done = false;
            // v6.7+: first scan the target's cluster (the LLC's first group, when it is one)
            if self.sis_cluster_active() {
                let g = &self.sd(sd).groups[0];
                if g.flags & SD_CLUSTER != 0 {
                    let sg_span = g.span.clone();
                    let in_cluster = cpus.and(&sg_span);
                    let (c, v) = budgeted_wrap_scan(&in_cluster, &ok, target, nr);
                    cluster_visits = v;
                    if c.is_some() || in_cluster.weight() as i64 >= nr {
                        // found, or the budget ran out inside the cluster
                        found = c;
                        done = true;
                    } else {
                        nr -= v as i64;
                        cpus = cpus.andnot(&sg_span);
                    }
                }
            }
            if !done {
                let (c, v) = budgeted_wrap_scan(&cpus, &ok, target, nr);
                found = c;
                cluster_visits += v;
            }
            *visited += cluster_visits;
            #[cfg(debug_assertions)]
            assert_eq!(
                (found, cluster_visits),
                reference,
                "select_idle_cpu: the idle-mask scan and the kernel's loop disagree (target {target})"
            );
            return found;
        }
        // v6.7+: first scan the target's cluster (the LLC's first group, when it is one)
        if self.sis_cluster_active() {
            let g = &self.sd(sd).groups[0];
            if g.flags & SD_CLUSTER != 0 {
                let sg_span = g.span.clone();
                // cpu = (target + 1 + k) % n for k in 0..n, without a division per CPU
                let mut cpu = target;
                for _ in 0..n {
                    cpu = if cpu + 1 == n { 0 } else { cpu + 1 };
                    if !sg_span.contains(cpu) || !cpus.contains(cpu) {
                        continue;
                    }
                    if let Some(i) =
                        self.select_idle_core(p, cpu, &mut cpus, &mut idle_cpu, visited)
                    {
                        return Some(i);
                    }
                }
                cpus = cpus.andnot(&sg_span);
            }
        }
        // for_each_cpu_wrap(cpu, cpus, target + 1), reading the mask live: select_idle_core
        // removes the siblings it has looked at
        let mut cpu = target;
        for _ in 0..n {
            cpu = if cpu + 1 == n { 0 } else { cpu + 1 };
            if !cpus.contains(cpu) {
                continue;
            }
            if let Some(i) = self.select_idle_core(p, cpu, &mut cpus, &mut idle_cpu, visited) {
                return Some(i);
            }
        }
        // the hint was stale
        self.set_idle_cores(target, false);
        idle_cpu
    }

    /// Debug-build check of the idle-mask jumps: the kernel's `select_idle_cpu()` loops
    /// without an idle-core hint, CPU by CPU (cluster pass first), returning the CPU found and
    /// the number of CPUs tested.
    #[cfg(debug_assertions)]
    fn select_idle_cpu_literal(
        &self,
        p: TaskId,
        cpus: &CpuMask,
        target: usize,
        mut nr: i64,
    ) -> (Option<usize>, u32) {
        let n = self.ncpus;
        let mut cpus = cpus.clone();
        let mut tested = 0u32;
        let pass = |span: &CpuMask, nr: &mut i64, tested: &mut u32| -> Option<Option<usize>> {
            let mut cpu = target;
            for _ in 0..n {
                cpu = if cpu + 1 == n { 0 } else { cpu + 1 };
                if !span.contains(cpu) {
                    continue;
                }
                *nr -= 1;
                if *nr <= 0 {
                    return Some(None);
                }
                *tested += 1;
                if let Some(c) = self.__select_idle_cpu(cpu, p) {
                    return Some(Some(c));
                }
            }
            None
        };
        if self.sis_cluster_active() {
            let sd = SdRef {
                cpu: target,
                idx: self.machine.domains.per_cpu[target].sd_llc.unwrap(),
            };
            let g = &self.sd(sd).groups[0];
            if g.flags & SD_CLUSTER != 0 {
                let in_cluster = cpus.and(&g.span);
                if let Some(r) = pass(&in_cluster, &mut nr, &mut tested) {
                    return (r, tested);
                }
                cpus = cpus.andnot(&g.span);
            }
        }
        match pass(&cpus, &mut nr, &mut tested) {
            Some(r) => (r, tested),
            None => (None, tested),
        }
    }

    /// Asymmetric machines: the first idle-enough CPU of `sd` (from `target`, inclusive; from
    /// `target + 1`, wrapping round to `target` last, before 7ee7642c9141) that fits `p`, else
    /// the best of those that do not (larger capacity) (smp.md §6.3, cfs.md §15.2). Adds the
    /// CPUs it tests to `visited`.
    /// kernel: fair.c select_idle_capacity() @ v7.1 (fd54d81c2c0e, 7ee7642c9141 switchable)
    fn select_idle_capacity(
        &self,
        p: TaskId,
        sd: SdRef,
        target: usize,
        visited: &mut u32,
    ) -> Option<usize> {
        let cpus = self.sd(sd).span.and(&self.tasks[p.index()].cpus_allowed);
        let task_util = self.task_util_est(p);
        let mut best_cap = 0u64;
        let mut best_fits = 0i32;
        let mut best_cpu = None;
        let start = if self.cfg.has(P::AsymCapacityScanTarget) {
            target
        } else {
            target + 1
        };
        for cpu in cpus.iter_wrap(start) {
            *visited += 1;
            let cpu_cap = self.capacity_of(cpu);
            if !self.sis_idle_ok(cpu, p) {
                continue;
            }
            let fits = self.util_fits_cpu(task_util, cpu);
            // this CPU fits with all requirements
            if fits > 0 {
                return Some(cpu);
            }
            // (fits < 0, only the uclamp_min hint misses, cannot happen without uclamp)
            // first the CPU which fits better (−1 better than 0), then the larger capacity
            if fits < best_fits || (fits == best_fits && cpu_cap > best_cap) {
                best_cap = cpu_cap;
                best_cpu = Some(cpu);
                best_fits = fits;
            }
        }
        best_cpu
    }
}

#[cfg(test)]
mod tests {
    //! smp.md §11 test vectors at function level. Machine states are set directly on the
    //! runqueue counters and PELT fields that placement reads.
    use super::*;
    use crate::presets::{KernelConfig, PreemptModel};
    use crate::syscalls::{Ctx, Op, Program, SysResult, TaskAttrs};
    use crate::MachineDesc;
    use schedlab_platform::Platform;

    struct Spin;
    impl Program for Spin {
        fn next(&mut self, _cx: &mut Ctx<'_>, _last: SysResult) -> Op {
            Op::Run(1_000_000)
        }
    }

    fn kernel(spec: &str, m: MachineDesc) -> Kernel {
        Kernel::new(KernelConfig::parse(spec).unwrap(), m, 1).unwrap()
    }

    /// `smp:N`: one LLC of N CPUs, capacity 1024.
    fn smp(spec: &str, n: usize) -> Kernel {
        kernel(spec, MachineDesc::ideal(n, 250, PreemptModel::Full))
    }

    fn from_toml(spec: &str, text: &str) -> Kernel {
        let p = Platform::from_toml_str(text, "test.toml").unwrap();
        kernel(spec, MachineDesc::from_platform(&p))
    }

    fn task(k: &mut Kernel, name: &str, policy: Policy) -> TaskId {
        let attrs = TaskAttrs {
            comm: Some(name.to_string()),
            policy: Some(policy),
            ..Default::default()
        };
        k.create_task(Box::new(Spin), &attrs, None, false)
    }

    /// Puts `t` on `cpu`'s runqueue counters as an enqueue would (delayed: blocked while
    /// ineligible, still queued); `running` makes it the CPU's current task.
    fn queue(k: &mut Kernel, t: TaskId, cpu: usize, running: bool, delayed: bool) {
        k.set_task_cpu_raw(t, cpu);
        let idle = k.tasks[t.index()].policy == Policy::Idle;
        let tk = &mut k.tasks[t.index()];
        tk.state = if delayed {
            TaskState::Interruptible
        } else {
            TaskState::Running
        };
        tk.on_rq = OnRq::Queued;
        let se = tk.se;
        k.se[se.index()].on_rq = true;
        k.se[se.index()].sched_delayed = delayed;
        k.rqs[cpu].nr_running += 1;
        let c = &mut k.cfs[k.rqs[cpu].cfs.index()];
        c.nr_queued += 1;
        c.h_nr_queued += 1;
        c.h_nr_runnable += (!delayed) as u32;
        c.h_nr_idle += idle as u32;
        if running {
            k.rqs[cpu].curr = t;
            k.tasks[t.index()].on_cpu = true;
        }
        k.update_idle_masks(cpu);
    }

    /// A sleeping task that last ran on `cpu`.
    fn sleep_on(k: &mut Kernel, t: TaskId, cpu: usize) {
        k.set_task_cpu_raw(t, cpu);
        k.tasks[t.index()].state = TaskState::Interruptible;
        k.tasks[t.index()].on_rq = OnRq::No;
        k.tasks[t.index()].recent_used_cpu = cpu;
    }

    fn set_cpu_load(k: &mut Kernel, cpu: usize, load: u64) {
        let c = k.rqs[cpu].cfs;
        k.cfs[c.index()].avg.load_avg = load;
    }

    fn set_cpu_util(k: &mut Kernel, cpu: usize, util: u64) {
        let c = k.rqs[cpu].cfs;
        k.cfs[c.index()].avg.util_avg = util;
        k.cfs[c.index()].avg.runnable_avg = util;
    }

    /// Gives `t` the load that makes `task_h_load(t) == want` on its CPU (the kernel divides
    /// by `cfs_rq_load_avg + 1`, so the entity load is `⌈want·(L+1)/L⌉`).
    fn set_h_load(k: &mut Kernel, t: TaskId, want: u64) {
        let cpu = k.tasks[t.index()].cpu;
        let l = k.cpu_load(cpu);
        let x = (want * (l + 1)).div_ceil(l);
        let se = k.tasks[t.index()].se;
        k.se[se.index()].avg.load_avg = x;
        assert_eq!(k.task_h_load(t), want);
    }

    fn llc_sd(k: &Kernel, cpu: usize) -> SdRef {
        SdRef {
            cpu,
            idx: k.machine.domains.per_cpu[cpu].sd_llc.unwrap(),
        }
    }

    // ---------------------------------------------------------------- TV-01

    /// TV-01 machine: LLC{0,1}; CPU0 runs W (cpu_load 1024, task_h_load 1024); CPU1 idle;
    /// P slept on CPU1 (task_h_load 300, blocked load cpu_load(1) = 300).
    fn tv01(spec: &str) -> (Kernel, TaskId) {
        let mut k = smp(spec, 2);
        let w = task(&mut k, "W", Policy::Normal);
        queue(&mut k, w, 0, true, false);
        set_cpu_load(&mut k, 0, 1024);
        set_h_load(&mut k, w, 1024);
        let p = task(&mut k, "P", Policy::Normal);
        sleep_on(&mut k, p, 1);
        set_cpu_load(&mut k, 1, 300);
        set_h_load(&mut k, p, 300);
        (k, p)
    }

    #[test]
    fn tv01_sync_wakeup_two_cpus() {
        let wf = WF_TTWU | WF_SYNC;
        // WA_IDLE: sync & nr_running(0) = 1 -> target CPU0; SIS rule 2: prev CPU1 idle -> CPU1
        let (mut k, p) = tv01("v6.18");
        let sd = llc_sd(&k, 0);
        assert_eq!(k.wake_affine(sd, p, 0, 1, true), 0);
        assert_eq!(k.select_task_rq_fair(p, 1, wf, 0, true), 1);
        // NO_WA_IDLE, WA_WEIGHT, WA_BIAS: this_eff = (1024 − 1024 + 300)·100·1024 = 30 720 000,
        // prev_eff = (300 − 300)·108·1024 + 1 = 1 -> not smaller -> prev -> CPU1 (rule 1)
        assert!(!wake_affine_weight_eff(
            1024,
            300,
            Some(1024),
            300,
            1024,
            1024,
            117,
            true
        ));
        let (mut k, p) = tv01("v6.18 NO_WA_IDLE");
        assert_eq!(k.wake_affine(sd, p, 0, 1, true), 1);
        assert_eq!(k.select_task_rq_fair(p, 1, wf, 0, true), 1);
        // NO_WA_IDLE, NO_WA_WEIGHT: wake_affine returns prev -> CPU1
        let (mut k, p) = tv01("v6.18 NO_WA_IDLE NO_WA_WEIGHT");
        assert_eq!(k.wake_affine(sd, p, 0, 1, true), 1);
        assert_eq!(k.select_task_rq_fair(p, 1, wf, 0, true), 1);
    }

    #[test]
    fn tv01b_prev_is_waker_cpu_scan_budget() {
        // prev = CPU0 = this CPU, recent_used_cpu = 0: wake_affine skipped, target 0, rules
        // 1–4 fail; nr_idle_scan = 1: nr = 2, first step nr -> 1, CPU1 idle -> CPU1
        let (mut k, p) = tv01("v6.18");
        sleep_on(&mut k, p, 0);
        k.set_nr_idle_scan(0, 1);
        assert_eq!(k.select_task_rq_fair(p, 0, WF_TTWU | WF_SYNC, 0, true), 1);
        // nr_idle_scan = 0: nr = 1 -> no scan -> CPU0 (stacks on the waker)
        let (mut k, p) = tv01("v6.18");
        sleep_on(&mut k, p, 0);
        k.set_nr_idle_scan(0, 0);
        assert_eq!(k.select_task_rq_fair(p, 0, WF_TTWU | WF_SYNC, 0, true), 0);
    }

    // ---------------------------------------------------------------- TV-02

    #[test]
    fn tv02_sync_wakeup_across_llcs() {
        // PKG{0,1} with SD_WAKE_AFFINE over two single-CPU LLCs (no sd_llc)
        let toml = r#"
name = "tv02"
description = "two CPUs, one package, separate LLCs"
extends = "smp:2"
[topology]
cpus = 2
llc = [0, 1]
"#;
        for v in ["v6.6", "v6.12", "v6.18", "v7.1"] {
            let mut k = from_toml(v, toml);
            let pc = &k.machine.domains.per_cpu[0];
            assert_eq!(pc.domains.len(), 1);
            assert!(pc.domains[0].has(SD_WAKE_AFFINE) && pc.sd_llc.is_none());
            let w = task(&mut k, "W", Policy::Normal);
            queue(&mut k, w, 0, true, false);
            let p = task(&mut k, "P", Policy::Normal);
            sleep_on(&mut k, p, 1); // recent_used_cpu = 1
                                    // wake_affine_idle -> CPU0 (sync, 1 task); SIS(prev 1, target 0): rule 1 fails,
                                    // rule 2 fails (no shared cache), rule 4 fails (recent == prev), no sd_llc ->
                                    // target -> CPU0 (the wakee stacks on the waker; CPU1 stays idle)
            assert_eq!(k.wake_affine_idle(0, 1, true), Some(0), "{v}");
            assert_eq!(
                k.select_task_rq_fair(p, 1, WF_TTWU | WF_SYNC, 0, true),
                0,
                "{v}"
            );
        }
    }

    // ---------------------------------------------------------------- TV-03

    #[test]
    fn tv03_wake_wide_thresholds() {
        // LLC of 4 CPUs
        let mut k = smp("v6.18", 4);
        let w = task(&mut k, "W", Policy::Normal);
        queue(&mut k, w, 0, true, false);
        let p = task(&mut k, "P", Policy::Normal);
        sleep_on(&mut k, p, 1);
        let flips = |k: &mut Kernel, waker: u32, wakee: u32| {
            k.tasks[w.index()].wakee_flips = waker;
            k.tasks[p.index()].wakee_flips = wakee;
            k.wake_wide(p, 0)
        };
        // waker 16, wakee 4: slave 4 ≥ 4 and master 16 ≥ 16 -> wide
        assert!(flips(&mut k, 16, 4));
        // waker 15: master 15 < 16 -> not wide
        assert!(!flips(&mut k, 15, 4));
        // wakee 3: slave 3 < 4 -> not wide
        assert!(!flips(&mut k, 16, 3));
        // wide -> want_affine = false -> no SD_BALANCE_WAKE -> fast path with target = prev:
        // CPU1 idle -> rule 1 -> CPU1 even for a sync wakeup from a 1-task CPU0
        flips(&mut k, 16, 4);
        assert_eq!(k.select_task_rq_fair(p, 1, WF_TTWU | WF_SYNC, 0, true), 1);
    }

    // ---------------------------------------------------------------- TV-04

    /// TV-04 machine: LLC{0..3}, nr_idle_scan = 2; CPU0 W (normal, load 1024); CPU1 one
    /// SCHED_IDLE hog I (load 3, plus P's blocked load); CPU2 idle; CPU3 one normal task.
    fn tv04(spec: &str, wakee: Policy) -> (Kernel, TaskId) {
        let mut k = smp(spec, 4);
        k.set_nr_idle_scan(0, 2);
        let w = task(&mut k, "W", Policy::Normal);
        queue(&mut k, w, 0, true, false);
        set_cpu_load(&mut k, 0, 1024);
        let i = task(&mut k, "I", Policy::Idle);
        queue(&mut k, i, 1, true, false);
        let n = task(&mut k, "N", Policy::Normal);
        queue(&mut k, n, 3, true, false);
        let p = task(&mut k, "P", wakee);
        sleep_on(&mut k, p, 1);
        let pl = if wakee == Policy::Idle { 3 } else { 1024 };
        set_cpu_load(&mut k, 1, 3 + pl);
        set_h_load(&mut k, p, pl);
        (k, p)
    }

    #[test]
    fn tv04_sched_idle_wakee_fast_path() {
        // SCHED_IDLE wakee: wake_affine_idle NONE; wake_affine_weight this_eff =
        // (1024 + 3)·100·1024 vs prev_eff = (6 − 3)·108·1024 -> prev -> target CPU1
        let (k, p) = tv04("v7.0", Policy::Idle);
        assert_eq!(k.wake_affine(llc_sd(&k, 0), p, 0, 1, false), 1);
        assert!(!wake_affine_weight_eff(
            1024, 6, None, 3, 1024, 1024, 117, true
        ));
        // ≤ v7.0: rule 1, sched_idle_cpu(1) -> CPU1 (P shares CPU1 with I)
        for v in ["v6.6", "v6.12", "v6.18", "v7.0", "v7.1 -fd54d81c2c0e"] {
            let (mut k, p) = tv04(v, Policy::Idle);
            assert_eq!(k.select_task_rq_fair(p, 1, WF_TTWU, 0, true), 1, "{v}");
        }
        // v7.1: rule 1 fails for an idle-policy wakee; rules 2 and 4 skip (prev = target,
        // recent = prev); scan from CPU2: nr 3 -> 2, CPU2 available idle -> CPU2
        for v in ["v7.1", "v7.0 +fd54d81c2c0e", "v6.12 +fd54d81c2c0e"] {
            let (mut k, p) = tv04(v, Policy::Idle);
            assert_eq!(k.select_task_rq_fair(p, 1, WF_TTWU, 0, true), 2, "{v}");
        }
        // SCHED_NORMAL wakee (load 1024): prev_eff = (3 + 1024 − 1024)·108·1024 -> target
        // CPU1 -> rule 1 true in both versions -> CPU1
        for v in ["v7.0", "v7.1"] {
            let (mut k, p) = tv04(v, Policy::Normal);
            assert_eq!(k.select_task_rq_fair(p, 1, WF_TTWU, 0, true), 1, "{v}");
        }
    }

    /// The SCHED_IDLE placement statistics on TV-04 (core.c select_task_rq() is the hook):
    /// ≤ v7.0 places the SCHED_IDLE wakee on CPU1, which runs only the SCHED_IDLE hog I, so
    /// the wake-up counts as placed and stacked; with fd54d81c2c0e it goes to the idle CPU2
    /// (placed, not stacked); a SCHED_NORMAL wakee is not a SCHED_IDLE placement at all.
    #[test]
    fn tv04_sched_idle_placement_statistics() {
        use crate::stats::PLACE_WAKE;
        for (v, wakee, cpu, placed, stacked) in [
            ("v7.0", Policy::Idle, 1, 1, 1),
            ("v7.1", Policy::Idle, 2, 1, 0),
            ("v7.0", Policy::Normal, 1, 0, 0),
        ] {
            let (mut k, p) = tv04(v, wakee);
            let mut wf = WF_TTWU;
            assert_eq!(k.select_task_rq(p, 1, &mut wf, 0, true), cpu, "{v}");
            assert_eq!(k.stats.sched_idle_placed[PLACE_WAKE], placed, "{v}");
            assert_eq!(k.stats.sched_idle_stacked[PLACE_WAKE], stacked, "{v}");
            assert_eq!(k.tasks[p.index()].stacked_at.is_some(), stacked == 1, "{v}");
        }
    }

    // ---------------------------------------------------------------- TV-05

    /// PKG{0..3} over MC{0,1} and MC{2,3}.
    const TWO_LLC4: &str = r#"
name = "tv05"
description = "4 CPUs, two 2-CPU LLCs in one package"
extends = "smp:4"
[topology]
cpus = 4
llc = [0, 0, 1, 1]
"#;

    #[test]
    fn tv05_find_idlest_group_cpu_sched_idle() {
        // group {2,3}: CPU2 SCHED_IDLE-only, CPU3 idle (exit latency 1 µs)
        let run = |spec: &str, policy: Policy| {
            let mut k = from_toml(spec, TWO_LLC4);
            k.machine.idle_exit_ns[3] = 1_000;
            let i = task(&mut k, "I", Policy::Idle);
            queue(&mut k, i, 2, true, false);
            let p = task(&mut k, "P", policy);
            k.find_idlest_group_cpu(&CpuMask::range(2, 4), p, 0)
        };
        // ≤ v7.0, any policy: the iteration hits CPU2 first -> CPU2
        for pol in [Policy::Idle, Policy::Normal] {
            assert_eq!(run("v7.0", pol), 2);
            assert_eq!(run("v6.6", pol), 2);
            // mainline of seed 003 (6.19): the sched_idle_cpu() shortcut
            assert_eq!(run("v6.19", pol), 2);
        }
        // v7.1, P SCHED_IDLE: CPU2 neither chosen nor idle; CPU3 idle -> CPU3
        assert_eq!(run("v7.1", Policy::Idle), 3);
        assert_eq!(run("v6.19 +fd54d81c2c0e", Policy::Idle), 3);
        // v7.1, P SCHED_NORMAL -> CPU2 (the same as without the patch)
        assert_eq!(run("v7.1", Policy::Normal), 2);
        assert_eq!(run("v6.19 +fd54d81c2c0e", Policy::Normal), 2);
    }

    #[test]
    fn tv05b_fork_slow_path_descends() {
        // CPU0 parent, CPU1 busy, util 900 each (fully busy: 2048·100 ≤ 1800·117); CPU2
        // SCHED_IDLE-only with util 100; CPU3 idle; fork of a SCHED_IDLE child from CPU0.
        let setup = |spec: &str| {
            let mut k = from_toml(spec, TWO_LLC4);
            let parent = task(&mut k, "parent", Policy::Normal);
            queue(&mut k, parent, 0, true, false);
            let b = task(&mut k, "B", Policy::Normal);
            queue(&mut k, b, 1, true, false);
            let i = task(&mut k, "I", Policy::Idle);
            queue(&mut k, i, 2, true, false);
            set_cpu_util(&mut k, 0, 900);
            set_cpu_util(&mut k, 1, 900);
            set_cpu_util(&mut k, 2, 100);
            let attrs = TaskAttrs {
                comm: Some("child".into()),
                policy: Some(Policy::Idle),
                ..Default::default()
            };
            let p = k.create_task(Box::new(Spin), &attrs, Some(parent), false);
            (k, p)
        };
        for v in ["v6.18", "v6.19", "v7.0", "v7.1", "v6.19 +fd54d81c2c0e"] {
            let (k, p) = setup(v);
            // PKG: local {0,1} fully_busy, {2,3} has_spare (1 idle) -> idlest {2,3}
            let pkg = SdRef { cpu: 0, idx: 1 };
            assert_eq!(k.sd(pkg).span_weight, 4);
            let local = k.update_sg_wakeup_stats(pkg, &k.sd(pkg).groups[0].clone(), p);
            assert_eq!(local.group_type, GroupType::FullyBusy, "{v}");
            let g = k.find_idlest_group(pkg, p, 0).unwrap();
            assert_eq!(g.span, CpuMask::range(2, 4));
            // ≤ v7.0 picks CPU2 at this level; v7.1 CPU3 directly
            let at_pkg = k.find_idlest_group_cpu(&g.span, p, 0);
            let patched = v.contains("v7.1") || v.contains("fd54d81c2c0e");
            assert_eq!(at_pkg, if patched { 3 } else { 2 }, "{v}");
        }
        // then descending into MC{2,3}: local {2} has_spare with 0 idle vs {3} with 1 idle
        // -> CPU3 (all versions)
        for v in [
            "v6.6",
            "v6.12",
            "v6.18",
            "v6.19",
            "v7.0",
            "v7.1",
            "v6.19 +fd54d81c2c0e",
        ] {
            let (mut k, p) = setup(v);
            assert_eq!(k.select_task_rq_fair(p, 0, WF_FORK, 0, true), 3, "{v}");
        }
    }

    /// TV-05 / TV-05b as a run, through `Op::Spawn` (`wake_up_new_task`, WF_FORK) and
    /// `Op::Exec` (`sched_exec`, WF_EXEC) on the TV-05 machine: three hogs pinned to their
    /// CPUs — `cpu0` on CPU0 (None: no hog there), B (SCHED_NORMAL) on CPU1, I (SCHED_IDLE)
    /// on CPU2 — CPU3 idle, and a task P pinned to CPU0 that runs `run_ns`, then widens its
    /// affinity to all CPUs and (`exec`) execs or (else) forks a child of `policy` allowed on
    /// every CPU. Returns the CPU the exec'd task or the child runs its first work on, and the
    /// kernel.
    fn tv05b_live(
        spec: &str,
        policy: Policy,
        exec: bool,
        cpu0: Option<Policy>,
        run_ns: u64,
    ) -> (usize, Kernel) {
        use crate::exec::tests::script;
        use crate::syscalls::Spawn;
        use std::cell::Cell;
        use std::rc::Rc;
        let mut k = from_toml(spec, TWO_LLC4);
        let pinned =
            |k: &mut Kernel, name: &str, pol: Policy, cpu: usize, prog: Box<dyn Program>| {
                let attrs = TaskAttrs {
                    comm: Some(name.to_string()),
                    policy: Some(pol),
                    cpus: Some(CpuMask::single(cpu)),
                    ..Default::default()
                };
                let t = k.create_task(prog, &attrs, None, false);
                k.start_task(t);
            };
        if let Some(pol) = cpu0 {
            pinned(&mut k, "H", pol, 0, Box::new(Spin));
        }
        pinned(&mut k, "B", Policy::Normal, 1, Box::new(Spin));
        pinned(&mut k, "I", Policy::Idle, 2, Box::new(Spin));
        let first: Rc<Cell<Option<usize>>> = Rc::default();
        let f = first.clone();
        let on_first_work = move |cx: &mut Ctx<'_>| {
            f.set(Some(cx.cpu()));
            Some(Op::Run(10_000))
        };
        let prog = script(move |i, cx, _| match i {
            0 => Some(Op::Run(run_ns)),
            1 => {
                // sched_setaffinity() to every CPU, without moving the task
                let t = &mut cx.k.tasks[cx.task.index()];
                t.cpus_allowed = CpuMask::range(0, 4);
                t.nr_cpus_allowed = 4;
                if exec {
                    return Some(Op::Exec);
                }
                let on_first_work = on_first_work.clone();
                Some(Op::Spawn(Box::new(Spawn {
                    program: script(move |j, cx, _| match j {
                        0 => on_first_work(cx),
                        _ => None,
                    }),
                    thread: false,
                    attrs: TaskAttrs {
                        comm: Some("child".into()),
                        policy: Some(policy),
                        cpus: Some(CpuMask::range(0, 4)),
                        ..Default::default()
                    },
                })))
            }
            2 if exec => on_first_work(cx),
            2 => Some(Op::Run(1 << 40)),
            _ => None,
        });
        pinned(&mut k, "P", policy, 0, prog);
        k.run_until(run_ns * 4);
        let cpu = first.get().expect("the child or the exec'd task ran");
        (cpu, k)
    }

    #[test]
    fn tv05b_fork_and_exec_as_a_run() {
        // Fork (TV-05b): P alone on CPU0 for 200 ms next to B on CPU1: both CPUs' util is
        // about 1024·(1 − 0.5^(200/32)) ≈ 1010 (smp.md TV-20), Σ ≈ 2020 ≥ 1751 -> local {0,1}
        // fully_busy; {2,3} has_spare with 1 idle CPU -> idlest {2,3}. find_idlest_group_cpu
        // takes CPU2 on v6.19 (sched_idle_cpu) and, with fd54d81c2c0e, for a SCHED_NORMAL
        // child; CPU3 for a SCHED_IDLE child with the patch. From CPU2 the descent into
        // MC{2,3} compares {2} (I, util ≈ 1010: fully_busy) with {3} (idle, has_spare) ->
        // CPU3. Every child of every kernel starts on CPU3.
        for spec in ["v6.19", "v6.19 +fd54d81c2c0e"] {
            for pol in [Policy::Idle, Policy::Normal] {
                let (cpu, _) = tv05b_live(spec, pol, false, None, 200_000_000);
                assert_eq!(cpu, 3, "{spec} {pol:?}");
            }
        }
        // Exec (smp.md §1.8): P shares CPU0 with a hog H of its own policy for 20 ms, then
        // execs. P itself is discounted: local {0,1} has H and B, no idle CPU; {2,3} has 1 ->
        // idlest {2,3} (has_spare on both sides, more idle CPUs) -> CPU2 or CPU3 as above;
        // from CPU2 the descent goes to the idle CPU3 ({3} has 1 idle CPU, {2} none). The
        // stopper moves P there: one exec migration, P's first migration.
        for spec in ["v6.19", "v6.19 +fd54d81c2c0e"] {
            for pol in [Policy::Idle, Policy::Normal] {
                let (cpu, k) = tv05b_live(spec, pol, true, Some(pol), 20_000_000);
                assert_eq!(cpu, 3, "{spec} {pol:?}");
                assert_eq!(k.stats.exec_migrations, 1, "{spec} {pol:?}");
            }
        }
    }

    // ---------------------------------------------------------------- TV-07

    #[test]
    fn tv07_sync_rule_with_delayed_task_on_waker_cpu() {
        // CPU0 runs W and holds a delayed D (nr_running 2; h_nr_queued 2, h_nr_runnable 1);
        // CPU1 (prev) busy; WF_SYNC, WA_IDLE
        let run = |spec: &str| {
            let mut k = smp(spec, 2);
            let w = task(&mut k, "W", Policy::Normal);
            queue(&mut k, w, 0, true, false);
            let d = task(&mut k, "D", Policy::Normal);
            queue(&mut k, d, 0, false, true);
            let q = task(&mut k, "Q", Policy::Normal);
            queue(&mut k, q, 1, true, false);
            let c = &k.cfs[k.rqs[0].cfs.index()];
            assert_eq!(
                (k.rqs[0].nr_running, c.h_nr_queued, c.h_nr_runnable),
                (2, 2, 1)
            );
            k.wake_affine_idle(0, 1, true)
        };
        // v6.12.0–v6.15: nr_running(0) == 1 false -> NONE (prev not idle): WA_WEIGHT decides
        assert_eq!(run("v6.12"), None);
        assert_eq!(run("v6.18 -aa3ee4f0b754"), None);
        // v6.16+ and v6.12.y-late: 2 − (2 − 1) = 1 -> target CPU0
        assert_eq!(run("v6.18"), Some(0));
        assert_eq!(run("v7.1"), Some(0));
        assert_eq!(run("v6.12.y-late"), Some(0));
        assert_eq!(run("v6.12 +aa3ee4f0b754"), Some(0));
    }

    // ---------------------------------------------------------------- TV-08

    #[test]
    fn tv08_rule_order() {
        // LLC{0..3}, nr_idle_scan = 4; target 0 busy, prev 1 busy, recent_used_cpu 3 idle,
        // CPU2 idle
        let setup = |cpu3_busy: bool| {
            let mut k = smp("v6.18", 4);
            k.set_nr_idle_scan(0, 4);
            let a = task(&mut k, "A", Policy::Normal);
            queue(&mut k, a, 0, true, false);
            let b = task(&mut k, "B", Policy::Normal);
            queue(&mut k, b, 1, true, false);
            if cpu3_busy {
                let c = task(&mut k, "C", Policy::Normal);
                queue(&mut k, c, 3, true, false);
            }
            let p = task(&mut k, "P", Policy::Normal);
            sleep_on(&mut k, p, 1);
            k.tasks[p.index()].recent_used_cpu = 3;
            (k, p)
        };
        // rule 4 -> CPU3 (recent before scan), and afterwards p.recent_used_cpu = 1
        let (mut k, p) = setup(false);
        assert_eq!(k.select_idle_sibling(p, 1, 0, 0, true), 3);
        assert_eq!(k.tasks[p.index()].recent_used_cpu, 1);
        // CPU3 busy: scan from CPU1 -> CPU2
        let (mut k, p) = setup(true);
        assert_eq!(k.select_idle_sibling(p, 1, 0, 0, true), 2);
    }

    #[test]
    fn tv08_per_cpu_kthread_waker() {
        // the waker is a per-CPU kthread on CPU1, also the wakee's prev: this_cpu == prev,
        // wake_affine skipped, target CPU1; nr_running(1) ≤ 1, task context -> rule 3 -> CPU1
        let setup = |kthread: bool| {
            let mut k = smp("v6.18", 4);
            let kw = task(&mut k, "kworker/1:1", Policy::Normal);
            k.tasks[kw.index()].kthread = kthread;
            k.tasks[kw.index()].cpus_allowed = CpuMask::single(1);
            k.tasks[kw.index()].nr_cpus_allowed = 1;
            queue(&mut k, kw, 1, true, false);
            let a = task(&mut k, "A", Policy::Normal);
            queue(&mut k, a, 0, true, false);
            let p = task(&mut k, "P", Policy::Normal);
            sleep_on(&mut k, p, 1);
            k.tasks[p.index()].recent_used_cpu = 0;
            (k, p)
        };
        let (mut k, p) = setup(true);
        assert_eq!(k.select_task_rq_fair(p, 1, WF_TTWU, 1, true), 1);
        // rule 3 needs task context: from an interrupt the scan finds CPU2
        let (mut k, p) = setup(true);
        assert_eq!(k.select_task_rq_fair(p, 1, WF_TTWU, 1, false), 2);
        // an ordinary waker: the scan finds CPU2
        let (mut k, p) = setup(false);
        assert_eq!(k.select_task_rq_fair(p, 1, WF_TTWU, 1, true), 2);
    }

    // ---------------------------------------------------------------- TV-09

    #[test]
    fn tv09_sis_util_budget_arithmetic() {
        // 16-CPU LLC, imbalance_pct 117. Σ util 8192: x = 512, t = ⌊512²·117²/10 240 000⌋
        // = 350, nr_idle_scan = ⌊(1024 − 350)·16/1024⌋ = 10
        assert_eq!(idle_cpu_scan_budget(8192, 16, 117), 10);
        // Σ util 14000: x = 875, t = 1023 -> 0
        assert_eq!(idle_cpu_scan_budget(14000, 16, 117), 0);
        // Σ util 0 -> 16
        assert_eq!(idle_cpu_scan_budget(0, 16, 117), 16);
        // §2.6.3: 16-CPU LLC reaches 0 at x = 848; 4-CPU LLC: x = 758 leaves 1, x = 759 -> 0
        assert_eq!(idle_cpu_scan_budget(847 * 16, 16, 117), 1);
        assert_eq!(idle_cpu_scan_budget(848 * 16, 16, 117), 0);
        assert_eq!(idle_cpu_scan_budget(758 * 4, 4, 117), 1);
        assert_eq!(idle_cpu_scan_budget(759 * 4, 4, 117), 0);
    }

    #[test]
    fn tv09_sis_util_budget_bounds_the_scan() {
        // Σ util 8192 -> nr_idle_scan 10 -> at most 10 CPUs probed (nr = 11, decremented
        // before each check): from target 0 the scan sees CPUs 1..10
        let setup = |spec: &str, idle: usize| {
            let mut k = smp(spec, 16);
            k.update_idle_cpu_scan(0, 8192);
            for c in (0..16).filter(|&c| c != idle) {
                let t = task(&mut k, "busy", Policy::Normal);
                queue(&mut k, t, c, true, false);
            }
            let p = task(&mut k, "P", Policy::Normal);
            sleep_on(&mut k, p, 0);
            (k, p)
        };
        let (mut k, p) = setup("v6.18", 10);
        assert_eq!(k.nr_idle_scan(0), Some(10));
        let sd = llc_sd(&k, 0);
        assert_eq!(k.select_idle_cpu(p, sd, false, 0), Some(10));
        let (mut k, p) = setup("v6.18", 11);
        assert_eq!(k.select_idle_cpu(p, sd, false, 0), None);
        // without SIS_UTIL the whole LLC is scanned, and the budget is not updated
        let (mut k, p) = setup("v6.18 NO_SIS_UTIL", 11);
        assert_eq!(k.nr_idle_scan(0), Some(16));
        assert_eq!(k.select_idle_cpu(p, sd, false, 0), Some(11));
        // initial value before any periodic balance: the LLC size
        assert_eq!(smp("v6.18", 16).nr_idle_scan(3), Some(16));
    }

    // ---------------------------------------------------------------- TV-10

    /// LLC{0..7} as SMT cores {0,4},{1,5},{2,6},{3,7}.
    const SMT8: &str = r#"
name = "tv10"
description = "8 CPUs, 4 SMT cores, one LLC"
extends = "smp:8"
[topology]
cpus = 8
core = [0, 1, 2, 3, 0, 1, 2, 3]
"#;

    #[test]
    fn tv10_idle_core_search() {
        // target 0 busy; CPU1 busy, CPU5 idle; CPU2 and CPU6 idle (CPU3, 4, 7 busy)
        let setup = |cpu6_busy: bool| {
            let mut k = from_toml("v6.18", SMT8);
            assert!(k.sel.smt_active);
            assert_eq!(
                k.machine.smt_mask[1],
                CpuMask::single(1).or(&CpuMask::single(5))
            );
            let mut busy = vec![0, 1, 3, 4, 7];
            if cpu6_busy {
                busy.push(6);
            }
            for c in busy {
                let t = task(&mut k, "busy", Policy::Normal);
                queue(&mut k, t, c, true, false);
            }
            k.set_idle_cores(0, true);
            let p = task(&mut k, "P", Policy::Normal);
            sleep_on(&mut k, p, 0);
            (k, p)
        };
        // scan wraps from CPU1: core {1,5} not all idle (CPU5 recorded), core {2,6} all
        // idle -> CPU2
        let (mut k, p) = setup(false);
        assert_eq!(k.select_idle_sibling(p, 0, 0, 0, true), 2);
        assert!(k.test_idle_cores(0));
        // no core fully idle: the first recorded idle CPU (CPU5), has_idle_cores = 0
        let (mut k, p) = setup(true);
        assert_eq!(k.select_idle_sibling(p, 0, 0, 0, true), 5);
        assert!(!k.test_idle_cores(0));
        // __update_idle_core: CPU6 enters idle while its sibling CPU2 is idle -> hint set
        k.select_idle_enter(6);
        assert!(k.test_idle_cores(0));
    }

    #[test]
    fn select_idle_smt_prefers_prev_sibling_without_idle_core() {
        // no idle core hint: the idle sibling of prev (CPU5 for prev 1) is taken first
        let mut k = from_toml("v6.18", SMT8);
        for c in [0, 1, 2, 3, 4, 6, 7] {
            let t = task(&mut k, "busy", Policy::Normal);
            queue(&mut k, t, c, true, false);
        }
        k.set_idle_cores(0, false);
        let p = task(&mut k, "P", Policy::Normal);
        sleep_on(&mut k, p, 1);
        assert_eq!(k.select_idle_sibling(p, 1, 0, 0, true), 5);
    }

    // ------------------------------------------- v6.5 vs v6.6 and later (cfs.md §15.2)

    /// SMT8 with CPU5 (the sibling of CPU1) removed from the sched domains; P may run anywhere.
    fn smt8_cpu5_isolated(spec: &str) -> (Kernel, TaskId) {
        let text = format!("{SMT8}[kernel]\nisolcpus = \"domain,5\"\n");
        let mut k = from_toml(spec, &text);
        assert!(!k.sd(SdRef { cpu: 1, idx: 0 }).span.contains(5));
        for c in [0, 1, 2, 3, 4, 6, 7] {
            let t = task(&mut k, "busy", Policy::Normal);
            queue(&mut k, t, c, true, false);
        }
        let p = task(&mut k, "P", Policy::Normal);
        k.tasks[p.index()].cpus_allowed = CpuMask::first_n(8);
        k.tasks[p.index()].nr_cpus_allowed = 8;
        sleep_on(&mut k, p, 1);
        (k, p)
    }

    #[test]
    fn select_idle_smt_domain_check_from_v6_9() {
        // no idle-core hint, prev 1 shares the LLC with target 0: select_idle_smt(prev) finds
        // the idle sibling CPU5. It is outside the LLC domain (isolcpus=domain): 8aeaffef8c6e
        // (v6.9, in 6.6.y) skips it, the scan of the LLC finds nothing idle → target 0;
        // before it (cfs.md §15.2) CPU5 is returned.
        for (spec, expect) in [
            ("v6.5", 5),
            ("v6.6", 5),
            ("v6.6+8aeaffef8c6e", 0),
            ("v6.6.78", 0),
            ("v6.12", 0),
        ] {
            let (mut k, p) = smt8_cpu5_isolated(spec);
            k.set_idle_cores(0, false);
            assert_eq!(k.select_idle_sibling(p, 1, 0, 0, true), expect, "{spec}");
        }
    }

    #[test]
    fn select_idle_core_domain_check_from_v6_9() {
        // idle-core hint set: select_idle_cpu scans cores; core {1,5} is busy but CPU5 idle,
        // so it becomes the fallback idle CPU unless it must lie in the scanned cpus
        // (23d04d8c6b8e, v6.9): there is no idle core, so the fallback or target 0 is returned.
        for (spec, expect) in [
            ("v6.5", 5),
            ("v6.6", 5),
            ("v6.6+23d04d8c6b8e", 0),
            ("v6.6.78", 0),
            ("v6.12", 0),
        ] {
            let (mut k, p) = smt8_cpu5_isolated(spec);
            k.set_idle_cores(0, true);
            assert_eq!(k.select_idle_sibling(p, 1, 0, 0, true), expect, "{spec}");
        }
    }

    #[test]
    fn select_idle_capacity_scan_start_by_version() {
        // rb5: CPUs 0–3 capacity 284, 4–6 871, 7 1024. Busy: 0, 4, 5, 6, 7; P (util 900) asleep
        // on CPU2; 2 and 3 idle. 900 fits no CPU (900·1280 = 1 152 000 ≥ 1024·1024), so
        // select_idle_capacity keeps the first idle CPU of the largest capacity it meets: from
        // target 2 (7ee7642c9141, v6.6) CPU2; from target + 1 (v6.5) CPU3.
        assert!(!fits_capacity(900, 1024));
        for (spec, expect) in [
            ("v6.5", 3),
            ("v6.5+7ee7642c9141", 2),
            ("v6.6", 2),
            ("v6.6 -7ee7642c9141", 3),
        ] {
            let p = Platform::builtin("rb5").unwrap();
            let mut k = kernel(spec, MachineDesc::from_platform(&p));
            for c in [0, 4, 5, 6, 7] {
                let t = task(&mut k, "busy", Policy::Normal);
                queue(&mut k, t, c, true, false);
            }
            let t = task(&mut k, "P", Policy::Normal);
            sleep_on(&mut k, t, 2);
            let se = k.tasks[t.index()].se;
            k.se[se.index()].avg.util_avg = 900;
            k.se[se.index()].avg.util_est = 900;
            assert_eq!(k.select_idle_sibling(t, 2, 2, 0, true), expect, "{spec}");
        }
    }

    #[test]
    fn wf_current_cpu_exists_from_v6_6() {
        // TV-1 state without sync: wake_affine_idle finds prev CPU1 idle -> CPU1. With
        // WF_CURRENT_CPU (ab83f455f04d, v6.6) the waking CPU0; v6.5 has no such flag.
        for (spec, expect) in [("v6.5", 1), ("v6.6", 0), ("v6.6 -ab83f455f04d", 1)] {
            let (mut k, p) = tv01(spec);
            assert_eq!(
                k.select_task_rq_fair(p, 1, WF_TTWU | WF_CURRENT_CPU, 0, true),
                expect,
                "{spec}"
            );
            let (mut k, p) = tv01(spec);
            assert_eq!(k.select_task_rq_fair(p, 1, WF_TTWU, 0, true), 1, "{spec}");
        }
    }

    // ------------------------------------------- issue #14: the idle scan's cost

    /// The CPUs the scanners test in one `select_idle_sibling()` from a fresh count.
    fn scan_visits(k: &mut Kernel, p: TaskId, prev: usize, target: usize) -> (usize, u32) {
        k.sel.scan_visited = 0;
        let c = k.select_idle_sibling(p, prev, target, target, true);
        (c, k.sel.scan_visited)
    }

    /// smp:`n` with every CPU but `idle` running a task, and P asleep on CPU `prev`.
    fn busy_but(spec: &str, n: usize, idle: &[usize], prev: usize) -> (Kernel, TaskId) {
        let mut k = smp(spec, n);
        for c in (0..n).filter(|c| !idle.contains(c)) {
            let t = task(&mut k, "busy", Policy::Normal);
            queue(&mut k, t, c, true, false);
        }
        let p = task(&mut k, "P", Policy::Normal);
        sleep_on(&mut k, p, prev);
        (k, p)
    }

    #[test]
    fn idle_scan_counts_the_cpus_the_kernel_loop_tests() {
        // smp.md §2.6.3: for_each_cpu_wrap(cpu, cpus, target + 1) { if (--nr <= 0) return -1;
        // test cpu; } with nr = nr_idle_scan + 1. Rules 1–4 fail (target 0 = prev busy).
        // nr_idle_scan 10 (Σ util 8192 on 16 CPUs, TV-09), idle CPU 10: CPUs 1..10 tested.
        let (mut k, p) = busy_but("v6.18", 16, &[10], 0);
        k.update_idle_cpu_scan(0, 8192);
        assert_eq!(scan_visits(&mut k, p, 0, 0), (10, 10));
        // idle CPU 11 is beyond the budget: nr = 11 allows 10 tests (CPUs 1..10), then fails
        let (mut k, p) = busy_but("v6.18", 16, &[11], 0);
        k.update_idle_cpu_scan(0, 8192);
        assert_eq!(scan_visits(&mut k, p, 0, 0), (0, 10));
        // without SIS_UTIL: no budget, CPUs 1..11 tested
        let (mut k, p) = busy_but("v6.18 NO_SIS_UTIL", 16, &[11], 0);
        assert_eq!(scan_visits(&mut k, p, 0, 0), (11, 11));
        // wrap-around: target 5 on 8 CPUs, idle CPU 2 → 6, 7, 0, 1, 2 = 5 tests
        let (mut k, p) = busy_but("v6.18", 8, &[2], 5);
        assert_eq!(scan_visits(&mut k, p, 5, 5), (2, 5));
        // nothing idle, budget 8 (initial nr_idle_scan = LLC size): nr = 9 allows 8 tests,
        // i.e. the whole LLC including the target last; the wakee stays on the target
        let (mut k, p) = busy_but("v6.18", 8, &[], 5);
        assert_eq!(scan_visits(&mut k, p, 5, 5), (5, 8));
        // an LLC too busy to scan (nr_idle_scan 0): no test at all
        let (mut k, p) = busy_but("v6.18", 8, &[], 5);
        k.set_nr_idle_scan(5, 0);
        assert_eq!(scan_visits(&mut k, p, 5, 5), (5, 0));
    }

    #[test]
    fn idle_scan_counts_select_idle_core_and_smt_siblings() {
        // TV-10 machine, idle-core hint set, target 0. select_idle_core(1) tests CPU 1 (busy,
        // continue) and CPU 5 (idle, recorded) = 2; select_idle_core(2) tests 2 and 6, both
        // idle → CPU 2: 4 CPUs in all.
        let setup = |cpu6_busy: bool| {
            let mut k = from_toml("v6.18", SMT8);
            let mut busy = vec![0, 1, 3, 4, 7];
            if cpu6_busy {
                busy.push(6);
            }
            for c in busy {
                let t = task(&mut k, "busy", Policy::Normal);
                queue(&mut k, t, c, true, false);
            }
            k.set_idle_cores(0, true);
            let p = task(&mut k, "P", Policy::Normal);
            sleep_on(&mut k, p, 0);
            (k, p)
        };
        let (mut k, p) = setup(false);
        assert_eq!(scan_visits(&mut k, p, 0, 0), (2, 4));
        // CPU 6 busy: core {1,5} 2 tests (5 recorded); core {2,6}: 2 idle, 6 busy with a CPU
        // recorded → break, 2 tests; core {3,7}: 3 busy → break, 1; the next CPU in wrap
        // order still in the mask is 4: core {0,4}: 0 busy → break, 1. 6 tests, CPU 5 returned.
        let (mut k, p) = setup(true);
        assert_eq!(scan_visits(&mut k, p, 0, 0), (5, 6));
        // no hint: select_idle_smt(prev 1) tests its sibling 5 (the only one ≠ prev): 1 test
        let mut k = from_toml("v6.18", SMT8);
        for c in [0, 1, 2, 3, 4, 6, 7] {
            let t = task(&mut k, "busy", Policy::Normal);
            queue(&mut k, t, c, true, false);
        }
        k.set_idle_cores(0, false);
        let p = task(&mut k, "P", Policy::Normal);
        sleep_on(&mut k, p, 1);
        k.sel.scan_visited = 0;
        assert_eq!(k.select_idle_sibling(p, 1, 0, 0, true), 5);
        assert_eq!(k.sel.scan_visited, 1);
    }

    /// Two 4-CPU clusters sharing one LLC: CLS{4} below MC{8} (cluster scan active).
    const CLUSTER8: &str = r#"
name = "cls8"
description = "8 CPUs, two clusters of 4, one LLC"
extends = "smp:8"
[topology]
cpus = 8
cluster = [0, 0, 0, 0, 1, 1, 1, 1]
"#;

    #[test]
    fn cluster_wakeup_from_v6_7() {
        // cfs.md §15.2: v6.5 and v6.6 have no cluster wake-up logic. CLUSTER8 (one LLC, clusters
        // {0-3} {4-7}): all busy but CPU6, P asleep on 0. v6.6 scans the LLC from target + 1:
        // 1, 2, 3, 4, 5, 6 → CPU6 at the 6th test; 8881e1639f1f (v6.7) scans the cluster first
        // (4 tests), then 4, 5, 6: 7 tests.
        for (spec, tests) in [
            ("v6.5", 6),
            ("v6.6", 6),
            ("v6.6+8881e1639f1f", 7),
            ("v6.12", 7),
        ] {
            let mut k = from_toml(spec, CLUSTER8);
            for c in [0, 1, 2, 3, 4, 5, 7] {
                let t = task(&mut k, "busy", Policy::Normal);
                queue(&mut k, t, c, true, false);
            }
            let p = task(&mut k, "P", Policy::Normal);
            sleep_on(&mut k, p, 0);
            assert_eq!(scan_visits(&mut k, p, 0, 0), (6, tests), "{spec}");
        }
        // all busy but prev CPU5 (other cluster), target 0, scan budget 3 (runs out inside the
        // cluster). v6.6: rule 2, prev idle and cache affine → 5. 8881e1639f1f alone: prev is
        // not in target's cluster, the scan fails → target 0. 22165f61d0c4: the remembered
        // prev → 5.
        for (spec, expect) in [
            ("v6.6", 5),
            ("v6.6+8881e1639f1f", 0),
            ("v6.6+8881e1639f1f+22165f61d0c4", 5),
            ("v6.12", 5),
        ] {
            let mut k = from_toml(spec, CLUSTER8);
            for c in [0, 1, 2, 3, 4, 6, 7] {
                let t = task(&mut k, "busy", Policy::Normal);
                queue(&mut k, t, c, true, false);
            }
            let p = task(&mut k, "P", Policy::Normal);
            sleep_on(&mut k, p, 5);
            k.set_nr_idle_scan(0, 3);
            assert_eq!(k.select_idle_sibling(p, 5, 0, 0, true), expect, "{spec}");
        }
    }

    #[test]
    fn idle_scan_counts_the_cluster_pass_first() {
        // smp.md §2.6.3 (v6.7+): the target's cluster {0..3} first, from target + 1 (1, 2, 3,
        // 0: 4 tests, none idle, nr 9 → 5), then the rest {4..7} from target + 1: 4, 5, 6 →
        // idle CPU 6 at the 3rd test. 7 tests.
        let setup = || {
            let mut k = from_toml("v6.18", CLUSTER8);
            assert!(k.machine.domains.sched_cluster_active);
            for c in [0, 1, 2, 3, 4, 5, 7] {
                let t = task(&mut k, "busy", Policy::Normal);
                queue(&mut k, t, c, true, false);
            }
            let p = task(&mut k, "P", Policy::Normal);
            sleep_on(&mut k, p, 0);
            (k, p)
        };
        let (mut k, p) = setup();
        assert_eq!(scan_visits(&mut k, p, 0, 0), (6, 7));
        // budget 5 (nr 6): the cluster's 4 tests leave nr 2, one more test (CPU 4) → fail
        // after exactly nr_idle_scan = 5 tests
        let (mut k, p) = setup();
        k.set_nr_idle_scan(0, 5);
        assert_eq!(scan_visits(&mut k, p, 0, 0), (0, 5));
        // budget 3 (nr 4): the budget runs out inside the cluster after 3 tests
        let (mut k, p) = setup();
        k.set_nr_idle_scan(0, 3);
        assert_eq!(scan_visits(&mut k, p, 0, 0), (0, 3));
    }

    /// smp:16 as a platform file with the idle-scan constant `per_cpu` (a `[costs]` value,
    /// or nothing) and the jitter `sigma`.
    fn scan_platform(per_cpu: Option<&str>, sigma: &str) -> Kernel {
        let line = per_cpu.map_or(String::new(), |v| format!("c_select_idle_per_cpu = {v}\n"));
        let text = format!(
            "name = \"scan16\"\ndescription = \"t\"\nextends = \"smp:16\"\n[costs]\njitter_sigma = {sigma}\n{line}"
        );
        from_toml("v6.18", &text)
    }

    /// W runs on CPU 0 and wakes P (asleep on CPU 0); CPUs 1..15 are busy except 10, the
    /// LLC budget is 10 (TV-09): the scan tests CPUs 1..10 and P goes to CPU 10. Returns
    /// the waker's charged kernel step.
    fn wake_with_scan(k: &mut Kernel) -> u64 {
        let w = task(k, "W", Policy::Normal);
        queue(k, w, 0, true, false);
        for c in (1..16).filter(|&c| c != 10) {
            let t = task(k, "busy", Policy::Normal);
            queue(k, t, c, true, false);
        }
        k.update_idle_cpu_scan(0, 8192);
        let p = task(k, "P", Policy::Normal);
        sleep_on(k, p, 0);
        let woken = k.try_to_wake_up(p, 0, 0, true);
        assert_eq!(k.tasks[p.index()].cpu, 10);
        k.after_wake_from_task(0, p, 0, woken);
        match k.tasks[w.index()].exec.plan.pop_front() {
            Some(crate::exec::Step::Cpu(ns, _)) => ns,
            s => panic!("waker's first step {s:?}"),
        }
    }

    #[test]
    fn a_wakeup_is_charged_k_times_the_constant_on_the_wakers_cpu() {
        // 10 CPUs tested × 0.1 µs = 1 µs, before c_ttwu 0.35 + c_ipi_send 0.30 (smp.toml's
        // x86 column; remote wake-up), no jitter: 1.65 µs
        let mut k = scan_platform(Some("0.1"), "0");
        assert_eq!(wake_with_scan(&mut k), 1_000 + 350 + 300);
        let t = &k.stats.paths;
        assert_eq!(
            (t.idle_scans, t.idle_scan_cpus, t.idle_scan_ns),
            (1, 10, 1_000)
        );
        assert_eq!((t.ipi_sends, t.ipi_send_ns), (1, 300));
        // absent or 0: nothing charged (the CPUs are still counted)
        for v in [None, Some("0")] {
            let mut k = scan_platform(v, "0");
            assert_eq!(wake_with_scan(&mut k), 350 + 300, "{v:?}");
            let t = &k.stats.paths;
            assert_eq!((t.idle_scans, t.idle_scan_cpus, t.idle_scan_ns), (1, 10, 0));
        }
    }

    #[test]
    fn a_zero_constant_draws_no_jitter() {
        // With jitter on, the waker's charge under a zero (or absent) constant is exactly the
        // c_ttwu and c_ipi_send draws of a kernel that charges no scan, and the CPU's jitter
        // stream is left where those two draws leave it.
        let reference = |k: &mut Kernel| {
            let ttwu = k.cost(0, |c| c.c_ttwu.0);
            let ipi = k.cost(0, |c| c.c_ipi_send.0);
            (ttwu + ipi, k.cost(0, |c| c.c_ctxsw_thread.0))
        };
        let mut fresh = scan_platform(None, "0.10");
        let (want, next) = reference(&mut fresh);
        assert_ne!(want, 350 + 300, "jitter is on");
        for v in [None, Some("0")] {
            let mut k = scan_platform(v, "0.10");
            let charged = wake_with_scan(&mut k);
            assert_eq!(
                (charged, k.cost(0, |c| c.c_ctxsw_thread.0)),
                (want, next),
                "{v:?}"
            );
        }
        // a nonzero constant draws once more (the scan first, then c_ttwu)
        let mut k = scan_platform(Some("0.1"), "0.10");
        let charged = wake_with_scan(&mut k);
        assert_ne!(charged, want);
    }

    // ---------------------------------------------------------------- TV-18

    #[test]
    fn tv18_asymmetric_select_idle_capacity() {
        let setup = |util: u64| {
            let p = Platform::builtin("rb5").unwrap();
            let mut k = kernel("v7.1", MachineDesc::from_platform(&p));
            assert_eq!(
                (k.capacity_of(0), k.capacity_of(4), k.capacity_of(7)),
                (284, 871, 1024)
            );
            assert!(k.machine.domains.per_cpu[2].sd_asym_cpucapacity.is_some());
            // CPU0 runs the waker, CPU4 busy; CPU2 (prev, target), CPU3 and CPU5 idle
            for c in [0, 4] {
                let t = task(&mut k, "busy", Policy::Normal);
                queue(&mut k, t, c, true, false);
            }
            let t = task(&mut k, "P", Policy::Normal);
            sleep_on(&mut k, t, 2);
            let se = k.tasks[t.index()].se;
            k.se[se.index()].avg.util_avg = util;
            k.se[se.index()].avg.util_est = util as u32;
            (k, t)
        };
        // util_est 300: fits(300, 284)? 384 000 < 290 816 no -> rules 1/2 fail ->
        // select_idle_capacity from CPU2: CPU3 idle (no fit), CPU4 busy, CPU5 idle (871:
        // 384 000 < 891 904 -> fits) -> CPU5
        assert!(!fits_capacity(300, 284) && fits_capacity(300, 871));
        let (mut k, p) = setup(300);
        assert_eq!(k.select_idle_sibling(p, 2, 2, 0, true), 5);
        // util_est 200: fits 284 (256 000 < 290 816) -> rule 1 -> CPU2
        let (mut k, p) = setup(200);
        assert_eq!(k.select_idle_sibling(p, 2, 2, 0, true), 2);
        // nothing fits: the largest idle capacity among the idle CPUs (CPU7 if idle)
        let (mut k, p) = setup(900);
        assert_eq!(k.select_idle_sibling(p, 2, 2, 0, true), 7);
    }

    // ---------------------------------------------------------------- TV-21

    #[test]
    fn tv21_wake_affine_weight_bias_boundary() {
        // cpu_load(this) 400, cpu_load(prev) 700, task_h_load(p) 200: this_eff = 600·100·1024
        // = 61 440 000; prev_eff = 500·108·1024 = 55 296 000 -> not smaller -> prev
        assert!(!wake_affine_weight_eff(
            400, 700, None, 200, 1024, 1024, 117, true
        ));
        // cpu_load(prev) 800: prev_eff = 600·108·1024 = 66 355 200 -> this CPU
        assert!(wake_affine_weight_eff(
            400, 800, None, 200, 1024, 1024, 117, true
        ));
        // through wake_affine() on LLC{0,1}, both CPUs busy, no sync
        for (prev_load, expect) in [(700, 1), (800, 0)] {
            let mut k = smp("v6.18", 2);
            for c in [0, 1] {
                let t = task(&mut k, "busy", Policy::Normal);
                queue(&mut k, t, c, true, false);
            }
            set_cpu_load(&mut k, 0, 400);
            set_cpu_load(&mut k, 1, prev_load);
            let p = task(&mut k, "P", Policy::Normal);
            sleep_on(&mut k, p, 1);
            set_h_load(&mut k, p, 200);
            assert_eq!(k.wake_affine(llc_sd(&k, 0), p, 0, 1, false), expect);
        }
    }

    // ---------------------------------------------------------------- others

    #[test]
    fn current_cpu_and_exiting_waker() {
        // WF_CURRENT_CPU places the wakee on the waking CPU if allowed
        let (mut k, p) = tv01("v6.18");
        assert_eq!(
            k.select_task_rq_fair(p, 1, WF_TTWU | WF_CURRENT_CPU, 0, true),
            0
        );
        // PF_EXITING waker: no sync; wake_affine_idle then finds prev idle -> CPU1
        let (mut k, p) = tv01("v6.18");
        let w = k.rqs[0].curr;
        k.tasks[w.index()].state = TaskState::Dead;
        assert_eq!(k.select_task_rq_fair(p, 1, WF_TTWU | WF_SYNC, 0, true), 1);
    }

    #[test]
    fn select_task_rq_sets_rq_selected_from_v6_13() {
        for (v, set) in [("v6.12", false), ("v6.18", true)] {
            let (mut k, p) = tv01(v);
            let mut wf = WF_TTWU;
            k.select_task_rq(p, 1, &mut wf, 0, true);
            assert_eq!(wf & WF_RQ_SELECTED != 0, set, "{v}");
        }
    }

    #[test]
    fn exec_slow_path_discounts_the_execing_task() {
        // WF_EXEC (sched_exec, exec.rs): the exec'ing task is
        // queued and running on CPU0, so update_sg_wakeup_stats subtracts it
        // (nr_running − local = 0, idle_cpu_without: curr is p) and CPU0 counts as idle.
        let run = |cpu1_busy: bool| {
            let mut k = from_toml("v6.18", TWO_LLC4);
            let p = task(&mut k, "P", Policy::Normal);
            queue(&mut k, p, 0, true, false);
            let c0 = k.rqs[0].cfs;
            k.cfs[c0.index()].avg.last_update_time = 1 << 20;
            let se = k.tasks[p.index()].se;
            k.se[se.index()].avg.last_update_time = 1 << 20;
            if cpu1_busy {
                let b = task(&mut k, "B", Policy::Normal);
                queue(&mut k, b, 1, true, false);
            }
            k.select_task_rq_fair(p, 0, WF_EXEC, 0, true)
        };
        // CPU1 idle: PKG local {0,1} 2 idle vs {2,3} 2 idle -> stay; MC {0} vs {1} both
        // idle -> stay -> CPU0
        assert_eq!(run(false), 0);
        // CPU1 busy: local {0,1} 1 idle < 2 -> idlest {2,3} -> CPU2 (first of equal idle
        // CPUs); MC{2,3}: {2} vs {3} equally idle -> CPU2
        assert_eq!(run(true), 2);
    }

    #[test]
    fn slowpath_allowed_cpus_only_from_v6_19() {
        // 82d6e01a0699: a group's statistics cover only the allowed CPUs. Group {2,3} with
        // CPU2 busy and CPU3 idle, task allowed on {0,1,2} only: idle_cpus 1 before, 0 after.
        for (v, idle) in [("v6.18", 1), ("v6.19", 0)] {
            let mut k = from_toml(v, TWO_LLC4);
            let b = task(&mut k, "B", Policy::Normal);
            queue(&mut k, b, 2, true, false);
            let p = task(&mut k, "P", Policy::Normal);
            k.tasks[p.index()].cpus_allowed = CpuMask::range(0, 3);
            k.tasks[p.index()].nr_cpus_allowed = 3;
            let pkg = SdRef { cpu: 0, idx: 1 };
            let g = k.sd(pkg).groups[1].clone();
            assert_eq!(g.span, CpuMask::range(2, 4));
            assert_eq!(k.update_sg_wakeup_stats(pkg, &g, p).idle_cpus, idle, "{v}");
        }
    }
}
