//! kernel: workqueue.c — worker pools and their kworker threads (workloads.md §1.9).
//!
//! Pools, as the kernel has them for the workqueues the XFS IO path uses:
//!
//! * per CPU, a **bound** normal pool (nice 0) and a **bound `WQ_HIGHPRI`** pool (nice −20);
//!   their kworkers are pinned to the CPU (`kworker/N:0`, `kworker/N:0H`);
//! * per LLC, an **unbound** pool: the default affinity scope of unbound workqueues is
//!   "cache", so a work item queued from a CPU goes to the pool of that CPU's LLC, whose
//!   kworker may run on any CPU of the LLC (`kworker/uL:0`).
//!
//! `queue_work()` appends the item to the pool's worklist and, when the pool's worker is
//! idle, wakes it (`kick_pool()` → `wake_up_process()`: `WF_TTWU`, no `WF_SYNC`). A worker
//! runs the items back to back (`worker_thread()` → `process_one_work()`) and sleeps when
//! the list is empty. Deviation: one worker per pool; the kernel creates more when the last
//! idle one starts running (`need_to_create_worker()`), and a bound pool's concurrency
//! management keeps one running at a time unless it blocks — the items modelled here never
//! block, so one worker is enough for bound pools; for the unbound pools the model runs
//! queued items one after the other where the kernel could run them on several CPUs
//! (only the CIL push is queued there, and the CIL has one push work item anyway).
//!
//! This file keeps the state; exec.rs creates the kworkers, wakes them and runs the items.

use crate::sched::TaskId;
use std::collections::VecDeque;

/// A work item of the XFS IO path (the `work_struct`s of fs/xfs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Work {
    /// `xlog_cil_push_work()` (`xfs-cil`, unbound): format the CIL's items into the log and
    /// submit the log write (FUA).
    CilPush,
    /// `xlog_ioend_work()` (`xfs-log`, bound `WQ_HIGHPRI`): a log write has completed; mark
    /// the checkpoint `seq` done and wake every task waiting for it.
    LogIoEnd { seq: u64 },
    /// `xfs_end_io()` (`xfs-conv`, bound): a data writeback completed beyond the on-disk
    /// EOF: log the size update, end the pages' writeback (waking the fsync waiter `waiter`,
    /// if one waits: the flusher's writeback has none).
    IoEnd {
        waiter: Option<TaskId>,
        tgid: i32,
        file: u32,
    },
    /// `wb_workfn()` (`writeback`, unbound): the periodic ("kupdate") writeback of the
    /// inodes dirtied more than `dirty_expire_centisecs` ago.
    Writeback,
    /// `xfs_inodegc_worker()` (`xfs-inodegc`, bound): inactivate the unlinked inodes queued
    /// on this CPU.
    Inodegc { cpu: u32 },
}

/// Which pools a workqueue uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PoolKind {
    Bound,
    BoundHighpri,
    Unbound,
}

/// One worker pool.
#[derive(Debug)]
pub(crate) struct WorkerPool {
    pub kind: PoolKind,
    /// The CPU (bound) or the LLC id (unbound).
    pub id: usize,
    pub worker: Option<TaskId>,
    pub worklist: VecDeque<Work>,
    /// The worker sleeps (`WORKER_IDLE`) and must be woken for new work.
    pub idle: bool,
}

/// All pools: `ncpus` bound, `ncpus` bound high-priority, one unbound per LLC.
#[derive(Debug, Default)]
pub(crate) struct Workqueues {
    pub pools: Vec<WorkerPool>,
    pub ncpus: usize,
    /// LLC id → index of its unbound pool among `pools`.
    pub unbound_of_llc: Vec<usize>,
    /// Work items run, all pools.
    pub items_run: u64,
}

impl Workqueues {
    /// The pools of a machine whose CPUs have the LLC ids `llc_id` (workers not yet created).
    pub fn new(llc_id: &[usize]) -> Workqueues {
        let ncpus = llc_id.len();
        let mut pools = Vec::new();
        for kind in [PoolKind::Bound, PoolKind::BoundHighpri] {
            for cpu in 0..ncpus {
                pools.push(WorkerPool {
                    kind,
                    id: cpu,
                    worker: None,
                    worklist: VecDeque::new(),
                    idle: false,
                });
            }
        }
        let nllc = llc_id.iter().copied().max().map_or(0, |m| m + 1);
        let mut unbound_of_llc = vec![usize::MAX; nllc];
        let mut llcs: Vec<usize> = llc_id.to_vec();
        llcs.sort_unstable();
        llcs.dedup();
        for l in llcs {
            unbound_of_llc[l] = pools.len();
            pools.push(WorkerPool {
                kind: PoolKind::Unbound,
                id: l,
                worker: None,
                worklist: VecDeque::new(),
                idle: false,
            });
        }
        Workqueues {
            pools,
            ncpus,
            unbound_of_llc,
            items_run: 0,
        }
    }

    /// The pool a `queue_work()` from `cpu` uses: the CPU's own pool for a bound workqueue,
    /// the pool of its LLC for an unbound one ("cache" affinity scope).
    pub fn pool_for(&self, kind: PoolKind, cpu: usize, llc: usize) -> usize {
        match kind {
            PoolKind::Bound => cpu,
            PoolKind::BoundHighpri => self.ncpus + cpu,
            PoolKind::Unbound => self.unbound_of_llc[llc],
        }
    }

    /// `__queue_work()` + `kick_pool()`: appends `w`; returns the worker to wake if it sleeps.
    pub fn queue_work(&mut self, pool: usize, w: Work) -> Option<TaskId> {
        let p = &mut self.pools[pool];
        p.worklist.push_back(w);
        if p.idle {
            p.idle = false;
            p.worker
        } else {
            None
        }
    }

    /// `try_to_grab_pending()` of a queued item that has not started: removes it; false if it
    /// is not on the list.
    pub fn grab_pending(&mut self, pool: usize, w: Work) -> bool {
        let p = &mut self.pools[pool];
        match p.worklist.iter().position(|&x| x == w) {
            Some(i) => {
                p.worklist.remove(i);
                true
            }
            None => false,
        }
    }

    /// `worker_thread()`: the next item of the pool, or `None` (the worker goes idle).
    pub fn next_work(&mut self, pool: usize) -> Option<Work> {
        let p = &mut self.pools[pool];
        match p.worklist.pop_front() {
            Some(w) => {
                self.items_run += 1;
                Some(w)
            }
            None => {
                p.idle = true;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_per_cpu_and_per_llc_and_the_idle_worker_is_woken_once() {
        // 4 CPUs in 2 LLCs: pools 0-3 bound, 4-7 high-priority, 8 and 9 unbound
        let mut wq = Workqueues::new(&[0, 0, 1, 1]);
        assert_eq!(wq.pools.len(), 10);
        assert_eq!(wq.pool_for(PoolKind::Bound, 2, 1), 2);
        assert_eq!(wq.pool_for(PoolKind::BoundHighpri, 2, 1), 6);
        assert_eq!(wq.pool_for(PoolKind::Unbound, 3, 1), 9);
        let kw = TaskId(7);
        wq.pools[9].worker = Some(kw);
        wq.pools[9].idle = true;
        // the first item wakes the sleeping worker, the second finds it awake
        assert_eq!(wq.queue_work(9, Work::CilPush), Some(kw));
        assert_eq!(wq.queue_work(9, Work::LogIoEnd { seq: 1 }), None);
        assert_eq!(wq.next_work(9), Some(Work::CilPush));
        assert_eq!(wq.next_work(9), Some(Work::LogIoEnd { seq: 1 }));
        assert_eq!(wq.next_work(9), None);
        assert!(wq.pools[9].idle);
        assert_eq!(wq.items_run, 2);
    }
}
