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
use crate::sysctl::sysctl_factor;
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
    picked: hrtick_start_fair,
    hrtick_update,
    hrtick: task_tick_fair_queued,
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

    /// kernel: fair.c update_sysctl() — at boot and on every rq_online/rq_offline: the three
    /// scaled tunables become factor × normalised (overwriting plain debugfs writes).
    pub fn update_sysctl(&mut self, ncpus: u32) {
        let f = sysctl_factor(self.tunable_scaling, ncpus);
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
        let f = sysctl_factor(self.tunable_scaling, ncpus);
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
    task_tick(k, t, false);
}

/// The hrtick timer's `task_tick_fair(rq, curr, queued = 1)`.
fn task_tick_fair_queued(k: &mut Kernel, cpu: usize) {
    let t = k.rqs[cpu].curr;
    task_tick(k, t, true);
}

fn task_tick(k: &mut Kernel, t: TaskId, queued: bool) {
    let mut e = Some(k.tasks[t.index()].se);
    while let Some(se) = e {
        let cfs = k.se[se.index()].cfs_rq;
        entity_tick(k, cfs, se, queued);
        e = k.se[se.index()].parent;
    }
}

/// kernel: fair.c entity_tick() — charge, PELT, group weight; an expired hrtick reschedules
/// outright, a periodic tick does not judge while the hrtick is armed (NO_DOUBLE_TICK);
/// otherwise `check_preempt_tick` with two or more entities.
fn entity_tick(k: &mut Kernel, cfs: CfsRqId, curr: SeId, queued: bool) {
    update_curr(k, cfs);
    k.update_load_avg(cfs, curr, UPDATE_TG);
    update_cfs_group(k, curr);
    let cpu = cpu_of(k, cfs);
    if queued {
        k.resched_curr(cpu);
        return;
    }
    if !k.cfg.feat(F::DOUBLE_TICK) && k.rqs[cpu].hrtick_armed {
        return;
    }
    if k.cfs[cfs.index()].nr_queued > 1 {
        check_preempt_tick(k, cfs, curr);
    }
}

// ===================================================================== HRTICK (§9)

/// kernel: fair.c hrtick_start_fair() @ v6.5 — after a fair pick with HRTICK on and more than
/// one fair task on the CPU: the timer at the end of the (uncapped) slice. A task already past
/// its slice would get a resched here, which `__schedule()` clears right after the pick
/// (`clear_tsk_need_resched`), so nothing is done for it.
pub(crate) fn hrtick_start_fair(k: &mut Kernel, cpu: usize, p: TaskId) {
    if !k.cfg.feat(F::HRTICK) {
        return;
    }
    let root = k.rqs[cpu].cfs;
    if k.cfs[root.index()].h_nr_queued <= 1 {
        return;
    }
    let se = k.tasks[p.index()].se;
    let cfs = k.se[se.index()].cfs_rq;
    let slice = sched_slice(k, cfs, se);
    let e = &k.se[se.index()];
    let ran = e.sum_exec_runtime - e.prev_sum_exec_runtime;
    if ran > slice {
        return;
    }
    k.hrtick_start(cpu, slice - ran);
}

/// kernel: fair.c hrtick_update() @ v6.5 — re-arm for the running fair task while its
/// cfs_rq has fewer than `sched_nr_latency` entities.
pub(crate) fn hrtick_update(k: &mut Kernel, cpu: usize) {
    if !k.cfg.feat(F::HRTICK) {
        return;
    }
    let curr = k.rqs[cpu].curr;
    if k.tasks[curr.index()].is_idle_task || k.tasks[curr.index()].class != SchedClass::Fair {
        return;
    }
    let cfs = k.se[k.tasks[curr.index()].se.index()].cfs_rq;
    if (k.cfs[cfs.index()].nr_queued as u64) < k.cfs_tun.nr_latency {
        hrtick_start_fair(k, cpu, curr);
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
    let is_curr = k.cfs[cfs.index()].curr == Some(se);
    let old = k.se[se.index()].load.weight;
    if on_rq {
        if is_curr {
            update_curr(k, cfs);
        } else {
            // the tree's weighted sums (kept for both classes) follow the weight; the entity
            // keeps its place in the tree
            k.avg_vruntime_sub(cfs, se);
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
        if !is_curr {
            k.avg_vruntime_add(cfs, se);
        }
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

// ===================================================================== test support

/// Sets task `t`'s vruntime to `min_vruntime + rel` of its cfs_rq, keeping the tree in order
/// (for the spec's injected initial states; cfs.md §14.2). The task must be queued.
pub fn inject_vruntime(k: &mut Kernel, t: TaskId, rel: i64) {
    let se = k.tasks[t.index()].se;
    let cfs = k.se[se.index()].cfs_rq;
    assert!(k.se[se.index()].on_rq, "inject_vruntime: task not queued");
    let in_tree = k.cfs[cfs.index()].curr != Some(se);
    if in_tree {
        k.__dequeue_entity(cfs, se);
    }
    let m = k.cfs[cfs.index()].zero_vruntime;
    k.se[se.index()].vruntime = m.wrapping_add(rel as u64);
    if in_tree {
        k.__enqueue_entity(cfs, se);
    }
}

/// `cfs_rq->min_vruntime` of the root cfs_rq of `cpu`.
pub fn min_vruntime(k: &Kernel, cpu: usize) -> u64 {
    k.cfs[k.rqs[cpu].cfs.index()].zero_vruntime
}

#[cfg(test)]
mod tests {
    //! The arithmetic and single-decision vectors of cfs.md §14 (TV-1 … TV-8b, TV-15 … TV-18,
    //! TV-20 … TV-22, TV-24, TV-25); the scenario vectors are in tests/it/cfs_vectors.rs.
    //! Expected values are the spec's, quoted beside each assertion. Unless a test says
    //! otherwise: 2 online CPUs (latency 12 ms, min_granularity 1.5 ms, wakeup_granularity
    //! 2 ms), all tasks nice 0 on CPU 0's root cfs_rq, `m` = its min_vruntime.
    use super::*;
    use crate::presets::{KernelConfig, PreemptModel};
    use crate::syscalls::{Ctx, Op, Program, SysResult, TaskAttrs};
    use crate::MachineDesc;

    const MS: i64 = 1_000_000;

    struct Idle;
    impl Program for Idle {
        fn next(&mut self, _cx: &mut Ctx<'_>, _l: SysResult) -> Op {
            Op::Run(1)
        }
    }

    fn kern(spec: &str, ncpus: usize) -> Kernel {
        let cfg = KernelConfig::parse(spec).unwrap();
        Kernel::new(cfg, MachineDesc::ideal(ncpus, 1000, PreemptModel::Full), 1).unwrap()
    }

    fn task(k: &mut Kernel, nice: i32, policy: Policy) -> TaskId {
        let attrs = TaskAttrs {
            nice: Some(nice),
            policy: Some(policy),
            ..Default::default()
        };
        k.create_task(Box::new(Idle), &attrs, None, false)
    }

    fn m(k: &Kernel, cfs: CfsRqId) -> u64 {
        k.cfs[cfs.index()].zero_vruntime
    }

    /// Queues entity `se` on its cfs_rq at `m + rel` (absolute), as the tree entity or curr.
    fn queue_se(k: &mut Kernel, se: SeId, rel: i64, curr: bool) {
        let cfs = k.se[se.index()].cfs_rq;
        let v = m(k, cfs).wrapping_add(rel as u64);
        let now = k.rq_clock_task(0);
        let e = &mut k.se[se.index()];
        e.vruntime = v;
        e.cfs_rel = false;
        e.on_rq = true;
        e.exec_start = now;
        e.sum_exec_runtime = 1; // has run: not a fresh task
        e.prev_sum_exec_runtime = 1;
        account_entity_enqueue(k, cfs, se);
        if curr {
            k.cfs[cfs.index()].curr = Some(se);
        } else {
            k.__enqueue_entity(cfs, se);
        }
    }

    /// Queues task `t` (and counts it up its hierarchy and in the rq); `curr` makes it the
    /// running task.
    fn queue(k: &mut Kernel, t: TaskId, rel: i64, curr: bool) {
        let se = k.tasks[t.index()].se;
        queue_se(k, se, rel, curr);
        k.tasks[t.index()].on_rq = OnRq::Queued;
        k.tasks[t.index()].state = TaskState::Running;
        let idle = (k.tasks[t.index()].policy == Policy::Idle) as u32;
        let mut e = Some(se);
        while let Some(x) = e {
            let c = k.se[x.index()].cfs_rq;
            k.cfs[c.index()].h_nr_queued += 1;
            k.cfs[c.index()].h_nr_runnable += 1;
            k.cfs[c.index()].h_nr_idle += idle;
            e = k.se[x.index()].parent;
        }
        k.rqs[0].nr_running += 1;
        if curr {
            k.rqs[0].curr = t;
        }
    }

    /// A sleeping task on CPU 0 with absolute vruntime `m + rel`.
    fn sleeper(k: &mut Kernel, nice: i32, policy: Policy, rel: i64) -> TaskId {
        let t = task(k, nice, policy);
        let se = k.tasks[t.index()].se;
        let cfs = k.se[se.index()].cfs_rq;
        let e = &mut k.se[se.index()];
        e.vruntime = k.cfs[cfs.index()].zero_vruntime.wrapping_add(rel as u64);
        e.cfs_rel = false;
        e.sum_exec_runtime = 1;
        k.tasks[t.index()].state = TaskState::Running;
        t
    }

    /// Wakes `t` on CPU 0 (same-CPU wakeup) and runs the wakeup-preemption hook.
    fn wake(k: &mut Kernel, t: TaskId, wf: u32) {
        k.enqueue_task_fair(t, ENQUEUE_WAKEUP);
        k.tasks[t.index()].on_rq = OnRq::Queued;
        k.check_preempt_wakeup_fair(0, t, wf, true);
    }

    fn rel(k: &Kernel, t: TaskId) -> i64 {
        let se = k.tasks[t.index()].se;
        let cfs = k.se[se.index()].cfs_rq;
        k.se[se.index()].vruntime.wrapping_sub(m(k, cfs)) as i64
    }

    fn se_of(k: &Kernel, t: TaskId) -> SeId {
        k.tasks[t.index()].se
    }

    #[test]
    fn tv1_tunable_scaling() {
        // TV-1: CPUs 1/2/3/4/7/8/64 -> latency 6/12/12/18/18/24/24 ms, min_granularity
        // 0.75/1.5/1.5/2.25/2.25/3/3 ms, wakeup_granularity 1/2/2/3/3/4/4 ms;
        // idle_min_granularity 0.75 ms and sched_nr_latency 8 in every row
        let rows = [
            (1, 6_000_000, 750_000, 1_000_000),
            (2, 12_000_000, 1_500_000, 2_000_000),
            (3, 12_000_000, 1_500_000, 2_000_000),
            (4, 18_000_000, 2_250_000, 3_000_000),
            (7, 18_000_000, 2_250_000, 3_000_000),
            (8, 24_000_000, 3_000_000, 4_000_000),
            (64, 24_000_000, 3_000_000, 4_000_000),
        ];
        for (n, lat, ming, wg) in rows {
            let t = CfsTunables::boot(n, &[]).unwrap();
            assert_eq!(
                (t.latency, t.min_granularity, t.wakeup_granularity),
                (lat, ming, wg),
                "{n} CPUs"
            );
            assert_eq!((t.idle_min_granularity, t.nr_latency), (750_000, 8));
        }
        // LINEAR with 4 CPUs: factor 4 (latency 24 ms); with 64: factor 8 (48 ms); NONE: 1
        for (mode, n, lat) in [(2, 4, 24_000_000), (2, 64, 48_000_000), (0, 64, 6_000_000)] {
            let mut t = CfsTunables::defaults();
            t.tunable_scaling = mode;
            t.update_sysctl(n);
            assert_eq!(t.latency, lat, "mode {mode}, {n} CPUs");
        }
        // the kernel gets them at boot from the CPU count
        assert_eq!(kern("v6.5", 2).cfs_tun.latency, 12_000_000);
        assert_eq!(kern("v6.5", 4).cfs_tun.wakeup_granularity, 3_000_000);
    }

    #[test]
    fn tv2_virtual_conversions() {
        // TV-2: wakeup_gran on 2 CPUs: nice 0 -> 2 000 000; 5 -> 6 113 432; -5 -> 656 199;
        // 19 -> 136 533 333; SCHED_IDLE -> 682 666 666. On 1 CPU: 1 000 000 / 3 056 716 /
        // 328 099 / 68 266 666 / 341 333 333.
        for (ncpus, want) in [
            (2, [2_000_000, 6_113_432, 656_199, 136_533_333, 682_666_666]),
            (1, [1_000_000, 3_056_716, 328_099, 68_266_666, 341_333_333]),
        ] {
            let mut k = kern("v6.5", ncpus);
            let got: Vec<u64> = [
                (0, Policy::Normal),
                (5, Policy::Normal),
                (-5, Policy::Normal),
                (19, Policy::Normal),
                (0, Policy::Idle),
            ]
            .iter()
            .map(|&(n, p)| {
                let t = task(&mut k, n, p);
                wakeup_gran(&k, se_of(&k, t))
            })
            .collect();
            assert_eq!(got, want, "{ncpus} CPUs");
        }
    }

    #[test]
    fn tv3_slices_of_two_entities() {
        // TV-3: two nice-0: period 6/12/18/24 ms (1/2/4/8 CPUs) -> 2 999 998 / 5 999 997 /
        // 8 999 995 / 11 999 994
        for (ncpus, want) in [
            (1, 2_999_998),
            (2, 5_999_997),
            (4, 8_999_995),
            (8, 11_999_994),
        ] {
            let mut k = kern("v6.5", ncpus);
            let (a, b) = (
                task(&mut k, 0, Policy::Normal),
                task(&mut k, 0, Policy::Normal),
            );
            queue(&mut k, a, 0, true);
            queue(&mut k, b, 0, false);
            let cfs = k.rqs[0].cfs;
            assert_eq!(sched_slice(&k, cfs, se_of(&k, a)), want, "{ncpus} CPUs");
        }
        // three nice-0, 12 ms -> 3 999 999
        let mut k = kern("v6.5", 2);
        let ts: Vec<TaskId> = (0..3).map(|_| task(&mut k, 0, Policy::Normal)).collect();
        for (i, &t) in ts.iter().enumerate() {
            queue(&mut k, t, 0, i == 0);
        }
        let cfs = k.rqs[0].cfs;
        assert_eq!(sched_slice(&k, cfs, se_of(&k, ts[1])), 3_999_999);
        // nice 0 with nice 5 at 12 ms: 9 041 942 and 2 958 057
        let mut k = kern("v6.5", 2);
        let (a, b) = (
            task(&mut k, 0, Policy::Normal),
            task(&mut k, 5, Policy::Normal),
        );
        queue(&mut k, a, 0, true);
        queue(&mut k, b, 0, false);
        let cfs = k.rqs[0].cfs;
        assert_eq!(sched_slice(&k, cfs, se_of(&k, a)), 9_041_942);
        assert_eq!(sched_slice(&k, cfs, se_of(&k, b)), 2_958_057);
    }

    #[test]
    fn tv4_period_stretching_and_the_floor() {
        // TV-4: 8, 9, 10 nice-0 tasks: raw 1 499 997 / 1 499 997 / 1 499 998, floored to
        // 1 500 000 with BASE_SLICE; ideal_runtime = min(1 500 000, 12 000 000)
        for (spec, want) in [
            ("v6.5", [1_500_000, 1_500_000, 1_500_000]),
            ("v6.5 NO_BASE_SLICE", [1_499_997, 1_499_997, 1_499_998]),
        ] {
            for (i, n) in [8, 9, 10].into_iter().enumerate() {
                let mut k = kern(spec, 2);
                let ts: Vec<TaskId> = (0..n).map(|_| task(&mut k, 0, Policy::Normal)).collect();
                for (j, &t) in ts.iter().enumerate() {
                    queue(&mut k, t, 0, j == 0);
                }
                let cfs = k.rqs[0].cfs;
                assert_eq!(
                    sched_slice(&k, cfs, se_of(&k, ts[0])),
                    want[i],
                    "{spec}, {n}"
                );
            }
        }
    }

    /// Root: task X and group /G (weight 1 048 576); G holds `n` tasks. Returns (k, X, G's
    /// tasks, G's entity).
    fn with_group(spec: &str, n: usize) -> (Kernel, TaskId, Vec<TaskId>, SeId) {
        let mut k = kern(spec, 2);
        let g = k.cgroup_mkdir_p("/G").unwrap();
        let x = task(&mut k, 0, Policy::Normal);
        let ys: Vec<TaskId> = (0..n)
            .map(|_| {
                let attrs = TaskAttrs {
                    tg: Some(g),
                    ..Default::default()
                };
                k.create_task(Box::new(Idle), &attrs, None, false)
            })
            .collect();
        let gse = k.tgs[g.index()].se[0].unwrap();
        assert_eq!(k.se[gse.index()].load.weight, NICE_0_LOAD);
        queue(&mut k, x, 0, false);
        queue_se(&mut k, gse, 0, true);
        for (i, &y) in ys.iter().enumerate() {
            queue(&mut k, y, 0, i == 0);
        }
        (k, x, ys, gse)
    }

    #[test]
    fn tv5_hierarchy_walk() {
        // TV-5: X and G on the root, Y and Z in G, h_nr_running(root) = 3 -> period 12 ms:
        // sched_slice(Y) = 12 000 000 -> 5 999 997 (level G) -> 2 999 997 (root);
        // sched_slice(X) = sched_slice(G) = 5 999 997
        let (k, x, ys, gse) = with_group("v6.5", 2);
        let root = k.rqs[0].cfs;
        let gq = k.se[se_of(&k, ys[0]).index()].cfs_rq;
        assert_eq!(sched_slice(&k, gq, se_of(&k, ys[0])), 2_999_997);
        assert_eq!(sched_slice(&k, root, se_of(&k, x)), 5_999_997);
        assert_eq!(sched_slice(&k, root, gse), 5_999_997);
        // TV-5b: 9 tasks in G -> h_nr_running 10 > 8 -> period 15 ms: X and G 7 499 996
        // (NO_ALT_PERIOD: root nr_running 2 -> 12 ms -> 5 999 997); a task T in G:
        // 15 000 000 -> 1 666 663 -> 833 331 -> floor 1 500 000
        let (k, x, ys, gse) = with_group("v6.5", 9);
        let gq = k.se[se_of(&k, ys[0]).index()].cfs_rq;
        assert_eq!(sched_slice(&k, root, se_of(&k, x)), 7_499_996);
        assert_eq!(sched_slice(&k, root, gse), 7_499_996);
        assert_eq!(sched_slice(&k, gq, se_of(&k, ys[3])), 1_500_000);
        let (k, x, _, _) = with_group("v6.5 NO_ALT_PERIOD", 9);
        assert_eq!(sched_slice(&k, root, se_of(&k, x)), 5_999_997);
        let (k, _, ys, _) = with_group("v6.5 NO_BASE_SLICE", 9);
        assert_eq!(sched_slice(&k, gq, se_of(&k, ys[3])), 833_331);
    }

    #[test]
    fn tv6_sched_idle_slices() {
        // TV-6: nice-0 N with SCHED_IDLE I: N 11 964 943; I raw 35 053 -> idle floor 750 000.
        // Two SCHED_IDLE alone: 5 999 999 each (sched_idle_cfs_rq: the 1.5 ms floor applies,
        // not binding)
        let mut k = kern("v6.5", 2);
        let (n, i) = (
            task(&mut k, 0, Policy::Normal),
            task(&mut k, 0, Policy::Idle),
        );
        queue(&mut k, n, 0, true);
        queue(&mut k, i, 0, false);
        let cfs = k.rqs[0].cfs;
        assert_eq!(sched_slice(&k, cfs, se_of(&k, n)), 11_964_943);
        assert_eq!(sched_slice(&k, cfs, se_of(&k, i)), 750_000);
        let mut k = kern("v6.5 NO_BASE_SLICE", 2);
        let (n, i) = (
            task(&mut k, 0, Policy::Normal),
            task(&mut k, 0, Policy::Idle),
        );
        queue(&mut k, n, 0, true);
        queue(&mut k, i, 0, false);
        assert_eq!(sched_slice(&k, cfs, se_of(&k, i)), 35_053);
        let mut k = kern("v6.5", 2);
        let (a, b) = (task(&mut k, 0, Policy::Idle), task(&mut k, 0, Policy::Idle));
        queue(&mut k, a, 0, true);
        queue(&mut k, b, 0, false);
        assert_eq!(sched_slice(&k, cfs, se_of(&k, a)), 5_999_999);
    }

    #[test]
    fn tv7_placement_arithmetic() {
        // TV-7: nice-0 or SCHED_BATCH wakee -> floor m - 6 000 000 (NO_GENTLE: m - 12 000 000);
        // SCHED_IDLE -> m - 750 000. Old m - 100 ms -> m - 6 ms; m - 0.5 ms stays; m + 3 ms
        // stays. 1 CPU: floor m - 3 ms; >= 8 CPUs: m - 12 ms.
        let place = |spec: &str, ncpus: usize, pol: Policy, old: i64| -> i64 {
            let mut k = kern(spec, ncpus);
            let t = sleeper(&mut k, 0, pol, old);
            let cfs = k.rqs[0].cfs;
            let se = se_of(&k, t);
            place_entity(&mut k, cfs, se, false);
            rel(&k, t)
        };
        assert_eq!(place("v6.5", 2, Policy::Normal, -100 * MS), -6 * MS);
        assert_eq!(place("v6.5", 2, Policy::Batch, -100 * MS), -6 * MS);
        assert_eq!(
            place("v6.5 NO_GENTLE_FAIR_SLEEPERS", 2, Policy::Normal, -100 * MS),
            -12 * MS
        );
        assert_eq!(place("v6.5", 2, Policy::Idle, -100 * MS), -750_000);
        assert_eq!(place("v6.5", 2, Policy::Normal, -MS / 2), -MS / 2);
        assert_eq!(place("v6.5", 2, Policy::Normal, 3 * MS), 3 * MS);
        assert_eq!(place("v6.5", 1, Policy::Normal, -100 * MS), -3 * MS);
        assert_eq!(place("v6.5", 8, Policy::Normal, -100 * MS), -12 * MS);
    }

    #[test]
    fn tv8_long_sleeper() {
        // TV-8: threshold 2^63 / 1024 = 9 007 199 254 740 992 ns. exec_start one ns further in
        // the past -> placed at exactly m - thresh even if the stored vruntime compares
        // greater; at the threshold -> the max rule; exec_start 0 -> never a long sleeper.
        let th: u64 = 9_007_199_254_740_992;
        let now: u64 = th + 5_000_000_000;
        for (back, want) in [(th + 1, -6 * MS), (th, 2 * MS)] {
            let mut k = kern("v6.5", 2);
            k.rqs[0].clock_task = now;
            let t = sleeper(&mut k, 0, Policy::Normal, 2 * MS);
            let se = se_of(&k, t);
            k.se[se.index()].exec_start = now - back;
            let cfs = k.rqs[0].cfs;
            place_entity(&mut k, cfs, se, false);
            assert_eq!(rel(&k, t), want, "exec_start {back} ns ago");
        }
        let mut k = kern("v6.5", 2);
        k.rqs[0].clock_task = now;
        let t = sleeper(&mut k, 0, Policy::Normal, 2 * MS);
        let se = se_of(&k, t);
        k.se[se.index()].exec_start = 0;
        assert!(!entity_is_long_sleeper(&k, se_of(&k, t)));
    }

    #[test]
    fn tv8b_min_vruntime_updates() {
        // TV-8b (a) curr m + 5 ms, leftmost m + 3 ms -> m + 3 ms; (b) curr m - 1 ms, leftmost
        // m + 3 ms -> stays m; (c) curr dequeued, tree empty -> stays m
        for (c, l, want) in [(5 * MS, 3 * MS, 3 * MS), (-MS, 3 * MS, 0)] {
            let mut k = kern("v6.5", 2);
            let (a, b) = (
                task(&mut k, 0, Policy::Normal),
                task(&mut k, 0, Policy::Normal),
            );
            queue(&mut k, a, c, true);
            queue(&mut k, b, l, false);
            let cfs = k.rqs[0].cfs;
            let m0 = m(&k, cfs);
            k.update_min_vruntime(cfs);
            assert_eq!(m(&k, cfs).wrapping_sub(m0) as i64, want);
        }
        let mut k = kern("v6.5", 2);
        let a = task(&mut k, 0, Policy::Normal);
        queue(&mut k, a, 4 * MS, true);
        let se = se_of(&k, a);
        k.se[se.index()].on_rq = false;
        let cfs = k.rqs[0].cfs;
        let m0 = m(&k, cfs);
        k.update_min_vruntime(cfs);
        assert_eq!(m(&k, cfs), m0);
        // (d) a fresh cfs_rq starts at 18 446 744 073 708 503 040 (= -2^20); one entity at
        // 1 048 576 (= m + 2^21 by signed difference) -> m = 1 048 576
        let mut k = kern("v6.5", 2);
        assert_eq!(m(&k, cfs), 18_446_744_073_708_503_040);
        let a = task(&mut k, 0, Policy::Normal);
        queue(&mut k, a, 1 << 21, true);
        assert_eq!(k.se[se_of(&k, a).index()].vruntime, 1_048_576);
        k.update_min_vruntime(cfs);
        assert_eq!(m(&k, cfs), 1_048_576);
    }

    #[test]
    fn tv15_wakeup_preemption_whose_buddy_is_not_used() {
        // TV-15: H (SCHED_BATCH) at m - 4 ms queued, curr W at m + 3 ms; R wakes with old
        // vruntime m - 1 ms (kept). vdiff(W, R) = 4 ms > 2 ms -> preempt, next = R. Pick:
        // left = H; vR - vH = 3 ms > wakeup_gran(H) = 2 ms -> H runs; next = R stays.
        let mut k = kern("v6.5", 2);
        let h = task(&mut k, 0, Policy::Batch);
        let w = task(&mut k, 0, Policy::Normal);
        queue(&mut k, w, 3 * MS, true);
        queue(&mut k, h, -4 * MS, false);
        let r = sleeper(&mut k, 0, Policy::Normal, -MS);
        wake(&mut k, r, WF_TTWU);
        assert_eq!(rel(&k, r), -MS);
        assert!(k.need_resched(0), "R preempts W");
        let cfs = k.rqs[0].cfs;
        assert_eq!(k.cfs[cfs.index()].next, Some(se_of(&k, r)));
        assert_eq!(pick_next_entity(&mut k, cfs), Some(se_of(&k, h)));
        assert_eq!(k.cfs[cfs.index()].next, Some(se_of(&k, r)), "stale next");
    }

    /// TV-16/17 setting: H1 … H`nh` at m, m+1, … ms; curr W at m + `w` ms; returns (k, W, Hs).
    fn eight(spec: &str, nh: usize, w: i64) -> (Kernel, TaskId, Vec<TaskId>) {
        let mut k = kern(spec, 2);
        let wt = task(&mut k, 0, Policy::Normal);
        queue(&mut k, wt, w, true);
        let hs: Vec<TaskId> = (0..nh)
            .map(|i| {
                let h = task(&mut k, 0, Policy::Normal);
                queue(&mut k, h, i as i64 * MS, false);
                h
            })
            .collect();
        (k, wt, hs)
    }

    /// W blocks `after` ns later (charged, dequeued with SLEEP); returns the next pick.
    fn w_blocks(k: &mut Kernel, w: TaskId, after: u64) -> Option<SeId> {
        k.rqs[0].clock_task += after;
        k.dequeue_task_fair(w, DEQUEUE_SLEEP);
        k.tasks[w.index()].on_rq = OnRq::No;
        let cfs = k.rqs[0].cfs;
        pick_next_entity(k, cfs)
    }

    #[test]
    fn tv16_next_buddy_on_a_sync_wakeup() {
        // TV-16: H1…H6 at m…m+5 ms, curr W at m + 1.5 ms, R wakes (WF_SYNC) at m + 1 ms:
        // 8 entities -> scale. Default: no nomination, vdiff 0.5 ms <= 2 ms -> no preemption;
        // W blocks 0.1 ms later -> H1. NEXT_BUDDY: next = R, then vR - vH1 = 1 ms <= 2 ms -> R
        // (and its set_next_entity clears next). NEXT_BUDDY with H1…H5 (7 entities): H1.
        // NEXT_BUDDY with R at m + 2.5 ms: 2.5 ms > 2 ms -> H1.
        let cases = [
            ("v6.5", 6, MS, 0usize),
            ("v6.5 NEXT_BUDDY", 6, MS, 1),
            ("v6.5 NEXT_BUDDY", 5, MS, 0),
            ("v6.5 NEXT_BUDDY", 6, 5 * MS / 2, 0),
        ];
        for (spec, nh, rv, want_r) in cases {
            let (mut k, w, hs) = eight(spec, nh, 3 * MS / 2);
            let r = sleeper(&mut k, 0, Policy::Normal, rv);
            wake(&mut k, r, WF_TTWU | WF_SYNC);
            assert!(!k.need_resched(0), "{spec}: no preemption");
            let picked = w_blocks(&mut k, w, 100_000);
            let want = if want_r == 1 {
                se_of(&k, r)
            } else {
                se_of(&k, hs[0])
            };
            assert_eq!(picked, Some(want), "{spec}, {nh} H, R at {rv}");
            if want_r == 1 {
                let cfs = k.rqs[0].cfs;
                set_next_entity(&mut k, cfs, want);
                assert_eq!(k.cfs[cfs.index()].next, None);
            }
        }
        // WF_FORK only suppresses the NEXT_BUDDY nomination (cfs.md §8.4)
        let (mut k, _w, _hs) = eight("v6.5 NEXT_BUDDY", 6, 3 * MS / 2);
        let r = sleeper(&mut k, 0, Policy::Normal, MS);
        wake(&mut k, r, WF_FORK);
        assert_eq!(k.cfs[k.rqs[0].cfs.index()].next, None);
    }

    #[test]
    fn tv17_last_buddy_after_a_preemption() {
        // TV-17: as TV-16 but R slept long -> placed at m - 6 ms; vdiff 7.5 ms -> preempt,
        // next = R, last = W (scale, W a queued task). R runs 0.2 ms and blocks; pick: left
        // H1 (m), no next, last = W within 1.5 ms <= 2 ms -> W resumes. NO_LAST_BUDDY -> H1;
        // W at m + 2.5 ms -> H1; 7 entities (no scale) -> H1.
        for (spec, nh, wv, want_w) in [
            ("v6.5", 6, 3 * MS / 2, true),
            ("v6.5 NO_LAST_BUDDY", 6, 3 * MS / 2, false),
            ("v6.5", 6, 5 * MS / 2, false),
            ("v6.5", 5, 3 * MS / 2, false),
        ] {
            let (mut k, w, hs) = eight(spec, nh, wv);
            let r = sleeper(&mut k, 0, Policy::Normal, -100 * MS);
            wake(&mut k, r, WF_TTWU);
            assert_eq!(rel(&k, r), -6 * MS, "{spec}");
            assert!(k.need_resched(0), "{spec}");
            let cfs = k.rqs[0].cfs;
            assert_eq!(k.cfs[cfs.index()].next, Some(se_of(&k, r)));
            // set whenever 8 entities are queued and LAST_BUDDY is on (W at 2.5 ms too)
            let last = (nh == 6 && !spec.contains("NO_LAST")).then(|| se_of(&k, w));
            assert_eq!(k.cfs[cfs.index()].last, last, "{spec}: last buddy");
            assert_eq!(pick_next_entity(&mut k, cfs), Some(se_of(&k, r)));
            k.put_prev_set_next_fair(Some(w), r);
            k.rqs[0].curr = r;
            assert_eq!(k.cfs[cfs.index()].next, None, "consumed by set_next_entity");
            let picked = w_blocks(&mut k, r, 200_000);
            let want = if want_w {
                se_of(&k, w)
            } else {
                se_of(&k, hs[0])
            };
            assert_eq!(picked, Some(want), "{spec}, {nh} H, W at {wv}");
        }
    }

    #[test]
    fn tv18_migration_normalisation() {
        // TV-18: CPU0 m0 = 103 ms, CPU1 m1 = 50 ms.
        let setup = || {
            let mut k = kern("v6.5", 2);
            let (c0, c1) = (k.rqs[0].cfs, k.rqs[1].cfs);
            k.cfs[c0.index()].zero_vruntime = 103 * MS as u64;
            k.cfs[c1.index()].zero_vruntime = 50 * MS as u64;
            k
        };
        // (a) P slept on CPU0 at 100 ms, woken onto CPU1: -3 ms (Rel) -> 47 ms ->
        // max(47, 50 - 6) = 47 ms; exec_start = 0. (b) at 10 ms: -93 -> -43 -> 44 ms.
        for (v, want) in [(100, 47), (10, 44)] {
            let mut k = setup();
            let p = sleeper(&mut k, 0, Policy::Normal, 0);
            let se = se_of(&k, p);
            k.se[se.index()].vruntime = (v * MS) as u64;
            k.se[se.index()].exec_start = 5;
            k.set_task_cpu(p, 1, 0);
            assert!(k.se[se.index()].cfs_rel);
            assert_eq!(k.se[se.index()].vruntime as i64, (v - 103) * MS);
            k.enqueue_task(1, p, ENQUEUE_WAKEUP | ENQUEUE_MIGRATED);
            assert_eq!(
                k.se[se.index()].vruntime,
                (want * MS) as u64,
                "(a/b) {v} ms"
            );
            assert_eq!(k.se[se.index()].exec_start, 0);
        }
        // (c) P queued on CPU0 at 105 ms, moved by the balancer: 2 ms (Rel) -> 52 ms, no
        // placement, exec_start = 0
        let mut k = setup();
        let p = task(&mut k, 0, Policy::Normal);
        queue(&mut k, p, 2 * MS, false);
        let se = se_of(&k, p);
        k.tasks[p.index()].on_rq = OnRq::Migrating;
        k.dequeue_task(0, p, 0);
        assert_eq!(k.se[se.index()].vruntime, 2 * MS as u64);
        k.set_task_cpu(p, 1, 0);
        k.enqueue_task(1, p, ENQUEUE_MIGRATED);
        assert_eq!(k.se[se.index()].vruntime, 52 * MS as u64);
        assert_eq!(k.se[se.index()].exec_start, 0);
        // (d) same-CPU wakeup at 100 ms on CPU0: max(100, 97) = 100 ms
        let mut k = setup();
        let p = sleeper(&mut k, 0, Policy::Normal, -3 * MS);
        wake(&mut k, p, WF_TTWU);
        assert_eq!(k.se[se_of(&k, p).index()].vruntime, 100 * MS as u64);
    }

    #[test]
    fn tv19_fork_placement_arithmetic() {
        // TV-19: parent P alone at V = m: vslice(C) with nr 2, load 2 097 152 -> 5 999 997 ->
        // C = V + 5 999 997, normalised 5 999 997. NO_START_DEBIT: 0. child_runs_first: swap,
        // P = V + 5 999 997, C Rel 0, resched. 1 CPU: 2 999 998. A nice-5 child on 2 CPUs:
        // slice 2 958 057, vslice 9 041 941.
        let fork = |spec: &str, ncpus: usize, nice: i32| -> (Kernel, TaskId, TaskId) {
            let mut k = kern(spec, ncpus);
            let p = task(&mut k, 0, Policy::Normal);
            queue(&mut k, p, 0, true);
            let attrs = TaskAttrs {
                nice: Some(nice),
                ..Default::default()
            };
            let c = k.create_task(Box::new(Idle), &attrs, Some(p), false);
            (k, p, c)
        };
        for (spec, ncpus, nice, want) in [
            ("v6.5", 2, 0, 5_999_997),
            ("v6.5 NO_START_DEBIT", 2, 0, 0),
            ("v6.5", 1, 0, 2_999_998),
            ("v6.5", 2, 5, 9_041_941),
        ] {
            let (k, _, c) = fork(spec, ncpus, nice);
            let e = &k.se[se_of(&k, c).index()];
            assert!(e.cfs_rel);
            assert_eq!(e.vruntime, want, "{spec}, {ncpus} CPUs, nice {nice}");
        }
        let (k, p, c) = fork("v6.5 sched_child_runs_first=1", 2, 0);
        assert_eq!(rel(&k, p), 5_999_997);
        assert_eq!(k.se[se_of(&k, c).index()].vruntime, 0);
        assert!(k.need_resched(0));
    }

    #[test]
    fn tv20_yield_with_the_skip_buddy() {
        // TV-20: A curr at m + 1 ms, B m + 2 ms, C m + 5 ms. A yields: skip = A; pick: second
        // = B, 1 ms <= 2 ms -> B; skip = A stays. B at m + 4 ms: 3 ms > 2 ms -> A re-picked.
        for (bv, want_b) in [(2 * MS, true), (4 * MS, false)] {
            let mut k = kern("v6.5", 2);
            let (a, b, c) = (
                task(&mut k, 0, Policy::Normal),
                task(&mut k, 0, Policy::Normal),
                task(&mut k, 0, Policy::Normal),
            );
            queue(&mut k, a, MS, true);
            queue(&mut k, b, bv, false);
            queue(&mut k, c, 5 * MS, false);
            k.yield_task_fair(0);
            let cfs = k.rqs[0].cfs;
            assert_eq!(k.cfs[cfs.index()].skip, Some(se_of(&k, a)));
            let got = pick_next_entity(&mut k, cfs).unwrap();
            let want = if want_b { b } else { a };
            assert_eq!(got, se_of(&k, want), "B at {bv}");
            if want_b {
                k.put_prev_set_next_fair(Some(a), b);
            }
            assert_eq!(k.cfs[cfs.index()].skip, Some(se_of(&k, a)), "skip survives");
        }
        // rq.nr_running == 1 -> nothing happens
        let mut k = kern("v6.5", 2);
        let a = task(&mut k, 0, Policy::Normal);
        queue(&mut k, a, 0, true);
        k.yield_task_fair(0);
        assert_eq!(k.cfs[k.rqs[0].cfs.index()].skip, None);
    }

    #[test]
    fn tv21_renice() {
        // TV-21 (a): curr A at m, B queued at m + 2 ms; nice 5 on B: weight 343 040, inverse
        // 12 820 798; B back at m + 2 ms; no preemption (vdiff -2 ms).
        let mut k = kern("v6.5", 2);
        let (a, b) = (
            task(&mut k, 0, Policy::Normal),
            task(&mut k, 0, Policy::Normal),
        );
        queue(&mut k, a, 0, true);
        queue(&mut k, b, 2 * MS, false);
        k.set_user_nice(b, 5);
        let e = &k.se[se_of(&k, b).index()];
        assert_eq!((e.load.weight, e.load.inv_weight), (343_040, 12_820_798));
        assert_eq!(rel(&k, b), 2 * MS);
        assert!(!k.need_resched(0));
        // (b) renice of the running A to nice 5: vruntime unchanged, prev_sum_exec_runtime
        // reset, buddies cleared, resched (priority got worse)
        let cfs = k.rqs[0].cfs;
        let sa = se_of(&k, a);
        k.se[sa.index()].sum_exec_runtime = 7_000_000;
        k.cfs[cfs.index()].next = Some(sa);
        let v = k.se[sa.index()].vruntime;
        k.set_user_nice(a, 5);
        let e = &k.se[sa.index()];
        assert_eq!(e.vruntime, v);
        assert_eq!(e.prev_sum_exec_runtime, 7_000_000);
        assert_eq!(k.cfs[cfs.index()].next, None);
        assert!(k.need_resched(0));
    }

    #[test]
    fn tv22_cross_group_wakeup() {
        // TV-22: root: sleeping X and group G (curr at the root, alone: r follows it); G holds
        // running Y and queued Z. X wakes after a long sleep: placed at r - 6 ms; common level
        // root; vdiff 6 ms > 2 ms -> preempt, next = X at the root; no last buddy (scale is
        // false on Y's cfs_rq, and G is not a task). Pick at the root: X.
        let mut k = kern("v6.5", 2);
        let g = k.cgroup_mkdir_p("/G").unwrap();
        let attrs = TaskAttrs {
            tg: Some(g),
            ..Default::default()
        };
        let y = k.create_task(Box::new(Idle), &attrs, None, false);
        let z = k.create_task(Box::new(Idle), &attrs, None, false);
        let gse = k.tgs[g.index()].se[0].unwrap();
        queue_se(&mut k, gse, 0, true);
        queue(&mut k, y, 0, true);
        queue(&mut k, z, MS, false);
        let x = sleeper(&mut k, 0, Policy::Normal, -100 * MS);
        wake(&mut k, x, WF_TTWU);
        assert_eq!(rel(&k, x), -6 * MS);
        assert!(k.need_resched(0));
        let root = k.rqs[0].cfs;
        assert_eq!(k.cfs[root.index()].next, Some(se_of(&k, x)));
        assert_eq!(k.cfs[root.index()].last, None);
        assert_eq!(pick_next_entity(&mut k, root), Some(se_of(&k, x)));
    }

    #[test]
    fn the_state_dump_uses_v6_5_names() {
        // cfs.md §12.2: print_cfs_rq() of v6.5 prints nr_running, min_vruntime,
        // idle_nr_running; the dump also names the buddies
        let mut k = kern("v6.5", 2);
        let (a, b) = (
            task(&mut k, 0, Policy::Normal),
            task(&mut k, 0, Policy::Idle),
        );
        queue(&mut k, a, 0, true);
        queue(&mut k, b, 2 * MS, false);
        let d = k.state_dump();
        assert!(
            d.contains("cfs: nr_running=2 h_nr_running=2 idle_nr_running=1"),
            "{d}"
        );
        assert!(d.contains("min_vruntime=18446744073708503040"), "{d}");
        assert!(d.contains("(min_vruntime+2000000)"), "{d}");
        assert!(!d.contains("eligible"), "{d}");
    }

    #[test]
    fn tv24_tunable_writes() {
        // TV-24 (a): latency_ns = 30 ms on 2 CPUs: sched_nr_latency still 8, normalised
        // latency still 6 ms; period 30 ms for <= 8 tasks, 9 x 1.5 = 13.5 ms for 9
        let w = |n: &str, v: u64| (n.to_string(), v);
        let mut t = CfsTunables::boot(2, &[w("latency_ns", 30_000_000)]).unwrap();
        assert_eq!(
            (t.latency, t.nr_latency, t.normalized_latency),
            (30_000_000, 8, 6_000_000)
        );
        assert_eq!(__sched_period(&t, 8), 30_000_000);
        assert_eq!(__sched_period(&t, 9), 13_500_000);
        // (d) without a tunable_scaling write, the next update_sysctl (3 CPUs) resets it
        let mut d = t.clone();
        d.update_sysctl(3);
        assert_eq!(d.latency, 12_000_000);
        // (b) tunable_scaling = 1: sched_nr_latency = ceil(30 / 1.5) = 20, normalised 15 ms /
        // 0.75 ms / 1 ms
        t.write("tunable_scaling", 1, 2).unwrap();
        assert_eq!(t.nr_latency, 20);
        assert_eq!(
            (
                t.normalized_latency,
                t.normalized_min_granularity,
                t.normalized_wakeup_granularity
            ),
            (15_000_000, 750_000, 1_000_000)
        );
        // (c) a third CPU (factor 2): 30 ms; a fourth (factor 3): 45 ms, 2.25 ms, 3 ms;
        // sched_nr_latency stays 20
        t.update_sysctl(3);
        assert_eq!(t.latency, 30_000_000);
        t.update_sysctl(4);
        assert_eq!(
            (
                t.latency,
                t.min_granularity,
                t.wakeup_granularity,
                t.nr_latency
            ),
            (45_000_000, 2_250_000, 3_000_000, 20)
        );
        // (e) tunable_scaling = 3 -> EINVAL, nothing changes
        let before = t.clone();
        assert!(t.write("tunable_scaling", 3, 4).is_err());
        assert_eq!(t, before);
        // through the kernel string, in the order written
        let k = kern("v6.5 latency_ns=30000000 tunable_scaling=1", 2);
        assert_eq!((k.cfs_tun.latency, k.cfs_tun.nr_latency), (30_000_000, 20));
    }

    #[test]
    fn tv25_idle_and_batch_wakeup_rules() {
        // (a) curr SCHED_IDLE I; a normal or batch task wakes -> resched unconditionally (also
        // with NO_WAKEUP_PREEMPTION), no buddies
        for spec in ["v6.5", "v6.5 NO_WAKEUP_PREEMPTION"] {
            for pol in [Policy::Normal, Policy::Batch] {
                let mut k = kern(spec, 2);
                let i = task(&mut k, 0, Policy::Idle);
                queue(&mut k, i, -50 * MS, true);
                let p = sleeper(&mut k, 0, pol, 0);
                wake(&mut k, p, WF_TTWU);
                assert!(k.need_resched(0), "{spec} {pol:?}");
                let c = &k.cfs[k.rqs[0].cfs.index()];
                assert_eq!((c.next, c.last), (None, None));
            }
        }
        // (b) curr normal N; a SCHED_IDLE or SCHED_BATCH wakee, even far left -> no preemption
        for pol in [Policy::Idle, Policy::Batch] {
            let mut k = kern("v6.5", 2);
            let n = task(&mut k, 0, Policy::Normal);
            queue(&mut k, n, 50 * MS, true);
            let p = sleeper(&mut k, 0, pol, -100 * MS);
            wake(&mut k, p, WF_TTWU);
            assert!(!k.need_resched(0), "{pol:?}");
        }
        // (c)/(d)/(e): sibling groups G1 (running side) and G2 (wakee side)
        let groups = |idle1: bool, idle2: bool, curr_pol: Policy| -> bool {
            let mut k = kern("v6.5", 2);
            let g1 = k.cgroup_mkdir_p("/G1").unwrap();
            let g2 = k.cgroup_mkdir_p("/G2").unwrap();
            if idle1 {
                k.cgroup_write("/G1", "cpu.idle", "1").unwrap();
            }
            if idle2 {
                k.cgroup_write("/G2", "cpu.idle", "1").unwrap();
            }
            let a = |tg, pol| TaskAttrs {
                tg: Some(tg),
                policy: Some(pol),
                ..Default::default()
            };
            let c = k.create_task(Box::new(Idle), &a(g1, curr_pol), None, false);
            let g1se = k.tgs[g1.index()].se[0].unwrap();
            queue_se(&mut k, g1se, 0, true);
            queue(&mut k, c, 0, true);
            let w = k.create_task(Box::new(Idle), &a(g2, Policy::Normal), None, false);
            let sw = se_of(&k, w);
            let cfs2 = k.se[sw.index()].cfs_rq;
            k.se[sw.index()].vruntime = m(&k, cfs2);
            k.se[sw.index()].cfs_rel = false;
            k.se[sw.index()].sum_exec_runtime = 1;
            k.tasks[w.index()].state = TaskState::Running;
            // G2's entity is placed on the root far to the right: only the idle rules decide
            wake(&mut k, w, WF_TTWU);
            k.need_resched(0)
        };
        assert!(
            groups(true, false, Policy::Normal),
            "(c) idle group preempted"
        );
        assert!(
            !groups(false, true, Policy::Normal),
            "(d) idle wakee group never preempts"
        );
        assert!(
            groups(false, false, Policy::Idle),
            "(e) the task-level rule first"
        );
    }
}
