//! fair.c's use of PELT: `update_load_avg` for entities and cfs_rqs, attach/detach on
//! migration, util_est at enqueue/dequeue, group shares (`calc_group_shares`) with
//! `tg->load_avg`, the propagation of a group cfs_rq's attach/detach/removal to its group
//! entity and up to the root (`propagate_entity_load_avg`, `*_entity_cfs_rq`), and the
//! CPU-level signals SMP placement reads (smp.md §5, §9).

use crate::features::Feature as F;
use crate::patches::Patch as P;
use crate::pelt;
use crate::sched::*;
use crate::Kernel;

// Actions of update_load_avg() (fair.c's local flags).
/// Publish `tg->load_avg` if the cfs_rq's load changed.
pub(crate) const UPDATE_TG: u32 = 0x1;
// SKIP_AGE_LOAD (0x2) is only used by attach_entity_cfs_rq() without ATTACH_AGE_LOAD, which is
// on in every preset and not modelled.
/// From `enqueue_entity()`: attach an entity with no history (new or migrated).
pub(crate) const DO_ATTACH: u32 = 0x4;
/// From `dequeue_entity()` of a task being migrated by the balancer: detach it.
pub(crate) const DO_DETACH: u32 = 0x8;

impl Kernel {
    /// `cfs_rq_clock_pelt()`: the PELT clock of the cfs_rq's CPU. With capacity and frequency
    /// invariance time runs slower on slower CPUs (smp.md §5.1).
    pub(crate) fn cfs_rq_clock_pelt(&self, cfs: CfsRqId) -> u64 {
        let cpu = self.cfs[cfs.index()].cpu;
        self.rq_clock_pelt(cpu)
    }

    /// kernel: pelt.h rq_clock_pelt() — as `update_rq_clock()` would leave it now: on a CPU at
    /// full capacity and frequency the task clock; elsewhere `clock_pelt` advanced by the
    /// running time since the last switch scaled by capacity and frequency
    /// (`update_rq_clock_pelt()`), or synced to the task clock while the CPU idles, minus the
    /// idle time lost by a saturated CPU (smp.md §5.1; pelt.rs `PeltClock`).
    pub(crate) fn rq_clock_pelt(&self, cpu: usize) -> u64 {
        let rq = &self.rqs[cpu];
        let (cap, freq) = (rq.capacity_orig, self.machine.freq_scale[cpu]);
        if cap >= 1024 && freq >= 1024 {
            return self.now;
        }
        let pc = &rq.pelt_clock;
        if self.tasks[rq.curr.index()].is_idle_task {
            return self.now - pc.lost_idle_time;
        }
        pc.clock_pelt + crate::pelt::scale_pelt_delta(self.now - rq.pelt_stamp, cap, freq)
            - pc.lost_idle_time
    }

    /// At a context switch on `cpu` (before `rq->curr` changes): bring `clock_pelt` up to
    /// now for the outgoing task (`update_rq_clock_pelt()`), and when the CPU is about to idle
    /// apply the lost-idle-time rule (`update_idle_rq_clock_pelt()`, with the root cfs_rq's
    /// `util_sum`; RT and DL utilisation are not tracked).
    pub(crate) fn pelt_clock_switch(&mut self, cpu: usize, next_is_idle: bool) {
        let now = self.now;
        let (cap, freq) = (self.rqs[cpu].capacity_orig, self.machine.freq_scale[cpu]);
        if cap >= 1024 && freq >= 1024 {
            return;
        }
        let prev_idle = self.tasks[self.rqs[cpu].curr.index()].is_idle_task;
        let util_sum = self.cfs[self.rqs[cpu].cfs.index()].avg.util_sum;
        let rq = &mut self.rqs[cpu];
        let delta = now - rq.pelt_stamp;
        rq.pelt_clock
            .update_rq_clock_pelt(delta, prev_idle, now, now, cap, freq);
        rq.pelt_stamp = now;
        if next_is_idle && !prev_idle {
            rq.pelt_clock
                .update_idle_rq_clock_pelt(util_sum, 0, 0, now, now);
        }
    }

    pub(crate) fn pelt_fold(&self) -> bool {
        self.cfg.has(P::ZeroVruntimeTracking) // v7.0 batch: 089d84203ad4 + 6ab7973f2540
    }

    /// The cfs_rq's runnable input per version (smp.md §5.2 table).
    fn cfs_nr_runnable(&self, cfs: CfsRqId) -> u64 {
        let c = &self.cfs[cfs.index()];
        if self.cfg.has(P::HNrDelayed) || self.cfg.has(P::HNrRunnable) {
            c.h_nr_runnable as u64
        } else {
            c.h_nr_queued as u64
        }
    }

    /// kernel: fair.c update_load_avg() — the entity (unless it has no history), then its
    /// cfs_rq (pending removals first), then a group entity takes over its cfs_rq's pending
    /// change (`propagate_entity_load_avg`), then attach (`DO_ATTACH`) or detach
    /// (`DO_DETACH`), then `tg->load_avg` (`UPDATE_TG`).
    ///
    /// Deviation kept from the first version for a CPU's root cfs_rq: a task with no history
    /// (new, or migrated by a wakeup) is attached at its first update while queued (pick,
    /// tick or dequeue), not by `enqueue_entity()`'s `DO_ATTACH`. Group cfs_rqs attach at
    /// enqueue as the kernel does, so that the change reaches the root through the same
    /// enqueue walk. A group entity is attached once, when its group comes online
    /// ([`Self::online_fair_sched_group`]); a zero stamp on it is just time 0.
    pub(crate) fn update_load_avg(&mut self, cfs: CfsRqId, se: SeId, flags: u32) {
        let now = self.cfs_rq_clock_pelt(cfs);
        let fold = self.pelt_fold();
        let e = &self.se[se.index()];
        let w = scale_load_down(e.load.weight);
        let running = self.cfs[cfs.index()].curr == Some(se);
        let is_task = e.task.is_some();
        let runnable: u64 = if is_task {
            let delayed_excluded = self.cfg.has(P::PeltTaskRunnableDelayed);
            (e.on_rq && !(delayed_excluded && e.sched_delayed)) as u64
        } else {
            u64::from(e.runnable_weight)
        };
        let on_rq = e.on_rq;
        let needs_attach = is_task && e.avg.last_update_time == 0;
        let util_est = self.cfg.feat(F::UTIL_EST);
        if !needs_attach {
            let sa = &mut self.se[se.index()].avg;
            pelt::__update_load_avg_se(now, sa, w, on_rq, runnable, running, util_est);
        }
        let lw = scale_load_down(self.cfs[cfs.index()].load.weight);
        let nr = self.cfs_nr_runnable(cfs);
        let curr = self.cfs[cfs.index()].curr.is_some();
        let c = &mut self.cfs[cfs.index()];
        let mut removed = c.removed;
        let had_removed = removed.nr != 0;
        let (decayed, prop) =
            pelt::update_cfs_rq_load_avg(now, &mut c.avg, &mut removed, lw, nr, curr, fold);
        c.removed = removed;
        if !is_task || needs_attach || had_removed || flags & DO_DETACH != 0 {
            self.update_load_avg_tail(cfs, se, flags, decayed, prop, needs_attach && on_rq);
        } else if decayed && flags & UPDATE_TG != 0 {
            self.update_tg_load_avg(cfs);
        }
    }

    /// The rest of [`Self::update_load_avg`] when there is anything to propagate, attach or
    /// detach (kept out of line: a queued task's plain update skips it).
    #[inline(never)]
    fn update_load_avg_tail(
        &mut self,
        cfs: CfsRqId,
        se: SeId,
        flags: u32,
        mut decayed: bool,
        prop: Option<i64>,
        attach_queued: bool,
    ) {
        if let Some(r) = prop {
            let c = &mut self.cfs[cfs.index()];
            pelt::add_tg_cfs_propagate(&mut c.propagate, &mut c.prop_runnable_sum, r);
        }
        if self.se[se.index()].task.is_none() {
            decayed |= self.propagate_entity_load_avg(se);
        }
        let needs_attach =
            self.se[se.index()].task.is_some() && self.se[se.index()].avg.last_update_time == 0;
        let attach = attach_queued
            || (needs_attach && flags & DO_ATTACH != 0 && self.cfs[cfs.index()].my_se.is_some());
        if attach {
            self.attach_entity_load_avg(cfs, se);
            self.update_tg_load_avg(cfs);
        }
        if flags & DO_DETACH != 0 {
            // (an entity attached at time 0 still reads as unattached: leave it)
            if self.se[se.index()].avg.last_update_time != 0 {
                self.detach_entity_load_avg(cfs, se);
                self.update_tg_load_avg(cfs);
            }
        } else if !attach && decayed && flags & UPDATE_TG != 0 {
            self.update_tg_load_avg(cfs);
        }
    }

    /// kernel: fair.c attach_entity_load_avg() — align the entity on the cfs_rq's window, add
    /// its signals, and mark the load change for the group entity above.
    fn attach_entity_load_avg(&mut self, cfs: CfsRqId, se: SeId) {
        let fold = self.pelt_fold();
        let w = scale_load_down(self.se[se.index()].load.weight);
        let mut sa = self.se[se.index()].avg;
        let c = &mut self.cfs[cfs.index()];
        let r = pelt::attach_entity_load_avg(&mut c.avg, &mut sa, w, fold);
        pelt::add_tg_cfs_propagate(&mut c.propagate, &mut c.prop_runnable_sum, r);
        self.se[se.index()].avg = sa;
    }

    /// kernel: fair.c detach_entity_load_avg() — subtract the entity's signals and mark the
    /// load change for the group entity above.
    fn detach_entity_load_avg(&mut self, cfs: CfsRqId, se: SeId) {
        let fold = self.pelt_fold();
        let w = scale_load_down(self.se[se.index()].load.weight);
        let sa = self.se[se.index()].avg;
        let c = &mut self.cfs[cfs.index()];
        let r = pelt::detach_entity_load_avg(&mut c.avg, &sa, w, fold);
        pelt::add_tg_cfs_propagate(&mut c.propagate, &mut c.prop_runnable_sum, r);
    }

    /// kernel: fair.c propagate_entity_load_avg() — if the group entity's cfs_rq has a pending
    /// change, pass it on to the parent cfs_rq's pending change, and bring the entity's util
    /// and runnable (copied) and load (estimated) up to date, adjusting the parent by the
    /// differences (pelt.rs `update_tg_cfs_*`). True if something was propagated.
    fn propagate_entity_load_avg(&mut self, se: SeId) -> bool {
        let Some(gcfs) = self.se[se.index()].my_q else {
            return false;
        };
        if !self.cfs[gcfs.index()].propagate {
            return false;
        }
        let fold = self.pelt_fold();
        let g = &mut self.cfs[gcfs.index()];
        g.propagate = false;
        let (gavg, gw, mut prop) = (g.avg, scale_load_down(g.load.weight), g.prop_runnable_sum);
        let cfs = self.se[se.index()].cfs_rq;
        let w = scale_load_down(self.se[se.index()].load.weight);
        let mut sa = self.se[se.index()].avg;
        let c = &mut self.cfs[cfs.index()];
        pelt::add_tg_cfs_propagate(&mut c.propagate, &mut c.prop_runnable_sum, prop);
        pelt::update_tg_cfs_util(&mut c.avg, &mut sa, &gavg);
        pelt::update_tg_cfs_runnable(&mut c.avg, &mut sa, &gavg, fold);
        pelt::update_tg_cfs_load(&mut c.avg, &mut sa, w, &gavg, gw, &mut prop, fold);
        self.cfs[gcfs.index()].prop_runnable_sum = prop;
        self.se[se.index()].avg = sa;
        true
    }

    /// kernel: fair.c propagate_entity_cfs_rq() — after an attach or detach outside the
    /// enqueue/dequeue walks, update every ancestor entity so the change reaches the root
    /// now. (No bandwidth throttling is modelled, so the walk never stops early.)
    fn propagate_entity_cfs_rq(&mut self, se: SeId) {
        // a throttled cfs_rq keeps the change until it is unthrottled
        if self.cfs[self.se[se.index()].cfs_rq.index()].throttled {
            return;
        }
        let mut e = self.se[se.index()].parent;
        while let Some(x) = e {
            let cfs = self.se[x.index()].cfs_rq;
            self.update_load_avg(cfs, x, UPDATE_TG);
            if self.cfs[cfs.index()].throttled {
                break;
            }
            e = self.se[x.index()].parent;
        }
    }

    /// kernel: fair.c detach_entity_cfs_rq() — catch up with the cfs_rq, remove the entity's
    /// signals, publish `tg->load_avg`, propagate to the root. Nothing to do for an entity
    /// that was never attached (a forked task not yet woken, a woken task not yet enqueued).
    pub(crate) fn detach_entity_cfs_rq(&mut self, se: SeId) {
        if self.se[se.index()].avg.last_update_time == 0 {
            return;
        }
        let cfs = self.se[se.index()].cfs_rq;
        self.update_load_avg(cfs, se, 0);
        self.detach_entity_load_avg(cfs, se);
        self.update_tg_load_avg(cfs);
        self.propagate_entity_cfs_rq(se);
    }

    /// kernel: fair.c attach_entity_cfs_rq() — synchronise with the cfs_rq (aging the entity
    /// first: `ATTACH_AGE_LOAD`, on in every preset; without it the kernel skips the aging, which
    /// makes no difference here because every caller attaches an entity with a zero stamp),
    /// add its signals, publish `tg->load_avg`, propagate to the root.
    pub(crate) fn attach_entity_cfs_rq(&mut self, se: SeId) {
        let cfs = self.se[se.index()].cfs_rq;
        self.update_load_avg(cfs, se, 0);
        self.attach_entity_load_avg(cfs, se);
        self.update_tg_load_avg(cfs);
        self.propagate_entity_cfs_rq(se);
    }

    /// kernel: fair.c detach_task_cfs_rq()
    pub(crate) fn detach_task_cfs_rq(&mut self, p: TaskId) {
        let se = self.tasks[p.index()].se;
        self.detach_entity_cfs_rq(se);
    }

    /// kernel: fair.c attach_task_cfs_rq()
    pub(crate) fn attach_task_cfs_rq(&mut self, p: TaskId) {
        let se = self.tasks[p.index()].se;
        self.attach_entity_cfs_rq(se);
    }

    /// kernel: fair.c online_fair_sched_group() — attach a new group's entity on every CPU
    /// (its signals are zero; this aligns it on its parent cfs_rq's window).
    pub(crate) fn online_fair_sched_group(&mut self, tg: TgId) {
        for cpu in 0..self.ncpus {
            if let Some(se) = self.tgs[tg.index()].se[cpu] {
                self.attach_entity_cfs_rq(se);
            }
        }
    }

    /// kernel: sched.h se_update_runnable() — a group entity's PELT runnable input follows its
    /// cfs_rq's runnable count only where the kernel refreshes it: after the entity's load
    /// update in enqueue_entity/dequeue_entity and in the rest of the enqueue/dequeue walks.
    pub(crate) fn se_update_runnable(&mut self, se: SeId) {
        if let Some(q) = self.se[se.index()].my_q {
            self.se[se.index()].runnable_weight = self.cfs_nr_runnable(q) as u32;
        }
    }

    /// kernel: fair.c update_tg_load_avg() — publish this cfs_rq's contribution to
    /// `tg->load_avg` (only on a > 1/64 change; at most once per ms from 1528c661c24b, v6.7:
    /// cfs.md §15.2).
    pub(crate) fn update_tg_load_avg(&mut self, cfs: CfsRqId) {
        let tg = self.cfs[cfs.index()].tg;
        if tg.index() == 0 {
            return;
        }
        let now = self.now;
        let c = &self.cfs[cfs.index()];
        if self.cfg.has(P::TgLoadAvgRatelimit)
            && now.saturating_sub(c.last_update_tg_load_avg) < 1_000_000
            && c.last_update_tg_load_avg != 0
        {
            return;
        }
        let delta = c.avg.load_avg as i64 - c.tg_load_avg_contrib as i64;
        if delta.unsigned_abs() > c.tg_load_avg_contrib / 64 {
            self.tgs[tg.index()].load_avg += delta;
            let c = &mut self.cfs[cfs.index()];
            c.tg_load_avg_contrib = c.avg.load_avg;
            c.last_update_tg_load_avg = now;
        }
    }

    /// kernel: fair.c calc_group_shares() (fair.md §10.4, smp.md §9.3).
    pub(crate) fn calc_group_shares(&self, gcfs: CfsRqId) -> u64 {
        let c = &self.cfs[gcfs.index()];
        let tg = &self.tgs[c.tg.index()];
        let s = tg.shares;
        let load = scale_load_down(c.load.weight).max(c.avg.load_avg);
        let tgw = tg.load_avg - c.tg_load_avg_contrib as i64 + load as i64;
        let mut shares = s as u128 * load as u128;
        if tgw > 0 {
            shares /= tgw as u128;
        }
        (shares as u64).clamp(2, s)
    }

    /// kernel: fair.c post_init_entity_util_avg() at wake_up_new_task (smp.md §5.5).
    pub(crate) fn post_init_entity_util_avg(&mut self, t: TaskId) {
        let se = self.tasks[t.index()].se;
        let cpu = self.tasks[t.index()].cpu;
        let cfs = self.se[se.index()].cfs_rq;
        let w = scale_load_down(self.se[se.index()].load.weight);
        let mut sa = pelt::init_entity_runnable_average(true, w);
        let (cu, cl) = (
            self.cfs[cfs.index()].avg.util_avg,
            self.cfs[cfs.index()].avg.load_avg,
        );
        let cap = self.rqs[cpu].capacity_orig;
        pelt::post_init_entity_util_avg(&mut sa, cu, cl, w, cap);
        sa.last_update_time = 0;
        self.se[se.index()].avg = sa;
    }

    /// kernel: fair.c migrate_task_rq_fair() (from set_task_cpu()). A wakeup migration (the
    /// task is not queued): sync the task's signals to its old cfs_rq and queue them for
    /// removal there (`remove_entity_load_avg`). A balancer migration (`TASK_ON_RQ_MIGRATING`)
    /// was already detached by `dequeue_entity()` (`DO_DETACH`). Either way the zero stamp
    /// tells the new CPU to attach. The saved lag is kept (lag is CPU-independent).
    pub(crate) fn migrate_task_rq_fair(&mut self, p: TaskId, _new_cpu: usize) {
        let se = self.tasks[p.index()].se;
        let cfs = self.se[se.index()].cfs_rq;
        let migrating = self.tasks[p.index()].on_rq == OnRq::Migrating;
        if !migrating && self.se[se.index()].avg.last_update_time != 0 {
            let now = self.cfs[cfs.index()].avg.last_update_time;
            let w = scale_load_down(self.se[se.index()].load.weight);
            let sa = &mut self.se[se.index()].avg;
            pelt::__update_load_avg_blocked_se(now, sa, w);
            let sa = self.se[se.index()].avg;
            pelt::remove_entity_load_avg(&mut self.cfs[cfs.index()].removed, &sa);
        }
        self.se[se.index()].avg.last_update_time = 0;
        // "We have migrated, no longer consider this task hot": here since e8f331bcc270; in
        // v6.5 the destination's enqueue_entity(ENQUEUE_MIGRATED) does it, after placement
        if self.cfg.has(crate::patches::Patch::LagCrossRqPlacement) {
            self.se[se.index()].exec_start = 0;
        }
    }

    /// reweight_entity()'s load-average part (group entities only: a task's reweight keeps
    /// the first version's omission so that runs without groups are unchanged).
    pub(crate) fn reweight_load_avg(&mut self, cfs: CfsRqId, se: SeId, old: u64, new: u64) {
        let fold = self.pelt_fold();
        let (ow, nw) = (scale_load_down(old), scale_load_down(new));
        let mut sa = self.se[se.index()].avg;
        pelt::reweight_load_avg(&mut self.cfs[cfs.index()].avg, &mut sa, ow, nw, fold);
        self.se[se.index()].avg = sa;
    }

    /// The "tell the new CPU we are migrated" part of `migrate_task_rq_fair()` for a task
    /// moved while queued, called between its dequeue (which detached it, `DO_DETACH`) and
    /// `set_task_cpu()`.
    pub(crate) fn migrate_task_rq_fair_lb(&mut self, p: TaskId) {
        let se = self.tasks[p.index()].se;
        self.se[se.index()].avg.last_update_time = 0;
    }

    /// util_est of the root cfs_rq at enqueue (not for a delayed task being migrated or
    /// restored).
    pub(crate) fn util_est_enqueue(&mut self, t: TaskId, flags: u32) {
        if !self.cfg.feat(F::UTIL_EST) {
            return;
        }
        let se = self.tasks[t.index()].se;
        if self.se[se.index()].sched_delayed && flags & (ENQUEUE_RESTORE | ENQUEUE_MIGRATING) != 0 {
            return;
        }
        let cpu = self.tasks[t.index()].cpu;
        let root = self.rqs[cpu].cfs;
        let est = pelt::_task_util_est(self.se[se.index()].avg.util_est);
        pelt::util_est_enqueue(&mut self.cfs[root.index()].util_est, est);
    }

    pub(crate) fn util_est_dequeue(&mut self, t: TaskId) {
        if !self.cfg.feat(F::UTIL_EST) {
            return;
        }
        let se = self.tasks[t.index()].se;
        let cpu = self.tasks[t.index()].cpu;
        let root = self.rqs[cpu].cfs;
        let est = pelt::_task_util_est(self.se[se.index()].avg.util_est);
        pelt::util_est_dequeue(&mut self.cfs[root.index()].util_est, est);
        // the EWMA is updated when the task goes to sleep
        if self.tasks[t.index()].state != TaskState::Running {
            let e = &self.se[se.index()];
            let cap = self.rqs[cpu].capacity_orig;
            let decay_above = self.cfg.has(P::ReweightPlaceConstraints); // v6.16 batch
            let v = pelt::util_est_update(
                e.avg.util_est,
                e.avg.util_avg,
                e.avg.runnable_avg,
                cap,
                decay_above,
            );
            self.se[se.index()].avg.util_est = v;
        }
    }

    // ---- CPU-level signals (smp.md §5.3) ----

    /// `cpu_load()`: the root cfs_rq's load_avg.
    pub fn cpu_load(&self, cpu: usize) -> u64 {
        self.cfs[self.rqs[cpu].cfs.index()].avg.load_avg
    }

    /// `cpu_runnable()`
    pub fn cpu_runnable(&self, cpu: usize) -> u64 {
        self.cfs[self.rqs[cpu].cfs.index()].avg.runnable_avg
    }

    /// `cpu_util_cfs()`: max(util_avg, util_est) clipped to capacity.
    pub fn cpu_util_cfs(&self, cpu: usize) -> u64 {
        let c = &self.cfs[self.rqs[cpu].cfs.index()];
        let mut u = c.avg.util_avg;
        if self.cfg.feat(F::UTIL_EST) {
            u = u.max(c.util_est as u64);
        }
        u.min(self.rqs[cpu].capacity_orig)
    }

    /// `task_util_est()`
    pub fn task_util_est(&self, t: TaskId) -> u64 {
        let se = &self.se[self.tasks[t.index()].se.index()];
        pelt::task_util_est(se.avg.util_avg, se.avg.util_est)
    }

    /// `h_load` of a cfs_rq (smp.md §9.4; fair.c update_cfs_rq_h_load() @ v6.17): the root's
    /// load_avg, scaled down the hierarchy by each group entity's share of its parent's load,
    /// `h(child) = h(parent) · ge.load_avg / (parent.load_avg + 1)` at every level (checked on
    /// a nested /p/c by a cgroup.rs test). Deviation: recomputed on every call instead of
    /// being cached per jiffy (caching would change root-only runs too).
    fn cfs_h_load(&self, cfs: CfsRqId) -> u64 {
        let c = &self.cfs[cfs.index()];
        match c.my_se {
            None => c.avg.load_avg,
            Some(gse) => {
                let pcfs = self.se[gse.index()].cfs_rq;
                let parent_h = self.cfs_h_load(pcfs);
                parent_h * self.se[gse.index()].avg.load_avg
                    / (self.cfs[pcfs.index()].avg.load_avg + 1)
            }
        }
    }

    /// kernel: fair.c task_h_load() @ v6.17:
    /// `p.load_avg · h_load(cfs_rq) / (cfs_rq.load_avg + 1)`.
    pub fn task_h_load(&self, t: TaskId) -> u64 {
        let se = &self.se[self.tasks[t.index()].se.index()];
        let cfs = se.cfs_rq;
        se.avg.load_avg * self.cfs_h_load(cfs) / (self.cfs[cfs.index()].avg.load_avg + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::{KernelConfig, PreemptModel};
    use crate::MachineDesc;

    /// A group cfs_rq of a child of the root group on CPU 0 (load 2048, nothing published).
    fn group_cfs(spec: &str) -> (Kernel, CfsRqId) {
        let cfg = KernelConfig::parse(spec).unwrap();
        let mut k = Kernel::new(cfg, MachineDesc::ideal(1, 1000, PreemptModel::Full), 1).unwrap();
        k.tgs.push(TaskGroup {
            path: "/g".into(),
            parent: Some(TgId(0)),
            shares: NICE_0_LOAD,
            idle: false,
            cfs_rq: vec![],
            se: vec![],
            load_avg: 0,
            cfs_bandwidth: Default::default(),
            usage_ns: 0,
        });
        let tg = TgId(k.tgs.len() as u32 - 1);
        let mut c = CfsRq::new(0, tg);
        c.avg.load_avg = 2048;
        k.cfs.push(c);
        let id = CfsRqId::new(k.cfs.len() - 1);
        (k, id)
    }

    #[test]
    fn tg_load_avg_rate_limit_from_v6_7() {
        // cfs.md §15.2: no rate limit in v6.5/v6.6; 1528c661c24b (v6.7) publishes a cfs_rq's
        // contribution at most once per ms. At t = 5 ms: +2048 published in both. At 5.5 ms the
        // load is 4096 (change 2048 > 2048/64): v6.6 publishes (tg 4096), v6.12 waits.
        for (spec, at_5_5ms) in [("v6.5", 4096), ("v6.6", 4096), ("v6.12", 2048)] {
            let (mut k, c) = group_cfs(spec);
            let tg = k.cfs[c.index()].tg;
            k.now = 5_000_000;
            k.update_tg_load_avg(c);
            assert_eq!(k.tgs[tg.index()].load_avg, 2048, "{spec}");
            k.now = 5_500_000;
            k.cfs[c.index()].avg.load_avg = 4096;
            k.update_tg_load_avg(c);
            assert_eq!(k.tgs[tg.index()].load_avg, at_5_5ms, "{spec}");
            // a full ms after the last publication both publish
            k.now = 6_000_000;
            k.update_tg_load_avg(c);
            assert_eq!(k.tgs[tg.index()].load_avg, 4096, "{spec}");
        }
    }
}
