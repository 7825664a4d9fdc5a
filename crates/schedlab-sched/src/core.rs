//! core.c, second part: `try_to_wake_up` in the kernel's order (smp.md §1.2), `ttwu_runnable`
//! for still-queued and delayed tasks (§1.3), wake lists and IPIs (§1.5), `wake_up_new_task`,
//! `__schedule` with the class table, the context switch, the tick and exit.

use crate::exec::{Exec, Mode, Seg, SegKind};
use crate::features::Feature as F;
use crate::patches::Patch as P;
use crate::presets::PreemptModel;
use crate::sched::*;
use crate::stats::TaskStats;
use crate::syscalls::{Program, TaskAttrs};
use crate::Kernel;
use schedlab_platform::cpumask::CpuMask;
use std::collections::VecDeque;

/// How a wakeup was carried out, for the waker's cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Woken {
    /// The task was not in a wakeable state.
    No,
    /// Enqueued on the waker's own CPU: the preemption check is still to be done after the
    /// waker's enqueue work (`c_ttwu`).
    LocalDeferred,
    /// Done on the waker's CPU without a pending check (already running, or woken in place).
    Local,
    /// Enqueued directly on a remote runqueue under its lock.
    RemoteDirect,
    /// Queued on the target's wake list; an IPI will activate it.
    RemoteQueued,
}

/// A preemption point (rt-dl.md §1.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Point {
    /// Return to user space from a system call.
    ReturnToUser,
    /// Interrupt exit to user mode.
    IrqExitUser,
    /// Interrupt exit to preemptible kernel code.
    IrqExitKernel,
    /// `preempt_enable()` inside kernel code (after a local wakeup, unlocking...).
    PreemptEnable,
}

impl Kernel {
    // ===================================================================== preemption points

    /// Whether a pending reschedule takes effect at `point` under the preemption model.
    pub(crate) fn should_preempt(&self, cpu: usize, point: Point) -> bool {
        match self.rqs[cpu].resched {
            Resched::None => false,
            Resched::Full => match point {
                Point::ReturnToUser | Point::IrqExitUser => true,
                Point::IrqExitKernel | Point::PreemptEnable => {
                    crate::presets::kernel_preemptible(self.preempt)
                }
            },
            // TIF_NEED_RESCHED_LAZY is honoured on the way back to user space (and at the
            // tick, which promotes it to TIF_NEED_RESCHED).
            Resched::Lazy => matches!(point, Point::ReturnToUser | Point::IrqExitUser),
        }
    }

    // ===================================================================== wakeups

    /// kernel: core.c try_to_wake_up() — wakes `p` if it is sleeping. `this_cpu` is the CPU
    /// executing the wakeup; `in_task` is false for interrupt context (timers).
    pub(crate) fn try_to_wake_up(
        &mut self,
        p: TaskId,
        wake_flags: u32,
        this_cpu: usize,
        in_task: bool,
    ) -> Woken {
        let mut wf = wake_flags | WF_TTWU;
        // the idle scan's CPUs are charged to this wake-up's waker (take_select_idle_cost)
        self.sel.scan_visited = 0;
        let state = self.tasks[p.index()].state;
        if !matches!(state, TaskState::Interruptible | TaskState::Uninterruptible) {
            return Woken::No;
        }
        if let Some(log) = self.ttwu_log.as_mut() {
            log.push(crate::stats::TtwuRecord {
                waker: self.rqs[this_cpu].curr,
                wakee: p,
                wake_flags: wf,
                in_task,
            });
        }
        // self-wakeup: the task is current on this CPU and has not been descheduled
        if self.rqs[this_cpu].curr == p {
            self.tasks[p.index()].state = TaskState::Running;
            return Woken::Local;
        }
        self.trace_wakeup_event(p, true, this_cpu);
        self.tasks[p.index()].stats.nr_wakeups += 1;
        if wf & WF_SYNC != 0 {
            self.tasks[p.index()].stats.nr_wakeups_sync += 1;
        }
        // Case A: still queued (a delayed task): woken in place, no CPU selection.
        if self.tasks[p.index()].on_rq == OnRq::Queued {
            return self.ttwu_runnable(p, wf, this_cpu, in_task);
        }
        // Case B
        self.tasks[p.index()].state = TaskState::Running; // TASK_WAKING
        let prev_cpu = self.tasks[p.index()].cpu;
        let cpu = self.select_task_rq(
            p,
            self.tasks[p.index()].wake_cpu,
            &mut wf,
            this_cpu,
            in_task,
        );
        if cpu != prev_cpu {
            wf |= WF_MIGRATED;
            self.tasks[p.index()].stats.nr_wakeups_migrate += 1;
            self.set_task_cpu(p, cpu, this_cpu);
        }
        if cpu == this_cpu {
            self.stats.ttwu_local += 1;
        } else {
            self.stats.ttwu_remote += 1;
        }
        self.ttwu_queue(p, cpu, wf, this_cpu, in_task)
    }

    /// kernel: core.c ttwu_runnable() — requeue a delayed task where it is (smp.md §1.3).
    fn ttwu_runnable(&mut self, p: TaskId, wf: u32, this_cpu: usize, in_task: bool) -> Woken {
        let cpu = self.tasks[p.index()].cpu;
        let se = self.tasks[p.index()].se;
        self.update_rq_clock(cpu);
        if self.se[se.index()].sched_delayed {
            self.enqueue_task(cpu, p, ENQUEUE_NOCLOCK | ENQUEUE_DELAYED);
            self.stats.ttwu_delayed_requeue += 1;
            let busy_elsewhere_idle = !self.cpu_is_idle(cpu) && self.any_other_idle_in_llc(cpu);
            if busy_elsewhere_idle {
                self.stats.ttwu_delayed_requeue_busy_while_idle += 1;
            }
        }
        self.tasks[p.index()].state = TaskState::Running;
        let running = self.rqs[cpu].curr == p;
        if cpu == this_cpu {
            if running {
                self.trace_wakeup_event(p, false, this_cpu);
                return Woken::Local;
            }
            // Never WF_RQ_SELECTED / WF_MIGRATED on this path. sched_wakeup comes after the
            // deferred preemption check (local_wakeup_check), as ttwu_do_wakeup() follows
            // wakeup_preempt() in the kernel.
            return Woken::LocalDeferred;
        }
        if !running {
            self.wakeup_preempt(cpu, p, wf, in_task);
        }
        self.trace_wakeup_event(p, false, this_cpu);
        Woken::RemoteDirect
    }

    /// kernel: core.c ttwu_queue() / ttwu_queue_wakelist() (smp.md §1.5.1).
    fn ttwu_queue(
        &mut self,
        p: TaskId,
        cpu: usize,
        wf: u32,
        this_cpu: usize,
        in_task: bool,
    ) -> Woken {
        if self.cfg.feat(F::TTWU_QUEUE) && self.ttwu_queue_cond(cpu, this_cpu) {
            self.rqs[cpu].ttwu_pending = true;
            self.update_idle_masks(cpu);
            self.rqs[cpu].wake_list.push((p, wf & WF_MIGRATED));
            self.tasks[p.index()].on_rq = OnRq::Migrating; // in flight; not yet enqueued
            let lat = self.cost(cpu, |c| c.lat_ipi.0);
            let polling = self.cpu_is_idle(cpu) && self.idle_exit_latency(cpu).1;
            self.schedule_ipi(cpu, if polling { 0 } else { lat });
            return Woken::RemoteQueued;
        }
        self.update_rq_clock(cpu);
        if cpu == this_cpu {
            self.ttwu_do_activate(cpu, p, wf, false, in_task);
            return Woken::LocalDeferred;
        }
        self.ttwu_do_activate(cpu, p, wf, true, in_task);
        Woken::RemoteDirect
    }

    /// `ttwu_queue_cond()`: use the wake list for a cross-LLC target or an idle same-LLC one.
    fn ttwu_queue_cond(&self, cpu: usize, this_cpu: usize) -> bool {
        if self.machine.llc_id[cpu] != self.machine.llc_id[this_cpu] {
            return true;
        }
        if cpu == this_cpu {
            return false;
        }
        self.rqs[cpu].nr_running == 0
    }

    /// kernel: core.c ttwu_do_activate(). With `check_now` false the preemption check is left
    /// to the caller (the waker's CPU runs its enqueue work first).
    pub(crate) fn ttwu_do_activate(
        &mut self,
        cpu: usize,
        p: TaskId,
        wf: u32,
        check_now: bool,
        in_task: bool,
    ) {
        let mut en = ENQUEUE_WAKEUP | ENQUEUE_NOCLOCK;
        if wf & WF_RQ_SELECTED != 0 && self.cfg.has(P::RqSelected) {
            en |= ENQUEUE_RQ_SELECTED;
        }
        if wf & WF_MIGRATED != 0 {
            en |= ENQUEUE_MIGRATED;
        }
        self.activate_task(cpu, p, en);
        self.tasks[p.index()].state = TaskState::Running;
        if check_now {
            self.wakeup_preempt(cpu, p, wf, in_task);
            // ttwu_do_wakeup(): the tracepoint follows the preemption check
            self.trace_wakeup_event(p, false, cpu);
            let class = self.tasks[p.index()].class;
            class.task_woken(self, cpu, p);
        }
        if self.rqs[cpu].idle_stamp != 0 {
            let sample = self.now.saturating_sub(self.rqs[cpu].idle_stamp);
            let rq = &mut self.rqs[cpu];
            // EWMA 1/8 (update_avg)
            let diff = sample as i64 - rq.avg_idle as i64;
            rq.avg_idle = (rq.avg_idle as i64 + diff / 8) as u64;
            rq.avg_idle = rq.avg_idle.min(2 * rq.max_idle_balance_cost);
            rq.idle_stamp = 0;
        }
    }

    /// Deferred second half of a local wakeup (see `Woken::LocalDeferred`).
    pub(crate) fn local_wakeup_check(&mut self, cpu: usize, p: TaskId, wf: u32) {
        self.local_wakeup_check_ctx(cpu, p, wf, true);
    }

    /// [`Kernel::local_wakeup_check`] for a waker in task context (`in_task`) or not (a
    /// softirq: the loopback NET_RX run in the sender's context, netbench.md §1.12.5).
    pub(crate) fn local_wakeup_check_ctx(&mut self, cpu: usize, p: TaskId, wf: u32, in_task: bool) {
        let t = &self.tasks[p.index()];
        let checked = !(t.cpu != cpu || t.on_rq != OnRq::Queued || self.rqs[cpu].curr == p);
        if checked {
            self.wakeup_preempt(cpu, p, wf, in_task);
        }
        // ttwu_do_wakeup()'s sched_wakeup, after the check (its flags show the resched)
        self.trace_wakeup_event(p, false, cpu);
        if checked {
            let class = self.tasks[p.index()].class;
            class.task_woken(self, cpu, p);
        }
    }

    /// kernel: core.c wakeup_preempt() — class dispatch.
    pub(crate) fn wakeup_preempt(&mut self, cpu: usize, p: TaskId, wf: u32, in_task: bool) {
        let curr = self.rqs[cpu].curr;
        if self.tasks[curr.index()].cpu != cpu {
            // The stopper has just moved this CPU's current task away (migration_cpu_stop,
            // active balance) and the CPU is inside __schedule(), where its newidle balance
            // can attach a task: in the kernel the stop task is current then, the highest
            // class, and nothing preempts it.
            return;
        }
        let pc = self.tasks[p.index()].class;
        let cc = self.tasks[curr.index()].class;
        let pending = self.rqs[cpu].resched;
        if pc == cc {
            cc.wakeup_preempt(self, cpu, p, wf, in_task);
        } else if pc.above(cc) {
            self.resched_curr(cpu);
        }
        if self.tasks[p.index()].observe {
            self.record_wakeup(cpu, p, wf, pending);
        }
        // A queue event has occurred and this CPU is going to schedule: skip the clock
        // update in __schedule(). Since PREEMPT_LAZY (v6.13) only for a real
        // TIF_NEED_RESCHED (RESCHED_NOW), which is what Resched::Full is here. The idle task
        // is never queued.
        if !self.tasks[curr.index()].is_idle_task
            && self.tasks[curr.index()].on_rq == OnRq::Queued
            && self.rqs[cpu].resched == Resched::Full
        {
            self.rq_clock_skip_update(cpu);
        }
    }

    /// kernel: core.c wake_up_new_task(); with `fork` false, a first wakeup with zero lag
    /// (ENQUEUE_WAKEUP, no ENQUEUE_INITIAL) as the spec's scenario vectors assume.
    pub(crate) fn wake_up_new_task(&mut self, t: TaskId, fork: bool) {
        let this_cpu = self.tasks[t.index()]
            .parent
            .map(|p| self.tasks[p.index()].cpu)
            .unwrap_or(self.tasks[t.index()].cpu);
        self.tasks[t.index()].state = TaskState::Running;
        let prev = self.tasks[t.index()].cpu;
        self.tasks[t.index()].recent_used_cpu = prev;
        let mut wf = if fork { WF_FORK } else { WF_TTWU };
        let cpu = self.select_task_rq(t, prev, &mut wf, this_cpu, true);
        if cpu != prev {
            // fork placement uses __set_task_cpu: no migration counted
            self.set_task_cpu_raw(t, cpu);
        }
        self.post_init_entity_util_avg(t);
        let flags = ENQUEUE_NOCLOCK
            | if fork {
                ENQUEUE_INITIAL
            } else {
                ENQUEUE_WAKEUP
            };
        self.update_rq_clock(cpu);
        self.activate_task(cpu, t, flags);
        self.trace_wakeup_new(t, cpu);
        let executing = self.executing;
        self.executing = Some(cpu);
        self.wakeup_preempt(cpu, t, wf, true);
        let class = self.tasks[t.index()].class;
        class.task_woken(self, cpu, t);
        self.executing = executing;
        if self.executing != Some(cpu) {
            self.kick_if_needed(cpu);
        }
    }

    /// After changing a CPU's queue from outside its own execution: make it notice.
    pub(crate) fn kick_if_needed(&mut self, cpu: usize) {
        if self.cpu_is_idle(cpu) && self.rqs[cpu].nr_running > 0 {
            self.resched_curr(cpu);
        }
        if self.rqs[cpu].resched != Resched::None && !self.rqs[cpu].ipi_pending {
            self.schedule_ipi(cpu, 0);
        }
    }

    /// kernel: core.c set_task_cpu() — a wakeup or balance migration.
    pub(crate) fn set_task_cpu(&mut self, p: TaskId, cpu: usize, _this_cpu: usize) {
        let from = self.tasks[p.index()].cpu;
        if from == cpu {
            return;
        }
        let class = self.tasks[p.index()].class;
        class.migrate_task_rq(self, p, cpu);
        let se = self.tasks[p.index()].se;
        self.se[se.index()].nr_migrations += 1;
        self.rqs[cpu].stats.migrations_in += 1;
        self.rqs[from].stats.migrations_out += 1;
        self.stats.migrations += 1;
        self.trace_migrate(p, from, cpu);
        self.set_task_cpu_raw(p, cpu);
    }

    /// kernel: core.c update_rq_clock(). `rq->clock` is `sched_clock()`, which advances in
    /// steps of the platform's counter (`sched_clock_hz`; 18.5 ns on a 54 MHz arch timer). No
    /// IRQ-time or steal-time accounting: `clock_task` equals it.
    pub(crate) fn update_rq_clock(&mut self, cpu: usize) {
        let c = self.sched_clock();
        debug_assert!(self.rqs[cpu].clock_task <= c, "rq clock went backward");
        self.rqs[cpu].clock_task = c;
    }

    /// Time-average number of runnable tasks on `cpu` (delayed ones included, as
    /// `rq->nr_running` counts them) up to now.
    pub fn mean_nr_running(&self, cpu: usize) -> f64 {
        let rq = &self.rqs[cpu];
        let integral = rq.stats.runnable_integral
            + (self.now - rq.stats.runnable_since) as u128 * rq.nr_running as u128;
        if self.now == 0 {
            0.0
        } else {
            integral as f64 / self.now as f64
        }
    }

    /// Moves a queued task from `src` to `dst` (load balancing: `detach_task` +
    /// `attach_task`, or `move_queued_task`). The task is not running, or it is `src`'s
    /// current task put back by the stopper that now moves it. A delayed task stays delayed
    /// (fair.md §7.3).
    pub(crate) fn move_queued_task(&mut self, src: usize, dst: usize, p: TaskId) {
        debug_assert!(
            (self.rqs[src].curr != p || self.lb.stopper_running == Some(src))
                && self.tasks[p.index()].on_rq == OnRq::Queued
        );
        self.tasks[p.index()].on_rq = OnRq::Migrating;
        // the callers hold the source lock with its clock updated (sched_balance_rq() on the
        // busiest rq, the stopper); the destination's is updated when it is locked
        self.update_rq_clock(src);
        let kept = self.dequeue_task(src, p, DEQUEUE_NOCLOCK | DEQUEUE_MIGRATING);
        self.sched_warn_on(!kept, "a migration dequeue was delayed");
        self.migrate_task_rq_fair_lb(p);
        self.set_task_cpu(p, dst, src);
        self.update_rq_clock(dst);
        self.enqueue_task(dst, p, ENQUEUE_NOCLOCK | ENQUEUE_MIGRATING);
        self.tasks[p.index()].on_rq = OnRq::Queued;
        self.wakeup_preempt(dst, p, 0, true);
        if self.executing != Some(dst) {
            self.kick_if_needed(dst);
        }
    }

    // ===================================================================== enqueue/dequeue

    /// kernel: core.c activate_task() / enqueue_task()
    pub(crate) fn activate_task(&mut self, cpu: usize, p: TaskId, flags: u32) {
        self.enqueue_task(cpu, p, flags);
        self.tasks[p.index()].on_rq = OnRq::Queued;
    }

    pub(crate) fn enqueue_task(&mut self, cpu: usize, p: TaskId, flags: u32) {
        debug_assert_eq!(self.tasks[p.index()].cpu, cpu);
        if flags & ENQUEUE_DELAYED == 0 {
            self.tasks[p.index()].stats.last_queued = Some(self.now);
        }
        let class = self.tasks[p.index()].class;
        let nr = self.rqs[cpu].nr_running;
        class.enqueue_task(self, cpu, p, flags);
        // add_nr_running(): a second task may need the tick back on a nohz_full CPU
        if nr < 2 && self.rqs[cpu].nr_running >= 2 {
            self.sched_update_tick_dependency(cpu);
        }
    }

    /// kernel: core.c block_task()/dequeue_task() — false if the class kept it (delayed).
    pub(crate) fn dequeue_task(&mut self, cpu: usize, p: TaskId, flags: u32) -> bool {
        debug_assert_eq!(self.tasks[p.index()].cpu, cpu);
        let class = self.tasks[p.index()].class;
        class.dequeue_task(self, cpu, p, flags)
    }

    /// The task whose delayed dequeue just completed in a pick is now blocked for real.
    pub(crate) fn block_task_delayed(&mut self, t: TaskId) {
        self.tasks[t.index()].on_rq = OnRq::No;
        self.tasks[t.index()].stats.last_queued = None;
    }

    // ===================================================================== __schedule

    /// kernel: core.c __schedule(). `preempt`: involuntary (the current task stays runnable).
    pub(crate) fn __schedule(&mut self, cpu: usize, preempt: bool) {
        let prev = self.rqs[cpu].curr;
        let prev_is_idle = self.tasks[prev.index()].is_idle_task;
        // whatever happens, the pending request is consumed by this schedule()
        self.rqs[cpu].resched = Resched::None;
        // Promote RQCF_REQ_SKIP to RQCF_ACT_SKIP: a skip request since the last schedule()
        // suppresses this clock update (then the flags are reset to RQCF_UPDATED).
        if self.rqs[cpu].clock_update_flags & RQCF_REQ_SKIP == 0 {
            self.update_rq_clock(cpu);
        }
        self.rqs[cpu].clock_update_flags = 0;
        // hrtick_clear(): the class re-arms it for what it picks
        if self.rqs[cpu].hrtick_armed {
            self.hrtick_cancel(cpu);
        }
        if !prev_is_idle {
            self.progress_segment(cpu);
        }
        let mut voluntary = false;
        if !prev_is_idle && !preempt && self.tasks[prev.index()].state != TaskState::Running {
            voluntary = true;
            // block_task: dequeue with DEQUEUE_SLEEP; a fair task may be kept as delayed
            let special = matches!(self.tasks[prev.index()].state, TaskState::Dead);
            let flags = DEQUEUE_SLEEP | DEQUEUE_NOCLOCK | if special { DEQUEUE_SPECIAL } else { 0 };
            if self.dequeue_task(cpu, prev, flags) {
                self.tasks[prev.index()].on_rq = OnRq::No;
            }
        }
        self.rqs[cpu].in_pick = true;
        let next = self.pick_next_task(cpu, prev);
        self.rqs[cpu].in_pick = false;
        // `p->dl_server` for the run that starts (rt-dl.md §1.3): prev's time up to now was
        // charged when it was put back
        if next != prev {
            self.tasks[prev.index()].dl_server = None;
        }
        self.tasks[next.index()].dl_server = self.rqs[cpu].dl_server.then_some(cpu);
        if next == prev {
            self.stats.repicks += 1;
            self.balance_callbacks(cpu);
            return;
        }
        self.context_switch(cpu, prev, next, voluntary);
        self.balance_callbacks(cpu);
    }

    /// kernel: core.c __pick_next_task() — the classes in the kernel's order (stop, dl, rt,
    /// fair, idle), each asked through the class table; a class that finds nothing may
    /// `balance` (fair: newidle balancing) and is asked again. The idle class always has a
    /// task.
    fn pick_next_task(&mut self, cpu: usize, prev: TaskId) -> TaskId {
        // `put`: prev is still its class's current task and is put back before anything
        // else runs (the idle task only when something else runs, class.rs)
        let mut put = true;
        // `rq->dl_server = NULL`: set again by a pick through the fair_server
        self.rqs[cpu].dl_server = false;
        // The kernel's fast path: prev is not above the fair class and every queued task is
        // fair (`rq->nr_running == rq->cfs.h_nr_queued`; a runnable stopper would count in
        // nr_running, here its queued works are checked) — only fair, then idle, can pick.
        let fair_only = !self.tasks[prev.index()].class.above(SchedClass::Fair)
            && self.rqs[cpu].nr_running == self.cfs[self.rqs[cpu].cfs.index()].h_nr_queued
            && !self.stop_work_pending(cpu);
        let classes: &[SchedClass] = if fair_only {
            &[SchedClass::Fair, SchedClass::Idle]
        } else {
            &SchedClass::ORDER
        };
        if !fair_only {
            let prev_class = self.tasks[prev.index()].class;
            // v6.6's put_prev_task_balance() puts prev back before any class picks: its
            // last run is accounted first (an RT prev's rt_time may throttle the rt_rq here)
            if put {
                prev_class.account_prev(self, cpu, prev);
            }
            // prev_balance(): from prev's class down (RT: balance_rt's pull)
            for &class in SchedClass::ORDER.iter().filter(|&&c| c >= prev_class) {
                if class.prev_balance(self, cpu, prev) {
                    break;
                }
            }
        }
        for &class in classes {
            if let Some(next) = class.pick_next_task(self, cpu, prev, &mut put) {
                return next;
            }
            if class.balance(self, cpu) {
                if let Some(next) = class.pick_next_task(self, cpu, prev, &mut put) {
                    return next;
                }
            }
        }
        unreachable!("the idle class always has a task")
    }

    /// kernel: core.c context_switch() + statistics and tracepoints.
    fn context_switch(&mut self, cpu: usize, prev: TaskId, next: TaskId, voluntary: bool) {
        let now = self.now;
        // statistics of the outgoing task
        if !self.tasks[prev.index()].is_idle_task {
            let st = &mut self.tasks[prev.index()].stats;
            st.nr_switches += 1;
            if voluntary {
                st.nr_voluntary_switches += 1;
            } else {
                st.nr_involuntary_switches += 1;
                st.last_queued = Some(now);
            }
            self.tasks[prev.index()].last_ran_cpu = Some(cpu);
        }
        self.tasks[prev.index()].on_cpu = false;
        self.tasks[next.index()].on_cpu = true;
        if self.tasks[next.index()].observe {
            self.record_wakeup_ran(next, voluntary);
        }
        self.mutex_switch_out(prev);
        self.trace_switch(cpu, prev, next);
        self.rqs[cpu].stats.nr_switches += 1;
        self.stats.nr_switches += 1;
        let next_is_idle = self.tasks[next.index()].is_idle_task;
        let prev_is_idle = self.tasks[prev.index()].is_idle_task;
        self.pelt_clock_switch(cpu, next_is_idle);
        self.rqs[cpu].curr = next;
        self.update_idle_masks(cpu);
        if prev_is_idle != next_is_idle {
            self.smt_update_speed(cpu);
        }
        self.rqs[cpu].gen += 1;
        self.rqs[cpu].seg_start = now;
        // idle accounting
        if self.tasks[next.index()].is_idle_task {
            self.rqs[cpu].idle_since = Some(now);
            self.rqs[cpu].idle_stamp = now;
            self.stop_tick(cpu);
            self.select_idle_enter(cpu);
            return;
        }
        if let Some(s) = self.rqs[cpu].idle_since.take() {
            self.rqs[cpu].stats.idle_ns += now - s;
        }
        {
            let st = &mut self.tasks[next.index()].stats;
            if let Some(q) = st.last_queued.take() {
                st.run_delay_ns += now - q;
            }
            st.pcount += 1;
        }
        if let Some(at) = self.tasks[next.index()].stacked_at.take() {
            self.stats.sched_idle_stacked_wait_ns += now - at;
        }
        // switch-in cost, charged to the incoming task as system time
        let same_mm = self.tasks[prev.index()].mm == self.tasks[next.index()].mm
            && !self.tasks[prev.index()].is_idle_task;
        let mut cost = if same_mm {
            self.cost(cpu, |c| c.c_ctxsw_thread.0)
        } else {
            self.cost(cpu, |c| c.c_ctxsw_process.0)
        };
        if self
            .cfg
            .sim(crate::features::SimFeature::SIM_MIGRATION_PENALTY)
        {
            if let Some(last) = self.tasks[next.index()].last_ran_cpu {
                if last != cpu {
                    cost += if self.machine.llc_id[last] == self.machine.llc_id[cpu] {
                        self.cost(cpu, |c| c.c_migrate_warm.0)
                    } else {
                        self.cost(cpu, |c| c.c_migrate_cold.map(|n| n.0).unwrap_or(0))
                    };
                }
            }
        }
        self.tasks[next.index()].exec.segs.push(Seg {
            rem: cost,
            mode: Mode::NoPreempt,
            kind: SegKind::SwitchIn,
            until: None,
        });
        self.ensure_tick(cpu);
        self.sched_update_tick_dependency(cpu);
    }

    /// kernel: core.c sched_can_stop_tick() — whether the scheduler needs no tick on `cpu`: no
    /// deadline task; if there are SCHED_RR tasks, only one of them; FIFO tasks alone are
    /// fine; otherwise at most one fair task queued (rt-dl.md §1.10).
    pub(crate) fn sched_can_stop_tick(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        if rq.dl.dl_nr_running > 0 {
            return false;
        }
        if rq.rt.rr_nr_running > 0 {
            return rq.rt.rr_nr_running == 1;
        }
        if rq.rt.rt_nr_running > 0 {
            return true;
        }
        self.cfs[rq.cfs.index()].h_nr_queued <= 1
    }

    /// nohz_full (kernel: sched_update_tick_dependency() with tick_nohz_dep_set_cpu() /
    /// _clear_cpu()): on a `nohz_full=` CPU running a task, the tick stops while
    /// `sched_can_stop_tick()` holds and restarts when it no longer does. The model evaluates
    /// this at every switch and when a second task is queued (the kernel also at interrupt
    /// exit, so it may stop a tick a little earlier after a task leaves). Deviation: the
    /// residual 1 Hz remote tick (`sched_tick_remote()`) is not modelled.
    pub(crate) fn sched_update_tick_dependency(&mut self, cpu: usize) {
        if !self.machine.nohz_full.contains(cpu) || self.cpu_is_idle(cpu) {
            return;
        }
        if self.sched_can_stop_tick(cpu) {
            self.stop_tick(cpu);
        } else {
            self.ensure_tick(cpu);
        }
    }

    // ===================================================================== tick

    // ===================================================================== exit

    // ===================================================================== tick

    /// kernel: core.c sched_tick() — on a busy CPU (idle CPUs do not tick, NO_HZ_IDLE): the
    /// clock, the lazy-preemption promotion, the class's task_tick, and the balance triggers.
    pub(crate) fn sched_tick(&mut self, cpu: usize) {
        self.update_rq_clock(cpu);
        self.stats.ticks += 1;
        // lazy promotion: at the tick a pending lazy request becomes a real one
        if self.rqs[cpu].resched == Resched::Lazy {
            self.rqs[cpu].resched = Resched::Full;
        }
        let curr = self.rqs[cpu].curr;
        let class = self.tasks[curr.index()].class;
        class.task_tick(self, cpu, curr);
        self.sched_balance_trigger_from_tick(cpu);
    }

    /// `rq->donor->sched_class->update_curr(rq)`: charge the current task (or, for the idle
    /// task, the idle time) up to the rq clock.
    pub(crate) fn update_curr_of_current(&mut self, cpu: usize) {
        let curr = self.rqs[cpu].curr;
        let class = self.tasks[curr.index()].class;
        class.update_curr(self, curr);
    }

    // ===================================================================== helpers

    fn any_other_idle_in_llc(&self, cpu: usize) -> bool {
        let llc = self.machine.llc_id[cpu];
        (0..self.ncpus).any(|c| {
            c != cpu
                && self.machine.llc_id[c] == llc
                && self.cpu_is_idle(c)
                && self.rqs[c].nr_running == 0
        })
    }

    /// Preemption model name for reports.
    pub fn preempt_model(&self) -> PreemptModel {
        self.preempt
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn alloc_task(
        &mut self,
        comm: String,
        pid: i32,
        tgid: i32,
        policy: Policy,
        nice: i32,
        tg: TgId,
        cpu: usize,
    ) -> TaskId {
        let id = TaskId::new(self.tasks.len());
        let cfs = self.tgs[tg.index()].cfs_rq[cpu];
        let mut se = SchedEntity::new(cfs);
        se.task = Some(id);
        se.parent = self.tgs[tg.index()].se[cpu];
        se.depth = se.parent.map(|p| self.se[p.index()].depth + 1).unwrap_or(0);
        self.se.push(se);
        let seid = SeId::new(self.se.len() - 1);
        let rng = self.rng_streams.stream(&format!("task/{}", pid));
        self.tasks.push(Task {
            pid,
            tgid,
            comm,
            policy,
            nice,
            rt_priority: 0,
            dl: Default::default(),
            rt: Default::default(),
            pi_prio: None,
            pi_blocked_on: None,
            pi_held: Vec::new(),
            class: if policy.is_fair() {
                SchedClass::Fair
            } else if policy == Policy::Deadline {
                SchedClass::Dl
            } else {
                SchedClass::Rt
            },
            se: seid,
            tg,
            cpu,
            wake_cpu: cpu,
            recent_used_cpu: cpu,
            on_rq: OnRq::No,
            on_cpu: false,
            state: TaskState::New,
            cpus_allowed: CpuMask::first_n(self.ncpus),
            nr_cpus_allowed: self.ncpus as u32,
            mm: 0,
            parent: None,
            children: 0,
            zombies: VecDeque::new(),
            waiting_child: false,
            sigchld_wait: false,
            wakee_flips: 0,
            wakee_flip_decay_ts: 0,
            last_wakee: None,
            sched_reset_on_fork: false,
            timer_slack_ns: self.cfg.sysctl.timer_slack_ns,
            is_idle_task: false,
            kthread: false,
            throttled: false,
            throttle_work: false,
            rng,
            prog: None,
            exec: Exec::default(),
            stats: TaskStats::default(),
            spawn_slots: Vec::new(),
            last_ran_cpu: None,
            stacked_at: None,
            observe: false,
            dl_server: None,
        });
        id
    }

    /// Creates a task (not yet runnable) as the child of `parent` (or of the outside world).
    pub fn create_task(
        &mut self,
        program: Box<dyn Program>,
        attrs: &TaskAttrs,
        parent: Option<TaskId>,
        thread: bool,
    ) -> TaskId {
        let pid = self.next_pid;
        self.next_pid += 1;
        let (pcomm, ppol, pnice, prt, ptg, pcpu, pmm, ptgid, pmask) = match parent {
            Some(p) => {
                let t = &self.tasks[p.index()];
                (
                    t.comm.clone(),
                    t.policy,
                    t.nice,
                    t.rt_priority,
                    t.tg,
                    t.cpu,
                    t.mm,
                    t.tgid,
                    t.cpus_allowed.clone(),
                )
            }
            None => (
                "task".to_string(),
                Policy::Normal,
                0,
                0,
                TgId(0),
                0,
                0,
                pid,
                CpuMask::first_n(self.ncpus),
            ),
        };
        let policy = attrs.policy.unwrap_or(ppol);
        let nice = attrs.nice.unwrap_or(pnice);
        let tg = attrs.tg.unwrap_or(ptg);
        let comm = attrs.comm.clone().unwrap_or(pcomm);
        let tgid = if thread { ptgid } else { pid };
        let observe = self.observe_comm.as_deref() == Some(comm.as_str());
        let t = self.alloc_task(comm, pid, tgid, policy, nice, tg, pcpu);
        self.tasks[t.index()].observe = observe;
        let mm = if thread && parent.is_some() {
            pmm
        } else {
            let m = self.next_mm;
            self.next_mm += 1;
            m
        };
        let allowed = attrs.cpus.clone().unwrap_or(pmask);
        {
            let task = &mut self.tasks[t.index()];
            // a fair child of an RT parent has rt_priority 0 (sched_fork()'s reset, and
            // __setscheduler_params() for an explicit fair policy)
            task.rt_priority = attrs
                .rt_priority
                .unwrap_or(if policy.is_fair() { 0 } else { prt });
            task.mm = mm;
            task.parent = parent;
            task.nr_cpus_allowed = allowed.weight() as u32;
            task.cpus_allowed = allowed;
            task.prog = Some(program);
            task.sched_reset_on_fork = attrs.reset_on_fork.unwrap_or(false);
        }
        if let Some(p) = parent {
            self.tasks[p.index()].children += 1;
        }
        self.nr_live += 1;
        let (w, inv) = self.task_load_weight(t);
        let se = self.tasks[t.index()].se;
        self.se[se.index()].load = LoadWeight {
            weight: w,
            inv_weight: inv,
        };
        let class = self.tasks[t.index()].class;
        class.task_fork(self, t, parent);
        if let Some(s) = attrs.slice_ns {
            self.apply_custom_slice(t, s);
        }
        if self.tasks[t.index()].policy == Policy::Deadline {
            // sched_setattr() before the first wakeup: checkparam + admission control; a
            // refused task stays SCHED_NORMAL and the refusal is kept in `setattr_errors`
            let admitted = match attrs.dl {
                Some(a) => self.sched_dl_overflow_from_core(t, &a).map(|_| a),
                None => Err("SCHED_DEADLINE needs runtime/deadline/period (EINVAL)".into()),
            };
            match admitted {
                Ok(a) => self.__setparam_dl_from_core(t, &a),
                Err(e) => {
                    let pid = self.tasks[t.index()].pid;
                    self.setattr_errors.push(format!("pid {pid}: {e}"));
                    let task = &mut self.tasks[t.index()];
                    task.policy = Policy::Normal;
                    task.class = SchedClass::Fair;
                }
            }
        }
        // the first CPU must be allowed
        if !self.tasks[t.index()].cpus_allowed.contains(pcpu) {
            let c = self.tasks[t.index()].cpus_allowed.first().unwrap_or(0);
            self.set_task_cpu_raw(t, c);
        }
        t
    }

    /// kernel: softirq.c spawn_ksoftirqd() → the `ktimers/N` smpboot threads of PREEMPT_RT
    /// (`CONFIG_IRQ_FORCED_THREADING` with forced irq threads): one per CPU, pinned, SCHED_FIFO
    /// 1 (`sched_set_fifo_low()` in ktimerd_setup()). They expire the soft hrtimers — on
    /// PREEMPT_RT every sleeper that was not RT or deadline when it armed its timer — so the
    /// wakeups of fair sleepers come from an RT task, not from the timer interrupt (rt-dl.md
    /// §1.8; the release of the dedicated thread is unverified there). Kernel threads get pids
    /// below the first user pid (1000) and do not count as live tasks (a run ends when the
    /// workloads' tasks have exited).
    pub(crate) fn spawn_ktimerd(&mut self) {
        struct Ktimerd;
        impl Program for Ktimerd {
            fn next(
                &mut self,
                _cx: &mut crate::syscalls::Ctx<'_>,
                _last: crate::syscalls::SysResult,
            ) -> crate::syscalls::Op {
                crate::syscalls::Op::Kernel(crate::syscalls::KernelOp(
                    crate::syscalls::KOp::Ktimers,
                ))
            }
        }
        let first_user_pid = self.next_pid;
        for cpu in 0..self.ncpus {
            self.next_pid = 100 + cpu as i32;
            let attrs = TaskAttrs {
                comm: Some(format!("ktimers/{cpu}")),
                policy: Some(Policy::Fifo),
                rt_priority: Some(1),
                cpus: Some(CpuMask::single(cpu)),
                ..Default::default()
            };
            let t = self.create_task(Box::new(Ktimerd), &attrs, None, false);
            self.tasks[t.index()].kthread = true;
            self.nr_live -= 1;
            self.rqs[cpu].ktimers = Some(t);
            self.wake_up_new_task(t, true);
        }
        self.next_pid = first_user_pid;
    }

    /// `sched_setattr()` runtime for a fair task: the custom slice (fair.md §3.2).
    pub(crate) fn apply_custom_slice(&mut self, t: TaskId, runtime: u64) {
        if !self.cfg.has(crate::patches::Patch::CustomSlice) {
            return;
        }
        let se = self.tasks[t.index()].se;
        let e = &mut self.se[se.index()];
        if runtime != 0 {
            e.custom_slice = true;
            e.slice = runtime.clamp(100_000, 100_000_000);
        } else {
            e.custom_slice = false;
            e.slice = self.base_slice;
        }
    }

    /// Moves a task's cpu field and its entity onto that CPU's cfs_rq of its group.
    pub(crate) fn set_task_cpu_raw(&mut self, t: TaskId, cpu: usize) {
        self.tasks[t.index()].cpu = cpu;
        self.tasks[t.index()].wake_cpu = cpu;
        self.set_task_rq(t);
    }

    pub fn task_by_pid(&self, pid: i32) -> Option<TaskId> {
        self.tasks
            .iter()
            .position(|t| t.pid == pid && !t.is_idle_task)
            .map(TaskId::new)
    }

    /// Starts a task created with `create_task` as a fork from outside (`wake_up_new_task`).
    pub fn start_task(&mut self, t: TaskId) {
        self.wake_up_new_task(t, true);
    }

    /// Starts a task as if it had just been woken with zero lag (the spec's scenario vectors:
    /// "tasks start at t=0 as wakeups with vlag = 0, not forks").
    pub fn start_task_as_wakeup(&mut self, t: TaskId) {
        self.wake_up_new_task(t, false);
    }

    /// kernel: core.c hrtick_start() — arm `rq->hrtick_timer` `delay` ns from now (at least
    /// 10 µs). Deviation: a remote CPU's timer is armed at once (no smp_call_function).
    pub(crate) fn hrtick_start(&mut self, cpu: usize, delay: u64) {
        let delay = delay.max(10_000);
        let rq = &mut self.rqs[cpu];
        rq.hrtick_gen = rq.hrtick_gen.wrapping_add(1);
        rq.hrtick_armed = true;
        let gen = rq.hrtick_gen;
        self.push_event(
            self.now + delay,
            crate::sim::Ev::Hrtick {
                cpu: cpu as u32,
                gen,
            },
        );
    }

    /// kernel: core.c hrtick_clear()
    pub(crate) fn hrtick_cancel(&mut self, cpu: usize) {
        let rq = &mut self.rqs[cpu];
        rq.hrtick_gen = rq.hrtick_gen.wrapping_add(1);
        rq.hrtick_armed = false;
    }

    /// kernel: core.c resched_curr() — set TIF_NEED_RESCHED; a remote CPU gets an IPI unless
    /// it is polling in idle.
    pub fn resched_curr(&mut self, cpu: usize) {
        if self.rqs[cpu].resched == Resched::Full {
            return;
        }
        self.rqs[cpu].resched = Resched::Full;
        self.kick_cpu(cpu);
    }

    /// kernel: core.c resched_curr_lazy() (7c70cb94d29c) — under the lazy model set
    /// TIF_NEED_RESCHED_LAZY and send no IPI; otherwise identical to resched_curr. The idle
    /// task never gets the lazy flag.
    pub fn resched_curr_lazy(&mut self, cpu: usize) {
        let lazy_model = self.preempt == PreemptModel::Lazy;
        if !self.cfg.has(crate::patches::Patch::PreemptLazy) || !lazy_model {
            return self.resched_curr(cpu);
        }
        let curr = self.rqs[cpu].curr;
        if self.tasks[curr.index()].is_idle_task {
            return self.resched_curr(cpu);
        }
        if self.rqs[cpu].resched == Resched::None {
            self.rqs[cpu].resched = Resched::Lazy;
        }
    }

    /// kernel: core.c select_task_rq() — the class hook when the task may run on more than one
    /// CPU (then WF_RQ_SELECTED, v6.13+), else its only CPU; falls back to an allowed CPU.
    /// `in_task`: the waker runs in task context (false for a timer interrupt).
    /// Deviation: `select_fallback_rq` takes the first allowed CPU (no node preference).
    pub(crate) fn select_task_rq(
        &mut self,
        p: TaskId,
        cpu_hint: usize,
        wf: &mut u32,
        this_cpu: usize,
        in_task: bool,
    ) -> usize {
        let mut cpu = cpu_hint;
        if self.tasks[p.index()].nr_cpus_allowed > 1 {
            let class = self.tasks[p.index()].class;
            cpu = class.select_task_rq(self, p, cpu_hint, *wf, this_cpu, in_task);
            if self.cfg.has(P::RqSelected) {
                *wf |= WF_RQ_SELECTED;
            }
        } else if let Some(c) = self.tasks[p.index()].cpus_allowed.first() {
            cpu = c;
        }
        if !self.tasks[p.index()].cpus_allowed.contains(cpu) {
            cpu = self.tasks[p.index()].cpus_allowed.first().unwrap_or(0);
        }
        if self.tasks[p.index()].policy == Policy::Idle {
            self.account_sched_idle_placement(p, cpu, *wf);
        }
        cpu
    }

    /// Statistics only (no kernel counterpart): whether placing the SCHED_IDLE task `p` on
    /// `cpu` stacks it on a CPU that runs only SCHED_IDLE tasks (seed 003's mechanism).
    fn account_sched_idle_placement(&mut self, p: TaskId, cpu: usize, wf: u32) {
        let kind = if wf & WF_FORK != 0 {
            crate::stats::PLACE_FORK
        } else if wf & WF_EXEC != 0 {
            if cpu == self.tasks[p.index()].cpu {
                return;
            }
            crate::stats::PLACE_EXEC
        } else {
            crate::stats::PLACE_WAKE
        };
        self.stats.sched_idle_placed[kind] += 1;
        if self.sched_idle_rq(cpu) {
            self.stats.sched_idle_stacked[kind] += 1;
            self.tasks[p.index()].stacked_at = Some(self.now);
        }
    }

    /// kernel: core.c set_load_weight() — the weight of `p->se` from its nice value or policy.
    pub(crate) fn task_load_weight(&self, t: TaskId) -> (u64, u32) {
        let task = &self.tasks[t.index()];
        if task.policy == Policy::Idle {
            return (scale_load(WEIGHT_IDLEPRIO), WMULT_IDLEPRIO);
        }
        let i = (task.nice + 20) as usize;
        (
            scale_load(SCHED_PRIO_TO_WEIGHT[i] as u64),
            SCHED_PRIO_TO_WMULT[i],
        )
    }

    /// kernel: core.c __sched_setscheduler() — a new policy and priority for `p` (in the
    /// model, `sched_setscheduler()` of the calling task on itself, so `p` is running and
    /// never a delayed entity), through the class table: dequeue (SAVE | MOVE) and put back,
    /// the new parameters and class (`__setscheduler_params`, whose `set_load_weight(p, true)`
    /// goes to the *old* class's `reweight_task`, then `__setscheduler_prio`), enqueue
    /// (RESTORE | MOVE) and set as next, then `check_class_changed()`: `switched_from` /
    /// `switched_to` when the class changed, else `prio_changed`.
    /// SCHED_DEADLINE goes through [`Kernel::sched_setattr_dl`] (it needs runtime, deadline
    /// and period, and admission control); `Op::SetScheduler` with `Policy::Deadline` uses the
    /// parameters the task already holds, if any.
    /// Deviation: the fair entity's PELT signals are not detached/attached on a class change
    /// (`detach_task_cfs_rq`).
    pub(crate) fn __sched_setscheduler(
        &mut self,
        p: TaskId,
        policy: Policy,
        nice: i32,
        rt_priority: u32,
    ) {
        self.__sched_setscheduler_attr(p, policy, nice, rt_priority, None)
    }

    /// `sched_setattr(SCHED_DEADLINE, R, D, P)` on task `p`, running or not: checkparam and
    /// admission control (-EINVAL / -EBUSY as an Err naming the value), then the class change.
    pub fn sched_setattr_dl(
        &mut self,
        p: TaskId,
        attr: crate::deadline::DlAttr,
    ) -> Result<(), String> {
        self.sched_dl_overflow_from_core(p, &attr)?;
        self.__sched_setscheduler_attr(p, Policy::Deadline, 0, 0, Some(attr));
        Ok(())
    }

    fn __sched_setscheduler_attr(
        &mut self,
        p: TaskId,
        policy: Policy,
        nice: i32,
        rt_priority: u32,
        dl: Option<crate::deadline::DlAttr>,
    ) {
        if policy == Policy::Deadline && dl.is_none() {
            // sched_setscheduler(SCHED_DEADLINE) carries no runtime/deadline/period: the
            // kernel's checkparam refuses it (EINVAL) unless the task already holds
            // parameters, which then pass admission again; a refusal changes nothing
            let se = self.tasks[p.index()].dl;
            let held = crate::deadline::DlAttr {
                runtime: se.dl_runtime,
                deadline: se.dl_deadline,
                period: se.dl_period,
                sched_flags: if se.flag_reclaim {
                    crate::deadline::SCHED_FLAG_RECLAIM
                } else {
                    0
                } | if se.flag_dl_overrun {
                    crate::deadline::SCHED_FLAG_DL_OVERRUN
                } else {
                    0
                },
            };
            if self.tasks[p.index()].policy != Policy::Deadline
                && (se.dl_runtime == 0 || self.sched_dl_overflow_from_core(p, &held).is_err())
            {
                return;
            }
        }
        let cpu = self.tasks[p.index()].cpu;
        let prev_class = self.tasks[p.index()].class;
        let queued = self.tasks[p.index()].on_rq == OnRq::Queued;
        let running = self.rqs[cpu].curr == p;
        let old_prio = self.tasks[p.index()].prio();
        // rt_effective_prio(): a PI boost still applies under the new policy
        let new_prio = {
            let normal = Task::prio_of(policy, nice, rt_priority.clamp(1, 99));
            self.tasks[p.index()]
                .pi_prio
                .map_or(normal, |b| b.min(normal))
        };
        // An RT task whose effective priority does not change keeps its list position
        // (queue_flags without DEQUEUE_MOVE). Deviation: the kernel clears the flag for every
        // class; the fair class keeps it here.
        let mut queue_flags = DEQUEUE_SAVE | DEQUEUE_MOVE | DEQUEUE_NOCLOCK;
        let rt_to_rt = prev_class == SchedClass::Rt && !policy.is_fair();
        if rt_to_rt && new_prio == old_prio {
            queue_flags &= !DEQUEUE_MOVE;
        }
        self.update_rq_clock(cpu); // task_rq_lock() + update_rq_clock()
        if queued {
            self.dequeue_task(cpu, p, queue_flags);
        }
        if running {
            prev_class.put_prev_task(self, p);
        }
        // __setscheduler_params()
        {
            let t = &mut self.tasks[p.index()];
            t.policy = policy;
            if policy.is_fair() {
                t.nice = nice;
                t.rt_priority = 0;
            } else if policy == Policy::Deadline {
                t.rt_priority = 0;
            } else {
                t.rt_priority = rt_priority.clamp(1, 99);
            }
        }
        if let Some(a) = dl {
            self.__setparam_dl_from_core(p, &a);
        }
        if prev_class == SchedClass::Fair {
            prev_class.reweight_task(self, p);
        } else {
            let (w, inv) = self.task_load_weight(p);
            let se = self.tasks[p.index()].se;
            self.se[se.index()].load = LoadWeight {
                weight: w,
                inv_weight: inv,
            };
        }
        // __setscheduler_prio(): the class of the effective priority (deadline: prio < 0)
        let eff = self.tasks[p.index()].prio();
        let new_class = if policy == Policy::Deadline || eff < 0 {
            SchedClass::Dl
        } else if eff < crate::rt::MAX_RT_PRIO as i32 {
            SchedClass::Rt
        } else {
            SchedClass::Fair
        };
        self.tasks[p.index()].class = new_class;
        if queued {
            // "enqueue to tail when the priority of a task is increased (user space view)":
            // lowered (numerically larger prio) goes to the head
            let head = if old_prio < self.tasks[p.index()].prio() {
                ENQUEUE_HEAD
            } else {
                0
            };
            self.enqueue_task(cpu, p, queue_flags | head);
        }
        if running {
            new_class.set_next_task(self, p);
        }
        // check_class_changed()
        if prev_class != new_class {
            prev_class.switched_from(self, p);
            new_class.switched_to(self, cpu, p);
        } else if old_prio != self.tasks[p.index()].prio() {
            new_class.prio_changed(self, cpu, p, old_prio);
        }
        // the balance callbacks queued on the way (RT push/pull) run at the unlock
        self.balance_callbacks(cpu);
    }

    /// kernel: core.c rt_mutex_setprio() — `p`'s PI boost becomes `boost` (the effective
    /// priority of its top PI waiter, None when it has none): the sched_change pattern around
    /// the new effective priority and class; within the RT class a deboost goes to the head
    /// of the new list, a boost to the tail (rt-dl.md §2.11).
    /// Deviation: a SCHED_DEADLINE top waiter does not boost into the deadline class (its
    /// priority -1 boosts to RT priority 0's place instead: it is clamped to prio 0).
    pub(crate) fn rt_mutex_setprio(&mut self, p: TaskId, boost: Option<i32>) {
        let boost = boost.map(|b| b.max(0));
        let old_prio = self.tasks[p.index()].prio();
        let normal = self.tasks[p.index()].normal_prio();
        let new_prio = boost.map_or(normal, |b| b.min(normal));
        if new_prio == old_prio || self.tasks[p.index()].policy == Policy::Deadline {
            self.tasks[p.index()].pi_prio = boost;
            return;
        }
        let cpu = self.tasks[p.index()].cpu;
        let prev_class = self.tasks[p.index()].class;
        let queued = self.tasks[p.index()].on_rq == OnRq::Queued;
        let running = self.rqs[cpu].curr == p;
        let queue_flags = DEQUEUE_SAVE | DEQUEUE_MOVE | DEQUEUE_NOCLOCK;
        self.update_rq_clock(cpu);
        if queued {
            self.dequeue_task(cpu, p, queue_flags);
        }
        if running {
            prev_class.put_prev_task(self, p);
        }
        self.tasks[p.index()].pi_prio = boost;
        let new_class = if new_prio < crate::rt::MAX_RT_PRIO as i32 {
            SchedClass::Rt
        } else {
            SchedClass::Fair
        };
        self.tasks[p.index()].class = new_class;
        if queued {
            let head = if new_class == SchedClass::Rt && old_prio < new_prio {
                ENQUEUE_HEAD
            } else {
                0
            };
            self.enqueue_task(cpu, p, queue_flags | head);
        }
        if running {
            new_class.set_next_task(self, p);
        }
        if prev_class != new_class {
            prev_class.switched_from(self, p);
            new_class.switched_to(self, cpu, p);
        } else {
            new_class.prio_changed(self, cpu, p, old_prio);
        }
        if self.executing != Some(cpu) {
            self.kick_if_needed(cpu);
        }
        self.balance_callbacks(cpu);
    }

    /// Records the wakeup of an observed task `p` on `cpu` (after the wakeup preemption
    /// hook ran; `pending` is the resched state before it): what ran and why it was not
    /// preempted. Only the first wakeup preemption check of a wakeup is recorded.
    fn record_wakeup(&mut self, cpu: usize, p: TaskId, wf: u32, pending: Resched) {
        let pid = self.tasks[p.index()].pid;
        if self
            .wakeup_log
            .iter()
            .rev()
            .find(|r| r.pid == pid)
            .is_some_and(|r| r.ran_at.is_none())
            || self.wakeup_log.len() >= self.wakeup_log_cap
        {
            return;
        }
        let curr = self.rqs[cpu].curr;
        let pc = self.tasks[p.index()].class;
        let cc = self.tasks[curr.index()].class;
        let (verdict, entity) = if self.tasks[curr.index()].is_idle_task
            || (self.rqs[cpu].resched != Resched::None && pending == Resched::None)
        {
            (crate::stats::WakeupVerdict::Preempted, String::new())
        } else if pending != Resched::None {
            (crate::stats::WakeupVerdict::ReschedPending, String::new())
        } else if pc != cc {
            (crate::stats::WakeupVerdict::HigherClass, String::new())
        } else if pc == SchedClass::Fair {
            pc.explain_wakeup(self, cpu, p, wf)
        } else {
            (crate::stats::WakeupVerdict::EarlierDeadline, String::new())
        };
        let c = &self.tasks[curr.index()];
        self.wakeup_log.push(crate::stats::WakeupRecord {
            pid,
            woke_at: self.now,
            cpu,
            curr_pid: c.pid,
            curr_comm: c.comm.clone(),
            curr_entity: entity,
            verdict,
            ran_at: None,
            prev_blocked: false,
        });
    }

    /// An observed task got the CPU: closes its open wakeup record.
    /// `voluntary`: the task switched out blocked (else it was preempted).
    fn record_wakeup_ran(&mut self, t: TaskId, voluntary: bool) {
        let pid = self.tasks[t.index()].pid;
        let now = self.now;
        if let Some(r) = self.wakeup_log.iter_mut().rev().find(|r| r.pid == pid) {
            if r.ran_at.is_none() {
                r.ran_at = Some(now);
                r.prev_blocked = voluntary;
            }
        }
    }

    /// kernel: core.c sched_move_task() — the sched_change pattern around a task's change of
    /// group (writing its pid to `cgroup.procs`): dequeue (SAVE|MOVE) and put back if it
    /// runs, the class's `task_change_group` (fair) or `set_task_rq`, enqueue (RESTORE|MOVE), set as next and reschedule.
    pub fn sched_move_task(&mut self, t: TaskId, tg: TgId) {
        if self.tasks[t.index()].tg == tg {
            return;
        }
        let cpu = self.tasks[t.index()].cpu;
        let class = self.tasks[t.index()].class;
        let queued = self.tasks[t.index()].on_rq == OnRq::Queued;
        let running = self.rqs[cpu].curr == t && !self.tasks[t.index()].is_idle_task;
        let queue_flags = DEQUEUE_SAVE | DEQUEUE_MOVE | DEQUEUE_NOCLOCK;
        self.update_rq_clock(cpu);
        if queued {
            self.dequeue_task(cpu, t, queue_flags);
        }
        if running {
            class.put_prev_task(self, t);
        }
        if class.has_task_change_group() {
            class.task_change_group(self, t, tg);
        } else {
            // the fair entity follows the group for a later switch to fair
            self.tasks[t.index()].tg = tg;
            self.set_task_rq(t);
        }
        if queued {
            self.enqueue_task(cpu, t, queue_flags);
        }
        if running {
            class.set_next_task(self, t);
            self.resched_curr(cpu);
        }
        if self.executing != Some(cpu) {
            self.kick_if_needed(cpu);
        }
    }

    /// kernel: core.c set_user_nice() — the sched_change pattern around the new weight:
    /// dequeue (SAVE) and put back if running, `set_load_weight(p, true)` (the class's
    /// `reweight_task`), enqueue (RESTORE) and set as next again, then the class's
    /// `prio_changed`.
    pub(crate) fn set_user_nice(&mut self, t: TaskId, nice: i32) {
        if self.tasks[t.index()].nice == nice {
            return;
        }
        let cpu = self.tasks[t.index()].cpu;
        let class = self.tasks[t.index()].class;
        let queued = self.tasks[t.index()].on_rq == OnRq::Queued;
        let running = self.rqs[cpu].curr == t;
        let old_prio = self.tasks[t.index()].prio();
        self.update_rq_clock(cpu); // task_rq_lock() + update_rq_clock()
        if queued {
            self.dequeue_task(cpu, t, DEQUEUE_SAVE | DEQUEUE_NOCLOCK);
        }
        if running {
            class.put_prev_task(self, t);
        }
        self.tasks[t.index()].nice = nice;
        class.reweight_task(self, t);
        if queued {
            self.enqueue_task(cpu, t, ENQUEUE_RESTORE | ENQUEUE_NOCLOCK);
        }
        if running {
            class.set_next_task(self, t);
        }
        class.prio_changed(self, cpu, t, old_prio);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::{KernelConfig, PreemptModel};
    use crate::sim::MachineDesc;
    use crate::syscalls::{Ctx, Op, SysResult};
    use std::cell::RefCell;
    use std::rc::Rc;

    type Log = Rc<RefCell<Vec<(&'static str, u64)>>>;

    /// Runs a fixed list of operations, logging the time each one starts, then exits.
    struct Ops(&'static str, Vec<Op>, Log);
    impl Program for Ops {
        fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
            if self.1.is_empty() {
                self.2.borrow_mut().push((self.0, cx.now()));
                return Op::Exit;
            }
            let op = self.1.remove(0);
            if matches!(op, Op::SetScheduler { .. }) {
                self.2.borrow_mut().push((self.0, cx.now()));
            }
            op
        }
    }

    struct Hog;
    impl Program for Hog {
        fn next(&mut self, _cx: &mut Ctx<'_>, _last: SysResult) -> Op {
            Op::Run(1_000_000)
        }
    }

    fn one_cpu() -> Kernel {
        let cfg = KernelConfig::parse("v6.12 NO_SIM_JITTER").unwrap();
        let mut k = Kernel::new(cfg, MachineDesc::ideal(1, 1000, PreemptModel::Full), 1).unwrap();
        k.strict = true;
        k.check_invariants = true;
        k
    }

    fn start(k: &mut Kernel, name: &str, prog: Box<dyn Program>) -> TaskId {
        let attrs = TaskAttrs {
            comm: Some(name.into()),
            ..Default::default()
        };
        let t = k.create_task(prog, &attrs, None, false);
        k.start_task(t);
        t
    }

    /// A fair task that makes itself SCHED_FIFO while a fair hog shares its CPU runs the rest
    /// of its work without a break: after the switch it is in a higher class, so neither the
    /// hog's wakeups nor slice expiry preempt it. Zero costs: its 10 ms after the call end
    /// exactly 10 ms later. (Had it stayed fair, the hog would have run in between: with two
    /// nice-0 tasks each slice is 3 ms, less than 10 ms.)
    #[test]
    fn a_task_that_becomes_fifo_is_not_preempted_by_fair_tasks() {
        let mut k = one_cpu();
        let log: Log = Rc::new(RefCell::new(Vec::new()));
        start(&mut k, "hog", Box::new(Hog));
        let ops = vec![
            Op::Run(1_000_000),
            Op::SetScheduler {
                policy: Policy::Fifo,
                nice: 0,
                rt_priority: 50,
            },
            Op::Run(10_000_000),
        ];
        let b = start(&mut k, "b", Box::new(Ops("b", ops, log.clone())));
        k.run_until(100_000_000);
        let l = log.borrow();
        assert_eq!(l.len(), 2, "{l:?}");
        assert_eq!(l[1].1 - l[0].1, 10_000_000, "{l:?}");
        assert_eq!(k.tasks[b.index()].class, SchedClass::Rt);
        assert_eq!(k.tasks[b.index()].prio(), 99 - 50);
    }

    /// sched_setscheduler(SCHED_IDLE) on a running nice-0 task gives its entity the fixed
    /// weight `scale_load(WEIGHT_IDLEPRIO)` = 3 << 10 and counts it in `h_nr_idle`; beside a
    /// nice-0 hog it then gets about 3 / (1024 + 3) = 0.29 % of the CPU: over the next second
    /// well under 1 % (a slice or two at most beyond its share).
    #[test]
    fn sched_idle_by_setscheduler_takes_the_idle_weight() {
        let mut k = one_cpu();
        let log: Log = Rc::new(RefCell::new(Vec::new()));
        let hog = start(&mut k, "hog", Box::new(Hog));
        let ops = vec![
            Op::SetScheduler {
                policy: Policy::Idle,
                nice: 0,
                rt_priority: 0,
            },
            Op::Run(2_000_000_000),
        ];
        let a = start(&mut k, "a", Box::new(Ops("a", ops, log.clone())));
        k.run_until(10_000_000);
        let se = k.tasks[a.index()].se;
        assert_eq!(k.se[se.index()].load.weight, 3 << 10);
        assert_eq!(k.tasks[a.index()].policy, Policy::Idle);
        assert_eq!(k.cfs[k.rqs[0].cfs.index()].h_nr_idle, 1);
        let (a0, h0) = (k.se[se.index()].sum_exec_runtime, {
            let hs = k.tasks[hog.index()].se;
            k.se[hs.index()].sum_exec_runtime
        });
        k.run_until(1_010_000_000);
        let a1 = k.se[se.index()].sum_exec_runtime - a0;
        let hs = k.tasks[hog.index()].se;
        let h1 = k.se[hs.index()].sum_exec_runtime - h0;
        assert_eq!(a1 + h1, 1_000_000_000);
        assert!(a1 < 10_000_000, "SCHED_IDLE task ran {a1} ns of 1 s");
    }
}
