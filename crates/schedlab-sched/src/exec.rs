//! Execution of task programs on simulated CPUs: segments, the plan of the current operation,
//! the effects of system calls (pipes with their `pipe->mutex`, AF_UNIX stream sockets, poll,
//! futexes, sleeps, fork, exit, wait), kernel mutexes with optimistic spinning, hrtimers with
//! slack and IPIs. Costs come from the platform cost model of the CPU doing the work.

use crate::core::{Point, Woken};
use crate::eventpoll::EpItem;
use crate::features::SimFeature;
use crate::ipc::{pipe_op_base, FutexId, MutexId, PipeId, SockId, PIPE_MUTEX_LINES};
use crate::net::{
    EpollId, EpollOp, EventfdId, ListenId, NetFd, RecvFlags, TcpSeg, TcpSockId, UdpSock, UdpSockId,
    WaitQueue, Waiter, EPOLLERR, EPOLLEXCLUSIVE, EPOLLHUP, EPOLLIN, EPOLLOUT, EP_PRIVATE_BITS,
    LO_MSS, LO_SIZE_GOAL, TCP_DELACK_MIN_NS,
};
use crate::presets::PreemptModel;
use crate::sched::*;
use crate::sim::Ev;
use crate::syscalls::{Ctx, FsCall, KOp, KernelOp, Op, Piece, PollFd, SysResult};
use crate::workqueue::{PoolKind, Work};
use crate::Kernel;
use schedlab_platform::cpumask::CpuMask;

/// What an effect did to the calling task.
enum Outcome {
    Continue,
    /// As `Continue`, but no preemption point follows: the effect ran with bottom halves
    /// disabled (inside the NET_RX softirq); `Effect::SoftirqEnd` is the point.
    ContinueNoPoint,
    /// The task is preempted whatever the preemption model (the stopper runs).
    Preempted,
    Blocked,
    Exited,
}

/// A task that issues this many operations without simulated time advancing is broken.
const MAX_ZERO_TIME_OPS: u32 = 100_000;

/// Length of a spin segment: open-ended (about 73 years); a spin ends only by notification.
pub(crate) const SPIN_FOREVER: u64 = u64::MAX / 8;

/// A user spin (`SegKind::UserSpin`) with more left than this is open-ended: no end event.
pub(crate) const USER_SPIN_OPEN: u64 = SPIN_FOREVER / 2;

/// Thread exit costs `c_exit / THREAD_EXIT_DIVISOR`: the spec gives `c_thread_exit` ≈ 10 µs
/// (workloads.md §3.2) without a cost-table row; 10/70 is its ratio to the A76 `c_exit`.
const THREAD_EXIT_DIVISOR: u64 = 7;

/// Privilege of a running segment, for the preemption rules of rt-dl.md §1.7.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    User,
    /// Preemptible kernel code (a system call).
    Kernel,
    /// Not preemptible (interrupt handler, context switch, raw spinlock).
    NoPreempt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SegKind {
    Work,
    /// An interrupt handler; on completion, the interrupt exit is a preemption point with the
    /// mode of the interrupted segment.
    Irq,
    /// The cost of switching in; on completion `schedule()` returns.
    SwitchIn,
    /// Optimistic spinning on a kernel mutex (`mutex_optimistic_spin`, preemption disabled):
    /// open-ended, ended by the unlock, by the owner leaving its CPU, or by `need_resched()`.
    Spin,
    /// A user-space busy-wait on a futex word (`Op::SpinWhile`, user mode, preemptible):
    /// `rem` is the spin budget in wall ns on a CPU (open-ended above `USER_SPIN_OPEN`: no
    /// end event); ended early by `futex_word_changed`.
    UserSpin,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Seg {
    /// Remaining work in ns at the reference core (`Irq`/`SwitchIn`: wall ns on this CPU).
    pub rem: u64,
    pub mode: Mode,
    pub kind: SegKind,
    /// `RunWall`: the segment ends at this wall time whatever the work done.
    pub until: Option<u64>,
}

impl Seg {
    /// Whether the segment still has work (or wall time, for `until`) left at `now`.
    #[inline]
    pub(crate) fn unfinished(&self, now: u64) -> bool {
        match self.until {
            Some(u) => u > now,
            None => self.rem > 0,
        }
    }
}

/// The rest of the current operation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Step {
    /// CPU work (user or kernel, ns at the reference core).
    Cpu(u64, Mode),
    /// Busy loop until a wall time.
    Wall(u64),
    /// A side effect of a system call.
    Do(Effect),
    /// Return to user space with a result (a preemption point).
    Ret(SysResult),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Effect {
    /// `mutex_lock()`: take, spin on the owner, or sleep (workloads.md §1.8).
    MutexLock {
        m: MutexId,
    },
    PipeWrite {
        pipe: PipeId,
        bytes: u32,
        /// The write has already slept once (`wake_next_writer`).
        blocked: bool,
        /// The system-call exit share of the cost, run after the wakeups (see
        /// `plan_pipe_op`).
        exit: u64,
    },
    PipeRead {
        pipe: PipeId,
        bytes: u32,
        blocked: bool,
        exit: u64,
        /// `O_NONBLOCK`: an empty pipe with writers returns `EAGAIN` instead of sleeping.
        nonblock: bool,
    },
    /// Sleep on a pipe's writer (`write`) or reader queue unless it is ready, then retry.
    PipeWait {
        pipe: PipeId,
        bytes: u32,
        write: bool,
        exit: u64,
    },
    SockSend {
        sock: SockId,
        bytes: u32,
    },
    SockRecv {
        sock: SockId,
        bytes: u32,
    },
    Poll {
        fd: PollFd,
    },
    Pselect {
        fd: PollFd,
    },
    FutexWait {
        futex: FutexId,
        val: u32,
    },
    FutexWake {
        futex: FutexId,
        nr: u32,
    },
    /// `Op::SpinWhile`: start spinning unless the word already differs.
    UserSpin {
        futex: FutexId,
        val: u32,
        max_ns: u64,
    },
    /// The end of a user spin (word changed or budget used): its result.
    UserSpinEnd {
        futex: FutexId,
        val: u32,
    },
    FutexLockPi {
        futex: FutexId,
    },
    FutexUnlockPi {
        futex: FutexId,
    },
    SleepUntil(u64),
    /// The block of a task that was woken (its timer fired, its futex was posted…): returns.
    Resumed,
    Yield,
    /// `run_ktimerd()` (softirq.c, PREEMPT_RT): wake the sleepers whose soft hrtimers expired
    /// on this CPU, or sleep.
    Ktimers,
    /// `cond_resched()` inside kernel code.
    CondResched,
    SpawnSlot(u32),
    Exit,
    WaitChild,
    SetNice(i32),
    SetSlice(u64),
    SetScheduler(Policy, i32, u32),
    CgroupAttach(crate::sched::TgId),
    /// `sched_exec()` at the start of `execve()`: exec balancing.
    SchedExec,
    /// The rest of `execve()` (`c_exec`, charged on the CPU the task now runs on).
    ExecImage,
    /// Second half of a local wakeup: the preemption check after the waker's enqueue work.
    WakeupPreempt {
        p: TaskId,
        wake_flags: u32,
    },
    /// A file-system call's change of state after its CPU work (xfs.rs): dirty pages,
    /// logged items.
    Fs {
        call: FsCall,
        file: u32,
        bytes: u32,
    },
    /// `fsync()` step 1: write back the file's dirty pages (`filemap_write_and_wait_range`).
    FsyncData {
        file: u32,
    },
    /// Submit the data writeback of `bytes` and sleep until it has completed.
    FsyncSubmit {
        file: u32,
        bytes: u32,
    },
    /// `fsync()` step 2: force the log up to the file's last change.
    FsyncLog {
        file: u32,
    },
    /// Sleep in `xlog_wait()` until checkpoint `seq` is on disk.
    LogWait {
        seq: u64,
    },
    /// `xfs_buf_lock()` of the AGI buffer of the caller's allocation group (xfs.rs).
    AgiLock,
    /// `flush_delayed_work()` of CPU `cpu`'s inodegc work: sleep until run `run` is done.
    GcFlushWait {
        cpu: u32,
        run: u64,
    },
    /// `worker_thread()` of a kworker of pool `pool`.
    Kworker {
        pool: u32,
    },
    /// The end of a work item (after its CPU work).
    WorkDone {
        work: Work,
    },
    /// The CIL push submits the checkpoint's log write.
    LogSubmit {
        seq: u64,
        bytes: u32,
    },
    /// `lock_sock()` of a TCP socket at the start of a send or receive.
    TcpLock {
        sock: TcpSockId,
    },
    /// `tcp_sendmsg` after its copy: queue, push, deliver (net.rs).
    TcpSend {
        sock: TcpSockId,
        bytes: u32,
    },
    /// `sk_stream_wait_memory` after `release_sock`.
    TcpWaitMemory {
        sock: TcpSockId,
        bytes: u32,
    },
    /// One skb on loopback: the NET_RX softirq's receive of `seg` at `to`, in the sender's
    /// context; `end`: its `local_bh_enable` follows (a preemption point).
    TcpXmit {
        to: TcpSockId,
        seg: TcpSeg,
        end: bool,
    },
    /// The end of the owned-socket path: `sk_add_backlog`.
    TcpBacklogAdd {
        sock: TcpSockId,
        seg: TcpSeg,
    },
    /// The end of the full receive path: queue the data, ACK policy, wake-ups.
    TcpRcv {
        sock: TcpSockId,
        seg: TcpSeg,
        in_task: bool,
    },
    /// A pure ACK from `sock` (its cost paid before).
    TcpPureAck {
        sock: TcpSockId,
        in_task: bool,
    },
    /// `local_bh_enable()` after the softirq: a preemption point.
    SoftirqEnd,
    /// `release_sock()`.
    TcpRelease {
        sock: TcpSockId,
    },
    /// The backlogged segments, once their `c_tcp_rcv` is paid.
    TcpBacklogDone {
        sock: TcpSockId,
        n: u32,
    },
    TcpRecv {
        sock: TcpSockId,
        bytes: u32,
        flags: RecvFlags,
        /// Bytes gathered before a wait (WAITALL).
        got: u32,
    },
    /// `sk_wait_data` after `release_sock`.
    TcpWaitData {
        sock: TcpSockId,
        bytes: u32,
        flags: RecvFlags,
        got: u32,
    },
    TcpConnect {
        listener: ListenId,
        nodelay: bool,
    },
    Accept {
        listener: ListenId,
        nonblock: bool,
    },
    TcpClose {
        sock: TcpSockId,
    },
    /// A datagram's NET_RX processing at `dst` (its cost paid before).
    UdpRcv {
        dst: UdpSockId,
        bytes: u32,
    },
    UdpRecv {
        sock: UdpSockId,
        bytes: u32,
    },
    EpollCtl {
        ep: EpollId,
        op: EpollOp,
        fd: NetFd,
        events: u32,
    },
    EpollWait {
        ep: EpollId,
        max: u32,
    },
    EventfdWrite {
        fd: EventfdId,
    },
    EventfdRead {
        fd: EventfdId,
    },
    /// Second half of a local wake-up from softirq context (`in_task()` false).
    WakeupPreemptSoftirq {
        p: TaskId,
        wake_flags: u32,
    },
}

/// The steps left of a task's current operation, first step last: a stack, so that taking the
/// next step and pushing steps in front (the common operations) are a `Vec` pop and push.
#[derive(Default)]
pub(crate) struct Plan {
    rev: Vec<Step>,
}

impl Plan {
    /// Takes the next step.
    #[inline]
    pub fn pop_front(&mut self) -> Option<Step> {
        self.rev.pop()
    }

    /// Makes `s` the next step.
    #[inline]
    pub fn push_front(&mut self, s: Step) {
        self.rev.push(s);
    }

    /// Appends `s` after every other step.
    pub fn push_back(&mut self, s: Step) {
        self.rev.insert(0, s);
    }

    /// Replaces an empty plan by `steps` (in order); returns the old (empty) buffer, cleared,
    /// for reuse.
    #[inline]
    pub fn replace_empty(&mut self, mut steps: Vec<Step>) -> Vec<Step> {
        debug_assert!(self.rev.is_empty());
        steps.reverse();
        std::mem::replace(&mut self.rev, steps)
    }
}

/// A task's execution state.
#[derive(Default)]
pub(crate) struct Exec {
    /// Segments stack: the top one is executing (interrupts and switch-in push on top).
    pub segs: Vec<Seg>,
    pub plan: Plan,
    pub last: Option<SysResult>,
    /// The kernel mutex the task owns (at most one: a pipe's `pipe->mutex`).
    pub lock_held: Option<MutexId>,
}

/// An hrtimer (nanosleep).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HrTimer {
    pub task: TaskId,
    pub soft: u64,
    /// Hard expiry (its event is in the queue; the cpuidle governor's next timer event).
    pub hard: u64,
    pub cpu: usize,
    pub active: bool,
    /// Bumped each time the slot is reused: a queued expiry of an earlier use is ignored.
    pub gen: u32,
}

impl Kernel {
    // ===================================================================== segments

    pub(crate) fn on_seg_end(&mut self, cpu: usize, gen: u64) {
        if self.rqs[cpu].gen != gen {
            return;
        }
        self.executing = Some(cpu);
        self.finish_segment(cpu);
        self.cpu_continue(cpu);
    }

    /// Runs the CPU's current task until it needs simulated time (arming a segment end),
    /// blocks, or the CPU goes idle.
    pub(crate) fn cpu_continue(&mut self, cpu: usize) {
        self.executing = Some(cpu);
        self.cont_depth += 1;
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
                if seg.unfinished(self.now) {
                    // v6.18+ CFS bandwidth: the throttle task work runs on the way back to
                    // user space (after an interrupt or a switch in user mode, or before
                    // user work starts)
                    if seg.mode == Mode::User
                        && matches!(seg.kind, SegKind::Work | SegKind::UserSpin)
                        && self.tasks[t.index()].throttle_work
                        && self.throttle_cfs_rq_work(cpu, t)
                    {
                        self.__schedule(cpu, true);
                        continue;
                    }
                    let wall = self.seg_wall(cpu, &seg);
                    if self.run_ahead_to_segment_end(cpu, &seg, wall) {
                        continue;
                    }
                    self.arm_segment_wall(cpu, &seg, wall);
                    break;
                }
                self.tasks[t.index()].exec.segs.pop();
                match seg.kind {
                    SegKind::Irq if self.spinning_below(t) => {
                        // mutex_optimistic_spin() runs with preemption disabled: no preemption
                        // at this interrupt exit, but the spinner gives up on need_resched()
                        if self.need_resched(cpu) {
                            self.tasks[t.index()].exec.segs.last_mut().unwrap().rem = 0;
                        }
                    }
                    SegKind::Irq => {
                        let below = self.tasks[t.index()].exec.segs.last().copied();
                        let below_user = below.map(|s| s.mode == Mode::User).unwrap_or(false);
                        // kernel work with preemption (bottom halves) disabled, e.g. the
                        // NET_RX softirq run in a sender's context: irqentry_exit() sees a
                        // non-zero preempt count and returns into it
                        let atomic = below
                            .is_some_and(|s| s.kind == SegKind::Work && s.mode == Mode::NoPreempt);
                        let point = if below_user {
                            Point::IrqExitUser
                        } else {
                            Point::IrqExitKernel
                        };
                        if !atomic && self.should_preempt(cpu, point) {
                            self.__schedule(cpu, true);
                        }
                    }
                    SegKind::SwitchIn => {
                        // schedule() loops while TIF_NEED_RESCHED is set
                        if self.rqs[cpu].resched == Resched::Full {
                            self.__schedule(cpu, true);
                        }
                    }
                    SegKind::Work | SegKind::Spin | SegKind::UserSpin => {}
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
                    Outcome::ContinueNoPoint => {}
                    Outcome::Continue => {
                        if self.should_preempt(cpu, Point::PreemptEnable) {
                            self.__schedule(cpu, true);
                        }
                    }
                    Outcome::Preempted => {
                        if self.tasks[t.index()].exec.segs.is_empty() {
                            self.__schedule(cpu, true);
                        }
                        // else the stopper's switch segment runs first; at its end
                        // __schedule() runs for the pending resched (SegKind::SwitchIn)
                    }
                    Outcome::Blocked | Outcome::Exited => {
                        self.__schedule(cpu, false);
                    }
                },
                Some(Step::Ret(res)) => {
                    self.tasks[t.index()].exec.last = Some(res);
                    if self.tasks[t.index()].throttle_work && self.throttle_cfs_rq_work(cpu, t) {
                        // the return to user space runs the throttle task work (v6.18+)
                        self.__schedule(cpu, true);
                    } else if self.should_preempt(cpu, Point::ReturnToUser) {
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
        self.cont_depth -= 1;
    }

    /// Run-ahead: when this CPU's segment would end before every queued event, pushing its
    /// end event and popping it straight back is skipped. What the event loop would have done
    /// in between is done here: count the event being completed, check the invariants, move
    /// the clock, and finish the segment as `on_seg_end` does. Only at the tail of a SegEnd,
    /// IPI or tick handler (`run_ahead`), never from a nested continuation, and only when the
    /// end is strictly earlier than the next event, so the order of events is unchanged.
    /// `wall` is `seg_wall(cpu, seg)`.
    fn run_ahead_to_segment_end(&mut self, cpu: usize, seg: &Seg, wall: u64) -> bool {
        if !self.run_ahead || self.cont_depth != 1 || seg.kind == SegKind::Spin {
            return false;
        }
        let end = self.now + wall;
        if self.events.peek_time().is_none_or(|next| end >= next.0) {
            return false;
        }
        self.stats.events += 1;
        if self.check_invariants {
            self.check_all_invariants();
        }
        self.now = end;
        self.finish_segment(cpu);
        true
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
        if let Op::Run(w) = op {
            // one step into the empty plan: no scratch buffer to fill and reverse
            self.tasks[t.index()]
                .exec
                .plan
                .push_front(Cpu(w, Mode::User));
            return;
        }
        // a reused buffer: planning an operation allocates nothing
        let mut buf = std::mem::take(&mut self.plan_scratch);
        let plan = &mut buf;
        match op {
            Op::Run(w) => plan.push(Cpu(w, Mode::User)), // (taken above)
            Op::RunWall(d) => plan.push(Wall(self.now + d)),
            Op::Syscall(c) => {
                plan.push(Cpu(c, Mode::Kernel));
                plan.push(Ret(SysResult::None));
            }
            Op::SyscallCondResched { work, every } => {
                let every = every.max(1);
                let mut left = work;
                while left > every {
                    plan.push(Cpu(every, Mode::Kernel));
                    plan.push(Do(Effect::CondResched));
                    left -= every;
                }
                plan.push(Cpu(left, Mode::Kernel));
                plan.push(Ret(SysResult::None));
            }
            Op::Segment(pieces) => {
                // as Op::Run / Op::Syscall piece by piece
                for p in pieces.iter() {
                    match *p {
                        Piece::User(w) => plan.push(Cpu(w, Mode::User)),
                        Piece::Sys(w) => {
                            plan.push(Cpu(w, Mode::Kernel));
                            plan.push(Ret(SysResult::None));
                        }
                    }
                }
            }
            Op::PipeWrite { pipe, bytes } => {
                self.plan_pipe_op(cpu, pipe, bytes, true, false, plan);
            }
            Op::PipeRead { pipe, bytes } => {
                self.plan_pipe_op(cpu, pipe, bytes, false, false, plan);
            }
            Op::PipeReadNonblock { pipe, bytes } => {
                self.plan_pipe_op(cpu, pipe, bytes, false, true, plan);
            }
            Op::SockSend { sock, bytes } => {
                let c = self.unix_cost(cpu, bytes, true);
                plan.push(Cpu(c, Mode::Kernel));
                plan.push(Do(Effect::SockSend { sock, bytes }));
            }
            Op::SockRecv { sock, bytes } => {
                let c = self.unix_cost(cpu, bytes, false);
                plan.push(Cpu(c, Mode::Kernel));
                plan.push(Do(Effect::SockRecv { sock, bytes }));
            }
            Op::Poll { fd } => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_syscall.0), Mode::Kernel));
                plan.push(Do(Effect::Poll { fd }));
            }
            Op::Pselect { fd } => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_syscall.0), Mode::Kernel));
                plan.push(Do(Effect::Pselect { fd }));
            }
            Op::FutexWait { futex, val } => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_futex_wait.0), Mode::Kernel));
                plan.push(Do(Effect::FutexWait { futex, val }));
            }
            Op::FutexWake { futex, nr } => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_futex_wake.0), Mode::Kernel));
                plan.push(Do(Effect::FutexWake { futex, nr }));
            }
            Op::SpinWhile { futex, val, max_ns } => {
                plan.push(Do(Effect::UserSpin { futex, val, max_ns }));
            }
            Op::FutexLockPi { futex } => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_futex_wait.0), Mode::Kernel));
                plan.push(Do(Effect::FutexLockPi { futex }));
            }
            Op::FutexUnlockPi { futex } => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_futex_wake.0), Mode::Kernel));
                plan.push(Do(Effect::FutexUnlockPi { futex }));
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
            Op::Exec => {
                // bprm_execve() calls sched_exec() before loading the image
                plan.push(Do(Effect::SchedExec));
            }
            Op::Exit => {
                // a thread other than the group leader keeps the mm: no mm teardown.
                // Deviation: the kernel tears the mm down in the exit of its last user
                // (mmput()), which is a thread when the leader exits first; here the leader
                // always pays c_exit and every other thread c_exit / 7 (the same sum).
                let task = &self.tasks[t.index()];
                let div = if task.tgid != task.pid {
                    THREAD_EXIT_DIVISOR
                } else {
                    1
                };
                plan.push(Cpu(self.cost(cpu, |c| c.c_exit.0 / div), Mode::Kernel));
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
            Op::SetScheduler {
                policy,
                nice,
                rt_priority,
            } => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_syscall.0), Mode::Kernel));
                plan.push(Do(Effect::SetScheduler(policy, nice, rt_priority)));
                plan.push(Ret(SysResult::None));
            }
            Op::CgroupAttach(tg) => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_syscall.0), Mode::Kernel));
                plan.push(Do(Effect::CgroupAttach(tg)));
                plan.push(Ret(SysResult::None));
            }
            Op::TcpConnect { listener, nodelay } => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_tcp_connect.0), Mode::Kernel));
                plan.push(Do(Effect::TcpConnect { listener, nodelay }));
            }
            Op::Accept { listener, nonblock } => {
                plan.push(Do(Effect::Accept { listener, nonblock }));
            }
            Op::TcpSend { sock, bytes } => {
                let c = self.cost(cpu, |c| c.c_tcp_send.0)
                    + Self::net_copy(self.costs[cpu].c_copy_per_KB.0, bytes);
                plan.push(Do(Effect::TcpLock { sock }));
                plan.push(Cpu(c, Mode::Kernel));
                plan.push(Do(Effect::TcpSend { sock, bytes }));
            }
            Op::TcpRecv { sock, bytes, flags } => {
                plan.push(Do(Effect::TcpLock { sock }));
                plan.push(Do(Effect::TcpRecv {
                    sock,
                    bytes: bytes.max(1),
                    flags,
                    got: 0,
                }));
            }
            Op::TcpClose { sock } => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_tcp_close.0), Mode::Kernel));
                plan.push(Do(Effect::TcpClose { sock }));
            }
            Op::UdpSend { sock, dst, bytes } => {
                let _ = sock;
                let copy = Self::net_copy(self.costs[cpu].c_copy_per_KB.0, bytes);
                let c = self.cost(cpu, |c| c.c_udp_send.0) + copy;
                let rx = self.cost(cpu, |c| c.c_net_rx_udp.0);
                // udp_sendmsg → ip_send_skb → loopback xmit; NET_RX at local_bh_enable
                plan.push(Cpu(c, Mode::Kernel));
                plan.push(Cpu(rx, Mode::NoPreempt));
                plan.push(Do(Effect::UdpRcv { dst, bytes }));
                plan.push(Do(Effect::SoftirqEnd));
                plan.push(Ret(SysResult::Bytes(bytes)));
            }
            Op::UdpRecv { sock, bytes } => plan.push(Do(Effect::UdpRecv { sock, bytes })),
            Op::EpollCtl { ep, op, fd, events } => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_epoll_ctl.0), Mode::Kernel));
                plan.push(Do(Effect::EpollCtl { ep, op, fd, events }));
            }
            Op::EpollWait { ep, max } => plan.push(Do(Effect::EpollWait { ep, max })),
            Op::EventfdWrite { fd } => {
                plan.push(Cpu(self.cost(cpu, |c| c.c_pipe_write.0), Mode::Kernel));
                plan.push(Do(Effect::EventfdWrite { fd }));
            }
            Op::EventfdRead { fd } => plan.push(Do(Effect::EventfdRead { fd })),
            Op::Kernel(KernelOp(KOp::Ktimers)) => plan.push(Do(Effect::Ktimers)),
            Op::Kernel(KernelOp(KOp::Kworker { pool })) => plan.push(Do(Effect::Kworker { pool })),
            Op::Fs {
                call,
                file,
                bytes,
                cpu_ns,
            } => self.plan_fs_op(cpu, call, file, bytes, cpu_ns, plan),
        }
        // the plan is empty here (an operation is planned when the last one is done)
        self.plan_scratch = self.tasks[t.index()].exec.plan.replace_empty(buf);
    }

    /// `c_pipe_write/read(n)`: the ≤ 512 B cost plus the copy of the bytes beyond 512.
    fn pipe_cost(&mut self, cpu: usize, bytes: u32, write: bool) -> u64 {
        let anon = self.cfg.has(crate::patches::Patch::PipeAnonNoTimes);
        let base = self.cost(cpu, |c| pipe_op_base(c, write, anon));
        if bytes > 512 {
            let per_kb = self.costs[cpu].c_copy_per_KB.0;
            base + per_kb * (bytes as u64 - 512) / 1024
        } else {
            base
        }
    }

    /// Plans a pipe read or write. The cost includes the system call's entry and exit
    /// (workloads.md §1.2); the exit share, `c_syscall / 2`, runs after the effect, behind
    /// any wakeup it does, as in fs/pipe.c where `pipe_write()` wakes the reader after
    /// unlocking and then still updates the mtime and returns through the syscall exit.
    /// That order matters to the scheduler: a waker preempted by its wakeup under
    /// preempt=none runs the exit before it switches, and since the wakeup asked
    /// `rq_clock_skip_update()` that time is charged to the task switched to.
    /// With `SIM_PIPE_MUTEX` the rest is split once more: the system call entry (the
    /// `c_syscall / 2` share, or all of `c_syscall` where the exit is not split off) runs
    /// unlocked, then `pipe->mutex` is taken and the rest (copy, buffer management) runs
    /// under it; the effect unlocks before waking anybody.
    /// Uncontended, the total time is the same as without it. The jittered total is split
    /// in the ratio of the mean costs.
    fn plan_pipe_op(
        &mut self,
        cpu: usize,
        pipe: PipeId,
        bytes: u32,
        write: bool,
        nonblock: bool,
        plan: &mut Vec<Step>,
    ) {
        let c = self.pipe_cost(cpu, bytes, write);
        let costs = &self.costs[cpu];
        let anon = self.cfg.has(crate::patches::Patch::PipeAnonNoTimes);
        let base = pipe_op_base(costs, write, anon);
        let mean = base + Self::copy_beyond(costs.c_copy_per_KB.0, bytes, 512);
        let half = (costs.c_syscall.0 / 2).min(base / 2);
        let share = |x: u64| {
            // 0 for a zero mean; without a 128-bit division while the product fits
            match c.checked_mul(x) {
                Some(p) => p.checked_div(mean).unwrap_or(0),
                None if mean == 0 => 0,
                None => (c as u128 * x as u128 / mean as u128) as u64,
            }
        };
        // Under full preemption a waker is switched out at its wakeup and runs the exit when
        // it resumes, before its next wakeup: charged the same as running it first, so there
        // it stays in the segment before the effect (one event fewer per operation).
        let exit = if self.preempt == PreemptModel::Full {
            0
        } else {
            share(half)
        };
        let eff = if write {
            Effect::PipeWrite {
                pipe,
                bytes,
                blocked: false,
                exit,
            }
        } else {
            Effect::PipeRead {
                pipe,
                bytes,
                blocked: false,
                exit,
                nonblock,
            }
        };
        if !self.cfg.sim(SimFeature::SIM_PIPE_MUTEX) {
            plan.push(Step::Cpu(c - exit, Mode::Kernel));
            plan.push(Step::Do(eff));
            return;
        }
        // The unlocked system call entry; where the exit stays in this plan (exit == 0) it is
        // spent unlocked too, before the mutex: the critical section never includes it.
        let unlocked = if exit == 0 {
            share(costs.c_syscall.0.min(base))
        } else {
            share(half)
        };
        let m = self.ipc.pipes[pipe.index()].mutex;
        plan.push(Step::Cpu(unlocked, Mode::Kernel));
        plan.push(Step::Do(Effect::MutexLock { m }));
        plan.push(Step::Cpu(c - unlocked - exit, Mode::Kernel));
        plan.push(Step::Do(eff));
    }

    /// The copy of a network payload (netbench.md §1.12.2, §15.6): `c_copy_per_KB` per KiB of
    /// the whole payload once it exceeds 512 B (the base costs are for ≤ 512 B).
    fn net_copy(per_kb: u64, bytes: u32) -> u64 {
        if bytes > 512 {
            per_kb * bytes as u64 / 1024
        } else {
            0
        }
    }

    /// `c_copy_per_KB` for the bytes of a transfer beyond `included`.
    fn copy_beyond(per_kb: u64, bytes: u32, included: u32) -> u64 {
        if bytes > included {
            per_kb * (bytes - included) as u64 / 1024
        } else {
            0
        }
    }

    /// `c_unix_send/recv(n)`: the 100-byte cost plus the copy of the bytes beyond 100.
    fn unix_cost(&mut self, cpu: usize, bytes: u32, send: bool) -> u64 {
        let base = if send {
            self.cost(cpu, |c| c.c_unix_send.0)
        } else {
            self.cost(cpu, |c| c.c_unix_recv.0)
        };
        base + Self::copy_beyond(self.costs[cpu].c_copy_per_KB.0, bytes, 100)
    }

    /// Pushes the system call's return, preceded by its exit share of `exit` ns when there is
    /// one, to the front of the plan (wakeups pushed afterwards run before both).
    fn push_ret_after_exit(&mut self, t: TaskId, exit: u64, r: SysResult) {
        if exit == 0 {
            self.push_front(t, &[Step::Ret(r)]);
        } else {
            self.push_front(t, &[Step::Cpu(exit, Mode::Kernel), Step::Ret(r)]);
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
        // select_task_rq() ran first in ttwu: its idle scan, then the enqueue work
        let ttwu = self.take_select_idle_cost(cpu) + self.cost(cpu, |c| c.c_ttwu.0);
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
                self.stats.paths.ipi_sends += 1;
                self.stats.paths.ipi_send_ns += ipi;
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
            Effect::MutexLock { m } => self.do_mutex_lock(cpu, t, m),
            Effect::PipeWrite {
                pipe,
                bytes,
                blocked,
                exit,
            } => self.do_pipe_write(cpu, t, pipe, bytes, blocked, exit),
            Effect::PipeWait {
                pipe,
                bytes,
                write,
                exit,
            } => self.do_pipe_wait(t, pipe, bytes, write, exit),
            Effect::SockSend { sock, bytes } => self.do_sock_send(cpu, t, sock, bytes),
            Effect::SockRecv { sock, bytes } => self.do_sock_recv(cpu, t, sock, bytes),
            Effect::Poll { fd } => self.do_poll(t, fd),
            Effect::Pselect { fd } => self.do_pselect(t, fd),
            Effect::PipeRead {
                pipe,
                bytes,
                blocked,
                exit,
                nonblock,
            } => self.do_pipe_read(cpu, t, pipe, bytes, blocked, exit, nonblock),
            Effect::FutexWait { futex, val } => self.do_futex_wait(t, futex, val),
            Effect::UserSpin { futex, val, max_ns } => self.user_spin(t, futex, val, max_ns),
            Effect::UserSpinEnd { futex, val } => {
                let fx = &mut self.ipc.futexes[futex.index()];
                if let Some(i) = fx.spinners.iter().position(|&(s, _)| s == t) {
                    fx.spinners.remove(i);
                }
                let res = if fx.val != val {
                    SysResult::Changed
                } else {
                    SysResult::SpinTimeout
                };
                self.tasks[t.index()].exec.last = Some(res);
                Outcome::Continue
            }
            Effect::FutexLockPi { futex } => self.futex_lock_pi(t, futex),
            Effect::FutexUnlockPi { futex } => {
                self.futex_unlock_pi(cpu, t, futex);
                // the woken owner was pushed in front; the result comes after it
                self.tasks[t.index()]
                    .exec
                    .plan
                    .push_back(Step::Ret(SysResult::None));
                Outcome::Continue
            }
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
            Effect::Ktimers => {
                let pending = std::mem::take(&mut self.rqs[cpu].ktimers_pending);
                if pending.is_empty() {
                    self.push_front(t, &[Step::Do(Effect::Resumed)]);
                    return self.block_current(t);
                }
                // hrtimer_run_softirq(): each expired sleeper's hrtimer_wakeup(), in expiry
                // order; every wakeup costs the waker c_ttwu (after_wake_from_task)
                for &p in pending.iter().rev() {
                    self.wake_from_task(cpu, t, p, 0);
                }
                self.tasks[t.index()]
                    .exec
                    .plan
                    .push_back(Step::Ret(SysResult::None));
                Outcome::Continue
            }
            Effect::Yield => {
                let class = self.tasks[t.index()].class;
                class.yield_task(self, cpu);
                // sched_yield() always calls schedule()
                self.rqs[cpu].resched = Resched::Full;
                Outcome::Continue
            }
            Effect::CondResched => {
                // __cond_resched(): schedules on a pending TIF_NEED_RESCHED where the kernel
                // is not preemptible anyway (NONE, VOLUNTARY); elsewhere a no-op
                if !crate::presets::kernel_preemptible(self.preempt) && self.need_resched(cpu) {
                    return Outcome::Preempted;
                }
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
            Effect::CgroupAttach(tg) => {
                if tg.index() < self.tgs.len() {
                    self.sched_move_task(t, tg);
                }
                Outcome::Continue
            }
            Effect::SetScheduler(policy, nice, rt_priority) => {
                // a reschedule it asks for takes effect on the return to user space
                self.__sched_setscheduler(t, policy, nice.clamp(-20, 19), rt_priority.min(99));
                Outcome::Continue
            }
            Effect::WakeupPreempt { p, wake_flags } => {
                self.local_wakeup_check(cpu, p, wake_flags);
                Outcome::Continue
            }
            Effect::SchedExec => self.sched_exec(cpu, t),
            Effect::Fs { call, file, bytes } => self.fs_change(cpu, t, call, file, bytes),
            Effect::FsyncData { file } => self.fsync_data(cpu, t, file),
            Effect::FsyncSubmit { file, bytes } => self.fsync_submit(cpu, t, file, bytes),
            Effect::FsyncLog { file } => self.fsync_log(cpu, t, file),
            Effect::LogWait { seq } => {
                if self.io.as_ref().is_none_or(|io| io.xfs.forced(seq)) {
                    self.push_front(t, &[Step::Ret(SysResult::None)]);
                    return Outcome::Continue;
                }
                self.push_front(t, &[Step::Do(Effect::LogWait { seq })]);
                self.tasks[t.index()].state = TaskState::Uninterruptible;
                Outcome::Blocked
            }
            Effect::Kworker { pool } => self.kworker(cpu, t, pool),
            Effect::GcFlushWait { cpu: gcpu, run } => {
                if self.io().xfs.gc[gcpu as usize].runs_done >= run {
                    self.push_front(t, &[Step::Ret(SysResult::None)]);
                    return Outcome::Continue;
                }
                self.push_front(t, &[Step::Do(Effect::GcFlushWait { cpu: gcpu, run })]);
                self.tasks[t.index()].state = TaskState::Uninterruptible;
                Outcome::Blocked
            }
            Effect::AgiLock => {
                let ag = crate::xfs::Xfs::ag_of(self.tasks[t.index()].tgid);
                if self.io().xfs.agi_lock(ag, t) {
                    return Outcome::Continue;
                }
                // down(): TASK_UNINTERRUPTIBLE until up() hands the lock over; the plan goes
                // on with the work under the lock
                self.tasks[t.index()].state = TaskState::Uninterruptible;
                Outcome::Blocked
            }
            Effect::WorkDone { work } => self.work_done(cpu, t, work),
            Effect::LogSubmit { seq, bytes } => {
                let kind = crate::blkdev::ReqKind::FlushFua;
                let end_io = crate::blkdev::EndIo::QueueWork {
                    kind: PoolKind::BoundHighpri,
                    work: Work::LogIoEnd { seq },
                };
                self.submit_bio(cpu, kind, bytes as u64, end_io);
                self.push_front(t, &[Step::Ret(SysResult::None)]);
                Outcome::Continue
            }
            Effect::TcpLock { sock } => self.do_tcp_lock(t, sock),
            Effect::TcpSend { sock, bytes } => self.do_tcp_send(t, sock, bytes),
            Effect::TcpWaitMemory { sock, bytes } => self.do_tcp_wait_memory(t, sock, bytes),
            Effect::TcpXmit { to, seg, end } => self.do_tcp_xmit(t, to, seg, end),
            Effect::TcpBacklogAdd { sock, seg } => self.do_tcp_backlog_add(cpu, t, sock, seg),
            Effect::TcpRcv { sock, seg, in_task } => {
                self.tcp_rcv(cpu, t, sock, seg, in_task);
                if in_task {
                    Outcome::Continue
                } else {
                    Outcome::ContinueNoPoint
                }
            }
            Effect::TcpPureAck { sock, in_task } => self.do_tcp_pure_ack(cpu, t, sock, in_task),
            Effect::SoftirqEnd => Outcome::Continue,
            Effect::TcpRelease { sock } => self.do_tcp_release(cpu, t, sock),
            Effect::TcpBacklogDone { sock, n } => self.do_tcp_backlog_done(cpu, t, sock, n),
            Effect::TcpRecv {
                sock,
                bytes,
                flags,
                got,
            } => self.do_tcp_recv(cpu, t, sock, bytes, flags, got),
            Effect::TcpWaitData {
                sock,
                bytes,
                flags,
                got,
            } => self.do_tcp_wait_data(cpu, t, sock, bytes, flags, got),
            Effect::TcpConnect { listener, nodelay } => {
                self.do_tcp_connect(cpu, t, listener, nodelay)
            }
            Effect::Accept { listener, nonblock } => self.do_accept(cpu, t, listener, nonblock),
            Effect::TcpClose { sock } => self.do_tcp_close(cpu, t, sock),
            Effect::UdpRcv { dst, bytes } => self.do_udp_rcv(cpu, t, dst, bytes),
            Effect::UdpRecv { sock, bytes } => self.do_udp_recv(cpu, t, sock, bytes),
            Effect::EpollCtl { ep, op, fd, events } => {
                self.do_epoll_ctl(cpu, t, ep, op, fd, events)
            }
            Effect::EpollWait { ep, max } => self.do_epoll_wait(cpu, t, ep, max),
            Effect::EventfdWrite { fd } => self.do_eventfd_write(cpu, t, fd),
            Effect::EventfdRead { fd } => self.do_eventfd_read(cpu, t, fd),
            Effect::WakeupPreemptSoftirq { p, wake_flags } => {
                self.local_wakeup_check_ctx(cpu, p, wake_flags, false);
                Outcome::ContinueNoPoint
            }
            Effect::ExecImage => {
                let c = self.cost(cpu, |c| c.c_exec.0);
                self.push_front(t, &[Step::Cpu(c, Mode::Kernel), Step::Ret(SysResult::None)]);
                Outcome::Continue
            }
        }
    }

    /// kernel: core.c sched_exec() — exec balancing for the task `t` running on `cpu`: if
    /// `select_task_rq(p, task_cpu(p), WF_EXEC)` returns another CPU, `stop_one_cpu()` queues
    /// `migration_cpu_stop` for this CPU's stopper and wakes it; the stopper (stop class)
    /// preempts `t` at once, finds it queued and moves it (`move_queued_task`); `t` continues
    /// the exec on the new CPU.
    /// Deviation: with preempt=none/voluntary the kernel's `t` instead sleeps in
    /// `wait_for_completion()` before the stopper runs, and the stopper's `complete()` wakes it
    /// through `p->wake_cpu` (a wakeup placement); here it is moved as a queued task under
    /// every preemption model.
    fn sched_exec(&mut self, cpu: usize, t: TaskId) -> Outcome {
        self.push_front(t, &[Step::Do(Effect::ExecImage)]);
        let mut wf = WF_EXEC;
        let dest = self.select_task_rq(t, cpu, &mut wf, cpu, true);
        if dest == cpu {
            return Outcome::Continue;
        }
        self.rqs[cpu].stop_migration = Some((t, dest));
        // the stopper's wakeup costs a thread switch (the switch to the next task after it is
        // charged by context_switch as usual); it runs in `t`'s place, before the schedule
        let c = self.cost(cpu, |c| c.c_ctxsw_thread.0);
        if c > 0 {
            self.tasks[t.index()].exec.segs.push(Seg {
                rem: c,
                mode: Mode::Kernel,
                kind: SegKind::SwitchIn,
                until: None,
            });
        }
        self.rqs[cpu].resched = Resched::Full;
        Outcome::Preempted
    }

    // ===================================================================== the IO path

    /// `mount -t xfs` on the platform's storage device (workloads.md §1.9): the IO state and
    /// the kworkers of the workqueue pools (workqueue.rs), one per pool, started now (each
    /// runs once and sleeps: nothing is queued). Kernel threads take pids below the first
    /// user pid, after the `ktimers/N` threads, and do not count as live tasks. A second
    /// mount does nothing.
    pub(crate) fn mount_xfs(&mut self) {
        if self.io.is_some() {
            return;
        }
        struct Kworker(u32);
        impl crate::Program for Kworker {
            fn next(&mut self, _cx: &mut Ctx<'_>, _last: SysResult) -> Op {
                Op::Kernel(KernelOp(KOp::Kworker { pool: self.0 }))
            }
        }
        let wq = crate::workqueue::Workqueues::new(&self.machine.llc_id);
        let dev = crate::blkdev::BlockDev::new(self.machine.storage.clone());
        let pools: Vec<(PoolKind, usize)> = wq.pools.iter().map(|p| (p.kind, p.id)).collect();
        self.io = Some(Box::new(crate::xfs::IoState {
            wq,
            dev,
            xfs: crate::xfs::Xfs {
                gc: vec![Default::default(); self.ncpus],
                ..Default::default()
            },
        }));
        let first_user_pid = self.next_pid;
        for (i, (kind, id)) in pools.into_iter().enumerate() {
            self.next_pid = 100 + self.ncpus as i32 + i as i32;
            let (comm, nice, cpus) = match kind {
                PoolKind::Bound => (format!("kworker/{id}:1"), 0, CpuMask::single(id)),
                PoolKind::BoundHighpri => (format!("kworker/{id}:1H"), -20, CpuMask::single(id)),
                PoolKind::Unbound => {
                    let mut m = CpuMask::default();
                    for (c, &l) in self.machine.llc_id.iter().enumerate() {
                        if l == id {
                            m.set(c);
                        }
                    }
                    (format!("kworker/u{}:1", self.ncpus + id), 0, m)
                }
            };
            let attrs = crate::TaskAttrs {
                comm: Some(comm),
                policy: Some(Policy::Normal),
                nice: Some(nice),
                cpus: Some(cpus),
                ..Default::default()
            };
            let t = self.create_task(Box::new(Kworker(i as u32)), &attrs, None, false);
            self.tasks[t.index()].kthread = true;
            self.nr_live -= 1;
            self.io.as_mut().unwrap().wq.pools[i].worker = Some(t);
            self.wake_up_new_task(t, true);
        }
        self.next_pid = first_user_pid.max(self.next_pid);
    }

    /// Plans a file-system call (`Op::Fs`): the one place that maps a call to kernel work.
    /// `cpu_ns` is the call's whole fixed CPU cost from the program's table; the kernel's own
    /// fixed part (Table 1.11-B: `c_syscall` plus the call's cost) runs in kernel mode, the
    /// rest of `cpu_ns` (at least 0) in user mode before it; a read or write adds the copy
    /// (`c_copy_per_KB`) and a write `c_page_alloc` per newly dirtied page (every page of a
    /// write is taken as new: dbench writes mostly fresh files). Calls that change state end
    /// in `Effect::Fs`; `fsync` continues in `Effect::FsyncData`.
    fn plan_fs_op(
        &mut self,
        cpu: usize,
        call: FsCall,
        file: u32,
        bytes: u32,
        cpu_ns: u64,
        plan: &mut Vec<Step>,
    ) {
        let c = &self.costs[cpu];
        let call_cost = match call {
            FsCall::Open { .. } => c.c_open.0 + c.c_stat.0, // open + fstat (fileio.c)
            FsCall::Close => c.c_close.0,
            FsCall::Stat | FsCall::Readdir | FsCall::Setattr => c.c_stat.0,
            FsCall::Unlink | FsCall::Rmdir => c.c_unlink.0,
            FsCall::Rename => c.c_rename.0,
            FsCall::Mkdir => c.c_mkdir.0,
            FsCall::Lock | FsCall::Fsync => 0,
            FsCall::Read => c.c_pc_read_base.0,
            FsCall::Write => c.c_pc_write_base.0,
        };
        let fixed = c.c_syscall.0 + call_cost;
        let per_byte = match call {
            FsCall::Read => Self::copy_beyond(c.c_copy_per_KB.0, bytes, 0),
            FsCall::Write => {
                let pages = (bytes as u64).div_ceil(self.pipe_page_size as u64);
                Self::copy_beyond(c.c_copy_per_KB.0, bytes, 0) + c.c_page_alloc.0 * pages
            }
            _ => 0,
        };
        let user = cpu_ns.saturating_sub(fixed);
        if user > 0 {
            let user = self.cost(cpu, |_| user);
            plan.push(Step::Cpu(user, Mode::User));
        }
        let kern = self.cost(cpu, |_| fixed + per_byte);
        if matches!(
            call,
            FsCall::Open { create: true } | FsCall::Unlink | FsCall::Mkdir | FsCall::Rmdir
        ) && fixed > 0
        {
            // inode allocation or unlink: the call's own cost runs under the AGI buffer lock
            // of the file's allocation group, held until the transaction commits (`Effect::Fs`
            // releases it); the syscall entry and the lookup before it (**unverified** split)
            let under = ((kern as u128 * call_cost as u128) / fixed as u128) as u64;
            plan.push(Step::Cpu(kern - under, Mode::Kernel));
            plan.push(Step::Do(Effect::AgiLock));
            plan.push(Step::Cpu(under, Mode::Kernel));
        } else {
            plan.push(Step::Cpu(kern, Mode::Kernel));
        }
        match call {
            FsCall::Fsync => plan.push(Step::Do(Effect::FsyncData { file })),
            FsCall::Open { create: true }
            | FsCall::Write
            | FsCall::Setattr
            | FsCall::Unlink
            | FsCall::Rename
            | FsCall::Mkdir
            | FsCall::Rmdir => plan.push(Step::Do(Effect::Fs { call, file, bytes })),
            FsCall::Read => plan.push(Step::Ret(SysResult::Bytes(bytes))),
            _ => plan.push(Step::Ret(SysResult::None)),
        }
    }

    /// The IO state; a file-system call before any mount mounts (the root file system).
    fn io(&mut self) -> &mut crate::xfs::IoState {
        if self.io.is_none() {
            self.mount_xfs();
        }
        self.io.as_mut().unwrap()
    }

    /// `Effect::Fs`: the state a call changes (xfs.rs), then its return.
    fn fs_change(&mut self, cpu: usize, t: TaskId, call: FsCall, file: u32, bytes: u32) -> Outcome {
        let key = (self.tasks[t.index()].tgid, file);
        let now = self.now;
        let mut arm_wb = false;
        let x = &mut self.io().xfs;
        // logged items per call (inode, directory entries; unverified counts)
        let push = match call {
            FsCall::Open { .. } => x.log_change(key, 2),
            FsCall::Write => {
                if x.dirty(key, bytes as u64, now) {
                    // wb_wakeup_delayed(): the flusher's delayed work, on this CPU's timer
                    arm_wb = true;
                }
                x.log_change(key, 1)
            }
            FsCall::Setattr => x.log_change(key, 1),
            FsCall::Unlink => {
                x.remove(key);
                x.log_items(2)
            }
            FsCall::Rename => x.log_items(3),
            FsCall::Mkdir | FsCall::Rmdir => x.log_items(2),
            _ => false,
        };
        if arm_wb {
            self.push_event(
                now + crate::xfs::DIRTY_WRITEBACK_NS,
                Ev::WbTimer { cpu: cpu as u32 },
            );
        }
        let mut woken = false;
        if matches!(
            call,
            FsCall::Open { create: true } | FsCall::Unlink | FsCall::Mkdir | FsCall::Rmdir
        ) {
            // the transaction commits: the AGI buffer lock goes to the first waiter (up():
            // wake_up_process, WF_TTWU)
            let ag = crate::xfs::Xfs::ag_of(key.0);
            if let Some(next) = self.io().xfs.agi_unlock(ag) {
                self.wake_from_task(cpu, t, next, 0);
                woken = true;
            }
        }
        let mut flush: Option<u64> = None;
        if matches!(call, FsCall::Unlink | FsCall::Rmdir) {
            // the last reference goes: the inode is queued for inactivation on this CPU
            let (wake, f) = self.inodegc_queue(cpu, t);
            woken |= wake;
            flush = f;
        }
        let r = if call == FsCall::Write {
            SysResult::Bytes(bytes)
        } else {
            SysResult::None
        };
        if push {
            // the background push: queued from this task, whose wakeup of the kworker runs
            // before the return
            self.queue_io_work(cpu, Some(t), PoolKind::Unbound, Work::CilPush);
            woken = true;
        }
        if let Some(run) = flush {
            // flush_delayed_work(): after the wakeups, sleep until the inodegc run is done
            let gcpu = cpu as u32;
            self.tasks[t.index()]
                .exec
                .plan
                .push_back(Step::Do(Effect::GcFlushWait { cpu: gcpu, run }));
        } else if woken {
            // the wakeups' costs were pushed in front; the return comes after them
            self.tasks[t.index()].exec.plan.push_back(Step::Ret(r));
        } else {
            self.push_front(t, &[Step::Ret(r)]);
        }
        Outcome::Continue
    }

    /// `xfs_inodegc_queue()` from `t` on `cpu`: one more inode on the CPU's list and
    /// `mod_delayed_work_on(cpu, xfs-inodegc, 1 jiffy)` — a pending work (timer armed, or
    /// queued and not started) is pushed back to one jiffy from now; with more than
    /// `INODEGC_MAX_BACKLOG` inodes queued before this one, `flush_delayed_work()`: the
    /// work is queued at once and the caller waits for that run. Returns (a worker was
    /// woken, the run to wait for).
    fn inodegc_queue(&mut self, cpu: usize, t: TaskId) -> (bool, Option<u64>) {
        let now = self.now;
        let tick = self.tick_nsec;
        let pool = {
            let llc = self.machine.llc_id[cpu];
            self.io().wq.pool_for(PoolKind::Bound, cpu, llc)
        };
        let work = Work::Inodegc { cpu: cpu as u32 };
        let io = self.io();
        let g = &mut io.xfs.gc[cpu];
        let before = g.items;
        g.items += 1;
        if before > crate::xfs::INODEGC_MAX_BACKLOG {
            // flush: the pending timer is dropped and the work queued now
            g.timer_gen = g.timer_gen.wrapping_add(1);
            g.timer_armed = false;
            let run = g.runs_done + 1 + u64::from(g.running);
            g.flush_waiters.push((t, run));
            let mut woken = false;
            if !g.queued {
                g.queued = true;
                woken = self.queue_io_work(cpu, Some(t), PoolKind::Bound, work);
            }
            return (woken, Some(run));
        }
        if g.queued && io.wq.grab_pending(pool, work) {
            // queued but not started: taken back and delayed again
            io.xfs.gc[cpu].queued = false;
        }
        let g = &mut io.xfs.gc[cpu];
        if !g.queued {
            g.timer_gen = g.timer_gen.wrapping_add(1);
            g.timer_armed = true;
            let gen = g.timer_gen;
            self.push_event(
                now + tick,
                Ev::GcTimer {
                    cpu: cpu as u32,
                    gen,
                },
            );
        }
        (false, None)
    }

    /// The inodegc delayed work's timer on `cpu` (`delayed_work_timer_fn()`): queues the work
    /// to the CPU's bound pool. Deviation: on an idle CPU the handler runs at the expiry
    /// itself (no idle-exit latency before it), as for `dl_timer`.
    pub(crate) fn on_gc_timer(&mut self, cpu: usize, gen: u32) {
        let Some(io) = self.io.as_mut() else {
            return;
        };
        let g = &mut io.xfs.gc[cpu];
        if !g.timer_armed || g.timer_gen != gen {
            return;
        }
        g.timer_armed = false;
        g.queued = true;
        let executing = self.executing;
        self.executing = Some(cpu);
        let idle = self.cpu_is_idle(cpu);
        if !idle {
            self.progress_segment(cpu);
        }
        let work = Work::Inodegc { cpu: cpu as u32 };
        let woken = self.queue_io_work(cpu, None, PoolKind::Bound, work);
        if !idle {
            let mut c = self.cost(cpu, |c| c.c_hrtimer_irq.0);
            if woken {
                c += self.cost(cpu, |c| c.c_ttwu.0);
            }
            self.push_irq(cpu, c);
        }
        self.executing = executing;
        if executing != Some(cpu) {
            self.cpu_continue_from_outside(cpu);
        }
    }

    /// `fsync()` step 1: take the file's dirty pages for writeback (`c_submit_per_page` per
    /// page to build the bios), or go on to the log force.
    fn fsync_data(&mut self, cpu: usize, t: TaskId, file: u32) -> Outcome {
        let key = (self.tasks[t.index()].tgid, file);
        let bytes = self.io().xfs.take_dirty(key);
        if bytes == 0 {
            self.push_front(t, &[Step::Do(Effect::FsyncLog { file })]);
            return Outcome::Continue;
        }
        let pages = bytes.div_ceil(self.pipe_page_size as u64);
        let c = self.cost(cpu, |c| c.c_submit_per_page.0 * pages);
        let bytes = bytes.min(u32::MAX as u64) as u32;
        self.push_front(
            t,
            &[
                Step::Cpu(c, Mode::Kernel),
                Step::Do(Effect::FsyncSubmit { file, bytes }),
            ],
        );
        Outcome::Continue
    }

    /// Submits the data writeback and sleeps (`folio_wait_writeback()`, uninterruptible)
    /// until its end-io work wakes the task; then the log force.
    fn fsync_submit(&mut self, cpu: usize, t: TaskId, file: u32, bytes: u32) -> Outcome {
        let tgid = self.tasks[t.index()].tgid;
        let end_io = crate::blkdev::EndIo::QueueWork {
            kind: PoolKind::Bound,
            work: Work::IoEnd {
                waiter: Some(t),
                tgid,
                file,
            },
        };
        self.submit_bio(cpu, crate::blkdev::ReqKind::Write, bytes as u64, end_io);
        self.push_front(t, &[Step::Do(Effect::FsyncLog { file })]);
        self.tasks[t.index()].state = TaskState::Uninterruptible;
        Outcome::Blocked
    }

    /// `fsync()` step 2: `xfs_log_force_seq()` up to the file's last logged change.
    fn fsync_log(&mut self, cpu: usize, t: TaskId, file: u32) -> Outcome {
        let key = (self.tasks[t.index()].tgid, file);
        match self.io().xfs.force(t, key) {
            crate::xfs::Force::Done => {
                self.push_front(t, &[Step::Ret(SysResult::None)]);
            }
            crate::xfs::Force::Wait { seq, push } => {
                if push {
                    // xlog_cil_force_seq() → xlog_cil_push_now(): queue_work(xfs-cil); the
                    // kworker's wakeup (c_ttwu) runs before the wait
                    self.queue_io_work(cpu, Some(t), PoolKind::Unbound, Work::CilPush);
                }
                self.tasks[t.index()]
                    .exec
                    .plan
                    .push_back(Step::Do(Effect::LogWait { seq }));
            }
        }
        Outcome::Continue
    }

    /// `queue_work()` from `cpu` (a task `from`, or interrupt context): wakes the pool's
    /// worker if it sleeps (`WF_TTWU`). Returns whether a worker was woken.
    fn queue_io_work(&mut self, cpu: usize, from: Option<TaskId>, kind: PoolKind, w: Work) -> bool {
        let llc = self.machine.llc_id[cpu];
        let io = self.io();
        let pool = io.wq.pool_for(kind, cpu, llc);
        let Some(worker) = io.wq.queue_work(pool, w) else {
            return false;
        };
        match from {
            Some(t) => self.wake_from_task(cpu, t, worker, 0),
            None => {
                let w = self.try_to_wake_up(worker, 0, cpu, false);
                if w == Woken::LocalDeferred {
                    self.local_wakeup_check(cpu, worker, 0);
                }
                w != Woken::No
            }
        }
    }

    /// `submit_bio()` on `cpu`: the completion interrupt comes back to `cpu` after the
    /// device's service time (blkdev.rs).
    fn submit_bio(
        &mut self,
        cpu: usize,
        kind: crate::blkdev::ReqKind,
        bytes: u64,
        end_io: crate::blkdev::EndIo,
    ) {
        let io = self.io();
        let d = io.dev.service_ns(kind, bytes);
        let id = io.dev.submit(cpu, bytes, end_io);
        self.push_event(self.now + d, Ev::IoDone { id });
    }

    /// `worker_thread()`: the pool's next item (its CPU work, then `Effect::WorkDone`), or
    /// sleep until `queue_work()` wakes the worker.
    fn kworker(&mut self, cpu: usize, t: TaskId, pool: u32) -> Outcome {
        let Some(work) = self.io().wq.next_work(pool as usize) else {
            self.push_front(t, &[Step::Do(Effect::Resumed)]);
            return self.block_current(t);
        };
        match work {
            Work::CilPush => {
                // xlog_cil_push_work(): the checkpoint is closed at the start, its items
                // formatted, then the log write submitted
                let (seq, items) = self.io().xfs.push();
                let c = self.cost(cpu, |c| {
                    c.c_cil_push.map_or(0, |n| n.0)
                        + c.c_cil_push_per_item.map_or(0, |n| n.0) * items
                });
                let bytes = (items * crate::xfs::LOG_BYTES_PER_ITEM).clamp(512, u32::MAX as u64);
                self.push_front(
                    t,
                    &[
                        Step::Cpu(c, Mode::Kernel),
                        Step::Do(Effect::LogSubmit {
                            seq,
                            bytes: bytes as u32,
                        }),
                    ],
                );
            }
            Work::Writeback => {
                // wb_workfn(): the expired inodes' pages, c_submit_per_page each, then the
                // bios are submitted (WB_SYNC_NONE: the flusher does not wait for them)
                let now = self.now;
                let mut expired = Vec::new();
                let rearm = self.io().xfs.kupdate(now, &mut expired);
                let page = self.pipe_page_size as u64;
                let pages: u64 = expired.iter().map(|e| e.1.div_ceil(page)).sum();
                let c = self.cost(cpu, |c| c.c_submit_per_page.0 * pages);
                for (key, bytes) in expired {
                    let end_io = crate::blkdev::EndIo::QueueWork {
                        kind: PoolKind::Bound,
                        work: Work::IoEnd {
                            waiter: None,
                            tgid: key.0,
                            file: key.1,
                        },
                    };
                    self.submit_bio(cpu, crate::blkdev::ReqKind::Write, bytes, end_io);
                }
                if rearm {
                    self.push_event(
                        now + crate::xfs::DIRTY_WRITEBACK_NS,
                        Ev::WbTimer { cpu: cpu as u32 },
                    );
                }
                self.push_front(
                    t,
                    &[
                        Step::Cpu(c, Mode::Kernel),
                        Step::Do(Effect::WorkDone { work }),
                    ],
                );
            }
            Work::Inodegc { cpu: gcpu } => {
                // xfs_inodegc_worker(): llist_del_all() and xfs_inactive() of each inode — the
                // freeing transaction costed as an unlink (c_unlink, **unverified**)
                let g = &mut self.io().xfs.gc[gcpu as usize];
                g.queued = false;
                g.running = true;
                let n = std::mem::take(&mut g.items) as u64;
                let c = self.cost(cpu, |c| c.c_unlink.0 * n);
                self.push_front(
                    t,
                    &[
                        Step::Cpu(c, Mode::Kernel),
                        Step::Do(Effect::WorkDone { work }),
                    ],
                );
            }
            Work::LogIoEnd { .. } | Work::IoEnd { .. } => {
                // the completion processing of one request (c_blk_complete; unverified: the
                // table has no separate figure for xlog_ioend_work / xfs_end_io)
                let c = self.cost(cpu, |c| c.c_blk_complete.0);
                self.push_front(
                    t,
                    &[
                        Step::Cpu(c, Mode::Kernel),
                        Step::Do(Effect::WorkDone { work }),
                    ],
                );
            }
        }
        Outcome::Continue
    }

    /// The end of a work item: the wakeups it does (`WF_TTWU`), then the worker loops.
    fn work_done(&mut self, cpu: usize, t: TaskId, work: Work) -> Outcome {
        match work {
            Work::CilPush | Work::Writeback => {}
            Work::Inodegc { cpu: gcpu } => {
                // the run is done: the flushers waiting for it are woken (complete())
                let g = &mut self.io().xfs.gc[gcpu as usize];
                g.running = false;
                g.runs_done += 1;
                let done = g.runs_done;
                let mut woken = std::mem::take(&mut self.wake_scratch);
                let g = &mut self.io().xfs.gc[gcpu as usize];
                g.flush_waiters.retain(|&(p, run)| {
                    if run <= done {
                        woken.push(p);
                        false
                    } else {
                        true
                    }
                });
                for &p in woken.iter().rev() {
                    self.wake_from_task(cpu, t, p, 0);
                }
                woken.clear();
                self.wake_scratch = woken;
            }
            Work::LogIoEnd { seq } => {
                let mut woken = std::mem::take(&mut self.wake_scratch);
                self.io().xfs.log_done(seq, &mut woken);
                // wake_up_all(&iclog->ic_force_wait): each waiter in queue order; every
                // wakeup pushes its c_ttwu in front, so wake the last first
                for &p in woken.iter().rev() {
                    self.wake_from_task(cpu, t, p, 0);
                }
                woken.clear();
                self.wake_scratch = woken;
            }
            Work::IoEnd { waiter, tgid, file } => {
                // xfs_end_ioend(): the size update is logged, then the folios' writeback
                // ends and wakes the fsync waiter
                // (a file unlinked while its writeback was in flight logs nothing)
                let x = &mut self.io().xfs;
                let push = x.inodes.contains_key(&(tgid, file)) && x.log_change((tgid, file), 1);
                if push {
                    self.queue_io_work(cpu, Some(t), PoolKind::Unbound, Work::CilPush);
                }
                if let Some(waiter) = waiter {
                    self.wake_from_task(cpu, t, waiter, 0);
                }
            }
        }
        self.tasks[t.index()]
            .exec
            .plan
            .push_back(Step::Ret(SysResult::None));
        Outcome::Continue
    }

    /// A block request's completion interrupt on its submitting CPU. On an idle CPU the
    /// interrupt first takes the CPU out of its idle state (exit latency) and runs the
    /// handler up to the completion (`c_irq + c_blk_complete`, with `c_ttwu` for the
    /// kworker's wakeup), as for a timer (`on_timer`).
    pub(crate) fn on_io_done(&mut self, id: u32) {
        let req = self.io().dev.get(id);
        let cpu = req.cpu;
        if self.cpu_is_idle(cpu) {
            let exit = self.machine.idle_exit_ns[cpu];
            // c_ttwu if the work will wake the pool's sleeping worker
            let crate::blkdev::EndIo::QueueWork { kind, .. } = req.end_io;
            let llc = self.machine.llc_id[cpu];
            let wq = &self.io().wq;
            let wakes = wq.pools[wq.pool_for(kind, cpu, llc)].idle;
            let mut irq = self.cost(cpu, |c| c.c_irq.0) + self.cost(cpu, |c| c.c_blk_complete.0);
            if wakes {
                irq += self.cost(cpu, |c| c.c_ttwu.0);
            }
            if exit + irq > 0 {
                self.push_event(self.now + exit + irq, Ev::IoIrq { id });
                return;
            }
        }
        self.on_io_irq(id);
    }

    /// The flusher's delayed-work timer (`delayed_work_timer_fn()`, timer interrupt on the
    /// CPU that armed it): queues `wb_workfn()` to the unbound `writeback` workqueue.
    /// Deviation: on an idle CPU the handler runs at the expiry itself (no idle-exit latency
    /// before it), as for `dl_timer`.
    pub(crate) fn on_wb_timer(&mut self, cpu: usize) {
        let executing = self.executing;
        self.executing = Some(cpu);
        let idle = self.cpu_is_idle(cpu);
        if !idle {
            self.progress_segment(cpu);
        }
        let woken = self.queue_io_work(cpu, None, PoolKind::Unbound, Work::Writeback);
        if !idle {
            let mut c = self.cost(cpu, |c| c.c_hrtimer_irq.0);
            if woken {
                c += self.cost(cpu, |c| c.c_ttwu.0);
            }
            self.push_irq(cpu, c);
        }
        self.executing = executing;
        if executing != Some(cpu) {
            self.cpu_continue_from_outside(cpu);
        }
    }

    /// The completion handler of request `id` (hard interrupt): its `bi_end_io`.
    pub(crate) fn on_io_irq(&mut self, id: u32) {
        let req = self.io().dev.complete(id);
        let cpu = req.cpu;
        let executing = self.executing;
        self.executing = Some(cpu);
        let idle = self.cpu_is_idle(cpu);
        if !idle {
            self.progress_segment(cpu);
        }
        let crate::blkdev::EndIo::QueueWork { kind, work } = req.end_io;
        let woken = self.queue_io_work(cpu, None, kind, work);
        if !idle {
            let mut c = self.cost(cpu, |c| c.c_irq.0) + self.cost(cpu, |c| c.c_blk_complete.0);
            if woken {
                c += self.cost(cpu, |c| c.c_ttwu.0);
            }
            self.push_irq(cpu, c);
        }
        self.executing = executing;
        if executing != Some(cpu) {
            self.cpu_continue_from_outside(cpu);
        }
    }

    // ===================================================================== kernel mutexes

    /// Whether the segment under the top one is a mutex spin.
    fn spinning_below(&self, t: TaskId) -> bool {
        self.tasks[t.index()]
            .exec
            .segs
            .last()
            .is_some_and(|s| s.kind == SegKind::Spin)
    }

    /// kernel: mutex.c __mutex_lock_common() @ v6.12 — trylock (or pick up a handoff), else
    /// optimistic spinning while the owner runs on a CPU, else sleep on the FIFO wait list in
    /// TASK_UNINTERRUPTIBLE. A spinner or a woken waiter comes back here to retry.
    /// Deviation: the osq is the `spinners` FIFO. The cache-line transfers are charged once per
    /// acquisition from a CPU other than the last owner's (`PIPE_MUTEX_LINES` lines: every
    /// kernel mutex of the model is a `pipe->mutex`).
    fn do_mutex_lock(&mut self, cpu: usize, t: TaskId, m: MutexId) -> Outcome {
        let mx = &mut self.ipc.mutexes[m.index()];
        if let Some(i) = mx.spinners.iter().position(|&s| s == t) {
            mx.spinners.remove(i);
        }
        let pos = mx.waiters.iter().position(|&w| w == t);
        let owner = match mx.owner {
            None => None,
            Some(o) if o == t => None, // handed off to us (MUTEX_FLAG_PICKUP)
            Some(o) => Some(o),
        };
        let Some(owner) = owner else {
            mx.owner = Some(t);
            mx.acquisitions += 1;
            if let Some(i) = pos {
                mx.waiters.remove(i);
                if i == 0 {
                    mx.handoff = false;
                }
            }
            let prev = mx.last_cpu.replace(cpu);
            self.tasks[t.index()].exec.lock_held = Some(m);
            // The lock word and the data it protects were last written on `prev`: the new
            // owner's first accesses miss and pull those lines from that CPU's cache,
            // inside the critical section.
            if let Some(p) = prev.filter(|&p| p != cpu) {
                let x = PIPE_MUTEX_LINES * self.line_cost(cpu, p);
                if x > 0 {
                    self.ipc.mutexes[m.index()].transfers += 1;
                    self.push_front(t, &[Step::Cpu(x, Mode::Kernel)]);
                }
            }
            return Outcome::Continue;
        };
        mx.contended += 1;
        let first = pos == Some(0);
        if first {
            // __mutex_trylock_or_handoff(lock, first): the next unlock hands the lock over
            mx.handoff = true;
        }
        // only the first waiter spins among the waiters (mutex_optimistic_spin with a waiter)
        let may_spin =
            self.tasks[owner.index()].on_cpu && !self.need_resched(cpu) && (pos.is_none() || first);
        let mx = &mut self.ipc.mutexes[m.index()];
        if may_spin {
            mx.spinners.push_back(t);
        } else {
            if pos.is_none() {
                mx.waiters.push_back(t);
            }
            mx.sleeps += 1;
        }
        self.push_front(t, &[Step::Do(Effect::MutexLock { m })]);
        if may_spin {
            self.tasks[t.index()].exec.segs.push(Seg {
                rem: SPIN_FOREVER,
                mode: Mode::Kernel,
                kind: SegKind::Spin,
                until: None,
            });
            return Outcome::Continue;
        }
        self.tasks[t.index()].state = TaskState::Uninterruptible;
        Outcome::Blocked
    }

    /// kernel: mutex.c __mutex_unlock_slowpath() @ v6.12 — releases `m` (or hands it to the
    /// first waiter when it asked for a handoff), tells the spinners, and wakes the first
    /// waiter (`wake_q`, WF_TTWU). Returns whether a sleeping waiter was woken (the unlocker
    /// then pays `c_ttwu` before going on).
    fn mutex_unlock(&mut self, cpu: usize, t: TaskId, m: MutexId) -> bool {
        let mx = &mut self.ipc.mutexes[m.index()];
        debug_assert_eq!(mx.owner, Some(t));
        mx.owner = None;
        self.tasks[t.index()].exec.lock_held = None;
        let mx = &mut self.ipc.mutexes[m.index()];
        let first = mx.waiters.front().copied();
        match first {
            Some(w) if mx.handoff => {
                // __mutex_handoff(): the first waiter owns the lock before it runs, so every
                // spinner but a spinning first waiter sees an owner off its CPU and sleeps
                mx.owner = Some(w);
                mx.handoff = false;
                mx.handoffs += 1;
                let notify: Vec<TaskId> = mx.spinners.iter().copied().collect();
                for s in notify {
                    self.end_spin(s);
                }
            }
            // osq: only the head spinner watches the lock word
            _ => {
                if let Some(s) = mx.spinners.front().copied() {
                    self.end_spin(s);
                }
            }
        }
        match first {
            Some(w) if self.tasks[w.index()].state == TaskState::Uninterruptible => {
                self.wake_from_task(cpu, t, w, 0)
            }
            _ => false,
        }
    }

    // ===================================================================== pipes

    /// Releases `pipe->mutex` if `t` holds it (with `SIM_PIPE_MUTEX`); true if a waiter was
    /// woken.
    fn pipe_unlock(&mut self, cpu: usize, t: TaskId, pipe: PipeId) -> bool {
        let m = self.ipc.pipes[pipe.index()].mutex;
        if self.ipc.mutexes[m.index()].owner == Some(t) {
            self.mutex_unlock(cpu, t, m)
        } else {
            false
        }
    }

    /// The steps that retry a pipe read or write after a wait: relock (with `SIM_PIPE_MUTEX`)
    /// and do it again (its cost was paid by the first attempt).
    fn pipe_retry(&mut self, t: TaskId, pipe: PipeId, bytes: u32, write: bool, exit: u64) {
        let eff = if write {
            Effect::PipeWrite {
                pipe,
                bytes,
                blocked: true,
                exit,
            }
        } else {
            Effect::PipeRead {
                pipe,
                bytes,
                blocked: true,
                exit,
                nonblock: false,
            }
        };
        if self.cfg.sim(SimFeature::SIM_PIPE_MUTEX) {
            let m = self.ipc.pipes[pipe.index()].mutex;
            self.push_front(t, &[Step::Do(Effect::MutexLock { m }), Step::Do(eff)]);
        } else {
            self.push_front(t, &[Step::Do(eff)]);
        }
    }

    /// Unlocks, then waits for the pipe (after paying for any mutex waiter it woke).
    fn pipe_unlock_and_wait(
        &mut self,
        cpu: usize,
        t: TaskId,
        pipe: PipeId,
        bytes: u32,
        write: bool,
        exit: u64,
    ) -> Outcome {
        // the wake steps of the unlock (c_ttwu, the local preemption check) go in front
        let wait = Effect::PipeWait {
            pipe,
            bytes,
            write,
            exit,
        };
        self.push_front(t, &[Step::Do(wait)]);
        if self.pipe_unlock(cpu, t, pipe) {
            return Outcome::Continue;
        }
        self.tasks[t.index()].exec.plan.pop_front();
        self.do_pipe_wait(t, pipe, bytes, write, exit)
    }

    /// kernel: pipe.c wait_event_interruptible_exclusive(pipe->wr_wait / rd_wait): sleep
    /// unless the condition already holds (it is re-checked after queueing), then retry.
    fn do_pipe_wait(
        &mut self,
        t: TaskId,
        pipe: PipeId,
        bytes: u32,
        write: bool,
        exit: u64,
    ) -> Outcome {
        let p = &self.ipc.pipes[pipe.index()];
        let ready = if write {
            !p.is_full()
        } else {
            !p.is_empty() || p.nr_writers == 0
        };
        self.pipe_retry(t, pipe, bytes, write, exit);
        if ready {
            return Outcome::Continue;
        }
        let p = &mut self.ipc.pipes[pipe.index()];
        if write {
            p.writers.push_back(t);
        } else {
            p.readers.push_back(t);
        }
        self.block_current(t)
    }

    /// `wake_up_interruptible_sync_poll(&pipe->rd_wait)`: every poller (non-exclusive entries
    /// sit at the head of the queue, most recent first), then one exclusive reader.
    fn pipe_rd_wakes(&mut self, pipe: PipeId, wakes: &mut Vec<TaskId>) {
        let p = &mut self.ipc.pipes[pipe.index()];
        wakes.extend(p.pollers.drain(..).rev());
        if let Some(r) = p.readers.pop_front() {
            wakes.push(r);
        }
    }

    /// kernel: pipe.c pipe_write() @ v6.12 (workloads.md §1.2). Called with `pipe->mutex`
    /// held (with `SIM_PIPE_MUTEX`); `blocked`: this write slept before (`wake_next_writer`).
    /// Deviation: a write retried after sleeping may still merge into the last page (the
    /// kernel merges only before its first wait); writes are at most one page.
    fn do_pipe_write(
        &mut self,
        cpu: usize,
        t: TaskId,
        pipe: PipeId,
        bytes: u32,
        blocked: bool,
        exit: u64,
    ) -> Outcome {
        let pi = pipe.index();
        let was_empty = self.ipc.pipes[pi].is_empty();
        if !self.ipc.pipes[pi].try_write(bytes) {
            // full: unlock, then sleep on the writer queue; the write is retried when woken
            return self.pipe_unlock_and_wait(cpu, t, pipe, bytes, true, exit);
        }
        // the wakeups below go in front of the syscall exit
        self.push_ret_after_exit(t, exit, SysResult::Bytes(bytes));
        self.pipe_unlock(cpu, t, pipe);
        let mut wakes = std::mem::take(&mut self.wake_scratch);
        if was_empty || self.ipc.pipes[pi].poll_usage {
            self.pipe_rd_wakes(pipe, &mut wakes);
        }
        let rd_wake = was_empty || self.ipc.pipes[pi].poll_usage;
        if blocked && !self.ipc.pipes[pi].is_full() {
            // wake_next_writer
            if let Some(w) = self.ipc.pipes[pi].writers.pop_front() {
                wakes.push(w);
            }
        }
        self.wake_all_from_task(cpu, t, wakes, WF_SYNC);
        if rd_wake {
            // the same wake-up of rd_wait reaches the epoll links (ep_poll_callback)
            self.ipc_epoll_wake(cpu, t, NetFd::Pipe(pipe));
        }
        Outcome::Continue
    }

    /// kernel: pipe.c pipe_read() @ v6.12 (workloads.md §1.2); `blocked`: this read slept
    /// before (`wake_next_reader`); `nonblock`: `O_NONBLOCK` (an empty pipe: `EAGAIN`).
    #[allow(clippy::too_many_arguments)]
    fn do_pipe_read(
        &mut self,
        cpu: usize,
        t: TaskId,
        pipe: PipeId,
        bytes: u32,
        blocked: bool,
        exit: u64,
        nonblock: bool,
    ) -> Outcome {
        let pi = pipe.index();
        if self.ipc.pipes[pi].is_empty() {
            if self.ipc.pipes[pi].nr_writers == 0 || nonblock {
                let r = if nonblock && self.ipc.pipes[pi].nr_writers > 0 {
                    SysResult::Again
                } else {
                    SysResult::Bytes(0)
                };
                self.push_ret_after_exit(t, exit, r);
                self.pipe_unlock(cpu, t, pipe);
                return Outcome::Continue;
            }
            return self.pipe_unlock_and_wait(cpu, t, pipe, bytes, false, exit);
        }
        let (got, freed_from_full) = self.ipc.pipes[pi].read(bytes);
        self.push_ret_after_exit(t, exit, SysResult::Bytes(got));
        self.pipe_unlock(cpu, t, pipe);
        let mut wakes = std::mem::take(&mut self.wake_scratch);
        if freed_from_full {
            if let Some(w) = self.ipc.pipes[pi].writers.pop_front() {
                wakes.push(w);
            }
        }
        if blocked && !self.ipc.pipes[pi].is_empty() {
            // wake_next_reader
            self.pipe_rd_wakes(pipe, &mut wakes);
        }
        self.wake_all_from_task(cpu, t, wakes, WF_SYNC);
        Outcome::Continue
    }

    /// Wakes the tasks of `wakes` in order from task `t` running on `cpu`, then keeps the
    /// (cleared) buffer as `wake_scratch` for the next wake list.
    fn wake_all_from_task(&mut self, cpu: usize, t: TaskId, mut wakes: Vec<TaskId>, wf: u32) {
        for &w in &wakes {
            self.wake_from_task(cpu, t, w, wf);
        }
        wakes.clear();
        self.wake_scratch = wakes;
    }

    // ===================================================================== AF_UNIX sockets

    /// kernel: af_unix.c unix_stream_sendmsg() @ v6.12 (workloads.md §1.3), one skb per call:
    /// `sock_alloc_send_pskb()` sleeps (non-exclusive, `sock_wait_for_wmem`) while the sending
    /// socket's budget is used up; then the skb is queued and `sk_data_ready`
    /// (`sock_def_readable`) wakes every sleeper of the receiving socket with WF_SYNC — on
    /// every send, not only on empty → non-empty.
    /// Deviation: the peer's state and queue spinlocks are not modelled (no contention).
    fn do_sock_send(&mut self, cpu: usize, t: TaskId, sock: SockId, bytes: u32) -> Outcome {
        let sk = &mut self.ipc.socks[sock.index()];
        if !sk.can_send(bytes) {
            sk.writers.push_back(t);
            self.push_front(t, &[Step::Do(Effect::SockSend { sock, bytes })]);
            return self.block_current(t);
        }
        sk.send(bytes);
        // non-exclusive waiters are woken most recent first (add_wait_queue adds at the head)
        let mut wakes = std::mem::take(&mut self.wake_scratch);
        wakes.extend(sk.readers.drain(..).rev());
        self.push_front(t, &[Step::Ret(SysResult::Bytes(bytes))]);
        self.wake_all_from_task(cpu, t, wakes, WF_SYNC);
        // sock_def_readable() also calls the epoll links of the receiving socket
        self.ipc_epoll_wake(cpu, t, NetFd::Unix(sock));
        Outcome::Continue
    }

    /// kernel: af_unix.c unix_stream_read_generic() @ v6.12: sleeps (non-exclusive) while the
    /// queue is empty, then copies up to `bytes` across skbs. Each freed skb returns its
    /// truesize to the sender (`sock_wfree`), whose write-space callback (`unix_write_space`)
    /// wakes every sleeping sender with WF_SYNC once `unix_writable()`.
    /// Deviation: the receive `iolock` is not modelled (one reader per socket in the models).
    fn do_sock_recv(&mut self, cpu: usize, t: TaskId, sock: SockId, bytes: u32) -> Outcome {
        let sk = &mut self.ipc.socks[sock.index()];
        if sk.is_empty() {
            sk.readers.push_back(t);
            self.push_front(t, &[Step::Do(Effect::SockRecv { sock, bytes })]);
            return self.block_current(t);
        }
        let (got, freed) = sk.recv(bytes);
        let mut wakes = std::mem::take(&mut self.wake_scratch);
        if freed > 0 && sk.writable() {
            wakes.extend(sk.writers.drain(..).rev());
        }
        self.push_front(t, &[Step::Ret(SysResult::Bytes(got))]);
        self.wake_all_from_task(cpu, t, wakes, WF_SYNC);
        Outcome::Continue
    }

    // ===================================================================== poll

    /// kernel: select.c do_poll() with one file and no timeout (workloads.md §1.5): returns
    /// at once if readable; otherwise a non-exclusive wait entry on the file's read queue, woken
    /// with the source's sync flag, after which readiness is checked again. Polling a pipe
    /// sets `pipe->poll_usage`.
    fn do_poll(&mut self, t: TaskId, fd: PollFd) -> Outcome {
        if let PollFd::Tcp(s) = fd {
            // a poll entry stays queued after its wake-up (pollwake does not remove it;
            // poll_freewait does, at the end of the call): drop the one of a previous round
            self.net.tcp[s.index()].wq.remove(Waiter::Task(t));
        }
        let ready = match fd {
            PollFd::Pipe(p) => {
                let p = &mut self.ipc.pipes[p.index()];
                p.poll_usage = true;
                !p.is_empty() || p.nr_writers == 0
            }
            PollFd::Sock(s) => !self.ipc.socks[s.index()].is_empty(),
            PollFd::Tcp(s) => self.net_poll(NetFd::Tcp(s)) & (EPOLLIN | EPOLLHUP) != 0,
        };
        if ready {
            self.push_front(t, &[Step::Ret(SysResult::Ready(1))]);
            return Outcome::Continue;
        }
        match fd {
            PollFd::Pipe(p) => self.ipc.pipes[p.index()].pollers.push(t),
            PollFd::Sock(s) => self.ipc.socks[s.index()].readers.push_back(t),
            // sock_poll_wait: a non-exclusive entry on the socket's wait queue, woken by
            // sock_def_readable like a reader in recv
            PollFd::Tcp(s) => self.net.tcp[s.index()].wq.add(Waiter::Task(t)),
        }
        self.push_front(t, &[Step::Do(Effect::Poll { fd })]);
        self.block_current(t)
    }

    /// kernel: select.c do_pselect() → do_select() with one file, no timeout and SIGCHLD
    /// unblocked for the sleep (`Op::Pselect`): the file's readiness first, then a pending
    /// signal (an unreaped child process: `EINTR`), then an interruptible sleep on the file's
    /// read queue (non-exclusive, as `do_poll`) that a child's exit also ends (`do_exit`).
    /// A task woken by one source is still queued on the other: the stale entry is dropped
    /// when it runs this again (in between it is runnable, and a wake-up finds it so).
    fn do_pselect(&mut self, t: TaskId, fd: PollFd) -> Outcome {
        self.tasks[t.index()].sigchld_wait = false;
        let ready = match fd {
            PollFd::Pipe(p) => {
                let p = &mut self.ipc.pipes[p.index()];
                p.pollers.retain(|&w| w != t);
                p.poll_usage = true;
                !p.is_empty() || p.nr_writers == 0
            }
            PollFd::Sock(s) => {
                let s = &mut self.ipc.socks[s.index()];
                s.readers.retain(|&w| w != t);
                !s.is_empty()
            }
            PollFd::Tcp(s) => {
                self.net.tcp[s.index()].wq.remove(Waiter::Task(t));
                self.net_poll(NetFd::Tcp(s)) & (EPOLLIN | EPOLLHUP) != 0
            }
        };
        if ready {
            self.push_front(t, &[Step::Ret(SysResult::Ready(1))]);
            return Outcome::Continue;
        }
        let task = &self.tasks[t.index()];
        let sigchld_pending = task.zombies.iter().any(|&z| {
            let z = &self.tasks[z.index()];
            z.tgid == z.pid
        });
        if sigchld_pending {
            self.push_front(t, &[Step::Ret(SysResult::Interrupted)]);
            return Outcome::Continue;
        }
        match fd {
            PollFd::Pipe(p) => self.ipc.pipes[p.index()].pollers.push(t),
            PollFd::Sock(s) => self.ipc.socks[s.index()].readers.push_back(t),
            PollFd::Tcp(s) => self.net.tcp[s.index()].wq.add(Waiter::Task(t)),
        }
        self.tasks[t.index()].sigchld_wait = true;
        self.push_front(t, &[Step::Do(Effect::Pselect { fd })]);
        self.block_current(t)
    }

    // ===================================================================== loopback TCP/UDP

    /// A wake-up issued from the NET_RX softirq run in the sender's context (netbench.md
    /// §1.12.5): `current` = `waker` (the sending task), `in_task()` false, the waker's CPU
    /// pays `c_ttwu` (+ `c_ipi_send`) as non-preemptible time, and a remote wake-up's IPI
    /// leaves at the end of that charge (§16.6 N2). A local wake-up's preemption check
    /// follows the charge; the preemption point is the end of the softirq
    /// (`local_bh_enable`, `Effect::SoftirqEnd`).
    /// kernel: core.c try_to_wake_up() from net/core/sock.c sock_def_readable() @ v6.18
    fn wake_from_softirq(&mut self, cpu: usize, waker: TaskId, p: TaskId, wf: u32) -> bool {
        if self.tasks[waker.index()].is_idle_task {
            // a timer softirq on an idle CPU: the interrupt pays for it
            let w = self.try_to_wake_up(p, wf, cpu, false);
            if w == Woken::LocalDeferred {
                self.local_wakeup_check_ctx(cpu, p, wf, false);
            }
            return w != Woken::No;
        }
        self.record_wakee(waker, p);
        let ttwu = self.cost(cpu, |c| c.c_ttwu.0);
        let ipi = self.cost(cpu, |c| c.c_ipi_send.0);
        self.ipi_send_delay = ttwu + ipi;
        let w = self.try_to_wake_up(p, wf, cpu, false);
        self.ipi_send_delay = 0;
        let ttwu = self.take_select_idle_cost(cpu) + ttwu;
        match w {
            Woken::No => return false,
            Woken::Local => self.push_front(waker, &[Step::Cpu(ttwu, Mode::NoPreempt)]),
            Woken::LocalDeferred => self.push_front(
                waker,
                &[
                    Step::Cpu(ttwu, Mode::NoPreempt),
                    Step::Do(Effect::WakeupPreemptSoftirq { p, wake_flags: wf }),
                ],
            ),
            Woken::RemoteDirect | Woken::RemoteQueued => {
                self.stats.paths.ipi_sends += 1;
                self.stats.paths.ipi_send_ns += ipi;
                self.push_front(waker, &[Step::Cpu(ttwu + ipi, Mode::NoPreempt)]);
            }
        }
        self.net.stats.softirq_wakeups += 1;
        true
    }

    /// A wake-up by `waker` in task context (`in_task`) or from its softirq.
    fn net_wake(&mut self, cpu: usize, waker: TaskId, p: TaskId, wf: u32, in_task: bool) -> bool {
        if in_task {
            self.wake_from_task(cpu, waker, p, wf)
        } else {
            self.wake_from_softirq(cpu, waker, p, wf)
        }
    }

    /// The wait queue of a file (pipes and AF_UNIX sockets: only their epoll links here).
    fn net_wq(&mut self, fd: NetFd) -> &mut WaitQueue {
        match fd {
            NetFd::Tcp(s) => &mut self.net.tcp[s.index()].wq,
            NetFd::Listen(l) => &mut self.net.listeners[l.index()].wq,
            NetFd::Udp(u) => &mut self.net.udp[u.index()].wq,
            NetFd::Eventfd(e) => &mut self.epoll.eventfds[e.index()].wq,
            NetFd::Pipe(_) | NetFd::Unix(_) => self.net.ipc_links.entry(fd).or_default(),
        }
    }

    /// The file's `poll()` mask (`tcp_poll`, `udp_poll`, `eventfd_poll`, `pipe_poll`,
    /// `unix_poll`), reduced to IN/OUT/HUP.
    fn net_poll(&self, fd: NetFd) -> u32 {
        match fd {
            NetFd::Tcp(s) => {
                let s = &self.net.tcp[s.index()];
                let mut m = 0;
                if s.readable() {
                    m |= EPOLLIN;
                }
                if s.fin_rcvd {
                    m |= EPOLLHUP;
                }
                if !s.closed && s.writeable() {
                    m |= EPOLLOUT;
                }
                m
            }
            NetFd::Listen(l) => {
                if self.net.listeners[l.index()].accept_q.is_empty() {
                    0
                } else {
                    EPOLLIN
                }
            }
            NetFd::Udp(u) => {
                EPOLLOUT
                    | if self.net.udp[u.index()].readable() {
                        EPOLLIN
                    } else {
                        0
                    }
            }
            NetFd::Eventfd(e) => {
                EPOLLOUT
                    | if self.epoll.eventfds[e.index()].count > 0 {
                        EPOLLIN
                    } else {
                        0
                    }
            }
            NetFd::Pipe(p) => {
                let p = &self.ipc.pipes[p.index()];
                if !p.is_empty() || p.nr_writers == 0 {
                    EPOLLIN
                } else {
                    0
                }
            }
            NetFd::Unix(s) => {
                if self.ipc.socks[s.index()].is_empty() {
                    0
                } else {
                    EPOLLIN
                }
            }
        }
    }

    /// kernel: wait.c __wake_up_common() @ v6.18 on a file's wait queue, by `waker` on `cpu`
    /// (`in_task`: task context, else its softirq): entries in list order; every
    /// non-exclusive entry is called, exclusive ones until one reports a wake-up (`all`: every
    /// entry, `wake_up_interruptible_all`). A task entry is a sleeper's wake function
    /// (exclusive sleepers — UDP readers, accept — are removed when woken:
    /// `autoremove_wake_function`; the others remove themselves when they run); an epoll
    /// link is `ep_poll_callback` with `key`. `wf` is `WF_SYNC` for a sync wake-up.
    #[allow(clippy::too_many_arguments)]
    fn net_wake_up(
        &mut self,
        cpu: usize,
        waker: TaskId,
        fd: NetFd,
        key: u32,
        wf: u32,
        in_task: bool,
        all: bool,
    ) {
        // the wake functions may change the queue: walk a copy (kept between calls, so a
        // wake-up allocates nothing; a nested call takes an empty one)
        let mut entries = std::mem::take(&mut self.wq_scratch);
        entries.extend(self.net_wq(fd).q.iter().copied());
        let mut nr_exclusive = if all { usize::MAX } else { 1 };
        for &e in &entries {
            let woke = match e.w {
                Waiter::Task(p) => {
                    let ok = self.net_wake(cpu, waker, p, wf, in_task);
                    if ok && e.exclusive {
                        self.net_wq(fd).remove(e.w);
                    }
                    ok
                }
                Waiter::Epoll(ep) => {
                    self.ep_poll_callback(cpu, waker, ep, fd, key, wf, in_task, e.exclusive)
                }
            };
            if woke && e.exclusive {
                nr_exclusive -= 1;
                if nr_exclusive == 0 {
                    break;
                }
            }
        }
        entries.clear();
        self.wq_scratch = entries;
    }

    /// kernel: eventpoll.c ep_poll_callback() @ v6.18, in the waker's context (§1.13): the
    /// item goes on the ready list (unless there or disarmed), and if the instance has
    /// `epoll_wait` sleepers the most recent one is woken, with WF_SYNC if the file's wake-up
    /// was sync. Returns "woken" for an exclusive link only if the event matched and a
    /// sleeper was there; a non-exclusive link always reports it.
    #[allow(clippy::too_many_arguments)]
    fn ep_poll_callback(
        &mut self,
        cpu: usize,
        waker: TaskId,
        ep: EpollId,
        fd: NetFd,
        key: u32,
        wf: u32,
        in_task: bool,
        exclusive: bool,
    ) -> bool {
        let c = self.cost(cpu, |c| c.c_ep_poll_callback.0);
        if !self.tasks[waker.index()].is_idle_task {
            let mode = if in_task {
                Mode::Kernel
            } else {
                Mode::NoPreempt
            };
            self.push_front(waker, &[Step::Cpu(c, mode)]);
        }
        let Some(item) = self.epoll.eps[ep.index()].items.get(&fd).copied() else {
            return false;
        };
        let matches = item.armed() && (key == 0 || key & item.events != 0);
        if !matches {
            return !exclusive;
        }
        self.epoll.queue_ready(ep, fd);
        let mut ewake = !exclusive;
        if !self.epoll.eps[ep.index()].waiters.is_empty() {
            if exclusive {
                ewake = match key & (EPOLLIN | EPOLLOUT) {
                    EPOLLIN => item.events & EPOLLIN != 0,
                    EPOLLOUT => item.events & EPOLLOUT != 0,
                    0 => true,
                    _ => false,
                };
            }
            self.ep_wake_one(cpu, waker, ep, wf, in_task);
        }
        ewake
    }

    /// `wake_up(&ep->wq)` / `wake_up_sync()`: one `epoll_wait` sleeper, the most recently
    /// blocked (added exclusively at the head), removed by `ep_autoremove_wake_function`.
    fn ep_wake_one(&mut self, cpu: usize, waker: TaskId, ep: EpollId, wf: u32, in_task: bool) {
        while let Some(p) = self.epoll.eps[ep.index()].waiters.pop_front() {
            if self.net_wake(cpu, waker, p, wf, in_task) {
                self.net.stats.epoll_wakeups += 1;
                return;
            }
        }
    }

    /// Epoll links of a pipe or AF_UNIX socket, after its own wake-up of `rd_wait` (task
    /// context, WF_SYNC as the pipe's or socket's wake-up).
    fn ipc_epoll_wake(&mut self, cpu: usize, t: TaskId, fd: NetFd) {
        if self.net.ipc_links.get(&fd).is_some_and(|q| !q.is_empty()) {
            self.net_wake_up(cpu, t, fd, EPOLLIN, WF_SYNC, true, false);
        }
    }

    /// kernel: tcp.c tcp_push() → tcp_output.c tcp_write_xmit() with the Nagle test, reduced
    /// (netbench.md §1.12.7): queued data goes out in skbs of up to the size goal; a partial
    /// skb is held while data is unacknowledged unless TCP_NODELAY. The first skb carries
    /// the ACK of what this end received (piggy-backed; the delayed ACK is cancelled).
    fn tcp_push(&mut self, sock: TcpSockId) -> Vec<TcpSeg> {
        let s = &mut self.net.tcp[sock.index()];
        let mut out = Vec::new();
        while s.unsent > 0 {
            let n = s.unsent.min(LO_SIZE_GOAL as u64) as u32;
            if n < LO_SIZE_GOAL && !s.nodelay && s.unacked > 0 {
                break;
            }
            let ack = std::mem::take(&mut s.rcv_unacked);
            if s.delack_armed {
                s.delack_armed = false;
            }
            s.unsent -= n as u64;
            s.unacked += n as u64;
            s.sent_data = true;
            out.push(TcpSeg {
                data: n,
                ack,
                fin: false,
            });
        }
        out
    }

    /// Transmits `segs` of `sock` to its peer from the current context: each is one
    /// loopback skb whose NET_RX processing runs at once (`TcpXmit`); `end`: the last ends
    /// the softirq (a preemption point), else they run inside one already running.
    fn tcp_xmit_segs(&mut self, t: TaskId, sock: TcpSockId, segs: &[TcpSeg], end: bool) {
        let to = self.net.tcp[sock.index()].peer;
        for seg in segs.iter().rev() {
            self.push_front(t, &[Step::Do(Effect::TcpXmit { to, seg: *seg, end })]);
        }
    }

    /// kernel: sock.c lock_sock() @ v6.18 — take the socket, or sleep (uninterruptible,
    /// exclusive FIFO on `sk_lock.wq`) until its owner's `release_sock` wakes one waiter.
    fn do_tcp_lock(&mut self, t: TaskId, sock: TcpSockId) -> Outcome {
        let s = &mut self.net.tcp[sock.index()];
        match s.owner {
            None => s.owner = Some(t),
            Some(o) if o == t => {}
            Some(_) => {
                s.lock_waiters.push_back(t);
                self.push_front(t, &[Step::Do(Effect::TcpLock { sock })]);
                self.tasks[t.index()].state = TaskState::Uninterruptible;
                return Outcome::Blocked;
            }
        }
        Outcome::Continue
    }

    /// kernel: tcp.c tcp_sendmsg_locked() @ v6.18, after `lock_sock` and the copy
    /// (`c_tcp_send`): waits in `sk_stream_wait_memory` while unacknowledged + unsent data
    /// fill the send buffer, queues the bytes and pushes what Nagle lets go; each skb is
    /// delivered in softirq context inside the call (`TcpXmit`), then `release_sock`.
    fn do_tcp_send(&mut self, t: TaskId, sock: TcpSockId, bytes: u32) -> Outcome {
        let s = &mut self.net.tcp[sock.index()];
        // a writer woken from sk_stream_wait_memory leaves the wait queue
        s.wq.remove(Waiter::Task(t));
        s.writers.retain(|&w| w != t);
        debug_assert!(!s.closed, "send on a closed TCP socket");
        if s.closed {
            self.push_front(t, &[Step::Ret(SysResult::Bytes(bytes))]);
            return Outcome::Continue;
        }
        if s.unacked + s.unsent >= s.sndbuf as u64 {
            // sk_stream_wait_memory(): release the socket (its backlog may hold ACKs), sleep
            self.push_front(
                t,
                &[
                    Step::Do(Effect::TcpRelease { sock }),
                    Step::Do(Effect::TcpWaitMemory { sock, bytes }),
                ],
            );
            return Outcome::Continue;
        }
        s.unsent += bytes as u64;
        s.bytes_sent += bytes as u64;
        self.push_front(
            t,
            &[
                Step::Do(Effect::TcpRelease { sock }),
                Step::Ret(SysResult::Bytes(bytes)),
            ],
        );
        let segs = self.tcp_push(sock);
        self.tcp_xmit_segs(t, sock, &segs, true);
        Outcome::Continue
    }

    /// kernel: stream.c sk_stream_wait_memory() — sleep (non-exclusive) until the send
    /// buffer is a third free; woken by the ACK processing's `sk_stream_write_space`.
    fn do_tcp_wait_memory(&mut self, t: TaskId, sock: TcpSockId, bytes: u32) -> Outcome {
        let s = &mut self.net.tcp[sock.index()];
        let retry = [
            Step::Do(Effect::TcpLock { sock }),
            Step::Do(Effect::TcpSend { sock, bytes }),
        ];
        if s.writeable() {
            self.push_front(t, &retry);
            return Outcome::Continue;
        }
        s.wq.add(Waiter::Task(t));
        if !s.writers.contains(&t) {
            s.writers.push(t);
        }
        self.push_front(t, &retry);
        self.block_current(t)
    }

    /// kernel: net/core/dev.c loopback xmit → NET_RX → tcp_ipv4.c tcp_v4_rcv() @ v6.18, run
    /// in the sender's context (§1.12.3–§1.12.4): an owned socket only gets the segment on
    /// its backlog (`c_net_rx_ip`), otherwise the full receive (`c_net_rx_tcp`) queues it and
    /// wakes the reader.
    fn do_tcp_xmit(&mut self, t: TaskId, to: TcpSockId, seg: TcpSeg, end: bool) -> Outcome {
        let depth = if end { 1 } else { 2 };
        self.net.stats.max_input_queue = self.net.stats.max_input_queue.max(depth);
        let cpu = self.tasks[t.index()].cpu;
        let tail = if end {
            Step::Do(Effect::SoftirqEnd)
        } else {
            Step::Cpu(0, Mode::NoPreempt)
        };
        if self.net.tcp[to.index()].owner.is_some() {
            let c = self.cost(cpu, |c| c.c_net_rx_ip.0);
            self.push_front(
                t,
                &[
                    Step::Cpu(c, Mode::NoPreempt),
                    Step::Do(Effect::TcpBacklogAdd { sock: to, seg }),
                    tail,
                ],
            );
        } else {
            let c = self.cost(cpu, |c| c.c_net_rx_tcp.0);
            self.push_front(
                t,
                &[
                    Step::Cpu(c, Mode::NoPreempt),
                    Step::Do(Effect::TcpRcv {
                        sock: to,
                        seg,
                        in_task: false,
                    }),
                    tail,
                ],
            );
        }
        Outcome::ContinueNoPoint
    }

    /// `sk_add_backlog()` at the end of the owned-socket path; if the owner released the
    /// socket meanwhile the segment is received at once (the rest of `c_net_rx_tcp`).
    fn do_tcp_backlog_add(
        &mut self,
        cpu: usize,
        t: TaskId,
        sock: TcpSockId,
        seg: TcpSeg,
    ) -> Outcome {
        if self.net.tcp[sock.index()].owner.is_some() {
            self.net.tcp[sock.index()].backlog.push_back(seg);
            self.net.stats.backlog_deliveries += 1;
            return Outcome::ContinueNoPoint;
        }
        let c = self.cost(cpu, |c| c.c_tcp_rcv.0);
        self.push_front(
            t,
            &[
                Step::Cpu(c, Mode::NoPreempt),
                Step::Do(Effect::TcpRcv {
                    sock,
                    seg,
                    in_task: false,
                }),
            ],
        );
        Outcome::ContinueNoPoint
    }

    /// kernel: tcp_input.c tcp_rcv_established() @ v6.18, reduced: the ACK frees send space
    /// (write-space wake-up, WF_TTWU only, and Nagle-held data goes out from this context);
    /// data is queued and `tcp_data_ready` → `sock_def_readable` wakes the readers (WF_SYNC);
    /// more than one MSS unacknowledged is ACKed at once, else the delayed ACK is armed; a
    /// FIN wakes everybody (non-sync). `in_task`: run by `release_sock` of the owner `t`
    /// (backlog), else in `t`'s softirq.
    fn tcp_rcv(&mut self, cpu: usize, t: TaskId, sock: TcpSockId, seg: TcpSeg, in_task: bool) {
        self.net.stats.segments_delivered += 1;
        if seg.ack > 0 {
            self.tcp_ack_rcv(cpu, t, sock, seg.ack, in_task);
        }
        if seg.data > 0 {
            let s = &mut self.net.tcp[sock.index()];
            s.rcv_queued += seg.data as u64;
            s.rcv_segs += 1;
            s.bytes_rcvd += seg.data as u64;
            s.rcv_unacked += seg.data as u64;
            if s.rcv_unacked > LO_MSS as u64 {
                // __tcp_ack_snd_check(): more than one full MSS unacknowledged: ACK now
                let c = self.cost(cpu, |c| c.c_tcp_ack.0);
                let mode = if in_task {
                    Mode::Kernel
                } else {
                    Mode::NoPreempt
                };
                self.push_front(
                    t,
                    &[
                        Step::Cpu(c, mode),
                        Step::Do(Effect::TcpPureAck { sock, in_task }),
                    ],
                );
            } else if !s.delack_armed {
                s.delack_armed = true;
                self.arm_delack(cpu, sock);
            }
            self.net_wake_up(cpu, t, NetFd::Tcp(sock), EPOLLIN, WF_SYNC, in_task, false);
        }
        if seg.fin {
            self.net.tcp[sock.index()].fin_rcvd = true;
            self.net_wake_up(
                cpu,
                t,
                NetFd::Tcp(sock),
                EPOLLIN | EPOLLHUP,
                0,
                in_task,
                true,
            );
        }
    }

    /// The ACK of `acked` bytes arriving at `sock` (tcp_ack → tcp_clean_rtx_queue,
    /// tcp_check_space): Nagle-held data is pushed from this context and, once a third of the
    /// send buffer is free, a writer that found it full is woken (WF_TTWU only).
    fn tcp_ack_rcv(&mut self, cpu: usize, t: TaskId, sock: TcpSockId, acked: u64, in_task: bool) {
        let s = &mut self.net.tcp[sock.index()];
        s.unacked -= acked.min(s.unacked);
        let wake_writers = !s.writers.is_empty() && s.writeable();
        if wake_writers {
            s.writers.clear();
        }
        let segs = self.tcp_push(sock);
        if !segs.is_empty() {
            // from task context (release_sock) each skb's softirq ends at its own
            // local_bh_enable; inside a softirq they join the running one
            self.tcp_xmit_segs(t, sock, &segs, in_task);
        }
        if wake_writers {
            // sk_stream_write_space(): wake_up_interruptible_poll(EPOLLOUT), not sync
            self.net_wake_up(cpu, t, NetFd::Tcp(sock), EPOLLOUT, 0, in_task, false);
        }
    }

    /// A pure ACK (`tcp_send_ack`) from `sock` to its peer: `c_tcp_ack` (paid before)
    /// includes the peer's receive processing, which is applied here.
    fn do_tcp_pure_ack(
        &mut self,
        cpu: usize,
        t: TaskId,
        sock: TcpSockId,
        in_task: bool,
    ) -> Outcome {
        let s = &mut self.net.tcp[sock.index()];
        let ack = std::mem::take(&mut s.rcv_unacked);
        if s.delack_armed {
            s.delack_armed = false;
        }
        let peer = s.peer;
        self.net.stats.pure_acks += 1;
        if ack > 0 {
            self.tcp_ack_rcv(cpu, t, peer, ack, in_task);
        }
        if in_task {
            Outcome::Continue
        } else {
            Outcome::ContinueNoPoint
        }
    }

    /// Arms `sock`'s delayed-ACK timer (`inet_csk_reset_xmit_timer(ICSK_TIME_DACK)`,
    /// `TCP_DELACK_MIN`) on `cpu`.
    fn arm_delack(&mut self, cpu: usize, sock: TcpSockId) {
        let at = self.now + TCP_DELACK_MIN_NS;
        let s = &mut self.net.tcp[sock.index()];
        s.delack_at = at;
        s.delack_cpu = cpu as u32;
        if !s.delack_queued {
            s.delack_queued = true;
            self.push_event(at, Ev::Delack { sock: sock.0 });
        }
    }

    /// kernel: tcp_timer.c tcp_delack_timer() @ v6.18 — the delayed ACK expires in the TIMER
    /// softirq of `cpu` (nothing was sent back within 40 ms): a pure ACK (`c_tcp_ack`, charged
    /// to whatever runs there) whose processing at the peer may free send space.
    /// Deviation: an owned socket is not deferred to its `release_sock`
    /// (`TCP_DELACK_TIMER_DEFERRED`); on an idle CPU the cost is not charged.
    pub(crate) fn on_delack(&mut self, sock: u32) {
        let sock = TcpSockId(sock);
        let now = self.now;
        let s = &mut self.net.tcp[sock.index()];
        s.delack_queued = false;
        if !s.delack_armed {
            return;
        }
        if now < s.delack_at {
            // re-armed since this event was queued: wait for the current deadline
            s.delack_queued = true;
            let at = s.delack_at;
            self.push_event(at, Ev::Delack { sock: sock.0 });
            return;
        }
        let cpu = s.delack_cpu as usize;
        self.net.stats.delack_expiries += 1;
        let executing = self.executing;
        self.executing = Some(cpu);
        let idle = self.cpu_is_idle(cpu);
        if !idle {
            self.progress_segment(cpu);
        }
        let curr = self.rqs[cpu].curr;
        let s = &mut self.net.tcp[sock.index()];
        s.delack_armed = false;
        let ack = std::mem::take(&mut s.rcv_unacked);
        let peer = s.peer;
        self.net.stats.pure_acks += 1;
        if ack > 0 {
            // wake-ups from here are charged by the interrupt below, not the plan
            let saved = std::mem::take(&mut self.tasks[curr.index()].exec.plan);
            self.tcp_ack_rcv(cpu, curr, peer, ack, false);
            let extra = std::mem::replace(&mut self.tasks[curr.index()].exec.plan, saved);
            let mut c = 0;
            let mut extra = extra;
            while let Some(step) = extra.pop_front() {
                match step {
                    Step::Cpu(w, _) => c += w,
                    Step::Do(Effect::WakeupPreemptSoftirq { p, wake_flags }) => {
                        self.local_wakeup_check_ctx(cpu, p, wake_flags, false)
                    }
                    // data transmitted from the timer: delivered at once, its cost charged
                    Step::Do(Effect::TcpXmit { to, seg, .. }) => {
                        c += self.cost(cpu, |c| c.c_net_rx_tcp.0);
                        self.tcp_rcv_from_irq(cpu, curr, to, seg, &mut c);
                    }
                    _ => {}
                }
            }
            if !idle {
                c += self.cost(cpu, |c| c.c_tcp_ack.0);
                self.push_irq(cpu, c);
            }
        } else if !idle {
            let c = self.cost(cpu, |c| c.c_tcp_ack.0);
            self.push_irq(cpu, c);
        }
        self.executing = executing;
        if executing != Some(cpu) {
            self.cpu_continue_from_outside(cpu);
        }
    }

    /// The receive of a segment transmitted from the delayed-ACK timer (Nagle-held data
    /// released by the ACK), in the interrupt: its wake-ups' costs are added to `c`.
    fn tcp_rcv_from_irq(
        &mut self,
        cpu: usize,
        curr: TaskId,
        to: TcpSockId,
        seg: TcpSeg,
        c: &mut u64,
    ) {
        let saved = std::mem::take(&mut self.tasks[curr.index()].exec.plan);
        self.tcp_rcv(cpu, curr, to, seg, false);
        let mut extra = std::mem::replace(&mut self.tasks[curr.index()].exec.plan, saved);
        while let Some(step) = extra.pop_front() {
            match step {
                Step::Cpu(w, _) => *c += w,
                Step::Do(Effect::WakeupPreemptSoftirq { p, wake_flags }) => {
                    self.local_wakeup_check_ctx(cpu, p, wake_flags, false)
                }
                _ => {}
            }
        }
    }

    /// kernel: sock.c release_sock() → __release_sock() @ v6.18 by the owner `t`: the
    /// backlogged segments are received in `t`'s context (`c_tcp_rcv` each, bottom halves
    /// off), their wake-ups from task context; then the socket is free.
    fn do_tcp_release(&mut self, cpu: usize, t: TaskId, sock: TcpSockId) -> Outcome {
        let s = &mut self.net.tcp[sock.index()];
        if s.owner != Some(t) {
            return Outcome::Continue;
        }
        let n = s.backlog.len() as u64;
        if n == 0 {
            s.owner = None;
            if let Some(w) = s.lock_waiters.pop_front() {
                self.wake_from_task(cpu, t, w, 0);
            }
            return Outcome::Continue;
        }
        let c = self.cost(cpu, |c| c.c_tcp_rcv.0) * n;
        self.push_front(
            t,
            &[
                Step::Cpu(c, Mode::NoPreempt),
                Step::Do(Effect::TcpBacklogDone { sock, n: n as u32 }),
            ],
        );
        Outcome::Continue
    }

    fn do_tcp_backlog_done(&mut self, cpu: usize, t: TaskId, sock: TcpSockId, n: u32) -> Outcome {
        // loop until the backlog is empty (segments may have come in meanwhile)
        self.push_front(t, &[Step::Do(Effect::TcpRelease { sock })]);
        for _ in 0..n {
            let Some(seg) = self.net.tcp[sock.index()].backlog.pop_front() else {
                break;
            };
            self.tcp_rcv(cpu, t, sock, seg, true);
        }
        Outcome::Continue
    }

    /// kernel: tcp.c tcp_recvmsg_locked() @ v6.18 (§1.12.6), under `lock_sock`: copies what is
    /// queued; returns with ≥ 1 byte (all `bytes` with WAITALL), 0 after the peer's FIN, or
    /// `EAGAIN` with DONTWAIT; otherwise `sk_wait_data` (release, sleep, relock). A read that
    /// drains the queue of a bulk receiver ACKs at once (`tcp_cleanup_rbuf`, `c_tcp_ack`).
    #[allow(clippy::too_many_arguments)]
    fn do_tcp_recv(
        &mut self,
        cpu: usize,
        t: TaskId,
        sock: TcpSockId,
        bytes: u32,
        flags: RecvFlags,
        got: u32,
    ) -> Outcome {
        let s = &mut self.net.tcp[sock.index()];
        s.wq.remove(Waiter::Task(t));
        if s.owner.is_none() {
            s.owner = Some(t);
        }
        let take = s.rcv_queued.min((bytes - got) as u64) as u32;
        s.rcv_queued -= take as u64;
        let got = got + take;
        let done =
            got == bytes || (got >= 1 && !flags.waitall) || (s.fin_rcvd && s.rcv_queued == 0);
        if done || (flags.dontwait && got == 0) {
            let res = if done {
                SysResult::Bytes(got)
            } else {
                SysResult::Again
            };
            let drained_bulk = s.rcv_queued == 0 && s.rcv_unacked > 0 && !s.sent_data;
            let mut c = self.cost(cpu, |c| c.c_tcp_recv.0);
            if !flags.trunc {
                c += Self::net_copy(self.costs[cpu].c_copy_per_KB.0, got);
            }
            if drained_bulk && done {
                let ack = self.cost(cpu, |c| c.c_tcp_ack.0);
                self.push_front(
                    t,
                    &[
                        Step::Cpu(c, Mode::Kernel),
                        Step::Cpu(ack, Mode::Kernel),
                        Step::Do(Effect::TcpPureAck {
                            sock,
                            in_task: true,
                        }),
                        Step::Do(Effect::TcpRelease { sock }),
                        Step::Ret(res),
                    ],
                );
            } else {
                self.push_front(
                    t,
                    &[
                        Step::Cpu(c, Mode::Kernel),
                        Step::Do(Effect::TcpRelease { sock }),
                        Step::Ret(res),
                    ],
                );
            }
            return Outcome::Continue;
        }
        self.push_front(
            t,
            &[
                Step::Do(Effect::TcpRelease { sock }),
                Step::Do(Effect::TcpWaitData {
                    sock,
                    bytes,
                    flags,
                    got,
                }),
            ],
        );
        Outcome::Continue
    }

    /// kernel: sock.c sk_wait_data() @ v6.18, after `release_sock`: sleep on the socket
    /// (non-exclusive, at the head, `woken_wake_function`) unless the backlog brought data;
    /// `c_sk_wait` is paid when it resumes.
    fn do_tcp_wait_data(
        &mut self,
        cpu: usize,
        t: TaskId,
        sock: TcpSockId,
        bytes: u32,
        flags: RecvFlags,
        got: u32,
    ) -> Outcome {
        let retry = Step::Do(Effect::TcpRecv {
            sock,
            bytes,
            flags,
            got,
        });
        let lock = Step::Do(Effect::TcpLock { sock });
        let s = &mut self.net.tcp[sock.index()];
        if s.rcv_queued > 0 || s.fin_rcvd {
            self.push_front(t, &[lock, retry]);
            return Outcome::Continue;
        }
        s.wq.add(Waiter::Task(t));
        let c = self.cost(cpu, |c| c.c_sk_wait.0);
        self.push_front(t, &[Step::Cpu(c, Mode::Kernel), lock, retry]);
        self.block_current(t)
    }

    /// kernel: af_inet.c inet_stream_connect() on loopback (§1.14): the handshake runs in
    /// the caller's softirqs (paid in `c_tcp_connect`); the child socket goes on the accept
    /// queue of the listener the SYN's hash picks, whose `sk_data_ready` wakes one exclusive
    /// accept waiter (FIFO, WF_SYNC) or its epoll links from the softirq. A full queue drops
    /// the SYN: retransmitted after 1 s (`TCP_TIMEOUT_INIT`).
    fn do_tcp_connect(
        &mut self,
        cpu: usize,
        t: TaskId,
        listener: ListenId,
        nodelay: bool,
    ) -> Outcome {
        let port = self.net.alloc_port();
        let l = self.net.reuseport_select(listener, port);
        if self.net.listeners[l.index()].is_full() {
            self.net.listeners[l.index()].overflows += 1;
            self.net.stats.syn_drops += 1;
            self.push_front(t, &[Step::Do(Effect::TcpConnect { listener, nodelay })]);
            let at = self.now + 1_000_000_000;
            self.arm_hrtimer(t, cpu, at, at);
            return self.block_current(t);
        }
        let (client, server) = self.net.new_pair_port(port, nodelay, false);
        self.net.listeners[l.index()].accept_q.push_back(server);
        self.net.stats.connects += 1;
        self.push_front(
            t,
            &[
                Step::Do(Effect::SoftirqEnd),
                Step::Ret(SysResult::Tcp(client)),
            ],
        );
        self.net_wake_up(cpu, t, NetFd::Listen(l), EPOLLIN, WF_SYNC, false, false);
        Outcome::ContinueNoPoint
    }

    /// kernel: inet_connection_sock.c inet_csk_accept() @ v6.18: the first queued
    /// connection (`c_accept`), else `EAGAIN` (non-blocking) or an exclusive FIFO sleep
    /// (`inet_csk_wait_for_connect`, `c_sk_wait` when it resumes).
    fn do_accept(&mut self, cpu: usize, t: TaskId, listener: ListenId, nonblock: bool) -> Outcome {
        let l = &mut self.net.listeners[listener.index()];
        l.wq.remove(Waiter::Task(t));
        if let Some(s) = l.accept_q.pop_front() {
            let c = self.cost(cpu, |c| c.c_accept.0);
            self.push_front(
                t,
                &[Step::Cpu(c, Mode::Kernel), Step::Ret(SysResult::Tcp(s))],
            );
            return Outcome::Continue;
        }
        if nonblock {
            let c = self.cost(cpu, |c| c.c_syscall.0);
            self.push_front(
                t,
                &[Step::Cpu(c, Mode::Kernel), Step::Ret(SysResult::Again)],
            );
            return Outcome::Continue;
        }
        l.wq.add_exclusive_tail(Waiter::Task(t));
        let c = self.cost(cpu, |c| c.c_sk_wait.0);
        self.push_front(
            t,
            &[
                Step::Cpu(c, Mode::Kernel),
                Step::Do(Effect::Accept {
                    listener,
                    nonblock: false,
                }),
            ],
        );
        self.block_current(t)
    }

    /// `close()` of one end (`c_tcp_close` paid before): the FIN reaches the peer in the
    /// closer's softirq; `sock_def_wakeup` wakes every sleeper there, not sync.
    fn do_tcp_close(&mut self, cpu: usize, t: TaskId, sock: TcpSockId) -> Outcome {
        let s = &mut self.net.tcp[sock.index()];
        if s.closed {
            self.push_front(t, &[Step::Ret(SysResult::None)]);
            return Outcome::Continue;
        }
        s.closed = true;
        if s.delack_armed {
            s.delack_armed = false;
        }
        let peer = s.peer;
        self.push_front(
            t,
            &[Step::Do(Effect::SoftirqEnd), Step::Ret(SysResult::None)],
        );
        if !self.net.tcp[peer.index()].closed {
            self.net.tcp[peer.index()].fin_rcvd = true;
            self.net_wake_up(cpu, t, NetFd::Tcp(peer), EPOLLIN | EPOLLHUP, 0, false, true);
        }
        Outcome::ContinueNoPoint
    }

    /// kernel: udp.c __udp_enqueue_schedule_skb() @ v6.18 (§1.12.8), in the sender's
    /// softirq after `c_net_rx_udp`: admission by truesize (the test of 9aaec660b5be from
    /// v6.18, the older one before), then `sock_def_readable` (WF_SYNC; readers exclusive
    /// FIFO, one per datagram).
    fn do_udp_rcv(&mut self, cpu: usize, t: TaskId, dst: UdpSockId, bytes: u32) -> Outcome {
        self.net.stats.max_input_queue = self.net.stats.max_input_queue.max(1);
        let truesize = UdpSock::truesize(bytes);
        let refined = self.cfg.has(crate::patches::Patch::UdpRefineEnqueueTest);
        let u = &mut self.net.udp[dst.index()];
        if !u.admits(truesize, refined) {
            u.drops += 1;
            self.net.stats.udp_drops += 1;
            return Outcome::ContinueNoPoint;
        }
        u.queue.push_back((bytes, truesize));
        u.rmem += truesize as u64;
        u.received += 1;
        self.net.stats.segments_delivered += 1;
        self.net_wake_up(cpu, t, NetFd::Udp(dst), EPOLLIN, WF_SYNC, false, false);
        Outcome::ContinueNoPoint
    }

    /// kernel: udp.c udp_recvmsg() @ v6.18: one datagram (truncated to `bytes`, `c_udp_recv`),
    /// or an exclusive FIFO sleep in `__skb_wait_for_more_packets` (`c_sk_wait` on resuming).
    fn do_udp_recv(&mut self, cpu: usize, t: TaskId, sock: UdpSockId, bytes: u32) -> Outcome {
        let u = &mut self.net.udp[sock.index()];
        u.wq.remove(Waiter::Task(t));
        if let Some((len, truesize)) = u.queue.pop_front() {
            u.rmem -= truesize as u64;
            let got = len.min(bytes);
            let c = self.cost(cpu, |c| c.c_udp_recv.0)
                + Self::net_copy(self.costs[cpu].c_copy_per_KB.0, got);
            self.push_front(
                t,
                &[Step::Cpu(c, Mode::Kernel), Step::Ret(SysResult::Bytes(got))],
            );
            return Outcome::Continue;
        }
        u.wq.add_exclusive_tail(Waiter::Task(t));
        let c = self.cost(cpu, |c| c.c_sk_wait.0);
        self.push_front(
            t,
            &[
                Step::Cpu(c, Mode::Kernel),
                Step::Do(Effect::UdpRecv { sock, bytes }),
            ],
        );
        self.block_current(t)
    }

    /// kernel: eventpoll.c do_epoll_ctl() @ v6.18 (`c_epoll_ctl` paid before): ADD links the
    /// instance into the file's wait queue (head, or tail with EPOLLEXCLUSIVE); ADD and MOD
    /// queue the item at once if the file is ready and wake a sleeper (not sync); DEL unlinks.
    fn do_epoll_ctl(
        &mut self,
        cpu: usize,
        t: TaskId,
        ep: EpollId,
        op: EpollOp,
        fd: NetFd,
        events: u32,
    ) -> Outcome {
        self.push_front(t, &[Step::Ret(SysResult::None)]);
        match op {
            EpollOp::Add | EpollOp::Mod => {
                let e = &mut self.epoll.eps[ep.index()];
                let existed = e.items.contains_key(&fd);
                debug_assert!(
                    existed == (op == EpollOp::Mod),
                    "epoll_ctl {op:?} of {fd:?}"
                );
                let it = e.items.entry(fd).or_insert(EpItem {
                    fd,
                    events,
                    ready: false,
                });
                it.events = events;
                if !existed {
                    if let NetFd::Pipe(p) = fd {
                        self.ipc.pipes[p.index()].poll_usage = true;
                    }
                    let wq = self.net_wq(fd);
                    if events & EPOLLEXCLUSIVE != 0 {
                        wq.add_exclusive_tail(Waiter::Epoll(ep));
                    } else {
                        wq.add(Waiter::Epoll(ep));
                    }
                }
                if self.net_poll(fd) & events & !EP_PRIVATE_BITS != 0
                    && self.epoll.queue_ready(ep, fd)
                    && !self.epoll.eps[ep.index()].waiters.is_empty()
                {
                    self.ep_wake_one(cpu, t, ep, 0, true);
                }
            }
            EpollOp::Del => {
                let e = &mut self.epoll.eps[ep.index()];
                e.items.remove(&fd);
                e.rdllist.retain(|&f| f != fd);
                self.net_wq(fd).remove(Waiter::Epoll(ep));
            }
        }
        Outcome::Continue
    }

    /// kernel: eventpoll.c ep_poll() → ep_send_events() → ep_done_scan() @ v6.18 (§1.13):
    /// harvests up to `max` ready items (a level-triggered one still ready goes back on the
    /// list, an edge-triggered one does not, a ONESHOT one is disarmed); with nothing to
    /// report, sleeps exclusively at the head of the instance's queue (LIFO). A harvest that
    /// leaves the ready list non-empty wakes one more sleeper (not sync).
    fn do_epoll_wait(&mut self, cpu: usize, t: TaskId, ep: EpollId, max: u32) -> Outcome {
        self.epoll.eps[ep.index()].waiters.retain(|&w| w != t);
        let n = self.epoll.eps[ep.index()].rdllist.len();
        let mut out: Vec<(NetFd, u32)> = Vec::new();
        let mut requeue: Vec<NetFd> = Vec::new();
        for _ in 0..n {
            if out.len() as u32 >= max.max(1) {
                break;
            }
            let Some(fd) = self.epoll.eps[ep.index()].rdllist.pop_front() else {
                break;
            };
            let mask = self.net_poll(fd);
            let e = &mut self.epoll.eps[ep.index()];
            let Some(it) = e.items.get_mut(&fd) else {
                continue;
            };
            it.ready = false;
            let revents = mask & (it.events | EPOLLHUP | EPOLLERR) & !EP_PRIVATE_BITS;
            if revents == 0 || !it.armed() {
                continue;
            }
            out.push((fd, revents));
            if it.oneshot() {
                it.events &= EP_PRIVATE_BITS;
            } else if !it.edge() {
                requeue.push(fd);
            }
        }
        for fd in requeue {
            self.epoll.queue_ready(ep, fd);
        }
        if out.is_empty() {
            self.epoll.eps[ep.index()].waiters.push_front(t);
            let c = self.cost(cpu, |c| c.c_sk_wait.0);
            self.push_front(
                t,
                &[
                    Step::Cpu(c, Mode::Kernel),
                    Step::Do(Effect::EpollWait { ep, max }),
                ],
            );
            return self.block_current(t);
        }
        let k = out.len() as u64;
        let c = self.cost(cpu, |c| c.c_epoll_wait.0) + k * self.cost(cpu, |c| c.c_epoll_event.0);
        self.epoll.harvest.insert(t, out);
        self.push_front(
            t,
            &[
                Step::Cpu(c, Mode::Kernel),
                Step::Ret(SysResult::Ready(k as u32)),
            ],
        );
        let e = &self.epoll.eps[ep.index()];
        if !e.rdllist.is_empty() && !e.waiters.is_empty() {
            self.ep_wake_one(cpu, t, ep, 0, true);
        }
        Outcome::Continue
    }

    /// kernel: eventfd.c eventfd_write() @ v6.18 (cost as a pipe write, paid before): adds 1
    /// and wakes the waiters with `wake_up_locked_poll(EPOLLIN)`, not sync.
    fn do_eventfd_write(&mut self, cpu: usize, t: TaskId, fd: EventfdId) -> Outcome {
        self.epoll.eventfds[fd.index()].count += 1;
        self.push_front(t, &[Step::Ret(SysResult::None)]);
        self.net_wake_up(cpu, t, NetFd::Eventfd(fd), EPOLLIN, 0, true, false);
        Outcome::Continue
    }

    /// kernel: eventfd.c eventfd_read() @ v6.18: takes the count (cost as a pipe read), or
    /// sleeps (non-exclusive) while it is 0.
    fn do_eventfd_read(&mut self, cpu: usize, t: TaskId, fd: EventfdId) -> Outcome {
        let e = &mut self.epoll.eventfds[fd.index()];
        e.wq.remove(Waiter::Task(t));
        if e.count > 0 {
            e.count = 0;
            let c = self.cost(cpu, |c| c.c_pipe_read.0);
            self.push_front(
                t,
                &[Step::Cpu(c, Mode::Kernel), Step::Ret(SysResult::Bytes(8))],
            );
            return Outcome::Continue;
        }
        e.wq.add(Waiter::Task(t));
        self.push_front(t, &[Step::Do(Effect::EventfdRead { fd })]);
        self.block_current(t)
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

    /// `Op::SpinWhile` (workloads.md §1.10): a user-mode spin segment watching the word, or
    /// `Changed` at once if it already differs. The result is handed to the program as that
    /// of user work (no return from a system call: no preemption point of its own).
    fn user_spin(&mut self, t: TaskId, futex: FutexId, val: u32, max_ns: u64) -> Outcome {
        let fx = &mut self.ipc.futexes[futex.index()];
        if fx.val != val || max_ns == 0 {
            let res = if fx.val != val {
                SysResult::Changed
            } else {
                SysResult::SpinTimeout
            };
            self.tasks[t.index()].exec.last = Some(res);
            return Outcome::Continue;
        }
        fx.spinners.push((t, val));
        self.push_front(t, &[Step::Do(Effect::UserSpinEnd { futex, val })]);
        self.tasks[t.index()].exec.segs.push(Seg {
            rem: if max_ns > USER_SPIN_OPEN {
                SPIN_FOREVER
            } else {
                max_ns
            },
            mode: Mode::User,
            kind: SegKind::UserSpin,
            until: None,
        });
        Outcome::Continue
    }

    /// A store to a futex word: every user spinner that was waiting for it to differ from
    /// its value stops, in the order the spins started (a running spinner at this instant,
    /// one off its CPU when it next runs).
    pub(crate) fn futex_word_changed(&mut self, f: FutexId) {
        let fx = &mut self.ipc.futexes[f.index()];
        if fx.spinners.is_empty() {
            return;
        }
        let now_val = fx.val;
        if fx.spinners.iter().all(|&(_, v)| v == now_val) {
            return;
        }
        let mut ended = std::mem::take(&mut self.spin_scratch);
        fx.spinners.retain(|&(s, v)| {
            if v != now_val {
                ended.push(s);
                false
            } else {
                true
            }
        });
        for &s in &ended {
            self.end_open_segment(s, SegKind::UserSpin);
        }
        ended.clear();
        self.spin_scratch = ended;
    }

    // ===================================================================== PI futexes

    /// kernel: futex/pi.c futex_lock_pi() → rtmutex.c rt_mutex_slowlock(): an unowned futex
    /// is taken at once; otherwise the task sleeps in the waiter list (by effective priority,
    /// FIFO within one) and `rt_mutex_adjust_prio_chain()` boosts the owner chain.
    /// Deviations: the word's value and the TID protocol are not modelled (the kernel object
    /// alone decides); the unlock hands the lock to the top waiter (no lock stealing).
    fn futex_lock_pi(&mut self, t: TaskId, futex: FutexId) -> Outcome {
        let Some(owner) = self.ipc.futexes[futex.index()].pi_owner else {
            self.ipc.futexes[futex.index()].pi_owner = Some(t);
            self.tasks[t.index()].pi_held.push(futex);
            self.push_front(t, &[Step::Ret(SysResult::None)]);
            return Outcome::Continue;
        };
        if owner == t {
            // EDEADLK
            self.push_front(t, &[Step::Ret(SysResult::Again)]);
            return Outcome::Continue;
        }
        self.pi_enqueue_waiter(futex, t);
        self.tasks[t.index()].pi_blocked_on = Some(futex);
        self.rt_mutex_adjust_prio_chain(owner);
        self.push_front(t, &[Step::Do(Effect::Resumed)]);
        self.tasks[t.index()].state = TaskState::Uninterruptible;
        Outcome::Blocked
    }

    /// Inserts `t` into `futex`'s waiters after every waiter of its priority or better.
    fn pi_enqueue_waiter(&mut self, futex: FutexId, t: TaskId) {
        let prio = self.tasks[t.index()].prio();
        let tasks = &self.tasks;
        let w = &mut self.ipc.futexes[futex.index()].waiters;
        w.retain(|&x| x != t);
        let at = w
            .iter()
            .position(|&x| tasks[x.index()].prio() > prio)
            .unwrap_or(w.len());
        w.insert(at, t);
    }

    /// The boost `t` gets from the PI futexes it owns: its best top waiter's priority.
    fn pi_top_prio(&self, t: TaskId) -> Option<i32> {
        self.tasks[t.index()]
            .pi_held
            .iter()
            .filter_map(|f| self.ipc.futexes[f.index()].waiters.front())
            .map(|&w| self.tasks[w.index()].prio())
            .min()
    }

    /// kernel: rtmutex.c rt_mutex_adjust_prio_chain() — from `owner` along the chain of
    /// owners blocked on PI futexes: re-sort each as a waiter and set its boost
    /// (`max_lock_depth` = 1024 steps).
    fn rt_mutex_adjust_prio_chain(&mut self, owner: TaskId) {
        let mut task = owner;
        for _ in 0..1024 {
            let before = self.tasks[task.index()].prio();
            let boost = self.pi_top_prio(task);
            self.rt_mutex_setprio(task, boost);
            let Some(next_lock) = self.tasks[task.index()].pi_blocked_on else {
                return;
            };
            if self.tasks[task.index()].prio() == before {
                return;
            }
            self.pi_enqueue_waiter(next_lock, task);
            match self.ipc.futexes[next_lock.index()].pi_owner {
                Some(o) if o != task => task = o,
                _ => return,
            }
        }
    }

    /// kernel: futex/pi.c futex_unlock_pi() → rtmutex.c rt_mutex_slowunlock(): the top waiter
    /// becomes the owner and is woken (after the releaser's deboost); not the owner: nothing.
    fn futex_unlock_pi(&mut self, cpu: usize, t: TaskId, futex: FutexId) {
        if self.ipc.futexes[futex.index()].pi_owner != Some(t) {
            return; // EPERM
        }
        self.tasks[t.index()].pi_held.retain(|&f| f != futex);
        let next = self.ipc.futexes[futex.index()].waiters.pop_front();
        self.ipc.futexes[futex.index()].pi_owner = next;
        if let Some(w) = next {
            self.tasks[w.index()].pi_blocked_on = None;
            self.tasks[w.index()].pi_held.push(futex);
            let boost = self.pi_top_prio(w);
            self.rt_mutex_setprio(w, boost);
        }
        // rt_mutex_adjust_prio(current): deboost before the wakeup
        let boost = self.pi_top_prio(t);
        self.rt_mutex_setprio(t, boost);
        if let Some(w) = next {
            self.wake_from_task(cpu, t, w, 0);
        }
    }

    // ===================================================================== hrtimers

    /// Arms a sleeper's hrtimer on `cpu` with the range `[soft, hard]` (timer slack).
    fn arm_hrtimer(&mut self, t: TaskId, cpu: usize, soft: u64, hard: u64) {
        let tm = HrTimer {
            task: t,
            soft,
            hard,
            cpu,
            active: true,
            gen: 0,
        };
        let id = match self.free_timers.pop() {
            Some(id) => {
                let gen = self.timers[id as usize].gen.wrapping_add(1);
                self.timers[id as usize] = HrTimer { gen, ..tm };
                id
            }
            None => {
                self.timers.push(tm);
                (self.timers.len() - 1) as u32
            }
        };
        if hard > soft {
            self.rqs[cpu].range_timers.push(id);
        }
        self.rqs[cpu].hrtimers.push(id);
        let gen = self.timers[id as usize].gen;
        self.push_event(hard, Ev::Timer { id, gen });
    }

    pub(crate) fn on_timer(&mut self, id: u32, gen: u32) {
        let tm = self.timers[id as usize];
        if !tm.active || tm.gen != gen {
            return;
        }
        let cpu = tm.cpu;
        if self.cpu_is_idle(cpu) {
            // The interrupt takes the CPU out of its idle state (exit latency), then the
            // hrtimer handler runs up to the wakeup (c_hrtimer_irq, and c_ttwu for the wakeup
            // itself, workloads.md §1.6 and §5.2); the expiry happens at its end.
            let (exit, polling) = self.idle_exit_latency(cpu);
            if !polling {
                self.stats.paths.idle_exits += 1;
                self.stats.paths.idle_exit_ns += exit;
            }
            // (the wake-up's idle scan, if any, is not charged here: it is not known yet)
            let irq = self.cost(cpu, |c| c.c_hrtimer_irq.0) + self.cost(cpu, |c| c.c_ttwu.0);
            if exit + irq > 0 {
                self.push_event(self.now + exit + irq, Ev::TimerIrq { id, gen });
                return;
            }
        }
        self.on_timer_irq(id, gen);
    }

    /// Expiry of timer `id` in its interrupt handler, and of the other range timers of the CPU
    /// whose window has opened.
    pub(crate) fn on_timer_irq(&mut self, id: u32, gen: u32) {
        let tm = self.timers[id as usize];
        if !tm.active || tm.gen != gen {
            return;
        }
        let cpu = tm.cpu;
        self.expire_timer(id);
        // any other armed range timer whose window has opened expires with this interrupt
        self.expire_range_timers(cpu);
    }

    /// Timer interrupt on `cpu`: expire the sleepers whose slack window has opened.
    /// kernel: hrtimer.c __hrtimer_run_queues() walks the timer queue in order of hard expiry
    /// and stops at the first timer whose soft expiry is still in the future, even if a later
    /// one's window is already open. (Timers without slack fire by their own event.)
    pub(crate) fn expire_range_timers(&mut self, cpu: usize) {
        let now = self.now;
        if self.rqs[cpu].range_timers.is_empty() {
            return;
        }
        let mut queue: Vec<u32> = self.rqs[cpu].range_timers.clone();
        // stable: equal expiries keep the order they were armed in (timerqueue inserts equal
        // keys to the right)
        queue.sort_by_key(|&id| self.timers[id as usize].hard);
        for id in queue {
            let t = self.timers[id as usize];
            if !t.active || t.cpu != cpu {
                continue;
            }
            if t.soft > now {
                break;
            }
            self.expire_timer(id);
        }
    }

    /// hrtimer expiry in hard-irq context: wakes the sleeper (WF_TTWU only).
    fn expire_timer(&mut self, id: u32) {
        let tm = self.timers[id as usize];
        self.timers[id as usize].active = false;
        let cpu = tm.cpu;
        // the slot is free again (a range timer also leaves its CPU's list now)
        if let Some(i) = self.rqs[cpu].range_timers.iter().position(|&r| r == id) {
            self.rqs[cpu].range_timers.remove(i);
        }
        if let Some(i) = self.rqs[cpu].hrtimers.iter().position(|&r| r == id) {
            self.rqs[cpu].hrtimers.swap_remove(i);
        }
        self.free_timers.push(id);
        let p = tm.task;
        let executing = self.executing;
        self.executing = Some(cpu);
        let idle = self.cpu_is_idle(cpu);
        if !idle {
            self.progress_segment(cpu);
        }
        // PREEMPT_RT: a sleeper's hrtimer is expired in hard-irq context only if the task was
        // RT or deadline when it armed it (__hrtimer_init_sleeper); the others are soft and
        // expire in this CPU's ktimers/N thread (SCHED_FIFO 1), which the interrupt wakes.
        let p = match self.rqs[cpu].ktimers {
            Some(kt) if !self.tasks[p.index()].policy_is_realtime() => {
                self.rqs[cpu].ktimers_pending.push(p);
                kt
            }
            _ => p,
        };
        let w = self.try_to_wake_up(p, 0, cpu, false);
        if w == Woken::LocalDeferred {
            self.local_wakeup_check(cpu, p, 0);
        }
        self.stats.timer_irqs += 1;
        if !idle {
            // the handler interrupts the running task: its cost, with the wakeup's, is
            // charged to it (on an idle CPU both were paid before the expiry, see on_timer)
            let mut c = self.cost(cpu, |c| c.c_hrtimer_irq.0);
            if w != Woken::No {
                c += self.take_select_idle_cost(cpu);
                c += self.cost(cpu, |c| c.c_ttwu.0);
            }
            self.push_irq(cpu, c);
        }
        self.executing = executing;
        if executing != Some(cpu) {
            self.cpu_continue_from_outside(cpu);
        }
    }

    /// A SCHED_DEADLINE `dl_timer` expiry (hard hrtimer, no slack): the handler
    /// (deadline.rs) runs in the timer interrupt on the entity's CPU, whose cost is charged to
    /// the interrupted task. Deviation: on an idle CPU the handler runs at the expiry itself
    /// (no idle-exit latency before it).
    /// `inactive`: the entity's `inactive_timer` (0-lag) rather than its `dl_timer`.
    pub(crate) fn on_dl_timer(&mut self, ent: crate::deadline::DlEnt, inactive: bool) {
        let due = if inactive {
            self.inactive_timer_due(ent)
        } else {
            self.dl_timer_due(ent)
        };
        if !due {
            return;
        }
        let cpu = self.dl_entity_cpu(ent);
        let executing = self.executing;
        self.executing = Some(cpu);
        let idle = self.cpu_is_idle(cpu);
        if !idle {
            self.progress_segment(cpu);
        }
        if inactive {
            self.inactive_timer_expired(ent);
        } else {
            self.dl_timer_expired(ent);
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
        if !list.is_empty() {
            // sched_ttwu_pending(): rq_lock + update_rq_clock, then activate each wakee
            self.update_rq_clock(cpu);
        }
        for (p, wf) in list {
            // only WF_MIGRATED survives the wake list (smp.md §1.5.2)
            self.tasks[p.index()].on_rq = OnRq::No;
            self.ttwu_do_activate(cpu, p, wf & WF_MIGRATED, true, false);
        }
        self.rqs[cpu].ttwu_pending = false;
        self.update_idle_masks(cpu);
        self.on_ipi_balance(cpu);
        if !idle {
            let c = self.cost(cpu, |c| c.c_irq.0);
            self.push_irq(cpu, c);
        }
        self.cpu_continue(cpu);
    }

    /// The RT bandwidth period hrtimer (`def_rt_bandwidth`, rt.rs) expires on its CPU in
    /// hard-irq context; its handler's cost is charged to the interrupted task.
    /// Deviation: on an idle CPU neither the idle exit latency nor the handler is charged.
    pub(crate) fn on_rt_period_timer(&mut self, gen: u32) {
        let Some(cpu) = self.rt_period_timer_cpu(gen) else {
            return;
        };
        self.executing = Some(cpu);
        let idle = self.cpu_is_idle(cpu);
        if !idle {
            self.progress_segment(cpu);
        }
        self.sched_rt_period_timer();
        if !idle {
            let c = self.cost(cpu, |c| c.c_hrtimer_irq.0);
            self.push_irq(cpu, c);
        }
        self.cpu_continue(cpu);
    }

    /// A task group's CFS bandwidth period hrtimer (fair_bandwidth.rs; a hard hrtimer pinned
    /// to the CPU that armed it): refill, distribute, unthrottle. Its handler's cost is
    /// charged to the interrupted task.
    /// Deviation: on an idle CPU neither the idle exit latency nor the handler is charged.
    pub(crate) fn on_cfs_period_timer(&mut self, tg: u32, gen: u32) {
        let Some(cpu) = self.cfs_period_timer_cpu(tg, gen) else {
            return;
        };
        self.executing = Some(cpu);
        let idle = self.cpu_is_idle(cpu);
        if !idle {
            self.progress_segment(cpu);
        }
        let list = self.sched_cfs_period_timer(TgId(tg));
        self.unthrottle_distributed(list);
        if !idle {
            let c = self.cost(cpu, |c| c.c_hrtimer_irq.0);
            self.push_irq(cpu, c);
        }
        self.cpu_continue(cpu);
    }

    /// A task group's CFS bandwidth slack hrtimer: distribute runtime given back by idle
    /// cfs_rqs. As `on_cfs_period_timer`.
    pub(crate) fn on_cfs_slack_timer(&mut self, tg: u32, gen: u32) {
        let Some(cpu) = self.cfs_slack_timer_cpu(tg, gen) else {
            return;
        };
        self.executing = Some(cpu);
        let idle = self.cpu_is_idle(cpu);
        if !idle {
            self.progress_segment(cpu);
        }
        let list = self.do_sched_cfs_slack_timer(TgId(tg));
        self.unthrottle_distributed(list);
        if !idle {
            let c = self.cost(cpu, |c| c.c_hrtimer_irq.0);
            self.push_irq(cpu, c);
        }
        self.cpu_continue(cpu);
    }

    /// The root domain's RT push irq_work on `cpu` (RT_PUSH_IPI, rt.rs), delivered as an IPI:
    /// the handler (`c_irq`) is charged to the interrupted task.
    pub(crate) fn on_rt_push_work(&mut self, cpu: usize) {
        self.executing = Some(cpu);
        let idle = self.cpu_is_idle(cpu);
        if !idle {
            self.progress_segment(cpu);
        }
        self.rto_push_irq_work_func(cpu);
        if !idle {
            let c = self.cost(cpu, |c| c.c_irq.0);
            self.push_irq(cpu, c);
        }
        self.cpu_continue(cpu);
    }

    /// kernel: core.c wake_up_process() from interrupt context on the task's CPU (used by tests
    /// and scenarios to wake a task from outside). Returns whether it was sleeping. The
    /// interrupt's exit is a preemption point, as for an IPI: a wakeup that preempts the
    /// running task switches at once.
    pub fn wake_up_process(&mut self, p: TaskId) -> bool {
        let cpu = self.tasks[p.index()].cpu;
        let saved = self.executing;
        self.executing = Some(cpu);
        let idle = self.cpu_is_idle(cpu);
        if !idle {
            self.progress_segment(cpu);
            let c = self.cost(cpu, |c| c.c_irq.0);
            self.push_irq(cpu, c);
        }
        let w = self.try_to_wake_up(p, 0, cpu, false);
        if w == Woken::LocalDeferred {
            self.local_wakeup_check(cpu, p, 0);
        }
        self.cpu_continue(cpu);
        self.executing = saved;
        w != Woken::No
    }

    /// The tick interrupt (kernel: tick-sched.c tick_sched_timer() → update_process_times()):
    /// the hrtimers whose slack window has opened expire, then core.c sched_tick() runs; the
    /// handler's cost is charged to the interrupted task.
    /// kernel: core.c hrtick() — the hrtick timer's handler: the running task's class ticks
    /// with `queued = 1` (only the CFS class arms it; fair_cfs.rs).
    pub(crate) fn on_hrtick(&mut self, cpu: usize, gen: u32) {
        if gen != self.rqs[cpu].hrtick_gen || !self.rqs[cpu].hrtick_armed {
            return;
        }
        self.rqs[cpu].hrtick_armed = false;
        let curr = self.rqs[cpu].curr;
        let Some(pol) = self.fair_policy else {
            return;
        };
        if self.tasks[curr.index()].is_idle_task
            || self.tasks[curr.index()].class != SchedClass::Fair
        {
            return;
        }
        self.executing = Some(cpu);
        self.progress_segment(cpu);
        self.update_rq_clock(cpu);
        (pol.hrtick)(self, cpu);
        let c = self.cost(cpu, |c| c.c_irq.0);
        self.push_irq(cpu, c);
        self.cpu_continue(cpu);
    }

    pub(crate) fn on_tick(&mut self, cpu: usize, gen: u32) {
        if gen != self.rqs[cpu].tick_gen {
            return; // stopped at idle entry
        }
        self.rqs[cpu].tick_armed = false;
        let curr = self.rqs[cpu].curr;
        if self.tasks[curr.index()].is_idle_task {
            return;
        }
        self.executing = Some(cpu);
        self.progress_segment(cpu);
        self.update_rq_clock(cpu);
        // the tick is a timer interrupt: sleepers whose slack window has opened expire now
        self.expire_range_timers(cpu);
        self.sched_tick(cpu);
        let c_tick = self.cost(cpu, |c| c.c_tick.0);
        self.push_irq(cpu, c_tick);
        self.ensure_tick(cpu);
        self.cpu_continue(cpu);
    }

    /// kernel: exit.c do_exit() as far as the scheduler sees it. The waiting parent of a
    /// process is woken by exit_notify() → do_notify_parent() → __wake_up_parent(), a
    /// `__wake_up_sync_key()`: WF_SYNC. A thread (`pthread_join()`) is not reaped by a wait:
    /// its joiner sleeps on the thread's `clear_child_tid` futex, which mm_release() wakes
    /// with FUTEX_WAKE (`wake_up_q()` → `wake_up_process()`): no wake flags. A parent asleep
    /// in `pselect()` (`Op::Pselect`) is not on the wait queue `__wake_up_parent()` wakes: the
    /// SIGCHLD that do_notify_parent() sends wakes it through signal_wake_up() →
    /// wake_up_state(TASK_INTERRUPTIBLE): no wake flags.
    pub(crate) fn do_exit(&mut self, cpu: usize, t: TaskId) {
        self.tasks[t.index()].state = TaskState::Dead;
        self.trace_exit(t, cpu);
        self.nr_live -= 1;
        if self.nr_live == 0 {
            self.all_exited_at = Some(self.now);
        }
        if let Some(p) = self.tasks[t.index()].parent {
            self.tasks[p.index()].zombies.push_back(t);
            if self.tasks[p.index()].waiting_child {
                self.tasks[p.index()].waiting_child = false;
                let task = &self.tasks[t.index()];
                let wf = if task.tgid != task.pid { 0 } else { WF_SYNC };
                let w = self.try_to_wake_up(p, wf, cpu, true);
                self.after_wake_from_task(cpu, p, wf, w);
            } else if self.tasks[p.index()].sigchld_wait && {
                let task = &self.tasks[t.index()];
                task.tgid == task.pid
            } {
                self.tasks[p.index()].sigchld_wait = false;
                let w = self.try_to_wake_up(p, 0, cpu, true);
                self.after_wake_from_task(cpu, p, 0, w);
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! The kernel objects of workloads.md §1.2–§1.5 and §1.8 driven by small scripted tasks on
    //! ideal machines: every cost is zero unless a test sets it, jitter is off.
    use super::*;
    use crate::ipc::MutexId;
    use crate::presets::{KernelConfig, PreemptModel};
    use crate::sim::MachineDesc;
    use crate::syscalls::{PollFd, Program, Spawn, TaskAttrs};
    use schedlab_engine::Nanos;
    use schedlab_platform::cpumask::CpuMask;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// (what, when) entries logged by test programs (shared with rt.rs's tests).
    pub(crate) type Log = Rc<RefCell<Vec<(String, u64)>>>;

    /// A task program given as a closure over (step number, context, last result); `None`
    /// exits. Shared with rt.rs's tests.
    pub(crate) struct Script(
        u32,
        Box<dyn FnMut(u32, &mut Ctx<'_>, SysResult) -> Option<Op>>,
    );

    impl Program for Script {
        fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
            let i = self.0;
            self.0 += 1;
            (self.1)(i, cx, last).unwrap_or(Op::Exit)
        }
    }

    pub(crate) fn script(
        f: impl FnMut(u32, &mut Ctx<'_>, SysResult) -> Option<Op> + 'static,
    ) -> Box<Script> {
        Box::new(Script(0, Box::new(f)))
    }

    fn kernel(ncpus: usize, set: impl Fn(&mut schedlab_platform::cost::CostModel)) -> Kernel {
        kernel_on("v6.18", ncpus, set)
    }

    /// [`kernel`] on another kernel version.
    fn kernel_on(
        version: &str,
        ncpus: usize,
        set: impl Fn(&mut schedlab_platform::cost::CostModel),
    ) -> Kernel {
        let cfg = KernelConfig::parse(&format!("{version} NO_SIM_JITTER")).unwrap();
        let mut m = MachineDesc::ideal(ncpus, 1000, PreemptModel::Full);
        for c in &mut m.costs {
            set(c);
        }
        let mut k = Kernel::new(cfg, m, 1).unwrap();
        k.strict = true;
        k.check_invariants = true;
        k
    }

    fn start(k: &mut Kernel, name: &str, cpu: usize, prog: Box<dyn Program>) -> TaskId {
        let attrs = TaskAttrs {
            comm: Some(name.to_string()),
            cpus: Some(CpuMask::single(cpu)),
            ..Default::default()
        };
        let t = k.create_task(prog, &attrs, None, false);
        k.start_task(t);
        t
    }

    /// SMT throughput (`[topology] smt_throughput`, here 0.5 so that the speed 512/1024 is
    /// exact): CPUs 0 and 1 are siblings of one core. A runs 10 ms of work on CPU 0 from
    /// t = 0; B sleeps 2 ms (woken at 2.05 ms: a fair sleeper's 50 µs timer slack,
    /// workloads.md §1.6), then runs 3 ms of work on CPU 1. Hand calculation: B shares the
    /// core for its whole run, 3 / 0.5 = 6 ms, so it ends at 2.05 + 6 = 8.05 ms; A did 2.05 ms
    /// alone, 6 × 0.5 = 3 ms beside B, and its remaining 4.95 ms alone again: it ends at
    /// 8.05 + 4.95 = 13 ms. Without the factor they end at 5.05 and 10 ms.
    #[test]
    fn a_busy_smt_sibling_slows_the_other_thread() {
        for (ppm, b_end, a_end) in [
            (500_000, 8_050_000, 13_000_000),
            (1_000_000, 5_050_000, 10_000_000),
        ] {
            let cfg = KernelConfig::parse("v6.18 NO_SIM_JITTER").unwrap();
            let mut m = MachineDesc::ideal(2, 1000, PreemptModel::Full);
            m.smt_throughput_ppm = ppm;
            m.smt_mask = vec![CpuMask::first_n(2), CpuMask::first_n(2)];
            let mut k = Kernel::new(cfg, m, 1).unwrap();
            k.strict = true;
            k.check_invariants = true;
            let l: Log = Rc::default();
            let la = l.clone();
            start(
                &mut k,
                "A",
                0,
                script(move |i, cx, _| match i {
                    0 => Some(Op::Run(10_000_000)),
                    _ => {
                        log(&la, "A", cx.now());
                        None
                    }
                }),
            );
            let lb = l.clone();
            start(
                &mut k,
                "B",
                1,
                script(move |i, cx, _| match i {
                    0 => Some(Op::Sleep(2_000_000)),
                    1 => Some(Op::Run(3_000_000)),
                    _ => {
                        log(&lb, "B", cx.now());
                        None
                    }
                }),
            );
            k.run_until(20_000_000);
            assert_eq!((at(&l, "B"), at(&l, "A")), (b_end, a_end), "ppm {ppm}");
        }
    }

    fn log(l: &Log, what: &str, at: u64) {
        l.borrow_mut().push((what.to_string(), at));
    }

    fn at(l: &Log, what: &str) -> u64 {
        l.borrow()
            .iter()
            .find(|(w, _)| w == what)
            .unwrap_or_else(|| panic!("no '{what}' in {:?}", l.borrow()))
            .1
    }

    /// Two processes of one allocation group unlink at once on two CPUs (c_unlink = 10 µs,
    /// every other cost zero): the first takes the AGI lock at 0 and commits at 10 µs; the
    /// second sleeps in down() at 0, is handed the lock at 10 µs and returns at 20 µs. A third
    /// process in another AG is not held up (returns at 10 µs).
    #[test]
    fn unlinks_in_one_allocation_group_serialise_on_the_agi_lock() {
        let mut k = kernel(3, |c| c.c_unlink = Nanos(10_000));
        let l: Log = Default::default();
        let mut ts = Vec::new();
        for (i, name) in ["a", "b", "c"].iter().enumerate() {
            let l2 = l.clone();
            let name = name.to_string();
            let t = start(
                &mut k,
                &name.clone(),
                i,
                script(move |step, cx, _| match step {
                    0 => Some(Op::Fs {
                        call: FsCall::Unlink,
                        file: 0,
                        bytes: 0,
                        cpu_ns: 0,
                    }),
                    _ => {
                        log(&l2, &name, cx.now());
                        None
                    }
                }),
            );
            ts.push(t);
        }
        // a and b in AG 0, c in AG 1
        k.tasks[ts[0].index()].tgid = 1000;
        k.tasks[ts[1].index()].tgid = 1004;
        k.tasks[ts[2].index()].tgid = 1001;
        k.run_until(1_000_000);
        let (a, b, c) = (at(&l, "a"), at(&l, "b"), at(&l, "c"));
        assert_eq!((a.min(b), a.max(b), c), (10_000, 20_000, 10_000));
        assert_eq!(k.io.as_ref().unwrap().xfs.agi[0].contended, 1);
    }

    /// Inodegc (xfs_icache.c `xfs_inodegc_queue`): one task unlinks 300 files back to back
    /// on CPU 0 (c_unlink = 1 µs, everything else free, HZ 1000). Each unlink pushes the
    /// delayed work back to one jiffy later, so it never runs while they come every 1 µs;
    /// the 258th finds 257 > 256 queued and flushes: its syscall ends at 258 µs, the
    /// kworker inactivates the 258 inodes (258 × 1 µs) and wakes it at 516 µs. The other 42
    /// unlinks end at 558 µs; one jiffy later (1 558 µs) the timer queues the work, which
    /// inactivates them by 1 600 µs.
    #[test]
    fn unlinks_queue_inodegc_work_and_flush_past_the_backlog() {
        let mut k = kernel(1, |c| c.c_unlink = Nanos(1_000));
        let l: Log = Default::default();
        let l2 = l.clone();
        start(
            &mut k,
            "rm",
            0,
            script(move |i, cx, _| {
                if i == 258 {
                    log(&l2, "flushed", cx.now());
                }
                if i < 300 {
                    Some(Op::Fs {
                        call: FsCall::Unlink,
                        file: i,
                        bytes: 0,
                        cpu_ns: 0,
                    })
                } else if i == 300 {
                    log(&l2, "done", cx.now());
                    // stay alive: the run ends when the workload's tasks have exited
                    Some(Op::Sleep(5_000_000))
                } else {
                    None
                }
            }),
        );
        k.run_until(1_000_000);
        assert_eq!(at(&l, "flushed"), 516_000);
        assert_eq!(at(&l, "done"), 558_000);
        assert_eq!(k.io.as_ref().unwrap().xfs.gc[0].runs_done, 1);
        assert_eq!(k.io.as_ref().unwrap().xfs.gc[0].items, 42);
        k.run_until(2_000_000);
        let g = &k.io.as_ref().unwrap().xfs.gc[0];
        assert_eq!((g.runs_done, g.items), (2, 0));
        let w = k.io.as_ref().unwrap().wq.pools[0].worker.unwrap();
        assert_eq!(
            k.se[k.tasks[w.index()].se.index()].sum_exec_runtime,
            300_000
        );
    }

    /// The periodic writeback (xfs.rs, workloads.md §1.9): a 4 KiB write at t = 0 arms the
    /// flusher's delayed work (5 s); the wakeups at 5, 10, …, 25 s find nothing 30 s old and
    /// re-arm; the one at 30 s writes the page back (one write request) from the unbound
    /// pool's kworker, and its end-io work on the bound pool logs the size update; nothing is
    /// dirty afterwards, so the work is not armed again. A fsync'ed file is not written twice.
    #[test]
    fn the_flusher_writes_back_what_is_30_s_old() {
        let mut k = kernel(1, |c| c.c_submit_per_page = Nanos(1_000));
        k.machine.storage = schedlab_platform::StorageDevice::from_table("nvme").unwrap();
        let fs = |call, file, bytes| Op::Fs {
            call,
            file,
            bytes,
            cpu_ns: 0,
        };
        start(
            &mut k,
            "writer",
            0,
            script(move |i, _, _| match i {
                0 => Some(fs(FsCall::Write, 1, 4096)),
                1 => Some(fs(FsCall::Write, 2, 4096)),
                2 => Some(fs(FsCall::Fsync, 2, 0)),
                3 => Some(Op::Sleep(60_000_000_000)),
                _ => None,
            }),
        );
        let sec = 1_000_000_000;
        k.run_until(29 * sec);
        // the fsync of file 2 wrote it (one request) and forced the log (one FUA write)
        let io = k.io.as_ref().unwrap();
        assert_eq!(io.dev.submitted, 2);
        assert_eq!(io.xfs.inodes[&(1000, 1)].dirty, 4096);
        assert!(io.xfs.wb_armed);
        k.run_until(31 * sec);
        let io = k.io.as_ref().unwrap();
        assert_eq!(io.dev.submitted, 3);
        assert_eq!(io.dev.completed, 3);
        assert_eq!(io.xfs.inodes[&(1000, 1)].dirty, 0);
        assert!(!io.xfs.wb_armed);
        // items run: the unbound kworker's writeback at 5, 10, 15, 20, 25 and 30 s (6) and
        // CIL push (1), the bound kworker's two end-io items (fsync, flusher), the
        // high-priority kworker's log end-io (1)
        let unbound = io
            .wq
            .pools
            .iter()
            .find(|p| p.kind == PoolKind::Unbound)
            .unwrap();
        let w = unbound.worker.unwrap();
        assert_eq!(k.tasks[w.index()].comm, "kworker/u1:1");
        assert_eq!(io.wq.items_run, 6 + 1 + 2 + 1);
        k.run_until(70 * sec);
        assert_eq!(k.io.as_ref().unwrap().dev.submitted, 3);
    }

    /// PREEMPT_RT (rt-dl.md §1.8): a fair task's nanosleep timer is soft, so ktimers/0
    /// (SCHED_FIFO 1) wakes it; a FIFO task's is hard and the interrupt wakes it directly.
    /// Zero costs and no slack: three 1 ms sleeps of the fair task end at 1, 2 and 3 ms and
    /// each needs one ktimers wakeup; the FIFO task's three sleeps need none.
    #[test]
    fn preempt_rt_soft_hrtimers_expire_in_ktimers() {
        for (policy, ktimers_wakeups) in [(Policy::Normal, 3), (Policy::Fifo, 0)] {
            let cfg = KernelConfig::parse("v6.18 NO_SIM_JITTER").unwrap();
            let m = MachineDesc::ideal(1, 1000, PreemptModel::Rt);
            let mut k = Kernel::new(cfg, m, 1).unwrap();
            k.strict = true;
            k.check_invariants = true;
            let kt = k.rqs[0].ktimers.expect("ktimers/0 on PREEMPT_RT");
            assert_eq!(k.tasks[kt.index()].comm, "ktimers/0");
            assert_eq!(
                (k.tasks[kt.index()].policy, k.tasks[kt.index()].prio()),
                (Policy::Fifo, 98)
            );
            let l: Log = Default::default();
            let l2 = l.clone();
            let attrs = TaskAttrs {
                comm: Some("sleeper".into()),
                policy: Some(policy),
                rt_priority: (policy == Policy::Fifo).then_some(10),
                ..Default::default()
            };
            let t = k.create_task(
                script(move |i, cx, _| {
                    log(&l2, &format!("run{i}"), cx.now());
                    (i < 3).then_some(Op::SleepUntil((i as u64 + 1) * 1_000_000))
                }),
                &attrs,
                None,
                false,
            );
            k.tasks[t.index()].timer_slack_ns = 0;
            k.start_task(t);
            k.run_until(10_000_000);
            assert_eq!(
                (at(&l, "run1"), at(&l, "run2"), at(&l, "run3")),
                (1_000_000, 2_000_000, 3_000_000),
                "{policy:?}"
            );
            assert_eq!(
                k.tasks[kt.index()].stats.nr_wakeups,
                ktimers_wakeups,
                "{policy:?}"
            );
        }
        // and no ktimers thread without PREEMPT_RT
        let k = kernel(1, |_| {});
        assert!(k.rqs[0].ktimers.is_none());
    }

    /// nohz_full (rt-dl.md §1.10): 100 ms at HZ 1000 on CPU 1 of 2, CPU 0 idle (its tick
    /// stops at idle entry, so every tick counted is CPU 1's). One fair hog: its tick runs at
    /// every ms (99-100 ticks) without nohz_full and not at all with `nohz_full=1`; two fair
    /// hogs need the tick for their slices, nohz_full or not. A FIFO hog alone may stop it.
    #[test]
    fn nohz_full_stops_the_tick_of_a_single_task() {
        let hog = || script(|_, _, _| Some(Op::Run(1_000_000_000)));
        for (nohz, hogs, policy, lo, hi) in [
            (false, 1, Policy::Normal, 99, 100),
            (true, 1, Policy::Normal, 0, 0),
            (true, 2, Policy::Normal, 99, 100),
            (true, 1, Policy::Fifo, 0, 0),
        ] {
            let cfg = KernelConfig::parse("v6.18 NO_SIM_JITTER").unwrap();
            let mut m = MachineDesc::ideal(2, 1000, PreemptModel::Full);
            if nohz {
                m.nohz_full = CpuMask::single(1);
            }
            let mut k = Kernel::new(cfg, m, 1).unwrap();
            k.strict = true;
            k.check_invariants = true;
            for i in 0..hogs {
                let attrs = TaskAttrs {
                    comm: Some(format!("hog{i}")),
                    policy: Some(policy),
                    rt_priority: (policy == Policy::Fifo).then_some(10),
                    cpus: Some(CpuMask::single(1)),
                    ..Default::default()
                };
                let t = k.create_task(hog(), &attrs, None, false);
                k.start_task(t);
            }
            k.run_until(100_000_000);
            let ticks = k.stats.ticks;
            assert!(
                (lo..=hi).contains(&ticks),
                "nohz {nohz} hogs {hogs} {policy:?}: {ticks} ticks"
            );
        }
    }

    /// PELT on a small CPU (rb5 CPU 0, capacity 284, fixed frequency; issue #13 item 4 and
    /// smp.md §5.1): the PELT clock runs at 284/1024 while a task runs and is synced to the
    /// task clock while the CPU idles. A task running 2 ms of every 10 ms therefore runs
    /// 2 × 284/1024 = 0.555 ms of PELT time per 10 ms period, util_avg ≈ 1024 × 0.0555 ≈ 57
    /// (the old whole-clock scaling gave ≈ 1024 × 0.2 ≈ 205). An always-running task leaves no
    /// idle time: its util_avg still reaches 1024 (later, by 1024/284), and the CPU's
    /// utilisation is clamped to its capacity by `cpu_util()`.
    #[test]
    fn pelt_time_runs_at_capacity_on_a_small_cpu() {
        let p = schedlab_platform::Platform::builtin("rb5").unwrap();
        let mut m = MachineDesc::from_platform(&p);
        assert_eq!(m.capacity_orig[0], 284);
        m.costs = vec![schedlab_platform::cost::CostModel::zero(); m.ncpus];
        m.idle_exit_ns = vec![0; m.ncpus];
        let util = |periodic: bool| {
            let cfg = KernelConfig::parse("v6.18 NO_SIM_JITTER").unwrap();
            let mut k = Kernel::new(cfg, m.clone(), 1).unwrap();
            k.strict = true;
            k.check_invariants = true;
            let t = start(
                &mut k,
                "t",
                0,
                script(move |i, cx, _| {
                    Some(if !periodic {
                        Op::Run(10_000_000_000)
                    } else if i % 2 == 0 {
                        // 2 ms of work at the reference core is 2 × 1024/284 ms of wall time
                        // here; RunWall keeps the duty cycle at 2 of 10 ms of wall time
                        Op::RunWall(2_000_000)
                    } else {
                        Op::SleepUntil((cx.now() / 10_000_000 + 1) * 10_000_000)
                    })
                }),
            );
            k.tasks[t.index()].timer_slack_ns = 0;
            k.run_until(2_000_000_000);
            let se = k.tasks[t.index()].se;
            k.se[se.index()].avg.util_avg
        };
        let u = util(true);
        assert!(
            (45..=70).contains(&u),
            "periodic 2/10 ms on capacity 284: util_avg {u}"
        );
        let u = util(false);
        assert!(u >= 1000, "always running: util_avg {u}");
    }

    #[test]
    fn unix_sender_blocks_at_the_send_buffer() {
        // §1.3: truesize 768 + 100 = 868; floor(212992 / 868) = 245 messages fit, the 246th
        // send sleeps (nobody reads).
        let mut k = kernel(1, |_| {});
        let s = k.ipc.new_unix_stream();
        let sent = Rc::new(RefCell::new(0u32));
        let n = sent.clone();
        let tx = start(
            &mut k,
            "tx",
            0,
            script(move |i, _, last| {
                if i > 0 {
                    assert_eq!(last, SysResult::Bytes(100));
                    *n.borrow_mut() += 1;
                }
                Some(Op::SockSend {
                    sock: s,
                    bytes: 100,
                })
            }),
        );
        k.run_until(1_000_000);
        assert_eq!(*sent.borrow(), 245);
        assert_eq!(k.ipc.socks[s.index()].queue.len(), 245);
        assert_eq!(k.tasks[tx.index()].state, TaskState::Interruptible);
        assert_eq!(k.ipc.socks[s.index()].writers, [tx]);
    }

    #[test]
    fn unix_receiver_is_woken_on_every_send() {
        // §1.3: sock_def_readable wakes a sleeping receiver (WF_SYNC) on every send; the
        // receiver drains each message before the next one (10 µs apart): 3 wakeups.
        let mut k = kernel(2, |_| {});
        let s = k.ipc.new_unix_stream();
        let rx = start(
            &mut k,
            "rx",
            1,
            script(move |_, _, _| {
                Some(Op::SockRecv {
                    sock: s,
                    bytes: 100,
                })
            }),
        );
        start(
            &mut k,
            "tx",
            0,
            script(move |i, _, _| match i {
                0 | 2 | 4 => Some(Op::Run(10_000)),
                1 | 3 | 5 => Some(Op::SockSend {
                    sock: s,
                    bytes: 100,
                }),
                _ => None,
            }),
        );
        k.run_until(1_000_000);
        let st = &k.tasks[rx.index()].stats;
        assert_eq!((st.nr_wakeups, st.nr_wakeups_sync), (3, 3));
        assert!(k.ipc.socks[s.index()].is_empty());
    }

    #[test]
    fn unix_sender_is_woken_at_a_quarter_of_the_budget() {
        // §1.3: the blocked sender (245 in flight) is woken when the allocation has dropped to
        // sndbuf / 4 = 53248 bytes, i.e. 61 skbs (52948): after 245 − 61 = 184 reads.
        let mut k = kernel(2, |_| {});
        let s = k.ipc.new_unix_stream();
        let reads = Rc::new(RefCell::new(0u32));
        let seen = Rc::new(RefCell::new(None::<u32>));
        let (r1, r2, seen1) = (reads.clone(), reads.clone(), seen.clone());
        let tx = start(
            &mut k,
            "tx",
            0,
            script(move |i, _, _| {
                if i == 246 {
                    // the 246th send has just returned: it slept until now
                    *seen1.borrow_mut() = Some(*r1.borrow());
                    return None;
                }
                Some(Op::SockSend {
                    sock: s,
                    bytes: 100,
                })
            }),
        );
        start(
            &mut k,
            "rx",
            1,
            script(move |i, _, last| {
                if i == 0 {
                    return Some(Op::Sleep(1_000_000)); // let the sender fill the budget
                }
                if last == SysResult::Bytes(100) {
                    *r2.borrow_mut() += 1;
                }
                if i % 2 == 1 {
                    Some(Op::SockRecv {
                        sock: s,
                        bytes: 100,
                    })
                } else {
                    Some(Op::Run(1_000))
                }
            }),
        );
        k.run_until(5_000_000);
        assert_eq!(*seen.borrow(), Some(184));
        let st = &k.tasks[tx.index()].stats;
        assert_eq!((st.nr_wakeups, st.nr_wakeups_sync), (1, 1));
    }

    #[test]
    fn poll_wakes_every_poller_with_the_source_sync_flag() {
        // §1.5: one 1-byte pipe write wakes all pollers (non-exclusive), each with WF_SYNC.
        let mut k = kernel(4, |_| {});
        let p = k.ipc.new_pipe(false, 16, 4096);
        let l: Log = Rc::default();
        let mut pollers = Vec::new();
        for cpu in 1..4 {
            let l = l.clone();
            pollers.push(start(
                &mut k,
                &format!("poller{cpu}"),
                cpu,
                script(move |i, cx, last| match i {
                    0 => Some(Op::Poll {
                        fd: PollFd::Pipe(p),
                    }),
                    _ => {
                        assert_eq!(last, SysResult::Ready(1));
                        log(&l, &format!("woke{cpu}"), cx.now());
                        None
                    }
                }),
            ));
        }
        start(
            &mut k,
            "waker",
            0,
            script(move |i, _, _| match i {
                0 => Some(Op::Sleep(100_000)),
                1 => Some(Op::PipeWrite { pipe: p, bytes: 1 }),
                _ => None,
            }),
        );
        k.run_until(1_000_000);
        // the write happens when the waker's 100 µs sleep ends: at 150 µs (50 µs timer slack,
        // no other timer interrupt on its idle CPU)
        for cpu in 1..4 {
            assert_eq!(at(&l, &format!("woke{cpu}")), 150_000);
        }
        for t in pollers {
            let st = &k.tasks[t.index()].stats;
            assert_eq!((st.nr_wakeups, st.nr_wakeups_sync), (1, 1));
        }
        assert!(k.ipc.pipes[p.index()].poll_usage);
    }

    #[test]
    fn pipe_wakes_the_next_writer() {
        // §1.2 step 4: a writer that slept and finds room left after its write wakes one more
        // writer. The ring holds 16 full 4 KiB pages; two 100-byte writers sleep; one 8 KiB
        // read frees two slots of a full ring and wakes the first writer (one wake per read),
        // whose write leaves a slot free, so it wakes the second (which would otherwise sleep
        // for ever).
        let mut k = kernel(2, |_| {});
        let p = k.ipc.new_pipe(false, 16, 4096);
        for _ in 0..16 {
            assert!(k.ipc.pipes[p.index()].try_write(4096));
        }
        let l: Log = Rc::default();
        let mut writers = Vec::new();
        for n in 0..2 {
            let l = l.clone();
            writers.push(start(
                &mut k,
                &format!("w{n}"),
                n,
                script(move |i, cx, _| match i {
                    0 => Some(Op::PipeWrite {
                        pipe: p,
                        bytes: 100,
                    }),
                    _ => {
                        log(&l, &format!("w{n}"), cx.now());
                        None
                    }
                }),
            ));
        }
        start(
            &mut k,
            "r",
            0,
            script(move |i, _, _| match i {
                0 => Some(Op::Sleep(100_000)),
                1 => Some(Op::PipeRead {
                    pipe: p,
                    bytes: 8192,
                }),
                _ => None,
            }),
        );
        k.run_until(1_000_000);
        // the read happens at 150 µs (100 µs sleep + 50 µs timer slack)
        assert_eq!(at(&l, "w0"), 150_000);
        assert_eq!(at(&l, "w1"), 150_000);
        assert_eq!(k.ipc.pipes[p.index()].bytes_written, 16 * 4096 + 200);
    }

    /// Runs one pipe write after `delay` ns of user work, logging its start and end.
    fn writer(l: &Log, name: &str, p: PipeId, delay: u64) -> Box<Script> {
        let (l, name) = (l.clone(), name.to_string());
        script(move |i, cx, _| match i {
            0 => Some(Op::Run(delay)),
            1 => {
                log(&l, &format!("{name}+"), cx.now());
                Some(Op::PipeWrite {
                    pipe: p,
                    bytes: 100,
                })
            }
            _ => {
                log(&l, &format!("{name}-"), cx.now());
                None
            }
        })
    }

    /// Sleeps 50 µs, then runs 1 ms.
    fn sleeper_then_hog() -> Box<Script> {
        script(|i, _, _| match i {
            0 => Some(Op::Sleep(50_000)),
            1 => Some(Op::Run(1_000_000)),
            _ => None,
        })
    }

    fn pipe_mutex(k: &Kernel, p: PipeId) -> &crate::ipc::KMutex {
        let m: MutexId = k.ipc.pipes[p.index()].mutex;
        &k.ipc.mutexes[m.index()]
    }

    #[test]
    fn pipe_mutex_contender_spins_while_the_owner_runs() {
        // §1.8: c_pipe_write = 10 µs with c_syscall = 0, so the whole write holds pipe->mutex.
        // A (CPU 0) locks at 0 and unlocks at 10 µs; B (CPU 1) arrives at 1 µs, spins on the
        // running owner for 9 µs, takes the lock at 10 µs and finishes at 20 µs. B's system
        // time is 9 (spin) + 10 (write) = 19 µs; nobody sleeps.
        let mut k = kernel(2, |c| c.c_pipe_write = Nanos(10_000));
        let p = k.ipc.new_pipe(false, 16, 4096);
        let l: Log = Rc::default();
        let a = start(&mut k, "A", 0, writer(&l, "A", p, 0));
        let b = start(&mut k, "B", 1, writer(&l, "B", p, 1_000));
        k.run_until(1_000_000);
        assert_eq!(at(&l, "A-"), 10_000);
        assert_eq!(at(&l, "B-"), 20_000);
        assert_eq!(k.tasks[a.index()].stats.sys_ns, 10_000);
        assert_eq!(k.tasks[b.index()].stats.sys_ns, 19_000);
        assert_eq!(k.tasks[b.index()].stats.nr_wakeups, 0);
        let m = pipe_mutex(&k, p);
        assert_eq!((m.acquisitions, m.contended, m.sleeps), (2, 1, 0));
        assert_eq!(k.ipc.pipes[p.index()].bytes_written, 200);
        // with the model off there is no mutual exclusion: B ends 10 µs after it started
        let mut k = kernel(2, |c| c.c_pipe_write = Nanos(10_000));
        k.cfg.sim[SimFeature::SIM_PIPE_MUTEX as usize] = false;
        let p = k.ipc.new_pipe(false, 16, 4096);
        let l: Log = Rc::default();
        // C runs first and sleeps at once (until 100 µs: 50 µs plus the 50 µs timer slack)
        start(&mut k, "C", 0, sleeper_then_hog());
        start(&mut k, "A", 0, writer(&l, "A", p, 0));
        start(&mut k, "B", 1, writer(&l, "B", p, 1_000));
        k.run_until(1_000_000);
        assert_eq!(at(&l, "B-"), 11_000);
    }

    #[test]
    fn pipe_mutex_split_keeps_the_uncontended_cost() {
        // c_syscall 100 of c_pipe_write 350: 100 ns unlocked entry, 250 ns under the mutex;
        // the write still takes 350 ns.
        let mut k = kernel(1, |c| {
            c.c_pipe_write = Nanos(350);
            c.c_syscall = Nanos(100);
        });
        let p = k.ipc.new_pipe(true, 16, 4096);
        let l: Log = Rc::default();
        let a = start(&mut k, "A", 0, writer(&l, "A", p, 0));
        k.run_until(1_000_000);
        assert_eq!(at(&l, "A-"), 350);
        assert_eq!(k.tasks[a.index()].stats.sys_ns, 350);
        assert_eq!(pipe_mutex(&k, p).owner, None);
    }

    /// One CPU with the Skylake-SP states of x86-2s-80 (POLL, C1 2/2, C1E 10/20, C6 133/600 µs).
    fn skx_kernel() -> Kernel {
        use schedlab_platform::platform::IdleState;
        let mut k = kernel(1, |_| {});
        let st = |name: &str, exit_us: u64, res_us: u64, polling: bool| IdleState {
            name: name.into(),
            exit_latency_ns: Nanos(exit_us * 1000),
            target_residency_ns: Nanos(res_us * 1000),
            entry_latency_ns: Nanos(0),
            polling,
        };
        k.machine.idle_states[0] = vec![
            st("POLL", 0, 0, true),
            st("C1", 2, 2, false),
            st("C1E", 10, 20, false),
            st("C6", 133, 600, false),
        ];
        k
    }

    /// Sleeps `d` ns `n` times, logging "wN" when it runs again after sleep N.
    fn sleeper(l: &Log, d: u64, n: u32) -> Box<Script> {
        let l = l.clone();
        script(move |i, cx, _| {
            if i > 0 {
                log(&l, &format!("w{i}"), cx.now());
            }
            (i < n).then_some(Op::Sleep(d))
        })
    }

    #[test]
    fn cpuidle_picks_the_deepest_state_the_next_timer_allows() {
        // smp.md §7.2, zero costs. A fair task sleeps 100 µs: its hrtimer's hard expiry is at
        // 100 + 50 (timer slack) = 150 µs, nothing else is armed and no idle time has been
        // seen yet, so the predicted idle time is 150 µs: C1E (residency 20 ≤ 150 < 600 of
        // C6). The interrupt waits for C1E's 10 µs exit: the task runs at 160 µs.
        let mut k = skx_kernel();
        let l: Log = Rc::default();
        start(&mut k, "S", 0, sleeper(&l, 100_000, 1));
        k.run_until(10_000_000);
        assert_eq!(at(&l, "w1"), 160_000);
        assert_eq!(k.stats.paths.idle_exit_ns, 10_000);
        // A 1 ms sleep (hard expiry 1.05 ms) predicts 1 050 µs: C6, 133 µs to come back.
        let mut k = skx_kernel();
        let l: Log = Rc::default();
        start(&mut k, "S", 0, sleeper(&l, 1_000_000, 1));
        k.run_until(10_000_000);
        assert_eq!(at(&l, "w1"), 1_050_000 + 133_000);
    }

    #[test]
    fn cpuidle_respects_the_cpu_latency_qos_limit() {
        // /dev/cpu_dma_latency = 0 (cyclictest's default): only state 0, POLL, fits; the 1 ms
        // sleep's timer fires at 1.05 ms with nothing to exit. A 10 µs limit allows C1E
        // (exit 10) but not C6: back at 1 050 + 10 µs.
        for (qos_us, back) in [(0, 1_050_000), (10, 1_060_000)] {
            let mut k = skx_kernel();
            k.cpu_latency_qos_add_request(qos_us * 1000);
            let l: Log = Rc::default();
            start(&mut k, "S", 0, sleeper(&l, 1_000_000, 1));
            k.run_until(10_000_000);
            assert_eq!(at(&l, "w1"), back, "qos {qos_us} us");
        }
    }

    #[test]
    fn cpuidle_learns_short_idle_periods() {
        // The median of the recorded idle durations caps the prediction. Two 1 ms sleeps: the
        // first idle period predicts 1 050 µs (C6) and lasts until the task runs at
        // 1 050 + 133 = 1 183 µs; the second predicts min(1 050, median{1 183}) = 1 050 µs,
        // C6 again: back at 1 183 + 1 183 = 2 366 µs. Both durations are recorded.
        let mut k = skx_kernel();
        let l: Log = Rc::default();
        start(&mut k, "S", 0, sleeper(&l, 1_000_000, 2));
        k.run_until(10_000_000);
        assert_eq!(at(&l, "w1"), 1_183_000);
        assert_eq!(at(&l, "w2"), 2_366_000);
        assert_eq!(k.rqs[0].idle_hist_n, 2);
        assert_eq!(k.rqs[0].idle_hist[..2], [1_183_000, 1_183_000]);
        // A history of 30 µs periods: a 1 ms sleep predicts min(1 050, 30) = 30 µs → C1E
        // (residency 20 ≤ 30): back at 1 050 + 10 µs.
        let mut k = skx_kernel();
        k.rqs[0].idle_hist = [30_000; crate::idle::IDLE_HIST];
        k.rqs[0].idle_hist_n = crate::idle::IDLE_HIST as u32;
        let l: Log = Rc::default();
        start(&mut k, "S", 0, sleeper(&l, 1_000_000, 1));
        k.run_until(10_000_000);
        assert_eq!(at(&l, "w1"), 1_060_000);
    }

    #[test]
    fn pipe_mutex_from_another_cpu_pulls_the_pipes_lines() {
        // c_pipe_write 350 ns, c_line_llc 50 ns. A writes on CPU 0 at 0 (first owner: nothing
        // to pull), ends at 350. A2 writes on CPU 0 at 1 µs: same CPU, ends at 1 350. B writes
        // on CPU 1 at 2 µs: the last owner ran on CPU 0, so B pulls PIPE_MUTEX_LINES = 5 lines
        // × 50 ns = 250 ns inside the critical section: ends at 2 000 + 350 + 250 = 2 600.
        let mut k = kernel(2, |c| {
            c.c_pipe_write = Nanos(350);
            c.c_line_llc = Some(Nanos(50));
        });
        let p = k.ipc.new_pipe(false, 16, 4096);
        let l: Log = Rc::default();
        start(&mut k, "A", 0, writer(&l, "A", p, 0));
        start(&mut k, "A2", 0, writer(&l, "A2", p, 1_000));
        let b = start(&mut k, "B", 1, writer(&l, "B", p, 2_000));
        k.run_until(1_000_000);
        assert_eq!(at(&l, "A-"), 350);
        assert_eq!(at(&l, "B-"), 2_600);
        assert_eq!(k.tasks[b.index()].stats.sys_ns, 600);
        let m = pipe_mutex(&k, p);
        assert_eq!((m.acquisitions, m.transfers), (3, 1));
    }

    #[test]
    fn pipe_mutex_spinner_sleeps_when_the_owner_is_preempted() {
        // §1.8: A (CPU 0) holds pipe->mutex for 10 ms of write; B (CPU 1) spins from 100 µs.
        // C wakes on CPU 0 at 100 µs and, once A's slice is used up, a tick preempts A inside
        // its critical section: B sees the owner off its CPU and sleeps (D state) until A's
        // unlock wakes it (WF_TTWU, not sync). So B spent part of its write asleep.
        let mut k = kernel(2, |c| c.c_pipe_write = Nanos(10_000_000));
        let p = k.ipc.new_pipe(false, 16, 4096);
        let l: Log = Rc::default();
        // C runs first and sleeps at once (until 100 µs: 50 µs plus the 50 µs timer slack)
        start(&mut k, "C", 0, sleeper_then_hog());
        start(&mut k, "A", 0, writer(&l, "A", p, 0));
        let b = start(&mut k, "B", 1, writer(&l, "B", p, 100_000));
        k.run_until(100_000_000);
        // B found the lock taken twice: when it started spinning, and when it retried after A
        // left the CPU (then it slept)
        let m = pipe_mutex(&k, p);
        assert_eq!((m.acquisitions, m.contended, m.sleeps), (2, 2, 1));
        let st = &k.tasks[b.index()].stats;
        assert_eq!((st.nr_wakeups, st.nr_wakeups_sync), (1, 0));
        // A's write ends after 10 ms of CPU plus C's 1 ms; B's write starts when A unlocks
        assert_eq!(at(&l, "A-"), 11_000_000);
        assert_eq!(at(&l, "B-"), 21_000_000);
        let b_write = at(&l, "B-") - at(&l, "B+");
        assert!(st.sys_ns > 10_000_000, "B spun before sleeping");
        assert!(
            st.sys_ns + 1_000_000 <= b_write,
            "B slept while C ran: sys {} of {b_write}",
            st.sys_ns
        );
    }

    #[test]
    fn pipe_mutex_is_handed_off_to_a_passed_over_waiter() {
        // §1.8 handoff: W sleeps while the owner A is preempted by C. When A unlocks, the
        // spinner S steals the lock before the woken W runs (segment ends precede IPIs at the
        // same instant). W fails its trylock as first waiter and sets the handoff flag, so S's
        // unlock hands the lock to W although another contender could take it.
        let mut k = kernel(3, |c| c.c_pipe_write = Nanos(4_000_000));
        let p = k.ipc.new_pipe(false, 16, 4096);
        let l: Log = Rc::default();
        // C runs first and sleeps at once (until 100 µs: 50 µs plus the 50 µs timer slack)
        start(&mut k, "C", 0, sleeper_then_hog());
        start(&mut k, "A", 0, writer(&l, "A", p, 0));
        start(&mut k, "W", 1, writer(&l, "W", p, 100_000));
        let a_unlock = 5_000_000; // 4 ms of write + C's 1 ms
        start(&mut k, "S", 2, writer(&l, "S", p, a_unlock - 500_000));
        k.run_until(100_000_000);
        assert_eq!(at(&l, "A-"), a_unlock);
        assert_eq!(at(&l, "S-"), a_unlock + 4_000_000, "S stole the lock");
        assert_eq!(at(&l, "W-"), a_unlock + 8_000_000);
        let m = pipe_mutex(&k, p);
        assert_eq!(m.handoffs, 1);
        assert!(m.waiters.is_empty() && m.spinners.is_empty() && m.owner.is_none());
    }

    #[test]
    fn pipe_mutex_spinner_gives_up_on_need_resched() {
        // §1.8 / mutex_optimistic_spin(): A (CPU 0) holds pipe->mutex for 10 ms; B (CPU 1)
        // spins from 1 µs. D, pinned to CPU 1, wakes at 3 ms (2.95 ms + 50 µs slack) and its
        // wakeup preemption sets need_resched on CPU 1: B stops spinning at the interrupt
        // exit and sleeps (it is not preempted as a runnable spinner); A's unlock at 10 ms
        // wakes it.
        let mut k = kernel(2, |c| c.c_pipe_write = Nanos(10_000_000));
        let p = k.ipc.new_pipe(false, 16, 4096);
        let l: Log = Rc::default();
        // D runs first and sleeps at once
        start(
            &mut k,
            "D",
            1,
            script(|i, _, _| match i {
                0 => Some(Op::Sleep(2_950_000)),
                1 => Some(Op::Run(100_000)),
                _ => None,
            }),
        );
        start(&mut k, "A", 0, writer(&l, "A", p, 0));
        let b = start(&mut k, "B", 1, writer(&l, "B", p, 1_000));
        k.run_until(100_000_000);
        let m = pipe_mutex(&k, p);
        assert_eq!((m.contended, m.sleeps), (2, 1));
        let st = &k.tasks[b.index()].stats;
        assert_eq!(
            st.nr_involuntary_switches, 0,
            "B slept, it was not preempted"
        );
        assert_eq!(st.nr_wakeups, 1);
        // B spun from 1 µs to 3 ms, then wrote for 10 ms after A's unlock at 10 ms
        assert_eq!(st.sys_ns, 2_999_000 + 10_000_000);
        assert_eq!(at(&l, "B-"), 20_000_000);
    }

    #[test]
    fn a_spinner_switched_out_leaves_the_osq() {
        // The context-switch hook: a spinner leaving its CPU (no path does it today) stops
        // spinning and retries when it runs again.
        let mut k = kernel(2, |c| c.c_pipe_write = Nanos(10_000_000));
        let p = k.ipc.new_pipe(false, 16, 4096);
        let l: Log = Rc::default();
        start(&mut k, "A", 0, writer(&l, "A", p, 0));
        let b = start(&mut k, "B", 1, writer(&l, "B", p, 1_000));
        k.run_until(2_000_000);
        assert_eq!(pipe_mutex(&k, p).spinners, [b]);
        k.mutex_switch_out(b);
        assert!(pipe_mutex(&k, p).spinners.is_empty());
        let spin = k.tasks[b.index()].exec.segs.last().unwrap();
        assert_eq!((spin.kind, spin.rem), (SegKind::Spin, 0));
    }

    #[test]
    fn thread_exit_skips_the_mm_teardown() {
        // §3.2: c_thread_exit ≈ 10 µs = c_exit (70 µs) / 7; a process pays the full c_exit.
        let mut k = kernel(2, |c| c.c_exit = Nanos(70_000));
        let kids: Rc<RefCell<Vec<i32>>> = Rc::default();
        let k2 = kids.clone();
        start(
            &mut k,
            "main",
            0,
            script(move |i, _, last| {
                if let SysResult::Pid(pid) = last {
                    if i <= 2 {
                        k2.borrow_mut().push(pid);
                    }
                }
                match i {
                    0 | 1 => Some(Op::Spawn(Box::new(Spawn {
                        program: script(|_, _, _| None),
                        thread: i == 1,
                        attrs: TaskAttrs::default(),
                    }))),
                    2 | 3 => Some(Op::WaitChild),
                    _ => None,
                }
            }),
        );
        k.run_until(10_000_000);
        let pids = kids.borrow();
        let sys = |pid: i32| k.tasks[k.task_by_pid(pid).unwrap().index()].stats.sys_ns;
        assert_eq!(sys(pids[0]), 70_000, "process");
        assert_eq!(sys(pids[1]), 10_000, "thread");
    }

    /// An exec'ing task E on CPU0 beside a hog H pinned there (or alone, with H on CPU1);
    /// returns E's CPU when its first user work starts, the kernel after the run, and E.
    fn exec_beside_hog(hog_cpu: usize) -> (usize, Kernel, TaskId) {
        let mut k = kernel(2, |c| {
            c.c_exec = Nanos(50_000);
            c.c_ctxsw_thread = Nanos(2_000);
        });
        start(
            &mut k,
            "H",
            hog_cpu,
            script(|_, _, _| Some(Op::Run(1 << 40))),
        );
        let cpu_after: Rc<RefCell<Option<usize>>> = Rc::default();
        let c2 = cpu_after.clone();
        let e = start(
            &mut k,
            "E",
            0,
            script(move |i, cx, _| match i {
                0 => Some(Op::Exec),
                1 => {
                    *c2.borrow_mut() = Some(cx.cpu());
                    Some(Op::Run(10_000))
                }
                _ => None,
            }),
        );
        // E may run on either CPU (it starts on CPU0)
        k.tasks[e.index()].cpus_allowed = CpuMask::range(0, 2);
        k.tasks[e.index()].nr_cpus_allowed = 2;
        k.run_until(50_000_000);
        let cpu = cpu_after.borrow().expect("E finished its exec");
        (cpu, k, e)
    }

    #[test]
    fn sched_exec_moves_the_task_to_an_idle_cpu() {
        // smp.md §1.8/§2.4: WF_EXEC takes the slow path in the MC domain {0,1}. The local
        // group {0} holds H and E; E itself is discounted (update_sg_wakeup_stats), which
        // leaves H: not idle. Group {1} is idle, so find_idlest_group() returns it and E is
        // moved there by the stopper before the image is loaded.
        let (cpu, k, e) = exec_beside_hog(0);
        assert_eq!(cpu, 1);
        let st = k.tasks[e.index()].stats.clone();
        assert_eq!(k.stats.exec_migrations, 1);
        assert_eq!(k.se[k.tasks[e.index()].se.index()].nr_migrations, 1);
        // the preemption by the stopper is an involuntary switch; E then exits
        assert!(st.nr_involuntary_switches >= 1);
        // system time: the stopper's switch-in (2 µs, charged to E's exec) + c_exec (50 µs)
        // + the exit (c_exit = 0 here)
        assert_eq!(st.sys_ns, 2_000 + 50_000);
    }

    #[test]
    fn sched_exec_stays_when_the_local_cpu_is_the_idlest() {
        // H runs on CPU1; on CPU0 only E, which is discounted: group {0} is idle, group {1}
        // is not, so the local group is kept and E execs where it is, without the stopper.
        let (cpu, k, e) = exec_beside_hog(1);
        assert_eq!(cpu, 0);
        assert_eq!(k.stats.exec_migrations, 0);
        assert_eq!(k.se[k.tasks[e.index()].se.index()].nr_migrations, 0);
        assert_eq!(k.tasks[e.index()].stats.sys_ns, 50_000);
    }

    /// (who, policy, nice, se.load.weight, SCHED_IDLE tasks queued on its CPU) of the calling
    /// task, as each member of a process family logs itself.
    type Family = Rc<RefCell<Vec<(&'static str, Policy, i32, u64, u32)>>>;

    fn snap(f: &Family, who: &'static str, cx: &Ctx<'_>) {
        let t = &cx.k.tasks[cx.task.index()];
        let w = cx.k.se[t.se.index()].load.weight;
        let idle = cx.k.cfs[cx.k.rqs[t.cpu].cfs.index()].h_nr_idle;
        f.borrow_mut().push((who, t.policy, t.nice, w, idle));
    }

    /// A parent started with `attrs` forks a child process that asks for nothing of its own
    /// (`TaskAttrs::default()`); the child logs itself, execs, logs itself again, creates a
    /// thread (which logs itself) and joins it; the parent waits for the child.
    fn fork_exec_family(attrs: TaskAttrs) -> Vec<(&'static str, Policy, i32, u64, u32)> {
        let mut k = kernel(2, |_| {});
        let f: Family = Rc::default();
        let f1 = f.clone();
        let prog = script(move |i, cx, _| match i {
            0 => {
                snap(&f1, "parent", cx);
                let f = f1.clone();
                Some(Op::Spawn(Box::new(Spawn {
                    program: script(move |j, cx, _| match j {
                        0 => {
                            snap(&f, "child", cx);
                            Some(Op::Exec)
                        }
                        1 => {
                            snap(&f, "child after exec", cx);
                            let f = f.clone();
                            Some(Op::Spawn(Box::new(Spawn {
                                program: script(move |_, cx, _| {
                                    snap(&f, "thread", cx);
                                    None
                                }),
                                thread: true,
                                attrs: TaskAttrs::default(),
                            })))
                        }
                        2 => Some(Op::WaitChild),
                        _ => None,
                    }),
                    thread: false,
                    attrs: TaskAttrs::default(),
                })))
            }
            1 => Some(Op::WaitChild),
            _ => None,
        });
        let t = k.create_task(prog, &attrs, None, false);
        k.start_task(t);
        k.run_until(10_000_000);
        let v = f.borrow().clone();
        v
    }

    #[test]
    fn fork_and_exec_keep_sched_idle_and_nice() {
        // workloads.md §1.7: the child starts with the parent's policy and nice; execve()
        // changes neither (reset-on-fork is not asked for). fair.md §1.3 / TV-1: SCHED_IDLE
        // weight scale_load(3) = 3072 whatever the nice; nice 19 -> 15 · 1024 = 15 360; each
        // task counts in its CPU's h_nr_idle (itself, running) only when SCHED_IDLE.
        let who = ["parent", "child", "child after exec", "thread"];
        for (attrs, want) in [
            // chrt --idle 0 CMD
            (
                TaskAttrs {
                    policy: Some(Policy::Idle),
                    ..Default::default()
                },
                (Policy::Idle, 0, 3_072, 1),
            ),
            // nice -n 19 CMD
            (
                TaskAttrs {
                    nice: Some(19),
                    ..Default::default()
                },
                (Policy::Normal, 19, 15_360, 0),
            ),
            // nice -n 19 chrt --idle 0 CMD: the nice is kept, the weight is SCHED_IDLE's
            (
                TaskAttrs {
                    policy: Some(Policy::Idle),
                    nice: Some(19),
                    ..Default::default()
                },
                (Policy::Idle, 19, 3_072, 1),
            ),
        ] {
            let got = fork_exec_family(attrs);
            assert_eq!(got.len(), 4, "{got:?}");
            for (g, w) in got.iter().zip(who) {
                assert_eq!(g.0, w);
                assert_eq!((g.1, g.2, g.3), (want.0, want.1, want.2), "{w}");
                // the task itself is queued on its CPU: h_nr_idle ≥ 1 exactly when idle
                assert_eq!(g.4 >= 1, want.3 == 1, "{w}: h_nr_idle {}", g.4);
            }
        }
    }

    /// On two CPUs (every cost zero): a hog of policy `hog` pinned to CPU1, and a SCHED_NORMAL
    /// parent on CPU0 that runs 1 ms and forks a child of policy `child` pinned to CPU1.
    /// Returns when the child first ran and the hog's involuntary switches.
    fn fork_onto_a_hog(version: &str, hog: Policy, child: Policy) -> (u64, u64) {
        let mut k = kernel_on(version, 2, |_| {});
        let attrs = TaskAttrs {
            comm: Some("H".into()),
            policy: Some(hog),
            cpus: Some(CpuMask::single(1)),
            ..Default::default()
        };
        let h = k.create_task(
            script(|_, _, _| Some(Op::Run(1 << 40))),
            &attrs,
            None,
            false,
        );
        k.start_task(h);
        let l: Log = Rc::default();
        let l1 = l.clone();
        start(
            &mut k,
            "P",
            0,
            script(move |i, _, _| match i {
                0 => Some(Op::Run(1_000_000)),
                1 => {
                    let l = l1.clone();
                    Some(Op::Spawn(Box::new(Spawn {
                        program: script(move |j, cx, _| {
                            (j == 0).then(|| {
                                log(&l, "child", cx.now());
                                Op::Run(100_000)
                            })
                        }),
                        thread: false,
                        attrs: TaskAttrs {
                            policy: Some(child),
                            cpus: Some(CpuMask::single(1)),
                            ..Default::default()
                        },
                    })))
                }
                _ => Some(Op::Run(1 << 40)),
            }),
        );
        k.run_until(20_000_000);
        let inv = k.tasks[h.index()].stats.nr_involuntary_switches;
        (at(&l, "child"), inv)
    }

    #[test]
    fn a_forked_child_preempts_a_sched_idle_task_and_a_sched_idle_child_never_preempts() {
        // fair.md §6.3 (WF_FORK included; in v6.19+ the idle rule comes before the WF_FORK
        // return of §6.7): a running SCHED_IDLE task is preempted at once by a non-idle wakee
        // -> the normal child starts when it is forked, at 1 ms, and the SCHED_IDLE hog is
        // switched out involuntarily.
        for v in ["v6.18", "v6.19", "v7.1"] {
            let (t, inv) = fork_onto_a_hog(v, Policy::Idle, Policy::Normal);
            assert_eq!(t, 1_000_000, "{v}");
            assert!(inv >= 1, "{v}");
            // a SCHED_IDLE wakee never preempts: the SCHED_IDLE child forked beside a normal
            // hog waits at least until the hog's first slice (0.7 ms × (1 + ilog2(2)) =
            // 1.4 ms from 0) has run out, so it cannot start at the fork (1 ms)
            let (t, _) = fork_onto_a_hog(v, Policy::Normal, Policy::Idle);
            assert!(t > 1_400_000, "{v}: child started at {t}");
        }
    }

    /// A parent P on CPU0 whose script is `ops`; the child it forks (pinned to CPU1) runs
    /// `child_run` ns and exits. Returns the kernel, P and what each of P's operations
    /// returned with the time it returned.
    fn wait_family(ops: Vec<Op>, child_run: u64) -> (Kernel, TaskId, Vec<(SysResult, u64)>) {
        wait_family_of(ops, child_run, false)
    }

    /// [`wait_family`] whose child is a thread (`thread`) or a process.
    fn wait_family_of(
        ops: Vec<Op>,
        child_run: u64,
        thread: bool,
    ) -> (Kernel, TaskId, Vec<(SysResult, u64)>) {
        wait_family_in(kernel(2, |_| {}), ops, child_run, thread)
    }

    /// [`wait_family_of`] on kernel `k` (two CPUs at least), which may hold objects already.
    fn wait_family_in(
        mut k: Kernel,
        ops: Vec<Op>,
        child_run: u64,
        thread: bool,
    ) -> (Kernel, TaskId, Vec<(SysResult, u64)>) {
        let got: Rc<RefCell<Vec<(SysResult, u64)>>> = Rc::default();
        let g = got.clone();
        let mut ops = ops.into_iter();
        let p = start(
            &mut k,
            "P",
            0,
            script(move |i, cx, last| {
                if i > 0 {
                    g.borrow_mut().push((last, cx.now()));
                }
                let op = ops.next()?;
                Some(match op {
                    Op::Spawn(_) => Op::Spawn(Box::new(Spawn {
                        program: script(move |j, _, _| {
                            (j == 0 && child_run > 0).then_some(Op::Run(child_run))
                        }),
                        thread,
                        attrs: TaskAttrs {
                            cpus: Some(CpuMask::single(1)),
                            ..Default::default()
                        },
                    })),
                    op => op,
                })
            }),
        );
        k.run_until(10_000_000);
        let v = got.borrow().clone();
        (k, p, v)
    }

    /// A placeholder `Op::Spawn` for [`wait_family`]'s script (replaced by the real child).
    fn fork_op() -> Op {
        Op::Spawn(Box::new(Spawn {
            program: script(|_, _, _| None),
            thread: false,
            attrs: TaskAttrs::default(),
        }))
    }

    #[test]
    fn wait_sleeps_until_the_child_exits_and_is_woken_with_wf_sync() {
        // §1.7: wait() with a live child blocks; the child's exit wakes the parent with
        // WF_SYNC (exit.c do_notify_parent -> __wake_up_parent -> __wake_up_sync_key). Every
        // cost is zero: the fork returns at 0, the child (CPU1) runs 100 µs and exits at
        // 100 µs, so wait() returns the child's pid no earlier than 100 µs; a second wait()
        // finds no child left: ECHILD at once.
        let (k, p, got) = wait_family(vec![fork_op(), Op::WaitChild, Op::WaitChild], 100_000);
        assert_eq!(got.len(), 3, "{got:?}");
        let SysResult::Pid(child) = got[0].0 else {
            panic!("fork returned {:?}", got[0].0)
        };
        assert_eq!(got[0].1, 0);
        assert_eq!(got[1].0, SysResult::Pid(child));
        assert!(got[1].1 >= 100_000, "woken at {}", got[1].1);
        assert_eq!(got[2], (SysResult::NoChild, got[1].1));
        let st = &k.tasks[p.index()].stats;
        // one wakeup (the exit's), with WF_SYNC; two voluntary switches: the sleep in wait()
        // and P's own exit (do_task_dead()'s schedule counts in nvcsw)
        assert_eq!((st.nr_wakeups, st.nr_wakeups_sync), (1, 1));
        assert_eq!(st.nr_voluntary_switches, 2);
        assert!(!k.tasks[p.index()].waiting_child);
        assert_eq!(k.tasks[p.index()].children, 0);
    }

    #[test]
    fn a_thread_exit_wakes_its_joiner_without_wf_sync() {
        // pthread_join(): a thread does not notify its parent (exit_notify() autoreaps it);
        // the joiner sleeps on the thread's clear_child_tid futex, which mm_release() wakes
        // with FUTEX_WAKE -> wake_up_q() -> wake_up_process(): no WF_SYNC. Same timeline as
        // the process case (the thread runs 100 µs on CPU1 and exits).
        let (k, p, got) =
            wait_family_of(vec![fork_op(), Op::WaitChild, Op::WaitChild], 100_000, true);
        let SysResult::Pid(child) = got[0].0 else {
            panic!("clone returned {:?}", got[0].0)
        };
        assert_eq!(got[1].0, SysResult::Pid(child));
        assert!(got[1].1 >= 100_000, "woken at {}", got[1].1);
        assert_eq!(got[2], (SysResult::NoChild, got[1].1));
        let st = &k.tasks[p.index()].stats;
        assert_eq!((st.nr_wakeups, st.nr_wakeups_sync), (1, 0));
    }

    #[test]
    fn wait_returns_a_zombie_at_once() {
        // The child (CPU1) exits at once; P runs 1 ms, then wait() finds the zombie and
        // returns its pid at 1 ms (every cost zero) without sleeping: no wakeup, and the only
        // voluntary switch is P's exit.
        let (k, p, got) = wait_family(vec![fork_op(), Op::Run(1_000_000), Op::WaitChild], 0);
        let SysResult::Pid(child) = got[0].0 else {
            panic!("fork returned {:?}", got[0].0)
        };
        assert_eq!(got[2], (SysResult::Pid(child), 1_000_000));
        let st = &k.tasks[p.index()].stats;
        assert_eq!((st.nr_wakeups, st.nr_voluntary_switches), (0, 1));
        assert!(k.tasks[p.index()].zombies.is_empty());
    }

    /// [`wait_family`] with an empty pipe (one writer left open) that P's `Op::Pselect`
    /// watches: `ops` gets the pipe.
    fn pselect_family(ops: impl FnOnce(PipeId) -> Vec<Op>, child_run: u64) -> PselectRun {
        let mut k = kernel(2, |_| {});
        let pipe = k.ipc.new_pipe(false, 16, 4096);
        let (k, p, got) = wait_family_in(k, ops(pipe), child_run, false);
        (k, p, pipe, got)
    }

    type PselectRun = (Kernel, TaskId, PipeId, Vec<(SysResult, u64)>);

    #[test]
    fn pselect_is_interrupted_by_a_child_exit_without_wf_sync() {
        // The child (CPU1) runs 100 µs and exits at 100 µs (every cost zero) while P sleeps
        // in pselect() on an empty pipe: the SIGCHLD of do_notify_parent() wakes P through
        // signal_wake_up() -> wake_up_state(): one wake-up, no WF_SYNC, and pselect()
        // returns EINTR no earlier than 100 µs. The zombie is still there: the wait() that
        // follows returns its pid at once (same instant), the next one ECHILD. Two voluntary
        // switches: the sleep in pselect() and P's exit. P's wait entry on the pipe is gone.
        let (k, p, pipe, got) = pselect_family(
            |pipe| {
                let fd = PollFd::Pipe(pipe);
                vec![fork_op(), Op::Pselect { fd }, Op::WaitChild, Op::WaitChild]
            },
            100_000,
        );
        assert_eq!(got.len(), 4, "{got:?}");
        let SysResult::Pid(child) = got[0].0 else {
            panic!("fork returned {:?}", got[0].0)
        };
        assert_eq!(got[1].0, SysResult::Interrupted);
        assert!(got[1].1 >= 100_000, "woken at {}", got[1].1);
        assert_eq!(got[2], (SysResult::Pid(child), got[1].1));
        assert_eq!(got[3], (SysResult::NoChild, got[1].1));
        let st = &k.tasks[p.index()].stats;
        assert_eq!((st.nr_wakeups, st.nr_wakeups_sync), (1, 0));
        assert_eq!(st.nr_voluntary_switches, 2);
        assert!(!k.tasks[p.index()].sigchld_wait);
        assert!(k.ipc.pipes[pipe.index()].pollers.is_empty());
    }

    #[test]
    fn pselect_returns_eintr_at_once_while_a_zombie_is_unreaped() {
        // The child (CPU1) exits at once; P runs 1 ms, then pselect() on the empty pipe finds
        // the unreaped child (its SIGCHLD pending): EINTR at 1 ms without sleeping; wait()
        // then reaps it at 1 ms. No wake-up; the one voluntary switch is P's exit.
        let (k, p, _, got) = pselect_family(
            |pipe| {
                let fd = PollFd::Pipe(pipe);
                vec![
                    fork_op(),
                    Op::Run(1_000_000),
                    Op::Pselect { fd },
                    Op::WaitChild,
                ]
            },
            0,
        );
        let SysResult::Pid(child) = got[0].0 else {
            panic!("fork returned {:?}", got[0].0)
        };
        assert_eq!(got[2], (SysResult::Interrupted, 1_000_000));
        assert_eq!(got[3], (SysResult::Pid(child), 1_000_000));
        let st = &k.tasks[p.index()].stats;
        assert_eq!((st.nr_wakeups, st.nr_voluntary_switches), (0, 1));
    }

    #[test]
    fn pselect_prefers_a_readable_file_to_a_pending_sigchld() {
        // select.c do_select() checks the files before signal_pending(): with a byte in the
        // pipe and an unreaped child, pselect() returns the ready count (at 1 ms, no sleep).
        let (_, _, _, got) = pselect_family(
            |pipe| {
                let fd = PollFd::Pipe(pipe);
                vec![
                    fork_op(),
                    Op::PipeWrite { pipe, bytes: 1 },
                    Op::Run(1_000_000),
                    Op::Pselect { fd },
                ]
            },
            0,
        );
        assert_eq!(got[3], (SysResult::Ready(1), 1_000_000));
    }

    #[test]
    fn a_nonblocking_read_of_an_empty_pipe_is_eagain() {
        // O_NONBLOCK: an empty pipe with a writer left returns EAGAIN at once (time 0, every
        // cost zero, no sleep: P's one voluntary switch is its exit); with a byte in it the
        // read returns the byte.
        let (k, p, _, got) = pselect_family(
            |pipe| {
                vec![
                    Op::PipeReadNonblock { pipe, bytes: 1 },
                    Op::PipeWrite { pipe, bytes: 1 },
                    Op::PipeReadNonblock { pipe, bytes: 1 },
                ]
            },
            0,
        );
        assert_eq!(got[0], (SysResult::Again, 0));
        assert_eq!(got[2], (SysResult::Bytes(1), 0));
        assert_eq!(k.tasks[p.index()].stats.nr_voluntary_switches, 1);
    }

    #[test]
    fn pselect_is_woken_by_a_pipe_write_with_wf_sync() {
        // P forks a child (CPU1) that runs 5 ms, then sleeps in pselect() on an empty pipe; a
        // writer on CPU2 sleeps 100 µs and writes one byte at 150 µs (50 µs timer slack, as in
        // `poll_wakes_every_poller_with_the_source_sync_flag`): pipe_write()'s wake-up
        // (WF_SYNC) makes pselect() return Ready(1) at 150 µs. Then wait() sleeps until the
        // child exits (>= 5 ms) and is woken by __wake_up_parent (WF_SYNC): two wake-ups, both
        // sync — the pselect() sleep left no SIGCHLD wait behind for the exit to take.
        let mut k = kernel(3, |_| {});
        let pipe = k.ipc.new_pipe(false, 16, 4096);
        start(
            &mut k,
            "writer",
            2,
            script(move |i, _, _| match i {
                0 => Some(Op::Sleep(100_000)),
                1 => Some(Op::PipeWrite { pipe, bytes: 1 }),
                _ => None,
            }),
        );
        let fd = PollFd::Pipe(pipe);
        let (k, p, got) = wait_family_in(
            k,
            vec![fork_op(), Op::Pselect { fd }, Op::WaitChild],
            5_000_000,
            false,
        );
        let SysResult::Pid(child) = got[0].0 else {
            panic!("fork returned {:?}", got[0].0)
        };
        assert_eq!(got[1], (SysResult::Ready(1), 150_000));
        assert_eq!(got[2].0, SysResult::Pid(child));
        assert!(got[2].1 >= 5_000_000, "reaped at {}", got[2].1);
        let st = &k.tasks[p.index()].stats;
        assert_eq!((st.nr_wakeups, st.nr_wakeups_sync), (2, 2));
        assert!(k.ipc.pipes[pipe.index()].pollers.is_empty());
    }

    #[test]
    fn wait_without_children_is_echild() {
        // No child at all: wait() returns ECHILD at once (time 0, every cost zero); P does not
        // sleep (its one voluntary switch is its exit).
        let (k, p, got) = wait_family(vec![Op::WaitChild], 0);
        assert_eq!(got, vec![(SysResult::NoChild, 0)]);
        assert_eq!(k.tasks[p.index()].stats.nr_voluntary_switches, 1);
    }

    #[test]
    fn fork_clone_exec_and_exit_costs() {
        // workloads.md §1.7 on a platform with known costs: c_fork 30 µs, c_clone 8 µs,
        // c_exec 50 µs, c_exit 70 µs (a thread's exit 70/7 = 10 µs, §3.2), c_syscall 1 µs for
        // each wait(); every other cost zero. P (CPU0) forks process A, clones thread T (both
        // pinned to CPU1, so sched_exec keeps A where it is: no stopper), waits twice, exits.
        // A execs and exits; T exits.
        let mut k = kernel(2, |c| {
            c.c_fork = Nanos(30_000);
            c.c_clone = Nanos(8_000);
            c.c_exec = Nanos(50_000);
            c.c_exit = Nanos(70_000);
            c.c_syscall = Nanos(1_000);
        });
        let l: Log = Rc::default();
        let l1 = l.clone();
        let on_cpu1 = || TaskAttrs {
            cpus: Some(CpuMask::single(1)),
            ..Default::default()
        };
        let p = start(
            &mut k,
            "P",
            0,
            script(move |i, cx, _| {
                match i {
                    1 => log(&l1, "forked", cx.now()),
                    2 => log(&l1, "cloned", cx.now()),
                    _ => {}
                }
                match i {
                    0 => Some(Op::Spawn(Box::new(Spawn {
                        program: script(|j, _, _| (j == 0).then_some(Op::Exec)),
                        thread: false,
                        attrs: on_cpu1(),
                    }))),
                    1 => Some(Op::Spawn(Box::new(Spawn {
                        program: script(|_, _, _| None),
                        thread: true,
                        attrs: on_cpu1(),
                    }))),
                    2 | 3 => Some(Op::WaitChild),
                    _ => None,
                }
            }),
        );
        k.run_until(10_000_000);
        // fork returns after c_fork, the clone c_clone later
        assert_eq!(at(&l, "forked"), 30_000);
        assert_eq!(at(&l, "cloned"), 30_000 + 8_000);
        let sys = |pid: i32| k.tasks[k.task_by_pid(pid).unwrap().index()].stats.sys_ns;
        let pp = k.tasks[p.index()].pid;
        // P: 30 + 8 + 1 + 1 + 70 (the process's last thread) = 110 µs
        assert_eq!(sys(pp), 110_000);
        // A (pid P + 1): c_exec 50 + c_exit 70 = 120 µs
        assert_eq!(sys(pp + 1), 120_000);
        // T (pid P + 2, a thread of P): 70 / 7 = 10 µs
        assert_eq!(sys(pp + 2), 10_000);
        assert_eq!(k.stats.exec_migrations, 0);
    }

    /// (event, flags, time) of every sched_waking/sched_wakeup and sched_switch record.
    struct FlagSink(Rc<RefCell<Vec<(&'static str, String, u64)>>>);
    impl crate::TraceSink for FlagSink {
        fn record(&mut self, r: &schedlab_trace::TraceRecord<&str>) {
            use schedlab_trace::TraceEvent as E;
            let what = match &r.event {
                E::SchedWaking { .. } => "waking",
                E::SchedWakeup { .. } => "wakeup",
                E::SchedSwitch { .. } => "switch",
                _ => return,
            };
            self.0
                .borrow_mut()
                .push((what, r.flags.to_string(), r.ts_ns));
        }
    }

    /// S blocks on a futex at once; W runs 100 µs and wakes it (c_ttwu 1 µs, every other cost
    /// zero, one CPU, preempt=full). Returns the trace records from the wakeup on.
    /// On CPU 0: S waits on a futex, then runs 10 µs and exits; W runs 100 µs, wakes S
    /// (FUTEX_WAKE), runs 100 µs more and exits. Returns (S, W).
    fn futex_wake_pair(k: &mut Kernel, sleeper_slice: Option<u64>) -> (TaskId, TaskId) {
        let f = k.ipc.new_futex(0);
        let attrs = TaskAttrs {
            comm: Some("S".into()),
            cpus: Some(CpuMask::single(0)),
            slice_ns: sleeper_slice,
            ..Default::default()
        };
        let s = k.create_task(
            script(move |i, _, _| match i {
                0 => Some(Op::FutexWait { futex: f, val: 0 }),
                1 => Some(Op::Run(10_000)),
                _ => None,
            }),
            &attrs,
            None,
            false,
        );
        k.start_task(s);
        let w = start(
            k,
            "W",
            0,
            script(move |i, _, _| match i {
                0 => Some(Op::Run(100_000)),
                1 => Some(Op::FutexWake { futex: f, nr: 1 }),
                2 => Some(Op::Run(100_000)),
                _ => None,
            }),
        );
        (s, w)
    }

    fn futex_wake_trace(sleeper_slice: Option<u64>) -> Vec<(&'static str, String, u64)> {
        let mut k = kernel(1, |c| c.c_ttwu = Nanos(1_000));
        let recs: Rc<RefCell<Vec<(&'static str, String, u64)>>> = Rc::default();
        k.set_trace(Box::new(FlagSink(recs.clone())));
        futex_wake_pair(&mut k, sleeper_slice);
        k.run_until(1_000_000);
        let v = recs.borrow();
        let from = v.iter().position(|r| r.0 == "waking").expect("a wakeup");
        v[from..].to_vec()
    }

    #[test]
    fn a_preempting_wakeup_charges_the_waker_tail_to_the_wakee() {
        // core.c wakeup_preempt(): a check that sets need_resched on a queued current task
        // asks rq_clock_skip_update(), and the __schedule() that follows does not update the
        // clock. W runs 100 µs, then wakes S: try_to_wake_up() updates the clock at 100 µs,
        // c_ttwu (1 µs) runs, the check (S's 100 µs slice: PREEMPT_SHORT, S's earlier
        // deadline) preempts W at 101 µs. W's update_curr() in __schedule sees the 100 µs
        // clock, so W has been charged 100 µs; S starts with exec_start = 100 µs and is
        // charged the 1 µs of W's ttwu with its own 10 µs: 11 µs when it exits at 111 µs.
        // W then runs its last 100 µs: 200 µs in all. Charged total = 211 µs = elapsed.
        let mut k = kernel(1, |c| c.c_ttwu = Nanos(1_000));
        let (s, w) = futex_wake_pair(&mut k, Some(100_000));
        k.run_until(1_000_000);
        let rt = |t: TaskId| k.se[k.tasks[t.index()].se.index()].sum_exec_runtime;
        assert_eq!(rt(s), 11_000);
        assert_eq!(rt(w), 200_000);
        // what each task executed is unchanged: S 10 µs, W 201 µs
        let exec = |t: TaskId| k.tasks[t.index()].stats.user_ns + k.tasks[t.index()].stats.sys_ns;
        assert_eq!(exec(s), 10_000);
        assert_eq!(exec(w), 201_000);
    }

    #[test]
    fn sched_wakeup_follows_the_preemption_check_and_shows_need_resched() {
        // The kernel traces sched_wakeup in ttwu_do_wakeup(), after the enqueue work and the
        // preemption check: c_ttwu (1 µs) after sched_waking, with 'N' in the need-resched
        // column when the wakee preempts.
        // S with a 100 µs slice: S slept with zero lag and is placed at V with deadline
        // V + 100 µs; W's deadline is its vruntime at pick + 700 µs (base slice, one CPU), and
        // W is 100 µs past that pick: PREEMPT_SHORT lifts W's protection and S's earlier
        // deadline wins -> resched, W switched out at once (preempt=full).
        let r = futex_wake_trace(Some(100_000));
        assert_eq!((r[0].0, r[0].1.as_str()), ("waking", "d..3."));
        assert_eq!((r[1].0, r[1].1.as_str()), ("wakeup", "dN.4."));
        assert_eq!(r[1].2 - r[0].2, 1_000);
        assert_eq!((r[2].0, r[2].2), ("switch", r[1].2));
        // S with the default slice: deadline V + 700 µs is later than W's, W is protected and
        // keeps the CPU: no resched at the wakeup.
        let r = futex_wake_trace(None);
        assert_eq!((r[1].0, r[1].1.as_str()), ("wakeup", "d..4."));
        assert_eq!(r[1].2 - r[0].2, 1_000);
        assert!(r[2].2 > r[1].2, "W keeps running");
    }

    /// Every trace record, as text fields (for byte-for-byte comparisons of two runs).
    struct AllSink(Rc<RefCell<Vec<String>>>);
    impl crate::TraceSink for AllSink {
        fn record(&mut self, r: &schedlab_trace::TraceRecord<&str>) {
            self.0.borrow_mut().push(format!("{r:?}"));
        }
    }

    /// The pieces of the segment test: user work, two system calls back to back, a
    /// zero-length piece, user work, a long system call (ns at the reference core).
    const PIECES: [Piece; 6] = [
        Piece::User(3_000),
        Piece::Sys(1_500),
        Piece::Sys(700),
        Piece::User(0),
        Piece::User(2_500),
        Piece::Sys(40_000),
    ];

    /// One run of the segment test on rpi5 (jitter on, every cost of the platform) under
    /// `preempt`: on CPU 0 a task doing 300 rounds of `PIECES` — as one `Op::Segment` per
    /// round, or piece by piece — beside a hog and a task that sleeps 37 µs between 5 µs
    /// runs (wakeups that preempt at the pieces' return-to-user points or at interrupt
    /// exits, ticks, timer interrupts). Returns the trace and each task's (user, sys,
    /// runtime, switches) and the event count.
    fn segment_run(
        preempt: &str,
        as_segment: bool,
    ) -> (Vec<String>, Vec<(u64, u64, u64, u64)>, u64) {
        let cfg = KernelConfig::parse(&format!("v6.18 preempt={preempt}")).unwrap();
        let p = schedlab_platform::Platform::builtin("rpi5").unwrap();
        let m = MachineDesc::from_platform(&p);
        let mut k = Kernel::new(cfg, m, 3).unwrap();
        k.strict = true;
        k.check_invariants = true;
        let recs: Rc<RefCell<Vec<String>>> = Rc::default();
        k.set_trace(Box::new(AllSink(recs.clone())));
        let worker = if as_segment {
            script(|i, _, _| (i < 300).then(|| Op::Segment(Box::new(PIECES))))
        } else {
            script(|i, _, _| {
                let (round, piece) = (i / 6, i % 6);
                (round < 300).then(|| match PIECES[piece as usize] {
                    Piece::User(w) => Op::Run(w),
                    Piece::Sys(w) => Op::Syscall(w),
                })
            })
        };
        let tasks = [
            start(&mut k, "worker", 0, worker),
            start(
                &mut k,
                "hog",
                0,
                script(|i, _, _| (i < 100).then_some(Op::Run(200_000))),
            ),
            start(
                &mut k,
                "sleeper",
                0,
                script(|i, _, _| {
                    (i < 2_000).then(|| {
                        if i % 2 == 0 {
                            Op::Sleep(37_000)
                        } else {
                            Op::Run(5_000)
                        }
                    })
                }),
            ),
        ];
        k.run_until(100_000_000);
        let stats = tasks
            .iter()
            .map(|&t| {
                let task = &k.tasks[t.index()];
                let se = &k.se[task.se.index()];
                (
                    task.stats.user_ns,
                    task.stats.sys_ns,
                    se.sum_exec_runtime,
                    task.stats.nr_involuntary_switches,
                )
            })
            .collect();
        let trace = recs.borrow().clone();
        (trace, stats, k.events_processed())
    }

    /// `Op::Segment` is exactly its pieces issued one by one (the same trace records, CPU
    /// times, runtimes, switches and event count), under preempt=none, voluntary and full.
    #[test]
    fn a_segment_is_its_pieces_one_by_one() {
        for preempt in ["none", "voluntary", "full"] {
            let one_by_one = segment_run(preempt, false);
            let segment = segment_run(preempt, true);
            // the run did something: the worker finished its 300 rounds (300 x 47.7 µs of
            // work at the reference core, more on the slower rpi5 cores), and was switched
            // out by the sleeper's wakeups and the hog (involuntary switches)
            let (user, sys, _, preempted) = one_by_one.1[0];
            assert!(
                user >= 300 * 5_500 && sys >= 300 * 42_200,
                "{preempt}: {user} {sys}"
            );
            assert!(preempted > 10, "{preempt}: preempted {preempted} times");
            assert_eq!(segment.1, one_by_one.1, "{preempt}: task times");
            assert_eq!(segment.2, one_by_one.2, "{preempt}: events");
            assert!(segment.0 == one_by_one.0, "{preempt}: the traces differ");
        }
    }

    // ------------------------------------------------------------- user spins (SpinWhile)

    /// A spinner on word `f` (value 0, bound `max_ns`) pinned to `cpu`: logs "spun" with the
    /// time its spin returned and "changed"/"timeout" for the result.
    fn spinner(k: &mut Kernel, l: &Log, f: FutexId, cpu: usize, max_ns: u64) -> TaskId {
        let l = l.clone();
        start(
            k,
            "spinner",
            cpu,
            script(move |i, cx, last| match i {
                0 => Some(Op::SpinWhile {
                    futex: f,
                    val: 0,
                    max_ns,
                }),
                1 => {
                    log(&l, "spun", cx.now());
                    let what = match last {
                        SysResult::Changed => "changed",
                        SysResult::SpinTimeout => "timeout",
                        _ => "other",
                    };
                    log(&l, what, cx.now());
                    None
                }
                _ => None,
            }),
        )
    }

    /// A task on `cpu` that runs `at` ns, then stores 1 in `f` and exits.
    fn storer(k: &mut Kernel, f: FutexId, cpu: usize, at: u64) -> TaskId {
        start(
            k,
            "storer",
            cpu,
            script(move |i, cx, _| match i {
                0 => Some(Op::Run(at)),
                1 => {
                    cx.futex_store(f, 1);
                    None
                }
                _ => None,
            }),
        )
    }

    /// A SCHED_FIFO task pinned to `cpu` that sleeps `from` ns, then runs `len` ns.
    fn rt_burst(k: &mut Kernel, cpu: usize, from: u64, len: u64) -> TaskId {
        let attrs = TaskAttrs {
            comm: Some("rt".into()),
            policy: Some(Policy::Fifo),
            rt_priority: Some(50),
            cpus: Some(CpuMask::single(cpu)),
            ..Default::default()
        };
        let t = k.create_task(
            script(move |i, _, _| match i {
                0 => Some(Op::Sleep(from)),
                1 => Some(Op::Run(len)),
                _ => None,
            }),
            &attrs,
            None,
            false,
        );
        k.start_task(t);
        t
    }

    #[test]
    fn a_running_spinner_sees_a_store_from_another_cpu_at_once() {
        // every cost zero: the spinner on CPU 1 spins from 0; the storer on CPU 0 stores at
        // 100 µs; the spinner returns at 100 µs with Changed, having used 100 µs of user time
        let mut k = kernel(2, |_| {});
        let l: Log = Rc::default();
        let f = k.ipc.new_futex(0);
        let s = spinner(&mut k, &l, f, 1, u64::MAX);
        storer(&mut k, f, 0, 100_000);
        k.run_until(1_000_000);
        assert_eq!(at(&l, "spun"), 100_000);
        assert_eq!(at(&l, "changed"), 100_000);
        let st = &k.tasks[s.index()].stats;
        assert_eq!((st.user_ns, st.sys_ns), (100_000, 0));
        assert!(k.ipc.futexes[f.index()].spinners.is_empty());
    }

    #[test]
    fn a_preempted_spinner_sees_the_store_when_it_runs_again() {
        // CPU 1: the spinner spins 0–50 µs; an RT task wakes at 50 µs and runs 200 µs (to
        // 250 µs); the store at 100 µs finds the spinner off its CPU: it returns Changed when
        // it runs again, at 250 µs, with 50 µs of user time (the spin before the preemption)
        let mut k = kernel(2, |_| {});
        let l: Log = Rc::default();
        let f = k.ipc.new_futex(0);
        let s = spinner(&mut k, &l, f, 1, u64::MAX);
        rt_burst(&mut k, 1, 50_000, 200_000);
        storer(&mut k, f, 0, 100_000);
        k.run_until(1_000_000);
        assert_eq!(at(&l, "changed"), 250_000);
        assert_eq!(k.tasks[s.index()].stats.user_ns, 50_000);
    }

    #[test]
    fn a_bounded_spin_times_out_after_its_time_on_a_cpu() {
        // alone: a 30 µs bound ends at 30 µs with SpinTimeout
        let mut k = kernel(2, |_| {});
        let l: Log = Rc::default();
        let f = k.ipc.new_futex(0);
        let s = spinner(&mut k, &l, f, 1, 30_000);
        k.run_until(1_000_000);
        assert_eq!(at(&l, "timeout"), 30_000);
        assert_eq!(k.tasks[s.index()].stats.user_ns, 30_000);
        assert!(k.ipc.futexes[f.index()].spinners.is_empty());
        // preempted 50–250 µs by an RT task: 100 µs of spinning on the CPU end at
        // 50 + 200 + 50 = 300 µs (time off the CPU does not count)
        let mut k = kernel(2, |_| {});
        let l: Log = Rc::default();
        let f = k.ipc.new_futex(0);
        let s = spinner(&mut k, &l, f, 1, 100_000);
        rt_burst(&mut k, 1, 50_000, 200_000);
        k.run_until(1_000_000);
        assert_eq!(at(&l, "timeout"), 300_000);
        assert_eq!(k.tasks[s.index()].stats.user_ns, 100_000);
    }

    #[test]
    fn a_spin_on_a_word_that_already_differs_returns_at_once() {
        let mut k = kernel(2, |_| {});
        let l: Log = Rc::default();
        let f = k.ipc.new_futex(7);
        let s = spinner(&mut k, &l, f, 1, u64::MAX);
        k.run_until(1_000_000);
        assert_eq!(at(&l, "changed"), 0);
        assert_eq!(k.tasks[s.index()].stats.user_ns, 0);
    }

    #[test]
    fn fetch_add_ends_spins_and_a_store_of_the_same_value_does_not() {
        // two spinners on CPUs 1 and 2; the task on CPU 0 stores 0 (unchanged) at 10 µs,
        // then fetch_add(1) at 40 µs: both return Changed at 40 µs
        let mut k = kernel(3, |_| {});
        let l1: Log = Rc::default();
        let l2: Log = Rc::default();
        let f = k.ipc.new_futex(0);
        spinner(&mut k, &l1, f, 1, u64::MAX);
        spinner(&mut k, &l2, f, 2, u64::MAX);
        start(
            &mut k,
            "adder",
            0,
            script(move |i, cx, _| match i {
                0 => Some(Op::Run(10_000)),
                1 => {
                    cx.futex_store(f, 0);
                    Some(Op::Run(30_000))
                }
                2 => {
                    assert_eq!(cx.futex_fetch_add(f, 1), 0);
                    None
                }
                _ => None,
            }),
        );
        k.run_until(1_000_000);
        assert_eq!(at(&l1, "changed"), 40_000);
        assert_eq!(at(&l2, "changed"), 40_000);
        assert_eq!(k.ipc.futexes[f.index()].val, 1);
    }
}
