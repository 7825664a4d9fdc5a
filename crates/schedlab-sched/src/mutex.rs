//! kernel/locking/mutex.c, the owner side of optimistic spinning: a mutex owner that leaves
//! its CPU ends every spinner's spin (`mutex_spin_on_owner()` sees `!owner_on_cpu()`). The
//! lock, unlock and wait paths are part of the system-call execution in `exec.rs`.

use crate::exec::SegKind;
use crate::sched::*;
use crate::Kernel;

impl Kernel {
    /// `context_switch()` hook. A mutex owner leaving its CPU (preempted inside its critical
    /// section) makes every spinner see `!owner_on_cpu()` and retry, which puts it to sleep. A
    /// spinner is never switched out while spinning in this model (it gives up on
    /// `need_resched()` first); should a future path do it, it leaves the osq and retries when
    /// it runs again, so that an unlock is never told only to a spinner that cannot act.
    pub(crate) fn mutex_switch_out(&mut self, prev: TaskId) {
        if let Some(m) = self.tasks[prev.index()].exec.lock_held {
            let spinners: Vec<TaskId> = self.ipc.mutexes[m.index()]
                .spinners
                .iter()
                .copied()
                .collect();
            for s in spinners {
                self.end_spin(s);
            }
        }
        let exec = &mut self.tasks[prev.index()].exec;
        if let Some(seg) = exec.segs.iter_mut().find(|s| s.kind == SegKind::Spin) {
            seg.rem = 0;
            for mx in &mut self.ipc.mutexes {
                mx.spinners.retain(|&s| s != prev);
            }
        }
    }

    /// Ends the spin of task `s` now (running on its CPU, possibly under an interrupt
    /// handler): its spin segment completes and the retry step that follows it runs.
    pub(crate) fn end_spin(&mut self, s: TaskId) {
        self.end_open_segment(s, SegKind::Spin);
    }
}
