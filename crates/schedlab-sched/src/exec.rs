//! Execution of task programs on simulated CPUs: segments, the plan of the current operation,
//! the effects of system calls (pipes, futexes, sleeps, fork, exit, wait), hrtimers with slack
//! and IPIs. Costs come from the platform cost model of the CPU doing the work.

use crate::core::{Effect, Ev, HrTimer, Mode, Seg, SegKind, Step};
use crate::ipc::{FutexId, PipeId};
use crate::sched::*;
use crate::schedule::{Point, Woken};
use crate::syscalls::{Ctx, Op, SysResult};
use crate::Kernel;

/// What an effect did to the calling task.
enum Outcome {
    Continue,
    Blocked,
    Exited,
}

/// A task that issues this many operations without simulated time advancing is broken.
const MAX_ZERO_TIME_OPS: u32 = 100_000;

impl Kernel {
    // ===================================================================== segments

    /// Wall time a segment still needs on `cpu`.
    fn seg_wall(&self, cpu: usize, seg: &Seg) -> u64 {
        if let Some(until) = seg.until {
            return until.saturating_sub(self.now);
        }
        match seg.kind {
            SegKind::Work => {
                let speed = self.rqs[cpu].speed;
                if speed == 1024 {
                    seg.rem
                } else {
                    (seg.rem as u128 * 1024).div_ceil(speed as u128) as u64
                }
            }
            _ => seg.rem,
        }
    }

    /// Accounts the progress of the running segment up to now (user/system time) and makes
    /// `seg_start = now`. Any armed segment end becomes stale.
    pub(crate) fn progress_segment(&mut self, cpu: usize) {
        let curr = self.rqs[cpu].curr;
        let elapsed = self.now - self.rqs[cpu].seg_start;
        self.rqs[cpu].seg_start = self.now;
        self.rqs[cpu].gen += 1;
        if elapsed == 0 || self.tasks[curr.index()].is_idle_task {
            return;
        }
        let speed = self.rqs[cpu].speed;
        let task = &mut self.tasks[curr.index()];
        let Some(seg) = task.exec.segs.last_mut() else {
            return;
        };
        if seg.mode == Mode::User {
            task.stats.user_ns += elapsed;
        } else {
            task.stats.sys_ns += elapsed;
        }
        if seg.until.is_some() {
            return;
        }
        let done = if seg.kind == SegKind::Work && speed != 1024 {
            (elapsed as u128 * speed as u128 / 1024) as u64
        } else {
            elapsed
        };
        seg.rem = seg.rem.saturating_sub(done);
    }

    fn arm_segment(&mut self, cpu: usize) {
        let curr = self.rqs[cpu].curr;
        let seg = *self.tasks[curr.index()].exec.segs.last().unwrap();
        let wall = self.seg_wall(cpu, &seg);
        self.rqs[cpu].gen += 1;
        self.rqs[cpu].seg_start = self.now;
        let gen = self.rqs[cpu].gen;
        self.push_event(
            self.now + wall,
            Ev::SegEnd {
                cpu: cpu as u32,
                gen,
            },
        );
    }

    pub(crate) fn on_seg_end(&mut self, cpu: usize, gen: u64) {
        if self.rqs[cpu].gen != gen {
            return;
        }
        self.executing = Some(cpu);
        self.progress_segment(cpu);
        let curr = self.rqs[cpu].curr;
        if let Some(seg) = self.tasks[curr.index()].exec.segs.last_mut() {
            // rounding on slow CPUs can leave a few ns of work: the segment is done
            seg.rem = 0;
            seg.until = None;
        }
        self.cpu_continue(cpu);
    }

    /// Runs the CPU's current task until it needs simulated time (arming a segment end),
    /// blocks, or the CPU goes idle.
    pub(crate) fn cpu_continue(&mut self, cpu: usize) {
        self.executing = Some(cpu);
        let mut zero_ops: u32 = 0;
        loop {
            let t = self.rqs[cpu].curr;
            if self.tasks[t.index()].is_idle_task {
                if self.rqs[cpu].resched != Resched::None || self.rqs[cpu].nr_running > 0 {
                    self.rqs[cpu].resched = Resched::Full;
                    self.__schedule(cpu, true);
                    if self.tasks[self.rqs[cpu].curr.index()].is_idle_task {
                        break;
                    }
                    continue;
                }
                break;
            }
            // 1. the top segment
            if let Some(seg) = self.tasks[t.index()].exec.segs.last().copied() {
                let unfinished = match seg.until {
                    Some(u) => u > self.now,
                    None => seg.rem > 0,
                };
                if unfinished {
                    self.arm_segment(cpu);
                    break;
                }
                self.tasks[t.index()].exec.segs.pop();
                match seg.kind {
                    SegKind::Irq => {
                        let below_user = self.tasks[t.index()]
                            .exec
                            .segs
                            .last()
                            .map(|s| s.mode == Mode::User)
                            .unwrap_or(false);
                        let point = if below_user {
                            Point::IrqExitUser
                        } else {
                            Point::IrqExitKernel
                        };
                        if self.should_preempt(cpu, point) {
                            self.__schedule(cpu, true);
                        }
                    }
                    SegKind::SwitchIn => {
                        // schedule() loops while TIF_NEED_RESCHED is set
                        if self.rqs[cpu].resched == Resched::Full {
                            self.__schedule(cpu, true);
                        }
                    }
                    SegKind::Work => {}
                }
                continue;
            }
            // 2. the next step of the current operation
            let step = self.tasks[t.index()].exec.plan.pop_front();
            match step {
                Some(Step::Cpu(w, mode)) => {
                    if w > 0 {
                        zero_ops = 0;
                        self.tasks[t.index()].exec.segs.push(Seg {
                            rem: w,
                            mode,
                            kind: SegKind::Work,
                            until: None,
                        });
                    }
                }
                Some(Step::Wall(until)) => {
                    if until > self.now {
                        zero_ops = 0;
                        self.tasks[t.index()].exec.segs.push(Seg {
                            rem: 0,
                            mode: Mode::User,
                            kind: SegKind::Work,
                            until: Some(until),
                        });
                    }
                }
                Some(Step::Do(eff)) => match self.apply_effect(cpu, t, eff) {
                    Outcome::Continue => {
                        if self.should_preempt(cpu, Point::PreemptEnable) {
                            self.__schedule(cpu, true);
                        }
                    }
                    Outcome::Blocked | Outcome::Exited => {
                        self.__schedule(cpu, false);
                    }
                },
                Some(Step::Ret(res)) => {
                    self.tasks[t.index()].exec.last = Some(res);
                    if self.should_preempt(cpu, Point::ReturnToUser) {
                        self.__schedule(cpu, true);
                    }
                }
                None => {
                    zero_ops += 1;
                    if zero_ops > MAX_ZERO_TIME_OPS {
                        let comm = self.tasks[t.index()].comm.clone();
                        self.sched_warn_on(
                            true,
                            &format!("task {comm} issues operations without using time"),
                        );
                        // stop it: an endless zero-time loop would hang the simulation
                        self.tasks[t.index()]
                            .exec
                            .plan
                            .push_back(Step::Do(Effect::Exit));
                        continue;
                    }
                    self.next_op(cpu, t);
                }
            }
        }
        self.executing = None;
    }

    /// Asks the task's program for its next operation and plans it.
    fn next_op(&mut self, cpu: usize, t: TaskId) {
        let last = self.tasks[t.index()]
            .exec
            .last
            .take()
            .unwrap_or(SysResult::None);
        let mut prog = self.tasks[t.index()]
            .prog
            .take()
            .expect("running task without a program");
        let op = {
            let mut cx = Ctx { k: self, task: t };
            prog.next(&mut cx, last)
        };
        self.tasks[t.index()].prog = Some(prog);
        self.plan_op(cpu, t, op);
    }

    fn plan_op(&mut self, cpu: usize, t: TaskId, op: Op) {
        use Step::*;
        let plan = &mut Vec::with_capacity(3);
        match op {
            Op::Run(w) => plan.push(Cpu(w, Mode::User)),
            Op::RunWall(d) => plan.push(Wall(self.now + d)),
            Op::Syscall(c) => {
                plan.push(Cpu(c, Mode::Kernel));
                plan.push(Ret(SysResult::None));
            }
            Op::PipeWrite { pipe, bytes } => {
                let c = self.pipe_cost(cpu, bytes, true);
                plan.push(Cpu(c, Mode::Kernel));
                plan.push(Do(Effect::PipeWrite { pipe, bytes }));
            }
            Op::PipeRead { pipe, bytes } => {
                let c = self.pipe_cost(cpu, bytes, false);
                plan.push(Cpu(c, Mode::Kernel));
                plan.push(Do(Effect::PipeRead {
                    pipe,
                    bytes,
                    blocked: false,
                }));
            }
            Op::FutexWait { futex, val } => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_futex_wait.0), Mode::Kernel));
                plan.push(Do(Effect::FutexWait { futex, val }));
            }
            Op::FutexWake { futex, nr } => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_futex_wake.0), Mode::Kernel));
                plan.push(Do(Effect::FutexWake { futex, nr }));
            }
            Op::Sleep(d) => {
                let c = self.cost(cpu, |c| c.c_syscall.0);
                // the hrtimer is armed relative to the time the syscall arms it
                let at = self.now + c + d;
                plan.push(Cpu(c, Mode::Kernel));
                plan.push(Do(Effect::SleepUntil(at)));
            }
            Op::SleepUntil(at) => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_syscall.0), Mode::Kernel));
                plan.push(Do(Effect::SleepUntil(at)));
            }
            Op::Yield => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_syscall.0), Mode::Kernel));
                plan.push(Do(Effect::Yield));
                plan.push(Ret(SysResult::None));
            }
            Op::Spawn(s) => {
                let c = if s.thread {
                    self.cost(cpu, |c| c.c_clone.0)
                } else {
                    self.cost(cpu, |c| c.c_fork.0)
                };
                let slots = &mut self.tasks[t.index()].spawn_slots;
                let idx = slots.iter().position(|x| x.is_none()).unwrap_or_else(|| {
                    slots.push(None);
                    slots.len() - 1
                });
                slots[idx] = Some(s);
                plan.push(Cpu(c, Mode::Kernel));
                plan.push(Do(Effect::SpawnSlot(idx as u32)));
            }
            Op::Exit => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_exit.0), Mode::Kernel));
                plan.push(Do(Effect::Exit));
            }
            Op::WaitChild => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_syscall.0), Mode::Kernel));
                plan.push(Do(Effect::WaitChild));
            }
            Op::SetNice(n) => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_syscall.0), Mode::Kernel));
                plan.push(Do(Effect::SetNice(n)));
                plan.push(Ret(SysResult::None));
            }
            Op::SetSlice(s) => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_syscall.0), Mode::Kernel));
                plan.push(Do(Effect::SetSlice(s)));
                plan.push(Ret(SysResult::None));
            }
        }
        let task = &mut self.tasks[t.index()];
        for s in plan.drain(..) {
            task.exec.plan.push_back(s);
        }
    }

    /// `c_pipe_write/read(n)`: the ≤ 512 B cost plus the copy of the bytes beyond 512.
    fn pipe_cost(&mut self, cpu: usize, bytes: u32, write: bool) -> u64 {
        let base = if write {
            self.cost(cpu, |c| c.c_pipe_write.0)
        } else {
            self.cost(cpu, |c| c.c_pipe_read.0)
        };
        if bytes > 512 {
            let per_kb = self.costs[cpu].c_copy_per_KB.0;
            base + per_kb * (bytes as u64 - 512) / 1024
        } else {
            base
        }
    }

    /// Pushes steps to the front of a task's plan, in order.
    fn push_front(&mut self, t: TaskId, steps: &[Step]) {
        let plan = &mut self.tasks[t.index()].exec.plan;
        for s in steps.iter().rev() {
            plan.push_front(*s);
        }
    }

    /// A task (the waker, running on `cpu`) wakes `p`: the waker pays the wakeup and, for a
    /// local wakeup, the preemption check follows its enqueue work.
    fn wake_from_task(&mut self, cpu: usize, waker: TaskId, p: TaskId, wf: u32) -> bool {
        self.record_wakee(waker, p);
        let w = self.try_to_wake_up(p, wf, cpu, true);
        self.after_wake_from_task(cpu, p, wf, w);
        w != Woken::No
    }

    /// The waker's share of a wakeup (workloads.md §0.2): `c_ttwu`, plus `c_ipi_send` for a
    /// remote target; a local wakeup's preemption check runs after `c_ttwu`.
    pub(crate) fn after_wake_from_task(&mut self, cpu: usize, p: TaskId, wf: u32, w: Woken) {
        let waker = self.rqs[cpu].curr;
        if self.tasks[waker.index()].is_idle_task {
            if w == Woken::LocalDeferred {
                self.local_wakeup_check(cpu, p, wf);
            }
            return;
        }
        let ttwu = self.cost(cpu, |c| c.c_ttwu.0);
        match w {
            Woken::No => {}
            Woken::Local => self.push_front(waker, &[Step::Cpu(ttwu, Mode::Kernel)]),
            Woken::LocalDeferred => self.push_front(
                waker,
                &[
                    Step::Cpu(ttwu, Mode::Kernel),
                    Step::Do(Effect::WakeupPreempt { p, wake_flags: wf }),
                ],
            ),
            Woken::RemoteDirect | Woken::RemoteQueued => {
                let ipi = self.cost(cpu, |c| c.c_ipi_send.0);
                self.push_front(waker, &[Step::Cpu(ttwu + ipi, Mode::Kernel)]);
            }
        }
    }

    /// kernel: fair.c record_wakee() — the wake_wide() flip counters.
    fn record_wakee(&mut self, waker: TaskId, p: TaskId) {
        let j = self.jiffies();
        let hz = self.hz as u64;
        let w = &mut self.tasks[waker.index()];
        if j > w.wakee_flip_decay_ts + hz {
            w.wakee_flips >>= 1;
            w.wakee_flip_decay_ts = j;
        }
        if w.last_wakee != Some(p) {
            w.last_wakee = Some(p);
            w.wakee_flips += 1;
        }
    }

    /// Blocks the running task `t` in state TASK_INTERRUPTIBLE.
    fn block_current(&mut self, t: TaskId) -> Outcome {
        self.tasks[t.index()].state = TaskState::Interruptible;
        Outcome::Blocked
    }

    fn apply_effect(&mut self, cpu: usize, t: TaskId, eff: Effect) -> Outcome {
        match eff {
            Effect::PipeWrite { pipe, bytes } => self.do_pipe_write(cpu, t, pipe, bytes),
            Effect::PipeRead {
                pipe,
                bytes,
                blocked,
            } => self.do_pipe_read(cpu, t, pipe, bytes, blocked),
            Effect::FutexWait { futex, val } => self.do_futex_wait(t, futex, val),
            Effect::FutexWake { futex, nr } => {
                let mut woken = 0;
                while woken < nr {
                    let Some(w) = self.ipc.futexes[futex.index()].waiters.pop_front() else {
                        break;
                    };
                    if self.wake_from_task(cpu, t, w, 0) {
                        woken += 1;
                    }
                }
                // wakes were pushed in front; the result comes after them
                self.tasks[t.index()]
                    .exec
                    .plan
                    .push_back(Step::Ret(SysResult::Woken(woken)));
                Outcome::Continue
            }
            Effect::SleepUntil(at) => {
                if at <= self.now {
                    self.push_front(t, &[Step::Ret(SysResult::None)]);
                    return Outcome::Continue;
                }
                let slack = if self.tasks[t.index()].policy.is_fair() {
                    self.tasks[t.index()].timer_slack_ns
                } else {
                    0
                };
                self.arm_hrtimer(t, cpu, at, at + slack);
                self.push_front(t, &[Step::Do(Effect::Resumed)]);
                self.block_current(t)
            }
            Effect::Resumed => {
                self.push_front(t, &[Step::Ret(SysResult::None)]);
                Outcome::Continue
            }
            Effect::Yield => {
                if self.tasks[t.index()].class == SchedClass::Fair {
                    self.yield_task_fair(cpu);
                }
                // sched_yield() always calls schedule()
                self.rqs[cpu].resched = Resched::Full;
                Outcome::Continue
            }
            Effect::SpawnSlot(i) => {
                let s = self.tasks[t.index()].spawn_slots[i as usize]
                    .take()
                    .expect("spawn slot");
                let s = *s;
                let child = self.create_task(s.program, &s.attrs, Some(t), s.thread);
                let pid = self.tasks[child.index()].pid;
                self.trace_fork(t, child, cpu);
                self.wake_up_new_task(child, true);
                self.push_front(t, &[Step::Ret(SysResult::Pid(pid))]);
                Outcome::Continue
            }
            Effect::Exit => {
                self.do_exit(cpu, t);
                Outcome::Exited
            }
            Effect::WaitChild => {
                if let Some(z) = self.tasks[t.index()].zombies.pop_front() {
                    self.tasks[t.index()].children -= 1;
                    let pid = self.tasks[z.index()].pid;
                    self.push_front(t, &[Step::Ret(SysResult::Pid(pid))]);
                    return Outcome::Continue;
                }
                if self.tasks[t.index()].children == 0 {
                    self.push_front(t, &[Step::Ret(SysResult::NoChild)]);
                    return Outcome::Continue;
                }
                self.tasks[t.index()].waiting_child = true;
                self.push_front(t, &[Step::Do(Effect::WaitChild)]);
                self.block_current(t)
            }
            Effect::SetNice(n) => {
                self.set_user_nice(t, n.clamp(-20, 19));
                Outcome::Continue
            }
            Effect::SetSlice(s) => {
                self.apply_custom_slice(t, s);
                Outcome::Continue
            }
            Effect::WakeupPreempt { p, wake_flags } => {
                self.local_wakeup_check(cpu, p, wake_flags);
                Outcome::Continue
            }
        }
    }

    // ===================================================================== pipes

    fn do_pipe_write(&mut self, cpu: usize, t: TaskId, pipe: PipeId, bytes: u32) -> Outcome {
        let pi = pipe.index();
        let was_empty = self.ipc.pipes[pi].is_empty();
        if !self.ipc.pipes[pi].try_write(bytes) {
            // full: (wake a reader if it was empty), then sleep on the writer queue; the write
            // is retried when woken
            self.ipc.pipes[pi].writers.push_back(t);
            self.push_front(t, &[Step::Do(Effect::PipeWrite { pipe, bytes })]);
            return self.block_current(t);
        }
        let mut wakes: Vec<TaskId> = Vec::new();
        if was_empty {
            // wake_up_interruptible_sync_poll: one exclusive reader, WF_SYNC
            if let Some(r) = self.ipc.pipes[pi].readers.pop_front() {
                wakes.push(r);
            }
        }
        self.tasks[t.index()]
            .exec
            .plan
            .push_front(Step::Ret(SysResult::Bytes(bytes)));
        for r in wakes {
            self.wake_from_task(cpu, t, r, WF_SYNC);
        }
        Outcome::Continue
    }

    fn do_pipe_read(
        &mut self,
        cpu: usize,
        t: TaskId,
        pipe: PipeId,
        bytes: u32,
        blocked: bool,
    ) -> Outcome {
        let pi = pipe.index();
        if self.ipc.pipes[pi].is_empty() {
            if self.ipc.pipes[pi].nr_writers == 0 {
                self.push_front(t, &[Step::Ret(SysResult::Bytes(0))]);
                return Outcome::Continue;
            }
            self.ipc.pipes[pi].readers.push_back(t);
            self.push_front(
                t,
                &[Step::Do(Effect::PipeRead {
                    pipe,
                    bytes,
                    blocked: true,
                })],
            );
            return self.block_current(t);
        }
        let (got, freed_from_full) = self.ipc.pipes[pi].read(bytes);
        let mut wakes: Vec<(TaskId, u32)> = Vec::new();
        if freed_from_full {
            if let Some(w) = self.ipc.pipes[pi].writers.pop_front() {
                wakes.push((w, WF_SYNC));
            }
        }
        if blocked && !self.ipc.pipes[pi].is_empty() {
            // wake_next_reader
            if let Some(r) = self.ipc.pipes[pi].readers.pop_front() {
                wakes.push((r, WF_SYNC));
            }
        }
        self.tasks[t.index()]
            .exec
            .plan
            .push_front(Step::Ret(SysResult::Bytes(got)));
        for (w, f) in wakes {
            self.wake_from_task(cpu, t, w, f);
        }
        Outcome::Continue
    }

    // ===================================================================== futexes

    fn do_futex_wait(&mut self, t: TaskId, futex: FutexId, val: u32) -> Outcome {
        let f = &mut self.ipc.futexes[futex.index()];
        if f.val != val {
            self.push_front(t, &[Step::Ret(SysResult::Again)]);
            return Outcome::Continue;
        }
        f.waiters.push_back(t);
        self.push_front(t, &[Step::Do(Effect::Resumed)]);
        self.block_current(t)
    }

    // ===================================================================== hrtimers

    /// Arms a sleeper's hrtimer on `cpu` with the range `[soft, hard]` (timer slack).
    fn arm_hrtimer(&mut self, t: TaskId, cpu: usize, soft: u64, hard: u64) {
        let id = self.timers.len() as u32;
        self.timers.push(HrTimer {
            task: t,
            soft,
            hard,
            cpu,
            active: true,
        });
        if hard > soft {
            self.rqs[cpu].range_timers.push(id);
        }
        self.push_event(hard, Ev::Timer { id });
    }

    pub(crate) fn on_timer(&mut self, id: u32) {
        let tm = self.timers[id as usize];
        if !tm.active {
            return;
        }
        let cpu = tm.cpu;
        self.expire_timer(id);
        // any other armed range timer whose window has opened expires with this interrupt
        self.expire_range_timers(cpu);
    }

    /// Timer interrupt on `cpu`: expire the sleepers whose slack window has opened.
    pub(crate) fn expire_range_timers(&mut self, cpu: usize) {
        let now = self.now;
        let due: Vec<u32> = self.rqs[cpu]
            .range_timers
            .iter()
            .copied()
            .filter(|&id| {
                let t = &self.timers[id as usize];
                t.active && t.soft <= now
            })
            .collect();
        for id in due {
            self.expire_timer(id);
        }
        let timers = &self.timers;
        self.rqs[cpu]
            .range_timers
            .retain(|&id| timers[id as usize].active);
    }

    /// hrtimer expiry in hard-irq context: wakes the sleeper (WF_TTWU only).
    fn expire_timer(&mut self, id: u32) {
        let tm = self.timers[id as usize];
        self.timers[id as usize].active = false;
        let cpu = tm.cpu;
        let p = tm.task;
        let executing = self.executing;
        self.executing = Some(cpu);
        let idle = self.cpu_is_idle(cpu);
        if !idle {
            self.progress_segment(cpu);
        }
        let w = self.try_to_wake_up(p, 0, cpu, false);
        if w == Woken::LocalDeferred {
            self.local_wakeup_check(cpu, p, 0);
        }
        self.stats.timer_irqs += 1;
        if !idle {
            let c = self.cost(cpu, |c| c.c_hrtimer_irq.0);
            self.push_irq(cpu, c);
        }
        self.executing = executing;
        if executing != Some(cpu) {
            self.cpu_continue_from_outside(cpu);
        }
    }

    /// Continues a CPU after an interrupt handled outside its own execution flow.
    pub(crate) fn cpu_continue_from_outside(&mut self, cpu: usize) {
        let saved = self.executing;
        self.cpu_continue(cpu);
        self.executing = saved;
    }

    // ===================================================================== IPIs

    /// An IPI on `cpu`: process the wake list (`sched_ttwu_pending`) and notice a resched.
    pub(crate) fn on_ipi(&mut self, cpu: usize) {
        self.rqs[cpu].ipi_pending = false;
        self.executing = Some(cpu);
        let idle = self.cpu_is_idle(cpu);
        if !idle {
            self.progress_segment(cpu);
        }
        let list = std::mem::take(&mut self.rqs[cpu].wake_list);
        for (p, wf) in list {
            // only WF_MIGRATED survives the wake list (smp.md §1.5.2)
            self.tasks[p.index()].on_rq = OnRq::No;
            self.ttwu_do_activate(cpu, p, wf & WF_MIGRATED, true, false);
        }
        self.rqs[cpu].ttwu_pending = false;
        self.on_ipi_balance(cpu);
        if !idle {
            let c = self.cost(cpu, |c| c.c_irq.0);
            self.push_irq(cpu, c);
        }
        self.cpu_continue(cpu);
    }

    /// kernel: core.c set_user_nice() — the sched_change pattern (dequeue SAVE, reweight,
    /// enqueue RESTORE) and prio_changed_fair.
    pub(crate) fn set_user_nice(&mut self, t: TaskId, nice: i32) {
        if self.tasks[t.index()].nice == nice {
            return;
        }
        let cpu = self.tasks[t.index()].cpu;
        let queued = self.tasks[t.index()].on_rq == OnRq::Queued;
        let running = self.rqs[cpu].curr == t;
        let old_nice = self.tasks[t.index()].nice;
        if queued {
            self.dequeue_task(cpu, t, DEQUEUE_SAVE | DEQUEUE_NOCLOCK);
        }
        if running {
            self.put_prev_task_fair(t);
        }
        self.tasks[t.index()].nice = nice;
        if self.tasks[t.index()].policy != Policy::Idle {
            let (w, inv) = self.task_load_weight(t);
            let se = self.tasks[t.index()].se;
            let cfs = self.se[se.index()].cfs_rq;
            self.reweight_entity(cfs, se, w, inv);
        }
        if queued {
            self.enqueue_task(cpu, t, ENQUEUE_RESTORE | ENQUEUE_NOCLOCK);
        }
        if running {
            let mut e = Some(self.tasks[t.index()].se);
            while let Some(x) = e {
                let c = self.se[x.index()].cfs_rq;
                self.set_next_entity_pub(c, x);
                e = self.se[x.index()].parent;
            }
        }
        // prio_changed_fair
        if queued && self.cfs[self.rqs[cpu].cfs.index()].nr_queued > 1 {
            if running {
                if nice > old_nice {
                    self.resched_curr(cpu);
                }
            } else {
                self.wakeup_preempt(cpu, t, 0, true);
            }
        }
    }
}
