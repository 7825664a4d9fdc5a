//! kernel: rt.c — the SCHED_FIFO / SCHED_RR class. This file holds the class's runqueue
//! keeping: the priority array (one FIFO list per priority, a bitmap of the non-empty ones),
//! enqueue at the tail (or head), dequeue, and the pick of the highest priority. Not yet
//! modelled (the RT/DL issue): RR time slices at the tick, push/pull and cpupri, RT
//! throttling, priority inheritance. Until then the user surface refuses SCHED_FIFO/RR tasks;
//! the kernel-level tests below use the queue directly.

use crate::sched::*;
use crate::Kernel;

/// `MAX_RT_PRIO`: kernel priorities 0..99 belong to the RT class (0 is the highest).
pub const MAX_RT_PRIO: usize = 100;

/// kernel: sched.h `struct rt_rq` with its `struct rt_prio_array`.
#[derive(Clone, Debug)]
pub struct RtRq {
    /// One FIFO list per kernel priority `p->prio` (0..99).
    pub queue: Vec<std::collections::VecDeque<TaskId>>,
    /// Bit `prio` set iff `queue[prio]` is non-empty (`sched_find_first_bit`).
    pub bitmap: u128,
    pub rt_nr_running: u32,
}

impl Default for RtRq {
    fn default() -> Self {
        RtRq {
            queue: vec![std::collections::VecDeque::new(); MAX_RT_PRIO],
            bitmap: 0,
            rt_nr_running: 0,
        }
    }
}

impl Kernel {
    fn rt_prio(&self, p: TaskId) -> usize {
        (self.tasks[p.index()]
            .prio()
            .clamp(0, MAX_RT_PRIO as i32 - 1)) as usize
    }

    /// kernel: rt.c enqueue_task_rt() → enqueue_rt_entity(): at the tail of its priority's
    /// list, or at the head with ENQUEUE_HEAD.
    pub(crate) fn enqueue_task_rt(&mut self, cpu: usize, p: TaskId, flags: u32) {
        let prio = self.rt_prio(p);
        let rt = &mut self.rqs[cpu].rt;
        if flags & ENQUEUE_HEAD != 0 {
            rt.queue[prio].push_front(p);
        } else {
            rt.queue[prio].push_back(p);
        }
        rt.bitmap |= 1u128 << prio;
        rt.rt_nr_running += 1;
        self.add_nr_running(cpu, 1);
    }

    /// kernel: rt.c dequeue_task_rt() → dequeue_rt_entity()
    pub(crate) fn dequeue_task_rt(&mut self, cpu: usize, p: TaskId, _flags: u32) -> bool {
        let prio = self.rt_prio(p);
        let rt = &mut self.rqs[cpu].rt;
        if let Some(i) = rt.queue[prio].iter().position(|&q| q == p) {
            rt.queue[prio].remove(i);
            if rt.queue[prio].is_empty() {
                rt.bitmap &= !(1u128 << prio);
            }
            rt.rt_nr_running -= 1;
            self.sub_nr_running(cpu, 1);
        }
        true
    }

    /// kernel: rt.c pick_task_rt() → _pick_next_task_rt(): the first task of the highest
    /// non-empty priority. The running RT task stays queued, so it is a candidate too.
    pub(crate) fn pick_task_rt(&self, cpu: usize) -> Option<TaskId> {
        let rt = &self.rqs[cpu].rt;
        if rt.bitmap == 0 {
            return None;
        }
        let prio = rt.bitmap.trailing_zeros() as usize;
        rt.queue[prio].front().copied()
    }

    /// kernel: rt.c set_next_task_rt() (exec_start; no statistics kept yet)
    pub(crate) fn set_next_task_rt(&mut self, _cpu: usize, _p: TaskId) {}

    /// kernel: rt.c put_prev_task_rt() (no push/pull yet)
    pub(crate) fn put_prev_task_rt(&mut self, _prev: TaskId) {}

    /// kernel: rt.c wakeup_preempt_rt(): a strictly higher priority (lower `prio`) preempts.
    pub(crate) fn wakeup_preempt_rt(&mut self, cpu: usize, p: TaskId) {
        let curr = self.rqs[cpu].curr;
        if self.tasks[p.index()].prio() < self.tasks[curr.index()].prio() {
            self.resched_curr(cpu);
        }
    }

    /// kernel: rt.c switched_to_rt() — a task that joined the RT class: if it is queued and
    /// not running, it preempts a running task of lower priority. (No push to another CPU.)
    pub(crate) fn switched_to_rt(&mut self, cpu: usize, p: TaskId) {
        let curr = self.rqs[cpu].curr;
        if curr == p || self.tasks[p.index()].on_rq != OnRq::Queued {
            return;
        }
        if self.tasks[p.index()].prio() < self.tasks[curr.index()].prio() {
            self.resched_curr(cpu);
        }
    }

    /// kernel: rt.c task_tick_rt(). Not yet: the SCHED_RR slice (`sched_rr_timeslice_ms`)
    /// and RT bandwidth.
    pub(crate) fn task_tick_rt(&mut self, _cpu: usize, _curr: TaskId) {}
}
