//! Kernel objects tasks block on: pipes (fs/pipe.c), futexes, and wait queues.
//!
//! These hold state only; the blocking, the wakeups (with the real kernel's wake flags) and the
//! costs are applied by core.rs when a task's system call runs.

use crate::sched::TaskId;
use schedlab_engine::define_id;
use std::collections::VecDeque;

define_id!(
    /// A pipe.
    PipeId
);
define_id!(
    /// A futex word in user memory.
    FutexId
);

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

/// A futex: a 32-bit user word and its FIFO wait queue.
#[derive(Clone, Debug, Default)]
pub struct Futex {
    pub val: u32,
    pub waiters: VecDeque<TaskId>,
}

/// All kernel objects of one simulation.
#[derive(Clone, Debug, Default)]
pub struct Ipc {
    pub pipes: Vec<Pipe>,
    pub futexes: Vec<Futex>,
}

impl Ipc {
    pub fn new_pipe(&mut self, packet: bool, slots: u32, page: u32) -> PipeId {
        self.pipes.push(Pipe {
            packet,
            slots,
            page,
            buf: VecDeque::new(),
            readers: VecDeque::new(),
            writers: VecDeque::new(),
            nr_writers: 1,
            bytes_written: 0,
        });
        PipeId::new(self.pipes.len() - 1)
    }

    pub fn new_futex(&mut self, val: u32) -> FutexId {
        self.futexes.push(Futex {
            val,
            waiters: VecDeque::new(),
        });
        FutexId::new(self.futexes.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
