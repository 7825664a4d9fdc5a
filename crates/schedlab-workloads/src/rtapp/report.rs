//! What rt-app reports: one log row per executed phase loop (workloads.md §10.5), per-thread
//! summaries (§10.6 item 4: activations, mean/max `wu_lat`, mean/min slack, missed timers), the
//! summary table and the metrics.
//!
//! Time conversions follow rt-app (`timespec_to_usec*`: nanoseconds rounded to the nearest
//! microsecond, halves away from zero).

use std::fmt::Write as _;

use schedlab_sched::sched::TaskId;

use super::model::Policy;
use crate::workload::{Better, Metric};

/// Default cap on the log rows kept in memory per thread (the summary counts every row).
pub const DEFAULT_LOG_ROWS: usize = 1 << 18;

/// ns → µs as rt-app's `timespec_to_usec` (`lround(ns / 1000.0)`).
pub(crate) fn us(ns: u64) -> u64 {
    (ns + 500) / 1000
}

/// Signed ns → µs as rt-app's `timespec_to_usec_long` (`round`, halves away from zero).
pub(crate) fn us_signed(ns: i64) -> i64 {
    if ns >= 0 {
        (ns + 500) / 1000
    } else {
        -((-ns + 500) / 1000)
    }
}

/// One executed phase loop (rt-app's `timing_point_t`), times in ns where rt-app has a clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Row {
    /// Work units of the `run` events (`perf`).
    pub perf: u64,
    /// Wall time spent in `run`/`runtime` events (µs, summed per event).
    pub run_us: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Expiry of the last timer minus the time it was reached (µs; negative = late).
    pub slack_us: i64,
    /// Configured `run`/`runtime` time (µs).
    pub c_duration_us: u64,
    /// Configured timer periods (µs).
    pub c_period_us: u64,
    /// Summed timer wake-up latency (µs); rt-app resets it to 0 when a timer is missed.
    pub wu_lat_us: u64,
    /// Timer events of this loop that found their expiry already passed.
    pub missed: u32,
}

/// Running totals over a thread's rows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Executed phase loops (log rows).
    pub activations: u64,
    /// Rows that used a timer (`c_period` > 0): the population of the wu_lat and slack stats.
    pub timer_rows: u64,
    pub wu_lat_sum: u64,
    pub wu_lat_max: u64,
    pub slack_sum: i64,
    pub slack_min: i64,
    pub missed: u64,
}

impl Summary {
    pub fn add(&mut self, r: &Row) {
        self.activations += 1;
        self.missed += u64::from(r.missed);
        if r.c_period_us == 0 {
            return;
        }
        if self.timer_rows == 0 {
            self.slack_min = r.slack_us;
        }
        self.timer_rows += 1;
        self.wu_lat_sum += r.wu_lat_us;
        self.wu_lat_max = self.wu_lat_max.max(r.wu_lat_us);
        self.slack_sum += r.slack_us;
        self.slack_min = self.slack_min.min(r.slack_us);
    }

    pub fn wu_lat_mean(&self) -> Option<f64> {
        (self.timer_rows > 0).then(|| self.wu_lat_sum as f64 / self.timer_rows as f64)
    }

    pub fn slack_mean(&self) -> Option<f64> {
        (self.timer_rows > 0).then(|| self.slack_sum as f64 / self.timer_rows as f64)
    }
}

/// One rt-app thread, in creation order.
#[derive(Clone, Debug)]
pub struct ThreadRecord {
    /// rt-app's name: `<task>-<index>`, `<task>-<index>-<nnnn>` for forked threads.
    pub name: String,
    /// rt-app's thread index (creation order).
    pub ind: usize,
    /// Index of its task in the file.
    pub def: usize,
    pub forked: bool,
    pub policy: Policy,
    pub prio: i32,
    pub pid: Option<i32>,
    pub task: Option<TaskId>,
    pub rows: Vec<Row>,
    /// Rows counted in the summary but not kept (log cap).
    pub rows_dropped: u64,
    pub summary: Summary,
    pub exited: bool,
}

impl ThreadRecord {
    pub(crate) fn record(&mut self, row: Row, cap: usize) {
        self.summary.add(&row);
        if self.rows.len() < cap {
            self.rows.push(row);
        } else {
            self.rows_dropped += 1;
        }
    }

    /// The thread's log file as rt-app writes it (§10.5): policy header, column header, one
    /// line per row (`%4d %8lu %8lu %8lu %15llu %15llu %15llu %10ld %10lu %10lu %10lu`).
    /// `t_start` is the process start (`rel_st` origin).
    pub fn log_text(&self, t_start: u64) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# Policy : {} priority : {}", self.policy, self.prio);
        let _ = writeln!(
            s,
            "#idx {:>8} {:>8} {:>8} {:>15} {:>15} {:>15} {:>10} {:>10} {:>10} {:>10}",
            "perf",
            "run",
            "period",
            "start",
            "end",
            "rel_st",
            "slack",
            "c_duration",
            "c_period",
            "wu_lat"
        );
        for r in &self.rows {
            let _ = writeln!(
                s,
                "{:4} {:8} {:8} {:8} {:15} {:15} {:15} {:10} {:10} {:10} {:10}",
                self.ind,
                r.perf,
                r.run_us,
                us(r.end_ns - r.start_ns),
                us(r.start_ns),
                us(r.end_ns),
                us(r.start_ns.saturating_sub(t_start)),
                r.slack_us,
                r.c_duration_us,
                r.c_period_us,
                r.wu_lat_us
            );
        }
        if self.rows_dropped > 0 {
            let _ = writeln!(
                s,
                "# schedlab: {} later rows not kept in memory (log row limit)",
                self.rows_dropped
            );
        }
        s
    }
}

/// A thread's log, ready for the facade to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadLog {
    /// The thread's rt-app name (`probe-0`).
    pub thread: String,
    /// rt-app's file name for it with the default basename: `rt-app-<thread>.log`.
    pub file_name: String,
    pub text: String,
}

impl ThreadLog {
    /// The file name rt-app uses with `log_basename` = `basename`.
    pub fn file_name_with(&self, basename: &str) -> String {
        format!("{basename}-{}.log", self.thread)
    }
}

fn opt_f(v: Option<f64>, width: usize) -> String {
    match v {
        Some(x) => format!("{x:>width$.1}"),
        None => format!("{:>width$}", "-"),
    }
}

/// The summary table: one line per thread in creation order, times in µs.
pub(crate) fn summary_table(threads: &[ThreadRecord]) -> String {
    let w = threads
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(0)
        .max("thread".len());
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<w$} {:>7}  {:<12} {:>4} {:>11} {:>11} {:>10} {:>10} {:>9} {:>6}",
        "thread",
        "pid",
        "policy",
        "prio",
        "activations",
        "wu_lat_mean",
        "wu_lat_max",
        "slack_mean",
        "slack_min",
        "missed"
    );
    for t in threads {
        let sm = &t.summary;
        let has_timer = sm.timer_rows > 0;
        let pid = t.pid.map_or("-".to_string(), |p| p.to_string());
        let _ = writeln!(
            s,
            "{:<w$} {:>7}  {:<12} {:>4} {:>11} {} {:>10} {} {:>9} {:>6}",
            t.name,
            pid,
            t.policy.as_str(),
            t.prio,
            sm.activations,
            opt_f(sm.wu_lat_mean(), 11),
            if has_timer {
                sm.wu_lat_max.to_string()
            } else {
                "-".to_string()
            },
            opt_f(sm.slack_mean(), 10),
            if has_timer {
                sm.slack_min.to_string()
            } else {
                "-".to_string()
            },
            sm.missed
        );
    }
    s
}

/// Per-thread and workload-wide metrics.
pub(crate) fn metrics(threads: &[ThreadRecord]) -> Vec<Metric> {
    let mut out = Vec::new();
    let mut total = Summary::default();
    for t in threads {
        let sm = &t.summary;
        out.push(Metric::new(
            &format!("{}.activations", t.name),
            sm.activations as f64,
            "count",
            Better::Higher,
        ));
        if let Some(mean) = sm.wu_lat_mean() {
            out.push(Metric::new(
                &format!("{}.wu_lat_mean_us", t.name),
                mean,
                "us",
                Better::Lower,
            ));
            out.push(Metric::new(
                &format!("{}.wu_lat_max_us", t.name),
                sm.wu_lat_max as f64,
                "us",
                Better::Lower,
            ));
        }
        total.activations += sm.activations;
        total.missed += sm.missed;
        total.timer_rows += sm.timer_rows;
        total.wu_lat_sum += sm.wu_lat_sum;
        total.wu_lat_max = total.wu_lat_max.max(sm.wu_lat_max);
    }
    out.push(Metric::new(
        "activations",
        total.activations as f64,
        "count",
        Better::Higher,
    ));
    if let Some(mean) = total.wu_lat_mean() {
        out.push(Metric::new("wu_lat_mean_us", mean, "us", Better::Lower));
        out.push(Metric::new(
            "wu_lat_max_us",
            total.wu_lat_max as f64,
            "us",
            Better::Lower,
        ));
    }
    out.push(Metric::new(
        "missed_timers",
        total.missed as f64,
        "count",
        Better::Lower,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_round_like_rt_app() {
        // lround(ns / 1000.0): 1499 ns → 1, 1500 → 2, -1500 → -2, -1499 → -1.
        assert_eq!(us(1499), 1);
        assert_eq!(us(1500), 2);
        assert_eq!(us_signed(-1500), -2);
        assert_eq!(us_signed(-1499), -1);
        assert_eq!(us_signed(50_000), 50);
    }

    fn record(rows: &[Row]) -> ThreadRecord {
        let mut t = ThreadRecord {
            name: "t-0".into(),
            ind: 0,
            def: 0,
            forked: false,
            policy: Policy::Other,
            prio: 0,
            pid: Some(2),
            task: None,
            rows: Vec::new(),
            rows_dropped: 0,
            summary: Summary::default(),
            exited: false,
        };
        for r in rows {
            t.record(*r, 2);
        }
        t
    }

    #[test]
    fn summary_counts_only_timer_rows_for_latency() {
        let timer = |wu, slack| Row {
            c_period_us: 10_000,
            wu_lat_us: wu,
            slack_us: slack,
            ..Row::default()
        };
        let t = record(&[timer(50, 9000), Row::default(), timer(70, -20)]);
        let s = t.summary;
        assert_eq!(s.activations, 3);
        assert_eq!(s.timer_rows, 2);
        // (50 + 70) / 2 = 60; slack (9000 − 20) / 2 = 4490, min −20.
        assert_eq!(s.wu_lat_mean(), Some(60.0));
        assert_eq!(s.wu_lat_max, 70);
        assert_eq!(s.slack_mean(), Some(4490.0));
        assert_eq!(s.slack_min, -20);
        // Cap 2: the third row is counted but not kept.
        assert_eq!((t.rows.len(), t.rows_dropped), (2, 1));
    }

    #[test]
    fn log_text_has_rt_app_columns() {
        let t = record(&[Row {
            perf: 1000,
            run_us: 1000,
            start_ns: 0,
            end_ns: 10_050_000,
            slack_us: 9000,
            c_duration_us: 1000,
            c_period_us: 10_000,
            wu_lat_us: 50,
            missed: 0,
        }]);
        let text = t.log_text(0);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "# Policy : SCHED_OTHER priority : 0");
        assert_eq!(
            lines[1],
            "#idx     perf      run   period           start             end          rel_st      slack c_duration   c_period     wu_lat"
        );
        assert_eq!(
            lines[2],
            "   0     1000     1000    10050               0           10050               0       9000       1000      10000         50"
        );
    }
}
