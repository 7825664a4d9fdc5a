//! Load balancing: periodic, newidle and nohz idle balance (smp.md §4).
//! Deviation (until the SMP balancing lands): no balancing is done.

use crate::Kernel;

/// Runtime state of load balancing: per CPU and domain level (`balance_interval`,
/// `last_balance`, `nr_balance_failed`, newidle cost and ratio), per rq (`next_balance`,
/// misfit load) and the nohz state.
#[derive(Clone, Debug, Default)]
pub struct BalanceState {}

impl Kernel {
    /// Initialises [`BalanceState`] once the machine is known.
    pub(crate) fn init_balance_state(&mut self) {}

    /// IPI on `cpu` (after the wake list): run a kicked nohz idle balance.
    pub(crate) fn on_ipi_balance(&mut self, _cpu: usize) {}

    /// kernel: fair.c sched_balance_trigger() — from the tick.
    pub(crate) fn sched_balance_trigger(&mut self, _cpu: usize) {}

    /// kernel: fair.c sched_balance_newidle() — returns the number of tasks pulled.
    pub(crate) fn sched_balance_newidle(&mut self, _cpu: usize) -> u32 {
        0
    }
}
