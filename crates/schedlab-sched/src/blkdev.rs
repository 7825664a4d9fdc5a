//! kernel: blk-mq + drivers/nvme — the storage device of the platform (workloads.md §1.9,
//! Table 1.11-C).
//!
//! A request is submitted on a CPU (NVMe: one submission/completion queue pair per CPU) and
//! completes after the device's service time with an interrupt on the **submitting CPU**.
//! The completion runs in the hard interrupt (`nvme_irq()` → `blk_mq_complete_request()`,
//! which completes locally when the request was submitted on this CPU): `c_irq +
//! c_blk_complete`, then the request's `bi_end_io` wakes a waiter or queues work.
//!
//! Service time (**unverified** model): the Table 1.11-C latency of the request's kind for
//! the first 4 KiB, plus [`NS_PER_KIB`] per further KiB; requests do not queue behind each
//! other (an NVMe device serves many in parallel).
//!
//! This file keeps the state; exec.rs submits requests and handles the interrupts.

use crate::workqueue::{PoolKind, Work};
use schedlab_platform::StorageDevice;

/// Transfer time per KiB beyond the first 4 KiB: 0.4 µs/KiB ≈ 2.5 GB/s, the sequential
/// bandwidth class of an enterprise NVMe SSD (**unverified** estimate; Table 1.11-C gives
/// only 4 KiB latencies).
pub const NS_PER_KIB: u64 = 400;

/// Kind of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReqKind {
    /// (Page-cache misses are not modelled yet: reads always hit, xfs.rs.)
    #[allow(dead_code)]
    Read,
    /// A write into the device's (power-loss protected) cache.
    Write,
    /// A log write with `REQ_PREFLUSH | REQ_FUA`.
    FlushFua,
}

/// What the completion does (`bi_end_io`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EndIo {
    /// Queue `work` on the `kind` workqueue from the completing CPU (`xfs_end_bio()`,
    /// `xlog_bio_end_io()`).
    QueueWork { kind: PoolKind, work: Work },
}

/// An in-flight request.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    pub cpu: usize,
    pub end_io: EndIo,
}

/// The device and its in-flight requests.
#[derive(Debug)]
pub(crate) struct BlockDev {
    pub dev: StorageDevice,
    pub reqs: Vec<Option<Request>>,
    free: Vec<u32>,
    pub submitted: u64,
    pub completed: u64,
    pub bytes: u64,
}

impl BlockDev {
    pub fn new(dev: StorageDevice) -> BlockDev {
        BlockDev {
            dev,
            reqs: Vec::new(),
            free: Vec::new(),
            submitted: 0,
            completed: 0,
            bytes: 0,
        }
    }

    /// The device's service time for a request of `bytes`.
    pub fn service_ns(&self, kind: ReqKind, bytes: u64) -> u64 {
        let base = match kind {
            ReqKind::Read => self.dev.read_4k.0,
            ReqKind::Write => self.dev.write_4k.0,
            ReqKind::FlushFua => self.dev.flush.0,
        };
        if base == 0 {
            return 0; // a RAM device
        }
        let kib = bytes.div_ceil(1024);
        base + kib.saturating_sub(4) * NS_PER_KIB
    }

    /// Records a request; returns its id for the completion event.
    pub fn submit(&mut self, cpu: usize, bytes: u64, end_io: EndIo) -> u32 {
        self.submitted += 1;
        self.bytes += bytes;
        let r = Some(Request { cpu, end_io });
        match self.free.pop() {
            Some(id) => {
                self.reqs[id as usize] = r;
                id
            }
            None => {
                self.reqs.push(r);
                (self.reqs.len() - 1) as u32
            }
        }
    }

    /// The request `id` (still in flight).
    pub fn get(&self, id: u32) -> Request {
        self.reqs[id as usize].expect("in-flight request")
    }

    /// Ends request `id`.
    pub fn complete(&mut self, id: u32) -> Request {
        let r = self.reqs[id as usize].take().expect("in-flight request");
        self.free.push(id);
        self.completed += 1;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_time_is_the_table_latency_plus_the_transfer_beyond_4_kib() {
        let d = BlockDev::new(StorageDevice::from_table("nvme").unwrap());
        // Table 1.11-C enterprise NVMe: 4 KiB read 80 µs, write 15 µs, flush/FUA 30 µs
        assert_eq!(d.service_ns(ReqKind::Read, 4096), 80_000);
        assert_eq!(d.service_ns(ReqKind::Write, 4096), 15_000);
        assert_eq!(d.service_ns(ReqKind::FlushFua, 512), 30_000);
        // 64 KiB write: 15 µs + 60 KiB × 0.4 µs = 39 µs
        assert_eq!(d.service_ns(ReqKind::Write, 65_536), 39_000);
        let ram = BlockDev::new(StorageDevice::from_table("ram").unwrap());
        assert_eq!(ram.service_ns(ReqKind::Write, 65_536), 0);
    }
}
