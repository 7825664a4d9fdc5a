//! The `server-model` simulation (netbench.md §17.3): the server's tasks (workers, and per
//! arch an acceptor or a dispatcher), the client threads, and the user-space memory they share
//! (statistics, the service mutex, the dispatcher's queues).
//!
//! Processes and tasks:
//!
//! ```text
//! server (process) ─ creates the listener(s), epoll instances, notify files, UDP / AF_UNIX
//!   │                sockets; registers what the shared instance watches; then clones:
//!   ├─ per_conn, tcp:     acceptor ── accept(L) ──clone──▶ one worker per connection
//!   │                     (per_request: finished workers park in a thread cache, futex)
//!   ├─ per_conn, udp/unix: one worker per client, blocked in its receive
//!   ├─ epoll_per_worker:  W workers, each its own instance with the listener(s) and its
//!   │                     connections (level-triggered)
//!   ├─ epoll_shared:      W workers in epoll_wait(E, 1) on one instance; connections
//!   │                     IN|ONESHOT, re-armed with EPOLL_CTL_MOD after each response
//!   └─ dispatcher:        dispatcher (accept, round robin, queue + notify) and W workers,
//!                         each its own instance with its notify file and its connections
//! clients (process) ─ waits until every server task is ready, then clones M client threads
//! ```
//!
//! Model decisions (where §17 is silent):
//!
//! * **Start.** The client process starts its threads once every server task has registered
//!   its files (a futex counter the server tasks increment, the client process waits on): the
//!   runtime and the statistics start then. Clients stop at start + runtime (a request whose
//!   response comes later is not counted); the server tasks stay blocked.
//! * **Wake-up latency** (§17.4, measured as schbench does, workloads.md §4.2): the waker
//!   notes the time just before the system call that wakes (a client before its request's
//!   send or its connect, the dispatcher before its notify write); a worker notes the time it
//!   enters a blocking call (`epoll_wait`, or the receive of `per_conn`) and, when the call
//!   returns, takes as its wake-up the earliest such note made after it entered; the sample
//!   is the time from that note to the return. A call whose data was there before it entered
//!   records nothing (it did not sleep). The acceptor and the dispatcher record none.
//! * **Latencies** are recorded in whole µs, truncated from the ns difference; clock reads are
//!   free (§17.5: instrumentation).
//! * **Service lock.** The last H of each service time runs under the shared mutex (glibc
//!   default mutex over a futex, workloads.md §1.4, as rt-app's); a draw below H is lengthened
//!   to H.
//! * **Connections** are `TCP_NODELAY` on both ends (servers of §17.1 set it; with one
//!   outstanding request Nagle never delays anyway). `per_request`: the worker closes its end
//!   right after the response (an HTTP/1.0-style close), the client after reading it.
//! * **epoll_per_worker** registers connections level-triggered (nginx uses edge-triggered
//!   and reads until EAGAIN; level-triggered serves one request per report and is equal for
//!   one outstanding request). The listener is level-triggered in every arch.
//! * **Dispatcher**: its queue push and the worker's pop are critical sections without a
//!   system call inside, so they are never contended in the model: each costs two `c_atomic`
//!   of user work. A pipe notification carries one byte per connection and the worker reads
//!   one byte per report (memcached); an eventfd read takes every queued connection.
//! * **Open loop**: RATE is per client; arrivals are Poisson; a request waits for its
//!   connection to be free (one outstanding request per connection) and its latency counts
//!   from its arrival. Arrivals are waited for with `clock_nanosleep(TIMER_ABSTIME)`.
//! * **UDP and AF_UNIX** "connections" are created at start-up: per client one socket pair
//!   (UDP: a server socket per client; AF_UNIX: a request and a response stream). Their
//!   binding to workers (epoll_per_worker) is client i → worker i mod W.
//! * **Closing a registered socket**: the worker issues `EPOLL_CTL_DEL` before `close()`
//!   (Deviation: the kernel's close removes the registration itself, without `c_epoll_ctl`;
//!   the simulated close leaves it).
//! * **Draws** of `exp` use `f64::ln` of a 53-bit uniform (reproducible on one platform);
//!   `lognormal` uses the engine's fixed-point factor (exact everywhere).
//! * **Placement**: `--worker-*` applies to the server process and `--client-*` to the client
//!   process when they are forked; every task they create inherits it.

use super::options::{
    Accept, Arch, ConnMode, Dist, LoopMode, Notify, Options, Side, ThinkMode, Transport, WorkerMm,
};
use super::output::{render, Report};
use crate::rtapp::sync::{mutex_lock, mutex_unlock, Charge, LockSt};
use crate::schbench::Histogram;
use crate::workload::{Better, Env, Metric, Workload, WorkloadError};
use schedlab_engine::Rng;
use schedlab_sched::ipc::{FutexId, PipeId, SockId};
use schedlab_sched::net::{
    EpollId, EpollOp, EventfdId, ListenId, NetFd, RecvFlags, TcpSockId, UdpSockId, EPOLLEXCLUSIVE,
    EPOLLIN, EPOLLONESHOT,
};
use schedlab_sched::sched::TaskId;
use schedlab_sched::{Ctx, Op, Procfs, Program, Spawn, Sys, SysResult, TaskAttrs};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

/// `listen()` backlog of the server's sockets (`net.core.somaxconn`'s default since 5.4).
pub const LISTEN_BACKLOG: u32 = 4096;
/// Simulated time allowed for start-up beyond the runtime (see `duration_hint`).
const START_MARGIN_NS: u64 = 100_000_000;

/// Builds the model from the words after `server-model`.
pub fn workload(line: &str, args: &[String]) -> Result<Box<dyn Workload>, WorkloadError> {
    Ok(Box::new(ServerModel::new(line, args)?))
}

/// The model.
pub struct ServerModel {
    line: String,
    opts: Options,
    shared: Option<Rc<RefCell<Shared>>>,
}

/// The server end of one connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SrvConn {
    Tcp(TcpSockId),
    Udp { sock: UdpSockId, peer: UdpSockId },
    Unix { rx: SockId, tx: SockId },
}

/// The client end of one connection (`Tcp(None)`: not connected).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CliConn {
    Tcp(Option<TcpSockId>),
    Udp { sock: UdpSockId, dst: UdpSockId },
    Unix { tx: SockId, rx: SockId },
}

#[derive(Debug, Default)]
struct WorkerStats {
    wakeup: Histogram,
    served: u64,
    /// The clients whose requests it served.
    clients: BTreeSet<usize>,
    /// per_conn thread cache: the futex word a parked worker waits on, and the connection
    /// the acceptor hands it.
    word: Option<FutexId>,
    hand: Option<SrvConn>,
    task: Option<TaskId>,
}

#[derive(Debug, Default)]
struct ClientStats {
    request: Histogram,
    completed: u64,
    task: Option<TaskId>,
    /// When the client last began a call that wakes a worker (request send), ns.
    stamp: Option<u64>,
}

/// The memory the tasks share (the model's view of both processes).
struct Shared {
    o: Options,
    w: usize,
    m: usize,
    /// Server tasks that report ready before the clients start.
    expected_ready: u32,
    ready: FutexId,
    /// Start of the measurement (the clients' start), ns.
    start_ns: Option<u64>,
    service_lock: Option<FutexId>,
    listeners: Vec<ListenId>,
    /// The instance of epoll_shared.
    shared_ep: Option<EpollId>,
    /// Per client: the client end created at start-up (UDP, AF_UNIX) and the server end.
    cli_conns: Vec<CliConn>,
    srv_conns: Vec<Option<SrvConn>>,
    /// Server end → client index.
    by_tcp: BTreeMap<TcpSockId, usize>,
    by_udp: BTreeMap<UdpSockId, usize>,
    by_unix: BTreeMap<SockId, usize>,
    /// Connect start times not yet matched by an accept (FIFO), ns.
    connect_stamps: VecDeque<u64>,
    /// Dispatcher: per worker, the queue of handed-off connections, its notify file and the
    /// time of the oldest notification not yet consumed.
    queues: Vec<VecDeque<TcpSockId>>,
    notify: Vec<NotifyFd>,
    notify_stamp: Vec<Option<u64>>,
    /// per_conn thread cache: parked workers, most recent last.
    idle: Vec<usize>,
    workers: Vec<WorkerStats>,
    clients: Vec<ClientStats>,
    /// Tasks the model created (for per-task reporting).
    tasks: Vec<TaskId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NotifyFd {
    Pipe(PipeId),
    Eventfd(EventfdId),
}

impl NotifyFd {
    fn netfd(self) -> NetFd {
        match self {
            NotifyFd::Pipe(p) => NetFd::Pipe(p),
            NotifyFd::Eventfd(e) => NetFd::Eventfd(e),
        }
    }
}

type Sh = Rc<RefCell<Shared>>;

impl Shared {
    fn end_ns(&self) -> Option<u64> {
        self.start_ns.map(|s| s + self.o.runtime_ns)
    }
    fn client_of(&self, c: SrvConn) -> Option<usize> {
        match c {
            SrvConn::Tcp(s) => self.by_tcp.get(&s).copied(),
            SrvConn::Udp { sock, .. } => self.by_udp.get(&sock).copied(),
            SrvConn::Unix { rx, .. } => self.by_unix.get(&rx).copied(),
        }
    }
    /// The server connection an epoll event names, if it is one.
    fn conn_of_fd(&self, fd: NetFd) -> Option<SrvConn> {
        match fd {
            NetFd::Tcp(s) => Some(SrvConn::Tcp(s)),
            NetFd::Udp(s) => self.by_udp.get(&s).and_then(|&i| self.srv_conns[i]),
            NetFd::Unix(s) => self.by_unix.get(&s).and_then(|&i| self.srv_conns[i]),
            _ => None,
        }
    }
}

/// A draw of a time distribution from the task's random stream, ns.
fn draw(rng: &mut Rng, d: Dist) -> u64 {
    match d {
        Dist::Const(ns) => ns,
        Dist::Exp(mean) => {
            // U in (0, 1]: 53 random bits, never 0
            let u = ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
            let v = -(mean as f64) * u.ln();
            v.min(u64::MAX as f64 / 4.0) as u64
        }
        Dist::Lognormal { median, sigma } => {
            let ppm = (sigma * 1e6).round() as u32;
            let f = rng.lognormal_factor_q32(ppm) as u128;
            ((median as u128 * f) >> 32).min(u64::MAX as u128 / 4) as u64
        }
    }
}

fn us(ns: u64) -> u32 {
    (ns / 1000).min(u32::MAX as u64) as u32
}

/// The earliest of `stamps` at or after `since`.
fn first_after(stamps: impl Iterator<Item = u64>, since: u64) -> Option<u64> {
    stamps.filter(|&s| s >= since).min()
}

// ===================================================================== serving one request

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ServeSt {
    Recv,
    Service,
    Lock,
    Locked,
    Unlock,
    Send,
    Done,
}

/// What a step of [`Serve`] asks for.
enum Step {
    Op(Op),
    /// The response is sent.
    Done,
    /// The peer closed the connection (receive returned 0).
    Closed,
}

/// §17.3 `serve(S)`: receive the request, the service (with the lock), send the response.
struct Serve {
    conn: SrvConn,
    st: ServeSt,
    got: u32,
    unlocked_ns: u64,
    locked_ns: u64,
    lock: LockSt,
    charge: Charge,
    held: Option<Op>,
    /// Set when the receive is the blocking call whose wake-up is measured (per_conn): the
    /// time it was issued.
    measure_from: Option<u64>,
}

impl Serve {
    fn new(conn: SrvConn, measure: bool, cx: &Ctx<'_>) -> Serve {
        Serve {
            conn,
            st: ServeSt::Recv,
            got: 0,
            unlocked_ns: 0,
            locked_ns: 0,
            lock: LockSt::Try,
            charge: Charge::default(),
            held: None,
            measure_from: measure.then(|| cx.now()),
        }
    }

    fn recv_op(&self, req: u32) -> Op {
        match self.conn {
            SrvConn::Tcp(sock) => Op::TcpRecv {
                sock,
                bytes: req,
                flags: RecvFlags {
                    waitall: true,
                    ..RecvFlags::default()
                },
            },
            SrvConn::Udp { sock, .. } => Op::UdpRecv { sock, bytes: req },
            SrvConn::Unix { rx, .. } => Op::SockRecv {
                sock: rx,
                bytes: req - self.got,
            },
        }
    }

    /// The first call (`last` = None) issues the receive; later calls get its results.
    fn step(
        &mut self,
        cx: &mut Ctx<'_>,
        last: SysResult,
        sh: &Sh,
        worker: usize,
        first: bool,
    ) -> Step {
        if let Some(op) = self.held.take() {
            return Step::Op(op);
        }
        let (req, rsp, service, hold, lockw) = {
            let s = sh.borrow();
            (
                s.o.req_size,
                s.o.rsp_size,
                s.o.service,
                s.o.service_lock,
                s.service_lock,
            )
        };
        loop {
            match self.st {
                ServeSt::Recv => {
                    if first {
                        return Step::Op(self.recv_op(req));
                    }
                    let n = match last {
                        SysResult::Bytes(n) => n,
                        _ => 0,
                    };
                    if let Some(t0) = self.measure_from.take() {
                        let mut s = sh.borrow_mut();
                        let stamp = s.client_of(self.conn).and_then(|i| s.clients[i].stamp);
                        if let Some(st) = stamp.filter(|&st| st >= t0) {
                            s.workers[worker].wakeup.add_lat(us(cx.now() - st));
                        }
                    }
                    if n == 0 {
                        return Step::Closed;
                    }
                    match self.conn {
                        SrvConn::Unix { .. } => {
                            self.got += n;
                            if self.got < req {
                                return Step::Op(self.recv_op(req));
                            }
                        }
                        SrvConn::Tcp(_) if n < req => return Step::Closed,
                        _ => {}
                    }
                    let d = draw(cx.rng(), service);
                    match hold {
                        Some(h) => {
                            self.locked_ns = h;
                            self.unlocked_ns = d.saturating_sub(h);
                        }
                        None => self.unlocked_ns = d,
                    }
                    self.st = ServeSt::Service;
                    if self.unlocked_ns > 0 {
                        return Step::Op(Op::Run(self.unlocked_ns));
                    }
                }
                ServeSt::Service => {
                    self.st = if lockw.is_some() {
                        ServeSt::Lock
                    } else {
                        ServeSt::Send
                    };
                }
                ServeSt::Lock => {
                    let w = lockw.expect("service lock");
                    match mutex_lock(cx, w, &mut self.lock, &mut self.charge) {
                        Some(op) => {
                            let op = self.charge.emit(op, &mut self.held);
                            return Step::Op(op);
                        }
                        None => {
                            // the unlock's atomic runs right after the held section
                            self.charge.atomic(cx);
                            let p = std::mem::take(&mut self.charge.pending);
                            self.st = ServeSt::Locked;
                            return Step::Op(Op::Run(self.locked_ns + p));
                        }
                    }
                }
                ServeSt::Locked => {
                    let w = lockw.expect("service lock");
                    let mut paid = Charge::default();
                    self.st = ServeSt::Unlock;
                    if let Some(op) = mutex_unlock(cx, w, &mut paid) {
                        return Step::Op(op);
                    }
                }
                ServeSt::Unlock => self.st = ServeSt::Send,
                ServeSt::Send => {
                    self.st = ServeSt::Done;
                    return Step::Op(match self.conn {
                        SrvConn::Tcp(sock) => Op::TcpSend { sock, bytes: rsp },
                        SrvConn::Udp { sock, peer } => Op::UdpSend {
                            sock,
                            dst: peer,
                            bytes: rsp,
                        },
                        SrvConn::Unix { tx, .. } => Op::SockSend {
                            sock: tx,
                            bytes: rsp,
                        },
                    });
                }
                ServeSt::Done => {
                    let mut s = sh.borrow_mut();
                    let counted = s.end_ns().is_some_and(|e| cx.now() <= e);
                    if counted {
                        s.workers[worker].served += 1;
                    }
                    if let Some(i) = s.client_of(self.conn) {
                        s.workers[worker].clients.insert(i);
                    }
                    return Step::Done;
                }
            }
        }
    }
}

// ===================================================================== start-up barrier

/// A server task's report that it is ready: the last one wakes the client process.
fn report_ready(cx: &mut Ctx<'_>, sh: &Sh) -> Option<Op> {
    let (ready, expected) = {
        let s = sh.borrow();
        (s.ready, s.expected_ready)
    };
    let old = cx.futex_fetch_add(ready, 1);
    (old + 1 == expected).then_some(Op::FutexWake {
        futex: ready,
        nr: i32::MAX as u32,
    })
}

/// Records the calling task as one of the model's (and as worker `worker`'s task).
fn note_task(cx: &Ctx<'_>, sh: &Sh, worker: Option<usize>) {
    let mut s = sh.borrow_mut();
    s.tasks.push(cx.task());
    if let Some(w) = worker {
        s.workers[w].task = Some(cx.task());
    }
}

// ===================================================================== workers

/// Something an epoll worker has to do after a harvest.
#[derive(Clone, Copy, Debug)]
enum Job {
    Serve(SrvConn),
    Accept(ListenId),
    Notify(NotifyFd),
    Raw(RawOp),
}

/// An operation whose result does not matter.
#[derive(Clone, Copy, Debug)]
enum RawOp {
    Ctl(EpollId, EpollOp, NetFd, u32),
    Close(TcpSockId),
    Run(u64),
    Exit,
}

impl RawOp {
    fn op(self) -> Op {
        match self {
            RawOp::Ctl(ep, op, fd, events) => Op::EpollCtl { ep, op, fd, events },
            RawOp::Close(sock) => Op::TcpClose { sock },
            RawOp::Run(ns) => Op::Run(ns),
            RawOp::Exit => Op::Exit,
        }
    }
}

enum Current {
    Idle,
    Serving(Serve, bool),
    Accepting(ListenId),
    /// Waiting for the notify read to return.
    Notified(NotifyFd),
    Waiting(u64),
}

/// A worker of the three epoll archs.
struct EpollWorker {
    sh: Sh,
    idx: usize,
    ep: EpollId,
    /// Registrations to make at start.
    setup: VecDeque<RawOp>,
    started: bool,
    ready_reported: bool,
    jobs: VecDeque<Job>,
    /// Server ends this worker closed (their ids are never reused).
    closed: BTreeSet<TcpSockId>,
    cur: Current,
    /// epoll_shared: connections are ONESHOT and re-armed.
    oneshot: bool,
}

impl EpollWorker {
    fn conn_events(&self) -> u32 {
        if self.oneshot {
            EPOLLIN | EPOLLONESHOT
        } else {
            EPOLLIN
        }
    }

    /// After a serve: re-arm (ONESHOT), or close (per_request).
    fn after_serve(&mut self, conn: SrvConn, closed: bool) {
        let per_request = self.sh.borrow().o.conn == ConnMode::PerRequest;
        if let SrvConn::Tcp(s) = conn {
            if closed || per_request {
                // Deviation: close() removes the registration by itself (eventpoll_release);
                // the kernel model keeps it, so the model unregisters first (c_epoll_ctl)
                self.closed.insert(s);
                self.jobs.push_front(Job::Raw(RawOp::Close(s)));
                self.jobs.push_front(Job::Raw(RawOp::Ctl(
                    self.ep,
                    EpollOp::Del,
                    NetFd::Tcp(s),
                    0,
                )));
                return;
            }
        }
        if self.oneshot && !closed {
            let fd = conn_fd(conn);
            self.jobs.push_front(Job::Raw(RawOp::Ctl(
                self.ep,
                EpollOp::Mod,
                fd,
                self.conn_events(),
            )));
        }
    }

    fn harvest(&mut self, cx: &mut Ctx<'_>, since: u64) {
        let evs = cx.take_epoll_events();
        let mut stamps: Vec<u64> = Vec::new();
        {
            let mut s = self.sh.borrow_mut();
            for &(fd, _bits) in &evs {
                if let NetFd::Tcp(sock) = fd {
                    if self.closed.contains(&sock) {
                        continue;
                    }
                }
                if let NetFd::Listen(l) = fd {
                    if let Some(&t) = s.connect_stamps.front() {
                        stamps.push(t);
                    }
                    self.jobs.push_back(Job::Accept(l));
                } else if let Some(n) = s.notify.iter().copied().find(|n| n.netfd() == fd) {
                    if let Some(t) = s.notify_stamp[self.idx] {
                        stamps.push(t);
                    }
                    self.jobs.push_back(Job::Notify(n));
                } else if let Some(c) = s.conn_of_fd(fd) {
                    if let Some(t) = s.client_of(c).and_then(|i| s.clients[i].stamp) {
                        stamps.push(t);
                    }
                    self.jobs.push_back(Job::Serve(c));
                }
            }
            if let Some(t) = first_after(stamps.into_iter(), since) {
                s.workers[self.idx].wakeup.add_lat(us(cx.now() - t));
            }
        }
    }
}

fn conn_fd(c: SrvConn) -> NetFd {
    match c {
        SrvConn::Tcp(s) => NetFd::Tcp(s),
        SrvConn::Udp { sock, .. } => NetFd::Udp(sock),
        SrvConn::Unix { rx, .. } => NetFd::Unix(rx),
    }
}

impl Program for EpollWorker {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        if !self.started {
            self.started = true;
            note_task(cx, &self.sh, Some(self.idx));
        }
        if let Some(r) = self.setup.pop_front() {
            return r.op();
        }
        if !self.ready_reported {
            self.ready_reported = true;
            if let Some(op) = report_ready(cx, &self.sh) {
                return op;
            }
        }
        let mut last = last;
        loop {
            match std::mem::replace(&mut self.cur, Current::Idle) {
                Current::Idle => {}
                Current::Waiting(since) => {
                    self.harvest(cx, since);
                }
                Current::Serving(mut sv, first) => {
                    match sv.step(cx, last, &self.sh, self.idx, first) {
                        Step::Op(op) => {
                            self.cur = Current::Serving(sv, false);
                            return op;
                        }
                        Step::Done => self.after_serve(sv.conn, false),
                        Step::Closed => self.after_serve(sv.conn, true),
                    }
                }
                Current::Accepting(l) => {
                    if let SysResult::Tcp(s) = last {
                        let mut sh = self.sh.borrow_mut();
                        sh.connect_stamps.pop_front();
                        drop(sh);
                        cx.tcp_set_nodelay(s, true);
                        let events = self.conn_events();
                        self.jobs.push_front(Job::Accept(l));
                        self.jobs.push_front(Job::Raw(RawOp::Ctl(
                            self.ep,
                            EpollOp::Add,
                            NetFd::Tcp(s),
                            events,
                        )));
                    }
                    // Again: the queue is empty (another worker took it, or all taken)
                }
                Current::Notified(n) => {
                    let conns: Vec<TcpSockId> = {
                        let mut s = self.sh.borrow_mut();
                        let q = &mut s.queues[self.idx];
                        let taken: Vec<TcpSockId> = match n {
                            NotifyFd::Pipe(_) => q.pop_front().into_iter().collect(),
                            NotifyFd::Eventfd(_) => q.drain(..).collect(),
                        };
                        if s.queues[self.idx].is_empty() {
                            s.notify_stamp[self.idx] = None;
                        }
                        taken
                    };
                    for c in conns.into_iter().rev() {
                        cx.tcp_set_nodelay(c, true);
                        self.jobs.push_front(Job::Raw(RawOp::Ctl(
                            self.ep,
                            EpollOp::Add,
                            NetFd::Tcp(c),
                            EPOLLIN,
                        )));
                    }
                    // the pop's lock and unlock
                    let a = cx.costs().c_atomic.0;
                    self.jobs.push_front(Job::Raw(RawOp::Run(2 * a)));
                }
            }
            last = SysResult::None;
            let Some(job) = self.jobs.pop_front() else {
                let max = self.sh.borrow().o.epoll_max_n();
                self.cur = Current::Waiting(cx.now());
                return Op::EpollWait { ep: self.ep, max };
            };
            match job {
                Job::Raw(r) => return r.op(),
                Job::Serve(c) => {
                    self.cur = Current::Serving(Serve::new(c, false, cx), true);
                }
                Job::Accept(l) => {
                    self.cur = Current::Accepting(l);
                    return Op::Accept {
                        listener: l,
                        nonblock: true,
                    };
                }
                Job::Notify(n) => {
                    self.cur = Current::Notified(n);
                    return match n {
                        NotifyFd::Pipe(pipe) => Op::PipeRead { pipe, bytes: 1 },
                        NotifyFd::Eventfd(fd) => Op::EventfdRead { fd },
                    };
                }
            }
        }
    }
}

/// A worker of `per_conn`: serves one connection with blocking receives. With
/// `per_request` connections it then parks in the server's thread cache (a futex wait) until
/// the acceptor hands it the next connection, instead of exiting.
struct ConnWorker {
    sh: Sh,
    idx: usize,
    conn: SrvConn,
    /// Report ready at start (workers created before the clients start).
    report: bool,
    started: bool,
    serve: Option<Serve>,
    after: VecDeque<RawOp>,
    /// Park in the thread cache once the close returned.
    park_next: bool,
    /// Parked: waiting for a connection.
    parked: bool,
}

impl ConnWorker {
    fn new(sh: Sh, idx: usize, conn: SrvConn, report: bool) -> ConnWorker {
        ConnWorker {
            sh,
            idx,
            conn,
            report,
            started: false,
            serve: None,
            after: VecDeque::new(),
            park_next: false,
            parked: false,
        }
    }

    /// `FUTEX_WAIT` on this worker's word until the acceptor sets it.
    fn park(&mut self, cx: &mut Ctx<'_>) -> Op {
        let word = {
            let mut s = self.sh.borrow_mut();
            if s.workers[self.idx].word.is_none() {
                s.workers[self.idx].word = Some(cx.new_futex(0));
            }
            s.workers[self.idx].word.expect("word")
        };
        if !self.parked {
            self.parked = true;
            cx.futex_store(word, 0);
            self.sh.borrow_mut().idle.push(self.idx);
        }
        Op::FutexWait {
            futex: word,
            val: 0,
        }
    }
}

impl Program for ConnWorker {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        if !self.started {
            self.started = true;
            note_task(cx, &self.sh, Some(self.idx));
            if self.report {
                if let Some(op) = report_ready(cx, &self.sh) {
                    return op;
                }
            }
        }
        if let Some(r) = self.after.pop_front() {
            return r.op();
        }
        if std::mem::take(&mut self.park_next) {
            return self.park(cx);
        }
        let mut last = last;
        if self.parked {
            // back from FUTEX_WAIT: woken with a connection, or the word changed first
            let hand = self.sh.borrow_mut().workers[self.idx].hand.take();
            match hand {
                Some(c) => {
                    self.parked = false;
                    self.conn = c;
                    self.serve = None;
                    last = SysResult::None;
                }
                None => return self.park(cx),
            }
        }
        let per_request = self.sh.borrow().o.conn == ConnMode::PerRequest;
        loop {
            let (mut sv, first) = match self.serve.take() {
                Some(sv) => (sv, false),
                None => (Serve::new(self.conn, true, cx), true),
            };
            match sv.step(cx, last, &self.sh, self.idx, first) {
                Step::Op(op) => {
                    self.serve = Some(sv);
                    return op;
                }
                Step::Done if !per_request => last = SysResult::None,
                Step::Done | Step::Closed => {
                    let SrvConn::Tcp(s) = self.conn else {
                        return Op::Exit;
                    };
                    if per_request {
                        self.park_next = true;
                    } else {
                        self.after.push_back(RawOp::Exit);
                    }
                    return Op::TcpClose { sock: s };
                }
            }
        }
    }
}

/// `per_conn` over TCP: accepts and clones one worker per connection.
struct Acceptor {
    sh: Sh,
    listener: ListenId,
    reported: bool,
}

impl Program for Acceptor {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        if !self.reported {
            self.reported = true;
            note_task(cx, &self.sh, None);
            if let Some(op) = report_ready(cx, &self.sh) {
                return op;
            }
        }
        if let SysResult::Tcp(s) = last {
            cx.tcp_set_nodelay(s, true);
            // a parked worker of the thread cache takes it (most recently parked first)
            let parked = {
                let mut sh = self.sh.borrow_mut();
                sh.connect_stamps.pop_front();
                match sh.idle.pop() {
                    Some(w) => {
                        sh.workers[w].hand = Some(SrvConn::Tcp(s));
                        sh.workers[w].word
                    }
                    None => None,
                }
            };
            if let Some(word) = parked {
                cx.futex_store(word, 1);
                return Op::FutexWake { futex: word, nr: 1 };
            }
            let (thread, w) = {
                let mut sh = self.sh.borrow_mut();
                sh.workers.push(WorkerStats::default());
                (sh.o.worker_mm == WorkerMm::Thread, sh.workers.len() - 1)
            };
            let prog = ConnWorker::new(self.sh.clone(), w, SrvConn::Tcp(s), false);
            return spawn(prog, thread, "worker");
        }
        Op::Accept {
            listener: self.listener,
            nonblock: false,
        }
    }
}

fn spawn(prog: impl Program + 'static, thread: bool, comm: &str) -> Op {
    Op::Spawn(Box::new(Spawn {
        program: Box::new(prog),
        thread,
        attrs: TaskAttrs {
            comm: Some(comm.to_string()),
            ..TaskAttrs::default()
        },
    }))
}

/// memcached's dispatcher: accept, then hand each connection to the next worker.
struct Dispatcher {
    sh: Sh,
    listener: ListenId,
    /// `Some`: accept after epoll reports the listener; `None`: blocking accept.
    ep: Option<EpollId>,
    setup: VecDeque<RawOp>,
    setup_len: usize,
    reported: bool,
    next_worker: usize,
    /// Accept results to hand off, then the notify op.
    out: VecDeque<Op>,
    /// The last op was an accept.
    accepting: bool,
}

impl Program for Dispatcher {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        if !self.reported && self.setup.len() == self.setup_len {
            note_task(cx, &self.sh, None);
        }
        if let Some(r) = self.setup.pop_front() {
            return r.op();
        }
        if !self.reported {
            self.reported = true;
            if let Some(op) = report_ready(cx, &self.sh) {
                return op;
            }
        }
        if std::mem::take(&mut self.accepting) {
            if let SysResult::Tcp(s) = last {
                let mut sh = self.sh.borrow_mut();
                sh.connect_stamps.pop_front();
                let w = self.next_worker % sh.w;
                self.next_worker += 1;
                sh.queues[w].push_back(s);
                if sh.notify_stamp[w].is_none() {
                    sh.notify_stamp[w] = Some(cx.now());
                }
                let n = sh.notify[w];
                drop(sh);
                // lock, push, unlock: two atomics
                let a = cx.costs().c_atomic.0;
                self.out.push_back(Op::Run(2 * a));
                self.out.push_back(match n {
                    NotifyFd::Pipe(pipe) => Op::PipeWrite { pipe, bytes: 1 },
                    NotifyFd::Eventfd(fd) => Op::EventfdWrite { fd },
                });
                if self.ep.is_some() {
                    // accept again until EAGAIN
                    self.out.push_back(Op::Accept {
                        listener: self.listener,
                        nonblock: true,
                    });
                }
            }
        }
        if let Some(op) = self.out.pop_front() {
            if matches!(op, Op::Accept { .. }) {
                self.accepting = true;
            }
            return op;
        }
        match self.ep {
            Some(ep) => {
                if let SysResult::Ready(_) = last {
                    let _ = cx.take_epoll_events();
                    self.accepting = true;
                    return Op::Accept {
                        listener: self.listener,
                        nonblock: true,
                    };
                }
                Op::EpollWait { ep, max: 1 }
            }
            None => {
                self.accepting = true;
                Op::Accept {
                    listener: self.listener,
                    nonblock: false,
                }
            }
        }
    }
}

// ===================================================================== server process

/// The server process's main thread: creates every object, then the server tasks.
struct ServerMain {
    sh: Sh,
    out: VecDeque<Op>,
    started: bool,
}

impl ServerMain {
    fn build(&mut self, cx: &mut Ctx<'_>) {
        let sh = self.sh.clone();
        let mut s = sh.borrow_mut();
        let o = s.o.clone();
        let (w, m) = (s.w, s.m);
        let thread = o.worker_mm == WorkerMm::Thread;
        let accept = o.accept_mode();
        // connections that exist from the start (UDP, AF_UNIX)
        for i in 0..m {
            match o.transport {
                Transport::Tcp => {}
                Transport::Udp => {
                    let c = cx.udp_socket();
                    let srv = cx.udp_socket();
                    s.cli_conns[i] = CliConn::Udp { sock: c, dst: srv };
                    s.srv_conns[i] = Some(SrvConn::Udp { sock: srv, peer: c });
                    s.by_udp.insert(srv, i);
                }
                Transport::Unix => {
                    let req = cx.new_unix_stream();
                    let rsp = cx.new_unix_stream();
                    s.cli_conns[i] = CliConn::Unix { tx: req, rx: rsp };
                    s.srv_conns[i] = Some(SrvConn::Unix { rx: req, tx: rsp });
                    s.by_unix.insert(req, i);
                }
            }
        }
        if o.transport == Transport::Tcp {
            let n = if accept == Accept::Reuseport { w } else { 1 };
            let group = (accept == Accept::Reuseport).then_some(0);
            for _ in 0..n {
                let l = cx.tcp_listen(LISTEN_BACKLOG, group);
                s.listeners.push(l);
            }
        }
        let tcp = o.transport == Transport::Tcp;
        let mut progs: Vec<(Box<dyn Program>, bool, &str)> = Vec::new();
        match o.arch {
            Arch::PerConn => {
                if tcp {
                    progs.push((
                        Box::new(Acceptor {
                            sh: sh.clone(),
                            listener: s.listeners[0],
                            reported: false,
                        }),
                        true,
                        "acceptor",
                    ));
                } else {
                    for i in 0..m {
                        s.workers.push(WorkerStats::default());
                        progs.push((
                            Box::new(ConnWorker::new(
                                sh.clone(),
                                i,
                                s.srv_conns[i].expect("conn"),
                                true,
                            )),
                            thread,
                            "worker",
                        ));
                    }
                }
            }
            Arch::EpollPerWorker | Arch::Dispatcher => {
                for j in 0..w {
                    s.workers.push(WorkerStats::default());
                    let ep = cx.epoll_create();
                    let mut setup = VecDeque::new();
                    if o.arch == Arch::Dispatcher {
                        let n = match o.notify {
                            Notify::Pipe => NotifyFd::Pipe(cx.new_pipe(false)),
                            Notify::Eventfd => NotifyFd::Eventfd(cx.eventfd()),
                        };
                        s.notify.push(n);
                        s.queues.push(VecDeque::new());
                        s.notify_stamp.push(None);
                        setup.push_back(RawOp::Ctl(ep, EpollOp::Add, n.netfd(), EPOLLIN));
                    } else if tcp {
                        let (l, ev) = match accept {
                            Accept::Reuseport => (s.listeners[j], EPOLLIN),
                            Accept::EpollExclusive => (s.listeners[0], EPOLLIN | EPOLLEXCLUSIVE),
                            _ => (s.listeners[0], EPOLLIN),
                        };
                        setup.push_back(RawOp::Ctl(ep, EpollOp::Add, NetFd::Listen(l), ev));
                    } else {
                        for i in (j..m).step_by(w) {
                            let fd = conn_fd(s.srv_conns[i].expect("conn"));
                            setup.push_back(RawOp::Ctl(ep, EpollOp::Add, fd, EPOLLIN));
                        }
                    }
                    progs.push((
                        Box::new(EpollWorker {
                            sh: sh.clone(),
                            idx: j,
                            ep,
                            setup,
                            started: false,
                            ready_reported: false,
                            jobs: VecDeque::new(),
                            closed: BTreeSet::new(),
                            cur: Current::Idle,
                            oneshot: false,
                        }),
                        thread,
                        "worker",
                    ));
                }
                if o.arch == Arch::Dispatcher {
                    let (ep, setup) = if accept == Accept::Epoll {
                        let ep = cx.epoll_create();
                        let l = s.listeners[0];
                        (
                            Some(ep),
                            VecDeque::from([RawOp::Ctl(
                                ep,
                                EpollOp::Add,
                                NetFd::Listen(l),
                                EPOLLIN,
                            )]),
                        )
                    } else {
                        (None, VecDeque::new())
                    };
                    progs.push((
                        Box::new(Dispatcher {
                            sh: sh.clone(),
                            listener: s.listeners[0],
                            ep,
                            setup_len: setup.len(),
                            setup,
                            reported: false,
                            next_worker: 0,
                            out: VecDeque::new(),
                            accepting: false,
                        }),
                        true,
                        "dispatcher",
                    ));
                }
            }
            Arch::EpollShared => {
                let ep = cx.epoll_create();
                s.shared_ep = Some(ep);
                if tcp {
                    let l = s.listeners[0];
                    self.out.push_back(Op::EpollCtl {
                        ep,
                        op: EpollOp::Add,
                        fd: NetFd::Listen(l),
                        events: EPOLLIN,
                    });
                } else {
                    for i in 0..m {
                        let fd = conn_fd(s.srv_conns[i].expect("conn"));
                        self.out.push_back(Op::EpollCtl {
                            ep,
                            op: EpollOp::Add,
                            fd,
                            events: EPOLLIN | EPOLLONESHOT,
                        });
                    }
                }
                for j in 0..w {
                    s.workers.push(WorkerStats::default());
                    progs.push((
                        Box::new(EpollWorker {
                            sh: sh.clone(),
                            idx: j,
                            ep,
                            setup: VecDeque::new(),
                            started: false,
                            ready_reported: false,
                            jobs: VecDeque::new(),
                            closed: BTreeSet::new(),
                            cur: Current::Idle,
                            oneshot: true,
                        }),
                        thread,
                        "worker",
                    ));
                }
            }
        }
        for (p, thread, comm) in progs {
            self.out.push_back(Op::Spawn(Box::new(Spawn {
                program: p,
                thread,
                attrs: TaskAttrs {
                    comm: Some(comm.to_string()),
                    ..TaskAttrs::default()
                },
            })));
        }
    }
}

impl Program for ServerMain {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        if !self.started {
            self.started = true;
            self.build(cx);
        }
        match self.out.pop_front() {
            Some(op) => op,
            None => {
                if last == SysResult::NoChild {
                    return Op::Exit;
                }
                Op::WaitChild
            }
        }
    }
}

// ===================================================================== clients

/// The client process's main thread: waits for the server, starts the clients, joins them.
struct ClientMain {
    sh: Sh,
    spawned: usize,
}

impl Program for ClientMain {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        let (ready, expected, m) = {
            let s = self.sh.borrow();
            (s.ready, s.expected_ready, s.m)
        };
        if self.spawned == 0 {
            let v = cx.futex_load(ready);
            if v < expected {
                return Op::FutexWait {
                    futex: ready,
                    val: v,
                };
            }
            self.sh.borrow_mut().start_ns = Some(cx.now());
        }
        if self.spawned < m {
            let i = self.spawned;
            self.spawned += 1;
            let conn = self.sh.borrow().cli_conns[i];
            let mode = self.sh.borrow().o.mode;
            let prog = Client {
                sh: self.sh.clone(),
                idx: i,
                conn,
                st: CliSt::Start,
                t0: 0,
                got: 0,
                arrivals: VecDeque::new(),
                next_arrival: None,
                mode,
            };
            return spawn(prog, true, "client");
        }
        if last == SysResult::NoChild {
            return Op::Exit;
        }
        Op::WaitChild
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CliSt {
    Start,
    /// Persistent TCP: the start-up connect returned.
    Connected,
    Loop,
    /// Think time is over, or the arrival wait returned.
    Ready,
    /// per_request: the connect returned.
    ReqConnected,
    Sent,
    Receiving,
    Closed,
}

/// One client thread (§17.3 `client`).
struct Client {
    sh: Sh,
    idx: usize,
    conn: CliConn,
    st: CliSt,
    /// When the current request began (send, or its arrival in the open loop), ns.
    t0: u64,
    got: u32,
    arrivals: VecDeque<u64>,
    next_arrival: Option<u64>,
    mode: LoopMode,
}

impl Client {
    fn connect(&mut self, cx: &Ctx<'_>) -> Op {
        let mut s = self.sh.borrow_mut();
        s.connect_stamps.push_back(cx.now());
        Op::TcpConnect {
            listener: s.listeners[0],
            nodelay: true,
        }
    }

    fn connected(&mut self, cx: &mut Ctx<'_>, last: SysResult) {
        if let SysResult::Tcp(c) = last {
            self.conn = CliConn::Tcp(Some(c));
            let p = cx.tcp_peer(c);
            self.sh.borrow_mut().by_tcp.insert(p, self.idx);
        }
    }

    fn send(&mut self, cx: &Ctx<'_>) -> Op {
        let req = {
            let mut s = self.sh.borrow_mut();
            s.clients[self.idx].stamp = Some(cx.now());
            s.o.req_size
        };
        self.got = 0;
        self.st = CliSt::Sent;
        match self.conn {
            CliConn::Tcp(Some(sock)) => Op::TcpSend { sock, bytes: req },
            CliConn::Tcp(None) => unreachable!("connected before the request"),
            CliConn::Udp { sock, dst } => Op::UdpSend {
                sock,
                dst,
                bytes: req,
            },
            CliConn::Unix { tx, .. } => Op::SockSend {
                sock: tx,
                bytes: req,
            },
        }
    }

    fn recv(&self, rsp: u32) -> Op {
        match self.conn {
            CliConn::Tcp(sock) => Op::TcpRecv {
                sock: sock.expect("connected before the request"),
                bytes: rsp,
                flags: RecvFlags {
                    waitall: true,
                    ..RecvFlags::default()
                },
            },
            CliConn::Udp { sock, .. } => Op::UdpRecv { sock, bytes: rsp },
            CliConn::Unix { rx, .. } => Op::SockRecv {
                sock: rx,
                bytes: rsp - self.got,
            },
        }
    }
}

impl Program for Client {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        if self.st == CliSt::Start {
            let mut s = self.sh.borrow_mut();
            s.tasks.push(cx.task());
            s.clients[self.idx].task = Some(cx.task());
        }
        let (end, conn_mode, think, think_mode, rsp) = {
            let s = self.sh.borrow();
            (
                s.end_ns().unwrap_or(u64::MAX),
                s.o.conn,
                s.o.think,
                s.o.think_mode,
                s.o.rsp_size,
            )
        };
        loop {
            match self.st {
                CliSt::Start => {
                    if matches!(self.conn, CliConn::Tcp(_)) && conn_mode == ConnMode::Persistent {
                        self.st = CliSt::Connected;
                        return self.connect(cx);
                    }
                    self.st = CliSt::Loop;
                }
                CliSt::Connected => {
                    self.connected(cx, last);
                    self.st = CliSt::Loop;
                }
                CliSt::Loop => {
                    if cx.now() >= end {
                        return Op::Exit;
                    }
                    match self.mode {
                        LoopMode::Closed => {
                            self.st = CliSt::Ready;
                            if let Some(d) = think {
                                let t = draw(cx.rng(), d);
                                if t > 0 {
                                    return match think_mode {
                                        ThinkMode::Sleep => Op::Sleep(t),
                                        ThinkMode::Busy => Op::Run(t),
                                    };
                                }
                            }
                        }
                        LoopMode::Open { rate } => {
                            let mean = (1e9 / rate).max(1.0) as u64;
                            let now = cx.now();
                            let mut next = match self.next_arrival {
                                Some(t) => t,
                                None => now + draw(cx.rng(), Dist::Exp(mean)),
                            };
                            while next <= now {
                                self.arrivals.push_back(next);
                                next += draw(cx.rng(), Dist::Exp(mean)).max(1);
                            }
                            self.next_arrival = Some(next);
                            if self.arrivals.is_empty() {
                                if next >= end {
                                    return Op::Exit;
                                }
                                return Op::SleepUntil(next);
                            }
                            self.st = CliSt::Ready;
                        }
                    }
                }
                CliSt::Ready => {
                    if cx.now() >= end {
                        return Op::Exit;
                    }
                    self.t0 = match self.mode {
                        LoopMode::Closed => cx.now(),
                        LoopMode::Open { .. } => self.arrivals.pop_front().unwrap_or(cx.now()),
                    };
                    if conn_mode == ConnMode::PerRequest {
                        self.st = CliSt::ReqConnected;
                        return self.connect(cx);
                    }
                    return self.send(cx);
                }
                CliSt::ReqConnected => {
                    self.connected(cx, last);
                    return self.send(cx);
                }
                CliSt::Sent => {
                    self.st = CliSt::Receiving;
                    return self.recv(rsp);
                }
                CliSt::Receiving => {
                    let n = match last {
                        SysResult::Bytes(n) => n,
                        _ => 0,
                    };
                    if let CliConn::Unix { .. } = self.conn {
                        self.got += n;
                        if n > 0 && self.got < rsp {
                            return self.recv(rsp);
                        }
                    }
                    let now = cx.now();
                    {
                        let mut s = self.sh.borrow_mut();
                        if now <= end {
                            let c = &mut s.clients[self.idx];
                            c.request.add_lat(us(now - self.t0));
                            c.completed += 1;
                        }
                    }
                    self.st = CliSt::Closed;
                    if conn_mode == ConnMode::PerRequest {
                        if let CliConn::Tcp(Some(sock)) = self.conn {
                            self.conn = CliConn::Tcp(None);
                            return Op::TcpClose { sock };
                        }
                    }
                }
                CliSt::Closed => self.st = CliSt::Loop,
            }
        }
    }
}

// ===================================================================== the workload

impl ServerModel {
    /// The model of `server-model ARGS` (`line` is the whole line, for messages).
    pub fn new(line: &str, args: &[String]) -> Result<ServerModel, WorkloadError> {
        let opts =
            super::options::parse(args).map_err(|e| WorkloadError::option(line, e.to_string()))?;
        Ok(ServerModel {
            line: line.to_string(),
            opts,
            shared: None,
        })
    }

    fn report(&self, procfs: &dyn Procfs) -> Report {
        let Some(sh) = &self.shared else {
            return Report {
                workers: self.opts.workers.unwrap_or(0),
                clients: self.opts.clients.unwrap_or(0),
                requests: 0,
                elapsed_ns: 0,
                request: Histogram::new(),
                wakeup: Histogram::new(),
            };
        };
        let s = sh.borrow();
        let mut request = Histogram::new();
        let mut wakeup = Histogram::new();
        // schbench's combine takes an empty histogram's min of 0 as a sample: skip those
        // (a worker that never slept, a client that completed nothing)
        for c in s.clients.iter().filter(|c| c.request.nr_samples > 0) {
            request.combine(&c.request);
        }
        for wk in s.workers.iter().filter(|w| w.wakeup.nr_samples > 0) {
            wakeup.combine(&wk.wakeup);
        }
        let elapsed_ns = match s.start_ns {
            Some(st) => (procfs.now().saturating_sub(st)).min(self.opts.runtime_ns),
            None => 0,
        };
        Report {
            workers: s.w as u32,
            clients: s.m as u32,
            requests: s.clients.iter().map(|c| c.completed).sum(),
            elapsed_ns,
            request,
            wakeup,
        }
    }

    /// Per worker: (requests served within the runtime, the clients it served, its task).
    #[cfg(test)]
    pub(crate) fn worker_stats(&self) -> Vec<(u64, Vec<usize>, Option<TaskId>)> {
        let sh = self.shared.as_ref().expect("set up");
        let s = sh.borrow();
        s.workers
            .iter()
            .map(|w| (w.served, w.clients.iter().copied().collect(), w.task))
            .collect()
    }

    /// The server ends of the TCP connections with their client, and the listeners.
    #[cfg(test)]
    pub(crate) fn tcp_binding(&self) -> (Vec<(TcpSockId, usize)>, Vec<ListenId>) {
        let sh = self.shared.as_ref().expect("set up");
        let s = sh.borrow();
        (
            s.by_tcp.iter().map(|(&k, &v)| (k, v)).collect(),
            s.listeners.clone(),
        )
    }

    /// Per client: (requests completed within the runtime, its task).
    #[cfg(test)]
    pub(crate) fn client_stats(&self) -> Vec<(u64, Option<TaskId>)> {
        let sh = self.shared.as_ref().expect("set up");
        let s = sh.borrow();
        s.clients.iter().map(|c| (c.completed, c.task)).collect()
    }

    fn bad(&self, message: String) -> WorkloadError {
        WorkloadError::option(&self.line, message)
    }
}

impl Workload for ServerModel {
    fn program(&self) -> &str {
        "server-model"
    }

    fn max_tasks(&self, ncpus: usize) -> u64 {
        let n = ncpus as u32;
        let (w, m) = (
            self.opts.workers_for(n) as u64,
            self.opts.clients_for(n) as u64,
        );
        // server main + client main + the clients + the workers (per_conn: one per
        // connection, plus the acceptor) + the dispatcher
        let workers = match self.opts.arch {
            Arch::PerConn => m + 1,
            Arch::Dispatcher => w + 1,
            _ => w,
        };
        2 + m + workers
    }

    fn setup(&mut self, sys: &mut dyn Sys, env: &Env) -> Result<(), WorkloadError> {
        let o = self.opts.clone();
        let ncpus = sys.ncpus() as u32;
        let m = o.clients_for(ncpus) as usize;
        // per_conn: one worker per connection
        let w = match o.arch {
            Arch::PerConn => m,
            _ => o.workers_for(ncpus) as usize,
        };
        let tasks = self.max_tasks(ncpus as usize) as u128;
        crate::cmdline::check_tasks(
            super::options::PROG,
            &format!("--workers {} --clients {m}", o.workers_for(ncpus)),
            tasks,
        )
        .map_err(|e| self.bad(e.to_string()))?;
        for (opt, side) in [
            ("--worker-cpus", &o.worker_side),
            ("--client-cpus", &o.client_side),
        ] {
            if let Some(c) = side.cpus.as_ref().and_then(|m| m.last()) {
                if c >= ncpus as usize {
                    return Err(self.bad(format!(
                        "server-model: {opt}: CPU {c} is not on this {ncpus}-CPU machine"
                    )));
                }
            }
        }
        let expected_ready = match o.arch {
            Arch::PerConn if o.transport == Transport::Tcp => 1,
            Arch::PerConn => m as u32,
            Arch::Dispatcher => w as u32 + 1,
            _ => w as u32,
        };
        let shared = Shared {
            o: o.clone(),
            w,
            m,
            expected_ready,
            ready: sys.new_futex(0),
            start_ns: None,
            service_lock: o.service_lock.map(|_| sys.new_futex(0)),
            listeners: Vec::new(),
            shared_ep: None,
            cli_conns: vec![CliConn::Tcp(None); m],
            srv_conns: vec![None; m],
            by_tcp: BTreeMap::new(),
            by_udp: BTreeMap::new(),
            by_unix: BTreeMap::new(),
            connect_stamps: VecDeque::new(),
            queues: Vec::new(),
            notify: Vec::new(),
            notify_stamp: Vec::new(),
            idle: Vec::new(),
            workers: Vec::new(),
            clients: (0..m).map(|_| ClientStats::default()).collect(),
            tasks: Vec::new(),
        };
        let sh = Rc::new(RefCell::new(shared));
        self.shared = Some(sh.clone());
        let mut tgs = [env.tg, env.tg];
        for (i, (opt, side)) in [
            ("--worker-cgroup", &o.worker_side),
            ("--client-cgroup", &o.client_side),
        ]
        .into_iter()
        .enumerate()
        {
            if let Some(path) = &side.cgroup {
                let tg = sys
                    .cgroup_mkdir(path)
                    .map_err(|e| self.bad(format!("server-model: {opt} {path}: {e}")))?;
                tgs[i] = Some(tg);
            }
        }
        let attrs = |comm: &str, side: &Side, tg: Option<schedlab_sched::sched::TgId>| {
            let mut a = env.placement.attrs(comm, tg);
            if side.slice_ns.is_some() {
                a.slice_ns = side.slice_ns;
            }
            if side.policy.is_some() {
                a.policy = side.policy;
                a.rt_priority = side.rt_priority;
            }
            if side.nice.is_some() {
                a.nice = side.nice;
            }
            if side.cpus.is_some() {
                a.cpus = side.cpus.clone();
            }
            a
        };
        let server = sys.fork(
            Box::new(ServerMain {
                sh: sh.clone(),
                out: VecDeque::new(),
                started: false,
            }),
            &attrs("server", &o.worker_side, tgs[0]),
        );
        let client = sys.fork(
            Box::new(ClientMain {
                sh: sh.clone(),
                spawned: 0,
            }),
            &attrs("client", &o.client_side, tgs[1]),
        );
        sh.borrow_mut().tasks.extend([server, client]);
        sys.wake_up_new_task(server);
        sys.wake_up_new_task(client);
        Ok(())
    }

    fn output(&self, procfs: &dyn Procfs) -> String {
        render(&self.opts, &self.report(procfs))
    }

    fn metrics(&self, procfs: &dyn Procfs) -> Vec<Metric> {
        let r = self.report(procfs);
        let rq = r.request.percentiles();
        let wk = r.wakeup.percentiles();
        vec![
            Metric::new("requests_per_s", r.rps(), "req/s", Better::Higher),
            Metric::new("request_p50_us", rq[1].value as f64, "us", Better::Lower),
            Metric::new("request_p90_us", rq[2].value as f64, "us", Better::Lower),
            Metric::new("request_p99_us", rq[3].value as f64, "us", Better::Lower),
            Metric::new("request_p999_us", rq[4].value as f64, "us", Better::Lower),
            Metric::new("wakeup_p50_us", wk[1].value as f64, "us", Better::Lower),
            Metric::new("wakeup_p99_us", wk[3].value as f64, "us", Better::Lower),
        ]
    }

    fn tasks(&self) -> Vec<TaskId> {
        match &self.shared {
            Some(sh) => sh.borrow().tasks.clone(),
            None => Vec::new(),
        }
    }

    fn warnings(&self) -> Vec<String> {
        self.opts.warnings.clone()
    }

    fn duration_hint(&self) -> Option<u64> {
        Some(self.opts.runtime_ns + START_MARGIN_NS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sample means and medians of 200 000 draws against the distributions' own. exp(20 µs):
    /// mean 20 µs, standard error 20 / √200 000 ≈ 0.045 µs, window ±0.2 µs. lognormal(3 µs,
    /// σ 0.5): median 3 µs, mean 3 × exp(0.5² / 2) = 3.399 µs, windows ±1 %.
    #[test]
    fn service_distributions() {
        let mut rng = Rng::from_seed(7);
        let n = 200_000u64;
        assert_eq!(draw(&mut rng, Dist::Const(10_000)), 10_000);
        let sum: u64 = (0..n).map(|_| draw(&mut rng, Dist::Exp(20_000))).sum();
        let mean = sum as f64 / n as f64;
        assert!((mean - 20_000.0).abs() < 200.0, "{mean}");
        let mut v: Vec<u64> = (0..n)
            .map(|_| {
                draw(
                    &mut rng,
                    Dist::Lognormal {
                        median: 3_000,
                        sigma: 0.5,
                    },
                )
            })
            .collect();
        let mean = v.iter().sum::<u64>() as f64 / n as f64;
        v.sort_unstable();
        let median = v[v.len() / 2] as f64;
        assert!((median - 3_000.0).abs() < 30.0, "{median}");
        assert!((mean - 3_399.0).abs() < 35.0, "{mean}");
    }

    #[test]
    fn first_note_after_the_sleep() {
        assert_eq!(first_after([5, 9, 7].into_iter(), 6), Some(7));
        assert_eq!(first_after([5, 3].into_iter(), 6), None);
        assert_eq!(us(23_440), 23);
    }
}
