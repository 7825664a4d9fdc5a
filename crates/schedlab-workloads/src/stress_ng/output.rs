//! The lines stress-ng 0.15.06 prints for a pipe run (workloads.md §2.3–2.4): the run-time
//! and dispatch info lines, the metrics table (brief or full), the miscellaneous-metrics line
//! with its original misspelling "geometic", and the completion line.
//!
//! Every line is `stress-ng: <tag padded to 6> [<pid>] <text>`; the tag is `info:` or
//! `metrc:`. Floating point is used here only, for printing, as stress-ng does.

use schedlab_engine::time::{Nanos, SimTime};

use super::options::{Metrics, Options, DEFAULT_TIMEOUT_SECS};

/// What one pipe stressor instance (writer process plus its reaped reader) measured.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceResult {
    /// Successful writes (one bogo op = one `pipe_data_size` write).
    pub bogo_ops: u64,
    /// Instance start and finish (stress-ng `stats->start` / `stats->finish`): they include
    /// the instance's setup (mmap, pipe2, fork) and tail (stop packet, kill, waitpid).
    pub start: SimTime,
    pub finish: SimTime,
    /// `getrusage` user and system time of the instance, its reaped reader included.
    pub user_time: Nanos,
    pub system_time: Nanos,
    /// The instance ran its stressor to completion (stress-ng `run_ok`).
    pub run_ok: bool,
    /// Peak resident set size in KiB (only printed by `--metrics`).
    pub max_rss_kb: u64,
    /// Bytes written and the writer loop's own duration, for the "MB per sec pipe write
    /// rate" metric.
    pub write_bytes: u64,
    pub write_duration: Nanos,
}

impl InstanceResult {
    /// The instance's "MB per sec pipe write rate": bytes / loop duration / 2^20 (0 if the
    /// loop took no time).
    pub fn pipe_write_rate(&self) -> f64 {
        let secs = self.write_duration.as_secs_f64();
        if secs > 0.0 {
            self.write_bytes as f64 / secs / 1_048_576.0
        } else {
            0.0
        }
    }
}

/// Everything the stress-ng printer needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Results {
    /// pid of the top-level stress-ng process (printed in every line).
    pub main_pid: u32,
    /// One entry per started instance, in instance order.
    pub instances: Vec<InstanceResult>,
    /// Wall time of the whole run (the "successful run completed in" figure).
    pub duration: Nanos,
    /// All instances passed (`successful` vs `unsuccessful run completed`).
    pub success: bool,
}

/// The per-stressor figures of the metrics table (stress-ng `stress_metrics_dump`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Σ bogo ops.
    pub c_total: u64,
    /// Mean over instances of (finish − start), seconds.
    pub r_total: f64,
    /// Σ user and Σ system time, seconds.
    pub u_time: f64,
    pub s_time: f64,
    /// c_total / r_total ("bogo ops/s (real time)").
    pub rate_real: f64,
    /// c_total / (u_time + s_time) ("bogo ops/s (usr+sys time)").
    pub rate_cpu: f64,
    /// 100 × (u + s) / r_total / instances ("CPU used per instance (%)").
    pub cpu_usage: f64,
    /// Largest instance RSS, KiB.
    pub max_rss_kb: u64,
    /// Geometric mean of the instances' positive pipe write rates.
    pub write_rate_geomean: f64,
}

impl Results {
    pub fn summary(&self) -> Summary {
        let n = self.instances.len();
        let mut c_total = 0u64;
        let (mut r_total, mut u_time, mut s_time) = (0.0f64, 0.0f64, 0.0f64);
        let mut max_rss_kb = 0;
        for i in &self.instances {
            c_total += i.bogo_ops;
            u_time += i.user_time.as_secs_f64();
            s_time += i.system_time.as_secs_f64();
            r_total += i.finish.saturating_since(i.start).as_secs_f64();
            max_rss_kb = max_rss_kb.max(i.max_rss_kb);
        }
        r_total = if n > 0 { r_total / n as f64 } else { 0.0 };
        let t_time = u_time + s_time;
        let rate_real = if r_total > 0.0 {
            c_total as f64 / r_total
        } else {
            0.0
        };
        let rate_cpu = if t_time > 0.0 {
            c_total as f64 / t_time
        } else {
            0.0
        };
        let mut cpu_usage = if r_total > 0.0 {
            100.0 * t_time / r_total
        } else {
            0.0
        };
        cpu_usage = if n > 0 { cpu_usage / n as f64 } else { 0.0 };
        let rates: Vec<f64> = self.instances.iter().map(|i| i.pipe_write_rate()).collect();
        Summary {
            c_total,
            r_total,
            u_time,
            s_time,
            rate_real,
            rate_cpu,
            cpu_usage,
            max_rss_kb,
            write_rate_geomean: geometric_mean(&rates),
        }
    }
}

/// stress-ng's geometric mean of the positive values: the product is kept as a mantissa
/// and a binary exponent (`frexp`) so that it cannot overflow, then
/// `mantissa^(1/n) × 2^(exponent/n)`. 0 when no value is positive.
pub fn geometric_mean(values: &[f64]) -> f64 {
    let mut mantissa = 1.0f64;
    let mut exponent: i64 = 0;
    let mut n = 0.0f64;
    for &v in values {
        if v > 0.0 {
            let (f, e) = frexp(v);
            mantissa *= f;
            exponent += e as i64;
            n += 1.0;
        }
    }
    if n > 0.0 {
        let inverse_n = 1.0 / n;
        mantissa.powf(inverse_n) * 2.0f64.powf(exponent as f64 * inverse_n)
    } else {
        0.0
    }
}

/// C `frexp` for finite positive `x`: `x = f × 2^e` with `f` in [0.5, 1).
fn frexp(x: f64) -> (f64, i32) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // Subnormal: scale into the normal range first.
        let (f, e) = frexp(x * f64::powi(2.0, 64));
        return (f, e - 64);
    }
    let f = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (f, biased - 1022)
}

/// stress-ng `stress_duration_to_str` (0.15.x): empty up to 60 s, otherwise
/// ` (Y years, D days, H hours, M mins, S.SS secs)` with zero units left out.
pub fn duration_to_str(duration: f64) -> String {
    const MINUTE: f64 = 60.0;
    const HOUR: f64 = 60.0 * MINUTE;
    const DAY: f64 = 24.0 * HOUR;
    const YEAR: f64 = 365.2425 * DAY;
    if duration <= 60.0 {
        return String::new();
    }
    let mut s = String::from(" (");
    let mut dur = duration;
    for (secs, unit) in [
        (YEAR, "year"),
        (DAY, "day"),
        (HOUR, "hour"),
        (MINUTE, "min"),
    ] {
        let val = (dur / secs) as u64;
        if val > 0 {
            s.push_str(&format!("{val} {unit}{}, ", if val > 1 { "s" } else { "" }));
        }
        dur -= secs * val as f64;
    }
    s.push_str(&format!("{dur:.2} secs)"));
    s
}

fn line(out: &mut String, tag: &str, pid: u32, text: &str) {
    out.push_str(&format!("stress-ng: {tag:<6} [{pid}] {text}\n"));
}

/// The lines stress-ng 0.15.06 prints for this run, in order, each ending in `\n`.
pub fn render(opts: &Options, res: &Results) -> String {
    let pid = res.main_pid;
    let mut out = String::new();
    let info = |out: &mut String, text: &str| line(out, "info:", pid, text);
    let metrc = |out: &mut String, text: &str| line(out, "metrc:", pid, text);

    let (action, timeout) = match opts.timeout_secs {
        Some(t) => ("setting", t),
        None => ("defaulting", DEFAULT_TIMEOUT_SECS),
    };
    info(
        &mut out,
        &format!(
            "{action} to a {timeout} second{} run per stressor",
            duration_to_str(timeout as f64)
        ),
    );
    info(
        &mut out,
        &format!("dispatching hogs: {} pipe", res.instances.len()),
    );

    if opts.metrics != Metrics::Off {
        let brief = opts.metrics == Metrics::Brief;
        let heads = [
            (
                "stressor",
                "bogo ops",
                "real time",
                "usr time",
                "sys time",
                "bogo ops/s",
                "bogo ops/s",
            ),
            (
                "",
                "",
                "(secs) ",
                "(secs) ",
                "(secs) ",
                "(real time)",
                "(usr+sys time)",
            ),
        ];
        let extra = [("CPU used per", "RSS Max"), ("instance (%)", "(KB)")];
        for (h, x) in heads.iter().zip(extra) {
            let mut text = format!(
                "{:<13} {:>9.9} {:>9.9} {:>9.9} {:>9.9} {:>12} {:>14}",
                h.0, h.1, h.2, h.3, h.4, h.5, h.6
            );
            if !brief {
                text.push_str(&format!(" {:>12.12} {:>13.13}", x.0, x.1));
            }
            metrc(&mut out, &text);
        }
        let s = res.summary();
        let run_ok = res.instances.iter().any(|i| i.run_ok);
        let shown = !(brief && s.c_total == 0 && !run_ok);
        if shown {
            let mut text = format!(
                "{:<13} {:>9} {:>9.2} {:>9.2} {:>9.2} {:>12.2} {:>14.2}",
                "pipe", s.c_total, s.r_total, s.u_time, s.s_time, s.rate_real, s.rate_cpu
            );
            if !brief {
                text.push_str(&format!(" {:>12.2} {:>13}", s.cpu_usage, s.max_rss_kb));
            }
            metrc(&mut out, &text);
            // The pipe stressor always sets its one misc metric.
            metrc(&mut out, "miscellaneous metrics:");
            metrc(
                &mut out,
                &format!(
                    "{:<13} {:>13.2} MB per sec pipe write rate (geometic mean of {} instances)",
                    "pipe",
                    s.write_rate_geomean,
                    res.instances.len()
                ),
            );
        }
    }

    let secs = res.duration.as_secs_f64();
    info(
        &mut out,
        &format!(
            "{} run completed in {secs:.2}s{}",
            if res.success {
                "successful"
            } else {
                "unsuccessful"
            },
            duration_to_str(secs)
        ),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stress_ng::options::Instances;

    fn s(secs_x100: u64) -> SimTime {
        SimTime(secs_x100 * 10_000_000)
    }

    /// Four instances: ops 409600, 409600, 1638400, 1638400 (Σ 4 096 000); run times
    /// 20.01, 20.02, 20.02, 20.03 s (mean 20.02); user 2.5+2.6+2.7+2.8 = 10.6 s; system
    /// 4 × 7.25 = 29.0 s; write rates exactly 10, 10, 40, 40 MB/s (bytes = rate × 2^20 × 20 s
    /// over a 20 s loop), geometric mean (10·10·40·40)^(1/4) = 20.
    fn example() -> Results {
        let ops = [409_600u64, 409_600, 1_638_400, 1_638_400];
        let runs = [2001u64, 2002, 2002, 2003];
        let user_ms = [2500u64, 2600, 2700, 2800];
        let rates = [10u64, 10, 40, 40];
        let instances = (0..4)
            .map(|i| InstanceResult {
                bogo_ops: ops[i],
                start: s(1),
                finish: s(1 + runs[i]),
                user_time: Nanos::from_ms(user_ms[i]),
                system_time: Nanos::from_ms(7250),
                run_ok: true,
                max_rss_kb: 2048 + i as u64,
                write_bytes: rates[i] * 1_048_576 * 20,
                write_duration: Nanos::from_secs(20),
            })
            .collect();
        Results {
            main_pid: 1234,
            instances,
            duration: Nanos::from_ms(20_050),
            success: true,
        }
    }

    fn opts(metrics: Metrics, timeout: Option<u64>) -> Options {
        Options {
            pipe: Instances::Count(4),
            timeout_secs: timeout,
            metrics,
            pipe_data_size: 512,
            pipe_size: None,
            pipe_ops: None,
        }
    }

    #[test]
    fn metrics_brief_golden() {
        // rate_real = 4096000 / 20.02 = 204595.404...; rate_cpu = 4096000 / 39.6 = 103434.343...
        let expected = "\
stress-ng: info:  [1234] setting to a 20 second run per stressor
stress-ng: info:  [1234] dispatching hogs: 4 pipe
stress-ng: metrc: [1234] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s
stress-ng: metrc: [1234]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)
stress-ng: metrc: [1234] pipe            4096000     20.02     10.60     29.00    204595.40      103434.34
stress-ng: metrc: [1234] miscellaneous metrics:
stress-ng: metrc: [1234] pipe                  20.00 MB per sec pipe write rate (geometic mean of 4 instances)
stress-ng: info:  [1234] successful run completed in 20.05s
";
        assert_eq!(
            render(&opts(Metrics::Brief, Some(20)), &example()),
            expected
        );
    }

    #[test]
    fn metrics_full_golden() {
        // CPU used per instance = 100 × 39.6 / 20.02 / 4 = 49.450...; RSS max = 2051 KiB.
        let expected = "\
stress-ng: metrc: [1234] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s CPU used per       RSS Max
stress-ng: metrc: [1234]                           (secs)    (secs)    (secs)   (real time) (usr+sys time) instance (%)          (KB)
stress-ng: metrc: [1234] pipe            4096000     20.02     10.60     29.00    204595.40      103434.34        49.45          2051
";
        let out = render(&opts(Metrics::Full, Some(20)), &example());
        let table: String = out
            .lines()
            .skip(2)
            .take(3)
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(table, expected);
    }

    #[test]
    fn no_metrics_and_default_timeout() {
        let mut r = example();
        r.duration = Nanos::from_ms(120_500);
        r.success = false;
        let expected = "\
stress-ng: info:  [1234] defaulting to a 86400 second (1 day, 0.00 secs) run per stressor
stress-ng: info:  [1234] dispatching hogs: 4 pipe
stress-ng: info:  [1234] unsuccessful run completed in 120.50s (2 mins, 0.50 secs)
";
        assert_eq!(render(&opts(Metrics::Off, None), &r), expected);
    }

    #[test]
    fn brief_row_skipped_when_nothing_ran() {
        let mut r = example();
        for i in &mut r.instances {
            i.bogo_ops = 0;
            i.run_ok = false;
        }
        let out = render(&opts(Metrics::Brief, Some(20)), &r);
        assert_eq!(out.lines().count(), 5, "{out}");
        assert!(!out.contains("miscellaneous"));
    }

    #[test]
    fn duration_strings() {
        assert_eq!(duration_to_str(20.0), "");
        assert_eq!(duration_to_str(60.0), "");
        assert_eq!(duration_to_str(120.0), " (2 mins, 0.00 secs)");
        // 3661 s = 1 hour + 1 min + 1 s.
        assert_eq!(duration_to_str(3661.0), " (1 hour, 1 min, 1.00 secs)");
        // 2 days + 3 hours = 183600 s.
        assert_eq!(duration_to_str(183_600.0), " (2 days, 3 hours, 0.00 secs)");
    }

    #[test]
    fn geometric_means() {
        assert_eq!(
            format!("{:.6}", geometric_mean(&[10.0, 10.0, 40.0, 40.0])),
            "20.000000"
        );
        // Zero and negative values are left out of both the product and n.
        assert_eq!(
            format!("{:.6}", geometric_mean(&[0.0, 4.0, 9.0])),
            "6.000000"
        );
        assert_eq!(geometric_mean(&[]), 0.0);
        assert_eq!(frexp(8.0), (0.5, 4));
        assert_eq!(frexp(0.75), (0.75, 0));
    }
}
