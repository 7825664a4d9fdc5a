//! Tracepoints: the kernel's sched_* events and schedlab's own, emitted as
//! `schedlab_trace::TraceRecord`s to the run's sink (if tracing is on).

use crate::fair::FairOp;
use crate::sched::*;
use crate::sim::TraceSink;
use crate::Kernel;
use schedlab_trace::{TraceEvent, TraceRecord, IDLE_COMM};

/// [`Kernel::emit`] with the kernel's own fields: the event borrows `self.tasks`, so the sink
/// (`self.trace`) is handed over as a separate field borrow.
macro_rules! emit {
    ($k:expr, $cpu:expr, $flags:expr, $ev:expr) => {
        Kernel::emit(&mut $k.trace, &$k.tasks, &$k.rqs, $k.now, $cpu, $flags, $ev)
    };
}
pub(crate) use emit;

impl Kernel {
    #[inline]
    pub(crate) fn count_op(&mut self, op: FairOp) {
        self.stats.fair_ops[op as usize] += 1;
    }

    /// Hands one record to the sink. The record borrows the tasks' comms and static
    /// strings (nothing is allocated per record); the sink formats it.
    pub(crate) fn emit(
        sink: &mut Option<Box<dyn TraceSink>>,
        tasks: &[Task],
        rqs: &[Rq],
        now: u64,
        cpu: usize,
        flags: &'static str,
        event: TraceEvent<&str>,
    ) {
        let Some(s) = sink.as_mut() else {
            return;
        };
        let t = &tasks[rqs[cpu].curr.index()];
        let (comm, pid) = if t.is_idle_task {
            (IDLE_COMM, 0)
        } else {
            (t.comm.as_str(), t.pid)
        };
        s.record(&TraceRecord {
            ts_ns: now,
            cpu: cpu as u32,
            comm,
            pid,
            flags,
            event,
        });
    }

    /// `sched_waking` (from the waker's context) or `sched_wakeup` (once queued).
    pub(crate) fn trace_wakeup_event(&mut self, p: TaskId, waking: bool, cpu: usize) {
        if self.trace.is_none() {
            return;
        }
        let task = &self.tasks[p.index()];
        let (comm, pid, prio, target) =
            (task.comm.as_str(), task.pid, task.prio(), task.cpu as u32);
        let ev = if waking {
            TraceEvent::SchedWaking {
                comm,
                pid,
                prio,
                target_cpu: target,
            }
        } else {
            TraceEvent::SchedWakeup {
                comm,
                pid,
                prio,
                target_cpu: target,
            }
        };
        // the need-resched column as the kernel prints it for this CPU: 'N' when
        // resched_curr() set TIF_NEED_RESCHED here (with the preempt-count bit), 'l' for
        // TIF_NEED_RESCHED_LAZY alone
        // (sched_waking fires one lock level up, before the enqueue: preempt count 3)
        let flags = match (self.rqs[cpu].resched, waking) {
            (Resched::Full, false) => "dN.4.",
            (Resched::Lazy, false) => "dl.4.",
            (Resched::None, false) => "d..4.",
            (Resched::Full, true) => "dN.3.",
            (Resched::Lazy, true) => "dl.3.",
            (Resched::None, true) => "d..3.",
        };
        emit!(self, cpu, flags, ev);
    }

    pub(crate) fn trace_wakeup_new(&mut self, p: TaskId, cpu: usize) {
        if self.trace.is_none() {
            return;
        }
        let task = &self.tasks[p.index()];
        let ev = TraceEvent::SchedWakeupNew {
            comm: task.comm.as_str(),
            pid: task.pid,
            prio: task.prio(),
            target_cpu: cpu as u32,
        };
        let from = task
            .parent
            .map(|x| self.tasks[x.index()].cpu)
            .unwrap_or(cpu);
        emit!(self, from, "d..3.", ev);
    }

    pub(crate) fn trace_switch(&mut self, cpu: usize, prev: TaskId, next: TaskId) {
        if self.trace.is_none() {
            return;
        }
        let pt = &self.tasks[prev.index()];
        let nt = &self.tasks[next.index()];
        // the state letters, then "+" if preempted (only a running task can be)
        let prev_state = if pt.state == TaskState::Running && self.rqs[cpu].resched != Resched::None
        {
            "R+"
        } else {
            pt.state.letter()
        };
        let ev = TraceEvent::SchedSwitch {
            prev_comm: pt.comm.as_str(),
            prev_pid: if pt.is_idle_task { 0 } else { pt.pid },
            prev_prio: pt.prio(),
            prev_state,
            next_comm: nt.comm.as_str(),
            next_pid: if nt.is_idle_task { 0 } else { nt.pid },
            next_prio: nt.prio(),
        };
        emit!(self, cpu, "d..2.", ev);
    }

    pub(crate) fn trace_migrate(&mut self, p: TaskId, from: usize, to: usize) {
        if self.trace.is_none() {
            return;
        }
        let t = &self.tasks[p.index()];
        let ev = TraceEvent::SchedMigrateTask {
            comm: t.comm.as_str(),
            pid: t.pid,
            prio: t.prio(),
            orig_cpu: from as u32,
            dest_cpu: to as u32,
        };
        let cpu = self.executing.unwrap_or(to);
        emit!(self, cpu, "d..4.", ev);
    }

    pub(crate) fn trace_fork(&mut self, parent: TaskId, child: TaskId, cpu: usize) {
        if self.trace.is_none() {
            return;
        }
        let ev = TraceEvent::SchedProcessFork {
            comm: self.tasks[parent.index()].comm.as_str(),
            pid: self.tasks[parent.index()].pid,
            child_comm: self.tasks[child.index()].comm.as_str(),
            child_pid: self.tasks[child.index()].pid,
        };
        emit!(self, cpu, ".....", ev);
    }

    pub(crate) fn trace_exit(&mut self, t: TaskId, cpu: usize) {
        if self.trace.is_none() {
            return;
        }
        let task = &self.tasks[t.index()];
        let ev = TraceEvent::SchedProcessExit {
            comm: task.comm.as_str(),
            pid: task.pid,
            prio: task.prio(),
            group_dead: true,
        };
        emit!(self, cpu, ".....", ev);
    }

    /// `schedlab_delay_dequeue`: `se` blocked while ineligible and stays queued with
    /// `sched_delayed` set (DELAY_DEQUEUE); `lag` is its lag at that moment (negative).
    pub(crate) fn trace_delay_dequeue(&mut self, se: SeId) {
        if self.trace.is_none() {
            return;
        }
        let Some(t) = self.se[se.index()].task else {
            return;
        };
        let cfs = self.se[se.index()].cfs_rq;
        let lag = self
            .avg_vruntime(cfs)
            .wrapping_sub(self.se[se.index()].vruntime) as i64;
        let cpu = self.cfs[cfs.index()].cpu;
        let ev = TraceEvent::SchedlabDelayDequeue {
            comm: self.tasks[t.index()].comm.as_str(),
            pid: self.tasks[t.index()].pid,
            lag,
        };
        emit!(self, cpu, "d..2.", ev);
    }

    /// `schedlab_requeue`: a delayed entity was woken in place (`replaced`: re-placed at V).
    pub(crate) fn trace_requeue(&mut self, se: SeId, replaced: bool) {
        if self.trace.is_none() {
            return;
        }
        let Some(t) = self.se[se.index()].task else {
            return;
        };
        let cfs = self.se[se.index()].cfs_rq;
        let lag = self
            .avg_vruntime(cfs)
            .wrapping_sub(self.se[se.index()].vruntime) as i64;
        let cpu = self.cfs[cfs.index()].cpu;
        let ev = TraceEvent::SchedlabRequeue {
            comm: self.tasks[t.index()].comm.as_str(),
            pid: self.tasks[t.index()].pid,
            lag,
            replaced,
        };
        emit!(self, cpu, "d..4.", ev);
    }
}
