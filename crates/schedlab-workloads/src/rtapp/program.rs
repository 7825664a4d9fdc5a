//! The task programs of an rt-app process (rt-app.c `main`, `thread_body`, `run`, `run_event`
//! of scheduler-tools/rt-app, written in the neutral notation of workloads.md §0.1 and run
//! over the kernel's syscall surface).
//!
//! ```text
//! task rt-app (main)            { t_start = now(); for each thread: live++, clone_thread(T);
//!                                 if duration: sleep(duration); stop();  join all; exit() }
//! task <task>-<ind> (thread T)  { if ind == 0: t_zero = now(); if !forked: pthread_barrier(start)
//!                                 t_first = t_zero + delay; if delay: sleep_until(t_first)
//!                                 while running && thread_loop != loop:
//!                                   phase properties (setpriority / sched_setattr if changed)
//!                                   t_start = now(); events; t_end = now()
//!                                   if running: log row;  advance phase_loop/phase/thread_loop
//!                                 live--, futex_wake(live, 1); exit() }
//! ```
//!
//! `stop()` is rt-app's `__shutdown(true)`: `running` = false, then every condition variable
//! (conds, barriers, suspends) is broadcast and every semaphore is released. A thread checks
//! `running` before each event; once it is false the thread finishes the event in progress,
//! then runs only `lock`/`unlock` events until it holds no mutex it locked in this loop, and
//! ends without logging that loop (rt-app's "dry run").
//!
//! Each program is an interpreter over micro-operations ([`Uop`]): an rt-app event expands to
//! a few (e.g. `wait` = enter the condvar, unlock, block, relock), and each blocking one is a
//! state machine of `sync.rs`. User-space costs (atomics `c_atomic`, vDSO clock reads
//! `c_clock`) are owed in a [`Charge`] and paid as CPU work before the next system call.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use schedlab_sched::sched::{Policy as KPolicy, TgId};
use schedlab_sched::{Ctx, Op, Program, Spawn, Sys, SysResult};

use super::plan::{Ev, Plan, TimerRef};
use super::report::{us, us_signed, Row, Summary, ThreadRecord};
use super::sync::{
    cond_block, cond_enter, cond_signal, mutex_lock, mutex_unlock, pi_mutex_lock, pi_mutex_unlock,
    sem_post, sem_wait, start_barrier_arrive, start_barrier_recheck, BarrierObj, Charge, CondVar,
    LockSt, Sem, StartBarrier, SyncObjs, SEM_SHUTDOWN, WAKE_ALL,
};

/// rt-app's `FORKS_LIMIT`: forks allowed per fork resource (rt-app exits when it is reached;
/// schedlab skips the fork and reports it).
pub(crate) const FORKS_LIMIT: u32 = 1024;

/// A timer resource (rt-app `res.timer`): the next expiry, once initialised from `t_first`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TimerState {
    pub init: bool,
    pub t_next: u64,
    pub relative: bool,
}

/// Everything the programs of one rt-app process share (its user memory).
pub(crate) struct Shared {
    /// rt-app's `continue_running`.
    pub running: bool,
    /// `t_start` of main (origin of `rel_st`).
    pub t_start: u64,
    /// `t_zero`, read by thread 0 before the start barrier (origin of every timer).
    pub t_zero: Option<u64>,
    /// When main stopped the threads.
    pub stopped_at: Option<u64>,
    pub sync: SyncObjs,
    /// Shared timers.
    pub timers: Vec<TimerState>,
    pub threads: Vec<ThreadRecord>,
    /// Forks done per target task.
    pub forks: Vec<u32>,
    /// Run-time problems rt-app would have stopped on (fork limit).
    pub errors: Vec<String>,
    /// Log rows kept per thread.
    pub log_cap: usize,
    /// The task group of each of the plan's `taskgroups` (created at set-up).
    pub groups: Vec<TgId>,
}

impl Shared {
    /// Allocates the process's futex words through `sys`.
    pub fn new(plan: &Plan, sys: &mut dyn Sys, log_cap: usize) -> Shared {
        let mutexes = (0..plan.n_mutexes).map(|_| sys.new_futex(0)).collect();
        let conds = (0..plan.n_conds)
            .map(|_| CondVar {
                seq: sys.new_futex(0),
                waiters: 0,
                wakeups: 0,
            })
            .collect();
        let sems = (0..plan.n_sems)
            .map(|_| Sem {
                word: sys.new_futex(0),
                nwaiters: 0,
            })
            .collect();
        let barriers = plan
            .barriers
            .iter()
            .map(|b| BarrierObj {
                mutex: b.mutex,
                cond: b.cond,
                waiting: b.users.saturating_sub(1) as i64,
            })
            .collect();
        let start = StartBarrier {
            round: sys.new_futex(0),
            count: plan.initial.len() as u32,
            arrived: 0,
        };
        let live = sys.new_futex(0);
        Shared {
            running: true,
            t_start: 0,
            t_zero: None,
            stopped_at: None,
            sync: SyncObjs {
                mutexes,
                pi: plan.pi_mutexes,
                conds,
                sems,
                barriers,
                start,
                live,
            },
            timers: plan
                .timers
                .iter()
                .map(|t| TimerState {
                    relative: t.relative,
                    ..TimerState::default()
                })
                .collect(),
            threads: Vec::new(),
            forks: vec![0; plan.tasks.len()],
            errors: Vec::new(),
            log_cap,
            groups: Vec::new(),
        }
    }

    /// Registers a new thread of task `def` and returns its index; `fork_no` names a forked one.
    fn new_thread(&mut self, plan: &Plan, def: usize, fork_no: Option<u32>) -> usize {
        let t = &plan.tasks[def];
        let ind = self.threads.len();
        let name = match fork_no {
            Some(n) => format!("{}-{ind}-{n:04}", t.name),
            None => format!("{}-{ind}", t.name),
        };
        self.threads.push(ThreadRecord {
            name,
            ind,
            def,
            forked: fork_no.is_some(),
            policy: t.policy,
            prio: t.prio,
            pid: None,
            task: None,
            rows: Vec::new(),
            rows_dropped: 0,
            summary: Summary::default(),
            exited: false,
        });
        ind
    }
}

/// Micro-operations of a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Uop {
    /// Record pid/task; thread 0 reads `t_zero`.
    Init,
    StartBarrier,
    Delay,
    PhaseEnter,
    IterStart,
    IterEnd,
    Run(u64),
    Runtime(u64),
    Sleep(u64),
    Timer(TimerRef, u64),
    Yield,
    Fork(usize),
    SetNice(i32),
    SetSlice(u64),
    /// `set_thread_taskgroup()`: the thread writes its tid to the group's `cgroup.procs`.
    SetTaskgroup(usize),
    /// `sched_setscheduler()` to a new RT priority (same policy).
    SetRtPrio(u32),
    /// `sched_setscheduler()` to a phase's policy: (policy, nice, RT priority).
    SetSched(KPolicy, i32, u32),
    Lock(usize),
    Unlock(usize),
    CondEnter(usize),
    CondBlock(usize),
    Signal(usize),
    Broadcast(usize),
    SemPost(usize),
    SemWait(usize),
    BarrierCheck(usize),
    BarrierInc(usize),
    LiveDec,
    Exit,
}

/// A micro-operation waiting for its system call to return.
#[derive(Clone, Copy, Debug)]
enum Active {
    /// Nothing left to do.
    Done,
    Lock(usize, LockSt),
    CondBlock(usize),
    SemWait(usize, bool),
    StartBarrier(u32),
    /// A `run`/`runtime` that started at this time.
    Work(u64),
    /// A timer sleep until this expiry.
    TimerSleep(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Start,
    Loop,
    Events,
    Exit,
    Dead,
}

/// One rt-app thread (`thread_body`).
pub(crate) struct ThreadProg {
    sh: Rc<RefCell<Shared>>,
    plan: Rc<Plan>,
    tid: usize,
    def: usize,
    forked: bool,
    stage: Stage,
    uops: VecDeque<Uop>,
    active: Option<Active>,
    charge: Charge,
    held: Option<Op>,
    /// A system call or CPU work was issued since the loop started.
    issued: bool,
    phase: usize,
    phase_loop: i64,
    thread_loop: i64,
    ev: usize,
    entered: Option<usize>,
    /// rt-app's `lock` counter of `run()`: mutexes locked minus unlocked in this loop.
    lock_depth: i32,
    row: Row,
    t_first: u64,
    nice: Option<i32>,
    slice: Option<u64>,
    rt_priority: Option<u32>,
    /// The policy the thread runs with now.
    policy: KPolicy,
    /// The last phase policy applied.
    sched: Option<(KPolicy, i32, u32)>,
    /// The taskgroup the thread is in (index into the plan's `taskgroups`; `None`: the one
    /// it was created in).
    taskgroup: Option<usize>,
    /// Unique timers.
    timers: Vec<TimerState>,
}

impl ThreadProg {
    pub fn new(
        sh: Rc<RefCell<Shared>>,
        plan: Rc<Plan>,
        tid: usize,
        def: usize,
        forked: bool,
    ) -> ThreadProg {
        let t = &plan.tasks[def];
        let timers = t
            .unique_timers
            .iter()
            .map(|&relative| TimerState {
                relative,
                ..TimerState::default()
            })
            .collect();
        let (nice, slice, rt_priority) = (t.nice, t.slice_ns, t.rt_priority);
        let taskgroup = t.taskgroup;
        let policy = super::plan::kernel_policy(t.policy);
        ThreadProg {
            sh,
            plan,
            tid,
            def,
            forked,
            stage: Stage::Start,
            uops: VecDeque::new(),
            active: None,
            charge: Charge::default(),
            held: None,
            issued: false,
            phase: 0,
            phase_loop: 0,
            thread_loop: 0,
            ev: 0,
            entered: None,
            lock_depth: 0,
            row: Row::default(),
            t_first: 0,
            nice,
            slice,
            rt_priority,
            policy,
            sched: None,
            taskgroup,
            timers,
        }
    }

    /// Queues the next micro-operations when the queue is empty.
    fn refill(&mut self) {
        let plan = self.plan.clone();
        let task = &plan.tasks[self.def];
        match self.stage {
            Stage::Start => {
                self.uops.push_back(Uop::Init);
                if !self.forked {
                    self.uops.push_back(Uop::StartBarrier);
                }
                self.uops.push_back(Uop::Delay);
                self.stage = Stage::Loop;
            }
            Stage::Loop => {
                let running = self.sh.borrow().running;
                let done = task.loop_count >= 0 && self.thread_loop >= task.loop_count;
                if !running || done {
                    self.stage = Stage::Exit;
                    return;
                }
                self.uops.push_back(Uop::PhaseEnter);
                self.uops.push_back(Uop::IterStart);
                self.ev = 0;
                self.stage = Stage::Events;
            }
            Stage::Events => {
                let events = &task.phases[self.phase].events;
                if self.ev >= events.len() {
                    self.uops.push_back(Uop::IterEnd);
                    self.stage = Stage::Loop;
                    return;
                }
                let running = self.sh.borrow().running;
                if !running && self.lock_depth <= 0 {
                    // run() returns early; the loop is not logged and the thread ends
                    self.stage = Stage::Loop;
                    return;
                }
                let e = events[self.ev].clone();
                self.ev += 1;
                if !running && !e.runs_when_stopping() {
                    return;
                }
                self.push_event(&plan, &e);
            }
            Stage::Exit => {
                self.uops.push_back(Uop::LiveDec);
                self.uops.push_back(Uop::Exit);
                self.stage = Stage::Dead;
            }
            Stage::Dead => self.uops.push_back(Uop::Exit),
        }
    }

    /// The micro-operations of one event (rt-app.c `run_event`).
    fn push_event(&mut self, plan: &Plan, e: &Ev) {
        use Uop::*;
        let u = &mut self.uops;
        match *e {
            Ev::Run(t) => u.push_back(Run(t)),
            Ev::Runtime(t) => u.push_back(Runtime(t)),
            Ev::Sleep(t) => u.push_back(Sleep(t)),
            Ev::Timer { timer, period_us } => u.push_back(Timer(timer, period_us)),
            Ev::Lock(m) => {
                self.lock_depth += 1;
                u.push_back(Lock(m));
            }
            Ev::Unlock(m) => {
                self.lock_depth -= 1;
                u.push_back(Unlock(m));
            }
            Ev::Wait { cond, mutex } => {
                u.extend([CondEnter(cond), Unlock(mutex), CondBlock(cond), Lock(mutex)])
            }
            Ev::Signal(c) => u.push_back(Signal(c)),
            Ev::Broad(c) => u.push_back(Broadcast(c)),
            Ev::Barrier(b) => {
                let m = plan.barriers[b].mutex;
                u.extend([Lock(m), BarrierCheck(b), Unlock(m)]);
            }
            Ev::Suspend => {
                let (m, c) = plan.tasks[self.def].suspend;
                u.extend([
                    Lock(m),
                    CondEnter(c),
                    Unlock(m),
                    CondBlock(c),
                    Lock(m),
                    Unlock(m),
                ]);
            }
            Ev::Resume(d) => {
                let (m, c) = plan.tasks[d].suspend;
                u.extend([Lock(m), Broadcast(c), Unlock(m)]);
            }
            Ev::SemPost(s) => u.push_back(SemPost(s)),
            Ev::SemWait(s) => u.push_back(SemWait(s)),
            Ev::Yield => u.push_back(Yield),
            Ev::Fork(d) => u.push_back(Fork(d)),
        }
    }

    /// Starts a micro-operation: `Some(op)` to issue (with `self.active` set to resume it),
    /// `None` if it completed at once.
    fn start(&mut self, cx: &mut Ctx<'_>, u: Uop) -> Option<Op> {
        let plan = self.plan.clone();
        let sh_rc = self.sh.clone();
        let mut sh = sh_rc.borrow_mut();
        let ch = &mut self.charge;
        let now = cx.now();
        let (op, active) = match u {
            Uop::Init => {
                let th = &mut sh.threads[self.tid];
                th.pid = Some(cx.pid());
                th.task = Some(cx.task());
                if th.ind == 0 {
                    ch.clock(cx);
                    sh.t_zero = Some(now);
                }
                (None, Active::Done)
            }
            Uop::StartBarrier => match start_barrier_arrive(cx, &mut sh.sync.start, ch) {
                (op, Some(round)) => (op, Active::StartBarrier(round)),
                (op, None) => (op, Active::Done),
            },
            Uop::Delay => {
                let delay = plan.tasks[self.def].delay_us;
                self.t_first = sh.t_zero.unwrap_or(now) + delay * 1000;
                (
                    (delay > 0).then_some(Op::SleepUntil(self.t_first)),
                    Active::Done,
                )
            }
            Uop::PhaseEnter => {
                if self.entered != Some(self.phase) {
                    self.entered = Some(self.phase);
                    let p = &plan.tasks[self.def].phases[self.phase];
                    // rt-app's order at phase start: affinity, policy, membind, taskgroup
                    if let Some(g) = p.taskgroup.filter(|&g| self.taskgroup != Some(g)) {
                        self.uops.push_front(Uop::SetTaskgroup(g));
                    }
                    if let Some(s) = p.slice_ns.filter(|&s| self.slice != Some(s)) {
                        self.uops.push_front(Uop::SetSlice(s));
                    }
                    if let Some(n) = p.nice.filter(|&n| self.nice != Some(n)) {
                        self.uops.push_front(Uop::SetNice(n));
                    }
                    if let Some(r) = p.rt_priority.filter(|&r| self.rt_priority != Some(r)) {
                        self.uops.push_front(Uop::SetRtPrio(r));
                    }
                    if let Some((pol, nice, rt)) = p.sched.filter(|&s| self.sched != Some(s)) {
                        // before the phase's nice or slice (pushed to the front last)
                        self.uops.push_front(Uop::SetSched(pol, nice, rt));
                    }
                }
                (None, Active::Done)
            }
            Uop::IterStart => {
                self.row = Row::default();
                self.lock_depth = 0;
                ch.clock(cx);
                self.row.start_ns = now;
                self.issued = false;
                (None, Active::Done)
            }
            Uop::IterEnd => {
                ch.clock(cx);
                self.row.end_ns = now;
                if sh.running {
                    let cap = sh.log_cap;
                    sh.threads[self.tid].record(self.row, cap);
                }
                let task = &plan.tasks[self.def];
                self.phase_loop += 1;
                if self.phase_loop == task.phases[self.phase].loop_count {
                    self.phase_loop = 0;
                    self.phase += 1;
                    if self.phase == task.phases.len() {
                        self.phase = 0;
                        self.thread_loop += 1;
                    }
                }
                // A loop of pure user-space events still takes time on real hardware; on a
                // zero-cost machine charge 1 ns so that simulated time advances.
                let force = (!self.issued).then(|| Op::Run(u64::from(ch.pending == 0)));
                (force, Active::Done)
            }
            Uop::Run(t) => {
                self.row.c_duration_us += t;
                self.row.perf += plan.perf(t);
                ch.clock(cx);
                (Some(Op::Run(plan.run_work_ns(t))), Active::Work(now))
            }
            Uop::Runtime(t) => {
                self.row.c_duration_us += t;
                ch.clock(cx);
                (Some(Op::RunWall(t * 1000)), Active::Work(now))
            }
            Uop::Sleep(t) => (Some(Op::Sleep(t * 1000)), Active::Done),
            Uop::Timer(r, period) => {
                self.row.c_period_us += period;
                let ts = match r {
                    TimerRef::Shared(i) => &mut sh.timers[i],
                    TimerRef::Unique(i) => &mut self.timers[i],
                };
                if !ts.init {
                    ts.init = true;
                    ts.t_next = self.t_first;
                }
                // Instances sharing a timer each add a period, and a period may be as long as
                // the 2^33 s cap (campaign input): the sum stops at twice the cap, past the end
                // of any run, where expiry + timer slack still fits u64.
                ts.t_next = ts
                    .t_next
                    .saturating_add(period * 1000)
                    .min(2 * schedlab_engine::MAX_SIM_NS);
                ch.clock(cx);
                let next = ts.t_next;
                let slack = (i128::from(next) - i128::from(now)).clamp(-(1 << 62), 1 << 62);
                self.row.slack_us = us_signed(slack as i64);
                if now < next {
                    (Some(Op::SleepUntil(next)), Active::TimerSleep(next))
                } else {
                    if ts.relative {
                        ch.clock(cx);
                        ts.t_next = now;
                    }
                    self.row.wu_lat_us = 0;
                    self.row.missed += 1;
                    (None, Active::Done)
                }
            }
            Uop::Yield => (Some(Op::Yield), Active::Done),
            Uop::Fork(d) => {
                if sh.forks[d] >= FORKS_LIMIT {
                    let msg = format!(
                        "fork of task {:?} skipped: reached rt-app's limit of {FORKS_LIMIT} \
                         forks (rt-app would exit)",
                        plan.tasks[d].name
                    );
                    if !sh.errors.contains(&msg) {
                        sh.errors.push(msg);
                    }
                    (None, Active::Done)
                } else {
                    let n = sh.forks[d];
                    sh.forks[d] += 1;
                    let tid = sh.new_thread(&plan, d, Some(n));
                    ch.atomic(cx);
                    let live = sh.sync.live;
                    let v = cx.futex_load(live);
                    cx.futex_store(live, v + 1);
                    let mut attrs = plan.attrs(d, &sh.threads[tid].name);
                    attrs.tg = plan.tasks[d].taskgroup.map(|g| sh.groups[g]);
                    let program = ThreadProg::new(self.sh.clone(), plan.clone(), tid, d, true);
                    let spawn = Spawn {
                        program: Box::new(program),
                        thread: true,
                        attrs,
                    };
                    (Some(Op::Spawn(Box::new(spawn))), Active::Done)
                }
            }
            Uop::SetNice(n) => {
                self.nice = Some(n);
                (Some(Op::SetNice(n)), Active::Done)
            }
            Uop::SetSched(policy, nice, rt_priority) => {
                self.sched = Some((policy, nice, rt_priority));
                self.policy = policy;
                if policy.is_fair() {
                    self.nice = Some(nice);
                    self.rt_priority = None;
                } else {
                    self.rt_priority = Some(rt_priority);
                }
                (
                    Some(Op::SetScheduler {
                        policy,
                        nice,
                        rt_priority,
                    }),
                    Active::Done,
                )
            }
            Uop::SetRtPrio(r) => {
                self.rt_priority = Some(r);
                let policy = self.policy;
                (
                    Some(Op::SetScheduler {
                        policy,
                        nice: 0,
                        rt_priority: r,
                    }),
                    Active::Done,
                )
            }
            Uop::SetSlice(s) => {
                self.slice = Some(s);
                (Some(Op::SetSlice(s)), Active::Done)
            }
            Uop::SetTaskgroup(g) => {
                self.taskgroup = Some(g);
                (Some(Op::CgroupAttach(sh.groups[g])), Active::Done)
            }
            Uop::Lock(m) => {
                let mut st = LockSt::Try;
                let op = if sh.sync.pi {
                    pi_mutex_lock(cx, sh.sync.mutexes[m], &mut st, ch)
                } else {
                    mutex_lock(cx, sh.sync.mutexes[m], &mut st, ch)
                };
                (op, Active::Lock(m, st))
            }
            Uop::Unlock(m) => {
                let op = if sh.sync.pi {
                    pi_mutex_unlock(cx, sh.sync.mutexes[m], ch)
                } else {
                    mutex_unlock(cx, sh.sync.mutexes[m], ch)
                };
                (op, Active::Done)
            }
            Uop::CondEnter(c) => {
                cond_enter(cx, &mut sh.sync.conds[c], ch);
                (None, Active::Done)
            }
            Uop::CondBlock(c) => (cond_block(cx, &mut sh.sync.conds[c]), Active::CondBlock(c)),
            Uop::Signal(c) => (
                cond_signal(cx, &mut sh.sync.conds[c], false, ch),
                Active::Done,
            ),
            Uop::Broadcast(c) => (
                cond_signal(cx, &mut sh.sync.conds[c], true, ch),
                Active::Done,
            ),
            Uop::SemPost(s) => (sem_post(cx, &mut sh.sync.sems[s], ch), Active::Done),
            Uop::SemWait(s) => {
                let mut reg = false;
                let op = sem_wait(cx, &mut sh.sync.sems[s], &mut reg, ch);
                (op, Active::SemWait(s, reg))
            }
            Uop::BarrierCheck(b) => {
                let bo = &mut sh.sync.barriers[b];
                let (m, c) = (bo.mutex, bo.cond);
                if bo.waiting <= 0 {
                    self.uops.push_front(Uop::Broadcast(c));
                } else {
                    bo.waiting -= 1;
                    for u in [
                        Uop::BarrierInc(b),
                        Uop::Lock(m),
                        Uop::CondBlock(c),
                        Uop::Unlock(m),
                        Uop::CondEnter(c),
                    ] {
                        self.uops.push_front(u);
                    }
                }
                (None, Active::Done)
            }
            Uop::BarrierInc(b) => {
                sh.sync.barriers[b].waiting += 1;
                (None, Active::Done)
            }
            Uop::LiveDec => {
                ch.atomic(cx);
                let live = sh.sync.live;
                let v = cx.futex_load(live);
                cx.futex_store(live, v.saturating_sub(1));
                (Some(Op::FutexWake { futex: live, nr: 1 }), Active::Done)
            }
            Uop::Exit => {
                sh.threads[self.tid].exited = true;
                self.stage = Stage::Dead;
                (Some(Op::Exit), Active::Done)
            }
        };
        if op.is_some() {
            self.active = Some(active);
        }
        op
    }

    /// Continues the micro-operation whose system call just returned.
    fn resume(&mut self, cx: &mut Ctx<'_>, a: Active) -> Option<Op> {
        let sh_rc = self.sh.clone();
        let mut sh = sh_rc.borrow_mut();
        let ch = &mut self.charge;
        let (op, next) = match a {
            Active::Done => (None, a),
            Active::Lock(m, mut st) => {
                let op = if sh.sync.pi {
                    pi_mutex_lock(cx, sh.sync.mutexes[m], &mut st, ch)
                } else {
                    mutex_lock(cx, sh.sync.mutexes[m], &mut st, ch)
                };
                (op, Active::Lock(m, st))
            }
            Active::CondBlock(c) => (cond_block(cx, &mut sh.sync.conds[c]), a),
            Active::SemWait(s, mut reg) => {
                let op = sem_wait(cx, &mut sh.sync.sems[s], &mut reg, ch);
                (op, Active::SemWait(s, reg))
            }
            Active::StartBarrier(round) => (start_barrier_recheck(cx, &sh.sync.start, round), a),
            Active::Work(start) => {
                ch.clock(cx);
                self.row.run_us += us(cx.now() - start);
                (None, a)
            }
            Active::TimerSleep(expiry) => {
                ch.clock(cx);
                self.row.wu_lat_us += us(cx.now().saturating_sub(expiry));
                (None, a)
            }
        };
        if op.is_some() {
            self.active = Some(next);
        }
        op
    }

    fn step(&mut self, cx: &mut Ctx<'_>) -> Option<Op> {
        if let Some(a) = self.active.take() {
            return self.resume(cx, a);
        }
        match self.uops.pop_front() {
            Some(u) => self.start(cx, u),
            None => {
                self.refill();
                None
            }
        }
    }
}

impl Program for ThreadProg {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        // The results of the calls are not needed: every blocking primitive re-reads the
        // futex words it depends on.
        if let Some(op) = self.held.take() {
            return op;
        }
        loop {
            if let Some(op) = self.step(cx) {
                self.issued = true;
                return self.charge.emit(op, &mut self.held);
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MainStage {
    Start,
    Spawn,
    Sleep,
    Shutdown,
    Wake,
    Join,
    Done,
}

/// rt-app's main thread: creates the threads, sleeps `duration`, stops them and joins them.
pub(crate) struct MainProg {
    sh: Rc<RefCell<Shared>>,
    plan: Rc<Plan>,
    stage: MainStage,
    next_thread: usize,
    wakes: VecDeque<Op>,
    charge: Charge,
    held: Option<Op>,
}

impl MainProg {
    pub fn new(sh: Rc<RefCell<Shared>>, plan: Rc<Plan>) -> MainProg {
        MainProg {
            sh,
            plan,
            stage: MainStage::Start,
            next_thread: 0,
            wakes: VecDeque::new(),
            charge: Charge::default(),
            held: None,
        }
    }

    /// `__shutdown(true)`: stop the threads and wake every one blocked in user space.
    fn shutdown(&mut self, cx: &mut Ctx<'_>) {
        let mut sh = self.sh.borrow_mut();
        sh.running = false;
        sh.stopped_at = Some(cx.now());
        let ch = &mut self.charge;
        for c in sh.sync.conds.iter_mut() {
            if let Some(op) = cond_signal(cx, c, true, ch) {
                self.wakes.push_back(op);
            }
        }
        for s in &sh.sync.sems {
            let v = cx.futex_load(s.word);
            cx.futex_store(s.word, v | SEM_SHUTDOWN);
            if s.nwaiters > 0 {
                self.wakes.push_back(Op::FutexWake {
                    futex: s.word,
                    nr: WAKE_ALL,
                });
            }
        }
    }
}

impl Program for MainProg {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        if let Some(op) = self.held.take() {
            return op;
        }
        loop {
            let op = match self.stage {
                MainStage::Start => {
                    self.charge.clock(cx);
                    self.sh.borrow_mut().t_start = cx.now();
                    self.stage = MainStage::Spawn;
                    continue;
                }
                MainStage::Spawn => {
                    let Some(&def) = self.plan.initial.get(self.next_thread) else {
                        self.stage = MainStage::Sleep;
                        continue;
                    };
                    self.next_thread += 1;
                    let mut sh = self.sh.borrow_mut();
                    let tid = sh.new_thread(&self.plan, def, None);
                    self.charge.atomic(cx);
                    let live = sh.sync.live;
                    let v = cx.futex_load(live);
                    cx.futex_store(live, v + 1);
                    let mut attrs = self.plan.attrs(def, &sh.threads[tid].name);
                    attrs.tg = self.plan.tasks[def].taskgroup.map(|g| sh.groups[g]);
                    let program =
                        ThreadProg::new(self.sh.clone(), self.plan.clone(), tid, def, false);
                    Op::Spawn(Box::new(Spawn {
                        program: Box::new(program),
                        thread: true,
                        attrs,
                    }))
                }
                MainStage::Sleep => match self.plan.duration_ns {
                    Some(d) => {
                        self.stage = MainStage::Shutdown;
                        Op::Sleep(d)
                    }
                    None => {
                        self.stage = MainStage::Join;
                        continue;
                    }
                },
                MainStage::Shutdown => {
                    self.shutdown(cx);
                    self.stage = MainStage::Wake;
                    continue;
                }
                MainStage::Wake => match self.wakes.pop_front() {
                    Some(op) => op,
                    None => {
                        self.stage = MainStage::Join;
                        continue;
                    }
                },
                MainStage::Join => {
                    let live = self.sh.borrow().sync.live;
                    match cx.futex_load(live) {
                        0 => {
                            self.stage = MainStage::Done;
                            Op::Exit
                        }
                        v => Op::FutexWait {
                            futex: live,
                            val: v,
                        },
                    }
                }
                MainStage::Done => Op::Exit,
            };
            return self.charge.emit(op, &mut self.held);
        }
    }
}
