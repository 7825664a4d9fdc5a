//! The dbench 4 simulation model (workloads.md §7.2): a parent process forks N client
//! processes, releases them together from a barrier, prints a progress line every second
//! and stops them at the time limit; each client replays the loadfile in a loop with no
//! synchronisation between clients. Every loadfile line is one `Op::Fs` (the kernel maps
//! it to its work: syscalls.rs `FsCall`, exec.rs `plan_fs_op`).

use super::loadfile::{self, Line, Loadfile, OpKind};
use super::options::{parse, Options};
use super::output::{self, OpStat, Pass, Progress, Report};
use crate::workload::{Better, Env, Metric, Workload, WorkloadError};
use schedlab_sched::ipc::FutexId;
use schedlab_sched::sched::TaskId;
use schedlab_sched::{Ctx, FsCall, Op, Procfs, Program, Spawn, Sys, SysResult, TaskAttrs};
use std::cell::RefCell;
use std::rc::Rc;

const NS_PER_SEC: u64 = 1_000_000_000;
/// The parent polls the barrier every 100 ms (dbench.c `create_procs`).
const POLL_NS: u64 = 100_000_000;
/// Margin after the time limit for the clients' last operations and the reaping.
const TAIL_MARGIN_NS: u64 = 2 * NS_PER_SEC;

/// Builds the model from the words after `dbench`.
pub fn workload(line: &str, args: &[String]) -> Result<Box<dyn Workload>, WorkloadError> {
    let opts = parse(args).map_err(|e| WorkloadError::option(line, e.to_string()))?;
    let mut warnings = opts.warnings.clone();
    let lf = match opts.loadfile.as_deref() {
        None => {
            warnings.push(
                "dbench: the default loadfile client.txt is not available; using the built-in \
                 client-tiny (a synthetic mix, unverified)"
                    .to_string(),
            );
            loadfile::builtin("client-tiny").expect("built-in")
        }
        Some(name) => match std::fs::read_to_string(name) {
            Ok(text) => loadfile::parse(name, &text).map_err(|e| WorkloadError::option(line, e))?,
            Err(e) => match loadfile::builtin(name) {
                Some(lf) => lf,
                None => {
                    return Err(WorkloadError::option(
                        line,
                        format!(
                        "dbench: --loadfile '{name}': {e} (built-in: client-tiny, client-warmup)"
                    ),
                    ))
                }
            },
        },
    };
    Ok(Box::new(Dbench::new(opts, lf, warnings)))
}

/// What the run recorded, shared by the programs and the workload.
#[derive(Debug, Default)]
struct Shared {
    parent: Option<TaskId>,
    clients: Vec<TaskId>,
    prepared: u32,
    exited: u32,
    released_at: Option<u64>,
    exec_start: Option<u64>,
    in_warmup: bool,
    done_at: Option<u64>,
    finished: bool,
    /// Lines executed, all clients (cumulative, for the progress lines).
    lines: u64,
    /// Bytes read and written since the phase started.
    bytes: u64,
    ops: [OpStat; 17],
    window_max_ns: u64,
    max_latency_ns: u64,
    report: Report,
    /// Per client: the time since its start at the end of each completed pass (ns).
    at_ns: Vec<Vec<u64>>,
    /// Exact pass durations (ns) and their end times, all clients.
    pass_ns: Vec<(u64, u64)>,
    /// Execute MB/s values with their times.
    execute: Vec<(u64, f64)>,
}

/// The dbench model.
pub struct Dbench {
    opts: Options,
    lf: Rc<Loadfile>,
    warnings: Vec<String>,
    shared: Option<Rc<RefCell<Shared>>>,
}

impl Dbench {
    pub fn new(opts: Options, lf: Loadfile, warnings: Vec<String>) -> Dbench {
        Dbench {
            opts,
            lf: Rc::new(lf),
            warnings,
            shared: None,
        }
    }

    /// The report as far as the run got.
    pub fn report(&self) -> Report {
        let Some(sh) = self.shared.as_ref() else {
            return Report::default();
        };
        sh.borrow().report.clone()
    }

    /// The per-second `execute` MB/s values.
    pub fn execute_mbs(&self) -> Vec<f64> {
        self.shared.as_ref().map_or(Vec::new(), |sh| {
            sh.borrow().execute.iter().map(|e| e.1).collect()
        })
    }
}

/// The operation's `Op::Fs` call.
fn fs_call(l: &Line) -> FsCall {
    match l.kind {
        OpKind::NTCreateX => FsCall::Open {
            create: l.create && !l.fail,
        },
        OpKind::Close => FsCall::Close,
        OpKind::Rename => FsCall::Rename,
        OpKind::Unlink => FsCall::Unlink,
        OpKind::Deltree | OpKind::Rmdir => FsCall::Rmdir,
        OpKind::Mkdir => FsCall::Mkdir,
        OpKind::Qpathinfo | OpKind::Qfileinfo | OpKind::Qfsinfo => FsCall::Stat,
        OpKind::Sfileinfo => FsCall::Setattr,
        OpKind::Find => FsCall::Readdir,
        OpKind::WriteX => FsCall::Write,
        OpKind::ReadX => FsCall::Read,
        OpKind::LockX | OpKind::UnlockX => FsCall::Lock,
        OpKind::Flush => FsCall::Fsync,
    }
}

impl Workload for Dbench {
    fn program(&self) -> &str {
        "dbench"
    }

    fn max_tasks(&self, _ncpus: usize) -> u64 {
        1 + self.opts.clients as u64
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// The `Throughput` line and the operation table come when the parent has reaped the
    /// clients after `-t`.
    fn completed(&self) -> Option<bool> {
        Some(self.shared.as_ref().is_some_and(|sh| sh.borrow().finished))
    }

    fn duration_hint(&self) -> Option<u64> {
        let secs = self.opts.warmup_secs as u64 + self.opts.timelimit_secs as u64;
        Some(secs * NS_PER_SEC + NS_PER_SEC + TAIL_MARGIN_NS)
    }

    fn setup(&mut self, sys: &mut dyn Sys, env: &Env) -> Result<(), WorkloadError> {
        sys.mount_xfs();
        let mut costs = [0u64; 17];
        for k in OpKind::ALL {
            costs[k.index()] = sys
                .program_cost("dbench", k.cost_key())
                .unwrap_or(k.table_cost_ns());
        }
        let shared = Rc::new(RefCell::new(Shared {
            in_warmup: self.opts.warmup_secs > 0,
            at_ns: vec![Vec::new(); self.opts.clients as usize],
            ..Default::default()
        }));
        {
            let mut sh = shared.borrow_mut();
            let r = &mut sh.report;
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
            op_cost: Rc::new(costs),
            release,
            state: PState::Fork(0),
            tick: 0,
        };
        let attrs = env.placement.attrs("dbench", env.tg);
        let t = sys.fork(Box::new(parent), &attrs);
        shared.borrow_mut().parent = Some(t);
        sys.wake_up_new_task(t);
        self.shared = Some(shared);
        Ok(())
    }

    fn output(&self, _procfs: &dyn Procfs) -> String {
        output::render(&self.report())
    }

    fn metrics(&self, _procfs: &dyn Procfs) -> Vec<Metric> {
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

    fn tasks(&self) -> Vec<TaskId> {
        let Some(sh) = self.shared.as_ref() else {
            return Vec::new();
        };
        let sh = sh.borrow();
        sh.parent
            .into_iter()
            .chain(sh.clients.iter().copied())
            .collect()
    }

    fn series(&self) -> Vec<(String, Vec<(u64, u64)>)> {
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
    op_cost: Rc<[u64; 17]>,
    release: FutexId,
    state: PState,
    tick: u64,
}

impl Parent {
    /// `sig_alarm()`: the progress line of second `k` since the release.
    fn progress(&mut self, now: u64) {
        let o = &self.opts;
        let mut sh = self.sh.borrow_mut();
        let k = self.tick;
        let released = sh.released_at.unwrap_or(now);
        let warmup = sh.in_warmup;
        let (secs, since) = if warmup {
            (k, released)
        } else {
            (k - o.warmup_secs as u64, sh.exec_start.unwrap_or(released))
        };
        let elapsed = now.saturating_sub(since);
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
        if warmup && k >= o.warmup_secs as u64 {
            // the end of the warm-up: the counters start again
            sh.in_warmup = false;
            sh.exec_start = Some(now);
            sh.bytes = 0;
            sh.ops = [OpStat::default(); 17];
            sh.max_latency_ns = 0;
        }
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
                        op_cost: self.op_cost.clone(),
                        release: self.release,
                        run_once: self.opts.run_once,
                        state: CState::Init,
                        i: 0,
                        start: 0,
                        pass_start: 0,
                        op_start: None,
                    };
                    return Op::Spawn(Box::new(Spawn {
                        program: Box::new(client),
                        thread: false,
                        attrs: TaskAttrs::default(),
                    }));
                }
                PState::Poll => {
                    if let SysResult::Pid(_) = last {
                        // the last fork's pid: nothing to keep (clients register themselves)
                    }
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
                    if self.tick > 0 {
                        self.progress(now);
                    }
                    let end = self.opts.warmup_secs as u64 + self.opts.timelimit_secs as u64;
                    let all_exited = self.sh.borrow().exited >= self.opts.clients;
                    if self.tick >= end || all_exited {
                        let mut sh = self.sh.borrow_mut();
                        sh.done_at = Some(now);
                        self.state = PState::Reap;
                        drop(sh);
                        continue;
                    }
                    self.tick += 1;
                    return Op::SleepUntil(released + self.tick * NS_PER_SEC);
                }
                PState::Reap => {
                    if last == SysResult::NoChild {
                        let now = cx.now();
                        let mut sh = self.sh.borrow_mut();
                        sh.finished = true;
                        if !self.opts.skip_cleanup {
                            sh.report.cleanup_secs = Some(0);
                        }
                        let since = sh.exec_start.or(sh.released_at).unwrap_or(now);
                        let end = sh.done_at.unwrap_or(now);
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
    Init,
    Barrier,
    Run,
}

/// One client process.
struct Client {
    sh: Rc<RefCell<Shared>>,
    id: u32,
    lf: Rc<Loadfile>,
    op_cost: Rc<[u64; 17]>,
    release: FutexId,
    run_once: bool,
    state: CState,
    /// Next line.
    i: usize,
    start: u64,
    pass_start: u64,
    /// The line in progress and when it started.
    op_start: Option<(OpKind, u32, u64)>,
}

impl Client {
    fn exit(&mut self) -> Op {
        self.sh.borrow_mut().exited += 1;
        Op::Exit
    }
}

impl Program for Client {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        match self.state {
            CState::Init => {
                let mut sh = self.sh.borrow_mut();
                sh.prepared += 1;
                sh.clients.push(cx.task());
                self.state = CState::Barrier;
                return Op::FutexWait {
                    futex: self.release,
                    val: 0,
                };
            }
            CState::Barrier => {
                if cx.futex_load(self.release) == 0 {
                    return Op::FutexWait {
                        futex: self.release,
                        val: 0,
                    };
                }
                self.start = cx.now();
                self.pass_start = self.start;
                self.state = CState::Run;
            }
            CState::Run => {}
        }
        let now = cx.now();
        if let Some((kind, bytes, t0)) = self.op_start.take() {
            let lat = now - t0;
            let mut sh = self.sh.borrow_mut();
            sh.lines += 1;
            sh.bytes += bytes as u64;
            sh.ops[kind.index()].add(lat);
            sh.window_max_ns = sh.window_max_ns.max(lat);
            sh.max_latency_ns = sh.max_latency_ns.max(lat);
        }
        if self.i == self.lf.lines.len() {
            // a complete pass
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
            if self.run_once {
                return self.exit();
            }
        }
        if self.sh.borrow().done_at.is_some() {
            return self.exit();
        }
        let line = self.lf.lines[self.i];
        if let Some(at) = line.at_ns {
            if now < self.start + at {
                return Op::SleepUntil(self.start + at);
            }
        }
        self.i += 1;
        let bytes = match line.kind {
            OpKind::ReadX | OpKind::WriteX => line.size,
            _ => 0,
        };
        self.op_start = Some((line.kind, bytes, now));
        Op::Fs {
            call: fs_call(&line),
            file: line.file,
            bytes,
            cpu_ns: self.op_cost[line.kind.index()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_engine::Nanos;
    use schedlab_platform::StorageDevice;
    use schedlab_sched::{Kernel, KernelConfig, MachineDesc, PreemptModel};

    /// One CPU with every kernel cost zero, no idle-exit latency, no jitter; `dev` is the
    /// storage device.
    fn one_cpu(dev: &str) -> Kernel {
        let mut m = MachineDesc::ideal(1, 1000, PreemptModel::Voluntary);
        m.storage = StorageDevice::from_table(dev).unwrap();
        let mut k = Kernel::new(KernelConfig::parse("v6.18 NO_SIM_JITTER").unwrap(), m, 1).unwrap();
        k.strict = true;
        k.check_invariants = true;
        k
    }

    fn run(k: &mut Kernel, args: &str, lf: Loadfile) -> Dbench {
        let words: Vec<String> = args.split_whitespace().map(String::from).collect();
        let mut w = Dbench::new(parse(&words).unwrap(), lf, Vec::new());
        let env = Env {
            placement: Default::default(),
            tg: None,
            index: 0,
            duration_ns: None,
        };
        w.setup(k, &env).unwrap();
        let limit = w.duration_hint().unwrap();
        let stop = k.run_until(limit);
        assert!(stop < limit, "dbench did not finish");
        w
    }

    fn metric(w: &Dbench, k: &Kernel, name: &str) -> f64 {
        w.metrics(k)
            .into_iter()
            .find(|m| m.name == name)
            .unwrap()
            .value
    }

    #[test]
    fn one_client_on_one_cpu_takes_the_hand_summed_time_of_client_tiny() {
        // Every kernel cost zero and a RAM device: a pass costs exactly the loadfile's
        // per-line CPU costs, here W§7.2's table (the model's defaults: smp platforms give no
        // [programs.dbench]), times the counts of client-tiny:
        //   ReadX 946 × 3 = 2 838, NTCreateX 631 × 9 = 5 679, Qpathinfo 561 × 4 = 2 244,
        //   Close 456 × 1.5 = 684, WriteX 315 × 12 = 3 780, Find 210 × 14 = 2 940,
        //   Unlink 123 × 40 = 4 920, Qfsinfo 105 × 2 = 210, Qfileinfo 105 × 1 = 105,
        //   Sfileinfo 49 × 4 = 196, Flush 42 × 15 = 630, Rename 25 × 18 = 450,
        //   LockX 2 × 2 = 4, UnlockX 2 × 2 = 4, Mkdir 1 × 8 = 8          → 24 692 µs
        let mut k = one_cpu("ram");
        let lf = loadfile::builtin("client-tiny").unwrap();
        let w = run(
            &mut k,
            "--warmup 0 -t 5 --run-once --show-execute-time 1",
            lf,
        );
        let sh = w.shared.as_ref().unwrap().borrow();
        assert_eq!(sh.pass_ns.len(), 1);
        assert_eq!(sh.pass_ns[0].1, 24_692_000);
        assert_eq!(metric(&w, &k, "loadfile_ms"), 24.692);
        assert_eq!(metric(&w, &k, "passes"), 1.0);
        let out = w.output(&k);
        assert!(
            out.contains("   0 completed in 24 ms at time 24 ms\n"),
            "{out}"
        );
        // every line ran once: the table's counts are the loadfile's
        assert!(out.contains(" ReadX                      946 "), "{out}");
        assert!(out.contains(" Flush                       42 "), "{out}");
        assert_eq!(k.nr_live, 0);
    }

    #[test]
    fn one_client_on_one_cpu_with_an_nvme_fsync_by_hand() {
        // A four-line loadfile; costs zero except c_submit_per_page = 1 µs; enterprise NVMe
        // (Table 1.11-C: write 15 µs, FUA 30 µs; blkdev.rs: + 0.4 µs per KiB beyond 4 KiB).
        //   NTCreateX (create) 9 µs, WriteX 64 KiB 12 µs, Flush 15 µs, Close 1.5 µs  = 37.5
        //   fsync: 16 pages × 1 µs to submit                                        = 16
        //          data write 15 + 60 × 0.4 = 39 µs, then xfs-conv's end-io (free) wakes
        //          the client                                                        = 39
        //          log force: checkpoint 1 holds create 2 + write 1 + size update 1 = 4
        //          items (1 KiB): xfs-cil push (free), FUA write 30 µs, xfs-log wakes = 30
        //   one pass                                                                 122.5 µs
        let text = "NTCreateX \"\\a\" 0x0 2 1 NT_STATUS_OK\n\
                    WriteX 1 0 65536 65536 NT_STATUS_OK\n\
                    Flush 1 NT_STATUS_OK\n\
                    Close 1 NT_STATUS_OK\n";
        let lf = loadfile::parse("four.txt", text).unwrap();
        let mut k = one_cpu("nvme");
        k.costs[0].c_submit_per_page = Nanos(1_000);
        let w = run(&mut k, "--warmup 0 -t 1 1", lf);
        let sh = w.shared.as_ref().unwrap().borrow();
        assert!(sh.pass_ns.len() > 8_000, "{}", sh.pass_ns.len());
        assert!(
            sh.pass_ns.iter().all(|p| p.1 == 122_500),
            "{:?}",
            &sh.pass_ns[..4]
        );
        // 64 KiB per pass: 65 536 B × 10⁻⁶ / 122.5 µs = 534.99 MB/s in every second
        let mbs = metric(&w, &k, "throughput_mbs");
        assert!((mbs - 534.99).abs() < 0.5, "{mbs}");
        // the kworkers: the pools of the CPU and the unbound one ran the items
        let comms: Vec<&str> = k.tasks.iter().map(|t| t.comm.as_str()).collect();
        assert!(comms.contains(&"kworker/0:1") && comms.contains(&"kworker/0:1H"));
    }

    #[test]
    fn metrics_names() {
        let mut k = one_cpu("ram");
        let lf = loadfile::builtin("client-warmup").unwrap();
        let w = run(&mut k, "--warmup 0 -t 1 2", lf);
        let names: Vec<String> = w.metrics(&k).into_iter().map(|m| m.name).collect();
        assert_eq!(
            names,
            [
                "throughput_mbs",
                "loadfile_ms",
                "loadfile_stddev_ms",
                "all_clients_ms",
                "all_clients_stddev_ms",
                "passes"
            ]
        );
        // one execute line per second, and the report ends with the Throughput line
        let out = w.output(&k);
        assert_eq!(out.matches(" MB/sec  execute ").count(), 1, "{out}");
        assert!(out.contains("Throughput "), "{out}");
    }
}
