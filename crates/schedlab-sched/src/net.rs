//! Loopback TCP and UDP (docs/model.md N§1.12–N§1.14): connected TCP socket ends with their
//! receive queue, owner (`lock_sock`), socket backlog, wait queue and the simplified
//! Nagle/ACK/send-buffer state; listening sockets with their accept queue and SO_REUSEPORT
//! groups; UDP sockets with truesize accounting; the wait queues shared with epoll.
//!
//! These hold state only, like ipc.rs: the send path, the NET_RX softirq run in the sender's
//! context, the wake-ups with the kernel's flags, the blocking and the costs are applied by
//! exec.rs when a task's system call runs. Epoll instances and eventfds are in eventpoll.rs.

use crate::ipc::{PipeId, SockId};
use crate::sched::TaskId;
use schedlab_engine::define_id;
use std::collections::{BTreeMap, VecDeque};

define_id!(
    /// One end of an established TCP connection.
    TcpSockId
);
define_id!(
    /// A listening TCP socket.
    ListenId
);
define_id!(
    /// A UDP socket (bound, unconnected).
    UdpSockId
);
define_id!(
    /// An epoll instance.
    EpollId
);
define_id!(
    /// An eventfd counter.
    EventfdId
);

/// A file that can be registered with epoll.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NetFd {
    Tcp(TcpSockId),
    Listen(ListenId),
    Udp(UdpSockId),
    Eventfd(EventfdId),
    /// The read end of a pipe.
    Pipe(PipeId),
    /// The receiving end of an AF_UNIX stream socket pair.
    Unix(SockId),
}

/// epoll event bits, the kernel's values (include/uapi/linux/eventpoll.h).
pub const EPOLLIN: u32 = 0x001;
pub const EPOLLOUT: u32 = 0x004;
pub const EPOLLERR: u32 = 0x008;
pub const EPOLLHUP: u32 = 0x010;
pub const EPOLLEXCLUSIVE: u32 = 1 << 28;
pub const EPOLLONESHOT: u32 = 1 << 30;
pub const EPOLLET: u32 = 1 << 31;
/// `EP_PRIVATE_BITS`: the flags that are not events (fs/eventpoll.c).
pub const EP_PRIVATE_BITS: u32 = EPOLLEXCLUSIVE | EPOLLONESHOT | EPOLLET | (1 << 29);

/// `epoll_ctl()` operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpollOp {
    Add,
    Mod,
    Del,
}

/// `recv()` flags that the models use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecvFlags {
    /// `MSG_WAITALL`: return only once all bytes asked for were gathered (or EOF).
    pub waitall: bool,
    /// `MSG_TRUNC` on TCP: discard the bytes instead of copying them (no copy cost).
    pub trunc: bool,
    /// `MSG_DONTWAIT`: `EAGAIN` instead of sleeping on an empty queue.
    pub dontwait: bool,
}

/// One entry of a wait queue (`wait_queue_entry`): a task sleeping in a system call, or the
/// link of an epoll instance watching the file (`ep_poll_callback`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waiter {
    Task(TaskId),
    Epoll(EpollId),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WqEntry {
    pub w: Waiter,
    /// `WQ_FLAG_EXCLUSIVE`.
    pub exclusive: bool,
}

/// A wait queue head (include/linux/wait.h): non-exclusive entries are added at the head
/// (`add_wait_queue`), exclusive ones at the tail (`add_wait_queue_exclusive`,
/// `prepare_to_wait_exclusive`); a wake-up walks it in order.
#[derive(Clone, Debug, Default)]
pub struct WaitQueue {
    pub q: VecDeque<WqEntry>,
}

impl WaitQueue {
    /// `add_wait_queue()`: non-exclusive, at the head.
    pub fn add(&mut self, w: Waiter) {
        self.q.push_front(WqEntry {
            w,
            exclusive: false,
        });
    }
    /// `add_wait_queue_exclusive()`: exclusive, at the tail (FIFO among exclusives).
    pub fn add_exclusive_tail(&mut self, w: Waiter) {
        self.q.push_back(WqEntry { w, exclusive: true });
    }
    /// Removes every entry of `w` (`remove_wait_queue`, `finish_wait`).
    pub fn remove(&mut self, w: Waiter) {
        self.q.retain(|e| e.w != w);
    }
    pub fn contains(&self, w: Waiter) -> bool {
        self.q.iter().any(|e| e.w == w)
    }
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}

/// One TCP segment in flight on loopback (one skb): `data` bytes of payload (0 for a pure
/// ACK), the bytes of the other direction it acknowledges, and FIN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSeg {
    pub data: u32,
    pub ack: u64,
    pub fin: bool,
}

/// `TCP_MAXSEG` reported on loopback by the calibration VM \[M1\] (netbench.md §1.12.2, §18).
pub const LO_MSS: u32 = 32_741;
/// Largest skb a send puts on loopback: GSO carries two MSS (netbench.md §1.12.2, the
/// size-goal derivation is unverified).
pub const LO_SIZE_GOAL: u32 = 2 * LO_MSS;
/// `tcp_wmem[1]`: the send buffer before autotuning.
pub const TCP_WMEM_DEFAULT: u32 = 16_384;
/// `sk_sndbuf` of a fresh loopback connection after `tcp_init_buffer_space()` autotuning,
/// as read on \[M1\] (netbench.md §1.12.7).
pub const TCP_SNDBUF_ESTABLISHED: u32 = 3_939_840;
/// `tcp_rmem[1]`: the receive buffer.
pub const TCP_RMEM_DEFAULT: u32 = 131_072;
/// `net.core.rmem_default`: a UDP socket's `sk_rcvbuf`.
pub const UDP_RMEM_DEFAULT: u32 = 212_992;
/// `TCP_DELACK_MIN` (40 ms).
pub const TCP_DELACK_MIN_NS: u64 = 40_000_000;

/// One end of a TCP connection (`struct tcp_sock`, reduced to what the scheduler sees).
#[derive(Clone, Debug)]
pub struct TcpSock {
    pub peer: TcpSockId,
    /// The local port (a connecting end's is its ephemeral port: the SO_REUSEPORT hash key).
    pub port: u32,
    /// Bytes received and not yet read (`sk_receive_queue`).
    pub rcv_queued: u64,
    /// Segments on the receive queue (for counters only).
    pub rcv_segs: u64,
    /// The task inside a locked section of a socket call (`sock_owned_by_user`).
    pub owner: Option<TaskId>,
    /// Segments that arrived while the socket was owned (`sk_backlog`).
    pub backlog: VecDeque<TcpSeg>,
    /// Tasks sleeping in `lock_sock` for the owner's `release_sock` (`sk_lock.wq`,
    /// exclusive FIFO).
    pub lock_waiters: VecDeque<TaskId>,
    /// `sk_wq`: readers in `sk_wait_data`, writers in `sk_stream_wait_memory`, epoll links.
    pub wq: WaitQueue,
    /// Writers sleeping in `sk_stream_wait_memory` (also on `wq`).
    pub writers: Vec<TaskId>,
    pub nodelay: bool,
    /// This end was closed (`close()`).
    pub closed: bool,
    /// The peer's FIN arrived: a read of an empty queue returns 0.
    pub fin_rcvd: bool,
    pub sndbuf: u32,
    pub rcvbuf: u32,
    /// Bytes sent and not yet acknowledged by the peer (in flight on the write queue).
    pub unacked: u64,
    /// Bytes queued by `send()` that Nagle holds back (not yet transmitted).
    pub unsent: u64,
    /// Bytes received that this end has not acknowledged yet.
    pub rcv_unacked: u64,
    /// This end has transmitted data: stands for `inet_csk_in_pingpong_mode()` (an
    /// interactive connection: the receive path does not ACK a drained queue at once).
    pub sent_data: bool,
    /// The delayed-ACK timer is armed (`ICSK_ACK_TIMER`), with the generation of its event.
    pub delack_armed: bool,
    /// When the armed delayed ACK expires and on which CPU (`icsk_ack.timeout`).
    pub delack_at: u64,
    pub delack_cpu: u32,
    /// An `Ev::Delack` is queued, at or before `delack_at`. Re-arming only moves the
    /// deadline (`sk_reset_timer` of a pending timer is a `mod_timer`): the queued event
    /// re-queues itself for the rest when it comes early, so a request/response connection
    /// that re-arms and cancels on every exchange queues one event per 40 ms, not one per
    /// exchange.
    pub delack_queued: bool,
    pub bytes_sent: u64,
    pub bytes_rcvd: u64,
}

impl TcpSock {
    fn new(peer: TcpSockId, port: u32, nodelay: bool) -> TcpSock {
        TcpSock {
            peer,
            port,
            rcv_queued: 0,
            rcv_segs: 0,
            owner: None,
            backlog: VecDeque::new(),
            lock_waiters: VecDeque::new(),
            wq: WaitQueue::default(),
            writers: Vec::new(),
            nodelay,
            closed: false,
            fin_rcvd: false,
            sndbuf: TCP_SNDBUF_ESTABLISHED,
            rcvbuf: TCP_RMEM_DEFAULT,
            unacked: 0,
            unsent: 0,
            rcv_unacked: 0,
            sent_data: false,
            delack_armed: false,
            delack_at: 0,
            delack_cpu: 0,
            delack_queued: false,
            bytes_sent: 0,
            bytes_rcvd: 0,
        }
    }

    /// Readable for epoll/poll: data queued, or the peer closed (`tcp_poll`).
    pub fn readable(&self) -> bool {
        self.rcv_queued > 0 || self.fin_rcvd
    }

    /// kernel: stream.c __sk_stream_is_writeable() — a third of the send buffer free.
    pub fn writeable(&self) -> bool {
        let used = self.unacked + self.unsent;
        used * 3 <= (self.sndbuf as u64) * 2
    }
}

/// A listening socket: its accept queue and wait queue (accept waiters and epoll links).
#[derive(Clone, Debug)]
pub struct Listener {
    /// The `listen()` backlog; the queue holds backlog + 1 (`sk_acceptq_is_full` uses `>`).
    pub backlog: u32,
    /// Established server ends not yet accepted.
    pub accept_q: VecDeque<TcpSockId>,
    pub wq: WaitQueue,
    /// SO_REUSEPORT group this listener belongs to.
    pub group: Option<u32>,
    /// Connections dropped because the accept queue was full (ListenOverflows).
    pub overflows: u64,
}

impl Listener {
    /// kernel: sock.h sk_acceptq_is_full().
    pub fn is_full(&self) -> bool {
        self.accept_q.len() as u32 > self.backlog
    }
}

/// A UDP socket: the receive queue with its `sk_rmem_alloc` accounting by truesize.
#[derive(Clone, Debug)]
pub struct UdpSock {
    /// Datagrams queued: (payload bytes, truesize).
    pub queue: VecDeque<(u32, u32)>,
    /// `sk_rmem_alloc`: Σ truesize of the queued datagrams.
    pub rmem: u64,
    pub rcvbuf: u32,
    /// Readers (exclusive, FIFO) and epoll links.
    pub wq: WaitQueue,
    /// Datagrams dropped at this socket (`Udp: RcvbufErrors`).
    pub drops: u64,
    pub received: u64,
}

impl UdpSock {
    /// A datagram's skb truesize on loopback (netbench.md §1.12.8): `sizeof(struct
    /// sk_buff)` aligned (256) plus the head buffer, which is the small-head cache object
    /// (576 B) while payload, headers (44 B: link-layer reserve, IP and UDP) and
    /// `skb_shared_info` (320 B) fit in it, else the kmalloc size class (a power of two) of
    /// the 64-byte-aligned sum. 832 B up to 64 B and 2304 B for 1 KiB are \[M1\]'s
    /// measurements; other sizes follow this rule (unverified).
    pub fn truesize(n: u32) -> u32 {
        let data = (n as u64 + 44).div_ceil(64) * 64 + 320;
        let head = if data <= 576 {
            576
        } else {
            data.next_power_of_two()
        };
        (256 + head).min(u32::MAX as u64) as u32
    }

    /// kernel: udp.c __udp_enqueue_schedule_skb() admission test. `refined` (9aaec660b5be,
    /// v6.18): drop if `rmem + truesize > rcvbuf` unless the queue is empty; before it (v6.12
    /// and earlier, and 5a465a0da13e of v6.15 keeps this result): drop only if `rmem >
    /// rcvbuf` before charging, so one datagram may overshoot.
    pub fn admits(&self, truesize: u32, refined: bool) -> bool {
        let rcvbuf = self.rcvbuf as u64;
        if refined {
            self.rmem + truesize as u64 <= rcvbuf || self.rmem == 0
        } else {
            self.rmem <= rcvbuf
        }
    }

    pub fn readable(&self) -> bool {
        !self.queue.is_empty()
    }
}

/// Network counters of a run (the run's stats).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetStats {
    /// TCP segments and UDP datagrams processed by the receive path (direct or backlog).
    pub segments_delivered: u64,
    /// TCP segments that found their socket owned and went to the socket backlog.
    pub backlog_deliveries: u64,
    /// Tasks woken from the NET_RX softirq (sender's context).
    pub softirq_wakeups: u64,
    /// UDP datagrams dropped at a full receive queue.
    pub udp_drops: u64,
    /// `epoll_wait` sleepers woken.
    pub epoll_wakeups: u64,
    /// Delayed-ACK timers that expired and sent a pure ACK.
    pub delack_expiries: u64,
    /// Pure ACKs sent (delayed-ACK expiry or a receive that drained its queue).
    pub pure_acks: u64,
    /// Longest per-CPU input queue seen (packets): never above 2 on loopback here, which is
    /// why the NET_RX budget and the deferral to ksoftirqd are not modelled.
    pub max_input_queue: u64,
    /// Connections set up / SYNs dropped on a full accept queue.
    pub connects: u64,
    pub syn_drops: u64,
}

/// All network objects of one simulation.
#[derive(Clone, Debug, Default)]
pub struct Net {
    pub tcp: Vec<TcpSock>,
    pub listeners: Vec<Listener>,
    pub udp: Vec<UdpSock>,
    /// SO_REUSEPORT groups: group number → listeners in creation order.
    pub reuseport: BTreeMap<u32, Vec<ListenId>>,
    /// Epoll links of pipes and AF_UNIX sockets (whose own queues are in ipc.rs).
    pub ipc_links: BTreeMap<NetFd, WaitQueue>,
    pub next_port: u32,
    pub stats: NetStats,
}

/// The first ephemeral port (`ip_local_port_range` starts at 32768).
const FIRST_PORT: u32 = 32_768;

impl Net {
    /// A connected pair of TCP ends (client, server).
    pub fn new_pair(&mut self, nodelay: bool) -> (TcpSockId, TcpSockId) {
        let port = self.alloc_port();
        self.new_pair_port(port, nodelay, nodelay)
    }

    /// A connected pair whose client end has local port `port`.
    pub fn new_pair_port(
        &mut self,
        port: u32,
        client_nodelay: bool,
        server_nodelay: bool,
    ) -> (TcpSockId, TcpSockId) {
        let a = TcpSockId::new(self.tcp.len());
        let b = TcpSockId::new(self.tcp.len() + 1);
        self.tcp.push(TcpSock::new(b, port, client_nodelay));
        self.tcp.push(TcpSock::new(a, 0, server_nodelay));
        (a, b)
    }

    pub fn alloc_port(&mut self) -> u32 {
        if self.next_port < FIRST_PORT {
            self.next_port = FIRST_PORT;
        }
        let p = self.next_port;
        self.next_port += 1;
        p
    }

    pub fn new_listener(&mut self, backlog: u32, group: Option<u32>) -> ListenId {
        let id = ListenId::new(self.listeners.len());
        self.listeners.push(Listener {
            backlog,
            accept_q: VecDeque::new(),
            wq: WaitQueue::default(),
            group,
            overflows: 0,
        });
        if let Some(g) = group {
            self.reuseport.entry(g).or_default().push(id);
        }
        id
    }

    pub fn new_udp(&mut self) -> UdpSockId {
        self.udp.push(UdpSock {
            queue: VecDeque::new(),
            rmem: 0,
            rcvbuf: UDP_RMEM_DEFAULT,
            wq: WaitQueue::default(),
            drops: 0,
            received: 0,
        });
        UdpSockId::new(self.udp.len() - 1)
    }

    /// The listener a SYN to `l` from `port` goes to: in a SO_REUSEPORT group the one chosen
    /// by the flow hash (`reuseport_select_sock` → `reciprocal_scale(hash, n)`; modelled as
    /// `hash(port) mod n`, netbench.md §1.14).
    pub fn reuseport_select(&self, l: ListenId, port: u32) -> ListenId {
        let Some(g) = self.listeners[l.index()].group else {
            return l;
        };
        let members = &self.reuseport[&g];
        let h = hash32(port);
        members[((h as u64 * members.len() as u64) >> 32) as usize]
    }
}

/// A deterministic 32-bit hash (netbench.md §0.1 `hash(x)`): the murmur3 finaliser.
pub fn hash32(x: u32) -> u32 {
    let mut h = x;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::tests::script;
    use crate::net::{EpollOp, NetFd};
    use crate::presets::{KernelConfig, PreemptModel};
    use crate::sched::{Policy, WF_SYNC, WF_TTWU};
    use crate::sim::MachineDesc;
    use crate::sys::Procfs;
    use crate::syscalls::{Op, SysResult, TaskAttrs};
    use crate::Kernel;
    use schedlab_engine::Nanos;
    use schedlab_platform::cost::CostModel;
    use schedlab_platform::cpumask::CpuMask;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// netbench.md §1.12.8: 832 B up to 64 B of payload, ≈ 2304 B for 1 KiB.
    #[test]
    fn udp_truesize_matches_the_measured_sizes() {
        assert_eq!(UdpSock::truesize(1), 832);
        assert_eq!(UdpSock::truesize(64), 832);
        assert_eq!(UdpSock::truesize(1024), 2304);
    }

    /// §1.14: `sk_acceptq_is_full` uses `>`: a backlog of 20 holds 21 connections.
    #[test]
    fn accept_queue_holds_backlog_plus_one() {
        let mut n = Net::default();
        let l = n.new_listener(20, None);
        for _ in 0..21 {
            assert!(!n.listeners[l.index()].is_full());
            let (_, s) = n.new_pair(false);
            n.listeners[l.index()].accept_q.push_back(s);
        }
        assert!(n.listeners[l.index()].is_full());
    }

    #[test]
    fn reuseport_spreads_ports_over_the_group() {
        let mut n = Net::default();
        let ls: Vec<ListenId> = (0..4).map(|_| n.new_listener(8, Some(1))).collect();
        let mut hit = [0u32; 4];
        for port in 32_768..33_768 {
            let l = n.reuseport_select(ls[0], port);
            hit[l.index()] += 1;
            // the same port always picks the same listener
            assert_eq!(n.reuseport_select(ls[3], port), l);
        }
        assert!(hit.iter().all(|&h| h > 150), "{hit:?}");
    }

    /// The x86 server column of Table 1.11-D and the §1.11 values the vectors of
    /// netbench.md §16.6 use; every other cost is 0 (an ideal machine), jitter off.
    fn x86(c: &mut CostModel) {
        c.c_tcp_send = Nanos(2_000);
        c.c_net_rx_tcp = Nanos(1_400);
        c.c_net_rx_ip = Nanos(400);
        c.c_tcp_rcv = Nanos(1_000);
        c.c_tcp_recv = Nanos(750);
        c.c_sk_wait = Nanos(300);
        c.c_udp_send = Nanos(1_500);
        c.c_net_rx_udp = Nanos(600);
        c.c_udp_recv = Nanos(650);
        c.c_tcp_ack = Nanos(2_200);
        c.c_epoll_wait = Nanos(450);
        c.c_epoll_event = Nanos(40);
        c.c_ep_poll_callback = Nanos(150);
        c.c_epoll_ctl = Nanos(600);
        c.c_ttwu = Nanos(350);
        c.c_ipi_send = Nanos(300);
        c.lat_ipi = Nanos(1_500);
        c.c_ctxsw_process = Nanos(1_300);
        c.c_copy_per_KB = Nanos(60);
    }

    /// `W_np` = `W_ns` (netbench.md §16.6).
    const W: u64 = 50;

    fn net_kernel(version: &str, ncpus: usize, preempt: PreemptModel) -> Kernel {
        let cfg = KernelConfig::parse(&format!("{version} NO_SIM_JITTER")).unwrap();
        let mut m = MachineDesc::ideal(ncpus, 1000, preempt);
        for c in &mut m.costs {
            x86(c);
        }
        let mut k = Kernel::new(cfg, m, 1).unwrap();
        k.strict = true;
        k.check_invariants = true;
        k
    }

    fn spawn(
        k: &mut Kernel,
        name: &str,
        cpu: usize,
        policy: Policy,
        prog: Box<dyn crate::Program>,
    ) -> TaskId {
        let attrs = TaskAttrs {
            comm: Some(name.to_string()),
            cpus: Some(CpuMask::single(cpu)),
            policy: Some(policy),
            rt_priority: if policy == Policy::Fifo {
                Some(10)
            } else {
                None
            },
            ..Default::default()
        };
        let t = k.create_task(prog, &attrs, None, false);
        k.start_task(t);
        t
    }

    /// One sample per transaction, taken by the client when its receive has returned.
    #[derive(Clone, Copy, Debug, Default)]
    struct Sample {
        now: u64,
        /// The server's sum_exec_runtime: it is blocked now, so this is settled.
        server_rt: u64,
        server_vol: u64,
        client_vol: u64,
        client_invol: u64,
        softirq_wakeups: u64,
        backlog: u64,
    }
    type Samples = Rc<RefCell<Vec<Sample>>>;

    fn sample(cx: &crate::syscalls::Ctx<'_>, server: TaskId) -> Sample {
        let s = cx.k.task_stat(server);
        let c = cx.k.task_stat(cx.task());
        Sample {
            now: cx.now(),
            server_rt: s.sum_exec_runtime,
            server_vol: s.nr_voluntary_switches,
            client_vol: c.nr_voluntary_switches,
            client_invol: c.nr_involuntary_switches,
            softirq_wakeups: cx.k.net.stats.softirq_wakeups,
            backlog: cx.k.net.stats.backlog_deliveries,
        }
    }

    /// netperf's RR loop at the kernel level: W, send 1 byte, receive 1 byte (TCP) —
    /// `n` transactions, then exit.
    fn tcp_client(
        sock: TcpSockId,
        n: u32,
        server: Rc<RefCell<Option<TaskId>>>,
        out: Samples,
    ) -> Box<dyn crate::Program> {
        script(move |i, cx, last| match i % 3 {
            0 => {
                if i > 0 {
                    assert_eq!(last, SysResult::Bytes(1));
                    let srv = server.borrow().unwrap();
                    out.borrow_mut().push(sample(cx, srv));
                }
                (i / 3 < n).then_some(Op::Run(W))
            }
            1 => Some(Op::TcpSend { sock, bytes: 1 }),
            _ => Some(Op::TcpRecv {
                sock,
                bytes: 1,
                flags: RecvFlags::default(),
            }),
        })
    }

    /// netserver's loop: receive 1 byte, W, send 1 byte, forever.
    fn tcp_server(sock: TcpSockId) -> Box<dyn crate::Program> {
        script(move |i, _cx, _last| {
            Some(match i % 3 {
                0 => Op::TcpRecv {
                    sock,
                    bytes: 1,
                    flags: RecvFlags::default(),
                },
                1 => Op::Run(W),
                _ => Op::TcpSend { sock, bytes: 1 },
            })
        })
    }

    struct RrRun {
        k: Kernel,
        client: TaskId,
        server: TaskId,
        samples: Vec<Sample>,
    }

    /// A TCP_RR pair: server on `srv_cpu`, client on CPU 0, `n` transactions.
    fn tcp_rr(k: Kernel, srv_cpu: usize, cp: Policy, sp: Policy, n: u32) -> RrRun {
        let mut k = k;
        k.ttwu_log = Some(Vec::new());
        let (c, s) = k.net.new_pair(false);
        let out: Samples = Rc::default();
        let srv: Rc<RefCell<Option<TaskId>>> = Rc::default();
        let server = spawn(&mut k, "netserver", srv_cpu, sp, tcp_server(s));
        *srv.borrow_mut() = Some(server);
        let client = spawn(&mut k, "netperf", 0, cp, tcp_client(c, n, srv, out.clone()));
        k.run_until(100_000_000);
        assert!(k.task_stat(client).exited);
        let samples = out.borrow().clone();
        assert_eq!(samples.len(), n as usize);
        RrRun {
            k,
            client,
            server,
            samples,
        }
    }

    /// Per transaction over samples `a..b` (steady state: the first transactions start
    /// from the set-up): the period, the server's CPU time, and the counters' growth
    /// (server voluntary, client voluntary, client involuntary switches, softirq wake-ups,
    /// backlog deliveries), each exactly divisible or the test fails.
    fn per_tx(r: &RrRun, a: usize, b: usize) -> (u64, u64, [u64; 5]) {
        let (x, y) = (r.samples[a], r.samples[b]);
        let n = (b - a) as u64;
        let d = |u: u64, v: u64| {
            assert_eq!((v - u) % n, 0, "{u} -> {v} over {n}");
            (v - u) / n
        };
        (
            d(x.now, y.now),
            d(x.server_rt, y.server_rt),
            [
                d(x.server_vol, y.server_vol),
                d(x.client_vol, y.client_vol),
                d(x.client_invol, y.client_invol),
                d(x.softirq_wakeups, y.softirq_wakeups),
                d(x.backlog, y.backlog),
            ],
        )
    }

    /// lock_sock() on a socket another task owns (`__lock_sock`): the caller sleeps
    /// uninterruptibly until the owner's release_sock() wakes it (`wake_up`: WF_TTWU only,
    /// task context, waker = the owner). One CPU, full preemption: A sends on S; the wake-up
    /// of R (SCHED_FIFO, blocked in recv on S's peer) in A's softirq preempts A at
    /// local_bh_enable while A still owns S; R reads, then sends on S itself and must wait
    /// for A, whose release_sock hands the socket over.
    #[test]
    fn lock_sock_waits_for_the_owner() {
        let mut k = net_kernel("v6.18", 1, PreemptModel::Full);
        k.ttwu_log = Some(Vec::new());
        let (s, p) = k.net.new_pair(true);
        let a = spawn(
            &mut k,
            "A",
            0,
            Policy::Normal,
            script(move |i, _cx, _| (i == 0).then_some(Op::TcpSend { sock: s, bytes: 1 })),
        );
        let r = spawn(
            &mut k,
            "R",
            0,
            Policy::Fifo,
            script(move |i, _cx, _| match i {
                0 => Some(Op::TcpRecv {
                    sock: p,
                    bytes: 1,
                    flags: RecvFlags::default(),
                }),
                1 => Some(Op::TcpSend { sock: s, bytes: 1 }),
                _ => None,
            }),
        );
        k.run_until(10_000_000);
        assert!(k.task_stat(a).exited && k.task_stat(r).exited);
        // both bytes went out on S and arrived at P
        assert_eq!(k.net.tcp[s.index()].bytes_sent, 2);
        assert_eq!(k.net.tcp[p.index()].bytes_rcvd, 2);
        assert!(k.net.tcp[s.index()].owner.is_none());
        assert!(k.net.tcp[s.index()].lock_waiters.is_empty());
        // R was woken twice: by A's data (softirq, WF_SYNC) and by A's release_sock
        // (task context, no WF_SYNC)
        let log: Vec<_> = k
            .ttwu_log
            .as_ref()
            .unwrap()
            .iter()
            .filter(|w| w.wakee == r)
            .map(|w| (w.waker, w.wake_flags, w.in_task))
            .collect();
        assert_eq!(
            log,
            vec![(a, WF_TTWU | WF_SYNC, false), (a, WF_TTWU, true)],
            "{log:?}"
        );
    }

    /// netbench.md §16.6 N1: TCP_RR on one CPU, both SCHED_BATCH (no wake-up preemption):
    /// each side W 0.05 + send 2.0 + receive processing 1.4 + wake-up 0.35 + blocking
    /// receive 0.75 + 0.30 + switch-in 1.3 = 6.15 µs; per transaction 12.30 µs; 2 voluntary
    /// switches and 2 WF_SYNC wake-ups from softirq per transaction. Every cost but these is
    /// 0 (ticks included), so the period is exact: no tolerance.
    #[test]
    fn n1_tcp_rr_one_cpu_batch_is_12_30_us() {
        let n = 1000;
        let r = tcp_rr(
            net_kernel("v6.18", 1, PreemptModel::None),
            0,
            Policy::Batch,
            Policy::Batch,
            n,
        );
        let (period, server_cpu, counts) = per_tx(&r, 100, 900);
        assert_eq!(period, 12_300);
        assert_eq!(server_cpu, 6_150);
        // [server voluntary, client voluntary, client involuntary, softirq wake-ups, backlog]
        assert_eq!(counts, [1, 1, 0, 2, 0]);
        // every wake-up of the run was a sync one from the peer's softirq
        let ts = |t: TaskId| &r.k.tasks[t.index()].stats;
        assert_eq!(ts(r.server).nr_wakeups_sync, n as u64);
        assert_eq!(ts(r.client).nr_wakeups_sync, n as u64);
        assert_eq!(r.k.net.stats.softirq_wakeups, 2 * n as u64);
        assert_eq!(r.k.net.stats.segments_delivered, 2 * n as u64);
        // netbench.md §1.15 row 1: waker = the sender (current), from softirq, WF_SYNC
        let log = r.k.ttwu_log.as_ref().unwrap();
        let net: Vec<_> = log
            .iter()
            .filter(|w| [r.client, r.server].contains(&w.wakee))
            .collect();
        assert_eq!(net.len(), 2 * n as usize);
        for w in net {
            let sender = if w.wakee == r.client {
                r.server
            } else {
                r.client
            };
            assert_eq!(
                (w.waker, w.wake_flags, w.in_task),
                (sender, WF_TTWU | WF_SYNC, false)
            );
        }
        // a reply always comes back within 40 ms: only the client's ACK of the last reply,
        // never answered, fires (40 ms after the end)
        assert_eq!(r.k.net.stats.delack_expiries, 1);
        assert_eq!(r.k.net.stats.backlog_deliveries, 0);
        assert_eq!(r.k.net.stats.max_input_queue, 1);
    }

    /// N1b: preemption none, every server wake-up preempts (errata 2; forced here by making
    /// netserver SCHED_FIFO, which preempts the fair client on every wake-up without
    /// changing a cost). Client 0.05 + 2.0 + 1.4 + 0.35 + 0.75 + 1.3 = 5.85, server
    /// 0.75 + 0.30 + 0.05 + 2.0 + 1.4 + 1.3 = 5.80: 11.65 µs, 1 wake-up, 1 involuntary and 1
    /// voluntary switch per transaction.
    #[test]
    fn n1b_tcp_rr_wakeup_preemption_at_return_from_send_is_11_65_us() {
        let n = 1000;
        let r = tcp_rr(
            net_kernel("v6.18", 1, PreemptModel::None),
            0,
            Policy::Normal,
            Policy::Fifo,
            n,
        );
        let (period, server_cpu, counts) = per_tx(&r, 100, 900);
        assert_eq!(period, 11_650);
        // The server's CPU work is 5.80 µs; its sum_exec_runtime also gets the client's
        // 0.35 µs c_ttwu, spent after the enqueue's rq clock update: the preempting wake-up
        // skips the clock update at the switch (core.c rq_clock_skip_update()), so that
        // time is charged to the next task.
        assert_eq!(server_cpu, 5_800 + 350);
        assert_eq!(counts, [1, 0, 1, 1, 0]);
    }

    /// N1c: as N1b under full preemption: the client is preempted at the end of the
    /// softirq inside `send`, still owning its socket, so the reply takes the backlog path —
    /// the server pays `c_net_rx_ip` 0.4 instead of 1.4, the client `c_tcp_rcv` 1.0 at its
    /// `release_sock`: 11.65 µs, server CPU 4.80, client 6.85 µs per transaction.
    #[test]
    fn n1c_full_preemption_takes_the_backlog_path() {
        let n = 1000;
        let r = tcp_rr(
            net_kernel("v6.18", 1, PreemptModel::Full),
            0,
            Policy::Normal,
            Policy::Fifo,
            n,
        );
        let (period, server_cpu, counts) = per_tx(&r, 100, 900);
        assert_eq!(period, 11_650);
        // server work 4.80 + the client's c_ttwu charged to it (rq_clock_skip_update, see
        // N1b); the client's work is the rest, 6.85 µs
        assert_eq!(server_cpu, 4_800 + 350);
        assert_eq!(period - (server_cpu - 350), 6_850);
        // one backlog delivery per transaction, no voluntary switch of the client
        assert_eq!(counts, [1, 0, 1, 1, 1]);
    }

    /// N2: two CPUs, netperf on CPU 0, netserver on CPU 1, SCHED_OTHER, a non-polling C1
    /// with a 2 µs exit: half a transaction is 0.05 + 2.0 + 1.4 + 0.35 + 0.30 on the
    /// waker's side, 1.5 + 2.0 for the IPI and the C1 exit, then 1.3 + 0.75 + 0.30 on the
    /// wakee's side = 9.95 µs; 19.90 µs per transaction, each CPU busy 6.45 µs.
    #[test]
    fn n2_tcp_rr_two_cpus_is_19_90_us() {
        let mut k = net_kernel("v6.18", 2, PreemptModel::None);
        k.machine.idle_exit_ns = vec![2_000; 2];
        k.machine.idle_polling = vec![false; 2];
        let n = 1000;
        let r = tcp_rr(k, 1, Policy::Normal, Policy::Normal, n);
        let (period, server_cpu, counts) = per_tx(&r, 100, 900);
        assert_eq!(period, 19_900);
        assert_eq!(server_cpu, 6_450);
        assert_eq!(counts, [1, 1, 0, 2, 0]);
    }

    /// N3: UDP_RR on one CPU, both SCHED_BATCH: side 0.05 + 1.5 + 0.6 + 0.35 + 0.65 + 0.30
    /// + 1.3 = 4.75 µs, 9.50 µs per transaction (exact, as N1).
    #[test]
    fn n3_udp_rr_one_cpu_is_9_50_us() {
        let mut k = net_kernel("v6.18", 1, PreemptModel::None);
        let cs = k.net.new_udp();
        let ss = k.net.new_udp();
        let out: Samples = Rc::default();
        let srv: Rc<RefCell<Option<TaskId>>> = Rc::default();
        let server = spawn(
            &mut k,
            "netserver",
            0,
            Policy::Batch,
            script(move |i, _cx, _| {
                Some(match i % 3 {
                    0 => Op::UdpRecv { sock: ss, bytes: 1 },
                    1 => Op::Run(W),
                    _ => Op::UdpSend {
                        sock: ss,
                        dst: cs,
                        bytes: 1,
                    },
                })
            }),
        );
        *srv.borrow_mut() = Some(server);
        let n = 1000;
        let o = out.clone();
        let client = spawn(
            &mut k,
            "netperf",
            0,
            Policy::Batch,
            script(move |i, cx, last| match i % 3 {
                0 => {
                    if i > 0 {
                        assert_eq!(last, SysResult::Bytes(1));
                        o.borrow_mut().push(sample(cx, srv.borrow().unwrap()));
                    }
                    (i / 3 < n).then_some(Op::Run(W))
                }
                1 => Some(Op::UdpSend {
                    sock: cs,
                    dst: ss,
                    bytes: 1,
                }),
                _ => Some(Op::UdpRecv { sock: cs, bytes: 1 }),
            }),
        );
        k.run_until(100_000_000);
        let samples = out.borrow().clone();
        let r = RrRun {
            k,
            client,
            server,
            samples,
        };
        let (period, server_cpu, counts) = per_tx(&r, 100, 900);
        assert_eq!(period, 9_500);
        assert_eq!(server_cpu, 4_750);
        assert_eq!(counts, [1, 1, 0, 2, 0]);
        assert_eq!(r.k.net.stats.udp_drops, 0);
    }

    /// netbench.md §1.12.8 (errata 11): an unread socket admits 256 datagrams of ≤ 64 B on
    /// v6.18 (256 × 832 = 212 992 = rcvbuf; 9aaec660b5be) and 257 on v6.12 (admitted while
    /// rmem ≤ rcvbuf before charging).
    #[test]
    fn udp_admission_is_256_on_v6_18_and_257_on_v6_12() {
        for (version, admitted) in [("v6.18", 256u64), ("v6.12", 257), ("v6.6", 257)] {
            let mut k = net_kernel(version, 1, PreemptModel::None);
            let a = k.net.new_udp();
            let b = k.net.new_udp();
            spawn(
                &mut k,
                "sender",
                0,
                Policy::Normal,
                script(move |i, _cx, _| {
                    (i < 300).then_some(Op::UdpSend {
                        sock: a,
                        dst: b,
                        bytes: 64,
                    })
                }),
            );
            k.run_until(10_000_000);
            let u = &k.net.udp[b.index()];
            assert_eq!(u.queue.len() as u64, admitted, "{version}");
            assert_eq!(u.drops, 300 - admitted, "{version}");
            assert_eq!(k.net.stats.udp_drops, 300 - admitted);
        }
    }

    /// A one-CPU kernel whose tasks (SCHED_BATCH: no wake-up preemption, so the waker runs
    /// on) log every wake-up.
    fn wake_kernel() -> Kernel {
        let mut k = net_kernel("v6.18", 1, PreemptModel::None);
        k.ttwu_log = Some(Vec::new());
        k
    }

    fn batch(k: &mut Kernel, name: &str, prog: Box<dyn crate::Program>) -> TaskId {
        spawn(k, name, 0, Policy::Batch, prog)
    }

    /// Runs `ops` in order, storing their results.
    fn ops_prog(ops: Vec<Op>, res: Rc<RefCell<Vec<SysResult>>>) -> Box<dyn crate::Program> {
        let mut ops: std::collections::VecDeque<Op> = ops.into();
        script(move |i, _cx, last| {
            if i > 0 {
                res.borrow_mut().push(last);
            }
            ops.pop_front()
        })
    }

    /// Starts a SCHED_BATCH task running `ops` and lets it run 1 ms (until it blocks), so
    /// that tasks block in the order they are staged.
    fn stage(
        k: &mut Kernel,
        name: &str,
        ops: Vec<Op>,
        res: &Rc<RefCell<Vec<SysResult>>>,
    ) -> TaskId {
        let t = batch(k, name, ops_prog(ops, res.clone()));
        let now = k.now;
        k.run_until(now + 1_000_000);
        t
    }

    /// Every wake-up of the run (set-up wake-ups of new tasks are not `try_to_wake_up`).
    fn wakes(k: &Kernel) -> Vec<(TaskId, TaskId, u32, bool)> {
        k.ttwu_log
            .as_ref()
            .unwrap()
            .iter()
            .map(|w| (w.waker, w.wakee, w.wake_flags, w.in_task))
            .collect()
    }

    fn res() -> Rc<RefCell<Vec<SysResult>>> {
        Rc::default()
    }

    /// §1.15: a datagram wakes one UDP reader — the first to block (exclusive, FIFO) —
    /// from the sender's softirq with WF_SYNC.
    #[test]
    fn udp_wakes_one_reader_fifo_sync_from_the_senders_softirq() {
        let mut k = wake_kernel();
        let u = k.net.new_udp();
        let src = k.net.new_udp();
        let (r1r, r2r) = (res(), res());
        let recv = Op::UdpRecv { sock: u, bytes: 64 };
        let r1 = stage(&mut k, "r1", vec![recv], &r1r);
        let recv = Op::UdpRecv { sock: u, bytes: 64 };
        let r2 = stage(&mut k, "r2", vec![recv], &r2r);
        let send = Op::UdpSend {
            sock: src,
            dst: u,
            bytes: 10,
        };
        let _s = stage(&mut k, "sender", vec![send], &res());
        k.run_until(5_000_000);
        assert_eq!(wakes(&k), vec![(_s, r1, WF_TTWU | WF_SYNC, false)]);
        let _ = r2;
        assert_eq!(*r1r.borrow(), vec![SysResult::Bytes(10)]);
        assert!(r2r.borrow().is_empty(), "r2 still sleeps");
    }

    /// §1.15: the handshake completion wakes one `accept` waiter, the first (exclusive,
    /// FIFO), from the connecting task's softirq with WF_SYNC.
    #[test]
    fn connect_wakes_one_acceptor_fifo_sync_from_the_connectors_softirq() {
        let mut k = wake_kernel();
        let l = k.net.new_listener(20, None);
        let (a1r, a2r, cr) = (res(), res(), res());
        let acc = || Op::Accept {
            listener: l,
            nonblock: false,
        };
        let a1 = stage(&mut k, "a1", vec![acc()], &a1r);
        let _a2 = stage(&mut k, "a2", vec![acc()], &a2r);
        let conn = Op::TcpConnect {
            listener: l,
            nodelay: true,
        };
        let c = stage(&mut k, "client", vec![conn], &cr);
        k.run_until(5_000_000);
        assert_eq!(wakes(&k), vec![(c, a1, WF_TTWU | WF_SYNC, false)]);
        let SysResult::Tcp(client_end) = cr.borrow()[0] else {
            panic!("{:?}", cr.borrow());
        };
        assert_eq!(
            a1r.borrow()[0],
            SysResult::Tcp(k.net.tcp[client_end.index()].peer)
        );
        assert!(a2r.borrow().is_empty());
        assert_eq!(k.net.stats.connects, 1);
    }

    /// §1.15: a FIN wakes a reader blocked on the peer with a non-sync wake-up from the
    /// closer's softirq; the read returns 0.
    #[test]
    fn close_wakes_the_peers_reader_without_wf_sync() {
        let mut k = wake_kernel();
        let (c, s) = k.net.new_pair(false);
        let rr = res();
        let recv = Op::TcpRecv {
            sock: s,
            bytes: 10,
            flags: RecvFlags::default(),
        };
        let r = stage(&mut k, "reader", vec![recv], &rr);
        let cl = stage(&mut k, "closer", vec![Op::TcpClose { sock: c }], &res());
        k.run_until(5_000_000);
        assert_eq!(wakes(&k), vec![(cl, r, WF_TTWU, false)]);
        assert_eq!(*rr.borrow(), vec![SysResult::Bytes(0)]);
    }

    /// §1.12.7/§1.15: an ACK that frees a third of the send buffer wakes the writer sleeping
    /// in `sk_stream_wait_memory` with WF_TTWU only, in the context that processed the ACK:
    /// here the reader's `recv`, which drained the queue of a bulk connection and ACKed it
    /// at once (`c_tcp_ack`, task context).
    #[test]
    fn an_ack_wakes_a_writer_blocked_on_the_send_buffer_without_wf_sync() {
        let mut k = wake_kernel();
        let (c, s) = k.net.new_pair(false);
        k.net.tcp[c.index()].sndbuf = TCP_WMEM_DEFAULT;
        let (wr, rr) = (res(), res());
        let w = stage(
            &mut k,
            "writer",
            vec![
                Op::TcpSend {
                    sock: c,
                    bytes: 16_384,
                },
                Op::TcpSend {
                    sock: c,
                    bytes: 100,
                },
            ],
            &wr,
        );
        let recv = |n| Op::TcpRecv {
            sock: s,
            bytes: n,
            flags: RecvFlags::default(),
        };
        let r = stage(&mut k, "reader", vec![recv(65_536), recv(65_536)], &rr);
        k.run_until(5_000_000);
        // the writer blocked on its second send (16 384 B unacknowledged = sndbuf)
        assert_eq!(k.task_stat(w).nr_voluntary_switches, 2); // send buffer, exit
        assert_eq!(wakes(&k)[0], (r, w, WF_TTWU, true));
        assert_eq!(
            *wr.borrow(),
            vec![SysResult::Bytes(16_384), SysResult::Bytes(100)]
        );
        assert_eq!(
            *rr.borrow(),
            vec![SysResult::Bytes(16_384), SysResult::Bytes(100)]
        );
        assert_eq!(k.net.stats.pure_acks, 2);
    }

    /// §1.13/§1.15: `epoll_wait` sleepers are woken most recent first (LIFO); a socket
    /// wake-up passes WF_SYNC through `ep_poll_callback` (waker = the sender, softirq); a
    /// harvest that leaves the level-triggered item on the ready list wakes one more sleeper
    /// from the harvesting task, WF_TTWU only.
    #[test]
    fn epoll_waiters_are_lifo_and_the_requeue_wakes_the_next_without_sync() {
        let mut k = wake_kernel();
        let (c, s) = k.net.new_pair(false);
        let e = k.epoll.new_epoll();
        let (ar, br, cr) = (res(), res(), res());
        let wait = || Op::EpollWait { ep: e, max: 1 };
        let add = Op::EpollCtl {
            ep: e,
            op: EpollOp::Add,
            fd: NetFd::Tcp(s),
            events: EPOLLIN,
        };
        let a = stage(&mut k, "a", vec![add, wait()], &ar);
        let b = stage(&mut k, "b", vec![wait()], &br);
        let cc = stage(&mut k, "c", vec![wait()], &cr);
        let send = Op::TcpSend { sock: c, bytes: 1 };
        let sender = stage(&mut k, "sender", vec![send], &res());
        k.run_until(5_000_000);
        assert_eq!(
            wakes(&k),
            vec![
                (sender, cc, WF_TTWU | WF_SYNC, false),
                (cc, b, WF_TTWU, true),
                (b, a, WF_TTWU, true),
            ]
        );
        for r in [&br, &cr] {
            assert_eq!(*r.borrow(), vec![SysResult::Ready(1)]);
        }
        assert_eq!(*ar.borrow(), vec![SysResult::None, SysResult::Ready(1)]);
        assert_eq!(k.net.stats.epoll_wakeups, 3);
    }

    /// §1.13: with EPOLLEXCLUSIVE links on two instances, a socket wake-up stops at the
    /// first instance (FIFO over the links) that has a sleeper: exactly one waiter wakes, and
    /// the other instance's ready list stays empty.
    #[test]
    fn epoll_exclusive_wakes_exactly_one_waiter() {
        let mut k = wake_kernel();
        let (c, s) = k.net.new_pair(false);
        let e1 = k.epoll.new_epoll();
        let e2 = k.epoll.new_epoll();
        let add = |ep| Op::EpollCtl {
            ep,
            op: EpollOp::Add,
            fd: NetFd::Tcp(s),
            events: EPOLLIN | EPOLLEXCLUSIVE,
        };
        let (ar, br) = (res(), res());
        let wait = |ep| Op::EpollWait { ep, max: 8 };
        let a = stage(&mut k, "a", vec![add(e1), wait(e1)], &ar);
        let _b = stage(&mut k, "b", vec![add(e2), wait(e2)], &br);
        let send = Op::TcpSend { sock: c, bytes: 1 };
        let sender = stage(&mut k, "sender", vec![send], &res());
        k.run_until(5_000_000);
        assert_eq!(wakes(&k), vec![(sender, a, WF_TTWU | WF_SYNC, false)]);
        assert_eq!(ar.borrow()[1], SysResult::Ready(1));
        assert_eq!(br.borrow().len(), 1, "b still sleeps");
        assert!(k.epoll.eps[e2.index()].rdllist.is_empty());
        assert_eq!(k.net.stats.epoll_wakeups, 1);
    }

    /// §1.13/§1.15: `eventfd_write` wakes an epoll sleeper and a blocked reader with a
    /// non-sync wake-up from the writer's task context; a pipe registered with epoll wakes
    /// its sleeper with WF_SYNC (the pipe's own wake-up).
    #[test]
    fn eventfd_wakes_without_sync_and_a_pipe_through_epoll_with_sync() {
        let mut k = wake_kernel();
        let efd = k.epoll.new_eventfd();
        let efd2 = k.epoll.new_eventfd();
        let e = k.epoll.new_epoll();
        let p = k.ipc.new_pipe(false, 16, 4096);
        let e2 = k.epoll.new_epoll();
        let (ar, rr, pr) = (res(), res(), res());
        let add = Op::EpollCtl {
            ep: e,
            op: EpollOp::Add,
            fd: NetFd::Eventfd(efd),
            events: EPOLLIN,
        };
        let a = stage(
            &mut k,
            "poller",
            vec![add, Op::EpollWait { ep: e, max: 4 }],
            &ar,
        );
        let r = stage(&mut k, "reader", vec![Op::EventfdRead { fd: efd2 }], &rr);
        let addp = Op::EpollCtl {
            ep: e2,
            op: EpollOp::Add,
            fd: NetFd::Pipe(p),
            events: EPOLLIN,
        };
        let pp = stage(
            &mut k,
            "pipe-poller",
            vec![addp, Op::EpollWait { ep: e2, max: 4 }],
            &pr,
        );
        let w = stage(
            &mut k,
            "writer",
            vec![
                Op::EventfdWrite { fd: efd },
                Op::EventfdWrite { fd: efd2 },
                Op::PipeWrite { pipe: p, bytes: 8 },
            ],
            &res(),
        );
        k.run_until(5_000_000);
        let got = wakes(&k);
        assert_eq!(
            got,
            vec![
                (w, a, WF_TTWU, true),
                (w, r, WF_TTWU, true),
                (w, pp, WF_TTWU | WF_SYNC, true)
            ]
        );
        assert_eq!(ar.borrow()[1], SysResult::Ready(1));
        assert_eq!(*rr.borrow(), vec![SysResult::Bytes(8)]);
        assert_eq!(pr.borrow()[1], SysResult::Ready(1));
    }

    /// §1.12.7: a receiver that never sends back ACKs when its delayed-ACK timer expires,
    /// 40 ms after the data arrived (no wake-up); a reply within 40 ms cancels it (N1).
    #[test]
    fn the_delayed_ack_fires_after_40_ms_without_a_reply() {
        let mut k = wake_kernel();
        let (c, s) = k.net.new_pair(true);
        // a sleeper keeps the run going (it stops when every task has exited)
        stage(&mut k, "sleeper", vec![Op::Sleep(1_000_000_000)], &res());
        let send = Op::TcpSend {
            sock: c,
            bytes: 100,
        };
        stage(&mut k, "writer", vec![send], &res());
        k.run_until(40_000_000);
        assert_eq!(k.net.stats.delack_expiries, 0);
        assert_eq!(k.net.tcp[c.index()].unacked, 100);
        k.run_until(60_000_000);
        assert_eq!(k.net.stats.delack_expiries, 1);
        assert_eq!(k.net.tcp[c.index()].unacked, 0);
        assert_eq!(k.net.tcp[s.index()].rcv_unacked, 0);
    }

    /// A delayed ACK re-armed after a cancel expires 40 ms after the last arming, once: the
    /// event queued by the first arming (due at ≈ 40 ms) finds the timer re-armed and waits
    /// for the new deadline (≈ 60 ms). The receiver gets 100 bytes at ≈ 0 (arms), replies
    /// (the piggy-backed ACK cancels), gets 100 more at 20 ms (arms again) and stays silent.
    #[test]
    fn a_rearmed_delayed_ack_expires_40_ms_after_the_last_arming() {
        let mut k = wake_kernel();
        let (c, s) = k.net.new_pair(true);
        let send = |sock, bytes| Op::TcpSend { sock, bytes };
        let recv = |sock, bytes| Op::TcpRecv {
            sock,
            bytes,
            flags: RecvFlags::default(),
        };
        stage(
            &mut k,
            "receiver",
            vec![
                recv(s, 100),
                send(s, 1),
                recv(s, 100),
                Op::Sleep(1_000_000_000),
            ],
            &res(),
        );
        stage(
            &mut k,
            "writer",
            vec![
                send(c, 100),
                recv(c, 1),
                Op::Sleep(20_000_000),
                send(c, 100),
            ],
            &res(),
        );
        k.run_until(59_000_000);
        assert_eq!(k.net.stats.delack_expiries, 0);
        assert_eq!(k.net.tcp[s.index()].rcv_unacked, 100);
        // the second arming came with the writer's second send, 20 ms (+ the sleep's slack and
        // the exchange before it) after the start
        let at = k.net.tcp[s.index()].delack_at;
        assert!((60_000_000..62_000_000).contains(&at), "{at}");
        k.run_until(at - 1);
        assert_eq!(k.net.stats.delack_expiries, 0);
        k.run_until(at + 1_000);
        assert_eq!(k.net.stats.delack_expiries, 1);
        assert_eq!(k.net.tcp[s.index()].rcv_unacked, 0);
        assert_eq!(k.net.tcp[c.index()].unacked, 0);
        k.run_until(200_000_000);
        assert_eq!(k.net.stats.delack_expiries, 1);
    }

    /// §1.13/§1.14: a listener registered with epoll: the handshake's `sk_data_ready` reaches
    /// the epoll sleeper (WF_SYNC, the connecting task's softirq); a non-blocking accept then
    /// takes the connection and the next one finds the queue empty (`EAGAIN`).
    #[test]
    fn epoll_on_a_listener_then_nonblocking_accepts() {
        let mut k = wake_kernel();
        let l = k.net.new_listener(4, None);
        let e = k.epoll.new_epoll();
        let sr = res();
        let acc = || Op::Accept {
            listener: l,
            nonblock: true,
        };
        let add = Op::EpollCtl {
            ep: e,
            op: EpollOp::Add,
            fd: NetFd::Listen(l),
            events: EPOLLIN,
        };
        let srv = stage(
            &mut k,
            "server",
            vec![add, Op::EpollWait { ep: e, max: 8 }, acc(), acc()],
            &sr,
        );
        let conn = Op::TcpConnect {
            listener: l,
            nodelay: false,
        };
        let c = stage(&mut k, "client", vec![conn], &res());
        k.run_until(5_000_000);
        assert_eq!(wakes(&k), vec![(c, srv, WF_TTWU | WF_SYNC, false)]);
        let r = sr.borrow();
        assert_eq!(r[1], SysResult::Ready(1));
        assert!(matches!(r[2], SysResult::Tcp(_)));
        assert_eq!(r[3], SysResult::Again);
    }

    /// §1.14: with SO_REUSEPORT each worker has its own listener; a connection goes to the
    /// one its client port hashes to, and only that worker wakes.
    #[test]
    fn reuseport_wakes_only_the_chosen_workers_acceptor() {
        let mut k = wake_kernel();
        let ls: Vec<ListenId> = (0..3).map(|_| k.net.new_listener(8, Some(7))).collect();
        let workers: Vec<TaskId> = ls
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                let acc = Op::Accept {
                    listener: l,
                    nonblock: false,
                };
                stage(&mut k, &format!("w{i}"), vec![acc], &res())
            })
            .collect();
        // the next ephemeral port is the first one: 32 768
        let chosen = k.net.reuseport_select(ls[0], 32_768);
        let conn = Op::TcpConnect {
            listener: ls[0],
            nodelay: false,
        };
        let c = stage(&mut k, "client", vec![conn], &res());
        k.run_until(5_000_000);
        assert_eq!(
            wakes(&k),
            vec![(c, workers[chosen.index()], WF_TTWU | WF_SYNC, false)]
        );
    }

    /// A bulk TCP transfer of small sends without TCP_NODELAY on one CPU (the simplified
    /// stream model of §1.12.7, unverified as a whole): everything arrives, Nagle coalesces
    /// (fewer segments than sends), the drained receiver's ACKs release the held data and
    /// the sender never waits for send-buffer space.
    #[test]
    fn a_stream_of_small_sends_arrives_coalesced() {
        let mut k = net_kernel("v6.18", 1, PreemptModel::None);
        let (c, s) = k.net.new_pair(false);
        let sends = 2_000u32;
        let got = Rc::new(RefCell::new(0u64));
        let g = got.clone();
        spawn(
            &mut k,
            "netserver",
            0,
            Policy::Normal,
            script(move |_i, _cx, last| {
                if let SysResult::Bytes(n) = last {
                    *g.borrow_mut() += n as u64;
                }
                Some(Op::TcpRecv {
                    sock: s,
                    bytes: 65_536,
                    flags: RecvFlags::default(),
                })
            }),
        );
        let w = spawn(
            &mut k,
            "netperf",
            0,
            Policy::Normal,
            script(move |i, _cx, _| (i < sends).then_some(Op::TcpSend { sock: c, bytes: 64 })),
        );
        k.run_until(200_000_000);
        assert!(k.task_stat(w).exited);
        assert_eq!(*got.borrow(), 64 * sends as u64);
        let segs = k.net.stats.segments_delivered;
        assert!(segs < sends as u64, "{segs} segments for {sends} sends");
        assert_eq!(k.task_stat(w).nr_voluntary_switches, 1); // its exit only
        assert_eq!(
            k.net.tcp[c.index()].unacked + k.net.tcp[c.index()].unsent,
            0
        );
    }

    /// netbench.md §15.6 at the kernel level: one ReadX exchange of tbench, one CPU, both
    /// SCHED_BATCH: request 59 B, reply 4 155 B. Client W_line 1.5 + 2 × c_clock 0.02 +
    /// send 2.0 + 1.4 + 0.35 + blocking recv(4) 0.75 + 0.30 + recv(4 151, TRUNC: no copy)
    /// 0.75 = 7.09 µs; server 0.75 + 0.30 + recv(55) 0.75 + 0.05 + send(4 155) 2.0 + 0.06 ×
    /// 4 155 / 1024 (= 0.243, in ns rounded down) + 1.4 + 0.35 = 5.843 µs; two switches
    /// 2.6 µs: 15.533 µs per operation (exact, as N1).
    #[test]
    fn tbench_readx_exchange_is_15_533_us() {
        let mut k = net_kernel("v6.18", 1, PreemptModel::None);
        let (c, s) = k.net.new_pair(true);
        let out: Samples = Rc::default();
        let srv: Rc<RefCell<Option<TaskId>>> = Rc::default();
        let recv = |sock, bytes, trunc| Op::TcpRecv {
            sock,
            bytes,
            flags: RecvFlags {
                trunc,
                ..Default::default()
            },
        };
        let server = spawn(
            &mut k,
            "tbench_srv",
            0,
            Policy::Batch,
            script(move |i, _cx, _| {
                Some(match i % 4 {
                    0 => recv(s, 4, false),
                    1 => recv(s, 55, false),
                    2 => Op::Run(W),
                    _ => Op::TcpSend {
                        sock: s,
                        bytes: 4_155,
                    },
                })
            }),
        );
        *srv.borrow_mut() = Some(server);
        let o = out.clone();
        let n = 500;
        let client = spawn(
            &mut k,
            "tbench",
            0,
            Policy::Batch,
            script(move |i, cx, last| match i % 4 {
                0 => {
                    if i > 0 {
                        assert_eq!(last, SysResult::Bytes(4_151));
                        o.borrow_mut().push(sample(cx, srv.borrow().unwrap()));
                    }
                    (i / 4 < n).then_some(Op::Run(1_500 + 2 * 20))
                }
                1 => Some(Op::TcpSend { sock: c, bytes: 59 }),
                2 => Some(recv(c, 4, false)),
                _ => Some(recv(c, 4_151, true)),
            }),
        );
        k.run_until(100_000_000);
        let samples = out.borrow().clone();
        let r = RrRun {
            k,
            client,
            server,
            samples,
        };
        let (period, server_cpu, counts) = per_tx(&r, 100, 400);
        assert_eq!(period, 15_533);
        assert_eq!(server_cpu, 5_843 + 1_300);
        assert_eq!(counts, [1, 1, 0, 2, 0]);
    }

    /// §1.13: a ONESHOT item reports once, then stays quiet however much data comes, until
    /// `EPOLL_CTL_MOD` re-arms it — which, the socket being readable, queues it and wakes
    /// the sleeper (not sync, from the caller's task context).
    #[test]
    fn epoll_oneshot_reports_once_until_rearmed() {
        let mut k = wake_kernel();
        let (c, s) = k.net.new_pair(true);
        let e = k.epoll.new_epoll();
        let ctl = |op| Op::EpollCtl {
            ep: e,
            op,
            fd: NetFd::Tcp(s),
            events: EPOLLIN | EPOLLONESHOT,
        };
        let wait = || Op::EpollWait { ep: e, max: 4 };
        let ar = res();
        let a = stage(&mut k, "a", vec![ctl(EpollOp::Add), wait(), wait()], &ar);
        let send = || Op::TcpSend { sock: c, bytes: 1 };
        let s1 = stage(&mut k, "s1", vec![send()], &res());
        let _s2 = stage(&mut k, "s2", vec![send()], &res());
        assert_eq!(ar.borrow().len(), 2, "the second wait sleeps");
        let m = stage(&mut k, "m", vec![ctl(EpollOp::Mod)], &res());
        k.run_until(10_000_000);
        assert_eq!(
            wakes(&k),
            vec![(s1, a, WF_TTWU | WF_SYNC, false), (m, a, WF_TTWU, true)]
        );
        assert_eq!(
            *ar.borrow(),
            vec![SysResult::None, SysResult::Ready(1), SysResult::Ready(1)]
        );
    }

    /// §1.13: an edge-triggered item is not put back after a harvest: a second wait sleeps
    /// although the data is still unread, until new data arrives.
    #[test]
    fn epoll_edge_triggered_is_not_requeued() {
        let mut k = wake_kernel();
        let (c, s) = k.net.new_pair(true);
        let e = k.epoll.new_epoll();
        let add = Op::EpollCtl {
            ep: e,
            op: EpollOp::Add,
            fd: NetFd::Tcp(s),
            events: EPOLLIN | EPOLLET,
        };
        let wait = || Op::EpollWait { ep: e, max: 4 };
        let ar = res();
        let a = stage(&mut k, "a", vec![add, wait(), wait()], &ar);
        let send = || Op::TcpSend { sock: c, bytes: 1 };
        let s1 = stage(&mut k, "s1", vec![send()], &res());
        assert_eq!(
            ar.borrow().len(),
            2,
            "the second wait sleeps with data queued"
        );
        assert_eq!(k.net.tcp[s.index()].rcv_queued, 1);
        let s2 = stage(&mut k, "s2", vec![send()], &res());
        k.run_until(10_000_000);
        assert_eq!(
            wakes(&k),
            vec![
                (s1, a, WF_TTWU | WF_SYNC, false),
                (s2, a, WF_TTWU | WF_SYNC, false)
            ]
        );
        assert_eq!(ar.borrow().len(), 3);
    }

    /// `lock_sock` of a socket owned by another task sleeps until the owner's
    /// `release_sock` wakes it (WF_TTWU, task context). Full preemption, one CPU: the
    /// SCHED_FIFO sender B runs first (switch-in 1.3 µs) and sleeps 5 µs, to 6.3 µs; the fair
    /// sender A switches in (to 2.6 µs), runs 3 µs and is inside its send, owning the socket,
    /// from 5.6 to 7.6 µs; B preempts it at 6.3 µs and sleeps in `lock_sock`; A finishes and
    /// wakes B, whose send then completes.
    #[test]
    fn lock_sock_waits_for_the_owners_release() {
        let mut k = net_kernel("v6.18", 1, PreemptModel::Full);
        k.ttwu_log = Some(Vec::new());
        let (c, _s) = k.net.new_pair(true);
        let (ar, br) = (res(), res());
        let b = spawn(
            &mut k,
            "b",
            0,
            Policy::Fifo,
            ops_prog(
                vec![Op::Sleep(5_000), Op::TcpSend { sock: c, bytes: 1 }],
                br.clone(),
            ),
        );
        let a = spawn(
            &mut k,
            "a",
            0,
            Policy::Normal,
            ops_prog(
                vec![Op::Run(3_000), Op::TcpSend { sock: c, bytes: 1 }],
                ar.clone(),
            ),
        );
        k.run_until(1_000_000);
        // B's sleep ends in a timer interrupt while A runs (not in task context), then A's
        // release_sock wakes it from task context
        assert_eq!(
            wakes(&k),
            vec![(a, b, WF_TTWU, false), (a, b, WF_TTWU, true)]
        );
        assert_eq!(ar.borrow()[1], SysResult::Bytes(1));
        assert_eq!(br.borrow()[1], SysResult::Bytes(1));
        assert_eq!(k.task_stat(b).nr_voluntary_switches, 3); // sleep, lock_sock, exit
        assert_eq!(k.net.tcp[c.index()].owner, None);
    }

    /// Full preemption does not preempt inside the softirq: an interrupt during the NET_RX
    /// processing returns into it and the pending reschedule waits for `local_bh_enable`.
    /// One CPU: the SCHED_FIFO task R switches in (1.3 µs) and sleeps 4 µs, to 5.3 µs; the
    /// sender switches in (to 2.6 µs), pays `c_tcp_send` to 4.6 µs and the receive
    /// processing `c_net_rx_tcp` from 4.6 µs. R's timer interrupt at 5.3 µs costs the
    /// sender 0.35 µs (`c_ttwu` of the wake-up), so the softirq ends at 6.35 µs; R switches
    /// in then and runs at 7.65 µs (at 6.95 µs if the interrupt exit preempted).
    #[test]
    fn an_interrupt_does_not_preempt_inside_the_softirq() {
        let mut k = net_kernel("v6.18", 1, PreemptModel::Full);
        let (c, _s) = k.net.new_pair(true);
        let ran_at = Rc::new(RefCell::new(0u64));
        let r = ran_at.clone();
        spawn(
            &mut k,
            "rt",
            0,
            Policy::Fifo,
            script(move |i, cx, _| match i {
                0 => Some(Op::Sleep(4_000)),
                1 => {
                    *r.borrow_mut() = cx.now();
                    None
                }
                _ => None,
            }),
        );
        spawn(
            &mut k,
            "sender",
            0,
            Policy::Normal,
            ops_prog(vec![Op::TcpSend { sock: c, bytes: 1 }], res()),
        );
        k.run_until(1_000_000);
        assert_eq!(*ran_at.borrow(), 7_650);
    }

    /// An AF_UNIX stream socket registered with epoll: a send reaches the link with the
    /// socket's own sync wake-up (`sock_def_readable`, task context).
    #[test]
    fn an_af_unix_socket_wakes_its_epoll_sleeper_with_sync() {
        let mut k = wake_kernel();
        let u = k.ipc.new_unix_stream();
        let e = k.epoll.new_epoll();
        let ar = res();
        let add = Op::EpollCtl {
            ep: e,
            op: EpollOp::Add,
            fd: NetFd::Unix(u),
            events: EPOLLIN,
        };
        let a = stage(
            &mut k,
            "poller",
            vec![add, Op::EpollWait { ep: e, max: 4 }],
            &ar,
        );
        let send = Op::SockSend {
            sock: u,
            bytes: 100,
        };
        let w = stage(&mut k, "sender", vec![send], &res());
        k.run_until(5_000_000);
        assert_eq!(wakes(&k), vec![(w, a, WF_TTWU | WF_SYNC, true)]);
        assert_eq!(ar.borrow()[1], SysResult::Ready(1));
    }

    /// §1.12.5: data processed from the backlog at the `release_sock` of another thread that
    /// owned the socket wakes the reader from task context, `current` = that thread, still
    /// WF_SYNC. Full preemption, one CPU: the reader sleeps in `recv(S)`; thread T1 sends on
    /// S (owning it from 1.0026 ms: staged at 1 ms, after the SCHED_FIFO X's switch-in and
    /// its own); X's 3 µs sleep ends at 1.0043 ms inside T1's `c_tcp_send`, X preempts T1 and
    /// sends on the peer end: S is owned, so the byte waits on S's backlog; T1 resumes and
    /// its `release_sock` receives it and wakes the reader.
    #[test]
    fn a_backlog_processed_by_another_owner_wakes_from_task_context() {
        let mut k = net_kernel("v6.18", 1, PreemptModel::Full);
        k.ttwu_log = Some(Vec::new());
        let (p, s) = k.net.new_pair(true);
        let rr = res();
        let recv = Op::TcpRecv {
            sock: s,
            bytes: 10,
            flags: RecvFlags::default(),
        };
        let reader = stage(&mut k, "reader", vec![recv], &rr);
        let x = spawn(
            &mut k,
            "x",
            0,
            Policy::Fifo,
            ops_prog(
                vec![Op::Sleep(3_000), Op::TcpSend { sock: p, bytes: 1 }],
                res(),
            ),
        );
        let t1 = spawn(
            &mut k,
            "t1",
            0,
            Policy::Normal,
            ops_prog(vec![Op::TcpSend { sock: s, bytes: 1 }], res()),
        );
        k.run_until(5_000_000);
        assert_eq!(
            wakes(&k),
            vec![
                (t1, x, WF_TTWU, false),
                (t1, reader, WF_TTWU | WF_SYNC, true)
            ]
        );
        assert_eq!(k.net.stats.backlog_deliveries, 1);
        assert_eq!(*rr.borrow(), vec![SysResult::Bytes(1)]);
    }
}
