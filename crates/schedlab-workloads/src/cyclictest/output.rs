//! What cyclictest (rt-tests 2.5) writes to stdout (workloads.md §5.3), following
//! `main()`, `print_stat()` and `print_hist()`:
//!
//! 1. `# /dev/cpu_dma_latency set to 0us` at start-up (not with `--laptop` /
//!    `--default-system`);
//! 2. without `-q`, the live status: a `policy: … loadavg: …` line and one `T:` line per
//!    thread, refreshed in place with cursor escapes — rendered once, as the final screen
//!    (Deviation: no escapes, and the policy line only when a load average is supplied);
//! 3. with `-q` and no histogram, one `T:` line per thread at exit;
//! 4. with `-h`/`-H`, the histogram block, whatever `-q` says.
//!
//! Note: with `-q -h` (seed 004) no `T:` summary line is printed at all — cyclictest 2.5
//! prints it only when there is no histogram.

use super::options::{Options, Policy, Resolved};
use super::stats::ThreadStats;

/// One measurement thread's results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadResult {
    /// Kernel thread id (printed in the `T:` line).
    pub tid: u32,
    pub stats: ThreadStats,
}

/// Everything the cyclictest printer needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Results {
    /// The run-time settings used (from [`Options::resolve`]).
    pub resolved: Resolved,
    pub threads: Vec<ThreadResult>,
    /// `/proc/loadavg` text for the status line of the non-quiet screen, e.g.
    /// `0.52 0.58 0.59 3/180 1234`; `None` leaves the line out.
    pub loadavg: Option<String>,
}

/// cyclictest `print_stat()` (not verbose, not `-N`).
fn stat_line(out: &mut String, opts: &Options, r: &Resolved, i: u32, t: &ThreadResult) {
    let s = &t.stats;
    out.push_str(&format!(
        "T:{:2} ({:5}) P:{:2} I:{} C:{:7} Min:{:7} Act:{:5} Avg:{:5} Max:{:8}\n",
        i,
        t.tid,
        opts.thread_priority(r, i),
        opts.thread_interval_us(i),
        s.cycles,
        s.min,
        s.act,
        s.avg(),
        s.max
    ));
}

/// cyclictest `print_hist()`.
fn histogram_block(out: &mut String, opts: &Options, buckets: u32, threads: &[ThreadResult]) {
    let all = opts.histofall && threads.len() > 1;
    out.push_str("# Histogram\n");
    for i in 0..buckets as usize {
        let counts: Vec<u64> = threads
            .iter()
            .map(|t| t.stats.histogram.get(i).copied().unwrap_or(0))
            .collect();
        let cols: Vec<String> = counts.iter().map(|c| format!("{c:06}")).collect();
        out.push_str(&format!("{i:06} {}", cols.join("\t")));
        if all {
            out.push_str(&format!("\t{:06}", counts.iter().sum::<u64>()));
        }
        out.push('\n');
    }
    let per_thread = |out: &mut String, label: &str, f: &dyn Fn(&ThreadStats) -> String| {
        out.push_str(label);
        for t in threads {
            out.push(' ');
            out.push_str(&f(&t.stats));
        }
    };
    per_thread(out, "# Total:", &|s| format!("{:09}", s.histogram_total()));
    if all {
        let total: u64 = threads.iter().map(|t| t.stats.histogram_total()).sum();
        out.push_str(&format!(" {total:09}"));
    }
    out.push('\n');
    per_thread(out, "# Min Latencies:", &|s| format!("{:05}", s.min));
    out.push('\n');
    per_thread(out, "# Avg Latencies:", &|s| format!("{:05}", s.avg()));
    out.push('\n');
    per_thread(out, "# Max Latencies:", &|s| format!("{:05}", s.max));
    if all {
        let maxmax = threads
            .iter()
            .map(|t| t.stats.max)
            .max()
            .unwrap_or(0)
            .max(0);
        out.push_str(&format!(" {maxmax:05}"));
    }
    out.push('\n');
    per_thread(out, "# Histogram Overflows:", &|s| {
        format!("{:05}", s.hist_overflow)
    });
    if all {
        let overflows: u64 = threads.iter().map(|t| t.stats.hist_overflow).sum();
        out.push_str(&format!(" {overflows:05}"));
    }
    out.push('\n');
    out.push_str("# Histogram Overflow at cycle number:\n");
    for (i, t) in threads.iter().enumerate() {
        out.push_str(&format!("# Thread {i}:"));
        for c in &t.stats.outliers {
            out.push_str(&format!(" {c:05}"));
        }
        let kept = t.stats.outliers.len() as u64;
        if kept < t.stats.hist_overflow {
            out.push_str(&format!(" # {:05} others", t.stats.hist_overflow - kept));
        }
        out.push('\n');
    }
    out.push('\n');
}

/// cyclictest's stdout for this run, in order, each line ending in `\n`.
pub fn render(opts: &Options, res: &Results) -> String {
    let r = &res.resolved;
    let mut out = String::new();
    if opts.set_cpu_dma_latency {
        out.push_str(&format!(
            "# /dev/cpu_dma_latency set to {}us\n",
            opts.latency_target_us
        ));
    }
    if !opts.quiet {
        if let Some(loadavg) = &res.loadavg {
            let forced_other =
                (0..r.num_threads).any(|i| opts.thread_policy(r, i) == Policy::Other);
            let (slash, other) = if forced_other {
                ("/", "other")
            } else {
                ("", "")
            };
            out.push_str(&format!(
                "policy: {}{slash}{other}: loadavg: {loadavg}          \n\n",
                r.policy.name()
            ));
        }
        for (i, t) in res.threads.iter().enumerate() {
            stat_line(&mut out, opts, r, i as u32, t);
        }
    } else if opts.histogram.is_none() {
        for (i, t) in res.threads.iter().enumerate() {
            stat_line(&mut out, opts, r, i as u32, t);
        }
    }
    if let Some(buckets) = opts.histogram {
        histogram_block(&mut out, opts, buckets, &res.threads);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cyclictest::options::parse;

    fn opts(s: &str) -> Options {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>()).unwrap()
    }

    fn thread(tid: u32, buckets: Option<u32>, lat: &[u64]) -> ThreadResult {
        let mut stats = ThreadStats::new(buckets);
        lat.iter().for_each(|&d| stats.record(d));
        ThreadResult { tid, stats }
    }

    #[test]
    fn quiet_histogram_golden() {
        // Latencies 3, 5, 5, 7, 9, 12 with -h 8: buckets 3:1 5:2 7:1, total 4; min 3,
        // avg 41/6 = 6, max 12; overflows 9 and 12 at cycles 4 and 5. No T: line with -h.
        let o = opts("-t 1 -i 2777 -D 63 --policy=fair --mlock -h 8 -q");
        let res = Results {
            resolved: o.resolve(4),
            threads: vec![thread(4242, Some(8), &[3, 5, 5, 7, 9, 12])],
            loadavg: None,
        };
        let expected = "\
# /dev/cpu_dma_latency set to 0us
# Histogram
000000 000000
000001 000000
000002 000000
000003 000001
000004 000000
000005 000002
000006 000000
000007 000001
# Total: 000000004
# Min Latencies: 00003
# Avg Latencies: 00006
# Max Latencies: 00012
# Histogram Overflows: 00002
# Histogram Overflow at cycle number:
# Thread 0: 00004 00005

";
        assert_eq!(render(&o, &res), expected);
    }

    #[test]
    fn histofall_two_threads_and_others() {
        // -H 2: thread 0 latencies 0, 1, 5, 6, 7 (overflows at cycles 2, 3 kept, 1 other);
        // thread 1 latencies 1, 1. All column: bucket 0 = 1, bucket 1 = 3; totals 2 + 2 = 4;
        // max of maxima 7; overflows 3 + 0.
        let o = opts("-t 2 -H 2 -q --laptop");
        let res = Results {
            resolved: o.resolve(4),
            threads: vec![
                thread(100, Some(2), &[0, 1, 5, 6, 7]),
                thread(101, Some(2), &[1, 1]),
            ],
            loadavg: None,
        };
        // Thread 0: sum 19 / 5 = 3; thread 1: 2 / 2 = 1.
        let expected = "\
# Histogram
000000 000001\t000000\t000001
000001 000001\t000002\t000003
# Total: 000000002 000000002 000000004
# Min Latencies: 00000 00001
# Avg Latencies: 00003 00001
# Max Latencies: 00007 00001 00007
# Histogram Overflows: 00003 00000 00003
# Histogram Overflow at cycle number:
# Thread 0: 00002 00003 # 00001 others
# Thread 1:

";
        assert_eq!(render(&o, &res), expected);
    }

    #[test]
    fn quiet_summary_lines() {
        // -t 2 without -h: intervals 1000 and 1000 + 500; -p 80 -> FIFO, both threads P:80.
        let o = opts("-t 2 -p 80 -q");
        let res = Results {
            resolved: o.resolve(4),
            threads: vec![
                thread(12345, None, &[3, 5, 5, 7, 9, 12]),
                thread(12346, None, &[]),
            ],
            loadavg: None,
        };
        let expected = "\
# /dev/cpu_dma_latency set to 0us
T: 0 (12345) P:80 I:1000 C:      6 Min:      3 Act:   12 Avg:    6 Max:      12
T: 1 (12346) P:80 I:1500 C:      0 Min:1000000 Act:    0 Avg:    0 Max:       0
";
        assert_eq!(render(&o, &res), expected);
    }

    #[test]
    fn live_screen_once() {
        // --policy=fair falls back to other, prio 0 -> threads forced to SCHED_OTHER.
        let o = opts("-i 2777 --policy=fair");
        let res = Results {
            resolved: o.resolve(4),
            threads: vec![thread(77, None, &[10, 20])],
            loadavg: Some("0.52 0.58 0.59 3/180 1234".into()),
        };
        let expected = "\
# /dev/cpu_dma_latency set to 0us
policy: other/other: loadavg: 0.52 0.58 0.59 3/180 1234          \n\
\n\
T: 0 (   77) P: 0 I:2777 C:      2 Min:     10 Act:   20 Avg:   15 Max:      20
";
        assert_eq!(render(&o, &res), expected);
        let o = opts("-p 90 --latency=5");
        let res = Results {
            resolved: o.resolve(4),
            threads: vec![thread(77, None, &[10])],
            loadavg: Some("1.00 1.00 1.00 1/1 1".into()),
        };
        let out = render(&o, &res);
        assert!(out.starts_with("# /dev/cpu_dma_latency set to 5us\npolicy: fifo: loadavg: 1.00"));
    }
}
