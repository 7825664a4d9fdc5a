//! The stress-ng 0.15.06 pipe stressor as task programs (workloads.md §2.2), and the
//! [`Workload`] that starts them and fills [`Results`] from the kernel's per-task statistics.
//!
//! ```text
//! stress-ng (main) ──fork──▶ instance i (i < N) = writer ──fork──▶ reader i
//!   wait() × N               mmap, pipe2(O_DIRECT), fork       read(512)
//!                            loop: run(W_fill); write(512)     every 512th: ioctl(FIONREAD)
//!                            until the alarm (start + timeout) run(W_check); exit on "PS!"
//!                            stop packet; waitpid(reader)
//! ```
//!
//! Model decisions (where the spec is silent):
//!
//! * **Work parameters.** `W_fill` and `W_check` are work at the platform's reference core;
//!   the kernel scales them by CPU speed. They depend on the core (§2.2 gives 0.38 and 0.03 µs
//!   for the A76 @2.8 GHz, §2.5 a provisional 0.15 µs `W_fill` for a Zen 5-class core), so a
//!   platform file gives its own in `[programs.stress-ng]` (`w_fill`, `w_check`, read through
//!   `Sys::program_cost`); platforms without them use the A76 figures ([`W_FILL_NS`],
//!   [`W_CHECK_NS`], the only general ones in the spec). Tests may fix them in [`Params`].
//! * **The alarm.** Each instance stops at its own start + `--timeout` (stress-ng arms the
//!   alarm in each stressor process); the flag is tested after every write, as the
//!   `do { … } while (keep_stressing())` loop does, so the first write always happens. A
//!   writer blocked on a full pipe when the alarm fires finishes that write (no EINTR).
//! * **Set-up and tear-down costs.** `mmap`, `pipe2` (and `fcntl(F_SETPIPE_SZ)` with
//!   `--pipe-size`) cost `c_syscall` each; the `kill(SIGKILL)` of the reader costs
//!   `c_syscall` and is modelled by the reader leaving at the stop packet (it has at most 15
//!   packets to drain before it). Main's bookkeeping is free.
//! * **The stop packet** is recognised by position: the reader knows the sequence number of
//!   the stop write (user memory shared by the two programs stands in for the "PS!" bytes).
//! * **RSS** is not modelled: `--metrics` prints 0 KiB.
//! * **A run cut short** (the simulation ends before the instances finished): the results are
//!   taken at that moment and the run is reported "unsuccessful".

use super::options::{parse, Instances, Options};
use super::output::{render, InstanceResult, Results};
use crate::workload::{Better, Env, Metric, Workload, WorkloadError};
use schedlab_engine::time::{Nanos, SimTime};
use schedlab_sched::ipc::PipeId;
use schedlab_sched::sched::TaskId;
use schedlab_sched::{Ctx, Op, Procfs, Program, Spawn, Sys, SysResult, TaskAttrs};
use std::cell::RefCell;
use std::rc::Rc;

/// User work of the writer's 512-byte fill loop per write, ns at the reference core, on
/// platforms without `[programs.stress-ng] w_fill`: §2.2's A76 @2.8 GHz figure (derived from
/// [S1]), unverified on other cores.
pub const W_FILL_NS: u64 = 380;
/// User work of the reader's check (strncmp + loop) per read, ns at the reference core, on
/// platforms without `[programs.stress-ng] w_check`: §2.2's A76 figure.
pub const W_CHECK_NS: u64 = 30;
/// `ioctl(FIONREAD)` costs `c_syscall` plus this (§2.2: ≈ c_syscall + 0.05 µs).
pub const FIONREAD_EXTRA_NS: u64 = 50;
/// The reader issues `ioctl(FIONREAD)` on every 512th read (`(i & 0x1ff) == 0`).
pub const FIONREAD_EVERY: u64 = 512;
/// Simulated time allowed after the timeout for the instances to finish (duration hint).
const TAIL_MARGIN_NS: u64 = 1_000_000_000;

/// Workload parameters (reference-core ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    pub w_fill_ns: u64,
    pub w_check_ns: u64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            w_fill_ns: W_FILL_NS,
            w_check_ns: W_CHECK_NS,
        }
    }
}

/// Builds the stress-ng workload from the words after `stress-ng`.
pub fn workload(line: &str, args: &[String]) -> Result<Box<dyn Workload>, WorkloadError> {
    let opts = parse(args).map_err(|e| WorkloadError::option(line, e.to_string()))?;
    Ok(Box::new(StressNg::new(line, opts)))
}

/// The stress-ng pipe stressor model.
pub struct StressNg {
    line: String,
    opts: Options,
    /// Work parameters fixed by a test; `None`: the platform's, else the defaults.
    pub params: Option<Params>,
    shared: Option<Rc<RefCell<Shared>>>,
}

/// What one instance (writer and reader) recorded.
#[derive(Debug, Default, Clone)]
struct Instance {
    writer: Option<TaskId>,
    reader: Option<TaskId>,
    start: u64,
    finish: Option<u64>,
    /// Successful data writes (bogo ops).
    ops: u64,
    loop_start: u64,
    loop_end: Option<u64>,
    /// Sequence number (1-based) of the stop packet among all the writes to the pipe.
    stop_seq: Option<u64>,
}

/// User memory and bookkeeping shared by the programs and the workload.
#[derive(Debug, Default)]
struct Shared {
    main: Option<TaskId>,
    main_pid: i32,
    main_start: u64,
    main_end: Option<u64>,
    instances: Vec<Instance>,
}

/// Run-wide constants the programs need.
#[derive(Debug, Clone, Copy)]
struct Setup {
    instances: u32,
    timeout_ns: Option<u64>,
    ops_per_instance: Option<u64>,
    data_size: u32,
    pipe_slots: Option<u32>,
    params: Params,
}

impl StressNg {
    pub fn new(line: &str, opts: Options) -> StressNg {
        StressNg {
            line: line.to_string(),
            opts,
            params: None,
            shared: None,
        }
    }

    /// The results as stress-ng would compute them from what the run did so far.
    pub fn results(&self, procfs: &dyn Procfs) -> Results {
        let Some(sh) = self.shared.as_ref() else {
            return Results {
                main_pid: 0,
                instances: Vec::new(),
                duration: Nanos(0),
                success: false,
            };
        };
        let sh = sh.borrow();
        let now = procfs.now();
        let size = self.opts.pipe_data_size;
        let times = |t: Option<TaskId>| {
            t.map(|t| {
                // getrusage(): utime/stime, cputime_adjust()ed to sum_exec_runtime
                let st = procfs.task_stat(t);
                (st.utime, st.stime)
            })
            .unwrap_or((0, 0))
        };
        let instances: Vec<InstanceResult> = sh
            .instances
            .iter()
            .map(|i| {
                let (wu, ws) = times(i.writer);
                let (ru, rs) = times(i.reader);
                let loop_end = i.loop_end.unwrap_or(now);
                InstanceResult {
                    bogo_ops: i.ops,
                    start: SimTime(i.start),
                    finish: SimTime(i.finish.unwrap_or(now)),
                    user_time: Nanos(wu + ru),
                    system_time: Nanos(ws + rs),
                    run_ok: i.finish.is_some(),
                    max_rss_kb: 0,
                    write_bytes: i.ops * size,
                    write_duration: Nanos(loop_end.saturating_sub(i.loop_start)),
                }
            })
            .collect();
        let done = sh.main_end.is_some() && instances.iter().all(|i| i.run_ok);
        Results {
            main_pid: sh.main_pid.max(0) as u32,
            instances,
            duration: Nanos(sh.main_end.unwrap_or(now).saturating_sub(sh.main_start)),
            success: done,
        }
    }
}

impl Workload for StressNg {
    fn max_tasks(&self, ncpus: usize) -> u64 {
        // The main process plus a writer and a reader per instance.
        let n = self.opts.pipe.resolve(ncpus as u32, ncpus as u32);
        1 + 2 * u64::from(n)
    }

    fn program(&self) -> &str {
        "stress-ng"
    }

    fn setup(&mut self, sys: &mut dyn Sys, env: &Env) -> Result<(), WorkloadError> {
        let page = sys.page_size() as u64;
        self.opts
            .check_page_size(page)
            .map_err(|e| WorkloadError::option(&self.line, e.to_string()))?;
        let ncpus = sys.ncpus() as u32;
        let n = match self.opts.pipe {
            Instances::Count(n) => n,
            other => other.resolve(ncpus, ncpus),
        };
        let timeout = self.opts.effective_timeout_secs();
        // F_SETPIPE_SZ: round_pipe_size() = the request rounded up to a power of two, at
        // least one page; one slot per page
        let pipe_slots = self
            .opts
            .pipe_size
            .map(|b| (b.max(page).next_power_of_two() / page) as u32);
        let setup = Setup {
            instances: n,
            timeout_ns: (timeout > 0).then(|| timeout * 1_000_000_000),
            ops_per_instance: self.opts.ops_per_instance(n),
            data_size: self.opts.pipe_data_size as u32,
            pipe_slots,
            params: self.params.unwrap_or(Params {
                w_fill_ns: sys.program_cost("stress-ng", "w_fill").unwrap_or(W_FILL_NS),
                w_check_ns: sys
                    .program_cost("stress-ng", "w_check")
                    .unwrap_or(W_CHECK_NS),
            }),
        };
        let shared = Rc::new(RefCell::new(Shared {
            instances: vec![Instance::default(); n as usize],
            ..Default::default()
        }));
        let attrs = env.placement.attrs("stress-ng", env.tg);
        let main = Box::new(Main {
            sh: shared.clone(),
            setup,
            forked: 0,
            reaped: 0,
        });
        let t = sys.fork(main, &attrs);
        {
            let mut sh = shared.borrow_mut();
            sh.main = Some(t);
            sh.main_pid = sys.pid(t);
        }
        sys.wake_up_new_task(t);
        self.shared = Some(shared);
        Ok(())
    }

    fn output(&self, procfs: &dyn Procfs) -> String {
        render(&self.opts, &self.results(procfs))
    }

    fn metrics(&self, procfs: &dyn Procfs) -> Vec<Metric> {
        let r = self.results(procfs);
        let s = r.summary();
        let tp = procfs.tracepoint_counts();
        let switches = tp.sched_switch as f64;
        let per_op = if s.c_total > 0 {
            switches / s.c_total as f64
        } else {
            0.0
        };
        vec![
            Metric::new("bogo_ops_per_sec", s.rate_real, "ops/s", Better::Higher),
            Metric::new("bogo_ops_per_sec_cpu", s.rate_cpu, "ops/s", Better::Higher),
            Metric::new("sched_switch", switches, "switches", Better::Lower),
            Metric::new(
                "sched_migrate_task",
                tp.sched_migrate_task as f64,
                "migrations",
                Better::Lower,
            ),
            Metric::new("user_s", s.u_time, "s", Better::Higher),
            Metric::new("system_s", s.s_time, "s", Better::Lower),
            Metric::new("switches_per_op", per_op, "switches/op", Better::Lower),
            Metric::new(
                "mb_per_sec_geomean",
                s.write_rate_geomean,
                "MB/s",
                Better::Higher,
            ),
        ]
    }

    fn tasks(&self) -> Vec<TaskId> {
        let Some(sh) = self.shared.as_ref() else {
            return Vec::new();
        };
        let sh = sh.borrow();
        sh.main
            .into_iter()
            .chain(
                sh.instances
                    .iter()
                    .flat_map(|i| [i.writer, i.reader])
                    .flatten(),
            )
            .collect()
    }

    fn duration_hint(&self) -> Option<u64> {
        match self.opts.effective_timeout_secs() {
            0 => None,
            t => Some(t * 1_000_000_000 + TAIL_MARGIN_NS),
        }
    }
}

/// The top-level stress-ng process: forks the instances, then reaps them.
struct Main {
    sh: Rc<RefCell<Shared>>,
    setup: Setup,
    forked: u32,
    reaped: u32,
}

impl Program for Main {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        if self.forked == 0 && self.reaped == 0 {
            self.sh.borrow_mut().main_start = cx.now();
        }
        if self.forked < self.setup.instances {
            let idx = self.forked as usize;
            self.forked += 1;
            return Op::Spawn(Box::new(Spawn {
                program: Box::new(Writer::new(self.sh.clone(), self.setup, idx)),
                thread: false,
                attrs: comm_attrs(),
            }));
        }
        if self.reaped < self.setup.instances {
            self.reaped += 1;
            return Op::WaitChild;
        }
        self.sh.borrow_mut().main_end = Some(cx.now());
        Op::Exit
    }
}

/// stress-ng renames its stressor processes (`prctl(PR_SET_NAME)`).
fn comm_attrs() -> TaskAttrs {
    TaskAttrs {
        comm: Some("stress-ng-pipe".to_string()),
        ..Default::default()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WState {
    Mmap,
    Pipe2,
    Fork,
    Fill,
    Write,
    Stop,
    Kill,
    Reap,
    Exit,
}

/// An instance process: the writer.
struct Writer {
    sh: Rc<RefCell<Shared>>,
    setup: Setup,
    idx: usize,
    state: WState,
    pipe: Option<PipeId>,
    deadline: u64,
    writes: u64,
}

impl Writer {
    fn new(sh: Rc<RefCell<Shared>>, setup: Setup, idx: usize) -> Writer {
        Writer {
            sh,
            setup,
            idx,
            state: WState::Mmap,
            pipe: None,
            deadline: u64::MAX,
            writes: 0,
        }
    }

    /// `keep_stressing()`: the alarm has not fired and the op limit is not reached.
    fn keep_stressing(&self, now: u64, ops: u64) -> bool {
        let below_limit = match self.setup.ops_per_instance {
            Some(max) => ops < max,
            None => true,
        };
        now < self.deadline && below_limit
    }
}

impl Program for Writer {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        let syscall = cx.costs().c_syscall.0;
        let size = self.setup.data_size;
        loop {
            match self.state {
                WState::Mmap => {
                    let now = cx.now();
                    let mut sh = self.sh.borrow_mut();
                    let inst = &mut sh.instances[self.idx];
                    inst.writer = Some(cx.task());
                    inst.start = now;
                    if let Some(t) = self.setup.timeout_ns {
                        self.deadline = now.saturating_add(t);
                    }
                    self.state = WState::Pipe2;
                    return Op::Syscall(syscall);
                }
                WState::Pipe2 => {
                    let p = match self.setup.pipe_slots {
                        Some(slots) => cx.new_pipe_slots(true, slots),
                        None => cx.new_pipe(true),
                    };
                    self.pipe = Some(p);
                    self.state = WState::Fork;
                    let calls = if self.setup.pipe_slots.is_some() {
                        2
                    } else {
                        1
                    };
                    return Op::Syscall(calls * syscall);
                }
                WState::Fork => {
                    self.state = WState::Fill;
                    let reader = Reader {
                        sh: self.sh.clone(),
                        idx: self.idx,
                        pipe: self.pipe.unwrap(),
                        size,
                        w_check: self.setup.params.w_check_ns,
                        reads: 0,
                        state: RState::Read,
                    };
                    return Op::Spawn(Box::new(Spawn {
                        program: Box::new(reader),
                        thread: false,
                        attrs: comm_attrs(),
                    }));
                }
                WState::Fill => {
                    if let SysResult::Pid(_) = last {
                        // fork returned: the writer loop starts
                        self.sh.borrow_mut().instances[self.idx].loop_start = cx.now();
                    }
                    self.state = WState::Write;
                    return Op::Run(self.setup.params.w_fill_ns);
                }
                WState::Write => {
                    if let SysResult::Bytes(n) = last {
                        // the write just returned
                        debug_assert_eq!(n, size);
                        let now = cx.now();
                        let mut sh = self.sh.borrow_mut();
                        let inst = &mut sh.instances[self.idx];
                        inst.ops += 1;
                        if !self.keep_stressing(now, inst.ops) {
                            inst.loop_end = Some(now);
                            self.state = WState::Stop;
                            continue;
                        }
                        self.state = WState::Fill;
                        continue;
                    }
                    self.writes += 1;
                    return Op::PipeWrite {
                        pipe: self.pipe.unwrap(),
                        bytes: size,
                    };
                }
                WState::Stop => {
                    self.writes += 1;
                    self.sh.borrow_mut().instances[self.idx].stop_seq = Some(self.writes);
                    self.state = WState::Kill;
                    return Op::PipeWrite {
                        pipe: self.pipe.unwrap(),
                        bytes: size,
                    };
                }
                WState::Kill => {
                    self.state = WState::Reap;
                    return Op::Syscall(syscall);
                }
                WState::Reap => {
                    self.state = WState::Exit;
                    return Op::WaitChild;
                }
                WState::Exit => {
                    self.sh.borrow_mut().instances[self.idx].finish = Some(cx.now());
                    return Op::Exit;
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RState {
    Read,
    Check,
    Done,
}

/// The reader child of an instance.
struct Reader {
    sh: Rc<RefCell<Shared>>,
    idx: usize,
    pipe: PipeId,
    size: u32,
    w_check: u64,
    reads: u64,
    state: RState,
}

impl Program for Reader {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        match self.state {
            RState::Read => {
                if let SysResult::Bytes(n) = last {
                    if n > 0 {
                        // (i & 0x1ff) == 0 with i counting reads from 0
                        let i = self.reads;
                        self.reads += 1;
                        self.state = RState::Check;
                        if i.is_multiple_of(FIONREAD_EVERY) {
                            return Op::Syscall(cx.costs().c_syscall.0 + FIONREAD_EXTRA_NS);
                        }
                        return self.next(cx, SysResult::None);
                    }
                }
                if self.sh.borrow().instances[self.idx].reader.is_none() {
                    self.sh.borrow_mut().instances[self.idx].reader = Some(cx.task());
                }
                Op::PipeRead {
                    pipe: self.pipe,
                    bytes: self.size,
                }
            }
            RState::Check => {
                let stop = self.sh.borrow().instances[self.idx].stop_seq == Some(self.reads);
                self.state = if stop { RState::Done } else { RState::Read };
                Op::Run(self.w_check)
            }
            RState::Done => Op::Exit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::parse_workload;
    use schedlab_platform::{Platform, PreemptModel};
    use schedlab_sched::{Kernel, KernelConfig, MachineDesc};

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn env() -> Env {
        Env {
            placement: Default::default(),
            tg: None,
            index: 0,
            duration_ns: None,
        }
    }

    /// Runs a stress-ng command line to completion on `k`.
    fn run(k: &mut Kernel, line: &str, params: Option<Params>) -> StressNg {
        let words = args(line);
        assert_eq!(words[0], "stress-ng");
        let opts = parse(&words[1..]).unwrap();
        let mut w = StressNg::new(line, opts);
        w.params = params;
        w.setup(k, &env()).unwrap();
        let end = w.duration_hint().unwrap_or(100_000_000_000);
        k.run_until(end);
        w
    }

    /// A machine with the provisional Zen 5-class costs of workloads.md §2.5 and nothing else
    /// charged: c_pipe_write 200, c_pipe_read 160, c_ttwu 150, c_ctxsw_process 550 ns;
    /// c_syscall 100 ns (only the FIONREAD ioctl uses it here: the pipe costs include their
    /// syscall).
    fn zen5_like_on(spec: &str, ncpus: usize, preempt: PreemptModel) -> Kernel {
        let mut m = MachineDesc::ideal(ncpus, 250, preempt);
        for c in &mut m.costs {
            c.c_pipe_write = Nanos(200);
            c.c_pipe_read = Nanos(160);
            c.c_ttwu = Nanos(150);
            c.c_ctxsw_process = Nanos(550);
            c.c_syscall = Nanos(100);
        }
        let cfg = KernelConfig::parse(spec).unwrap();
        let mut k = Kernel::new(cfg, m, 7).unwrap();
        k.strict = true;
        k
    }

    fn zen5_like(spec: &str) -> Kernel {
        zen5_like_on(spec, 1, PreemptModel::Full)
    }

    #[test]
    fn co_located_pair_ping_pongs_under_v6_18() {
        // workloads.md §2.5 reference vector, re-derived with the kernel's runqueue clock
        // (the spec's derivation predates both clock rules below).
        //
        // ttwu_do_activate()/ttwu_runnable() update the clock once, then enqueue and run the
        // preemption check, so the check's update_curr() ends the writer's charge at the start
        // of its c_ttwu. A check that preempts asks rq_clock_skip_update(): __schedule() does
        // not update the clock, so everything the writer does after that clock update (c_ttwu,
        // and under preempt=none the syscall exit share e = c_syscall/2 = 50 that follows the
        // wake in pipe_write) is charged to the reader switched to. Let d = v_writer −
        // v_reader when the reader blocks on the empty pipe, δw the writer's charge from that
        // block to the wake, δr the reader's from the wake to its next block:
        //   d > 0: the reader is eligible, dequeued with lag d/2 and re-placed with it, the
        //          writer is ineligible at the check -> preempted; next d = d − δr;
        //   d < 0: the reader is ineligible and stays queued (DELAY_DEQUEUE), the check's
        //          update_curr adds δw to the writer -> ineligible unless −d ≥ δw (then a
        //          16-packet batch); next d = d + δw − δr;
        //   d = 0: the reader is eligible with lag 0, placed at V = v_writer: the writer stays
        //          eligible and protected -> batch.
        // Full preemption (the writer is switched out at the check, so its exit share is
        // left inside the pipe cost, before the effect): δw = switch 550 + W_fill 150 + write
        // 200 = 900, δr = c_ttwu 150 + switch 550 + W_check 30 + read 160 = 890.
        // Preempt=none (the writer runs e after the check; the blocked read pays its e after
        // its wakeup): δw = 550 + 150 + (200 − 50) = 850, δr = 150 + 50 + 550 + 50 + 30 + 110
        // = 940.
        //
        // (1) Without jitter every time is a multiple of 10 ns. Full: d climbs by 10 per
        //     delayed cycle from above −890 and reaches exactly 0 within 89 ping-pongs, plus
        //     at most ~3 eligible cycles (d − 890 each) to come down after a batch has left
        //     the writer ~2.5 µs ahead: ≥ one batch of 16 ops per ≤ 92 ping-pong ops,
        //     switches per op ≤ (2·92 + 2) / (92 + 16) = 1.72. None: d falls by 90 per
        //     delayed cycle and the batch threshold −850 is reached within 10 of them (3 more
        //     eligible cycles after a batch): ≤ (2·13 + 2) / (13 + 16) = 0.97 switches per op.
        // (2) With cost jitter (σ 0.10, about 85 ns per cycle over the seven costs) Full's
        //     ±10 ns drift is lost in the noise and the eligible drop to ≈ −890 lands within
        //     one σ of the threshold −900: batches come far more often than every 89 cycles,
        //     so fewer switches per op than the jitter-free bound: < 1.72. None keeps its −90
        //     drift: < 1.0. Throughput is the sum of what was run: per op W_fill + write +
        //     W_check + read = 540, plus 550 per switch, 150 per wakeup and (100 + 50)/512 for
        //     the FIONREAD ioctl (median-1 log-normal jitter has mean e^(σ²/2) = 1.005).
        //
        // Two machines: one CPU with full preemption, and §2.5's own setting, the pair pinned
        // to CPU 0 of a 2-CPU machine with preemption `none`.
        for jitter in [true, false] {
            for (ncpus, preempt, line) in [
                (1, PreemptModel::Full, "stress-ng --pipe 1 --timeout 1s"),
                (
                    2,
                    PreemptModel::None,
                    "cpus=0 stress-ng --pipe 1 --timeout 1s",
                ),
            ] {
                let spec = if jitter {
                    "v6.18"
                } else {
                    "v6.18 NO_SIM_JITTER"
                };
                let mut k = zen5_like_on(spec, ncpus, preempt);
                for c in &mut k.costs {
                    c.jitter_sigma_ppm = 100_000; // workloads.md §0.2 default σ 0.10
                }
                let (placement, _) = crate::workload::parse_placement(line).unwrap();
                let words = &args(line)[if ncpus == 1 { 1 } else { 2 }..];
                let mut w = StressNg::new(line, parse(words).unwrap());
                w.params = Some(Params {
                    w_fill_ns: 150,
                    w_check_ns: 30,
                });
                w.setup(&mut k, &Env { placement, ..env() }).unwrap();
                k.run_until(w.duration_hint().unwrap());
                let r = w.results(&k);
                assert!(r.success, "{line}");
                let s = r.summary();
                let n = s.c_total as f64;
                let per_op = k.stats.nr_switches as f64 / n;
                let bound = match (jitter, preempt) {
                    (false, PreemptModel::Full) => 1.72,
                    (false, _) => 0.97,
                    (true, PreemptModel::Full) => 1.72,
                    (true, _) => 1.0,
                };
                assert!(
                    per_op > 0.1 && per_op <= bound,
                    "{line} jitter {jitter}: {per_op} switches per op (bound {bound})"
                );
                if jitter {
                    let wakeups = (k.stats.ttwu_local
                        + k.stats.ttwu_remote
                        + k.stats.ttwu_delayed_requeue) as f64;
                    let per_op_ns =
                        1.005 * (540.0 + per_op * 550.0 + wakeups / n * 150.0 + 150.0 / 512.0);
                    let expect = 1e9 / per_op_ns;
                    let rel = (s.rate_real - expect).abs() / expect;
                    assert!(
                        rel < 0.015,
                        "{line}: ops/s {} vs {expect} by accounting",
                        s.rate_real
                    );
                }
                // all the writes but the stop packet are bogo ops
                let sh = w.shared.as_ref().unwrap().borrow();
                assert_eq!(sh.instances[0].stop_seq, Some(s.c_total + 1));
            }
        }
    }

    #[test]
    fn work_parameters_come_from_the_platform() {
        // One CPU, every kernel cost zero, no jitter; the platform gives w_fill 1 µs and
        // w_check 0.5 µs. Writer and reader alternate on the CPU, so one op costs 1.5 µs plus
        // the FIONREAD ioctl's 50 ns every 512 reads (c_syscall is 0): 1 s / 1500.098 ns =
        // 666 623 ops, give or take the one in flight at each end.
        let mut m = MachineDesc::ideal(1, 250, PreemptModel::Full);
        for (name, ns) in [("w_fill", 1_000), ("w_check", 500)] {
            let f = schedlab_platform::PROGRAM_COST_FIELDS
                .iter()
                .find(|f| (f.program, f.name) == ("stress-ng", name))
                .unwrap();
            m.programs.set(f, Nanos(ns));
        }
        let cfg = KernelConfig::parse("v6.18 NO_SIM_JITTER").unwrap();
        let mut k = Kernel::new(cfg, m, 1).unwrap();
        let w = run(&mut k, "stress-ng --pipe 1 --timeout 1s", None);
        let ops = w.results(&k).summary().c_total;
        assert!((666_620..=666_625).contains(&ops), "{ops} ops");
    }

    #[test]
    fn output_lines_and_metrics() {
        let mut k = zen5_like("v6.18 NO_SIM_JITTER");
        let w = run(
            &mut k,
            "stress-ng --pipe 2 --timeout 1s --metrics-brief",
            None,
        );
        let out = w.output(&k);
        let pid = k.tasks[w.tasks()[0].index()].pid;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 8, "{out}");
        assert_eq!(
            lines[0],
            format!("stress-ng: info:  [{pid}] setting to a 1 second run per stressor")
        );
        assert_eq!(
            lines[1],
            format!("stress-ng: info:  [{pid}] dispatching hogs: 2 pipe")
        );
        assert!(lines[4].starts_with(&format!("stress-ng: metrc: [{pid}] pipe ")));
        assert!(lines[6].ends_with("MB per sec pipe write rate (geometic mean of 2 instances)"));
        assert!(
            lines[7].contains("successful run completed in 1.00s"),
            "{out}"
        );
        let m = w.metrics(&k);
        let get = |n: &str| m.iter().find(|x| x.name == n).unwrap().value;
        let s = w.results(&k).summary();
        assert_eq!(get("bogo_ops_per_sec"), s.rate_real);
        assert_eq!(get("sched_switch"), k.stats.nr_switches as f64);
        // one CPU, two pairs: all CPU time is the workload's (fork/exit costs are zero here)
        assert!((s.u_time + s.s_time - 1.0).abs() < 0.01, "{s:?}");
        // MB/s: bytes / loop time / 2^20 per instance
        assert!(get("mb_per_sec_geomean") > 0.0);
        assert_eq!(w.tasks().len(), 5);
    }

    #[test]
    fn op_limit_and_pipe_size() {
        // --pipe-ops 1000 over 2 instances: ceil(1000 / 2) = 500 writes each.
        let mut k = zen5_like("v6.18");
        let w = run(
            &mut k,
            "stress-ng --pipe 2 --pipe-ops 1000 --pipe-size 8k --timeout 10s",
            None,
        );
        let r = w.results(&k);
        assert!(r.success);
        assert_eq!(r.summary().c_total, 1000);
        // 8 KiB = 2 pages of 4 KiB: the pipe has 2 slots
        assert!(k.ipc.pipes.iter().all(|p| p.slots == 2 && p.packet));
        // every pipe carried 500 data packets plus the stop packet
        assert!(k.ipc.pipes.iter().all(|p| p.bytes_written == 501 * 512));
    }

    #[test]
    fn placement_and_cgroup_are_inherited() {
        let (p, mut w) = parse_workload("cpus=1 stress-ng --pipe 2 --timeout 1s").unwrap();
        let cfg = KernelConfig::parse("v6.18").unwrap();
        let mut k = Kernel::new(cfg, MachineDesc::ideal(4, 250, PreemptModel::Full), 1).unwrap();
        let e = Env {
            placement: p,
            ..env()
        };
        w.setup(&mut k, &e).unwrap();
        k.run_until(10_000_000);
        let ts = w.tasks();
        assert_eq!(ts.len(), 5);
        for t in ts {
            let task = &k.tasks[t.index()];
            assert_eq!(task.nr_cpus_allowed, 1, "{}", task.comm);
            assert_eq!(task.cpu, 1, "{}", task.comm);
        }
        // cgroup=: the run resolves the path to Env::tg; the stressors inherit it
        let (p, mut w) = parse_workload("cgroup=/a stress-ng --pipe 1 --timeout 1s").unwrap();
        let tg = k.cgroup_mkdir_p("/a").unwrap();
        let e = Env {
            placement: p,
            tg: Some(tg),
            ..env()
        };
        w.setup(&mut k, &e).unwrap();
        k.run_until(20_000_000);
        // main + one writer and one reader per pipe instance
        let ts = w.tasks();
        assert_eq!(ts.len(), 3);
        for t in ts {
            assert_eq!(k.task_cgroup_path(t), "/a");
        }
    }

    #[test]
    fn same_seed_same_output() {
        let out = |seed: u64| {
            let p = Platform::builtin("rpi5").unwrap();
            let cfg = KernelConfig::parse("v6.12").unwrap();
            let mut k = Kernel::new(cfg, MachineDesc::from_platform(&p), seed).unwrap();
            let w = run(
                &mut k,
                "stress-ng --pipe 4 --timeout 0s --pipe-ops 40000 -M",
                None,
            );
            (w.output(&k), k.stats.nr_switches, k.stats.events)
        };
        let a = out(3);
        assert_eq!(a, out(3));
        assert_ne!(a.2, out(4).2, "jitter draws depend on the seed");
    }
}
