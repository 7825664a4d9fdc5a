//! PELT (per-entity load tracking): the kernel's geometric-series load, runnable and utilisation
//! signals in its exact fixed point (`pelt.c`, `pelt.h`), plus the `fair.c` helpers that act only on
//! `sched_avg` values (new-task init, attach/detach/remove, util_est). Pure arithmetic: the caller
//! owns the rq, cfs_rq and task objects and passes their fields in.

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------

/// Half-life of the PELT series in periods: `y^LOAD_AVG_PERIOD == 1/2`.
/// kernel: sched-pelt.h LOAD_AVG_PERIOD @ v6.12
pub const LOAD_AVG_PERIOD: u32 = 32;

/// Saturation value of `1024 · Σ y^n` as the kernel's integer recurrence computes it
/// (`max = ((max · y_inv) >> 32) + 1024` until it stops moving); checked by a test.
/// kernel: sched-pelt.h LOAD_AVG_MAX @ v6.12
pub const LOAD_AVG_MAX: u32 = 47742;

/// kernel: sched.h SCHED_CAPACITY_SHIFT @ v6.12
pub const SCHED_CAPACITY_SHIFT: u32 = 10;

/// Capacity of the biggest CPU at its highest frequency; full utilisation.
/// kernel: sched.h SCHED_CAPACITY_SCALE @ v6.12
pub const SCHED_CAPACITY_SCALE: u64 = 1 << SCHED_CAPACITY_SHIFT;

/// Smallest divider between a `*_sum` and its `*_avg`: `LOAD_AVG_MAX · y`, which the kernel's
/// integer arithmetic makes exactly `LOAD_AVG_MAX - 1024` (checked by a test).
/// kernel: pelt.h PELT_MIN_DIVIDER @ v6.12
pub const PELT_MIN_DIVIDER: u32 = LOAD_AVG_MAX - 1024;

/// util_est EWMA weight `w = 1/4` as a shift.
/// kernel: sched.h UTIL_EST_WEIGHT_SHIFT @ v6.12
pub const UTIL_EST_WEIGHT_SHIFT: u32 = 2;

/// Flag bit in a task's `util_est`: "util_avg has not changed since util_est was last written".
/// kernel: sched.h UTIL_AVG_UNCHANGED @ v6.12
pub const UTIL_AVG_UNCHANGED: u32 = 0x8000_0000;

/// Decreases of util_est smaller than 1 % of full capacity are ignored.
/// kernel: fair.c UTIL_EST_MARGIN @ v6.12
pub const UTIL_EST_MARGIN: u32 = (SCHED_CAPACITY_SCALE / 100) as u32;

/// `floor((2^32 - 1) · y^k)` for `k = 0..31`, `y = 2^(-1/32)`: the multipliers of [`decay_load`].
///
/// Note the `2^32 - 1` (not `2^32`): entry 0 has to fit a `u32`, so even a whole-half-life decay
/// (`k = 0` after the shift) multiplies by `1 - 2^-32` and loses one unit of any value in
/// `[1, 2^32]`. Hand-typed from the kernel's generated header; the tests recompute every entry
/// with exact integer arithmetic (and with `f64` under a stated error bound).
/// kernel: sched-pelt.h runnable_avg_yN_inv[] @ v6.12
#[allow(non_upper_case_globals)]
pub const runnable_avg_yN_inv: [u32; LOAD_AVG_PERIOD as usize] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796,
    0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46,
    0xb504f333, 0xb123f581, 0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
    0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
];

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

/// One set of PELT signals (a task or group entity, a cfs_rq, or the rt/dl/irq/hw signals of an
/// rq). Field types follow the kernel's `struct sched_avg` on 64-bit: `util_sum` is 32-bit,
/// `load_sum` and `runnable_sum` are 64-bit (which is what lets the pre-v7.0 `max_t(u32, ..)`
/// floors truncate them, see [`floor_sum_to_avg`]).
///
/// Units: `last_update_time` in ns of the PELT clock, always a multiple of 1024 after an update;
/// `period_contrib` in 1024-ns units elapsed in the current 1024-unit period (0..=1023);
/// `*_sum` are geometric sums (`runnable_sum` and `util_sum` pre-shifted by
/// `SCHED_CAPACITY_SHIFT`); `*_avg` are the sums divided by [`get_pelt_divider`].
/// kernel: include/linux/sched.h struct sched_avg @ v6.12
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedAvg {
    pub last_update_time: u64,
    pub load_sum: u64,
    pub runnable_sum: u64,
    pub util_sum: u32,
    pub period_contrib: u32,
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
    /// Tasks: EWMA of util at dequeue, with the [`UTIL_AVG_UNCHANGED`] flag bit.
    /// cfs_rq: sum of the enqueued tasks' estimates (no flag).
    pub util_est: u32,
}

// ---------------------------------------------------------------------------------------------
// Decay and accumulation (pelt.c)
// ---------------------------------------------------------------------------------------------

/// `(a · b) >> shift` with a 128-bit intermediate.
/// kernel: include/linux/math64.h mul_u64_u32_shr() @ v6.12
#[inline]
pub fn mul_u64_u32_shr(a: u64, mul: u32, shift: u32) -> u64 {
    ((u128::from(a) * u128::from(mul)) >> shift) as u64
}

/// `val · y^n` in fixed point: halve once per whole half-life (`y^32 = 1/2`), then multiply by
/// the table entry for the remaining `n % 32` periods. Anything older than 63 half-lives is 0.
///
/// There is no `n == 0` shortcut: `decay_load(v, 0)` multiplies by `(2^32-1)/2^32` and returns
/// `v - 1` for `1 <= v <= 2^32` (pelt.c never calls it with `n == 0`).
/// kernel: pelt.c decay_load() @ v6.12
pub fn decay_load(val: u64, n: u64) -> u64 {
    if n > u64::from(LOAD_AVG_PERIOD) * 63 {
        return 0;
    }
    // After the bound check n fits 32 bits.
    let mut local_n = n as u32;
    let mut val = val;
    if local_n >= LOAD_AVG_PERIOD {
        val >>= local_n / LOAD_AVG_PERIOD;
        local_n %= LOAD_AVG_PERIOD;
    }
    mul_u64_u32_shr(val, runnable_avg_yN_inv[local_n as usize], 32)
}

/// Contribution of an update that crossed `periods >= 1` period boundaries:
/// `c1 + c2 + c3 = d1·y^p + 1024·Σ_{n=1}^{p-1} y^n + d3`, where the middle term uses
/// `Σ_{n=1}^{p-1} y^n = Σ_{n=0}^{∞} y^n - Σ_{n=p}^{∞} y^n - y^0`, i.e.
/// `LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, p) - 1024`.
/// kernel: pelt.c __accumulate_pelt_segments() @ v6.12
pub fn __accumulate_pelt_segments(periods: u64, d1: u32, d3: u32) -> u32 {
    let c1 = decay_load(u64::from(d1), periods) as u32;
    let c2 = LOAD_AVG_MAX - decay_load(u64::from(LOAD_AVG_MAX), periods) as u32 - 1024;
    let c3 = d3; // y^0 == 1
    c1 + c2 + c3
}

/// Accumulate `delta` units (1024 ns each) of history into the `*_sum`s.
///
/// The series. Time is cut into periods of 1024 units (≈ 1 ms); `u_i` is the fraction of the
/// period `i` periods ago during which the input was set, and every period back weighs `y` less:
///
/// ```text
///   sum = 1024 · (u_0 + u_1·y + u_2·y^2 + ...)          y^32 = 1/2   (LOAD_AVG_PERIOD)
///   max = 1024 · Σ y^n ≈ 47742                          (LOAD_AVG_MAX, integer fixed point)
/// ```
///
/// An update at `now` that started inside an old period splits `delta` in three:
///
/// ```text
///            d1          d2           d3
///            ^           ^            ^
///            |           |            |
///          |<->|<----------------->|<--->|
///  ... |---x---|------| ... |------|-----x (now)
///          ^ last update    p periods crossed
///
///   sum' = sum·y^p  +  d1·y^p + 1024·Σ_{n=1}^{p-1} y^n + d3
///          (step 1)    (step 2: __accumulate_pelt_segments)
/// ```
///
/// `d1 = 1024 - period_contrib` finishes the period the last update stopped in; `d3` is the part
/// of the current, unfinished period, remembered in `period_contrib`. When no boundary is crossed
/// (`p == 0`) the contribution is just `delta` and nothing decays. `load` weights the load
/// series, `runnable` (a count) weights the runnable series, `running` gates the util series;
/// the runnable and util sums are stored `<< SCHED_CAPACITY_SHIFT` so their averages come out in
/// capacity units. Returns the number of periods crossed (truncated to 32 bits as in the kernel).
///
/// Relies on the caller having cleared `runnable` and `running` when `load == 0`
/// ([`___update_load_sum`] does): the boundary-crossing contribution is only computed when
/// `load != 0`.
/// kernel: pelt.c accumulate_sum() @ v6.12
pub fn accumulate_sum(
    delta: u64,
    sa: &mut SchedAvg,
    load: u64,
    runnable: u64,
    running: bool,
) -> u32 {
    let mut contrib = delta as u32; // p == 0 -> delta < 1024
    let mut delta = delta + u64::from(sa.period_contrib);
    let periods = delta / 1024; // a period is 1024 units (~1 ms)

    // Step 1: decay the old sums if we crossed period boundaries.
    if periods != 0 {
        sa.load_sum = decay_load(sa.load_sum, periods);
        sa.runnable_sum = decay_load(sa.runnable_sum, periods);
        sa.util_sum = decay_load(u64::from(sa.util_sum), periods) as u32;

        // Step 2
        delta %= 1024;
        if load != 0 {
            contrib = __accumulate_pelt_segments(periods, 1024 - sa.period_contrib, delta as u32);
        }
    }
    sa.period_contrib = delta as u32;

    if load != 0 {
        sa.load_sum += load * u64::from(contrib);
    }
    if runnable != 0 {
        sa.runnable_sum += (runnable * u64::from(contrib)) << SCHED_CAPACITY_SHIFT;
    }
    if running {
        sa.util_sum += contrib << SCHED_CAPACITY_SHIFT;
    }

    periods as u32
}

/// Bring the sums up to `now` (PELT clock, ns). Time is consumed in whole 1024-ns units, so
/// `last_update_time` advances by a multiple of 1024 and the remainder waits for the next call.
/// Returns true when at least one period boundary was crossed, i.e. when the averages must be
/// recomputed with [`___update_load_avg`]. A clock that went backwards only resets
/// `last_update_time`.
/// kernel: pelt.c ___update_load_sum() @ v6.12
pub fn ___update_load_sum(
    now: u64,
    sa: &mut SchedAvg,
    load: u64,
    runnable: u64,
    running: bool,
) -> bool {
    let delta = now.wrapping_sub(sa.last_update_time);
    if (delta as i64) < 0 {
        sa.last_update_time = now;
        return false;
    }

    // 1024 ns is the unit: close to 1 µs and a shift away.
    let delta = delta >> 10;
    if delta == 0 {
        return false;
    }
    sa.last_update_time += delta << 10;

    // running and runnable are subsets of load; an entity already dequeued but still
    // cfs_rq->curr (or an empty cfs_rq) must not accrue them.
    let (runnable, running) = if load == 0 {
        (0, false)
    } else {
        (runnable, running)
    };

    accumulate_sum(delta, sa, load, runnable, running) != 0
}

/// Divider between a `*_sum` and its `*_avg` at the current position in the period: the maximum
/// a sum can hold is `LOAD_AVG_MAX·y + period_contrib = LOAD_AVG_MAX - 1024 + period_contrib`.
/// Using the fixed `LOAD_AVG_MAX` instead would read the unfinished part of the current period as
/// idle and make a saturated signal oscillate in [1002, 1024).
/// kernel: pelt.h get_pelt_divider() @ v6.12
#[inline]
pub fn get_pelt_divider(sa: &SchedAvg) -> u32 {
    PELT_MIN_DIVIDER + sa.period_contrib
}

/// Recompute the averages from the sums. `load` is the weight the load average is expressed in:
/// `se_weight()` (= `scale_load_down(se.load.weight)`) for entities, 1 for a cfs_rq and the
/// rt/dl/irq/hw signals (their load input already carries the weight).
/// kernel: pelt.c ___update_load_avg() @ v6.12
pub fn ___update_load_avg(sa: &mut SchedAvg, load: u64) {
    let divider = u64::from(get_pelt_divider(sa));
    sa.load_avg = load * sa.load_sum / divider;
    sa.runnable_avg = sa.runnable_sum / divider;
    sa.util_avg = u64::from(sa.util_sum) / divider;
}

// ---------------------------------------------------------------------------------------------
// Per-object update wrappers (pelt.c), inputs per smp.md §5.2
// ---------------------------------------------------------------------------------------------

/// A blocked (sleeping) entity: decay only. `se_weight` = `scale_load_down(se.load.weight)`.
/// kernel: pelt.c __update_load_avg_blocked_se() @ v6.12
pub fn __update_load_avg_blocked_se(now: u64, sa: &mut SchedAvg, se_weight: u64) -> bool {
    if ___update_load_sum(now, sa, 0, 0, false) {
        ___update_load_avg(sa, se_weight);
        return true;
    }
    false
}

/// A queued entity. Inputs: `on_rq` (true while queued, including while `sched_delayed`),
/// `se_runnable` (task: on_rq and not delayed, v6.12+; group: the child's runnable count),
/// `running` (`cfs_rq.curr == se`). `util_est_feat` is `sched_feat(UTIL_EST)`: when set, a
/// recomputed average clears the task's [`UTIL_AVG_UNCHANGED`] flag.
/// kernel: pelt.c __update_load_avg_se() @ v6.12
pub fn __update_load_avg_se(
    now: u64,
    sa: &mut SchedAvg,
    se_weight: u64,
    on_rq: bool,
    se_runnable: u64,
    running: bool,
    util_est_feat: bool,
) -> bool {
    if ___update_load_sum(now, sa, u64::from(on_rq), se_runnable, running) {
        ___update_load_avg(sa, se_weight);
        if util_est_feat {
            cfs_se_util_change(sa);
        }
        return true;
    }
    false
}

/// A cfs_rq. Inputs: `load_weight` = `scale_load_down(cfs_rq.load.weight)` (delayed entities
/// included), `nr_runnable` = `h_nr_running` (v6.6, v6.12) / `h_nr_running - h_nr_delayed`
/// (v6.13) / `h_nr_runnable` (v6.14+), `curr` = `cfs_rq.curr != NULL`.
/// kernel: pelt.c __update_load_avg_cfs_rq() @ v6.12
pub fn __update_load_avg_cfs_rq(
    now: u64,
    sa: &mut SchedAvg,
    load_weight: u64,
    nr_runnable: u64,
    curr: bool,
) -> bool {
    if ___update_load_sum(now, sa, load_weight, nr_runnable, curr) {
        ___update_load_avg(sa, 1);
        return true;
    }
    false
}

/// The rt_rq signal of an rq (`running` = an RT task is current). Only `util_avg` is meaningful.
/// kernel: pelt.c update_rt_rq_load_avg() @ v6.12
pub fn update_rt_rq_load_avg(now: u64, sa: &mut SchedAvg, running: bool) -> bool {
    let r = u64::from(running);
    if ___update_load_sum(now, sa, r, r, running) {
        ___update_load_avg(sa, 1);
        return true;
    }
    false
}

/// The dl_rq signal of an rq; same arithmetic as [`update_rt_rq_load_avg`].
/// kernel: pelt.c update_dl_rq_load_avg() @ v6.12
pub fn update_dl_rq_load_avg(now: u64, sa: &mut SchedAvg, running: bool) -> bool {
    update_rt_rq_load_avg(now, sa, running)
}

/// Hardware (thermal) pressure: `capacity` is the capacity currently lost; tracked in
/// `load_avg`. The kernel feeds it `rq_clock_task`, not the PELT clock.
/// kernel: pelt.c update_hw_load_avg() @ v6.12
pub fn update_hw_load_avg(now: u64, sa: &mut SchedAvg, capacity: u64) -> bool {
    if ___update_load_sum(now, sa, capacity, capacity, capacity != 0) {
        ___update_load_avg(sa, 1);
        return true;
    }
    false
}

/// IRQ time: `running` ns of interrupt time since the last call, ending at `clock` (`rq->clock`,
/// not the PELT clock: IRQ time is not in `clock_task`). The time is made invariant explicitly —
/// note the order, frequency first, then capacity (the reverse of
/// [`PeltClock::update_rq_clock_pelt`]) —
/// then the signal decays as idle up to `clock - running` and accrues as running from there.
/// kernel: pelt.c update_irq_load_avg() @ v6.12
pub fn update_irq_load_avg(
    sa: &mut SchedAvg,
    clock: u64,
    running: u64,
    cpu_scale: u64,
    freq_scale: u64,
) -> bool {
    let running = cap_scale(running, freq_scale);
    let running = cap_scale(running, cpu_scale);
    let mut ret = ___update_load_sum(clock - running, sa, 0, 0, false);
    ret |= ___update_load_sum(clock, sa, 1, 1, true);
    if ret {
        ___update_load_avg(sa, 1);
    }
    ret
}

// ---------------------------------------------------------------------------------------------
// The PELT clock (pelt.h): frequency and capacity invariance
// ---------------------------------------------------------------------------------------------

/// `v · s / 1024` rounded down.
/// kernel: sched.h cap_scale() @ v6.12
#[inline]
pub fn cap_scale(v: u64, s: u64) -> u64 {
    (v * s) >> SCHED_CAPACITY_SHIFT
}

/// Threshold on `cfs + rt + dl util_sum` above which an rq counts as "fully busy" when it goes
/// idle: the upper bound of a saturated `util_sum`, `(LOAD_AVG_MAX - 1024) << 10`, less
/// `LOAD_AVG_MAX` of slack for rounding (the position in the period is ignored on purpose).
/// kernel: pelt.h update_idle_rq_clock_pelt() local `divider` @ v6.12
pub const PELT_FULLY_BUSY_UTIL_SUM: u32 =
    ((LOAD_AVG_MAX - 1024) << SCHED_CAPACITY_SHIFT) - LOAD_AVG_MAX;

/// The rq fields behind the PELT clock (a subset of `struct rq`).
///
/// While the CPU runs anything, `clock_pelt` advances by the task-clock delta scaled by
/// `capacity_orig/1024` and then by `freq_scale/1024` (two integer `cap_scale` steps, in that
/// order), so a CPU that does half the work per ns ages PELT signals half as fast. When the CPU
/// is idle, `clock_pelt` is snapped back to `clock_task`: the idle phase absorbs the time the
/// slow CPU "stole", so a task doing a fixed amount of work sees the same running/idle pattern
/// on every CPU. Sketch (from pelt.h):
///
/// ```text
///   absolute time   | 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|16
///   @ max capacity  ------******---------------******---------------
///   @ half capacity ------************---------************---------
///   clock pelt      | 1| 2|    3|    4| 7| 8| 9|   10|   11|14|15|16
/// ```
///
/// `lost_idle_time` rule: when the rq goes idle with `cfs + rt + dl util_sum >=`
/// [`PELT_FULLY_BUSY_UTIL_SUM`], it was saturated and had no idle time to steal; the gap
/// `clock_task - clock_pelt` is then added to `lost_idle_time` instead of being treated as idle,
/// and [`PeltClock::rq_clock_pelt`] (`clock_pelt - lost_idle_time`) does not jump. Consequence:
/// a task that never leaves the CPU idle still saturates at 1024 (only later, by
/// `1024/capacity`); invariance holds for work that leaves idle time.
///
/// A cfs_rq under CFS bandwidth control reads `rq_clock_pelt` minus its throttled time
/// (`cfs_rq_clock_pelt`); that bookkeeping belongs to the caller.
/// kernel: sched.h struct rq clock_pelt, lost_idle_time, clock_pelt_idle, clock_idle @ v6.12
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeltClock {
    pub clock_pelt: u64,
    pub lost_idle_time: u64,
    /// `rq_clock_pelt` when the rq last went idle (read by `migrate_se_pelt_lag`).
    pub clock_pelt_idle: u64,
    /// `rq_clock` when the rq last went idle (read by `migrate_se_pelt_lag`).
    pub clock_idle: u64,
}

impl PeltClock {
    /// The PELT "now" of the rq's root cfs_rq and of its rt/dl signals.
    /// kernel: pelt.h rq_clock_pelt() @ v6.12
    #[inline]
    pub fn rq_clock_pelt(&self) -> u64 {
        self.clock_pelt - self.lost_idle_time
    }

    /// Snap the PELT clock to the task clock (rq idle) and record the idle stamps.
    /// kernel: pelt.h _update_idle_rq_clock_pelt() @ v6.12
    pub fn _update_idle_rq_clock_pelt(&mut self, clock_task: u64, clock: u64) {
        self.clock_pelt = clock_task;
        self.clock_idle = clock;
        self.clock_pelt_idle = self.rq_clock_pelt();
    }

    /// Advance by `delta` ns of task clock (called from `update_rq_clock_task` after `clock_task`
    /// has been advanced to `clock_task`). `cpu_scale` = `arch_scale_cpu_capacity` (capacity_orig),
    /// `freq_scale` = `arch_scale_freq_capacity` (0..=1024).
    /// kernel: pelt.h update_rq_clock_pelt() @ v6.12
    pub fn update_rq_clock_pelt(
        &mut self,
        delta: u64,
        curr_is_idle: bool,
        clock_task: u64,
        clock: u64,
        cpu_scale: u64,
        freq_scale: u64,
    ) {
        if curr_is_idle {
            self._update_idle_rq_clock_pelt(clock_task, clock);
            return;
        }
        self.clock_pelt += scale_pelt_delta(delta, cpu_scale, freq_scale);
    }

    /// The rq is about to go idle (`set_next_task_idle` / the idle path of
    /// `pick_next_task_fair`). `*_util_sum` are the cfs, rt and dl `util_sum`s, added in `u32`
    /// like the kernel. See the `lost_idle_time` rule on [`PeltClock`].
    /// kernel: pelt.h update_idle_rq_clock_pelt() @ v6.12
    pub fn update_idle_rq_clock_pelt(
        &mut self,
        cfs_util_sum: u32,
        rt_util_sum: u32,
        dl_util_sum: u32,
        clock_task: u64,
        clock: u64,
    ) {
        let util_sum = cfs_util_sum
            .wrapping_add(rt_util_sum)
            .wrapping_add(dl_util_sum);
        if util_sum >= PELT_FULLY_BUSY_UTIL_SUM {
            self.lost_idle_time += clock_task.wrapping_sub(self.clock_pelt);
        }
        self._update_idle_rq_clock_pelt(clock_task, clock);
    }
}

/// The invariant part of [`PeltClock::update_rq_clock_pelt`]: `delta` ns of task clock scaled by
/// capacity, then by frequency, each step `(x · s) >> 10` (the order matters for rounding).
/// kernel: pelt.h update_rq_clock_pelt() @ v6.12 (the two cap_scale() lines)
#[inline]
pub fn scale_pelt_delta(delta: u64, cpu_scale: u64, freq_scale: u64) -> u64 {
    cap_scale(cap_scale(delta, cpu_scale), freq_scale)
}

// ---------------------------------------------------------------------------------------------
// util_est (fair.c, v6.8+ form)
// ---------------------------------------------------------------------------------------------

/// Clear [`UTIL_AVG_UNCHANGED`] once util_avg has been recomputed (only if set, as the kernel
/// avoids the store). The caller checks `sched_feat(UTIL_EST)`.
/// kernel: pelt.h cfs_se_util_change() @ v6.12
pub fn cfs_se_util_change(sa: &mut SchedAvg) {
    if sa.util_est & UTIL_AVG_UNCHANGED != 0 {
        sa.util_est &= !UTIL_AVG_UNCHANGED;
    }
}

/// A task's estimate without the flag bit.
/// kernel: fair.c _task_util_est() @ v6.12
#[inline]
pub fn _task_util_est(util_est: u32) -> u32 {
    util_est & !UTIL_AVG_UNCHANGED
}

/// `max(task_util, estimate)`: what placement and balancing read.
/// kernel: fair.c task_util_est() @ v6.12
#[inline]
pub fn task_util_est(util_avg: u64, util_est: u32) -> u64 {
    util_avg.max(u64::from(_task_util_est(util_est)))
}

/// Add a task's estimate to its cfs_rq's `util_est` at enqueue.
/// kernel: fair.c util_est_enqueue() @ v6.12
pub fn util_est_enqueue(cfs_util_est: &mut u32, task_util_est_raw: u32) {
    *cfs_util_est = cfs_util_est.wrapping_add(_task_util_est(task_util_est_raw));
}

/// Remove a task's estimate from its cfs_rq's `util_est` at dequeue, floored at 0.
/// kernel: fair.c util_est_dequeue() @ v6.12
pub fn util_est_dequeue(cfs_util_est: &mut u32, task_util_est_raw: u32) {
    *cfs_util_est -= (*cfs_util_est).min(_task_util_est(task_util_est_raw));
}

/// The EWMA step when a task blocks (`DEQUEUE_SLEEP`; the caller also checks
/// `sched_feat(UTIL_EST)`). Takes the task's current `util_est` (with its flag bit),
/// `task_util` (= util_avg), `task_runnable` (= runnable_avg) and `capacity_orig` of its CPU;
/// returns the new `util_est`. Rules, in order:
///
/// 1. flag set (util_avg unchanged since the last write): keep as is;
/// 2. `ewma <= util`: jump up to `util` (instant ramp-up);
/// 3. `ewma - util < UTIL_EST_MARGIN`: keep the ewma (small decreases ignored);
/// 4. `util > capacity_orig` and `!decay_above_capacity`: keep, *without* re-arming the flag;
/// 5. `util + UTIL_EST_MARGIN < runnable` (the task waited for the CPU): keep the ewma;
/// 6. otherwise `ewma = (4·ewma - (ewma - util)) >> 2`, i.e. `ewma - ceil(diff/4)`;
///
/// then (2, 3, 5, 6) store with [`UTIL_AVG_UNCHANGED`] set.
///
/// `decay_above_capacity` selects f2d650618bc7 "sched/fair: Allow decaying util_est when
/// util_avg > CPU capa" (v6.16), which deletes rule 4 outright.
///
/// Deviation: the pre-v6.8 form (v6.6: separate `enqueued`/`ewma` fields, `UTIL_EST_FASTUP`,
/// no runnable check) is not modelled here.
/// kernel: fair.c util_est_update() @ v6.12
pub fn util_est_update(
    util_est: u32,
    task_util: u64,
    task_runnable: u64,
    capacity_orig: u64,
    decay_above_capacity: bool,
) -> u32 {
    let mut ewma = util_est;

    // No new activity since the last update.
    if ewma & UTIL_AVG_UNCHANGED != 0 {
        return ewma;
    }

    let dequeued = task_util as u32;

    // Only decreases are smoothed.
    if ewma <= dequeued {
        return dequeued | UTIL_AVG_UNCHANGED;
    }

    let last_ewma_diff = ewma - dequeued;
    if last_ewma_diff < UTIL_EST_MARGIN {
        return ewma | UTIL_AVG_UNCHANGED;
    }

    // Without idle time on this CPU we cannot tell the task's real size.
    if !decay_above_capacity && u64::from(dequeued) > capacity_orig {
        return ewma;
    }

    // The task did not get all the CPU it wanted: its util underestimates it.
    if u64::from(dequeued + UTIL_EST_MARGIN) < task_runnable {
        return ewma | UTIL_AVG_UNCHANGED;
    }

    // ewma(t) = w·util + (1-w)·ewma(t-1) = ewma(t-1) - w·last_ewma_diff, w = 1/4, computed as
    // (4·ewma - diff) >> 2 so the subtracted quarter rounds up.
    ewma <<= UTIL_EST_WEIGHT_SHIFT;
    ewma -= last_ewma_diff;
    ewma >>= UTIL_EST_WEIGHT_SHIFT;
    ewma | UTIL_AVG_UNCHANGED
}

// ---------------------------------------------------------------------------------------------
// New tasks (fair.c)
// ---------------------------------------------------------------------------------------------

/// Fresh signals at fork. A task starts "fully loaded" (`load_avg = se_weight`, where
/// `se_weight = scale_load_down(se.load.weight)`) so it is not mistaken for a light task before
/// it has history; `load_sum` stays 0 and is rebuilt from `load_avg` at the first attach. A group
/// entity starts at zero (nothing attached yet). Util and runnable are set later by
/// [`post_init_entity_util_avg`].
/// kernel: fair.c init_entity_runnable_average() @ v6.12
pub fn init_entity_runnable_average(is_task: bool, se_weight: u64) -> SchedAvg {
    let mut sa = SchedAvg::default();
    if is_task {
        sa.load_avg = se_weight;
    }
    sa
}

/// Initial util/runnable of a new fair task on the CPU chosen at `wake_up_new_task`:
///
/// ```text
///   cap  = (capacity_orig - cfs.util_avg) / 2          (signed, truncating)
///   util = cfs.util_avg · weight / (cfs.load_avg + 1)   capped at cap,  if cfs.util_avg != 0
///        = cap                                          otherwise
/// ```
///
/// applied only when `cap > 0` (else util stays as it was, 0 after fork); then
/// `runnable_avg = util_avg`. Successive forks on an empty CPU get 512, 256, 128, ... of 1024.
/// `weight` is `se_weight(se)` (= `scale_load_down`) since 72bffbf57c52 "sched/fair: Fix initial
/// util_avg calculation" (v6.10); v6.6 multiplies by the unscaled `se->load.weight` — pass that to
/// reproduce it (the cap then almost always wins). The caller attaches the entity afterwards
/// ([`attach_entity_load_avg`]); a non-fair task only gets `last_update_time` and skips this.
/// kernel: fair.c post_init_entity_util_avg() @ v6.12
pub fn post_init_entity_util_avg(
    sa: &mut SchedAvg,
    cfs_util_avg: u64,
    cfs_load_avg: u64,
    weight: u64,
    capacity_orig: u64,
) {
    let cap = (capacity_orig as i64 - cfs_util_avg as i64) / 2;
    if cap > 0 {
        if cfs_util_avg != 0 {
            sa.util_avg = cfs_util_avg * weight / (cfs_load_avg + 1);
            if sa.util_avg > cap as u64 {
                sa.util_avg = cap as u64;
            }
        } else {
            sa.util_avg = cap as u64;
        }
    }
    sa.runnable_avg = sa.util_avg;
}

// ---------------------------------------------------------------------------------------------
// Attach, detach, remove (fair.c)
// ---------------------------------------------------------------------------------------------

/// Unsigned subtract, clamped at 0.
/// kernel: fair.c sub_positive() @ v6.12
#[inline]
pub fn sub_positive(var: &mut u64, val: u64) {
    *var = var.saturating_sub(val);
}

/// Signed add, clamped at 0 on underflow.
/// kernel: fair.c add_positive() @ v6.12
#[inline]
pub fn add_positive(var: &mut u64, val: i64) {
    *var = if val < 0 {
        var.saturating_sub(val.unsigned_abs())
    } else {
        var.wrapping_add(val as u64)
    };
}

/// The floor fair.c puts under a cfs_rq `*_sum` after adding or removing an entity: the sum
/// must stay `>= avg · PELT_MIN_DIVIDER`, or many detaches between two updates could zero a sum
/// whose average is not zero.
///
/// Before v7.0 the floor is `max_t(u32, sum, avg · PELT_MIN_DIVIDER)`: both sides are truncated
/// to 32 bits, which corrupts `load_sum`/`runnable_sum` once they pass 2^32 (a cfs_rq `load_sum`
/// does past roughly 88 always-runnable nice-0 tasks). `fold` selects v7.0's 089d84203ad4
/// "sched/fair: Fold the sched_avg update" (+ 6ab7973f2540 "Fix sched_avg fold"), whose
/// `__update_sa()` compares at the sum's own width.
pub fn floor_sum_to_avg(sum: u64, avg: u64, fold: bool) -> u64 {
    let min = avg.wrapping_mul(u64::from(PELT_MIN_DIVIDER));
    if fold {
        sum.max(min)
    } else {
        u64::from((sum as u32).max(min as u32))
    }
}

/// The `util_sum` (u32) counterpart of [`floor_sum_to_avg`]; identical before and after v7.0.
fn floor_util_sum(sum: u32, avg: u64) -> u32 {
    sum.max(avg.wrapping_mul(u64::from(PELT_MIN_DIVIDER)) as u32)
}

/// Add an entity's load to its cfs_rq. `fold`: see [`floor_sum_to_avg`] (v7.0 also floors here).
/// kernel: fair.c enqueue_load_avg() @ v6.12
pub fn enqueue_load_avg(cfs: &mut SchedAvg, se: &SchedAvg, se_weight: u64, fold: bool) {
    cfs.load_avg += se.load_avg;
    cfs.load_sum += se_weight * se.load_sum;
    if fold {
        cfs.load_sum = floor_sum_to_avg(cfs.load_sum, cfs.load_avg, true);
    }
}

/// Remove an entity's load from its cfs_rq, clamped at 0, then floored (see
/// [`floor_sum_to_avg`]).
/// kernel: fair.c dequeue_load_avg() @ v6.12
pub fn dequeue_load_avg(cfs: &mut SchedAvg, se: &SchedAvg, se_weight: u64, fold: bool) {
    sub_positive(&mut cfs.load_avg, se.load_avg);
    sub_positive(&mut cfs.load_sum, se_weight * se.load_sum);
    cfs.load_sum = floor_sum_to_avg(cfs.load_sum, cfs.load_avg, fold);
}

/// Attach an entity to a cfs_rq whose signals have just been updated to "now". The entity is
/// aligned on the cfs_rq's window (`last_update_time`, `period_contrib`) and its sums are rebuilt
/// from its averages with the cfs_rq's divider (`sum = avg · divider`; `load_sum =
/// load_avg · divider / se_weight`, at least 1 so a non-zero `load_avg` never has a zero sum);
/// then everything is added to the cfs_rq. Returns the `load_sum` the caller passes to
/// `add_tg_cfs_propagate` (group hierarchy).
/// kernel: fair.c attach_entity_load_avg() @ v6.12
pub fn attach_entity_load_avg(
    cfs: &mut SchedAvg,
    se: &mut SchedAvg,
    se_weight: u64,
    fold: bool,
) -> i64 {
    // The entity and the cfs_rq share the clock, so the cfs_rq's position in the period is the
    // entity's too.
    let divider = u64::from(get_pelt_divider(cfs));

    se.last_update_time = cfs.last_update_time;
    se.period_contrib = cfs.period_contrib;

    // Rebuilding from the averages truncates the sums a little; nothing above this entity
    // depends on its exact sums, so that is acceptable.
    se.util_sum = (se.util_avg * divider) as u32;
    se.runnable_sum = se.runnable_avg * divider;
    se.load_sum = se.load_avg * divider;
    // se_weight is never 0 for a task or group entity (scale_load_down keeps it >= 2).
    if se_weight < se.load_sum {
        se.load_sum /= se_weight;
    } else {
        se.load_sum = 1;
    }

    enqueue_load_avg(cfs, se, se_weight, fold);
    cfs.util_avg += se.util_avg;
    cfs.util_sum = cfs.util_sum.wrapping_add(se.util_sum); // u32 in the kernel too
    cfs.runnable_avg += se.runnable_avg;
    cfs.runnable_sum += se.runnable_sum;

    se.load_sum as i64
}

/// Detach an entity from a cfs_rq whose signals have just been updated to "now" (balancer
/// migration, class or group change): subtract averages and sums, clamped at 0 and floored.
/// Returns `-load_sum` for `add_tg_cfs_propagate`.
/// kernel: fair.c detach_entity_load_avg() @ v6.12
pub fn detach_entity_load_avg(
    cfs: &mut SchedAvg,
    se: &SchedAvg,
    se_weight: u64,
    fold: bool,
) -> i64 {
    dequeue_load_avg(cfs, se, se_weight, fold);

    sub_positive(&mut cfs.util_avg, se.util_avg);
    cfs.util_sum = cfs.util_sum.saturating_sub(se.util_sum);
    cfs.util_sum = floor_util_sum(cfs.util_sum, cfs.util_avg);

    sub_positive(&mut cfs.runnable_avg, se.runnable_avg);
    sub_positive(&mut cfs.runnable_sum, se.runnable_sum);
    cfs.runnable_sum = floor_sum_to_avg(cfs.runnable_sum, cfs.runnable_avg, fold);

    -(se.load_sum as i64)
}

/// A cfs_rq's pending removals (`cfs_rq->removed`): averages of entities that left without the
/// cfs_rq's lock (wakeup migration), folded in at its next [`update_cfs_rq_load_avg`].
/// kernel: sched.h struct cfs_rq removed @ v6.12
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemovedLoad {
    pub nr: u32,
    pub load_avg: u64,
    pub util_avg: u64,
    pub runnable_avg: u64,
}

/// Queue an entity's averages for removal from its old cfs_rq. The caller has first synced the
/// entity to that cfs_rq's `last_update_time` (`sync_entity_load_avg`, i.e.
/// [`__update_load_avg_blocked_se`] at that time) and afterwards sets its `last_update_time` to 0
/// ("needs attach").
/// kernel: fair.c remove_entity_load_avg() @ v6.12
pub fn remove_entity_load_avg(removed: &mut RemovedLoad, se: &SchedAvg) {
    removed.nr += 1;
    removed.load_avg += se.load_avg;
    removed.util_avg += se.util_avg;
    removed.runnable_avg += se.runnable_avg;
}

/// Update a cfs_rq's signals to `now`: first fold in pending removals (averages reduced by the
/// removed amounts, sums by `amount · divider` with the divider taken before the update, each
/// clamped and floored), then decay/accumulate with [`__update_load_avg_cfs_rq`]'s inputs.
/// Returns `(decayed, prop)`: `decayed` is true if anything was removed or a period boundary was
/// crossed; `prop` is `Some(-(removed runnable · divider) >> 10)` when something was removed, the
/// estimate of removed `load_sum` the caller passes to `add_tg_cfs_propagate`.
/// kernel: fair.c update_cfs_rq_load_avg() @ v6.12
pub fn update_cfs_rq_load_avg(
    now: u64,
    sa: &mut SchedAvg,
    removed: &mut RemovedLoad,
    load_weight: u64,
    nr_runnable: u64,
    curr: bool,
    fold: bool,
) -> (bool, Option<i64>) {
    let mut decayed = false;
    let mut prop = None;

    if removed.nr != 0 {
        let divider = u64::from(get_pelt_divider(sa));
        let taken = std::mem::take(removed);

        let r = taken.load_avg;
        sub_positive(&mut sa.load_avg, r);
        sub_positive(&mut sa.load_sum, r * divider);
        sa.load_sum = floor_sum_to_avg(sa.load_sum, sa.load_avg, fold);

        let r = taken.util_avg;
        sub_positive(&mut sa.util_avg, r);
        sa.util_sum = sa.util_sum.saturating_sub((r * divider) as u32);
        sa.util_sum = floor_util_sum(sa.util_sum, sa.util_avg);

        let r = taken.runnable_avg;
        sub_positive(&mut sa.runnable_avg, r);
        sub_positive(&mut sa.runnable_sum, r * divider);
        sa.runnable_sum = floor_sum_to_avg(sa.runnable_sum, sa.runnable_avg, fold);

        // removed runnable is the unweighted version of removed load: use it to estimate the
        // removed load_sum (arithmetic shift of a negative value, as in C).
        prop = Some((-((taken.runnable_avg * divider) as i64)) >> SCHED_CAPACITY_SHIFT);
        decayed = true;
    }

    decayed |= __update_load_avg_cfs_rq(now, sa, load_weight, nr_runnable, curr);
    (decayed, prop)
}

// ---------------------------------------------------------------------------------------------
// Propagation up the group hierarchy (fair.c, CONFIG_FAIR_GROUP_SCHED)
// ---------------------------------------------------------------------------------------------
//
// A group entity `ge` stands for its cfs_rq `gcfs` in the parent cfs_rq. When an entity is
// attached to or detached from `gcfs` (migration, cgroup move), `gcfs`'s sums jump at once;
// without propagation `ge` would only follow through its own geometric series, tens of ms
// later. The kernel instead marks `gcfs` (`propagate`, with the signed load_sum change in
// `prop_runnable_sum`) and, at the next `update_load_avg()` of `ge`, copies util and runnable
// from `gcfs` to `ge` and estimates `ge`'s new load, adding each difference to the parent.
// The functions below are that arithmetic; fair_pelt.rs owns the flags and the walk. Read in a
// v6.17 tree; as far as known the same in v6.12. The v7.0 fold (089d84203ad4) changes only the
// floors, as elsewhere in this file (`fold`).

/// `add_positive()` on a 32-bit field (`util_sum`): the C sum is taken at 64 bits and stored
/// truncated to 32; a negative change that would wrap clamps to 0.
/// kernel: fair.c add_positive() @ v6.17
#[inline]
pub fn add_positive_u32(var: &mut u32, val: i64) {
    let res = (i64::from(*var) + val) as u32;
    *var = if val < 0 && res > *var { 0 } else { res };
}

/// Record a load_sum change of `runnable_sum` in a cfs_rq, to be carried to its group entity
/// (and from there up) at the entity's next update.
/// kernel: fair.c add_tg_cfs_propagate() @ v6.17
#[inline]
pub fn add_tg_cfs_propagate(propagate: &mut bool, prop_runnable_sum: &mut i64, runnable_sum: i64) {
    *propagate = true;
    *prop_runnable_sum += runnable_sum;
}

/// Copy the group cfs_rq's `util_avg` to its entity `se` and add the difference to the parent
/// `cfs` (average and sum, clamped at 0 and floored). The entity's sum is rebuilt with the
/// parent's divider: `se` and `cfs` share the period position. `util_sum` is 32-bit.
/// kernel: fair.c update_tg_cfs_util() @ v6.17
pub fn update_tg_cfs_util(cfs: &mut SchedAvg, se: &mut SchedAvg, gcfs: &SchedAvg) {
    let delta_avg = gcfs.util_avg as i64 - se.util_avg as i64;
    if delta_avg == 0 {
        return;
    }
    let divider = u64::from(get_pelt_divider(cfs));
    se.util_avg = gcfs.util_avg;
    let new_sum = (se.util_avg * divider) as u32;
    let delta_sum = i64::from(new_sum) - i64::from(se.util_sum);
    se.util_sum = new_sum;
    add_positive(&mut cfs.util_avg, delta_avg);
    add_positive_u32(&mut cfs.util_sum, delta_sum);
    cfs.util_sum = floor_util_sum(cfs.util_sum, cfs.util_avg);
}

/// The same for `runnable_avg`. The rebuilt entity sum is computed in 32 bits as in the
/// kernel (`u32 new_sum`), which only matters past ~90 runnable tasks in one group cfs_rq.
/// `fold`: see [`floor_sum_to_avg`].
/// kernel: fair.c update_tg_cfs_runnable() @ v6.17
pub fn update_tg_cfs_runnable(cfs: &mut SchedAvg, se: &mut SchedAvg, gcfs: &SchedAvg, fold: bool) {
    let delta_avg = gcfs.runnable_avg as i64 - se.runnable_avg as i64;
    if delta_avg == 0 {
        return;
    }
    let divider = u64::from(get_pelt_divider(cfs));
    se.runnable_avg = gcfs.runnable_avg;
    let new_sum = (se.runnable_avg * divider) as u32;
    let delta_sum = i64::from(new_sum) - se.runnable_sum as i64;
    se.runnable_sum = u64::from(new_sum);
    add_positive(&mut cfs.runnable_avg, delta_avg);
    add_positive(&mut cfs.runnable_sum, delta_sum);
    cfs.runnable_sum = floor_sum_to_avg(cfs.runnable_sum, cfs.runnable_avg, fold);
}

/// The group entity's new load from the pending `prop_runnable_sum` of its cfs_rq (which is
/// consumed). Load cannot be copied like util: the entity's load is its own weight (the
/// group's share) times how runnable the group is, so the rule estimates an unweighted
/// runnable sum `r` (0..=divider) and sets `se.load_sum = r`, `se.load_avg = se_weight · r /
/// divider`:
///
/// ```text
///   added load (prop > 0):    r = min(se.load_sum + prop, divider)    (no overlap assumed)
///   removed load (prop < 0):  r = min(se.load_sum, gcfs.load_sum / gcfs_weight)
///                             (every remaining task equally runnable; 0 if gcfs is empty)
///   then                      r = max(r, se.util_sum >> 10)           (runnable >= running)
/// ```
///
/// The change is added to the parent `cfs` (clamped, floored); nothing happens when the
/// average does not change. `gcfs_weight` is `scale_load_down(gcfs.load.weight)`,
/// `se_weight` is `se_weight(se)`.
/// kernel: fair.c update_tg_cfs_load() @ v6.17
pub fn update_tg_cfs_load(
    cfs: &mut SchedAvg,
    se: &mut SchedAvg,
    se_weight: u64,
    gcfs: &SchedAvg,
    gcfs_weight: u64,
    prop_runnable_sum: &mut i64,
    fold: bool,
) {
    let mut runnable_sum = *prop_runnable_sum;
    if runnable_sum == 0 {
        return;
    }
    *prop_runnable_sum = 0;
    let divider = u64::from(get_pelt_divider(cfs));
    if runnable_sum >= 0 {
        runnable_sum += se.load_sum as i64;
        runnable_sum = runnable_sum.min(divider as i64);
    } else {
        // 0 for an empty group cfs_rq
        let load_sum = gcfs.load_sum.checked_div(gcfs_weight).unwrap_or(0);
        runnable_sum = se.load_sum.min(load_sum) as i64;
    }
    let running_sum = i64::from(se.util_sum >> SCHED_CAPACITY_SHIFT);
    runnable_sum = runnable_sum.max(running_sum);

    let load_sum = se_weight * runnable_sum as u64;
    let load_avg = load_sum / divider;
    let delta_avg = load_avg as i64 - se.load_avg as i64;
    if delta_avg == 0 {
        return;
    }
    let delta_sum = load_sum as i64 - (se_weight * se.load_sum) as i64;
    se.load_sum = runnable_sum as u64;
    se.load_avg = load_avg;
    add_positive(&mut cfs.load_avg, delta_avg);
    add_positive(&mut cfs.load_sum, delta_sum);
    cfs.load_sum = floor_sum_to_avg(cfs.load_sum, cfs.load_avg, fold);
}

/// The PELT part of a weight change: the entity's load leaves its cfs_rq at the old weight
/// (`dequeue_load_avg`), its `load_avg` is recomputed from its unweighted `load_sum` at the new
/// weight with its own divider, and it comes back (`enqueue_load_avg`). So an entity's load
/// follows its weight at once; for a group entity, whose weight (its share) changes at nearly
/// every enqueue, dequeue and tick, this keeps the parent's load in step. Weights are
/// `scale_load_down` values.
/// kernel: fair.c reweight_entity() @ v6.17 (its load-average lines)
pub fn reweight_load_avg(
    cfs: &mut SchedAvg,
    se: &mut SchedAvg,
    old_weight: u64,
    new_weight: u64,
    fold: bool,
) {
    dequeue_load_avg(cfs, se, old_weight, fold);
    let divider = u64::from(get_pelt_divider(se));
    se.load_avg = new_weight * se.load_sum / divider;
    enqueue_load_avg(cfs, se, new_weight, fold);
}

/// A group entity with no load or util left and nothing pending in its cfs_rq need not be
/// updated by the blocked-load pass.
/// kernel: fair.c skip_blocked_update() @ v6.17
pub fn skip_blocked_update(se: &SchedAvg, gcfs_propagate: bool) -> bool {
    se.load_avg == 0 && se.util_avg == 0 && !gcfs_propagate
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    // ----- exact integer helpers for checking the table -----------------------------------

    /// Little-endian base-2^32 natural number, just enough for `x^32 · 2^k` comparisons.
    #[derive(Clone, Debug, PartialEq, Eq)]
    struct Big(Vec<u32>);

    impl Big {
        fn from_u64(v: u64) -> Big {
            let mut b = Big(vec![v as u32, (v >> 32) as u32]);
            b.trim();
            b
        }
        fn trim(&mut self) {
            while self.0.len() > 1 && *self.0.last().unwrap() == 0 {
                self.0.pop();
            }
        }
        fn mul(&self, o: &Big) -> Big {
            let mut r = vec![0u32; self.0.len() + o.0.len()];
            for (i, &a) in self.0.iter().enumerate() {
                let mut carry = 0u64;
                for (j, &b) in o.0.iter().enumerate() {
                    let t = u64::from(a) * u64::from(b) + u64::from(r[i + j]) + carry;
                    r[i + j] = t as u32;
                    carry = t >> 32;
                }
                let mut k = i + o.0.len();
                while carry != 0 {
                    let t = u64::from(r[k]) + carry;
                    r[k] = t as u32;
                    carry = t >> 32;
                    k += 1;
                }
            }
            let mut b = Big(r);
            b.trim();
            b
        }
        fn pow32(&self) -> Big {
            let mut x = self.clone();
            for _ in 0..5 {
                x = x.mul(&x); // x^2, x^4, x^8, x^16, x^32
            }
            x
        }
        fn cmp(&self, o: &Big) -> std::cmp::Ordering {
            self.0
                .len()
                .cmp(&o.0.len())
                .then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
        }
    }

    /// Is `t == floor(m · 2^(-k/32))`? Equivalent, raising to the 32nd power (monotone on
    /// naturals), to `t^32 · 2^k <= m^32 < (t+1)^32 · 2^k`: exact, no rounding anywhere.
    fn is_floor_of_m_y_k(t: u64, m: u64, k: u32) -> bool {
        let m32 = Big::from_u64(m).pow32();
        let two_k = Big::from_u64(1u64 << k);
        let lo = Big::from_u64(t).pow32().mul(&two_k);
        let hi = Big::from_u64(t + 1).pow32().mul(&two_k);
        lo.cmp(&m32) != std::cmp::Ordering::Greater && hi.cmp(&m32) == std::cmp::Ordering::Greater
    }

    #[test]
    fn yn_inv_table_is_exact_floor_of_2pow32_minus_1_times_y_pow_k() {
        for k in 0..LOAD_AVG_PERIOD {
            let t = u64::from(runnable_avg_yN_inv[k as usize]);
            assert!(
                is_floor_of_m_y_k(t, (1u64 << 32) - 1, k),
                "entry {k} = {t:#x} is not floor((2^32-1)·y^{k})"
            );
        }
    }

    #[test]
    fn yn_inv_table_matches_f64_generator_with_margin() {
        // The kernel's generator computes ((1UL<<32)-1) * pow(y, k) in double and truncates.
        // pow() and the product are within a few ulp: relative error < 1e-15, so absolute
        // error < 4.3e9 · 1e-15 < 1e-5. If every exact value sits more than 1e-4 away from an
        // integer, the double computation truncates to the same integer as exact arithmetic.
        let y = 0.5f64.powf(1.0 / 32.0);
        for k in 0..LOAD_AVG_PERIOD {
            let v = 4_294_967_295.0f64 * y.powi(k as i32);
            let frac = v - v.floor();
            // k = 0 is exact (y^0 = 1, and 2^32 - 1 is representable).
            assert!(
                k == 0 || (frac > 1e-4 && frac < 1.0 - 1e-4),
                "entry {k} too close to an integer"
            );
            assert_eq!(
                v.floor() as u32,
                runnable_avg_yN_inv[k as usize],
                "entry {k}"
            );
        }
    }

    #[test]
    fn spec_floor_2pow32_table_differs_only_in_the_missing_minus_one() {
        // smp.md §5.2 says Yinv[k] = floor(2^32 · y^k). Entry 0 would be 2^32 (does not fit a
        // u32); the others can only be 1 larger than the kernel's, since
        // 2^32·y^k - (2^32-1)·y^k = y^k < 1.
        assert!(is_floor_of_m_y_k(1u64 << 32, 1u64 << 32, 0));
        for k in 1..LOAD_AVG_PERIOD {
            let t = u64::from(runnable_avg_yN_inv[k as usize]);
            assert!(
                is_floor_of_m_y_k(t, 1u64 << 32, k) || is_floor_of_m_y_k(t + 1, 1u64 << 32, k),
                "entry {k}"
            );
        }
    }

    #[test]
    fn load_avg_max_is_fixed_point_of_kernel_recurrence() {
        // Documentation/scheduler/sched-pelt.c: y_inv = (long)((2^32-1)·y), which the two
        // tests above show is table entry 1; then max = (max·y_inv >> 32) + 1024 from 1024
        // until it stops changing.
        let y_inv = u64::from(runnable_avg_yN_inv[1]);
        let mut max = 1024u64;
        let mut last = 0u64;
        while last != max {
            last = max;
            max = ((max * y_inv) >> 32) + 1024;
        }
        assert_eq!(max, u64::from(LOAD_AVG_MAX));
        // And LOAD_AVG_MAX·y == LOAD_AVG_MAX - 1024 in decay_load's arithmetic:
        // 47742 · 0xfa83b2da / 2^32 = 47742 · 0.9785720 = 46718.98 -> 46718.
        assert_eq!(
            decay_load(u64::from(LOAD_AVG_MAX), 1),
            u64::from(PELT_MIN_DIVIDER)
        );
    }

    // ----- decay_load ---------------------------------------------------------------------

    #[test]
    fn decay_load_one_period() {
        // 1024 · 0xfa83b2da >> 32 = 0xfa83b2da >> 22 = 4202935002 / 4194304 = 1002.06 -> 1002.
        assert_eq!(decay_load(1024, 1), 1002);
    }

    #[test]
    fn decay_load_half_life_is_half_minus_the_table_quirk() {
        // n = 32: val >>= 1, then · 0xffffffff >> 32, which is h - 1 for 1 <= h <= 2^32.
        // So decay_load(x, 32) == x/2 exactly only for x in {0, 1}; otherwise x/2 - 1.
        assert_eq!(decay_load(0, 32), 0);
        assert_eq!(decay_load(1, 32), 0); // 1 >> 1 = 0
        assert_eq!(decay_load(2, 32), 0); // h = 1: 0xffffffff >> 32 = 0
        assert_eq!(decay_load(1024, 32), 511);
        assert_eq!(decay_load(47742, 32), 23870);
        assert_eq!(decay_load(1 << 33, 32), (1 << 32) - 1);
        // Two half-lives: x >> 2, minus one.
        assert_eq!(decay_load(1024, 64), 255);
        assert_eq!(decay_load(47742, 64), 11934); // 47742 >> 2 = 11935
    }

    #[test]
    fn decay_load_zero_periods_is_not_identity() {
        // No n == 0 shortcut in the kernel (the spec has one; pelt.c never calls with 0).
        assert_eq!(decay_load(1000, 0), 999);
    }

    #[test]
    fn decay_load_vanishes_after_63_half_lives() {
        assert_eq!(decay_load(u64::MAX, 63 * 32 + 1), 0); // explicit bound
                                                          // n = 2016: u64::MAX >> 63 = 1; 1 · 0xffffffff >> 32 = 0.
        assert_eq!(decay_load(u64::MAX, 63 * 32), 0);
        // n = 2015 = 62·32 + 31: u64::MAX >> 62 = 3; 3 · 0x82cd8698 = 6583519176; >> 32 = 1.
        assert_eq!(decay_load(u64::MAX, 63 * 32 - 1), 1);
    }

    // ----- accumulate / update ------------------------------------------------------------

    /// One period of PELT time: 1024 units of 1024 ns.
    const PERIOD_NS: u64 = 1024 * 1024;

    #[test]
    fn accumulate_pelt_segments_hand_values() {
        // p = 1: c1 = decay(1024,1) = 1002; c2 = 47742 - 46718 - 1024 = 0; c3 = 0.
        assert_eq!(__accumulate_pelt_segments(1, 1024, 0), 1002);
        // p = 32: c1 = decay(1024,32) = 511; c2 = 47742 - 23870 - 1024 = 22848.
        assert_eq!(__accumulate_pelt_segments(32, 1024, 0), 511 + 22848);
    }

    #[test]
    fn update_within_one_period_only_accumulates() {
        let mut sa = SchedAvg::default();
        // 500 units, no boundary: util_sum = 500 << 10, period_contrib = 500, avgs untouched.
        assert!(!___update_load_sum(500 * 1024 + 1023, &mut sa, 1, 1, true));
        assert_eq!(sa.util_sum, 500 << 10);
        assert_eq!(sa.runnable_sum, 500 << 10);
        assert_eq!(sa.load_sum, 500);
        assert_eq!(sa.period_contrib, 500);
        assert_eq!(sa.last_update_time, 500 * 1024); // the 1023 ns remainder waits
        assert_eq!(sa.util_avg, 0);
    }

    #[test]
    fn update_ignores_sub_unit_and_backwards_time() {
        let mut sa = SchedAvg {
            last_update_time: 10 * 1024,
            ..SchedAvg::default()
        };
        assert!(!___update_load_sum(10 * 1024 + 1023, &mut sa, 1, 1, true));
        assert_eq!(sa.last_update_time, 10 * 1024);
        assert_eq!(sa.util_sum, 0);
        assert!(!___update_load_sum(5, &mut sa, 1, 1, true));
        assert_eq!(sa.last_update_time, 5);
        assert_eq!(sa.util_sum, 0);
    }

    #[test]
    fn zero_load_forces_runnable_and_running_off() {
        let mut sa = SchedAvg::default();
        ___update_load_sum(100 * 1024, &mut sa, 0, 3, true);
        assert_eq!((sa.load_sum, sa.runnable_sum, sa.util_sum), (0, 0, 0));
        assert_eq!(sa.period_contrib, 100);
    }

    #[test]
    fn runnable_sum_is_weighted_by_count_and_shifted() {
        let mut sa = SchedAvg::default();
        // 3 runnable for 10 units: (3 · 10) << 10.
        ___update_load_sum(10 * 1024, &mut sa, 2048, 3, false);
        assert_eq!(sa.runnable_sum, 30 << 10);
        assert_eq!(sa.load_sum, 2048 * 10);
        assert_eq!(sa.util_sum, 0);
    }

    /// Run a nice-0 task from zeroed signals, updating at `updates` (ns), returning the task.
    fn run_task(updates: impl IntoIterator<Item = u64>) -> SchedAvg {
        let mut sa = SchedAvg::default();
        for t in updates {
            __update_load_avg_se(t, &mut sa, 1024, true, 1, true, true);
        }
        sa
    }

    #[test]
    fn tv20_boundary_values_single_update() {
        // One update from 0 to exactly p periods: contrib = decay(1024,p) + (47742 -
        // decay(47742,p) - 1024), util_sum = contrib << 10, divider = 46718 (contrib 0).
        // p = 32:  511 + 22848 = 23359; 23359·1024 / 46718 = 23919616 / 46718 = 512.0 -> 512.
        let sa = run_task([32 * PERIOD_NS]);
        assert_eq!(sa.util_sum, 23359 << 10);
        assert_eq!(sa.util_avg, 512);
        assert_eq!(sa.runnable_avg, 512);
        // load: 1024 · 23359 / 46718 = 512.
        assert_eq!(sa.load_avg, 512);
        // p = 64:  255 + (47742 - 11934 - 1024 = 34784) = 35039; ·1024/46718 = 768.01 -> 768.
        assert_eq!(run_task([64 * PERIOD_NS]).util_avg, 768);
        // p = 128: 63 + (47742 - 2982 - 1024 = 43736) = 43799; ·1024/46718 = 960.02 -> 960.
        assert_eq!(run_task([128 * PERIOD_NS]).util_avg, 960);
    }

    /// Updates at every 1 ms tick (HZ=1000) up to and including `last_tick` ms.
    fn ticks_to(last_tick: u64) -> impl Iterator<Item = u64> {
        (1..=last_tick).map(|k| k * 1_000_000)
    }

    #[test]
    fn tv20_boundary_values_with_tick_updates() {
        // Updated at every 1 ms tick and once more exactly at the boundary. The spec allows ±3
        // for the rounding of the intermediate updates; here the per-update floors happen to
        // cancel and the values are the single-update ones above.
        for (p, expect) in [(32u64, 512u64), (64, 768), (128, 960)] {
            let b = p * PERIOD_NS;
            let sa = run_task(ticks_to(b / 1_000_000).chain([b]));
            assert!(sa.util_avg.abs_diff(expect) <= 3, "p={p}: {}", sa.util_avg);
            assert_eq!(sa.util_avg, expect, "p={p}");
        }
    }

    #[test]
    fn tv20_first_tick_after_boundary() {
        // The boundaries fall at 33.554432, 67.108864 and 134.217728 ms, so the first 1 ms ticks
        // after them are at 34, 68 and 135 ms. util_avg is recomputed there (the update from
        // the previous tick crosses the boundary) and read there. With a single update from 0:
        //   34 ms  = 33203 units: p = 32,  d3 = 435; contrib = 511 + 22848 + 435 = 23794;
        //            23794·1024 / (46718 + 435) = 24365056 / 47153 = 516.72 -> 516
        //   68 ms  = 66406 units: p = 64,  d3 = 870; contrib = 255 + 34784 + 870 = 35909;
        //            35909·1024 / 47588 = 772.69 -> 772
        //   135 ms = 131835 units: p = 128, d3 = 763; contrib = 63 + 43736 + 763 = 44562;
        //            44562·1024 / 47481 = 961.05 -> 961
        // The spec's 516 / 772 / 961 are exactly these.
        assert_eq!(run_task([34_000_000]).util_avg, 516);
        assert_eq!(run_task([68_000_000]).util_avg, 772);
        assert_eq!(run_task([135_000_000]).util_avg, 961);
        // What a simulation produces: the running task is updated at every tick (task_tick_fair
        // -> update_load_avg) and util_avg is read at the first tick past the boundary. The
        // intermediate floors do not move the result here: the same 516 / 772 / 961.
        for (ms, expect) in [(34u64, 516u64), (68, 772), (135, 961)] {
            assert_eq!(run_task(ticks_to(ms)).util_avg, expect, "{ms} ms");
        }
    }

    #[test]
    fn sleeping_task_halves_every_32_periods() {
        // Task from TV-20 at 32 periods: util_sum = 23359 << 10 = 23919616, util_avg 512,
        // period_contrib 0. Sleep 32 periods in one update: sums decay by decay_load(., 32).
        let mut sa = run_task([32 * PERIOD_NS]);
        let before = sa;
        assert!(__update_load_avg_blocked_se(64 * PERIOD_NS, &mut sa, 1024));
        assert_eq!(
            u64::from(sa.util_sum),
            decay_load(u64::from(before.util_sum), 32)
        );
        assert_eq!(sa.load_sum, decay_load(before.load_sum, 32));
        assert_eq!(sa.runnable_sum, decay_load(before.runnable_sum, 32));
        // 23919616 >> 1 = 11959808, minus the table quirk's 1 = 11959807;
        // 11959807 / 46718 = 255.99998 -> 255 (one below an exact half: 46718·256 = 11959808).
        assert_eq!(sa.util_sum, 11_959_807);
        assert_eq!(sa.util_avg, 255);
        // Another half-life: 11959807 >> 1 = 5979903, - 1 = 5979902; / 46718 = 127.99 -> 127.
        assert!(__update_load_avg_blocked_se(96 * PERIOD_NS, &mut sa, 1024));
        assert_eq!(sa.util_sum, 5_979_902);
        assert_eq!(sa.util_avg, 127);
    }

    #[test]
    fn sleeping_task_decayed_tick_by_tick_tracks_single_decay() {
        // Decaying in ~1-period steps floors once per step (< 1 unit of sum each) plus the
        // table truncation (< 1 unit per multiply): over 32 periods the sum is at most ~64 below
        // the one-shot decay, i.e. < 0.002 of util_avg. So util_avg is within 1.
        let mut one = run_task([32 * PERIOD_NS]);
        let mut many = one;
        __update_load_avg_blocked_se(64 * PERIOD_NS, &mut one, 1024);
        let start = 32 * PERIOD_NS;
        let mut t = start;
        while t + 1_000_000 < 64 * PERIOD_NS {
            t += 1_000_000;
            __update_load_avg_blocked_se(t, &mut many, 1024);
        }
        __update_load_avg_blocked_se(64 * PERIOD_NS, &mut many, 1024);
        assert!(one.util_sum >= many.util_sum && one.util_sum - many.util_sum <= 64);
        assert!(one.util_avg.abs_diff(many.util_avg) <= 1);
    }

    // ----- a one-CPU harness: rq clocks, one task, its cfs_rq -----------------------------

    /// Minimal rq with one nice-0 task, driving the PELT clock the way core.c and fair.c do:
    /// every event first advances `clock_task` and `clock_pelt` (update_rq_clock), then the task
    /// and the cfs_rq are updated at `rq_clock_pelt`; going idle runs the lost_idle_time check.
    struct Cpu {
        cap: u64,
        freq: u64,
        clock_task: u64,
        pclk: PeltClock,
        task: SchedAvg,
        cfs: SchedAvg,
        running: bool,
    }

    impl Cpu {
        fn new(cap: u64, freq: u64) -> Cpu {
            Cpu {
                cap,
                freq,
                clock_task: 0,
                pclk: PeltClock::default(),
                task: SchedAvg::default(),
                cfs: SchedAvg::default(),
                running: true,
            }
        }
        fn update_rq_clock(&mut self, t: u64) {
            let delta = t - self.clock_task;
            self.clock_task = t;
            self.pclk
                .update_rq_clock_pelt(delta, !self.running, t, t, self.cap, self.freq);
        }
        fn update_load_avg(&mut self) {
            let now = self.pclk.rq_clock_pelt();
            let r = self.running;
            if r {
                __update_load_avg_se(now, &mut self.task, 1024, true, 1, true, true);
            } else {
                __update_load_avg_blocked_se(now, &mut self.task, 1024);
            }
            __update_load_avg_cfs_rq(
                now,
                &mut self.cfs,
                if r { 1024 } else { 0 },
                u64::from(r),
                r,
            );
        }
        fn tick(&mut self, t: u64) {
            self.update_rq_clock(t);
            self.update_load_avg();
        }
        fn block(&mut self, t: u64) {
            self.update_rq_clock(t);
            self.update_load_avg();
            self.running = false;
            self.pclk
                .update_idle_rq_clock_pelt(self.cfs.util_sum, 0, 0, self.clock_task, t);
        }
        fn wake(&mut self, t: u64) {
            self.update_rq_clock(t);
            self.update_load_avg();
            self.running = true;
        }
    }

    #[test]
    fn scaled_delta_order_is_capacity_then_frequency() {
        // 1000 ns at capacity 284, frequency 512: 1000·284 >> 10 = 277; 277·512 >> 10 = 138.
        assert_eq!(scale_pelt_delta(1000, 284, 512), 138);
        // Order matters for rounding: capacity first 3·1023 >> 10 = 2, 2·513 >> 10 = 1;
        // frequency first would give 3·513 >> 10 = 1, 1·1023 >> 10 = 0.
        assert_eq!(scale_pelt_delta(3, 1023, 513), 1);
        assert_eq!(scale_pelt_delta(1_000_000, 1024, 1024), 1_000_000);
    }

    #[test]
    fn periodic_25_percent_settles_near_256() {
        // 1 ms on / 3 ms off, updated at each transition. Steady state in continuous time, with
        // r = 1 ms = 0.95367 periods and p = 4 ms = 3.8147 periods:
        //   peak (at block):   1024·(1 - y^r)/(1 - y^p) = 1024 · 0.020451/0.079265 = 264.2
        //   trough (at wake):  264.2 · y^(p - r) = 264.2 · 2^(-2.861/32)         = 248.3
        // time-average 1024/4 = 256. Tolerances: integer floors cost up to ~1 unit, so the
        // trough reads 247..249 and the peak 263..265. A block sample can also repeat the wake
        // value, because util_avg is only recomputed when the 1 ms run crosses a 1.048 ms period
        // boundary; hence every sample is only bounded by [246, 266] = [248.3, 264.2] ± 2.
        // After 400 ms (12 half-lives) the start-up transient is below 1 unit.
        let mut cpu = Cpu::new(1024, 1024);
        let (mut wakes, mut blocks) = (Vec::new(), Vec::new());
        for k in 0..200u64 {
            let start = k * 4_000_000;
            let settled = start >= 400_000_000;
            if k > 0 {
                cpu.wake(start);
                if settled {
                    wakes.push(cpu.task.util_avg);
                }
            }
            cpu.block(start + 1_000_000);
            if settled {
                blocks.push(cpu.task.util_avg);
            }
        }
        for &u in wakes.iter().chain(&blocks) {
            assert!((246..=266).contains(&u), "sample {u}");
        }
        for &u in &wakes {
            assert!((247..=249).contains(&u), "trough {u}");
        }
        let peak = *blocks.iter().max().unwrap();
        assert!((263..=265).contains(&peak), "peak {peak}");
    }

    #[test]
    fn continuous_task_on_little_cpu_is_slowed_not_capped() {
        // Kernel behaviour (time-scaled PELT since v5.3): a task that never lets a 284-capacity
        // CPU idle runs PELT time at 284/1024 of real time, so after T real it has exactly the
        // util a 1024 CPU gives after T·284/1024, and it still saturates near 1024 — not at 284
        // as smp.md TV-20 says. Per 1 ms tick the PELT clock gains 1e6·284 >> 10 = 277343 ns.
        let mut little = Cpu::new(284, 1024);
        for ms in 1..=1000u64 {
            little.tick(ms * 1_000_000);
        }
        assert_eq!(little.pclk.clock_pelt, 1000 * 277_343);
        let big = run_task((1..=1000u64).map(|k| k * 277_343));
        assert_eq!(little.task, big);
        // 277.3 ms = 264.5 periods = 8.27 half-lives: 1024·(1 - 2^-8.27) = 1020.7, minus up to
        // a few units of integer loss. Far above 284.
        assert!(
            (1015..=1024).contains(&little.task.util_avg),
            "{}",
            little.task.util_avg
        );
    }

    #[test]
    fn continuous_task_at_half_frequency_is_slowed_not_capped() {
        // Same at frequency 512 on a 1024 CPU: 1e6·1024 >> 10 = 1e6, ·512 >> 10 = 500000.
        let mut half = Cpu::new(1024, 512);
        for ms in 1..=1000u64 {
            half.tick(ms * 1_000_000);
        }
        assert_eq!(half.pclk.clock_pelt, 500 * 1_000_000);
        // 500 ms = 476.8 periods = 14.9 half-lives: 1024·(1 - 2^-14.9) = 1023.97, minus up to
        // a few units of integer loss. Far above 512.
        assert!(
            (1018..=1024).contains(&half.task.util_avg),
            "{}",
            half.task.util_avg
        );
    }

    #[test]
    fn busy_but_not_saturated_task_tracks_capacity() {
        // Where smp.md's "≈ C" holds: the task leaves a sliver of idle in every 8 ms cycle (runs
        // 7.9 ms, ticked every ms). Its PELT running time per cycle is 7.9·(C/1024)·(f/1024) ms;
        // going idle snaps the PELT clock back, so the rest of the 8 ms counts as idle and the
        // time-average is 1024 · run/8 = 0.9875 · C·f/1024:
        //   C = 284:               run 2.191 ms = 2.0896 periods, average 280.5
        //   C = 1024, f = 512:     run 3.950 ms = 3.7670 periods, average 505.6
        // Ripple, p = 8 ms = 7.629 periods: peak = 1024·(1 - y^run)/(1 - y^p), trough =
        // peak · y^(p - run):
        //   C = 284:  peak 1024 · 0.04427/0.15224 = 297.8,  trough 297.8 · 2^(-0.1731) = 264.2
        //   f = 512:  peak 1024 · 0.07838/0.15224 = 527.2,  trough 527.2 · 2^(-0.1207) = 484.9
        // Wake samples are troughs (±2 for flooring); block samples lie between trough and peak
        // (util_avg may be stale by up to a period), the largest within 2 of the peak.
        for (cap, freq, trough, peak) in [(284u64, 1024u64, 264u64, 297u64), (1024, 512, 485, 527)]
        {
            let mut cpu = Cpu::new(cap, freq);
            let mut max_block = 0;
            for k in 0..150u64 {
                let start = k * 8_000_000;
                let settled = k >= 100;
                if k > 0 {
                    cpu.wake(start);
                    if settled {
                        assert!(
                            cpu.task.util_avg.abs_diff(trough) <= 2,
                            "trough {cap}/{freq}"
                        );
                    }
                }
                for ms in 1..=7 {
                    cpu.tick(start + ms * 1_000_000);
                }
                cpu.block(start + 7_900_000);
                if settled {
                    let u = cpu.task.util_avg;
                    assert!(u + 2 >= trough && u <= peak + 2, "block {cap}/{freq}: {u}");
                    max_block = max_block.max(u);
                }
            }
            assert!(
                max_block.abs_diff(peak) <= 2,
                "peak {cap}/{freq}: {max_block}"
            );
            assert_eq!(cpu.pclk.lost_idle_time, 0);
        }
    }

    #[test]
    fn fixed_work_gives_same_util_on_any_cpu() {
        // Invariance: 1 ms of full-capacity work every 8 ms. On a 1024 CPU it runs 1 ms; at half
        // frequency 2 ms (2e6 · 512 >> 10 = 1e6 PELT ns); on capacity 284 it runs 3605634 ns
        // (3605634 · 284 = 1024000056, >> 10 = 1000000 PELT ns). Going idle snaps the PELT clock
        // to clock_task, so PELT sees exactly the same 1 ms run / 7 ms idle timeline on all
        // three, and the task's signals are identical, not just close.
        let setups = [
            (1024u64, 1024u64, 1_000_000u64),
            (1024, 512, 2_000_000),
            (284, 1024, 3_605_634),
        ];
        let mut runs: Vec<Vec<SchedAvg>> = Vec::new();
        for (cap, freq, run) in setups {
            let mut cpu = Cpu::new(cap, freq);
            let mut s = Vec::new();
            for k in 0..60u64 {
                let start = k * 8_000_000;
                if k > 0 {
                    cpu.wake(start);
                    s.push(cpu.task);
                }
                cpu.block(start + run);
                s.push(cpu.task);
            }
            runs.push(s);
        }
        assert_eq!(runs[0], runs[1]);
        assert_eq!(runs[0], runs[2]);
        // Steady state, r = 0.9537 and p = 7.629 periods: peak 1024·(1-y^r)/(1-y^p) =
        // 1024 · 0.020451/0.15224 = 137.6 at block, trough 137.6 · y^(p-r) = 119.0 at wake
        // (each minus up to ~1 for flooring).
        let last_wake = runs[0][runs[0].len() - 2].util_avg;
        let last_block = runs[0][runs[0].len() - 1].util_avg;
        assert!((117..=119).contains(&last_wake), "{last_wake}");
        assert!((136..=138).contains(&last_block), "{last_block}");
    }

    #[test]
    fn saturated_rq_going_idle_records_lost_idle_time() {
        // 3 s fully busy on capacity 284: PELT time 3000 · 277343 ns = 832 ms = 793 periods, so
        // util_sum is saturated (>= PELT_FULLY_BUSY_UTIL_SUM = 46718·1024 - 47742 = 47791490).
        let mut cpu = Cpu::new(284, 1024);
        for ms in 1..=3000u64 {
            cpu.tick(ms * 1_000_000);
        }
        assert!(cpu.cfs.util_sum >= PELT_FULLY_BUSY_UTIL_SUM);
        let pelt_before = cpu.pclk.rq_clock_pelt();
        assert_eq!(pelt_before, 3000 * 277_343);
        // Hand: PELT now 832029000 ns = 812528 units, period_contrib 812528 - 793·1024 = 496;
        // saturated util_sum ≈ 1024 · (46718 + 496) = 48.35e6 > 47.79e6.
        cpu.block(3_000_000_000);
        // The gap 3e9 - 832029000 = 2167971000 is lost, not idle: rq_clock_pelt does not jump.
        assert_eq!(cpu.pclk.lost_idle_time, 3_000_000_000 - 832_029_000);
        assert_eq!(cpu.pclk.rq_clock_pelt(), pelt_before);
        assert_eq!(cpu.pclk.clock_pelt, 3_000_000_000);
        assert_eq!(cpu.pclk.clock_pelt_idle, pelt_before);
        // Idle from here on: the PELT clock follows clock_task (minus what was lost).
        cpu.wake(3_010_000_000);
        assert_eq!(cpu.pclk.rq_clock_pelt(), pelt_before + 10_000_000);
    }

    #[test]
    fn irq_time_hand_values() {
        let mut sa = SchedAvg::default();
        // rq clock at 2 periods = 2097152 ns; 1 ms of IRQ at freq 512, capacity 1024:
        // 1e6·512 >> 10 = 500000, ·1024 >> 10 = 500000 ns counted as running.
        assert!(update_irq_load_avg(
            &mut sa,
            2 * PERIOD_NS,
            1_000_000,
            1024,
            512
        ));
        // Idle to 2097152 - 500000 = 1597152 ns: 1559 units (1 period + 535), lut 1596416.
        // Running to 2097152: 500736 ns = 489 units; 535 + 489 = 1024 -> 1 period, contrib 0;
        // contribution = decay(1024 - 535 = 489, 1) = 489 · 0.978572 = 478.5 -> 478.
        assert_eq!(sa.last_update_time, 2 * PERIOD_NS);
        assert_eq!(sa.period_contrib, 0);
        assert_eq!(sa.load_sum, 478);
        assert_eq!(sa.util_sum, 478 << 10);
        // 489472 / 46718 = 10.48 -> 10.
        assert_eq!(sa.util_avg, 10);
    }

    // ----- util_est -------------------------------------------------------------------------

    const F: u32 = UTIL_AVG_UNCHANGED;

    #[test]
    fn util_est_unchanged_flag_skips_update() {
        assert_eq!(util_est_update(300 | F, 100, 100, 1024, false), 300 | F);
    }

    #[test]
    fn util_est_instant_ramp_up() {
        assert_eq!(util_est_update(100, 300, 300, 1024, false), 300 | F);
        assert_eq!(util_est_update(300, 300, 300, 1024, false), 300 | F); // ewma <= util
    }

    #[test]
    fn util_est_ignores_decreases_below_margin() {
        // diff 9 < 10: keep 300.
        assert_eq!(util_est_update(300, 291, 291, 1024, false), 300 | F);
        // diff 10: (4·300 - 10) >> 2 = 1190 >> 2 = 297 (the spec's 300 - 10/4 would give 298).
        assert_eq!(util_est_update(300, 290, 290, 1024, false), 297 | F);
    }

    #[test]
    fn util_est_quarter_weight_decay() {
        // 400 -> util 200: (1600 - 200) >> 2 = 350.
        assert_eq!(util_est_update(400, 200, 200, 1024, false), 350 | F);
        // diff 201: (1600 - 201) >> 2 = 1399 >> 2 = 349 (400 - ceil(201/4) = 349).
        assert_eq!(util_est_update(400, 199, 199, 1024, false), 349 | F);
    }

    #[test]
    fn util_est_contended_does_not_decay() {
        // 200 + 10 < 211: the task waited; keep 400 but re-arm the flag.
        assert_eq!(util_est_update(400, 200, 211, 1024, false), 400 | F);
        // 200 + 10 < 210 is false: decays to 350.
        assert_eq!(util_est_update(400, 200, 210, 1024, false), 350 | F);
    }

    #[test]
    fn util_est_above_capacity_rule_and_v6_16_removal() {
        // util 300 > capacity 284: before v6.16 return without storing (flag stays clear).
        assert_eq!(util_est_update(500, 300, 300, 284, false), 500);
        // f2d650618bc7: decays, (2000 - 200) >> 2 = 450.
        assert_eq!(util_est_update(500, 300, 300, 284, true), 450 | F);
    }

    #[test]
    fn util_est_flag_cleared_by_util_change_and_task_util_est() {
        let mut sa = SchedAvg {
            util_est: 300 | F,
            ..SchedAvg::default()
        };
        // A recomputed average clears the flag (and only then).
        assert!(!__update_load_avg_se(
            500 * 1024,
            &mut sa,
            1024,
            true,
            1,
            true,
            true
        ));
        assert_eq!(sa.util_est, 300 | F);
        assert!(__update_load_avg_se(
            2 * PERIOD_NS,
            &mut sa,
            1024,
            true,
            1,
            true,
            true
        ));
        assert_eq!(sa.util_est, 300);
        assert_eq!(task_util_est(200, 300 | F), 300);
        assert_eq!(task_util_est(400, 300 | F), 400);
    }

    #[test]
    fn util_est_cfs_rq_sum_floors_at_zero() {
        let mut cfs = 0u32;
        util_est_enqueue(&mut cfs, 300 | F);
        util_est_enqueue(&mut cfs, 100);
        assert_eq!(cfs, 400);
        util_est_dequeue(&mut cfs, 350 | F);
        assert_eq!(cfs, 50);
        util_est_dequeue(&mut cfs, 100);
        assert_eq!(cfs, 0);
    }

    // ----- new tasks ------------------------------------------------------------------------

    #[test]
    fn tv19_new_task_initial_util() {
        // Fork: load_avg = scale_load_down(1024 << 10) = 1024.
        let mut sa = init_entity_runnable_average(true, 1024);
        assert_eq!((sa.load_avg, sa.load_sum, sa.util_avg), (1024, 0, 0));
        // cfs util 400, load 2048, capacity 1024: cap = (1024 - 400)/2 = 312;
        // util = 400·1024/2049 = 409600/2049 = 199.9 -> 199 (< cap).
        post_init_entity_util_avg(&mut sa, 400, 2048, 1024, 1024);
        assert_eq!((sa.util_avg, sa.runnable_avg), (199, 199));
        // Empty CPU: cap = 1024/2 = 512, util = cap.
        let mut sa = init_entity_runnable_average(true, 1024);
        post_init_entity_util_avg(&mut sa, 0, 0, 1024, 1024);
        assert_eq!((sa.util_avg, sa.runnable_avg), (512, 512));
        // Group entity: no initial load.
        assert_eq!(init_entity_runnable_average(false, 1024).load_avg, 0);
    }

    #[test]
    fn post_init_v6_6_weight_and_no_room() {
        // v6.6 multiplied by the unscaled weight 1048576: 400·1048576/2049 = 204700 -> cap 312.
        let mut sa = SchedAvg::default();
        post_init_entity_util_avg(&mut sa, 400, 2048, 1024 << 10, 1024);
        assert_eq!(sa.util_avg, 312);
        // Full CPU: cap = 0 -> untouched (0). Overfull: (1024 - 1025)/2 = 0 (C truncation).
        let mut sa = SchedAvg::default();
        post_init_entity_util_avg(&mut sa, 1024, 2048, 1024, 1024);
        assert_eq!(sa.util_avg, 0);
        post_init_entity_util_avg(&mut sa, 1025, 2048, 1024, 1024);
        assert_eq!(sa.util_avg, 0);
        // Little CPU 284 with util 100: cap = 92; 100·1024/1025 = 99 -> 92.
        post_init_entity_util_avg(&mut sa, 100, 1024, 1024, 284);
        assert_eq!(sa.util_avg, 92);
    }

    // ----- attach / detach / remove ---------------------------------------------------------

    #[test]
    fn attach_rebuilds_sums_with_destination_divider() {
        let mut cfs = SchedAvg {
            last_update_time: 77 * 1024,
            period_contrib: 100,
            ..SchedAvg::default()
        };
        let mut se = SchedAvg {
            load_avg: 512,
            util_avg: 300,
            runnable_avg: 300,
            ..SchedAvg::default()
        };
        let prop = attach_entity_load_avg(&mut cfs, &mut se, 1024, false);
        // divider = 46718 + 100 = 46818.
        assert_eq!((se.last_update_time, se.period_contrib), (77 * 1024, 100));
        assert_eq!(se.util_sum, 300 * 46818); // 14045400
        assert_eq!(se.runnable_sum, 300 * 46818);
        assert_eq!(se.load_sum, 512 * 46818 / 1024); // 23409
        assert_eq!(prop, 23409);
        assert_eq!((cfs.load_avg, cfs.load_sum), (512, 1024 * 23409));
        assert_eq!((cfs.util_avg, cfs.util_sum), (300, 14_045_400));
        assert_eq!((cfs.runnable_avg, cfs.runnable_sum), (300, 14_045_400));
    }

    #[test]
    fn attach_keeps_load_sum_nonzero() {
        // nice -20 (weight 88761), load_avg 1: 1·46718 < 88761 -> load_sum = 1, not 0.
        let mut cfs = SchedAvg::default();
        let mut se = SchedAvg {
            load_avg: 1,
            ..SchedAvg::default()
        };
        attach_entity_load_avg(&mut cfs, &mut se, 88761, false);
        assert_eq!(se.load_sum, 1);
        assert_eq!(cfs.load_sum, 88761);
    }

    #[test]
    fn detach_subtracts_with_floors() {
        let mut cfs = SchedAvg {
            load_avg: 1000,
            load_sum: 1000 * 46718,
            util_avg: 100,
            util_sum: 100 * 46718,
            runnable_avg: 500,
            runnable_sum: 500 * 46718,
            ..SchedAvg::default()
        };
        let se = SchedAvg {
            load_avg: 400,
            load_sum: 20000,
            util_avg: 150,
            util_sum: 150 * 46718,
            runnable_avg: 200,
            runnable_sum: 200 * 46718 + 5,
            ..SchedAvg::default()
        };
        let prop = detach_entity_load_avg(&mut cfs, &se, 1024, false);
        assert_eq!(prop, -20000);
        // load: 1000 - 400 = 600; sum 46718000 - 1024·20000 = 26238000 is below the floor
        // 600·46718 = 28030800, so it is raised to the floor.
        assert_eq!((cfs.load_avg, cfs.load_sum), (600, 28_030_800));
        // util: 100 - 150 -> 0; sum -> 0.
        assert_eq!((cfs.util_avg, cfs.util_sum), (0, 0));
        // runnable: 300; sum 500·46718 - 200·46718 - 5 = 14015395 < 300·46718 = 14015400 -> floor.
        assert_eq!((cfs.runnable_avg, cfs.runnable_sum), (300, 14_015_400));
    }

    #[test]
    fn dequeue_floor_truncates_to_u32_before_v7_0() {
        // A cfs_rq load_sum past 2^32 (≈ 90 busy nice-0 tasks). Remove one task of load_avg
        // 1000, load_sum 46000 at weight 1024 (47104000).
        let cfs0 = SchedAvg {
            load_avg: 92_000,
            load_sum: 92_000 * 46_718 + 12_345, // 4298068345 > 2^32 = 4294967296
            ..SchedAvg::default()
        };
        let se = SchedAvg {
            load_avg: 1000,
            load_sum: 46_000,
            ..SchedAvg::default()
        };
        // Pre-v7.0: sum = 4298068345 - 47104000 = 4250964345 (fits u32: unchanged), floor
        // 91000·46718 = 4251338000 truncated to u32 is itself (< 2^32) -> max = 4251338000.
        let mut cfs = cfs0;
        dequeue_load_avg(&mut cfs, &se, 1024, false);
        assert_eq!(cfs.load_sum, 4_251_338_000);
        // Now from a sum still above 2^32 after the subtraction: 95000 tasks' worth.
        let cfs1 = SchedAvg {
            load_avg: 95_000,
            load_sum: 95_000 * 46_718, // 4438210000
            ..SchedAvg::default()
        };
        let mut cfs = cfs1;
        dequeue_load_avg(&mut cfs, &se, 1024, false);
        // sum 4438210000 - 47104000 = 4391106000 -> u32: 4391106000 - 4294967296 = 96138704;
        // floor 94000·46718 = 4391492000 -> u32: 96524704. max = 96524704: the kernel's
        // pre-v7.0 max_t(u32, ..) wraps the sum.
        assert_eq!(cfs.load_sum, 96_524_704);
        // v7.0 (__update_sa at u64): max(4391106000, 4391492000) = 4391492000.
        let mut cfs = cfs1;
        dequeue_load_avg(&mut cfs, &se, 1024, true);
        assert_eq!(cfs.load_sum, 4_391_492_000);
    }

    #[test]
    fn removed_load_applied_at_next_cfs_update() {
        let mut cfs = SchedAvg {
            last_update_time: 10 * 1024,
            period_contrib: 10,
            load_avg: 2048,
            load_sum: 2048 * 46728,
            util_avg: 600,
            util_sum: 600 * 46728,
            runnable_avg: 600,
            runnable_sum: 600 * 46728,
            ..SchedAvg::default()
        };
        let mut removed = RemovedLoad::default();
        let se = SchedAvg {
            load_avg: 1024,
            util_avg: 250,
            runnable_avg: 260,
            ..SchedAvg::default()
        };
        remove_entity_load_avg(&mut removed, &se);
        assert_eq!(removed.nr, 1);
        // Same time: nothing to accumulate, only the removal (divider 46718 + 10 = 46728).
        let (decayed, prop) =
            update_cfs_rq_load_avg(10 * 1024, &mut cfs, &mut removed, 1024, 1, true, false);
        assert!(decayed);
        assert_eq!(removed, RemovedLoad::default());
        assert_eq!((cfs.load_avg, cfs.load_sum), (1024, 1024 * 46728));
        assert_eq!((cfs.util_avg, cfs.util_sum), (350, 350 * 46728));
        assert_eq!((cfs.runnable_avg, cfs.runnable_sum), (340, 340 * 46728));
        // -(260·46728) >> 10 = -12149280 >> 10 = -11864.53 -> floor -11865.
        assert_eq!(prop, Some(-11865));
        // Nothing pending, no time passed: not decayed.
        let (decayed, prop) =
            update_cfs_rq_load_avg(10 * 1024, &mut cfs, &mut removed, 1024, 1, true, false);
        assert!(!decayed);
        assert_eq!(prop, None);
    }

    // ----- propagation up the group hierarchy ----------------------------------------------

    #[test]
    fn add_positive_u32_wraps_up_and_clamps_down() {
        let mut v = 10u32;
        add_positive_u32(&mut v, 5);
        assert_eq!(v, 15);
        add_positive_u32(&mut v, -20); // 15 - 20 < 0 -> 0
        assert_eq!(v, 0);
        let mut v = u32::MAX - 1;
        add_positive_u32(&mut v, 5); // (2^32 - 2 + 5) mod 2^32 = 3: positive changes wrap
        assert_eq!(v, 3);
    }

    #[test]
    fn tg_cfs_util_copies_the_group_util_and_adds_the_difference() {
        // parent period_contrib 0: divider 46718
        let mut root = SchedAvg {
            util_avg: 100,
            util_sum: 100 * 46718, // 4671800
            ..SchedAvg::default()
        };
        let mut ge = SchedAvg::default();
        let gcfs = SchedAvg {
            util_avg: 300,
            ..SchedAvg::default()
        };
        update_tg_cfs_util(&mut root, &mut ge, &gcfs);
        // 300·46718 = 14015400; parent 4671800 + 14015400 = 18687200 (= the floor 400·46718)
        assert_eq!((ge.util_avg, ge.util_sum), (300, 14_015_400));
        assert_eq!((root.util_avg, root.util_sum), (400, 18_687_200));
        // the group empties: back to 100 / 4671800
        update_tg_cfs_util(&mut root, &mut ge, &SchedAvg::default());
        assert_eq!((ge.util_avg, ge.util_sum), (0, 0));
        assert_eq!((root.util_avg, root.util_sum), (100, 4_671_800));
        // a parent holding less than the entity's share clamps at 0
        ge.util_avg = 300;
        ge.util_sum = 14_015_400;
        update_tg_cfs_util(&mut root, &mut ge, &SchedAvg::default());
        assert_eq!((root.util_avg, root.util_sum), (0, 0));
    }

    #[test]
    fn tg_cfs_runnable_rebuilds_the_entity_sum_in_32_bits() {
        // 100 runnable tasks in the group: runnable_avg 102400; 102400·46718 = 4783923200
        // does not fit 32 bits: new_sum = 4783923200 - 2^32 = 488955904.
        let gcfs = SchedAvg {
            runnable_avg: 102_400,
            ..SchedAvg::default()
        };
        for (fold, parent_sum) in [(false, 488_955_904u64), (true, 4_783_923_200)] {
            let mut root = SchedAvg::default();
            let mut ge = SchedAvg::default();
            update_tg_cfs_runnable(&mut root, &mut ge, &gcfs, fold);
            assert_eq!((ge.runnable_avg, ge.runnable_sum), (102_400, 488_955_904));
            // parent: sum 488955904, floor 102400·46718 = 4783923200; pre-v7.0 the max is
            // taken in u32 (both 488955904), v7.0 at 64 bits raises it to the floor.
            assert_eq!(root.runnable_avg, 102_400);
            assert_eq!(root.runnable_sum, parent_sum, "fold {fold}");
        }
    }

    /// Test (c) of issue #13 item 1, by hand: a nice-0 task with load_avg 512 (util 300) is
    /// attached to an empty group cfs_rq; the group entity's load follows update_tg_cfs_load.
    #[test]
    fn tg_cfs_load_after_attaching_a_task_to_an_empty_group() {
        for (ge_weight, ge_load) in [(1024u64, 512u64), (2048, 1024)] {
            // group cfs_rq and parent both at period_contrib 0: divider 46718
            let mut gcfs = SchedAvg::default();
            let mut task = SchedAvg {
                load_avg: 512,
                util_avg: 300,
                runnable_avg: 300,
                ..SchedAvg::default()
            };
            let prop = attach_entity_load_avg(&mut gcfs, &mut task, 1024, false);
            // task load_sum = 512·46718/1024 = 23359 (exact)
            assert_eq!(prop, 23_359);
            let (mut propagate, mut prop_sum) = (false, 0i64);
            add_tg_cfs_propagate(&mut propagate, &mut prop_sum, prop);
            assert!(propagate);
            let mut root = SchedAvg::default();
            let mut ge = SchedAvg::default();
            update_tg_cfs_util(&mut root, &mut ge, &gcfs);
            update_tg_cfs_runnable(&mut root, &mut ge, &gcfs, false);
            update_tg_cfs_load(
                &mut root,
                &mut ge,
                ge_weight,
                &gcfs,
                1024,
                &mut prop_sum,
                false,
            );
            // r = min(0 + 23359, 46718) = 23359; running = 300·46718 >> 10 = 13686 < r;
            // load_sum = w·23359, load_avg = w·23359/46718 = w/2: the task's 512 scaled to
            // the entity's weight.
            assert_eq!(prop_sum, 0);
            assert_eq!((ge.load_sum, ge.load_avg), (23_359, ge_load));
            assert_eq!(
                (root.load_avg, root.load_sum),
                (ge_load, ge_weight * 23_359)
            );
            assert_eq!((root.util_avg, root.runnable_avg), (300, 300));
        }
    }

    #[test]
    fn tg_cfs_load_added_runnable_is_clipped_and_at_least_running() {
        let gcfs = SchedAvg::default();
        // running floor: util_sum 800·46718 = 37374400 -> 36498 > 0 + 23359;
        // load_avg = 1024·36498/46718 = 37373952/46718 = 799.99 -> 799
        let mut root = SchedAvg::default();
        let mut ge = SchedAvg {
            util_sum: 800 * 46718,
            ..SchedAvg::default()
        };
        let mut prop = 23_359;
        update_tg_cfs_load(&mut root, &mut ge, 1024, &gcfs, 1024, &mut prop, false);
        assert_eq!(
            (ge.load_sum, ge.load_avg, root.load_avg),
            (36_498, 799, 799)
        );
        // clip: 40000 + 23359 = 63359 > divider 46718 -> 46718, load_avg 1024
        let mut root = SchedAvg::default();
        let mut ge = SchedAvg {
            load_sum: 40_000,
            load_avg: 876, // 1024·40000/46718 = 876.75
            ..SchedAvg::default()
        };
        let mut prop = 23_359;
        update_tg_cfs_load(&mut root, &mut ge, 1024, &gcfs, 1024, &mut prop, false);
        assert_eq!((ge.load_sum, ge.load_avg), (46_718, 1024));
        // parent: 0 + (1024 - 876) = 148
        assert_eq!(root.load_avg, 1024 - 876);
        // no change of the average: nothing written but the pending sum is consumed
        let mut ge = SchedAvg {
            load_sum: 23_359,
            load_avg: 512,
            ..SchedAvg::default()
        };
        let mut root = SchedAvg::default();
        let mut prop = 1; // 23360·1024/46718 = 512.02 -> 512
        update_tg_cfs_load(&mut root, &mut ge, 1024, &gcfs, 1024, &mut prop, false);
        assert_eq!((prop, ge.load_sum, root.load_avg), (0, 23_359, 0));
    }

    #[test]
    fn tg_cfs_load_removed_assumes_equally_runnable_tasks() {
        // remaining: one nice-0 task, gcfs load_sum 1024·20000 -> unweighted 20000
        let gcfs = SchedAvg {
            load_sum: 1024 * 20_000,
            ..SchedAvg::default()
        };
        let mut ge = SchedAvg {
            load_sum: 40_000,
            load_avg: 876,
            ..SchedAvg::default()
        };
        let mut root = SchedAvg {
            load_avg: 876,
            load_sum: 1024 * 40_000,
            ..SchedAvg::default()
        };
        let mut prop = -15_000;
        update_tg_cfs_load(&mut root, &mut ge, 1024, &gcfs, 1024, &mut prop, false);
        // r = min(40000, 20000) = 20000; load_avg = 20480000/46718 = 438.37 -> 438
        assert_eq!((ge.load_sum, ge.load_avg), (20_000, 438));
        // parent: 876 - 438 = 438; 40960000 - 20480000 = 20480000 >= floor 438·46718
        assert_eq!((root.load_avg, root.load_sum), (438, 20_480_000));
        // the group empties (weight 0): its entity's load drops to 0 at once
        let mut prop = -20_000;
        update_tg_cfs_load(
            &mut root,
            &mut ge,
            1024,
            &SchedAvg::default(),
            0,
            &mut prop,
            false,
        );
        assert_eq!((ge.load_sum, ge.load_avg), (0, 0));
        assert_eq!((root.load_avg, root.load_sum), (0, 0));
    }

    #[test]
    fn reweight_rebuilds_load_avg_at_the_new_weight() {
        // a group entity at weight 1024, half runnable: load_sum 23359, load_avg 512
        // (period_contrib 0: divider 46718); its parent holds only it.
        let mut se = SchedAvg {
            load_sum: 23_359,
            load_avg: 512,
            ..SchedAvg::default()
        };
        let mut cfs = SchedAvg {
            load_avg: 512,
            load_sum: 1024 * 23_359, // 23919616
            ..SchedAvg::default()
        };
        reweight_load_avg(&mut cfs, &mut se, 1024, 2048, false);
        // out: 512 - 512 = 0, 23919616 - 1024·23359 = 0; load_avg = 2048·23359/46718 = 1024;
        // in: 1024 and 2048·23359 = 47839232
        assert_eq!((se.load_sum, se.load_avg), (23_359, 1024));
        assert_eq!((cfs.load_avg, cfs.load_sum), (1024, 47_839_232));
        // and down to 3 (an idle group): 3·23359/46718 = 1.5 -> 1
        reweight_load_avg(&mut cfs, &mut se, 2048, 3, false);
        assert_eq!(
            (se.load_avg, cfs.load_avg, cfs.load_sum),
            (1, 1, 3 * 23_359)
        );
    }

    #[test]
    fn skip_blocked_update_only_for_an_empty_entity_with_nothing_pending() {
        let zero = SchedAvg::default();
        assert!(skip_blocked_update(&zero, false));
        assert!(!skip_blocked_update(&zero, true));
        let util = SchedAvg {
            util_avg: 1,
            ..SchedAvg::default()
        };
        assert!(!skip_blocked_update(&util, false));
        let load = SchedAvg {
            load_avg: 1,
            ..SchedAvg::default()
        };
        assert!(!skip_blocked_update(&load, false));
    }

    #[test]
    fn signals_stay_bounded_over_random_sequences() {
        // Deterministic LCG drives a task through random run/sleep/queue phases at random
        // intervals; util_avg <= 1024, runnable_avg <= 1024 (one task), load_avg <= weight.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        let mut sa = SchedAvg::default();
        let mut t = 0u64;
        for _ in 0..20_000 {
            t += next() % 5_000_000;
            let state = next() % 3; // 0 sleeping, 1 queued waiting, 2 running
            if state == 0 {
                __update_load_avg_blocked_se(t, &mut sa, 1024);
            } else {
                __update_load_avg_se(t, &mut sa, 1024, true, 1, state == 2, true);
            }
            assert!(sa.util_avg <= 1024 && sa.runnable_avg <= 1024 && sa.load_avg <= 1024);
            assert!(sa.period_contrib < 1024 && sa.last_update_time % 1024 == 0);
        }
    }
}
