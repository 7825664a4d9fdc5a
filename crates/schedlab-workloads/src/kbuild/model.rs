//! The kernel build as task programs (workloads.md §8.2; the model and its unverified parts are
//! described in `mod.rs`), and the [`Workload`] that starts `make` and prints bash's `time`
//! report.

use super::options::{parse, Options, FULL_UNITS};
use super::output::{render, Report};
use crate::workload::{Better, Env, Metric, Workload, WorkloadError};
use schedlab_engine::rng::exp_q32;
use schedlab_engine::{Rng, MAX_SIM_NS};
use schedlab_sched::ipc::PipeId;
use schedlab_sched::sched::TaskId;
use schedlab_sched::{Ctx, Op, PollFd, Procfs, Program, Spawn, Sys, SysResult, TaskAttrs};
use std::cell::RefCell;
use std::rc::Rc;

/// σ of the lognormal cc1 work per unit, ppm (workloads.md §8.2: 0.9).
pub const SIGMA_PPM: u32 = 900_000;
/// `W_as = 0.08 × W_cc1`, ppm (workloads.md §8.2).
pub const AS_RATIO_PPM: u64 = 80_000;
/// Assembly cc1 writes per second of its work (bytes): the basis of the number of 4 KiB
/// chunks that go through the `-pipe` pipe. **Unverified** (schedlab's own estimate).
pub const ASM_BYTES_PER_CC1_SEC: u64 = 1 << 20;
/// Size of one `write()` of assembly by cc1 (stdio's buffer on a pipe, `st_blksize`).
pub const CHUNK_BYTES: u32 = 4096;
/// Serial processes of the prepare phase and of the vmlinux link (the work is split evenly).
pub const PREPARE_STEPS: u64 = 5;
pub const LINK_STEPS: u64 = 3;

/// Compile units per Kbuild directory, the basis of the number of sub-makes at `-jN`
/// (N > 1): ≈ 1 500 directories with objects for the full 12 000 units. **Unverified**
/// (schedlab's own estimate); `--units` scales the directories with the units.
pub const UNITS_PER_DIR: u32 = 8;

/// Defaults of the per-platform keys (`[programs.make]`), workloads.md §8.2.
pub const DEFAULT_W_CC1: u64 = 175_000_000;
pub const DEFAULT_W_OBJTOOL: u64 = 26_000_000;
pub const DEFAULT_W_FIXDEP: u64 = 2_000_000;
pub const DEFAULT_W_SHELL: u64 = 1_000_000;
pub const DEFAULT_PREPARE: u64 = 25_000_000_000;
pub const DEFAULT_LINK: u64 = 60_000_000_000;
pub const DEFAULT_MODPOST: u64 = 15_000_000_000;

/// Builds `make` from the words after it.
pub fn workload(line: &str, args: &[String]) -> Result<Box<dyn Workload>, WorkloadError> {
    let opts = parse(args).map_err(|e| WorkloadError::option(line, e.to_string()))?;
    Ok(Box::new(Kbuild::new(opts)))
}

/// Everything that sizes one build: the command line and the platform's `[programs.make]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conf {
    pub jobs: u32,
    pub units: u32,
    /// gcc `-pipe`: cc1 and as run concurrently, connected by a pipe.
    pub gcc_pipe: bool,
    /// objtool runs on every object (x86).
    pub objtool: bool,
    /// Median cc1 work per unit (ns at the reference core).
    pub w_cc1: u64,
    pub w_objtool: u64,
    pub w_fixdep: u64,
    /// Shell and gcc driver per job, split evenly between them.
    pub w_shell: u64,
    /// Serial phases of the full build (scaled by `units / 12 000` in [`Conf::serial`]).
    pub prepare: u64,
    pub link: u64,
    pub modpost: u64,
}

/// One serial process: its name and its work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub comm: &'static str,
    pub work: u64,
}

/// One compile unit: cc1's and as's work and the 4 KiB chunks of assembly between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    pub cc1: u64,
    pub as_: u64,
    pub chunks: u32,
}

impl Conf {
    /// The spec's defaults (x86: `-pipe` and objtool on).
    pub fn defaults(jobs: u32, units: u32) -> Conf {
        Conf {
            jobs,
            units,
            gcc_pipe: true,
            objtool: true,
            w_cc1: DEFAULT_W_CC1,
            w_objtool: DEFAULT_W_OBJTOOL,
            w_fixdep: DEFAULT_W_FIXDEP,
            w_shell: DEFAULT_W_SHELL,
            prepare: DEFAULT_PREPARE,
            link: DEFAULT_LINK,
            modpost: DEFAULT_MODPOST,
        }
    }

    /// The defaults overridden by the platform's `[programs.make]`.
    pub fn from_platform(opts: &Options, sys: &dyn Sys) -> Conf {
        let d = Conf::defaults(opts.jobs, opts.units);
        let get = |key: &str, dflt: u64| sys.program_cost("make", key).unwrap_or(dflt);
        Conf {
            gcc_pipe: get("gcc_pipe", d.gcc_pipe as u64) != 0,
            objtool: get("objtool", d.objtool as u64) != 0,
            w_cc1: get("w_cc1", d.w_cc1),
            w_objtool: get("w_objtool", d.w_objtool),
            w_fixdep: get("w_fixdep", d.w_fixdep),
            w_shell: get("w_shell", d.w_shell),
            prepare: get("prepare", d.prepare),
            link: get("link", d.link),
            modpost: get("modpost", d.modpost),
            ..d
        }
    }

    /// Mean cc1 work per unit: `median × e^(σ²/2)` (integer arithmetic).
    pub fn w_cc1_mean(&self) -> u64 {
        let s = SIGMA_PPM as i128;
        let x = ((s * s) << 32) / 2_000_000_000_000;
        ((self.w_cc1 as u128 * exp_q32(x as i64) as u128) >> 32) as u64
    }

    fn scaled(&self, full: u64) -> u64 {
        (full as u128 * self.units as u128 / FULL_UNITS as u128) as u64
    }

    /// The serial processes before the compile phase (prepare) and after it (vmlinux link,
    /// modpost), their work scaled with the number of units.
    pub fn serial(&self) -> (Vec<Step>, Vec<Step>) {
        let split = |comm: &'static str, total: u64, n: u64| -> Vec<Step> {
            (0..n)
                .map(|i| Step {
                    comm,
                    work: total * (i + 1) / n - total * i / n,
                })
                .collect()
        };
        let before = split("sh", self.scaled(self.prepare), PREPARE_STEPS);
        let mut after = split("ld", self.scaled(self.link), LINK_STEPS);
        after.push(Step {
            comm: "modpost",
            work: self.scaled(self.modpost),
        });
        (before, after)
    }

    /// Work of one compile job besides cc1 and as: shell + driver, objtool, fixdep.
    pub fn w_job_fixed(&self) -> u64 {
        self.w_shell + self.w_fixdep + if self.objtool { self.w_objtool } else { 0 }
    }

    /// Total user-space work of the serial phases (S) and of the compile jobs (P).
    pub fn totals(&self, units: &[Unit]) -> (u64, u64) {
        let (before, after) = self.serial();
        let s = before.iter().chain(after.iter()).map(|s| s.work).sum();
        // saturating: a million units at the one-hour cap of every key pass u64
        let p = units
            .iter()
            .fold(0u64, |a, u| a.saturating_add(u.cc1).saturating_add(u.as_))
            .saturating_add((units.len() as u64).saturating_mul(self.w_job_fixed()));
        (s, p)
    }
}

/// Draws the compile units: cc1 work lognormal (median `w_cc1`, σ 0.9), then scaled so that
/// the units' cc1 work adds up exactly to `units × mean` (the real build's work is the same
/// on every run: the draw only decides how it is spread over the units and their order);
/// `as` = 8 % of cc1; one 4 KiB chunk of assembly per 4 KiB of [`ASM_BYTES_PER_CC1_SEC`].
pub fn job_graph(conf: &Conf, rng: &mut Rng) -> Vec<Unit> {
    let n = conf.units as usize;
    let raw: Vec<u64> = (0..n)
        .map(|_| {
            let f = rng.lognormal_factor_q32(SIGMA_PPM) as u128;
            ((conf.w_cc1 as u128 * f) >> 32).max(1) as u64
        })
        .collect();
    let total_raw: u128 = raw.iter().map(|&r| r as u128).sum();
    let target = conf.units as u128 * conf.w_cc1_mean() as u128;
    let mut cum: u128 = 0;
    let mut prev: u128 = 0;
    raw.iter()
        .map(|&r| {
            cum += r as u128;
            let upto = target * cum / total_raw.max(1);
            let cc1 = (upto - prev) as u64;
            prev = upto;
            let bytes = cc1 as u128 * ASM_BYTES_PER_CC1_SEC as u128 / 1_000_000_000;
            // u128 and a u32 ceiling: with `[programs.make] w_cc1` near its one-hour cap a
            // unit's cc1 work times the ratio passes u64, its chunks u32
            let chunks = bytes
                .div_ceil(CHUNK_BYTES as u128)
                .clamp(1, u32::MAX as u128) as u32;
            Unit {
                cc1,
                as_: (cc1 as u128 * AS_RATIO_PPM as u128 / 1_000_000) as u64,
                chunks,
            }
        })
        .collect()
}

/// What the build's processes recorded, shared by the programs and the workload.
#[derive(Debug, Default)]
struct Shared {
    /// Every process of the build, make first.
    tasks: Vec<TaskId>,
    start: u64,
    /// make's exit.
    end: Option<u64>,
    prepare_end: Option<u64>,
    compile_end: Option<u64>,
    units: u32,
    jobs_started: u64,
    jobs_done: u64,
    forks: u64,
    execs: u64,
    token_reads: u64,
    token_writes: u64,
    /// Token reads (by any make) that followed a `pselect()` which another make's token write
    /// ended: the jobserver's hand-offs.
    token_handoffs: u64,
    /// `pselect()` calls on the jobserver, and those SIGCHLD interrupted.
    token_waits: u64,
    token_waits_interrupted: u64,
    /// Sub-makes started (`make -f scripts/Makefile.build obj=DIR`).
    submakes: u64,
    /// Compile jobs alive (from make's fork of the job's shell to its reaping) and the most
    /// at once; cc1 processes alive and the most at once.
    jobs_alive: u32,
    max_jobs_alive: u32,
    cc1_alive: u32,
    max_cc1_alive: u32,
    /// Work totals of the graph (S, P), ns.
    serial_work: u64,
    parallel_work: u64,
}

type Sh = Rc<RefCell<Shared>>;

fn spawn(sh: &Sh, comm: &'static str, program: Box<dyn Program>) -> Op {
    sh.borrow_mut().forks += 1;
    Op::Spawn(Box::new(Spawn {
        program,
        thread: false,
        attrs: TaskAttrs {
            comm: Some(comm.to_string()),
            ..Default::default()
        },
    }))
}

fn exec(sh: &Sh, cx: &Ctx<'_>) -> Op {
    let mut s = sh.borrow_mut();
    s.tasks.push(cx.task());
    s.execs += 1;
    Op::Exec
}

/// A process that execs, works and exits (the serial steps, objtool, fixdep, and cc1/as
/// without `-pipe`).
struct Tool {
    sh: Sh,
    work: u64,
    step: u32,
    /// cc1: counted in `cc1_alive`.
    cc1: bool,
}

impl Program for Tool {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        self.step += 1;
        match self.step {
            1 => {
                if self.cc1 {
                    let mut s = self.sh.borrow_mut();
                    s.cc1_alive += 1;
                    s.max_cc1_alive = s.max_cc1_alive.max(s.cc1_alive);
                }
                exec(&self.sh, cx)
            }
            2 if self.work > 0 => Op::Run(self.work),
            _ => {
                if self.cc1 {
                    self.sh.borrow_mut().cc1_alive -= 1;
                }
                Op::Exit
            }
        }
    }
}

/// cc1 with `-pipe`: its work in `chunks` even pieces, each followed by a 4 KiB write.
struct Cc1Pipe {
    sh: Sh,
    unit: Unit,
    pipe: PipeId,
    /// Chunks written; `None` before the exec.
    done: Option<u32>,
    wrote: bool,
}

impl Program for Cc1Pipe {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        let Some(i) = self.done else {
            self.done = Some(0);
            let mut s = self.sh.borrow_mut();
            s.cc1_alive += 1;
            s.max_cc1_alive = s.max_cc1_alive.max(s.cc1_alive);
            drop(s);
            return exec(&self.sh, cx);
        };
        let n = self.unit.chunks as u64;
        if i as u64 == n {
            self.sh.borrow_mut().cc1_alive -= 1;
            return Op::Exit;
        }
        if !self.wrote {
            self.wrote = true;
            let w = self.unit.cc1;
            let piece = cc1_piece(w, i, n);
            if piece > 0 {
                return Op::Run(piece);
            }
        }
        self.wrote = false;
        self.done = Some(i + 1);
        Op::PipeWrite {
            pipe: self.pipe,
            bytes: CHUNK_BYTES,
        }
    }
}

/// cc1's work before chunk `i` of `n` is written: the even split `w(i+1)/n − wi/n` (in
/// u128: `w` near the one-hour cap times a billion chunks passes u64).
fn cc1_piece(w: u64, i: u32, n: u64) -> u64 {
    let (w, i, n) = (w as u128, i as u128, n as u128);
    (w * (i + 1) / n - w * i / n) as u64
}

/// as with `-pipe`: reads the assembly as it comes and does its work in proportion.
struct AsPipe {
    sh: Sh,
    unit: Unit,
    pipe: PipeId,
    started: bool,
    got: u64,
    worked: u64,
}

impl Program for AsPipe {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        if !self.started {
            self.started = true;
            return exec(&self.sh, cx);
        }
        let total = self.unit.chunks as u64 * CHUNK_BYTES as u64;
        if let SysResult::Bytes(n) = last {
            self.got += n as u64;
            let upto = (self.unit.as_ as u128 * self.got as u128 / total as u128) as u64;
            let w = upto - self.worked;
            self.worked = upto;
            if w > 0 {
                return Op::Run(w);
            }
        }
        if self.got < total {
            return Op::PipeRead {
                pipe: self.pipe,
                bytes: CHUNK_BYTES,
            };
        }
        Op::Exit
    }
}

/// The gcc driver: cc1 and as, through a pipe (both at once) or one after the other.
struct Gcc {
    sh: Sh,
    conf: Rc<Conf>,
    unit: Unit,
    step: u32,
    pipe: Option<PipeId>,
}

impl Gcc {
    fn tool(&self, comm: &'static str, work: u64, cc1: bool) -> Op {
        let t = Box::new(Tool {
            sh: self.sh.clone(),
            work,
            step: 0,
            cc1,
        });
        spawn(&self.sh, comm, t)
    }
}

impl Program for Gcc {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        self.step += 1;
        match (self.conf.gcc_pipe, self.step) {
            (_, 1) => exec(&self.sh, cx),
            (_, 2) if self.conf.w_shell / 2 > 0 => Op::Run(self.conf.w_shell / 2),
            (_, 2) => self.next(cx, SysResult::None),
            // -pipe: pipe(), fork cc1 (writer), fork as (reader), wait for both
            (true, 3) => {
                self.pipe = Some(cx.new_pipe(false));
                Op::Syscall(cx.costs().c_syscall.0)
            }
            (true, 4) => {
                let c = Box::new(Cc1Pipe {
                    sh: self.sh.clone(),
                    unit: self.unit,
                    pipe: self.pipe.unwrap(),
                    done: None,
                    wrote: false,
                });
                spawn(&self.sh, "cc1", c)
            }
            (true, 5) => {
                let a = Box::new(AsPipe {
                    sh: self.sh.clone(),
                    unit: self.unit,
                    pipe: self.pipe.unwrap(),
                    started: false,
                    got: 0,
                    worked: 0,
                });
                spawn(&self.sh, "as", a)
            }
            (true, 6 | 7) => Op::WaitChild,
            // no -pipe: cc1 → wait → as → wait (through a temporary file)
            (false, 3) => self.tool("cc1", self.unit.cc1, true),
            (false, 4) => Op::WaitChild,
            (false, 5) => self.tool("as", self.unit.as_, false),
            (false, 6) => Op::WaitChild,
            _ => Op::Exit,
        }
    }
}

/// The shell of one compile job (`sh -c '<recipe>'`): gcc, then objtool (x86), then fixdep,
/// each forked and waited for.
struct JobShell {
    sh: Sh,
    conf: Rc<Conf>,
    unit: Unit,
    step: u32,
}

impl JobShell {
    fn tool(&self, comm: &'static str, work: u64) -> Op {
        let t = Box::new(Tool {
            sh: self.sh.clone(),
            work,
            step: 0,
            cc1: false,
        });
        spawn(&self.sh, comm, t)
    }
}

impl Program for JobShell {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        self.step += 1;
        match self.step {
            1 => exec(&self.sh, cx),
            2 if self.conf.w_shell - self.conf.w_shell / 2 > 0 => {
                Op::Run(self.conf.w_shell - self.conf.w_shell / 2)
            }
            2 => self.next(cx, SysResult::None),
            3 => {
                let g = Box::new(Gcc {
                    sh: self.sh.clone(),
                    conf: self.conf.clone(),
                    unit: self.unit,
                    step: 0,
                    pipe: None,
                });
                spawn(&self.sh, "gcc", g)
            }
            4 => Op::WaitChild,
            5 if self.conf.objtool => self.tool("objtool", self.conf.w_objtool),
            5 => {
                self.step = 6;
                self.next(cx, SysResult::None)
            }
            6 => Op::WaitChild,
            7 => self.tool("fixdep", self.conf.w_fixdep),
            8 => Op::WaitChild,
            _ => Op::Exit,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MState {
    /// First call: draw the job graph.
    Start,
    /// The last operation forked serial step `i` of the list (false: before the compile
    /// phase, true: after it), or waited for it.
    SerialForked(bool, usize),
    SerialWaited(bool, usize),
    /// The last operation created the jobserver pipe / wrote its N − 1 tokens.
    PipeCreated,
    /// In the compile phase (its job loop).
    Compile,
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    Other,
    /// A non-blocking read of a token (after `pselect()` found the pipe readable).
    ReadToken,
    /// `pselect()` on the jobserver; the number of token writes when it was called.
    Pselect(u64),
    Waited,
}

/// What one make runs as its jobs: compile jobs (a sub-make, or the one make at `-j1`) or
/// sub-makes (the top-level make at `-jN`).
enum Jobs {
    Units(Vec<Unit>),
    Dirs(Vec<Vec<Unit>>),
}

impl Jobs {
    fn len(&self) -> usize {
        match self {
            Jobs::Units(u) => u.len(),
            Jobs::Dirs(d) => d.len(),
        }
    }
}

/// GNU make's job loop of one make (job.c new_job / reap_children / jobserver_acquire): a job
/// starts on the make's implicit slot when none of its jobs runs, otherwise on a token taken
/// from the jobserver: `pselect()` on the pipe with SIGCHLD unblocked, then a non-blocking
/// `read()` of one byte when it is readable, or a reap when a child exited. With no job left
/// to start it waits for its jobs. A reaped job's token is written back while it holds one
/// (the last job runs on the implicit slot). At `-j1` there is no jobserver and one job runs
/// at a time.
struct JobLoop {
    sh: Sh,
    conf: Rc<Conf>,
    jobs: Jobs,
    jobserver: Option<PipeId>,
    next: usize,
    running: u32,
    /// Tokens read from the jobserver and not yet written back.
    tokens: u32,
    last: Last,
}

impl JobLoop {
    fn new(sh: Sh, conf: Rc<Conf>, jobs: Jobs, jobserver: Option<PipeId>) -> JobLoop {
        JobLoop {
            sh,
            conf,
            jobs,
            jobserver,
            next: 0,
            running: 0,
            tokens: 0,
            last: Last::Other,
        }
    }

    /// Forks the next job: the shell of a compile job, or a sub-make.
    fn start_job(&mut self) -> Op {
        let i = self.next;
        self.next += 1;
        self.running += 1;
        self.last = Last::Other;
        match &self.jobs {
            Jobs::Units(units) => {
                let unit = units[i];
                {
                    let mut s = self.sh.borrow_mut();
                    s.jobs_started += 1;
                    s.jobs_alive += 1;
                    s.max_jobs_alive = s.max_jobs_alive.max(s.jobs_alive);
                }
                let j = Box::new(JobShell {
                    sh: self.sh.clone(),
                    conf: self.conf.clone(),
                    unit,
                    step: 0,
                });
                spawn(&self.sh, "sh", j)
            }
            Jobs::Dirs(dirs) => {
                self.sh.borrow_mut().submakes += 1;
                let m = Box::new(SubMake {
                    started: false,
                    jobs: JobLoop::new(
                        self.sh.clone(),
                        self.conf.clone(),
                        Jobs::Units(dirs[i].clone()),
                        self.jobserver,
                    ),
                });
                spawn(&self.sh, "make", m)
            }
        }
    }

    /// The next operation of the loop given the last one's result; `None` when every job
    /// has been reaped.
    fn step(&mut self, last: SysResult) -> Option<Op> {
        match (self.last, last) {
            (Last::ReadToken, SysResult::Bytes(n)) if n > 0 => {
                self.tokens += n;
                self.sh.borrow_mut().token_reads += 1;
                return Some(self.start_job());
            }
            (Last::Pselect(writes), SysResult::Ready(_)) => {
                {
                    let mut s = self.sh.borrow_mut();
                    if s.token_writes > writes {
                        s.token_handoffs += 1;
                    }
                }
                self.last = Last::ReadToken;
                return Some(Op::PipeReadNonblock {
                    pipe: self.jobserver.expect("a token wait has a jobserver"),
                    bytes: 1,
                });
            }
            (Last::Pselect(_), SysResult::Interrupted) => {
                // SIGCHLD: reap the dead child (wait() returns the zombie at once)
                self.sh.borrow_mut().token_waits_interrupted += 1;
                self.last = Last::Waited;
                return Some(Op::WaitChild);
            }
            (Last::Waited, SysResult::Pid(_)) => {
                self.running -= 1;
                if let Jobs::Units(_) = self.jobs {
                    let mut s = self.sh.borrow_mut();
                    s.jobs_done += 1;
                    s.jobs_alive -= 1;
                }
                if self.tokens > 0 {
                    self.tokens -= 1;
                    self.sh.borrow_mut().token_writes += 1;
                    self.last = Last::Other;
                    return Some(Op::PipeWrite {
                        pipe: self.jobserver.expect("tokens come from the jobserver"),
                        bytes: 1,
                    });
                }
            }
            _ => {}
        }
        if self.next < self.jobs.len() && self.running < self.conf.jobs {
            if self.running == 0 {
                return Some(self.start_job());
            }
            let mut s = self.sh.borrow_mut();
            s.token_waits += 1;
            self.last = Last::Pselect(s.token_writes);
            return Some(Op::Pselect {
                fd: PollFd::Pipe(self.jobserver.expect("-jN with N > 1")),
            });
        }
        if self.running > 0 {
            self.last = Last::Waited;
            return Some(Op::WaitChild);
        }
        None
    }
}

/// A Kbuild sub-make (`make -f scripts/Makefile.build obj=DIR`): exec, then the compile jobs
/// of its directory under the shared jobserver, then exit.
struct SubMake {
    started: bool,
    jobs: JobLoop,
}

impl Program for SubMake {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        if !self.started {
            self.started = true;
            return exec(&self.jobs.sh, cx);
        }
        self.jobs.step(last).unwrap_or(Op::Exit)
    }
}

/// The top-level make: prepare, the compile phase (at `-jN`, N > 1, through one sub-make per
/// directory sharing its jobserver; at `-j1` every compile job itself), link, modpost.
struct Make {
    sh: Sh,
    conf: Rc<Conf>,
    state: MState,
    units: Vec<Unit>,
    before: Vec<Step>,
    after: Vec<Step>,
    jobserver: Option<PipeId>,
    jobs: Option<JobLoop>,
}

impl Make {
    fn serial_fork(&mut self, after: bool, i: usize) -> Op {
        let list = if after { &self.after } else { &self.before };
        let step = list[i];
        self.state = MState::SerialForked(after, i);
        let t = Box::new(Tool {
            sh: self.sh.clone(),
            work: step.work,
            step: 0,
            cc1: false,
        });
        spawn(&self.sh, step.comm, t)
    }

    /// The phase after the serial list `after` (or the compile phase) is done.
    fn after_list(&mut self, cx: &mut Ctx<'_>, after: bool) -> Op {
        if after {
            self.state = MState::Done;
            self.sh.borrow_mut().end = Some(cx.now());
            return Op::Exit;
        }
        self.sh.borrow_mut().prepare_end = Some(cx.now());
        if self.conf.jobs > 1 {
            // make's jobserver: a pipe with N − 1 one-byte tokens
            self.jobserver = Some(cx.new_pipe(false));
            self.state = MState::PipeCreated;
            return Op::Syscall(cx.costs().c_syscall.0);
        }
        self.start_compile(cx)
    }

    /// Starts the compile phase's job loop: at `-j1` over the units, else over the
    /// directories (`UNITS_PER_DIR` units each, the last ones possibly fewer).
    fn start_compile(&mut self, cx: &mut Ctx<'_>) -> Op {
        let units = std::mem::take(&mut self.units);
        let jobs = if self.jobserver.is_some() {
            let n = units.len();
            let d = n.div_ceil(UNITS_PER_DIR as usize).max(1);
            Jobs::Dirs(
                (0..d)
                    .map(|i| units[i * n / d..(i + 1) * n / d].to_vec())
                    .collect(),
            )
        } else {
            Jobs::Units(units)
        };
        self.jobs = Some(JobLoop::new(
            self.sh.clone(),
            self.conf.clone(),
            jobs,
            self.jobserver,
        ));
        self.state = MState::Compile;
        self.compile(cx, SysResult::None)
    }

    fn compile(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        if let Some(op) = self.jobs.as_mut().expect("in the compile phase").step(last) {
            return op;
        }
        self.sh.borrow_mut().compile_end = Some(cx.now());
        if self.after.is_empty() {
            return self.after_list(cx, true);
        }
        self.serial_fork(true, 0)
    }
}

impl Program for Make {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        match self.state {
            MState::Start => {
                self.units = job_graph(&self.conf, cx.rng());
                let (before, after) = self.conf.serial();
                let (s, p) = self.conf.totals(&self.units);
                {
                    let mut sh = self.sh.borrow_mut();
                    sh.tasks.push(cx.task());
                    sh.serial_work = s;
                    sh.parallel_work = p;
                }
                self.before = before;
                self.after = after;
                if self.before.is_empty() {
                    return self.after_list(cx, false);
                }
                self.serial_fork(false, 0)
            }
            MState::SerialForked(after, i) => {
                self.state = MState::SerialWaited(after, i);
                Op::WaitChild
            }
            MState::SerialWaited(after, i) => {
                let len = if after {
                    self.after.len()
                } else {
                    self.before.len()
                };
                if i + 1 < len {
                    return self.serial_fork(after, i + 1);
                }
                self.after_list(cx, after)
            }
            MState::PipeCreated => {
                self.state = MState::Compile;
                Op::PipeWrite {
                    pipe: self.jobserver.unwrap(),
                    bytes: self.conf.jobs - 1,
                }
            }
            MState::Compile if self.jobs.is_none() => self.start_compile(cx),
            MState::Compile => self.compile(cx, last),
            MState::Done => Op::Exit,
        }
    }
}

/// The kernel build model.
pub struct Kbuild {
    opts: Options,
    conf: Option<Conf>,
    shared: Option<Sh>,
}

impl Kbuild {
    pub fn new(opts: Options) -> Kbuild {
        Kbuild {
            opts,
            conf: None,
            shared: None,
        }
    }

    /// The build's sizes as set up (`None` before `setup`).
    pub fn conf(&self) -> Option<&Conf> {
        self.conf.as_ref()
    }

    /// What the run did so far.
    pub fn report(&self, procfs: &dyn Procfs) -> Report {
        let Some(sh) = self.shared.as_ref() else {
            return Report::default();
        };
        let sh = sh.borrow();
        let (mut user, mut sys) = (0, 0);
        for &t in &sh.tasks {
            let st = procfs.task_stat(t);
            user += st.utime;
            sys += st.stime;
        }
        let now = procfs.now();
        Report {
            jobs: self.opts.jobs,
            units: sh.units,
            finished: sh.end.is_some(),
            real_ns: sh.end.unwrap_or(now).saturating_sub(sh.start),
            user_ns: user,
            sys_ns: sys,
            prepare_ns: sh.prepare_end.map(|t| t - sh.start),
            compile_ns: match (sh.prepare_end, sh.compile_end) {
                (Some(a), Some(b)) => Some(b - a),
                _ => None,
            },
            final_ns: match (sh.compile_end, sh.end) {
                (Some(a), Some(b)) => Some(b - a),
                _ => None,
            },
            jobs_done: sh.jobs_done,
            forks: sh.forks,
            execs: sh.execs,
            processes: sh.tasks.len() as u64,
            token_reads: sh.token_reads,
            token_writes: sh.token_writes,
            token_handoffs: sh.token_handoffs,
            token_waits: sh.token_waits,
            token_waits_interrupted: sh.token_waits_interrupted,
            submakes: sh.submakes,
            max_jobs_alive: sh.max_jobs_alive,
            max_cc1_alive: sh.max_cc1_alive,
            serial_work_ns: sh.serial_work,
            parallel_work_ns: sh.parallel_work,
        }
    }
}

impl Workload for Kbuild {
    fn program(&self) -> &str {
        "make"
    }

    fn max_tasks(&self, _ncpus: usize) -> u64 {
        // live at once: make, one serial step, and per job slot a sub-make (-jN), sh, gcc, cc1
        // and as (objtool and fixdep replace cc1 and as); pids of exited processes are reused
        2 + 5 * u64::from(self.opts.jobs)
    }

    fn warnings(&self) -> Vec<String> {
        self.opts.warnings.clone()
    }

    fn ends_by_itself(&self) -> bool {
        true
    }

    fn completed(&self) -> Option<bool> {
        self.shared.as_ref().map(|sh| sh.borrow().end.is_some())
    }

    fn duration_hint(&self) -> Option<u64> {
        // three times the whole work done serially, plus a minute: the run ends when make
        // exits, long before that
        let c = Conf::defaults(self.opts.jobs, self.opts.units);
        let (before, after) = c.serial();
        let s: u64 = before.iter().chain(after.iter()).map(|s| s.work).sum();
        let per_unit = c.w_cc1_mean() + c.w_cc1_mean() * AS_RATIO_PPM / 1_000_000 + c.w_job_fixed();
        let p = per_unit.saturating_mul(self.opts.units as u64);
        Some(
            (s.saturating_add(p))
                .saturating_mul(3)
                .saturating_add(60_000_000_000)
                .min(MAX_SIM_NS),
        )
    }

    fn setup(&mut self, sys: &mut dyn Sys, env: &Env) -> Result<(), WorkloadError> {
        let conf = Conf::from_platform(&self.opts, sys);
        let shared = Rc::new(RefCell::new(Shared {
            start: sys.now(),
            units: conf.units,
            ..Default::default()
        }));
        let conf_rc = Rc::new(conf.clone());
        let make = Box::new(Make {
            sh: shared.clone(),
            conf: conf_rc,
            state: MState::Start,
            units: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
            jobserver: None,
            jobs: None,
        });
        let attrs = env.placement.attrs("make", env.tg);
        let t = sys.fork(make, &attrs);
        sys.wake_up_new_task(t);
        self.conf = Some(conf);
        self.shared = Some(shared);
        Ok(())
    }

    fn output(&self, procfs: &dyn Procfs) -> String {
        render(&self.report(procfs))
    }

    fn metrics(&self, procfs: &dyn Procfs) -> Vec<Metric> {
        let r = self.report(procfs);
        let s = |ns: u64| ns as f64 / 1e9;
        let mut out = vec![
            Metric::new("real_s", s(r.real_ns), "s", Better::Lower),
            Metric::new("user_s", s(r.user_ns), "s", Better::Lower),
            Metric::new("sys_s", s(r.sys_ns), "s", Better::Lower),
            Metric::new("finished", r.finished as u64 as f64, "", Better::Higher),
            Metric::new("jobs", r.jobs_done as f64, "", Better::Higher),
            Metric::new("forks", r.forks as f64, "", Better::Lower),
            Metric::new("execs", r.execs as f64, "", Better::Lower),
        ];
        if r.jobs > 1 {
            out.push(Metric::new(
                "submakes",
                r.submakes as f64,
                "",
                Better::Lower,
            ));
            out.push(Metric::new(
                "token_waits",
                r.token_waits as f64,
                "",
                Better::Lower,
            ));
            out.push(Metric::new(
                "token_handoffs",
                r.token_handoffs as f64,
                "",
                Better::Lower,
            ));
        }
        for (name, v) in [
            ("prepare_s", r.prepare_ns),
            ("compile_s", r.compile_ns),
            ("link_s", r.final_ns),
        ] {
            if let Some(v) = v {
                out.push(Metric::new(name, s(v), "s", Better::Lower));
            }
        }
        out
    }

    fn tasks(&self) -> Vec<TaskId> {
        self.shared
            .as_ref()
            .map(|sh| sh.borrow().tasks.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::parse_placement;
    use schedlab_engine::Nanos;
    use schedlab_sched::sched::Policy;
    use schedlab_sched::{Kernel, KernelConfig, MachineDesc, PreemptModel};

    /// An ideal machine (every kernel cost zero, no jitter) with the given fork/exec/exit
    /// costs, and `[programs.make] gcc_pipe` as given.
    fn machine(ncpus: usize, pipe: bool, fork_exec_exit_us: (u64, u64, u64)) -> Kernel {
        let mut m = MachineDesc::ideal(ncpus, 250, PreemptModel::Voluntary);
        for c in &mut m.costs {
            c.c_fork = Nanos(fork_exec_exit_us.0 * 1000);
            c.c_exec = Nanos(fork_exec_exit_us.1 * 1000);
            c.c_exit = Nanos(fork_exec_exit_us.2 * 1000);
        }
        let f = schedlab_platform::PROGRAM_COST_FIELDS
            .iter()
            .find(|f| f.program == "make" && f.name == "gcc_pipe")
            .unwrap();
        m.programs.set(f, Nanos(pipe as u64));
        let cfg = KernelConfig::parse("v6.19 NO_SIM_JITTER").unwrap();
        let mut k = Kernel::new(cfg, m, 7).unwrap();
        k.strict = true;
        k
    }

    /// The even split of cc1's work over its chunks does not overflow at the sizes the
    /// one-hour cap of `[programs.make]` allows (found by the fuzz campaign's review).
    #[test]
    fn cc1_pieces_at_the_cap() {
        // 4000 s of work in 2e9 chunks: the last piece is 4e12 − ⌊4e12 × 1999999999 / 2e9⌋
        // = 4e12 − 3999999998000 = 2000 ns (4e12 × 2e9 = 8e21 passes u64)
        assert_eq!(
            cc1_piece(4_000_000_000_000, 1_999_999_999, 2_000_000_000),
            2000
        );
        // 10 ns in 4 chunks: 2, 3, 2, 3 (⌊10(i+1)/4⌋ − ⌊10i/4⌋)
        let v: Vec<u64> = (0..4).map(|i| cc1_piece(10, i, 4)).collect();
        assert_eq!(v, vec![2, 3, 2, 3]);
    }

    /// Runs a `[prefixes] make ...` line to its end; returns the model.
    fn build(k: &mut Kernel, line: &str) -> Kbuild {
        let (placement, words) = parse_placement(line).unwrap();
        assert_eq!(words[0], "make");
        let mut w = Kbuild::new(parse(&words[1..]).unwrap());
        let env = Env {
            placement,
            tg: None,
            index: 0,
            duration_ns: None,
        };
        w.setup(k, &env).unwrap();
        let limit = w.duration_hint().unwrap();
        let stop = k.run_until(limit);
        assert!(stop < limit, "{line}: the build did not finish");
        w
    }

    fn metric(w: &dyn Workload, k: &Kernel, name: &str) -> f64 {
        w.metrics(k)
            .into_iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no metric {name}"))
            .value
    }

    #[test]
    fn mean_cc1_work_is_the_lognormal_mean() {
        // 175 ms × e^(0.9²/2) = 175 ms × e^0.405; e^0.405 = 1.5 × e^(0.405 − ln 1.5) =
        // 1.5 × e^(−0.000465) = 1.4993027 → 262.378 ms (workloads.md §8.2: "mean ≈ 0.26 s")
        let m = Conf::defaults(1, FULL_UNITS).w_cc1_mean() as i64;
        assert!((m - 262_378_000).abs() < 1_000, "{m}");
    }

    #[test]
    fn job_graph_totals_are_the_configured_p_and_s() {
        let c = Conf::defaults(8, FULL_UNITS);
        let mean = c.w_cc1_mean();
        let units = job_graph(&c, &mut Rng::from_seed(1));
        assert_eq!(units.len(), 12_000);
        // cc1: exactly units × mean (the draw is scaled to it)
        let cc1: u64 = units.iter().map(|u| u.cc1).sum();
        assert_eq!(cc1, 12_000 * mean);
        // as: 8 % of each unit's cc1, rounded down per unit (< 1 ns each)
        let as_: u64 = units.iter().map(|u| u.as_).sum();
        let want = cc1 * 8 / 100;
        assert!(as_ <= want && want - as_ < 12_000, "{as_} vs {want}");
        // S = 25 + 60 + 15 = 100 s exactly; P = 3 148.536 s × 1.08 + 12 000 × (1 + 2 + 26)
        // ms = 3 400.418 + 348 = 3 748.418 s
        let (s, p) = c.totals(&units);
        assert_eq!(s, 100_000_000_000);
        assert!((p as f64 / 1e9 - 3748.418).abs() < 0.01, "{p}");
        // lognormal spread: the median unit is near the (scaled) median of 175 ms, the
        // largest well above the mean (σ 0.9 over 12 000 draws: max ≈ e^(0.9 × 3.8) ≈ 30×)
        let mut sorted: Vec<u64> = units.iter().map(|u| u.cc1).collect();
        sorted.sort_unstable();
        let med = sorted[6_000] as f64 / 1e6;
        assert!((160.0..190.0).contains(&med), "median {med} ms");
        assert!(sorted[11_999] > 10 * mean);
        // the same seed draws the same graph; another seed another order
        assert_eq!(units, job_graph(&c, &mut Rng::from_seed(1)));
        assert_ne!(units, job_graph(&c, &mut Rng::from_seed(2)));
    }

    #[test]
    fn chunks_follow_the_assembly_size() {
        // One unit: its cc1 work is the mean, 262.378 ms → 0.262378 × 1 048 576 B =
        // 275 122 B of assembly → 275 122 / 4 096 = 67.2 → 68 chunks.
        let c = Conf::defaults(1, 1);
        let u = job_graph(&c, &mut Rng::from_seed(3));
        assert_eq!(u.len(), 1);
        assert_eq!(u[0].cc1, c.w_cc1_mean());
        assert_eq!(u[0].chunks, 68);
        // --units scales the serial phases: 1/12 000 of 100 s = 8.333 ms
        let (s, _) = c.totals(&u);
        assert_eq!(
            s,
            25_000_000_000 / 12_000 + 60_000_000_000 / 12_000 + 1_250_000
        );
    }

    #[test]
    fn j1_on_one_cpu_takes_the_work_plus_fork_exec_exit() {
        // One CPU, no other kernel cost: the CPU is never idle and the build's time is its
        // work plus c_fork + c_exec + c_exit (60 + 300 + 50 µs) per process forked: 5 prepare
        // steps, 6 per unit (sh, gcc, cc1, as, objtool, fixdep), 3 ld + modpost. The real time
        // stops when make exits, before its own c_exit. The same with and without -pipe.
        for pipe in [true, false] {
            let mut k = machine(1, pipe, (60, 300, 50));
            let kb = build(&mut k, "make -j1 --units 10");
            let r = kb.report(&k);
            assert!(r.finished);
            let forked = 5 + 6 * 10 + 4;
            assert_eq!((r.forks, r.execs), (forked, forked));
            assert_eq!(r.processes, 1 + forked);
            let overhead = forked * 410_000;
            let work = r.serial_work_ns + r.parallel_work_ns;
            assert_eq!(r.real_ns, work + overhead, "pipe {pipe}");
            assert_eq!(r.user_ns, work, "pipe {pipe}");
            // system time: every fork, exec and exit, make's exit included
            assert_eq!(r.sys_ns, overhead + 50_000, "pipe {pipe}");
            assert_eq!(r.jobs_done, 10);
            assert_eq!((r.token_reads, r.token_writes), (0, 0)); // -j1: no jobserver
            assert_eq!(kb.conf().unwrap().gcc_pipe, pipe);
        }
    }

    #[test]
    fn never_more_than_n_jobs_and_every_token_goes_back() {
        // -j3 on 4 CPUs, 40 units: make starts a job on its implicit slot and two on tokens
        // at once; at no time are more than 3 jobs (or 3 cc1) alive; every token read is
        // written back, so the jobserver pipe (the first pipe of the run) received the 2
        // initial tokens plus one byte per token returned.
        let mut k = machine(4, true, (60, 300, 50));
        let kb = build(&mut k, "make -j3 --units 40");
        let r = kb.report(&k);
        assert!(r.finished);
        assert_eq!(r.max_jobs_alive, 3);
        assert!((1..=3).contains(&r.max_cc1_alive), "{}", r.max_cc1_alive);
        assert_eq!(r.jobs_done, 40);
        assert!(r.token_reads >= 2);
        assert_eq!(r.token_reads, r.token_writes);
        assert_eq!(k.ipc.pipes[0].bytes_written, 2 + r.token_writes);
        // per unit one pipe between cc1 and as (-pipe), after the jobserver's
        assert_eq!(k.ipc.pipes.len(), 1 + 40);
        // -j40 on 4 CPUs: all 40 jobs at once. 40 units are 5 directories of 8: make runs
        // the 5 sub-makes on its implicit slot and 4 tokens, each sub-make runs its first
        // job on its own slot and 7 on tokens (5 × 7 = 35): 39 token reads, all 39 tokens
        // taken long before the first job (≈ 0.3 s of work) ends.
        let mut k = machine(4, false, (60, 300, 50));
        let kb = build(&mut k, "make -j40 --units 40");
        let r = kb.report(&k);
        assert_eq!((r.max_jobs_alive, r.jobs_done), (40, 40));
        assert_eq!(r.submakes, 5);
        assert_eq!(r.token_reads, 39);
        assert!(k.ipc.pipes.len() == 1, "no -pipe: only the jobserver");
    }

    /// The sum of `nr_wakeups` and of `nr_wakeups_sync` over the build's makes.
    fn make_wakeups(k: &Kernel, kb: &Kbuild) -> (u64, u64) {
        kb.tasks()
            .iter()
            .map(|t| &k.tasks[t.index()])
            .filter(|t| t.comm == "make")
            .fold((0, 0), |(a, b), t| {
                (a + t.stats.nr_wakeups, b + t.stats.nr_wakeups_sync)
            })
    }

    #[test]
    fn sub_makes_share_the_jobserver_and_hand_tokens_over() {
        // -j4 on 8 CPUs, 64 units = 8 directories of 8 (UNITS_PER_DIR): make runs the 8
        // sub-makes under the jobserver, each sub-make its 8 compile jobs.
        let mut k = machine(8, true, (60, 300, 50));
        let kb = build(&mut k, "make -j4 --units 64");
        let r = kb.report(&k);
        assert!(r.finished);
        assert_eq!((r.jobs_done, r.submakes), (64, 8));
        // N = 4 slots across all makes: the top make's implicit slot plus 3 tokens bound its
        // running sub-makes, each sub-make's jobs its own slot plus its tokens: never more
        // than 4 compile jobs alive, and the 8 CPUs let all 4 run (reached)
        assert_eq!(r.max_jobs_alive, 4);
        // every token read is written back: the pipe received the 3 initial tokens plus one
        // byte per token returned, and holds the 3 tokens again at the end
        assert_eq!(r.token_reads, r.token_writes);
        let js = &k.ipc.pipes[0];
        assert_eq!(js.bytes_written, 3 + r.token_writes);
        assert_eq!(js.buf.iter().sum::<u32>(), 3);
        // 4 slots for 8 sub-makes of 8 jobs: makes wait for tokens in pselect(); some of
        // those waits end with another make's token write (a hand-off), others with SIGCHLD
        assert!(r.token_waits > 0);
        assert!(r.token_handoffs > 0, "{r:?}");
        assert!(r.token_waits_interrupted > 0, "{r:?}");
        // a make is woken by a child's exit in wait() (WF_SYNC), by a token write in
        // pselect() (pipe_write: WF_SYNC) or by SIGCHLD in pselect() (no WF_SYNC): the
        // wake-ups without WF_SYNC are SIGCHLD interrupts (at most one per interrupted
        // pselect()), so every hand-off that woke a make carried WF_SYNC
        let (all, sync) = make_wakeups(&k, &kb);
        assert!(
            all - sync <= r.token_waits_interrupted,
            "{all} {sync} {r:?}"
        );
        assert!(sync >= r.token_handoffs);
    }

    #[test]
    fn every_process_inherits_sched_idle_or_nice_19() {
        // chrt --idle 0 / nice -n 19 apply to make; every process of the build is forked from
        // it (or from its descendants) and keeps the policy and nice value
        for (line, policy, nice) in [
            ("chrt --idle 0 make -j2 --units 4", Policy::Idle, 0),
            ("nice -n 19 make -j2 --units 4", Policy::Normal, 19),
            ("time chrt --idle 0 make -j4 --units 4", Policy::Idle, 0),
        ] {
            let mut k = machine(2, true, (60, 300, 50));
            let kb = build(&mut k, line);
            let ts = kb.tasks();
            // make, 5 prepare steps, one sub-make (4 units, one directory of up to 8), 6
            // processes per unit, 3 ld and modpost
            assert_eq!(ts.len(), 1 + 5 + 1 + 6 * 4 + 4, "{line}");
            for t in ts {
                let task = &k.tasks[t.index()];
                assert_eq!(
                    (task.policy, task.nice),
                    (policy, nice),
                    "{line}: {}",
                    task.comm
                );
            }
            assert_eq!(k.tasks[kb.tasks()[0].index()].comm, "make");
        }
    }

    #[test]
    fn same_seed_same_bytes() {
        let run = |seed: u64| {
            let mut m = MachineDesc::ideal(4, 250, PreemptModel::Voluntary);
            m.costs = vec![schedlab_platform::CostModel::zero(); 4];
            let cfg = KernelConfig::parse("v6.19").unwrap();
            let mut k = Kernel::new(cfg, m, seed).unwrap();
            let kb = build(&mut k, "chrt --idle 0 make -j3 --units 30");
            (kb.output(&k), format!("{:?}", kb.metrics(&k)))
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }

    #[test]
    fn a_build_cut_short_says_so() {
        let mut k = machine(1, true, (60, 300, 50));
        let (placement, words) = parse_placement("make -j1 --units 10").unwrap();
        let mut w = Kbuild::new(parse(&words[1..]).unwrap());
        let env = Env {
            placement,
            tg: None,
            index: 0,
            duration_ns: None,
        };
        w.setup(&mut k, &env).unwrap();
        // the 10-unit build takes ≈ 3.2 s; stop it after 1 s
        k.run_until(1_000_000_000);
        let out = w.output(&k);
        assert!(
            out.contains("did not finish") && !out.contains("real"),
            "{out}"
        );
        assert_eq!(metric(&w, &k, "finished"), 0.0);
    }

    fn xeon(kernel: &str) -> Kernel {
        let p = schedlab_platform::Platform::builtin("xeon-2s-64").unwrap();
        let cfg = KernelConfig::parse(kernel).unwrap();
        Kernel::new(cfg, MachineDesc::from_platform(&p), 1).unwrap()
    }

    #[test]
    fn the_platform_gives_pipe_and_objtool() {
        // xeon-2s-64: [programs.make] gcc_pipe = true, objtool = true; altra-80: both false
        let mut k = xeon("v6.19");
        let kb = build(&mut k, "make -j1 --units 1");
        let c = kb.conf().unwrap();
        assert!(c.gcc_pipe && c.objtool);
        let p = schedlab_platform::Platform::builtin("altra-80").unwrap();
        let cfg = KernelConfig::parse("v6.19").unwrap();
        let mut k = Kernel::new(cfg, MachineDesc::from_platform(&p), 1).unwrap();
        let kb = build(&mut k, "make -j1 --units 1");
        let c = kb.conf().unwrap();
        assert!(!c.gcc_pipe && !c.objtool);
        // no objtool: 5 processes per unit
        assert_eq!(kb.report(&k).forks, 5 + 5 + 4);
    }

    #[test]
    fn nice_19_builds_are_the_same_on_both_kernels() {
        // fd54d81c2c0e changes placement only for a SCHED_IDLE task being placed: a nice-19
        // SCHED_OTHER build takes exactly the same course on both kernels (workloads.md §12.4)
        let run = |kernel: &str| {
            let mut k = xeon(kernel);
            let kb = build(&mut k, "nice -n 19 make -j4 --units 20");
            (kb.output(&k), format!("{:?}", kb.metrics(&k)))
        };
        assert_eq!(run("v6.19"), run("v6.19 +fd54d81c2c0e"));
    }

    #[test]
    fn sched_idle_as_is_stacked_on_cc1_under_mainline() {
        // Under `chrt --idle 0`, cc1's pipe write wakes as (WF_SYNC); mainline's wake-up
        // placement counts cc1's CPU, which runs only SCHED_IDLE tasks, as idle and puts as
        // behind cc1, where it waits (no wake-up preemption among SCHED_IDLE tasks); with
        // fd54d81c2c0e as goes to an idle CPU and overlaps cc1. So the same -j1 build is
        // slower on mainline, its as processes wait longer, and the CPU time is the same.
        let run = |kernel: &str| {
            let mut k = xeon(kernel);
            let kb = build(&mut k, "chrt --idle 0 make -j1 --units 20");
            let r = kb.report(&k);
            let as_wait: u64 = kb
                .tasks()
                .into_iter()
                .filter(|&t| k.tasks[t.index()].comm == "as")
                .map(|t| k.task_stat(t).run_delay)
                .sum();
            (r, as_wait)
        };
        let (main, main_wait) = run("v6.19");
        let (patched, patched_wait) = run("v6.19 +fd54d81c2c0e");
        assert!(main.real_ns > patched.real_ns, "{main:?} {patched:?}");
        assert!(
            main_wait > 10 * patched_wait.max(1),
            "{main_wait} {patched_wait}"
        );
        // user time: the same work on both; it differs only where two busy SMT siblings
        // shared a core (xeon-2s-64's smt_throughput 0.60, docs/model.md S§6.1) — at -j1 only
        // the short as/cc1 overlaps of the patched kernel, far below 5 %
        let (a, b) = (main.user_ns as f64, patched.user_ns as f64);
        assert!((a - b).abs() < 0.05 * a, "{a} {b}");
    }
}
