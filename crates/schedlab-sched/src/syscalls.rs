//! The syscall surface: how workloads talk to the simulated kernel (DESIGN.md §2).
//!
//! A task runs a [`Program`]. Whenever the task needs something to do, the kernel calls
//! [`Program::next`] with the result of the previous operation, and the program answers with
//! one [`Op`]: some user-space work, or a system call. The kernel charges the call's CPU cost
//! from the platform cost model, applies its effects (which may block the task or wake others,
//! with the wake flags the real kernel uses) and then asks again. Programs never see
//! scheduler state; user-space memory that the kernel must read (futex words) is reached
//! through [`Ctx`].

use crate::ipc::{FutexId, PipeId, SockId};
use crate::net::{EpollId, EpollOp, EventfdId, ListenId, NetFd, RecvFlags, TcpSockId, UdpSockId};
use crate::sched::{Policy, TaskId, TgId};
use crate::{Kernel, SimFeature};
use schedlab_engine::Rng;
use schedlab_platform::cpumask::CpuMask;

/// Attributes of a new task (inherited from the parent where `None`).
#[derive(Clone, Debug, Default)]
pub struct TaskAttrs {
    pub comm: Option<String>,
    pub policy: Option<Policy>,
    pub nice: Option<i32>,
    pub rt_priority: Option<u32>,
    /// `sched_attr.sched_runtime` for a fair task: the custom slice request (ns).
    pub slice_ns: Option<u64>,
    pub cpus: Option<CpuMask>,
    pub tg: Option<TgId>,
    pub reset_on_fork: Option<bool>,
    /// SCHED_DEADLINE parameters (with `policy: Some(Policy::Deadline)`).
    pub dl: Option<crate::deadline::DlAttr>,
}

/// `fork()` or `clone(CLONE_THREAD)` of a new task running `program`.
pub struct Spawn {
    pub program: Box<dyn Program>,
    /// A thread shares the parent's address space (cheaper switches, `c_clone`).
    pub thread: bool,
    pub attrs: TaskAttrs,
}

/// A file `poll()` can watch for input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollFd {
    /// The read end of a pipe (readable: data queued, or no writers left).
    Pipe(PipeId),
    /// The receiving end of an AF_UNIX stream socket pair (readable: an skb queued).
    Sock(SockId),
    /// A connected TCP socket (readable: data queued at or above `SO_RCVLOWAT`, or the peer's
    /// FIN received — `tcp_poll`).
    Tcp(crate::net::TcpSockId),
}

/// One thing a task asks for.
pub enum Op {
    /// User-space CPU work: nanoseconds at the platform's reference core (fixed work: it
    /// stretches on a slower CPU and when preempted).
    Run(u64),
    /// Busy loop until the wall clock advanced by this many ns (rt-app `runtime`).
    RunWall(u64),
    /// A system call that only costs kernel CPU time (e.g. `ioctl(FIONREAD)`), in ns at the
    /// reference core.
    Syscall(u64),
    /// A system call of `work` ns of kernel CPU time (at the reference core) that calls
    /// `cond_resched()` after every `every` ns of it (a long kernel loop): a preemption point
    /// under PREEMPT_NONE/VOLUNTARY, a no-op under FULL/LAZY/RT (rt-dl.md §1.7).
    SyscallCondResched { work: u64, every: u64 },
    /// A run of purely local work given at once: user-space work and system calls that
    /// touch nothing but the calling task (e.g. a run of dbench loadfile operations on the
    /// page cache), in order. Exactly the same as issuing, piece by piece, `Op::Run(ns)` for
    /// a [`Piece::User`] and `Op::Syscall(ns)` for a [`Piece::Sys`] — the same CPU time,
    /// preemption points, interrupts and accounting, the same output byte for byte — except
    /// that the program is asked for its next operation once, after the last piece, with
    /// `SysResult::None`. The preemption points are those of the pieces: the return to user
    /// space at the end of each `Sys` piece (and every interrupt exit, as always); none
    /// between a `User` piece and what follows it. Zero-length pieces take no time.
    Segment(Box<[Piece]>),
    /// `write()` of `bytes` to a pipe (fs/pipe.c semantics, workloads.md §1.2).
    PipeWrite { pipe: PipeId, bytes: u32 },
    /// `read()` of up to `bytes` from a pipe.
    PipeRead { pipe: PipeId, bytes: u32 },
    /// `read()` of up to `bytes` from a pipe opened `O_NONBLOCK`: as `PipeRead`, except that
    /// an empty pipe with writers returns `Again` (`EAGAIN`) at once instead of sleeping.
    PipeReadNonblock { pipe: PipeId, bytes: u32 },
    /// `send()`/`write()` of `bytes` (one skb) on an AF_UNIX stream socket (§1.3); blocks
    /// while the sending socket's `sk_sndbuf` budget is used up.
    SockSend { sock: SockId, bytes: u32 },
    /// `recv()`/`read()` of up to `bytes` from an AF_UNIX stream socket; blocks while empty.
    SockRecv { sock: SockId, bytes: u32 },
    /// `poll()` for input on one file, no timeout (§1.5): returns `Ready(1)` at once if it is
    /// readable, else blocks (non-exclusive wait) until a wakeup finds it readable.
    Poll { fd: PollFd },
    /// `pselect()` for input on one file, no timeout, with SIGCHLD unblocked in its signal
    /// mask only for the sleep (GNU make's jobserver wait for a token). Returns `Ready(1)` if
    /// the file is readable; else `Interrupted` (`EINTR`) if a child process of the caller has
    /// exited and is not yet reaped (a zombie: its SIGCHLD is pending), at once; else sleeps
    /// interruptibly (non-exclusive wait on the file, as `Poll`) until a wake-up finds the file
    /// readable (a pipe write's wake-up, WF_SYNC) or a child process exits — exit.c
    /// do_notify_parent() → signal_wake_up() → wake_up_state(TASK_INTERRUPTIBLE): a plain
    /// wake-up, no WF_SYNC — and returns `Interrupted`. As select.c do_select(), readiness is
    /// checked before the pending signal. The zombie stays: reap it with `WaitChild`, which
    /// then returns at once. A thread's exit sends no SIGCHLD and does not interrupt.
    Pselect { fd: PollFd },
    /// `FUTEX_WAIT`: block while the futex word equals `val`.
    FutexWait { futex: FutexId, val: u32 },
    /// A user-space busy-wait on a word (workloads.md §1.10): `while (*futex == val)
    /// cpu_relax();`, bounded by `max_ns`. No system call: the task consumes CPU as `Op::Run`
    /// does (user time, preemptible at every interrupt exit) until one of
    /// * the word differs from `val` — seen at the instant a store changes it
    ///   ([`Ctx::futex_store`], [`Ctx::futex_cas`], [`Ctx::futex_fetch_add`]) if the spinner
    ///   is on a CPU then, else as soon as it runs again: returns `SysResult::Changed`;
    /// * it has spun `max_ns` ns on a CPU (time preempted does not count; wall ns, not scaled
    ///   by the CPU's speed, as a loop of a fixed number of `PAUSE`/`YIELD` iterations is
    ///   approximately): returns `SysResult::SpinTimeout`. `u64::MAX` = no bound.
    ///
    /// A word that already differs returns `Changed` at once, without using time.
    /// Deviation: a change seen while the spinner was off its CPU ends the spin even if the
    /// word is changed back before it runs again (`Changed` is then returned with the word
    /// equal to `val`); monotonic counters (barriers, generation numbers) never do that.
    SpinWhile {
        futex: FutexId,
        val: u32,
        max_ns: u64,
    },
    /// `FUTEX_LOCK_PI`: take the futex's rt_mutex, or sleep on it by priority, boosting its
    /// owner (and the owners along the chain) to the best waiter's priority.
    FutexLockPi { futex: FutexId },
    /// `FUTEX_UNLOCK_PI`: release it; the top waiter becomes the owner and is woken; the
    /// releaser loses the boost it had from this futex's waiters.
    FutexUnlockPi { futex: FutexId },
    /// `FUTEX_WAKE`: wake up to `nr` waiters.
    FutexWake { futex: FutexId, nr: u32 },
    /// `nanosleep()` for this many ns (timer slack applies to fair tasks).
    Sleep(u64),
    /// `clock_nanosleep(TIMER_ABSTIME)` until this simulated time (ns).
    SleepUntil(u64),
    /// `sched_yield()`
    Yield,
    /// `fork()` / `clone()`
    Spawn(Box<Spawn>),
    /// `execve()` of a new image: exec balancing (`sched_exec`, WF_EXEC) may first move the
    /// task to the idlest CPU, then `c_exec` is spent on the CPU it runs on.
    Exec,
    /// `exit()`
    Exit,
    /// `wait()` for any child (also `pthread_join` of any thread created by this task).
    WaitChild,
    /// `setpriority()` / `nice()`
    SetNice(i32),
    /// `sched_setattr()` with a runtime (custom slice) for a fair task; 0 = default.
    SetSlice(u64),
    /// `sched_setscheduler()` / `sched_setattr()` on the calling task: a new policy with its
    /// nice value (fair policies) or RT priority (SCHED_FIFO/SCHED_RR).
    SetScheduler {
        policy: Policy,
        nice: i32,
        rt_priority: u32,
    },
    /// `write()` of the caller's tid to a group's `cgroup.threads` / `cgroup.procs` (rt-app's
    /// per-phase `taskgroup`): `sched_move_task()` of the calling task.
    CgroupAttach(crate::sched::TgId),
    /// A file-system system call on the platform's XFS file system (workloads.md §1.9, §7.2),
    /// on file `file` of the calling process (a number the program chooses; each process has
    /// its own files). `cpu_ns` is the whole operation's fixed CPU time at the reference core
    /// as the program's cost table gives it (user space plus the kernel's fixed part): the
    /// kernel charges its own fixed cost from the cost model in kernel mode and the rest of
    /// `cpu_ns` in user mode before the call; costs per byte and per page, and the IO of
    /// `fsync`, come on top. See `FsCall` for what each call does.
    Fs {
        call: FsCall,
        file: u32,
        bytes: u32,
        cpu_ns: u64,
    },
    /// `socket()` + `connect()` to a listener on loopback (netbench.md §1.14): the whole
    /// handshake runs in the caller's context (`c_tcp_connect`); its last step queues the
    /// server end on the listener (one in a SO_REUSEPORT group, by the hash of the client
    /// port) and wakes one exclusive `accept` waiter (FIFO) with WF_SYNC from the softirq, or
    /// the listener's epoll links. A full accept queue drops the SYN: the connect retries
    /// after 1 s. Returns `SysResult::Tcp` (the client end).
    TcpConnect { listener: ListenId, nodelay: bool },
    /// `accept()`: the next queued connection (`SysResult::Tcp`, the server end); blocks
    /// (exclusive, FIFO) while none is queued, or returns `Again` with `nonblock`.
    Accept { listener: ListenId, nonblock: bool },
    /// Blocking `send()` of `bytes` on a TCP socket (netbench.md §1.12.2): the delivery to
    /// the peer and the wake-up of its reader run inside the call, in softirq context on
    /// the caller's CPU. Returns `Bytes(bytes)`.
    TcpSend { sock: TcpSockId, bytes: u32 },
    /// `recv()` of up to `bytes` (§1.12.6): `Bytes(got)`, 0 once the peer closed and the
    /// queue is empty; `Again` with `dontwait` on an empty queue.
    TcpRecv {
        sock: TcpSockId,
        bytes: u32,
        flags: RecvFlags,
    },
    /// `close()` of a TCP socket end: FIN to the peer, whose blocked reader wakes (non-sync)
    /// and reads 0.
    TcpClose { sock: TcpSockId },
    /// `sendto()` of one datagram of `bytes` to `dst` (§1.12.8): `Bytes(bytes)`, also when
    /// `dst`'s queue is full and the datagram is dropped.
    UdpSend {
        sock: UdpSockId,
        dst: UdpSockId,
        bytes: u32,
    },
    /// `recvfrom()` of one datagram (truncated to `bytes`); blocks exclusively (FIFO).
    UdpRecv { sock: UdpSockId, bytes: u32 },
    /// `epoll_ctl()` (§1.13): `events` ⊆ EPOLLIN | EPOLLOUT | EPOLLET | EPOLLONESHOT |
    /// EPOLLEXCLUSIVE. Returns `None`.
    EpollCtl {
        ep: EpollId,
        op: EpollOp,
        fd: NetFd,
        events: u32,
    },
    /// `epoll_wait()` with no timeout, at most `max` events: `Ready(k)`, k ≥ 1; the events
    /// are then read with [`Ctx::take_epoll_events`].
    EpollWait { ep: EpollId, max: u32 },
    /// `eventfd_write(fd, 1)`: wakes the pollers with a non-sync wake-up.
    EventfdWrite { fd: EventfdId },
    /// `eventfd_read()`: `Bytes(8)`, the counter reset; blocks while it is 0.
    EventfdRead { fd: EventfdId },
    /// Work of a kernel thread of the simulated kernel itself; workloads cannot build one.
    #[doc(hidden)]
    Kernel(KernelOp),
}

/// One piece of an [`Op::Segment`]: ns of CPU work at the platform's reference core (no cost
/// jitter is added: the workload draws its own noise, as for `Op::Run` and `Op::Syscall`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece {
    /// User-space work (as `Op::Run`).
    User(u64),
    /// A system call's kernel time, then its return to user space (as `Op::Syscall`).
    Sys(u64),
}

/// A file-system call of `Op::Fs` (the fileio backend of dbench, workloads.md §7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FsCall {
    /// `open()` (+ `fstat`); `create`: `O_CREAT` of a new file (logs the new inode and the
    /// directory entry).
    Open {
        create: bool,
    },
    Close,
    /// `stat()`/`fstat()`/`statvfs()`-like lookups (no change).
    Stat,
    /// `opendir`/`readdir` with a `stat` per entry.
    Readdir,
    /// `utimes`/`ftruncate`-like inode change (logged).
    Setattr,
    /// `unlink()`: the file's dirty pages are dropped, the change is logged.
    Unlink,
    /// `rename()` (logged).
    Rename,
    /// `mkdir()` (logged).
    Mkdir,
    /// `rmdir()` (logged).
    Rmdir,
    /// `fcntl(F_SETLKW)` byte-range lock or unlock.
    Lock,
    /// `pread()` of `bytes` from the page cache (a hit).
    Read,
    /// `pwrite()` of `bytes` into the page cache: the pages become dirty, the inode's
    /// timestamp change is logged.
    Write,
    /// `fsync()`: write back the file's dirty pages and wait, then force the log up to the
    /// file's last change and wait (workloads.md §1.9).
    Fsync,
}

/// A kernel thread's operation (the inner value is private to the kernel crate).
#[derive(Clone, Copy, Debug)]
pub struct KernelOp(pub(crate) KOp);

#[derive(Clone, Copy, Debug)]
pub(crate) enum KOp {
    /// `run_ktimerd()`: expire the soft hrtimers queued for this CPU's `ktimers/N`, or sleep
    /// until there are some.
    Ktimers,
    /// `worker_thread()` of a kworker of workqueue pool `pool` (workqueue.rs): run the next
    /// work item, or sleep until one is queued.
    Kworker { pool: u32 },
}

/// What the previous operation returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SysResult {
    /// First call, or an operation without a value.
    None,
    /// Bytes transferred by a pipe read or write (0 = end of file).
    Bytes(u32),
    /// `EAGAIN`: the futex word did not match; a non-blocking pipe read found it empty.
    Again,
    /// Number of tasks woken by `FutexWake`.
    Woken(u32),
    /// pid of a new child (`Spawn`) or of a reaped one (`WaitChild`).
    Pid(i32),
    /// `ECHILD`: no children to wait for.
    NoChild,
    /// Number of ready files returned by `poll()`.
    Ready(u32),
    /// `EINTR`: `Op::Pselect` was interrupted by SIGCHLD (a child process exited).
    Interrupted,
    /// `Op::SpinWhile`: the word changed.
    Changed,
    /// `Op::SpinWhile`: the spin reached its `max_ns` bound with the word unchanged.
    SpinTimeout,
    /// A TCP socket end: the client end of `TcpConnect`, the server end of `Accept`.
    Tcp(TcpSockId),
}

/// A task's behaviour.
pub trait Program {
    /// The next operation, given the result of the previous one.
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op;
}

/// What a program may look at and touch while deciding its next operation: the clock, its
/// identity, its own random stream and user-space memory (futex words). Reading the clock
/// costs nothing here; programs that model `clock_gettime` charge `Op::Run(c_clock)`.
pub struct Ctx<'a> {
    pub(crate) k: &'a mut Kernel,
    pub(crate) task: TaskId,
}

impl<'a> Ctx<'a> {
    /// Simulated time now (ns).
    pub fn now(&self) -> u64 {
        self.k.now
    }
    pub fn task(&self) -> TaskId {
        self.task
    }
    pub fn pid(&self) -> i32 {
        self.k.tasks[self.task.index()].pid
    }
    /// The CPU the task is running on (`sched_getcpu()`).
    pub fn cpu(&self) -> usize {
        self.k.tasks[self.task.index()].cpu
    }
    pub fn ncpus(&self) -> usize {
        self.k.ncpus
    }
    /// The task's own random stream.
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.k.tasks[self.task.index()].rng
    }
    /// Loads a futex word (user memory).
    pub fn futex_load(&self, f: FutexId) -> u32 {
        self.k.ipc.futexes[f.index()].val
    }
    /// Stores a futex word (ends the spins of `Op::SpinWhile` spinners it makes differ).
    pub fn futex_store(&mut self, f: FutexId, v: u32) {
        self.k.ipc.futexes[f.index()].val = v;
        self.k.futex_word_changed(f);
    }
    /// Atomic compare-and-swap on a futex word; true if it matched and was replaced.
    pub fn futex_cas(&mut self, f: FutexId, old: u32, new: u32) -> bool {
        let w = &mut self.k.ipc.futexes[f.index()].val;
        if *w == old {
            *w = new;
            self.k.futex_word_changed(f);
            true
        } else {
            false
        }
    }
    /// Atomic fetch-and-add (wrapping) on a futex word; returns the old value.
    pub fn futex_fetch_add(&mut self, f: FutexId, delta: u32) -> u32 {
        let w = &mut self.k.ipc.futexes[f.index()].val;
        let old = *w;
        *w = old.wrapping_add(delta);
        if delta != 0 {
            self.k.futex_word_changed(f);
        }
        old
    }
    /// The user-space fast path of a priority-inheritance mutex (glibc `pthread_mutex_lock`
    /// with PTHREAD_PRIO_INHERIT): compare-and-swap the caller's TID into a free futex word.
    /// The kernel's `FUTEX_LOCK_PI` reads the owner from that word, so ownership taken here
    /// is what a contender's boost later goes to. False: owned, issue `Op::FutexLockPi`.
    pub fn futex_pi_trylock(&mut self, f: FutexId) -> bool {
        let fx = &mut self.k.ipc.futexes[f.index()];
        if fx.pi_owner.is_some() {
            return false;
        }
        fx.pi_owner = Some(self.task);
        self.k.tasks[self.task.index()].pi_held.push(f);
        true
    }
    /// The user-space fast path of a PI mutex unlock: compare-and-swap the caller's TID back to
    /// 0, which fails once a waiter has set FUTEX_WAITERS in the word (then issue
    /// `Op::FutexUnlockPi`, which hands the lock to the top waiter).
    pub fn futex_pi_tryunlock(&mut self, f: FutexId) -> bool {
        let fx = &mut self.k.ipc.futexes[f.index()];
        if fx.pi_owner != Some(self.task) || !fx.waiters.is_empty() {
            return false;
        }
        fx.pi_owner = None;
        self.k.tasks[self.task.index()].pi_held.retain(|&h| h != f);
        true
    }
    /// Number of tasks blocked on a futex (what glibc tracks with its waiter bit).
    pub fn futex_waiters(&self, f: FutexId) -> usize {
        self.k.ipc.futexes[f.index()].waiters.len()
    }
    /// Creates a futex word with an initial value (user memory: free).
    pub fn new_futex(&mut self, val: u32) -> FutexId {
        self.k.ipc.new_futex(val)
    }
    /// Creates a pipe with the default 16 slots (`PIPE_DEF_BUFFERS`); the `pipe2()` call's
    /// cost is charged by the caller as `Op::Syscall`.
    pub fn new_pipe(&mut self, packet: bool) -> PipeId {
        self.new_pipe_slots(packet, 16)
    }
    /// Creates a pipe with `slots` page-sized slots (after `fcntl(F_SETPIPE_SZ)`).
    pub fn new_pipe_slots(&mut self, packet: bool, slots: u32) -> PipeId {
        let page = self.k.pipe_page_size;
        self.k.ipc.new_pipe(packet, slots.max(1), page)
    }
    /// Page size of the kernel build (the size of one pipe slot).
    pub fn page_size(&self) -> u32 {
        self.k.pipe_page_size
    }
    /// Creates a connected AF_UNIX stream socket pair used in one direction (sends on one
    /// end, receives on the other), with the default send buffer; the `socketpair()` call's
    /// cost is charged by the caller as `Op::Syscall`.
    pub fn new_unix_stream(&mut self) -> SockId {
        self.k.ipc.new_unix_stream()
    }
    /// `ns` of work with the platform's cost jitter (workloads.md §0.2), drawn from the task's
    /// own random stream with the σ of the CPU it runs on; `ns` unchanged when cost jitter is
    /// off (`NO_SIM_JITTER`). For programs that charge a cost of their own per repetition.
    pub fn cost_jitter(&mut self, ns: u64) -> u64 {
        if !self.k.cfg.sim(SimFeature::SIM_JITTER) {
            return ns;
        }
        let sigma = self.costs().jitter_sigma_ppm;
        self.rng().jitter(ns, sigma)
    }
    /// Cost model of the CPU the task runs on (for programs that charge named costs).
    pub fn costs(&self) -> &schedlab_platform::cost::CostModel {
        let cpu = self.cpu();
        &self.k.costs[cpu]
    }
    /// `socket()` + `bind()` + `listen(backlog)` on loopback; listeners with the same
    /// `Some(group)` form a SO_REUSEPORT group (netbench.md §1.14). Free: charge the calls with
    /// `Op::Syscall` if the model wants them.
    pub fn tcp_listen(&mut self, backlog: u32, reuseport_group: Option<u32>) -> ListenId {
        self.k.net.new_listener(backlog, reuseport_group)
    }
    /// An established TCP connection (client end, server end) at once: a start-up shortcut.
    pub fn tcp_pair(&mut self, nodelay: bool) -> (TcpSockId, TcpSockId) {
        self.k.net.new_pair(nodelay)
    }
    /// `setsockopt(TCP_NODELAY)` (default off, as in the kernel).
    pub fn tcp_set_nodelay(&mut self, s: TcpSockId, on: bool) {
        self.k.net.tcp[s.index()].nodelay = on;
    }
    /// `socket(AF_INET, SOCK_DGRAM)` + `bind()`.
    pub fn udp_socket(&mut self) -> UdpSockId {
        self.k.net.new_udp()
    }
    /// `epoll_create1()`.
    pub fn epoll_create(&mut self) -> EpollId {
        self.k.epoll.new_epoll()
    }
    /// `eventfd(0, 0)`.
    pub fn eventfd(&mut self) -> EventfdId {
        self.k.epoll.new_eventfd()
    }
    /// What this task's last `Op::EpollWait` harvested (events as the kernel reports them),
    /// emptied by the call.
    pub fn take_epoll_events(&mut self) -> Vec<(NetFd, u32)> {
        self.k.epoll.harvest.remove(&self.task).unwrap_or_default()
    }
    /// Datagrams dropped at a UDP socket (`Udp: RcvbufErrors`).
    pub fn udp_drops(&self, s: UdpSockId) -> u64 {
        self.k.net.udp[s.index()].drops
    }
    /// `getsockopt(SO_SNDBUF)` of a TCP socket.
    pub fn tcp_sndbuf(&self, s: TcpSockId) -> u32 {
        self.k.net.tcp[s.index()].sndbuf
    }
    /// `getsockopt(SO_RCVBUF)` of a TCP socket.
    pub fn tcp_rcvbuf(&self, s: TcpSockId) -> u32 {
        self.k.net.tcp[s.index()].rcvbuf
    }
}

impl Ctx<'_> {
    /// The other end of a TCP connection (what `getpeername()` names): lets a model tell which
    /// client a server end belongs to.
    pub fn tcp_peer(&self, s: crate::net::TcpSockId) -> crate::net::TcpSockId {
        self.k.net.tcp[s.index()].peer
    }
}
