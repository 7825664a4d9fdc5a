//! The user-space synchronisation objects of an rt-app process, modelled on glibc/NPTL over the
//! kernel's futexes (workloads.md §1.4): default mutexes, condition variables, POSIX semaphores,
//! rt-app's barrier (mutex + condvar + counter) and the start barrier every thread meets.
//!
//! Each blocking primitive is a small state machine: a call does the user-space part at once
//! (the simulation is single-threaded, so one call is one atomic step) and returns the system
//! call to issue next, or `None` when the primitive is complete. The caller re-enters it with
//! the same state after the system call returns. User-space atomics are charged through
//! [`Charge`] as `c_atomic` of CPU work, paid before the next system call is issued.

use schedlab_sched::ipc::FutexId;
use schedlab_sched::{Ctx, Op};

/// `FUTEX_WAKE` count that wakes everybody (glibc passes `INT_MAX`).
pub(crate) const WAKE_ALL: u32 = i32::MAX as u32;

/// Bit set in a semaphore word when rt-app shuts down: every waiter returns without a token.
/// (Real rt-app has no semaphores in its shutdown path; without this a thread blocked in
/// `sem_wait` would keep the process alive forever.)
pub(crate) const SEM_SHUTDOWN: u32 = 1 << 31;

/// CPU time owed by a program for user-space work done between system calls (atomics, clock
/// reads), in ns at the reference core.
#[derive(Debug, Default)]
pub(crate) struct Charge {
    pub pending: u64,
}

impl Charge {
    /// One atomic read-modify-write (`c_atomic`).
    pub fn atomic(&mut self, cx: &Ctx<'_>) {
        self.pending += cx.costs().c_atomic.0;
    }
    /// One `clock_gettime` through the vDSO (`c_clock`).
    pub fn clock(&mut self, cx: &Ctx<'_>) {
        self.pending += cx.costs().c_clock.0;
    }
    /// Turns `op` into what the program issues now: the owed work is folded into a `Run`, or
    /// issued first as its own `Run` with `op` held back for the next call.
    pub fn emit(&mut self, op: Op, held: &mut Option<Op>) -> Op {
        let p = std::mem::take(&mut self.pending);
        if p == 0 {
            return op;
        }
        match op {
            Op::Run(w) => Op::Run(w + p),
            other => {
                *held = Some(other);
                Op::Run(p)
            }
        }
    }
}

/// A condition variable. `seq` is the futex word waiters sleep on; `waiters` counts threads
/// inside `cond_wait`, `wakeups` the signals they have not consumed yet.
#[derive(Debug)]
pub(crate) struct CondVar {
    pub seq: FutexId,
    pub waiters: u32,
    pub wakeups: u32,
}

/// A POSIX semaphore (glibc "new" semaphore: value in the futex word, waiter count beside it).
#[derive(Debug)]
pub(crate) struct Sem {
    pub word: FutexId,
    pub nwaiters: u32,
}

/// rt-app's barrier resource: `waiting` starts at users − 1 and counts down to the last
/// arriver, which broadcasts (rt-app.c `run_event`, `rtapp_barrier`). A woken waiter adds
/// itself back only after it has re-taken the mutex, so when the barrier is met in a loop the
/// last arriver can come round again, find 0 and pass a second time: the users drift apart
/// and, with finite loops, the others end up waiting for a thread that has finished. This is
/// rt-app's algorithm and is kept as it is.
#[derive(Debug)]
pub(crate) struct BarrierObj {
    pub mutex: usize,
    pub cond: usize,
    pub waiting: i64,
}

/// The `pthread_barrier` rt-app's threads meet before starting (`threads_barrier`), in the
/// glibc style: a round counter in a futex word; the last arriver advances it and wakes all.
#[derive(Debug)]
pub(crate) struct StartBarrier {
    pub round: FutexId,
    pub count: u32,
    pub arrived: u32,
}

/// Every synchronisation object of one rt-app process.
#[derive(Debug)]
pub(crate) struct SyncObjs {
    pub mutexes: Vec<FutexId>,
    /// The mutexes are priority-inheritance mutexes (`pi_enabled`).
    pub pi: bool,
    pub conds: Vec<CondVar>,
    pub sems: Vec<Sem>,
    pub barriers: Vec<BarrierObj>,
    pub start: StartBarrier,
    /// Threads not yet finished; `pthread_join` in main waits on it.
    pub live: FutexId,
}

// ============================================================================ mutex

/// Where a `pthread_mutex_lock` is (glibc `lll_lock`: word 0 = free, 1 = locked, 2 = locked
/// with possible waiters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LockSt {
    /// Fast path: CAS 0 → 1.
    Try,
    /// Slow path: exchange in 2; acquired if the old value was 0.
    Xchg,
    /// Back from `FUTEX_WAIT` (woken or EAGAIN): exchange again.
    Blocked,
}

/// `pthread_mutex_lock` (default type). `None` once the mutex is held.
pub(crate) fn mutex_lock(
    cx: &mut Ctx<'_>,
    w: FutexId,
    st: &mut LockSt,
    ch: &mut Charge,
) -> Option<Op> {
    loop {
        match *st {
            LockSt::Try => {
                ch.atomic(cx);
                if cx.futex_cas(w, 0, 1) {
                    return None;
                }
                *st = LockSt::Xchg;
            }
            LockSt::Xchg => {
                ch.atomic(cx);
                let old = cx.futex_load(w);
                cx.futex_store(w, 2);
                if old == 0 {
                    return None;
                }
                *st = LockSt::Blocked;
                return Some(Op::FutexWait { futex: w, val: 2 });
            }
            LockSt::Blocked => *st = LockSt::Xchg,
        }
    }
}

/// `pthread_mutex_lock` of a PTHREAD_PRIO_INHERIT mutex (rt-app `pi_enabled`): the TID
/// compare-and-swap in user space, else `FUTEX_LOCK_PI`, which sleeps by priority and boosts
/// the owner (rt-dl.md §2.11); when it returns the caller owns the mutex. `None` once held.
pub(crate) fn pi_mutex_lock(
    cx: &mut Ctx<'_>,
    w: FutexId,
    st: &mut LockSt,
    ch: &mut Charge,
) -> Option<Op> {
    match *st {
        LockSt::Try => {
            ch.atomic(cx);
            if cx.futex_pi_trylock(w) {
                return None;
            }
            *st = LockSt::Blocked;
            Some(Op::FutexLockPi { futex: w })
        }
        // back from FUTEX_LOCK_PI: the kernel handed the lock over
        LockSt::Xchg | LockSt::Blocked => None,
    }
}

/// `pthread_mutex_unlock` of a PTHREAD_PRIO_INHERIT mutex: the TID compare-and-swap back to 0,
/// else (waiters queued) `FUTEX_UNLOCK_PI`.
pub(crate) fn pi_mutex_unlock(cx: &mut Ctx<'_>, w: FutexId, ch: &mut Charge) -> Option<Op> {
    ch.atomic(cx);
    (!cx.futex_pi_tryunlock(w)).then_some(Op::FutexUnlockPi { futex: w })
}

/// `pthread_mutex_unlock` (default type): exchange in 0; `FUTEX_WAKE(1)` if the word said
/// there may be waiters (glibc `lll_unlock`, which may wake nobody).
pub(crate) fn mutex_unlock(cx: &mut Ctx<'_>, w: FutexId, ch: &mut Charge) -> Option<Op> {
    ch.atomic(cx);
    let old = cx.futex_load(w);
    cx.futex_store(w, 0);
    (old == 2).then_some(Op::FutexWake { futex: w, nr: 1 })
}

// ============================================================================ condvar

/// First half of `pthread_cond_wait`: register as a waiter (before the mutex is released, so a
/// signal sent after the release finds this thread).
pub(crate) fn cond_enter(cx: &Ctx<'_>, c: &mut CondVar, ch: &mut Charge) {
    ch.atomic(cx);
    c.waiters += 1;
}

/// Second half of `pthread_cond_wait`, after the mutex was released: consume a wakeup if one
/// is pending, else `FUTEX_WAIT` on the sequence word (a signal between reading it and blocking
/// changes it, so the wait returns EAGAIN and the loop looks again). `None` once woken; the
/// caller then re-acquires the mutex.
pub(crate) fn cond_block(cx: &Ctx<'_>, c: &mut CondVar) -> Option<Op> {
    if c.wakeups > 0 {
        c.wakeups -= 1;
        c.waiters -= 1;
        return None;
    }
    Some(Op::FutexWait {
        futex: c.seq,
        val: cx.futex_load(c.seq),
    })
}

/// `pthread_cond_signal` (`all` = false) or `pthread_cond_broadcast`: nothing but an atomic
/// when nobody waits; otherwise hand out wakeups, bump the sequence and `FUTEX_WAKE` one or
/// all (glibc ≥ 2.25 wakes rather than requeues; each woken thread then contends for the
/// mutex).
pub(crate) fn cond_signal(
    cx: &mut Ctx<'_>,
    c: &mut CondVar,
    all: bool,
    ch: &mut Charge,
) -> Option<Op> {
    ch.atomic(cx);
    if c.waiters <= c.wakeups {
        return None;
    }
    let (n, nr) = if all {
        (c.waiters - c.wakeups, WAKE_ALL)
    } else {
        (1, 1)
    };
    c.wakeups += n;
    let s = cx.futex_load(c.seq).wrapping_add(1);
    cx.futex_store(c.seq, s);
    Some(Op::FutexWake { futex: c.seq, nr })
}

// ============================================================================ semaphore

/// `sem_wait`: take a token if there is one (user space only), else register as a waiter and
/// `FUTEX_WAIT` while the value is 0. `registered` is the caller's memory of having registered.
/// Returns `None` when done; after shutdown it returns without a token.
pub(crate) fn sem_wait(
    cx: &mut Ctx<'_>,
    s: &mut Sem,
    registered: &mut bool,
    ch: &mut Charge,
) -> Option<Op> {
    ch.atomic(cx);
    let v = cx.futex_load(s.word);
    if v & SEM_SHUTDOWN != 0 || v > 0 {
        if v & SEM_SHUTDOWN == 0 {
            cx.futex_store(s.word, v - 1);
        }
        if *registered {
            s.nwaiters -= 1;
            *registered = false;
        }
        return None;
    }
    if !*registered {
        s.nwaiters += 1;
        *registered = true;
    }
    Some(Op::FutexWait {
        futex: s.word,
        val: 0,
    })
}

/// `sem_post`: increment, and `FUTEX_WAKE(1)` if a waiter is registered.
pub(crate) fn sem_post(cx: &mut Ctx<'_>, s: &mut Sem, ch: &mut Charge) -> Option<Op> {
    ch.atomic(cx);
    let v = cx.futex_load(s.word);
    cx.futex_store(s.word, v.wrapping_add(1));
    (s.nwaiters > 0).then_some(Op::FutexWake {
        futex: s.word,
        nr: 1,
    })
}

// ============================================================================ start barrier

/// `pthread_barrier_wait` on the start barrier. Returns the op to issue and, for a waiter, the
/// round it waits to see pass (`None` for the last arriver, which is done after its wake).
pub(crate) fn start_barrier_arrive(
    cx: &mut Ctx<'_>,
    b: &mut StartBarrier,
    ch: &mut Charge,
) -> (Option<Op>, Option<u32>) {
    ch.atomic(cx);
    b.arrived += 1;
    let round = cx.futex_load(b.round);
    if b.arrived >= b.count {
        b.arrived = 0;
        cx.futex_store(b.round, round.wrapping_add(1));
        (
            Some(Op::FutexWake {
                futex: b.round,
                nr: WAKE_ALL,
            }),
            None,
        )
    } else {
        (
            Some(Op::FutexWait {
                futex: b.round,
                val: round,
            }),
            Some(round),
        )
    }
}

/// A waiter back from `FUTEX_WAIT` on the start barrier: done once the round has passed.
pub(crate) fn start_barrier_recheck(cx: &Ctx<'_>, b: &StartBarrier, round: u32) -> Option<Op> {
    (cx.futex_load(b.round) == round).then_some(Op::FutexWait {
        futex: b.round,
        val: round,
    })
}
