//! interbench's statistics and printed output (workloads.md §6.6): the per-(benchmark, load)
//! `data_table`, the derived row figures of both formats, the pooled summary of a block, and
//! the text in interbench 0.31's format (µs with `-r`, ms without) or seed 001's modified one
//! (100 ns units, true SD, median, summary row).

use super::options::{Options, Task, Units};

/// One latency sample: when the emulated thread woke for the period (simulated ns) and the
/// recorded value (latency + missed-deadline penalty) in clock units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub t_ns: u64,
    pub latency: u64,
}

/// interbench's `struct data_table` for one (benchmark, load) pair, plus every sample. Values
/// are in the run's clock units (`unit_ns` ns: 1000 for `--units us`, 100 for `--units 100ns`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DataTable {
    pub unit_ns: u64,
    pub nr_samples: u64,
    pub total_latency: u64,
    pub sum_latency_squared: u128,
    pub max_latency: u64,
    /// Gaming: µs (units) of burn achieved, not a count.
    pub achieved_burns: u64,
    pub missed_burns: u64,
    pub deadlines_met: u64,
    pub missed_deadlines: u64,
    pub samples: Vec<Sample>,
}

impl DataTable {
    pub fn new(unit_ns: u64) -> DataTable {
        DataTable {
            unit_ns,
            ..Default::default()
        }
    }

    /// Step 5 of §6.2: one sample into max, sum, sum of squares, count.
    pub fn record(&mut self, t_ns: u64, latency: u64) {
        self.max_latency = self.max_latency.max(latency);
        self.total_latency += latency;
        self.sum_latency_squared += latency as u128 * latency as u128;
        self.nr_samples += 1;
        self.samples.push(Sample { t_ns, latency });
    }

    /// `% Desired CPU` (0 when nothing was achieved, as interbench prints it).
    pub fn desired_cpu_pct(&self) -> f64 {
        if self.achieved_burns > 0 {
            self.achieved_burns as f64 / (self.achieved_burns + self.missed_burns) as f64 * 100.0
        } else {
            0.0
        }
    }

    /// `% Deadlines Met` (0 when none was met).
    pub fn deadlines_met_pct(&self) -> f64 {
        if self.deadlines_met == 0 {
            0.0
        } else {
            self.deadlines_met as f64 / (self.missed_deadlines + self.deadlines_met) as f64 * 100.0
        }
    }

    /// True mean in units.
    pub fn mean(&self) -> f64 {
        if self.nr_samples == 0 {
            0.0
        } else {
            self.total_latency as f64 / self.nr_samples as f64
        }
    }

    /// True (population) standard deviation in units — what the modified build prints.
    pub fn sd(&self) -> f64 {
        if self.nr_samples == 0 {
            return 0.0;
        }
        let n = self.nr_samples as f64;
        let m = self.mean();
        let var = self.sum_latency_squared as f64 / n - m * m;
        var.max(0.0).sqrt()
    }

    /// The median sample in units: the lower middle one for an even count (the seed's
    /// modified source is unknown; **unverified** choice).
    pub fn median(&self) -> u64 {
        if self.samples.is_empty() {
            return 0;
        }
        let mut v: Vec<u64> = self.samples.iter().map(|s| s.latency).collect();
        v.sort_unstable();
        v[(v.len() - 1) / 2]
    }

    /// interbench 0.31's `show_latencies()` arithmetic: the mean is an integer division of
    /// unsigned totals (then a double), and "SD" is `sqrt((sum_sq − mean²/n)/(n−1))` — not a
    /// standard deviation (§6.6). Returns (mean, sd) in units.
    pub fn v031_mean_sd(&self) -> (f64, f64) {
        if self.nr_samples > 1 {
            let avg = (self.total_latency / self.nr_samples) as f64;
            let n = self.nr_samples as f64;
            let var = (self.sum_latency_squared as f64 - avg * avg / n) / (n - 1.0);
            (avg, var.max(0.0).sqrt())
        } else {
            (self.total_latency as f64, 0.0)
        }
    }
}

/// One row of a block, the structured form of a printed line (all latencies in ns).
#[derive(Clone, Debug, PartialEq)]
pub struct LoadRow {
    pub load: Task,
    pub n: u64,
    pub mean_ns: f64,
    /// True (population) SD.
    pub sd_ns: f64,
    pub median_ns: u64,
    pub max_ns: u64,
    pub desired_cpu_pct: f64,
    pub deadlines_met_pct: f64,
    /// The raw table (clock units, every sample with its time).
    pub table: DataTable,
}

impl LoadRow {
    pub fn from_table(load: Task, table: &DataTable) -> LoadRow {
        let u = table.unit_ns as f64;
        LoadRow {
            load,
            n: table.nr_samples,
            mean_ns: table.mean() * u,
            sd_ns: table.sd() * u,
            median_ns: table.median() * table.unit_ns,
            max_ns: table.max_latency * table.unit_ns,
            desired_cpu_pct: table.desired_cpu_pct(),
            deadlines_met_pct: table.deadlines_met_pct(),
            table: table.clone(),
        }
    }

    /// Samples above `threshold_ns`, as (time ns, latency ns).
    pub fn samples_above(&self, threshold_ns: u64) -> Vec<(u64, u64)> {
        let u = self.table.unit_ns;
        self.table
            .samples
            .iter()
            .filter(|s| s.latency * u > threshold_ns)
            .map(|s| (s.t_ns, s.latency * u))
            .collect()
    }
}

/// The pooled statistic of a block (§6.6): mean of the per-load means; SD = sqrt(mean of the
/// per-load variances + population variance of the per-load means); max of the maxima.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pooled {
    pub mean: f64,
    pub sd: f64,
    pub max: f64,
}

/// Pools rows given as (mean, sd, max) in any one unit.
pub fn pool(rows: &[(f64, f64, f64)]) -> Pooled {
    if rows.is_empty() {
        return Pooled {
            mean: 0.0,
            sd: 0.0,
            max: 0.0,
        };
    }
    let k = rows.len() as f64;
    let mean = rows.iter().map(|r| r.0).sum::<f64>() / k;
    let within = rows.iter().map(|r| r.1 * r.1).sum::<f64>() / k;
    let between = rows
        .iter()
        .map(|r| (r.0 - mean) * (r.0 - mean))
        .sum::<f64>()
        / k;
    let max = rows.iter().map(|r| r.2).fold(0.0, f64::max);
    Pooled {
        mean,
        sd: (within + between).sqrt(),
        max,
    }
}

/// One benchmark's block: its finished rows and their pooled summary (ns).
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub bench: Task,
    pub rows: Vec<LoadRow>,
    pub summary: Pooled,
}

impl Block {
    pub fn new(bench: Task, rows: Vec<LoadRow>) -> Block {
        let summary = pool(
            &rows
                .iter()
                .map(|r| (r.mean_ns, r.sd_ns, r.max_ns as f64))
                .collect::<Vec<_>>(),
        );
        Block {
            bench,
            rows,
            summary,
        }
    }

    pub fn row(&self, load: Task) -> Option<&LoadRow> {
        self.rows.iter().find(|r| r.load == load)
    }
}

/// C `printf("%.{prec}g")`: `prec` significant digits, trailing zeros (and a trailing point)
/// removed, exponent form below 1e-4 or at 10^prec and above.
pub fn fmt_g(x: f64, prec: usize) -> String {
    let prec = prec.max(1);
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return format!("{x}");
    }
    let e = format!("{:.*e}", prec - 1, x);
    let (mant, exp) = e.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent");
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= prec as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", strip(mant), sign, exp.abs())
    } else {
        let decimals = (prec as i32 - 1 - exp).max(0) as usize;
        strip(&format!("{:.*}", decimals, x))
    }
}

/// The stats part of a 0.31 row (after the `Label\t` main printed):
/// `%6.1f +/- ` `%-8.1f` `%6.1f\t` `\t%4.3g` [`\t%11.3g`] `\n`.
pub fn row_v031(table: &DataTable, rt: bool, nodeadlines: bool) -> String {
    let (mut mean, mut sd) = table.v031_mean_sd();
    let mut max = table.max_latency as f64;
    // the table holds µs; without -r interbench prints ms
    if !rt {
        mean /= 1000.0;
        sd /= 1000.0;
        max /= 1000.0;
    }
    let mut s = format!("{mean:6.1} +/- {sd:<8.1}{max:6.1}\t");
    s.push_str(&format!("\t{:>4}", fmt_g(table.desired_cpu_pct(), 3)));
    if !nodeadlines {
        s.push_str(&format!("\t{:>11}", fmt_g(table.deadlines_met_pct(), 3)));
    }
    s.push('\n');
    s
}

/// The stats part of a modified-build row (units of 100 ns), reconstructed from seed 001
/// (§6.6, **unverified** beyond what the seed shows): `%6.1f +/- %.5g` then the median as
/// `%6d` and the max as `%5d` — widths that print `    76  166` for the None row and fuse a
/// 6-digit max to the median (`   250500418`), as the seed's Write row shows; then, only when
/// either is below 100 %, Desired CPU and Deadlines met as `%12.1f%13.1f`.
pub fn row_modified(table: &DataTable, nodeadlines: bool) -> String {
    let mut s = format!(
        "{:6.1} +/- {}{:6}{:5}",
        table.mean(),
        fmt_g(table.sd(), 5),
        table.median(),
        table.max_latency
    );
    let desired = table.desired_cpu_pct();
    let met = table.deadlines_met_pct();
    if desired < 100.0 || (!nodeadlines && met < 100.0) {
        s.push_str(&format!("{desired:12.1}"));
        if !nodeadlines {
            s.push_str(&format!("{met:13.1}"));
        }
    }
    s.push('\n');
    s
}

/// The modified build's summary row of a block (§6.6): `    %6.1f +/- %.5g` + 6 blanks (no
/// median) + `%5d` max — `     136.8 +/- 78.462        331` for seed 001's "before" block.
pub fn summary_modified(p: &Pooled) -> String {
    format!(
        "    {:6.1} +/- {}      {:5}\n",
        p.mean,
        fmt_g(p.sd, 5),
        p.max.round() as u64
    )
}

/// What the printer needs beside the options.
pub struct Report<'a> {
    pub opts: &'a Options,
    /// `-L` or the online CPU count.
    pub cpu_load: u32,
    pub loops_per_ms: u64,
    /// Per pair in `opts.pairs()` order: `None` if the pair never started, `Some(None)` if it
    /// started and did not finish, `Some(Some(table))` when its bench process printed.
    pub pairs: Vec<Option<Option<&'a DataTable>>>,
}

/// The whole text interbench prints (stdout; the log file gets the same).
pub fn render(r: &Report<'_>) -> String {
    let o = r.opts;
    let mut s = String::new();
    s.push_str(&format!("Load set to {} processors\n\n", r.cpu_load));
    s.push_str(&format!(
        "Using {} loops per ms, running every load for {} seconds\n",
        r.loops_per_ms, o.duration_s
    ));
    // uname -r and the date are host facts the simulation does not have
    s.push_str("Benchmarking kernel schedlab at datestamp 0000000000\n");
    if let Some(c) = &o.comment {
        s.push_str(&format!("Comment: {c}\n"));
    }
    s.push('\n');
    let pairs = o.pairs();
    for &b in &o.benches {
        let nodeadlines = b == Task::Gaming;
        s.push_str(&format!("--- Benchmarking simulated cpu of {} ", b.label()));
        if o.rt {
            s.push_str("real time ");
        } else if o.bench_nice != 0 {
            s.push_str(&format!("nice {} ", o.bench_nice));
        }
        s.push_str("in the presence of simulated ");
        if o.load_nice != 0 {
            s.push_str(&format!("nice {} ", o.load_nice));
        }
        s.push_str("---\n");
        match o.units {
            Units::Us => {
                s.push_str("Load");
                s.push_str(if o.rt {
                    "\tLatency +/- SD (us)"
                } else {
                    "\tLatency +/- SD (ms)"
                });
                s.push_str("  Max Latency ");
                s.push_str("  % Desired CPU");
                if !nodeadlines {
                    s.push_str("  % Deadlines Met");
                }
                s.push('\n');
            }
            Units::Ns100 => {
                s.push_str("Load\tLatency +/- SD   median  max [100n]    Desired CPU");
                if !nodeadlines {
                    s.push_str("  Deadlines met [%]");
                }
                s.push('\n');
            }
        }
        let mut finished: Vec<&DataTable> = Vec::new();
        let mut complete = true;
        for (i, &(pb, l)) in pairs.iter().enumerate() {
            if pb != b {
                continue;
            }
            match r.pairs.get(i).copied().flatten() {
                None => {
                    complete = false;
                    break;
                }
                Some(t) => {
                    s.push_str(&format!("{}\t", l.label()));
                    match t {
                        None => {
                            // the run ended inside this pair: the label is all that was printed
                            s.push('\n');
                            complete = false;
                            break;
                        }
                        Some(t) => {
                            finished.push(t);
                            s.push_str(&match o.units {
                                Units::Us => row_v031(t, o.rt, nodeadlines),
                                Units::Ns100 => row_modified(t, nodeadlines),
                            });
                        }
                    }
                }
            }
        }
        if !complete {
            return s;
        }
        if o.units == Units::Ns100 && !finished.is_empty() {
            let p = pool(
                &finished
                    .iter()
                    .map(|t| (t.mean(), t.sd(), t.max_latency as f64))
                    .collect::<Vec<_>>(),
            );
            s.push_str(&summary_modified(&p));
        }
        s.push('\n');
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_g() {
        // values as C's printf("%.Ng") prints them
        assert_eq!(fmt_g(100.0, 3), "100");
        assert_eq!(fmt_g(98.1, 3), "98.1");
        assert_eq!(fmt_g(99.99, 3), "100");
        assert_eq!(fmt_g(0.0, 3), "0");
        assert_eq!(fmt_g(12.38, 5), "12.38");
        assert_eq!(fmt_g(67639.2, 5), "67639");
        assert_eq!(fmt_g(8.36541, 5), "8.3654");
        assert_eq!(fmt_g(78.4617, 5), "78.462");
        assert_eq!(fmt_g(24118.4, 5), "24118");
        assert_eq!(fmt_g(123456.0, 5), "1.2346e+05");
        assert_eq!(fmt_g(0.00001234, 3), "1.23e-05");
    }

    /// The seed's published per-load rows (workloads.md §12.2, 100 ns units) pool to the
    /// published summary rows: 136.8 ± 78.462 (max 331) before, 1298.4 ± 24118 (max 500418)
    /// after (§6.6 says this was verified).
    #[test]
    fn pooled_summary_reproduces_seed_001() {
        let before = [
            (76.6, 8.3654, 166.0),
            (78.5, 3.9433, 107.0),
            (76.4, 8.123, 157.0),
            (72.0, 6.4733, 127.0),
            (255.3, 26.627, 331.0),
            (226.6, 12.38, 262.0),
            (84.2, 6.6207, 125.0),
            (225.3, 23.949, 328.0),
        ];
        let p = pool(&before);
        // 1094.9 / 8 = 136.8625 from the rounded row means; each printed mean hides up to
        // ±0.05, so the pooled one from the seed's unrounded means lies within ±0.05 of
        // that, and the printed 136.8 within ±0.05 of its own value
        assert!((p.mean - 136.8625).abs() < 1e-9);
        assert!((p.mean - 136.8).abs() <= 0.1);
        // SD: sqrt(mean of the SD² + variance of the means) = 78.461 (seed 78.462, §6.6
        // "78.46")
        assert_eq!(fmt_g(p.sd, 4), "78.46");
        assert_eq!(p.max, 331.0);
        let after = [
            (68.4, 9.7864, 169.0),
            (74.4, 3.724, 97.0),
            (72.0, 6.5681, 129.0),
            (66.9, 5.9059, 117.0),
            (9576.9, 67639.0, 500418.0),
            (209.3, 11.018, 267.0),
            (80.5, 8.0993, 125.0),
            (239.0, 29.447, 372.0),
        ];
        let p = pool(&after);
        assert_eq!(format!("{:.1}", p.mean), "1298.4"); // 10387.4 / 8 = 1298.425
        assert_eq!(fmt_g(p.sd, 5), "24118");
        assert_eq!(p.max, 500418.0);
    }

    fn table(
        samples: &[u64],
        achieved: u64,
        missed_burns: u64,
        met: u64,
        missed: u64,
    ) -> DataTable {
        let mut t = DataTable::new(100);
        for (i, &v) in samples.iter().enumerate() {
            t.record(i as u64, v);
        }
        t.achieved_burns = achieved;
        t.missed_burns = missed_burns;
        t.deadlines_met = met;
        t.missed_deadlines = missed;
        t
    }

    #[test]
    fn v031_row_layout() {
        // samples 6, 8, 10 µs: integer mean 24/3 = 8; "SD" = sqrt((200 − 64/3)/2) = 9.452…;
        // max 10; 3 burns, 3 deadlines met.
        let t = table(&[6, 8, 10], 3, 0, 3, 0);
        assert_eq!(
            row_v031(&t, true, false),
            "   8.0 +/- 9.5       10.0\t\t 100\t        100\n"
        );
        // Gaming (no deadlines column), ms without -r: mean 3000 / 2 = 1500 µs → 1.5 ms;
        // "SD" sqrt((5e6 − 1500²/2)/1) = 1968.5 µs → 2.0 ms; max 2.0 ms
        let t = table(&[1000, 2000], 100_000, 0, 0, 0);
        assert_eq!(
            row_v031(&t, false, true),
            "   1.5 +/- 2.0        2.0\t\t 100\n"
        );
        // 0.31 truncates the mean: 7 / 2 = 3
        let t = table(&[3, 4], 2, 0, 2, 0);
        assert!(row_v031(&t, true, false).starts_with("   3.0 +/- "));
    }

    #[test]
    fn modified_row_layout() {
        // 76, 76, 78, 76 → mean 76.5, population SD sqrt(0.75) = 0.86603, median (lower
        // middle of 76 76 76 78) 76, max 78; every burn and deadline met: columns blank.
        let t = table(&[76, 76, 78, 76], 4, 0, 4, 0);
        assert_eq!(row_modified(&t, false), "  76.5 +/- 0.86603    76   78\n");
        // a two-point Write row: 49 samples of 250 and one of 500418; 49 of 50 deadlines
        // met (98 %), 49 of 50 burns achieved: the max fuses with the median as in the seed.
        let mut v = vec![250u64; 49];
        v.push(500418);
        let t = table(&v, 49, 1, 49, 1);
        let line = row_modified(&t, false);
        assert!(line.contains("   250500418"), "{line}");
        assert!(line.ends_with("        98.0         98.0\n"), "{line:?}");
        // summary row as §6.6 prints the before block
        let p = Pooled {
            mean: 136.8,
            sd: 78.4617,
            max: 331.0,
        };
        assert_eq!(summary_modified(&p), "     136.8 +/- 78.462        331\n");
    }

    /// The whole text of a finished run, both formats, from two hand-made tables: None with
    /// samples 6, 8, 10 (all met) and Write with 20 and 50020 (one deadline of two missed,
    /// its sample carrying the penalty).
    #[test]
    fn whole_output_both_formats() {
        let none = table(&[6, 8, 10], 3, 0, 3, 0);
        let write = table(&[20, 50020], 2, 0, 1, 1);
        let args = |s: &str| -> Vec<String> { s.split_whitespace().map(String::from).collect() };
        let o =
            crate::interbench::parse(&args("-r -t 10 -w None -w Write -W Audio -m hi")).unwrap();
        let r = Report {
            opts: &o,
            cpu_load: 4,
            loops_per_ms: 1_000_000,
            pairs: vec![Some(Some(&none)), Some(Some(&write))],
        };
        // 0.31: Write mean 50040 / 2 = 25020 (integer), "SD" sqrt(20² + 50020² − 25020²/2)
        // = 46786.8, max 50020; Desired CPU 2/2 = 100, Deadlines Met 1/2 = 50.
        let expected = "Load set to 4 processors\n\n\
            Using 1000000 loops per ms, running every load for 10 seconds\n\
            Benchmarking kernel schedlab at datestamp 0000000000\n\
            Comment: hi\n\n\
            --- Benchmarking simulated cpu of Audio real time in the presence of simulated ---\n\
            Load\tLatency +/- SD (us)  Max Latency   % Desired CPU  % Deadlines Met\n\
            None\t   8.0 +/- 9.5       10.0\t\t 100\t        100\n\
            Write\t25020.0 +/- 46786.8 50020.0\t\t 100\t         50\n\n\n";
        assert_eq!(render(&r), expected);
        // modified: None mean 8.0, SD sqrt(8/3) = 1.633, median 8, max 10; Write mean 25020.0,
        // SD 25000, median (lower middle) 20, max 50020 fused to it, 100.0 and 50.0; summary
        // mean (8 + 25020)/2 = 12514 (4 blanks + %6.1f), SD sqrt((8/3 + 25000²)/2 + 12506²) = 21654, max 50020.
        let o = crate::interbench::parse(&args(
            "-r -t 10 -w None -w Write -W Audio -m hi --units 100ns",
        ))
        .unwrap();
        let r = Report { opts: &o, ..r };
        let expected = "Load set to 4 processors\n\n\
            Using 1000000 loops per ms, running every load for 10 seconds\n\
            Benchmarking kernel schedlab at datestamp 0000000000\n\
            Comment: hi\n\n\
            --- Benchmarking simulated cpu of Audio real time in the presence of simulated ---\n\
            Load\tLatency +/- SD   median  max [100n]    Desired CPU  Deadlines met [%]\n\
            None\t   8.0 +/- 1.633     8   10\n\
            Write\t25020.0 +/- 25000    2050020       100.0         50.0\n\
            \x20   12514.0 +/- 21654      50020\n\n\n";
        assert_eq!(render(&r), expected);
        // a run that ended inside the second pair: its label, then nothing more
        let r = Report {
            pairs: vec![Some(Some(&none)), Some(None)],
            ..r
        };
        assert!(render(&r).ends_with("None\t   8.0 +/- 1.633     8   10\nWrite\t\n"));
    }
}
