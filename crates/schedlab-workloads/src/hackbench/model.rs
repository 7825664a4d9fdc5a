//! hackbench (rt-tests `hackbench` and `perf bench sched messaging`) as task programs
//! (workloads.md §3.2), and the [`Workload`] that starts them and prints the result.
//!
//! ```text
//! main: ready R, wake Wk = fdpair() × 2
//!   for each group g: for j < fds: C[g][j] = fdpair(); spawn receiver(g, j)
//!                     for s < fds: spawn sender(g)
//!   read(R, 1) × workers; start = now; write(Wk, 1)   ← wakes every poller at once
//!   wait()/join() × workers; stop = now
//! receiver(g, j): write(R, 1); poll(Wk); fds × loops × { read C[g][j] until 100 B; run(W_rx) }
//! sender(g):      write(R, 1); poll(Wk); loops × for j < fds { write C[g][j] 100 B; run(W_tx) }
//! ```
//!
//! An fd pair is a stream-mode pipe (`-p`: 4 KiB pages hold 40 messages, 640 in 16 slots) or
//! an AF_UNIX stream socket pair (one `sk_sndbuf` budget per receiver channel, shared by the
//! group's senders, §1.3). Processes or threads only change the address space (switch cost)
//! and the exit cost.
//!
//! Model decisions (where the spec is silent):
//!
//! * **Set-up costs.** Each `pipe()`/`socketpair()` costs `c_syscall`; each worker costs
//!   `c_fork` (process) or `c_clone` (thread). Closing the unused fd ends in process mode is
//!   free. None of this is in the measured interval.
//! * **Clock reads** (`gettimeofday` around the run) are free; the result is computed from
//!   whole microseconds as the printer expects.
//! * **Messages larger than a page** (rt-tests `-s`) are written in page-sized pieces to a pipe
//!   and in pieces of `sk_sndbuf / 2 − 64` bytes to a socket, as the kernel would split them;
//!   readers loop until the message is complete, as the real receivers do.
//! * **Phases** (for `reproduce next-buddy`, which may run `-l 1000` and extrapolate to
//!   `-l 10000`): *start-up* runs from the start reading (just before the start write) until
//!   the last worker has returned from its `poll()` of the wake channel; *loop* from there
//!   until the last complete message is read by a receiver; *reaping* from there until the
//!   last `wait()`/join returns (the stop reading). The three add up to stop − start exactly,
//!   in ns (not rounded to the µs the printed time is computed from). Only the loop phase
//!   grows with `-l`; early workers start sending during start-up, which is part of what the
//!   scaling test measures.
//! * **A run cut short** (the simulation ends before the last worker was reaped, e.g. seed
//!   004's endless background load): the final time line is not printed and the metrics
//!   measure up to the end of the simulation.

use super::options::{parse, parse_perf_bench, Options, Transport, WorkerMode};
use super::output::{render, Results};
use crate::workload::{Better, Env, Metric, Workload, WorkloadError};
use schedlab_engine::time::SimTime;
use schedlab_sched::ipc::{PipeId, SockId, UnixStream};
use schedlab_sched::net::{RecvFlags, TcpSockId};
use schedlab_sched::sched::{Policy, TaskId};
use schedlab_sched::{Ctx, Op, PollFd, Procfs, Program, Spawn, Sys, SysResult, TaskAttrs};
use std::cell::RefCell;
use std::rc::Rc;

/// User work per message sent, ns at the reference core (§3.2).
pub const W_TX_USER_NS: u64 = 20;
/// User work per message received, ns at the reference core (§3.2).
pub const W_RX_USER_NS: u64 = 20;

/// Builds rt-tests hackbench from the words after `hackbench`.
pub fn workload(line: &str, args: &[String]) -> Result<Box<dyn Workload>, WorkloadError> {
    let opts = parse(args).map_err(|e| option_error(line, e))?;
    Ok(Box::new(Hackbench::new(line, opts)))
}

/// Builds `perf bench sched messaging` from the words after `perf`.
pub fn workload_perf(line: &str, args: &[String]) -> Result<Box<dyn Workload>, WorkloadError> {
    let opts = parse_perf_bench(args).map_err(|e| option_error(line, e))?;
    Ok(Box::new(Hackbench::new(line, opts)))
}

fn option_error(line: &str, e: impl std::fmt::Display) -> WorkloadError {
    WorkloadError::option(line, e.to_string())
}

/// One fd pair of the chosen transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chan {
    Pipe(PipeId),
    Sock(SockId),
    /// One TCP connection: writes go to `tx`, reads come from its peer `rx`.
    Tcp {
        tx: TcpSockId,
        rx: TcpSockId,
    },
}

impl Chan {
    fn new(cx: &mut Ctx<'_>, transport: Transport) -> Chan {
        match transport {
            Transport::Pipe => Chan::Pipe(cx.new_pipe(false)),
            Transport::Socket => Chan::Sock(cx.new_unix_stream()),
            Transport::Inet => {
                let (tx, rx) = cx.tcp_pair(false);
                Chan::Tcp { tx, rx }
            }
        }
    }

    /// CPU time of creating one channel (`fdpair()`): `pipe()`/`socketpair()` is one plain
    /// system call; `inet_socketpair()` is socket + bind + getsockname + listen on the
    /// listener, a loopback connect (`c_tcp_connect`, its socket included), accept and the
    /// listener's close.
    fn create_cost(cx: &Ctx<'_>, transport: Transport) -> u64 {
        let c = cx.costs();
        match transport {
            Transport::Pipe | Transport::Socket => c.c_syscall.0,
            Transport::Inet => 5 * c.c_syscall.0 + c.c_tcp_connect.0 + c.c_accept.0,
        }
    }

    /// Largest piece one `write()` puts in at once.
    fn max_write(&self, cx: &Ctx<'_>) -> u32 {
        match self {
            Chan::Pipe(_) => cx.page_size(),
            Chan::Sock(_) => (UnixStream::WMEM_DEFAULT / 2 - 64) as u32,
            // tcp_sendmsg copies the whole buffer in one call (blocking for send space)
            Chan::Tcp { .. } => u32::MAX,
        }
    }

    fn write(&self, bytes: u32) -> Op {
        match *self {
            Chan::Pipe(pipe) => Op::PipeWrite { pipe, bytes },
            Chan::Sock(sock) => Op::SockSend { sock, bytes },
            Chan::Tcp { tx, .. } => Op::TcpSend { sock: tx, bytes },
        }
    }

    fn read(&self, bytes: u32) -> Op {
        match *self {
            Chan::Pipe(pipe) => Op::PipeRead { pipe, bytes },
            Chan::Sock(sock) => Op::SockRecv { sock, bytes },
            Chan::Tcp { rx, .. } => Op::TcpRecv {
                sock: rx,
                bytes,
                flags: RecvFlags::default(),
            },
        }
    }

    fn poll(&self) -> Op {
        let fd = match *self {
            Chan::Pipe(p) => PollFd::Pipe(p),
            Chan::Sock(s) => PollFd::Sock(s),
            Chan::Tcp { rx, .. } => PollFd::Tcp(rx),
        };
        Op::Poll { fd }
    }
}

/// What the run recorded, shared by the programs and the workload.
#[derive(Debug, Default)]
struct Shared {
    main: Option<TaskId>,
    workers: Vec<TaskId>,
    start: Option<u64>,
    stop: Option<u64>,
    /// Complete messages read by all receivers / written by all senders.
    received: u64,
    sent: u64,
    /// Workers that have returned from their `poll()` of the wake channel.
    polled: u64,
    /// When the last worker returned from its `poll()` (the loop phase begins).
    loop_start: Option<u64>,
    /// When the last complete message was read (the loop phase ends).
    last_message: Option<u64>,
    /// (time, messages read) each time another hundredth of the run's messages was read.
    progress: Vec<(u64, u64)>,
}

/// The three phases of a finished run, in ns of simulated time (see the module notes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phases {
    pub startup_ns: u64,
    pub loop_ns: u64,
    pub reap_ns: u64,
}

/// The hackbench model (both flavours).
pub struct Hackbench {
    opts: Options,
    shared: Option<Rc<RefCell<Shared>>>,
}

impl Hackbench {
    pub fn new(_line: &str, opts: Options) -> Hackbench {
        Hackbench { opts, shared: None }
    }

    /// The two clock readings; the stop is the end of the simulation if the run was cut short.
    pub fn results(&self, procfs: &dyn Procfs) -> Results {
        let now = procfs.now();
        let (start, stop) = match self.shared.as_ref() {
            Some(sh) => {
                let sh = sh.borrow();
                let start = sh.start.unwrap_or(now);
                (start, sh.stop.unwrap_or(now).max(start))
            }
            None => (now, now),
        };
        Results {
            start: SimTime(start),
            stop: SimTime(stop),
        }
    }

    /// Whether the last worker has been reaped.
    pub fn finished(&self) -> bool {
        self.shared
            .as_ref()
            .is_some_and(|sh| sh.borrow().stop.is_some())
    }

    /// The start-up, loop and reaping phases; `None` until the last worker was reaped. A run
    /// without messages (`-l 0`) has an empty loop phase.
    pub fn phases(&self) -> Option<Phases> {
        let sh = self.shared.as_ref()?.borrow();
        let (start, stop) = (sh.start?, sh.stop?);
        let loop_start = sh.loop_start.unwrap_or(stop).clamp(start, stop);
        let last = sh
            .last_message
            .unwrap_or(loop_start)
            .clamp(loop_start, stop);
        Some(Phases {
            startup_ns: loop_start - start,
            loop_ns: last - loop_start,
            reap_ns: stop - last,
        })
    }

    /// Messages read by the receivers so far.
    pub fn messages_received(&self) -> u64 {
        self.shared.as_ref().map_or(0, |sh| sh.borrow().received)
    }

    /// Messages written by the senders so far.
    pub fn messages_sent(&self) -> u64 {
        self.shared.as_ref().map_or(0, |sh| sh.borrow().sent)
    }
}

impl Workload for Hackbench {
    fn max_tasks(&self, _ncpus: usize) -> u64 {
        // The main task plus a sender and a receiver per fd per group.
        1 + 2 * u64::from(self.opts.groups) * u64::from(self.opts.fds)
    }

    fn warnings(&self) -> Vec<String> {
        self.opts.warnings.clone()
    }

    /// hackbench sends its `-l` messages and ends; how long that takes is what it measures.
    fn ends_by_itself(&self) -> bool {
        true
    }

    /// The `Time:` line needs the last worker reaped.
    fn completed(&self) -> Option<bool> {
        Some(self.finished())
    }

    fn program(&self) -> &str {
        match self.opts.flavor {
            super::Flavor::RtTests => "hackbench",
            super::Flavor::Perf(_) => "perf bench sched messaging",
        }
    }

    fn setup(&mut self, sys: &mut dyn Sys, env: &Env) -> Result<(), WorkloadError> {
        let shared = Rc::new(RefCell::new(Shared::default()));
        let comm = match self.opts.flavor {
            super::Flavor::RtTests => "hackbench",
            super::Flavor::Perf(_) => "perf",
        };
        let attrs = env.placement.attrs(comm, env.tg);
        let main = Box::new(Main::new(shared.clone(), &self.opts));
        let t = sys.fork(main, &attrs);
        shared.borrow_mut().main = Some(t);
        sys.wake_up_new_task(t);
        self.shared = Some(shared);
        Ok(())
    }

    fn output(&self, procfs: &dyn Procfs) -> String {
        let out = render(&self.opts, &self.results(procfs));
        if self.finished() {
            return out;
        }
        // cut short: everything but the final time line
        let mut lines: Vec<&str> = out.lines().collect();
        lines.pop();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    fn metrics(&self, procfs: &dyn Procfs) -> Vec<Metric> {
        let r = self.results(procfs);
        let us = (r.stop.ns() / 1_000).saturating_sub(r.start.ns() / 1_000);
        let secs = us as f64 / 1e6;
        let rate = if secs > 0.0 {
            self.messages_received() as f64 / secs
        } else {
            0.0
        };
        let mut out = vec![
            Metric::new("time_s", secs, "s", Better::Lower),
            Metric::new("messages_per_sec", rate, "msg/s", Better::Higher),
        ];
        if let Some(p) = self.phases() {
            let s = |ns: u64| ns as f64 / 1e9;
            out.push(Metric::new(
                "startup_s",
                s(p.startup_ns),
                "s",
                Better::Lower,
            ));
            out.push(Metric::new("loop_s", s(p.loop_ns), "s", Better::Lower));
            out.push(Metric::new("reap_s", s(p.reap_ns), "s", Better::Lower));
        }
        out
    }

    /// `messages_read`: (time, messages read so far) at every hundredth of the run's messages
    /// and at the last one — how the loop phase's rate changes over the run (the scaling check
    /// of `reproduce next-buddy` relies on it being steady).
    fn series(&self) -> Vec<(String, Vec<(u64, u64)>)> {
        let Some(sh) = self.shared.as_ref() else {
            return Vec::new();
        };
        vec![("messages_read".to_string(), sh.borrow().progress.clone())]
    }

    fn tasks(&self) -> Vec<TaskId> {
        let Some(sh) = self.shared.as_ref() else {
            return Vec::new();
        };
        let sh = sh.borrow();
        sh.main
            .into_iter()
            .chain(sh.workers.iter().copied())
            .collect()
    }
}

/// Run-wide constants of the workers.
#[derive(Debug, Clone, Copy)]
struct Conf {
    groups: u32,
    fds: u32,
    loops: u64,
    size: u32,
    transport: Transport,
    thread: bool,
}

impl Conf {
    fn workers(&self) -> u64 {
        self.groups as u64 * 2 * self.fds as u64
    }

    /// Messages of the whole run: `groups × fds × fds × loops`.
    fn messages(&self) -> u64 {
        self.groups as u64 * self.fds as u64 * self.fds as u64 * self.loops
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MState {
    /// `fdpair(readyfds)`, `fdpair(wakefds)`.
    Channels,
    /// `fdpair()` of receiver j of group g, then its spawn.
    RecvChan(u32, u32),
    Recv(u32, u32),
    Sender(u32, u32),
    ReadReady,
    Start,
    Reap,
    Done,
}

/// The main process: creates the channels and workers, starts and reaps them.
struct Main {
    sh: Rc<RefCell<Shared>>,
    conf: Conf,
    state: MState,
    ready: Option<Chan>,
    wake: Option<Chan>,
    group_chans: Vec<Chan>,
    ready_read: u64,
    reaped: u64,
    /// `-F`: switch to SCHED_FIFO 1 once every worker is created (still to do).
    fifo: bool,
}

impl Main {
    fn new(sh: Rc<RefCell<Shared>>, o: &Options) -> Main {
        Main {
            sh,
            conf: Conf {
                groups: o.groups,
                fds: o.fds,
                loops: o.loops as u64,
                size: o.datasize,
                transport: o.transport,
                thread: o.mode == WorkerMode::Thread,
            },
            state: MState::Channels,
            ready: None,
            wake: None,
            group_chans: Vec::new(),
            ready_read: 0,
            reaped: 0,
            fifo: o.fifo_main,
        }
    }

    fn spawn(&self, program: Box<dyn Program>) -> Op {
        Op::Spawn(Box::new(Spawn {
            program,
            thread: self.conf.thread,
            attrs: TaskAttrs::default(),
        }))
    }

    /// The state after the workers of group `g` (or the read of the ready bytes).
    fn after_group(&self, g: u32) -> MState {
        if g + 1 < self.conf.groups && self.conf.fds > 0 {
            MState::RecvChan(g + 1, 0)
        } else {
            MState::ReadReady
        }
    }
}

impl Program for Main {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        let c = self.conf;
        loop {
            match self.state {
                MState::Channels => {
                    self.ready = Some(Chan::new(cx, c.transport));
                    self.wake = Some(Chan::new(cx, c.transport));
                    self.state = if c.groups > 0 && c.fds > 0 {
                        MState::RecvChan(0, 0)
                    } else {
                        MState::ReadReady
                    };
                    return Op::Syscall(2 * Chan::create_cost(cx, c.transport));
                }
                MState::RecvChan(g, j) => {
                    if j == 0 {
                        self.group_chans.clear();
                    }
                    self.group_chans.push(Chan::new(cx, c.transport));
                    self.state = MState::Recv(g, j);
                    return Op::Syscall(Chan::create_cost(cx, c.transport));
                }
                MState::Recv(g, j) => {
                    self.state = if j + 1 < c.fds {
                        MState::RecvChan(g, j + 1)
                    } else {
                        MState::Sender(g, 0)
                    };
                    let w = Worker::receiver(
                        self.sh.clone(),
                        c,
                        self.ready.unwrap(),
                        self.wake.unwrap(),
                        self.group_chans[j as usize],
                    );
                    return self.spawn(Box::new(w));
                }
                MState::Sender(g, s) => {
                    if s == c.fds {
                        self.state = self.after_group(g);
                        continue;
                    }
                    self.state = MState::Sender(g, s + 1);
                    let w = Worker::sender(
                        self.sh.clone(),
                        c,
                        self.ready.unwrap(),
                        self.wake.unwrap(),
                        self.group_chans.clone(),
                    );
                    return self.spawn(Box::new(w));
                }
                MState::ReadReady => {
                    if self.fifo {
                        // rt-tests hackbench.c: with -F, after the last group is created and
                        // before the ready bytes are read, "make main a realtime task so that
                        // we can manage the workers": sched_setscheduler(0, SCHED_FIFO, 1).
                        self.fifo = false;
                        return Op::SetScheduler {
                            policy: Policy::Fifo,
                            nice: 0,
                            rt_priority: 1,
                        };
                    }
                    if let SysResult::Bytes(n) = last {
                        self.ready_read += n as u64;
                    }
                    if self.ready_read < c.workers() {
                        return self.ready.unwrap().read(1);
                    }
                    self.state = MState::Start;
                }
                MState::Start => {
                    self.sh.borrow_mut().start = Some(cx.now());
                    self.state = MState::Reap;
                    return self.wake.unwrap().write(1);
                }
                MState::Reap => {
                    if let SysResult::Pid(_) = last {
                        self.reaped += 1;
                    }
                    if self.reaped < c.workers() {
                        return Op::WaitChild;
                    }
                    self.state = MState::Done;
                }
                MState::Done => {
                    self.sh.borrow_mut().stop = Some(cx.now());
                    return Op::Exit;
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WState {
    Ready,
    Poll,
    /// Back from the `poll()`.
    Polled,
    Transfer,
    Work,
    Exit,
}

/// A receiver or a sender.
struct Worker {
    sh: Rc<RefCell<Shared>>,
    conf: Conf,
    ready: Chan,
    wake: Chan,
    /// Receiver: its one channel; sender: the group's channels.
    chans: Vec<Chan>,
    sender: bool,
    state: WState,
    /// Messages done.
    msgs: u64,
    /// Bytes of the current message done.
    done: u32,
}

impl Worker {
    fn receiver(sh: Rc<RefCell<Shared>>, conf: Conf, ready: Chan, wake: Chan, c: Chan) -> Self {
        Worker {
            sh,
            conf,
            ready,
            wake,
            chans: vec![c],
            sender: false,
            state: WState::Ready,
            msgs: 0,
            done: 0,
        }
    }

    fn sender(
        sh: Rc<RefCell<Shared>>,
        conf: Conf,
        ready: Chan,
        wake: Chan,
        chans: Vec<Chan>,
    ) -> Self {
        Worker {
            chans,
            sender: true,
            ..Worker::receiver(sh, conf, ready, wake, Chan::Pipe(PipeId::new(0)))
        }
    }

    /// Messages this worker moves: `fds × loops` either way.
    fn total(&self) -> u64 {
        self.conf.fds as u64 * self.conf.loops
    }

    /// The channel of the current message.
    fn chan(&self) -> Chan {
        if self.sender {
            // for i in loops: for j in fds: write(out_fds[j])
            self.chans[(self.msgs % self.conf.fds as u64) as usize]
        } else {
            self.chans[0]
        }
    }
}

impl Program for Worker {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        loop {
            match self.state {
                WState::Ready => {
                    self.sh.borrow_mut().workers.push(cx.task());
                    self.state = WState::Poll;
                    return self.ready.write(1);
                }
                WState::Poll => {
                    self.state = WState::Polled;
                    return self.wake.poll();
                }
                WState::Polled => {
                    {
                        let mut sh = self.sh.borrow_mut();
                        sh.polled += 1;
                        if sh.polled == self.conf.workers() {
                            sh.loop_start = Some(cx.now());
                        }
                    }
                    self.state = if self.total() == 0 {
                        WState::Exit
                    } else {
                        WState::Transfer
                    };
                }
                WState::Transfer => {
                    if let SysResult::Bytes(n) = last {
                        self.done += n;
                        if self.done >= self.conf.size {
                            self.done = 0;
                            self.msgs += 1;
                            {
                                let mut sh = self.sh.borrow_mut();
                                if self.sender {
                                    sh.sent += 1;
                                } else {
                                    sh.received += 1;
                                    let total = self.conf.messages();
                                    if sh.received == total {
                                        sh.last_message = Some(cx.now());
                                    }
                                    // every hundredth of the messages (at least every one)
                                    let step = (total / 100).max(1);
                                    if sh.received.is_multiple_of(step) || sh.received == total {
                                        let r = sh.received;
                                        sh.progress.push((cx.now(), r));
                                    }
                                }
                            }
                            self.state = WState::Work;
                            return Op::Run(if self.sender {
                                W_TX_USER_NS
                            } else {
                                W_RX_USER_NS
                            });
                        }
                    }
                    let ch = self.chan();
                    let left = self.conf.size - self.done;
                    return if self.sender {
                        ch.write(left.min(ch.max_write(cx)))
                    } else {
                        ch.read(left)
                    };
                }
                WState::Work => {
                    self.state = if self.msgs < self.total() {
                        WState::Transfer
                    } else {
                        WState::Exit
                    };
                }
                WState::Exit => return Op::Exit,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::parse_workload;
    use schedlab_platform::{Platform, PreemptModel};
    use schedlab_sched::{Kernel, KernelConfig, MachineDesc};

    fn env() -> Env {
        Env {
            placement: Default::default(),
            tg: None,
            index: 0,
            duration_ns: None,
        }
    }

    fn rpi5(spec: &str, seed: u64) -> Kernel {
        let p = Platform::builtin("rpi5").unwrap();
        let mut k = Kernel::new(
            KernelConfig::parse(spec).unwrap(),
            MachineDesc::from_platform(&p),
            seed,
        )
        .unwrap();
        k.strict = true;
        k
    }

    /// Parses and runs a workload line until every task has exited (or `limit` ns).
    fn run(k: &mut Kernel, line: &str, limit: u64) -> Box<dyn Workload> {
        let (p, mut w) = parse_workload(line).unwrap();
        let e = Env {
            placement: p,
            ..env()
        };
        w.setup(k, &e).unwrap();
        k.run_until(limit);
        w
    }

    fn hackbench(line: &str, k: &mut Kernel) -> Hackbench {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        let opts = if words[0] == "perf" {
            parse_perf_bench(&words[1..]).unwrap()
        } else {
            parse(&words[1..]).unwrap()
        };
        let mut h = Hackbench::new(line, opts);
        h.setup(k, &env()).unwrap();
        k.run_until(60_000_000_000);
        h
    }

    #[test]
    fn every_message_is_read_pipes_and_sockets() {
        // groups × fds × fds × loops = 2 × 3 × 3 × 5 = 90 messages, each receiver reading
        // fds × loops = 15 messages of 100 bytes from its own channel.
        for (line, pipes) in [
            ("hackbench -p -g 2 -f 3 -l 5", true),
            ("hackbench -g 2 -f 3 -l 5", false),
            ("hackbench -T -p -g 2 -f 3 -l 5", true),
            ("perf bench sched messaging -t -g 2 -f 3 -l 5", false),
        ] {
            let mut k = rpi5("v6.18", 1);
            let h = hackbench(line, &mut k);
            assert!(h.finished(), "{line}");
            assert_eq!(h.messages_received(), 90, "{line}");
            assert_eq!(h.messages_sent(), 90, "{line}");
            assert_eq!(h.tasks().len(), 1 + 12, "{line}");
            if pipes {
                // ready, wake, then 6 receiver pipes: 1500 bytes each; ready got 12 bytes
                assert_eq!(k.ipc.pipes.len(), 8);
                assert_eq!(k.ipc.pipes[0].bytes_written, 12);
                assert_eq!(k.ipc.pipes[1].bytes_written, 1);
                assert!(k.ipc.pipes[2..].iter().all(|p| p.bytes_written == 1500));
                assert!(k.ipc.pipes.iter().all(|p| !p.packet));
                // everything was read but the start byte, which nobody reads
                assert!(k.ipc.pipes[0].is_empty() && k.ipc.pipes[2..].iter().all(|p| p.is_empty()));
                assert_eq!(k.ipc.pipes[1].buf.len(), 1);
            } else {
                assert_eq!(k.ipc.socks.len(), 8);
                assert_eq!(k.ipc.socks[0].skbs_sent, 12);
                assert!(k.ipc.socks[2..].iter().all(|s| s.skbs_sent == 15));
                assert!(k.ipc.socks[2..]
                    .iter()
                    .all(|s| s.is_empty() && s.wmem_alloc == 0));
            }
        }
    }

    #[test]
    fn inet_messages_go_over_loopback_tcp() {
        // hackbench -i: every fdpair() is a TCP connection. Same counts as the pipe and
        // AF_UNIX runs above: 2 × 3 × 3 × 5 = 90 messages of 100 bytes, 15 per receiver.
        let mut k = rpi5("v6.18", 1);
        let h = hackbench("hackbench -i -g 2 -f 3 -l 5", &mut k);
        assert!(h.finished());
        assert_eq!(h.messages_received(), 90);
        assert_eq!(h.messages_sent(), 90);
        // ready, wake and 6 receiver channels: 8 connections, 16 socket ends, no pipe or
        // AF_UNIX socket
        assert_eq!(k.net.tcp.len(), 16);
        assert!(k.ipc.pipes.is_empty() && k.ipc.socks.is_empty());
        // tcp_pair(false) gives (connecting end, accepted end); writes go to the first
        let sent: Vec<u64> = k.net.tcp.iter().step_by(2).map(|s| s.bytes_sent).collect();
        // ready: 12 workers × 1 byte; wake: main's 1 start byte; receivers: 15 × 100
        assert_eq!(sent, vec![12, 1, 1500, 1500, 1500, 1500, 1500, 1500]);
        let rcvd: Vec<u64> = k
            .net
            .tcp
            .iter()
            .skip(1)
            .step_by(2)
            .map(|s| s.bytes_rcvd)
            .collect();
        assert_eq!(rcvd, sent);
        // every byte was read but the start byte, which the workers only poll for
        let queued: Vec<u64> = k.net.tcp.iter().map(|s| s.rcv_queued).collect();
        assert_eq!(queued.iter().sum::<u64>(), 1);
        assert_eq!(k.net.tcp[3].rcv_queued, 1);
        // the data arrived through the NET_RX softirq of the senders, which woke readers;
        // without TCP_NODELAY, Nagle holds a sender's 100-byte writes while an earlier one
        // is unacknowledged, so a segment may carry several messages
        let st = &k.net.stats;
        assert!(
            st.segments_delivered > 0 && st.softirq_wakeups > 0,
            "{st:?}"
        );
    }

    #[test]
    fn one_group_perf_run_prints_its_lines() {
        let mut k = rpi5("v6.18", 1);
        let w = run(
            &mut k,
            "perf bench sched messaging -p -g 1 -l 50",
            60_000_000_000,
        );
        let out = w.output(&k);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 5, "{out}");
        assert_eq!(lines[0], "# Running 'sched/messaging' benchmark:");
        assert_eq!(lines[1], "# 20 sender and receiver processes per group");
        assert_eq!(lines[2], "# 1 groups == 40 processes run");
        assert_eq!(lines[3], "");
        let m = w.metrics(&k);
        let secs = m.iter().find(|m| m.name == "time_s").unwrap().value;
        // " %14s: %lu.%03lu [sec]" with the fraction truncated to ms
        let expect = format!(
            "     Total time: {}.{:03} [sec]",
            (secs * 1e6).round() as u64 / 1_000_000,
            (secs * 1e6).round() as u64 % 1_000_000 / 1000
        );
        assert_eq!(lines[4], expect);
        assert!(secs > 0.0);
        // 20 × 20 × 50 = 20000 messages
        let rate = m
            .iter()
            .find(|m| m.name == "messages_per_sec")
            .unwrap()
            .value;
        assert!((rate * secs - 20_000.0).abs() < 1e-6 * 20_000.0);
        // 20 writers per pipe on 4 CPUs: pipe->mutex is contended (§1.8)
        let contended: u64 = k.ipc.mutexes.iter().map(|m| m.contended).sum();
        assert!(contended > 0);
    }

    #[test]
    fn one_group_rt_tests_run_prints_its_lines() {
        let mut k = rpi5("v6.18", 1);
        let w = run(&mut k, "hackbench -T -p -g 1 -l 20", 60_000_000_000);
        let out = w.output(&k);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert_eq!(
            lines[0],
            "Running in threaded mode with 1 groups using 40 file descriptors each (== 40 tasks)"
        );
        assert_eq!(lines[1], "Each sender will pass 20 messages of 100 bytes");
        assert!(lines[2].starts_with("Time: 0."), "{out}");
        // threads share main's address space
        let tasks = w.tasks();
        let mm = k.tasks[tasks[0].index()].mm;
        assert!(tasks.iter().all(|t| k.tasks[t.index()].mm == mm));
    }

    #[test]
    fn timing_runs_from_the_start_write_to_the_last_reap() {
        let mut k = rpi5("v6.18 NO_SIM_JITTER", 1);
        let h = hackbench("hackbench -p -g 1 -f 2 -l 3", &mut k);
        let sh = h.shared.as_ref().unwrap().borrow();
        let (start, stop) = (sh.start.unwrap(), sh.stop.unwrap());
        // every worker was created (c_fork 90 µs × rpi5 calibration 1.04 = 93.6 µs each)
        // before the start
        assert!(start > 4 * 93_600);
        // main's last reap is the stop reading; its own exit (c_exit = 70 µs × 1.04 =
        // 72.8 µs on rpi5, jitter off) ends the run
        assert_eq!(k.all_exited_at, Some(stop + 72_800));
        assert!(sh
            .workers
            .iter()
            .all(|t| k.tasks[t.index()].state == schedlab_sched::sched::TaskState::Dead));
    }

    /// The three phases cover the measured interval exactly (in ns, unrounded) and in order:
    /// start-up ends when the last of the 2 × 20 workers is back from its poll, the loop when
    /// the last of the groups × 20 × 20 × loops = 2 × 400 × 3 = 2400 messages is read.
    #[test]
    fn phases_add_up_to_the_measured_interval() {
        for line in [
            "perf bench sched messaging --pipe -g 2 -l 3",
            "perf bench sched messaging -g 2 -l 3",
        ] {
            let mut k = rpi5("v6.18", 3);
            let h = hackbench(line, &mut k);
            assert!(h.finished(), "{line}");
            assert_eq!(h.messages_received(), 2 * 20 * 20 * 3, "{line}");
            let sh = h.shared.as_ref().unwrap().borrow();
            assert_eq!(sh.polled, 80, "{line}");
            let (start, stop) = (sh.start.unwrap(), sh.stop.unwrap());
            let (ls, lm) = (sh.loop_start.unwrap(), sh.last_message.unwrap());
            assert!(start < ls && ls < lm && lm < stop, "{line}");
            drop(sh);
            let p = h.phases().unwrap();
            assert_eq!(p.startup_ns + p.loop_ns + p.reap_ns, stop - start, "{line}");
            assert_eq!(p.startup_ns, ls - start);
            assert_eq!(p.reap_ns, stop - lm);
            // the metrics carry the same figures in seconds
            let m = h.metrics(&k);
            let get = |n: &str| m.iter().find(|x| x.name == n).unwrap().value;
            assert_eq!(get("loop_s"), p.loop_ns as f64 / 1e9);
            assert_eq!(get("startup_s"), p.startup_ns as f64 / 1e9);
            assert_eq!(get("reap_s"), p.reap_ns as f64 / 1e9);
            // the progress series: 2400 / 100 = every 24 messages, 100 points, the last at
            // the last message
            let s = h.series();
            let pts = &s.iter().find(|(n, _)| n == "messages_read").unwrap().1;
            assert_eq!(pts.len(), 100, "{line}");
            assert_eq!(pts[0].1, 24);
            assert_eq!(*pts.last().unwrap(), (lm, 2400));
            assert!(pts
                .windows(2)
                .all(|w| w[0].0 <= w[1].0 && w[1].1 == w[0].1 + 24));
        }
        // -l 0: no message, an empty loop phase
        let mut k = rpi5("v6.18", 1);
        let h = hackbench("perf bench sched messaging -p -g 1 -l 0", &mut k);
        assert_eq!(h.phases().unwrap().loop_ns, 0);
    }

    #[test]
    fn cut_short_prints_no_time_line() {
        // seed 004's endless background load: 2 × 20 × 20 × 16e6 messages
        let mut k = rpi5("v6.18", 1);
        let w = run(&mut k, "hackbench -T -p -l 16000000 -g 2", 20_000_000);
        assert_eq!(w.output(&k).lines().count(), 2);
        assert!(w.metrics(&k)[1].value > 0.0);
    }

    /// rt-tests hackbench.c: `-F` switches main to SCHED_FIFO 1 after the workers are forked,
    /// so they stay SCHED_OTHER; `chrt`/`policy=` applies to main before it forks, so the
    /// workers inherit it.
    #[test]
    fn fifo_main_and_inherited_rt_policy() {
        let mut k = rpi5("v6.18", 1);
        let w = run(&mut k, "hackbench -F -g 1 -f 2 -l 5", 10_000_000_000);
        let ts = w.tasks();
        assert_eq!(ts.len(), 1 + 4);
        let main = &k.tasks[ts[0].index()];
        assert_eq!((main.policy, main.rt_priority), (Policy::Fifo, 1));
        for t in &ts[1..] {
            assert_eq!(k.tasks[t.index()].policy, Policy::Normal);
        }
        let mut k = rpi5("v6.18", 1);
        let w = run(
            &mut k,
            "chrt -r 5 perf bench sched messaging -g 1 -l 5",
            10_000_000_000,
        );
        for t in w.tasks() {
            let t = &k.tasks[t.index()];
            assert_eq!((t.policy, t.rt_priority), (Policy::Rr, 5));
        }
    }

    /// `cgroup=/a/b`: the run resolves the path to `Env::tg`; the main task is forked into
    /// that group and every sender and receiver inherits it (a child keeps its parent's
    /// cgroup). `-T -g 1`: main + 20 senders + 20 receivers (hackbench's default 20 fds).
    #[test]
    fn a_cgroup_placement_puts_every_task_in_the_group() {
        let mut k = rpi5("v6.18", 1);
        let (p, mut w) = parse_workload("cgroup=/a/b hackbench -T -g 1 -l 5").unwrap();
        let tg = k.cgroup_mkdir_p("/a/b").unwrap();
        let e = Env {
            placement: p,
            tg: Some(tg),
            ..env()
        };
        w.setup(&mut k, &e).unwrap();
        k.run_until(1_000_000_000);
        let ts = w.tasks();
        assert_eq!(ts.len(), 41);
        for t in ts {
            assert_eq!(k.task_cgroup_path(t), "/a/b");
        }
    }

    #[test]
    fn cpus_placement_is_inherited() {
        let cfg = KernelConfig::parse("v6.18").unwrap();
        let mut k = Kernel::new(cfg, MachineDesc::ideal(4, 250, PreemptModel::Full), 1).unwrap();
        let w = run(&mut k, "cpus=2-3 hackbench -g 1 -f 2 -l 10", 10_000_000_000);
        for t in w.tasks() {
            let task = &k.tasks[t.index()];
            assert_eq!(task.nr_cpus_allowed, 2);
            assert!(task.cpu == 2 || task.cpu == 3);
        }
    }

    #[test]
    fn same_seed_same_output() {
        let out = |seed: u64| {
            let mut k = rpi5("v6.12", seed);
            let w = run(&mut k, "hackbench -g 2 -l 30", 60_000_000_000);
            (w.output(&k), k.stats.events)
        };
        let a = out(5);
        assert_eq!(a, out(5));
        assert_ne!(a.1, out(6).1);
    }
}
