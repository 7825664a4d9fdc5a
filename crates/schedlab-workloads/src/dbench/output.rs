//! dbench's output (workloads.md §7.3) and mmtests' dbench4 metrics.

use super::loadfile::OpKind;
use crate::interbench::fmt_g;

/// Latency statistics of one operation kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpStat {
    pub count: u64,
    pub sum_ns: u64,
    pub max_ns: u64,
}

impl OpStat {
    pub fn add(&mut self, ns: u64) {
        self.count += 1;
        self.sum_ns += ns;
        self.max_ns = self.max_ns.max(ns);
    }
}

/// One once-a-second line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub clients: u32,
    /// Average number of loadfile lines executed per client.
    pub lines: u64,
    pub mbs: f64,
    pub warmup: bool,
    pub secs: u64,
    /// Worst operation latency in the last second (ms).
    pub latency_ms: f64,
}

/// One completed pass of one client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    pub client: u32,
    /// Duration (ms, truncated as dbench prints it).
    pub ms: u64,
    /// Time since the client's start at the end of the pass (ms).
    pub at_ms: u64,
}

/// Which tree's report: dbench 4.00 as workloads.md §7.3 gives it, or the gormanm tree's
/// (mmtests' tbench, netbench.md §15.4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Layout {
    /// No banner; the table in dbench 4.00's operation order and names; the "completed in"
    /// lines after the `Throughput` line (workloads.md §7.3).
    #[default]
    Dbench,
    /// The version banner; each client's "completed in" lines (client by client) before the
    /// table; the table in the gormanm order with the loadfile's names (netbench.md §15.4).
    Gormanm,
}

/// Everything the report prints.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub layout: Layout,
    pub clients: u32,
    pub timelimit: u32,
    pub warmup: u32,
    pub loadfile: String,
    /// The polls of the start-up barrier: clients prepared at each poll, and its time (s).
    pub prepared: Vec<(u32, f64)>,
    pub released: bool,
    pub progress: Vec<Progress>,
    pub cleanup_secs: Option<u64>,
    pub ops: Vec<(OpKind, OpStat)>,
    pub throughput_mbs: Option<f64>,
    pub max_latency_ms: f64,
    pub show_execute_time: bool,
    pub passes: Vec<Pass>,
}

/// One progress line (`sig_alarm()` in dbench.c).
pub fn progress_line(p: &Progress) -> String {
    format!(
        "{:4}  {:8}  {:7.2} MB/sec  {} {:3.0} sec  latency {:.3} ms",
        p.clients,
        p.lines,
        p.mbs,
        if p.warmup { "warmup" } else { "execute" },
        p.secs as f64,
        p.latency_ms
    )
}

/// The text dbench prints.
pub fn render(r: &Report) -> String {
    let mut o = String::new();
    let gormanm = r.layout == Layout::Gormanm;
    if gormanm {
        o.push_str("dbench version 4.00 - Copyright Andrew Tridgell 1999-2004\n\n");
    }
    o.push_str(&format!(
        "Running for {} seconds with load '{}' and minimum warmup {} secs\n",
        r.timelimit, r.loadfile, r.warmup
    ));
    for &(n, t) in &r.prepared {
        o.push_str(&format!(
            "{} of {} processes prepared for launch {:3.0} sec\n",
            n, r.clients, t
        ));
    }
    if !r.released {
        return o;
    }
    o.push_str("releasing clients\n");
    for p in &r.progress {
        o.push_str(&progress_line(p));
        o.push('\n');
    }
    if let Some(s) = r.cleanup_secs {
        o.push_str(&format!("{:4}  cleanup {:3.0} sec\n", r.clients, s as f64));
    }
    let Some(tput) = r.throughput_mbs else {
        return o;
    };
    if gormanm {
        // each client prints its passes when it stops, staggered by its id
        let mut passes = r.passes.clone();
        passes.sort_by_key(|p| p.client);
        o.push_str(&completed_lines(r.show_execute_time, &passes));
    }
    o.push('\n');
    o.push_str(" Operation                Count    AvgLat    MaxLat\n");
    o.push_str(" --------------------------------------------------\n");
    let order = if gormanm {
        OpKind::GORMANM_ORDER
    } else {
        OpKind::ALL
    };
    for k in order {
        let Some(s) = r.ops.iter().find(|o| o.0 == k).map(|o| &o.1) else {
            continue;
        };
        if s.count == 0 {
            continue;
        }
        let name = if gormanm { k.gormanm_name() } else { k.name() };
        let avg = s.sum_ns as f64 / s.count as f64 / 1e6;
        o.push_str(&format!(
            " {:<22} {:7} {:9.3} {:9.3}\n",
            name,
            s.count,
            avg,
            s.max_ns as f64 / 1e6
        ));
    }
    o.push('\n');
    o.push_str(&format!(
        "Throughput {} MB/sec  {} clients  {} procs  max_latency={:.3} ms\n",
        fmt_g(tput, 6),
        r.clients,
        r.clients,
        r.max_latency_ms
    ));
    if !gormanm {
        o.push_str(&completed_lines(r.show_execute_time, &r.passes));
    }
    o
}

/// The `--show-execute-time` lines.
fn completed_lines(show: bool, passes: &[Pass]) -> String {
    if !show {
        return String::new();
    }
    passes
        .iter()
        .map(|p| {
            format!(
                "{:4} completed in {} ms at time {} ms\n",
                p.client, p.ms, p.at_ms
            )
        })
        .collect()
}

pub use crate::stats::{amean, hmean, stddev};

/// mmtests' completion-lag windows (`ExtractDbench4completionlag`, W§7.3): for pass index
/// k, from the time the *first* client finished pass k − 1 (0 for k = 0) to the time the
/// *last* client finished pass k; only passes every client completed. `at[c]` lists client
/// c's "at time" values in order (any unit; the windows come out in it).
pub fn completion_lag(at: &[Vec<u64>]) -> Vec<u64> {
    let at_ms = at;
    let Some(n) = at_ms.iter().map(|v| v.len()).min() else {
        return Vec::new();
    };
    (0..n)
        .map(|k| {
            let start = if k == 0 {
                0
            } else {
                at_ms.iter().map(|v| v[k - 1]).min().unwrap_or(0)
            };
            let end = at_ms.iter().map(|v| v[k]).max().unwrap_or(0);
            end.saturating_sub(start)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_formats() {
        let p = Progress {
            clients: 48,
            lines: 183_717,
            mbs: 9540.144,
            warmup: false,
            secs: 7,
            latency_ms: 20.1234,
        };
        // "%4d  %8d  %7.2f MB/sec  execute %3.0f sec  latency %.03f ms"
        assert_eq!(
            progress_line(&p),
            "  48    183717  9540.14 MB/sec  execute   7 sec  latency 20.123 ms"
        );
        let w = Progress {
            warmup: true,
            mbs: 5.0,
            ..p
        };
        assert_eq!(
            progress_line(&w),
            "  48    183717     5.00 MB/sec  warmup   7 sec  latency 20.123 ms"
        );
        let mut ops = vec![(OpKind::NTCreateX, OpStat::default())];
        ops[0].1.add(67_000);
        ops[0].1.add(133_000);
        ops.push((OpKind::Deltree, OpStat::default())); // not printed: count 0
        let r = Report {
            layout: Layout::Dbench,
            clients: 1,
            timelimit: 10,
            warmup: 0,
            loadfile: "client-tiny.txt".into(),
            prepared: vec![(1, 0.0)],
            released: true,
            progress: vec![],
            cleanup_secs: Some(0),
            ops,
            throughput_mbs: Some(1268.8),
            max_latency_ms: 0.133,
            show_execute_time: true,
            passes: vec![Pass {
                client: 0,
                ms: 14,
                at_ms: 14,
            }],
        };
        let text = render(&r);
        let expect = "\
Running for 10 seconds with load 'client-tiny.txt' and minimum warmup 0 secs
1 of 1 processes prepared for launch   0 sec
releasing clients
   1  cleanup   0 sec

 Operation                Count    AvgLat    MaxLat
 --------------------------------------------------
 NTCreateX                    2     0.100     0.133

Throughput 1268.8 MB/sec  1 clients  1 procs  max_latency=0.133 ms
   0 completed in 14 ms at time 14 ms
";
        assert_eq!(text, expect);
    }

    #[test]
    fn gormanm_layout_of_netbench_15_4() {
        // netbench.md §15.4: the banner, the "completed in" lines client by client before
        // the table, the table in the gormanm order (Flush before Close before ReadX before
        // QUERY_PATH_INFORMATION before NTCreateX) with the loadfile's names
        let mut ops: Vec<(OpKind, OpStat)> = OpKind::ALL
            .iter()
            .map(|&k| (k, OpStat::default()))
            .collect();
        for (k, ns) in [
            (OpKind::NTCreateX, 20_000),
            (OpKind::Qpathinfo, 10_000),
            (OpKind::ReadX, 15_533),
            (OpKind::Close, 9_000),
            (OpKind::Flush, 8_000),
        ] {
            ops.iter_mut().find(|o| o.0 == k).unwrap().1.add(ns);
        }
        let r = Report {
            layout: Layout::Gormanm,
            clients: 2,
            timelimit: 120,
            warmup: 24,
            loadfile: "client-tiny.txt".into(),
            prepared: vec![(2, 0.0)],
            released: true,
            progress: vec![Progress {
                clients: 2,
                lines: 100,
                mbs: 263.7,
                warmup: false,
                secs: 1,
                latency_ms: 0.02,
            }],
            cleanup_secs: Some(121),
            ops,
            throughput_mbs: Some(263.7),
            max_latency_ms: 0.02,
            show_execute_time: true,
            passes: vec![
                Pass {
                    client: 1,
                    ms: 55,
                    at_ms: 55,
                },
                Pass {
                    client: 0,
                    ms: 54,
                    at_ms: 54,
                },
                Pass {
                    client: 1,
                    ms: 56,
                    at_ms: 111,
                },
            ],
        };
        let expect = "\
dbench version 4.00 - Copyright Andrew Tridgell 1999-2004

Running for 120 seconds with load 'client-tiny.txt' and minimum warmup 24 secs
2 of 2 processes prepared for launch   0 sec
releasing clients
   2       100   263.70 MB/sec  execute   1 sec  latency 0.020 ms
   2  cleanup 121 sec
   0 completed in 54 ms at time 54 ms
   1 completed in 55 ms at time 55 ms
   1 completed in 56 ms at time 111 ms

 Operation                Count    AvgLat    MaxLat
 --------------------------------------------------
 Flush                        1     0.008     0.008
 Close                        1     0.009     0.009
 ReadX                        1     0.016     0.016
 QUERY_PATH_INFORMATION       1     0.010     0.010
 NTCreateX                    1     0.020     0.020

Throughput 263.7 MB/sec  2 clients  2 procs  max_latency=0.020 ms
";
        assert_eq!(render(&r), expect);
    }

    #[test]
    fn mmtests_statistics_by_hand() {
        // Hmean of 1000 and 3000 MB/s: 2 / (1/1000 + 1/3000) = 1500
        assert!((hmean(&[1000.0, 3000.0]) - 1500.0).abs() < 1e-9);
        assert_eq!(hmean(&[]), 0.0);
        // Amean 2, Stddev of 1, 2, 3 (n − 1): sqrt((1 + 0 + 1) / 2) = 1
        assert_eq!(amean(&[1.0, 2.0, 3.0]), 2.0);
        assert!((stddev(&[1.0, 2.0, 3.0]) - 1.0).abs() < 1e-12);
        // Completion lag, two clients:
        //   client 0 finishes passes at 10, 20, 30 ms; client 1 at 12, 25 ms
        //   window 0: 0 → max(10, 12) = 12
        //   window 1: min(10, 12) = 10 → max(20, 25) = 25: 15
        //   pass 2 was not completed by client 1: no window
        let lag = completion_lag(&[vec![10, 20, 30], vec![12, 25]]);
        assert_eq!(lag, vec![12, 15]);
        assert!(completion_lag(&[]).is_empty());
    }
}
