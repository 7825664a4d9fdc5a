//! The schbench simulation (workloads.md §4.2): the main, message and worker threads as task
//! programs over the kernel's syscall surface, the user-space memory they share (futex words,
//! the lock-free wait lists, the per-CPU locks, the statistics), and the [`Workload`] that
//! creates them and renders what schbench prints.
//!
//! Structure, following masoncl/schbench `schbench.c` (the copy read for §4):
//!
//! ```text
//! main ──clone──▶ message thread i (i < m) ──clone──▶ worker j (j < t)
//!  │ every ~1 s (sleep(1)): RPS sample, interval report, -z zeroing
//!  │ after -r s: stopping = 1; for each message thread: fpost + pthread_join
//!  ▼ final report
//! worker:  futex=BLOCKED, wake_time=now, xlist_add, fpost(msg), fwait(self),
//!          wakeup latency = now − wake_time, then the request:
//!          work_start=now, usleep(s), lock this CPU (spin), n × matmul, unlock,
//!          request latency = now − work_start
//! message: futex=BLOCKED, splice the list, one timestamp for the whole list, fpost each
//!          worker, fwait(self); when stopping: wake the list twice, then fpost+join each worker
//! ```
//!
//! Model decisions (where the spec is silent):
//!
//! * **Clock.** `gettimeofday` is the simulated time in whole µs (`now / 1000`); `tvdelta`
//!   is the difference of two such readings, 0 if negative, as schbench's `tvsub` does.
//! * **User-space costs.** Each clock read costs `c_clock` and each atomic (CAS, list splice,
//!   trylock, unlock) `c_atomic`. They are accumulated and charged as one `Run` just before the
//!   thread's next `Run`, blocking call or exit, so they cost CPU time without adding events;
//!   the instant at which each is charged is off by less than their sum (< 0.1 µs). Values
//!   are read and written at the instant the program is asked for its next operation. A
//!   clock read costs at least 1 ns, so that no loop can run forever at one instant.
//! * **Per-CPU lock spin** (`lock_this_cpu`, §1.10): `sched_getcpu()`, then `trylock` in a
//!   loop of [`SPIN_CHUNK_NS`] of user work; the lock is re-tested at the end of each chunk,
//!   so a spinner notices a release at most one chunk late, and a preempted spinner only
//!   when it runs again and finishes its chunk. After acquiring, the CPU is read again and a
//!   migrated spinner releases and retries on its new CPU's lock, as schbench does.
//! * **Matrix work.** `n × W_matmul` of reference-core work in one `Run`; with `SIM_JITTER`
//!   each multiplication gets its own draw of the platform's cost jitter (§0.2) from the
//!   worker's random stream.
//!   `W_matmul` is the platform file's `[programs.schbench] w_matmul` (with its provenance;
//!   [`W_MATMUL_DEFAULT_NS`] where the platform gives none) scaled by `(matrix_size / 104)³`
//!   for `-F` other than 256 KiB.
//! * **Pinning.** `-M` and `-W` are applied when the thread is created (schbench calls
//!   `pthread_setaffinity_np` on itself right after it starts); they override `cpus=`, as a
//!   `sched_setaffinity` call overrides `taskset`. Unpinned workers get the placement's mask
//!   (schbench pins a message thread only after it created its workers).
//! * **"sched delay" in interval reports.** Programs cannot read other threads' schedstat
//!   while the run goes on, so every interval line shows the per-thread
//!   `run_delay / pcount` averages at the end of the run (Deviation). The final line is
//!   `0 0`, as in the real program (it reads `/proc/<tid>/schedstat` after the joins).
//! * **Main thread housekeeping** (merging histograms, printing) costs no CPU time.
//! * **Not modelled:** RPS mode (`-R`) and auto-RPS (`-A`) are refused with
//!   [`WorkloadError::Unsupported`]; pipe mode (`-p`) is modelled (page `memset` at
//!   `c_copy_per_KB`, no sleep, no matrix work).
//! * **A run cut short** (the simulation ends before schbench finished, e.g. `--duration`
//!   below `-r`): the final report is built from the statistics at that moment.

use super::histogram::Histogram;
use super::options::{parse, CpuPin, Options};
use super::output::{
    collect_sched_delay, render, rps_sample, Event, IntervalReport, Results, SchedDelay, Schedstat,
};
use crate::workload::{Better, Env, Metric, Workload, WorkloadError};
use schedlab_platform::CpuMask;
use schedlab_sched::ipc::FutexId;
use schedlab_sched::sched::TaskId;
use schedlab_sched::{Ctx, Op, Procfs, Program, Spawn, Sys, SysResult, TaskAttrs};
use std::cell::RefCell;
use std::rc::Rc;

/// schbench's futex word values.
const FUTEX_BLOCKED: u32 = 0;
const FUTEX_RUNNING: u32 = 1;
const USEC_PER_SEC: u64 = 1_000_000;
/// Simulated time allowed after `-r` for the threads to finish (see `duration_hint`).
const TAIL_MARGIN_NS: u64 = 2_000_000_000;

/// Length of one busy-wait step of the per-CPU lock spin, in ns of reference-core work
/// (default: 1 µs). One `trylock` + `PAUSE`/`YIELD` iteration of the real loop takes tens of
/// ns; 1 µs bounds the detection delay of a release far below the request time (ms) while
/// keeping a spin of a whole slice to a few thousand simulator events.
pub const SPIN_CHUNK_NS: u64 = 1_000;

/// Side of the matrices `W_matmul` values are given for (`-F 256`).
pub const W_MATMUL_SIZE: u64 = 104;

/// `W_matmul` on platforms whose file gives no `[programs.schbench] w_matmul`: workloads.md
/// §4.2's estimate for a 2.5–3 GHz server core (1.2–1.7 ms per 104³ multiplication), upper end
/// = the seed-002 anchor, applied to the platform's reference core (**unverified**). The
/// platform files that have a figure of their own carry it with its provenance (altra-80
/// 1.9 ms, xeon-2s-64 and x86-2s-80 1.7 ms); the model reads it through
/// `Sys::program_cost`. The calibration rule of §4.2 (`-C` request p50 on the machine) has
/// not been applied: no platform has a published `-C` figure.
pub const W_MATMUL_DEFAULT_NS: u64 = 1_700_000;

/// Reference-core ns of one multiplication of `size × size` matrices, given `w_matmul`, the
/// cost of one 104 × 104 multiplication (≈ 1.12 M multiply-adds on 8-byte integers):
/// `w_matmul × (size / 104)³` (the naive triple loop does size³ multiply-adds).
pub fn matmul_ns(w_matmul: u64, size: u64) -> u64 {
    let w = w_matmul as u128;
    let s = size as u128;
    let b = W_MATMUL_SIZE as u128;
    (w * s * s * s / (b * b * b)) as u64
}

/// Builds the schbench workload from the words after `schbench`.
pub fn workload(line: &str, args: &[String]) -> Result<Box<dyn Workload>, WorkloadError> {
    let opts = parse(args).map_err(|e| WorkloadError::option(line, e.to_string()))?;
    if opts.rps_mode() {
        let which = if opts.auto_rps > 0 {
            "-A (auto-RPS)"
        } else {
            "-R (fixed requests per second)"
        };
        return Err(WorkloadError::Unsupported {
            line: line.to_string(),
            message: format!(
                "schbench {which} is not modelled yet; the saturating mode (no -R/-A), -C \
                 and -p are"
            ),
        });
    }
    Ok(Box::new(Schbench {
        line: line.to_string(),
        opts,
        shared: None,
    }))
}

/// The schbench model.
pub struct Schbench {
    line: String,
    opts: Options,
    shared: Option<Rc<RefCell<Shared>>>,
}

/// One worker's `struct thread_data` (the parts the model uses).
#[derive(Debug, Default)]
struct WorkerData {
    futex: Option<FutexId>,
    /// µs (gettimeofday).
    wake_time_us: u64,
    wakeup: Histogram,
    request: Histogram,
    loop_count: u64,
    /// µs since the worker started (`td->runtime`).
    runtime_us: u64,
    pid: i32,
    task: Option<TaskId>,
}

/// One message thread's `struct thread_data`.
#[derive(Debug, Default)]
struct MsgData {
    futex: Option<FutexId>,
    /// `xlist_add` prepends: the last element is the head.
    list: Vec<usize>,
    pid: i32,
    task: Option<TaskId>,
}

/// What the main thread computes when the run ends.
#[derive(Debug, Clone)]
struct Final {
    wakeup: Histogram,
    request: Histogram,
    loop_count: u64,
    loop_runtime_us: u64,
}

/// The process's memory: everything the threads share.
#[derive(Debug)]
struct Shared {
    m: usize,
    t: usize,
    sleep_ns: u64,
    /// Matrix multiplications per request (`-n`).
    operations: u64,
    /// Reference-core ns of one multiplication (`W_matmul` for the matrix size).
    matmul_ns: u64,
    locking: bool,
    calibrate: bool,
    pipe_bytes: u64,
    runtime_usec: u64,
    warmup_usec: u64,
    interval_usec: u64,
    zero_usec: u64,
    warmup_secs: u32,
    msg_cpus: Vec<Option<CpuMask>>,
    worker_cpus: CpuMask,
    stopping: bool,
    msgs: Vec<MsgData>,
    /// Worker `j` of message thread `i` is `workers[i * t + j]`.
    workers: Vec<WorkerData>,
    /// `per_cpu_locks`: the worker holding each CPU's lock.
    locks: Vec<Option<usize>>,
    rps: Histogram,
    events: Vec<Event>,
    main_task: Option<TaskId>,
    fin: Option<Final>,
}

impl Shared {
    /// schbench `reset_thread_stats()`.
    fn reset_thread_stats(&mut self) {
        self.rps.reset();
        for w in &mut self.workers {
            w.wakeup.reset();
            w.request.reset();
        }
    }

    /// schbench `combine_message_thread_stats()`.
    fn combine(&self) -> Final {
        let mut f = Final {
            wakeup: Histogram::new(),
            request: Histogram::new(),
            loop_count: 0,
            loop_runtime_us: 0,
        };
        for w in &self.workers {
            f.wakeup.combine(&w.wakeup);
            f.request.combine(&w.request);
            f.loop_count += w.loop_count;
            f.loop_runtime_us += w.runtime_us;
        }
        f
    }

    fn loop_count(&self) -> u64 {
        self.workers.iter().map(|w| w.loop_count).sum()
    }

    fn futex_of_worker(&self, w: usize) -> FutexId {
        self.workers[w].futex.expect("futexes are created by main")
    }

    fn futex_of_msg(&self, m: usize) -> FutexId {
        self.msgs[m].futex.expect("futexes are created by main")
    }
}

type Sh = Rc<RefCell<Shared>>;

fn now_us(cx: &Ctx<'_>) -> u64 {
    cx.now() / 1000
}

/// schbench `tvdelta()`: µs between two readings, 0 if time went backwards.
fn tvdelta(start_us: u64, stop_us: u64) -> u64 {
    stop_us.saturating_sub(start_us)
}

/// `c_clock`, at least 1 ns: every worker loop reads the clock, so even a loop with no work
/// on a zero-cost machine (`-s 0 -n 0`, pipe mode) advances simulated time.
fn clock_cost(cx: &Ctx<'_>) -> u64 {
    cx.costs().c_clock.0.max(1)
}

fn atomic_cost(cx: &Ctx<'_>) -> u64 {
    cx.costs().c_atomic.0
}

/// User-space cost accumulated since the last charge (see the module docs).
#[derive(Debug, Default)]
struct Pending(u64);

impl Pending {
    fn add(&mut self, ns: u64) {
        self.0 += ns;
    }
    /// `Run(extra + pending)`.
    fn run(&mut self, extra: u64) -> Op {
        Op::Run(extra + std::mem::take(&mut self.0))
    }
    /// Charges what is pending before `op`; `None` when nothing is.
    fn flush(&mut self) -> Option<Op> {
        (self.0 > 0).then(|| Op::Run(std::mem::take(&mut self.0)))
    }
}

// ========================================================================= main thread

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MainState {
    Init,
    /// Creating message thread `i`.
    Spawn(usize),
    Round,
    Sleep,
    /// Posting message thread `i` at the end.
    Stop(usize),
    /// Joining message thread `i`.
    Join(usize),
    Exit,
}

struct MainProg {
    sh: Sh,
    st: MainState,
    pending: Pending,
    msg_pids: Vec<i32>,
    reaped: Vec<i32>,
    start_us: u64,
    last_calc_us: u64,
    last_rps_calc_us: u64,
    zero_time_us: u64,
    last_loop_count: u64,
    warmup_done: bool,
}

impl MainProg {
    /// One pass of `sleep_for_runtime()`'s loop at time `now`; true when the runtime is up.
    fn round(&mut self, now: u64) -> bool {
        let mut sh = self.sh.borrow_mut();
        let runtime_delta = tvdelta(self.start_us, now);
        let done = runtime_delta >= sh.runtime_usec;
        let pipe = sh.pipe_bytes > 0;
        if !pipe && runtime_delta > sh.warmup_usec && !self.warmup_done && sh.warmup_secs > 0 {
            self.warmup_done = true;
            sh.events.push(Event::WarmupDone);
            self.zero_time_us = now;
            sh.reset_thread_stats();
        } else if !pipe {
            let delta = tvdelta(self.last_rps_calc_us, now);
            let loops = sh.loop_count();
            let (rps, sample) = rps_sample(loops - self.last_loop_count, delta);
            self.last_loop_count = loops;
            self.last_rps_calc_us = now;
            sh.rps.add_lat(sample);
            if tvdelta(self.last_calc_us, now) >= sh.interval_usec {
                let f = sh.combine();
                self.last_calc_us = now;
                let report = IntervalReport {
                    runtime_secs: runtime_delta / USEC_PER_SEC,
                    wakeup: f.wakeup,
                    request: f.request,
                    rps: sh.rps.clone(),
                    // filled in by `output()`, see the module docs
                    sched_delay: SchedDelay::default(),
                    current_rps: rps,
                };
                sh.events.push(Event::Interval(report));
            }
        }
        if sh.zero_usec > 0 && tvdelta(self.zero_time_us, now) > sh.zero_usec {
            self.zero_time_us = now;
            sh.reset_thread_stats();
        }
        done
    }
}

impl Program for MainProg {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        // the result of the previous operation, consumed by the first state that reads it
        let mut last = Some(last);
        loop {
            match self.st {
                MainState::Init => {
                    let mut sh = self.sh.borrow_mut();
                    sh.main_task = Some(cx.task());
                    // calloc'd thread_data: every futex word starts at 0 = FUTEX_BLOCKED
                    for i in 0..sh.m {
                        sh.msgs[i].futex = Some(cx.new_futex(FUTEX_BLOCKED));
                    }
                    for j in 0..sh.workers.len() {
                        sh.workers[j].futex = Some(cx.new_futex(FUTEX_BLOCKED));
                    }
                    self.st = MainState::Spawn(0);
                }
                MainState::Spawn(i) => {
                    if let Some(SysResult::Pid(p)) = last.take() {
                        self.msg_pids.push(p);
                    }
                    let (m, cpus) = {
                        let sh = self.sh.borrow();
                        (sh.m, sh.msg_cpus.get(i).cloned().flatten())
                    };
                    if i == m {
                        let now = now_us(cx);
                        self.start_us = now;
                        self.last_calc_us = now;
                        self.last_rps_calc_us = now;
                        self.zero_time_us = now;
                        self.pending.add(clock_cost(cx));
                        self.st = MainState::Round;
                        continue;
                    }
                    self.st = MainState::Spawn(i + 1);
                    let prog = MsgProg::new(self.sh.clone(), i);
                    return Op::Spawn(Box::new(Spawn {
                        program: Box::new(prog),
                        thread: true,
                        attrs: TaskAttrs {
                            comm: Some("schbench-msg".to_string()),
                            cpus,
                            ..TaskAttrs::default()
                        },
                    }));
                }
                MainState::Round => {
                    let now = now_us(cx);
                    self.pending.add(clock_cost(cx));
                    if self.round(now) {
                        self.sh.borrow_mut().stopping = true;
                        self.st = MainState::Stop(0);
                    } else {
                        self.st = MainState::Sleep;
                    }
                }
                MainState::Sleep => {
                    if let Some(op) = self.pending.flush() {
                        return op;
                    }
                    self.st = MainState::Round;
                    return Op::Sleep(USEC_PER_SEC * 1000);
                }
                MainState::Stop(i) => {
                    if i == self.msg_pids.len() {
                        self.st = MainState::Exit;
                        continue;
                    }
                    self.st = MainState::Join(i);
                    self.pending.add(atomic_cost(cx));
                    let f = self.sh.borrow().futex_of_msg(i);
                    if cx.futex_cas(f, FUTEX_BLOCKED, FUTEX_RUNNING) {
                        return Op::FutexWake { futex: f, nr: 1 };
                    }
                }
                MainState::Join(i) => {
                    if let Some(SysResult::Pid(p)) = last.take() {
                        self.reaped.push(p);
                    }
                    if self.reaped.contains(&self.msg_pids[i]) {
                        self.st = MainState::Stop(i + 1);
                        continue;
                    }
                    if let Some(op) = self.pending.flush() {
                        return op;
                    }
                    // pthread_join: wait for any of our threads until this one is reaped
                    return Op::WaitChild;
                }
                MainState::Exit => {
                    {
                        let mut sh = self.sh.borrow_mut();
                        if sh.fin.is_none() {
                            let f = sh.combine();
                            sh.fin = Some(f);
                        }
                    }
                    if let Some(op) = self.pending.flush() {
                        return op;
                    }
                    return Op::Exit;
                }
            }
        }
    }
}

// ========================================================================= message thread

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MsgState {
    Init,
    Spawn(usize),
    /// `td->futex = BLOCKED; xlist_wake_all()`; `second`: the extra pass when stopping.
    Top {
        second: bool,
    },
    /// Waking the detached list (pipe mode: `memset` first).
    Wake {
        second: bool,
        memset_done: bool,
    },
    /// `fwait()`: the CAS RUNNING → BLOCKED.
    Fwait,
    /// `fwait()`: the CAS failed, `FUTEX_WAIT` (then the CAS again).
    FutexWait,
    Stop(usize),
    Join(usize),
    Exit,
}

struct MsgProg {
    sh: Sh,
    idx: usize,
    st: MsgState,
    pending: Pending,
    /// The detached list, in wake order reversed (pop gives the next).
    batch: Vec<usize>,
    ts_us: u64,
    worker_pids: Vec<i32>,
    reaped: Vec<i32>,
}

impl MsgProg {
    fn new(sh: Sh, idx: usize) -> MsgProg {
        MsgProg {
            sh,
            idx,
            st: MsgState::Init,
            pending: Pending::default(),
            batch: Vec::new(),
            ts_us: 0,
            worker_pids: Vec::new(),
            reaped: Vec::new(),
        }
    }
}

impl Program for MsgProg {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        let mut last = Some(last);
        loop {
            match self.st {
                MsgState::Init => {
                    let mut sh = self.sh.borrow_mut();
                    sh.msgs[self.idx].pid = cx.pid();
                    sh.msgs[self.idx].task = Some(cx.task());
                    self.st = MsgState::Spawn(0);
                }
                MsgState::Spawn(j) => {
                    if let Some(SysResult::Pid(p)) = last.take() {
                        self.worker_pids.push(p);
                    }
                    let (t, cpus) = {
                        let sh = self.sh.borrow();
                        (sh.t, sh.worker_cpus.clone())
                    };
                    if j == t {
                        self.st = MsgState::Top { second: false };
                        continue;
                    }
                    self.st = MsgState::Spawn(j + 1);
                    let w = self.idx * t + j;
                    let prog = WorkerProg::new(self.sh.clone(), w, self.idx);
                    return Op::Spawn(Box::new(Spawn {
                        program: Box::new(prog),
                        thread: true,
                        attrs: TaskAttrs {
                            comm: Some("schbench-worker".to_string()),
                            cpus: Some(cpus),
                            ..TaskAttrs::default()
                        },
                    }));
                }
                MsgState::Top { second } => {
                    let mut sh = self.sh.borrow_mut();
                    if !second {
                        let f = sh.futex_of_msg(self.idx);
                        cx.futex_store(f, FUTEX_BLOCKED);
                    }
                    // xlist_splice: the head is the most recently added worker
                    self.batch = std::mem::take(&mut sh.msgs[self.idx].list);
                    self.batch.reverse();
                    // one timestamp for the whole list (§4.1 step 2)
                    self.ts_us = now_us(cx);
                    self.pending.add(clock_cost(cx) + atomic_cost(cx));
                    self.st = MsgState::Wake {
                        second,
                        memset_done: false,
                    };
                }
                MsgState::Wake {
                    second,
                    memset_done,
                } => {
                    let Some(&w) = self.batch.last() else {
                        let stopping = self.sh.borrow().stopping;
                        self.st = if second {
                            MsgState::Stop(0)
                        } else if stopping {
                            MsgState::Top { second: true }
                        } else {
                            MsgState::Fwait
                        };
                        continue;
                    };
                    let pipe = self.sh.borrow().pipe_bytes;
                    if pipe > 0 && !memset_done {
                        self.st = MsgState::Wake {
                            second,
                            memset_done: true,
                        };
                        return self.pending.run(memset_ns(cx, pipe));
                    }
                    self.batch.pop();
                    self.st = MsgState::Wake {
                        second,
                        memset_done: false,
                    };
                    let f = {
                        let mut sh = self.sh.borrow_mut();
                        sh.workers[w].wake_time_us = if pipe > 0 {
                            self.pending.add(clock_cost(cx));
                            now_us(cx)
                        } else {
                            self.ts_us
                        };
                        sh.futex_of_worker(w)
                    };
                    self.pending.add(atomic_cost(cx));
                    if cx.futex_cas(f, FUTEX_BLOCKED, FUTEX_RUNNING) {
                        return Op::FutexWake { futex: f, nr: 1 };
                    }
                }
                MsgState::Fwait => {
                    let f = self.sh.borrow().futex_of_msg(self.idx);
                    self.pending.add(atomic_cost(cx));
                    self.st = if cx.futex_cas(f, FUTEX_RUNNING, FUTEX_BLOCKED) {
                        MsgState::Top { second: false }
                    } else {
                        MsgState::FutexWait
                    };
                }
                MsgState::FutexWait => {
                    if let Some(op) = self.pending.flush() {
                        return op;
                    }
                    self.st = MsgState::Fwait;
                    let futex = self.sh.borrow().futex_of_msg(self.idx);
                    return Op::FutexWait {
                        futex,
                        val: FUTEX_BLOCKED,
                    };
                }
                MsgState::Stop(j) => {
                    if j == self.worker_pids.len() {
                        self.st = MsgState::Exit;
                        continue;
                    }
                    self.st = MsgState::Join(j);
                    let t = self.sh.borrow().t;
                    let f = self.sh.borrow().futex_of_worker(self.idx * t + j);
                    self.pending.add(atomic_cost(cx));
                    if cx.futex_cas(f, FUTEX_BLOCKED, FUTEX_RUNNING) {
                        return Op::FutexWake { futex: f, nr: 1 };
                    }
                }
                MsgState::Join(j) => {
                    if let Some(SysResult::Pid(p)) = last.take() {
                        self.reaped.push(p);
                    }
                    if self.reaped.contains(&self.worker_pids[j]) {
                        self.st = MsgState::Stop(j + 1);
                        continue;
                    }
                    if let Some(op) = self.pending.flush() {
                        return op;
                    }
                    return Op::WaitChild;
                }
                MsgState::Exit => {
                    if let Some(op) = self.pending.flush() {
                        return op;
                    }
                    return Op::Exit;
                }
            }
        }
    }
}

/// `memset` of a pipe-mode page of `bytes`, at the platform's copy rate.
fn memset_ns(cx: &Ctx<'_>, bytes: u64) -> u64 {
    cx.costs().c_copy_per_KB.0 * bytes / 1024
}

// ========================================================================= worker

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WorkerState {
    Init,
    /// Loop top: `if (stopping) break;` then `msg_and_wait()`.
    Top,
    /// `msg_and_wait()` after the pipe-mode `memset`: blocked, stamp, `xlist_add`, `fpost`.
    Post,
    /// After `fpost(&msg->futex)`.
    Posted,
    /// `fwait()`: the CAS RUNNING → BLOCKED.
    Fwait,
    /// `fwait()`: the CAS failed, `FUTEX_WAIT` (then the CAS again).
    FutexWait,
    /// Back from `fwait`: record the wakeup latency, start the request.
    Woken,
    /// `usleep(s)`, then `then`.
    Usleep {
        calibrate: bool,
    },
    /// `-C`: after the `usleep`, before `work_start`.
    CalibrateSlept,
    /// After the `usleep`: lock and work.
    Slept,
    /// `lock_this_cpu()`: spinning on the lock of CPU `cpu`.
    Lock {
        cpu: usize,
    },
    /// Matrix work done (holding the lock of `cpu` if any).
    Worked {
        cpu: Option<usize>,
    },
    Exit,
}

struct WorkerProg {
    sh: Sh,
    idx: usize,
    msg: usize,
    st: WorkerState,
    pending: Pending,
    start_us: u64,
    work_start_us: u64,
}

impl WorkerProg {
    fn new(sh: Sh, idx: usize, msg: usize) -> WorkerProg {
        WorkerProg {
            sh,
            idx,
            msg,
            st: WorkerState::Init,
            pending: Pending::default(),
            start_us: 0,
            work_start_us: 0,
        }
    }

    /// `do_work()`'s `n` matrix multiplications, each with its own draw of the platform's
    /// cost jitter (§0.2: every charge is jittered).
    fn work(&mut self, cx: &mut Ctx<'_>) -> u64 {
        let (n, w) = {
            let sh = self.sh.borrow();
            (sh.operations, sh.matmul_ns)
        };
        (0..n)
            .map(|_| cx.cost_jitter(w))
            .fold(0u64, u64::saturating_add)
    }

    /// `do_work()`: lock this CPU (unless `-L`/`-C`), then the matrix work.
    fn start_work(&mut self, cx: &mut Ctx<'_>) -> Op {
        if self.sh.borrow().locking {
            self.st = WorkerState::Lock { cpu: cx.cpu() };
            return self.lock_try(cx);
        }
        self.st = WorkerState::Worked { cpu: None };
        let w = self.work(cx);
        self.pending.run(w)
    }

    /// `pthread_mutex_trylock` of the lock of the CPU read at `again:`; on success re-read
    /// the CPU (retry on the new CPU's lock after a migration) and work, else spin a chunk.
    fn lock_try(&mut self, cx: &mut Ctx<'_>) -> Op {
        loop {
            let WorkerState::Lock { cpu } = self.st else {
                unreachable!("lock_try outside Lock");
            };
            self.pending.add(atomic_cost(cx));
            let mut sh = self.sh.borrow_mut();
            if sh.locks[cpu].is_some() {
                drop(sh);
                return self.pending.run(SPIN_CHUNK_NS);
            }
            sh.locks[cpu] = Some(self.idx);
            let cur = cx.cpu();
            if cur != cpu {
                // "we got the lock but we migrated": unlock, `goto again`
                sh.locks[cpu] = None;
                self.pending.add(atomic_cost(cx));
                self.st = WorkerState::Lock { cpu: cur };
                continue;
            }
            drop(sh);
            self.st = WorkerState::Worked { cpu: Some(cpu) };
            let w = self.work(cx);
            return self.pending.run(w);
        }
    }
}

impl Program for WorkerProg {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        loop {
            match self.st {
                WorkerState::Init => {
                    let mut sh = self.sh.borrow_mut();
                    sh.workers[self.idx].pid = cx.pid();
                    sh.workers[self.idx].task = Some(cx.task());
                    self.start_us = now_us(cx);
                    self.pending.add(clock_cost(cx));
                    self.st = WorkerState::Top;
                }
                WorkerState::Top => {
                    let (stopping, pipe) = {
                        let sh = self.sh.borrow();
                        (sh.stopping, sh.pipe_bytes)
                    };
                    if stopping {
                        self.st = WorkerState::Exit;
                        continue;
                    }
                    self.st = WorkerState::Post;
                    if pipe > 0 {
                        return self.pending.run(memset_ns(cx, pipe));
                    }
                }
                WorkerState::Post => {
                    let (own, mf) = {
                        let mut sh = self.sh.borrow_mut();
                        sh.workers[self.idx].wake_time_us = now_us(cx);
                        sh.msgs[self.msg].list.push(self.idx);
                        (sh.futex_of_worker(self.idx), sh.futex_of_msg(self.msg))
                    };
                    cx.futex_store(own, FUTEX_BLOCKED);
                    self.pending.add(clock_cost(cx) + 2 * atomic_cost(cx));
                    self.st = WorkerState::Posted;
                    if cx.futex_cas(mf, FUTEX_BLOCKED, FUTEX_RUNNING) {
                        return Op::FutexWake { futex: mf, nr: 1 };
                    }
                }
                WorkerState::Posted => {
                    // "don't wait if the main threads are shutting down"
                    let stopping = self.sh.borrow().stopping;
                    self.st = if stopping {
                        WorkerState::Woken
                    } else {
                        WorkerState::Fwait
                    };
                }
                WorkerState::Fwait => {
                    let f = self.sh.borrow().futex_of_worker(self.idx);
                    self.pending.add(atomic_cost(cx));
                    self.st = if cx.futex_cas(f, FUTEX_RUNNING, FUTEX_BLOCKED) {
                        WorkerState::Woken
                    } else {
                        WorkerState::FutexWait
                    };
                }
                WorkerState::FutexWait => {
                    if let Some(op) = self.pending.flush() {
                        return op;
                    }
                    self.st = WorkerState::Fwait;
                    let futex = self.sh.borrow().futex_of_worker(self.idx);
                    return Op::FutexWait {
                        futex,
                        val: FUTEX_BLOCKED,
                    };
                }
                WorkerState::Woken => {
                    let now = now_us(cx);
                    self.pending.add(clock_cost(cx));
                    let (calibrate, pipe) = {
                        let mut sh = self.sh.borrow_mut();
                        let wd = &mut sh.workers[self.idx];
                        let delta = tvdelta(wd.wake_time_us, now);
                        if delta > 0 {
                            wd.wakeup.add_lat(delta.min(u32::MAX as u64) as u32);
                        }
                        (sh.calibrate, sh.pipe_bytes > 0)
                    };
                    if pipe {
                        // pipe mode: no sleep and no matrix work
                        self.work_start_us = now_us(cx);
                        self.pending.add(clock_cost(cx));
                        self.st = WorkerState::Worked { cpu: None };
                        continue;
                    }
                    if !calibrate {
                        self.work_start_us = now_us(cx);
                        self.pending.add(clock_cost(cx));
                    }
                    self.st = WorkerState::Usleep { calibrate };
                }
                WorkerState::Usleep { calibrate } => {
                    let next = if calibrate {
                        WorkerState::CalibrateSlept
                    } else {
                        WorkerState::Slept
                    };
                    let sleep_ns = self.sh.borrow().sleep_ns;
                    if sleep_ns == 0 {
                        self.st = next;
                        continue;
                    }
                    if let Some(op) = self.pending.flush() {
                        return op;
                    }
                    self.st = next;
                    return Op::Sleep(sleep_ns);
                }
                WorkerState::CalibrateSlept => {
                    // -C: the usleep is not part of the request time
                    self.work_start_us = now_us(cx);
                    self.pending.add(clock_cost(cx));
                    return self.start_work(cx);
                }
                WorkerState::Slept => return self.start_work(cx),
                WorkerState::Lock { .. } => return self.lock_try(cx),
                WorkerState::Worked { cpu } => {
                    let mut sh = self.sh.borrow_mut();
                    if let Some(c) = cpu {
                        debug_assert_eq!(sh.locks[c], Some(self.idx));
                        sh.locks[c] = None;
                        self.pending.add(atomic_cost(cx));
                    }
                    let now = now_us(cx);
                    self.pending.add(clock_cost(cx));
                    let wd = &mut sh.workers[self.idx];
                    wd.runtime_us = tvdelta(self.start_us, now);
                    wd.loop_count += 1;
                    let delta = tvdelta(self.work_start_us, now);
                    if delta > 0 {
                        wd.request.add_lat(delta.min(u32::MAX as u64) as u32);
                    }
                    self.st = WorkerState::Top;
                }
                WorkerState::Exit => {
                    let now = now_us(cx);
                    self.sh.borrow_mut().workers[self.idx].runtime_us = tvdelta(self.start_us, now);
                    if let Some(op) = self.pending.flush() {
                        return op;
                    }
                    return Op::Exit;
                }
            }
        }
    }
}

// ========================================================================= the workload

impl Schbench {
    fn bad_option(&self, message: String) -> WorkloadError {
        WorkloadError::option(&self.line, message)
    }

    /// A CPU list of `-M`/`-W` restricted to the machine; an error if nothing is left.
    fn online(&self, opt: &str, cpus: &[u32], ncpus: usize) -> Result<CpuMask, WorkloadError> {
        let mut m = CpuMask::default();
        for &c in cpus {
            if (c as usize) < ncpus {
                m.set(c as usize);
            }
        }
        if m.is_empty() {
            return Err(self.bad_option(format!(
                "schbench: {opt}: no CPU of {cpus:?} exists on this {ncpus}-CPU machine"
            )));
        }
        Ok(m)
    }

    fn shared(&self) -> std::cell::Ref<'_, Shared> {
        self.shared
            .as_ref()
            .expect("schbench: output before setup")
            .borrow()
    }

    /// The per-thread `run_delay / pcount` averages (schbench `collect_sched_delay()`).
    fn sched_delay(&self, procfs: &dyn Procfs) -> SchedDelay {
        let sh = self.shared();
        let stat = |t: Option<TaskId>| {
            t.map(|t| {
                let s = procfs.task_stat(t);
                Schedstat {
                    run_delay_ns: s.run_delay,
                    pcount: s.pcount,
                }
            })
            .unwrap_or_default()
        };
        let msgs: Vec<Schedstat> = sh.msgs.iter().map(|m| stat(m.task)).collect();
        let workers: Vec<Schedstat> = sh.workers.iter().map(|w| stat(w.task)).collect();
        collect_sched_delay(&msgs, &workers)
    }

    /// Everything the printer needs, at the end of the run.
    pub fn results(&self, procfs: &dyn Procfs) -> Results {
        let delay = self.sched_delay(procfs);
        let sh = self.shared();
        let fin = sh.fin.clone().unwrap_or_else(|| sh.combine());
        let events = sh
            .events
            .iter()
            .map(|e| match e {
                Event::Interval(r) => Event::Interval(IntervalReport {
                    sched_delay: delay,
                    ..r.clone()
                }),
                other => other.clone(),
            })
            .collect();
        Results {
            worker_threads: sh.t as u32,
            events,
            wakeup: fin.wakeup,
            request: fin.request,
            rps: sh.rps.clone(),
            loop_count: fin.loop_count,
            loop_runtime_us: fin.loop_runtime_us,
            final_rps_per_message_thread: 0,
            final_sched_delay: SchedDelay::default(),
        }
    }

    /// The parsed command line.
    pub fn options(&self) -> &Options {
        &self.opts
    }
}

impl Workload for Schbench {
    fn max_tasks(&self, ncpus: usize) -> u64 {
        // The main thread, m message threads and t workers each (t defaults to ⌈CPUs / m⌉).
        let m = u64::from(self.opts.message_threads);
        let t = match self.opts.worker_threads {
            Some(t) => u64::from(t),
            None => (ncpus as u64).div_ceil(m.max(1)),
        };
        1 + m + m * t
    }

    fn warnings(&self) -> Vec<String> {
        self.opts.warnings.clone()
    }

    fn program(&self) -> &str {
        "schbench"
    }

    fn setup(&mut self, sys: &mut dyn Sys, env: &Env) -> Result<(), WorkloadError> {
        let o = &self.opts;
        let ncpus = sys.ncpus();
        let m = o.message_threads as usize;
        let t = o.worker_threads_for(ncpus as u32) as usize;
        let all = env
            .placement
            .cpus
            .clone()
            .unwrap_or_else(|| CpuMask::first_n(ncpus));
        let msg_cpus: Vec<Option<CpuMask>> = match &o.message_cpus {
            None => vec![None; m],
            Some(_) => (0..m)
                .map(|i| {
                    let c = o.message_thread_cpu(i as u32).expect("pinned") as usize;
                    if c >= ncpus {
                        return Err(self.bad_option(format!(
                            "schbench: -M: message thread {i} would be pinned to CPU {c}, \
                             which this {ncpus}-CPU machine does not have"
                        )));
                    }
                    Ok(Some(CpuMask::single(c)))
                })
                .collect::<Result<_, _>>()?,
        };
        let worker_cpus = match &o.worker_cpus {
            None => all,
            // thread_auto_pin(): every CPU from m upwards
            Some(CpuPin::Auto) => {
                let list: Vec<u32> = (m as u32..ncpus as u32).collect();
                self.online("-W auto", &list, ncpus)?
            }
            Some(CpuPin::Cpus(list)) => self.online("-W", list, ncpus)?,
        };
        let size = o.matrix_size();
        let w_matmul = sys
            .program_cost("schbench", "w_matmul")
            .unwrap_or(W_MATMUL_DEFAULT_NS);
        let w = matmul_ns(w_matmul, size);
        // One request's work must fit simulated time (and its sum of jittered draws, u64).
        let request_ns = u128::from(o.operations) * u128::from(w) * 2;
        if request_ns > u128::from(schedlab_engine::MAX_SIM_NS) {
            return Err(WorkloadError::option(
                &self.line,
                format!(
                    "schbench: -n {} with a {} x {} matrix: one request is {} s of work, more \
                     than the {} s (2^33 s) schedlab can simulate",
                    o.operations,
                    size,
                    size,
                    u128::from(o.operations) * u128::from(w) / 1_000_000_000,
                    schedlab_engine::MAX_SIM_SECS
                ),
            ));
        }
        let shared = Shared {
            m,
            t,
            sleep_ns: o.sleep_usec * 1000,
            operations: o.operations,
            matmul_ns: w,
            locking: o.locking,
            calibrate: o.calibrate,
            pipe_bytes: o.pipe_bytes as u64,
            runtime_usec: o.runtime_secs as u64 * USEC_PER_SEC,
            warmup_usec: o.warmup_secs as u64 * USEC_PER_SEC,
            interval_usec: o.interval_secs as u64 * USEC_PER_SEC,
            zero_usec: o.zero_secs as u64 * USEC_PER_SEC,
            warmup_secs: o.warmup_secs,
            msg_cpus,
            worker_cpus,
            stopping: false,
            msgs: (0..m).map(|_| MsgData::default()).collect(),
            workers: (0..m * t).map(|_| WorkerData::default()).collect(),
            locks: vec![None; ncpus],
            rps: Histogram::new(),
            events: Vec::new(),
            main_task: None,
            fin: None,
        };
        let sh = Rc::new(RefCell::new(shared));
        self.shared = Some(sh.clone());
        let prog = MainProg {
            sh,
            st: MainState::Init,
            pending: Pending::default(),
            msg_pids: Vec::new(),
            reaped: Vec::new(),
            start_us: 0,
            last_calc_us: 0,
            last_rps_calc_us: 0,
            zero_time_us: 0,
            last_loop_count: 0,
            warmup_done: false,
        };
        let attrs = env.placement.attrs("schbench", env.tg);
        let main = sys.fork(Box::new(prog), &attrs);
        sys.wake_up_new_task(main);
        Ok(())
    }

    fn output(&self, procfs: &dyn Procfs) -> String {
        render(&self.opts, &self.results(procfs))
    }

    /// The percentiles as mmtests reads them (workloads.md §4.3): with interval reports, the
    /// arithmetic mean over the reports of each latency percentile and the harmonic mean of
    /// the RPS median; without any (`-i` longer than `-r`, pipe mode), the final report's.
    /// `average_rps` is the final "average rps" line.
    fn metrics(&self, procfs: &dyn Procfs) -> Vec<Metric> {
        let r = self.results(procfs);
        let reports: Vec<&IntervalReport> = r
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Interval(i) => Some(i),
                Event::WarmupDone => None,
            })
            .collect();
        let amean = |f: &dyn Fn(&IntervalReport) -> u32, fin: u32| -> f64 {
            if reports.is_empty() {
                return fin as f64;
            }
            reports.iter().map(|i| f(i) as f64).sum::<f64>() / reports.len() as f64
        };
        let w = r.wakeup.percentiles();
        let wake = |i: usize| amean(&|rep| rep.wakeup.percentiles()[i].value, w[i].value);
        let us = |name: &str, v: f64| Metric::new(name, v, "us", Better::Lower);
        let mut out = vec![
            us("wakeup_p50_us", wake(1)),
            us("wakeup_p90_us", wake(2)),
            us("wakeup_p99_us", wake(3)),
            us("wakeup_p999_us", wake(4)),
        ];
        if self.opts.pipe_bytes == 0 {
            let q = r.request.percentiles();
            out.push(us(
                "request_p99_us",
                amean(&|rep| rep.request.percentiles()[3].value, q[3].value),
            ));
            // seed 003 quotes a p99.9 "latency" of schbench under SCHED_IDLE, assumed to be
            // the Request latencies' (docs/model.md W§12.4)
            out.push(us(
                "request_p999_us",
                amean(&|rep| rep.request.percentiles()[4].value, q[4].value),
            ));
            let rps = if reports.is_empty() {
                r.rps.percentiles()[1].value as f64
            } else {
                let v: Vec<f64> = reports
                    .iter()
                    .map(|rep| rep.rps.percentiles()[1].value as f64)
                    .collect();
                if v.contains(&0.0) {
                    0.0
                } else {
                    v.len() as f64 / v.iter().map(|x| 1.0 / x).sum::<f64>()
                }
            };
            out.push(Metric::new("rps_p50", rps, "requests/s", Better::Higher));
            // mmtests' other RPS rows (RPS-20th, RPS-90th, RPS-max): harmonic means over the
            // interval reports too, or the final report's figure without any
            let rows: [(&str, fn(&Histogram) -> u32); 3] = [
                ("rps_p20", |h| h.percentiles()[0].value),
                ("rps_p90", |h| h.percentiles()[2].value),
                ("rps_max", |h| h.max),
            ];
            for (name, f) in rows {
                let v = if reports.is_empty() {
                    f(&r.rps) as f64
                } else {
                    let v: Vec<f64> = reports.iter().map(|rep| f(&rep.rps) as f64).collect();
                    if v.contains(&0.0) {
                        0.0
                    } else {
                        v.len() as f64 / v.iter().map(|x| 1.0 / x).sum::<f64>()
                    }
                };
                out.push(Metric::new(name, v, "requests/s", Better::Higher));
            }
            out.push(Metric::new(
                "average_rps",
                r.loop_count as f64 / self.opts.runtime_secs as f64,
                "requests/s",
                Better::Higher,
            ));
        }
        out
    }

    /// `-r` plus room for the tear-down: the main thread's rounds drift by the timer slack
    /// and its own work (≤ 1 % of the runtime), then every worker finishes the request it is
    /// in. The run ends earlier anyway, when the last thread has exited.
    fn duration_hint(&self) -> Option<u64> {
        let r = self.opts.runtime_secs as u64 * USEC_PER_SEC * 1000;
        Some(r + r / 100 + TAIL_MARGIN_NS)
    }

    /// Every interval report's percentiles, one series each, at the report's runtime (whole
    /// seconds, as printed): `interval_wakeup_p{20,50,90,99,999}_us`,
    /// `interval_request_p…_us` and `interval_rps_p{20,50,90}` / `interval_rps_max` — what
    /// mmtests' parser collects from the printed reports (workloads.md §4.3).
    fn series(&self) -> Vec<(String, Vec<(u64, u64)>)> {
        let Some(sh) = self.shared.as_ref() else {
            return Vec::new();
        };
        let sh = sh.borrow();
        let reports: Vec<&IntervalReport> = sh
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Interval(i) => Some(i),
                Event::WarmupDone => None,
            })
            .collect();
        let mut out = Vec::new();
        for (what, pick) in [
            (
                "wakeup",
                (|r: &IntervalReport| &r.wakeup) as fn(&IntervalReport) -> &Histogram,
            ),
            ("request", |r: &IntervalReport| &r.request),
        ] {
            for (i, tag) in ["p20", "p50", "p90", "p99", "p999"].iter().enumerate() {
                out.push((
                    format!("interval_{what}_{tag}_us"),
                    reports
                        .iter()
                        .map(|r| {
                            let v = pick(r).percentiles()[i].value;
                            (r.runtime_secs * 1_000_000_000, u64::from(v))
                        })
                        .collect(),
                ));
            }
        }
        for (i, tag) in ["p20", "p50", "p90"].iter().enumerate() {
            out.push((
                format!("interval_rps_{tag}"),
                reports
                    .iter()
                    .map(|r| {
                        let v = r.rps.percentiles()[i].value;
                        (r.runtime_secs * 1_000_000_000, u64::from(v))
                    })
                    .collect(),
            ));
        }
        out.push((
            "interval_rps_max".to_string(),
            reports
                .iter()
                .map(|r| (r.runtime_secs * 1_000_000_000, u64::from(r.rps.max)))
                .collect(),
        ));
        out
    }

    fn tasks(&self) -> Vec<TaskId> {
        let Some(sh) = self.shared.as_ref() else {
            return Vec::new();
        };
        let sh = sh.borrow();
        sh.main_task
            .into_iter()
            .chain(sh.msgs.iter().filter_map(|m| m.task))
            .chain(sh.workers.iter().filter_map(|w| w.task))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{parse_placement, parse_workload};
    use schedlab_engine::Nanos;
    use schedlab_platform::cost::CostModel;
    use schedlab_platform::Platform;
    use schedlab_sched::{Kernel, KernelConfig, MachineDesc, PreemptModel};

    const SEC: u64 = 1_000_000_000;

    /// Parses `line` (placement + schbench command line) into the concrete model.
    fn build(line: &str) -> (crate::Placement, Schbench) {
        let (placement, words) = parse_placement(line).unwrap();
        assert_eq!(words[0], "schbench");
        let opts = parse(&words[1..]).unwrap();
        let w = Schbench {
            line: line.to_string(),
            opts,
            shared: None,
        };
        (placement, w)
    }

    fn kernel(spec: &str, m: MachineDesc, seed: u64) -> Kernel {
        let mut k = Kernel::new(KernelConfig::parse(spec).unwrap(), m, seed).unwrap();
        k.strict = true;
        k.check_invariants = true;
        k
    }

    /// Sets the workload up and runs until every thread has exited.
    fn run(mut k: Kernel, line: &str) -> (Kernel, Schbench) {
        let (placement, mut w) = build(line);
        let env = Env {
            placement,
            tg: None,
            index: 0,
            duration_ns: None,
        };
        w.setup(&mut k, &env).unwrap();
        let limit = (w.opts.runtime_secs as u64 + 10) * SEC;
        let stop = k.run_until(limit);
        assert!(stop < limit, "schbench did not finish: {line}");
        assert_eq!(k.nr_live, 0);
        (k, w)
    }

    fn metric(w: &Schbench, k: &Kernel, name: &str) -> f64 {
        w.metrics(k)
            .into_iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no metric {name}"))
            .value
    }

    fn ideal(ncpus: usize) -> MachineDesc {
        MachineDesc::ideal(ncpus, 1000, PreemptModel::Full)
    }

    #[test]
    fn w_matmul_per_platform() {
        // §4.2: 1.9 ms on the Altra (both LLC variants), 1.7 ms (seed-002 anchor) on the x86
        // servers, in the platform files; the others give none and get the model's 1.7 ms.
        let w = |name: &str| {
            let p = Platform::builtin(name).unwrap();
            let k = Kernel::new(
                KernelConfig::parse("v6.12").unwrap(),
                MachineDesc::from_platform(&p),
                1,
            )
            .unwrap();
            Sys::program_cost(&k, "schbench", "w_matmul")
        };
        assert_eq!(w("altra-80"), Some(1_900_000));
        assert_eq!(w("altra-80-llc80"), Some(1_900_000));
        assert_eq!(w("x86-2s-80"), Some(1_700_000));
        assert_eq!(w("xeon-2s-64"), Some(1_700_000));
        assert_eq!(w("rpi5"), None);
        assert_eq!(matmul_ns(1_900_000, 104), 1_900_000);
        // -F 512: size 147; 1.7 ms × 147³ / 104³ = 1.7 ms × 3176523 / 1124864 = 4.8007 ms.
        assert_eq!(
            matmul_ns(W_MATMUL_DEFAULT_NS, 147),
            1_700_000 * 3_176_523 / 1_124_864
        );
    }

    #[test]
    fn message_and_worker_counts() {
        // -m 3 on 8 CPUs: t = ceil(8 / 3) = 3 workers each; 1 main + 3 + 9 threads.
        let (k, w) = run(kernel("v6.18", ideal(8), 1), "schbench -m 3 -r 1 -L -n 1");
        assert_eq!(w.tasks().len(), 1 + 3 + 9);
        let out = w.output(&k);
        assert!(out.starts_with("setting worker threads to 3\n"), "{out}");
        // all threads of one process: one tgid, one mm
        let tasks = w.tasks();
        let t0 = &k.tasks[tasks[0].index()];
        for t in &tasks {
            let t = &k.tasks[t.index()];
            assert_eq!((t.tgid, t.mm), (t0.tgid, t0.mm), "{}", t.comm);
        }
        let comms: Vec<&str> = tasks
            .iter()
            .map(|t| k.tasks[t.index()].comm.as_str())
            .collect();
        assert_eq!(comms[0], "schbench");
        assert_eq!(comms[1..4], ["schbench-msg"; 3]);
        assert_eq!(comms[4..], ["schbench-worker"; 9]);
        // -t given: no "setting worker threads" line; 1 + 2 + 2 × 4 threads
        let (k, w) = run(
            kernel("v6.18", ideal(8), 1),
            "schbench -m 2 -t 4 -r 1 -L -n 1",
        );
        assert_eq!(w.tasks().len(), 1 + 2 + 8);
        assert!(w.output(&k).starts_with("Wakeup Latencies"));
    }

    /// A 2-CPU machine whose only costs are whole microseconds, so that each one shows in a
    /// µs latency: c_futex_wake = lat_ipi = c_ctxsw = 1 µs, everything else free.
    fn one_us_costs() -> MachineDesc {
        let mut m = ideal(2);
        let mut c = CostModel::zero();
        c.c_futex_wake = Nanos(1000);
        c.lat_ipi = Nanos(1000);
        c.c_ctxsw_thread = Nanos(1000);
        c.c_ctxsw_process = Nanos(1000);
        m.costs = vec![c; 2];
        m
    }

    #[test]
    fn idle_wakeup_latency_is_the_wake_chain() {
        // Message thread on CPU 0, the worker on CPU 1, both otherwise idle. The message
        // thread stamps T0, then FUTEX_WAKE costs c_futex_wake (1 µs) before the wakeup; the
        // worker's CPU is idle, so it is woken by IPI after lat_ipi (1 µs, idle exit 0) and
        // switches in from idle (c_ctxsw_process, 1 µs); it then reads the clock:
        // T0 + 3 µs, and tvdelta of the µs readings is exactly 3 whatever T0's phase.
        // (The worker blocked in FUTEX_WAIT 2 µs before the message thread ran: its own
        // post costs 1 µs, the message thread's wake 1 + 1 µs more.)
        let (k, w) = run(
            kernel("v6.18", one_us_costs(), 1),
            "cpus=0 schbench -m 1 -t 1 -M 0 -W 1 -L -r 2 -n 1 -s 0",
        );
        let r = w.results(&k);
        let p = r.wakeup.percentiles();
        assert_eq!((p[1].value, p[2].value, p[3].value), (3, 3, 3));
        assert_eq!(r.wakeup.min, 3);
        // The main thread shares CPU 0 with the message thread: at most its once-a-second
        // wakeups (2 switches of 1 µs) delay a few replies.
        assert!(r.wakeup.max <= 5, "max {}", r.wakeup.max);
        let late = r.wakeup.nr_samples - r.wakeup.bucket(3);
        assert!(late <= 4, "{late} late samples");
        // One request = 1 × W_matmul = 1.7 ms on the reference core, no sleep, no lock,
        // plus 2 ns of clock reads (1 ns each on a zero-cost machine): 1700 µs, or 1701 when
        // the 2 ns cross a µs boundary of the readings.
        assert!(r.request.min == 1700 && r.request.max <= 1701);
    }

    #[test]
    fn unloaded_rps_without_locking() {
        // 2 workers on a 4-CPU zero-cost machine, -L, -s 0: each request is exactly
        // 5 × 1.7 ms = 8.5 ms (+ a few ns of 1-ns clock reads), back to back from t = 0, each
        // worker on its own idle CPU. The main thread stops in its 10th round, at
        // 10 × (1 s + ≤ 50 µs slack) ∈ [10.0000, 10.0005] s: by then each worker completed
        // floor(10.0005 / 0.0085) = 1176 requests and finishes the one in flight (1177th,
        // counted). average rps = 2 × 1177 / 10 = 235.40.
        let (k, w) = run(
            kernel("v6.18", ideal(4), 1),
            "schbench -m 1 -t 2 -L -r 10 -s 0",
        );
        assert!(w.output(&k).contains("\naverage rps: 235.40\n"));
        assert_eq!(metric(&w, &k, "average_rps"), 235.4);
        // Per 1-s round each worker completes 117 or 118 requests: samples in
        // [234 / 1.00005, 236 / 1.0] = [233.99, 236] -> truncated 233..=236.
        let rps = metric(&w, &k, "rps_p50");
        assert!((233.0..=236.0).contains(&rps), "rps p50 {rps}");
        // Request latency = the 8.5 ms of work (+ 2 ns of clock reads: 8500 or 8501 µs; both
        // in the fio bucket printed as 8496).
        let r = w.results(&k);
        assert!(r.request.min == 8500 && r.request.max <= 8501);
        assert_eq!(metric(&w, &k, "request_p99_us"), 8496.0);
        // every request takes the same 8.5 ms: the 99.9th percentile is the same bucket
        assert_eq!(metric(&w, &k, "request_p999_us"), 8496.0);
    }

    /// Every interval report is printed and kept as a series point (what mmtests parses):
    /// -r 4 -i 1 gives reports at runtime 1, 2, 3 (and the final one, not an interval); the
    /// series values are the printed ones, and the RPS metrics are their harmonic means.
    #[test]
    fn interval_percentiles_are_printed_and_kept() {
        let (k, w) = run(
            kernel("v6.18", ideal(4), 1),
            "schbench -m 1 -t 2 -L -r 4 -i 1 -z 1 -s 0",
        );
        let out = w.output(&k);
        let series = w.series();
        let get = |n: &str| {
            series
                .iter()
                .find(|(m, _)| m == n)
                .unwrap_or_else(|| panic!("no series {n}"))
                .1
                .clone()
        };
        let rps20 = get("interval_rps_p20");
        assert!(rps20.len() >= 3, "{rps20:?}");
        // the printed RPS blocks' 20th percentiles, in order; the last block is the final report
        let printed: Vec<u64> = out
            .split("RPS percentiles (requests)")
            .skip(1)
            .map(|b| {
                let l = b.lines().find(|l| l.contains("20.0th:")).unwrap();
                l.split(':')
                    .nth(1)
                    .unwrap()
                    .split_whitespace()
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect();
        assert_eq!(printed.len(), rps20.len() + 1, "{out}");
        assert_eq!(
            rps20.iter().map(|p| p.1).collect::<Vec<_>>(),
            printed[..rps20.len()]
        );
        for (i, (t, _)) in rps20.iter().enumerate() {
            assert_eq!(*t, (i as u64 + 1) * SEC);
        }
        for name in [
            "interval_wakeup_p50_us",
            "interval_wakeup_p999_us",
            "interval_request_p99_us",
            "interval_rps_p50",
            "interval_rps_p90",
            "interval_rps_max",
        ] {
            assert_eq!(get(name).len(), rps20.len(), "{name}");
        }
        // Hmean of the per-interval values, e.g. 234 and 236 -> 2 / (1/234 + 1/236) = 234.996
        let hmean =
            |v: &[(u64, u64)]| v.len() as f64 / v.iter().map(|p| 1.0 / p.1 as f64).sum::<f64>();
        for (m, sname) in [
            ("rps_p20", "interval_rps_p20"),
            ("rps_p50", "interval_rps_p50"),
            ("rps_p90", "interval_rps_p90"),
            ("rps_max", "interval_rps_max"),
        ] {
            let want = hmean(&get(sname));
            assert!((metric(&w, &k, m) - want).abs() < 1e-9, "{m}");
        }
        // the wakeup metric is the arithmetic mean of the interval values
        let wk = get("interval_wakeup_p90_us");
        let am = wk.iter().map(|p| p.1 as f64).sum::<f64>() / wk.len() as f64;
        assert!((metric(&w, &k, "wakeup_p90_us") - am).abs() < 1e-9);
    }

    #[test]
    fn unloaded_rps_with_sleep() {
        // With -s 100 a request is usleep(100) + timer slack + 8.5 ms. The worker's CPU is
        // idle during the sleep and its tick is stopped (NO_HZ_IDLE), so nothing cuts the
        // slack window short: each request takes 8650 µs (8651 when the 2 ns of clock reads
        // cross a µs boundary). The main thread's 10 rounds end at 10 × (1 s + 50 µs) =
        // 10.0005 s: per worker floor(10.0005 s / 8.65 ms) = 1156 requests done + the one in
        // flight = 1157; 2 workers: average rps 2314 / 10 = 231.40 ≈ workers / request time.
        let (k, w) = run(kernel("v6.18", ideal(4), 1), "schbench -m 1 -t 2 -L -r 10");
        assert_eq!(metric(&w, &k, "average_rps"), 231.4);
        let r = w.results(&k);
        let (min, max) = (r.request.min, r.request.max);
        assert!(min == 8650 && max <= 8651, "{min} {max}");
    }

    #[test]
    fn calibrate_excludes_the_sleep() {
        // -C: no lock, and work_start is taken after the usleep, so a request is the matrix
        // work alone: 1 × 1.7 ms.
        let (k, w) = run(
            kernel("v6.18", ideal(2), 1),
            "schbench -m 1 -t 1 -C -r 2 -n 1",
        );
        let r = w.results(&k);
        assert_eq!((r.request.min, r.request.max), (1700, 1700));
        // The platform's [programs.schbench] w_matmul replaces the default: 1.9 ms (altra-80's
        // figure) gives 1900 µs requests.
        let mut m = ideal(2);
        let f = schedlab_platform::PROGRAM_COST_FIELDS
            .iter()
            .find(|f| (f.program, f.name) == ("schbench", "w_matmul"))
            .unwrap();
        m.programs.set(f, Nanos(1_900_000));
        let (k, w) = run(kernel("v6.18", m, 1), "schbench -m 1 -t 1 -C -r 2 -n 1");
        let r = w.results(&k);
        assert_eq!((r.request.min, r.request.max), (1900, 1900));
    }

    #[test]
    fn locking_spins_away_cpu_on_a_shared_cpu() {
        // Two workers on one CPU. Without the lock they share it: 1 CPU / 8.5 ms per request;
        // by the stop at 10.0000–10.0005 s floor(10.0005 / 0.0085) = 1176 requests are done
        // and both workers finish the one they are in (+2): 1176–1178 in 10 s.
        // With the lock, a worker that preempts the lock holder spins on the holder's lock
        // until it is preempted in turn, so some of the CPU is burnt spinning.
        let line = |l: &str| format!("schbench -m 1 -t 2 {l} -r 10 -s 0");
        let (k, free) = run(kernel("v6.18", ideal(1), 1), &line("-L"));
        let unlocked = metric(&free, &k, "average_rps");
        assert!((117.6..=117.8).contains(&unlocked), "{unlocked}");
        let (k, locked) = run(kernel("v6.18", ideal(1), 1), &line(""));
        let with_lock = metric(&locked, &k, "average_rps");
        assert!(with_lock < unlocked, "{with_lock} vs {unlocked}");
        // the spinning shows in the request latency of the locked run
        let p99 = |w: &Schbench, k: &Kernel| metric(w, k, "request_p99_us");
        let (k2, free2) = run(kernel("v6.18", ideal(1), 1), &line("-L"));
        assert!(p99(&locked, &k) >= p99(&free2, &k2));
    }

    #[test]
    fn same_seed_same_output() {
        // rb5 costs with jitter on: two runs with one seed agree byte for byte.
        let go = |seed| {
            let m = MachineDesc::from_platform(&Platform::builtin("rb5").unwrap());
            let (k, w) = run(kernel("v6.18", m, seed), "schbench -m 2 -t 3 -r 2 -i 1");
            let metrics: Vec<(String, String)> = w
                .metrics(&k)
                .into_iter()
                .map(|m| (m.name, format!("{}", m.value)))
                .collect();
            (w.output(&k), metrics)
        };
        let a = go(7);
        assert_eq!(a, go(7));
        assert!(a.0.contains("runtime 1 (s)"), "{}", a.0);
        assert!(a
            .0
            .contains("\nsched delay: message 0 (usec) worker 0 (usec)\n"));
    }

    #[test]
    fn pipe_mode_runs() {
        let m = MachineDesc::from_platform(&Platform::builtin("rb5").unwrap());
        let (k, w) = run(kernel("v6.18", m, 1), "schbench -p 4096 -t 2 -r 1");
        let out = w.output(&k);
        assert!(
            out.contains("\tavg worker transfer: ") || out.contains("\navg worker transfer: "),
            "{out}"
        );
        assert!(!out.contains("Request Latencies"));
        assert_eq!(w.metrics(&k).len(), 4);
    }

    #[test]
    fn refused_configurations() {
        let err = |line: &str| match parse_workload(line) {
            Err(e) => e.to_string(),
            Ok((placement, mut w)) => {
                let mut k = kernel("v6.18", ideal(4), 1);
                let env = Env {
                    placement,
                    tg: None,
                    index: 0,
                    duration_ns: None,
                };
                w.setup(&mut k, &env).expect_err(line).to_string()
            }
        };
        assert!(err("schbench -R 100").contains("-R (fixed requests per second) is not modelled"));
        assert!(err("schbench -A 80").contains("-A (auto-RPS) is not modelled"));
        assert!(err("schbench -M 9").contains("CPU 9"));
        assert!(err("schbench -W 8-9").contains("no CPU of [8, 9]"));
    }
}
