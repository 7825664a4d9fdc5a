//! kernel: idle.c — the idle class: each CPU's idle task (`swapper/N`), picked when no other
//! class has a task. The idle loop itself (polling, idle states, their exit latency) is part
//! of the simulated machine (`machine.rs`, platform idle states).

use crate::sched::*;
use crate::Kernel;

impl Kernel {
    /// kernel: idle.c pick_task_idle()
    pub(crate) fn pick_task_idle(&self, cpu: usize) -> TaskId {
        self.rqs[cpu].idle
    }
}
