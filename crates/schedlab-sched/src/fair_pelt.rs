//! fair.c's use of PELT: `update_load_avg` for entities and cfs_rqs, attach/detach on
//! migration, util_est at enqueue/dequeue, group shares (`calc_group_shares`) with
//! `tg->load_avg`, and the CPU-level signals SMP placement reads (smp.md §5, §9).
//!
//! Deviation: the propagation of a child cfs_rq's load change to its group entity
//! (`propagate_entity_load_avg`) is not modelled; group entities accumulate their own signals
//! from their weight and queued state like task entities.

use crate::features::Feature as F;
use crate::patches::Patch as P;
use crate::pelt;
use crate::sched::*;
use crate::Kernel;

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

    /// kernel: fair.c update_load_avg() — entity, then its cfs_rq; attach a new or migrated
    /// entity; publish `tg->load_avg` when asked.
    pub(crate) fn update_load_avg_se(&mut self, cfs: CfsRqId, se: SeId, update_tg: bool) {
        let now = self.cfs_rq_clock_pelt(cfs);
        let fold = self.pelt_fold();
        let e = &self.se[se.index()];
        let w = scale_load_down(e.load.weight);
        let running = self.cfs[cfs.index()].curr == Some(se);
        let runnable: u64 = match e.task {
            Some(_) => {
                let delayed_excluded = self.cfg.has(P::PeltTaskRunnableDelayed);
                (e.on_rq && !(delayed_excluded && e.sched_delayed)) as u64
            }
            None => {
                let q = e.my_q.unwrap();
                self.cfs_nr_runnable(q)
            }
        };
        let on_rq = e.on_rq;
        let needs_attach = e.avg.last_update_time == 0;
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
        let (decayed, _) =
            pelt::update_cfs_rq_load_avg(now, &mut c.avg, &mut removed, lw, nr, curr, fold);
        c.removed = removed;
        if needs_attach && on_rq {
            let mut sa = self.se[se.index()].avg;
            pelt::attach_entity_load_avg(&mut self.cfs[cfs.index()].avg, &mut sa, w, fold);
            self.se[se.index()].avg = sa;
            self.update_tg_load_avg(cfs);
        } else if decayed && update_tg {
            self.update_tg_load_avg(cfs);
        }
    }

    /// kernel: fair.c update_tg_load_avg() — publish this cfs_rq's contribution to
    /// `tg->load_avg` (at most once per ms, and only on a > 1/64 change, v6.7+).
    pub(crate) fn update_tg_load_avg(&mut self, cfs: CfsRqId) {
        let tg = self.cfs[cfs.index()].tg;
        if tg.index() == 0 {
            return;
        }
        let now = self.now;
        let c = &self.cfs[cfs.index()];
        if now.saturating_sub(c.last_update_tg_load_avg) < 1_000_000
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

    /// kernel: fair.c migrate_task_rq_fair() for a wakeup migration: sync the task's signals
    /// to its old cfs_rq and queue them for removal there; it attaches at its next enqueue.
    /// The saved lag is kept (lag is CPU-independent).
    pub(crate) fn migrate_task_rq_fair(&mut self, p: TaskId, _new_cpu: usize) {
        let se = self.tasks[p.index()].se;
        let cfs = self.se[se.index()].cfs_rq;
        if self.se[se.index()].avg.last_update_time != 0 {
            let now = self.cfs[cfs.index()].avg.last_update_time;
            let w = scale_load_down(self.se[se.index()].load.weight);
            let sa = &mut self.se[se.index()].avg;
            pelt::__update_load_avg_blocked_se(now, sa, w);
            let sa = self.se[se.index()].avg;
            pelt::remove_entity_load_avg(&mut self.cfs[cfs.index()].removed, &sa);
        }
        self.se[se.index()].avg.last_update_time = 0;
        self.se[se.index()].exec_start = 0;
    }

    /// PELT side of a balancer migration (the task is queued: detach synchronously; its
    /// signals attach at the destination enqueue). Deviation: modelled as remove + re-attach.
    #[allow(dead_code)] // used by balance.rs
    pub(crate) fn migrate_task_rq_fair_lb(&mut self, p: TaskId) {
        let se = self.tasks[p.index()].se;
        let cfs = self.se[se.index()].cfs_rq;
        let fold = self.pelt_fold();
        let w = scale_load_down(self.se[se.index()].load.weight);
        let sa = self.se[se.index()].avg;
        if sa.last_update_time != 0 {
            pelt::detach_entity_load_avg(&mut self.cfs[cfs.index()].avg, &sa, w, fold);
        }
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

    /// `h_load` of a cfs_rq (smp.md §9.4): the root's load_avg, scaled down the hierarchy by
    /// each group entity's share of its parent's load. Deviation: recomputed on every call
    /// instead of being cached per jiffy.
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

    /// kernel: fair.c task_h_load()
    pub fn task_h_load(&self, t: TaskId) -> u64 {
        let se = &self.se[self.tasks[t.index()].se.index()];
        let cfs = se.cfs_rq;
        se.avg.load_avg * self.cfs_h_load(cfs) / (self.cfs[cfs.index()].avg.load_avg + 1)
    }
}
