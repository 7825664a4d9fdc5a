//! The EEVDF fair class on one cfs_rq and up the cgroup hierarchy of one CPU
//! (kernel/sched/fair.c, entity level). Everything here follows fair.md; version differences
//! are switched by named patches (patches.rs), never by version numbers.
//!
//! SMP placement and balancing live in select.rs and balance.rs.

use crate::fair_pelt::{DO_ATTACH, DO_DETACH, UPDATE_TG};
use crate::features::Feature as F;
use crate::patches::Patch as P;
use crate::sched::*;
use crate::trace::emit;
use crate::tree::{self, before, TreeOrder};
use crate::Kernel;
use schedlab_trace::TraceEvent;

/// The fair-class functions that v6.5's CFS class (fair_cfs.rs) implements its own way. A
/// kernel without the EEVDF series installs `fair_cfs::CFS` (`Kernel::fair_policy`, sim.rs)
/// and the functions of this file named here hand over to it at their top — a table of
/// function pointers, as `struct sched_class` is for core.c, so that this file never names
/// fair_cfs.rs while fair_cfs.rs uses the parts both classes share (the task-level walks,
/// `put_prev_entity`, the tree and its sums, bandwidth, group shares).
pub(crate) struct FairPolicy {
    pub update_curr: fn(&mut Kernel, CfsRqId),
    pub enqueue_entity: fn(&mut Kernel, CfsRqId, SeId, u32),
    pub dequeue_entity: fn(&mut Kernel, CfsRqId, SeId, u32) -> bool,
    pub pick_next_entity: fn(&mut Kernel, CfsRqId) -> Option<SeId>,
    pub set_next_entity: fn(&mut Kernel, CfsRqId, SeId),
    pub check_preempt_wakeup: fn(&mut Kernel, usize, TaskId, u32),
    pub explain_wakeup: fn(&Kernel, usize, TaskId, u32) -> (crate::stats::WakeupVerdict, String),
    pub task_tick_fair: fn(&mut Kernel, TaskId),
    pub yield_task_fair: fn(&mut Kernel, usize),
    pub task_fork_fair: fn(&mut Kernel, TaskId, Option<TaskId>),
    pub update_cfs_group: fn(&mut Kernel, SeId),
    pub reweight_entity: fn(&mut Kernel, CfsRqId, SeId, u64, u32),
    pub migrate_task_rq_fair: fn(&mut Kernel, TaskId),
    pub detach_task_cfs_rq: fn(&mut Kernel, TaskId),
    pub attach_task_cfs_rq: fn(&mut Kernel, TaskId),
    pub check_invariants: fn(&Kernel) -> Result<(), String>,
    /// After a fair pick (`hrtick_start_fair` when HRTICK is on).
    pub picked: fn(&mut Kernel, usize, TaskId),
    /// After every enqueue_task_fair / dequeue_task_fair (`hrtick_update`).
    pub hrtick_update: fn(&mut Kernel, usize),
    /// The hrtick timer fired: `task_tick_fair(rq, curr, queued = 1)`.
    pub hrtick: fn(&mut Kernel, usize),
}

/// Result of `update_entity_lag` in v7.1: whether the saved lag differs from `V - vruntime`.
type LagChanged = bool;

#[inline]
fn min_vruntime(a: u64, b: u64) -> u64 {
    if before(b, a) {
        b
    } else {
        a
    }
}

/// What the wakeup-preemption decision settled on (v6.19 `enum preempt_wakeup_action`; the
/// older versions use the `Short` / `Pick` subset).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Action {
    None,
    Short,
    Pick,
    Resched,
}

impl Kernel {
    // ===================================================================== weights (§1)

    /// kernel: fair.c __calc_delta() — `delta * weight / lw.weight` in the version's rounding,
    /// one function per variant, chosen by the patch that changed it.
    pub fn __calc_delta(&self, delta: u64, weight: u64, lw: &LoadWeight) -> u64 {
        if self.cfg.has(P::FullWeightCalcDelta) {
            Self::__calc_delta_db4551e2ba34(delta, weight, lw)
        } else {
            Self::__calc_delta_wmult(delta, weight, lw)
        }
    }

    /// Up to v7.0: inverse multiply with `WMULT_CONST = 2^32 - 1` and the table inverse for
    /// tasks; the factor is renormalised so that the product fits 64 bits, then
    /// `(delta * fact) >> shift` is an exact floor (computed in 128 bits).
    fn __calc_delta_wmult(delta: u64, weight: u64, lw: &LoadWeight) -> u64 {
        let inv = if lw.inv_weight != 0 {
            lw.inv_weight as u64
        } else {
            let w = scale_load_down(lw.weight);
            if w >= WMULT_CONST {
                1
            } else {
                WMULT_CONST.checked_div(w).unwrap_or(WMULT_CONST)
            }
        };
        let mut fact = scale_load_down(weight);
        let mut shift: i32 = WMULT_SHIFT as i32;
        let hi = fact >> 32;
        if hi != 0 {
            let fs = 64 - hi.leading_zeros() as i32;
            shift -= fs;
            fact >>= fs;
        }
        fact = (fact as u32 as u64) * inv;
        let hi = fact >> 32;
        if hi != 0 {
            let fs = 64 - hi.leading_zeros() as i32;
            shift -= fs;
            fact >>= fs;
        }
        ((delta as u128 * fact as u128) >> shift) as u64
    }

    /// db4551e2ba34 ("Use full weight to __calc_delta()", v7.1): the full-weight divide
    /// `delta * weight / lw.weight`.
    fn __calc_delta_db4551e2ba34(delta: u64, weight: u64, lw: &LoadWeight) -> u64 {
        debug_assert!(delta < (1 << 44));
        ((delta as u128 * weight as u128) / lw.weight.max(1) as u128) as u64
    }

    /// kernel: fair.c calc_delta_fair() — real time to virtual time for `se`.
    #[inline]
    pub fn calc_delta_fair(&self, delta: u64, se: SeId) -> u64 {
        let lw = &self.se[se.index()].load;
        if lw.weight != NICE_0_LOAD {
            self.__calc_delta(delta, NICE_0_LOAD, lw)
        } else {
            delta
        }
    }

    /// The weight used in the average (fair.md §2.4): `scale_load_down(w)` up to v7.0, the
    /// full weight from 4823725d9d1d (PARANOID_AVG's `sum_shift` stays 0: no overflow is
    /// possible with the 128-bit sums used here).
    #[inline]
    pub(crate) fn avg_weight(&self, w: u64) -> i128 {
        if self.cfg.has(P::FullWeightAvg) {
            w as i128
        } else {
            scale_load_down(w) as i128
        }
    }

    // ===================================================================== virtual time (§2)

    #[inline]
    pub(crate) fn entity_key(&self, cfs: CfsRqId, se: SeId) -> i64 {
        self.se[se.index()]
            .vruntime
            .wrapping_sub(self.cfs[cfs.index()].zero_vruntime) as i64
    }

    pub(crate) fn avg_vruntime_add(&mut self, cfs: CfsRqId, se: SeId) {
        let w = self.avg_weight(self.se[se.index()].load.weight);
        let key = self.entity_key(cfs, se) as i128;
        let c = &mut self.cfs[cfs.index()];
        c.sum_w_vruntime += key * w;
        c.sum_weight += w;
    }

    pub(crate) fn avg_vruntime_sub(&mut self, cfs: CfsRqId, se: SeId) {
        let w = self.avg_weight(self.se[se.index()].load.weight);
        let key = self.entity_key(cfs, se) as i128;
        let c = &mut self.cfs[cfs.index()];
        c.sum_w_vruntime -= key * w;
        c.sum_weight -= w;
    }

    /// Moves the reference point by `delta` keeping every key consistent (fair.md §2.3).
    fn shift_zero_vruntime(&mut self, cfs: CfsRqId, delta: i64) {
        let c = &mut self.cfs[cfs.index()];
        c.sum_w_vruntime -= c.sum_weight * delta as i128;
        c.zero_vruntime = c.zero_vruntime.wrapping_add(delta as u64);
    }

    /// Σ key·aw and Σ aw including `curr` when it is on the queue.
    #[inline]
    fn sums_with_curr(&self, cfs: CfsRqId) -> (i128, i128) {
        let c = &self.cfs[cfs.index()];
        let mut s = c.sum_w_vruntime;
        let mut w = c.sum_weight;
        if let Some(curr) = c.curr {
            let e = &self.se[curr.index()];
            if e.on_rq {
                let aw = self.avg_weight(e.load.weight);
                s += self.entity_key(cfs, curr) as i128 * aw;
                w += aw;
            }
        }
        (s, w)
    }

    /// kernel: fair.c avg_vruntime() — the zero-lag point V.
    ///
    /// ```text
    ///        Σ (v_i - z)·w_i
    ///  V = z + ---------------   with the division floored, so V is the floor of the
    ///            Σ w_i            weighted mean and an entity sitting exactly at V is eligible.
    /// ```
    /// The lag identity: Σ w_i·(V_exact − v_i) = 0, so weighted lags sum to zero.
    pub fn avg_vruntime(&self, cfs: CfsRqId) -> u64 {
        let (mut s, w) = self.sums_with_curr(cfs);
        let z = self.cfs[cfs.index()].zero_vruntime;
        if w == 0 {
            return z;
        }
        if s < 0 {
            s -= w - 1;
        }
        z.wrapping_add((s / w) as i64 as u64)
    }

    /// v7.0 (b3d99f43c72b): `avg_vruntime()` also moves `zero_vruntime` to its result.
    fn avg_vruntime_update(&mut self, cfs: CfsRqId) -> u64 {
        let v = self.avg_vruntime(cfs);
        if self.cfg.has(P::ZeroVruntimeTracking) {
            let z = self.cfs[cfs.index()].zero_vruntime;
            let delta = v.wrapping_sub(z) as i64;
            if delta != 0 {
                self.shift_zero_vruntime(cfs, delta);
            }
        }
        v
    }

    /// kernel: fair.c vruntime_eligible() — `V >= v` without dividing: `Σ ≥ (v - z)·W`.
    /// Computed exactly in 128 bits in every version (fair.md §2.6).
    pub fn vruntime_eligible(&self, cfs: CfsRqId, v: u64) -> bool {
        let (s, w) = self.sums_with_curr(cfs);
        let k = v.wrapping_sub(self.cfs[cfs.index()].zero_vruntime) as i64 as i128;
        s >= k * w
    }

    #[inline]
    pub fn entity_eligible(&self, cfs: CfsRqId, se: SeId) -> bool {
        self.vruntime_eligible(cfs, self.se[se.index()].vruntime)
    }

    /// kernel: fair.c update_min_vruntime() @ v6.6..v6.18 (and v6.5) — the monotonic reference
    /// point.
    pub(crate) fn update_min_vruntime(&mut self, cfs: CfsRqId) {
        let c = &self.cfs[cfs.index()];
        let z = c.zero_vruntime;
        let mut vruntime = z;
        let mut curr = c.curr;
        if let Some(cu) = curr {
            if self.se[cu.index()].on_rq {
                vruntime = self.se[cu.index()].vruntime;
            } else {
                curr = None;
            }
        }
        if c.root != NIL {
            let se_min = match self.tree_order {
                TreeOrder::Vruntime => {
                    let l = tree::leftmost(&self.se, c.root).unwrap();
                    self.se[l.index()].vruntime
                }
                TreeOrder::Deadline => self.se[c.root as usize].min_vruntime,
            };
            vruntime = if curr.is_none() {
                se_min
            } else {
                min_vruntime(vruntime, se_min)
            };
        }
        let delta = vruntime.wrapping_sub(z) as i64;
        if delta > 0 {
            self.shift_zero_vruntime(cfs, delta);
        }
    }

    /// v6.19 (79f3f9bedd14): after a tree insert/remove, move the reference to the average.
    fn update_zero_vruntime(&mut self, cfs: CfsRqId) {
        if self.cfg.has(P::ZeroVruntime) && !self.cfg.has(P::ZeroVruntimeTracking) {
            let v = self.avg_vruntime(cfs);
            let delta = v.wrapping_sub(self.cfs[cfs.index()].zero_vruntime) as i64;
            if delta != 0 {
                self.shift_zero_vruntime(cfs, delta);
            }
        }
    }

    /// kernel: fair.c __enqueue_entity() — into the tree and the sums.
    pub(crate) fn __enqueue_entity(&mut self, cfs: CfsRqId, se: SeId) {
        self.avg_vruntime_add(cfs, se);
        let root = self.cfs[cfs.index()].root;
        let r = tree::insert(&mut self.se, root, se, self.tree_order);
        self.cfs[cfs.index()].root = r;
        self.update_zero_vruntime(cfs);
    }

    /// kernel: fair.c __dequeue_entity()
    pub(crate) fn __dequeue_entity(&mut self, cfs: CfsRqId, se: SeId) {
        let root = self.cfs[cfs.index()].root;
        let r = tree::erase(&mut self.se, root, se, self.tree_order);
        self.cfs[cfs.index()].root = r;
        self.avg_vruntime_sub(cfs, se);
        self.update_zero_vruntime(cfs);
    }

    /// kernel: fair.c cfs_rq_min_slice() — over curr and the tree; `u64::MAX` if empty.
    pub(crate) fn cfs_rq_min_slice(&self, cfs: CfsRqId) -> u64 {
        let c = &self.cfs[cfs.index()];
        let mut s = u64::MAX;
        if let Some(cu) = c.curr {
            if self.se[cu.index()].on_rq {
                s = self.se[cu.index()].slice;
            }
        }
        if c.root != NIL {
            s = s.min(self.se[c.root as usize].min_slice);
        }
        s
    }

    /// kernel: fair.c cfs_rq_max_slice() (v7.0) — over curr and the tree; 0 if empty.
    pub(crate) fn cfs_rq_max_slice(&self, cfs: CfsRqId) -> u64 {
        let c = &self.cfs[cfs.index()];
        let mut s = 0;
        if let Some(cu) = c.curr {
            if self.se[cu.index()].on_rq {
                s = self.se[cu.index()].slice;
            }
        }
        if c.root != NIL {
            s = s.max(self.se[c.root as usize].max_slice);
        }
        s
    }

    // ===================================================================== slices (§3)

    /// kernel: fair.c update_deadline() — renew the request once `vruntime >= deadline`.
    fn update_deadline(&mut self, cfs: CfsRqId, se: SeId) -> bool {
        let e = &self.se[se.index()];
        if before(e.vruntime, e.deadline) {
            return false;
        }
        if !e.custom_slice {
            self.se[se.index()].slice = self.base_slice;
        }
        let vslice = self.calc_delta_fair(self.se[se.index()].slice, se);
        let e = &mut self.se[se.index()];
        e.deadline = e.vruntime.wrapping_add(vslice);
        if self.cfg.has(P::ZeroVruntimeTrackingFix) {
            self.avg_vruntime_update(cfs);
        }
        true
    }

    // ===================================================================== update_curr (§2.2)

    /// kernel: fair.c update_curr() — charge the running entity of `cfs` up to now.
    pub fn update_curr(&mut self, cfs: CfsRqId) {
        if let Some(pol) = self.fair_policy {
            return (pol.update_curr)(self, cfs);
        }
        let Some(curr) = self.cfs[cfs.index()].curr else {
            return;
        };
        let now = self.rq_clock_task(self.cfs[cfs.index()].cpu);
        let delta = now as i64 - self.se[curr.index()].exec_start as i64;
        if delta <= 0 {
            return;
        }
        let delta = delta as u64;
        let vdelta = self.calc_delta_fair(delta, curr);
        {
            let e = &mut self.se[curr.index()];
            e.exec_start = now;
            e.sum_exec_runtime += delta;
            e.vruntime = e.vruntime.wrapping_add(vdelta);
        }
        let resched = self.update_deadline(cfs, curr);
        if !self.cfg.has(P::ZeroVruntime) {
            self.update_min_vruntime(cfs);
        }
        let cpu = self.cfs[cfs.index()].cpu;
        if let Some(t) = self.se[curr.index()].task {
            // cgroup_account_cputime(): cpu.stat usage, charged to the task's own group
            let tg = self.tasks[t.index()].tg;
            self.tgs[tg.index()].usage_ns += delta;
            // E8 (rt-dl.md §4.5): every fair task's run time is charged to the fair_server,
            // through `p->dl_server` when it was picked through it, else to `rq->fair_server`
            let through = self.tasks[t.index()].dl_server.is_some();
            self.dl_server_update(cpu, delta as i64, through);
        }
        self.account_cfs_rq_runtime(cfs, delta);
        if !self.cfg.has(P::UpdateCurrResched) {
            // v6.6: update_deadline itself reschedules when others are queued.
            if resched && self.cfs[cfs.index()].nr_queued > 1 {
                self.resched_curr(cpu);
                self.clear_buddies(cfs, curr);
            }
            return;
        }
        if self.cfs[cfs.index()].nr_queued == 1 {
            return;
        }
        let end_of_protection = if self.cfg.has(P::AlwaysReschedEndProtect) {
            !self.protect_slice(curr)
        } else if self.cfg.has(P::ProtectVprot) {
            // 74eec63661d4 resched_next_slice(): no PREEMPT_SHORT gate
            !self.protect_slice(curr) && !self.entity_eligible(cfs, curr)
        } else if self.cfg.has(P::PreemptShort) {
            self.did_preempt_short(cfs, curr)
        } else {
            false
        };
        if resched || end_of_protection {
            self.resched_curr_lazy(cpu);
            self.clear_buddies(cfs, curr);
        }
    }

    /// kernel: fair.c did_preempt_short() @ v6.12..v6.16
    fn did_preempt_short(&self, cfs: CfsRqId, curr: SeId) -> bool {
        if !self.cfg.feat(F::PREEMPT_SHORT) || self.protect_slice(curr) {
            return false;
        }
        !self.entity_eligible(cfs, curr)
    }

    // ===================================================================== protection (§5.4)

    /// Writes `se->vlag`. Until 80390ead2080 (v7.0) `vlag` and the protection marker share
    /// one field, so saving a lag clobbers the protection and vice versa (the kernel's
    /// "HACK, stash a copy of deadline at the point of pick in vlag").
    #[inline]
    pub(crate) fn set_vlag(&mut self, se: SeId, v: i64) {
        let e = &mut self.se[se.index()];
        e.vlag = v;
        if !self.cfg.has(P::SeparateVprot) {
            e.vprot = v as u64;
        }
    }

    /// Writes the protection marker / `se->vprot` (see [`Kernel::set_vlag`]).
    #[inline]
    fn set_vprot(&mut self, se: SeId, v: u64) {
        let e = &mut self.se[se.index()];
        e.vprot = v;
        if !self.cfg.has(P::SeparateVprot) {
            e.vlag = v as i64;
        }
    }

    /// kernel: fair.c protect_slice(): before 74eec63661d4 "the stashed deadline still equals
    /// the deadline"; after, "vruntime has not reached vprot".
    pub(crate) fn protect_slice(&self, se: SeId) -> bool {
        let e = &self.se[se.index()];
        if self.cfg.has(P::ProtectVprot) {
            before(e.vruntime, e.vprot)
        } else {
            e.vprot == e.deadline
        }
    }

    /// kernel: fair.c cancel_protect_slice()
    pub(crate) fn cancel_protect_slice(&mut self, se: SeId) {
        if self.protect_slice(se) {
            let e = &self.se[se.index()];
            let v = if self.cfg.has(P::ProtectVprot) {
                e.vruntime
            } else {
                e.deadline.wrapping_add(1)
            };
            self.set_vprot(se, v);
        }
    }

    /// kernel: fair.c set_protect_slice() — called at pick, with `se` out of the tree and not
    /// yet curr, so `cfs_rq_min_slice` sees only the others.
    fn set_protect_slice(&mut self, cfs: CfsRqId, se: SeId) {
        if !self.cfg.has(P::ProtectVprot) {
            // v6.6..v6.16: stash the deadline ("HACK ... in vlag").
            let d = self.se[se.index()].deadline;
            self.set_vprot(se, d);
            return;
        }
        let slice = self.se[se.index()].slice;
        let mut s = self.normalized_base_slice; // minimum quantum, not scaled by CPU count
        if self.cfg.feat(F::RUN_TO_PARITY) {
            s = if self.cfg.has(P::ProtectMinSlice) {
                self.cfs_rq_min_slice(cfs)
            } else {
                slice
            };
        }
        let s = s.min(slice);
        let mut vprot = self.se[se.index()].deadline;
        if s != slice {
            let v = self.se[se.index()].vruntime;
            vprot = min_vruntime(vprot, v.wrapping_add(self.calc_delta_fair(s, se)));
        }
        self.set_vprot(se, vprot);
    }

    /// kernel: fair.c update_protect_slice() — shrink only.
    fn update_protect_slice(&mut self, cfs: CfsRqId, se: SeId) {
        if !self.cfg.has(P::ProtectVprot) {
            return;
        }
        let slice = self.cfs_rq_min_slice(cfs);
        let v = self.se[se.index()].vruntime;
        let lim = v.wrapping_add(self.calc_delta_fair(slice, se));
        let nv = min_vruntime(self.se[se.index()].vprot, lim);
        self.set_vprot(se, nv);
    }

    // ===================================================================== placement (§4)

    /// kernel: fair.c update_entity_lag() — save the clamped lag `V - vruntime`.
    fn update_entity_lag(&mut self, cfs: CfsRqId, se: SeId) -> LagChanged {
        let v = self.avg_vruntime_update(cfs);
        let raw = v.wrapping_sub(self.se[se.index()].vruntime) as i64;
        let l = if self.cfg.has(P::LagClampMaxSlice) {
            self.cfs_rq_max_slice(cfs) + self.tick_nsec
        } else {
            (2 * self.se[se.index()].slice).max(self.tick_nsec)
        };
        let limit = self.calc_delta_fair(l, se) as i64;
        let mut vlag = raw.clamp(-limit, limit);
        if self.cfg.has(P::DelayedNegativeLag) && self.se[se.index()].sched_delayed {
            // A delayed entity cannot end up owing more than when it went to sleep: `vlag`
            // still holds the lag recorded when it became delayed.
            vlag = vlag.max(self.se[se.index()].vlag);
            if self.cfg.has(P::DelayedNegativeLagFix) && self.cfg.feat(F::DELAY_ZERO) {
                vlag = vlag.min(0);
            }
        }
        self.set_vlag(se, vlag);
        vlag != raw
    }

    /// kernel: fair.c place_entity() — lag-preserving placement (fair.md §4.3).
    ///
    /// Inserting an entity with lag `l` at `v = V - l'` moves the average to
    /// `V' = V - w·l'/(W + w)`; requiring `V' - v = l` gives `l' = l·(W + w)/W`.
    fn place_entity(&mut self, cfs: CfsRqId, se: SeId, flags: u32) {
        let v_avg = self.avg_vruntime_update(cfs);
        if !self.se[se.index()].custom_slice {
            self.se[se.index()].slice = self.base_slice;
        }
        let mut vslice = self.calc_delta_fair(self.se[se.index()].slice, se);
        let mut lag: i128 = 0;
        let vlag = self.se[se.index()].vlag;
        if self.cfg.feat(F::PLACE_LAG) && self.cfs[cfs.index()].nr_queued > 0 && vlag != 0 {
            lag = vlag as i128;
            let mut load = self.cfs[cfs.index()].sum_weight;
            if let Some(cu) = self.cfs[cfs.index()].curr {
                if self.se[cu.index()].on_rq {
                    load += self.avg_weight(self.se[cu.index()].load.weight);
                }
            }
            let aw_se = self.avg_weight(self.se[se.index()].load.weight);
            lag *= load + aw_se;
            let heavier = aw_se > load;
            if load == 0 {
                load = 1;
            }
            lag /= load;
            if heavier && self.cfg.has(P::EnqueueOverflow) {
                // 556146ce5e94: keep key*weight in range by moving the reference to the new
                // entity; no decision changes in exact arithmetic.
                self.shift_zero_vruntime(cfs, (-lag) as i64);
            }
        }
        let e = &mut self.se[se.index()];
        e.vruntime = v_avg.wrapping_sub(lag as i64 as u64);
        // 6d71a9c61604 dropped the PLACE_REL_DEADLINE test (v6.13..v7.0); its revert restores it.
        let rel_ok = (self.cfg.has(P::ReweightPlaceEntity)
            && !self.cfg.has(P::RevertReweightPlacement))
            || self.cfg.feat(F::PLACE_REL_DEADLINE);
        if e.rel_deadline && rel_ok {
            e.deadline = e.deadline.wrapping_add(e.vruntime);
            e.rel_deadline = false;
            return;
        }
        if self.cfg.feat(F::PLACE_DEADLINE_INITIAL) && flags & ENQUEUE_INITIAL != 0 {
            vslice /= 2;
        }
        let e = &mut self.se[se.index()];
        e.deadline = e.vruntime.wrapping_add(vslice);
    }

    // ===================================================================== enqueue / dequeue

    /// kernel: fair.c account_entity_enqueue() (the kernel keeps `idle_nr_running` here up
    /// to v6.13; only the v6.5 class reads it, and fair_cfs.rs keeps it)
    fn account_entity_enqueue(&mut self, cfs: CfsRqId, se: SeId) {
        let w = self.se[se.index()].load.weight;
        let c = &mut self.cfs[cfs.index()];
        c.load.weight += w;
        c.load.inv_weight = 0;
        c.nr_queued += 1;
    }

    fn account_entity_dequeue(&mut self, cfs: CfsRqId, se: SeId) {
        let w = self.se[se.index()].load.weight;
        let c = &mut self.cfs[cfs.index()];
        c.load.weight -= w;
        c.load.inv_weight = 0;
        c.nr_queued -= 1;
    }

    /// kernel: fair.c enqueue_entity()
    fn enqueue_entity(&mut self, cfs: CfsRqId, se: SeId, flags: u32) {
        if let Some(pol) = self.fair_policy {
            return (pol.enqueue_entity)(self, cfs, se, flags);
        }
        let is_curr = self.cfs[cfs.index()].curr == Some(se);
        // The running entity is placed before update_curr (sched_change re-enqueue).
        if is_curr {
            self.place_entity(cfs, se, flags);
        }
        self.update_curr(cfs);
        self.update_load_avg(cfs, se, UPDATE_TG | DO_ATTACH);
        self.se_update_runnable(se);
        self.update_cfs_group(se);
        if !is_curr {
            self.place_entity(cfs, se, flags);
        }
        self.account_entity_enqueue(cfs, se);
        if flags & ENQUEUE_MIGRATED != 0 {
            self.se[se.index()].exec_start = 0;
        }
        if !is_curr {
            self.__enqueue_entity(cfs, se);
        }
        self.se[se.index()].on_rq = true;
        self.enqueue_entity_bandwidth(cfs);
    }

    /// The end of enqueue_entity(): the first entity on a cfs_rq with a quota may throttle it
    /// at once.
    pub(crate) fn enqueue_entity_bandwidth(&mut self, cfs: CfsRqId) {
        if self.cfs[cfs.index()].nr_queued == 1 && self.cfs_bandwidth_used() {
            self.check_enqueue_throttle(cfs);
            if self.throttled_hierarchy(cfs) && !self.cfg.has(P::ThrottleTimeAccounting) {
                self.throttled_clock_on_enqueue(cfs);
            }
        }
    }

    /// `set_delayed()`: the task entity stays queued; `h_nr_runnable` drops at every level.
    fn set_delayed(&mut self, se: SeId) {
        self.se[se.index()].sched_delayed = true;
        if self.se[se.index()].task.is_none() {
            return;
        }
        let mut e = Some(se);
        while let Some(x) = e {
            let cfs = self.se[x.index()].cfs_rq;
            self.cfs[cfs.index()].h_nr_runnable -= 1;
            if self.cfs[cfs.index()].throttled && !self.task_based_throttle() {
                break;
            }
            e = self.se[x.index()].parent;
        }
    }

    /// `clear_delayed()`
    fn clear_delayed(&mut self, se: SeId) {
        self.se[se.index()].sched_delayed = false;
        if self.se[se.index()].task.is_none() {
            return;
        }
        let mut e = Some(se);
        while let Some(x) = e {
            let cfs = self.se[x.index()].cfs_rq;
            self.cfs[cfs.index()].h_nr_runnable += 1;
            if self.cfs[cfs.index()].throttled && !self.task_based_throttle() {
                break;
            }
            e = self.se[x.index()].parent;
        }
    }

    /// kernel: fair.c finish_delayed_dequeue_entity()
    fn finish_delayed_dequeue_entity(&mut self, se: SeId) {
        self.clear_delayed(se);
        if self.cfg.feat(F::DELAY_ZERO) && self.se[se.index()].vlag > 0 {
            self.set_vlag(se, 0);
        }
    }

    /// kernel: fair.c dequeue_entity() — false if the entity was kept queued as delayed.
    fn dequeue_entity(&mut self, cfs: CfsRqId, se: SeId, flags: u32) -> bool {
        if let Some(pol) = self.fair_policy {
            return (pol.dequeue_entity)(self, cfs, se, flags);
        }
        self.update_curr(cfs);
        if self.cfg.has(P::FixNextBuddy) {
            self.clear_buddies(cfs, se);
        }
        if flags & DEQUEUE_DELAYED != 0 {
            self.sched_warn_on(
                !self.se[se.index()].sched_delayed,
                "DEQUEUE_DELAYED of a non-delayed entity",
            );
        } else {
            let mut delay = flags & DEQUEUE_SLEEP != 0;
            if flags & (DEQUEUE_SPECIAL | DEQUEUE_THROTTLE) != 0 {
                delay = false;
            }
            if self.cfg.feat(F::DELAY_DEQUEUE) && delay && !self.entity_eligible(cfs, se) {
                self.update_load_avg(cfs, se, 0);
                if self.cfg.has(P::DelayedNegativeLag) {
                    // record the lag at the moment of the delay (plain clamp)
                    self.update_entity_lag(cfs, se);
                }
                if !self.cfg.has(P::FixNextBuddy) && self.cfs[cfs.index()].next == Some(se) {
                    // v6.12 cleared only this level's buddy here
                    self.cfs[cfs.index()].next = None;
                }
                self.set_delayed(se);
                self.count_op(FairOp::DelayDequeue);
                self.trace_delay_dequeue(se);
                return false;
            }
        }
        if !self.cfg.has(P::FixNextBuddy) {
            self.clear_buddies(cfs, se);
        }
        let mut action = UPDATE_TG;
        if let Some(t) = self.se[se.index()].task {
            if self.tasks[t.index()].on_rq == OnRq::Migrating {
                action |= DO_DETACH;
            }
        }
        self.update_load_avg(cfs, se, action);
        self.se_update_runnable(se);
        self.update_entity_lag(cfs, se);
        if self.cfg.feat(F::PLACE_REL_DEADLINE) && flags & DEQUEUE_SLEEP == 0 {
            let e = &mut self.se[se.index()];
            e.deadline = e.deadline.wrapping_sub(e.vruntime);
            e.rel_deadline = true;
        }
        if self.cfs[cfs.index()].curr != Some(se) {
            self.__dequeue_entity(cfs, se);
        }
        self.se[se.index()].on_rq = false;
        self.account_entity_dequeue(cfs, se);
        // return excess runtime on last dequeue
        self.return_cfs_rq_runtime(cfs);
        self.update_cfs_group(se);
        if !self.cfg.has(P::ZeroVruntime) && (flags & (DEQUEUE_SAVE | DEQUEUE_MOVE)) != DEQUEUE_SAVE
        {
            self.update_min_vruntime(cfs);
        }
        if flags & DEQUEUE_DELAYED != 0 {
            if self.cfg.has(P::DelayedNegativeLag) {
                // v7.1: the delayed lag rule (incl. the DELAY_ZERO cap) was applied by
                // update_entity_lag above, while sched_delayed was still set.
                self.clear_delayed(se);
            } else {
                self.finish_delayed_dequeue_entity(se);
            }
        }
        true
    }

    /// kernel: fair.c requeue_delayed_entity() — a delayed entity is woken in place: it keeps
    /// its vruntime and deadline unless DELAY_ZERO re-places it (fair.md §7.5).
    fn requeue_delayed_entity(&mut self, se: SeId) {
        let cfs = self.se[se.index()].cfs_rq;
        self.sched_warn_on(
            !(self.se[se.index()].sched_delayed && self.se[se.index()].on_rq),
            "requeue of an entity that is not delayed",
        );
        let mut replaced = false;
        let reposition = if self.cfg.has(P::DelayedNegativeLag) {
            // v7.1: re-place whenever the saved lag differs from V - vruntime
            self.update_entity_lag(cfs, se)
        } else if self.cfg.feat(F::DELAY_ZERO) {
            self.update_entity_lag(cfs, se);
            self.se[se.index()].vlag > 0
        } else {
            false
        };
        {
            if reposition {
                replaced = true;
                let is_curr = self.cfs[cfs.index()].curr == Some(se);
                self.cfs[cfs.index()].nr_queued -= 1;
                if !is_curr {
                    self.__dequeue_entity(cfs, se);
                }
                if !self.cfg.has(P::DelayedNegativeLag) {
                    self.set_vlag(se, 0);
                }
                self.place_entity(cfs, se, 0);
                if !is_curr {
                    self.__enqueue_entity(cfs, se);
                }
                self.cfs[cfs.index()].nr_queued += 1;
            }
        }
        self.update_load_avg(cfs, se, 0);
        self.clear_delayed(se);
        self.count_op(if replaced {
            FairOp::RequeueReplaced
        } else {
            FairOp::Requeue
        });
        self.trace_requeue(se, replaced);
    }

    /// kernel: fair.c enqueue_task_fair()
    pub(crate) fn enqueue_task_fair(&mut self, t: TaskId, flags: u32) {
        if self.tasks[t.index()].throttled && self.enqueue_throttled_task(t) {
            return;
        }
        let tse = self.tasks[t.index()].se;
        let cpu = self.tasks[t.index()].cpu;
        let stop_at_throttled = !self.task_based_throttle();
        if flags & ENQUEUE_DELAYED != 0 {
            self.requeue_delayed_entity(tse);
            return;
        }
        self.util_est_enqueue(t, flags);
        let rq_h_nr_queued = self.cfs[self.rqs[cpu].cfs.index()].h_nr_queued;
        let h_nr_queued = 1u32;
        let h_nr_runnable = if self.se[tse.index()].sched_delayed {
            0
        } else {
            1
        };
        let mut h_nr_idle = (self.tasks[t.index()].policy == Policy::Idle) as u32;
        let mut slice: u64 = 0;
        let mut flags = flags;
        let mut e = Some(tse);
        let propagate = self.cfg.has(P::MinSlicePropagate);
        while let Some(se) = e {
            if self.se[se.index()].on_rq {
                if self.se[se.index()].sched_delayed {
                    self.requeue_delayed_entity(se);
                }
                break;
            }
            let cfs = self.se[se.index()].cfs_rq;
            if propagate && slice != 0 {
                self.se[se.index()].slice = slice;
                self.se[se.index()].custom_slice = true;
            }
            self.enqueue_entity(cfs, se, flags);
            slice = self.cfs_rq_min_slice(cfs);
            let c = &mut self.cfs[cfs.index()];
            c.h_nr_queued += h_nr_queued;
            c.h_nr_runnable += h_nr_runnable;
            c.h_nr_idle += h_nr_idle;
            if c.idle {
                h_nr_idle = h_nr_queued;
            }
            // end evaluation on encountering a throttled cfs_rq (before v6.18)
            if c.throttled && stop_at_throttled {
                self.count_op(FairOp::Enqueue);
                return;
            }
            flags = ENQUEUE_WAKEUP;
            e = self.se[se.index()].parent;
        }
        while let Some(se) = e {
            let cfs = self.se[se.index()].cfs_rq;
            self.update_load_avg(cfs, se, UPDATE_TG);
            self.se_update_runnable(se);
            self.update_cfs_group(se);
            if propagate {
                self.se[se.index()].slice = slice;
                if self.cfg.has(P::ForceMinSlice) && self.cfs[cfs.index()].curr != Some(se) {
                    let root = self.cfs[cfs.index()].root;
                    tree::propagate(&mut self.se, root, se, self.tree_order);
                }
            }
            slice = self.cfs_rq_min_slice(cfs);
            let c = &mut self.cfs[cfs.index()];
            c.h_nr_queued += h_nr_queued;
            c.h_nr_runnable += h_nr_runnable;
            c.h_nr_idle += h_nr_idle;
            if c.idle {
                h_nr_idle = h_nr_queued;
            }
            if c.throttled && stop_at_throttled {
                self.count_op(FairOp::Enqueue);
                return;
            }
            e = self.se[se.index()].parent;
        }
        // E1 (rt-dl.md §4.5): the fair class went from empty to non-empty — start the
        // fair_server; before e636ffb9e31b an idle rq's idle time is charged first
        if rq_h_nr_queued == 0 && self.cfs[self.rqs[cpu].cfs.index()].h_nr_queued > 0 {
            if !self.cfg.has(P::DlServerTimeAcct) && self.rqs[cpu].nr_running == 0 {
                let curr = self.rqs[cpu].curr;
                self.dl_server_update_idle_time(cpu, curr);
            }
            self.dl_server_start(cpu);
        }
        self.add_nr_running(cpu, 1);
        self.count_op(FairOp::Enqueue);
        if let Some(pol) = self.fair_policy {
            (pol.hrtick_update)(self, cpu);
        }
    }

    /// kernel: fair.c dequeue_entities() — returns false if the task itself was delayed.
    pub(crate) fn dequeue_entities(&mut self, cpu: usize, se0: SeId, flags: u32) -> bool {
        let was_sched_idle = self.sched_idle_rq(cpu);
        let rq_h_nr_queued = self.cfs[self.rqs[cpu].cfs.index()].h_nr_queued;
        let task_sleep = flags & DEQUEUE_SLEEP != 0;
        let task = self.se[se0.index()].task;
        let (h_nr_queued, mut h_nr_idle, h_nr_runnable) = match task {
            Some(t) => (
                1u32,
                (self.tasks[t.index()].policy == Policy::Idle) as u32,
                // A delayed task's runnable count was dropped by set_delayed; its final dequeue
                // (DEQUEUE_DELAYED) restores it in clear_delayed, so it is subtracted here, but
                // a migration or SAVE dequeue of a still-delayed task must not subtract it again.
                (task_sleep || flags & DEQUEUE_DELAYED != 0 || !self.se[se0.index()].sched_delayed)
                    as u32,
            ),
            None => {
                let q = self.se[se0.index()].my_q.unwrap();
                let c = &self.cfs[q.index()];
                (c.h_nr_queued, c.h_nr_idle, c.h_nr_runnable)
            }
        };
        let mut flags = flags;
        let mut slice: u64 = 0;
        let mut e = Some(se0);
        let propagate = self.cfg.has(P::MinSlicePropagate);
        let mut stopped_early = false;
        let stop_at_throttled = !self.task_based_throttle();
        let task_throttled = flags & DEQUEUE_THROTTLE != 0;
        while let Some(se) = e {
            let cfs = self.se[se.index()].cfs_rq;
            if !self.dequeue_entity(cfs, se, flags) {
                if task.is_some() && se == se0 {
                    return false;
                }
                // a group entity became delayed: it stays queued; fix the counters above
                slice = self.cfs_rq_min_slice(cfs);
                stopped_early = true;
                break;
            }
            let c = &mut self.cfs[cfs.index()];
            c.h_nr_queued -= h_nr_queued;
            c.h_nr_runnable -= h_nr_runnable;
            c.h_nr_idle -= h_nr_idle;
            if c.idle {
                h_nr_idle = h_nr_queued;
            }
            // end evaluation on encountering a throttled cfs_rq (before v6.18)
            if c.throttled && stop_at_throttled {
                self.count_op(FairOp::Dequeue);
                return true;
            }
            if task_throttled && self.throttled_hierarchy(cfs) {
                self.record_throttle_clock(cfs);
            }
            if self.cfs[cfs.index()].load.weight != 0 {
                slice = self.cfs_rq_min_slice(cfs);
                e = self.se[se.index()].parent;
                // Bias the next pick towards this group: the sleeping task leaves siblings.
                if task_sleep && !self.throttled_hierarchy(cfs) {
                    if let Some(pse) = e {
                        self.set_next_buddy(pse);
                    }
                }
                stopped_early = true;
                break;
            }
            flags |= DEQUEUE_SLEEP;
            flags &= !(DEQUEUE_DELAYED | DEQUEUE_SPECIAL);
            e = self.se[se.index()].parent;
        }
        if stopped_early {
            while let Some(se) = e {
                let cfs = self.se[se.index()].cfs_rq;
                self.update_load_avg(cfs, se, UPDATE_TG);
                self.se_update_runnable(se);
                self.update_cfs_group(se);
                if propagate {
                    self.se[se.index()].slice = slice;
                    if self.cfg.has(P::ForceMinSlice) && self.cfs[cfs.index()].curr != Some(se) {
                        let root = self.cfs[cfs.index()].root;
                        tree::propagate(&mut self.se, root, se, self.tree_order);
                    }
                }
                slice = self.cfs_rq_min_slice(cfs);
                let c = &mut self.cfs[cfs.index()];
                c.h_nr_queued -= h_nr_queued;
                c.h_nr_runnable -= h_nr_runnable;
                c.h_nr_idle -= h_nr_idle;
                if c.idle {
                    h_nr_idle = h_nr_queued;
                }
                if c.throttled && stop_at_throttled {
                    self.count_op(FairOp::Dequeue);
                    return true;
                }
                if task_throttled && self.throttled_hierarchy(cfs) {
                    self.record_throttle_clock(cfs);
                }
                e = self.se[se.index()].parent;
            }
        }
        self.sub_nr_running(cpu, h_nr_queued);
        // E6 (rt-dl.md §4.5): v6.12 .. v6.16 stop the fair_server when the fair class empties;
        // cccb45d7c429 leaves it running
        if !self.cfg.has(P::DlServerLessAggr)
            && rq_h_nr_queued > 0
            && self.cfs[self.rqs[cpu].cfs.index()].h_nr_queued == 0
        {
            self.dl_server_stop(cpu);
        }
        if !was_sched_idle && self.sched_idle_rq(cpu) {
            // The rq turned SCHED_IDLE-only: pull normal work early.
            self.rqs[cpu].next_balance = self.jiffies();
        }
        if let Some(t) = task {
            if flags & DEQUEUE_DELAYED != 0 || self.se[se0.index()].sched_delayed {
                let _ = t;
            }
        }
        self.count_op(FairOp::Dequeue);
        true
    }

    /// kernel: fair.c dequeue_task_fair() — false if the task stays queued as delayed.
    pub(crate) fn dequeue_task_fair(&mut self, t: TaskId, flags: u32) -> bool {
        if self.tasks[t.index()].throttled {
            self.dequeue_throttled_task(t, flags);
            return true;
        }
        let se = self.tasks[t.index()].se;
        let cpu = self.tasks[t.index()].cpu;
        if !(self.se[se.index()].sched_delayed && flags & (DEQUEUE_SAVE | DEQUEUE_MIGRATING) != 0) {
            self.util_est_dequeue(t);
        }
        if !self.dequeue_entities(cpu, se, flags) {
            return false;
        }
        if let Some(pol) = self.fair_policy {
            (pol.hrtick_update)(self, cpu);
        }
        true
    }

    // ===================================================================== buddies (§5.6)

    /// kernel: fair.c set_next_buddy() — marks `se` and its ancestors.
    pub(crate) fn set_next_buddy(&mut self, se: SeId) {
        let mut e = Some(se);
        while let Some(x) = e {
            if !self.se[x.index()].on_rq {
                self.sched_warn_on(true, "set_next_buddy on an entity that is not queued");
                return;
            }
            if self.is_idle_entity(x) {
                return;
            }
            let cfs = self.se[x.index()].cfs_rq;
            self.cfs[cfs.index()].next = Some(x);
            e = self.se[x.index()].parent;
        }
    }

    /// kernel: fair.c clear_buddies() — only if the buddy *is* `se`.
    pub(crate) fn clear_buddies(&mut self, cfs: CfsRqId, se: SeId) {
        if self.cfs[cfs.index()].next != Some(se) {
            return;
        }
        let mut e = Some(se);
        while let Some(x) = e {
            let c = self.se[x.index()].cfs_rq;
            if self.cfs[c.index()].next != Some(x) {
                break;
            }
            self.cfs[c.index()].next = None;
            e = self.se[x.index()].parent;
        }
    }

    /// `se_is_idle()`: a SCHED_IDLE task, or a group whose cfs_rq is idle.
    pub(crate) fn is_idle_entity(&self, se: SeId) -> bool {
        let e = &self.se[se.index()];
        match e.task {
            Some(t) => self.tasks[t.index()].policy == Policy::Idle,
            None => self.cfs[e.my_q.unwrap().index()].idle,
        }
    }

    // ===================================================================== picking (§5)

    /// kernel: fair.c __pick_eevdf() @ v6.8+ with the per-version refinements (fair.md §5.2).
    /// Read-only; `__pick_eevdf` adds the kernel's WARN for a delayed buddy.
    pub(crate) fn pick_eevdf_ro(&self, cfs: CfsRqId, protect: bool) -> Option<SeId> {
        if self.tree_order == TreeOrder::Vruntime {
            return self.pick_eevdf_v66(cfs);
        }
        let c = &self.cfs[cfs.index()];
        let first = tree::leftmost(&self.se, c.root);
        let mut curr = c.curr;
        if c.nr_queued == 1 {
            return match curr {
                Some(cu) if self.se[cu.index()].on_rq => Some(cu),
                _ => first,
            };
        }
        if self.cfg.has(P::NextBuddyReimpl)
            && self.cfg.feat(F::PICK_BUDDY)
            && (protect || !self.cfg.has(P::ClearBuddiesPreemptShort))
        {
            if let Some(nx) = self.cfs[cfs.index()].next {
                if self.entity_eligible(cfs, nx) {
                    return Some(nx);
                }
            }
        }
        if let Some(cu) = curr {
            if !self.se[cu.index()].on_rq || !self.entity_eligible(cfs, cu) {
                curr = None;
            }
        }
        if let Some(cu) = curr {
            let protected = if self.cfg.has(P::ProtectVprot) {
                protect && self.protect_slice(cu)
            } else if self.cfg.has(P::ShortProbe) {
                protect && self.cfg.feat(F::RUN_TO_PARITY) && self.protect_slice(cu)
            } else {
                self.cfg.feat(F::RUN_TO_PARITY) && self.protect_slice(cu)
            };
            if protected {
                return Some(cu);
            }
        }
        let mut best = None;
        if let Some(f) = first {
            if self.entity_eligible(cfs, f) {
                best = Some(f);
            }
        }
        if best.is_none() {
            let mut node = self.cfs[cfs.index()].root;
            while node != NIL {
                let l = self.se[node as usize].rb_left;
                if l != NIL && self.vruntime_eligible(cfs, self.se[l as usize].min_vruntime) {
                    node = l;
                    continue;
                }
                if self.entity_eligible(cfs, SeId(node)) {
                    best = Some(SeId(node));
                    break;
                }
                node = self.se[node as usize].rb_right;
            }
        }
        match (best, curr) {
            (None, c) => c,
            (Some(b), Some(cu))
                if before(self.se[cu.index()].deadline, self.se[b.index()].deadline) =>
            {
                Some(cu)
            }
            (b, _) => b,
        }
    }

    pub(crate) fn __pick_eevdf(&mut self, cfs: CfsRqId, protect: bool) -> Option<SeId> {
        let r = self.pick_eevdf_ro(cfs, protect);
        if let (Some(x), Some(nx)) = (r, self.cfs[cfs.index()].next) {
            if x == nx {
                self.sched_warn_on(self.se[nx.index()].sched_delayed, "next buddy is delayed");
            }
        }
        r
    }

    /// kernel: fair.c __pick_eevdf() @ v6.6 (vruntime-sorted tree, min_deadline heap;
    /// curr wins a deadline tie, fair.md §5.3).
    fn pick_eevdf_v66(&self, cfs: CfsRqId) -> Option<SeId> {
        let mut curr = self.cfs[cfs.index()].curr;
        if let Some(cu) = curr {
            if !self.se[cu.index()].on_rq || !self.entity_eligible(cfs, cu) {
                curr = None;
            }
        }
        let mut best = curr;
        if let Some(cu) = curr {
            if self.cfg.feat(F::RUN_TO_PARITY) && self.protect_slice(cu) {
                return Some(cu);
            }
        }
        let dl = |k: &Kernel, x: u32| k.se[x as usize].deadline;
        let mdl = |k: &Kernel, x: u32| k.se[x as usize].min_deadline;
        let mut best_left: u32 = NIL;
        let mut node = self.cfs[cfs.index()].root;
        while node != NIL {
            if !self.entity_eligible(cfs, SeId(node)) {
                node = self.se[node as usize].rb_left;
                continue;
            }
            match best {
                None => best = Some(SeId(node)),
                Some(b) if before(dl(self, node), self.se[b.index()].deadline) => {
                    best = Some(SeId(node))
                }
                _ => {}
            }
            let l = self.se[node as usize].rb_left;
            if l != NIL {
                if best_left == NIL || before(mdl(self, l), mdl(self, best_left)) {
                    best_left = l;
                }
                if mdl(self, l) == mdl(self, node) {
                    break;
                }
            }
            if dl(self, node) == mdl(self, node) {
                break;
            }
            node = self.se[node as usize].rb_right;
        }
        let Some(b) = best else {
            return tree::leftmost(&self.se, self.cfs[cfs.index()].root);
        };
        if best_left == NIL || !before(mdl(self, best_left), self.se[b.index()].deadline) {
            return Some(b);
        }
        let mut node = best_left;
        loop {
            if dl(self, node) == mdl(self, node) {
                return Some(SeId(node));
            }
            let l = self.se[node as usize].rb_left;
            if l != NIL && mdl(self, l) == mdl(self, node) {
                node = l;
            } else {
                node = self.se[node as usize].rb_right;
            }
        }
    }

    /// kernel: fair.c pick_next_entity() — buddy per version, then EEVDF; a delayed pick is
    /// completed (dequeued for real) and the caller restarts.
    fn pick_next_entity(&mut self, cfs: CfsRqId) -> Option<SeId> {
        self.pick_next_entity_protect(cfs, true)
    }

    /// The wakeup probe of v7.1 (`pick_next_entity(rq, cfs_rq, protect)`).
    fn pick_next_entity_probe(&mut self, cfs: CfsRqId, protect: bool) -> Option<SeId> {
        self.pick_next_entity_protect(cfs, protect)
    }

    fn pick_next_entity_protect(&mut self, cfs: CfsRqId, protect: bool) -> Option<SeId> {
        if let Some(pol) = self.fair_policy {
            return (pol.pick_next_entity)(self, cfs);
        }
        if !self.cfg.has(P::NextBuddyReimpl) {
            let honour = if self.cfg.has(P::PickBuddy) {
                self.cfg.feat(F::PICK_BUDDY)
            } else {
                self.cfg.feat(F::NEXT_BUDDY)
            };
            if honour {
                if let Some(nx) = self.cfs[cfs.index()].next {
                    if self.entity_eligible(cfs, nx) {
                        return Some(nx);
                    }
                }
            }
        }
        let se = self.__pick_eevdf(cfs, protect);
        let Some(se) = se else {
            self.sched_warn_on(true, "pick_eevdf found nothing on a non-empty cfs_rq");
            return None;
        };
        if self.se[se.index()].sched_delayed {
            let cpu = self.cfs[cfs.index()].cpu;
            self.count_op(FairOp::PickDelayedDequeue);
            self.dequeue_entities(cpu, se, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
            if let Some(t) = self.se[se.index()].task {
                self.block_task_delayed(t);
            }
            return None;
        }
        Some(se)
    }

    /// kernel: fair.c pick_task_fair() — walk down from the root; restart after completing a
    /// delayed dequeue.
    pub(crate) fn pick_task_fair(&mut self, cpu: usize) -> Option<TaskId> {
        let task_based = self.task_based_throttle();
        'again: loop {
            let mut cfs = self.rqs[cpu].cfs;
            if self.cfs[cfs.index()].nr_queued == 0 {
                return None;
            }
            let mut throttled = false;
            loop {
                if let Some(cu) = self.cfs[cfs.index()].curr {
                    if self.se[cu.index()].on_rq {
                        self.update_curr(cfs);
                    }
                }
                if task_based {
                    // v6.18+: the hierarchy stays queued; the task picked below it is
                    // throttled on its way back to user space
                    throttled |= self.check_cfs_rq_runtime(cfs);
                } else if self.check_cfs_rq_runtime(cfs) {
                    continue 'again;
                }
                let Some(se) = self.pick_next_entity(cfs) else {
                    self.count_op(FairOp::PickRestart);
                    continue 'again;
                };
                if let Some(q) = self.se[se.index()].my_q {
                    cfs = q;
                    continue;
                }
                let p = self.se[se.index()].task;
                if throttled {
                    if let Some(p) = p {
                        self.task_throttle_setup_work(p);
                    }
                }
                return p;
            }
        }
    }

    /// kernel: fair.c pick_next_task_fair() — pick, then put the previous task and set the
    /// next one level by level (only the levels that differ). With nothing to pick, a fair
    /// `prev` is put back here; the newidle balance that follows is the class's `balance`
    /// hook (class.rs). `prev_fair`: `prev` is a fair task still current on its cfs_rq.
    pub(crate) fn pick_next_task_fair(
        &mut self,
        cpu: usize,
        prev: TaskId,
        prev_fair: bool,
    ) -> Option<TaskId> {
        let Some(p) = self.pick_task_fair(cpu) else {
            if prev_fair {
                self.put_prev_task_fair(prev);
            }
            return None;
        };
        self.put_prev_set_next_fair(if prev_fair { Some(prev) } else { None }, p);
        if let Some(pol) = self.fair_policy {
            (pol.picked)(self, cpu, p);
        }
        if p != prev {
            let how = if self.fair_policy.is_some() {
                "cfs"
            } else {
                "eevdf"
            };
            self.trace_pick(cpu, p, how);
        }
        Some(p)
    }

    /// kernel: fair.c put_prev_entity()
    fn put_prev_entity(&mut self, cfs: CfsRqId, prev: SeId) {
        if self.se[prev.index()].on_rq {
            self.update_curr(cfs);
        }
        // throttle cfs_rqs exceeding runtime
        self.check_cfs_rq_runtime(cfs);
        if self.se[prev.index()].on_rq {
            self.__enqueue_entity(cfs, prev);
            self.update_load_avg(cfs, prev, 0);
        }
        self.cfs[cfs.index()].curr = None;
    }

    /// kernel: fair.c set_next_entity(); `first` = called from the pick (v7.0).
    fn set_next_entity(&mut self, cfs: CfsRqId, se: SeId, first: bool) {
        if let Some(pol) = self.fair_policy {
            return (pol.set_next_entity)(self, cfs, se);
        }
        self.clear_buddies(cfs, se);
        if self.se[se.index()].on_rq {
            self.__dequeue_entity(cfs, se);
            self.update_load_avg(cfs, se, UPDATE_TG);
            if !self.cfg.has(P::ProtectAtPickOnly) || first {
                self.set_protect_slice(cfs, se);
            }
        }
        self.se[se.index()].exec_start = self.rq_clock_task(self.cfs[cfs.index()].cpu);
        self.cfs[cfs.index()].curr = Some(se);
        let e = &mut self.se[se.index()];
        e.prev_sum_exec_runtime = e.sum_exec_runtime;
    }

    /// `set_next_entity` outside the pick (sched_change pattern: `first` is false).
    pub(crate) fn set_next_entity_pub(&mut self, cfs: CfsRqId, se: SeId) {
        self.set_next_entity(cfs, se, false);
    }

    /// Switches the fair hierarchy from `prev` (if a fair task) to `next`: levels that did not
    /// change are not touched (no set_next_entity, hence no clear_buddies there, §5.5).
    pub(crate) fn put_prev_set_next_fair(&mut self, prev: Option<TaskId>, next: TaskId) {
        let mut se = self.tasks[next.index()].se;
        if let Some(p) = prev {
            if p == next {
                return;
            }
            let mut pse = self.tasks[p.index()].se;
            loop {
                let c1 = self.se[se.index()].cfs_rq;
                let c2 = self.se[pse.index()].cfs_rq;
                if c1 == c2 {
                    break;
                }
                let sd = self.se[se.index()].depth;
                let pd = self.se[pse.index()].depth;
                if sd <= pd {
                    self.put_prev_entity(c2, pse);
                    pse = self.se[pse.index()].parent.unwrap();
                }
                if sd >= pd {
                    self.set_next_entity(c1, se, true);
                    se = self.se[se.index()].parent.unwrap();
                }
            }
            let c = self.se[se.index()].cfs_rq;
            self.put_prev_entity(c, pse);
            self.set_next_entity(c, se, true);
        } else {
            let mut e = Some(se);
            while let Some(x) = e {
                let c = self.se[x.index()].cfs_rq;
                self.set_next_entity(c, x, true);
                e = self.se[x.index()].parent;
            }
        }
    }

    /// kernel: fair.c set_next_task_fair() — every level of `t` becomes its cfs_rq's curr
    /// again (after a change of its parameters while it runs).
    pub(crate) fn set_next_task_fair(&mut self, t: TaskId) {
        let mut e = Some(self.tasks[t.index()].se);
        while let Some(x) = e {
            let c = self.se[x.index()].cfs_rq;
            self.set_next_entity_pub(c, x);
            e = self.se[x.index()].parent;
        }
    }

    /// kernel: fair.c reweight_task_fair() — the entity takes the weight of the task's nice
    /// value or policy (`set_load_weight()`'s weight: SCHED_IDLE has a fixed one).
    pub(crate) fn reweight_task_fair(&mut self, t: TaskId) {
        let (w, inv) = self.task_load_weight(t);
        let se = self.tasks[t.index()].se;
        if self.se[se.index()].load.weight == w {
            return; // a nice change of a SCHED_IDLE task: its weight stays WEIGHT_IDLEPRIO
        }
        let cfs = self.se[se.index()].cfs_rq;
        self.reweight_entity(cfs, se, w, inv);
    }

    /// kernel: fair.c prio_changed_fair() — after a nice change of a queued task: the running
    /// task reschedules if it got lighter, a waiting one gets a wakeup-preemption check.
    pub(crate) fn prio_changed_fair(&mut self, cpu: usize, t: TaskId, old_prio: i32) {
        if self.tasks[t.index()].on_rq != OnRq::Queued {
            return;
        }
        if self.cfs[self.rqs[cpu].cfs.index()].nr_queued <= 1 {
            return;
        }
        if self.rqs[cpu].curr == t {
            if self.tasks[t.index()].prio() > old_prio {
                self.resched_curr(cpu);
            }
        } else {
            self.wakeup_preempt(cpu, t, 0, true);
        }
    }

    /// kernel: fair.c switched_to_fair() — a task that joined the fair class (from RT):
    /// reschedule if it runs, else a wakeup-preemption check.
    /// Deviation: no `attach_task_cfs_rq()` of its PELT signals.
    pub(crate) fn switched_to_fair(&mut self, cpu: usize, p: TaskId) {
        if let Some(pol) = self.fair_policy {
            (pol.attach_task_cfs_rq)(self, p);
        }
        if self.tasks[p.index()].on_rq != OnRq::Queued {
            return;
        }
        if self.rqs[cpu].curr == p {
            self.resched_curr(cpu);
        } else {
            self.wakeup_preempt(cpu, p, 0, true);
        }
    }

    /// kernel: fair.c put_prev_task_fair() — the whole hierarchy of a task leaving the CPU to
    /// a non-fair task or idle.
    pub(crate) fn put_prev_task_fair(&mut self, prev: TaskId) {
        let mut e = Some(self.tasks[prev.index()].se);
        while let Some(x) = e {
            let c = self.se[x.index()].cfs_rq;
            self.put_prev_entity(c, x);
            e = self.se[x.index()].parent;
        }
    }

    // ===================================================================== wakeup preemption (§6)

    /// `switched_from_fair()`: nothing for EEVDF here (no PELT detach in the model); v6.5
    /// places and normalises a sleeping task's vruntime (`detach_task_cfs_rq`).
    pub(crate) fn switched_from_fair(&mut self, p: TaskId) {
        if let Some(pol) = self.fair_policy {
            (pol.detach_task_cfs_rq)(self, p);
        }
    }

    /// kernel: fair.c find_matching_se()
    pub(crate) fn find_matching_se(&self, se: &mut SeId, pse: &mut SeId) {
        let mut sd = self.se[se.index()].depth;
        let mut pd = self.se[pse.index()].depth;
        while sd > pd {
            *se = self.se[se.index()].parent.unwrap();
            sd -= 1;
        }
        while pd > sd {
            *pse = self.se[pse.index()].parent.unwrap();
            pd -= 1;
        }
        while self.se[se.index()].cfs_rq != self.se[pse.index()].cfs_rq {
            *se = self.se[se.index()].parent.unwrap();
            *pse = self.se[pse.index()].parent.unwrap();
        }
    }

    /// kernel: fair.c check_preempt_wakeup_fair() / wakeup_preempt_fair() — may the woken
    /// fair task `p` preempt the running fair task of `cpu` (fair.md §6)?
    /// `in_task`: the waker runs in task context (not a timer interrupt).
    pub(crate) fn check_preempt_wakeup_fair(
        &mut self,
        cpu: usize,
        p: TaskId,
        wake_flags: u32,
        in_task: bool,
    ) {
        if let Some(pol) = self.fair_policy {
            return (pol.check_preempt_wakeup)(self, cpu, p, wake_flags);
        }
        let curr_t = self.rqs[cpu].curr;
        let mut se = self.tasks[curr_t.index()].se;
        let mut pse = self.tasks[p.index()].se;
        if se == pse {
            return;
        }
        // fair.md §6.1 step 2: a wakee below a throttled cfs_rq cannot run (also keeps it
        // from being nominated as next buddy)
        // (v6.18+: `task_is_throttled(p)`, a task on the limbo list; a wakee below a
        // throttled cfs_rq runs until its return to user space)
        let throttled = if self.task_based_throttle() {
            self.tasks[p.index()].throttled
        } else {
            self.throttled_hierarchy(self.se[pse.index()].cfs_rq)
        };
        if throttled {
            return;
        }
        let reimpl = self.cfg.has(P::NextBuddyReimpl);
        // v6.6..v6.18: buddy nomination before the need_resched test.
        if !reimpl
            && self.cfg.feat(F::NEXT_BUDDY)
            && wake_flags & WF_FORK == 0
            && !(self.cfg.has(P::FixNextBuddy) && self.se[pse.index()].sched_delayed)
        {
            self.set_next_buddy(pse);
        }
        if self.need_resched(cpu) {
            return;
        }
        let strict = self.cfg.has(P::IdleStrictHierarchy);
        let curr_pol = self.tasks[curr_t.index()].policy;
        let p_pol = self.tasks[p.index()].policy;
        let mut action = Action::Pick;
        if !strict {
            // v6.6 task-level rules.
            if curr_pol == Policy::Idle && p_pol != Policy::Idle {
                return self.wakeup_preempt_resched(cpu, se, Action::Pick);
            }
            if p_pol != Policy::Normal || !self.cfg.feat(F::WAKEUP_PREEMPTION) {
                return;
            }
        } else if !self.cfg.feat(F::WAKEUP_PREEMPTION) {
            return;
        }
        self.find_matching_se(&mut se, &mut pse);
        let cse_is_idle = self.is_idle_entity(se);
        let pse_is_idle = self.is_idle_entity(pse);
        if cse_is_idle && !pse_is_idle {
            // A non-idle wakee preempts an idle entity; since f553741ac8c0 the idle entity
            // also loses its slice protection.
            if self.cfg.has(P::IdleCancelProtect) || self.cfg.has(P::ShortProbe) {
                action = Action::Short;
            }
            return self.wakeup_preempt_resched(cpu, se, action);
        }
        if cse_is_idle != pse_is_idle {
            return;
        }
        if strict && p_pol != Policy::Normal {
            return;
        }
        let cfs = self.se[se.index()].cfs_rq;
        self.update_curr(cfs);

        let pslice = self.se[pse.index()].slice;
        let sslice = self.se[se.index()].slice;
        let short = self.cfg.feat(F::PREEMPT_SHORT) && pslice < sslice;

        // The decision itself changed three times; each version's rule is its own function
        // below, chosen by the patch that introduced it (newest first).
        if reimpl {
            self.wakeup_preempt_e837456fdca8(cpu, cfs, se, pse, wake_flags, in_task, short)
        } else if self.cfg.has(P::ShortProbe) {
            self.wakeup_preempt_9de74a9850b9(cpu, cfs, se, pse, short)
        } else if self.cfg.has(P::PreemptShort) {
            self.wakeup_preempt_85e511df3cec(cpu, cfs, se, pse, short)
        } else {
            self.wakeup_preempt_eevdf(cpu, cfs, se, pse)
        }
    }

    /// Why the wakeup of fair task `p` did not preempt `cpu`'s fair task, read back after the
    /// hook ran (for `WakeupRecord`s; changes nothing). Returns the verdict and the running
    /// side's entity at the matched level (a cgroup path or a comm).
    pub(crate) fn explain_wakeup_fair(
        &self,
        cpu: usize,
        p: TaskId,
        wake_flags: u32,
    ) -> (crate::stats::WakeupVerdict, String) {
        if let Some(pol) = self.fair_policy {
            return (pol.explain_wakeup)(self, cpu, p, wake_flags);
        }
        use crate::stats::WakeupVerdict as V;
        let curr_t = self.rqs[cpu].curr;
        let mut se = self.tasks[curr_t.index()].se;
        let mut pse = self.tasks[p.index()].se;
        if self.se[pse.index()].cfs_rq != self.se[se.index()].cfs_rq
            && self.cfs[self.se[pse.index()].cfs_rq.index()].cpu != cpu
        {
            return (V::EarlierDeadline, String::new());
        }
        self.find_matching_se(&mut se, &mut pse);
        let name = match self.se[se.index()].my_q {
            Some(q) => self.tgs[self.cfs[q.index()].tg.index()].path.clone(),
            None => self.tasks[curr_t.index()].comm.clone(),
        };
        if self.is_idle_entity(pse) || self.tasks[p.index()].policy != Policy::Normal {
            return (V::IdlePolicy, name);
        }
        let cfs = self.se[se.index()].cfs_rq;
        let short = self.cfg.feat(F::PREEMPT_SHORT)
            && self.se[pse.index()].slice < self.se[se.index()].slice;
        if self.cfg.has(P::NextBuddyReimpl)
            && !short
            && (wake_flags & WF_FORK != 0 || self.se[pse.index()].sched_delayed)
        {
            return (V::ForkOrDelayed, name);
        }
        // Only v6.19+ probes see buddies (before, only the pick path honours them); v7.1's
        // short probe ignores them (78cde54ea5f0).
        let buddy_in_probe = self.cfg.has(P::NextBuddyReimpl)
            && !(short && self.cfg.has(P::ClearBuddiesPreemptShort));
        if buddy_in_probe && self.cfg.feat(F::PICK_BUDDY) {
            if let Some(nx) = self.cfs[cfs.index()].next {
                if nx != pse && self.entity_eligible(cfs, nx) {
                    return (
                        V::Buddy {
                            self_buddy: nx == se,
                        },
                        name,
                    );
                }
            }
        }
        if !self.entity_eligible(cfs, pse) {
            return (V::NotEligible, name);
        }
        if !short && self.cfg.feat(F::RUN_TO_PARITY) && self.protect_slice(se) {
            return (V::Protected, name);
        }
        (V::EarlierDeadline, name)
    }

    /// The v6.6 rule (EEVDF, 147f3efaa241): preempt iff the wakee is what `__pick_eevdf()`
    /// would pick now, with the running entity's slice protection (RUN_TO_PARITY) honoured.
    /// fair.md §6.4.
    fn wakeup_preempt_eevdf(&mut self, cpu: usize, cfs: CfsRqId, se: SeId, pse: SeId) {
        if self.__pick_eevdf(cfs, true) == Some(pse) {
            self.wakeup_preempt_resched(cpu, se, Action::Pick);
        }
    }

    /// 85e511df3cec ("Allow shorter slices to wakeup-preempt", v6.12 .. v6.16): an eligible
    /// wakee with a shorter slice that is due first (or finds the running entity ineligible)
    /// cancels the running entity's protection; then the v6.6 rule. fair.md §6.5.
    fn wakeup_preempt_85e511df3cec(
        &mut self,
        cpu: usize,
        cfs: CfsRqId,
        se: SeId,
        pse: SeId,
        short: bool,
    ) {
        let do_preempt_short = short
            && self.entity_eligible(cfs, pse)
            && (before(self.se[pse.index()].deadline, self.se[se.index()].deadline)
                || !self.entity_eligible(cfs, se));
        if do_preempt_short {
            self.cancel_protect_slice(se);
        }
        self.wakeup_preempt_eevdf(cpu, cfs, se, pse);
    }

    /// 9de74a9850b9 ("Remove spurious shorter slice preemption", v6.17 / v6.18): a shorter-slice
    /// wakee probes `__pick_eevdf()` without protection instead of cancelling it first; with
    /// 3a0baa8e6c57 a short wakeup that does not preempt shrinks the protection. fair.md §6.6.
    fn wakeup_preempt_9de74a9850b9(
        &mut self,
        cpu: usize,
        cfs: CfsRqId,
        se: SeId,
        pse: SeId,
        short: bool,
    ) {
        let action = if short { Action::Short } else { Action::Pick };
        if self.__pick_eevdf(cfs, !short) == Some(pse) {
            return self.wakeup_preempt_resched(cpu, se, action);
        }
        if self.cfg.has(P::ShortShrinkProtect) && self.cfg.feat(F::RUN_TO_PARITY) && short {
            self.update_protect_slice(cfs, se);
        }
    }

    /// e837456fdca8 ("Reimplement NEXT_BUDDY to align with EEVDF goals", v6.19+): actions
    /// (short / pick / resched / none), no preemption by a forked or delayed wakee, the
    /// ineligible-waker resched (reverted by 15257cc2f905), the WF_SYNC buddy rule
    /// (`set_preempt_buddy`, `preempt_sync`), and the probe; with ac8e69e69363 the probe
    /// goes through `pick_next_entity()`. fair.md §6.7.
    #[allow(clippy::too_many_arguments)]
    fn wakeup_preempt_e837456fdca8(
        &mut self,
        cpu: usize,
        cfs: CfsRqId,
        se: SeId,
        pse: SeId,
        wake_flags: u32,
        in_task: bool,
        short: bool,
    ) {
        let mut action = Action::Pick;
        if short {
            action = Action::Short;
        } else {
            if wake_flags & WF_FORK != 0 || self.se[pse.index()].sched_delayed {
                return;
            }
            if !self.cfg.has(P::ForcePreemptRevert) && in_task && !self.entity_eligible(cfs, se) {
                return self.wakeup_preempt_resched(cpu, se, Action::Resched);
            }
            // Decide whether to obey the WF_SYNC hint for a new buddy.
            if self.cfg.feat(F::NEXT_BUDDY)
                && self.set_preempt_buddy(cfs, pse)
                && wake_flags & WF_SYNC != 0
            {
                action = self.preempt_sync(wake_flags, pse, se);
            }
            match action {
                Action::None => return,
                Action::Resched => return self.wakeup_preempt_resched(cpu, se, action),
                _ => {}
            }
        }
        let protect = action != Action::Short;
        if self.cfg.has(P::WakeupPreemptDelayed) {
            // v7.1 (ac8e69e69363, 9f6d929ee2c6): probe with pick_next_entity, which may
            // complete delayed dequeues; repeat while the cfs_rq is not empty.
            loop {
                let nse = self.pick_next_entity_probe(cfs, protect);
                if nse == Some(pse) {
                    return self.wakeup_preempt_resched(cpu, se, action);
                }
                // Without 9f6d929ee2c6 the kernel would probe an emptied cfs_rq again;
                // that crash path is not modelled.
                if nse.is_none() && self.cfs[cfs.index()].nr_queued > 0 {
                    continue;
                }
                break;
            }
        } else if self.__pick_eevdf(cfs, protect) == Some(pse) {
            return self.wakeup_preempt_resched(cpu, se, action);
        }
        if self.cfg.feat(F::RUN_TO_PARITY) {
            self.update_protect_slice(cfs, se);
        }
    }

    /// The `preempt:` label of the wakeup hook.
    fn wakeup_preempt_resched(&mut self, cpu: usize, se: SeId, action: Action) {
        if action == Action::Short {
            self.cancel_protect_slice(se);
            if self.cfg.has(P::ClearBuddiesPreemptShort) {
                let cfs = self.se[se.index()].cfs_rq;
                self.clear_buddies(cfs, se);
            }
        }
        self.count_op(FairOp::WakeupPreempt);
        self.resched_curr_lazy(cpu);
    }

    /// kernel: fair.c set_preempt_buddy() (v6.19) — keep an older buddy with an earlier deadline.
    fn set_preempt_buddy(&mut self, cfs: CfsRqId, pse: SeId) -> bool {
        if let Some(nx) = self.cfs[cfs.index()].next {
            if before(self.se[nx.index()].deadline, self.se[pse.index()].deadline) {
                return false;
            }
        }
        self.set_next_buddy(pse);
        true
    }

    /// kernel: fair.c preempt_sync() (v6.19). `delta` is normally 0 because the hook's
    /// update_curr has just refreshed `exec_start` (fair.md §6.7).
    fn preempt_sync(&self, wake_flags: u32, pse: SeId, se: SeId) -> Action {
        let mut threshold = self.cfg.sysctl.migration_cost_ns;
        let cpu = self.cfs[self.se[se.index()].cfs_rq.index()].cpu;
        let delta =
            (self.rq_clock_task(cpu) as i64 - self.se[se.index()].exec_start as i64).max(0) as u64;
        if wake_flags & WF_RQ_SELECTED != 0 {
            threshold >>= 2;
        }
        if before(self.se[pse.index()].deadline, self.se[se.index()].deadline) && delta >= threshold
        {
            Action::Resched
        } else {
            Action::None
        }
    }

    // ===================================================================== tick (§8)

    /// kernel: fair.c task_tick_fair() — charge every level of the running task.
    pub(crate) fn task_tick_fair(&mut self, t: TaskId) {
        if let Some(pol) = self.fair_policy {
            return (pol.task_tick_fair)(self, t);
        }
        let mut e = Some(self.tasks[t.index()].se);
        while let Some(se) = e {
            let cfs = self.se[se.index()].cfs_rq;
            self.update_curr(cfs);
            self.update_load_avg(cfs, se, UPDATE_TG);
            self.update_cfs_group(se);
            e = self.se[se.index()].parent;
        }
    }

    // ===================================================================== yield (§9.1)

    /// kernel: fair.c yield_task_fair()
    pub(crate) fn yield_task_fair(&mut self, cpu: usize) {
        if let Some(pol) = self.fair_policy {
            return (pol.yield_task_fair)(self, cpu);
        }
        let t = self.rqs[cpu].curr;
        let se = self.tasks[t.index()].se;
        let cfs = self.se[se.index()].cfs_rq;
        if self.rqs[cpu].nr_running == 1 {
            return;
        }
        self.clear_buddies(cfs, se);
        self.update_rq_clock(cpu);
        self.update_curr(cfs);
        // just updated: no microscopic update in the schedule() that follows
        self.rq_clock_skip_update(cpu);
        if self.cfg.has(P::YieldForfeit) {
            if self.entity_eligible(cfs, se) {
                let d = self.se[se.index()].deadline;
                self.se[se.index()].vruntime = d;
                if self.cfg.has(P::ZeroVruntimeTrackingFix) {
                    self.update_deadline(cfs, se);
                } else {
                    let vs = self.calc_delta_fair(self.se[se.index()].slice, se);
                    self.se[se.index()].deadline = d.wrapping_add(vs);
                }
                if !self.cfg.has(P::ZeroVruntime) {
                    self.update_min_vruntime(cfs);
                }
            }
        } else {
            let vs = self.calc_delta_fair(self.se[se.index()].slice, se);
            let e = &mut self.se[se.index()];
            e.deadline = e.deadline.wrapping_add(vs);
        }
    }

    /// kernel: fair.c yield_to_task_fair()
    pub fn yield_to_task_fair(&mut self, cpu: usize, p: TaskId) -> bool {
        let pse = self.tasks[p.index()].se;
        if !self.se[pse.index()].on_rq || self.throttled_hierarchy(self.se[pse.index()].cfs_rq) {
            return false;
        }
        self.set_next_buddy(pse);
        self.yield_task_fair(cpu);
        true
    }

    // ===================================================================== reweight (§9.3)

    /// kernel: fair.c reweight_entity() — change `se`'s weight, preserving what the version
    /// preserves (fair.md §9.3; exact sequences per version checked against the kernel).
    pub(crate) fn reweight_entity(&mut self, cfs: CfsRqId, se: SeId, weight: u64, inv: u32) {
        if let Some(pol) = self.fair_policy {
            return (pol.reweight_entity)(self, cfs, se, weight, inv);
        }
        let old_w = self.se[se.index()].load.weight;
        if old_w == weight {
            return;
        }
        let scale = |x: i64| -> i64 { (x as i128 * old_w as i128 / weight as i128) as i64 };
        let on_rq = self.se[se.index()].on_rq;
        let is_curr = self.cfs[cfs.index()].curr == Some(se);
        if !on_rq {
            // off the queue (sched_change SAVE, or a sleeping entity): rescale the saved lag;
            // from 6d71a9c61604 a relative deadline is rescaled too (not in v6.12)
            let v = scale(self.se[se.index()].vlag);
            self.set_vlag(se, v);
            if self.cfg.has(P::ReweightPlaceEntity) && self.se[se.index()].rel_deadline {
                let d = scale(self.se[se.index()].deadline as i64);
                self.se[se.index()].deadline = d as u64;
            }
            self.se[se.index()].load = LoadWeight {
                weight,
                inv_weight: inv,
            };
            return;
        }
        self.update_curr(cfs);
        if self.cfg.has(P::RevertReweightPlacement) {
            // ---- v7.1 (101f3498b4bd): relative to one average A, which includes se ----
            let a = self.avg_vruntime_update(cfs);
            let raw = a.wrapping_sub(self.se[se.index()].vruntime) as i64;
            let l = if self.cfg.has(P::LagClampMaxSlice) {
                self.cfs_rq_max_slice(cfs) + self.tick_nsec
            } else {
                (2 * self.se[se.index()].slice).max(self.tick_nsec)
            };
            let limit = self.calc_delta_fair(l, se) as i64;
            let vlag = raw.clamp(-limit, limit);
            let d_rel = self.se[se.index()].deadline.wrapping_sub(a) as i64;
            let rel_vprot = is_curr && self.protect_slice(se);
            let p_rel = self.se[se.index()].vprot.wrapping_sub(a) as i64;
            self.cfs[cfs.index()].nr_queued -= 1;
            if !is_curr {
                self.__dequeue_entity(cfs, se);
            }
            self.cfs[cfs.index()].load.weight -= old_w;
            let e = &mut self.se[se.index()];
            e.load = LoadWeight {
                weight,
                inv_weight: inv,
            };
            e.vlag = scale(vlag);
            e.deadline = a.wrapping_add(scale(d_rel) as u64);
            e.rel_deadline = false;
            if rel_vprot {
                e.vprot = a.wrapping_add(scale(p_rel) as u64);
            }
            e.vruntime = a.wrapping_sub(e.vlag as u64);
            self.cfs[cfs.index()].load.weight += weight;
            if !is_curr {
                self.__enqueue_entity(cfs, se);
            }
            self.cfs[cfs.index()].nr_queued += 1;
            return;
        }
        if self.cfg.has(P::ReweightPlaceEntity) {
            // ---- v6.13..v7.0 (6d71a9c61604): treated like a dequeue/enqueue ----
            self.update_entity_lag(cfs, se);
            let rel_vprot = is_curr && self.cfg.has(P::ReweightVprot) && self.protect_slice(se);
            let v_old = self.se[se.index()].vruntime;
            let p_rel = self.se[se.index()].vprot.wrapping_sub(v_old) as i64;
            {
                let e = &mut self.se[se.index()];
                e.deadline = e.deadline.wrapping_sub(e.vruntime);
                e.rel_deadline = true;
            }
            let uncount = self.cfg.has(P::ReweightPlaceConstraints);
            if uncount {
                self.cfs[cfs.index()].nr_queued -= 1;
            }
            if !is_curr {
                self.__dequeue_entity(cfs, se);
            }
            self.cfs[cfs.index()].load.weight -= old_w;
            let v = scale(self.se[se.index()].vlag);
            self.set_vlag(se, v);
            let d = scale(self.se[se.index()].deadline as i64);
            self.se[se.index()].deadline = d as u64;
            self.se[se.index()].load = LoadWeight {
                weight,
                inv_weight: inv,
            };
            if !uncount {
                self.cfs[cfs.index()].load.weight += weight;
            }
            // curr stays on the queue: the average includes it at its new weight
            self.place_entity(cfs, se, 0);
            if uncount {
                self.cfs[cfs.index()].load.weight += weight;
            }
            if rel_vprot {
                let e = &mut self.se[se.index()];
                e.vprot = e.vruntime.wrapping_add(scale(p_rel) as u64);
            }
            if !is_curr {
                self.__enqueue_entity(cfs, se);
            }
            if uncount {
                self.cfs[cfs.index()].nr_queued += 1;
            }
            if !self.cfg.has(P::ZeroVruntime) {
                self.update_min_vruntime(cfs);
            }
            return;
        }
        if self.cfg.has(P::LagPreservingReweight) {
            // ---- v6.7..v6.12 (reweight_eevdf): V taken before removal (includes se) ----
            let v_avg = self.avg_vruntime(cfs);
            if !is_curr {
                self.__dequeue_entity(cfs, se);
            }
            self.cfs[cfs.index()].load.weight -= old_w;
            let e = &self.se[se.index()];
            let mut new_v = e.vruntime;
            if v_avg != e.vruntime {
                let raw = v_avg.wrapping_sub(e.vruntime) as i64;
                let limit = self.calc_delta_fair((2 * e.slice).max(self.tick_nsec), se) as i64;
                let lag = raw.clamp(-limit, limit);
                new_v = v_avg.wrapping_sub(scale(lag) as u64);
            }
            let d_rel = e.deadline.wrapping_sub(v_avg) as i64;
            let e = &mut self.se[se.index()];
            e.vruntime = new_v;
            e.deadline = v_avg.wrapping_add(scale(d_rel) as u64);
            e.load = LoadWeight {
                weight,
                inv_weight: inv,
            };
            self.cfs[cfs.index()].load.weight += weight;
            if !is_curr {
                self.__enqueue_entity(cfs, se);
            }
            if !self.cfg.has(P::ZeroVruntime) {
                self.update_min_vruntime(cfs);
            }
            return;
        }
        // ---- v6.6.0: vruntime kept, relative deadline scaled ----
        if !is_curr {
            self.__dequeue_entity(cfs, se);
        }
        self.cfs[cfs.index()].load.weight -= old_w;
        let e = &mut self.se[se.index()];
        let rel = e.deadline.wrapping_sub(e.vruntime) as i64;
        e.deadline = e.vruntime.wrapping_add(scale(rel) as u64);
        e.load = LoadWeight {
            weight,
            inv_weight: inv,
        };
        self.cfs[cfs.index()].load.weight += weight;
        if !is_curr {
            self.__enqueue_entity(cfs, se);
        }
    }

    /// kernel: fair.c update_cfs_group() — a group entity's weight follows its shares.
    pub(crate) fn update_cfs_group(&mut self, se: SeId) {
        if let Some(pol) = self.fair_policy {
            return (pol.update_cfs_group)(self, se);
        }
        let Some(gcfs) = self.se[se.index()].my_q else {
            return;
        };
        // An empty group keeps its weight (66951e4860d3); delayed entities keep weight.
        if self.cfs[gcfs.index()].load.weight == 0 && self.cfg.has(P::CfsGroupKeepWeight) {
            return;
        }
        if self.throttled_hierarchy(gcfs) {
            return;
        }
        let shares = self.calc_group_shares(gcfs);
        let old = self.se[se.index()].load.weight;
        if shares != old {
            let cfs = self.se[se.index()].cfs_rq;
            self.reweight_entity(cfs, se, shares, 0);
            self.reweight_load_avg(cfs, se, old, shares);
        }
    }

    // ===================================================================== CFS bandwidth: throttle

    /// kernel: fair.c check_cfs_rq_runtime() — throttle `cfs` if its runtime is gone (from
    /// put_prev_entity and pick_task_fair); true if it is throttled.
    pub(crate) fn check_cfs_rq_runtime(&mut self, cfs: CfsRqId) -> bool {
        if !self.cfs_rq_runtime_exhausted(cfs) {
            return false;
        }
        if self.cfs_rq_throttled(cfs) {
            return true;
        }
        self.throttle_cfs_rq(cfs)
    }

    /// kernel: fair.c check_enqueue_throttle() — the first entity enqueued on an idle
    /// cfs_rq: charge nothing, but throttle at once if the runtime is gone (an active group
    /// is throttled by the update_curr → put path instead).
    fn check_enqueue_throttle(&mut self, cfs: CfsRqId) {
        let c = &self.cfs[cfs.index()];
        if !c.runtime_enabled || c.curr.is_some() || c.throttled {
            return;
        }
        self.account_cfs_rq_runtime(cfs, 0);
        if self.cfs[cfs.index()].runtime_remaining <= 0 {
            self.throttle_cfs_rq(cfs);
        }
    }

    /// kernel: fair.c throttle_cfs_rq() @ v6.12..v6.17 — the group entity of `cfs` and any
    /// ancestor left empty leave their cfs_rqs (SLEEP|SPECIAL: never delayed; a delayed one
    /// is finished), the ancestors' counters and `rq.nr_running` drop by the group's tasks.
    /// An entity already off its queue (throttle at deactivation) only marks the throttle.
    /// False if runtime was found at the last moment.
    pub(crate) fn throttle_cfs_rq(&mut self, cfs: CfsRqId) -> bool {
        if !self.throttle_cfs_rq_begin(cfs) {
            return false;
        }
        if self.task_based_throttle() {
            // v6.18+ (e1fad12dcb66): nothing leaves the queue now; each task below is
            // throttled when it next returns to user space (`throttle_cfs_rq_work`)
            self.throttle_cfs_rq_end(cfs);
            return true;
        }
        let cpu = self.cfs[cfs.index()].cpu;
        let rq_h_nr_queued = self.cfs[self.rqs[cpu].cfs.index()].h_nr_queued;
        let c = &self.cfs[cfs.index()];
        let (queued_delta, runnable_delta, mut idle_delta) =
            (c.h_nr_queued, c.h_nr_runnable, c.h_nr_idle);
        let mut e = self.cfs[cfs.index()].my_se;
        let mut done = false;
        while let Some(se) = e {
            if !self.se[se.index()].on_rq {
                done = true;
                break;
            }
            let q = self.se[se.index()].cfs_rq;
            let mut flags = DEQUEUE_SLEEP | DEQUEUE_SPECIAL;
            if self.se[se.index()].sched_delayed {
                flags |= DEQUEUE_DELAYED;
            }
            self.dequeue_entity(q, se, flags);
            if self.cfs[self.se[se.index()].my_q.unwrap().index()].idle {
                idle_delta = queued_delta;
            }
            let qc = &mut self.cfs[q.index()];
            qc.h_nr_queued -= queued_delta;
            qc.h_nr_runnable -= runnable_delta;
            qc.h_nr_idle -= idle_delta;
            e = self.se[se.index()].parent;
            if self.cfs[q.index()].load.weight != 0 {
                break;
            }
        }
        if !done {
            while let Some(se) = e {
                if !self.se[se.index()].on_rq {
                    done = true;
                    break;
                }
                let q = self.se[se.index()].cfs_rq;
                self.update_load_avg(q, se, 0);
                if self.cfs[self.se[se.index()].my_q.unwrap().index()].idle {
                    idle_delta = queued_delta;
                }
                let qc = &mut self.cfs[q.index()];
                qc.h_nr_queued -= queued_delta;
                qc.h_nr_runnable -= runnable_delta;
                qc.h_nr_idle -= idle_delta;
                e = self.se[se.index()].parent;
            }
        }
        if !done {
            self.sub_nr_running(cpu, queued_delta);
            // as dequeue_entities: stop the fair_server when throttling empties the class
            if !self.cfg.has(P::DlServerLessAggr)
                && rq_h_nr_queued > 0
                && self.cfs[self.rqs[cpu].cfs.index()].h_nr_queued == 0
            {
                self.dl_server_stop(cpu);
            }
        }
        self.throttle_cfs_rq_end(cfs);
        true
    }

    /// kernel: fair.c unthrottle_cfs_rq() @ v6.12..v6.17 — the group entity (and ancestors
    /// it had emptied) is enqueued again as a wakeup, up to the first throttled cfs_rq; the
    /// counters and `rq.nr_running` grow by the group's tasks; an idle CPU is kicked.
    pub(crate) fn unthrottle_cfs_rq(&mut self, cfs: CfsRqId) {
        let cpu = self.cfs[cfs.index()].cpu;
        let rq_cfs = self.rqs[cpu].cfs;
        let nr = self.rqs[cpu].nr_running;
        if self.task_based_throttle() {
            // v6.18+: never unthrottle without runtime (an enqueue below would throttle again
            // at once); the tasks on the limbo lists of the levels no longer below a throttle
            // are enqueued again as wakeups (tg_unthrottle_up)
            let c = &self.cfs[cfs.index()];
            if c.runtime_enabled && c.runtime_remaining <= 0 {
                return;
            }
            for q in self.unthrottle_cfs_rq_begin(cfs) {
                for p in std::mem::take(&mut self.cfs[q.index()].throttled_limbo_list) {
                    self.enqueue_task_fair(p, ENQUEUE_WAKEUP);
                }
            }
            self.unthrottle_kick(cpu, nr);
            return;
        }
        self.unthrottle_cfs_rq_begin(cfs);
        let rq_h_nr_queued = self.cfs[rq_cfs.index()].h_nr_queued;
        if self.cfs[cfs.index()].load.weight != 0 {
            let c = &self.cfs[cfs.index()];
            let (queued_delta, runnable_delta, mut idle_delta) =
                (c.h_nr_queued, c.h_nr_runnable, c.h_nr_idle);
            let mut e = self.cfs[cfs.index()].my_se;
            let mut stop = false;
            while let Some(se) = e {
                let q = self.se[se.index()].cfs_rq;
                // Handle any unfinished DELAY_DEQUEUE business first.
                if self.se[se.index()].sched_delayed {
                    self.dequeue_entity(q, se, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
                } else if self.se[se.index()].on_rq {
                    break;
                }
                self.enqueue_entity(q, se, ENQUEUE_WAKEUP);
                if self.cfs[self.se[se.index()].my_q.unwrap().index()].idle {
                    idle_delta = queued_delta;
                }
                let qc = &mut self.cfs[q.index()];
                qc.h_nr_queued += queued_delta;
                qc.h_nr_runnable += runnable_delta;
                qc.h_nr_idle += idle_delta;
                e = self.se[se.index()].parent;
                if self.cfs[q.index()].throttled {
                    stop = true;
                    break;
                }
            }
            if !stop {
                while let Some(se) = e {
                    let q = self.se[se.index()].cfs_rq;
                    self.update_load_avg(q, se, UPDATE_TG);
                    if self.cfs[self.se[se.index()].my_q.unwrap().index()].idle {
                        idle_delta = queued_delta;
                    }
                    let qc = &mut self.cfs[q.index()];
                    qc.h_nr_queued += queued_delta;
                    qc.h_nr_runnable += runnable_delta;
                    qc.h_nr_idle += idle_delta;
                    e = self.se[se.index()].parent;
                    if self.cfs[q.index()].throttled {
                        stop = true;
                        break;
                    }
                }
            }
            if !stop {
                if rq_h_nr_queued == 0 && self.cfs[rq_cfs.index()].h_nr_queued > 0 {
                    self.dl_server_start(cpu);
                }
                self.add_nr_running(cpu, queued_delta);
            }
        }
        self.unthrottle_kick(cpu, nr);
    }

    /// The end of unthrottle_cfs_rq(): add_nr_running()'s tick dependency (a nohz_full CPU
    /// that now has two tasks needs its tick), and an idle CPU with work is woken.
    fn unthrottle_kick(&mut self, cpu: usize, nr_before: u32) {
        if nr_before < 2 && self.rqs[cpu].nr_running >= 2 {
            self.sched_update_tick_dependency(cpu);
        }
        // Determine whether we need to wake up a potentially idle CPU.
        if self.cpu_is_idle(cpu) && self.cfs[self.rqs[cpu].cfs.index()].nr_queued > 0 {
            self.resched_curr(cpu);
        }
    }

    /// kernel: fair.c task_throttle_setup_work() (v6.18+) — a task picked below a throttled
    /// cfs_rq gets the throttle task work (not kernel threads): it runs on the task's next
    /// return to user space (exec.rs).
    fn task_throttle_setup_work(&mut self, p: TaskId) {
        let t = &mut self.tasks[p.index()];
        if t.throttle_work || t.kthread || t.state == TaskState::Dead {
            return;
        }
        t.throttle_work = true;
    }

    /// kernel: fair.c throttle_cfs_rq_work() (v6.18+) — the task work on the return to user
    /// space of `p`, the running task of `cpu`: if its cfs_rq is still below a throttle,
    /// take it off the queue (SLEEP|THROTTLE, never delayed) onto that cfs_rq's limbo list,
    /// `p.on_rq` staying queued, and reschedule. True if it was throttled.
    pub(crate) fn throttle_cfs_rq_work(&mut self, cpu: usize, p: TaskId) -> bool {
        self.tasks[p.index()].throttle_work = false;
        if self.tasks[p.index()].class != SchedClass::Fair {
            return false;
        }
        let cfs = self.se[self.tasks[p.index()].se.index()].cfs_rq;
        if self.cfs[cfs.index()].throttle_count == 0 {
            return false;
        }
        self.update_rq_clock(cpu);
        self.dequeue_task_fair(p, DEQUEUE_SLEEP | DEQUEUE_THROTTLE);
        self.cfs[cfs.index()].throttled_limbo_list.push(p);
        self.tasks[p.index()].throttled = true;
        self.resched_curr(cpu);
        true
    }

    /// kernel: fair.c enqueue_throttled_task() (v6.18+) — a throttled task enqueued again
    /// (moved to another group or CPU) goes straight to the limbo list if its new cfs_rq is
    /// below a throttle and it is not running; otherwise it is enqueued for real.
    fn enqueue_throttled_task(&mut self, p: TaskId) -> bool {
        let cfs = self.se[self.tasks[p.index()].se.index()].cfs_rq;
        let cpu = self.cfs[cfs.index()].cpu;
        if self.throttled_hierarchy(cfs) && self.rqs[cpu].curr != p {
            self.cfs[cfs.index()].throttled_limbo_list.push(p);
            return true;
        }
        self.tasks[p.index()].throttled = false;
        false
    }

    /// kernel: fair.c dequeue_throttled_task() (v6.18+) — a throttled task dequeued again
    /// (a move, or it blocked): off the limbo list; a sleep ends its throttled state.
    /// Deviation: a migrating task's PELT signals are not detached here.
    fn dequeue_throttled_task(&mut self, p: TaskId, flags: u32) {
        let cfs = self.se[self.tasks[p.index()].se.index()].cfs_rq;
        self.cfs[cfs.index()]
            .throttled_limbo_list
            .retain(|&x| x != p);
        if flags & DEQUEUE_SLEEP != 0 {
            self.tasks[p.index()].throttled = false;
        }
    }

    /// kernel: fair.c tg_set_cfs_bandwidth() (ns; quota RUNTIME_INF = no limit): the pool
    /// side (fair_bandwidth.rs), then every throttled cfs_rq of the group is unthrottled.
    pub(crate) fn tg_set_cfs_bandwidth(&mut self, tg: TgId, period: u64, quota: u64, burst: u64) {
        for q in self.__tg_set_cfs_bandwidth(tg, period, quota, burst) {
            self.unthrottle_cfs_rq(q);
        }
    }

    /// The CFS bandwidth timers' work that needs the entity walks: unthrottle what the
    /// period or slack timer distributed runtime to.
    pub(crate) fn unthrottle_distributed(&mut self, list: Vec<CfsRqId>) {
        for q in list {
            if self.cfs_rq_throttled(q) {
                self.unthrottle_cfs_rq(q);
            }
        }
    }

    // ===================================================================== task groups (§10)

    /// kernel: fair.c alloc_fair_sched_group() + init_tg_cfs_entry() — per CPU, the group's
    /// cfs_rq and the entity that represents it on the parent's cfs_rq of that CPU, at
    /// NICE_0_LOAD until the first `update_cfs_group`. A group entity starts with no load
    /// signal (`init_entity_runnable_average` gives only tasks their weight); it is attached
    /// by `online_fair_sched_group` (fair_pelt.rs).
    /// Deviation: the entity's slice starts at the base slice (the kernel leaves it 0 until
    /// the first enqueue sets it; with min_slice propagation that is before it is placed).
    pub(crate) fn alloc_fair_sched_group(&mut self, tg: TgId, parent: TgId) {
        for cpu in 0..self.ncpus {
            let parent_cfs = self.tgs[parent.index()].cfs_rq[cpu];
            let parent_se = self.tgs[parent.index()].se[cpu];
            self.cfs.push(CfsRq::new(cpu, tg));
            if self.fair_policy.is_some() {
                // init_cfs_rq() @ v6.5
                self.cfs.last_mut().unwrap().zero_vruntime = crate::fair_cfs::INIT_MIN_VRUNTIME;
            }
            let q = CfsRqId::new(self.cfs.len() - 1);
            let mut se = SchedEntity::new(parent_cfs);
            se.my_q = Some(q);
            se.parent = parent_se;
            se.depth = parent_se.map_or(0, |p| self.se[p.index()].depth + 1);
            se.slice = self.base_slice;
            se.avg = crate::pelt::init_entity_runnable_average(false, 0);
            self.se.push(se);
            let sid = SeId::new(self.se.len() - 1);
            self.cfs[q.index()].my_se = Some(sid);
            let g = &mut self.tgs[tg.index()];
            g.cfs_rq.push(q);
            g.se.push(Some(sid));
        }
    }

    /// kernel: fair.c __sched_group_set_shares() — clamp to [MIN_SHARES, MAX_SHARES] and
    /// reweight the group's entity on every CPU (`update_cfs_group` after a PELT update of
    /// the entity and its ancestors).
    pub(crate) fn __sched_group_set_shares(&mut self, tg: TgId, shares: u64) {
        let shares = shares.clamp(scale_load(MIN_SHARES), scale_load(MAX_SHARES));
        if self.tgs[tg.index()].shares == shares {
            return;
        }
        self.tgs[tg.index()].shares = shares;
        for cpu in 0..self.ncpus {
            let Some(se) = self.tgs[tg.index()].se[cpu] else {
                continue;
            };
            self.update_rq_clock(cpu);
            // propagate the new weight up: every level is updated and reweighted
            let mut e = Some(se);
            while let Some(x) = e {
                let cfs = self.se[x.index()].cfs_rq;
                self.update_load_avg(cfs, x, UPDATE_TG);
                self.update_cfs_group(x);
                e = self.se[x.index()].parent;
            }
        }
    }

    /// kernel: fair.c sched_group_set_shares() — refused (EINVAL) while the group is idle.
    pub(crate) fn sched_group_set_shares(
        &mut self,
        tg: TgId,
        shares: u64,
    ) -> Result<(), &'static str> {
        if tg.index() == 0 {
            return Err("the root group's weight cannot be changed");
        }
        if self.tgs[tg.index()].idle {
            return Err("the group is idle (cpu.idle = 1): its weight is fixed");
        }
        self.__sched_group_set_shares(tg, shares);
        Ok(())
    }

    /// kernel: fair.c sched_group_set_idle() (fair.md §9.6): mark every per-CPU cfs_rq of
    /// the group idle (or not), move the group's queued tasks in or out of `h_nr_idle` of the
    /// ancestors up to the first idle one, then set the shares to WEIGHT_IDLEPRIO (idle) or
    /// back to NICE_0_LOAD. The kernel restores NICE_0_LOAD, not the weight the group had
    /// before (fair.md §9.6 says "restored": the kernel does not).
    pub(crate) fn sched_group_set_idle(
        &mut self,
        tg: TgId,
        idle: bool,
    ) -> Result<(), &'static str> {
        if tg.index() == 0 {
            return Err("the root group cannot be made idle");
        }
        if self.tgs[tg.index()].idle == idle {
            return Ok(());
        }
        self.tgs[tg.index()].idle = idle;
        for cpu in 0..self.ncpus {
            let q = self.tgs[tg.index()].cfs_rq[cpu];
            // the group entity changes idleness at its own level (`idle_nr_running`, kept by
            // the v6.5 class only)
            if let Some(gse) = self.tgs[tg.index()].se[cpu].filter(|_| self.fair_policy.is_some()) {
                if self.se[gse.index()].on_rq {
                    let pc = self.se[gse.index()].cfs_rq;
                    let c = &mut self.cfs[pc.index()];
                    if idle {
                        c.idle_nr_running += 1;
                    } else {
                        c.idle_nr_running -= 1;
                    }
                }
            }
            self.cfs[q.index()].idle = idle;
            let c = &self.cfs[q.index()];
            let mut delta = c.h_nr_queued as i64 - c.h_nr_idle as i64;
            if !idle {
                delta = -delta;
            }
            let mut e = self.tgs[tg.index()].se[cpu];
            while let Some(x) = e {
                if !self.se[x.index()].on_rq {
                    break;
                }
                let cfs = self.se[x.index()].cfs_rq;
                let c = &mut self.cfs[cfs.index()];
                c.h_nr_idle = (c.h_nr_idle as i64 + delta) as u32;
                if c.idle {
                    break; // counted as idle from here up already
                }
                e = self.se[x.index()].parent;
            }
        }
        let shares = if idle {
            scale_load(WEIGHT_IDLEPRIO)
        } else {
            NICE_0_LOAD
        };
        self.__sched_group_set_shares(tg, shares);
        Ok(())
    }

    /// kernel: fair.c task_change_group_fair() — detach the task's PELT signals from its old
    /// group's cfs_rq (`detach_task_cfs_rq`), point its entity at the new group's cfs_rq of
    /// its CPU (`set_task_rq`) and attach them there (`attach_task_cfs_rq`); both changes
    /// propagate to the root at once. The caller has dequeued the task; it is enqueued
    /// again after. A forked task not yet woken only changes group (wake_up_new_task
    /// attaches it).
    pub(crate) fn task_change_group_fair(&mut self, t: TaskId, tg: TgId) {
        let se = self.tasks[t.index()].se;
        let new = self.tasks[t.index()].state == TaskState::New;
        let pol = self.fair_policy;
        if !new {
            if let Some(pol) = pol {
                (pol.detach_task_cfs_rq)(self, t);
            }
            self.detach_task_cfs_rq(t);
            // "migrated"
            self.se[se.index()].avg.last_update_time = 0;
        }
        self.tasks[t.index()].tg = tg;
        self.set_task_rq(t);
        if !new {
            self.attach_task_cfs_rq(t);
            if let Some(pol) = pol {
                (pol.attach_task_cfs_rq)(self, t);
            }
        }
    }

    // ===================================================================== fork (§4.4)

    /// kernel: core.c __sched_fork() + fair.c task_fork_fair(): fair fields of a new task.
    pub(crate) fn sched_fork_fair(&mut self, child: TaskId, parent: Option<TaskId>) {
        if let Some(pol) = self.fair_policy {
            return (pol.task_fork_fair)(self, child, parent);
        }
        let cse = self.tasks[child.index()].se;
        let (slice, custom, rel) = match parent {
            Some(p) => {
                let pse = &self.se[self.tasks[p.index()].se.index()];
                (pse.slice, pse.custom_slice, pse.rel_deadline)
            }
            None => (self.base_slice, false, false),
        };
        let reset = self.tasks[child.index()].sched_reset_on_fork;
        self.set_vlag(cse, 0);
        let e = &mut self.se[cse.index()];
        e.vruntime = 0;
        e.sched_delayed = false;
        e.on_rq = false;
        e.exec_start = 0;
        e.sum_exec_runtime = 0;
        e.prev_sum_exec_runtime = 0;
        e.nr_migrations = 0;
        e.slice = slice;
        e.custom_slice = custom;
        // the child's se is a copy of the parent's until 3da56dc063cd clears rel_deadline
        e.rel_deadline = rel && !self.cfg.has(P::ForkRelDeadline);
        if reset || !self.cfg.has(P::CustomSlice) {
            e.custom_slice = false;
            e.slice = self.base_slice;
        }
    }

    /// `schedlab_pick`: the entity the fair pick chose at a switch.
    pub(crate) fn trace_pick(&mut self, cpu: usize, t: TaskId, reason: &'static str) {
        if self.trace.is_none() {
            return;
        }
        let se = self.tasks[t.index()].se;
        let cfs = self.se[se.index()].cfs_rq;
        let e = &self.se[se.index()];
        let (v, d, slice) = (e.vruntime, e.deadline, e.slice);
        let lag = self.avg_vruntime(cfs).wrapping_sub(v) as i64;
        let ev = TraceEvent::SchedlabPick {
            comm: self.tasks[t.index()].comm.as_str(),
            pid: self.tasks[t.index()].pid,
            vruntime: v,
            deadline: d,
            lag,
            slice,
            eligible: lag >= 0,
            reason,
        };
        emit!(self, cpu, "d..2.", ev);
    }
}

/// Fair-class operations counted for the cost model and the run summary (fair.md §14).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FairOp {
    Enqueue,
    Dequeue,
    DelayDequeue,
    Requeue,
    RequeueReplaced,
    PickDelayedDequeue,
    PickRestart,
    WakeupPreempt,
    // ---- v6.5 CFS only (fair_cfs.rs; cfs.md §15.1) ----
    CfsPlace,
    CfsTickExpired,
    CfsTickVdiff,
    CfsNextBuddyPicked,
    CfsLastBuddyPicked,
    CfsSkipAvoided,
    CfsLastBuddySet,
}

impl FairOp {
    pub const COUNT: usize = 15;
    pub const ALL: [FairOp; 15] = [
        FairOp::Enqueue,
        FairOp::Dequeue,
        FairOp::DelayDequeue,
        FairOp::Requeue,
        FairOp::RequeueReplaced,
        FairOp::PickDelayedDequeue,
        FairOp::PickRestart,
        FairOp::WakeupPreempt,
        FairOp::CfsPlace,
        FairOp::CfsTickExpired,
        FairOp::CfsTickVdiff,
        FairOp::CfsNextBuddyPicked,
        FairOp::CfsLastBuddyPicked,
        FairOp::CfsSkipAvoided,
        FairOp::CfsLastBuddySet,
    ];

    /// Counted only by the v6.5 class.
    fn cfs_only(self) -> bool {
        (self as usize) >= FairOp::CfsPlace as usize
    }

    /// Whether the class counts it: the CFS class (`cfs`) has no delayed dequeue, the EEVDF
    /// class none of the CFS counters.
    pub fn counted_by(self, cfs: bool) -> bool {
        let delayed = matches!(
            self,
            FairOp::DelayDequeue
                | FairOp::Requeue
                | FairOp::RequeueReplaced
                | FairOp::PickDelayedDequeue
        );
        if cfs {
            !delayed
        } else {
            !self.cfs_only()
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            FairOp::Enqueue => "enqueue",
            FairOp::Dequeue => "dequeue",
            FairOp::DelayDequeue => "dequeue_delayed",
            FairOp::Requeue => "requeue_delayed",
            FairOp::RequeueReplaced => "requeue_replaced",
            FairOp::PickDelayedDequeue => "pick_delayed_dequeue",
            FairOp::PickRestart => "pick_restart",
            FairOp::WakeupPreempt => "wakeup_preempt",
            FairOp::CfsPlace => "place_entity",
            FairOp::CfsTickExpired => "tick_slice_expired",
            FairOp::CfsTickVdiff => "tick_vruntime_lead",
            FairOp::CfsNextBuddyPicked => "next_buddy_picked",
            FairOp::CfsLastBuddyPicked => "last_buddy_picked",
            FairOp::CfsSkipAvoided => "skip_buddy_passed",
            FairOp::CfsLastBuddySet => "last_buddy_set",
        }
    }
}

#[cfg(test)]
mod tests {
    //! Arithmetic vectors of fair.md §13.3; expected values are the spec's (or hand
    //! calculations written beside the assertion).
    use super::*;
    use crate::presets::{KernelConfig, PreemptModel};
    use crate::syscalls::{Ctx, Op, Program, SysResult, TaskAttrs};
    use crate::MachineDesc;

    struct Idle;
    impl Program for Idle {
        fn next(&mut self, _cx: &mut Ctx<'_>, _l: SysResult) -> Op {
            Op::Run(1)
        }
    }

    fn kern(spec: &str) -> Kernel {
        let cfg = KernelConfig::parse(spec).unwrap();
        Kernel::new(cfg, MachineDesc::ideal(1, 1000, PreemptModel::Full), 1).unwrap()
    }

    /// A task entity with the given nice (or SCHED_IDLE), not queued.
    fn ent(k: &mut Kernel, nice: i32, idle: bool) -> SeId {
        let attrs = TaskAttrs {
            nice: Some(nice),
            policy: Some(if idle { Policy::Idle } else { Policy::Normal }),
            ..Default::default()
        };
        let t = k.create_task(Box::new(Idle), &attrs, None, false);
        k.tasks[t.index()].se
    }

    /// Puts `se` on the root cfs_rq at (v, d) — in the tree, or as curr.
    fn put(k: &mut Kernel, se: SeId, v: u64, d: u64, curr: bool) {
        let cfs = k.rqs[0].cfs;
        let e = &mut k.se[se.index()];
        e.vruntime = v;
        e.deadline = d;
        e.slice = 3_000_000;
        e.on_rq = true;
        k.account_entity_enqueue(cfs, se);
        if curr {
            k.cfs[cfs.index()].curr = Some(se);
        } else {
            k.__enqueue_entity(cfs, se);
        }
    }

    #[test]
    fn tv1_weight_tables() {
        // fair.md TV-1
        assert_eq!(SCHED_PRIO_TO_WEIGHT[0], 88761);
        assert_eq!(scale_load(SCHED_PRIO_TO_WEIGHT[0] as u64), 90_891_264);
        assert_eq!(SCHED_PRIO_TO_WMULT[0], 48388);
        assert_eq!(scale_load(SCHED_PRIO_TO_WEIGHT[20] as u64), NICE_0_LOAD);
        assert_eq!(SCHED_PRIO_TO_WMULT[20], 4_194_304);
        assert_eq!(SCHED_PRIO_TO_WEIGHT[39], 15);
        assert_eq!(SCHED_PRIO_TO_WMULT[39], 286_331_153);
        assert_eq!(scale_load(WEIGHT_IDLEPRIO), 3072);
        assert_eq!(scale_load_down(3072), 3);
        assert_eq!(scale_load_down(1024), 2);
        assert_eq!(scale_load_down(0), 0);
        // Table check against independent computations (STYLE.md: tables are checked, not
        // trusted): weight ≈ 1024 / 1.25^nice within 3 %, wmult within 1 of 2^32/weight, and
        // exactly the four entries fair.md §1.2 names (nice 13, 14, 16, 17) are one below
        // round-to-nearest.
        for i in 0..40 {
            let nice = i as i32 - 20;
            let w = SCHED_PRIO_TO_WEIGHT[i] as f64;
            let ideal = 1024.0 / 1.25f64.powi(nice);
            assert!((w / ideal - 1.0).abs() < 0.03, "weight of nice {nice}");
            let exact = 4294967296.0 / w;
            let m = SCHED_PRIO_TO_WMULT[i] as f64;
            assert!((m - exact).abs() <= 1.0, "wmult of nice {nice}");
            let below = (exact.round() - m) == 1.0;
            assert_eq!(
                below,
                [13, 14, 16, 17].contains(&nice),
                "rounding of nice {nice}"
            );
        }
        // adjacent entries differ by about 1.25 (fair.md §1.2 property)
        for i in 1..40 {
            let r = SCHED_PRIO_TO_WEIGHT[i - 1] as f64 / SCHED_PRIO_TO_WEIGHT[i] as f64;
            assert!((1.15..1.35).contains(&r), "ratio at {i}: {r}");
        }
    }

    #[test]
    fn tv2_calc_delta_fair_both_variants() {
        // fair.md TV-2: (nice, idle, delta, Variant A, Variant B)
        let rows: &[(i32, bool, u64, u64, u64)] = &[
            (0, false, 123_456, 123_456, 123_456),
            (5, false, 1_000_000, 3_056_716, 3_056_716),
            (5, false, 3_000_000, 9_170_149, 9_170_149),
            (5, false, 6_000_000, 18_340_298, 18_340_298),
            (5, false, 4_000_000, 12_226_865, 12_226_865),
            (-5, false, 1_000_000, 328_099, 328_099),
            (-5, false, 3_000_000, 984_299, 984_299),
            (5, false, 2_800_000, 8_558_806, 8_558_805),
            (0, true, 1_000_000, 341_333_333, 341_333_333),
            (0, true, 3_000_000, 1_023_999_999, 1_024_000_000),
        ];
        let mut a = kern("v7.0");
        let mut b = kern("v7.1");
        for &(nice, idle, d, va, vb) in rows {
            let sa = ent(&mut a, nice, idle);
            let sb = ent(&mut b, nice, idle);
            assert_eq!(
                a.calc_delta_fair(d, sa),
                va,
                "A nice {nice} idle {idle} {d}"
            );
            assert_eq!(
                b.calc_delta_fair(d, sb),
                vb,
                "B nice {nice} idle {idle} {d}"
            );
        }
        // 3 × calc(1 ms) = 9 170 148 < calc(3 ms) for nice 5 (a nice-5 task needs 4 ticks)
        let s = ent(&mut a, 5, false);
        assert_eq!(3 * a.calc_delta_fair(1_000_000, s), 9_170_148);
    }

    #[test]
    fn tv3_eligibility_equality() {
        // fair.md TV-3-arith: tree key 3 000 000, curr key 0, both aw 1024: V = z + 1 500 000
        let mut k = kern("v6.18");
        let cfs = k.rqs[0].cfs;
        let c = ent(&mut k, 0, false);
        let t = ent(&mut k, 0, false);
        put(&mut k, c, 0, 3_000_000, true);
        put(&mut k, t, 3_000_000, 6_000_000, false);
        assert_eq!(k.avg_vruntime(cfs), 1_500_000);
        assert!(k.vruntime_eligible(cfs, 1_500_000));
        assert!(!k.vruntime_eligible(cfs, 1_500_001));
    }

    #[test]
    fn tv4_floor_average() {
        // fair.md TV-4: tree key -3 (aw 2), curr key 0 (aw 2): S = -6, W = 4, V = z - 2
        let mut k = kern("v6.18");
        let cfs = k.rqs[0].cfs;
        let c = ent(&mut k, 0, false);
        let t = ent(&mut k, 0, false);
        for se in [c, t] {
            k.se[se.index()].load = LoadWeight {
                weight: 2048,
                inv_weight: 0,
            };
        }
        let z = 1_000_000u64;
        k.cfs[cfs.index()].zero_vruntime = z;
        put(&mut k, c, z, z + 10, true);
        put(&mut k, t, z - 3, z + 10, false);
        assert_eq!(k.avg_vruntime(cfs), z - 2);
    }

    #[test]
    fn tv7_lag_clamp_per_version() {
        // fair.md TV-7: nice 0, slice 3 ms, HZ=1000, raw lag -10 ms, all slices 3 ms:
        // v6.6–v6.19 -> -6 000 000 (2 x slice), v7.0/v7.1 -> -4 000 000 (max_slice + tick);
        // nice 5: -18 340 298 resp. -12 226 865 (calc_delta_fair of 6 ms resp. 4 ms, TV-2).
        for (spec, nice, expect) in [
            ("v6.6", 0, -6_000_000i64),
            ("v6.19", 0, -6_000_000),
            ("v7.0", 0, -4_000_000),
            ("v7.1", 0, -4_000_000),
            ("v6.18", 5, -18_340_298),
            ("v7.0", 5, -12_226_865),
        ] {
            let mut k = kern(spec);
            let cfs = k.rqs[0].cfs;
            let (c, se) = (ent(&mut k, 0, false), ent(&mut k, nice, false));
            // V ends well below se's vruntime: raw lag far beyond the clamp
            put(&mut k, c, 0, 3_000_000, true);
            put(&mut k, se, 40_000_000, 43_000_000, false);
            let raw = k.avg_vruntime(cfs) as i64 - 40_000_000;
            assert!(raw < -12_226_865 - 1_000_000);
            k.update_entity_lag(cfs, se);
            assert_eq!(k.se[se.index()].vlag, expect, "{spec} nice {nice}");
        }
        // a positive lag within the clamp is unchanged
        let mut k = kern("v7.0");
        let cfs = k.rqs[0].cfs;
        let (c, se) = (ent(&mut k, 0, false), ent(&mut k, 0, false));
        put(&mut k, c, 5_000_000, 8_000_000, true);
        put(&mut k, se, 0, 3_000_000, false);
        // V = 2 500 000, lag of se = +2 500 000
        k.update_entity_lag(cfs, se);
        assert_eq!(k.se[se.index()].vlag, 2_500_000);
    }

    #[test]
    fn tv8_placement_with_lag() {
        // fair.md TV-8: curr and one tree entity, nice 0 (Wq = 2048), V = V0; a nice-0 task with
        // vlag +1 500 000 is placed at V0 - 2 250 000 with deadline V0 + 750 000; the new
        // average is V0 - 750 000 and the lag w.r.t. it is exactly +1 500 000.
        for place_lag in [true, false] {
            let spec = if place_lag {
                "v6.18 base_slice_ns=3000000"
            } else {
                "v6.18 base_slice_ns=3000000 NO_PLACE_LAG"
            };
            let mut k = kern(spec);
            let cfs = k.rqs[0].cfs;
            let (c, t, w) = (
                ent(&mut k, 0, false),
                ent(&mut k, 0, false),
                ent(&mut k, 0, false),
            );
            put(&mut k, c, 10_000_000, 13_000_000, true);
            put(&mut k, t, 10_000_000, 13_000_000, false);
            let v0 = k.avg_vruntime(cfs);
            assert_eq!(v0, 10_000_000);
            k.set_vlag(w, 1_500_000);
            k.place_entity(cfs, w, ENQUEUE_WAKEUP);
            let e = &k.se[w.index()];
            if place_lag {
                assert_eq!(e.vruntime, v0 - 2_250_000);
                assert_eq!(e.deadline, v0 + 750_000);
                k.account_entity_enqueue(cfs, w);
                k.se[w.index()].on_rq = true;
                k.__enqueue_entity(cfs, w);
                let v1 = k.avg_vruntime(cfs);
                assert_eq!(v1, v0 - 750_000);
                assert_eq!(v1 as i64 - k.se[w.index()].vruntime as i64, 1_500_000);
            } else {
                assert_eq!(e.vruntime, v0);
                assert_eq!(e.deadline, v0 + 3_000_000);
            }
        }
    }

    #[test]
    fn tv9_fork_placement() {
        // fair.md TV-9: parent alone at V = 1 000 000, slice 3 ms: child v = 1 000 000,
        // deadline 2 500 000 (half slice); NO_PLACE_DEADLINE_INITIAL: 4 000 000.
        for (spec, d) in [
            ("v6.18 base_slice_ns=3000000", 2_500_000),
            (
                "v6.18 base_slice_ns=3000000 NO_PLACE_DEADLINE_INITIAL",
                4_000_000,
            ),
        ] {
            let mut k = kern(spec);
            let cfs = k.rqs[0].cfs;
            let (p, c) = (ent(&mut k, 0, false), ent(&mut k, 0, false));
            put(&mut k, p, 1_000_000, 4_000_000, true);
            k.place_entity(cfs, c, ENQUEUE_INITIAL);
            assert_eq!(k.se[c.index()].vruntime, 1_000_000);
            assert_eq!(k.se[c.index()].deadline, d, "{spec}");
        }
    }

    #[test]
    fn tv9_fork_placement_of_a_sched_idle_child() {
        // TV-9 with a SCHED_IDLE child (a fork under `chrt --idle 0`): v = V = 1 000 000, and
        // half of its vslice = calc_delta_fair(3 ms, SCHED_IDLE) (fair.md TV-2: 1 023 999 999
        // up to v7.0, 1 024 000 000 in v7.1): deadline V + 511 999 999 resp. V + 512 000 000.
        for (spec, d) in [
            ("v6.19 base_slice_ns=3000000", 1_000_000 + 511_999_999),
            ("v7.1 base_slice_ns=3000000", 1_000_000 + 512_000_000),
        ] {
            let mut k = kern(spec);
            let cfs = k.rqs[0].cfs;
            let (p, c) = (ent(&mut k, 0, false), ent(&mut k, 0, true));
            put(&mut k, p, 1_000_000, 4_000_000, true);
            k.place_entity(cfs, c, ENQUEUE_INITIAL);
            assert_eq!(k.se[c.index()].vruntime, 1_000_000, "{spec}");
            assert_eq!(k.se[c.index()].deadline, d, "{spec}");
        }
    }

    #[test]
    fn tv11_reweight_on_queue() {
        // fair.md TV-11-arith: V = 10 ms, v = 8 ms, d = 11 ms, w 1 048 576 -> 2 097 152.
        // Setup: curr C (nice 0) at 12 ms and the entity at 8 ms give V = 10 ms.
        // v6.7–v6.12 and v7.1: v' = 9 000 000, d' = 10 500 000; v6.6.0: v' = 8 000 000,
        // d' = 8 000 000 + 3 000 000 / 2 = 9 500 000.
        // v6.13–v7.0 (hand calculation of the place_entity sequence, non-curr entity): the
        // average without the entity is 12 ms; the saved lag 2 ms scaled by 1/2 is 1 ms,
        // inflated by (1024 + 2048)/1024 to 3 ms: v' = 9 ms; relative deadline 3 ms -> 1.5 ms:
        // d' = 10.5 ms.
        for (spec, v, d) in [
            ("v6.6", 8_000_000u64, 9_500_000u64),
            ("v6.12", 9_000_000, 10_500_000),
            ("v6.18", 9_000_000, 10_500_000),
            ("v7.0", 9_000_000, 10_500_000),
            ("v7.1", 9_000_000, 10_500_000),
        ] {
            let mut k = kern(&format!("{spec} base_slice_ns=3000000"));
            let cfs = k.rqs[0].cfs;
            let (c, se) = (ent(&mut k, 0, false), ent(&mut k, 0, false));
            put(&mut k, c, 12_000_000, 15_000_000, true);
            put(&mut k, se, 8_000_000, 11_000_000, false);
            k.se[c.index()].exec_start = k.now; // no runtime to charge
            assert_eq!(k.avg_vruntime(cfs), 10_000_000);
            k.reweight_entity(cfs, se, 2 * NICE_0_LOAD, 0);
            assert_eq!(k.se[se.index()].vruntime, v, "{spec} vruntime");
            assert_eq!(k.se[se.index()].deadline, d, "{spec} deadline");
            k.check_cfs_rq(cfs).unwrap();
        }
    }

    #[test]
    fn tv10_group_shares_formula() {
        // fair.md TV-10-arith: tg.shares 1 048 576, local load 2048, tg.load_avg 4096 with
        // local contribution 2048 -> shares 524 288; all load local -> 1 048 576.
        let mut k = kern("v6.18");
        let tg = TgId(0);
        let _ = tg;
        k.tgs.push(TaskGroup {
            path: "/g".into(),
            parent: Some(TgId(0)),
            shares: NICE_0_LOAD,
            idle: false,
            cfs_rq: vec![],
            se: vec![],
            load_avg: 4096,
            cfs_bandwidth: Default::default(),
            usage_ns: 0,
        });
        let mut c = CfsRq::new(0, TgId(1));
        c.load.weight = 2 * NICE_0_LOAD;
        c.avg.load_avg = 2048;
        c.tg_load_avg_contrib = 2048;
        k.cfs.push(c);
        let id = CfsRqId::new(k.cfs.len() - 1);
        assert_eq!(k.calc_group_shares(id), 524_288);
        k.tgs[1].load_avg = 2048;
        assert_eq!(k.calc_group_shares(id), 1_048_576);
    }

    /// A running on CPU 0 (curr at v/d, protected to `vprot`), C in the tree.
    fn setup_ac(k: &mut Kernel, a: (u64, u64, u64), c: (u64, u64)) -> (TaskId, TaskId) {
        let ta = k.create_task(Box::new(Idle), &TaskAttrs::default(), None, false);
        let tc = k.create_task(Box::new(Idle), &TaskAttrs::default(), None, false);
        let (sa, sc) = (k.tasks[ta.index()].se, k.tasks[tc.index()].se);
        put(k, sa, a.0, a.1, true);
        put(k, sc, c.0, c.1, false);
        k.se[sa.index()].vprot = a.2;
        k.se[sa.index()].vlag = a.2 as i64; // the storage union of pre-v7.0 kernels
        for t in [ta, tc] {
            k.tasks[t.index()].on_rq = crate::sched::OnRq::Queued;
            k.tasks[t.index()].state = TaskState::Running;
        }
        k.rqs[0].nr_running = 2;
        let root = k.rqs[0].cfs;
        k.cfs[root.index()].h_nr_queued = 2;
        k.cfs[root.index()].h_nr_runnable = 2;
        k.rqs[0].curr = ta;
        (ta, tc)
    }

    /// Wakes a new nice-0 task B with saved lag `vlag` (and a custom slice) and runs the
    /// wakeup-preemption check; returns (B, preempted).
    fn wake_b(k: &mut Kernel, vlag: i64, slice: Option<u64>) -> (TaskId, bool) {
        let tb = k.create_task(Box::new(Idle), &TaskAttrs::default(), None, false);
        let sb = k.tasks[tb.index()].se;
        if let Some(sl) = slice {
            k.apply_custom_slice(tb, sl);
        } else {
            k.se[sb.index()].slice = 3_000_000;
        }
        k.set_vlag(sb, vlag);
        k.enqueue_task_fair(tb, ENQUEUE_WAKEUP);
        k.tasks[tb.index()].on_rq = crate::sched::OnRq::Queued;
        k.tasks[tb.index()].state = TaskState::Running;
        k.check_preempt_wakeup_fair(0, tb, WF_TTWU, true);
        (tb, k.rqs[0].resched != Resched::None)
    }

    #[test]
    fn tv15_wakeup_with_positive_lag_preempts() {
        // fair.md TV-15: A curr (v 2 ms, d 3 ms, protected), C tree (v 1 ms, d 4 ms); B wakes
        // with vlag +1 ms: V before 1.5 ms, inflated lag 1 ms x 3072/2048 = 1.5 ms -> v_B = 0,
        // d_B = 3 ms; A ineligible (V after = 1 ms) -> B (d 3 ms) beats C (d 4 ms): preempt in
        // every preset. With vlag 0: v_B = 1.5 ms, d_B = 4.5 ms, C is picked: no preemption.
        for v in ["v6.12", "v6.18", "v6.19", "v7.0", "v7.1"] {
            let spec = format!("{v} base_slice_ns=3000000");
            let mut k = kern(&spec);
            setup_ac(
                &mut k,
                (2_000_000, 3_000_000, 3_000_000),
                (1_000_000, 4_000_000),
            );
            let (b, pre) = wake_b(&mut k, 1_000_000, None);
            let e = &k.se[k.tasks[b.index()].se.index()];
            assert_eq!((e.vruntime, e.deadline), (0, 3_000_000), "{v}");
            assert!(pre, "{v}: B must preempt");
            let mut k = kern(&spec);
            setup_ac(
                &mut k,
                (2_000_000, 3_000_000, 3_000_000),
                (1_000_000, 4_000_000),
            );
            let (b, pre) = wake_b(&mut k, 0, None);
            let e = &k.se[k.tasks[b.index()].se.index()];
            assert_eq!((e.vruntime, e.deadline), (1_500_000, 4_500_000), "{v}");
            assert!(!pre, "{v}: no preemption by B");
        }
    }

    #[test]
    fn tv16_protected_curr_blocks_normal_slice_wakee() {
        // fair.md TV-16: A curr v 200 000, d 3 ms, protected (vprot 3 ms); C v 1 ms, d 4 ms;
        // V = 600 000. B wakes (vlag 0, slice 3 ms): v_B 600 000, d_B 3.6 ms. A eligible and
        // protected -> no preemption in every preset; v6.19+ update_protect_slice leaves
        // vprot = min(3 ms, 200 000 + 3 ms) = 3 ms.
        for v in ["v6.12", "v6.18", "v6.19", "v7.0", "v7.1"] {
            let mut k = kern(&format!("{v} base_slice_ns=3000000"));
            let (a, _) = setup_ac(
                &mut k,
                (200_000, 3_000_000, 3_000_000),
                (1_000_000, 4_000_000),
            );
            let (b, pre) = wake_b(&mut k, 0, None);
            let e = &k.se[k.tasks[b.index()].se.index()];
            assert_eq!((e.vruntime, e.deadline), (600_000, 3_600_000), "{v}");
            assert!(!pre, "{v}");
            assert_eq!(k.se[k.tasks[a.index()].se.index()].vprot, 3_000_000, "{v}");
        }
    }

    #[test]
    fn tv17_preempt_short_and_the_self_buddy() {
        // fair.md TV-17: as TV-16 but B has a 100 µs custom slice: v_B 600 000, d_B 700 000.
        let a0 = (200_000, 3_000_000, 3_000_000);
        let c0 = (1_000_000, 4_000_000);
        let run = |spec: &str, self_buddy: bool| -> (bool, u64, Option<SeId>) {
            let mut k = kern(spec);
            let (a, _) = setup_ac(&mut k, a0, c0);
            let sa = k.tasks[a.index()].se;
            if self_buddy {
                let root = k.rqs[0].cfs;
                k.cfs[root.index()].next = Some(sa);
            }
            let (_, pre) = wake_b(&mut k, 0, Some(100_000));
            let root = k.rqs[0].cfs;
            (pre, k.se[sa.index()].vprot, k.cfs[root.index()].next)
        };
        // NO_PREEMPT_SHORT, v6.12–v6.18: no preemption, protection kept (to 3 ms)
        for v in ["v6.12", "v6.18"] {
            let (pre, vprot, _) = run(
                &format!("{v} base_slice_ns=3000000 NO_PREEMPT_SHORT"),
                false,
            );
            assert!(!pre && vprot == 3_000_000, "{v}");
        }
        // NO_PREEMPT_SHORT, v6.19+: no preemption, vprot(A) = 200 000 + 100 000
        let (pre, vprot, _) = run("v6.19 base_slice_ns=3000000 NO_PREEMPT_SHORT", false);
        assert!(!pre);
        assert_eq!(vprot, 300_000);
        // v6.12 and v6.18 PREEMPT_SHORT: immediate preemption; v6.18: vprot(A) := v = 200 000
        assert!(run("v6.12 base_slice_ns=3000000", false).0);
        let (pre, vprot, _) = run("v6.18 base_slice_ns=3000000", false);
        assert!(pre);
        assert_eq!(vprot, 200_000);
        // v6.19 / v7.0 with the self-buddy: the short probe returns A -> no preemption,
        // vprot(A) = 300 000; without a buddy: immediate preemption.
        for v in ["v6.19", "v7.0"] {
            let (pre, vprot, next) = run(&format!("{v} base_slice_ns=3000000"), true);
            assert!(!pre, "{v}: self-buddy blocks the short wakee");
            assert_eq!(vprot, 300_000, "{v}");
            assert!(next.is_some());
            assert!(run(&format!("{v} base_slice_ns=3000000"), false).0, "{v}");
        }
        // v7.1: the short probe ignores the buddy -> preemption, and next is cleared
        let (pre, _, next) = run("v7.1 base_slice_ns=3000000", true);
        assert!(pre);
        assert_eq!(next, None);
        // v7.0 continued: at A's next tick (A reaches v = 1.2 ms) protection has ended -> resched,
        // clear_buddies; V = floor((1.2 + 1.0 + 0.6) ms / 3) = 933 333 -> A ineligible -> B runs.
        let mut k = kern("v7.0 base_slice_ns=3000000");
        let (a, _) = setup_ac(&mut k, a0, c0);
        let sa = k.tasks[a.index()].se;
        let root = k.rqs[0].cfs;
        k.cfs[root.index()].next = Some(sa);
        let (b, _) = wake_b(&mut k, 0, Some(100_000));
        k.now = 1_000_000;
        k.update_rq_clock(0); // the tick takes the rq lock and updates the clock
        k.update_curr(root);
        assert_eq!(k.se[sa.index()].vruntime, 1_200_000);
        assert_eq!(k.rqs[0].resched, Resched::Full);
        assert_eq!(k.cfs[root.index()].next, None);
        assert_eq!(k.avg_vruntime(root), 933_333);
        assert_eq!(k.__pick_eevdf(root, true), Some(k.tasks[b.index()].se));
    }

    #[test]
    fn tv21_yield() {
        // fair.md TV-21: A curr v 1 ms, d 3 ms; B tree v 1.5 ms, d 4.5 ms; A yields.
        // v6.6–v6.18: d_A = 6 ms, v_A unchanged, V = 1.25 ms, A eligible, B not -> A again.
        // v6.19/v7.0: A eligible -> v_A = 3 ms, d_A = 6 ms; V = 2.25 ms -> A ineligible -> B.
        for (v, a_again) in [
            ("v6.12", true),
            ("v6.18", true),
            ("v6.19", false),
            ("v7.0", false),
        ] {
            let mut k = kern(&format!("{v} base_slice_ns=3000000"));
            let (a, b) = setup_ac(&mut k, (1_000_000, 3_000_000, 0), (1_500_000, 4_500_000));
            let sa = k.tasks[a.index()].se;
            k.yield_task_fair(0);
            let root = k.rqs[0].cfs;
            let (va, da) = (k.se[sa.index()].vruntime, k.se[sa.index()].deadline);
            if a_again {
                assert_eq!((va, da), (1_000_000, 6_000_000), "{v}");
                assert_eq!(k.__pick_eevdf(root, true), Some(sa), "{v}");
            } else {
                assert_eq!((va, da), (3_000_000, 6_000_000), "{v}");
                assert_eq!(
                    k.__pick_eevdf(root, true),
                    Some(k.tasks[b.index()].se),
                    "{v}"
                );
            }
        }
    }

    #[test]
    fn tv22_sched_idle_and_batch_wakeups() {
        // fair.md TV-22: curr SCHED_IDLE, a normal task wakes -> resched in every preset; curr
        // normal, a SCHED_IDLE or SCHED_BATCH task wakes with an earlier eligible deadline ->
        // never a wakeup preemption.
        for v in ["v6.6", "v6.12", "v6.18", "v6.19", "v7.0", "v7.1"] {
            let spec = format!("{v} base_slice_ns=3000000");
            let mut k = kern(&spec);
            let (a, _) = setup_ac(
                &mut k,
                (10_000_000, 13_000_000, 0),
                (10_000_000, 13_000_000),
            );
            k.tasks[a.index()].policy = Policy::Idle;
            let (_, pre) = wake_b(&mut k, 0, None);
            assert!(pre, "{v}: a normal wakee preempts a SCHED_IDLE curr");
            for pol in [Policy::Idle, Policy::Batch] {
                let mut k = kern(&spec);
                setup_ac(&mut k, (2_000_000, 3_000_000, 0), (1_000_000, 4_000_000));
                let tb = k.create_task(
                    Box::new(Idle),
                    &TaskAttrs {
                        policy: Some(pol),
                        ..Default::default()
                    },
                    None,
                    false,
                );
                let sb = k.tasks[tb.index()].se;
                k.set_vlag(sb, 1_000_000);
                k.enqueue_task_fair(tb, ENQUEUE_WAKEUP);
                k.check_preempt_wakeup_fair(0, tb, WF_TTWU, true);
                assert_eq!(k.rqs[0].resched, Resched::None, "{v} {pol:?}");
            }
        }
    }

    #[test]
    fn tv24_buddy_honouring() {
        // fair.md TV-24: yield_to(B) from A; B eligible but with a later deadline than C:
        // v6.6–v6.13 default -> the pick ignores the buddy; v6.14+ (PICK_BUDDY) -> B.
        for (v, b_picked) in [("v6.12", false), ("v6.18", true), ("v7.0", true)] {
            let mut k = kern(&format!("{v} base_slice_ns=3000000"));
            let (a, c) = setup_ac(&mut k, (3_000_000, 6_000_000, 0), (1_000_000, 4_000_000));
            let tb = k.create_task(Box::new(Idle), &TaskAttrs::default(), None, false);
            let sb = k.tasks[tb.index()].se;
            put(&mut k, sb, 1_500_000, 5_000_000, false);
            let _ = a;
            assert!(k.yield_to_task_fair(0, tb));
            let picked = k.pick_task_fair(0).unwrap();
            if b_picked {
                assert_eq!(picked, tb, "{v}");
            } else {
                assert_eq!(picked, c, "{v}: EEVDF order (earliest eligible deadline)");
            }
        }
    }

    /// A task B in the tree at (v, d) with a 3 ms slice, queued and runnable, then the
    /// wakeup-preemption check with `wf`; returns (B, preempted).
    fn wake_at(k: &mut Kernel, v: u64, d: u64, wf: u32) -> (TaskId, bool) {
        let tb = k.create_task(Box::new(Idle), &TaskAttrs::default(), None, false);
        let sb = k.tasks[tb.index()].se;
        put(k, sb, v, d, false);
        k.tasks[tb.index()].on_rq = crate::sched::OnRq::Queued;
        k.tasks[tb.index()].state = TaskState::Running;
        let root = k.rqs[0].cfs;
        k.cfs[root.index()].h_nr_queued += 1;
        k.cfs[root.index()].h_nr_runnable += 1;
        k.rqs[0].nr_running += 1;
        k.check_preempt_wakeup_fair(0, tb, wf, true);
        (tb, k.rqs[0].resched != Resched::None)
    }

    /// Issue #14 / fair.md §6.7, the NEXT_BUDDY reimplementation as posted (v5:
    /// e837456fdca8 with the forced-resched block) and after 15257cc2f905. A curr at v 2 ms
    /// (d 3 ms, protected to 3 ms), C in the tree at v 1 ms (d 4 ms): V = 1.5 ms, so A is
    /// ineligible. B wakes at V (v 1.5 ms, d 4.5 ms). NEXT_BUDDY off in both, to isolate the
    /// block (with it on, B would become the buddy and win the probe either way).
    /// v5: an ineligible waker in task context → resched. With 15257cc2f905: the probe runs
    /// and returns C (A ineligible, hence unprotected; C's 4 ms before B's 4.5 ms) → none.
    #[test]
    fn next_buddy_v5_reschedules_an_ineligible_waker_and_the_revert_does_not() {
        for (spec, resched) in [
            ("v6.18+aceccac58ad7+e837456fdca8", true),
            ("v6.18+aceccac58ad7+e837456fdca8+15257cc2f905", false),
        ] {
            let mut k = kern(&format!("{spec} NO_NEXT_BUDDY base_slice_ns=3000000"));
            setup_ac(
                &mut k,
                (2_000_000, 3_000_000, 3_000_000),
                (1_000_000, 4_000_000),
            );
            let (_, pre) = wake_at(&mut k, 1_500_000, 4_500_000, WF_TTWU);
            assert_eq!(pre, resched, "{spec}");
        }
    }

    /// fair.md §6.7 preempt_sync: A curr at v 1 ms (d 4 ms, protected), C at v 2 ms (d 5 ms):
    /// V = 1.5 ms, A eligible. B wakes with WF_SYNC at v 0 (d 3 ms, before A's 4 ms), NEXT_BUDDY
    /// on: set_preempt_buddy makes B the buddy; preempt_sync measures A's run time since the
    /// hook's update_curr, 0 < 500 us → Action::None: no resched, B stays the buddy.
    #[test]
    fn next_buddy_sync_wakee_becomes_the_buddy_without_a_resched() {
        let mut k = kern("v6.18+aceccac58ad7+e837456fdca8+15257cc2f905 base_slice_ns=3000000");
        setup_ac(
            &mut k,
            (1_000_000, 4_000_000, 4_000_000),
            (2_000_000, 5_000_000),
        );
        let (b, pre) = wake_at(&mut k, 0, 3_000_000, WF_TTWU | WF_SYNC);
        assert!(!pre);
        let root = k.rqs[0].cfs;
        assert_eq!(k.cfs[root.index()].next, Some(k.tasks[b.index()].se));
    }

    /// fair.md §6.7 set_preempt_buddy: C (v 1 ms, d 3 ms) is already the buddy; B wakes at
    /// v 1.5 ms with d 4.5 ms, later than C's: the older buddy is kept, the probe returns it
    /// (eligible: v 1 ms ≤ V) and B does not preempt A (v 2 ms, d 5 ms).
    #[test]
    fn next_buddy_keeps_an_older_buddy_with_an_earlier_deadline() {
        let mut k = kern("v6.18+aceccac58ad7+e837456fdca8+15257cc2f905 base_slice_ns=3000000");
        let (_, c) = setup_ac(
            &mut k,
            (2_000_000, 5_000_000, 5_000_000),
            (1_000_000, 3_000_000),
        );
        let root = k.rqs[0].cfs;
        let sc = k.tasks[c.index()].se;
        k.cfs[root.index()].next = Some(sc);
        let (_, pre) = wake_at(&mut k, 1_500_000, 4_500_000, WF_TTWU);
        assert!(!pre);
        assert_eq!(k.cfs[root.index()].next, Some(sc));
    }

    /// fair.md §6.7 / §6.9 "fork, parent unprotected, child earlier deadline": A curr at
    /// v 1 ms (d 3.5 ms, protection used up: vprot = v), C at v 2 ms (d 6 ms); the child B at
    /// V = 1.5 ms with half a slice, d 3 ms. v6.18: the probe picks B (earliest eligible
    /// deadline) → preempt. v6.19 / v7.0: WF_FORK returns before the probe → never.
    #[test]
    fn a_forked_child_preempts_until_v6_19_and_never_after() {
        for (v, preempts) in [("v6.18", true), ("v6.19", false), ("v7.0", false)] {
            let mut k = kern(&format!("{v} base_slice_ns=3000000"));
            setup_ac(
                &mut k,
                (1_000_000, 3_500_000, 1_000_000),
                (2_000_000, 6_000_000),
            );
            let (_, pre) = wake_at(&mut k, 1_500_000, 3_000_000, WF_FORK);
            assert_eq!(pre, preempts, "{v}");
        }
    }
}
