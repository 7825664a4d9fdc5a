//! Load balancing: periodic, newidle and nohz idle balance (smp.md §4).
//! Deviation (until the SMP balancing lands): no balancing is done.

use crate::Kernel;

impl Kernel {
    /// kernel: fair.c sched_balance_trigger() — from the tick.
    pub(crate) fn sched_balance_trigger(&mut self, _cpu: usize) {}

    /// kernel: fair.c sched_balance_newidle() — returns the number of tasks pulled.
    pub(crate) fn sched_balance_newidle(&mut self, _cpu: usize) -> u32 {
        0
    }
}
