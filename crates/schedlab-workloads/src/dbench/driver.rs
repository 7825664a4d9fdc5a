//! The process structure dbench and tbench share (workloads.md §7.1–7.3, netbench.md §15.3):
//! a parent forks N client processes, polls the start-up barrier every 100 ms, releases the
//! clients together, prints a progress line every second (warm-up, then execute), stops them
//! at the time limit, reaps them and prints the report; each client replays the loadfile in a
//! loop. What a client does for one loadfile line is the backend's ([`LineIo`]): dbench's
//! fileio issues one `Op::Fs`, tbench's socket backend one request/response exchange.

use super::loadfile::{self, Line, Loadfile, OpKind, NKINDS};
use super::options::Options;
use super::output::{self, Layout, OpStat, Pass, Progress, Report};
use crate::workload::{Better, Metric, WorkloadError};
use schedlab_sched::ipc::FutexId;
use schedlab_sched::sched::TaskId;
use schedlab_sched::{Ctx, Op, Program, Spawn, Sys, SysResult, TaskAttrs};
use std::cell::RefCell;
use std::rc::Rc;

pub(crate) const NS_PER_SEC: u64 = 1_000_000_000;
/// The parent polls the barrier every 100 ms (dbench.c `create_procs`).
const POLL_NS: u64 = 100_000_000;
/// Margin after the time limit for the clients' last operations and the reaping.
const TAIL_MARGIN_NS: u64 = 2 * NS_PER_SEC;

/// What a backend answers for one step of a client.
pub(crate) enum Step {
    /// Issue this operation; the step is asked again with its result.
    Op(Op),
    /// The operation's latency starts now (dbench's `child->lasttime`); ask again at once.
    Clock,
    /// This part is finished.
    Done,
}

/// A client's backend: how it gets ready before the barrier, what it does for each line
/// and at its end.
pub(crate) trait LineIo {
    /// Step `k` (from 0) of the set-up before the barrier (`nb_setup`).
    fn prepare(&mut self, _cx: &mut Ctx<'_>, _k: u32, _last: SysResult) -> Step {
        Step::Done
    }
    /// Step `k` (from 0) of `line`, line `i` of the loadfile. The latency of the line runs
    /// from its first step, or from the last [`Step::Clock`], to [`Step::Done`]; `Sleep`
    /// lines record none.
    fn step(&mut self, cx: &mut Ctx<'_>, i: usize, line: &Line, k: u32, last: SysResult) -> Step;
    /// Step `k` (from 0) after the last line, before the client exits.
    fn finish(&mut self, _cx: &mut Ctx<'_>, _k: u32, _last: SysResult) -> Step {
        Step::Done
    }
    /// The bytes the line counts toward the throughput.
    fn counted(&self, line: &Line) -> u64;
}

/// Makes client `id`'s backend.
pub(crate) type MakeIo = Rc<dyn Fn(u32) -> Box<dyn LineIo>>;

/// What the run recorded, shared by the programs and the workload.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    parent: Option<TaskId>,
    pub(crate) clients: Vec<TaskId>,
    prepared: u32,
    exited: u32,
    released_at: Option<u64>,
    exec_start: Option<u64>,
    in_warmup: bool,
    done_at: Option<u64>,
    finished: bool,
    /// Lines executed, all clients (cumulative, for the progress lines).
    lines: u64,
    /// Bytes counted since the phase started.
    bytes: u64,
    ops: [OpStat; NKINDS],
    window_max_ns: u64,
    max_latency_ns: u64,
    report: Report,
    /// Per client: the time since its start at the end of each completed pass (ns).
    at_ns: Vec<Vec<u64>>,
    /// Exact pass durations (ns) and their end times, all clients.
    pub(crate) pass_ns: Vec<(u64, u64)>,
    /// Execute MB/s values with their times.
    execute: Vec<(u64, f64)>,
}

/// The shared part of a dbench-style workload: options, loadfile and the run's record.
pub(crate) struct Driver {
    pub(crate) opts: Options,
    pub(crate) lf: Rc<Loadfile>,
    layout: Layout,
    pub(crate) shared: Option<Rc<RefCell<Shared>>>,
}

impl Driver {
    pub(crate) fn new(opts: Options, lf: Loadfile, layout: Layout) -> Driver {
        Driver {
            opts,
            lf: Rc::new(lf),
            layout,
            shared: None,
        }
    }

    /// Forks the parent with `attrs`; its clients run the backends `make_io` makes.
    pub(crate) fn start(&mut self, sys: &mut dyn Sys, attrs: &TaskAttrs, make_io: MakeIo) {
        let shared = Rc::new(RefCell::new(Shared {
            in_warmup: self.opts.warmup_secs > 0,
            at_ns: vec![Vec::new(); self.opts.clients as usize],
            ..Default::default()
        }));
        {
            let mut sh = shared.borrow_mut();
            let r = &mut sh.report;
            r.layout = self.layout;
            r.clients = self.opts.clients;
            r.timelimit = self.opts.timelimit_secs;
            r.warmup = self.opts.warmup_secs;
            r.loadfile = self.lf.name.clone();
            r.show_execute_time = self.opts.show_execute_time;
        }
        let release = sys.new_futex(0);
        let parent = Parent {
            sh: shared.clone(),
            opts: self.opts.clone(),
            lf: self.lf.clone(),
            make_io,
            release,
            state: PState::Fork(0),
            tick: 0,
        };
        let t = sys.fork(Box::new(parent), attrs);
        shared.borrow_mut().parent = Some(t);
        sys.wake_up_new_task(t);
        self.shared = Some(shared);
    }

    /// The report as far as the run got.
    pub(crate) fn report(&self) -> Report {
        let Some(sh) = self.shared.as_ref() else {
            return Report::default();
        };
        sh.borrow().report.clone()
    }

    /// The per-second `execute` MB/s values.
    pub(crate) fn execute_mbs(&self) -> Vec<f64> {
        self.shared.as_ref().map_or(Vec::new(), |sh| {
            sh.borrow().execute.iter().map(|e| e.1).collect()
        })
    }

    pub(crate) fn finished(&self) -> bool {
        self.shared.as_ref().is_some_and(|sh| sh.borrow().finished)
    }

    /// The warm-up, its silent reset second, the time limit and the second whose alarm
    /// stops the clients, plus a margin.
    pub(crate) fn duration_hint(&self) -> u64 {
        let w = self.opts.warmup_secs as u64;
        let secs = if w > 0 { w + 1 } else { 0 } + self.opts.timelimit_secs as u64 + 1;
        secs * NS_PER_SEC + NS_PER_SEC + TAIL_MARGIN_NS
    }

    /// mmtests' dbench4/tbench4 figures: Hmean of the execute MB/s, the loadfile
    /// completion times and their completion lag.
    pub(crate) fn metrics(&self) -> Vec<Metric> {
        let Some(sh) = self.shared.as_ref() else {
            return Vec::new();
        };
        let sh = sh.borrow();
        let mbs: Vec<f64> = sh.execute.iter().map(|e| e.1).collect();
        // mmtests reads the printed whole milliseconds; the metrics use the unrounded times
        // (the model's passes vary much less than real ones, so truncating each would bias
        // the mean down by up to 1 ms — 7 % of a 14.6 ms pass)
        let ms: Vec<f64> = sh.pass_ns.iter().map(|p| p.1 as f64 / 1e6).collect();
        let lag: Vec<f64> = output::completion_lag(&sh.at_ns)
            .into_iter()
            .map(|v| v as f64 / 1e6)
            .collect();
        vec![
            Metric::new(
                "throughput_mbs",
                output::hmean(&mbs),
                "MB/s",
                Better::Higher,
            ),
            Metric::new("loadfile_ms", output::amean(&ms), "ms", Better::Lower),
            Metric::new(
                "loadfile_stddev_ms",
                output::stddev(&ms),
                "ms",
                Better::Lower,
            ),
            Metric::new("all_clients_ms", output::amean(&lag), "ms", Better::Lower),
            Metric::new(
                "all_clients_stddev_ms",
                output::stddev(&lag),
                "ms",
                Better::Lower,
            ),
            Metric::new("passes", ms.len() as f64, "passes", Better::Higher),
        ]
    }

    /// The parent and the clients.
    pub(crate) fn tasks(&self) -> Vec<TaskId> {
        let Some(sh) = self.shared.as_ref() else {
            return Vec::new();
        };
        let sh = sh.borrow();
        sh.parent
            .into_iter()
            .chain(sh.clients.iter().copied())
            .collect()
    }

    pub(crate) fn series(&self) -> Vec<(String, Vec<(u64, u64)>)> {
        let Some(sh) = self.shared.as_ref() else {
            return Vec::new();
        };
        let sh = sh.borrow();
        vec![
            (
                "execute_mbs_x1000".to_string(),
                sh.execute
                    .iter()
                    .map(|&(t, v)| (t, (v * 1000.0).round() as u64))
                    .collect(),
            ),
            ("loadfile_ns".to_string(), sh.pass_ns.clone()),
        ]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PState {
    Fork(u32),
    Poll,
    Release,
    Tick,
    Reap,
    Done,
}

/// The parent process.
struct Parent {
    sh: Rc<RefCell<Shared>>,
    opts: Options,
    lf: Rc<Loadfile>,
    make_io: MakeIo,
    release: FutexId,
    state: PState,
    tick: u64,
}

impl Parent {
    /// `sig_alarm()` at second `k` since the release (netbench.md §15.4): a warm-up line
    /// while `k` ≤ the warm-up; at the first alarm after it the counters and the time base
    /// are reset and nothing is printed; then an execute line per second while the time
    /// since the reset is at most the time limit. True once it exceeds it: the clients are
    /// told to stop (that alarm prints the clean-up line).
    fn progress(&mut self, now: u64) -> bool {
        let o = &self.opts;
        let mut sh = self.sh.borrow_mut();
        let k = self.tick;
        let released = sh.released_at.unwrap_or(now);
        let warmup = sh.in_warmup;
        if warmup && k > o.warmup_secs as u64 {
            // the end of the warm-up: the counters start again
            sh.in_warmup = false;
            sh.exec_start = Some(now);
            sh.bytes = 0;
            sh.ops = [OpStat::default(); NKINDS];
            sh.max_latency_ns = 0;
            sh.window_max_ns = 0;
            return false;
        }
        let since = if warmup {
            released
        } else {
            sh.exec_start.unwrap_or(released)
        };
        let elapsed = now.saturating_sub(since);
        let secs = elapsed / NS_PER_SEC;
        if !warmup && secs > o.timelimit_secs as u64 {
            return true;
        }
        let mbs = if elapsed > 0 {
            1e-6 * sh.bytes as f64 / (elapsed as f64 / 1e9)
        } else {
            0.0
        };
        let p = Progress {
            clients: o.clients,
            lines: sh.lines / o.clients as u64,
            mbs,
            warmup,
            secs,
            latency_ms: sh.window_max_ns as f64 / 1e6,
        };
        sh.window_max_ns = 0;
        sh.report.progress.push(p);
        if !warmup {
            sh.execute.push((now, mbs));
        }
        false
    }

    /// The clients are reaped: the clean-up line, the table and the throughput.
    fn summary(&mut self, now: u64) {
        let mut sh = self.sh.borrow_mut();
        sh.finished = true;
        let since = sh.exec_start.or(sh.released_at).unwrap_or(now);
        let end = sh.done_at.unwrap_or(now);
        if !self.opts.skip_cleanup {
            // the alarm that stopped the clients: seconds since the (warm-up reset) start
            sh.report.cleanup_secs = Some(end.saturating_sub(since) / NS_PER_SEC);
        }
        let secs = end.saturating_sub(since) as f64 / 1e9;
        let tput = if secs > 0.0 {
            1e-6 * sh.bytes as f64 / secs
        } else {
            0.0
        };
        sh.report.throughput_mbs = Some(tput);
        sh.report.max_latency_ms = sh.max_latency_ns as f64 / 1e6;
        sh.report.ops = OpKind::ALL
            .iter()
            .map(|&k| (k, sh.ops[k.index()]))
            .collect();
    }
}

impl Program for Parent {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        loop {
            match self.state {
                PState::Fork(i) => {
                    if i == self.opts.clients {
                        self.state = PState::Poll;
                        continue;
                    }
                    self.state = PState::Fork(i + 1);
                    let client = Client {
                        sh: self.sh.clone(),
                        id: i,
                        lf: self.lf.clone(),
                        io: (self.make_io)(i),
                        release: self.release,
                        run_once: self.opts.run_once,
                        state: CState::Prepare(0),
                        i: 0,
                        start: 0,
                        pass_start: 0,
                        line_step: None,
                        t0: 0,
                    };
                    return Op::Spawn(Box::new(Spawn {
                        program: Box::new(client),
                        thread: false,
                        attrs: TaskAttrs::default(),
                    }));
                }
                PState::Poll => {
                    let mut sh = self.sh.borrow_mut();
                    let n = sh.prepared;
                    let t = sh.report.prepared.len() as f64 * POLL_NS as f64 / 1e9;
                    sh.report.prepared.push((n, t));
                    if n >= self.opts.clients {
                        self.state = PState::Release;
                        continue;
                    }
                    return Op::Sleep(POLL_NS);
                }
                PState::Release => {
                    let now = cx.now();
                    {
                        let mut sh = self.sh.borrow_mut();
                        sh.released_at = Some(now);
                        sh.report.released = true;
                        if !sh.in_warmup {
                            sh.exec_start = Some(now);
                        }
                    }
                    cx.futex_store(self.release, 1);
                    self.state = PState::Tick;
                    return Op::FutexWake {
                        futex: self.release,
                        nr: self.opts.clients,
                    };
                }
                PState::Tick => {
                    let now = cx.now();
                    let released = self.sh.borrow().released_at.unwrap_or(now);
                    let over = self.tick > 0 && self.progress(now);
                    let all_exited = self.sh.borrow().exited >= self.opts.clients;
                    if over || all_exited {
                        self.sh.borrow_mut().done_at = Some(now);
                        self.state = PState::Reap;
                        continue;
                    }
                    self.tick += 1;
                    return Op::SleepUntil(released + self.tick * NS_PER_SEC);
                }
                PState::Reap => {
                    if last == SysResult::NoChild {
                        self.summary(cx.now());
                        self.state = PState::Done;
                        return Op::Exit;
                    }
                    return Op::WaitChild;
                }
                PState::Done => return Op::Exit,
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CState {
    /// The backend's set-up, step k.
    Prepare(u32),
    Barrier,
    Run,
    /// The backend's end, step k.
    Finish(u32),
    Exited,
}

/// One client process.
struct Client {
    sh: Rc<RefCell<Shared>>,
    id: u32,
    lf: Rc<Loadfile>,
    io: Box<dyn LineIo>,
    release: FutexId,
    run_once: bool,
    state: CState,
    /// Next line.
    i: usize,
    start: u64,
    pass_start: u64,
    /// The line in progress (its index and itself) and its next step.
    line_step: Option<(usize, Line, u32)>,
    /// When the line in progress started (its latency's start).
    t0: u64,
}

impl Client {
    fn wait_barrier(&self) -> Op {
        Op::FutexWait {
            futex: self.release,
            val: 0,
        }
    }

    /// A line is finished: its latency, lines and bytes.
    fn record(&mut self, line: &Line, now: u64) {
        let mut sh = self.sh.borrow_mut();
        sh.lines += 1;
        if line.kind == OpKind::Sleep {
            return;
        }
        let lat = now - self.t0;
        sh.bytes += self.io.counted(line);
        sh.ops[line.kind.index()].add(lat);
        sh.window_max_ns = sh.window_max_ns.max(lat);
        sh.max_latency_ns = sh.max_latency_ns.max(lat);
    }

    /// The end of a pass (`--show-execute-time`); true if the client stops (`--run-once`).
    fn end_pass(&mut self, now: u64) -> bool {
        let dur = now - self.pass_start;
        let at = now - self.start;
        {
            let mut sh = self.sh.borrow_mut();
            sh.report.passes.push(Pass {
                client: self.id,
                ms: dur / 1_000_000,
                at_ms: at / 1_000_000,
            });
            sh.at_ns[self.id as usize].push(at);
            sh.pass_ns.push((now, dur));
        }
        self.i = 0;
        self.pass_start = now;
        self.run_once
    }
}

impl Program for Client {
    fn next(&mut self, cx: &mut Ctx<'_>, mut last: SysResult) -> Op {
        loop {
            match self.state {
                CState::Prepare(k) => match self.io.prepare(cx, k, last) {
                    Step::Op(op) => {
                        self.state = CState::Prepare(k + 1);
                        return op;
                    }
                    Step::Clock => self.state = CState::Prepare(k + 1),
                    Step::Done => {
                        let mut sh = self.sh.borrow_mut();
                        sh.prepared += 1;
                        sh.clients.push(cx.task());
                        self.state = CState::Barrier;
                        drop(sh);
                        return self.wait_barrier();
                    }
                },
                CState::Barrier => {
                    if cx.futex_load(self.release) == 0 {
                        return self.wait_barrier();
                    }
                    self.start = cx.now();
                    self.pass_start = self.start;
                    self.state = CState::Run;
                }
                CState::Run => {
                    let now = cx.now();
                    if let Some((i, line, k)) = self.line_step {
                        match self.io.step(cx, i, &line, k, last) {
                            Step::Op(op) => {
                                self.line_step = Some((i, line, k + 1));
                                return op;
                            }
                            Step::Clock => {
                                self.t0 = now;
                                self.line_step = Some((i, line, k + 1));
                                last = SysResult::None;
                                continue;
                            }
                            Step::Done => {
                                self.line_step = None;
                                self.record(&line, now);
                            }
                        }
                    }
                    if self.i == self.lf.lines.len() && self.end_pass(now) {
                        self.state = CState::Finish(0);
                        continue;
                    }
                    if self.sh.borrow().done_at.is_some() {
                        self.state = CState::Finish(0);
                        continue;
                    }
                    let line = self.lf.lines[self.i];
                    // a leading time: the target since the start of the pass (child.c resets
                    // the time base at every pass)
                    if let Some(at) = line.at_ns {
                        if now < self.pass_start + at {
                            return Op::SleepUntil(self.pass_start + at);
                        }
                    }
                    self.line_step = Some((self.i, line, 0));
                    self.i += 1;
                    self.t0 = now;
                    last = SysResult::None;
                }
                CState::Finish(k) => match self.io.finish(cx, k, last) {
                    Step::Op(op) => {
                        self.state = CState::Finish(k + 1);
                        return op;
                    }
                    Step::Clock => self.state = CState::Finish(k + 1),
                    Step::Done => {
                        self.sh.borrow_mut().exited += 1;
                        self.state = CState::Exited;
                        return Op::Exit;
                    }
                },
                CState::Exited => return Op::Exit,
            }
        }
    }
}

/// The loadfile of `--loadfile NAME` (`None`: the default): a file read from disk, else a
/// built-in one by name; `prog` names the program in messages.
pub(crate) fn load(
    prog: &str,
    line: &str,
    name: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<Loadfile, WorkloadError> {
    match name {
        None => {
            warnings.push(format!(
                "{prog}: the default loadfile client.txt is not available; using the built-in \
                 client-tiny (a synthetic mix, unverified)"
            ));
            Ok(loadfile::builtin("client-tiny").expect("built-in"))
        }
        Some(name) => match std::fs::read_to_string(name) {
            Ok(text) => loadfile::parse(name, &text).map_err(|e| WorkloadError::option(line, e)),
            Err(e) => loadfile::builtin(name).ok_or_else(|| {
                WorkloadError::option(
                    line,
                    format!(
                        "{prog}: --loadfile '{name}': {e} (built-in: client-tiny, client-warmup)"
                    ),
                )
            }),
        },
    }
}
