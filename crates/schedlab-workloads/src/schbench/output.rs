//! The lines schbench prints, all on stderr (workloads.md §4.3): the interval reports, the
//! final report, and the notices around them, plus the small computations behind them
//! (RPS samples, the schedstat "sched delay", the pipe-mode transfer rate).

use super::histogram::{Histogram, PLIST};
use super::options::Options;

/// One thread's `/proc/<tid>/schedstat` delay fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Schedstat {
    /// Time spent runnable but waiting on a run queue, ns (second field).
    pub run_delay_ns: u64,
    /// Times scheduled in (third field).
    pub pcount: u64,
}

impl Schedstat {
    /// schbench `read_sched_delay()`: run_delay / pcount, ns.
    /// Deviation: 0 when pcount is 0 (schbench would divide by zero).
    pub fn avg_delay_ns(&self) -> u64 {
        self.run_delay_ns.checked_div(self.pcount).unwrap_or(0)
    }
}

/// The "sched delay" figures, as averages in ns (printed divided by 1000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedDelay {
    pub message_ns: u64,
    pub worker_ns: u64,
}

/// schbench `collect_sched_delay()`: the mean over message threads, and over all workers,
/// of each thread's own average delay (integer divisions, as schbench). Empty slices give 0.
pub fn collect_sched_delay(message_threads: &[Schedstat], workers: &[Schedstat]) -> SchedDelay {
    let mean = |v: &[Schedstat]| {
        let sum: u64 = v.iter().map(Schedstat::avg_delay_ns).sum();
        sum.checked_div(v.len() as u64).unwrap_or(0)
    };
    SchedDelay {
        message_ns: mean(message_threads),
        worker_ns: mean(workers),
    }
}

/// The main thread's once-a-second RPS figure: `Δloops × 10⁶ / Δt(µs)` as a double, and
/// the sample it adds to the RPS histogram (truncated; 0 when not finite, e.g. the very
/// first round where Δt = 0).
pub fn rps_sample(loop_delta: u64, delta_us: u64) -> (f64, u32) {
    let rps = loop_delta.wrapping_mul(1_000_000) as f64 / delta_us as f64;
    let sample = if rps.is_finite() { rps as u32 } else { 0 };
    (rps, sample)
}

/// One interval report (printed every `-i` seconds, not in pipe mode).
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalReport {
    /// Whole seconds since the start (`runtime_delta / 10⁶`).
    pub runtime_secs: u64,
    /// Merged worker histograms at the time of the report.
    pub wakeup: Histogram,
    pub request: Histogram,
    pub rps: Histogram,
    pub sched_delay: SchedDelay,
    /// The RPS figure computed in the same round.
    pub current_rps: f64,
}

/// Something the main thread prints while the run goes on, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// "warmup done, zeroing stats" (saturating mode with `-w`).
    WarmupDone,
    Interval(IntervalReport),
}

/// Everything the schbench printer needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Results {
    /// Workers per message thread actually used (printed as "setting worker threads to N"
    /// when `-t` was not given).
    pub worker_threads: u32,
    pub events: Vec<Event>,
    /// Final merged histograms.
    pub wakeup: Histogram,
    pub request: Histogram,
    pub rps: Histogram,
    /// Σ worker loop counts.
    pub loop_count: u64,
    /// Σ worker run times, µs (pipe mode's rate denominator).
    pub loop_runtime_us: u64,
    /// Auto-RPS: the per-message-thread RPS target at the end (printed × m).
    pub final_rps_per_message_thread: u32,
    /// The final "sched delay" line. schbench reads `/proc/<tid>/schedstat` after joining
    /// the threads, when those files are gone, so the real program prints 0 and 0: pass
    /// `SchedDelay::default()` to reproduce it.
    pub final_sched_delay: SchedDelay,
}

const PLIST_20: u32 = 1 << 0;
const PLIST_50: u32 = 1 << 1;
const PLIST_90: u32 = 1 << 2;
const PLIST_99: u32 = 1 << 3;
const PLIST_999: u32 = 1 << 4;
const PLIST_FOR_LAT: u32 = PLIST_50 | PLIST_90 | PLIST_99 | PLIST_999;
const PLIST_FOR_RPS: u32 = PLIST_20 | PLIST_50 | PLIST_90;

/// schbench `show_latencies()`.
fn show_latencies(
    out: &mut String,
    h: &Histogram,
    label: &str,
    units: &str,
    runtime: impl std::fmt::Display,
    mask: u32,
    star: u32,
) {
    out.push_str(&format!(
        "{label} percentiles ({units}) runtime {runtime} (s) ({} total samples)\n",
        h.nr_samples
    ));
    for (i, p) in h.percentiles().iter().enumerate() {
        let bit = 1 << i;
        if mask & bit == 0 {
            continue;
        }
        out.push_str(&format!(
            "\t{}{:2.1}th: {:<10} ({} samples)\n",
            if bit == star { "* " } else { "  " },
            PLIST[i],
            p.value,
            p.count
        ));
    }
    out.push_str(&format!("\t  min={}, max={}\n", h.min, h.max));
}

/// One latency report in schbench's format (`show_latencies` with the latency percentiles
/// 50, 90, *99, 99.9, then min and max): the header `LABEL percentiles (usec) runtime R (s)
/// (N total samples)` and six lines. Other programs whose output follows schbench's
/// (netbench.md §17.4) print through this.
pub fn latency_report(
    out: &mut String,
    h: &Histogram,
    label: &str,
    runtime: impl std::fmt::Display,
) {
    show_latencies(out, h, label, "usec", runtime, PLIST_FOR_LAT, PLIST_99);
}

fn sched_delay_line(out: &mut String, d: &SchedDelay) {
    out.push_str(&format!(
        "sched delay: message {} (usec) worker {} (usec)\n",
        d.message_ns / 1000,
        d.worker_ns / 1000
    ));
}

/// schbench `pretty_size()`: divides by 1024 while ≥ 1024, up to EB.
fn pretty_size(mut number: f64) -> (f64, &'static str) {
    const UNITS: [&str; 7] = ["B", "KB", "MB", "GB", "TB", "PB", "EB"];
    let mut divs = 0;
    while number >= 1024.0 && divs + 1 < UNITS.len() {
        divs += 1;
        number /= 1024.0;
    }
    (number, UNITS[divs])
}

/// Everything schbench writes to stderr for this run, in order, each line ending in `\n`.
pub fn render(opts: &Options, res: &Results) -> String {
    let mut out = String::new();
    for n in &opts.notices {
        out.push_str(n);
        out.push('\n');
    }
    if opts.worker_threads.is_none() {
        out.push_str(&format!(
            "setting worker threads to {}\n",
            res.worker_threads
        ));
    }
    for i in 0..opts.message_threads {
        if let Some(cpu) = opts.message_thread_cpu(i) {
            out.push_str(&format!("Pinning to message thread index {i} cpu {cpu}\n"));
        }
    }
    for ev in &res.events {
        match ev {
            Event::WarmupDone => out.push_str("warmup done, zeroing stats\n"),
            Event::Interval(r) => {
                let t = r.runtime_secs;
                show_latencies(
                    &mut out,
                    &r.wakeup,
                    "Wakeup Latencies",
                    "usec",
                    t,
                    PLIST_FOR_LAT,
                    PLIST_99,
                );
                show_latencies(
                    &mut out,
                    &r.request,
                    "Request Latencies",
                    "usec",
                    t,
                    PLIST_FOR_LAT,
                    PLIST_99,
                );
                show_latencies(
                    &mut out,
                    &r.rps,
                    "RPS",
                    "requests",
                    t,
                    PLIST_FOR_RPS,
                    PLIST_50,
                );
                sched_delay_line(&mut out, &r.sched_delay);
                out.push_str(&format!("current rps: {:.2}\n", r.current_rps));
            }
        }
    }
    let runtime = opts.runtime_secs as u64;
    if opts.pipe_bytes > 0 {
        show_latencies(
            &mut out,
            &res.wakeup,
            "Wakeup Latencies",
            "usec",
            runtime,
            PLIST_20 | PLIST_FOR_LAT,
            PLIST_99,
        );
        let (loops_per_sec, bytes_per_sec) = if res.loop_runtime_us > 0 {
            (
                res.loop_count.wrapping_mul(1_000_000) as f64 / res.loop_runtime_us as f64,
                // Integer arithmetic in schbench: (loops × bytes × 10⁶) / runtime.
                (res.loop_count as u128 * opts.pipe_bytes as u128 * 1_000_000
                    / res.loop_runtime_us as u128) as f64,
            )
        } else {
            (0.0, 0.0)
        };
        let (size, unit) = pretty_size(bytes_per_sec);
        out.push_str(&format!(
            "avg worker transfer: {loops_per_sec:.2} ops/sec {size:.2}{unit}/s\n"
        ));
    } else {
        show_latencies(
            &mut out,
            &res.wakeup,
            "Wakeup Latencies",
            "usec",
            runtime,
            PLIST_FOR_LAT,
            PLIST_99,
        );
        show_latencies(
            &mut out,
            &res.request,
            "Request Latencies",
            "usec",
            runtime,
            PLIST_FOR_LAT,
            PLIST_99,
        );
        show_latencies(
            &mut out,
            &res.rps,
            "RPS",
            "requests",
            runtime,
            PLIST_FOR_RPS,
            PLIST_50,
        );
        if opts.auto_rps == 0 {
            out.push_str(&format!(
                "average rps: {:.2}\n",
                res.loop_count as f64 / opts.runtime_secs as f64
            ));
        } else {
            out.push_str(&format!(
                "final rps goal was {}\n",
                res.final_rps_per_message_thread as u64 * opts.message_threads as u64
            ));
        }
        sched_delay_line(&mut out, &res.final_sched_delay);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schbench::options::parse;

    fn opts(s: &str) -> Options {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>()).unwrap()
    }

    /// 1..=10 µs, one sample each: percentiles 2, 5, 9, 10, 10 with counts 2, 3, 4, 1, 0
    /// (histogram.rs `percentile_walk_ten_samples`).
    fn wakeup() -> Histogram {
        let mut h = Histogram::new();
        (1..=10).for_each(|v| h.add_lat(v));
        h
    }

    /// 900 × 100 µs + 100 × 1000 µs: 100, 100, 100, 1001, 1001; counts 900, 0, 0, 100, 0.
    fn request() -> Histogram {
        let mut h = Histogram::new();
        (0..900).for_each(|_| h.add_lat(100));
        (0..100).for_each(|_| h.add_lat(1000));
        h
    }

    /// RPS samples 0 (first round), 8000, 9000, 10000 -> buckets printed 0, 8008, 9008,
    /// 10000. N = 4: 20% = 0.8 reached at 0 (cum 1); 50% = 2 at 8008 (cum 2); 90% = 3.6 at
    /// 10000 (cum 4). Counts 1, 1, 2. min: the 0 is forgotten by the next sample -> 8000.
    fn rps() -> Histogram {
        let mut h = Histogram::new();
        for v in [0, 8000, 9000, 10_000] {
            h.add_lat(v);
        }
        h
    }

    fn results() -> Results {
        Results {
            worker_threads: 80,
            events: vec![Event::Interval(IntervalReport {
                runtime_secs: 10,
                wakeup: wakeup(),
                request: request(),
                rps: rps(),
                sched_delay: SchedDelay {
                    message_ns: 12_345,
                    worker_ns: 6_789,
                },
                current_rps: 9876.543,
            })],
            wakeup: wakeup(),
            request: request(),
            rps: rps(),
            loop_count: 296_296,
            loop_runtime_us: 2_000_000,
            final_rps_per_message_thread: 0,
            final_sched_delay: SchedDelay::default(),
        }
    }

    #[test]
    fn saturating_mode_golden() {
        // average rps = 296296 / 30 = 9876.533...
        let expected = "\
setting worker threads to 80
Wakeup Latencies percentiles (usec) runtime 10 (s) (10 total samples)
\t  50.0th: 5          (3 samples)
\t  90.0th: 9          (4 samples)
\t* 99.0th: 10         (1 samples)
\t  99.9th: 10         (0 samples)
\t  min=1, max=10
Request Latencies percentiles (usec) runtime 10 (s) (1000 total samples)
\t  50.0th: 100        (0 samples)
\t  90.0th: 100        (0 samples)
\t* 99.0th: 1001       (100 samples)
\t  99.9th: 1001       (0 samples)
\t  min=100, max=1000
RPS percentiles (requests) runtime 10 (s) (4 total samples)
\t  20.0th: 0          (1 samples)
\t* 50.0th: 8008       (1 samples)
\t  90.0th: 10000      (2 samples)
\t  min=8000, max=10000
sched delay: message 12 (usec) worker 6 (usec)
current rps: 9876.54
Wakeup Latencies percentiles (usec) runtime 30 (s) (10 total samples)
\t  50.0th: 5          (3 samples)
\t  90.0th: 9          (4 samples)
\t* 99.0th: 10         (1 samples)
\t  99.9th: 10         (0 samples)
\t  min=1, max=10
Request Latencies percentiles (usec) runtime 30 (s) (1000 total samples)
\t  50.0th: 100        (0 samples)
\t  90.0th: 100        (0 samples)
\t* 99.0th: 1001       (100 samples)
\t  99.9th: 1001       (0 samples)
\t  min=100, max=1000
RPS percentiles (requests) runtime 30 (s) (4 total samples)
\t  20.0th: 0          (1 samples)
\t* 50.0th: 8008       (1 samples)
\t  90.0th: 10000      (2 samples)
\t  min=8000, max=10000
average rps: 9876.53
sched delay: message 0 (usec) worker 0 (usec)
";
        assert_eq!(render(&opts(""), &results()), expected);
    }

    #[test]
    fn auto_rps_warmup_and_pinning_lines() {
        let mut r = results();
        r.events = vec![Event::WarmupDone];
        r.final_rps_per_message_thread = 450;
        let out = render(&opts("-A 80 -m 2 -t 4 -M 0,2"), &r);
        let head: Vec<&str> = out.lines().take(3).collect();
        assert_eq!(
            head,
            vec![
                "Pinning to message thread index 0 cpu 0",
                "Pinning to message thread index 1 cpu 2",
                "warmup done, zeroing stats",
            ]
        );
        // 450 per message thread × 2 message threads.
        assert!(out
            .contains("\nfinal rps goal was 900\nsched delay: message 0 (usec) worker 0 (usec)\n"));
        assert!(!out.contains("average rps"));
    }

    #[test]
    fn pipe_mode_golden() {
        // 1000 loops over 2 s of worker time: 500.00 ops/sec; bytes/s = 1000 × 4096 × 10⁶ /
        // 2×10⁶ = 2048000 -> /1024 = 2000 KB -> /1024 = 1.953 MB.
        let mut r = results();
        r.loop_count = 1000;
        r.events.clear();
        let expected = "\
Wakeup Latencies percentiles (usec) runtime 30 (s) (10 total samples)
\t  20.0th: 2          (2 samples)
\t  50.0th: 5          (3 samples)
\t  90.0th: 9          (4 samples)
\t* 99.0th: 10         (1 samples)
\t  99.9th: 10         (0 samples)
\t  min=1, max=10
avg worker transfer: 500.00 ops/sec 1.95MB/s
";
        assert_eq!(render(&opts("-p 4096 -t 2"), &r), expected);
    }

    #[test]
    fn helpers() {
        // First round: Δt = 0 -> NaN -> sample 0.
        let (rps, s) = rps_sample(0, 0);
        assert!(rps.is_nan());
        assert_eq!(s, 0);
        // 9000 loops in 1.000500 s = 8995.50... -> sample 8995.
        let (rps, s) = rps_sample(9000, 1_000_500);
        assert_eq!((format!("{rps:.2}"), s), ("8995.50".to_string(), 8995));
        // Thread averages: 1000/10 = 100 and 3000/20 = 150 -> mean 125; one message thread
        // 5000/0 -> 0 (deviation: schbench would divide by zero).
        let d = collect_sched_delay(
            &[Schedstat {
                run_delay_ns: 5000,
                pcount: 0,
            }],
            &[
                Schedstat {
                    run_delay_ns: 1000,
                    pcount: 10,
                },
                Schedstat {
                    run_delay_ns: 3000,
                    pcount: 20,
                },
            ],
        );
        assert_eq!(
            d,
            SchedDelay {
                message_ns: 0,
                worker_ns: 125
            }
        );
        assert_eq!(pretty_size(1023.0), (1023.0, "B"));
        assert_eq!(pretty_size(1024.0), (1.0, "KB"));
    }
}
