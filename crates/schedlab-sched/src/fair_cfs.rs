//! The CFS fair class of v6.5 (kernel/sched/fair.c at the v6.5 tag, the last release before
//! EEVDF; cfs.md). It sits beside the EEVDF class of fair.rs in the same class slot: fair.rs
//! keeps what both have in common (the task-level walks of `enqueue_task_fair` and
//! `dequeue_task_fair`, `put_prev_entity`, the bandwidth and group code, the tree and its
//! bookkeeping) and reaches the functions below through the [`CFS`] policy table, which the
//! `v6.5` preset installs (everything without 147f3efaa241; the EEVDF series of v6.6 is one
//! switch, cfs.md §13.3). Every function carries the name v6.5 gives it.
//!
//! | cfs.md | here |
//! |---|---|
//! | §2 tunables and their CPU scaling | [`CfsTunables`] |
//! | §3.3 `update_curr` | [`update_curr`] (never reschedules) |
//! | §4 `__sched_period`, `sched_slice`, `sched_vslice` | same names |
//! | §5 placement, normalisation, fork | [`place_entity`], [`enqueue_entity`], [`dequeue_entity`], [`task_fork_fair`], [`migrate_task_rq_fair`], [`detach_task_cfs_rq`], [`attach_task_cfs_rq`] |
//! | §6 pick and buddies | [`pick_next_entity`], [`set_next_entity`], `set_*_buddy`, [`clear_buddies`] |
//! | §7 tick | [`task_tick_fair`], `entity_tick`, `check_preempt_tick` |
//! | §8 wakeup | [`check_preempt_wakeup`] |
//! | §10 yield, reweight | [`yield_task_fair`], [`reweight_entity`], [`update_cfs_group`] |
//! | §14.1 invariants C-1 … C-7 | [`check_invariants`] |
//!
//! Deviations: HRTICK is not modelled (as in every preset); there is no CPU hotplug, so
//! `update_sysctl` runs once, at boot.

use crate::fair::{FairOp, FairPolicy};
use crate::fair_pelt::{DO_ATTACH, DO_DETACH, UPDATE_TG};
use crate::features::Feature as F;
use crate::sched::*;
use crate::stats::WakeupVerdict;
use crate::tree::{self, before};
use crate::Kernel;

/// The v6.5 class's entry points, installed by the `v6.5` preset (fair.rs dispatches).
pub(crate) static CFS: FairPolicy = FairPolicy {
    update_curr,
    enqueue_entity,
    dequeue_entity,
    pick_next_entity,
    set_next_entity,
    check_preempt_wakeup,
    explain_wakeup,
    task_tick_fair,
    yield_task_fair,
    task_fork_fair,
    update_cfs_group,
    reweight_entity,
    migrate_task_rq_fair,
    detach_task_cfs_rq,
    attach_task_cfs_rq,
    check_invariants,
};

/// `init_cfs_rq()`: a fresh cfs_rq's `min_vruntime`, −2^20 (about −1.05 ms) so that the
/// wrap-around is exercised within seconds of boot (cfs.md §0.1).
pub const INIT_MIN_VRUNTIME: u64 = (-(1i64 << 20)) as u64;

// ===================================================================== tunables (cfs.md §2)

/// The v6.5 latency tunables (`sysctl_sched_*` and their normalised values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CfsTunables {
    pub latency: u64,
    pub min_granularity: u64,
    pub wakeup_granularity: u64,
    /// Not scaled by the CPU count.
    pub idle_min_granularity: u64,
    /// `sched_nr_latency`: recomputed only by a write to `tunable_scaling`.
    pub nr_latency: u64,
    pub tunable_scaling: u32,
    pub normalized_latency: u64,
    pub normalized_min_granularity: u64,
    pub normalized_wakeup_granularity: u64,
    /// `/proc/sys/kernel/sched_child_runs_first`
    pub child_runs_first: bool,
}

impl CfsTunables {
    /// The compiled-in defaults, before `update_sysctl`.
    pub fn defaults() -> CfsTunables {
        CfsTunables {
            latency: 6_000_000,
            min_granularity: 750_000,
            wakeup_granularity: 1_000_000,
            idle_min_granularity: 750_000,
            nr_latency: 8,
            tunable_scaling: 1,
            normalized_latency: 6_000_000,
            normalized_min_granularity: 750_000,
            normalized_wakeup_granularity: 1_000_000,
            child_runs_first: false,
        }
    }

    /// kernel: fair.c get_update_sysctl_factor()
    pub fn factor(mode: u32, ncpus: u32) -> u64 {
        crate::sysctl::sysctl_factor(mode, ncpus)
    }

    /// kernel: fair.c update_sysctl() — at boot and on every rq_online/rq_offline: the three
    /// scaled tunables become factor × normalised (overwriting plain debugfs writes).
    pub fn update_sysctl(&mut self, ncpus: u32) {
        let f = Self::factor(self.tunable_scaling, ncpus);
        self.min_granularity = f * self.normalized_min_granularity;
        self.latency = f * self.normalized_latency;
        self.wakeup_granularity = f * self.normalized_wakeup_granularity;
    }

    /// A write to a debugfs file under `/sys/kernel/debug/sched/` or to
    /// `sched_child_runs_first` (cfs.md §2.3): the four granularity files are plain u32
    /// stores; `tunable_scaling` runs `sched_update_scaling()` and refuses values above 2.
    pub fn write(&mut self, name: &str, value: u64, ncpus: u32) -> Result<(), &'static str> {
        match name {
            "latency_ns" => self.latency = value,
            "min_granularity_ns" => self.min_granularity = value,
            "wakeup_granularity_ns" => self.wakeup_granularity = value,
            "idle_min_granularity_ns" => self.idle_min_granularity = value,
            "child_runs_first" => self.child_runs_first = value != 0,
            "tunable_scaling" => {
                if value > 2 {
                    return Err("EINVAL");
                }
                self.tunable_scaling = value as u32;
                self.sched_update_scaling(ncpus);
            }
            _ => return Err("no such tunable"),
        }
        Ok(())
    }

    /// kernel: fair.c sched_update_scaling() — `sched_nr_latency` and the normalised values
    /// from the current ones.
    fn sched_update_scaling(&mut self, ncpus: u32) {
        let f = Self::factor(self.tunable_scaling, ncpus);
        self.nr_latency = self.latency.div_ceil(self.min_granularity.max(1));
        self.normalized_min_granularity = self.min_granularity / f;
        self.normalized_latency = self.latency / f;
        self.normalized_wakeup_granularity = self.wakeup_granularity / f;
    }

    /// Boot (`sched_init_granularity`) on `ncpus` online CPUs, then the configured writes in
    /// the order given.
    pub fn boot(ncpus: u32, writes: &[(String, u64)]) -> Result<CfsTunables, String> {
        let mut t = CfsTunables::defaults();
        t.update_sysctl(ncpus);
        for (n, v) in writes {
            t.write(n, *v, ncpus).map_err(|e| format!("{n}={v}: {e}"))?;
        }
        Ok(t)
    }
}

// ===================================================================== helpers

#[inline]
fn cpu_of(k: &Kernel, cfs: CfsRqId) -> usize {
    k.cfs[cfs.index()].cpu
}

#[inline]
fn vr(k: &Kernel, se: SeId) -> u64 {
    k.se[se.index()].vruntime
}

/// kernel: fair.c entity_before() — strict signed comparison of vruntimes.
#[inline]
fn entity_before(k: &Kernel, a: SeId, b: SeId) -> bool {
    before(vr(k, a), vr(k, b))
}

#[inline]
fn max_vruntime(a: u64, b: u64) -> u64 {
    if before(a, b) {
        b
    } else {
        a
    }
}

/// `__pick_first_entity()`
#[inline]
fn first_entity(k: &Kernel, cfs: CfsRqId) -> Option<SeId> {
    tree::leftmost(&k.se, k.cfs[cfs.index()].root)
}

/// kernel: fair.c sched_idle_cfs_rq() — every entity at this level is idle.
fn sched_idle_cfs_rq(k: &Kernel, cfs: CfsRqId) -> bool {
    let c = &k.cfs[cfs.index()];
    c.nr_queued > 0 && c.nr_queued == c.idle_nr_running
}

// ===================================================================== virtual time (§3)

/// kernel: fair.c update_curr() @ v6.5 — charge the running entity; never reschedules.
pub(crate) fn update_curr(k: &mut Kernel, cfs: CfsRqId) {
    let Some(curr) = k.cfs[cfs.index()].curr else {
        return;
    };
    let now = k.rq_clock_task(cpu_of(k, cfs));
    let delta = now as i64 - k.se[curr.index()].exec_start as i64;
    if delta <= 0 {
        return;
    }
    let delta = delta as u64;
    let vdelta = k.calc_delta_fair(delta, curr);
    {
        let e = &mut k.se[curr.index()];
        e.exec_start = now;
        e.sum_exec_runtime += delta;
        e.vruntime = e.vruntime.wrapping_add(vdelta);
    }
    k.update_min_vruntime(cfs);
    if let Some(t) = k.se[curr.index()].task {
        // cgroup_account_cputime()
        let tg = k.tasks[t.index()].tg;
        k.tgs[tg.index()].usage_ns += delta;
    }
    k.account_cfs_rq_runtime(cfs, delta);
}

// ===================================================================== period and slice (§4)

/// kernel: fair.c __sched_period()
pub fn __sched_period(t: &CfsTunables, nr_running: u64) -> u64 {
    if nr_running > t.nr_latency {
        nr_running * t.min_granularity
    } else {
        t.latency
    }
}

/// kernel: fair.c sched_slice() — the wall-clock share of one period, the product of the
/// entity's share at every level (each with the truncating inverse of `__calc_delta`), with
/// the BASE_SLICE floor of its own level.
pub fn sched_slice(k: &Kernel, cfs: CfsRqId, se: SeId) -> u64 {
    let mut nr = k.cfs[cfs.index()].nr_queued as u64;
    if k.cfg.feat(F::ALT_PERIOD) {
        let root = k.rqs[cpu_of(k, cfs)].cfs;
        nr = k.cfs[root.index()].h_nr_queued as u64;
    }
    let mut slice = __sched_period(&k.cfs_tun, nr + !k.se[se.index()].on_rq as u64);
    let mut e = Some(se);
    while let Some(x) = e {
        let q = k.se[x.index()].cfs_rq;
        let w = k.se[x.index()].load.weight;
        let mut load = k.cfs[q.index()].load.weight;
        if !k.se[x.index()].on_rq {
            load += w;
        }
        let lw = LoadWeight {
            weight: load,
            inv_weight: 0,
        };
        slice = k.__calc_delta(slice, w, &lw);
        e = k.se[x.index()].parent;
    }
    if k.cfg.feat(F::BASE_SLICE) {
        let floor = if k.is_idle_entity(se) && !sched_idle_cfs_rq(k, cfs) {
            k.cfs_tun.idle_min_granularity
        } else {
            k.cfs_tun.min_granularity
        };
        slice = slice.max(floor);
    }
    slice
}

/// kernel: fair.c sched_vslice() — the slice in the entity's virtual time.
pub fn sched_vslice(k: &Kernel, cfs: CfsRqId, se: SeId) -> u64 {
    k.calc_delta_fair(sched_slice(k, cfs, se), se)
}

// ===================================================================== placement (§5)

/// kernel: fair.c entity_is_long_sleeper() (a53ce18cacb4 form)
fn entity_is_long_sleeper(k: &Kernel, se: SeId) -> bool {
    let start = k.se[se.index()].exec_start;
    if start == 0 {
        return false;
    }
    let now = k.rq_clock_task(cpu_of(k, k.se[se.index()].cfs_rq));
    if now <= start {
        return false;
    }
    now - start > (1u64 << 63) / scale_load_down(NICE_0_LOAD)
}

/// kernel: fair.c place_entity() @ v6.5 — START_DEBIT for a new task, sleeper credit (at most
/// `thresh` left of `min_vruntime`, never backwards) for a waking one.
pub(crate) fn place_entity(k: &mut Kernel, cfs: CfsRqId, se: SeId, initial: bool) {
    let mut v = k.cfs[cfs.index()].zero_vruntime;
    if initial && k.cfg.feat(F::START_DEBIT) {
        v = v.wrapping_add(sched_vslice(k, cfs, se));
    }
    if !initial {
        let mut thresh = if k.is_idle_entity(se) {
            k.cfs_tun.min_granularity
        } else {
            k.cfs_tun.latency
        };
        if k.cfg.feat(F::GENTLE_FAIR_SLEEPERS) {
            thresh >>= 1;
        }
        v = v.wrapping_sub(thresh);
    }
    let long = entity_is_long_sleeper(k, se);
    let e = &mut k.se[se.index()];
    e.vruntime = if long { v } else { max_vruntime(e.vruntime, v) };
    k.count_op(FairOp::CfsPlace);
}

/// kernel: fair.c account_entity_enqueue() — with `idle_nr_running`.
fn account_entity_enqueue(k: &mut Kernel, cfs: CfsRqId, se: SeId) {
    let w = k.se[se.index()].load.weight;
    let idle = k.is_idle_entity(se) as u32;
    let c = &mut k.cfs[cfs.index()];
    c.load.weight += w;
    c.load.inv_weight = 0;
    c.nr_queued += 1;
    c.idle_nr_running += idle;
}

/// kernel: fair.c account_entity_dequeue()
fn account_entity_dequeue(k: &mut Kernel, cfs: CfsRqId, se: SeId) {
    let w = k.se[se.index()].load.weight;
    let idle = k.is_idle_entity(se) as u32;
    let c = &mut k.cfs[cfs.index()];
    c.load.weight -= w;
    c.load.inv_weight = 0;
    c.nr_queued -= 1;
    c.idle_nr_running -= idle;
}

/// `vruntime += min_vruntime`: a relative value becomes absolute on `cfs`.
fn renormalise(k: &mut Kernel, cfs: CfsRqId, se: SeId) {
    k.sched_warn_on(
        !k.se[se.index()].cfs_rel,
        "C-4: renormalising an absolute vruntime",
    );
    let m = k.cfs[cfs.index()].zero_vruntime;
    let e = &mut k.se[se.index()];
    e.vruntime = e.vruntime.wrapping_add(m);
    e.cfs_rel = false;
}

/// `vruntime -= min_vruntime`: an absolute value becomes relative to `cfs`.
fn normalise(k: &mut Kernel, cfs: CfsRqId, se: SeId) {
    k.sched_warn_on(
        k.se[se.index()].cfs_rel,
        "C-4: normalising a relative vruntime",
    );
    let m = k.cfs[cfs.index()].zero_vruntime;
    let e = &mut k.se[se.index()];
    e.vruntime = e.vruntime.wrapping_sub(m);
    e.cfs_rel = true;
}

/// kernel: fair.c enqueue_entity() @ v6.5 — renormalise unless this is a same-CPU wakeup,
/// then place a wakeup (cfs.md §5.4). The first wakeup of a task the simulator created
/// without a parent (not forked) arrives relative with a WAKEUP enqueue: it is renormalised
/// and placed like a wakeup, i.e. at `min_vruntime` (the CFS counterpart of the EEVDF
/// presets' zero-lag first wakeup).
pub(crate) fn enqueue_entity(k: &mut Kernel, cfs: CfsRqId, se: SeId, flags: u32) {
    let renorm = flags & ENQUEUE_WAKEUP == 0
        || flags & ENQUEUE_MIGRATED != 0
        || (k.se[se.index()].cfs_rel && k.se[se.index()].sum_exec_runtime == 0);
    let is_curr = k.cfs[cfs.index()].curr == Some(se);
    if renorm && is_curr {
        renormalise(k, cfs, se);
    }
    update_curr(k, cfs);
    if renorm && !is_curr {
        renormalise(k, cfs, se);
    }
    k.update_load_avg(cfs, se, UPDATE_TG | DO_ATTACH);
    k.se_update_runnable(se);
    update_cfs_group(k, se);
    account_entity_enqueue(k, cfs, se);
    if flags & ENQUEUE_WAKEUP != 0 {
        place_entity(k, cfs, se, false);
    }
    if flags & ENQUEUE_MIGRATED != 0 {
        k.se[se.index()].exec_start = 0;
    }
    k.sched_warn_on(
        k.se[se.index()].cfs_rel,
        "C-4: enqueued with a relative vruntime",
    );
    if !is_curr {
        k.__enqueue_entity(cfs, se);
    }
    k.se[se.index()].on_rq = true;
    k.enqueue_entity_bandwidth(cfs);
}

/// kernel: fair.c dequeue_entity() @ v6.5 — a dequeue that is not a sleep normalises the
/// vruntime against `min_vruntime` as `update_curr` left it; a pure SAVE (renice) does not
/// advance `min_vruntime` afterwards (cfs.md §5.5). Never delays.
pub(crate) fn dequeue_entity(k: &mut Kernel, cfs: CfsRqId, se: SeId, flags: u32) -> bool {
    update_curr(k, cfs);
    let mut action = UPDATE_TG;
    if let Some(t) = k.se[se.index()].task {
        if k.tasks[t.index()].on_rq == OnRq::Migrating {
            action |= DO_DETACH;
        }
    }
    k.update_load_avg(cfs, se, action);
    k.se_update_runnable(se);
    clear_buddies(k, cfs, se);
    if k.cfs[cfs.index()].curr != Some(se) {
        k.__dequeue_entity(cfs, se);
    }
    k.se[se.index()].on_rq = false;
    account_entity_dequeue(k, cfs, se);
    if flags & DEQUEUE_SLEEP == 0 {
        normalise(k, cfs, se);
    }
    k.return_cfs_rq_runtime(cfs);
    update_cfs_group(k, se);
    if flags & (DEQUEUE_SAVE | DEQUEUE_MOVE) != DEQUEUE_SAVE {
        k.update_min_vruntime(cfs);
    }
    true
}

/// kernel: fair.c vruntime_normalized() (cfs.md §3.6): queued or migrating, a forked child
/// not yet woken, or a remote wakeup already normalised by `migrate_task_rq_fair`.
fn vruntime_normalized(k: &Kernel, p: TaskId) -> bool {
    let t = &k.tasks[p.index()];
    if t.on_rq != OnRq::No {
        return true;
    }
    let se = &k.se[t.se.index()];
    se.sum_exec_runtime == 0 || se.cfs_rel
}

/// kernel: fair.c detach_task_cfs_rq() @ v6.5 (`switched_from_fair`): a sleeping task that
/// still holds an absolute vruntime is placed as a wakeup ("so that the current sleep does not
/// cause an unlimited sleep bonus") and normalised.
pub(crate) fn detach_task_cfs_rq(k: &mut Kernel, p: TaskId) {
    if vruntime_normalized(k, p) {
        return;
    }
    let se = k.tasks[p.index()].se;
    let cfs = k.se[se.index()].cfs_rq;
    place_entity(k, cfs, se, false);
    normalise(k, cfs, se);
}

/// kernel: fair.c attach_task_cfs_rq() @ v6.5, the vruntime part (`switched_to_fair`, the
/// end of a group change): a sleeping task's relative vruntime becomes absolute on its new
/// cfs_rq. (A forked child not woken yet stays relative until `wake_up_new_task`.)
pub(crate) fn attach_task_cfs_rq(k: &mut Kernel, p: TaskId) {
    let se = k.tasks[p.index()].se;
    let sleeping_rel = k.tasks[p.index()].on_rq == OnRq::No
        && k.se[se.index()].cfs_rel
        && k.se[se.index()].sum_exec_runtime != 0;
    if sleeping_rel {
        let cfs = k.se[se.index()].cfs_rq;
        renormalise(k, cfs, se);
    }
}

/// kernel: fair.c migrate_task_rq_fair() @ v6.5, the vruntime part: a waking task keeps its
/// distance to `min_vruntime` of the CPU it leaves (a queued task was normalised by its
/// dequeue). The PELT part is fair_pelt.rs's.
pub(crate) fn migrate_task_rq_fair(k: &mut Kernel, p: TaskId) {
    if k.tasks[p.index()].on_rq == OnRq::Migrating {
        return;
    }
    let se = k.tasks[p.index()].se;
    if k.se[se.index()].cfs_rel {
        return; // a forked child not woken yet (never happens: fork uses __set_task_cpu)
    }
    let cfs = k.se[se.index()].cfs_rq;
    normalise(k, cfs, se);
}

/// kernel: core.c __sched_fork() (fair fields) + fair.c task_fork_fair() @ v6.5: the child
/// starts at the parent's vruntime, is placed with START_DEBIT on the parent's cfs_rq,
/// optionally swaps with the parent (`sched_child_runs_first`), and leaves relative.
pub(crate) fn task_fork_fair(k: &mut Kernel, child: TaskId, parent: Option<TaskId>) {
    let cse = k.tasks[child.index()].se;
    {
        let e = &mut k.se[cse.index()];
        e.vruntime = 0;
        e.on_rq = false;
        e.exec_start = 0;
        e.sum_exec_runtime = 0;
        e.prev_sum_exec_runtime = 0;
        e.nr_migrations = 0;
        e.cfs_rel = true;
        e.slice = 0;
        e.vlag = 0;
        e.vprot = 0;
        e.deadline = 0;
    }
    let Some(par) = parent else {
        return; // created by the simulator: relative 0, placed at its first wakeup
    };
    let cpu = k.tasks[par.index()].cpu;
    k.update_rq_clock(cpu);
    let cfs = k.se[k.tasks[par.index()].se.index()].cfs_rq;
    let curr = k.cfs[cfs.index()].curr;
    if let Some(c) = curr {
        update_curr(k, cfs);
        k.se[cse.index()].vruntime = vr(k, c);
    }
    place_entity(k, cfs, cse, true);
    if k.cfs_tun.child_runs_first {
        if let Some(c) = curr {
            if entity_before(k, c, cse) {
                let (a, b) = (vr(k, c), vr(k, cse));
                k.se[c.index()].vruntime = b;
                k.se[cse.index()].vruntime = a;
                k.resched_curr(cpu);
            }
        }
    }
    let m = k.cfs[cfs.index()].zero_vruntime;
    let e = &mut k.se[cse.index()];
    e.vruntime = e.vruntime.wrapping_sub(m);
}

// ===================================================================== picking (§6)

/// kernel: fair.c wakeup_gran() — the wakeup granularity in `se`'s virtual time.
fn wakeup_gran(k: &Kernel, se: SeId) -> u64 {
    k.calc_delta_fair(k.cfs_tun.wakeup_granularity, se)
}

/// kernel: fair.c wakeup_preempt_entity() — should `se` preempt `curr`? −1: `se` is not left
/// of `curr`; 1: left by more than `wakeup_gran(se)`; 0: left, within the margin.
pub fn wakeup_preempt_entity(k: &Kernel, curr: SeId, se: SeId) -> i32 {
    let vdiff = vr(k, curr).wrapping_sub(vr(k, se)) as i64;
    if vdiff <= 0 {
        return -1;
    }
    if vdiff as u64 > wakeup_gran(k, se) {
        return 1;
    }
    0
}

/// kernel: fair.c pick_next_entity() @ v6.5 — the leftmost of tree and curr (a tie goes to
/// the tree entity), unless the skip buddy is it and the next one is within the margin; a next,
/// else last, buddy within `wakeup_gran(left)` of the leftmost overrides both.
pub(crate) fn pick_next_entity(k: &mut Kernel, cfs: CfsRqId) -> Option<SeId> {
    let c = &k.cfs[cfs.index()];
    let curr = c.curr.filter(|&cu| k.se[cu.index()].on_rq);
    let mut left = first_entity(k, cfs);
    match (left, curr) {
        (None, _) => left = curr,
        (Some(l), Some(cu)) if entity_before(k, cu, l) => left = curr,
        _ => {}
    }
    let left = left?;
    let mut se = left;
    let mut op = None;
    if k.cfs[cfs.index()].skip == Some(se) {
        let second = if Some(se) == curr {
            first_entity(k, cfs)
        } else {
            match (tree::next(&k.se, se), curr) {
                (None, c) => c,
                (Some(s), Some(cu)) if entity_before(k, cu, s) => Some(cu),
                (s, _) => s,
            }
        };
        if let Some(s) = second {
            if wakeup_preempt_entity(k, s, left) < 1 {
                se = s;
                op = Some(FairOp::CfsSkipAvoided);
            }
        }
    }
    let (next, last) = (k.cfs[cfs.index()].next, k.cfs[cfs.index()].last);
    if let Some(n) = next.filter(|&n| wakeup_preempt_entity(k, n, left) < 1) {
        se = n;
        op = Some(FairOp::CfsNextBuddyPicked);
    } else if let Some(l) = last.filter(|&l| wakeup_preempt_entity(k, l, left) < 1) {
        se = l;
        op = Some(FairOp::CfsLastBuddyPicked);
    }
    if let Some(op) = op {
        k.count_op(op);
    }
    Some(se)
}

/// kernel: fair.c set_next_entity() @ v6.5 — the picked entity's buddy marks are consumed, it
/// leaves the tree, and a new slice starts (`prev_sum_exec_runtime`).
pub(crate) fn set_next_entity(k: &mut Kernel, cfs: CfsRqId, se: SeId) {
    clear_buddies(k, cfs, se);
    if k.se[se.index()].on_rq {
        k.__dequeue_entity(cfs, se);
        k.update_load_avg(cfs, se, UPDATE_TG);
    }
    k.se[se.index()].exec_start = k.rq_clock_task(cpu_of(k, cfs));
    k.cfs[cfs.index()].curr = Some(se);
    let e = &mut k.se[se.index()];
    e.prev_sum_exec_runtime = e.sum_exec_runtime;
}

#[derive(Clone, Copy)]
enum Buddy {
    Next,
    Last,
    Skip,
}

fn buddy_slot(c: &mut CfsRq, b: Buddy) -> &mut Option<SeId> {
    match b {
        Buddy::Next => &mut c.next,
        Buddy::Last => &mut c.last,
        Buddy::Skip => &mut c.skip,
    }
}

/// kernel: fair.c set_last_buddy() — `se` and its ancestors, stopping at an idle entity.
fn set_last_buddy(k: &mut Kernel, se: SeId) {
    let mut e = Some(se);
    while let Some(x) = e {
        if !k.se[x.index()].on_rq {
            k.sched_warn_on(true, "set_last_buddy on an entity that is not queued");
            return;
        }
        if k.is_idle_entity(x) {
            return;
        }
        let cfs = k.se[x.index()].cfs_rq;
        k.cfs[cfs.index()].last = Some(x);
        e = k.se[x.index()].parent;
    }
}

/// kernel: fair.c set_skip_buddy() — every level, no idle test.
fn set_skip_buddy(k: &mut Kernel, se: SeId) {
    let mut e = Some(se);
    while let Some(x) = e {
        let cfs = k.se[x.index()].cfs_rq;
        k.cfs[cfs.index()].skip = Some(x);
        e = k.se[x.index()].parent;
    }
}

/// kernel: fair.c __clear_buddies_{last,next,skip}()
fn __clear_buddies(k: &mut Kernel, se: SeId, b: Buddy) {
    let mut e = Some(se);
    while let Some(x) = e {
        let c = k.se[x.index()].cfs_rq;
        let slot = buddy_slot(&mut k.cfs[c.index()], b);
        if *slot != Some(x) {
            break;
        }
        *slot = None;
        e = k.se[x.index()].parent;
    }
}

/// kernel: fair.c clear_buddies() @ v6.5 — each of last, next and skip that is `se`.
pub(crate) fn clear_buddies(k: &mut Kernel, cfs: CfsRqId, se: SeId) {
    for b in [Buddy::Last, Buddy::Next, Buddy::Skip] {
        if *buddy_slot(&mut k.cfs[cfs.index()], b) == Some(se) {
            __clear_buddies(k, se, b);
        }
    }
}

// ===================================================================== tick (§7)

/// kernel: fair.c task_tick_fair() @ v6.5 — `entity_tick` at every level of the running task.
pub(crate) fn task_tick_fair(k: &mut Kernel, t: TaskId) {
    let mut e = Some(k.tasks[t.index()].se);
    while let Some(se) = e {
        let cfs = k.se[se.index()].cfs_rq;
        entity_tick(k, cfs, se);
        e = k.se[se.index()].parent;
    }
}

/// kernel: fair.c entity_tick() — charge, PELT, group weight, then judge (HRTICK is not
/// modelled: no armed hrtick ever suppresses the judgement).
fn entity_tick(k: &mut Kernel, cfs: CfsRqId, curr: SeId) {
    update_curr(k, cfs);
    k.update_load_avg(cfs, curr, UPDATE_TG);
    update_cfs_group(k, curr);
    if k.cfs[cfs.index()].nr_queued > 1 {
        check_preempt_tick(k, cfs, curr);
    }
}

/// kernel: fair.c check_preempt_tick() @ v6.5 — rule 1: the slice (capped at
/// `sysctl_sched_latency`) is exceeded since the last `set_next_entity`; rule 2: after
/// `min_granularity`, a vruntime lead over the leftmost larger than that slice.
fn check_preempt_tick(k: &mut Kernel, cfs: CfsRqId, curr: SeId) {
    let ideal = sched_slice(k, cfs, curr).min(k.cfs_tun.latency);
    let e = &k.se[curr.index()];
    let delta_exec = e.sum_exec_runtime - e.prev_sum_exec_runtime;
    let cpu = cpu_of(k, cfs);
    if delta_exec > ideal {
        k.resched_curr(cpu);
        // the entity must not be re-elected through its own buddy marks
        clear_buddies(k, cfs, curr);
        k.count_op(FairOp::CfsTickExpired);
        return;
    }
    if delta_exec < k.cfs_tun.min_granularity {
        return;
    }
    let Some(left) = first_entity(k, cfs) else {
        return;
    };
    let delta = vr(k, curr).wrapping_sub(vr(k, left)) as i64;
    if delta < 0 {
        return;
    }
    if delta as u64 > ideal {
        k.resched_curr(cpu);
        k.count_op(FairOp::CfsTickVdiff);
    }
}

// ===================================================================== wakeup (§8)

/// kernel: fair.c check_preempt_wakeup() @ v6.5 (cfs.md §8.2): the task-level idle rule, the
/// policy rule, the group idle rules at the first common level, then the vruntime test with
/// the wakee's wakeup granularity; a preemption leaves the wakee as next buddy and, with ≥
/// `sched_nr_latency` entities, the preempted task as last buddy. WF_SYNC has no effect here.
pub(crate) fn check_preempt_wakeup(k: &mut Kernel, cpu: usize, p: TaskId, wake_flags: u32) {
    let curr_t = k.rqs[cpu].curr;
    let mut se = k.tasks[curr_t.index()].se;
    let mut pse = k.tasks[p.index()].se;
    let cfs_curr = k.se[se.index()].cfs_rq;
    let scale = k.cfs[cfs_curr.index()].nr_queued as u64 >= k.cfs_tun.nr_latency;
    let mut next_buddy_marked = false;
    if se == pse {
        return;
    }
    if k.throttled_hierarchy(k.se[pse.index()].cfs_rq) {
        return;
    }
    if k.cfg.feat(F::NEXT_BUDDY) && scale && wake_flags & WF_FORK == 0 {
        k.set_next_buddy(pse);
        next_buddy_marked = true;
    }
    if k.need_resched(cpu) {
        return;
    }
    let curr_pol = k.tasks[curr_t.index()].policy;
    let p_pol = k.tasks[p.index()].policy;
    let preempt = 'decide: {
        // (A) the task-level idle rule
        if curr_pol == Policy::Idle && p_pol != Policy::Idle {
            break 'decide true;
        }
        // (B) batch and idle wakees never preempt through the vruntime test
        if p_pol != Policy::Normal || !k.cfg.feat(F::WAKEUP_PREEMPTION) {
            return;
        }
        k.find_matching_se(&mut se, &mut pse);
        let cse_idle = k.is_idle_entity(se);
        let pse_idle = k.is_idle_entity(pse);
        // (C) / (D) the group idle rules at the matched level
        if cse_idle && !pse_idle {
            break 'decide true;
        }
        if cse_idle != pse_idle {
            return;
        }
        update_curr(k, k.se[se.index()].cfs_rq);
        if wakeup_preempt_entity(k, se, pse) == 1 {
            if !next_buddy_marked {
                k.set_next_buddy(pse);
            }
            break 'decide true;
        }
        false
    };
    if !preempt {
        return;
    }
    k.resched_curr(cpu);
    k.count_op(FairOp::WakeupPreempt);
    if !k.se[se.index()].on_rq || k.tasks[curr_t.index()].is_idle_task {
        return;
    }
    if k.cfg.feat(F::LAST_BUDDY) && scale && k.se[se.index()].task.is_some() {
        set_last_buddy(k, se);
        k.count_op(FairOp::CfsLastBuddySet);
    }
}

/// Why a wakeup did not preempt, read back after the hook (for `--explain-wakeups`).
pub(crate) fn explain_wakeup(
    k: &Kernel,
    cpu: usize,
    p: TaskId,
    _wake_flags: u32,
) -> (WakeupVerdict, String) {
    let curr_t = k.rqs[cpu].curr;
    let mut se = k.tasks[curr_t.index()].se;
    let mut pse = k.tasks[p.index()].se;
    if k.cfs[k.se[pse.index()].cfs_rq.index()].cpu != cpu {
        return (WakeupVerdict::WakeupGranularity, String::new());
    }
    k.find_matching_se(&mut se, &mut pse);
    let name = match k.se[se.index()].my_q {
        Some(q) => k.tgs[k.cfs[q.index()].tg.index()].path.clone(),
        None => k.tasks[curr_t.index()].comm.clone(),
    };
    if k.is_idle_entity(pse) || k.tasks[p.index()].policy != Policy::Normal {
        return (WakeupVerdict::IdlePolicy, name);
    }
    (WakeupVerdict::WakeupGranularity, name)
}

// ===================================================================== yield (§10.1)

/// kernel: fair.c yield_task_fair() @ v6.5 — the yielder's vruntime is not changed: it only
/// becomes the skip buddy (a SCHED_BATCH yielder is not even charged).
pub(crate) fn yield_task_fair(k: &mut Kernel, cpu: usize) {
    let t = k.rqs[cpu].curr;
    let se = k.tasks[t.index()].se;
    let cfs = k.se[se.index()].cfs_rq;
    if k.rqs[cpu].nr_running == 1 {
        return;
    }
    clear_buddies(k, cfs, se);
    if k.tasks[t.index()].policy != Policy::Batch {
        k.update_rq_clock(cpu);
        update_curr(k, cfs);
        k.rq_clock_skip_update(cpu);
    }
    set_skip_buddy(k, se);
}

// ===================================================================== reweight (§10.3, §11.3)

/// kernel: fair.c reweight_entity() @ v6.5 — charge curr, swap the weight in the cfs_rq's load
/// and in the PELT sums; vruntime and tree position are unchanged.
pub(crate) fn reweight_entity(k: &mut Kernel, cfs: CfsRqId, se: SeId, weight: u64, inv: u32) {
    let on_rq = k.se[se.index()].on_rq;
    let old = k.se[se.index()].load.weight;
    if on_rq {
        if k.cfs[cfs.index()].curr == Some(se) {
            update_curr(k, cfs);
        }
        let c = &mut k.cfs[cfs.index()];
        c.load.weight -= old;
        c.load.inv_weight = 0;
    }
    k.se[se.index()].load = LoadWeight {
        weight,
        inv_weight: inv,
    };
    if on_rq {
        let c = &mut k.cfs[cfs.index()];
        c.load.weight += weight;
        c.load.inv_weight = 0;
    }
}

/// kernel: fair.c update_cfs_group() @ v6.5 (SMP) — a group entity takes its computed shares
/// at every call (no "unchanged" shortcut in v6.5).
pub(crate) fn update_cfs_group(k: &mut Kernel, se: SeId) {
    let Some(gcfs) = k.se[se.index()].my_q else {
        return;
    };
    if k.throttled_hierarchy(gcfs) {
        return;
    }
    let shares = k.calc_group_shares(gcfs);
    let old = k.se[se.index()].load.weight;
    let cfs = k.se[se.index()].cfs_rq;
    reweight_entity(k, cfs, se, shares, 0);
    if shares != old {
        k.reweight_load_avg(cfs, se, old, shares);
    }
}

// ===================================================================== invariants (§14.1)

/// C-1 … C-7 of cfs.md §14.1 for every cfs_rq (C-8 is a property of whole runs; the tests
/// check it). Returns the first violation.
pub(crate) fn check_invariants(k: &Kernel) -> Result<(), String> {
    for (i, c) in k.cfs.iter().enumerate() {
        let q = CfsRqId::new(i);
        // C-1: order (the tree check does the red-black part), no curr in the tree
        let order = tree::in_order(&k.se, c.root);
        for w in order.windows(2) {
            if before(vr(k, w[1]), vr(k, w[0])) {
                return Err(format!("C-1: cfs_rq {i}: tree out of vruntime order"));
            }
        }
        if let Some(cu) = c.curr {
            if order.contains(&cu) {
                return Err(format!("C-1: cfs_rq {i}: curr is in the tree"));
            }
        }
        // C-3: counters
        let mut members = order.clone();
        if let Some(cu) = c.curr.filter(|cu| k.se[cu.index()].on_rq) {
            members.push(cu);
        }
        let load: u64 = members.iter().map(|m| k.se[m.index()].load.weight).sum();
        let idle = members.iter().filter(|m| k.is_idle_entity(**m)).count() as u32;
        if members.len() as u32 != c.nr_queued || load != c.load.weight || idle != c.idle_nr_running
        {
            return Err(format!(
                "C-3: cfs_rq {i}: nr_running {} load {} idle_nr_running {} but {} entities of load {} ({} idle)",
                c.nr_queued, c.load.weight, c.idle_nr_running, members.len(), load, idle
            ));
        }
        for m in &members {
            let e = &k.se[m.index()];
            if !e.on_rq || e.cfs_rq != q {
                return Err(format!("C-1: cfs_rq {i}: a member is not queued here"));
            }
            // C-4: queued ⇒ absolute
            if e.cfs_rel {
                return Err(format!("C-4: cfs_rq {i}: a queued entity is relative"));
            }
        }
        // C-6: buddies name queued entities of this cfs_rq
        for (name, b) in [("next", c.next), ("last", c.last), ("skip", c.skip)] {
            if let Some(b) = b {
                if !members.contains(&b) {
                    return Err(format!("C-6: cfs_rq {i}: {name} buddy is not queued here"));
                }
            }
        }
        // C-7: the tick's ideal runtime never exceeds sysctl_sched_latency, and with
        // BASE_SLICE the slice is at least the floor
        if let Some(cu) = c.curr.filter(|cu| k.se[cu.index()].on_rq) {
            let s = sched_slice(k, q, cu);
            if k.cfg.feat(F::BASE_SLICE) {
                let floor = if k.is_idle_entity(cu) && !sched_idle_cfs_rq(k, q) {
                    k.cfs_tun.idle_min_granularity
                } else {
                    k.cfs_tun.min_granularity
                };
                if s < floor {
                    return Err(format!(
                        "C-7: cfs_rq {i}: slice {s} below the floor {floor}"
                    ));
                }
            }
        }
    }
    // C-3 (rq level)
    for (cpu, rq) in k.rqs.iter().enumerate() {
        if rq.nr_running < k.cfs[rq.cfs.index()].h_nr_queued {
            return Err(format!("C-3: cpu {cpu}: nr_running below cfs h_nr_running"));
        }
    }
    Ok(())
}
