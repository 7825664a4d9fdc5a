//! kernel: rt.c and cpupri.c — the SCHED_FIFO / SCHED_RR class (rt-dl.md §2).
//!
//! - Runqueue keeping: the priority array (one FIFO list per kernel priority, a bitmap of the
//!   non-empty ones), `rt_nr_running`/`rr_nr_running`, `highest_prio.curr/next`, enqueue at the
//!   tail (or the head with `ENQUEUE_HEAD`), a SAVE-without-MOVE requeue keeping the list
//!   position (`move_entity()`), the pick of the highest priority (§2.2, §2.3).
//! - Accounting: `update_curr_rt` charges `se.sum_exec_runtime` from `se.exec_start` on the
//!   runqueue clock, as the fair class does (§2.5).
//! - SCHED_RR time slice at the tick with `sched_rr_timeslice_ms` (§2.4); `sched_yield()` to the
//!   tail of the list; wakeup preemption including the equal-priority check (§2.3).
//! - SMP: cpupri (derived from each runqueue's `highest_prio.curr`, which the kernel mirrors into
//!   it on every change), `find_lowest_rq`, `select_task_rq_rt` (§2.6); the pushable list, the
//!   root domain's `rto_mask` (v6.6's overload rule, or 612f769edd06's), push after a pick and from `task_woken_rt`, pull from `balance_rt`
//!   and the balance callbacks, with RT_PUSH_IPI's irq_work chain or the direct pull (§2.7); one
//!   root domain per `root_domains` entry of the topology, so isolcpus CPUs never exchange RT
//!   tasks with the housekeeping ones (§2.8).
//! - Classic RT throttling (§2.9): per-CPU `rt_time`/`rt_runtime`/`rt_throttled`, the top-level
//!   rt_rq leaving `rq->nr_running` while throttled (`dequeue_top_rt_rq`), the global
//!   `def_rt_bandwidth` period timer, RT_RUNTIME_SHARE borrowing (`balance_runtime`). Active on
//!   kernels without 5f6bd380c7bd, or with it when the platform's kernel has
//!   CONFIG_RT_GROUP_SCHED (then the root group's throttling, same arithmetic, §2.10).
//!
//! - PI boosting (§2.11) through PI futexes (`Op::FutexLockPi`/`FutexUnlockPi`, exec.rs, and
//!   core.rs `rt_mutex_setprio`): `p->prio` is the better of `normal_prio` and the top waiter's.
//!
//! Deviations (documented, not modelled): DL boosting (a DL waiter boosts to RT prio 0);
//! lock stealing (the unlock hands the lock to the top waiter); uclamp/capacity fitness (`rt_task_fits_capacity` is always true, so asymmetric
//! machines place RT tasks as symmetric ones do); migrate_disable; the RT watchdog
//! (RLIMIT_RTTIME); RT PELT averages; the CPUPRI_HIGHER value for CPUs busy with DL work; the
//! period timer's immediate first expiry at `do_start_rt_bandwidth()` (it only anchors the
//! period grid at that instant; its resched of CPUs already running queued RT tasks changes no
//! pick).

use crate::features::Feature as F;
use crate::patches::Patch as P;
use crate::sched::*;
use crate::sim::Ev;
use crate::Kernel;
use schedlab_platform::cpumask::CpuMask;
use schedlab_platform::topology::SD_WAKE_AFFINE;
use std::collections::VecDeque;

/// `MAX_RT_PRIO`: kernel priorities 0..99 belong to the RT class (0 is the highest).
pub const MAX_RT_PRIO: usize = 100;

/// `MAX_RT_PRIO - 1`: `highest_prio.curr/next` of an rt_rq without (pushable) RT tasks.
pub const RT_PRIO_NONE: i32 = MAX_RT_PRIO as i32 - 1;

/// `RUNTIME_INF`.
pub const RUNTIME_INF: u64 = u64::MAX;

/// `RT_MAX_TRIES` of `find_lock_lowest_rq()`.
const RT_MAX_TRIES: u32 = 3;

/// kernel: sched.h `struct sched_rt_entity` (the parts the model needs).
#[derive(Clone, Copy, Debug, Default)]
pub struct SchedRtEntity {
    /// `time_slice` in ticks (SCHED_RR); 0 until first used, then `sched_rr_timeslice` (the
    /// kernel sets it at fork; it is never 0 at rest).
    pub time_slice: u32,
}

/// kernel: sched.h `struct rt_rq` with its `struct rt_prio_array`.
#[derive(Clone, Debug)]
pub struct RtRq {
    /// One FIFO list per kernel priority `p->prio` (0..99).
    pub queue: Vec<VecDeque<TaskId>>,
    /// Bit `prio` set iff `queue[prio]` is non-empty (`sched_find_first_bit`).
    pub bitmap: u128,
    pub rt_nr_running: u32,
    pub rr_nr_running: u32,
    /// `highest_prio.curr`: best queued priority, `RT_PRIO_NONE` if none.
    pub highest_prio_curr: i32,
    /// `highest_prio.next`: best *pushable* priority (v6.7+ rule), `RT_PRIO_NONE` if none.
    pub highest_prio_next: i32,
    /// `pushable_tasks` (a plist): queued, not running, `nr_cpus_allowed > 1`, by priority,
    /// FIFO within one priority.
    pub pushable: Vec<TaskId>,
    /// `overloaded`: mirrored in the root domain's `rto_mask`.
    pub overloaded: bool,
    /// `rt_queued`: the rt_rq's tasks are counted in `rq->nr_running` (false while throttled).
    pub rt_queued: bool,
    pub rt_throttled: bool,
    /// ns of RT execution in the current period.
    pub rt_time: u64,
    /// ns allowed per period (`RUNTIME_INF` without throttling).
    pub rt_runtime: u64,
    /// The current task joined the RT class in place (sched_setscheduler, PI boost) rather
    /// than being picked: it may run on a throttled rt_rq until the next `update_curr_rt`
    /// (the tick) throttles it, as in the kernel. Cleared at the next pick.
    pub curr_joined: bool,
    /// Balance callbacks queued on this rq (`rt_queue_push_tasks`, `rt_queue_pull_task`).
    pub push_pending: bool,
    pub pull_pending: bool,
}

impl Default for RtRq {
    fn default() -> Self {
        RtRq {
            queue: vec![VecDeque::new(); MAX_RT_PRIO],
            bitmap: 0,
            rt_nr_running: 0,
            rr_nr_running: 0,
            highest_prio_curr: RT_PRIO_NONE,
            highest_prio_next: RT_PRIO_NONE,
            pushable: Vec::new(),
            overloaded: false,
            rt_queued: false,
            rt_throttled: false,
            rt_time: 0,
            rt_runtime: RUNTIME_INF,
            curr_joined: false,
            push_pending: false,
            pull_pending: false,
        }
    }
}

/// The RT parts of a `struct root_domain`.
#[derive(Clone, Debug, Default)]
pub struct RtRootDomain {
    pub span: CpuMask,
    /// `rto_mask` (its weight is `rto_count`).
    pub rto_mask: CpuMask,
    pub rto_loop_next: u64,
    pub rto_loop: u64,
    /// `rto_cpu`: the CPU the push irq_work chain visits now (None = -1, no chain).
    pub rto_cpu: Option<usize>,
}

/// Machine-wide RT state: root domains, `def_rt_bandwidth`'s period timer, counters.
#[derive(Clone, Debug, Default)]
pub struct RtState {
    pub rd: Vec<RtRootDomain>,
    /// `rt_period_active` of `def_rt_bandwidth`.
    pub period_active: bool,
    /// Next expiry of the period timer.
    pub period_expires: u64,
    pub period_gen: u32,
    /// CPU the (pinned) period timer fires on.
    pub period_cpu: usize,
    /// Per CPU: `distribute_cpu_mask_prev` of `cpumask_any_and_distribute()`.
    pub distribute_prev: Vec<usize>,
    /// "sched: RT throttling activated" was printed.
    pub throttling_activated: bool,
    pub nr_throttled: u64,
    pub nr_pushed: u64,
    pub nr_pulled: u64,
    pub nr_push_ipis: u64,
}

impl Kernel {
    /// The highest-priority queued RT task of `cpu` that is not running there, with the time
    /// it was last enqueued (for explanations of what held it off).
    pub(crate) fn rt_top_waiting(&self, cpu: usize) -> Option<(TaskId, u64)> {
        let rq = &self.rqs[cpu];
        if rq.rt.rt_nr_running == 0 {
            return None;
        }
        rq.rt
            .queue
            .iter()
            .flatten()
            .find(|&&t| t != rq.curr)
            .map(|&t| {
                (
                    t,
                    self.tasks[t.index()].stats.last_queued.unwrap_or(self.now),
                )
            })
    }
    // ===================================================================== configuration

    /// Called once the root domains are known (after the balance state).
    pub(crate) fn init_rt_state(&mut self) {
        let n = self.ncpus;
        let rds = &self.machine.domains.root_domains;
        let mut rd: Vec<RtRootDomain> = rds
            .iter()
            .map(|m| RtRootDomain {
                span: m.clone(),
                ..Default::default()
            })
            .collect();
        if rd.is_empty() {
            rd.push(RtRootDomain {
                span: CpuMask::first_n(n),
                ..Default::default()
            });
        }
        self.rt = RtState {
            rd,
            distribute_prev: vec![0; n],
            ..Default::default()
        };
        let runtime = self.def_rt_runtime();
        for rq in &mut self.rqs {
            rq.rt.rt_runtime = runtime;
        }
    }

    /// Whether the kernel has classic RT bandwidth control: every kernel without
    /// 5f6bd380c7bd; with it, only the root group's throttling of CONFIG_RT_GROUP_SCHED.
    pub(crate) fn rt_bandwidth_exists(&self) -> bool {
        !self.cfg.has(P::RemoveRtThrottle) || self.machine.rt_group_sched
    }

    /// `rt_bandwidth_enabled()`: `sysctl_sched_rt_runtime >= 0`.
    fn rt_bandwidth_enabled(&self) -> bool {
        self.rt_bandwidth_exists() && self.cfg.sysctl.sched_rt_runtime_us >= 0
    }

    /// `def_rt_bandwidth.rt_runtime` (ns, or `RUNTIME_INF`).
    pub(crate) fn def_rt_runtime(&self) -> u64 {
        if !self.rt_bandwidth_exists() || self.cfg.sysctl.sched_rt_runtime_us < 0 {
            return RUNTIME_INF;
        }
        self.cfg.sysctl.sched_rt_runtime_us as u64 * 1000
    }

    /// `def_rt_bandwidth.rt_period` (ns).
    fn def_rt_period(&self) -> u64 {
        self.cfg.sysctl.sched_rt_period_us * 1000
    }

    /// `sched_rr_timeslice` in ticks: `msecs_to_jiffies(sched_rr_timeslice_ms)` (rounded up),
    /// at least one tick.
    pub(crate) fn sched_rr_timeslice(&self) -> u32 {
        let ms = self.cfg.sysctl.sched_rr_timeslice_ms.max(1) as u64;
        (ms * self.hz as u64).div_ceil(1000).max(1) as u32
    }

    fn rt_prio(&self, p: TaskId) -> usize {
        (self.tasks[p.index()]
            .prio()
            .clamp(0, MAX_RT_PRIO as i32 - 1)) as usize
    }

    /// `on_rt_rq()`: `p` is in its runqueue's priority array.
    fn on_rt_rq(&self, p: TaskId) -> bool {
        let cpu = self.tasks[p.index()].cpu;
        let prio = self.rt_prio(p);
        self.rqs[cpu].rt.queue[prio].contains(&p)
    }

    // ===================================================================== queue

    /// kernel: rt.c enqueue_task_rt() → enqueue_rt_entity(): at the tail of its priority's
    /// list, at the head with ENQUEUE_HEAD, in place for a RESTORE without MOVE; then the
    /// top-level rt_rq re-enters `nr_running` unless throttled, and a movable task that is
    /// not running becomes pushable.
    pub(crate) fn enqueue_task_rt(&mut self, cpu: usize, p: TaskId, flags: u32) {
        let prio = self.rt_prio(p);
        let is_rr = self.tasks[p.index()].policy == Policy::Rr;
        self.dequeue_top_rt_rq(cpu);
        let rt = &mut self.rqs[cpu].rt;
        let keep = (flags & (ENQUEUE_RESTORE | ENQUEUE_MOVE)) == ENQUEUE_RESTORE
            && rt.queue[prio].contains(&p);
        if !keep {
            if flags & ENQUEUE_HEAD != 0 {
                rt.queue[prio].push_front(p);
            } else {
                rt.queue[prio].push_back(p);
            }
            rt.bitmap |= 1u128 << prio;
        }
        rt.rt_nr_running += 1;
        rt.rr_nr_running += is_rr as u32;
        // inc_rt_prio()
        if (prio as i32) < rt.highest_prio_curr {
            rt.highest_prio_curr = prio as i32;
        }
        // inc_rt_group() → start_rt_bandwidth(&def_rt_bandwidth)
        self.start_rt_bandwidth(cpu);
        self.enqueue_top_rt_rq(cpu);
        if self.rqs[cpu].curr != p && self.tasks[p.index()].nr_cpus_allowed > 1 {
            self.enqueue_pushable_task(cpu, p);
        }
        if !self.cfg.has(P::RtPushableOverload) {
            self.update_rt_migration(cpu); // inc_rt_migration()
        }
    }

    /// kernel: rt.c dequeue_task_rt() → update_curr_rt(), dequeue_rt_entity(): a SAVE without
    /// MOVE leaves the entity in its list (its place is kept for the RESTORE).
    pub(crate) fn dequeue_task_rt(&mut self, cpu: usize, p: TaskId, flags: u32) -> bool {
        self.update_curr_rt(cpu);
        let prio = self.rt_prio(p);
        let is_rr = self.tasks[p.index()].policy == Policy::Rr;
        self.dequeue_top_rt_rq(cpu);
        let rt = &mut self.rqs[cpu].rt;
        let keep = (flags & (DEQUEUE_SAVE | DEQUEUE_MOVE)) == DEQUEUE_SAVE;
        if !keep {
            if let Some(i) = rt.queue[prio].iter().position(|&q| q == p) {
                rt.queue[prio].remove(i);
                if rt.queue[prio].is_empty() {
                    rt.bitmap &= !(1u128 << prio);
                }
            }
        }
        rt.rt_nr_running -= 1;
        rt.rr_nr_running -= is_rr as u32;
        // dec_rt_prio()
        if rt.rt_nr_running > 0 {
            if prio as i32 == rt.highest_prio_curr {
                rt.highest_prio_curr = if rt.bitmap == 0 {
                    RT_PRIO_NONE
                } else {
                    rt.bitmap.trailing_zeros() as i32
                };
            }
        } else {
            rt.highest_prio_curr = RT_PRIO_NONE;
        }
        self.enqueue_top_rt_rq(cpu);
        self.dequeue_pushable_task(cpu, p);
        if !self.cfg.has(P::RtPushableOverload) {
            self.update_rt_migration(cpu); // dec_rt_migration()
        }
        true
    }

    /// kernel: rt.c dequeue_top_rt_rq() — the rt_rq's tasks leave `rq->nr_running`.
    fn dequeue_top_rt_rq(&mut self, cpu: usize) {
        if !self.rqs[cpu].rt.rt_queued {
            return;
        }
        let n = self.rqs[cpu].rt.rt_nr_running;
        self.sub_nr_running(cpu, n);
        self.rqs[cpu].rt.rt_queued = false;
    }

    /// kernel: rt.c enqueue_top_rt_rq() — the rt_rq's tasks (re-)enter `rq->nr_running`
    /// unless it is throttled.
    fn enqueue_top_rt_rq(&mut self, cpu: usize) {
        let rt = &self.rqs[cpu].rt;
        if rt.rt_queued || rt.rt_throttled {
            return;
        }
        let n = rt.rt_nr_running;
        if n > 0 {
            self.add_nr_running(cpu, n);
            self.rqs[cpu].rt.rt_queued = true;
        }
    }

    /// kernel: rt.c requeue_task_rt() — move `p` to the head or tail of its list.
    fn requeue_task_rt(&mut self, cpu: usize, p: TaskId, head: bool) {
        let prio = self.rt_prio(p);
        let q = &mut self.rqs[cpu].rt.queue[prio];
        if let Some(i) = q.iter().position(|&x| x == p) {
            q.remove(i);
            if head {
                q.push_front(p);
            } else {
                q.push_back(p);
            }
        }
    }

    /// kernel: rt.c pick_task_rt() → _pick_next_task_rt(): the first task of the highest
    /// non-empty priority, if the rt_rq is not throttled (`sched_rt_runnable()`). The running
    /// RT task stays queued, so it is a candidate too.
    pub(crate) fn pick_task_rt(&self, cpu: usize) -> Option<TaskId> {
        let rt = &self.rqs[cpu].rt;
        if !rt.rt_queued || rt.bitmap == 0 {
            return None;
        }
        let prio = rt.bitmap.trailing_zeros() as usize;
        rt.queue[prio].front().copied()
    }

    /// kernel: rt.c set_next_task_rt() — `exec_start`, off the pushable list; a task picked
    /// by `__schedule()` (`first`) queues the push balance callback when others are pushable.
    pub(crate) fn set_next_task_rt(&mut self, cpu: usize, p: TaskId, first: bool) {
        let now = self.rq_clock_task(cpu);
        let se = self.tasks[p.index()].se;
        self.se[se.index()].exec_start = now;
        self.dequeue_pushable_task(cpu, p);
        self.rqs[cpu].rt.curr_joined = !first;
        if first && !self.rqs[cpu].rt.pushable.is_empty() {
            // rt_queue_push_tasks()
            self.rqs[cpu].rt.push_pending = true;
        }
    }

    /// kernel: rt.c put_prev_task_rt() — account, and a still-queued movable task becomes
    /// pushable.
    pub(crate) fn put_prev_task_rt(&mut self, prev: TaskId) {
        let cpu = self.tasks[prev.index()].cpu;
        self.update_curr_rt(cpu);
        if self.on_rt_rq(prev) && self.tasks[prev.index()].nr_cpus_allowed > 1 {
            self.enqueue_pushable_task(cpu, prev);
        }
    }

    // ===================================================================== accounting

    /// kernel: rt.c update_curr_rt() — `update_curr_common()` (sum_exec_runtime from
    /// exec_start on the task clock), then the RT bandwidth (§2.9).
    pub(crate) fn update_curr_rt(&mut self, cpu: usize) {
        self.update_curr_rt_checked(cpu, true);
    }

    /// The accounting of `update_curr_rt()` alone (`rt_time` included, no throttling
    /// decision): what the simulator's end-of-run flush uses, so that stopping a run at an
    /// arbitrary instant and continuing it throttles at the same tick as an uninterrupted run.
    pub(crate) fn update_curr_rt_flush(&mut self, cpu: usize) {
        self.update_curr_rt_checked(cpu, false);
    }

    fn update_curr_rt_checked(&mut self, cpu: usize, check: bool) {
        let curr = self.rqs[cpu].curr;
        if self.tasks[curr.index()].class != SchedClass::Rt {
            return;
        }
        let now = self.rq_clock_task(cpu);
        let se = self.tasks[curr.index()].se;
        let e = &mut self.se[se.index()];
        if now <= e.exec_start {
            return;
        }
        let delta = now - e.exec_start;
        e.sum_exec_runtime += delta;
        e.exec_start = now;
        if !self.rt_bandwidth_enabled() {
            return;
        }
        if self.rqs[cpu].rt.rt_runtime != RUNTIME_INF {
            self.rqs[cpu].rt.rt_time += delta;
            if !check {
                return;
            }
            let exceeded = self.sched_rt_runtime_exceeded(cpu);
            if exceeded {
                self.resched_curr(cpu);
                self.do_start_rt_bandwidth(cpu);
            }
        }
    }

    /// kernel: rt.c sched_rt_runtime_exceeded() — strict `rt_time > rt_runtime` throttles
    /// the rt_rq (after borrowing with RT_RUNTIME_SHARE); a runtime of a whole period never
    /// throttles.
    fn sched_rt_runtime_exceeded(&mut self, cpu: usize) -> bool {
        if self.rqs[cpu].rt.rt_throttled {
            return true;
        }
        if self.rqs[cpu].rt.rt_runtime >= self.def_rt_period() {
            return false;
        }
        self.balance_runtime(cpu);
        let runtime = self.rqs[cpu].rt.rt_runtime;
        if runtime == RUNTIME_INF {
            return false;
        }
        if self.rqs[cpu].rt.rt_time > runtime {
            if self.def_rt_runtime() != 0 {
                self.rqs[cpu].rt.rt_throttled = true;
                self.rt.throttling_activated = true;
                self.rt.nr_throttled += 1;
            } else {
                self.rqs[cpu].rt.rt_time = 0;
            }
            if self.rqs[cpu].rt.rt_throttled {
                // sched_rt_rq_dequeue()
                self.dequeue_top_rt_rq(cpu);
                return true;
            }
        }
        false
    }

    /// kernel: rt.c balance_runtime() → do_balance_runtime() (RT_RUNTIME_SHARE): borrow
    /// `(rt_runtime - rt_time) / weight` from every other CPU of the root domain, up to a
    /// whole period.
    fn balance_runtime(&mut self, cpu: usize) {
        if !self.cfg.feat(F::RT_RUNTIME_SHARE) {
            return;
        }
        if self.rqs[cpu].rt.rt_time <= self.rqs[cpu].rt.rt_runtime {
            return;
        }
        let period = self.def_rt_period();
        let rd = self.lb.rd_of.get(cpu).copied().unwrap_or(0);
        let span = self.rt.rd[rd].span.clone();
        let weight = span.weight() as u64;
        for i in span.iter() {
            if i == cpu {
                continue;
            }
            let it = &self.rqs[i].rt;
            if it.rt_runtime == RUNTIME_INF {
                continue;
            }
            let diff = it.rt_runtime as i64 - it.rt_time as i64;
            if diff > 0 {
                let mut diff = diff as u64 / weight;
                let mine = self.rqs[cpu].rt.rt_runtime;
                if mine + diff > period {
                    diff = period - mine;
                }
                self.rqs[i].rt.rt_runtime -= diff;
                self.rqs[cpu].rt.rt_runtime += diff;
                if self.rqs[cpu].rt.rt_runtime == period {
                    break;
                }
            }
        }
    }

    /// kernel: rt.c start_rt_bandwidth() (from inc_rt_group() at every RT enqueue).
    fn start_rt_bandwidth(&mut self, cpu: usize) {
        if !self.rt_bandwidth_enabled() || self.def_rt_runtime() == RUNTIME_INF {
            return;
        }
        self.do_start_rt_bandwidth(cpu);
    }

    /// kernel: rt.c do_start_rt_bandwidth() — start the period timer if it is not running,
    /// pinned to the CPU executing; its period grid starts now.
    fn do_start_rt_bandwidth(&mut self, cpu: usize) {
        if self.rt.period_active {
            return;
        }
        self.rt.period_active = true;
        self.rt.period_cpu = self.executing.unwrap_or(cpu);
        self.rt.period_expires = self.now + self.def_rt_period();
        self.rt.period_gen = self.rt.period_gen.wrapping_add(1);
        let gen = self.rt.period_gen;
        self.push_event(self.rt.period_expires, Ev::RtPeriodTimer { gen });
    }

    /// The CPU the period timer of generation `gen` fires on, if it is still armed.
    pub(crate) fn rt_period_timer_cpu(&self, gen: u32) -> Option<usize> {
        (gen == self.rt.period_gen && self.rt.period_active).then_some(self.rt.period_cpu)
    }

    /// kernel: rt.c sched_rt_period_timer() → do_sched_rt_period_timer(): forward the timer
    /// (`overrun` periods), per CPU give back `overrun × rt_runtime` of `rt_time` and
    /// unthrottle an rt_rq back under its runtime; stop after a period without RT activity,
    /// else re-arm. Called in hard-irq context on the timer's CPU (exec.rs).
    pub(crate) fn sched_rt_period_timer(&mut self) {
        let period = self.def_rt_period();
        let mut overrun = 0u64;
        while self.rt.period_expires <= self.now {
            self.rt.period_expires += period;
            overrun += 1;
        }
        let idle = self.do_sched_rt_period_timer(overrun);
        if idle {
            self.rt.period_active = false;
        } else {
            let gen = self.rt.period_gen;
            self.push_event(self.rt.period_expires, Ev::RtPeriodTimer { gen });
        }
    }

    fn do_sched_rt_period_timer(&mut self, overrun: u64) -> bool {
        let mut idle = true;
        let mut throttled = false;
        let def = self.def_rt_runtime();
        let share = self.cfg.feat(F::RT_RUNTIME_SHARE);
        for i in 0..self.ncpus {
            let mut enqueue = false;
            {
                let rt = &mut self.rqs[i].rt;
                if !share && rt.rt_runtime != RUNTIME_INF {
                    rt.rt_runtime = def;
                }
                if rt.rt_time == 0 && rt.rt_nr_running == 0 {
                    continue;
                }
            }
            self.update_rq_clock(i);
            let i_idle = self.cpu_is_idle(i);
            if self.rqs[i].rt.rt_time > 0 {
                if self.rqs[i].rt.rt_throttled {
                    self.balance_runtime(i);
                }
                let rt = &mut self.rqs[i].rt;
                let runtime = rt.rt_runtime;
                let give = overrun.saturating_mul(runtime);
                rt.rt_time -= rt.rt_time.min(give);
                if rt.rt_throttled && rt.rt_time < runtime {
                    rt.rt_throttled = false;
                    enqueue = true;
                    // rq_clock_cancel_skipupdate() on an idle CPU with a woken RT task
                    if rt.rt_nr_running > 0 && i_idle {
                        self.rqs[i].clock_update_flags &= !RQCF_REQ_SKIP;
                    }
                }
                let rt = &self.rqs[i].rt;
                if rt.rt_time > 0 || rt.rt_nr_running > 0 {
                    idle = false;
                }
            } else if self.rqs[i].rt.rt_nr_running > 0 {
                idle = false;
                if !self.rqs[i].rt.rt_throttled {
                    enqueue = true;
                }
            }
            if self.rqs[i].rt.rt_throttled {
                throttled = true;
            }
            if enqueue {
                // sched_rt_rq_enqueue()
                if self.rqs[i].rt.rt_nr_running > 0 {
                    self.enqueue_top_rt_rq(i);
                    self.resched_curr(i);
                }
            }
        }
        if !throttled && (!self.rt_bandwidth_enabled() || def == RUNTIME_INF) {
            return true;
        }
        idle
    }

    // ===================================================================== tick, yield

    /// kernel: rt.c task_tick_rt() — accounting and throttling, then the SCHED_RR slice:
    /// at 0 it is refilled and, unless the task is alone in its list, the task goes to the
    /// tail and the CPU reschedules.
    pub(crate) fn task_tick_rt(&mut self, cpu: usize, curr: TaskId) {
        self.update_curr_rt(cpu);
        if self.tasks[curr.index()].policy != Policy::Rr {
            return;
        }
        let full = self.sched_rr_timeslice();
        let ts = &mut self.tasks[curr.index()].rt.time_slice;
        if *ts == 0 {
            *ts = full;
        }
        *ts -= 1;
        if *ts > 0 {
            return;
        }
        *ts = full;
        let prio = self.rt_prio(curr);
        if self.rqs[cpu].rt.queue[prio].len() > 1 {
            self.requeue_task_rt(cpu, curr, false);
            self.resched_curr(cpu);
        }
    }

    /// kernel: rt.c yield_task_rt() — the current task to the tail of its list.
    pub(crate) fn yield_task_rt(&mut self, cpu: usize) {
        let curr = self.rqs[cpu].curr;
        self.requeue_task_rt(cpu, curr, false);
    }

    /// `sched_rr_get_interval()`: the RR slice in ns, 0 for FIFO.
    pub fn sched_rr_get_interval(&self, p: TaskId) -> u64 {
        if self.tasks[p.index()].policy == Policy::Rr {
            self.sched_rr_timeslice() as u64 * self.tick_nsec
        } else {
            0
        }
    }

    // ===================================================================== preemption

    /// kernel: rt.c wakeup_preempt_rt(): a strictly higher priority (lower `prio`) preempts;
    /// at equal priority, `check_preempt_equal_prio()` — a wakee that cannot go elsewhere
    /// takes the head when the current task could be pushed away.
    pub(crate) fn wakeup_preempt_rt(&mut self, cpu: usize, p: TaskId) {
        let curr = self.rqs[cpu].curr;
        let (pp, cp) = (
            self.tasks[p.index()].prio(),
            self.tasks[curr.index()].prio(),
        );
        if pp < cp {
            self.resched_curr(cpu);
            return;
        }
        if pp == cp && !self.need_resched(cpu) {
            self.check_preempt_equal_prio(cpu, p);
        }
    }

    /// kernel: rt.c check_preempt_equal_prio()
    fn check_preempt_equal_prio(&mut self, cpu: usize, p: TaskId) {
        let curr = self.rqs[cpu].curr;
        if self.tasks[curr.index()].nr_cpus_allowed == 1 || self.cpupri_find(cpu, curr).is_none() {
            return;
        }
        if self.tasks[p.index()].nr_cpus_allowed != 1 && self.cpupri_find(cpu, p).is_some() {
            return;
        }
        self.requeue_task_rt(cpu, p, true);
        self.resched_curr(cpu);
    }

    /// kernel: rt.c task_woken_rt() — a woken RT task that does not preempt is pushed away
    /// when the current task is RT/DL and pinned or not of lower priority.
    pub(crate) fn task_woken_rt(&mut self, cpu: usize, p: TaskId) {
        let curr = self.rqs[cpu].curr;
        let c = &self.tasks[curr.index()];
        let need_to_push = curr != p
            && !self.need_resched(cpu)
            && self.tasks[p.index()].nr_cpus_allowed > 1
            && matches!(c.class, SchedClass::Rt | SchedClass::Dl)
            && (c.nr_cpus_allowed < 2 || c.prio() <= self.tasks[p.index()].prio());
        if need_to_push {
            self.push_rt_tasks(cpu);
        }
    }

    /// kernel: rt.c switched_to_rt() — a task that joined the RT class: if queued and not
    /// running, push when overloaded and preempt a running task of lower priority. An RR
    /// task starts with a full slice (rt-dl.md §8 item 13: the model refills).
    pub(crate) fn switched_to_rt(&mut self, cpu: usize, p: TaskId) {
        if self.tasks[p.index()].policy == Policy::Rr {
            self.tasks[p.index()].rt.time_slice = self.sched_rr_timeslice();
        }
        let curr = self.rqs[cpu].curr;
        if curr == p || self.tasks[p.index()].on_rq != OnRq::Queued {
            return;
        }
        if self.tasks[p.index()].nr_cpus_allowed > 1 && self.rqs[cpu].rt.overloaded {
            self.rqs[cpu].rt.push_pending = true;
        }
        if self.tasks[p.index()].prio() < self.tasks[curr.index()].prio() {
            self.resched_curr(cpu);
        }
    }

    /// kernel: rt.c switched_from_rt() — the last RT task left the class: pull.
    pub(crate) fn switched_from_rt(&mut self, cpu: usize, p: TaskId) {
        if self.tasks[p.index()].on_rq != OnRq::Queued || self.rqs[cpu].rt.rt_nr_running > 0 {
            return;
        }
        self.rqs[cpu].rt.pull_pending = true;
    }

    /// kernel: rt.c prio_changed_rt() — the running task lowered: pull, and reschedule if
    /// a queued task now beats it; a queued task raised above current preempts.
    pub(crate) fn prio_changed_rt(&mut self, cpu: usize, p: TaskId, oldprio: i32) {
        if self.tasks[p.index()].on_rq != OnRq::Queued {
            return;
        }
        let prio = self.tasks[p.index()].prio();
        let curr = self.rqs[cpu].curr;
        if curr == p {
            if oldprio < prio {
                self.rqs[cpu].rt.pull_pending = true;
            }
            if prio > self.rqs[cpu].rt.highest_prio_curr {
                self.resched_curr(cpu);
            }
        } else if prio < self.tasks[curr.index()].prio() {
            self.resched_curr(cpu);
        }
    }

    // ===================================================================== cpupri (cpupri.c)

    /// The cpupri value of `cpu`: `convert_prio(rq->rt.highest_prio.curr)` — 0 without RT
    /// tasks, else the best queued task's user priority (99 - prio).
    pub(crate) fn cpupri_of(&self, cpu: usize) -> i32 {
        let h = self.rqs[cpu].rt.highest_prio_curr;
        if h >= RT_PRIO_NONE {
            0
        } else {
            RT_PRIO_NONE - h
        }
    }

    /// kernel: cpupri.c cpupri_find() — the CPUs of `cpu`'s root domain with the lowest
    /// cpupri value strictly below `p`'s that `p` may run on (None if there are none).
    pub(crate) fn cpupri_find(&self, cpu: usize, p: TaskId) -> Option<CpuMask> {
        let rd = self.lb.rd_of.get(cpu).copied().unwrap_or(0);
        let span = &self.rt.rd[rd].span;
        let task_pri = (RT_PRIO_NONE - self.tasks[p.index()].prio()).max(0);
        let allowed = &self.tasks[p.index()].cpus_allowed;
        let mut best: Option<(i32, CpuMask)> = None;
        for c in span.iter() {
            if !allowed.contains(c) {
                continue;
            }
            let v = self.cpupri_of(c);
            if v >= task_pri {
                continue;
            }
            match &mut best {
                Some((bv, m)) if *bv == v => m.set(c),
                Some((bv, _)) if *bv < v => {}
                _ => best = Some((v, CpuMask::single(c))),
            }
        }
        best.map(|(_, m)| m)
    }

    /// `cpumask_any_and_distribute()` on the CPU executing: the first CPU of `a ∩ b` after
    /// the one it returned last (wrapping), remembered per executing CPU.
    fn cpumask_any_and_distribute(&mut self, a: &CpuMask, b: &CpuMask) -> Option<usize> {
        let exec = self.executing.unwrap_or(0);
        let prev = self.rt.distribute_prev[exec];
        let both = a.and(b);
        let n = self.ncpus;
        let next = (prev + 1..n)
            .chain(0..(prev + 1).min(n))
            .find(|&c| both.contains(c))?;
        self.rt.distribute_prev[exec] = next;
        Some(next)
    }

    /// kernel: rt.c find_lowest_rq() — where `p` would preempt the lowest priority: its own
    /// CPU if in the cpupri mask, else the local CPU or a rotating pick inside the first
    /// SD_WAKE_AFFINE domain that intersects the mask, else anywhere in the mask.
    pub(crate) fn find_lowest_rq(&mut self, p: TaskId, this_cpu: usize) -> Option<usize> {
        if self.tasks[p.index()].nr_cpus_allowed == 1 {
            return None;
        }
        let task_cpu = self.tasks[p.index()].cpu;
        let lowest = self.cpupri_find(task_cpu, p)?;
        if lowest.contains(task_cpu) {
            return Some(task_cpu);
        }
        let this = lowest.contains(this_cpu).then_some(this_cpu);
        let doms: Vec<(u32, CpuMask)> = self
            .machine
            .domains
            .domains(task_cpu)
            .iter()
            .map(|d| (d.flags, d.span.clone()))
            .collect();
        for (flags, span) in doms {
            if flags & SD_WAKE_AFFINE != 0 {
                if let Some(t) = this {
                    if span.contains(t) {
                        return Some(t);
                    }
                }
                if let Some(best) = self.cpumask_any_and_distribute(&lowest, &span) {
                    return Some(best);
                }
            }
        }
        if this.is_some() {
            return this;
        }
        let all = CpuMask::first_n(self.ncpus);
        self.cpumask_any_and_distribute(&lowest, &all)
    }

    /// kernel: rt.c select_task_rq_rt() — a waking/forked RT task stays on its CPU unless
    /// that CPU runs an RT task it cannot preempt (or a pinned one); then the lowest-priority
    /// CPU where it would run at once.
    pub(crate) fn select_task_rq_rt(
        &mut self,
        p: TaskId,
        cpu: usize,
        wake_flags: u32,
        this_cpu: usize,
    ) -> usize {
        if wake_flags & (WF_TTWU | WF_FORK) == 0 {
            return cpu;
        }
        let curr = self.rqs[cpu].curr;
        let c = &self.tasks[curr.index()];
        // rt_task(donor): an RT (or DL, prio < MAX_RT_PRIO) current task
        let test = c.prio() < MAX_RT_PRIO as i32
            && (c.nr_cpus_allowed < 2 || c.prio() <= self.tasks[p.index()].prio());
        if test {
            if let Some(target) = self.find_lowest_rq(p, this_cpu) {
                if self.tasks[p.index()].prio() < self.rqs[target].rt.highest_prio_curr {
                    return target;
                }
            }
        }
        cpu
    }

    // ===================================================================== push / pull

    /// kernel: rt.c enqueue_pushable_task() (v6.7+): into the plist, `highest_prio.next`,
    /// overload.
    fn enqueue_pushable_task(&mut self, cpu: usize, p: TaskId) {
        let prio = self.tasks[p.index()].prio();
        let tasks = &self.tasks;
        let rt = &mut self.rqs[cpu].rt;
        rt.pushable.retain(|&x| x != p);
        let at = rt
            .pushable
            .iter()
            .position(|&x| tasks[x.index()].prio() > prio)
            .unwrap_or(rt.pushable.len());
        rt.pushable.insert(at, p);
        self.update_pushable_state(cpu);
    }

    /// kernel: rt.c dequeue_pushable_task()
    fn dequeue_pushable_task(&mut self, cpu: usize, p: TaskId) {
        let rt = &mut self.rqs[cpu].rt;
        if let Some(i) = rt.pushable.iter().position(|&x| x == p) {
            rt.pushable.remove(i);
            self.update_pushable_state(cpu);
        }
    }

    /// `highest_prio.next` from the pushable list, then the overload state.
    fn update_pushable_state(&mut self, cpu: usize) {
        let next = self.rqs[cpu]
            .rt
            .pushable
            .first()
            .map(|&t| self.tasks[t.index()].prio())
            .unwrap_or(RT_PRIO_NONE);
        self.rqs[cpu].rt.highest_prio_next = next;
        self.update_rt_migration(cpu);
    }

    /// Whether the rt_rq counts as overloaded: with 612f769edd06 (v6.7) while its pushable
    /// list is non-empty; before, `update_rt_migration()`'s rule: a queued task (the running
    /// one included) may migrate (`rt_nr_migratory`) and more than one is queued
    /// (`rt_nr_total`).
    pub(crate) fn rt_overloaded_rule(&self, cpu: usize) -> bool {
        let rt = &self.rqs[cpu].rt;
        if self.cfg.has(P::RtPushableOverload) {
            return !rt.pushable.is_empty();
        }
        let migratory = rt
            .queue
            .iter()
            .flatten()
            .any(|&t| self.tasks[t.index()].nr_cpus_allowed > 1);
        migratory && rt.rt_nr_running > 1
    }

    /// `rt_set_overload()` / `rt_clear_overload()` when the rule's answer changed.
    fn update_rt_migration(&mut self, cpu: usize) {
        let over = self.rt_overloaded_rule(cpu);
        if over != self.rqs[cpu].rt.overloaded {
            self.rqs[cpu].rt.overloaded = over;
            let rd = self.lb.rd_of.get(cpu).copied().unwrap_or(0);
            if over {
                self.rt.rd[rd].rto_mask.set(cpu);
            } else {
                self.rt.rd[rd].rto_mask.clear(cpu);
            }
        }
    }

    /// Moves the queued, not running RT task `p` from `src` to `dst` and reschedules `dst`
    /// (`move_queued_task_locked()` + `resched_curr()`).
    fn rt_move_task(&mut self, src: usize, dst: usize, p: TaskId) {
        self.update_rq_clock(src);
        self.update_rq_clock(dst);
        self.tasks[p.index()].on_rq = OnRq::Migrating;
        self.dequeue_task(src, p, DEQUEUE_NOCLOCK);
        self.set_task_cpu(p, dst, src);
        self.enqueue_task(dst, p, ENQUEUE_NOCLOCK);
        self.tasks[p.index()].on_rq = OnRq::Queued;
        self.resched_curr(dst);
    }

    /// kernel: rt.c push_rt_task() — the best pushable task goes to the lowest-priority CPU
    /// that it would preempt (`find_lock_lowest_rq`); if it beats the current task here,
    /// reschedule here instead. True if a task moved.
    fn push_rt_task(&mut self, cpu: usize) -> bool {
        if !self.rqs[cpu].rt.overloaded {
            return false;
        }
        let Some(&next) = self.rqs[cpu].rt.pushable.first() else {
            return false;
        };
        let curr = self.rqs[cpu].curr;
        if next == curr {
            self.sched_warn_on(true, "push_rt_task: the pushable task is running");
            return false;
        }
        if self.tasks[next.index()].prio() < self.tasks[curr.index()].prio() {
            self.resched_curr(cpu);
            return false;
        }
        let Some(dst) = self.find_lock_lowest_rq(next, cpu) else {
            return false;
        };
        self.rt_move_task(cpu, dst, next);
        self.rt.nr_pushed += 1;
        true
    }

    /// kernel: rt.c find_lock_lowest_rq() — `find_lowest_rq()` (from the CPU executing)
    /// while the target still has no task of `p`'s priority or higher (no lock races in the
    /// model: one try decides).
    fn find_lock_lowest_rq(&mut self, p: TaskId, cpu: usize) -> Option<usize> {
        let this_cpu = self.executing.unwrap_or(cpu);
        for _ in 0..RT_MAX_TRIES {
            let dst = self.find_lowest_rq(p, this_cpu)?;
            if dst == cpu {
                return None;
            }
            if self.rqs[dst].rt.highest_prio_curr <= self.tasks[p.index()].prio() {
                return None;
            }
            if self.tasks[p.index()].cpus_allowed.contains(dst) {
                return Some(dst);
            }
        }
        None
    }

    /// kernel: rt.c push_rt_tasks()
    pub(crate) fn push_rt_tasks(&mut self, cpu: usize) {
        while self.push_rt_task(cpu) {}
    }

    /// kernel: rt.c balance_rt() — before a pick, when `prev` (RT or above) left the RT queue and this
    /// rq's best RT priority is now worse than prev's, pull. True if the RT class (or a
    /// higher one) has work.
    pub(crate) fn balance_rt(&mut self, cpu: usize, prev: TaskId) -> bool {
        // prev is RT, DL or stop (the walk starts at prev's class); a non-RT prev is never
        // on the RT queue
        if !self.on_rt_rq(prev)
            && self.rqs[cpu].rt.highest_prio_curr > self.tasks[prev.index()].prio()
        {
            self.pull_rt_task(cpu);
        }
        self.pick_task_rt(cpu).is_some()
    }

    /// kernel: rt.c pull_rt_task() — with RT_PUSH_IPI start the root domain's irq_work push
    /// chain; without it, take from every other overloaded CPU the best pushable task that
    /// beats this rq's best and does not beat its own CPU's current task.
    pub(crate) fn pull_rt_task(&mut self, this: usize) {
        let rd = self.lb.rd_of.get(this).copied().unwrap_or(0);
        let count = self.rt.rd[rd].rto_mask.weight();
        if count == 0 {
            return;
        }
        if count == 1 && self.rt.rd[rd].rto_mask.contains(this) {
            return;
        }
        if self.cfg.feat(F::RT_PUSH_IPI) {
            self.tell_cpu_to_push(this);
            return;
        }
        let mut resched = false;
        let cpus: Vec<usize> = self.rt.rd[rd].rto_mask.iter().collect();
        for src in cpus {
            if src == this {
                continue;
            }
            if self.rqs[src].rt.highest_prio_next >= self.rqs[this].rt.highest_prio_curr {
                continue;
            }
            // pick_highest_pushable_task(src, this)
            let p = self.rqs[src]
                .rt
                .pushable
                .iter()
                .copied()
                .find(|&t| self.tasks[t.index()].cpus_allowed.contains(this));
            let Some(p) = p else { continue };
            if self.tasks[p.index()].prio() < self.rqs[this].rt.highest_prio_curr {
                let src_curr = self.rqs[src].curr;
                if self.tasks[p.index()].prio() < self.tasks[src_curr.index()].prio() {
                    continue;
                }
                self.update_rq_clock(src);
                self.update_rq_clock(this);
                self.tasks[p.index()].on_rq = OnRq::Migrating;
                self.dequeue_task(src, p, DEQUEUE_NOCLOCK);
                self.set_task_cpu(p, this, src);
                self.enqueue_task(this, p, ENQUEUE_NOCLOCK);
                self.tasks[p.index()].on_rq = OnRq::Queued;
                self.rt.nr_pulled += 1;
                resched = true;
            }
        }
        if resched {
            self.resched_curr(this);
        }
    }

    /// kernel: rt.c tell_cpu_to_push() — count the request; start the irq_work chain at the
    /// first overloaded CPU unless one is already running (it will rescan).
    fn tell_cpu_to_push(&mut self, this: usize) {
        let rd = self.lb.rd_of.get(this).copied().unwrap_or(0);
        self.rt.rd[rd].rto_loop_next += 1;
        if self.rt.rd[rd].rto_cpu.is_some() {
            return;
        }
        if let Some(cpu) = self.rto_next_cpu(rd) {
            self.queue_rto_push_work(this, cpu);
        }
    }

    /// kernel: rt.c rto_next_cpu() — the next CPU of `rto_mask` after `rto_cpu`; at the end,
    /// one more pass if requests arrived since the chain started.
    fn rto_next_cpu(&mut self, rd: usize) -> Option<usize> {
        loop {
            let r = &mut self.rt.rd[rd];
            let next = match r.rto_cpu {
                None => r.rto_mask.first(),
                Some(c) => r.rto_mask.next_after(c),
            };
            r.rto_cpu = next;
            if next.is_some() {
                return next;
            }
            if r.rto_loop == r.rto_loop_next {
                return None;
            }
            r.rto_loop = r.rto_loop_next;
        }
    }

    /// `irq_work_queue_on(&rd->rto_push_work, cpu)` from `from`: an IPI (its latency from the
    /// platform), or a self-interrupt at once.
    fn queue_rto_push_work(&mut self, from: usize, cpu: usize) {
        let lat = if cpu == from {
            0
        } else {
            self.cost(cpu, |c| c.lat_ipi.0)
        };
        self.rt.nr_push_ipis += 1;
        self.push_event(self.now + lat, Ev::RtPushWork { cpu: cpu as u32 });
    }

    /// kernel: rt.c rto_push_irq_work_func() — in hard-irq context on `cpu` (exec.rs): push
    /// this CPU's pushable tasks, then forward the work to the next overloaded CPU.
    pub(crate) fn rto_push_irq_work_func(&mut self, cpu: usize) {
        if !self.rqs[cpu].rt.pushable.is_empty() {
            self.update_rq_clock(cpu);
            while self.push_rt_task(cpu) {}
        }
        let rd = self.lb.rd_of.get(cpu).copied().unwrap_or(0);
        if let Some(next) = self.rto_next_cpu(rd) {
            self.queue_rto_push_work(cpu, next);
        }
    }

    /// The balance callbacks queued on `cpu` (`__balance_callbacks()` at the end of
    /// `__schedule()`): `push_rt_tasks`, `pull_rt_task`.
    pub(crate) fn rt_balance_callbacks(&mut self, cpu: usize) {
        if std::mem::take(&mut self.rqs[cpu].rt.push_pending) {
            self.push_rt_tasks(cpu);
        }
        if std::mem::take(&mut self.rqs[cpu].rt.pull_pending) {
            self.pull_rt_task(cpu);
        }
    }

    // ===================================================================== invariants

    /// The RT class's checked invariants on `cpu`: counts, bitmap, `highest_prio`, the
    /// pushable list and overload, a throttled rt_rq out of `nr_running` and not running.
    pub(crate) fn rt_invariant_errors(&self, cpu: usize) -> Result<(), String> {
        let rt = &self.rqs[cpu].rt;
        let mut n = 0u32;
        let mut rr = 0u32;
        for (prio, q) in rt.queue.iter().enumerate() {
            let bit = rt.bitmap & (1u128 << prio) != 0;
            if bit == q.is_empty() {
                return Err(format!(
                    "cpu {cpu}: rt bitmap bit {prio} is {bit} with {} tasks",
                    q.len()
                ));
            }
            for &t in q {
                let task = &self.tasks[t.index()];
                if task.class != SchedClass::Rt || task.prio() != prio as i32 || task.cpu != cpu {
                    return Err(format!(
                        "cpu {cpu}: task {} in rt list {prio} has class {:?} prio {} cpu {}",
                        task.comm,
                        task.class,
                        task.prio(),
                        task.cpu
                    ));
                }
                n += 1;
                rr += (task.policy == Policy::Rr) as u32;
            }
        }
        if n != rt.rt_nr_running || rr != rt.rr_nr_running {
            return Err(format!(
                "cpu {cpu}: rt_nr_running {} rr_nr_running {} but the lists hold {n} ({rr} RR)",
                rt.rt_nr_running, rt.rr_nr_running
            ));
        }
        let best = if rt.bitmap == 0 {
            RT_PRIO_NONE
        } else {
            rt.bitmap.trailing_zeros() as i32
        };
        if best != rt.highest_prio_curr {
            return Err(format!(
                "cpu {cpu}: highest_prio.curr {} but the best queued prio is {best}",
                rt.highest_prio_curr
            ));
        }
        // pushable: exactly the queued, not running tasks allowed elsewhere, by priority
        let curr = self.rqs[cpu].curr;
        let mut want: Vec<TaskId> = rt
            .queue
            .iter()
            .flatten()
            .copied()
            .filter(|&t| t != curr && self.tasks[t.index()].nr_cpus_allowed > 1)
            .collect();
        let mut have = rt.pushable.clone();
        want.sort();
        have.sort();
        if want != have {
            return Err(format!(
                "cpu {cpu}: pushable list {:?}, expected {want:?}",
                rt.pushable
            ));
        }
        if rt
            .pushable
            .windows(2)
            .any(|w| self.tasks[w[0].index()].prio() > self.tasks[w[1].index()].prio())
        {
            return Err(format!("cpu {cpu}: pushable list out of priority order"));
        }
        let next = rt
            .pushable
            .first()
            .map(|&t| self.tasks[t.index()].prio())
            .unwrap_or(RT_PRIO_NONE);
        let rd = self.lb.rd_of.get(cpu).copied().unwrap_or(0);
        if rt.overloaded != self.rt_overloaded_rule(cpu)
            || self.rt.rd[rd].rto_mask.contains(cpu) != rt.overloaded
            || rt.highest_prio_next != next
        {
            return Err(format!(
                "cpu {cpu}: overloaded {} rto_mask {} highest_prio.next {} with {} pushable",
                rt.overloaded,
                self.rt.rd[rd].rto_mask.contains(cpu),
                rt.highest_prio_next,
                rt.pushable.len()
            ));
        }
        if rt.rt_queued != (!rt.rt_throttled && rt.rt_nr_running > 0) {
            return Err(format!(
                "cpu {cpu}: rt_queued {} with rt_throttled {} and {} RT tasks",
                rt.rt_queued, rt.rt_throttled, rt.rt_nr_running
            ));
        }
        let c = &self.tasks[curr.index()];
        if rt.rt_throttled
            && c.class == SchedClass::Rt
            && self.rqs[cpu].resched != Resched::Full
            && !rt.curr_joined
        {
            return Err(format!(
                "cpu {cpu}: throttled rt_rq but RT task {} runs with no resched pending",
                c.comm
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! rt-dl.md §7 vectors and the RT class's rules on ideal machines (zero costs, no jitter;
    //! ticks at multiples of the tick period, the one at t = 0 charging nothing). Every test
    //! runs with the invariants checked after each event (`strict`).
    use super::*;
    use crate::presets::{KernelConfig, PreemptModel};
    use crate::sim::MachineDesc;
    use crate::syscalls::{Op, Program, TaskAttrs};

    const MS: u64 = 1_000_000;
    const FOREVER: u64 = 1_000_000 * MS;

    use crate::exec::tests::{script, Log, Script};
    fn hog() -> Box<Script> {
        script(|_, _, _| Some(Op::Run(MS)))
    }
    /// Runs the given operations in order (logging the time each starts under `name/i`),
    /// then sleeps forever.
    fn ops(log: &Log, name: &str, list: Vec<Op>) -> Box<Script> {
        let (log, name) = (log.clone(), name.to_string());
        let mut list: std::collections::VecDeque<Op> = list.into();
        script(move |i, cx, _| {
            log.borrow_mut().push((format!("{name}/{i}"), cx.now()));
            Some(list.pop_front().unwrap_or(Op::Sleep(FOREVER)))
        })
    }
    fn at(log: &Log, what: &str) -> u64 {
        log.borrow()
            .iter()
            .find(|(w, _)| w == what)
            .unwrap_or_else(|| panic!("{what} not in {:?}", log.borrow()))
            .1
    }

    fn kernel_m(spec: &str, m: MachineDesc) -> Kernel {
        let cfg = KernelConfig::parse(&format!("{spec} NO_SIM_JITTER")).unwrap();
        let mut k = Kernel::new(cfg, m, 1).unwrap();
        k.strict = true;
        k.check_invariants = true;
        k
    }
    fn kernel(spec: &str, ncpus: usize, hz: u32) -> Kernel {
        kernel_m(spec, MachineDesc::ideal(ncpus, hz, PreemptModel::Full))
    }

    /// Creates and starts (as a fork from outside) a task; `cpus` pins it.
    fn spawn(
        k: &mut Kernel,
        name: &str,
        policy: Policy,
        prio: u32,
        cpus: Option<&str>,
        prog: Box<dyn Program>,
    ) -> TaskId {
        let attrs = TaskAttrs {
            comm: Some(name.into()),
            policy: Some(policy),
            rt_priority: (prio > 0).then_some(prio),
            cpus: cpus.map(|c| CpuMask::parse_cpulist(c).unwrap()),
            ..Default::default()
        };
        let t = k.create_task(prog, &attrs, None, false);
        k.start_task(t);
        t
    }
    fn curr(k: &Kernel, cpu: usize) -> &str {
        &k.tasks[k.rqs[cpu].curr.index()].comm
    }
    fn runtime(k: &Kernel, t: TaskId) -> u64 {
        k.se[k.tasks[t.index()].se.index()].sum_exec_runtime
    }
    /// `curr` of `cpu` just after `t` (every event at `t` processed).
    fn curr_at(k: &mut Kernel, cpu: usize, t: u64) -> String {
        k.run_until(t + 1);
        curr(k, cpu).to_string()
    }

    // ------------------------------------------------------------------ accounting

    /// update_curr_rt charges `se.sum_exec_runtime` (what /proc/PID/schedstat shows): a FIFO
    /// hog alone for 10 ms on v6.18 (no throttling) has run exactly 10 ms, and its policy's
    /// slice interval is 0 (FIFO) while an RR task's is 100 ms (HZ 1000: 100 ticks).
    #[test]
    fn rt_runtime_is_accounted() {
        let mut k = kernel("v6.18", 1, 1000);
        let a = spawn(&mut k, "a", Policy::Fifo, 50, None, hog());
        let b = spawn(&mut k, "b", Policy::Rr, 1, None, hog());
        k.run_until(10 * MS);
        assert_eq!(runtime(&k, a), 10 * MS);
        assert_eq!(runtime(&k, b), 0);
        assert_eq!(k.sched_rr_get_interval(a), 0);
        assert_eq!(k.sched_rr_get_interval(b), 100 * MS);
    }

    // ------------------------------------------------------------------ 7.2, 7.3, 7.6, 7.7

    /// 7.2 (v6.6): RT hog (FIFO 50) + fair hog from t = 0 on one CPU, HZ 1000. The window
    /// starts at the first RT enqueue (0); the first tick with rt_time > 950 ms is 951 →
    /// throttled, fair runs [951, 1000); the period timer at 1000 leaves rt_time 951 - 950 =
    /// 1 and unthrottles; RT [1000, 1950) (tick 1950: 1 + 950 = 951 > 950), fair [1950, 2000).
    #[test]
    fn v7_2_classic_throttling_v6_6() {
        let mut k = kernel("v6.6", 1, 1000);
        spawn(&mut k, "rt", Policy::Fifo, 50, None, hog());
        spawn(&mut k, "fair", Policy::Normal, 0, None, hog());
        assert_eq!(curr_at(&mut k, 0, 951 * MS - 2), "rt");
        assert_eq!(curr_at(&mut k, 0, 951 * MS), "fair");
        assert!(k.rqs[0].rt.rt_throttled);
        assert_eq!(curr_at(&mut k, 0, 999 * MS), "fair");
        assert_eq!(curr_at(&mut k, 0, 1000 * MS), "rt");
        // 951 - 950, plus the 1 ns the hog has run when curr_at stops at 1000 ms + 1 ns
        assert_eq!(k.rqs[0].rt.rt_time, MS + 1);
        assert_eq!(curr_at(&mut k, 0, 1949 * MS), "rt");
        assert_eq!(curr_at(&mut k, 0, 1950 * MS), "fair");
        assert_eq!(curr_at(&mut k, 0, 2000 * MS), "rt");
        assert!(k.rt.throttling_activated);
        // the shares, on a run not stopped in between (a stop at an arbitrary instant moves
        // a nanosecond between the tasks' accounts)
        let mut k = kernel("v6.6", 1, 1000);
        let rt = spawn(&mut k, "rt", Policy::Fifo, 50, None, hog());
        let fair = spawn(&mut k, "fair", Policy::Normal, 0, None, hog());
        k.run_until(3000 * MS);
        // RT [0,951) + [1000,1950) + [2000,2950) = 951 + 950 + 950; fair 49 + 50 + 50
        assert_eq!(runtime(&k, rt), 2851 * MS);
        assert_eq!(runtime(&k, fair), 149 * MS);
    }

    /// Stopping a run between two ticks does not move the throttling: with a runtime of
    /// 950.5 ms the budget is exceeded from 950.5 ms on, but the check is tick-driven, so the
    /// hog is throttled at the tick at 951 — also when the run is stopped (and its running task
    /// accounted) at 950.7.
    #[test]
    fn a_stop_between_ticks_does_not_throttle_early() {
        let mut k = kernel("v6.6 sched_rt_runtime_us=950500", 1, 1000);
        spawn(&mut k, "rt", Policy::Fifo, 50, None, hog());
        spawn(&mut k, "fair", Policy::Normal, 0, None, hog());
        k.run_until(950_700_000);
        assert_eq!(curr_at(&mut k, 0, 950_800_000), "rt");
        assert!(!k.rqs[0].rt.rt_throttled);
        assert_eq!(curr_at(&mut k, 0, 951 * MS), "fair");
    }

    /// The same 2-CPU RT workload (FIFO and RR hogs, sleepers, pinned and free, pushes and
    /// pulls, v6.6 throttling) gives the same bytes with and without the simulator's run-ahead
    /// shortcut, and twice with the same seed.
    #[test]
    fn rt_runs_are_deterministic_with_and_without_run_ahead() {
        let run = |run_ahead: bool| {
            let mut k = kernel("v6.6 NO_RT_PUSH_IPI", 2, 250);
            k.sim_run_ahead = run_ahead;
            let mut ids = Vec::new();
            for (i, (pol, prio)) in [
                (Policy::Fifo, 50),
                (Policy::Rr, 20),
                (Policy::Rr, 20),
                (Policy::Normal, 0),
                (Policy::Fifo, 70),
            ]
            .into_iter()
            .enumerate()
            {
                let prog = script(move |n, _, _| {
                    Some(if (n + i as u32).is_multiple_of(3) {
                        Op::Sleep((i as u64 + 1) * 3 * MS)
                    } else {
                        Op::Run((i as u64 + 2) * MS)
                    })
                });
                ids.push(spawn(&mut k, &format!("t{i}"), pol, prio, None, prog));
            }
            k.run_until(2500 * MS);
            let out: Vec<(u64, usize, u64)> = ids
                .iter()
                .map(|&t| {
                    (
                        runtime(&k, t),
                        k.tasks[t.index()].cpu,
                        k.tasks[t.index()].stats.nr_switches,
                    )
                })
                .collect();
            (out, k.rt.nr_pushed, k.rt.nr_pulled, k.rt.nr_throttled)
        };
        let a = run(true);
        assert!(a.1 + a.2 > 0, "the workload moves RT tasks: {a:?}");
        assert_eq!(a, run(false));
        assert_eq!(a, run(true));
    }

    /// A mixed stress run with every invariant checked after each event (`strict`): 4 CPUs,
    /// FIFO/RR/fair tasks, some pinned, that run, sleep, yield, change their policy and
    /// priority, and take PI futexes; on v6.6 (throttling, old overload rule, direct pull)
    /// and v6.18 (RT_PUSH_IPI). A failed invariant panics with the state dump.
    #[test]
    fn rt_stress_keeps_the_invariants() {
        for spec in [
            "v6.6 NO_RT_PUSH_IPI sched_rt_runtime_us=50000 sched_rt_period_us=250000",
            "v6.6 RT_RUNTIME_SHARE sched_rt_runtime_us=100000 sched_rt_period_us=200000",
            "v6.18",
        ] {
            let mut k = kernel(spec, 4, 250);
            let locks: Vec<_> = (0..2).map(|_| k.ipc.new_futex(0)).collect();
            for i in 0..10u64 {
                let locks = locks.clone();
                let mut seed = i * 0x9E37_79B9 + 7;
                let mut held: Option<crate::ipc::FutexId> = None;
                let prog = script(move |_, _, _| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let r = (seed >> 33) % 100;
                    if let Some(f) = held.take() {
                        return Some(if r < 50 {
                            held = Some(f);
                            Op::Run((r + 1) * 20_000)
                        } else {
                            Op::FutexUnlockPi { futex: f }
                        });
                    }
                    Some(match r {
                        0..=39 => Op::Run((r + 1) * 50_000),
                        40..=59 => Op::Sleep((r - 39) * 300_000),
                        60..=64 => Op::Yield,
                        65..=69 => Op::SetScheduler {
                            policy: Policy::Fifo,
                            nice: 0,
                            rt_priority: 1 + (r as u32 * 7) % 99,
                        },
                        70..=72 => Op::SetScheduler {
                            policy: Policy::Rr,
                            nice: 0,
                            rt_priority: 10,
                        },
                        73..=75 => Op::SetScheduler {
                            policy: Policy::Normal,
                            nice: (r as i32 % 5) - 2,
                            rt_priority: 0,
                        },
                        76..=84 => {
                            let f = locks[(r % 2) as usize];
                            held = Some(f);
                            Op::FutexLockPi { futex: f }
                        }
                        85..=89 => Op::SyscallCondResched {
                            work: 2 * MS,
                            every: 500_000,
                        },
                        _ => Op::Syscall(r * 10_000),
                    })
                });
                let (pol, prio) = match i % 4 {
                    0 => (Policy::Fifo, 10 + i as u32 * 7),
                    1 => (Policy::Rr, 30),
                    2 => (Policy::Normal, 0),
                    _ => (Policy::Fifo, 30),
                };
                let cpus = match i % 5 {
                    0 => Some("1"),
                    1 => Some("0,2"),
                    _ => None,
                };
                spawn(&mut k, &format!("t{i}"), pol, prio, cpus, prog);
            }
            k.run_until(2000 * MS);
            assert_eq!(k.warnings, 0, "{spec}");
            // the run exercised what it is meant to
            assert!(k.rt.nr_pushed + k.rt.nr_pulled > 0, "{spec}");
            if spec.starts_with("v6.6") {
                assert!(k.rt.nr_throttled > 0, "{spec}");
            }
        }
    }

    /// 7.3 (v6.6): an RT hog alone runs [0, 951), the CPU idles [951, 1000), then 950 ms per
    /// second: 951 + 950 ms in the first two seconds.
    #[test]
    fn v7_3_rt_hog_alone_v6_6_idles_when_throttled() {
        let mut k = kernel("v6.6", 1, 1000);
        let rt = spawn(&mut k, "rt", Policy::Fifo, 50, None, hog());
        assert!(k.run_until(975 * MS) > 0);
        assert!(k.cpu_is_idle(0));
        assert_eq!(curr_at(&mut k, 0, 1000 * MS), "rt");
        k.run_until(2000 * MS);
        assert_eq!(runtime(&k, rt), 1901 * MS);
    }

    /// 7.3 (v6.6 + RT_RUNTIME_SHARE, 2 CPUs, the hog pinned to CPU 0): at 951 CPU 0 borrows
    /// from CPU 1 (rt_time 0, runtime 950): (950 - 0) / 2 = 475, capped at 1000 - 950 = 50,
    /// so its runtime becomes the whole period, which never throttles: 100 %.
    #[test]
    fn v7_3_runtime_share_two_cpus_runs_100_percent() {
        let mut k = kernel("v6.6 RT_RUNTIME_SHARE", 2, 1000);
        let rt = spawn(&mut k, "rt", Policy::Fifo, 50, Some("0"), hog());
        k.run_until(3000 * MS);
        assert_eq!(runtime(&k, rt), 3000 * MS);
        assert_eq!(k.rqs[0].rt.rt_runtime, 1000 * MS);
        assert_eq!(k.rqs[1].rt.rt_runtime, 900 * MS);
        assert!(!k.rt.throttling_activated);
    }

    /// 7.3 (v6.12 .. v7.0 without RT groups): no RT bandwidth at all, the hog runs 100 %; with
    /// CONFIG_RT_GROUP_SCHED (the `host` platform's kernel, §2.10) the root group throttles at
    /// 95 % as on v6.6: 951 + 950 ms in two seconds.
    #[test]
    fn v7_3_no_throttling_from_v6_12_unless_rt_group_sched() {
        let mut k = kernel("v6.12", 1, 1000);
        let rt = spawn(&mut k, "rt", Policy::Fifo, 50, None, hog());
        k.run_until(2000 * MS);
        assert_eq!(runtime(&k, rt), 2000 * MS);
        assert!(!k.rt.period_active);

        let mut m = MachineDesc::ideal(1, 1000, PreemptModel::Full);
        m.rt_group_sched = true;
        let mut k = kernel_m("v6.18", m);
        let rt = spawn(&mut k, "rt", Policy::Fifo, 50, None, hog());
        k.run_until(2000 * MS);
        assert_eq!(runtime(&k, rt), 1901 * MS);
    }

    /// 7.6 (v6.6, sched_rt_runtime_us = -1): RT hog 100 %, the fair hog never runs.
    #[test]
    fn v7_6_unlimited_runtime_starves_fair_v6_6() {
        let mut k = kernel("v6.6 sched_rt_runtime_us=-1", 1, 1000);
        let rt = spawn(&mut k, "rt", Policy::Fifo, 50, None, hog());
        let fair = spawn(&mut k, "fair", Policy::Normal, 0, None, hog());
        k.run_until(2500 * MS);
        assert_eq!(runtime(&k, rt), 2500 * MS);
        assert_eq!(runtime(&k, fair), 0);
        assert!(!k.rt.period_active);
    }

    /// 7.7 (v6.6 part): 7.2 plus a FIFO 90 task R2 waking at 960 for 1 ms: the RT class is
    /// throttled from 951 to 1000, so R2 starts at 1000 (latency 40 ms).
    #[test]
    fn v7_7_rt_wakeup_while_throttled_waits_for_the_period_v6_6() {
        let mut k = kernel("v6.6", 1, 1000);
        let log: Log = Default::default();
        spawn(&mut k, "rt", Policy::Fifo, 50, None, hog());
        spawn(&mut k, "fair", Policy::Normal, 0, None, hog());
        spawn(
            &mut k,
            "r2",
            Policy::Fifo,
            90,
            None,
            ops(&log, "r2", vec![Op::SleepUntil(960 * MS), Op::Run(MS)]),
        );
        k.run_until(1100 * MS);
        assert_eq!(at(&log, "r2/1"), 1000 * MS);
        assert_eq!(at(&log, "r2/2"), 1001 * MS);
    }

    // ------------------------------------------------------------------ 7.13 RR

    /// 7.13: three CPU-bound RR 10 tasks at HZ 250: A's first slice tick is at 4 (the tick at
    /// 0 charges nothing), 25 ticks → A [0, 100), B [100, 200), C [200, 300), A [300, 400).
    /// Variant: a FIFO 10 task F woken at 150 joins the tail (B*, C, A, F): C [200, 300),
    /// A [300, 400), then F from 400 on, while A, B, C starve.
    #[test]
    fn v7_13_rr_rotation() {
        let mut k = kernel("v6.18", 1, 250);
        for n in ["a", "b", "c"] {
            spawn(&mut k, n, Policy::Rr, 10, None, hog());
        }
        assert_eq!(curr_at(&mut k, 0, 100 * MS - 2), "a");
        assert_eq!(curr_at(&mut k, 0, 100 * MS), "b");
        assert_eq!(curr_at(&mut k, 0, 200 * MS - 2), "b");
        assert_eq!(curr_at(&mut k, 0, 200 * MS), "c");
        assert_eq!(curr_at(&mut k, 0, 300 * MS), "a");
        assert_eq!(curr_at(&mut k, 0, 400 * MS), "b");

        let mut k = kernel("v6.18", 1, 250);
        let abc: Vec<TaskId> = ["a", "b", "c"]
            .iter()
            .map(|n| spawn(&mut k, n, Policy::Rr, 10, None, hog()))
            .collect();
        k.run_until(150 * MS);
        spawn(&mut k, "f", Policy::Fifo, 10, None, hog());
        assert_eq!(curr_at(&mut k, 0, 199 * MS), "b");
        assert_eq!(curr_at(&mut k, 0, 200 * MS), "c");
        assert_eq!(curr_at(&mut k, 0, 300 * MS), "a");
        assert_eq!(curr_at(&mut k, 0, 400 * MS), "f");
        let before: Vec<u64> = abc.iter().map(|&t| runtime(&k, t)).collect();
        k.run_until(1000 * MS);
        assert_eq!(curr(&k, 0), "f");
        let after: Vec<u64> = abc.iter().map(|&t| runtime(&k, t)).collect();
        assert_eq!(before, after);
    }

    /// A lone RR task keeps running; its slice is silently refilled every 100 ms (no switch).
    /// Two RR tasks alternate every slice; with sched_rr_timeslice_ms=10 at HZ 250 the slice
    /// is msecs_to_jiffies(10) = ceil(2.5) = 3 ticks = 12 ms: A [0, 12), B [12, 24), A ...
    #[test]
    fn rr_alone_refills_and_two_alternate_with_the_sysctl() {
        let mut k = kernel("v6.18", 1, 1000);
        let a = spawn(&mut k, "a", Policy::Rr, 10, None, hog());
        k.run_until(1000 * MS);
        assert_eq!(runtime(&k, a), 1000 * MS);
        assert_eq!(k.tasks[a.index()].stats.nr_involuntary_switches, 0);

        let mut k = kernel("v6.18 sched_rr_timeslice_ms=10", 1, 250);
        spawn(&mut k, "a", Policy::Rr, 10, None, hog());
        spawn(&mut k, "b", Policy::Rr, 10, None, hog());
        assert_eq!(curr_at(&mut k, 0, 11 * MS), "a");
        assert_eq!(curr_at(&mut k, 0, 12 * MS), "b");
        assert_eq!(curr_at(&mut k, 0, 23 * MS), "b");
        assert_eq!(curr_at(&mut k, 0, 24 * MS), "a");
        assert_eq!(curr_at(&mut k, 0, 36 * MS), "b");
    }

    // ------------------------------------------------------------------ 7.14 FIFO positions

    /// 7.14: FIFO 10 tasks A (running) and B (queued behind A). FIFO 20 C wakes at 5 and
    /// preempts A; C blocks at 8 → A resumes (it kept its place at the head), not B. A calls
    /// sched_yield() at 10 (7 ms of work done: 0-5 and 8-10) → B runs.
    #[test]
    fn v7_14_preempted_fifo_keeps_its_place_and_yield_goes_to_the_tail() {
        let mut k = kernel("v6.18", 1, 1000);
        let log: Log = Default::default();
        spawn(
            &mut k,
            "a",
            Policy::Fifo,
            10,
            None,
            ops(
                &log,
                "a",
                vec![Op::Run(7 * MS), Op::Yield, Op::Run(FOREVER)],
            ),
        );
        spawn(&mut k, "b", Policy::Fifo, 10, None, hog());
        spawn(
            &mut k,
            "c",
            Policy::Fifo,
            20,
            None,
            ops(&log, "c", vec![Op::SleepUntil(5 * MS), Op::Run(3 * MS)]),
        );
        assert_eq!(curr_at(&mut k, 0, 4 * MS), "a");
        assert_eq!(curr_at(&mut k, 0, 6 * MS), "c");
        assert_eq!(curr_at(&mut k, 0, 8 * MS), "a");
        assert_eq!(curr_at(&mut k, 0, 10 * MS), "b");
        assert_eq!(at(&log, "a/1"), 10 * MS); // the yield
    }

    /// 7.14, second part: at 10 A's priority goes from 10 to 5 (lowered) while B (10) and D
    /// (5) are queued: A goes to the *head* of the prio-5 list; B runs [10, 12) and blocks,
    /// then A runs before D. D never ran.
    #[test]
    fn v7_14_lowered_priority_goes_to_the_head() {
        let mut k = kernel("v6.18", 1, 1000);
        let log: Log = Default::default();
        spawn(
            &mut k,
            "a",
            Policy::Fifo,
            10,
            None,
            ops(
                &log,
                "a",
                vec![
                    Op::Run(10 * MS),
                    Op::SetScheduler {
                        policy: Policy::Fifo,
                        nice: 0,
                        rt_priority: 5,
                    },
                    Op::Run(FOREVER),
                ],
            ),
        );
        spawn(
            &mut k,
            "b",
            Policy::Fifo,
            10,
            None,
            script(|i, _, _| {
                Some(if i == 0 {
                    Op::Run(2 * MS)
                } else {
                    Op::Sleep(FOREVER)
                })
            }),
        );
        let d = spawn(&mut k, "d", Policy::Fifo, 5, None, hog());
        assert_eq!(curr_at(&mut k, 0, 9 * MS), "a");
        assert_eq!(curr_at(&mut k, 0, 11 * MS), "b");
        assert_eq!(curr_at(&mut k, 0, 12 * MS), "a");
        k.run_until(50 * MS);
        assert_eq!(curr(&k, 0), "a");
        assert_eq!(runtime(&k, d), 0);
        // raising instead (5 → 20 from a prio-5 list): tail of the new list; here alone, so
        // it simply runs
    }

    /// Raising a queued task's priority puts it at the tail of its new list, and an
    /// unchanged priority keeps the list position: A (FIFO 10, running) sets itself to
    /// FIFO 10 again at 1 ms — no requeue, B (FIFO 10, queued) does not run; at 2 ms A sets
    /// FIFO 20: alone at 20, it keeps the CPU; B still has not run.
    #[test]
    fn setscheduler_same_priority_keeps_the_position() {
        let mut k = kernel("v6.18", 1, 1000);
        let log: Log = Default::default();
        let set = |p| Op::SetScheduler {
            policy: Policy::Fifo,
            nice: 0,
            rt_priority: p,
        };
        spawn(
            &mut k,
            "a",
            Policy::Fifo,
            10,
            None,
            ops(
                &log,
                "a",
                vec![Op::Run(MS), set(10), Op::Run(MS), set(20), Op::Run(FOREVER)],
            ),
        );
        let b = spawn(&mut k, "b", Policy::Fifo, 10, None, hog());
        k.run_until(10 * MS);
        assert_eq!(curr(&k, 0), "a");
        assert_eq!(runtime(&k, b), 0);
        assert_eq!(at(&log, "a/3"), 2 * MS);
    }

    // ------------------------------------------------------------------ 7.15 models

    /// 7.15: fair F on CPU 0 inside a 10 ms preemptible kernel section from 0 (no
    /// cond_resched); FIFO R (pinned to CPU 0) is woken at 1 by a task on CPU 1 (futex wake,
    /// reschedule IPI). NONE and VOLUNTARY: R runs at 10 (return to user); FULL, LAZY, RT: at
    /// 1 (IPI cost 0). With F in user mode at 1: R at 1 in every model. With cond_resched()
    /// every 2 ms in the section: NONE/VOLUNTARY → R at 2 (the others still at 1).
    #[test]
    fn v7_15_rt_wakeup_per_preemption_model() {
        let cases = [
            (PreemptModel::None, 10 * MS, MS, 2 * MS),
            (PreemptModel::Voluntary, 10 * MS, MS, 2 * MS),
            (PreemptModel::Full, MS, MS, MS),
            (PreemptModel::Lazy, MS, MS, MS),
            (PreemptModel::Rt, MS, MS, MS),
        ];
        for (model, in_kernel, in_user, with_cr) in cases {
            for (how, want) in [(0, in_kernel), (1, in_user), (2, with_cr)] {
                let mut k = kernel_m("v6.18", MachineDesc::ideal(2, 1000, model));
                let log: Log = Default::default();
                let f = k.ipc.new_futex(0);
                let work = match how {
                    0 => Op::Syscall(10 * MS),
                    1 => Op::Run(10 * MS),
                    _ => Op::SyscallCondResched {
                        work: 10 * MS,
                        every: 2 * MS,
                    },
                };
                spawn(
                    &mut k,
                    "r",
                    Policy::Fifo,
                    50,
                    Some("0"),
                    ops(
                        &log,
                        "r",
                        vec![Op::FutexWait { futex: f, val: 0 }, Op::Run(MS)],
                    ),
                );
                spawn(
                    &mut k,
                    "f",
                    Policy::Normal,
                    0,
                    Some("0"),
                    ops(&log, "f", vec![work]),
                );
                spawn(
                    &mut k,
                    "w",
                    Policy::Normal,
                    0,
                    Some("1"),
                    ops(
                        &log,
                        "w",
                        vec![Op::SleepUntil(MS), Op::FutexWake { futex: f, nr: 1 }],
                    ),
                );
                let w = k.task_by_pid(k.next_pid - 1).unwrap();
                k.tasks[w.index()].timer_slack_ns = 0; // wake exactly at 1
                k.run_until(20 * MS);
                assert_eq!(at(&log, "r/1"), want, "{model:?} case {how}");
            }
        }
    }

    /// 7.16 (the fair counterpart, checking the lazy flag against 7.15): SCHED_IDLE F1 runs
    /// on CPU 0 (HZ 250, ticks at 4, 8); fair F2 (pinned to CPU 0) is woken at 1 by a task on
    /// CPU 1 of the same LLC while CPU 0 is busy (direct remote wakeup); a non-idle wakee
    /// preempts an idle entity (`resched_curr_lazy`).
    /// - F1 in user mode: FULL → 1 (IPI); LAZY → no IPI, the tick at 4 promotes → 4;
    ///   NONE/VOLUNTARY → 1 (`resched_curr_lazy` is `resched_curr` outside the lazy model).
    /// - F1 in a 20 ms preemptible kernel section: FULL → 1; LAZY → 4; NONE/VOLUNTARY → 20.
    /// - F2 woken by its own hrtimer on CPU 0 (an interrupt from user mode): FULL and LAZY → 1.
    #[test]
    fn v7_16_fair_wakeup_lazy_vs_full() {
        // F1 starts at 1 µs (after F2 went to sleep), so its section ends at 20 ms + 1 µs
        let end = 20 * MS + 1000;
        let cases = [
            (PreemptModel::None, MS, end),
            (PreemptModel::Voluntary, MS, end),
            (PreemptModel::Full, MS, MS),
            (PreemptModel::Lazy, 4 * MS, 4 * MS),
        ];
        for (model, in_user, in_kernel) in cases {
            for (user, want) in [(true, in_user), (false, in_kernel)] {
                let mut k = kernel_m("v6.18", MachineDesc::ideal(2, 250, model));
                let log: Log = Default::default();
                let f = k.ipc.new_futex(0);
                spawn(
                    &mut k,
                    "f2",
                    Policy::Normal,
                    0,
                    Some("0"),
                    ops(
                        &log,
                        "f2",
                        vec![Op::FutexWait { futex: f, val: 0 }, Op::Run(MS)],
                    ),
                );
                let w = spawn(
                    &mut k,
                    "w",
                    Policy::Normal,
                    0,
                    Some("1"),
                    ops(
                        &log,
                        "w",
                        vec![Op::SleepUntil(MS), Op::FutexWake { futex: f, nr: 1 }],
                    ),
                );
                k.tasks[w.index()].timer_slack_ns = 0;
                k.run_until(1000);
                let work = if user {
                    Op::Run(20 * MS)
                } else {
                    Op::Syscall(20 * MS)
                };
                spawn(
                    &mut k,
                    "f1",
                    Policy::Idle,
                    0,
                    Some("0"),
                    ops(&log, "f1", vec![work]),
                );
                k.run_until(30 * MS);
                assert_eq!(at(&log, "f2/1"), want, "{model:?} user={user}");
            }
        }
        for model in [PreemptModel::Full, PreemptModel::Lazy] {
            let mut k = kernel_m("v6.18", MachineDesc::ideal(1, 250, model));
            let log: Log = Default::default();
            let f2 = spawn(
                &mut k,
                "f2",
                Policy::Normal,
                0,
                None,
                ops(&log, "f2", vec![Op::SleepUntil(MS), Op::Run(MS)]),
            );
            k.tasks[f2.index()].timer_slack_ns = 0;
            k.run_until(1000);
            spawn(&mut k, "f1", Policy::Idle, 0, None, hog());
            k.run_until(10 * MS);
            assert_eq!(at(&log, "f2/1"), MS, "{model:?}");
        }
    }

    // ------------------------------------------------------------------ 7.17, 7.18 SMP

    /// 7.17: CPU 0 runs FIFO 50 A, CPU 1 a fair hog; FIFO 60 B (previous CPU 0) wakes at 5.
    /// select_task_rq_rt: A is RT, A.prio 49 <= B.prio 39 is false and A is not pinned → B
    /// stays on CPU 0 and preempts A; after the pick, push: CPU 1's cpupri is 0 (< A's 50) →
    /// A moves to CPU 1 and preempts the hog. Variant, A pinned to CPU 0: search →
    /// find_lowest_rq(B) = CPU 1 (cpupri 0 is the lowest below B's 60; CPU 0 has 50), B.prio
    /// 39 < 99 → B wakes on CPU 1; A continues on CPU 0.
    #[test]
    fn v7_17_rt_wakeup_placement_and_push() {
        for pinned in [false, true] {
            let mut k = kernel("v6.18", 2, 1000);
            let log: Log = Default::default();
            let b = spawn(
                &mut k,
                "b",
                Policy::Fifo,
                60,
                None,
                ops(&log, "b", vec![Op::SleepUntil(5 * MS), Op::Run(FOREVER)]),
            );
            k.run_until(1000); // B ran on CPU 0 and sleeps there
            assert_eq!(k.tasks[b.index()].cpu, 0);
            spawn(&mut k, "a", Policy::Fifo, 50, pinned.then_some("0"), hog());
            spawn(&mut k, "hog", Policy::Normal, 0, Some("1"), hog());
            assert_eq!(curr_at(&mut k, 0, 4 * MS), "a");
            assert_eq!(curr_at(&mut k, 1, 4 * MS), "hog");
            k.run_until(5 * MS + 1);
            if pinned {
                assert_eq!((curr(&k, 0), curr(&k, 1)), ("a", "b"));
            } else {
                assert_eq!((curr(&k, 0), curr(&k, 1)), ("b", "a"));
                assert_eq!(k.rt.nr_pushed, 1);
            }
        }
    }

    /// Push goes to the *lowest*-priority CPU: 3 CPUs running FIFO 50 A (CPU 0), a fair hog
    /// (CPU 1) and FIFO 30 X (CPU 2, pinned). FIFO 70 B wakes on CPU 0 and preempts A; the
    /// cpupri scan for A (50) meets value 0 (CPU 1) before 30 (CPU 2) → A goes to CPU 1.
    #[test]
    fn push_picks_the_lowest_priority_cpu() {
        let mut k = kernel("v6.18", 3, 1000);
        let log: Log = Default::default();
        spawn(
            &mut k,
            "b",
            Policy::Fifo,
            70,
            None,
            ops(&log, "b", vec![Op::SleepUntil(5 * MS), Op::Run(FOREVER)]),
        );
        k.run_until(1000);
        spawn(&mut k, "a", Policy::Fifo, 50, None, hog());
        spawn(&mut k, "hog", Policy::Normal, 0, Some("1"), hog());
        spawn(&mut k, "x", Policy::Fifo, 30, Some("2"), hog());
        assert_eq!(curr_at(&mut k, 0, 4 * MS), "a");
        k.run_until(5 * MS + 1);
        assert_eq!((curr(&k, 0), curr(&k, 1), curr(&k, 2)), ("b", "a", "x"));
    }

    /// 7.18: CPU 0 runs A (FIFO 50) with C (FIFO 40) queued and pushable (nowhere to go: CPU 1
    /// runs D, FIFO 60). D blocks at 5 on CPU 1 → balance_rt pulls: with RT_PUSH_IPI CPU 1
    /// sends the irq_work to CPU 0 (the only CPU in rto_mask), which pushes C to CPU 1; with
    /// NO_RT_PUSH_IPI CPU 1 takes C itself. Zero costs: C runs on CPU 1 at 5 either way.
    #[test]
    fn v7_18_rt_pull_via_ipi_and_direct() {
        for spec in ["v6.18", "v6.18 NO_RT_PUSH_IPI"] {
            let mut k = kernel(spec, 2, 1000);
            spawn(
                &mut k,
                "d",
                Policy::Fifo,
                60,
                Some("1"),
                script(|i, _, _| {
                    Some(if i == 0 {
                        Op::Run(5 * MS)
                    } else {
                        Op::Sleep(FOREVER)
                    })
                }),
            );
            spawn(&mut k, "a", Policy::Fifo, 50, None, hog());
            let c = spawn(&mut k, "c", Policy::Fifo, 40, None, hog());
            k.run_until(4 * MS);
            assert_eq!((curr(&k, 0), curr(&k, 1)), ("a", "d"));
            assert_eq!(k.tasks[c.index()].cpu, 0);
            assert!(k.rt.rd[0].rto_mask.contains(0));
            k.run_until(5 * MS + 1);
            assert_eq!((curr(&k, 0), curr(&k, 1)), ("a", "c"), "{spec}");
            if spec.contains("NO_RT_PUSH_IPI") {
                assert_eq!((k.rt.nr_push_ipis, k.rt.nr_pulled), (0, 1));
            } else {
                // the chain visits CPU 0 (pushes C), then CPU 1, in rto_mask from C's
                // enqueue there until CPU 1 picks it: two irq_works, one push
                assert_eq!((k.rt.nr_push_ipis, k.rt.nr_pushed), (2, 1));
            }
            assert!(k.rt.rd[0].rto_mask.is_empty());
        }
    }

    /// 612f769edd06 (v6.7): CPU 0 runs FIFO 50 A (may migrate) with FIFO 40 P pinned to CPU 0
    /// and queued under A — nothing pushable.
    /// v6.6 counts CPU 0 overloaded anyway (`rt_nr_migratory` 1 — A —, `rt_nr_total` 2), so
    /// when D (FIFO 60, CPU 1) blocks at 5 the pull starts the irq_work chain at CPU 0, which
    /// finds nothing to push — twice: `rto_loop` starts one behind `rto_loop_next` (the
    /// starting request counts), so `rto_next_cpu()` makes a second pass over `rto_mask`.
    /// From v6.7 CPU 0 is not in rto_mask and no irq_work is sent. P stays on CPU 0.
    #[test]
    fn overload_rule_before_and_after_612f769edd06() {
        for (spec, ipis) in [("v6.6", 2), ("v6.18", 0)] {
            let mut k = kernel(spec, 2, 1000);
            spawn(
                &mut k,
                "d",
                Policy::Fifo,
                60,
                Some("1"),
                script(|i, _, _| {
                    Some(if i == 0 {
                        Op::Run(5 * MS)
                    } else {
                        Op::Sleep(FOREVER)
                    })
                }),
            );
            spawn(&mut k, "a", Policy::Fifo, 50, None, hog());
            let p = spawn(&mut k, "p", Policy::Fifo, 40, Some("0"), hog());
            k.run_until(4 * MS);
            assert_eq!(k.rt.rd[0].rto_mask.contains(0), ipis > 0, "{spec}");
            k.run_until(6 * MS);
            assert_eq!(k.rt.nr_push_ipis, ipis, "{spec}");
            assert_eq!(k.rt.nr_pushed, 0);
            assert_eq!(k.tasks[p.index()].cpu, 0);
            assert!(k.cpu_is_idle(1));
        }
    }

    /// §2.8: a CPU isolated with isolcpus=domain sits in its own root domain: an RT task
    /// preempted on a housekeeping CPU is never pushed to it, although it runs only a fair
    /// task. 3 CPUs, CPU 2 isolated: A (FIFO 50) on CPU 0, fair hogs on CPUs 1 and 2, FIFO 60
    /// B preempts A at 5 → A goes to CPU 1 (same root domain), not 2 — then with CPU 1 busy
    /// with FIFO 90, A stays queued on CPU 0.
    #[test]
    fn isolcpus_root_domains_bound_push() {
        let mut p = schedlab_platform::Platform::smp(3).unwrap();
        p.isolation.isolcpus = CpuMask::single(2);
        p.isolation.domain = true;
        let mut m = MachineDesc::from_platform(&p);
        m.hz = 1000;
        m.preempt_default = PreemptModel::Full;
        m.costs = vec![schedlab_platform::cost::CostModel::zero(); 3];
        m.idle_exit_ns = vec![0; 3];
        m.idle_polling = vec![false; 3];
        m.sched_clock_hz = 1_000_000_000;
        for busy_1 in [false, true] {
            let mut k = kernel_m("v6.18", m.clone());
            assert_eq!(k.rt.rd.len(), 2);
            let log: Log = Default::default();
            spawn(
                &mut k,
                "b",
                Policy::Fifo,
                60,
                Some("0"),
                ops(&log, "b", vec![Op::SleepUntil(5 * MS), Op::Run(FOREVER)]),
            );
            k.run_until(1000);
            spawn(&mut k, "a", Policy::Fifo, 50, Some("0-2"), hog());
            if busy_1 {
                spawn(&mut k, "h1", Policy::Fifo, 90, Some("1"), hog());
            } else {
                spawn(&mut k, "h1", Policy::Normal, 0, Some("1"), hog());
            }
            spawn(&mut k, "h2", Policy::Normal, 0, Some("2"), hog());
            k.run_until(5 * MS + 1);
            let want = if busy_1 {
                ("b", "h1", "h2")
            } else {
                ("b", "a", "h2")
            };
            assert_eq!((curr(&k, 0), curr(&k, 1), curr(&k, 2)), want);
        }
    }

    /// §2.3 equal priority: CPU 0 runs FIFO 50 A (may run anywhere), CPU 1 a fair hog; FIFO 50
    /// B pinned to CPU 0 wakes at 5. B cannot go elsewhere and A can (cpupri finds CPU 1):
    /// B is requeued at the head and CPU 0 reschedules; A, preempted, is pushed to CPU 1.
    #[test]
    fn equal_priority_wakeup_of_a_pinned_task_pushes_current_away() {
        let mut k = kernel("v6.18", 2, 1000);
        let log: Log = Default::default();
        spawn(
            &mut k,
            "b",
            Policy::Fifo,
            50,
            Some("0"),
            ops(&log, "b", vec![Op::SleepUntil(5 * MS), Op::Run(FOREVER)]),
        );
        k.run_until(1000);
        spawn(&mut k, "a", Policy::Fifo, 50, None, hog());
        spawn(&mut k, "hog", Policy::Normal, 0, Some("1"), hog());
        assert_eq!(curr_at(&mut k, 0, 4 * MS), "a");
        k.run_until(5 * MS + 1);
        assert_eq!((curr(&k, 0), curr(&k, 1)), ("b", "a"));
    }

    /// §2.11 PI boosting through a PI futex, one CPU: fair L takes the futex at 0 and holds
    /// it for 5 ms of work; FIFO 50 H and FIFO 30 M wake at 1. H blocks on the futex and
    /// boosts L to H's priority (prio 49, RT class), so L, not M, runs [1, 5) and unlocks at
    /// 5: deboosted to fair, the lock handed to H, which runs [5, 6); M runs from 6. (Without
    /// the boost M would run [1, 11) and H would wait until 15.)
    #[test]
    fn pi_futex_boosts_the_owner() {
        let mut k = kernel("v6.18", 1, 1000);
        let log: Log = Default::default();
        let f = k.ipc.new_futex(0);
        let h = spawn(
            &mut k,
            "h",
            Policy::Fifo,
            50,
            None,
            ops(
                &log,
                "h",
                vec![
                    Op::SleepUntil(MS),
                    Op::FutexLockPi { futex: f },
                    Op::Run(MS),
                    Op::FutexUnlockPi { futex: f },
                ],
            ),
        );
        spawn(
            &mut k,
            "m",
            Policy::Fifo,
            30,
            None,
            ops(&log, "m", vec![Op::SleepUntil(MS), Op::Run(10 * MS)]),
        );
        let l = spawn(
            &mut k,
            "l",
            Policy::Normal,
            0,
            None,
            ops(
                &log,
                "l",
                vec![
                    Op::FutexLockPi { futex: f },
                    Op::Run(5 * MS),
                    Op::FutexUnlockPi { futex: f },
                    Op::Run(FOREVER),
                ],
            ),
        );
        k.run_until(3 * MS);
        assert_eq!(curr(&k, 0), "l");
        assert_eq!(k.tasks[l.index()].class, SchedClass::Rt);
        assert_eq!(k.tasks[l.index()].prio(), 49);
        assert_eq!(k.tasks[h.index()].pi_blocked_on, Some(f));
        k.run_until(20 * MS);
        assert_eq!(at(&log, "l/2"), 5 * MS); // the unlock
        assert_eq!(at(&log, "h/2"), 5 * MS); // H's work after the lock returned
        assert_eq!(at(&log, "m/1"), 6 * MS);
        assert_eq!(k.tasks[l.index()].class, SchedClass::Fair);
        assert_eq!(k.tasks[l.index()].prio(), 120);
        assert_eq!(k.ipc.futexes[f.index()].pi_owner, None);
    }

    /// Class order on one CPU with RT throttling out of the way (v6.18): a FIFO task beats a
    /// fair one that was running (a fair hog, then FIFO woken at 3 → runs at 3 under FULL).
    #[test]
    fn rt_wakeup_preempts_fair_at_once_under_full() {
        let mut k = kernel("v6.18", 1, 1000);
        let log: Log = Default::default();
        spawn(&mut k, "fair", Policy::Normal, 0, None, hog());
        spawn(
            &mut k,
            "rt",
            Policy::Fifo,
            1,
            None,
            ops(
                &log,
                "rt",
                vec![Op::SleepUntil(3 * MS + 500_000), Op::Run(MS)],
            ),
        );
        k.run_until(10 * MS);
        assert_eq!(at(&log, "rt/1"), 3 * MS + 500_000);
        assert_eq!(at(&log, "rt/2"), 4 * MS + 500_000);
    }
}
