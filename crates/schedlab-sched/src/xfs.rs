//! kernel: fs/xfs — the state of the XFS journal path and of the page cache's dirty data
//! (workloads.md §1.9).
//!
//! * Every logged change (inode create, unlink, rename, mkdir, a write's timestamp update,
//!   the size update at the end of a data writeback) adds an item to the **CIL**
//!   (committed item list, `xfs_log_cil.c`) of the current checkpoint sequence and records
//!   that sequence in the inode (`ili_commit_seq`).
//! * A log force up to sequence `s` (`xfs_log_force_seq()`, from `fsync`): nothing to do if
//!   the checkpoint `s` is on disk; if it is still the open CIL, the push work is queued to
//!   the `xfs-cil` workqueue (unbound) unless it is queued already; the caller sleeps on the
//!   iclog's wait queue until the checkpoint's log write completed.
//! * The push (`xlog_cil_push_work()`): closes the checkpoint (the next changes go to
//!   `s + 1`), formats its items (`c_cil_push + c_cil_push_per_item × items`) and submits
//!   one log write with `REQ_PREFLUSH | REQ_FUA`.
//! * Its completion (`xlog_bio_end_io()`) queues `xlog_ioend_work()` to the `xfs-log`
//!   workqueue (bound, `WQ_HIGHPRI`) of the completing CPU, which marks the checkpoint done
//!   and wakes every waiter (`wake_up_all(&iclog->ic_force_wait)`: `WF_TTWU`, no
//!   `WF_SYNC`).
//! * Background push: when the open CIL holds [`CIL_SPACE_ITEMS`] items (W§1.9: "push every
//!   8 MiB of logged metadata", **unverified** size, 256 B per item assumed).
//!
//! Deviations (**unverified** simplifications): one checkpoint per push and one log write
//! per checkpoint (no iclog size limit, so the push never waits for iclog space); reads always hit the page cache; dirty pages are written back by `fsync` and by
//! the periodic writeback (`wb_workfn()` every `dirty_writeback_centisecs` = 5 s, for inodes
//! dirtied more than `dirty_expire_centisecs` = 30 s ago; the delayed work is armed when data
//! becomes dirty and re-armed while dirty data remains); no background writeback at
//! `dirty_background_ratio` and no `balance_dirty_pages()` throttling (dbench's dirty data
//! stays far below the thresholds: its files are removed or fsynced within a pass).
//!
//! * Inode allocation and unlink hold the AGI buffer lock of the file's allocation group
//!   (`AgiLock`, a semaphore handed to the first waiter); an unlinked inode is queued for
//!   inactivation on the CPU's inodegc list (`Gc`, `xfs_inodegc_queue()`), whose bound
//!   `xfs-inodegc` delayed work is pushed back to one jiffy at every unlink and flushed
//!   (the unlinker waits) past [`INODEGC_MAX_BACKLOG`] queued inodes.
//!
//! This file keeps the state; exec.rs runs the calls and the kworkers' items.

use crate::blkdev::BlockDev;
use crate::sched::TaskId;
use crate::workqueue::Workqueues;
use std::collections::BTreeMap;

/// The IO path of a kernel with a mounted file system.
#[derive(Debug)]
pub(crate) struct IoState {
    pub wq: Workqueues,
    pub dev: BlockDev,
    pub xfs: Xfs,
}

/// Items in the open CIL that trigger a background push (8 MiB / 256 B).
pub const CIL_SPACE_ITEMS: u64 = 32_768;

/// Bytes of log written per logged item (for the log write's size; **unverified**).
pub const LOG_BYTES_PER_ITEM: u64 = 256;

/// `dirty_writeback_centisecs` (default 500): the period of the flusher's delayed work.
pub const DIRTY_WRITEBACK_NS: u64 = 5_000_000_000;

/// `dirty_expire_centisecs` (default 3000): dirty data older than this is written back by the
/// periodic writeback.
pub const DIRTY_EXPIRE_NS: u64 = 30_000_000_000;

/// Allocation groups of the file system: `mkfs.xfs`'s default for a single-disk file system
/// (4 AGs below 4 TiB; **unverified** for seed 002's 8 GiB partition, whose mkfs options are
/// not published).
pub const AG_COUNT: usize = 4;

/// The AGI buffer lock of one allocation group (`xfs_buf_lock()`: a semaphore, no optimistic
/// spinning; `up()` hands it to the first waiter).
#[derive(Debug, Default)]
pub(crate) struct AgiLock {
    pub owner: Option<TaskId>,
    pub waiters: std::collections::VecDeque<TaskId>,
    pub contended: u64,
}

/// `XFS_INODEGC_MAX_BACKLOG` (4 × 64 inodes per chunk): beyond this many queued inodes on a
/// CPU, the unlinking task flushes the inodegc work and waits for it.
pub const INODEGC_MAX_BACKLOG: u32 = 256;

/// One CPU's inodegc queue (`struct xfs_inodegc`).
#[derive(Debug, Default, Clone)]
pub(crate) struct Gc {
    /// Inodes queued (`gc->items`).
    pub items: u32,
    /// Generation of the delayed work's timer: a timer event of an older one is stale.
    pub timer_gen: u32,
    pub timer_armed: bool,
    /// The work is on the pool's worklist (not started).
    pub queued: bool,
    /// The worker is running it.
    pub running: bool,
    /// Completed runs.
    pub runs_done: u64,
    /// Tasks in `flush_delayed_work()`: (task, run they wait for).
    pub flush_waiters: Vec<(TaskId, u64)>,
}

/// One file of one process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Inode {
    /// Dirty page-cache bytes not yet written back.
    pub dirty: u64,
    /// When the inode became dirty (`inode->dirtied_when`), valid while `dirty > 0`.
    pub dirtied_at: u64,
    /// CIL sequence of the last logged change (0: nothing logged).
    pub seq: u64,
}

/// The mounted file system.
#[derive(Debug)]
pub(crate) struct Xfs {
    /// Sequence of the open checkpoint (the CIL collecting changes).
    pub cil_seq: u64,
    /// Items in the open checkpoint.
    pub cil_items: u64,
    /// The push work is queued (or running and not yet past closing the checkpoint).
    pub push_queued: bool,
    /// Highest checkpoint whose log write and those of all earlier checkpoints have
    /// completed (iclogs complete in log order: `xlog_state_do_callback()` walks the ring).
    pub done_seq: u64,
    /// Checkpoints whose log write completed before an earlier one's.
    pub done_early: std::collections::BTreeSet<u64>,
    /// Tasks sleeping in a log force: (task, checkpoint it waits for).
    pub waiters: Vec<(TaskId, u64)>,
    /// Files by (tgid, file number).
    pub inodes: BTreeMap<(i32, u32), Inode>,
    pub pushes: u64,
    pub forces_waited: u64,
    /// The flusher's delayed work is armed (`wb->dwork` pending).
    pub wb_armed: bool,
    /// The AGI buffer locks, one per allocation group.
    pub agi: Vec<AgiLock>,
    /// Per-CPU inodegc queues (sized by the mount).
    pub gc: Vec<Gc>,
}

impl Default for Xfs {
    fn default() -> Self {
        Xfs {
            cil_seq: 1,
            cil_items: 0,
            push_queued: false,
            done_seq: 0,
            done_early: Default::default(),
            waiters: Vec::new(),
            inodes: BTreeMap::new(),
            pushes: 0,
            forces_waited: 0,
            wb_armed: false,
            agi: (0..AG_COUNT).map(|_| AgiLock::default()).collect(),
            gc: Vec::new(),
        }
    }
}

/// What a log force must do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Force {
    /// The checkpoint is on disk.
    Done,
    /// Wait for checkpoint `seq`; `push`: queue the push work first.
    Wait { seq: u64, push: bool },
}

impl Xfs {
    /// Logs `items` changes of file `key` in the open checkpoint. Returns true when the CIL
    /// has grown past its background push threshold and the push must be queued.
    pub fn log_change(&mut self, key: (i32, u32), items: u64) -> bool {
        self.cil_items += items;
        self.inodes.entry(key).or_default().seq = self.cil_seq;
        self.need_background_push()
    }

    /// Logs directory-level changes (no file of the caller keeps them).
    pub fn log_items(&mut self, items: u64) -> bool {
        self.cil_items += items;
        self.need_background_push()
    }

    fn need_background_push(&mut self) -> bool {
        if self.cil_items >= CIL_SPACE_ITEMS && !self.push_queued {
            self.push_queued = true;
            return true;
        }
        false
    }

    /// A write of `bytes` into the page cache of `key` at `now`. Returns true when the
    /// flusher's delayed work must be armed (`__mark_inode_dirty()` → `wb_wakeup_delayed()`
    /// when it is not pending).
    pub fn dirty(&mut self, key: (i32, u32), bytes: u64, now: u64) -> bool {
        let i = self.inodes.entry(key).or_default();
        if i.dirty == 0 {
            i.dirtied_at = now;
        }
        i.dirty += bytes;
        if self.wb_armed {
            return false;
        }
        self.wb_armed = true;
        true
    }

    /// `wb_workfn()` → `wb_check_old_data_flush()`: takes the dirty bytes of every inode
    /// dirtied at least `DIRTY_EXPIRE_NS` before `now` (in key order); returns whether dirty
    /// data remains (then the delayed work is armed again).
    pub fn kupdate(&mut self, now: u64, out: &mut Vec<((i32, u32), u64)>) -> bool {
        self.wb_armed = false;
        let mut left = false;
        for (k, i) in self.inodes.iter_mut() {
            if i.dirty == 0 {
                continue;
            }
            if i.dirtied_at + DIRTY_EXPIRE_NS <= now {
                out.push((*k, std::mem::take(&mut i.dirty)));
            } else {
                left = true;
            }
        }
        if left {
            self.wb_armed = true;
        }
        left
    }

    /// Takes the dirty bytes of `key` for writeback.
    pub fn take_dirty(&mut self, key: (i32, u32)) -> u64 {
        self.inodes
            .get_mut(&key)
            .map_or(0, |i| std::mem::take(&mut i.dirty))
    }

    /// `unlink()` of `key`: its page cache goes away.
    pub fn remove(&mut self, key: (i32, u32)) {
        self.inodes.remove(&key);
    }

    /// `xfs_log_force_seq()` for file `key` by `t`: what to do, and the waiter recorded.
    pub fn force(&mut self, t: TaskId, key: (i32, u32)) -> Force {
        let seq = self.inodes.get(&key).map_or(0, |i| i.seq);
        if seq == 0 || self.done_seq >= seq {
            return Force::Done;
        }
        let push = seq >= self.cil_seq && !self.push_queued;
        if push {
            self.push_queued = true;
        }
        self.waiters.push((t, seq));
        self.forces_waited += 1;
        Force::Wait { seq, push }
    }

    /// Whether `t`'s force (for checkpoint `seq`) is satisfied.
    pub fn forced(&self, seq: u64) -> bool {
        self.done_seq >= seq
    }

    /// The allocation group of the files of process `tgid`: XFS spreads new directories over
    /// the AGs in turn and allocates a file's inode near its directory, so each dbench
    /// client's tree (`clients/clientN`) lives in one AG (**unverified**: by tgid, as the
    /// clients are created in order).
    pub fn ag_of(tgid: i32) -> usize {
        tgid.rem_euclid(AG_COUNT as i32) as usize
    }

    /// `down()` of AG `ag`'s AGI buffer lock by `t`: true if taken, false if `t` must sleep
    /// (it is queued and owns the lock when woken).
    pub fn agi_lock(&mut self, ag: usize, t: TaskId) -> bool {
        let l = &mut self.agi[ag];
        if l.owner.is_none() || l.owner == Some(t) {
            l.owner = Some(t);
            return true;
        }
        l.contended += 1;
        l.waiters.push_back(t);
        false
    }

    /// `up()`: hands the lock to the first waiter, returned to be woken.
    pub fn agi_unlock(&mut self, ag: usize) -> Option<TaskId> {
        let l = &mut self.agi[ag];
        l.owner = l.waiters.pop_front();
        l.owner
    }

    /// `xlog_cil_push_work()`: closes the open checkpoint; returns (its sequence, items).
    pub fn push(&mut self) -> (u64, u64) {
        self.push_queued = false;
        let s = (self.cil_seq, self.cil_items);
        self.cil_seq += 1;
        self.cil_items = 0;
        self.pushes += 1;
        s
    }

    /// `xlog_ioend_work()` of checkpoint `seq`: the waiters it satisfies, in the order they
    /// went to sleep. Checkpoints are done in log order: a log write that completes before
    /// an earlier one's is done only with it (its waiters wait for the earlier one).
    pub fn log_done(&mut self, seq: u64, out: &mut Vec<TaskId>) {
        if seq > self.done_seq {
            self.done_early.insert(seq);
        }
        while self.done_early.remove(&(self.done_seq + 1)) {
            self.done_seq += 1;
        }
        let done = self.done_seq;
        let mut i = 0;
        while i < self.waiters.len() {
            if self.waiters[i].1 <= done {
                out.push(self.waiters.remove(i).0);
            } else {
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_force_pushes_the_open_checkpoint_once_and_its_completion_wakes_all_waiters() {
        let mut x = Xfs::default();
        let (a, b) = (TaskId(1), TaskId(2));
        // nothing logged: no wait
        assert_eq!(x.force(a, (1, 0)), Force::Done);
        x.log_change((1, 0), 1);
        x.log_change((2, 0), 2);
        // both files changed in checkpoint 1; the first force queues the push, the second
        // only waits
        assert_eq!(x.force(a, (1, 0)), Force::Wait { seq: 1, push: true });
        assert_eq!(
            x.force(b, (2, 0)),
            Force::Wait {
                seq: 1,
                push: false
            }
        );
        assert_eq!(x.push(), (1, 3));
        // a change after the push goes to checkpoint 2
        x.log_change((1, 1), 1);
        assert_eq!(x.inodes[&(1, 1)].seq, 2);
        let mut woken = Vec::new();
        x.log_done(1, &mut woken);
        assert_eq!(woken, vec![a, b]);
        assert!(x.forced(1) && !x.forced(2));
        assert_eq!(x.force(a, (1, 0)), Force::Done);
    }

    #[test]
    fn the_periodic_writeback_takes_only_expired_inodes() {
        let mut x = Xfs::default();
        let s = 1_000_000_000;
        // the first dirtying arms the delayed work, the next ones do not
        assert!(x.dirty((1, 0), 4096, 0));
        assert!(!x.dirty((1, 1), 100, 10 * s));
        assert!(!x.dirty((1, 0), 4096, 20 * s)); // still dirtied at 0
        let mut out = Vec::new();
        // at 29 s nothing is 30 s old: both stay, the work re-arms
        assert!(x.kupdate(29 * s, &mut out));
        assert!(out.is_empty());
        // at 30 s the first file (8 KiB dirtied since 0) goes, the second (10 s) stays
        assert!(x.kupdate(30 * s, &mut out));
        assert_eq!(out, vec![((1, 0), 8192)]);
        out.clear();
        assert!(!x.kupdate(40 * s, &mut out));
        assert_eq!(out, vec![((1, 1), 100)]);
        assert!(!x.wb_armed);
    }

    #[test]
    fn checkpoints_are_done_in_log_order() {
        let mut x = Xfs::default();
        let (a, b) = (TaskId(1), TaskId(2));
        x.log_change((1, 0), 1);
        assert_eq!(x.force(a, (1, 0)), Force::Wait { seq: 1, push: true });
        assert_eq!(x.push(), (1, 1));
        x.log_change((2, 0), 1);
        assert_eq!(x.force(b, (2, 0)), Force::Wait { seq: 2, push: true });
        assert_eq!(x.push(), (2, 1));
        // checkpoint 2's write completes first: nobody is woken, 2 is not done
        let mut woken = Vec::new();
        x.log_done(2, &mut woken);
        assert!(woken.is_empty());
        assert!(!x.forced(2));
        // checkpoint 1 completes: both are done, both waiters woken in sleep order
        x.log_done(1, &mut woken);
        assert_eq!(woken, vec![a, b]);
        assert_eq!(x.done_seq, 2);
        assert!(x.done_early.is_empty());
    }

    #[test]
    fn the_agi_lock_is_handed_to_waiters_in_order() {
        let mut x = Xfs::default();
        let (a, b, c) = (TaskId(1), TaskId(2), TaskId(3));
        // tgids 1000..1003 go to AGs 0, 1, 2, 3 (1000 = 4 × 250)
        assert_eq!(
            (Xfs::ag_of(1000), Xfs::ag_of(1001), Xfs::ag_of(1004)),
            (0, 1, 0)
        );
        assert!(x.agi_lock(0, a));
        assert!(!x.agi_lock(0, b));
        assert!(!x.agi_lock(0, c));
        assert!(x.agi_lock(1, c)); // another AG is free
        assert_eq!(x.agi_unlock(0), Some(b));
        assert_eq!(x.agi[0].owner, Some(b));
        assert_eq!(x.agi_unlock(0), Some(c));
        assert_eq!(x.agi_unlock(0), None);
        assert_eq!(x.agi[0].owner, None);
        assert_eq!(x.agi[0].contended, 2);
    }

    #[test]
    fn the_cil_pushes_in_the_background_when_full() {
        let mut x = Xfs::default();
        assert!(!x.log_items(CIL_SPACE_ITEMS - 1));
        assert!(x.log_items(1));
        // queued once
        assert!(!x.log_items(1));
    }
}
