//! cyclictest's per-thread statistics and latency rule (workloads.md §5.1–5.3), and the
//! percentile rule used to turn its histogram into the seed-004 table.

/// cyclictest `calcdiff()`: `t1 − t2` in µs from two absolute clock readings given in ns,
/// computed the way cyclictest does it on `struct timespec`: whole-second difference × 10⁶
/// plus the nanosecond-field difference / 1000, truncated toward zero. Across a second
/// boundary this is 1 µs more than the floor of the true difference (10.000000500 −
/// 9.999999900 gives 1, not 0), so the readings must be the absolute `CLOCK_MONOTONIC`
/// values, boot offset included.
/// Origin: rt-tests `src/include/rt-utils.h` `calcdiff()`.
pub fn calcdiff_us(t1_ns: u64, t2_ns: u64) -> i64 {
    const NS: u64 = 1_000_000_000;
    let sec = (t1_ns / NS) as i64 - (t2_ns / NS) as i64;
    let nsec = (t1_ns % NS) as i64 - (t2_ns % NS) as i64;
    sec * 1_000_000 + nsec / 1000
}

/// One measurement thread's `struct thread_stat`, updated exactly as `timerthread()` does
/// after each wake-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadStats {
    /// Samples recorded.
    pub cycles: u64,
    /// Smallest latency; starts at 1 000 000 as in cyclictest.
    pub min: i64,
    pub max: i64,
    /// Last latency ("Act").
    pub act: i64,
    /// Sum of all latencies (cyclictest keeps it in a double named `avg`).
    pub sum: i64,
    /// One-µs buckets `0 .. N-1` with `-h N`; empty without a histogram.
    pub histogram: Vec<u64>,
    /// Samples ≥ N.
    pub hist_overflow: u64,
    /// Cycle numbers (0-based) of the first N overflows.
    pub outliers: Vec<u64>,
}

impl ThreadStats {
    /// Fresh statistics; `histogram` is the `-h`/`-H` bucket count, if any.
    pub fn new(histogram: Option<u32>) -> Self {
        ThreadStats {
            cycles: 0,
            min: 1_000_000,
            max: 0,
            act: 0,
            sum: 0,
            histogram: vec![0; histogram.unwrap_or(0) as usize],
            hist_overflow: 0,
            outliers: Vec::new(),
        }
    }

    /// Records one latency (µs, from [`calcdiff_us`]).
    pub fn record(&mut self, diff: u64) {
        let d = diff as i64;
        if d < self.min {
            self.min = d;
        }
        if d > self.max {
            self.max = d;
        }
        self.sum += d;
        self.act = d;
        let n = self.histogram.len() as u64;
        if n > 0 {
            if diff >= n {
                self.hist_overflow += 1;
                if (self.outliers.len() as u64) < n {
                    self.outliers.push(self.cycles);
                }
            } else {
                self.histogram[diff as usize] += 1;
            }
        }
        self.cycles += 1;
    }

    /// Integer mean, `(long)(avg / cycles)`, 0 before the first sample.
    pub fn avg(&self) -> i64 {
        if self.cycles == 0 {
            0
        } else {
            self.sum / self.cycles as i64
        }
    }

    /// Σ histogram buckets: cyclictest's `# Total:` (overflows are not included).
    pub fn histogram_total(&self) -> u64 {
        self.histogram.iter().sum()
    }
}

/// Percentile of a 1-µs histogram: the smallest bucket value `v` whose cumulative count
/// reaches `p / 100 × total` (total = Σ buckets, overflows excluded). `None` for an empty
/// histogram. This is the rule workloads.md §5.3 states for the seed-004 table (its
/// rounding is **unverified**).
///
/// The comparison is exact: `p` is taken to a thousandth of a percent and compared as
/// `cum × 100000 ≥ p×1000 × total` in integers. (In `f64`, 99.9 / 100 × 1000 is
/// 999.0000000000001, which would push the 99.9th percentile of 1000 samples to the
/// maximum; schbench has that artefact, a table-making script need not.)
pub fn histogram_percentile(histogram: &[u64], p: f64) -> Option<u64> {
    let total: u64 = histogram.iter().sum();
    if total == 0 {
        return None;
    }
    let p_milli = (p * 1000.0).round().clamp(0.0, 100_000.0) as u128;
    let threshold = p_milli * total as u128;
    let mut cum = 0u64;
    for (v, &n) in histogram.iter().enumerate() {
        cum += n;
        if n > 0 && cum as u128 * 100_000 >= threshold {
            return Some(v as u64);
        }
    }
    None
}

/// The seed-004 table row of one thread: "Total Samples, Average, Median, 90th, 99th,
/// 99.9th, Maximum" (µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistogramSummary {
    /// Σ buckets.
    pub total: u64,
    /// Integer mean of all samples (overflows included, as cyclictest's average).
    pub average: i64,
    pub median: Option<u64>,
    pub p90: Option<u64>,
    pub p99: Option<u64>,
    pub p999: Option<u64>,
    pub max: i64,
}

impl HistogramSummary {
    pub fn of(stats: &ThreadStats) -> Self {
        let pct = |p| histogram_percentile(&stats.histogram, p);
        HistogramSummary {
            total: stats.histogram_total(),
            average: stats.avg(),
            median: pct(50.0),
            p90: pct(90.0),
            p99: pct(99.0),
            p999: pct(99.9),
            max: stats.max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn calcdiff_rule() {
        // Same second: 5.000123999 - 5.000000000 = 123 us (truncated).
        assert_eq!(calcdiff_us(5 * S + 123_999, 5 * S), 123);
        // Across a second boundary: 10.000000500 - 9.999999900. Seconds: 1 -> 1000000;
        // ns: 500 - 999999900 = -999999400, / 1000 -> -999999 (toward zero): 1 us, where
        // the true difference is 600 ns (floor 0 us).
        assert_eq!(calcdiff_us(10 * S + 500, 9 * S + 999_999_900), 1);
        // Before the stop time: 9.5 - 10.0 = -1000000 + 500000 = -500000.
        assert_eq!(calcdiff_us(9 * S + 500_000_000, 10 * S), -500_000);
        assert_eq!(calcdiff_us(7 * S, 7 * S), 0);
    }

    #[test]
    fn record_like_timerthread() {
        // -h 8 and latencies 3, 5, 5, 7, 9, 12: buckets 3:1, 5:2, 7:1; 9 and 12 overflow at
        // cycles 4 and 5. Sum 41, mean 41 / 6 = 6.
        let mut s = ThreadStats::new(Some(8));
        for d in [3, 5, 5, 7, 9, 12] {
            s.record(d);
        }
        assert_eq!((s.cycles, s.min, s.max, s.act, s.sum), (6, 3, 12, 12, 41));
        assert_eq!(s.histogram, vec![0, 0, 0, 1, 0, 2, 0, 1]);
        assert_eq!((s.hist_overflow, s.outliers.clone()), (2, vec![4, 5]));
        assert_eq!((s.avg(), s.histogram_total()), (6, 4));
        // Outlier list stops at N entries.
        let mut s = ThreadStats::new(Some(2));
        for d in [5, 6, 7] {
            s.record(d);
        }
        assert_eq!((s.hist_overflow, s.outliers.clone()), (3, vec![0, 1]));
        // Without a histogram only min/max/avg move; min starts at 1000000.
        let s = ThreadStats::new(None);
        assert_eq!((s.min, s.avg()), (1_000_000, 0));
    }

    #[test]
    fn percentile_rule() {
        // 10 samples: values 1..=10 once each. 50% of 10 = 5 -> 5; 90% = 9 -> 9;
        // 99% = 9.9 -> 10; 99.9% -> 10.
        let mut h = vec![0u64; 12];
        h[1..=10].iter_mut().for_each(|n| *n = 1);
        assert_eq!(histogram_percentile(&h, 50.0), Some(5));
        assert_eq!(histogram_percentile(&h, 90.0), Some(9));
        assert_eq!(histogram_percentile(&h, 99.0), Some(10));
        assert_eq!(histogram_percentile(&h, 99.9), Some(10));
        assert_eq!(histogram_percentile(&[0, 0], 50.0), None);
        // 1000 samples: 990 at 40 us, 9 at 700, 1 at 4000. 99% = 990 -> 40;
        // 99.9% = 999 -> 700; 100% -> 4000.
        let mut h = vec![0u64; 5000];
        h[40] = 990;
        h[700] = 9;
        h[4000] = 1;
        assert_eq!(histogram_percentile(&h, 99.0), Some(40));
        assert_eq!(histogram_percentile(&h, 99.9), Some(700));
        assert_eq!(histogram_percentile(&h, 100.0), Some(4000));
    }

    #[test]
    fn summary() {
        let mut s = ThreadStats::new(Some(8));
        for d in [3, 5, 5, 7, 9, 12] {
            s.record(d);
        }
        // Buckets hold 4 samples (3, 5, 5, 7): median 2 of 4 -> 5; 90% = 3.6 -> 7.
        let sum = HistogramSummary::of(&s);
        assert_eq!(
            sum,
            HistogramSummary {
                total: 4,
                average: 6,
                median: Some(5),
                p90: Some(7),
                p99: Some(7),
                p999: Some(7),
                max: 12,
            }
        );
    }
}
