//! Kernel objects tasks block on: pipes (fs/pipe.c), AF_UNIX stream sockets (net/unix/af_unix.c),
//! futexes, sleeping kernel mutexes (kernel/locking/mutex.c) and their wait queues.
//!
//! These hold state only; the blocking, the wakeups (with the real kernel's wake flags), the
//! optimistic spinning and the costs are applied by exec.rs when a task's system call runs.
//! [`pipe_op_base`] says which parts of a pipe operation's cost a kernel version pays.

use crate::sched::TaskId;
use schedlab_engine::define_id;
use schedlab_platform::cost::CostModel;
use std::collections::VecDeque;

define_id!(
    /// A pipe.
    PipeId
);
define_id!(
    /// A futex word in user memory.
    FutexId
);
define_id!(
    /// A sleeping kernel mutex (`struct mutex`), e.g. a pipe's `pipe->mutex`.
    MutexId
);
define_id!(
    /// One direction of a connected AF_UNIX stream socket pair.
    SockId
);

/// The cost of one pipe write (`write`) or read of at most 512 B, before any copy beyond
/// 512 B. `c_pipe_write`/`c_pipe_read` include the inode time updates that fs/pipe.c did
/// after every successful operation until f017b0a4951f (`file_update_time()` after a write,
/// `file_accessed()` after a read); with that patch (`anon`) only FIFOs still do them, and
/// every simulated pipe is anonymous (`pipe()`/`pipe2()`), so the operation costs
/// `c_pipe_update_time`/`c_pipe_accessed` less (none where the platform gives no value).
/// kernel: fs/pipe.c anon_pipe_write()/fifo_pipe_write(), anon_pipe_read()/fifo_pipe_read() @ v6.15
pub(crate) fn pipe_op_base(c: &CostModel, write: bool, anon: bool) -> u64 {
    let (op, times) = if write {
        (c.c_pipe_write, c.c_pipe_update_time)
    } else {
        (c.c_pipe_read, c.c_pipe_accessed)
    };
    match times {
        Some(t) if anon => op.0.saturating_sub(t.0),
        _ => op.0,
    }
}

/// A pipe: a ring of `slots` page-sized buffers (`PIPE_DEF_BUFFERS` = 16), in stream mode
/// (small writes merge into the last page) or packet mode (`O_DIRECT`: one write per slot).
#[derive(Clone, Debug)]
pub struct Pipe {
    pub packet: bool,
    pub slots: u32,
    pub page: u32,
    /// Bytes held by each occupied slot, oldest first.
    pub buf: VecDeque<u32>,
    /// Blocked readers and writers (exclusive waits: one woken per wake call).
    pub readers: VecDeque<TaskId>,
    pub writers: VecDeque<TaskId>,
    /// Open write ends; a read of an empty pipe with none returns 0 (EOF).
    pub nr_writers: u32,
    pub bytes_written: u64,
    /// `pipe->mutex`, taken by every read and write (workloads.md §1.8).
    pub mutex: MutexId,
    /// Tasks blocked in `poll()` on the read side (non-exclusive waits on `rd_wait`).
    pub pollers: Vec<TaskId>,
    /// `pipe->poll_usage`: somebody polled this pipe, so every write wakes `rd_wait`.
    pub poll_usage: bool,
}

impl Pipe {
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    pub fn is_full(&self) -> bool {
        self.buf.len() as u32 >= self.slots
    }

    /// Tries to put `n` bytes in (n ≤ one page). Returns false if the ring is full.
    pub fn try_write(&mut self, n: u32) -> bool {
        if !self.packet {
            if let Some(last) = self.buf.back_mut() {
                // merge only if the whole write fits in the last page
                if *last + n <= self.page {
                    *last += n;
                    self.bytes_written += n as u64;
                    return true;
                }
            }
        }
        if self.is_full() {
            return false;
        }
        self.buf.push_back(n);
        self.bytes_written += n as u64;
        true
    }

    /// Reads up to `n` bytes. Returns (bytes read, whether a slot was freed from a full ring).
    pub fn read(&mut self, n: u32) -> (u32, bool) {
        let was_full = self.is_full();
        let mut got = 0;
        let mut freed_from_full = false;
        if self.packet {
            if let Some(p) = self.buf.pop_front() {
                got = p.min(n);
                freed_from_full = was_full;
            }
            return (got, freed_from_full);
        }
        while got < n {
            let Some(front) = self.buf.front_mut() else {
                break;
            };
            let take = (*front).min(n - got);
            *front -= take;
            got += take;
            if *front == 0 {
                let full_before = self.is_full();
                self.buf.pop_front();
                freed_from_full |= full_before;
            }
        }
        (got, freed_from_full)
    }
}

/// A sleeping kernel mutex with optimistic spinning (kernel/locking/mutex.c, workloads.md §1.8).
///
/// ```text
///   mutex_lock(m):  free ─────────────────────────────► owner = me
///                   held, owner on a CPU, !need_resched ► spin (CPU time, osq FIFO order)
///                   otherwise ────────────────────────► sleep on `waiters` (FIFO, TASK_UNINTERRUPTIBLE)
///   mutex_unlock(m): waiters and `handoff` ──► the lock goes to the first waiter (MUTEX_FLAG_PICKUP)
///                    otherwise ──► free; the first spinner takes it; the first waiter is woken
///                                   (WF_TTWU) and may find it stolen
/// ```
///
/// A woken first waiter that fails to take the lock sets `handoff` (MUTEX_FLAG_HANDOFF), so
/// the next unlock hands the lock to it instead of letting a spinner steal it again.
#[derive(Clone, Debug, Default)]
pub struct KMutex {
    /// The owner, or after a handoff the waiter it was handed to (which may not run yet).
    pub owner: Option<TaskId>,
    /// MUTEX_FLAG_HANDOFF: the first waiter asked for the lock to be handed to it.
    pub handoff: bool,
    /// Sleeping waiters, FIFO (`lock->wait_list`). A woken waiter stays here until it owns
    /// the lock, as in the kernel.
    pub waiters: VecDeque<TaskId>,
    /// Tasks spinning on the owner, in osq (arrival) order; only the head is told of an unlock.
    pub spinners: VecDeque<TaskId>,
    /// The CPU of the last owner: the lock word and the data it protects are in that CPU's
    /// cache (None before the first acquisition).
    pub last_cpu: Option<usize>,
    /// Statistics: acquisitions, attempts that found the lock taken, sleeps, handoffs,
    /// acquisitions from another CPU than the last owner's (cache-line transfers).
    pub acquisitions: u64,
    pub transfers: u64,
    pub contended: u64,
    pub sleeps: u64,
    pub handoffs: u64,
}

/// One skb on a socket's receive queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skb {
    /// Bytes not yet read.
    pub len: u32,
    /// `skb->truesize`, charged to the sending socket until the skb is freed.
    pub truesize: u32,
}

/// One direction of `socketpair(AF_UNIX, SOCK_STREAM)` (workloads.md §1.3): the sending
/// socket's write allocation and wait queue, and the receiving socket's queue and wait queue.
/// Every sender writing through the same fd shares the one `sk_sndbuf` budget.
#[derive(Clone, Debug)]
pub struct UnixStream {
    /// The receiving socket's `sk_receive_queue`.
    pub queue: VecDeque<Skb>,
    /// The sending socket's `sk_wmem_alloc` (Σ truesize of its skbs not yet freed).
    pub wmem_alloc: u64,
    /// The sending socket's `sk_sndbuf` (default `net.core.wmem_default`).
    pub sndbuf: u64,
    /// Receivers sleeping in `unix_stream_data_wait` (non-exclusive: all are woken).
    pub readers: VecDeque<TaskId>,
    /// Senders sleeping in `sock_wait_for_wmem` (non-exclusive: all are woken).
    pub writers: VecDeque<TaskId>,
    /// Tasks blocked in `poll()` for input on the receiving socket.
    pub pollers: Vec<TaskId>,
    pub bytes_sent: u64,
    pub skbs_sent: u64,
}

impl UnixStream {
    /// `net.core.wmem_default` (bytes), the default `sk_sndbuf`.
    pub const WMEM_DEFAULT: u64 = 212_992;
    /// `skb->truesize − len` for a small AF_UNIX skb (workloads.md §1.3, unverified: the
    /// spec's default 768 + n).
    pub const SKB_OVERHEAD: u32 = 768;

    pub fn new(sndbuf: u64) -> UnixStream {
        UnixStream {
            queue: VecDeque::new(),
            wmem_alloc: 0,
            sndbuf,
            readers: VecDeque::new(),
            writers: VecDeque::new(),
            pollers: Vec::new(),
            bytes_sent: 0,
            skbs_sent: 0,
        }
    }

    pub fn truesize(n: u32) -> u32 {
        Self::SKB_OVERHEAD + n
    }

    /// Whether a send of `n` bytes can allocate its skb now.
    ///
    /// Deviation: the kernel (`sock_alloc_send_pskb`) allocates while `sk_wmem_alloc <
    /// sk_sndbuf`, which lets one skb overshoot the budget (246 in-flight 100-byte messages
    /// with truesize 868); the spec's rule "blocks when the allocation would exceed
    /// `sk_sndbuf`" (245) is kept, since the truesize itself is an estimate.
    pub fn can_send(&self, n: u32) -> bool {
        self.wmem_alloc + Self::truesize(n) as u64 <= self.sndbuf
    }

    /// Queues one skb of `n` bytes (the caller checked [`UnixStream::can_send`]).
    pub fn send(&mut self, n: u32) {
        let truesize = Self::truesize(n);
        self.queue.push_back(Skb { len: n, truesize });
        self.wmem_alloc += truesize as u64;
        self.bytes_sent += n as u64;
        self.skbs_sent += 1;
    }

    /// Reads up to `n` bytes across skbs (stream semantics); fully consumed skbs are freed
    /// and their truesize returned to the sender. Returns (bytes read, skbs freed).
    pub fn recv(&mut self, n: u32) -> (u32, u32) {
        let mut got = 0;
        let mut freed = 0;
        while got < n {
            let Some(front) = self.queue.front_mut() else {
                break;
            };
            let take = front.len.min(n - got);
            front.len -= take;
            got += take;
            if front.len == 0 {
                let skb = self.queue.pop_front().unwrap();
                self.wmem_alloc -= skb.truesize as u64;
                freed += 1;
            }
        }
        (got, freed)
    }

    /// kernel: af_unix.c unix_writable() — the write-space callback wakes senders only once
    /// the allocation has dropped to a quarter of the send buffer.
    pub fn writable(&self) -> bool {
        self.wmem_alloc * 4 <= self.sndbuf
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

/// A futex: a 32-bit user word and its FIFO wait queue.
#[derive(Clone, Debug, Default)]
pub struct Futex {
    pub val: u32,
    /// Sleepers: FIFO for FUTEX_WAIT; for a PI futex the rt_mutex waiters by priority
    /// (FIFO within one priority).
    pub waiters: VecDeque<TaskId>,
    /// PI futex (FUTEX_LOCK_PI): the owner of its rt_mutex.
    pub pi_owner: Option<TaskId>,
    /// User-space spinners (`Op::SpinWhile`) watching the word, with the value they spin
    /// on, in the order they started: a store that makes the word differ ends their spins.
    pub spinners: Vec<(TaskId, u32)>,
}

/// Cache lines a pipe read or write of one small message touches that the previous owner of
/// `pipe->mutex` wrote (include/linux/pipe_fs_i.h, fs/pipe.c): the head of `struct
/// pipe_inode_info` — the mutex, `rd_wait`, `wr_wait`, `head`/`tail` — spans two lines, the
/// `pipe_buffer` being filled or drained one, and the message's bytes (100 B at an arbitrary
/// offset of the page) two on average. An acquisition from another CPU than the last owner's
/// pays these transfers (`Kernel::line_cost` each) inside the critical section.
pub const PIPE_MUTEX_LINES: u64 = 5;

/// All kernel objects of one simulation.
#[derive(Clone, Debug, Default)]
pub struct Ipc {
    pub pipes: Vec<Pipe>,
    pub futexes: Vec<Futex>,
    pub mutexes: Vec<KMutex>,
    pub socks: Vec<UnixStream>,
}

impl Ipc {
    pub fn new_pipe(&mut self, packet: bool, slots: u32, page: u32) -> PipeId {
        let mutex = self.new_mutex();
        self.pipes.push(Pipe {
            packet,
            slots,
            page,
            buf: VecDeque::new(),
            readers: VecDeque::new(),
            writers: VecDeque::new(),
            nr_writers: 1,
            bytes_written: 0,
            mutex,
            pollers: Vec::new(),
            poll_usage: false,
        });
        PipeId::new(self.pipes.len() - 1)
    }

    pub fn new_mutex(&mut self) -> MutexId {
        self.mutexes.push(KMutex::default());
        MutexId::new(self.mutexes.len() - 1)
    }

    /// One direction of a new AF_UNIX stream socket pair with the default send buffer.
    pub fn new_unix_stream(&mut self) -> SockId {
        self.socks.push(UnixStream::new(UnixStream::WMEM_DEFAULT));
        SockId::new(self.socks.len() - 1)
    }

    pub fn new_futex(&mut self, val: u32) -> FutexId {
        self.futexes.push(Futex {
            val,
            waiters: VecDeque::new(),
            pi_owner: None,
            spinners: Vec::new(),
        });
        FutexId::new(self.futexes.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_engine::Nanos;

    #[test]
    fn anonymous_pipe_ops_skip_the_time_updates_with_f017b0a4951f() {
        // write 350 ns of which file_update_time() 40 ns, read 270 ns of which
        // file_accessed() 60 ns: without the patch 350 / 270, with it 350 - 40 = 310 and
        // 270 - 60 = 210; a platform without the shares pays 350 / 270 either way.
        let mut c = CostModel::zero();
        c.c_pipe_write = Nanos(350);
        c.c_pipe_read = Nanos(270);
        assert_eq!(pipe_op_base(&c, true, true), 350);
        assert_eq!(pipe_op_base(&c, false, true), 270);
        c.c_pipe_update_time = Some(Nanos(40));
        c.c_pipe_accessed = Some(Nanos(60));
        assert_eq!(pipe_op_base(&c, true, false), 350);
        assert_eq!(pipe_op_base(&c, false, false), 270);
        assert_eq!(pipe_op_base(&c, true, true), 310);
        assert_eq!(pipe_op_base(&c, false, true), 210);
    }

    #[test]
    fn packet_mode_one_write_per_slot() {
        let mut ipc = Ipc::default();
        let p = ipc.new_pipe(true, 16, 16384);
        let pipe = &mut ipc.pipes[p.index()];
        for _ in 0..16 {
            assert!(pipe.try_write(512));
        }
        assert!(pipe.is_full());
        assert!(!pipe.try_write(512), "17th packet must block");
        assert_eq!(pipe.read(512), (512, true));
        assert_eq!(pipe.read(512), (512, false));
    }

    #[test]
    fn stream_mode_merges_whole_writes() {
        // workloads.md §3.2: a 4 KiB page holds 40 messages of 100 bytes; 16 pages = 640.
        let mut ipc = Ipc::default();
        let p = ipc.new_pipe(false, 16, 4096);
        let pipe = &mut ipc.pipes[p.index()];
        let mut n = 0;
        while pipe.try_write(100) {
            n += 1;
        }
        assert_eq!(n, 640);
        // reading 100 bytes at a time frees a slot after 40 reads
        for _ in 0..39 {
            assert_eq!(pipe.read(100), (100, false));
        }
        assert_eq!(pipe.read(100), (100, true));
    }

    #[test]
    fn unix_stream_budget_and_write_space() {
        // workloads.md §1.3: truesize 768 + 100 = 868 per message against sk_sndbuf 212992:
        // floor(212992 / 868) = 245 messages fit (245 × 868 = 212660; a 246th would need
        // 213528 > 212992).
        let mut ipc = Ipc::default();
        let s = ipc.new_unix_stream();
        let sk = &mut ipc.socks[s.index()];
        let mut n = 0;
        while sk.can_send(100) {
            sk.send(100);
            n += 1;
        }
        assert_eq!(n, 245);
        assert_eq!(sk.wmem_alloc, 212_660);
        // unix_writable: allocation × 4 <= 212992, i.e. <= 53248 bytes = 61 skbs (52948);
        // 62 skbs (53816) are not writable. So 245 − 61 = 184 reads make it writable.
        for _ in 0..183 {
            assert_eq!(sk.recv(100), (100, 1));
            assert!(!sk.writable());
        }
        assert_eq!(sk.recv(100), (100, 1));
        assert!(sk.writable());
        assert_eq!(sk.queue.len(), 61);
    }

    #[test]
    fn unix_stream_reads_across_skbs() {
        // stream semantics: a read gathers bytes from several skbs; an skb is freed only
        // when fully consumed.
        let mut ipc = Ipc::default();
        let s = ipc.new_unix_stream();
        let sk = &mut ipc.socks[s.index()];
        sk.send(1);
        sk.send(1);
        sk.send(100);
        assert_eq!(sk.recv(50), (50, 2));
        assert_eq!(sk.wmem_alloc, 868);
        assert_eq!(sk.recv(100), (52, 1));
        assert_eq!(sk.wmem_alloc, 0);
        assert!(sk.is_empty());
    }
}
