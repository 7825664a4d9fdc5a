//! kernel: deadline.c — the SCHED_DEADLINE class. This file holds the class's runqueue
//! keeping: entities ordered by absolute deadline (EDF; the kernel's `dl_rq->root` rb-tree,
//! leftmost = earliest), enqueue, dequeue and the earliest-deadline pick. Not yet modelled
//! (the RT/DL issue): CBS runtime accounting and replenishment, the revised wakeup rule,
//! throttling and the replenishment timer, push/pull, admission control, GRUB, and the
//! dl_server that runs the fair class. Until then the user surface refuses SCHED_DEADLINE.

use crate::sched::*;
use crate::Kernel;

/// kernel: sched.h `struct sched_dl_entity` — the parameters (`sched_attr`) and the current
/// CBS instance (remaining runtime, absolute deadline).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedDlEntity {
    pub dl_runtime: u64,
    pub dl_deadline: u64,
    pub dl_period: u64,
    /// Remaining runtime of the current instance (ns, signed in the kernel).
    pub runtime: i64,
    /// Absolute deadline of the current instance (rq clock ns).
    pub deadline: u64,
}

/// kernel: sched.h `struct dl_rq`
#[derive(Clone, Debug, Default)]
pub struct DlRq {
    /// Queued entities in EDF order: (deadline, enqueue sequence, task); the sequence keeps
    /// equal deadlines in FIFO order, as the rb-tree's insertion to the right does.
    pub root: std::collections::BTreeSet<(u64, u64, TaskId)>,
    pub dl_nr_running: u32,
    pub seq: u64,
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

/// `sched_attr`'s SCHED_DEADLINE fields (ns). `period == 0` means "equal to the deadline".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DlAttr {
    pub runtime: u64,
    pub deadline: u64,
    pub period: u64,
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
    /// kernel: deadline.c enqueue_task_dl() → __enqueue_dl_entity()
    pub(crate) fn enqueue_task_dl(&mut self, cpu: usize, p: TaskId, _flags: u32) {
        let d = self.tasks[p.index()].dl.deadline;
        let dl = &mut self.rqs[cpu].dl;
        dl.seq += 1;
        let key = (d, dl.seq, p);
        dl.root.insert(key);
        dl.dl_nr_running += 1;
        self.add_nr_running(cpu, 1);
    }

    /// kernel: deadline.c dequeue_task_dl() → __dequeue_dl_entity()
    pub(crate) fn dequeue_task_dl(&mut self, cpu: usize, p: TaskId, _flags: u32) -> bool {
        let dl = &mut self.rqs[cpu].dl;
        if let Some(&key) = dl.root.iter().find(|k| k.2 == p) {
            dl.root.remove(&key);
            dl.dl_nr_running -= 1;
            self.sub_nr_running(cpu, 1);
        }
        true
    }

    /// kernel: deadline.c pick_task_dl() → pick_next_dl_entity(): the leftmost (earliest
    /// deadline) entity.
    pub(crate) fn pick_task_dl(&self, cpu: usize) -> Option<TaskId> {
        self.rqs[cpu].dl.root.first().map(|k| k.2)
    }

    /// kernel: deadline.c set_next_task_dl()
    pub(crate) fn set_next_task_dl(&mut self, _cpu: usize, _p: TaskId) {}

    /// kernel: deadline.c put_prev_task_dl()
    pub(crate) fn put_prev_task_dl(&mut self, _prev: TaskId) {}

    /// kernel: deadline.c wakeup_preempt_dl(): an earlier deadline preempts (`dl_entity_preempt`).
    pub(crate) fn wakeup_preempt_dl(&mut self, cpu: usize, p: TaskId) {
        let curr = self.rqs[cpu].curr;
        let (pd, cd) = (
            self.tasks[p.index()].dl.deadline,
            self.tasks[curr.index()].dl.deadline,
        );
        if (pd as i64).wrapping_sub(cd as i64) < 0 {
            self.resched_curr(cpu);
        }
    }

    /// kernel: deadline.c task_tick_dl() (no runtime accounting yet)
    pub(crate) fn task_tick_dl(&mut self, _cpu: usize, _curr: TaskId) {}
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
