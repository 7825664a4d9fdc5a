//! CFS bandwidth control (fair.c's `CONFIG_CFS_BANDWIDTH` section; core.c's `cpu.max`
//! handlers): a task group's global runtime pool (`struct cfs_bandwidth`) refilled by its
//! period hrtimer, handed out in `sched_cfs_bandwidth_slice_us` slices to the group's per-CPU
//! cfs_rqs, and charged from `update_curr`. A cfs_rq that runs out is throttled until the
//! period timer gives it runtime again (`distribute_cfs_runtime`, then fair.rs
//! `unthrottle_cfs_rq`). Two throttle models, per preset:
//! * up to v6.17 (hierarchical): the group entity leaves its parent at once (fair.rs
//!   `throttle_cfs_rq`), enqueues and dequeues below it stop at it;
//! * from v6.18 (task based, e1fad12dcb66): the group stays queued; a task picked below a
//!   throttle gets the throttle task work and leaves the queue for its cfs_rq's limbo list
//!   when it next returns to user space (exec.rs → fair.rs `throttle_cfs_rq_work`), so
//!   kernel work finishes first; the unthrottle enqueues the limbo tasks again.
//!
//! Read from the kernel sources: fair.c / core.c of v6.12 and v6.17 (the hierarchical
//! throttle model, with `h_nr_queued`/`h_nr_runnable`), and the v6.18 series that replaced it
//! with task-based throttling (2cd571245b43, 7fc2d1439247, e1fad12dcb66, eb962f251fbb,
//! 5b726e9bf954) and its v6.18 fix 956dfda6a708 (patches.rs).
//!
//! This file is the bookkeeping layer under fair.rs: it never enqueues or dequeues an entity.
//! What needs the entity walks (throttle, unthrottle, and so the checks that throttle) is in
//! fair.rs; the period and slack timers' handlers are in exec.rs.

use crate::patches::Patch as P;
use crate::sched::*;
use crate::sim::Ev;
use crate::Kernel;

/// kernel: sched.h RUNTIME_INF — no quota (`cpu.max` "max").
pub const RUNTIME_INF: u64 = u64::MAX;
/// kernel: fair.c default_cfs_period() — 100 ms.
pub const DEFAULT_CFS_PERIOD_NS: u64 = 100_000_000;
/// kernel: core.c min_bw_quota_period_us / max_bw_quota_period_us.
pub const MIN_BW_QUOTA_PERIOD_US: u64 = 1_000;
pub const MAX_BW_QUOTA_PERIOD_US: u64 = 1_000_000;
/// kernel: core.c max_bw_runtime_us = MAX_BW = 2^(64 - BW_SHIFT) - 1 µs (BW_SHIFT 20).
pub const MAX_BW_RUNTIME_US: u64 = (1 << 44) - 1;
/// kernel: fair.c min_cfs_rq_runtime — a cfs_rq keeps 1 ms when it returns its slack.
const MIN_CFS_RQ_RUNTIME: i64 = 1_000_000;
/// kernel: fair.c min_bandwidth_expiration — no slack distribution 2 ms before a refresh.
const MIN_BANDWIDTH_EXPIRATION: u64 = 2_000_000;
/// kernel: fair.c cfs_bandwidth_slack_period — the slack timer's delay, 5 ms.
const CFS_BANDWIDTH_SLACK_PERIOD: u64 = 5_000_000;

/// `struct cfs_bandwidth` of a task group (times in ns).
#[derive(Clone, Debug)]
pub struct CfsBandwidth {
    pub period: u64,
    /// RUNTIME_INF = no limit.
    pub quota: u64,
    pub burst: u64,
    /// What is left in the global pool this period.
    pub runtime: u64,
    pub runtime_snap: u64,
    /// No cfs_rq asked for runtime during the last period (the timer may stop).
    pub idle: bool,
    pub period_active: bool,
    pub slack_started: bool,
    /// The period hrtimer: expiry, generation (a stale event is ignored), its CPU.
    pub period_expires: u64,
    pub period_gen: u32,
    pub period_cpu: usize,
    pub slack_gen: u32,
    pub slack_cpu: usize,
    /// `cfs_b->throttled_cfs_rq`, in throttle order (`list_add_tail_rcu`).
    pub throttled_cfs_rq: Vec<CfsRqId>,
    /// cpu.stat counters.
    pub nr_periods: u64,
    pub nr_throttled: u64,
    pub throttled_time: u64,
    pub nr_burst: u64,
    pub burst_time: u64,
}

impl Default for CfsBandwidth {
    fn default() -> Self {
        CfsBandwidth {
            period: DEFAULT_CFS_PERIOD_NS,
            quota: RUNTIME_INF,
            burst: 0,
            runtime: 0,
            runtime_snap: 0,
            idle: false,
            period_active: false,
            slack_started: false,
            period_expires: 0,
            period_gen: 0,
            period_cpu: 0,
            slack_gen: 0,
            slack_cpu: 0,
            throttled_cfs_rq: Vec::new(),
            nr_periods: 0,
            nr_throttled: 0,
            throttled_time: 0,
            nr_burst: 0,
            burst_time: 0,
        }
    }
}

/// A group's `cpu.stat` (cgroup v2; all times in µs): `usage_usec`, `user_usec`,
/// `system_usec` from the rstat side (cgroup/rstat.c), the rest from core.c
/// `cpu_extra_stat_show()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CgroupStat {
    pub usage_usec: u64,
    pub user_usec: u64,
    pub system_usec: u64,
    pub nr_periods: u64,
    pub nr_throttled: u64,
    pub throttled_usec: u64,
    pub nr_bursts: u64,
    pub burst_usec: u64,
}

impl CgroupStat {
    /// One line in the kernel's key order: `usage_usec N user_usec N ...`.
    pub fn line(&self) -> String {
        format!(
            "usage_usec {} user_usec {} system_usec {} nr_periods {} nr_throttled {} throttled_usec {} nr_bursts {} burst_usec {}",
            self.usage_usec,
            self.user_usec,
            self.system_usec,
            self.nr_periods,
            self.nr_throttled,
            self.throttled_usec,
            self.nr_bursts,
            self.burst_usec
        )
    }
}

/// kernel: hrtimer_forward() — move `expires` past `now` by whole `interval`s; the number of
/// intervals moved (0 if `expires` is still ahead).
fn hrtimer_forward(expires: u64, now: u64, interval: u64) -> (u64, u64) {
    if now < expires {
        return (expires, 0);
    }
    let mut orun = 1;
    let mut exp = expires;
    let delta = now - expires;
    if delta >= interval {
        let n = delta / interval;
        exp += n * interval;
        orun = n;
        if exp > now {
            return (exp, orun);
        }
        orun += 1;
    }
    (exp + interval, orun)
}

impl Kernel {
    /// kernel: fair.c cfs_bandwidth_used() — the static key: some group has a quota.
    #[inline]
    pub fn cfs_bandwidth_used(&self) -> bool {
        self.cfs_bandwidth_users > 0
    }

    /// kernel: fair.c sched_cfs_bandwidth_slice() (ns).
    pub(crate) fn sched_cfs_bandwidth_slice(&self) -> u64 {
        self.cfg.sysctl.sched_cfs_bandwidth_slice_us * 1000
    }

    /// kernel: fair.c cfs_rq_throttled()
    #[inline]
    pub fn cfs_rq_throttled(&self, cfs: CfsRqId) -> bool {
        self.cfs[cfs.index()].throttled
    }

    /// kernel: fair.c throttled_hierarchy() — this cfs_rq or one above it is throttled.
    #[inline]
    pub fn throttled_hierarchy(&self, cfs: CfsRqId) -> bool {
        self.cfs_bandwidth_used() && self.cfs[cfs.index()].throttle_count > 0
    }

    /// kernel: fair.c __refill_cfs_bandwidth_runtime() — add a quota to the pool, capped at
    /// quota + burst; a period that used more than its quota counts as a burst.
    pub(crate) fn __refill_cfs_bandwidth_runtime(&mut self, tg: TgId) {
        let b = &mut self.tgs[tg.index()].cfs_bandwidth;
        if b.quota == RUNTIME_INF {
            return;
        }
        b.runtime = b.runtime.saturating_add(b.quota);
        let used_beyond = b.runtime_snap as i128 - b.runtime as i128;
        if used_beyond > 0 {
            b.burst_time += used_beyond as u64;
            b.nr_burst += 1;
        }
        b.runtime = b.runtime.min(b.quota.saturating_add(b.burst));
        b.runtime_snap = b.runtime;
    }

    /// kernel: fair.c start_cfs_bandwidth() — arm the period timer if it is not running; its
    /// grid stays the one it had (hrtimer_forward_now from its last expiry, 0 at first).
    /// Pinned to the CPU executing.
    pub(crate) fn start_cfs_bandwidth(&mut self, tg: TgId) {
        let now = self.now;
        let cpu = self.executing.unwrap_or(0);
        let b = &mut self.tgs[tg.index()].cfs_bandwidth;
        if b.period_active {
            return;
        }
        b.period_active = true;
        b.period_expires = hrtimer_forward(b.period_expires, now, b.period).0;
        b.period_cpu = cpu;
        b.period_gen = b.period_gen.wrapping_add(1);
        let (at, gen) = (b.period_expires, b.period_gen);
        self.push_event(at, Ev::CfsPeriodTimer { tg: tg.0, gen });
    }

    /// The CPU the period timer of `tg` with generation `gen` fires on, if still armed.
    pub(crate) fn cfs_period_timer_cpu(&self, tg: u32, gen: u32) -> Option<usize> {
        let b = &self.tgs.get(tg as usize)?.cfs_bandwidth;
        (b.period_active && b.period_gen == gen).then_some(b.period_cpu)
    }

    /// The CPU the slack timer of `tg` with generation `gen` fires on, if still armed.
    pub(crate) fn cfs_slack_timer_cpu(&self, tg: u32, gen: u32) -> Option<usize> {
        let b = &self.tgs.get(tg as usize)?.cfs_bandwidth;
        (b.slack_started && b.slack_gen == gen).then_some(b.slack_cpu)
    }

    /// kernel: fair.c __assign_cfs_rq_runtime() — move up to `target - runtime_remaining`
    /// from the pool to the cfs_rq; true if it then has runtime left.
    pub(crate) fn __assign_cfs_rq_runtime(&mut self, cfs: CfsRqId, target: u64) -> bool {
        let tg = self.cfs[cfs.index()].tg;
        let remaining = self.cfs[cfs.index()].runtime_remaining;
        let min_amount = (target as i64 - remaining).max(0) as u64;
        let amount = if self.tgs[tg.index()].cfs_bandwidth.quota == RUNTIME_INF {
            min_amount
        } else {
            self.start_cfs_bandwidth(tg);
            let b = &mut self.tgs[tg.index()].cfs_bandwidth;
            if b.runtime > 0 {
                let a = b.runtime.min(min_amount);
                b.runtime -= a;
                b.idle = false;
                a
            } else {
                0
            }
        };
        let c = &mut self.cfs[cfs.index()];
        c.runtime_remaining += amount as i64;
        c.runtime_remaining > 0
    }

    /// kernel: fair.c assign_cfs_rq_runtime() — ask for one bandwidth slice.
    pub(crate) fn assign_cfs_rq_runtime(&mut self, cfs: CfsRqId) -> bool {
        let slice = self.sched_cfs_bandwidth_slice();
        self.__assign_cfs_rq_runtime(cfs, slice)
    }

    /// kernel: fair.c __account_cfs_rq_runtime() — charge `delta`; when the local runtime is
    /// gone, ask the pool for a slice, and if there is none reschedule the running task (the
    /// throttle itself happens in put_prev_entity / pick_task_fair).
    fn __account_cfs_rq_runtime(&mut self, cfs: CfsRqId, delta: u64) {
        let c = &mut self.cfs[cfs.index()];
        c.runtime_remaining -= delta as i64;
        if c.runtime_remaining > 0 || c.throttled {
            return;
        }
        if !self.assign_cfs_rq_runtime(cfs) && self.cfs[cfs.index()].curr.is_some() {
            let cpu = self.cfs[cfs.index()].cpu;
            self.resched_curr(cpu);
        }
    }

    /// kernel: fair.c account_cfs_rq_runtime() (from update_curr, every level).
    #[inline]
    pub(crate) fn account_cfs_rq_runtime(&mut self, cfs: CfsRqId, delta: u64) {
        if !self.cfs_bandwidth_used() || !self.cfs[cfs.index()].runtime_enabled {
            return;
        }
        self.__account_cfs_rq_runtime(cfs, delta);
    }

    /// kernel: fair.c runtime_refresh_within() — the period timer fires within `min_expire`
    /// (or has already expired).
    fn runtime_refresh_within(&self, tg: TgId, min_expire: u64) -> bool {
        let b = &self.tgs[tg.index()].cfs_bandwidth;
        let remaining = b.period_expires as i128 - self.now as i128;
        remaining < min_expire as i128
    }

    /// kernel: fair.c start_cfs_slack_bandwidth() — a deferred distribution of returned
    /// runtime, 5 ms from now, unless a refresh comes first.
    fn start_cfs_slack_bandwidth(&mut self, tg: TgId) {
        if self.runtime_refresh_within(tg, CFS_BANDWIDTH_SLACK_PERIOD + MIN_BANDWIDTH_EXPIRATION) {
            return;
        }
        let cpu = self.executing.unwrap_or(0);
        let b = &mut self.tgs[tg.index()].cfs_bandwidth;
        if b.slack_started {
            return;
        }
        b.slack_started = true;
        b.slack_gen = b.slack_gen.wrapping_add(1);
        b.slack_cpu = cpu;
        let gen = b.slack_gen;
        let at = self.now + CFS_BANDWIDTH_SLACK_PERIOD;
        self.push_event(at, Ev::CfsSlackTimer { tg: tg.0, gen });
    }

    /// kernel: fair.c __return_cfs_rq_runtime() — give back all but 1 ms of the local
    /// runtime; start the slack timer if throttled cfs_rqs could use it.
    fn __return_cfs_rq_runtime(&mut self, cfs: CfsRqId) {
        let slack = self.cfs[cfs.index()].runtime_remaining - MIN_CFS_RQ_RUNTIME;
        if slack <= 0 {
            return;
        }
        let tg = self.cfs[cfs.index()].tg;
        let slice = self.sched_cfs_bandwidth_slice();
        let b = &mut self.tgs[tg.index()].cfs_bandwidth;
        if b.quota != RUNTIME_INF {
            b.runtime += slack as u64;
            if b.runtime > slice && !b.throttled_cfs_rq.is_empty() {
                self.start_cfs_slack_bandwidth(tg);
            }
        }
        self.cfs[cfs.index()].runtime_remaining -= slack;
    }

    /// kernel: fair.c return_cfs_rq_runtime() — on the last dequeue from a cfs_rq.
    pub(crate) fn return_cfs_rq_runtime(&mut self, cfs: CfsRqId) {
        if !self.cfs_bandwidth_used() {
            return;
        }
        let c = &self.cfs[cfs.index()];
        if !c.runtime_enabled || c.nr_queued > 0 {
            return;
        }
        self.__return_cfs_rq_runtime(cfs);
    }

    /// Whether the throttle of `cfs` should happen now: bandwidth is on for it and its
    /// runtime is gone (the first half of kernel fair.c check_cfs_rq_runtime()).
    #[inline]
    pub(crate) fn cfs_rq_runtime_exhausted(&self, cfs: CfsRqId) -> bool {
        if !self.cfs_bandwidth_used() {
            return false;
        }
        let c = &self.cfs[cfs.index()];
        c.runtime_enabled && c.runtime_remaining <= 0
    }

    /// Is `g` the group `anc` or below it?
    pub(crate) fn tg_is_descendant(&self, g: TgId, anc: TgId) -> bool {
        let mut x = Some(g);
        while let Some(y) = x {
            if y == anc {
                return true;
            }
            x = self.tgs[y.index()].parent;
        }
        false
    }

    /// kernel: fair.c walk_tg_tree_from(tg, tg_throttle_down, ...) /
    /// (..., tg_unthrottle_up) on one CPU: `throttle_count` of every cfs_rq at or below `tg`
    /// on `cpu` goes up (throttle) or down (unthrottle). Returns the cfs_rqs whose count
    /// dropped to 0, children before parents (the order of `tg_unthrottle_up`; a group is
    /// created after its parent, so reverse creation order is a post-order).
    /// Deviation: the PELT clock of a throttled cfs_rq is not frozen (`throttled_clock_pelt`)
    /// and the leaf list is not kept; `cpu.stat.local` is not modelled.
    pub(crate) fn tg_throttle_walk(&mut self, tg: TgId, cpu: usize, down: bool) -> Vec<CfsRqId> {
        let mut released = Vec::new();
        for g in (0..self.tgs.len()).rev() {
            let g = TgId::new(g);
            if !self.tg_is_descendant(g, tg) {
                continue;
            }
            let q = self.tgs[g.index()].cfs_rq[cpu];
            let c = &mut self.cfs[q.index()];
            if down {
                c.throttle_count += 1;
            } else {
                c.throttle_count -= 1;
                if c.throttle_count == 0 {
                    released.push(q);
                }
            }
        }
        released
    }

    /// kernel: fair.c record_throttle_clock() (v6.18+, eb962f251fbb) — a task was throttled
    /// at or below `cfs`: its throttled time starts now if it had not.
    pub(crate) fn record_throttle_clock(&mut self, cfs: CfsRqId) {
        let cpu = self.cfs[cfs.index()].cpu;
        let clock = self.rq_clock_task(cpu);
        let c = &mut self.cfs[cfs.index()];
        if c.throttled && c.throttled_clock == 0 {
            c.throttled_clock = clock;
        }
    }

    /// Whether a v6.18+ throttle is task based (e1fad12dcb66).
    #[inline]
    pub(crate) fn task_based_throttle(&self) -> bool {
        self.cfg.has(P::TaskBasedThrottle)
    }

    /// The pool side of throttle_cfs_rq(): ask for 1 ns (the timer may have refilled the pool
    /// meanwhile); if there is none, queue the cfs_rq on the group's throttled list and mark
    /// the hierarchy below it throttled. False: runtime was found, no throttle.
    pub(crate) fn throttle_cfs_rq_begin(&mut self, cfs: CfsRqId) -> bool {
        if self.__assign_cfs_rq_runtime(cfs, 1) {
            return false;
        }
        let (tg, cpu) = (self.cfs[cfs.index()].tg, self.cfs[cfs.index()].cpu);
        self.tgs[tg.index()]
            .cfs_bandwidth
            .throttled_cfs_rq
            .push(cfs);
        self.tg_throttle_walk(tg, cpu, true);
        true
    }

    /// The end of throttle_cfs_rq(): the cfs_rq is throttled; its throttled time starts now
    /// if it has entities (`throttled_clock`; from eb962f251fbb only when a task is throttled,
    /// `record_throttle_clock`).
    pub(crate) fn throttle_cfs_rq_end(&mut self, cfs: CfsRqId) {
        let cpu = self.cfs[cfs.index()].cpu;
        let clock = self.rq_clock_task(cpu);
        let per_task = self.cfg.has(P::ThrottleTimeAccounting);
        let c = &mut self.cfs[cfs.index()];
        c.throttled = true;
        if c.nr_queued > 0 && !per_task {
            c.throttled_clock = clock;
        }
    }

    /// The start of unthrottle_cfs_rq(): clear the throttle, add the throttled time to the
    /// group's `throttled_time`, leave the throttled list and the hierarchy's throttle count.
    /// Returns the cfs_rqs no longer below any throttle (see `tg_throttle_walk`).
    pub(crate) fn unthrottle_cfs_rq_begin(&mut self, cfs: CfsRqId) -> Vec<CfsRqId> {
        let (tg, cpu) = (self.cfs[cfs.index()].tg, self.cfs[cfs.index()].cpu);
        self.cfs[cfs.index()].throttled = false;
        self.update_rq_clock(cpu);
        let clock = self.rq_clock_task(cpu);
        let since = std::mem::take(&mut self.cfs[cfs.index()].throttled_clock);
        let b = &mut self.tgs[tg.index()].cfs_bandwidth;
        if since != 0 {
            b.throttled_time += clock.saturating_sub(since);
        }
        b.throttled_cfs_rq.retain(|&q| q != cfs);
        self.tg_throttle_walk(tg, cpu, false)
    }

    /// The part of enqueue_entity() for the first entity of a throttled cfs_rq: its
    /// throttled time starts now (v6.8+: only time with something queued counts).
    pub(crate) fn throttled_clock_on_enqueue(&mut self, cfs: CfsRqId) {
        let cpu = self.cfs[cfs.index()].cpu;
        let clock = self.rq_clock_task(cpu);
        let c = &mut self.cfs[cfs.index()];
        if c.throttled && c.throttled_clock == 0 {
            c.throttled_clock = clock;
        }
    }

    /// kernel: fair.c distribute_cfs_runtime() — in throttle order, give each throttled
    /// cfs_rq what it needs to get back to 1 ns of runtime, while the pool lasts. Returns
    /// whether some stay throttled; the ones that got enough are appended to `unthrottle`
    /// (the kernel unthrottles local ones after the walk and remote ones by CSD; both happen
    /// after the walk, and a cfs_rq already pending is skipped).
    /// Deviation: the remote unthrottles are not delayed by an IPI.
    fn distribute_cfs_runtime(&mut self, tg: TgId, unthrottle: &mut Vec<CfsRqId>) -> bool {
        let list = self.tgs[tg.index()].cfs_bandwidth.throttled_cfs_rq.clone();
        let mut throttled = false;
        let mut remaining: u64 = 1;
        for cfs in list {
            if remaining == 0 {
                throttled = true;
                break;
            }
            if !self.cfs[cfs.index()].throttled || unthrottle.contains(&cfs) {
                continue;
            }
            let rr = self.cfs[cfs.index()].runtime_remaining;
            self.sched_warn_on(
                rr > 0,
                "distribute_cfs_runtime: throttled with runtime left",
            );
            let b = &mut self.tgs[tg.index()].cfs_bandwidth;
            let runtime = ((1 - rr).max(0) as u64).min(b.runtime);
            b.runtime -= runtime;
            remaining = b.runtime;
            let c = &mut self.cfs[cfs.index()];
            c.runtime_remaining += runtime as i64;
            if c.runtime_remaining > 0 {
                unthrottle.push(cfs);
            } else {
                throttled = true;
            }
        }
        throttled
    }

    /// kernel: fair.c do_sched_cfs_period_timer() — count the periods, refill, and if
    /// cfs_rqs are throttled hand the new runtime out; true = the timer may stop (no quota,
    /// or a whole period without demand).
    fn do_sched_cfs_period_timer(
        &mut self,
        tg: TgId,
        overrun: u64,
        unthrottle: &mut Vec<CfsRqId>,
    ) -> bool {
        if self.tgs[tg.index()].cfs_bandwidth.quota == RUNTIME_INF {
            return true;
        }
        let mut throttled = !self.tgs[tg.index()]
            .cfs_bandwidth
            .throttled_cfs_rq
            .is_empty();
        self.tgs[tg.index()].cfs_bandwidth.nr_periods += overrun;
        self.__refill_cfs_bandwidth_runtime(tg);
        let b = &mut self.tgs[tg.index()].cfs_bandwidth;
        if b.idle && !throttled {
            return true;
        }
        if !throttled {
            b.idle = true;
            return false;
        }
        b.nr_throttled += overrun;
        let mut guard = 0;
        while throttled && self.tgs[tg.index()].cfs_bandwidth.runtime > 0 && guard < 64 {
            let before = unthrottle.len();
            throttled = self.distribute_cfs_runtime(tg, unthrottle);
            if unthrottle.len() == before && throttled {
                break;
            }
            guard += 1;
        }
        self.tgs[tg.index()].cfs_bandwidth.idle = false;
        false
    }

    /// kernel: fair.c sched_cfs_period_timer() — forward the timer past now, run the period
    /// work once per forward, re-arm unless idle. Returns the cfs_rqs to unthrottle.
    /// Deviation: no automatic lengthening of a too-short period (the kernel scales period
    /// and quota up when the callback keeps overrunning).
    pub(crate) fn sched_cfs_period_timer(&mut self, tg: TgId) -> Vec<CfsRqId> {
        let mut unthrottle = Vec::new();
        let mut idle = false;
        loop {
            let now = self.now;
            let b = &mut self.tgs[tg.index()].cfs_bandwidth;
            let (exp, orun) = hrtimer_forward(b.period_expires, now, b.period);
            b.period_expires = exp;
            if orun == 0 {
                break;
            }
            idle = self.do_sched_cfs_period_timer(tg, orun, &mut unthrottle);
        }
        let b = &mut self.tgs[tg.index()].cfs_bandwidth;
        if idle {
            b.period_active = false;
        } else {
            let (at, gen) = (b.period_expires, b.period_gen);
            self.push_event(at, Ev::CfsPeriodTimer { tg: tg.0, gen });
        }
        unthrottle
    }

    /// kernel: fair.c do_sched_cfs_slack_timer() — distribute runtime returned by cfs_rqs
    /// that went idle, unless the period refresh is due within 2 ms. Returns the cfs_rqs to
    /// unthrottle.
    pub(crate) fn do_sched_cfs_slack_timer(&mut self, tg: TgId) -> Vec<CfsRqId> {
        let mut unthrottle = Vec::new();
        self.tgs[tg.index()].cfs_bandwidth.slack_started = false;
        if self.runtime_refresh_within(tg, MIN_BANDWIDTH_EXPIRATION) {
            return unthrottle;
        }
        let slice = self.sched_cfs_bandwidth_slice();
        let b = &self.tgs[tg.index()].cfs_bandwidth;
        if b.quota == RUNTIME_INF || b.runtime <= slice {
            return unthrottle;
        }
        self.distribute_cfs_runtime(tg, &mut unthrottle);
        unthrottle
    }

    /// The pool side of kernel fair.c tg_set_cfs_bandwidth() (ns; quota RUNTIME_INF = no
    /// limit): switch the static key, set period/quota/burst, refill, start the timer, and
    /// reset every per-CPU cfs_rq (`runtime_enabled`, no local runtime). Returns the cfs_rqs
    /// that are throttled and must be unthrottled by the caller (fair.rs).
    pub(crate) fn __tg_set_cfs_bandwidth(
        &mut self,
        tg: TgId,
        period: u64,
        quota: u64,
        burst: u64,
    ) -> Vec<CfsRqId> {
        let enabled = quota != RUNTIME_INF;
        let was = self.tgs[tg.index()].cfs_bandwidth.quota != RUNTIME_INF;
        if enabled && !was {
            self.cfs_bandwidth_users += 1;
        }
        {
            let b = &mut self.tgs[tg.index()].cfs_bandwidth;
            b.period = period;
            b.quota = quota;
            b.burst = burst;
        }
        self.__refill_cfs_bandwidth_runtime(tg);
        if enabled {
            self.start_cfs_bandwidth(tg);
        }
        let mut throttled = Vec::new();
        // 956dfda6a708 (v6.18): 1 ns, so that the unthrottle below is not refused
        let initial = self.cfg.has(P::UnthrottleGrant) as i64;
        for cpu in 0..self.ncpus {
            let q = self.tgs[tg.index()].cfs_rq[cpu];
            self.update_rq_clock(cpu);
            let c = &mut self.cfs[q.index()];
            c.runtime_enabled = enabled;
            c.runtime_remaining = initial;
            if c.throttled {
                throttled.push(q);
            }
        }
        if was && !enabled {
            self.cfs_bandwidth_users -= 1;
        }
        throttled
    }

    /// kernel: core.c tg_set_bandwidth() — the checks of a `cpu.max` / `cpu.max.burst`
    /// write (µs; quota RUNTIME_INF = "max"). Every refusal is EINVAL in the kernel; the
    /// message names the value.
    pub fn tg_check_bandwidth(period_us: u64, quota_us: u64, burst_us: u64) -> Result<(), String> {
        let max_usec = u64::MAX / 1000;
        let inf = quota_us == RUNTIME_INF;
        if period_us > max_usec || (!inf && quota_us > max_usec) || burst_us > max_usec {
            return Err(format!(
                "period {period_us}, quota {quota_us} or burst {burst_us} us does not fit in ns"
            ));
        }
        if quota_us < MIN_BW_QUOTA_PERIOD_US {
            return Err(format!(
                "quota {quota_us} us is below the minimum of {MIN_BW_QUOTA_PERIOD_US} us"
            ));
        }
        if period_us < MIN_BW_QUOTA_PERIOD_US {
            return Err(format!(
                "period {period_us} us is below the minimum of {MIN_BW_QUOTA_PERIOD_US} us"
            ));
        }
        if period_us > MAX_BW_QUOTA_PERIOD_US {
            return Err(format!(
                "period {period_us} us is above the maximum of {MAX_BW_QUOTA_PERIOD_US} us"
            ));
        }
        if !inf && quota_us > MAX_BW_RUNTIME_US {
            return Err(format!(
                "quota {quota_us} us is above the maximum of {MAX_BW_RUNTIME_US} us"
            ));
        }
        if !inf && burst_us > quota_us {
            return Err(format!(
                "burst {burst_us} us is above the quota of {quota_us} us"
            ));
        }
        if !inf && burst_us + quota_us > MAX_BW_RUNTIME_US {
            return Err(format!(
                "burst {burst_us} + quota {quota_us} us is above {MAX_BW_RUNTIME_US} us"
            ));
        }
        Ok(())
    }

    /// `(period_us, quota_us, burst_us)` of a group as `cpu.max` / `cpu.max.burst` show them
    /// (kernel: core.c tg_bandwidth()).
    pub fn tg_bandwidth(&self, tg: TgId) -> (u64, u64, u64) {
        let b = &self.tgs[tg.index()].cfs_bandwidth;
        let quota = if b.quota == RUNTIME_INF {
            RUNTIME_INF
        } else {
            b.quota / 1000
        };
        (b.period / 1000, quota, b.burst / 1000)
    }

    /// A group's `cpu.stat`: usage summed over the group and its descendants (each task's
    /// run time is charged to its own group in update_curr), the user/system split of the
    /// tasks now in the subtree scaled to that usage (`cputime_adjust`), and the bandwidth
    /// counters of the group's own `cfs_bandwidth`.
    /// Deviation: a task moved between groups carries its whole user/system history to the
    /// new one (usage itself is charged where it was spent).
    pub fn tg_cpu_stat(&self, tg: TgId) -> CgroupStat {
        let mut usage = 0u64;
        for g in 0..self.tgs.len() {
            if self.tg_is_descendant(TgId::new(g), tg) {
                usage += self.tgs[g].usage_ns;
            }
        }
        let (mut user, mut sys) = (0u64, 0u64);
        for t in &self.tasks {
            if !t.is_idle_task && self.tg_is_descendant(t.tg, tg) {
                user += t.stats.user_ns;
                sys += t.stats.sys_ns;
            }
        }
        let (u, s) = crate::stats::cputime_adjust(user, sys, usage);
        let b = &self.tgs[tg.index()].cfs_bandwidth;
        CgroupStat {
            usage_usec: usage / 1000,
            user_usec: u / 1000,
            system_usec: s / 1000,
            nr_periods: b.nr_periods,
            nr_throttled: b.nr_throttled,
            throttled_usec: b.throttled_time / 1000,
            nr_bursts: b.nr_burst,
            burst_usec: b.burst_time / 1000,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrtimer_forward_aligns_to_the_grid() {
        // from 0 at t = 0: one interval; at t = 250 with interval 100: 300 after 3 intervals
        assert_eq!(hrtimer_forward(0, 0, 100), (100, 1));
        assert_eq!(hrtimer_forward(0, 250, 100), (300, 3));
        // exactly on the grid: the next point strictly after now
        assert_eq!(hrtimer_forward(100, 300, 100), (400, 3));
        assert_eq!(hrtimer_forward(500, 300, 100), (500, 0));
    }

    #[test]
    fn bandwidth_limits_name_the_value() {
        assert!(Kernel::tg_check_bandwidth(100_000, 50_000, 0).is_ok());
        assert!(Kernel::tg_check_bandwidth(100_000, RUNTIME_INF, 0).is_ok());
        let e = Kernel::tg_check_bandwidth(100_000, 999, 0).unwrap_err();
        assert!(e.contains("999"), "{e}");
        let e = Kernel::tg_check_bandwidth(999, 50_000, 0).unwrap_err();
        assert!(e.contains("999"), "{e}");
        let e = Kernel::tg_check_bandwidth(1_000_001, 50_000, 0).unwrap_err();
        assert!(e.contains("1000001"), "{e}");
        let e = Kernel::tg_check_bandwidth(100_000, 50_000, 50_001).unwrap_err();
        assert!(e.contains("50001"), "{e}");
        assert!(Kernel::tg_check_bandwidth(1_000, 1_000, 1_000).is_ok());
    }
}
