//! Tracepoints: the kernel's sched_* events and schedlab's own, emitted as
//! `schedlab_trace::TraceRecord`s to the run's sink (if tracing is on).

use crate::fair::FairOp;
use crate::sched::*;
use crate::Kernel;
use schedlab_trace::{TraceEvent, TraceRecord};

impl Kernel {
    #[inline]
    pub(crate) fn count_op(&mut self, op: FairOp) {
        self.stats.fair_ops[op as usize] += 1;
    }

    pub(crate) fn emit(&mut self, cpu: usize, flags: &str, event: TraceEvent) {
        if self.trace.is_none() {
            return;
        }
        let curr = self.rqs[cpu].curr;
        let t = &self.tasks[curr.index()];
        let (comm, pid) = if t.is_idle_task {
            ("<idle>".to_string(), 0)
        } else {
            (t.comm.clone(), t.pid)
        };
        let r = TraceRecord {
            ts_ns: self.now,
            cpu: cpu as u32,
            comm,
            pid,
            flags: flags.to_string(),
            event,
        };
        if let Some(s) = self.trace.as_mut() {
            s.record(&r);
        }
    }

    pub(crate) fn comm_of(&self, t: TaskId) -> String {
        self.tasks[t.index()].comm.clone()
    }

    /// `sched_waking` (from the waker's context) or `sched_wakeup` (once queued).
    pub(crate) fn trace_wakeup_event(&mut self, p: TaskId, waking: bool, cpu: usize) {
        if self.trace.is_none() {
            return;
        }
        let task = &self.tasks[p.index()];
        let (comm, pid, prio, target) = (task.comm.clone(), task.pid, task.prio(), task.cpu as u32);
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
        self.emit(cpu, flags, ev);
    }

    pub(crate) fn trace_wakeup_new(&mut self, p: TaskId, cpu: usize) {
        if self.trace.is_none() {
            return;
        }
        let task = &self.tasks[p.index()];
        let ev = TraceEvent::SchedWakeupNew {
            comm: task.comm.clone(),
            pid: task.pid,
            prio: task.prio(),
            target_cpu: cpu as u32,
        };
        let from = task
            .parent
            .map(|x| self.tasks[x.index()].cpu)
            .unwrap_or(cpu);
        self.emit(from, "d..3.", ev);
    }

    pub(crate) fn trace_switch(&mut self, cpu: usize, prev: TaskId, next: TaskId) {
        if self.trace.is_none() {
            return;
        }
        let pt = &self.tasks[prev.index()];
        let nt = &self.tasks[next.index()];
        let mut prev_state = pt.state.letter().to_string();
        if pt.state == TaskState::Running && self.rqs[cpu].resched != Resched::None {
            prev_state.push('+');
        }
        let ev = TraceEvent::SchedSwitch {
            prev_comm: pt.comm.clone(),
            prev_pid: if pt.is_idle_task { 0 } else { pt.pid },
            prev_prio: pt.prio(),
            prev_state,
            next_comm: nt.comm.clone(),
            next_pid: if nt.is_idle_task { 0 } else { nt.pid },
            next_prio: nt.prio(),
        };
        self.emit(cpu, "d..2.", ev);
    }

    pub(crate) fn trace_migrate(&mut self, p: TaskId, from: usize, to: usize) {
        if self.trace.is_none() {
            return;
        }
        let t = &self.tasks[p.index()];
        let ev = TraceEvent::SchedMigrateTask {
            comm: t.comm.clone(),
            pid: t.pid,
            prio: t.prio(),
            orig_cpu: from as u32,
            dest_cpu: to as u32,
        };
        let cpu = self.executing.unwrap_or(to);
        self.emit(cpu, "d..4.", ev);
    }

    pub(crate) fn trace_fork(&mut self, parent: TaskId, child: TaskId, cpu: usize) {
        if self.trace.is_none() {
            return;
        }
        let ev = TraceEvent::SchedProcessFork {
            comm: self.comm_of(parent),
            pid: self.tasks[parent.index()].pid,
            child_comm: self.comm_of(child),
            child_pid: self.tasks[child.index()].pid,
        };
        self.emit(cpu, ".....", ev);
    }

    pub(crate) fn trace_exit(&mut self, t: TaskId, cpu: usize) {
        if self.trace.is_none() {
            return;
        }
        let task = &self.tasks[t.index()];
        let ev = TraceEvent::SchedProcessExit {
            comm: task.comm.clone(),
            pid: task.pid,
            prio: task.prio(),
            group_dead: true,
        };
        self.emit(cpu, ".....", ev);
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
        let ev = TraceEvent::SchedlabDelayDequeue {
            comm: self.comm_of(t),
            pid: self.tasks[t.index()].pid,
            lag,
        };
        let cpu = self.cfs[cfs.index()].cpu;
        self.emit(cpu, "d..2.", ev);
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
        let ev = TraceEvent::SchedlabRequeue {
            comm: self.comm_of(t),
            pid: self.tasks[t.index()].pid,
            lag,
            replaced,
        };
        let cpu = self.cfs[cfs.index()].cpu;
        self.emit(cpu, "d..4.", ev);
    }
}
