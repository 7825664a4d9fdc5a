//! kernel: deadline.c — the SCHED_DEADLINE class and the dl_server (rt-dl.md §3, §4).
//!
//! * The EDF runqueue (`dl_rq->root`, leftmost = earliest deadline) holds [`DlEnt`]s: task
//!   entities (`p->dl`) and each CPU's `rq->fair_server`. Servers are not counted in
//!   `nr_running` (§1.3) and never migrate.
//! * CBS (§3.4–3.7): `replenish_dl_new_period`, `setup_new_dl_entity`, `replenish_dl_entity`,
//!   `dl_entity_overflow` (signed-shift rule of §3.5), `update_dl_revised_wakeup`,
//!   `update_dl_entity` (REVISED_CONDITION switched by 14a857056466), `dl_check_constrained_dl`,
//!   `update_curr_dl_se` with throttling and overrun carry, `start_dl_timer` (a hard hrtimer on
//!   the rq clock, no slack; the simulator's event is `Ev::DlTimer`, delivered by exec.rs).
//! * Budget enforcement is tick-granular: HRTICK_DL (default off in every preset, §1.11) is
//!   not modelled.
//! * The fair_server (§4): `dl_server_start` (E1), `dl_server_update` (E2/E8),
//!   `dl_server_timer` (E3), the empty pick (E4), `dl_server_stop` (E5), the stop on a fair
//!   dequeue (E6, in fair.rs), idle accounting (E7, old and new form), each version difference
//!   a named patch (patches.rs). The server's pick of a fair task is done by the class table
//!   (class.rs plays the part of the `server_pick_task` function pointer).
//! * A structured log of server activity ([`DlServerEvent`] in `Kernel::dl_server_log`) and
//!   per-CPU counters ([`DlServerStats`] in `Rq::dl_server_stats`) for explanations.
//!
//! * Active utilisation and GRUB (§3.10): `this_bw` (bandwidth assigned to the rq) and
//!   `running_bw` (active entities: contending, or blocked before their 0-lag time). A task
//!   blocking before its 0-lag time `deadline - runtime * dl_period / dl_runtime` stays in
//!   `running_bw` (`dl_non_contending`) until its `inactive_timer` (a second hard hrtimer,
//!   `Ev::DlInactiveTimer`) fires; a wakeup before that cancels the timer. Migration moves
//!   both sums with the task; leaving the class drops them. SCHED_FLAG_RECLAIM tasks are
//!   charged at the GRUB rate (`grub_reclaim`), `max(u, Umax - Uinact - Uextra) / Umax`.
//!
//! Deviations: no PI/DL boosting (`pi_se` is always the entity itself); the fair_server's
//! bandwidth leaves `running_bw` at `dl_server_stop()` at once (the kernel arms its inactive
//! timer too); a task leaving SCHED_DEADLINE gives its bandwidth back at once (the kernel
//! keeps the root domain's share until the 0-lag time); `extra_bw` is recomputed from the
//! admitted entities of the root domain (the kernel's running sum of `__dl_add`/`__dl_sub`,
//! without its hotplug/rebuild drift); no ext_server.

use crate::patches::Patch as P;
use crate::sched::*;
use crate::Kernel;

/// An entity of the DL runqueue: a SCHED_DEADLINE task or a CPU's fair_server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DlEnt {
    Task(TaskId),
    /// `cpu_rq(cpu)->fair_server`
    Server(u32),
}

/// `dl_se->dl_timer`: an absolute hard hrtimer (0 slack).
///
/// Simulator detail: a cancel does not remove the queued event (the event queue cannot);
/// instead an expiry event fires the timer only if it is armed and due. Re-arming at or
/// after the earliest event still queued pushes nothing (that event re-queues the timer for
/// its real expiry), so a server started and stopped on every fair wakeup (v6.12) does not
/// fill the event queue with dead expiries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DlTimer {
    pub armed: bool,
    /// Expiry, simulated wall time (ns).
    pub expires: u64,
    /// Time of the earliest `Ev::DlTimer` of this entity still in the event queue, if any.
    pub queued: Option<u64>,
}

/// A deadline "strictly before every `now`" under the wrap-safe comparison: −1 ns. An entity
/// that has never run starts here, so its first activation opens a new period (rt-dl.md §4.2,
/// "explicit lapsed state").
pub const DL_LAPSED: u64 = u64::MAX;

/// `dl_server_min_res`: the smallest forward step of a deferred server's timer (1 ms).
pub const DL_SERVER_MIN_RES: u64 = 1_000_000;

/// kernel: sched.h `struct sched_dl_entity` (rt-dl.md §3.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedDlEntity {
    pub dl_runtime: u64,
    pub dl_deadline: u64,
    pub dl_period: u64,
    pub dl_bw: u64,
    pub dl_density: u64,
    /// Remaining runtime of the current instance (ns; negative after an overrun).
    pub runtime: i64,
    /// Absolute deadline of the current instance (rq clock ns).
    pub deadline: u64,
    pub dl_throttled: bool,
    pub dl_yielded: bool,
    pub dl_non_contending: bool,
    pub dl_overrun: bool,
    pub dl_server: bool,
    pub dl_server_active: bool,
    pub dl_defer: bool,
    pub dl_defer_armed: bool,
    pub dl_defer_running: bool,
    /// v6.19+ (f5a538c07df2)
    pub dl_defer_idle: bool,
    /// cccb45d7c429 .. a3a70caf7906: the two-strike idle mark of `dl_server_stopped()`.
    pub dl_server_idle: bool,
    /// `SCHED_FLAG_DL_OVERRUN`
    pub flag_dl_overrun: bool,
    /// `SCHED_FLAG_RECLAIM`: charged at the GRUB rate (rt-dl.md §3.10).
    pub flag_reclaim: bool,
    /// The rb-tree key while queued in `dl_rq->root` (`on_dl_rq()`).
    pub rb: Option<(u64, u64)>,
    /// Whether `dl_bw` is counted in the `running_bw` of rq `bw_rq` (active: contending,
    /// or non-contending before the 0-lag time).
    pub in_running_bw: bool,
    /// The rq whose `this_bw` counts `dl_bw` (model bookkeeping of add_rq_bw/sub_rq_bw).
    pub bw_rq: Option<u32>,
    pub dl_timer: DlTimer,
    /// `dl_se->inactive_timer`: the 0-lag timer (absolute hard hrtimer, 0 slack).
    pub inactive_timer: DlTimer,
}

impl SchedDlEntity {
    /// The parameters of a `sched_attr` (kernel: deadline.c __setparam_dl()); the entity starts
    /// with a lapsed deadline and no runtime.
    pub fn from_attr(a: &DlAttr) -> SchedDlEntity {
        SchedDlEntity {
            dl_runtime: a.runtime,
            dl_deadline: a.deadline,
            dl_period: a.effective_period(),
            dl_bw: a.bw(),
            dl_density: a.density(),
            deadline: DL_LAPSED,
            flag_reclaim: a.sched_flags & SCHED_FLAG_RECLAIM != 0,
            flag_dl_overrun: a.sched_flags & SCHED_FLAG_DL_OVERRUN != 0,
            ..Default::default()
        }
    }

    /// kernel: fair.c fair_server_init() + deadline.c sched_init_dl_servers(): 50 ms / 1 s
    /// (or the `fair_server_runtime_ns` / `fair_server_period_ns` settings), deferred, in
    /// state A with a lapsed deadline (rt-dl.md §4.2). Without 557a6bfc662c/a110a81c52a9
    /// (v6.6) the entity exists but is disabled (runtime 0, not a server).
    /// `fair_server/cpuN/...` writes for `cpu` override the all-CPU values.
    pub fn fair_server_init(cfg: &crate::presets::KernelConfig, cpu: usize) -> SchedDlEntity {
        if !cfg.has(P::FairServer) {
            return SchedDlEntity::default();
        }
        let mut r = cfg.sysctl.fair_server_runtime_ns;
        let mut p = cfg.sysctl.fair_server_period_ns;
        if let Some(e) = cfg
            .sysctl
            .fair_server_cpu
            .iter()
            .find(|e| e.0 as usize == cpu)
        {
            r = e.1.unwrap_or(r);
            p = e.2.unwrap_or(p);
        }
        SchedDlEntity {
            dl_runtime: r,
            dl_deadline: p,
            dl_period: p,
            dl_bw: to_ratio(p, r),
            dl_density: to_ratio(p, r),
            deadline: DL_LAPSED,
            dl_server: true,
            dl_defer: true,
            ..Default::default()
        }
    }

    /// `dl_is_implicit()`: D == P.
    pub fn dl_is_implicit(&self) -> bool {
        self.dl_deadline == self.dl_period
    }

    /// `dl_next_period()`: the start of the next period.
    pub fn dl_next_period(&self) -> u64 {
        self.deadline
            .wrapping_sub(self.dl_deadline)
            .wrapping_add(self.dl_period)
    }

    /// The state of a dl_server in the reference state machine of rt-dl.md §4.4: 'A'
    /// stopped, 'B' zero-laxity wait, 'C' idle wait, 'D' running, 'E' replenish wait; '?' for
    /// a flag combination outside the table (possible in older versions).
    pub fn server_state(&self) -> char {
        let (act, thr, arm, run, idl) = (
            self.dl_server_active,
            self.dl_throttled,
            self.dl_defer_armed,
            self.dl_defer_running,
            self.dl_defer_idle,
        );
        match (act, thr, arm, idl) {
            (false, false, false, false) => 'A',
            (true, true, true, false) if !run => 'B',
            (true, true, true, true) => 'C',
            (true, false, false, false) => 'D',
            (true, true, false, false) if run => 'E',
            _ => '?',
        }
    }
}

/// kernel: deadline.c dl_time_before() — wrap-safe `a < b`.
#[inline]
pub fn dl_time_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// kernel: deadline.c dl_entity_overflow() (rt-dl.md §3.5): true iff the remaining runtime
/// cannot be consumed before the deadline at the reserved density. `runtime` is shifted as a
/// signed value and only then reinterpreted as u64 for the wrapping multiply.
pub fn dl_entity_overflow(se: &SchedDlEntity, t: u64) -> bool {
    let left = (se.dl_deadline >> DL_SCALE).wrapping_mul((se.runtime >> DL_SCALE) as u64);
    let right = (se.deadline.wrapping_sub(t) >> DL_SCALE).wrapping_mul(se.dl_runtime >> DL_SCALE);
    dl_time_before(right, left)
}

/// kernel: sched.h cap_scale()
#[inline]
fn cap_scale(v: u64, s: u64) -> u64 {
    ((v as u128 * s as u128) >> 10) as u64
}

/// kernel: sched.h `struct dl_rq`
#[derive(Clone, Debug, Default)]
pub struct DlRq {
    /// Queued entities in EDF order: (deadline, enqueue sequence, entity); the sequence keeps
    /// equal deadlines in FIFO order, as the rb-tree's insertion to the right does.
    pub root: std::collections::BTreeSet<(u64, u64, DlEnt)>,
    /// Queued entities, servers included (`dl_rq->dl_nr_running`).
    pub dl_nr_running: u32,
    pub seq: u64,
    /// `dl_rq->running_bw`: bandwidth of the active (contending) entities.
    pub running_bw: u64,
    /// `dl_rq->this_bw`: bandwidth of every DL entity assigned to this rq.
    pub this_bw: u64,
}

/// What happened to a fair_server (one [`DlServerEvent`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DlServerEventKind {
    /// `dl_server_start()` (E1) did something (not a no-op).
    Start,
    /// `dl_server_stop()` (E5).
    Stop,
    /// The `dl_timer` fired (E3), before its handler ran.
    Timer,
    /// The zero-laxity timer was moved forward (E3 forwarding).
    Forward,
    /// Budget exhausted while running (D -> E), or a yield.
    Throttle,
    /// `replenish_dl_entity()`.
    Replenish,
    /// Background (or idle) consumption exhausted the budget: a new deferred period (E2).
    NewPeriod,
    /// The server was inserted into the DL tree, i.e. it became runnable at DL priority
    /// (entry into D). `starved` is `dl_defer_running` at that moment: true when the entry
    /// follows a zero-laxity expiry (a genuine starvation episode), false when the server
    /// became runnable without one (e.g. the revised wakeup rule, rt-dl.md §4.9, 7.20, 7.22).
    Activate { starved: bool },
    /// The DL pick chose the server and it handed the CPU to a fair task; `curr` is the task
    /// that was current (the one the server preempts, or the same fair task).
    Pick { task: TaskId },
    /// The DL pick chose the server but the fair class had no task (E4).
    PickEmpty,
}

/// One entry of `Kernel::dl_server_log` (rt-dl.md §4.4 state after the event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DlServerEvent {
    /// Simulated time (ns).
    pub time: u64,
    pub cpu: u32,
    pub kind: DlServerEventKind,
    /// Server runtime and absolute deadline after the event.
    pub runtime: i64,
    pub deadline: u64,
    /// State letter of §4.4 after the event (see [`SchedDlEntity::server_state`]).
    pub state: char,
    /// The CPU's current task at the event: id, pid, policy and `prio` (comm via
    /// `Kernel::tasks[curr.index()].comm`; tasks are never removed).
    pub curr: TaskId,
    pub curr_pid: i32,
    pub curr_policy: Policy,
    pub curr_prio: i32,
    /// The highest-priority RT task queued on the CPU but not running at the event, and since
    /// when it has been waiting (its last enqueue): who the server is holding off.
    pub rt_waiting: Option<(TaskId, u64)>,
}

impl DlServerEvent {
    /// One line for explanations, e.g.
    /// `t=53.000000 ms cpu0 Activate { starved: false } state D runtime 49.849239 ms deadline 1050.000000 ms curr I (pid 1001, SCHED_FIFO prio 49)`.
    pub fn describe(&self, k: &Kernel) -> String {
        let ms = |ns: f64| ns / 1e6;
        format!(
            "t={:.6} ms cpu{} {:?} state {} runtime {:.6} ms deadline {:.6} ms curr {} (pid {}, {} prio {})",
            ms(self.time as f64),
            self.cpu,
            self.kind,
            self.state,
            ms(self.runtime as f64),
            ms(self.deadline as f64),
            k.tasks[self.curr.index()].comm,
            self.curr_pid,
            self.curr_policy.name(),
            self.curr_prio
        )
    }
}

/// Per-CPU counters of the fair_server (`Rq::dl_server_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DlServerStats {
    /// Entries into D (the server inserted in the DL tree).
    pub activations: u64,
    /// Entries into D with `dl_defer_running == 0` (no preceding zero-laxity expiry).
    pub nonstarved_activations: u64,
    /// Time fair tasks ran picked through the server, i.e. at DL priority (ns).
    pub dl_prio_ns: u64,
    pub starts: u64,
    pub stops: u64,
    pub throttles: u64,
    pub timer_fires: u64,
}

// ---- sched_attr parameters, validation and admission arithmetic (rt-dl.md §3.1, §3.2, §3.11)
// Pure functions shared by the kernel (sched_setattr, admission control) and the user surface
// (policy=deadline:R/D/P, chrt -d, rt-app SCHED_DEADLINE), so that both refuse the same values.

/// kernel: sched.h BW_SHIFT — bandwidths are fractions of `1 << BW_SHIFT`.
pub const BW_SHIFT: u32 = 20;
/// kernel: sched.h BW_UNIT (100 %).
pub const BW_UNIT: u64 = 1 << BW_SHIFT;
/// kernel: sched.h DL_SCALE — the overflow test works in ≈1 µs units.
pub const DL_SCALE: u32 = 10;
/// kernel: sysctl_sched_dl_period_min (100 µs) and _max (2^22 µs), in ns.
pub const DL_PERIOD_MIN_NS: u64 = 100 * 1000;
pub const DL_PERIOD_MAX_NS: u64 = (1 << 22) * 1000;

/// kernel: uapi sched.h `SCHED_FLAG_*` (the `sched_attr.sched_flags` bits).
pub const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;
pub const SCHED_FLAG_RECLAIM: u64 = 0x02;
pub const SCHED_FLAG_DL_OVERRUN: u64 = 0x04;
/// `SCHED_FLAG_ALL`: reset-on-fork, reclaim, DL overrun, keep policy/params, util clamp
/// min/max (0x7f). `SCHED_FLAG_SUGOV` (0x10000000) is kernel-internal.
pub const SCHED_FLAG_ALL: u64 = 0x7f;
/// kernel: sched.h RATIO_SHIFT — `bw_ratio` (1 / Umax) is a RATIO_SHIFT fixed-point value.
pub const RATIO_SHIFT: u32 = 8;

/// `sched_attr`'s SCHED_DEADLINE fields (ns). `period == 0` means "equal to the deadline".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DlAttr {
    pub runtime: u64,
    pub deadline: u64,
    pub period: u64,
    /// `sched_attr.sched_flags` (`SCHED_FLAG_RECLAIM`, `SCHED_FLAG_DL_OVERRUN`, ...).
    pub sched_flags: u64,
}

impl DlAttr {
    /// The period the kernel uses (`dl_period`, or `dl_deadline` when 0).
    pub fn effective_period(&self) -> u64 {
        if self.period == 0 {
            self.deadline
        } else {
            self.period
        }
    }
    /// `dl_bw = to_ratio(P, R)`
    pub fn bw(&self) -> u64 {
        to_ratio(self.effective_period(), self.runtime)
    }
    /// `dl_density = to_ratio(D, R)`
    pub fn density(&self) -> u64 {
        to_ratio(self.deadline, self.runtime)
    }
}

/// kernel: core.c to_ratio() — `runtime / period` as a BW_SHIFT fixed-point fraction; 0 for a
/// zero period, BW_UNIT for an infinite runtime (`RUNTIME_INF`, passed as `u64::MAX`).
pub fn to_ratio(period: u64, runtime: u64) -> u64 {
    if runtime == u64::MAX {
        return BW_UNIT;
    }
    if period == 0 {
        return 0;
    }
    ((runtime as u128) << BW_SHIFT)
        .checked_div(period as u128)
        .unwrap_or(0) as u64
}

/// kernel: deadline.c __checkparam_dl() — why the kernel answers -EINVAL, naming the value.
pub fn checkparam_dl(a: &DlAttr) -> Result<(), String> {
    // __sched_setscheduler(): flags outside SCHED_FLAG_ALL are refused before the DL checks
    if a.sched_flags & !SCHED_FLAG_ALL != 0 {
        return Err(format!(
            "sched_flags {:#x} has bits outside SCHED_FLAG_ALL {:#x} (EINVAL)",
            a.sched_flags, SCHED_FLAG_ALL
        ));
    }
    if a.deadline == 0 {
        return Err("sched_deadline must not be 0 (EINVAL)".into());
    }
    if a.runtime < (1 << DL_SCALE) {
        return Err(format!(
            "sched_runtime {} ns is below the 1024 ns minimum (EINVAL)",
            a.runtime
        ));
    }
    if a.deadline & (1 << 63) != 0 || a.period & (1 << 63) != 0 {
        return Err("sched_deadline/sched_period must be below 2^63 ns (EINVAL)".into());
    }
    let period = a.effective_period();
    if !(DL_PERIOD_MIN_NS..=DL_PERIOD_MAX_NS).contains(&period) {
        return Err(format!(
            "period {} ns is outside sched_deadline_period_min_us..max_us = 100 us .. {} us (EINVAL)",
            period,
            DL_PERIOD_MAX_NS / 1000
        ));
    }
    if a.runtime > a.deadline {
        return Err(format!(
            "sched_runtime {} ns exceeds sched_deadline {} ns (EINVAL)",
            a.runtime, a.deadline
        ));
    }
    if a.deadline > period {
        return Err(format!(
            "sched_deadline {} ns exceeds sched_period {} ns (EINVAL)",
            a.deadline, period
        ));
    }
    Ok(())
}

/// The per-CPU admission limit `dl_b->bw` from the sysctls: `to_ratio(period, runtime)`, or
/// None when `sched_rt_runtime_us = -1` (no admission control). kernel: deadline.c
/// init_dl_bandwidth()/global_rt_runtime()
pub fn dl_bw_limit(sched_rt_runtime_us: i64, sched_rt_period_us: u64) -> Option<u64> {
    if sched_rt_runtime_us < 0 {
        return None;
    }
    Some(to_ratio(
        sched_rt_period_us * 1000,
        sched_rt_runtime_us as u64 * 1000,
    ))
}

/// kernel: deadline.c __dl_overflow() — true (refuse with -EBUSY) if replacing `old_bw` by
/// `new_bw` in a root domain whose admitted total is `total_bw` would exceed the limit
/// `bw` (per CPU, at capacity 1024) scaled by the domain's summed capacity `cap`.
pub fn __dl_overflow(bw: Option<u64>, cap: u64, total_bw: u64, old_bw: u64, new_bw: u64) -> bool {
    match bw {
        None => false,
        Some(bw) => ((bw as u128 * cap as u128) >> 10) < (total_bw - old_bw + new_bw) as u128,
    }
}

impl Kernel {
    // ================================================================= entity access

    /// The entity behind a [`DlEnt`].
    pub fn dl_entity(&self, e: DlEnt) -> &SchedDlEntity {
        match e {
            DlEnt::Task(t) => &self.tasks[t.index()].dl,
            DlEnt::Server(c) => &self.rqs[c as usize].fair_server,
        }
    }

    fn dle(&mut self, e: DlEnt) -> &mut SchedDlEntity {
        match e {
            DlEnt::Task(t) => &mut self.tasks[t.index()].dl,
            DlEnt::Server(c) => &mut self.rqs[c as usize].fair_server,
        }
    }

    /// The CPU whose DL runqueue the entity belongs to.
    pub fn dl_entity_cpu(&self, e: DlEnt) -> usize {
        match e {
            DlEnt::Task(t) => self.tasks[t.index()].cpu,
            DlEnt::Server(c) => c as usize,
        }
    }

    /// kernel: sched.h rq_clock() (no IRQ/steal time in the model: equal to clock_task).
    #[inline]
    fn dl_rq_clock(&self, cpu: usize) -> u64 {
        self.rqs[cpu].clock_task
    }

    /// Appends to the server log (cheap: one Vec push, nothing else allocated).
    fn dl_server_log(&mut self, cpu: usize, kind: DlServerEventKind) {
        if !self.dl_server_log_on {
            return;
        }
        if self.dl_server_log.len() >= self.dl_server_log_cap {
            self.dl_server_log_dropped += 1;
            return;
        }
        let s = &self.rqs[cpu].fair_server;
        let curr = self.rqs[cpu].curr;
        let t = &self.tasks[curr.index()];
        let ev = DlServerEvent {
            time: self.now,
            cpu: cpu as u32,
            kind,
            runtime: s.runtime,
            deadline: s.deadline,
            state: s.server_state(),
            curr,
            curr_pid: t.pid,
            curr_policy: t.policy,
            curr_prio: if t.is_idle_task { 120 } else { t.prio() },
            rt_waiting: self.rt_top_waiting(cpu),
        };
        self.dl_server_log.push(ev);
    }

    // ================================================================= rb-tree

    /// kernel: deadline.c __enqueue_dl_entity() + inc_dl_tasks(): servers are not counted
    /// in `nr_running`.
    fn __enqueue_dl_entity(&mut self, e: DlEnt) {
        let cpu = self.dl_entity_cpu(e);
        if self.dl_entity(e).rb.is_some() {
            self.sched_warn_on(true, "__enqueue_dl_entity: already on the dl_rq");
            return;
        }
        let d = self.dl_entity(e).deadline;
        let dl = &mut self.rqs[cpu].dl;
        dl.seq += 1;
        let key = (d, dl.seq);
        dl.root.insert((d, key.1, e));
        dl.dl_nr_running += 1;
        self.dle(e).rb = Some(key);
        match e {
            DlEnt::Task(_) => self.add_nr_running(cpu, 1),
            DlEnt::Server(_) => {
                let starved = self.rqs[cpu].fair_server.dl_defer_running;
                let st = &mut self.rqs[cpu].dl_server_stats;
                st.activations += 1;
                if !starved {
                    st.nonstarved_activations += 1;
                }
                self.dl_server_log(cpu, DlServerEventKind::Activate { starved });
            }
        }
    }

    /// kernel: deadline.c __dequeue_dl_entity() + dec_dl_tasks(); nothing if not queued.
    fn __dequeue_dl_entity(&mut self, e: DlEnt) {
        let cpu = self.dl_entity_cpu(e);
        let Some((d, seq)) = self.dle(e).rb.take() else {
            return;
        };
        let dl = &mut self.rqs[cpu].dl;
        dl.root.remove(&(d, seq, e));
        dl.dl_nr_running -= 1;
        if let DlEnt::Task(_) = e {
            self.sub_nr_running(cpu, 1);
        }
    }

    /// Whether `e` is the leftmost entity of its dl_rq.
    fn is_leftmost(&self, e: DlEnt) -> bool {
        let cpu = self.dl_entity_cpu(e);
        self.rqs[cpu].dl.root.first().map(|k| k.2) == Some(e)
    }

    // ================================================================= timer

    /// kernel: deadline.c start_dl_timer() — arms the replenishment timer (or, for an armed
    /// deferred server, the zero-laxity timer at `deadline - runtime`). False if that instant
    /// is already more than a microsecond in the past (`ktime_us_delta(act, now) < 0`); an
    /// already queued timer is left as it is.
    fn start_dl_timer(&mut self, e: DlEnt) -> bool {
        let cpu = self.dl_entity_cpu(e);
        let se = *self.dl_entity(e);
        let act = if se.dl_defer_armed {
            se.deadline.wrapping_sub(se.runtime as u64)
        } else {
            se.dl_next_period()
        };
        // rq clock -> the timer's clock
        let act = act.wrapping_add(self.now - self.dl_rq_clock(cpu));
        if (act as i64).wrapping_sub(self.now as i64) / 1000 < 0 {
            return false;
        }
        if !se.dl_timer.armed {
            self.arm_dl_timer(e, act.max(self.now));
        }
        true
    }

    /// One of `e`'s two hard hrtimers: the `inactive_timer` or the `dl_timer`.
    fn dl_hrtimer(&mut self, e: DlEnt, inactive: bool) -> &mut DlTimer {
        let se = self.dle(e);
        if inactive {
            &mut se.inactive_timer
        } else {
            &mut se.dl_timer
        }
    }

    /// Queues the expiry event of one of `e`'s timers at `at` unless an earlier one is queued.
    fn queue_dl_hrtimer(&mut self, e: DlEnt, inactive: bool, at: u64) {
        let tm = self.dl_hrtimer(e, inactive);
        if tm.queued.is_none_or(|q| q > at) {
            tm.queued = Some(at);
            let ev = if inactive {
                crate::sim::Ev::DlInactiveTimer { ent: e }
            } else {
                crate::sim::Ev::DlTimer { ent: e }
            };
            self.push_event(at, ev);
        }
    }

    /// `hrtimer_start()` of one of `e`'s timers at `at`. A cancelled or re-armed timer keeps
    /// its queued event when that is not later than the new expiry.
    fn arm_dl_hrtimer(&mut self, e: DlEnt, inactive: bool, at: u64) {
        let tm = self.dl_hrtimer(e, inactive);
        tm.armed = true;
        tm.expires = at;
        self.queue_dl_hrtimer(e, inactive, at);
    }

    /// An expiry event of one of `e`'s timers is due: true if the timer expires now (armed
    /// and due), in which case the interrupt handler is to run. An early event re-queues the
    /// timer for its expiry.
    fn dl_hrtimer_due(&mut self, e: DlEnt, inactive: bool) -> bool {
        let now = self.now;
        let tm = self.dl_hrtimer(e, inactive);
        if tm.queued == Some(now) {
            tm.queued = None;
        }
        if !tm.armed {
            return false;
        }
        if tm.expires > now {
            let at = tm.expires;
            self.queue_dl_hrtimer(e, inactive, at);
            return false;
        }
        true
    }

    fn arm_dl_timer(&mut self, e: DlEnt, at: u64) {
        self.arm_dl_hrtimer(e, false, at);
    }

    /// Arms `inactive_timer` at `at` (same queueing rule as the `dl_timer`).
    fn arm_inactive_timer(&mut self, e: DlEnt, at: u64) {
        self.arm_dl_hrtimer(e, true, at);
    }

    /// An `Ev::DlInactiveTimer` of `e` is due (see [`Kernel::dl_hrtimer_due`]).
    pub(crate) fn inactive_timer_due(&mut self, e: DlEnt) -> bool {
        self.dl_hrtimer_due(e, true)
    }

    /// The `inactive_timer` of `e` expires (timer interrupt, exec.rs).
    pub(crate) fn inactive_timer_expired(&mut self, e: DlEnt) {
        self.dle(e).inactive_timer.armed = false;
        self.inactive_task_timer(e);
    }

    /// `hrtimer_try_to_cancel(&dl_se->dl_timer)`
    fn cancel_dl_timer(&mut self, e: DlEnt) {
        self.dle(e).dl_timer.armed = false;
    }

    /// An `Ev::DlTimer` of `e` is due (see [`Kernel::dl_hrtimer_due`]).
    pub(crate) fn dl_timer_due(&mut self, e: DlEnt) -> bool {
        self.dl_hrtimer_due(e, false)
    }

    /// The `dl_timer` of `e` expires (in the timer interrupt, exec.rs; after
    /// [`Kernel::dl_timer_due`]): the task's replenishment or the server's timer.
    pub(crate) fn dl_timer_expired(&mut self, e: DlEnt) {
        self.dle(e).dl_timer.armed = false;
        match e {
            DlEnt::Task(t) => self.dl_task_timer(t),
            DlEnt::Server(c) => self.dl_server_timer(c as usize),
        }
    }

    /// kernel: deadline.c dl_task_timer()
    fn dl_task_timer(&mut self, p: TaskId) {
        let cpu = self.tasks[p.index()].cpu;
        if !self.tasks[p.index()].dl.dl_throttled || self.tasks[p.index()].class != SchedClass::Dl {
            return;
        }
        self.update_rq_clock(cpu);
        if self.tasks[p.index()].on_rq != OnRq::Queued {
            // it blocked: refill only, the wakeup enqueues it
            self.replenish_dl_entity(DlEnt::Task(p));
            return;
        }
        self.enqueue_task_dl(cpu, p, ENQUEUE_REPLENISH);
        let curr = self.rqs[cpu].curr;
        if self.tasks[curr.index()].class == SchedClass::Dl {
            self.wakeup_preempt_dl(cpu, p);
        } else {
            self.resched_curr(cpu);
        }
        if self.ncpus > 1 {
            self.push_dl_tasks(cpu, None);
        }
    }

    // ================================================================= CBS

    /// kernel: deadline.c replenish_dl_new_period() (rt-dl.md §3.4)
    fn replenish_dl_new_period(&mut self, e: DlEnt) {
        let now = self.dl_rq_clock(self.dl_entity_cpu(e));
        let se = self.dle(e);
        se.deadline = now.wrapping_add(se.dl_deadline);
        se.runtime = se.dl_runtime as i64;
        if se.dl_defer && !se.dl_defer_running {
            se.dl_throttled = true;
            se.dl_defer_armed = true;
        }
    }

    /// kernel: deadline.c setup_new_dl_entity()
    fn setup_new_dl_entity(&mut self, e: DlEnt) {
        if self.dl_entity(e).dl_throttled {
            return;
        }
        self.replenish_dl_new_period(e);
    }

    /// kernel: deadline.c replenish_dl_entity() (rt-dl.md §3.4): refill by whole periods
    /// (carrying an overrun), a fresh period for an armed deferred server whose parameters
    /// overflow, the lag reset, and the deferral of a server that is not running.
    fn replenish_dl_entity(&mut self, e: DlEnt) {
        let cpu = self.dl_entity_cpu(e);
        let now = self.dl_rq_clock(cpu);
        let has_tasks = self.cfs[self.rqs[cpu].cfs.index()].nr_queued > 0;
        let stuck_fix = self.cfg.has(P::DlServerStuck);
        let mut se = *self.dl_entity(e);
        if se.dl_deadline == 0 || (se.dl_defer_armed && dl_entity_overflow(&se, now)) {
            se.deadline = now.wrapping_add(se.dl_deadline);
            se.runtime = se.dl_runtime as i64;
        }
        if se.dl_yielded && se.runtime > 0 {
            se.runtime = 0;
        }
        // (a disabled server, runtime 0, is never refilled: no endless loop)
        while se.runtime <= 0 && se.dl_runtime > 0 {
            se.deadline = se.deadline.wrapping_add(se.dl_period);
            se.runtime += se.dl_runtime as i64;
        }
        *self.dle(e) = se;
        if dl_time_before(se.deadline, now) {
            // "sched: DL replenish lagged too much" (printk_deferred_once, not a WARN)
            self.stats.dl_replenish_lagged += 1;
            self.replenish_dl_new_period(e);
        }
        let se = self.dle(e);
        se.dl_yielded = false;
        se.dl_throttled = false;
        if se.dl_defer_armed {
            se.dl_defer_armed = false;
            if let DlEnt::Server(c) = e {
                self.dl_server_log(c as usize, DlServerEventKind::Replenish);
            }
            return;
        }
        if se.dl_defer
            && !se.dl_defer_running
            && dl_time_before(now, se.deadline.wrapping_sub(se.runtime as u64))
            && (stuck_fix || has_tasks)
        {
            se.dl_defer_armed = true;
            se.dl_throttled = true;
            if !self.start_dl_timer(e) {
                self.cancel_dl_timer(e);
                let se = self.dle(e);
                se.dl_defer_armed = false;
                se.dl_throttled = false;
            }
        }
        if let DlEnt::Server(c) = e {
            self.dl_server_log(c as usize, DlServerEventKind::Replenish);
        }
    }

    /// kernel: deadline.c update_dl_revised_wakeup() — keep the deadline, scale the budget to
    /// the density over the time left.
    fn update_dl_revised_wakeup(&mut self, e: DlEnt) {
        let now = self.dl_rq_clock(self.dl_entity_cpu(e));
        let se = self.dle(e);
        let laxity = se.deadline.wrapping_sub(now);
        se.runtime = ((se.dl_density as u128 * laxity as u128) >> BW_SHIFT) as i64;
    }

    /// kernel: deadline.c update_dl_entity() (rt-dl.md §3.5), at an ENQUEUE_WAKEUP.
    fn update_dl_entity(&mut self, e: DlEnt) {
        let now = self.dl_rq_clock(self.dl_entity_cpu(e));
        let se = *self.dl_entity(e);
        if dl_time_before(se.deadline, now) || dl_entity_overflow(&se, now) {
            let revised_condition =
                !se.dl_is_implicit() || (self.cfg.has(P::DlServerRevised) && se.dl_defer);
            if revised_condition && !dl_time_before(se.deadline, now) {
                self.update_dl_revised_wakeup(e);
                return;
            }
            if self.cfg.has(P::DlServerStuck2) {
                self.dle(e).dl_defer_running = false;
            }
            self.replenish_dl_new_period(e);
        } else if se.dl_server && se.dl_defer && !se.dl_defer_running {
            let se = self.dle(e);
            se.dl_defer_armed = true;
            se.dl_throttled = true;
        }
    }

    /// kernel: deadline.c dl_check_constrained_dl() (rt-dl.md §3.6)
    fn dl_check_constrained_dl(&mut self, e: DlEnt) {
        let now = self.dl_rq_clock(self.dl_entity_cpu(e));
        let se = *self.dl_entity(e);
        // an entity that never had a period (the model's lapsed −1 ns; the kernel's 0, far
        // in the past) is not inside "its" window
        if se.deadline == DL_LAPSED {
            return;
        }
        if dl_time_before(se.deadline, now) && dl_time_before(now, se.dl_next_period()) {
            // the timer is computed from dl_next_period() (not armed as a deferral)
            if !self.start_dl_timer(e) {
                return;
            }
            let se = self.dle(e);
            se.dl_throttled = true;
            if se.runtime > 0 {
                se.runtime = 0;
            }
        }
    }

    /// kernel: deadline.c enqueue_dl_entity()
    fn enqueue_dl_entity(&mut self, e: DlEnt, flags: u32) {
        let cpu = self.dl_entity_cpu(e);
        if flags & ENQUEUE_MIGRATING != 0 {
            self.task_contending(e);
        }
        if flags & ENQUEUE_WAKEUP != 0 {
            self.task_contending(e);
            self.update_dl_entity(e);
        } else if flags & ENQUEUE_REPLENISH != 0 {
            self.replenish_dl_entity(e);
        } else if flags & (ENQUEUE_RESTORE | ENQUEUE_INITIAL) != 0
            && dl_time_before(self.dl_entity(e).deadline, self.dl_rq_clock(cpu))
        {
            // ENQUEUE_INITIAL: the model's first activation of a task created as
            // SCHED_DEADLINE (the kernel's task would have been switched with RESTORE)
            if flags & ENQUEUE_INITIAL != 0 {
                self.task_contending(e);
            }
            self.setup_new_dl_entity(e);
        }
        if self.dl_entity(e).dl_throttled && self.start_dl_timer(e) {
            return;
        }
        if self.dl_entity(e).dl_throttled {
            self.cancel_dl_timer(e);
            let se = self.dle(e);
            se.dl_defer_armed = false;
            se.dl_throttled = false;
        }
        self.__enqueue_dl_entity(e);
    }

    /// kernel: deadline.c dequeue_dl_entity(): a task leaving the rq (DEQUEUE_SAVE for a
    /// parameter or class change, DEQUEUE_MIGRATING) takes its bandwidth with it
    /// (sub_running_bw + sub_rq_bw); a block starts the 0-lag wait.
    fn dequeue_dl_entity(&mut self, e: DlEnt, flags: u32) {
        self.__dequeue_dl_entity(e);
        if matches!(e, DlEnt::Task(_)) && flags & (DEQUEUE_SAVE | DEQUEUE_MIGRATING) != 0 {
            self.dl_detach_rq_bw(e);
        } else if flags & DEQUEUE_SLEEP != 0 {
            self.task_non_contending(e);
        }
    }

    /// add_rq_bw(): `e`'s bandwidth joins the `this_bw` of its CPU (nothing if counted).
    fn dl_attach_rq_bw(&mut self, e: DlEnt) {
        let cpu = self.dl_entity_cpu(e);
        let se = self.dle(e);
        if se.bw_rq.is_some() || se.dl_runtime == 0 {
            return;
        }
        se.bw_rq = Some(cpu as u32);
        let bw = se.dl_bw;
        self.rqs[cpu].dl.this_bw += bw;
    }

    /// sub_running_bw() (if active) + sub_rq_bw() on the rq that counts `e`; a pending 0-lag
    /// wait ends (`dl_non_contending` cleared, `inactive_timer` cancelled).
    fn dl_detach_rq_bw(&mut self, e: DlEnt) {
        let se = self.dle(e);
        se.dl_non_contending = false;
        se.inactive_timer.armed = false;
        let Some(cpu) = se.bw_rq.take() else {
            return;
        };
        let bw = se.dl_bw;
        let running = std::mem::take(&mut se.in_running_bw);
        let dl = &mut self.rqs[cpu as usize].dl;
        if running {
            dl.running_bw = dl.running_bw.saturating_sub(bw);
        }
        dl.this_bw = dl.this_bw.saturating_sub(bw);
    }

    /// kernel: deadline.c init_dl_rq() + dl_server_apply_params(init): the fair_server's
    /// bandwidth is assigned to its rq from boot.
    pub(crate) fn init_dl_rq_bw(&mut self, cpu: usize) {
        self.dl_attach_rq_bw(DlEnt::Server(cpu as u32));
    }

    /// kernel: deadline.c task_contending() (rt-dl.md §3.10): an entity becoming runnable
    /// (a wakeup; the model also calls it for every task enqueue, which is a no-op for an
    /// entity already active on this rq). A non-contending entity is still in `running_bw`:
    /// its 0-lag timer is cancelled; an inactive one is added back. Its `this_bw` follows it
    /// to the rq it is enqueued on (add_rq_bw for ENQUEUE_MIGRATED/RESTORE).
    fn task_contending(&mut self, e: DlEnt) {
        if self.dl_entity(e).dl_runtime == 0 {
            return;
        }
        let cpu = self.dl_entity_cpu(e);
        if self.dl_entity(e).bw_rq != Some(cpu as u32) {
            self.dl_detach_rq_bw(e);
            self.dl_attach_rq_bw(e);
        }
        let se = self.dle(e);
        if se.dl_non_contending {
            se.dl_non_contending = false;
            se.inactive_timer.armed = false;
        } else if !se.in_running_bw {
            se.in_running_bw = true;
            let bw = se.dl_bw;
            self.rqs[cpu].dl.running_bw += bw;
        }
    }

    /// kernel: deadline.c task_non_contending() (rt-dl.md §3.10): a blocking task keeps its
    /// bandwidth in `running_bw` until its 0-lag time `deadline - runtime * dl_period /
    /// dl_runtime`; if that is already past it is released now (and a dead task's `this_bw`
    /// with it), else the `inactive_timer` is armed and the task is `dl_non_contending`.
    /// Servers release at once (module docs).
    fn task_non_contending(&mut self, e: DlEnt) {
        let cpu = self.dl_entity_cpu(e);
        let se = *self.dl_entity(e);
        if se.dl_runtime == 0 || !se.in_running_bw {
            return;
        }
        let release_now = match e {
            DlEnt::Server(_) => true,
            DlEnt::Task(_) => {
                self.sched_warn_on(se.dl_non_contending, "task_non_contending: already");
                // div64_long(): signed division, truncating toward zero
                let lag =
                    (se.runtime as i128 * se.dl_period as i128 / se.dl_runtime as i128) as i64;
                let zerolag = (se.deadline as i64).wrapping_sub(lag);
                let rel = zerolag.wrapping_sub(self.dl_rq_clock(cpu) as i64);
                if rel < 0 || se.inactive_timer.armed {
                    true
                } else {
                    self.dle(e).dl_non_contending = true;
                    let at = self.now + rel as u64;
                    self.arm_inactive_timer(e, at);
                    false
                }
            }
        };
        if release_now {
            self.dl_sub_running_bw(e);
            if let DlEnt::Task(t) = e {
                if self.tasks[t.index()].state == TaskState::Dead {
                    self.dl_detach_rq_bw(e);
                }
            }
        }
    }

    /// sub_running_bw()
    fn dl_sub_running_bw(&mut self, e: DlEnt) {
        let se = self.dle(e);
        if !std::mem::take(&mut se.in_running_bw) {
            return;
        }
        let bw = se.dl_bw;
        let cpu = se
            .bw_rq
            .map_or_else(|| self.dl_entity_cpu(e), |c| c as usize);
        let rb = &mut self.rqs[cpu].dl.running_bw;
        *rb = rb.saturating_sub(bw);
    }

    /// kernel: deadline.c inactive_task_timer() — the 0-lag time of a non-contending task:
    /// its bandwidth leaves `running_bw` (and `this_bw` too if it has exited).
    fn inactive_task_timer(&mut self, e: DlEnt) {
        if !self.dl_entity(e).dl_non_contending {
            return;
        }
        if let Some(cpu) = self.dl_entity(e).bw_rq {
            self.update_rq_clock(cpu as usize);
        }
        self.dle(e).dl_non_contending = false;
        self.dl_sub_running_bw(e);
        if let DlEnt::Task(t) = e {
            if self.tasks[t.index()].state == TaskState::Dead {
                self.dl_detach_rq_bw(e);
            }
        }
    }

    /// The GRUB limits of the rq: (`max_bw`, `bw_ratio`) — kernel: deadline.c
    /// init_dl_rq_bw_ratio(): Umax = rt_runtime / rt_period and its inverse in RATIO_SHIFT
    /// fixed point; 100 % and 1 when `sched_rt_runtime_us = -1`.
    fn dl_max_bw_ratio(&self) -> (u64, u64) {
        let (rt, per) = (
            self.cfg.sysctl.sched_rt_runtime_us,
            self.cfg.sysctl.sched_rt_period_us,
        );
        if rt < 0 {
            return (BW_UNIT, 1 << RATIO_SHIFT);
        }
        let (rt, per) = (rt as u64 * 1000, per * 1000);
        (
            to_ratio(per, rt),
            to_ratio(rt, per) >> (BW_SHIFT - RATIO_SHIFT),
        )
    }

    /// `rq->dl.extra_bw`: `max_bw` less `bw / cpus` (integer division, as each `__dl_add()`
    /// does) for every admitted entity of the root domain (tasks and fair_servers).
    fn dl_extra_bw(&self, cpu: usize, max_bw: u64) -> u64 {
        let cpus = self.root_domain_cpus(cpu);
        let n = cpus.len().max(1) as u64;
        let tasks: u64 = self
            .tasks
            .iter()
            .filter(|t| {
                t.policy == Policy::Deadline
                    && t.class == SchedClass::Dl
                    && t.state != TaskState::Dead
                    && cpus.contains(&t.cpu)
            })
            .map(|t| t.dl.dl_bw / n)
            .sum();
        let servers: u64 = cpus
            .iter()
            .map(|&c| &self.rqs[c].fair_server)
            .filter(|s| s.dl_server)
            .map(|s| s.dl_bw / n)
            .sum();
        max_bw.saturating_sub(tasks + servers)
    }

    /// kernel: deadline.c grub_reclaim() (rt-dl.md §3.10): a SCHED_FLAG_RECLAIM task's
    /// budget decreases at `max(u, Umax - Uinact - Uextra) / Umax` of `delta`, with
    /// `Uinact = this_bw - running_bw`; the comparison is done as the kernel does it
    /// (`Uinact + Uextra > Umax - u`) so that nothing goes negative.
    pub(crate) fn grub_reclaim(&self, cpu: usize, se: &SchedDlEntity, delta: u64) -> u64 {
        let (max_bw, bw_ratio) = self.dl_max_bw_ratio();
        let dl = &self.rqs[cpu].dl;
        let u_inact = dl.this_bw.saturating_sub(dl.running_bw);
        let extra = self.dl_extra_bw(cpu, max_bw);
        let u_act = if u_inact + extra > max_bw.saturating_sub(se.dl_bw) {
            se.dl_bw
        } else {
            max_bw - u_inact - extra
        };
        let u_act = (u_act as u128 * bw_ratio as u128) >> RATIO_SHIFT;
        ((delta as u128 * u_act) >> BW_SHIFT) as u64
    }

    /// kernel: deadline.c dl_scaled_delta_exec(): GRUB for a SCHED_FLAG_RECLAIM task, else
    /// `delta` scaled by the CPU's frequency and capacity; a server's charge is not scaled
    /// with fc975cfb3639.
    fn dl_scaled_delta_exec(&self, cpu: usize, e: DlEnt, delta: u64) -> u64 {
        if matches!(e, DlEnt::Server(_)) && self.cfg.has(P::DlServerRtFormula) {
            return delta;
        }
        let se = self.dl_entity(e);
        if se.flag_reclaim {
            return self.grub_reclaim(cpu, se, delta);
        }
        let f = self.machine.freq_scale[cpu];
        let c = self.rqs[cpu].capacity_orig;
        if f == 1024 && c == 1024 {
            return delta;
        }
        cap_scale(cap_scale(delta, f), c)
    }

    /// kernel: deadline.c update_curr_dl_se() (rt-dl.md §3.7, the server branches of §4.5 E2).
    /// `idle`: the charge is idle time (dl_server_update_idle, f5a538c07df2).
    fn update_curr_dl_se(&mut self, cpu: usize, e: DlEnt, delta: i64, idle: bool) {
        let is_server = matches!(e, DlEnt::Server(_));
        if is_server && delta > 0 {
            // the common case of every fair update_curr(): budget left after the charge, no
            // flag to clear — nothing but the subtraction below happens
            let scaled = self.dl_scaled_delta_exec(cpu, e, delta as u64) as i64;
            let fs = &mut self.rqs[cpu].fair_server;
            if (fs.dl_defer || !fs.dl_throttled)
                && !fs.dl_defer_idle
                && !fs.dl_yielded
                && fs.runtime > scaled
            {
                fs.runtime -= scaled;
                return;
            }
        }
        if delta <= 0 {
            if !self.dl_entity(e).dl_yielded {
                return;
            }
        } else {
            let se = *self.dl_entity(e);
            if is_server && se.dl_throttled && !se.dl_defer {
                return;
            }
            let scaled = self.dl_scaled_delta_exec(cpu, e, delta as u64);
            let stop_cond = self.cfg.has(P::DlServerStopCond);
            let se = self.dle(e);
            se.runtime -= scaled as i64;
            if is_server {
                if stop_cond && se.dl_defer_idle && !idle {
                    se.dl_defer_idle = false;
                }
                if se.dl_defer && se.dl_throttled && se.runtime <= 0 {
                    if stop_cond && se.dl_defer_idle && idle {
                        se.runtime = 0;
                        return;
                    }
                    // background consumption used the budget: the fair class had its share
                    se.dl_defer_running = false;
                    self.cancel_dl_timer(e);
                    self.replenish_dl_new_period(e);
                    if stop_cond && idle {
                        self.dle(e).dl_defer_idle = true;
                    }
                    let started = self.start_dl_timer(e);
                    self.sched_warn_on(!started, "dl_server: new period timer not started");
                    self.dl_server_log(cpu, DlServerEventKind::NewPeriod);
                    return;
                }
            }
        }
        let se = *self.dl_entity(e);
        if se.runtime > 0 && !se.dl_yielded {
            return;
        }
        // throttle:
        {
            let se = self.dle(e);
            se.dl_throttled = true;
            if se.runtime <= 0 && se.flag_dl_overrun {
                se.dl_overrun = true;
            }
        }
        self.dequeue_dl_entity(e, 0);
        if !self.start_dl_timer(e) {
            match e {
                DlEnt::Server(_) => {
                    if self.cfg.has(P::DlServerExpiry) {
                        // a new period (deferred only if not running a starvation episode:
                        // dl_defer_running is left as it is) and its timer, instead of
                        // replenish-and-run
                        self.replenish_dl_new_period(e);
                        self.start_dl_timer(e);
                    } else {
                        self.enqueue_dl_entity(e, ENQUEUE_REPLENISH);
                    }
                }
                DlEnt::Task(t) => self.enqueue_task_dl(cpu, t, ENQUEUE_REPLENISH),
            }
        }
        if is_server {
            self.rqs[cpu].dl_server_stats.throttles += 1;
            self.dl_server_log(cpu, DlServerEventKind::Throttle);
        }
        if !self.is_leftmost(e) {
            self.resched_curr(cpu);
        }
    }

    /// kernel: deadline.c update_curr_dl() — charge the running DL task.
    pub(crate) fn update_curr_dl(&mut self, cpu: usize) {
        let curr = self.rqs[cpu].curr;
        if self.tasks[curr.index()].class != SchedClass::Dl
            || self.tasks[curr.index()].dl.rb.is_none()
        {
            return;
        }
        let now = self.rq_clock_task(cpu);
        let se = self.tasks[curr.index()].se;
        let delta = now as i64 - self.se[se.index()].exec_start as i64;
        if delta > 0 {
            let e = &mut self.se[se.index()];
            e.exec_start = now;
            e.sum_exec_runtime += delta as u64;
        }
        self.update_curr_dl_se(cpu, DlEnt::Task(curr), delta, false);
    }

    // ================================================================= class hooks

    /// kernel: deadline.c enqueue_task_dl()
    pub(crate) fn enqueue_task_dl(&mut self, _cpu: usize, p: TaskId, flags: u32) {
        let e = DlEnt::Task(p);
        // a queued task is active contending on this rq: add_rq_bw + add_running_bw for
        // RESTORE/MIGRATING, task_contending() for a wakeup (no-op when already counted)
        self.task_contending(e);
        let se = self.tasks[p.index()].dl;
        if !se.dl_throttled && !se.dl_is_implicit() {
            self.dl_check_constrained_dl(e);
        }
        if flags & ENQUEUE_REPLENISH == 0 && self.tasks[p.index()].dl.dl_throttled {
            // the replenishment timer will enqueue it (task_contending() done above)
            return;
        }
        self.enqueue_dl_entity(e, flags);
    }

    /// kernel: deadline.c dequeue_task_dl()
    pub(crate) fn dequeue_task_dl(&mut self, cpu: usize, p: TaskId, flags: u32) -> bool {
        self.update_curr_dl(cpu);
        self.dequeue_dl_entity(DlEnt::Task(p), flags);
        true
    }

    /// kernel: deadline.c pick_task_dl() → pick_next_dl_entity(): the leftmost entity. A
    /// server is resolved to a fair task by the class table (class.rs).
    pub(crate) fn pick_task_dl(&self, cpu: usize) -> Option<DlEnt> {
        self.rqs[cpu].dl.root.first().map(|k| k.2)
    }

    /// kernel: deadline.c set_next_task_dl() (and the push it queues as a balance callback)
    pub(crate) fn set_next_task_dl(&mut self, cpu: usize, p: TaskId) {
        let now = self.rq_clock_task(cpu);
        let se = self.tasks[p.index()].se;
        self.se[se.index()].exec_start = now;
        if self.ncpus > 1 {
            self.push_dl_tasks(cpu, Some(p));
        }
    }

    /// kernel: deadline.c put_prev_task_dl()
    pub(crate) fn put_prev_task_dl(&mut self, prev: TaskId) {
        let cpu = self.tasks[prev.index()].cpu;
        if self.rqs[cpu].curr == prev {
            self.update_curr_dl(cpu);
        }
    }

    /// kernel: deadline.c dl_entity_preempt(): strictly earlier deadline.
    fn dl_entity_preempt(&self, a: DlEnt, b: DlEnt) -> bool {
        dl_time_before(self.dl_entity(a).deadline, self.dl_entity(b).deadline)
    }

    /// kernel: deadline.c wakeup_preempt_dl(): an earlier deadline preempts.
    pub(crate) fn wakeup_preempt_dl(&mut self, cpu: usize, p: TaskId) {
        let curr = self.rqs[cpu].curr;
        if self.dl_entity_preempt(DlEnt::Task(p), DlEnt::Task(curr)) {
            self.resched_curr(cpu);
        }
    }

    /// kernel: deadline.c task_tick_dl() — tick-granular budget enforcement (no HRTICK_DL).
    pub(crate) fn task_tick_dl(&mut self, cpu: usize, _curr: TaskId) {
        self.update_curr_dl(cpu);
    }

    /// kernel: deadline.c yield_task_dl(): the task gives up its remaining runtime and sleeps
    /// until its next period.
    pub(crate) fn yield_task_dl(&mut self, cpu: usize) {
        let curr = self.rqs[cpu].curr;
        self.tasks[curr.index()].dl.dl_yielded = true;
        self.update_rq_clock(cpu);
        self.update_curr_dl(cpu);
        self.rq_clock_skip_update(cpu);
    }

    /// kernel: deadline.c switched_to_dl(): a task that is not queued gets its bandwidth
    /// assigned to the rq (add_rq_bw; it becomes active at its wakeup); a queued task that
    /// joined the class preempts a non-DL current task (or a DL one with a later deadline).
    pub(crate) fn switched_to_dl(&mut self, cpu: usize, p: TaskId) {
        if self.tasks[p.index()].on_rq != OnRq::Queued {
            self.dl_attach_rq_bw(DlEnt::Task(p));
            return;
        }
        if self.rqs[cpu].curr == p {
            return;
        }
        let curr = self.rqs[cpu].curr;
        if self.tasks[curr.index()].class != SchedClass::Dl {
            self.resched_curr(cpu);
        } else {
            self.wakeup_preempt_dl(cpu, p);
        }
    }

    /// kernel: deadline.c switched_from_dl(): the task's bandwidth leaves the rq
    /// (`running_bw`, a pending 0-lag wait, `this_bw`).
    pub(crate) fn switched_from_dl(&mut self, cpu: usize, p: TaskId) {
        let _ = cpu;
        self.dl_detach_rq_bw(DlEnt::Task(p));
        self.cancel_dl_timer(DlEnt::Task(p));
        self.tasks[p.index()].dl.dl_throttled = false;
    }

    // ================================================================= SMP (§3.9, brief)

    /// cpudl: the earliest deadline queued on `cpu` (servers included), None for a "free" CPU.
    fn dl_earliest(&self, cpu: usize) -> Option<u64> {
        self.rqs[cpu].dl.root.first().map(|k| k.0)
    }

    /// `dl_task_is_earliest_deadline()`: `p` would be the earliest entity on `cpu`.
    fn dl_task_is_earliest_deadline(&self, p: TaskId, cpu: usize) -> bool {
        match self.dl_earliest(cpu) {
            None => true,
            Some(d) => dl_time_before(self.tasks[p.index()].dl.deadline, d),
        }
    }

    /// kernel: deadline.c find_later_rq() over cpudl_find(): among the CPUs of the root
    /// domain that `p` may use, the free ones (no DL entity queued), else the one whose
    /// earliest deadline is the latest, if later than `p`'s; `p`'s own CPU first. Deviation:
    /// no sched-domain affinity walk, and the lowest-numbered CPU instead of
    /// `cpumask_any_and_distribute()`.
    fn find_later_rq(&self, p: TaskId) -> Option<usize> {
        let t = &self.tasks[p.index()];
        let cpus: Vec<usize> = self
            .root_domain_cpus(t.cpu)
            .into_iter()
            .filter(|&c| t.cpus_allowed.contains(c))
            .collect();
        let free: Vec<usize> = cpus
            .iter()
            .copied()
            .filter(|&c| self.dl_earliest(c).is_none())
            .collect();
        let later = if !free.is_empty() {
            free
        } else {
            let mut best: Option<(usize, u64)> = None;
            for &c in &cpus {
                let d = self.dl_earliest(c).unwrap_or(0);
                if best.is_none_or(|(_, bd)| dl_time_before(bd, d)) {
                    best = Some((c, d));
                }
            }
            match best {
                Some((c, d)) if dl_time_before(t.dl.deadline, d) => vec![c],
                _ => return None,
            }
        };
        if later.contains(&t.cpu) {
            return Some(t.cpu);
        }
        later.first().copied()
    }

    /// kernel: deadline.c select_task_rq_dl(): a waking task whose current CPU runs a DL
    /// task it cannot preempt (or a pinned one) goes to a later CPU if it would be the earliest
    /// there.
    pub(crate) fn select_task_rq_dl(&mut self, p: TaskId, cpu: usize, wake_flags: u32) -> usize {
        if wake_flags & WF_TTWU == 0 {
            return cpu;
        }
        let curr = self.rqs[cpu].curr;
        let ct = &self.tasks[curr.index()];
        let select = ct.class == SchedClass::Dl
            && (ct.nr_cpus_allowed < 2
                || !self.dl_entity_preempt(DlEnt::Task(p), DlEnt::Task(curr)))
            && self.tasks[p.index()].nr_cpus_allowed > 1;
        if select {
            if let Some(target) = self.find_later_rq(p) {
                if self.dl_task_is_earliest_deadline(p, target) {
                    return target;
                }
            }
        }
        cpu
    }

    /// The earliest queued DL task on `cpu` that could move: not running, not `skip`, allowed
    /// on more than one CPU (`pick_next_pushable_dl_task()`).
    fn pick_next_pushable_dl_task(&self, cpu: usize, skip: Option<TaskId>) -> Option<TaskId> {
        let curr = self.rqs[cpu].curr;
        self.rqs[cpu].dl.root.iter().find_map(|k| match k.2 {
            DlEnt::Task(t)
                if t != curr && Some(t) != skip && self.tasks[t.index()].nr_cpus_allowed > 1 =>
            {
                Some(t)
            }
            _ => None,
        })
    }

    /// Moves queued DL task `p` from `src` to `dst` (deactivate, set_task_cpu, activate) and
    /// reschedules `dst`.
    fn move_dl_task(&mut self, src: usize, dst: usize, p: TaskId) {
        self.update_rq_clock(src);
        self.dequeue_task_dl(src, p, DEQUEUE_MIGRATING | DEQUEUE_NOCLOCK);
        self.tasks[p.index()].on_rq = OnRq::Migrating;
        self.set_task_cpu(p, dst, src);
        self.update_rq_clock(dst);
        self.enqueue_task_dl(dst, p, ENQUEUE_MIGRATING | ENQUEUE_NOCLOCK);
        self.tasks[p.index()].on_rq = OnRq::Queued;
        self.resched_curr(dst);
    }

    /// kernel: deadline.c push_dl_task() (repeated by push_dl_tasks()): move the earliest
    /// pushable task of an rq with more than one queued DL task to a CPU where it would be the
    /// earliest; if it would preempt this CPU's current DL task, reschedule here instead.
    /// `skip`: a task just picked to run here.
    fn push_dl_tasks(&mut self, cpu: usize, skip: Option<TaskId>) {
        for _ in 0..self.ncpus {
            let nr_tasks = self.rqs[cpu]
                .dl
                .root
                .iter()
                .filter(|k| matches!(k.2, DlEnt::Task(_)))
                .count();
            if nr_tasks < 2 {
                return;
            }
            let Some(next) = self.pick_next_pushable_dl_task(cpu, skip) else {
                return;
            };
            let curr = self.rqs[cpu].curr;
            if self.tasks[curr.index()].class == SchedClass::Dl
                && self.tasks[curr.index()].dl.rb.is_some()
                && self.dl_entity_preempt(DlEnt::Task(next), DlEnt::Task(curr))
                && skip.is_none()
            {
                self.resched_curr(cpu);
                return;
            }
            match self.find_later_rq(next) {
                Some(dst) if dst != cpu && self.dl_task_is_earliest_deadline(next, dst) => {
                    self.move_dl_task(cpu, dst, next)
                }
                _ => return,
            }
        }
    }

    /// kernel: deadline.c task_woken_dl(): push the woken task if it cannot preempt the
    /// running DL task here.
    pub(crate) fn task_woken_dl(&mut self, cpu: usize, p: TaskId) {
        let curr = self.rqs[cpu].curr;
        if curr == p || self.need_resched(cpu) || self.tasks[p.index()].nr_cpus_allowed < 2 {
            return;
        }
        let ct = &self.tasks[curr.index()];
        if ct.class == SchedClass::Dl
            && (ct.nr_cpus_allowed < 2
                || !self.dl_entity_preempt(DlEnt::Task(p), DlEnt::Task(curr)))
        {
            self.push_dl_tasks(cpu, None);
        }
    }

    /// kernel: deadline.c balance_dl() → pull_dl_task(): when the CPU's previous task was a
    /// DL task and no DL entity is left here, pull the earliest pushable task of another CPU
    /// of the root domain that holds more than one (unless it would preempt that CPU's
    /// current task there). True if a task was pulled.
    pub(crate) fn balance_dl(&mut self, cpu: usize) -> bool {
        let prev = self.rqs[cpu].curr;
        if self.tasks[prev.index()].class != SchedClass::Dl || self.dl_earliest(cpu).is_some() {
            return false;
        }
        let mut pulled = false;
        for src in self.root_domain_cpus(cpu) {
            if src == cpu {
                continue;
            }
            let nr_tasks = self.rqs[src]
                .dl
                .root
                .iter()
                .filter(|k| matches!(k.2, DlEnt::Task(_)))
                .count();
            if nr_tasks < 2 {
                continue;
            }
            let Some(p) = self.pick_next_pushable_dl_task(src, None) else {
                continue;
            };
            if !self.tasks[p.index()].cpus_allowed.contains(cpu)
                || !self.dl_task_is_earliest_deadline(p, cpu)
            {
                continue;
            }
            let scurr = self.rqs[src].curr;
            if self.tasks[scurr.index()].class == SchedClass::Dl
                && self.dl_entity_preempt(DlEnt::Task(p), DlEnt::Task(scurr))
            {
                continue;
            }
            self.move_dl_task(src, cpu, p);
            pulled = true;
        }
        pulled
    }

    // ================================================================= dl_server (§4.5)

    /// kernel: deadline.c dl_server_start() — E1, from `enqueue_task_fair()` when the fair
    /// class goes from empty to non-empty.
    pub(crate) fn dl_server_start(&mut self, cpu: usize) {
        let s = DlEnt::Server(cpu as u32);
        let fs = self.rqs[cpu].fair_server;
        if !fs.dl_server || fs.dl_runtime == 0 {
            return;
        }
        if (self.cfg.has(P::DlServerLessAggr) || fs.rb.is_some()) && fs.dl_server_active {
            return;
        }
        if self.cfg.has(P::DlServerTimeAcct) {
            // update the current task to now
            self.update_curr_of_current(cpu);
        }
        self.rqs[cpu].fair_server.dl_server_active = true;
        self.rqs[cpu].dl_server_stats.starts += 1;
        self.enqueue_dl_entity(s, ENQUEUE_WAKEUP);
        self.dl_server_log(cpu, DlServerEventKind::Start);
        // "if current is not DL or the server is earlier: resched_curr". Raised here only where
        // it can change something in the model: the start comes from a fair enqueue, so if
        // current is the idle task the wakeup's own preemption check reschedules it (with the
        // model's IPI timing), and a fair current has just blocked and is inside __schedule(),
        // which clears prev's flag after the pick (as it does for a start inside the pick
        // itself, from newidle balancing: `Rq::in_pick`).
        let curr = self.rqs[cpu].curr;
        let cc = self.tasks[curr.index()].class;
        if !self.rqs[cpu].in_pick
            && !matches!(cc, SchedClass::Idle | SchedClass::Fair)
            && (cc != SchedClass::Dl || self.dl_entity_preempt(s, DlEnt::Task(curr)))
        {
            self.resched_curr(cpu);
        }
    }

    /// kernel: deadline.c dl_server_stop() — E5: out of the tree, timer cancelled, flags
    /// cleared; runtime, deadline and `dl_defer_running` are kept.
    pub(crate) fn dl_server_stop(&mut self, cpu: usize) {
        let s = DlEnt::Server(cpu as u32);
        let fs = self.rqs[cpu].fair_server;
        if self.cfg.has(P::DlServerLessAggr) {
            if !fs.dl_server_active {
                return;
            }
        } else if fs.dl_runtime == 0 {
            return;
        }
        self.dequeue_dl_entity(s, DEQUEUE_SLEEP);
        self.cancel_dl_timer(s);
        let stop_cond = self.cfg.has(P::DlServerStopCond);
        let fs = &mut self.rqs[cpu].fair_server;
        fs.dl_defer_armed = false;
        fs.dl_throttled = false;
        if stop_cond {
            fs.dl_defer_idle = false;
        }
        fs.dl_server_active = false;
        self.rqs[cpu].dl_server_stats.stops += 1;
        self.dl_server_log(cpu, DlServerEventKind::Stop);
    }

    /// kernel: deadline.c dl_server_update() — E2/E8: a fair task ran `delta` ns on `cpu`;
    /// `through`: it was picked through the server (at DL priority).
    pub(crate) fn dl_server_update(&mut self, cpu: usize, delta: i64, through: bool) {
        let fs = &self.rqs[cpu].fair_server;
        if fs.dl_runtime == 0 || (self.cfg.has(P::DlServerTimeAcct) && !fs.dl_server_active) {
            return;
        }
        if self.cfg.has(P::DlServerLessAggr) && !self.cfg.has(P::DlServerBehaviour) {
            self.rqs[cpu].fair_server.dl_server_idle = false;
        }
        if through && delta > 0 {
            self.rqs[cpu].dl_server_stats.dl_prio_ns += delta as u64;
        }
        self.update_curr_dl_se(cpu, DlEnt::Server(cpu as u32), delta, false);
    }

    /// kernel: deadline.c dl_server_update_idle() (e636ffb9e31b, v6.19+): idle time charged
    /// to an active deferred server (E7 new form).
    pub(crate) fn dl_server_update_idle(&mut self, cpu: usize, delta: i64) {
        let fs = &self.rqs[cpu].fair_server;
        if fs.dl_server_active && fs.dl_runtime != 0 && fs.dl_defer {
            self.update_curr_dl_se(cpu, DlEnt::Server(cpu as u32), delta, true);
        }
    }

    /// kernel: deadline.c dl_server_update_idle_time() (v6.12 .. v6.18, E7 old form): the
    /// time since `p` (the idle task, or the current task of an rq without runnable tasks)
    /// started is taken off the budget, clamped at 0; it ignores `dl_server_active`.
    pub(crate) fn dl_server_update_idle_time(&mut self, cpu: usize, p: TaskId) {
        let fs = self.rqs[cpu].fair_server;
        if !fs.dl_defer || fs.runtime < 0 {
            return;
        }
        let now = self.rq_clock_task(cpu);
        let se = self.tasks[p.index()].se;
        let delta = now as i64 - self.se[se.index()].exec_start as i64;
        if delta < 0 {
            return;
        }
        let scaled = self.dl_scaled_delta_exec(cpu, DlEnt::Server(cpu as u32), delta as u64);
        let fs = &mut self.rqs[cpu].fair_server;
        fs.runtime -= scaled as i64;
        if fs.runtime < 0 {
            fs.dl_defer_running = false;
            fs.runtime = 0;
        }
        self.se[se.index()].exec_start = now;
    }

    /// kernel: deadline.c dl_server_stopped() (cccb45d7c429 .. a3a70caf7906): the two-strike
    /// idle check; true if the server is (now) stopped.
    fn dl_server_stopped(&mut self, cpu: usize) -> bool {
        let fs = self.rqs[cpu].fair_server;
        if !fs.dl_server_active {
            // 4717432dfd99: a server that is not active *is* stopped
            return self.cfg.has(P::DlServerStoppedFix);
        }
        if fs.dl_server_idle {
            self.dl_server_stop(cpu);
            return true;
        }
        self.rqs[cpu].fair_server.dl_server_idle = true;
        false
    }

    /// kernel: deadline.c dl_server_timer() — E3, the zero-laxity / replenishment timer.
    fn dl_server_timer(&mut self, cpu: usize) {
        let s = DlEnt::Server(cpu as u32);
        let fs = self.rqs[cpu].fair_server;
        if !fs.dl_throttled || fs.dl_runtime == 0 {
            return;
        }
        self.rqs[cpu].dl_server_stats.timer_fires += 1;
        self.update_rq_clock(cpu);
        self.dl_server_log(cpu, DlServerEventKind::Timer);
        if self.cfg.has(P::DlServerTimeAcct) {
            // current's pending runtime reaches the server first (may move it, E2)
            self.update_curr_of_current(cpu);
        }
        if self.cfg.has(P::DlServerStopCond) && self.rqs[cpu].fair_server.dl_defer_idle {
            self.dl_server_stop(cpu);
            return;
        }
        if !self.cfg.has(P::DlServerStuck) && self.cfs[self.rqs[cpu].cfs.index()].nr_queued == 0 {
            self.replenish_dl_entity(s);
            if self.cfg.has(P::DlServerLessAggr) {
                self.dl_server_stopped(cpu);
            }
            return;
        }
        let fs = self.rqs[cpu].fair_server;
        if fs.dl_defer_armed {
            let now = self.dl_rq_clock(cpu);
            let zl = fs.deadline.wrapping_sub(fs.runtime as u64);
            if dl_time_before(now, zl.wrapping_sub(DL_SERVER_MIN_RES)) {
                // hrtimer_forward_now(): to the new zero-laxity point
                let fw = zl.wrapping_sub(now);
                let at = self.now + fw;
                self.arm_dl_timer(s, at);
                self.dl_server_log(cpu, DlServerEventKind::Forward);
                return;
            }
            self.rqs[cpu].fair_server.dl_defer_running = true;
        }
        self.enqueue_dl_entity(s, ENQUEUE_REPLENISH);
        let curr = self.rqs[cpu].curr;
        if self.tasks[curr.index()].class != SchedClass::Dl
            || self.dl_entity_preempt(s, DlEnt::Task(curr))
        {
            self.resched_curr(cpu);
        }
    }

    /// E4: the DL pick chose the server but the fair class has no task. v6.12 .. v6.16: the
    /// server yields (throttled until its next period; with cccb45d7c429 only while
    /// `dl_server_stopped()` says no); a3a70caf7906: it is stopped.
    pub(crate) fn dl_server_pick_empty(&mut self, cpu: usize) {
        self.dl_server_log(cpu, DlServerEventKind::PickEmpty);
        if self.cfg.has(P::DlServerBehaviour) {
            self.dl_server_stop(cpu);
            return;
        }
        let yield_it = if self.cfg.has(P::DlServerLessAggr) {
            !self.dl_server_stopped(cpu)
        } else {
            self.rqs[cpu].fair_server.dl_server_active
        };
        if yield_it {
            self.rqs[cpu].fair_server.dl_yielded = true;
            self.update_curr_dl_se(cpu, DlEnt::Server(cpu as u32), 0, false);
        }
    }

    /// The DL pick handed the CPU to fair task `p` through the server: `rq->dl_server`.
    pub(crate) fn dl_server_picked(&mut self, cpu: usize, p: TaskId) {
        self.rqs[cpu].dl_server = true;
        self.dl_server_log(cpu, DlServerEventKind::Pick { task: p });
    }

    /// The debugfs write `fair_server/cpuN/runtime` / `period` (kernel: debug.c
    /// sched_fair_server_write() → dl_server_apply_params()): the server is stopped (always
    /// with bb4700adc3ab; before it only when the fair class has tasks), the parameters and
    /// bandwidth applied, and the server restarted if fair tasks are queued. Runtime 0
    /// disables the server. Errors as the kernel's -EINVAL/-EBUSY, in words.
    pub fn set_fair_server_params(
        &mut self,
        cpu: usize,
        runtime: u64,
        period: u64,
    ) -> Result<(), String> {
        if !self.rqs[cpu].fair_server.dl_server {
            return Err("this kernel has no fair_server (EINVAL)".into());
        }
        fair_server_params_valid(runtime, period)?;
        let old_bw = self.rqs[cpu].fair_server.dl_bw;
        let new_bw = to_ratio(period, runtime);
        let rd_cpus = self.root_domain_cpus(cpu);
        let cap: u64 = rd_cpus.iter().map(|&c| self.rqs[c].capacity_orig).sum();
        let total = self.dl_total_bw(&rd_cpus);
        if __dl_overflow(self.dl_admission_limit(), cap, total, old_bw, new_bw) {
            return Err(
                "the new fair_server bandwidth does not fit the root domain (EBUSY)".into(),
            );
        }
        let has_tasks = self.cfs[self.rqs[cpu].cfs.index()].h_nr_queued > 0;
        self.update_rq_clock(cpu);
        if self.cfg.has(P::DlServerParamStop) || has_tasks {
            self.update_curr_of_current(cpu);
            self.dl_server_stop(cpu);
        }
        // dl_rq_change_utilization(): this_bw (and running_bw of an active server) swapped
        let s = DlEnt::Server(cpu as u32);
        let was_running = self.rqs[cpu].fair_server.in_running_bw;
        self.dl_detach_rq_bw(s);
        {
            let fs = &mut self.rqs[cpu].fair_server;
            fs.dl_runtime = runtime;
            fs.dl_deadline = period;
            fs.dl_period = period;
            fs.dl_bw = new_bw;
            fs.dl_density = new_bw;
            fs.runtime = 0;
            fs.deadline = DL_LAPSED;
        }
        self.dl_attach_rq_bw(s);
        if was_running && runtime > 0 {
            self.rqs[cpu].fair_server.in_running_bw = true;
            self.rqs[cpu].dl.running_bw += new_bw;
        }
        if has_tasks {
            self.dl_server_start(cpu);
        }
        Ok(())
    }

    // ================================================================= admission (§3.11)

    /// The CPUs of `cpu`'s root domain.
    fn root_domain_cpus(&self, cpu: usize) -> Vec<usize> {
        match self.lb.rd_of.get(cpu) {
            Some(&rd) => (0..self.ncpus)
                .filter(|&c| self.lb.rd_of.get(c) == Some(&rd))
                .collect(),
            None => (0..self.ncpus).collect(),
        }
    }

    /// `dl_b->bw` from the sysctls (None: `sched_rt_runtime_us = -1`, no admission control).
    fn dl_admission_limit(&self) -> Option<u64> {
        dl_bw_limit(
            self.cfg.sysctl.sched_rt_runtime_us,
            self.cfg.sysctl.sched_rt_period_us,
        )
    }

    /// `dl_b->total_bw` of the root domain made of `cpus`: every SCHED_DEADLINE task on them
    /// plus their fair_servers.
    fn dl_total_bw(&self, cpus: &[usize]) -> u64 {
        let tasks: u64 = self
            .tasks
            .iter()
            .filter(|t| {
                t.policy == Policy::Deadline
                    && t.class == SchedClass::Dl
                    && t.state != TaskState::Dead
                    && cpus.contains(&t.cpu)
            })
            .map(|t| t.dl.dl_bw)
            .sum();
        let servers: u64 = cpus
            .iter()
            .map(|&c| &self.rqs[c].fair_server)
            .filter(|s| s.dl_server)
            .map(|s| s.dl_bw)
            .sum();
        tasks + servers
    }

    /// kernel: deadline.c sched_dl_overflow() — admission control for giving `p` the
    /// parameters `a` (checkparam first): Err with the kernel's errno in words.
    pub fn sched_dl_overflow(&self, p: TaskId, a: &DlAttr) -> Result<(), String> {
        checkparam_dl(a)?;
        let cpu = self.tasks[p.index()].cpu;
        let cpus = self.root_domain_cpus(cpu);
        let cap: u64 = cpus.iter().map(|&c| self.rqs[c].capacity_orig).sum();
        let t = &self.tasks[p.index()];
        let old_bw = if t.class == SchedClass::Dl && t.policy == Policy::Deadline {
            t.dl.dl_bw
        } else {
            0
        };
        let total = self.dl_total_bw(&cpus);
        if __dl_overflow(self.dl_admission_limit(), cap, total, old_bw, a.bw()) {
            return Err(format!(
                "SCHED_DEADLINE runtime {} / period {} ns does not fit the root domain's \
                 bandwidth (EBUSY)",
                a.runtime,
                a.effective_period()
            ));
        }
        Ok(())
    }

    /// kernel: deadline.c __setparam_dl() — the parameters of `a` on `p` (not queued, or
    /// dequeued by the caller); a lapsed deadline, so the next activation opens a period.
    ///
    /// A task whose bandwidth is assigned to an rq (a blocked DL task changing parameters:
    /// dl_change_utilization()) ends a pending 0-lag wait and has `this_bw` swapped to the
    /// new bandwidth; a queued task was dequeued with DEQUEUE_SAVE (bandwidth already gone).
    pub(crate) fn __setparam_dl(&mut self, p: TaskId, a: &DlAttr) {
        let e = DlEnt::Task(p);
        self.cancel_dl_timer(e);
        let assigned = self.tasks[p.index()].dl.bw_rq.is_some();
        self.dl_detach_rq_bw(e);
        let old = self.tasks[p.index()].dl;
        let mut se = SchedDlEntity::from_attr(a);
        se.dl_timer.queued = old.dl_timer.queued;
        se.inactive_timer.queued = old.inactive_timer.queued;
        self.tasks[p.index()].dl = se;
        if assigned {
            self.dl_attach_rq_bw(e);
        }
    }

    /// The task is moving to `new_cpu` (set_task_cpu(), kernel: deadline.c
    /// migrate_task_rq_dl() for a waking task; the queued case was dequeued with
    /// DEQUEUE_MIGRATING): a pending 0-lag wait ends and the bandwidth leaves the old rq;
    /// the enqueue on the new one adds it back.
    pub(crate) fn migrate_task_rq_dl(&mut self, p: TaskId, _new_cpu: usize) {
        self.dl_detach_rq_bw(DlEnt::Task(p));
    }
}

/// The fair_server tunables' validation (debugfs `fair_server/cpuN/{runtime,period}`): the
/// runtime may be 0 (disabled) and must not exceed the period; the period within the DL
/// period limits (model: 100 µs .. 2^22 µs, rt-dl.md §4.2).
pub fn fair_server_params_valid(runtime: u64, period: u64) -> Result<(), String> {
    if !(DL_PERIOD_MIN_NS..=DL_PERIOD_MAX_NS).contains(&period) {
        return Err(format!(
            "fair_server period {period} ns is outside 100000 ..= {DL_PERIOD_MAX_NS} ns (EINVAL)"
        ));
    }
    if runtime > period {
        return Err(format!(
            "fair_server runtime {runtime} ns exceeds the period {period} ns (EINVAL)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod param_tests {
    use super::*;

    /// rt-dl.md §3.2: the fair_server's 50 ms / 1 s is 52428 (52428.8 truncated).
    #[test]
    fn to_ratio_truncates() {
        assert_eq!(to_ratio(1_000_000_000, 50_000_000), 52428);
        assert_eq!(to_ratio(0, 5), 0);
        assert_eq!(to_ratio(7, u64::MAX), BW_UNIT);
    }

    /// rt-dl.md §3.1: each refusal, and the smallest accepted values.
    #[test]
    fn checkparam_refuses_what_the_kernel_refuses() {
        let ok = |r, d, p| {
            checkparam_dl(&DlAttr {
                runtime: r,
                deadline: d,
                period: p,
                sched_flags: 0,
            })
        };
        assert!(ok(10_000_000, 100_000_000, 100_000_000).is_ok());
        assert!(ok(1024, 100_000, 0).is_ok()); // P = D = 100 us, the minimum
        assert!(ok(1023, 100_000, 0).unwrap_err().contains("1023"));
        assert!(ok(1_000_000, 0, 0).unwrap_err().contains("sched_deadline"));
        assert!(ok(2_000_000, 1_000_000, 0).unwrap_err().contains("exceeds"));
        assert!(ok(1_000_000, 3_000_000, 2_000_000)
            .unwrap_err()
            .contains("sched_period"));
        assert!(ok(10_000, 50_000, 0)
            .unwrap_err()
            .contains("period 50000 ns"));
        // 2^22 us is allowed, one more us is not
        assert!(ok(1_000_000, 1_000_000, (1 << 22) * 1000).is_ok());
        assert!(ok(1_000_000, 1_000_000, ((1 << 22) + 1) * 1000).is_err());
    }

    /// rt-dl.md vector 7.12: 4 CPUs, R = 25 ms, P = 100 ms (dl_bw 262144), default limit
    /// 996147 per CPU -> 3 984 588 for the domain. Without servers 15 fit and the 16th is
    /// refused; with four fair_servers (4 x 52428) 14 fit; with runtime = period 15 fit.
    #[test]
    fn admission_matches_vector_7_12() {
        let t = DlAttr {
            runtime: 25_000_000,
            deadline: 100_000_000,
            period: 100_000_000,
            sched_flags: 0,
        };
        assert_eq!(t.bw(), 262_144);
        let fits = |limit: Option<u64>, servers: u64| {
            let mut total = servers;
            let mut n = 0;
            while !__dl_overflow(limit, 4 * 1024, total, 0, t.bw()) {
                total += t.bw();
                n += 1;
                if n > 100 {
                    break;
                }
            }
            n
        };
        let limit = dl_bw_limit(950_000, 1_000_000);
        assert_eq!(limit, Some(996_147));
        assert_eq!(fits(limit, 0), 15);
        assert_eq!(fits(limit, 4 * 52_428), 14);
        assert_eq!(fits(dl_bw_limit(1_000_000, 1_000_000), 4 * 52_428), 15);
        assert_eq!(fits(dl_bw_limit(-1, 1_000_000), 0), 101); // no admission control
    }
}

#[cfg(test)]
mod vector_tests {
    //! rt-dl.md §7 on the zero-cost ideal machine (one CPU unless stated), HZ 1000 unless
    //! stated, ticks at multiples of the tick period (the tick at t = 0 charges nothing), timer
    //! slack 0. Times in the comments are ms. Expected values are the spec's hand derivations
    //! (quoted beside each assertion).
    use super::*;
    use crate::presets::{KernelConfig, PreemptModel};
    use crate::sim::MachineDesc;
    use crate::syscalls::{Ctx, Op, Program, SysResult, TaskAttrs};
    use std::cell::RefCell;
    use std::rc::Rc;

    const MS: u64 = 1_000_000;

    /// A task program as a closure over (step, context); `None` sleeps forever.
    struct Script(u32, Box<dyn FnMut(u32, &mut Ctx<'_>) -> Option<Op>>);
    impl Program for Script {
        fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
            let i = self.0;
            self.0 += 1;
            match (self.1)(i, cx) {
                Some(op) => op,
                None => {
                    let f = cx.new_futex(0);
                    Op::FutexWait { futex: f, val: 0 }
                }
            }
        }
    }
    fn script(f: impl FnMut(u32, &mut Ctx<'_>) -> Option<Op> + 'static) -> Box<dyn Program> {
        Box::new(Script(0, Box::new(f)))
    }
    fn hog() -> Box<dyn Program> {
        script(|_, _| Some(Op::Run(MS)))
    }

    fn kernel_n(spec: &str, hz: u32, ncpus: usize) -> Kernel {
        let cfg = KernelConfig::parse(&format!("{spec} NO_SIM_JITTER timer_slack_ns=0")).unwrap();
        let mut k = Kernel::new(cfg, MachineDesc::ideal(ncpus, hz, PreemptModel::Full), 1).unwrap();
        k.strict = true;
        k.check_invariants = true;
        k
    }
    fn kernel(spec: &str, hz: u32) -> Kernel {
        kernel_n(spec, hz, 1)
    }

    fn spawn(
        k: &mut Kernel,
        name: &str,
        policy: Policy,
        prio: u32,
        prog: Box<dyn Program>,
    ) -> TaskId {
        let attrs = TaskAttrs {
            comm: Some(name.into()),
            policy: Some(policy),
            rt_priority: (prio > 0).then_some(prio),
            ..Default::default()
        };
        let t = k.create_task(prog, &attrs, None, false);
        k.start_task_as_wakeup(t);
        t
    }

    fn spawn_dl(
        k: &mut Kernel,
        name: &str,
        r: u64,
        d: u64,
        p: u64,
        prog: Box<dyn Program>,
    ) -> TaskId {
        let attrs = TaskAttrs {
            comm: Some(name.into()),
            policy: Some(Policy::Deadline),
            dl: Some(DlAttr {
                runtime: r,
                deadline: d,
                period: p,
                sched_flags: 0,
            }),
            ..Default::default()
        };
        let t = k.create_task(prog, &attrs, None, false);
        assert!(k.setattr_errors.is_empty(), "{:?}", k.setattr_errors);
        k.start_task_as_wakeup(t);
        t
    }

    /// CPU time a task has used so far (user + system).
    fn ran(k: &Kernel, t: TaskId) -> u64 {
        let s = &k.tasks[t.index()].stats;
        s.user_ns + s.sys_ns
    }

    fn fs(k: &Kernel) -> SchedDlEntity {
        k.rqs[0].fair_server
    }

    // ------------------------------------------------------------------ CBS arithmetic

    /// rt-dl.md §3.5, by hand: D = 100 ms, runtime 6 ms, deadline 100 ms.
    /// At t = 30: left = (100e6 >> 10) * (6e6 >> 10) = 97656 * 5859 = 572 166 504,
    /// right = (70e6 >> 10) * (10e6 >> 10) = 68359 * 9765 = 667 525 635 -> no overflow.
    /// At t = 50: right = 48828 * 9765 = 476 805 420 < left -> overflow.
    /// A negative runtime never overflows (signed shift first): runtime -1 ms with D = 100 ms
    /// gives left = 97656 * (-977 as u64), a huge value that the wrap-safe test reads as
    /// negative: right - left > 0.
    #[test]
    fn overflow_test_by_hand() {
        let mut se = SchedDlEntity::from_attr(&DlAttr {
            runtime: 10 * MS,
            deadline: 100 * MS,
            period: 100 * MS,
            sched_flags: 0,
        });
        se.deadline = 100 * MS;
        se.runtime = 6 * MS as i64;
        assert!(!dl_entity_overflow(&se, 30 * MS));
        assert!(dl_entity_overflow(&se, 50 * MS));
        for r in [-1, -3, -5] {
            se.runtime = r * MS as i64;
            assert!(!dl_entity_overflow(&se, 30 * MS), "runtime {r} ms");
        }
        // D = 20 ms (75 = (20e6 >> 10) mod 1024 < 512): still no overflow with the
        // arithmetic shift
        let mut se = SchedDlEntity::from_attr(&DlAttr {
            runtime: 5 * MS,
            deadline: 20 * MS,
            period: 20 * MS,
            sched_flags: 0,
        });
        se.deadline = 20 * MS;
        se.runtime = -2 * MS as i64;
        assert!(!dl_entity_overflow(&se, 10 * MS));
    }

    /// CBS replenishment by hand (rt-dl.md §3.4): an entity that overran by 2 ms (runtime
    /// -2) is refilled by one period: runtime -2 + 10 = 8 ms, deadline 100 + 100 = 200 ms;
    /// one that overran by 12 ms needs two: -12 + 20 = 8, deadline 300.
    #[test]
    fn replenish_carries_the_overrun_by_hand() {
        let mut k = kernel("v6.18", 1000);
        let t = spawn_dl(
            &mut k,
            "d",
            10 * MS,
            100 * MS,
            100 * MS,
            script(|_, _| None),
        );
        k.run_until(MS);
        for (rt, want_rt, want_dl) in [(-2, 8, 200), (-12, 8, 300)] {
            let se = &mut k.tasks[t.index()].dl;
            se.deadline = 100 * MS;
            se.runtime = rt * MS as i64;
            k.now = 50 * MS;
            k.rqs[0].clock_task = 50 * MS;
            k.replenish_dl_entity(DlEnt::Task(t));
            let se = k.tasks[t.index()].dl;
            assert_eq!(
                (se.runtime, se.deadline),
                (want_rt * MS as i64, want_dl * MS)
            );
            assert!(!se.dl_throttled);
        }
    }

    // ------------------------------------------------------------------ 7.1, 7.3, 7.5, 7.6

    fn rt_hog_and_fair_hog(spec: &str) -> (Kernel, TaskId, TaskId) {
        let mut k = kernel(spec, 1000);
        let rt = spawn(&mut k, "rt", Policy::Fifo, 50, hog());
        let f = spawn(&mut k, "fair", Policy::Normal, 0, hog());
        (k, rt, f)
    }

    /// 7.1: t = 0 new period (deadline 1000, runtime 50, B, timer 950); 950: timer ->
    /// dl_defer_running, overflow -> deadline 1950, runtime 50, D; fair [950, 1000); E until
    /// 1950; fair [1950, 2000); steady state fair [950 + 1000k, 1000 + 1000k).
    #[test]
    fn vector_7_1_fair_server_gives_5_percent_after_950_ms() {
        for spec in ["v6.12", "v6.18", "v6.19", "v7.0"] {
            let (mut k, rt, f) = rt_hog_and_fair_hog(spec);
            k.run_until(1);
            let s = fs(&k);
            assert_eq!(
                (s.deadline, s.runtime, s.server_state()),
                (1000 * MS, 50 * MS as i64, 'B'),
                "{spec}"
            );
            assert_eq!(s.dl_timer.expires, 950 * MS, "{spec}");
            k.run_until(950 * MS);
            assert_eq!(ran(&k, f), 0, "{spec}: fair never ran before 950");
            let s = fs(&k);
            assert_eq!((s.deadline, s.server_state()), (1950 * MS, 'D'), "{spec}");
            k.run_until(1000 * MS);
            assert_eq!(ran(&k, f), 50 * MS, "{spec}: [950, 1000)");
            assert_eq!(fs(&k).server_state(), 'E', "{spec}");
            assert_eq!(fs(&k).dl_timer.expires, 1950 * MS, "{spec}");
            k.run_until(1950 * MS);
            assert_eq!(ran(&k, f), 50 * MS, "{spec}");
            k.run_until(2000 * MS);
            assert_eq!(ran(&k, f), 100 * MS, "{spec}: [1950, 2000)");
            k.run_until(5000 * MS);
            assert_eq!(ran(&k, f), 250 * MS, "{spec}: 5.0 % share");
            assert_eq!(ran(&k, rt), 4750 * MS, "{spec}");
            // every activation followed a zero-laxity expiry (genuine starvation)
            let st = k.rqs[0].dl_server_stats;
            assert_eq!(st.nonstarved_activations, 0, "{spec}");
            assert_eq!(st.activations, 5, "{spec}: 950, 1950, ..., 4950");
            assert_eq!(st.dl_prio_ns, 250 * MS, "{spec}");
        }
    }

    /// 7.3 (v6.12 .. v7.0): an RT hog alone never starts the server and gets 100 %.
    #[test]
    fn vector_7_3_rt_hog_alone_gets_the_whole_cpu() {
        for spec in ["v6.12", "v6.18", "v6.19", "v7.0"] {
            let mut k = kernel(spec, 1000);
            let rt = spawn(&mut k, "rt", Policy::Fifo, 50, hog());
            k.run_until(3000 * MS);
            assert_eq!(ran(&k, rt), 3000 * MS, "{spec}");
            assert!(!fs(&k).dl_server_active, "{spec}");
            assert_eq!(k.rqs[0].dl_server_stats.starts, 0, "{spec}");
        }
    }

    /// 7.5: fair_server runtime 0 (debugfs) -> the fair hog never runs (no RT throttling in
    /// v6.12+ without RT groups). Also through the run-time setter.
    #[test]
    fn vector_7_5_disabled_server_starves_fair() {
        for spec in ["v6.12", "v6.18", "v6.19", "v7.0"] {
            let (mut k, _rt, f) = rt_hog_and_fair_hog(&format!("{spec} fair_server_runtime_ns=0"));
            k.run_until(3000 * MS);
            assert_eq!(ran(&k, f), 0, "{spec}");
            let (mut k, _rt, f) = rt_hog_and_fair_hog(spec);
            k.run_until(10 * MS);
            k.set_fair_server_params(0, 0, 1000 * MS).unwrap();
            k.run_until(3000 * MS);
            assert_eq!(ran(&k, f), 0, "{spec}: disabled at 10 ms");
        }
    }

    /// 7.6: sched_rt_runtime_us = -1 (or 980000) changes nothing for the server on v6.12+.
    #[test]
    fn vector_7_6_rt_runtime_does_not_touch_the_server() {
        for spec in ["v6.12", "v7.0"] {
            for rt_runtime in ["-1", "980000"] {
                let (mut k, _rt, f) =
                    rt_hog_and_fair_hog(&format!("{spec} sched_rt_runtime_us={rt_runtime}"));
                k.run_until(2000 * MS);
                assert_eq!(ran(&k, f), 100 * MS, "{spec} {rt_runtime}");
            }
        }
    }

    /// 7.7 (v6.12 .. v7.0): a FIFO 90 task waking at 960 during the server's run starts at
    /// 1000 (latency 40 ms), whatever its priority (above the hog's 50).
    #[test]
    fn vector_7_7_rt_wakeup_waits_for_a_genuine_server_run() {
        for spec in ["v6.12", "v6.18", "v6.19", "v7.0"] {
            for prio in [90, 99, 60] {
                let (mut k, _rt, _f) = rt_hog_and_fair_hog(spec);
                let log = Rc::new(RefCell::new(Vec::new()));
                let l = log.clone();
                spawn(
                    &mut k,
                    "r2",
                    Policy::Fifo,
                    prio,
                    script(move |i, cx| match i {
                        0 => Some(Op::SleepUntil(960 * MS)),
                        1 => {
                            l.borrow_mut().push(cx.now());
                            Some(Op::Run(MS))
                        }
                        _ => None,
                    }),
                );
                k.run_until(1100 * MS);
                assert_eq!(*log.borrow(), [1000 * MS], "{spec} FIFO {prio}");
            }
        }
    }

    // ------------------------------------------------------------------ 7.20

    /// The 7.20 script: F fair, CPU-bound from 0, blocks at 50.1 and is woken at 53.0 while
    /// the FIFO 50 "irq thread" I (runnable from 50.1, 3 ms) is current — here by its own
    /// hrtimer interrupt on that CPU, the same situation for the server (RT current, CPU not
    /// idle); R (FIFO 80) wakes at 54.0 and wants 1 ms. Returns R's start time and the kernel.
    fn seed001_trigger(spec: &str, hz: u32) -> (u64, Kernel) {
        let mut k = kernel(spec, hz);
        let log = Rc::new(RefCell::new(Vec::new()));
        let l = log.clone();
        spawn(
            &mut k,
            "R",
            Policy::Fifo,
            80,
            script(move |i, cx| match i {
                0 => Some(Op::SleepUntil(54 * MS)),
                1 => {
                    l.borrow_mut().push(cx.now());
                    Some(Op::Run(MS))
                }
                _ => None,
            }),
        );
        spawn(
            &mut k,
            "I",
            Policy::Fifo,
            50,
            script(|i, _| match i {
                0 => Some(Op::SleepUntil(50 * MS + 100_000)),
                1 => Some(Op::Run(3 * MS)),
                _ => None,
            }),
        );
        spawn(
            &mut k,
            "F",
            Policy::Normal,
            0,
            script(|i, _| match i {
                0 => Some(Op::Run(50 * MS + 100_000)),
                1 => Some(Op::SleepUntil(53 * MS)),
                _ => Some(Op::Run(MS)),
            }),
        );
        k.run_until(200 * MS);
        let r = log.borrow().first().copied().unwrap_or(u64::MAX);
        (r, k)
    }

    const FIXED_6_12: &str = "v6.12+115135422562+d66792919d4f+cccb45d7c429+4717432dfd99+bb4700adc3ab+4ae8d9aa9f9d+a3a70caf7906+ee6e44dfe6e5";

    /// 7.20 table, HZ = 1000: common trace up to 50.1 (new period at the tick at 50:
    /// deadline 1050, runtime 50, timer 1000; 49.9 at 50.1); R starts at 54.0 everywhere except
    /// 6.12.y "after" (+d66792919d4f): revised runtime (52428 x 997e6) >> 20 = 49 849 239 ns,
    /// deadline 1050, not throttled -> D at 53.0, preempts I; negative at the tick at 103 ->
    /// R starts at 103.0 (latency 49 ms).
    #[test]
    fn vector_7_20_seed001_trigger_hz1000() {
        let rows = [
            ("v6.12", 54),
            ("v6.12+115135422562", 54),
            ("v6.12+115135422562+d66792919d4f", 103),
            (FIXED_6_12, 54),
            ("v6.18+115135422562+14a857056466", 54),
            ("v7.0", 54),
        ];
        for (spec, r_start) in rows {
            let (r, k) = seed001_trigger(spec, 1000);
            assert_eq!(r, r_start * MS, "{spec}");
            let acts: Vec<&DlServerEvent> = k
                .dl_server_log
                .iter()
                .filter(|e| matches!(e.kind, DlServerEventKind::Activate { .. }))
                .collect();
            if r_start == 103 {
                // the activation at 53.0: not starved, runtime and deadline as derived, the
                // preempted task is I (FIFO 50, prio 49)
                let a = acts[0];
                assert_eq!(a.time, 53 * MS, "{spec}");
                assert_eq!(a.kind, DlServerEventKind::Activate { starved: false });
                assert_eq!((a.runtime, a.deadline), (49_849_239, 1050 * MS), "{spec}");
                assert_eq!(k.tasks[a.curr.index()].comm, "I");
                let line = a.describe(&k);
                assert!(line.starts_with("t=53.000000 ms cpu0 Activate { starved: false } state D runtime 49.849239 ms deadline 1050.000000 ms curr I"), "{line}");
                assert_eq!((a.curr_policy, a.curr_prio), (Policy::Fifo, 49));
                assert_eq!(k.rqs[0].dl_server_stats.nonstarved_activations, 1);
                // 50 ms at DL priority: [53, 103)
                assert_eq!(k.rqs[0].dl_server_stats.dl_prio_ns, 50 * MS);
            } else {
                assert!(acts.is_empty(), "{spec}: {acts:?}");
            }
            // the new period at the tick at 50 (common to all rows)
            let np = k
                .dl_server_log
                .iter()
                .find(|e| e.kind == DlServerEventKind::NewPeriod)
                .unwrap();
            assert_eq!((np.time, np.deadline), (50 * MS, 1050 * MS), "{spec}");
        }
    }

    /// 7.20 at HZ = 250 (ticks 48, 52, 56, ...): the background exhaustion happens at F's
    /// block at 50.1 (deadline 1050.1); "after": revised runtime (52428 x 997.1e6) >> 20 =
    /// 49 854 239 ns, negative at the tick at 104 -> R at 104 (latency 50.0 ms); the other
    /// rows R at 54.0.
    #[test]
    fn vector_7_20_seed001_trigger_hz250() {
        let rows = [
            ("v6.12", 54),
            ("v6.12+115135422562", 54),
            ("v6.12+115135422562+d66792919d4f", 104),
            (FIXED_6_12, 54),
            ("v6.18+115135422562+14a857056466", 54),
            ("v7.0", 54),
        ];
        for (spec, r_start) in rows {
            let (r, k) = seed001_trigger(spec, 250);
            assert_eq!(r, r_start * MS, "{spec}");
            let np = k
                .dl_server_log
                .iter()
                .find(|e| e.kind == DlServerEventKind::NewPeriod)
                .unwrap();
            assert_eq!(
                (np.time, np.deadline),
                (50_100_000, 1_050_100_000),
                "{spec}"
            );
            if r_start == 104 {
                let a = k
                    .dl_server_log
                    .iter()
                    .find(|e| matches!(e.kind, DlServerEventKind::Activate { .. }))
                    .unwrap();
                assert_eq!((a.time, a.runtime), (53 * MS, 49_854_239), "{spec}");
            }
        }
    }

    // ------------------------------------------------------------------ 7.4, 7.4b

    /// F: runs 1 ms, sleeps 9 ms, forever (under an RT hog).
    fn light_periodic(spec: &str) -> (Kernel, TaskId) {
        let mut k = kernel(spec, 1000);
        spawn(&mut k, "rt", Policy::Fifo, 50, hog());
        let f = spawn(
            &mut k,
            "F",
            Policy::Normal,
            0,
            script(|i, _| {
                Some(if i % 2 == 0 {
                    Op::Run(MS)
                } else {
                    Op::Sleep(9 * MS)
                })
            }),
        );
        (k, f)
    }

    /// 7.4 (v6.18 .. v7.0): runs of 1 ms at 950, 960, ..., 1440 (50 ms), throttled at 1441,
    /// F waits from 1450 to 1950, then 1950, 1960, ..., 2440: exactly 50 ms per window.
    #[test]
    fn vector_7_4_light_fair_task_gets_50ms_per_window() {
        for spec in ["v6.18", "v6.19", "v7.0"] {
            let (mut k, f) = light_periodic(spec);
            k.run_until(950 * MS);
            assert_eq!(ran(&k, f), 0, "{spec}");
            k.run_until(951 * MS);
            assert_eq!(ran(&k, f), MS, "{spec}");
            // 951: the empty pick stops the server (A) with runtime 49, run 1
            let s = fs(&k);
            assert_eq!(
                (s.server_state(), s.runtime, s.dl_defer_running),
                ('A', 49 * MS as i64, true),
                "{spec}"
            );
            k.run_until(1000 * MS);
            assert_eq!(ran(&k, f), 5 * MS, "{spec}: 950, 960, ..., 990");
            k.run_until(1441 * MS);
            assert_eq!(ran(&k, f), 50 * MS, "{spec}: 50 runs up to 1441");
            assert_eq!(fs(&k).server_state(), 'E', "{spec}");
            k.run_until(1950 * MS);
            assert_eq!(ran(&k, f), 50 * MS, "{spec}: waits from 1450 to 1950");
            k.run_until(2441 * MS);
            assert_eq!(ran(&k, f), 100 * MS, "{spec}");
            k.run_until(2950 * MS);
            assert_eq!(ran(&k, f), 100 * MS, "{spec}");
            // every activation continues the starvation episode opened at 950
            assert_eq!(k.rqs[0].dl_server_stats.nonstarved_activations, 0, "{spec}");
        }
    }

    /// 7.4b (derived, unverified by trace): v6.12.0 — F keeps ≈10 % indefinitely (a run of
    /// 1 ms every 10 ms from 950 on).
    /// 6.12.y + 115135422562: the spec derives runs at 950, 960, ..., 1950 (101 ms), then a
    /// new deferred period at 1960 (deadline 2960, timer 2910), the next burst 2910 .. 3910.
    /// That derivation assumes the throttle at 1951 leaves the deadline lapsed; in the code
    /// the timer for the next period (1950) cannot be armed at 1951, and before 421fc59cf58c
    /// the server is then enqueued with ENQUEUE_REPLENISH at once (rt-dl.md §3.7): runtime
    /// 50 - 101 = -51 ms -> -1 (deadline 2950) -> 49 ms (deadline 3950), run still 1, so the
    /// 1 ms runs go on: 101 + 95 (1960 ... 2900) = 196 ms by 2910. The spec's numbers are
    /// those of 6.12.y with 421fc59cf58c as well: the throttle at 1951 opens a new period
    /// (deadline 2951, runtime 50), the stop keeps it, and the wake at 1960 overflows
    /// (50 > 0.05 x 991) -> with 115135422562 a new deferred period, deadline 2960, timer 2910.
    #[test]
    fn vector_7_4b_v6_12_budget_leak_derived_not_traced() {
        let (mut k, f) = light_periodic("v6.12");
        k.run_until(950 * MS);
        assert_eq!(ran(&k, f), 0);
        k.run_until(4950 * MS);
        // 1 ms of every 10 from 950: 400 runs in [950, 4950)
        assert_eq!(ran(&k, f), 400 * MS);

        let (mut k, f) = light_periodic("v6.12+115135422562");
        k.run_until(1951 * MS);
        assert_eq!(ran(&k, f), 101 * MS, "950 ... 1950");
        assert_eq!(fs(&k).deadline, 3950 * MS);
        k.run_until(2910 * MS);
        assert_eq!(ran(&k, f), 196 * MS, "still 1 ms every 10 ms");

        let (mut k, f) = light_periodic("v6.12+115135422562+421fc59cf58c");
        k.run_until(1951 * MS);
        assert_eq!(ran(&k, f), 101 * MS, "950 ... 1950");
        k.run_until(2000 * MS);
        let s = fs(&k);
        assert_eq!((s.deadline, s.server_state()), (2960 * MS, 'B'));
        assert_eq!(s.dl_timer.expires, 2910 * MS);
        k.run_until(2910 * MS);
        assert_eq!(ran(&k, f), 101 * MS, "deferred from 1960 to 2910");
        k.run_until(3911 * MS);
        assert_eq!(ran(&k, f), 202 * MS, "2910 ... 3910");
    }

    // ------------------------------------------------------------------ 7.21, 7.22

    /// 7.21 (NOHZ idle: the model's idle CPUs do not tick): F runs [0, 1) once, then the CPU
    /// idles. v6.19/v7.0: at 950 the timer charges 949 ms of idle -> new period (deadline
    /// 1950, runtime 50, run 0) + dl_defer_idle, and the same callback stops the server (A).
    /// v6.12: stopped at 1 by F's dequeue (runtime 49, deadline 1000).
    #[test]
    fn vector_7_21_server_stop_after_an_idle_period() {
        for spec in ["v6.19", "v7.0"] {
            let mut k = kernel(spec, 1000);
            spawn(
                &mut k,
                "F",
                Policy::Normal,
                0,
                script(|i, _| (i == 0).then_some(Op::Run(MS))),
            );
            k.run_until(949 * MS);
            assert_eq!(fs(&k).server_state(), 'B', "{spec}");
            k.run_until(950 * MS);
            let s = fs(&k);
            assert_eq!(
                (s.server_state(), s.runtime, s.deadline, s.dl_defer_running),
                ('A', 50 * MS as i64, 1950 * MS, false),
                "{spec}"
            );
            let stop = k
                .dl_server_log
                .iter()
                .rev()
                .find(|e| e.kind == DlServerEventKind::Stop);
            assert_eq!(stop.unwrap().time, 950 * MS, "{spec}");
        }
        let mut k = kernel("v6.12", 1000);
        spawn(
            &mut k,
            "F",
            Policy::Normal,
            0,
            script(|i, _| (i == 0).then_some(Op::Run(MS))),
        );
        k.run_until(2 * MS);
        let s = fs(&k);
        assert_eq!(
            (s.server_state(), s.runtime, s.deadline),
            ('A', 49 * MS as i64, 1000 * MS)
        );
        // v6.18: active until 950, when the timer makes it runnable (D) with a fresh period;
        // the empty pick that stops it comes with the next pick that is not the fair fast path
        // (the fast path of §1.5 ignores a queued server)
        let mut k = kernel("v6.18", 1000);
        spawn(
            &mut k,
            "F",
            Policy::Normal,
            0,
            script(|i, _| (i == 0).then_some(Op::Run(MS))),
        );
        k.run_until(949 * MS);
        assert_eq!(fs(&k).server_state(), 'B');
        k.run_until(950 * MS);
        let s = fs(&k);
        assert_eq!((s.server_state(), s.deadline), ('D', 1950 * MS));
    }

    /// 7.22 (derived, unverified by trace): as 7.21, then I (FIFO 50) wakes at 955 and runs
    /// 10 ms, F wakes at 960 (CPU-bound from then on) while I runs, R (FIFO 80) wakes at 961.
    /// v6.12.0 / v6.18.0 / v6.19: R at 961; v7.0 and 6.19.y + 37cfab131f1b: the revised rule
    /// gives runtime (52428 x 990e6) >> 20 = 49 499 244 ns, thr 0 -> D at 960, negative at the
    /// tick at 1010 -> R at 1010 (latency 49 ms).
    #[test]
    fn vector_7_22_revised_activation_after_idle_stop_derived_not_traced() {
        let rows = [
            ("v6.12", 961),
            ("v6.18", 961),
            ("v6.19", 961),
            ("v7.0", 1010),
            ("v6.19+37cfab131f1b", 1010),
        ];
        for (spec, r_start) in rows {
            let mut k = kernel(spec, 1000);
            let log = Rc::new(RefCell::new(Vec::new()));
            let l = log.clone();
            spawn(
                &mut k,
                "R",
                Policy::Fifo,
                80,
                script(move |i, cx| match i {
                    0 => Some(Op::SleepUntil(961 * MS)),
                    1 => {
                        l.borrow_mut().push(cx.now());
                        Some(Op::Run(MS))
                    }
                    _ => None,
                }),
            );
            spawn(
                &mut k,
                "I",
                Policy::Fifo,
                50,
                script(|i, _| match i {
                    0 => Some(Op::SleepUntil(955 * MS)),
                    1 => Some(Op::Run(10 * MS)),
                    _ => None,
                }),
            );
            spawn(
                &mut k,
                "F",
                Policy::Normal,
                0,
                script(|i, _| match i {
                    0 => Some(Op::Run(MS)),
                    1 => Some(Op::SleepUntil(960 * MS)),
                    _ => Some(Op::Run(MS)),
                }),
            );
            k.run_until(1100 * MS);
            assert_eq!(*log.borrow(), [r_start * MS], "{spec}");
            if r_start == 1010 {
                let a = k
                    .dl_server_log
                    .iter()
                    .find(|e| matches!(e.kind, DlServerEventKind::Activate { .. }))
                    .unwrap();
                assert_eq!(
                    (a.time, a.runtime, a.kind),
                    (
                        960 * MS,
                        49_499_244,
                        DlServerEventKind::Activate { starved: false }
                    ),
                    "{spec}"
                );
            }
        }
    }

    // ------------------------------------------------------------------ DL tasks 7.8 .. 7.11

    /// A DL task that runs `first` ms, sleeps until `wake` ms, then runs 1 ms.
    fn run_sleep_run(r: u64, d: u64, p: u64, first: u64, wake: u64) -> (Kernel, TaskId) {
        let mut k = kernel("v6.18", 1000);
        let t = spawn_dl(
            &mut k,
            "d",
            r * MS,
            d * MS,
            p * MS,
            script(move |i, _| match i {
                0 => Some(Op::Run(first * MS)),
                1 => Some(Op::SleepUntil(wake * MS)),
                2 => Some(Op::Run(MS)),
                _ => None,
            }),
        );
        (k, t)
    }

    fn dl_state(k: &Kernel, t: TaskId) -> (u64, i64) {
        let se = &k.tasks[t.index()].dl;
        (se.deadline, se.runtime)
    }

    /// 7.8: R 10, D = P 100. Wake at 0: deadline 100, runtime 10; runs 4 (runtime 6).
    /// Wake at 30: 600 vs 700 -> keeps (100, 6); at 50: 600 vs 500 -> overflow, new period
    /// (150, 10); at 120: deadline passed -> (220, 10).
    #[test]
    fn vector_7_8_cbs_wakeup_implicit() {
        for (wake, want) in [(30, (100, 6)), (50, (150, 10)), (120, (220, 10))] {
            let (mut k, t) = run_sleep_run(10, 100, 100, 4, wake);
            k.run_until(1);
            // (the end of run_until charges the 1 ns it has run)
            assert_eq!(dl_state(&k, t), (100 * MS, 10 * MS as i64 - 1));
            k.run_until(5 * MS);
            assert_eq!(dl_state(&k, t), (100 * MS, 6 * MS as i64));
            k.run_until(wake * MS);
            assert_eq!(
                dl_state(&k, t),
                (want.0 * MS, want.1 * MS as i64),
                "wake at {wake}"
            );
        }
    }

    /// 7.9: R 10, D 50, P 100 (density (10e6 << 20) / 50e6 = 209715). Wake at 25: overflow,
    /// constrained -> revised runtime (209715 x 25e6) >> 20 = 4 999 995 ns, deadline 50.
    /// Wake at 60: constrained check -> throttled, runtime 0, timer at 100; at 100 replenish
    /// -> deadline 150, runtime 10.
    #[test]
    fn vector_7_9_cbs_wakeup_constrained() {
        let (mut k, t) = run_sleep_run(10, 50, 100, 4, 25);
        k.run_until(25 * MS);
        assert_eq!(dl_state(&k, t), (50 * MS, 4_999_995));
        let (mut k, t) = run_sleep_run(10, 50, 100, 4, 60);
        k.run_until(60 * MS);
        let se = k.tasks[t.index()].dl;
        assert!(se.dl_throttled);
        assert_eq!((se.runtime, se.dl_timer.expires), (0, 100 * MS));
        assert_eq!(ran(&k, t), 4 * MS, "does not run before its next period");
        k.run_until(100 * MS);
        assert_eq!(dl_state(&k, t), (150 * MS, 10 * MS as i64));
    }

    /// 7.10: a CPU-bound DL task R 10, D = P 100. HZ 250: checks at 4 (6), 8 (2), 12 (-2) ->
    /// throttled at 12, timer at 100; runtime -2 + 10 = 8 -> runs [100, 108); then 12, 8, ...
    /// HZ 1000: exactly 10 ms per period.
    #[test]
    fn vector_7_10_overrun_carried_with_tick_enforcement() {
        let mut k = kernel("v6.18", 250);
        let t = spawn_dl(&mut k, "d", 10 * MS, 100 * MS, 100 * MS, hog());
        for (at, want) in [
            (12, 12),
            (100, 12),
            (108, 20),
            (200, 20),
            (212, 32),
            (300, 32),
            (308, 40),
        ] {
            k.run_until(at * MS);
            assert_eq!(ran(&k, t), want * MS, "HZ 250 at {at}");
        }
        assert_eq!(dl_state(&k, t), (400 * MS, 0));
        let mut k = kernel("v6.18", 1000);
        let t = spawn_dl(&mut k, "d", 10 * MS, 100 * MS, 100 * MS, hog());
        for (at, want) in [(10, 10), (100, 10), (110, 20), (300, 30)] {
            k.run_until(at * MS);
            assert_eq!(ran(&k, t), want * MS, "HZ 1000 at {at}");
        }
    }

    /// A periodic DL task: each job runs `work` ms, then sleeps to the next release.
    fn periodic(
        name: &'static str,
        log: Rc<RefCell<Vec<(&'static str, u64)>>>,
        work: u64,
        period: u64,
    ) -> Box<dyn Program> {
        let mut job = 0u64;
        script(move |i, cx| {
            if i % 2 == 0 {
                log.borrow_mut().push((name, cx.now() / MS));
                Some(Op::Run(work * MS))
            } else {
                job += 1;
                Some(Op::SleepUntil(job * period * MS))
            }
        })
    }

    /// 7.11: A (40/100) and B (20/50) from 0: B [0, 20), A [20, 50); at 50 B's deadline 100
    /// equals A's -> no preemption, A [50, 60), B [60, 80), idle [80, 100); repeats.
    #[test]
    fn vector_7_11_edf_order() {
        let mut k = kernel("v6.18", 1000);
        let log = Rc::new(RefCell::new(Vec::new()));
        let a = spawn_dl(
            &mut k,
            "A",
            40 * MS,
            100 * MS,
            100 * MS,
            periodic("A", log.clone(), 40, 100),
        );
        let b = spawn_dl(
            &mut k,
            "B",
            20 * MS,
            50 * MS,
            50 * MS,
            periodic("B", log.clone(), 20, 50),
        );
        k.run_until(60 * MS);
        assert_eq!((ran(&k, a), ran(&k, b)), (40 * MS, 20 * MS));
        k.run_until(99 * MS);
        assert_eq!(*log.borrow(), [("B", 0), ("A", 20), ("B", 60)]);
        assert!(k.cpu_is_idle(0), "idle [80, 100)");
        // second period, by CPU time (the simulator expires the four timers at 100 one
        // after the other, so A may be switched in for 0 ns before B's replenishment)
        for (at, want_a, want_b) in [(120, 40, 60), (150, 70, 60), (160, 80, 60), (180, 80, 80)] {
            k.run_until(at * MS);
            assert_eq!(
                (ran(&k, a), ran(&k, b)),
                (want_a * MS, want_b * MS),
                "at {at}"
            );
        }
    }

    /// 7.19: RT hog + fair hog + DL T (5/20, jobs at 0, 20, ...). DL time is not fair time:
    /// the server reaches its zero-laxity point at 950 (deadline 1950); T (deadlines 980,
    /// 1000, ...) runs [960, 965), [980, 985), [1000, 1005); the server runs the fair hog in
    /// [950, 960), [965, 980), [985, 1000), [1005, 1015): 50 ms used up at 1015.
    #[test]
    fn vector_7_19_server_versus_a_dl_task() {
        for spec in ["v6.12", "v6.18", "v7.0"] {
            let (mut k, _rt, f) = rt_hog_and_fair_hog(spec);
            let log = Rc::new(RefCell::new(Vec::new()));
            let t = spawn_dl(
                &mut k,
                "T",
                5 * MS,
                20 * MS,
                20 * MS,
                periodic("T", log.clone(), 5, 20),
            );
            for (at, fair) in [
                (950, 0),
                (960, 10),
                (965, 10),
                (980, 25),
                (1000, 40),
                (1015, 50),
                (1100, 50),
            ] {
                k.run_until(at * MS);
                assert_eq!(ran(&k, f), fair * MS, "{spec}: fair at {at}");
            }
            assert_eq!(ran(&k, t), 55 * 5 * MS, "{spec}: T's 55 jobs in [0, 1100)");
            let starts: Vec<u64> = log
                .borrow()
                .iter()
                .map(|e| e.1)
                .filter(|&s| (950..1020).contains(&s))
                .collect();
            assert_eq!(starts, [960, 980, 1000], "{spec}");
        }
    }

    // ------------------------------------------------------------------ 7.12 (admission)

    /// 7.12 through the kernel's admission (4 CPUs, capacity 1024, one root domain): tasks of
    /// 25/100 ms (dl_bw 262144) against 996147 x 4096 >> 10 = 3 984 588: v6.6 admits 15;
    /// v6.12 .. v7.0 (four fair_servers, 4 x 52428) 14; with sched_rt_runtime_us = 1000000
    /// 15; -1 admits everything.
    #[test]
    fn vector_7_12_admission_through_the_kernel() {
        let rows = [
            ("v6.6", 15),
            ("v6.12", 14),
            ("v6.18", 14),
            ("v7.0", 14),
            ("v7.0 sched_rt_runtime_us=1000000", 15),
            ("v7.0 sched_rt_runtime_us=-1", 20),
        ];
        for (spec, admitted) in rows {
            let mut k = kernel_n(spec, 1000, 4);
            let attrs = TaskAttrs {
                policy: Some(Policy::Deadline),
                dl: Some(DlAttr {
                    runtime: 25 * MS,
                    deadline: 100 * MS,
                    period: 100 * MS,
                    sched_flags: 0,
                }),
                ..Default::default()
            };
            let mut ok = 0;
            for _ in 0..20 {
                let t = k.create_task(script(|_, _| None), &attrs, None, false);
                if k.tasks[t.index()].policy == Policy::Deadline {
                    ok += 1;
                }
            }
            assert_eq!(ok, admitted, "{spec}");
            assert_eq!(k.setattr_errors.len(), 20 - admitted, "{spec}");
            if admitted < 20 {
                assert!(
                    k.setattr_errors[0].contains("EBUSY"),
                    "{}",
                    k.setattr_errors[0]
                );
            }
            // sched_setattr on an existing task goes through the same test
            let t = k.create_task(script(|_, _| None), &TaskAttrs::default(), None, false);
            let r = k.sched_setattr_dl(t, attrs.dl.unwrap());
            assert_eq!(r.is_ok(), admitted == 20, "{spec}");
        }
    }

    /// The fair_server tunables: parsed and validated like the debugfs files.
    /// debugfs `fair_server/cpuN/runtime` and `period` of one CPU override the all-CPU values
    /// for that CPU only (rt-dl.md §4.2); a CPU the machine lacks or runtime > period is refused.
    #[test]
    fn fair_server_per_cpu_debugfs_settings() {
        let cfg = KernelConfig::parse(
            "v6.12 fair_server/cpu1/runtime=0 fair_server/cpu0/period=500000000",
        )
        .unwrap();
        let s0 = SchedDlEntity::fair_server_init(&cfg, 0);
        let s1 = SchedDlEntity::fair_server_init(&cfg, 1);
        let s2 = SchedDlEntity::fair_server_init(&cfg, 2);
        // cpu0: 50 ms of 500 ms; cpu1: disabled; cpu2: the defaults, 50 ms of 1 s
        assert_eq!((s0.dl_runtime, s0.dl_period), (50_000_000, 500_000_000));
        assert_eq!((s1.dl_runtime, s1.dl_period), (0, 1_000_000_000));
        assert_eq!((s2.dl_runtime, s2.dl_period), (50_000_000, 1_000_000_000));
        assert!(KernelConfig::parse("v6.12 fair_server/cpu0/period=10000000").is_err());
        assert!(KernelConfig::parse("v6.12 fair_server/cpu0/budget=1").is_err());
        let cfg = KernelConfig::parse("v6.12 fair_server/cpu9/runtime=0").unwrap();
        let m = MachineDesc::ideal(2, 1000, PreemptModel::Full);
        let e = Kernel::new(cfg, m, 1).err().unwrap();
        assert!(e.contains("fair_server/cpu9"), "{e}");
    }

    #[test]
    fn fair_server_tunables_parse_and_validate() {
        let cfg = KernelConfig::parse("v6.12 fair_server_runtime_ns=0").unwrap();
        assert_eq!(cfg.sysctl.fair_server_runtime_ns, 0);
        let cfg = KernelConfig::parse(
            "v6.12 fair_server_period_ns=500000000 fair_server_runtime_ns=25000000",
        )
        .unwrap();
        let s = SchedDlEntity::fair_server_init(&cfg, 0);
        assert_eq!(
            (s.dl_runtime, s.dl_period, s.dl_bw),
            (25 * MS, 500 * MS, 52428)
        );
        let e = KernelConfig::parse("v6.12 fair_server_runtime_ns=2000000000").unwrap_err();
        assert!(
            e.to_string().contains("fair_server_runtime_ns=2000000000"),
            "{e}"
        );
        assert!(KernelConfig::parse("v6.12 fair_server_period_ns=50").is_err());
        // v6.6 has no server
        let cfg = KernelConfig::parse("v6.6").unwrap();
        assert!(!SchedDlEntity::fair_server_init(&cfg, 0).dl_server);
    }

    /// Stable ids are accepted as aliases of 14a857056466.
    #[test]
    fn revised_rule_aliases_parse() {
        for spec in [
            "v6.12+115135422562+d66792919d4f",
            "v6.19+37cfab131f1b",
            "v6.18 +14a857056466",
        ] {
            let cfg = KernelConfig::parse(spec).unwrap();
            assert!(cfg.has(P::DlServerRevised), "{spec}");
        }
        assert!(!KernelConfig::parse("v6.19")
            .unwrap()
            .has(P::DlServerRevised));
        assert!(KernelConfig::parse("v7.0").unwrap().has(P::DlServerRevised));
    }

    /// v6.12 stops the server on every block of the only fair task and starts it on every
    /// wakeup (E5/E1), re-arming its zero-laxity timer each time: 10 000 cycles in 1 s must not
    /// leave 10 000 dead expiries in the event queue (each would live 950 ms).
    #[test]
    fn server_restarts_do_not_pile_up_timer_events() {
        let mut k = kernel("v6.12", 1000);
        spawn(
            &mut k,
            "F",
            Policy::Normal,
            0,
            script(|i, _| {
                Some(if i % 2 == 0 {
                    Op::Run(50_000)
                } else {
                    Op::Sleep(50_000)
                })
            }),
        );
        k.dl_server_log_cap = 100;
        k.run_until(1000 * MS);
        let st = k.rqs[0].dl_server_stats;
        assert!(st.starts >= 9_000 && st.stops >= 9_000, "{st:?}");
        assert!(k.events.len() < 20, "{} events queued", k.events.len());
        // the log keeps its first 100 entries and counts the rest
        assert_eq!(k.dl_server_log.len(), 100);
        assert!(k.dl_server_log_dropped >= 18_000 - 100);
    }

    // ------------------------------------------------------------------ SMP (brief)

    /// select_task_rq_dl: on 2 CPUs, A (DL 50/100, pinned to CPU 0) runs; B (DL 10/100,
    /// released with the same period, so not strictly earlier) wakes with CPU 0 as its
    /// previous CPU: A cannot move and B cannot preempt it -> find_later_rq -> free CPU 1.
    /// Without the pin, B still cannot preempt A (equal deadline) -> CPU 1 as well; a B with
    /// an earlier deadline (D 50) stays on CPU 0 and preempts A.
    #[test]
    fn dl_wakeup_placement_prefers_a_free_cpu() {
        for (pin, b_deadline, b_cpu) in [(true, 100, 1), (false, 100, 1), (false, 50, 0)] {
            let mut k = kernel_n("v6.18", 1000, 2);
            let attrs = TaskAttrs {
                comm: Some("A".into()),
                policy: Some(Policy::Deadline),
                cpus: pin.then(|| schedlab_platform::cpumask::CpuMask::single(0)),
                dl: Some(DlAttr {
                    runtime: 50 * MS,
                    deadline: 100 * MS,
                    period: 100 * MS,
                    sched_flags: 0,
                }),
                ..Default::default()
            };
            let a = k.create_task(hog(), &attrs, None, false);
            k.start_task(a);
            k.run_until(MS);
            assert_eq!(k.rqs[0].curr, a);
            let b = spawn_dl(&mut k, "B", 10 * MS, b_deadline * MS, 100 * MS, hog());
            k.run_until(2 * MS);
            assert_eq!(
                k.tasks[b.index()].cpu,
                b_cpu,
                "pin {pin}, B deadline {b_deadline}"
            );
            assert_eq!(k.rqs[b_cpu].curr, b);
        }
    }

    /// push: two DL hogs forked onto CPU 0 (no placement at fork): when the first is picked,
    /// the second is pushable and CPU 1 is free -> it is pushed there and both run.
    #[test]
    fn dl_push_moves_a_queued_task_to_a_free_cpu() {
        let mut k = kernel_n("v6.18", 1000, 2);
        let mut ids = Vec::new();
        for name in ["A", "B"] {
            let attrs = TaskAttrs {
                comm: Some(name.into()),
                policy: Some(Policy::Deadline),
                dl: Some(DlAttr {
                    runtime: 30 * MS,
                    deadline: 100 * MS,
                    period: 100 * MS,
                    sched_flags: 0,
                }),
                ..Default::default()
            };
            let t = k.create_task(hog(), &attrs, None, false);
            k.start_task(t);
            ids.push(t);
        }
        k.run_until(20 * MS);
        assert_eq!(
            ran(&k, ids[0]) + ran(&k, ids[1]),
            40 * MS,
            "both ran all the time"
        );
        assert_ne!(k.tasks[ids[0].index()].cpu, k.tasks[ids[1].index()].cpu);
        // the pushed task's bandwidth moved with it (sub/add running_bw and rq_bw): each rq
        // holds one task, (30e6 << 20) / 100e6 = 314572, plus its idle fair_server's 52428
        // in this_bw only
        for c in 0..2 {
            let dl = &k.rqs[c].dl;
            assert_eq!(
                (dl.running_bw, dl.this_bw),
                (314_572, 314_572 + 52_428),
                "cpu {c}"
            );
        }
    }

    /// sched_setattr(SCHED_DEADLINE 5/100 ms) on a running fair hog that shares its CPU with
    /// another fair hog, at 10 ms: it runs [10, 15) at DL priority (ticks at 11 .. 15 charge
    /// 1 ms each, 0 left at 15 -> throttled, timer at the next period 110), the other hog
    /// runs [15, 110), then [110, 115) again.
    #[test]
    fn setattr_deadline_on_a_running_task() {
        let mut k = kernel("v6.18", 1000);
        let a = spawn(&mut k, "A", Policy::Normal, 0, hog());
        let b = spawn(&mut k, "B", Policy::Normal, 0, hog());
        k.run_until(10 * MS);
        let running = k.rqs[0].curr;
        let (t, other) = if running == a { (a, b) } else { (b, a) };
        k.sched_setattr_dl(
            t,
            DlAttr {
                runtime: 5 * MS,
                deadline: 100 * MS,
                period: 100 * MS,
                sched_flags: 0,
            },
        )
        .unwrap();
        assert_eq!(k.tasks[t.index()].class, SchedClass::Dl);
        let at = |k: &mut Kernel, ms: u64| {
            k.run_until(ms * MS);
            (ran(k, t), ran(k, other))
        };
        let (t10, o10) = at(&mut k, 10);
        let (t15, o15) = at(&mut k, 15);
        assert_eq!((t15 - t10, o15 - o10), (5 * MS, 0));
        assert!(k.tasks[t.index()].dl.dl_throttled);
        let (t110, o110) = at(&mut k, 110);
        assert_eq!((t110 - t15, o110 - o15), (0, 95 * MS));
        let (t115, _) = at(&mut k, 115);
        assert_eq!(t115 - t110, 5 * MS);
        // a second task of 96 % does not fit next to it on v6.18 (90 % per CPU for DL)
        let e = k.sched_setattr_dl(
            other,
            DlAttr {
                runtime: 96 * MS,
                deadline: 100 * MS,
                period: 100 * MS,
                sched_flags: 0,
            },
        );
        assert!(e.unwrap_err().contains("EBUSY"));
    }

    /// rt-dl.md §3.8: sched_yield() by a DL task (R 10 / P 100) after 2 ms gives up the
    /// remaining 8 ms: throttled until its next period (100), then a full 10 ms budget
    /// (runtime 8 -> 0 by the yield -> + 10, deadline 200): it runs [100, 110).
    #[test]
    fn dl_yield_sleeps_until_the_next_period() {
        let mut k = kernel("v6.18", 1000);
        let t = spawn_dl(
            &mut k,
            "d",
            10 * MS,
            100 * MS,
            100 * MS,
            script(|i, _| {
                Some(match i {
                    0 => Op::Run(2 * MS),
                    1 => Op::Yield,
                    _ => Op::Run(MS),
                })
            }),
        );
        k.run_until(3 * MS);
        assert_eq!(ran(&k, t), 2 * MS);
        let se = k.tasks[t.index()].dl;
        assert!(se.dl_throttled);
        assert_eq!(se.dl_timer.expires, 100 * MS);
        k.run_until(100 * MS);
        assert_eq!(ran(&k, t), 2 * MS);
        assert_eq!(dl_state(&k, t), (200 * MS, 10 * MS as i64));
        k.run_until(111 * MS);
        assert_eq!(ran(&k, t), 12 * MS);
    }

    // ------------------------------------------------------------------ GRUB, rt-dl.md §3.10

    /// bw = to_ratio(100e6, 10e6) = (10e6 << 20) / 100e6 = 104857 (104857.6 truncated);
    /// the v6.18 fair_server's 52428 is assigned to the rq from boot but not active (no fair
    /// task, never started): this_bw = 52428 + 104857 = 157285.
    const BW_10_100: u64 = 104_857;
    const THIS_BW_ONE_TASK: u64 = 52_428 + BW_10_100;

    fn dl_rq(k: &Kernel) -> (u64, u64) {
        (k.rqs[0].dl.running_bw, k.rqs[0].dl.this_bw)
    }

    /// Vector 7.8: R 10, D = P 100, runs 4 and blocks with runtime 6: 0-lag time
    /// 100 - 6 x 100 / 10 = 40 ms. Asleep until 60: its bandwidth stays in running_bw
    /// (non-contending, inactive_timer at 40) until 40, leaves it at 40, comes back at the
    /// wakeup at 60.
    #[test]
    fn grub_blocked_task_keeps_running_bw_until_its_zero_lag_time_vector_7_8() {
        let (mut k, t) = run_sleep_run(10, 100, 100, 4, 60);
        k.run_until(2 * MS);
        assert_eq!(dl_rq(&k), (BW_10_100, THIS_BW_ONE_TASK), "running at 2");
        k.run_until(5 * MS);
        assert_eq!(dl_state(&k, t), (100 * MS, 6 * MS as i64), "blocked at 4");
        let se = k.tasks[t.index()].dl;
        assert!(se.dl_non_contending && se.inactive_timer.armed);
        assert_eq!(se.inactive_timer.expires, 40 * MS, "0-lag time 40");
        k.run_until(39 * MS);
        assert_eq!(
            dl_rq(&k),
            (BW_10_100, THIS_BW_ONE_TASK),
            "still active at 39"
        );
        k.run_until(41 * MS);
        assert_eq!(dl_rq(&k), (0, THIS_BW_ONE_TASK), "released at 40");
        assert!(!k.tasks[t.index()].dl.dl_non_contending);
        k.run_until(60 * MS + 1);
        assert_eq!(
            dl_rq(&k),
            (BW_10_100, THIS_BW_ONE_TASK),
            "back at the wakeup"
        );
    }

    /// Vector 7.8, wake at 30 (before the 0-lag time 40): the wakeup cancels the timer and
    /// the bandwidth never left running_bw. The task runs 1 ms more and blocks at 31 with
    /// runtime 5 and deadline 100 (no overflow at 30, 7.8): new 0-lag time
    /// 100 - 5 x 100 / 10 = 50, so at 45 (past the old 40) it is still active and at 51 not.
    #[test]
    fn grub_wakeup_before_zero_lag_cancels_the_inactive_timer() {
        let (mut k, t) = run_sleep_run(10, 100, 100, 4, 30);
        k.run_until(30 * MS + 1);
        let se = k.tasks[t.index()].dl;
        assert!(
            !se.dl_non_contending && !se.inactive_timer.armed,
            "cancelled at 30"
        );
        assert_eq!(dl_rq(&k), (BW_10_100, THIS_BW_ONE_TASK));
        k.run_until(45 * MS);
        assert_eq!(dl_state(&k, t), (100 * MS, 5 * MS as i64), "blocked at 31");
        assert_eq!(k.tasks[t.index()].dl.inactive_timer.expires, 50 * MS);
        assert_eq!(
            dl_rq(&k),
            (BW_10_100, THIS_BW_ONE_TASK),
            "still active at 45"
        );
        k.run_until(51 * MS);
        assert_eq!(dl_rq(&k), (0, THIS_BW_ONE_TASK), "released at 50");
    }

    /// Blocking after the 0-lag time releases at once. A: R 60, D = P 90 (bw (60e6 << 20) /
    /// 90e6 = 699050); B: R 10, D = P 100 (104857); both wake at 0. EDF runs A first
    /// (deadline 90 < 100): A runs 50 and blocks with runtime 10 -> 0-lag 90 - 10 x 90 / 60
    /// = 75, in the future: A stays active until 75. B runs [50, 54) and blocks with runtime
    /// 6 -> 0-lag 100 - 6 x 100 / 10 = 40 < 54: B leaves running_bw at 54, no timer.
    /// this_bw = 52428 + 699050 + 104857 = 856335 throughout.
    #[test]
    fn grub_block_after_zero_lag_releases_at_once() {
        let mut k = kernel("v6.18", 1000);
        let run_then_sleep = |ms: u64| {
            script(move |i, _| match i {
                0 => Some(Op::Run(ms * MS)),
                _ => None,
            })
        };
        let a = spawn_dl(&mut k, "a", 60 * MS, 90 * MS, 90 * MS, run_then_sleep(50));
        let b = spawn_dl(&mut k, "b", 10 * MS, 100 * MS, 100 * MS, run_then_sleep(4));
        const BW_A: u64 = 699_050;
        const THIS: u64 = 52_428 + BW_A + BW_10_100;
        k.run_until(55 * MS);
        assert_eq!((ran(&k, a), ran(&k, b)), (50 * MS, 4 * MS));
        assert_eq!(dl_rq(&k), (BW_A, THIS), "only A (non-contending until 75)");
        let (sa, sb) = (k.tasks[a.index()].dl, k.tasks[b.index()].dl);
        assert!(sa.dl_non_contending && sa.inactive_timer.expires == 75 * MS);
        assert!(!sb.dl_non_contending && !sb.inactive_timer.armed && !sb.in_running_bw);
        k.run_until(74 * MS);
        assert_eq!(dl_rq(&k), (BW_A, THIS));
        k.run_until(76 * MS);
        assert_eq!(dl_rq(&k), (0, THIS), "A released at 75");
    }

    /// Exit and class change drop the bandwidth. A task runs 4 (runtime 6, 0-lag 40) and
    /// exits: like a block it stays active until 40 (the kernel's dead-task path), then
    /// both sums lose it. A second DL task (same parameters) keeps the run alive: it blocks
    /// at 0 with runtime 10, 0-lag 100 - 10 x 100 / 10 = 0, so it is inactive from 0 but
    /// stays in this_bw (52428 + 2 x 104857 = 262142). Another task switches to SCHED_OTHER
    /// at 4: running_bw and this_bw lose it at once (the rq keeps only the fair_server's
    /// 52428, now active).
    #[test]
    fn grub_exit_and_switch_from_dl_drop_the_bandwidth() {
        let mut k = kernel("v6.18", 1000);
        spawn_dl(
            &mut k,
            "s",
            10 * MS,
            100 * MS,
            100 * MS,
            script(|_, _| None),
        );
        let t = spawn_dl(
            &mut k,
            "d",
            10 * MS,
            100 * MS,
            100 * MS,
            script(|i, _| match i {
                0 => Some(Op::Run(4 * MS)),
                _ => Some(Op::Exit),
            }),
        );
        k.run_until(5 * MS);
        assert_eq!(k.tasks[t.index()].state, TaskState::Dead);
        assert_eq!(
            dl_rq(&k),
            (BW_10_100, 52_428 + 2 * BW_10_100),
            "dead, before 0-lag"
        );
        k.run_until(41 * MS);
        assert_eq!(dl_rq(&k), (0, THIS_BW_ONE_TASK), "dead, after 0-lag 40");

        let mut k = kernel("v6.18", 1000);
        spawn_dl(
            &mut k,
            "d",
            10 * MS,
            100 * MS,
            100 * MS,
            script(|i, _| match i {
                0 => Some(Op::Run(4 * MS)),
                1 => Some(Op::SetScheduler {
                    policy: Policy::Normal,
                    nice: 0,
                    rt_priority: 0,
                }),
                _ => Some(Op::Run(MS)),
            }),
        );
        k.run_until(5 * MS);
        assert_eq!(
            dl_rq(&k),
            (52_428, 52_428),
            "only the fair_server, now started"
        );
    }

    /// SCHED_FLAG_RECLAIM alone on a CPU (v6.18, HZ 1000, R 10, D = P 100, a hog). By hand,
    /// rt-dl.md §3.10 with the kernel's fixed point:
    /// Umax = max_bw = to_ratio(1e9, 950e6) = 996147; bw_ratio = to_ratio(950e6, 1e9) >> 12
    /// = 1103764 >> 12 = 269; u = 104857; Uextra = 996147 - 104857 - 52428 (the
    /// fair_server's __dl_add) = 838862; Uinact = this_bw - running_bw = 157285 - 104857 =
    /// 52428. Umax - Uinact - Uextra = 104857 = u, so the rate is u / Umax:
    /// u_act = (104857 x 269) >> 8 = 110181; each 1 ms tick charges (1e6 x 110181) >> 20 =
    /// 105076 ns (0.105 of the time, = 0.1 / 0.95). 95 ticks leave 10e6 - 9982220 = 17780,
    /// the 96th goes to -87296: throttled at 96 ms (not 10). Replenished at 100 with
    /// 10e6 - 87296 = 9912704: 94 ticks leave 35560, the 95th throttles at 195 ms.
    /// A task without the flag runs exactly 10 ms per period (vector 7.10, HZ 1000).
    #[test]
    fn grub_reclaiming_task_alone_runs_umax_of_the_cpu() {
        let mut k = kernel("v6.18", 1000);
        let attrs = TaskAttrs {
            comm: Some("r".into()),
            policy: Some(Policy::Deadline),
            dl: Some(DlAttr {
                runtime: 10 * MS,
                deadline: 100 * MS,
                period: 100 * MS,
                sched_flags: SCHED_FLAG_RECLAIM,
            }),
            ..Default::default()
        };
        let t = k.create_task(hog(), &attrs, None, false);
        assert!(k.setattr_errors.is_empty(), "{:?}", k.setattr_errors);
        k.start_task_as_wakeup(t);
        let se = k.tasks[t.index()].dl;
        assert!(se.flag_reclaim);
        assert_eq!(k.grub_reclaim(0, &se, MS), 105_076);
        k.run_until(100 * MS);
        assert_eq!(ran(&k, t), 96 * MS);
        assert_eq!(dl_state(&k, t), (200 * MS, 9_912_704));
        k.run_until(200 * MS);
        assert_eq!(ran(&k, t), (96 + 95) * MS);
    }

    /// The --strict bandwidth invariants notice a wrong sum and running_bw > this_bw.
    #[test]
    fn grub_invariants_catch_a_wrong_sum() {
        let (mut k, _) = run_sleep_run(10, 100, 100, 4, 60);
        k.run_until(2 * MS);
        assert!(k.invariant_errors().is_ok());
        k.rqs[0].dl.running_bw += 1;
        assert!(k.invariant_errors().unwrap_err().contains("sum to"));
        k.rqs[0].dl.running_bw = k.rqs[0].dl.this_bw + 1;
        assert!(k.invariant_errors().unwrap_err().contains("> this_bw"));
    }

    /// sched_flags: bits outside SCHED_FLAG_ALL (0x7f) are EINVAL, naming the value;
    /// SCHED_FLAG_RECLAIM is accepted.
    #[test]
    fn checkparam_refuses_unknown_sched_flags() {
        let a = |f| DlAttr {
            runtime: 10 * MS,
            deadline: 100 * MS,
            period: 100 * MS,
            sched_flags: f,
        };
        assert!(checkparam_dl(&a(SCHED_FLAG_RECLAIM)).is_ok());
        assert!(checkparam_dl(&a(SCHED_FLAG_RECLAIM | SCHED_FLAG_DL_OVERRUN)).is_ok());
        let e = checkparam_dl(&a(0x80)).unwrap_err();
        assert!(e.contains("0x80") && e.contains("EINVAL"), "{e}");
        assert!(
            checkparam_dl(&a(0x1000_0000)).is_err(),
            "SUGOV is kernel-internal"
        );
    }
}
