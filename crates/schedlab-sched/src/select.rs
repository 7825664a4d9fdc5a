//! Wakeup, fork and exec placement: `select_task_rq()` and `select_task_rq_fair()`
//! (smp.md §1.4, §2).

use crate::patches::Patch as P;

/// Runtime state of wakeup placement (per LLC: `sd_llc_shared` has_idle_cores,
/// nr_idle_scan, nr_busy_cpus).
#[derive(Clone, Debug, Default)]
pub struct SelectState {}
use crate::sched::*;
use crate::Kernel;

impl Kernel {
    /// Initialises [`SelectState`] once the machine is known.
    pub(crate) fn init_select_state(&mut self) {}

    /// A CPU switches to its idle task (`set_next_task_idle`: SMT idle-core hint, nohz entry).
    pub(crate) fn select_idle_enter(&mut self, _cpu: usize) {}

    /// kernel: core.c select_task_rq() — the class hook when the task may run on more than one
    /// CPU (then WF_RQ_SELECTED, v6.13+), else its only CPU; falls back to an allowed CPU.
    pub(crate) fn select_task_rq(
        &mut self,
        p: TaskId,
        cpu_hint: usize,
        wf: &mut u32,
        this_cpu: usize,
    ) -> usize {
        let mut cpu = cpu_hint;
        if self.tasks[p.index()].nr_cpus_allowed > 1 {
            cpu = self.select_task_rq_fair(p, cpu_hint, *wf, this_cpu);
            if self.cfg.has(P::RqSelected) {
                *wf |= WF_RQ_SELECTED;
            }
        } else if let Some(c) = self.tasks[p.index()].cpus_allowed.first() {
            cpu = c;
        }
        if !self.tasks[p.index()].cpus_allowed.contains(cpu) {
            cpu = self.tasks[p.index()].cpus_allowed.first().unwrap_or(0);
        }
        cpu
    }

    /// kernel: fair.c select_task_rq_fair().
    /// Deviation (until the SMP placement lands): prev CPU if idle, else the first idle
    /// allowed CPU of prev's LLC, else prev; fork picks the least loaded allowed CPU.
    pub(crate) fn select_task_rq_fair(
        &mut self,
        p: TaskId,
        prev: usize,
        wf: u32,
        _this_cpu: usize,
    ) -> usize {
        if self.ncpus == 1 {
            return 0;
        }
        let allowed = self.tasks[p.index()].cpus_allowed.clone();
        let idle = |k: &Kernel, c: usize| {
            k.cpu_is_idle(c) && k.rqs[c].nr_running == 0 && !k.rqs[c].ttwu_pending
        };
        if wf & WF_FORK != 0 {
            let mut best = prev;
            let mut best_n = u32::MAX;
            for c in allowed.iter() {
                let n = self.rqs[c].nr_running + self.rqs[c].ttwu_pending as u32;
                if n < best_n {
                    best_n = n;
                    best = c;
                }
            }
            return best;
        }
        if idle(self, prev) {
            return prev;
        }
        let llc = self.machine.llc_id[prev];
        for c in allowed.iter_wrap(prev) {
            if self.machine.llc_id[c] == llc && idle(self, c) {
                return c;
            }
        }
        prev
    }
}
