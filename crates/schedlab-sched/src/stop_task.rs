//! kernel: stop_task.c — the stop class, above every other: the per-CPU stopper thread that
//! runs `stop_one_cpu()` works (`migration_cpu_stop()` for exec balancing,
//! `active_load_balance_cpu_stop()`). In the model the stopper is not a task: when
//! `__schedule()` finds work queued for it, the works run to completion at that point, after
//! the previous task has been put back, and the lower classes pick the next task.

use crate::sched::*;
use crate::Kernel;

impl Kernel {
    /// The stopper runs its queued works: sched_exec()'s `migration_cpu_stop()`, then an
    /// active balance. kernel: stop_machine.c cpu_stopper_thread()
    pub(crate) fn cpu_stopper_run(&mut self, cpu: usize) {
        self.lb.stopper_running = Some(cpu);
        if let Some((p, dest)) = self.rqs[cpu].stop_migration.take() {
            self.migration_cpu_stop(cpu, p, dest);
        }
        self.active_load_balance_cpu_stop(cpu);
        self.lb.stopper_running = None;
    }

    /// kernel: core.c migration_cpu_stop() + __migrate_task() — the stopper on `cpu` moves
    /// `p`, if it is still queued here, to `dest` when `dest` is allowed for it.
    fn migration_cpu_stop(&mut self, cpu: usize, p: TaskId, dest: usize) {
        let task = &self.tasks[p.index()];
        if task.cpu != cpu || task.on_rq != OnRq::Queued || !task.cpus_allowed.contains(dest) {
            return;
        }
        self.stats.exec_migrations += 1;
        self.move_queued_task(cpu, dest, p);
    }
}
