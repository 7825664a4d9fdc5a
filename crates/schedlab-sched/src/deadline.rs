//! kernel: deadline.c — the SCHED_DEADLINE class. This file holds the class's runqueue
//! keeping: entities ordered by absolute deadline (EDF; the kernel's `dl_rq->root` rb-tree,
//! leftmost = earliest), enqueue, dequeue and the earliest-deadline pick. Not yet modelled
//! (the RT/DL issue): CBS runtime accounting and replenishment, the revised wakeup rule,
//! throttling and the replenishment timer, push/pull, admission control, GRUB, and the
//! dl_server that runs the fair class. Until then the user surface refuses SCHED_DEADLINE.

use crate::sched::*;
use crate::Kernel;

/// kernel: sched.h `struct sched_dl_entity` — the parameters (`sched_attr`) and the current
/// CBS instance (remaining runtime, absolute deadline).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedDlEntity {
    pub dl_runtime: u64,
    pub dl_deadline: u64,
    pub dl_period: u64,
    /// Remaining runtime of the current instance (ns, signed in the kernel).
    pub runtime: i64,
    /// Absolute deadline of the current instance (rq clock ns).
    pub deadline: u64,
}

/// kernel: sched.h `struct dl_rq`
#[derive(Clone, Debug, Default)]
pub struct DlRq {
    /// Queued entities in EDF order: (deadline, enqueue sequence, task); the sequence keeps
    /// equal deadlines in FIFO order, as the rb-tree's insertion to the right does.
    pub root: std::collections::BTreeSet<(u64, u64, TaskId)>,
    pub dl_nr_running: u32,
    pub seq: u64,
}

impl Kernel {
    /// kernel: deadline.c enqueue_task_dl() → __enqueue_dl_entity()
    pub(crate) fn enqueue_task_dl(&mut self, cpu: usize, p: TaskId, _flags: u32) {
        let d = self.tasks[p.index()].dl.deadline;
        let dl = &mut self.rqs[cpu].dl;
        dl.seq += 1;
        let key = (d, dl.seq, p);
        dl.root.insert(key);
        dl.dl_nr_running += 1;
        self.add_nr_running(cpu, 1);
    }

    /// kernel: deadline.c dequeue_task_dl() → __dequeue_dl_entity()
    pub(crate) fn dequeue_task_dl(&mut self, cpu: usize, p: TaskId, _flags: u32) -> bool {
        let dl = &mut self.rqs[cpu].dl;
        if let Some(&key) = dl.root.iter().find(|k| k.2 == p) {
            dl.root.remove(&key);
            dl.dl_nr_running -= 1;
            self.sub_nr_running(cpu, 1);
        }
        true
    }

    /// kernel: deadline.c pick_task_dl() → pick_next_dl_entity(): the leftmost (earliest
    /// deadline) entity.
    pub(crate) fn pick_task_dl(&self, cpu: usize) -> Option<TaskId> {
        self.rqs[cpu].dl.root.first().map(|k| k.2)
    }

    /// kernel: deadline.c set_next_task_dl()
    pub(crate) fn set_next_task_dl(&mut self, _cpu: usize, _p: TaskId) {}

    /// kernel: deadline.c put_prev_task_dl()
    pub(crate) fn put_prev_task_dl(&mut self, _prev: TaskId) {}

    /// kernel: deadline.c wakeup_preempt_dl(): an earlier deadline preempts (`dl_entity_preempt`).
    pub(crate) fn wakeup_preempt_dl(&mut self, cpu: usize, p: TaskId) {
        let curr = self.rqs[cpu].curr;
        let (pd, cd) = (
            self.tasks[p.index()].dl.deadline,
            self.tasks[curr.index()].dl.deadline,
        );
        if (pd as i64).wrapping_sub(cd as i64) < 0 {
            self.resched_curr(cpu);
        }
    }

    /// kernel: deadline.c task_tick_dl() (no runtime accounting yet)
    pub(crate) fn task_tick_dl(&mut self, _cpu: usize, _curr: TaskId) {}
}
