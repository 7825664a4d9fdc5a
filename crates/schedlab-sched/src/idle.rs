//! kernel: idle.c — the idle class: each CPU's idle task (`swapper/N`), picked when no other
//! class has a task, and its idle-time accounting to the fair_server (rt-dl.md §4.5 E7). The
//! model's idle CPUs do not tick (NO_HZ_IDLE), so the v6.19 idle-tick charge never happens:
//! idle time reaches the server when the idle task is put back, or when the server's timer or
//! start brings the current (idle) task up to date. The idle loop itself (polling, idle states, their exit latency) is part
//! of the simulated machine (`machine.rs`, platform idle states).

use crate::sched::*;
use crate::Kernel;

impl Kernel {
    /// kernel: idle.c pick_task_idle()
    pub(crate) fn pick_task_idle(&self, cpu: usize) -> TaskId {
        self.rqs[cpu].idle
    }

    /// kernel: idle.c set_next_task_idle() — `exec_start` of the idle task, from which idle
    /// time is charged to the fair_server (a110a81c52a9).
    pub(crate) fn set_next_task_idle(&mut self, cpu: usize) {
        let now = self.rq_clock_task(cpu);
        let idle = self.rqs[cpu].idle;
        let se = self.tasks[idle.index()].se;
        self.se[se.index()].exec_start = now;
    }

    /// kernel: idle.c put_prev_task_idle() — the idle time ends: charged to the fair_server
    /// (rt-dl.md §4.5 E7): v6.12 .. v6.18 by `dl_server_update_idle_time()`, from v6.19
    /// (e636ffb9e31b) by `update_curr_idle()`.
    pub(crate) fn put_prev_task_idle(&mut self, cpu: usize) {
        if self.cfg.has(crate::patches::Patch::DlServerTimeAcct) {
            self.update_curr_idle(cpu);
        } else {
            let idle = self.rqs[cpu].idle;
            self.dl_server_update_idle_time(cpu, idle);
        }
    }

    /// kernel: idle.c update_curr_idle() (e636ffb9e31b, v6.19+): idle accounts like the other
    /// classes and charges the fair_server through `dl_server_update_idle()`. Before that
    /// patch the idle class has no `update_curr`.
    pub(crate) fn update_curr_idle(&mut self, cpu: usize) {
        if !self.cfg.has(crate::patches::Patch::DlServerTimeAcct) {
            return;
        }
        let now = self.rq_clock_task(cpu);
        let idle = self.rqs[cpu].idle;
        let se = self.tasks[idle.index()].se;
        let delta = now as i64 - self.se[se.index()].exec_start as i64;
        if delta <= 0 {
            return;
        }
        self.se[se.index()].exec_start = now;
        self.dl_server_update_idle(cpu, delta);
    }
}
