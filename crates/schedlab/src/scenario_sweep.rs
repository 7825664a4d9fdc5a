//! Scenarios of kind `sweep` (seed 002, `schedlab reproduce next-buddy`): mmtests-style tables
//! over a swept parameter — dbench clients, hackbench groups — and schbench's per-interval
//! percentiles, each cell beside its published value with mmtests' gain column
//! (docs/model.md W§12.3).
//!
//! One run is one benchmark invocation on one kernel variant and one simulator seed. A cell's
//! per-run figure is the statistic the publishing tool computes within the run (mmtests reads
//! dbench's Hmean throughput and its Amean/Stddev loadfile times; the Amean of schbench's
//! per-interval wakeup percentiles and the Hmean of its per-interval RPS percentiles) or, for
//! hackbench, the run's time; the cell is the Amean over the seeds (for hackbench that is
//! mmtests' own Amean over its 3 runs per group count), with the standard deviation over seeds.
//!
//! **Scaled hackbench.** `perf bench sched messaging -l 10000` over 1…296 groups is ~78 G
//! messages per kernel; by default the sweep runs `-l 1000` and reports the start-up and reaping
//! phases as simulated plus 10 × the loop phase, from the unrounded simulated times
//! (schedlab_workloads::hackbench::Phases). `--full-size` runs the published `-l`;
//! `--check-scaling` compares the two (the 1 % rule of issue #14).
//!
//! Nothing here depends on the variant: every variant runs the same platform, workloads and
//! seeds, and the platform is calibrated on the reference column only.

use crate::stats::{amean, hmean, stddev};
use serde::Deserialize;
use serde_json::{json, Value};
use std::fmt::Write;
use std::time::{Duration, Instant};

/// The `[sweep]` table of a scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// The patched variant the published tables compare with the baseline (its kernel or id).
    pub patched: String,
    /// Variants run in full mode only (e.g. the `preempt=lazy` ones); they run dbench and
    /// schbench, not hackbench.
    #[serde(default)]
    pub full_only_variants: Vec<String>,
    /// Variants that run hackbench (default: every variant not in `full_only_variants`).
    #[serde(default)]
    pub hackbench_variants: Option<Vec<String>>,
    /// Variants run in quick mode (default: all but `full_only_variants`).
    #[serde(default)]
    pub quick_variants: Option<Vec<String>>,
    /// `perf bench sched messaging` line with `{transport}` (`--pipe` or nothing), `{groups}`
    /// and `{loops}`.
    pub hackbench_line: String,
    pub hackbench_groups: Vec<u32>,
    pub quick_hackbench_groups: Vec<u32>,
    /// The published `-l`.
    pub hackbench_loops: u32,
    /// The `-l` reproduce runs (scaled to `hackbench_loops`), full and quick.
    pub hackbench_run_loops: u32,
    pub quick_hackbench_run_loops: u32,
    /// Runs (seeds) per hackbench cell, full and quick.
    pub hackbench_runs: u32,
    pub quick_hackbench_runs: u32,
    /// dbench line with `{clients}`.
    pub dbench_line: String,
    pub quick_dbench_line: String,
    pub dbench_clients: Vec<u32>,
    pub quick_dbench_clients: Vec<u32>,
    pub schbench_line: String,
    pub quick_schbench_line: String,
    /// Published tables, one entry per (table, statistic, variant).
    #[serde(rename = "published")]
    pub published: Vec<PubRow>,
    /// Where the published numbers come from.
    pub source: String,
    /// A note shown with the sockets table (published on another posting).
    #[serde(default)]
    pub sockets_note: Option<String>,
}

/// One published column of one statistic: `rows[i]` has `values[i]` (and `gains[i]` %, for the
/// patched column).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PubRow {
    pub table: String,
    pub stat: String,
    #[serde(alias = "variant")]
    pub kernel: String,
    pub rows: Vec<String>,
    pub values: Vec<f64>,
    #[serde(default)]
    pub gains: Vec<f64>,
}

/// The benchmarks of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bench {
    HackbenchPipes,
    HackbenchSockets,
    Dbench,
    Schbench,
}

impl Bench {
    pub fn name(&self) -> &'static str {
        match self {
            Bench::HackbenchPipes => "hackbench-process-pipes",
            Bench::HackbenchSockets => "hackbench-process-sockets",
            Bench::Dbench => "dbench4",
            Bench::Schbench => "schbench",
        }
    }
}

/// One of the six published tables (seven with the schbench RPS one): its title, unit, whether
/// higher is better, its benchmark, and its statistics as (mmtests name, what a run gives).
pub struct TableDef {
    pub title: &'static str,
    pub unit: &'static str,
    pub higher_better: bool,
    pub bench: Bench,
    pub stats: &'static [(&'static str, Source)],
}

/// Where a run's figure for a statistic comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A workload metric of that name (dbench's, named by its model).
    Metric(&'static str),
    /// hackbench's time, scaled when the run used fewer loops.
    HackbenchTime,
    /// The arithmetic mean over the interval reports of the schbench wakeup percentile series
    /// `interval_wakeup_{p}_us`; the row name is `Wakeup-{p}-{workers}`.
    WakeupAmean,
    /// The harmonic mean over the interval reports of the schbench RPS series.
    RpsHmean,
}

/// The tables of seed 002 (docs/model.md W§12.3), in the seed's order.
pub const TABLES: &[TableDef] = &[
    TableDef {
        title: "dbench4 Throughput",
        unit: "MB/s",
        higher_better: true,
        bench: Bench::Dbench,
        stats: &[("Hmean", Source::Metric("throughput_mbs"))],
    },
    TableDef {
        title: "dbench4 Loadfile Execution Time",
        unit: "ms",
        higher_better: false,
        bench: Bench::Dbench,
        stats: &[
            ("Amean", Source::Metric("loadfile_ms")),
            ("Stddev", Source::Metric("loadfile_stddev_ms")),
        ],
    },
    TableDef {
        title: "dbench4 All Clients Loadfile Execution Time",
        unit: "ms",
        higher_better: false,
        bench: Bench::Dbench,
        stats: &[
            ("Amean", Source::Metric("all_clients_ms")),
            ("Stddev", Source::Metric("all_clients_stddev_ms")),
        ],
    },
    TableDef {
        title: "hackbench-process-pipes",
        unit: "s",
        higher_better: false,
        bench: Bench::HackbenchPipes,
        stats: &[("Amean", Source::HackbenchTime)],
    },
    TableDef {
        title: "hackbench-process-sockets",
        unit: "s",
        higher_better: false,
        bench: Bench::HackbenchSockets,
        stats: &[("Amean", Source::HackbenchTime)],
    },
    TableDef {
        title: "schbench Wakeup Latency",
        unit: "µs",
        higher_better: false,
        bench: Bench::Schbench,
        stats: &[("Amean", Source::WakeupAmean)],
    },
    TableDef {
        title: "schbench Requests Per Second",
        unit: "ops/s",
        higher_better: true,
        bench: Bench::Schbench,
        stats: &[("Hmean", Source::RpsHmean)],
    },
];

/// schbench rows: (mmtests row prefix and percentile tag, series name).
const WAKEUP_ROWS: [(&str, &str); 4] = [
    ("Wakeup-50th", "interval_wakeup_p50_us"),
    ("Wakeup-90th", "interval_wakeup_p90_us"),
    ("Wakeup-99th", "interval_wakeup_p99_us"),
    ("Wakeup-99.9th", "interval_wakeup_p999_us"),
];
const RPS_ROWS: [(&str, &str); 4] = [
    ("RPS-20th", "interval_rps_p20"),
    ("RPS-50th", "interval_rps_p50"),
    ("RPS-90th", "interval_rps_p90"),
    ("RPS-max", "interval_rps_max"),
];

/// mmtests' gain column, as a fraction: positive is better whichever way the table goes.
pub fn gain(reference: f64, value: f64, higher_better: bool) -> f64 {
    if reference == 0.0 {
        return 0.0;
    }
    if higher_better {
        (value - reference) / reference
    } else {
        (reference - value) / reference
    }
}

/// hackbench's time at `target` loops from a run of `run` loops: start-up and reaping as
/// simulated, the loop phase × target / run (all in seconds, unrounded).
pub fn scaled_time(startup_s: f64, loop_s: f64, reap_s: f64, run: u32, target: u32) -> f64 {
    startup_s + loop_s * target as f64 / run.max(1) as f64 + reap_s
}

/// mmtests' schbench statistics of one run from its interval reports: the Amean of each
/// wakeup percentile series and the Hmean of each RPS series (values as printed).
pub fn schbench_amean(series: &[(u64, u64)]) -> f64 {
    amean(&series.iter().map(|p| p.1 as f64).collect::<Vec<_>>())
}
pub fn schbench_hmean(series: &[(u64, u64)]) -> f64 {
    hmean(&series.iter().map(|p| p.1 as f64).collect::<Vec<_>>())
}

/// One cell of a table.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub table: usize,
    pub stat: &'static str,
    pub row: String,
}

impl Cell {
    /// The JSON metric name: `"{table} {stat} {row}"`, e.g. `dbench4 Throughput Hmean 48`.
    pub fn metric(&self) -> String {
        format!("{} {} {}", TABLES[self.table].title, self.stat, self.row)
    }
}

/// The seed-002 acceptance set (W§12.3): (table, stat, rows); the sign must match and the
/// magnitude be within a factor of 2 for these cells (all have |published gain| > 10 %).
fn acceptance_cell(c: &Cell) -> bool {
    let t = TABLES[c.table].title;
    let clients = c.row.parse::<u32>().unwrap_or(0);
    match (t, c.stat) {
        ("dbench4 Throughput", "Hmean") | ("dbench4 Loadfile Execution Time", "Amean") => {
            clients >= 30
        }
        ("schbench Wakeup Latency", "Amean") => true,
        _ => false,
    }
}

/// Cells above 10 % that the seed's author calls noise (exempt from the sign rule).
fn exempt_cell(c: &Cell) -> bool {
    TABLES[c.table].title == "hackbench-process-pipes" && (c.row == "1" || c.row == "48")
}

/// One simulation.
#[derive(Debug, Clone)]
struct Job {
    variant: usize,
    bench: Bench,
    /// Clients or groups (0 for schbench).
    param: u32,
    seed: u64,
    line: String,
    /// hackbench: the loops run and the published loops.
    loops: Option<(u32, u32)>,
}

impl Job {
    /// A rough cost for ordering (largest first, so the last jobs are short).
    fn weight(&self) -> u64 {
        match self.bench {
            Bench::HackbenchPipes | Bench::HackbenchSockets => {
                self.param as u64 * self.loops.map_or(1, |l| l.0 as u64) * 3
            }
            Bench::Dbench => self.param as u64 * 4000,
            Bench::Schbench => 400_000,
        }
    }
}

/// Simulated-time limit of a hackbench run in a sweep (it ends when hackbench is done).
pub const HACKBENCH_LIMIT_NS: u64 = 3_600_000_000_000;

/// Mode of the sweep.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mode {
    pub quick: bool,
    /// hackbench at the published `-l`.
    pub full_size: bool,
    /// Benchmarks left out (`--only`): bit 0 hackbench, 1 dbench, 2 schbench.
    pub skip: u8,
}

/// `--only` bits of [`Mode::skip`].
pub const SKIP_HACKBENCH: u8 = 1;
pub const SKIP_DBENCH: u8 = 2;
pub const SKIP_SCHBENCH: u8 = 4;

/// Parses `--only LIST` (hackbench, dbench, schbench, comma-separated) into the skip bits.
pub fn parse_only(list: &str) -> Result<u8, String> {
    let mut keep = 0u8;
    for w in list.split(',').map(str::trim) {
        keep |= match w {
            "hackbench" => SKIP_HACKBENCH,
            "dbench" => SKIP_DBENCH,
            "schbench" => SKIP_SCHBENCH,
            _ => {
                return Err(format!(
                    "--only: unknown benchmark '{w}' (known: hackbench, dbench, schbench)"
                ))
            }
        };
    }
    Ok(!keep & 7)
}

/// The results of a sweep scenario.
pub struct SweepOutcome {
    pub mode: Mode,
    /// (id, kernel, label, reference id).
    pub variants: Vec<(String, String, String, String)>,
    pub baseline: String,
    pub spec: SweepSpec,
    /// Per variant: the cells it ran with their per-seed samples.
    pub cells: Vec<Vec<(Cell, Vec<f64>)>>,
    /// hackbench loops (run, published).
    pub hackbench_loops: (u32, u32),
    /// Benchmarks skipped, with why (e.g. no dbench model in this build).
    pub skipped: Vec<String>,
    /// The workload lines of the runs (one example per benchmark).
    pub lines: Vec<(Bench, String)>,
    pub runs: u32,
    pub hackbench_runs: u32,
    /// Wall time of every run: (description, wall). Not part of the report (not deterministic).
    pub timings: Vec<(String, Duration)>,
    /// The scenario's `notes`, printed at the end.
    pub notes: Vec<String>,
}

fn fill(template: &str, keys: &[(&str, String)]) -> String {
    let mut s = template.to_string();
    for (k, v) in keys {
        s = s.replace(&format!("{{{k}}}"), v);
    }
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl SweepSpec {
    pub fn hackbench(&self, pipes: bool, groups: u32, loops: u32) -> String {
        fill(
            &self.hackbench_line,
            &[
                (
                    "transport",
                    if pipes {
                        "--pipe".into()
                    } else {
                        String::new()
                    },
                ),
                ("groups", groups.to_string()),
                ("loops", loops.to_string()),
            ],
        )
    }
    pub fn dbench(&self, quick: bool, clients: u32) -> String {
        fill(
            if quick {
                &self.quick_dbench_line
            } else {
                &self.dbench_line
            },
            &[("clients", clients.to_string())],
        )
    }

    /// The schbench line of a mode.
    fn schbench(&self, quick: bool) -> &str {
        if quick {
            &self.quick_schbench_line
        } else {
            &self.schbench_line
        }
    }

    /// The schbench worker count (`-t N`) of a mode, for the mmtests row names.
    fn schbench_workers(&self, quick: bool) -> String {
        let w: Vec<&str> = self.schbench(quick).split_whitespace().collect();
        w.iter()
            .position(|x| *x == "-t")
            .and_then(|i| w.get(i + 1))
            .map(|s| s.to_string())
            .unwrap_or_else(|| "0".into())
    }

    /// Checks the table against the scenario's variants; errors name the key.
    pub fn check(&self, ids: &[&str], file: &str) -> Result<(), String> {
        let known = |k: &str, what: &str| -> Result<(), String> {
            if ids.contains(&k) {
                Ok(())
            } else {
                Err(format!(
                    "{file}: sweep.{what} refers to '{k}', which is not a [[variant]] kernel or id"
                ))
            }
        };
        known(&self.patched, "patched")?;
        for k in &self.full_only_variants {
            known(k, "full_only_variants")?;
        }
        for k in self.hackbench_variants.iter().flatten() {
            known(k, "hackbench_variants")?;
        }
        for k in self.quick_variants.iter().flatten() {
            known(k, "quick_variants")?;
        }
        for (i, p) in self.published.iter().enumerate() {
            known(&p.kernel, &format!("published[{i}].kernel"))?;
            let Some(t) = TABLES.iter().find(|t| t.title == p.table) else {
                return Err(format!(
                    "{file}: sweep.published[{i}].table = '{}': unknown (known: {})",
                    p.table,
                    TABLES
                        .iter()
                        .map(|t| t.title)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            };
            if !t.stats.iter().any(|(s, _)| *s == p.stat) {
                return Err(format!(
                    "{file}: sweep.published[{i}].stat = '{}': not a statistic of '{}'",
                    p.stat, p.table
                ));
            }
            if p.values.len() != p.rows.len()
                || !(p.gains.is_empty() || p.gains.len() == p.rows.len())
            {
                return Err(format!(
                    "{file}: sweep.published[{i}]: {} rows but {} values and {} gains",
                    p.rows.len(),
                    p.values.len(),
                    p.gains.len()
                ));
            }
        }
        for (k, v) in [
            ("hackbench_loops", self.hackbench_loops),
            ("hackbench_run_loops", self.hackbench_run_loops),
            ("quick_hackbench_run_loops", self.quick_hackbench_run_loops),
            ("hackbench_runs", self.hackbench_runs),
            ("quick_hackbench_runs", self.quick_hackbench_runs),
        ] {
            if v == 0 {
                return Err(format!("{file}: sweep.{k} must be at least 1"));
            }
        }
        for (k, v) in [
            ("hackbench_groups", &self.hackbench_groups),
            ("quick_hackbench_groups", &self.quick_hackbench_groups),
            ("dbench_clients", &self.dbench_clients),
            ("quick_dbench_clients", &self.quick_dbench_clients),
        ] {
            if v.contains(&0) {
                return Err(format!("{file}: sweep.{k}: 0 is not a count"));
            }
        }
        Ok(())
    }
}

/// The published value of a cell on a variant (and its published gain, %).
fn published_of(spec: &SweepSpec, id: &str, c: &Cell) -> Option<(f64, Option<f64>)> {
    spec.published
        .iter()
        .filter(|p| p.kernel == id && p.table == TABLES[c.table].title && p.stat == c.stat)
        .find_map(|p| {
            let i = p.rows.iter().position(|r| *r == c.row)?;
            Some((p.values[i], p.gains.get(i).copied()))
        })
}

/// The cells of a benchmark at one parameter (clients, groups; 0 for schbench).
fn cells_of(bench: Bench, param: u32, workers: &str) -> Vec<Cell> {
    let mut out = Vec::new();
    for (ti, t) in TABLES.iter().enumerate() {
        if t.bench != bench {
            continue;
        }
        for (stat, src) in t.stats {
            match src {
                Source::WakeupAmean => {
                    for (r, _) in WAKEUP_ROWS {
                        out.push(Cell {
                            table: ti,
                            stat,
                            row: format!("{r}-{workers}"),
                        });
                    }
                }
                Source::RpsHmean => {
                    for (r, _) in RPS_ROWS {
                        out.push(Cell {
                            table: ti,
                            stat,
                            row: format!("{r}-{workers}"),
                        });
                    }
                }
                _ => out.push(Cell {
                    table: ti,
                    stat,
                    row: param.to_string(),
                }),
            }
        }
    }
    out
}

/// A run's figure for each of its cells, from its workload's metrics and series.
fn figures(
    job: &Job,
    w: &crate::run::WorkloadResult,
    workers: &str,
) -> Result<Vec<(Cell, f64)>, String> {
    let metric = |n: &str| -> Result<f64, String> {
        w.metrics
            .iter()
            .find(|m| m.name == n)
            .map(|m| m.value)
            .ok_or_else(|| format!("'{}': the model gives no metric '{n}'", job.line))
    };
    let series = |n: &str| -> Result<&[(u64, u64)], String> {
        w.series
            .iter()
            .find(|(s, _)| s == n)
            .map(|(_, v)| v.as_slice())
            .ok_or_else(|| format!("'{}': the model gives no series '{n}'", job.line))
    };
    let mut out = Vec::new();
    for c in cells_of(job.bench, job.param, workers) {
        let src = TABLES[c.table]
            .stats
            .iter()
            .find(|(s, _)| *s == c.stat)
            .map(|(_, s)| *s)
            .unwrap();
        let v = match src {
            Source::Metric(n) => metric(n)?,
            Source::HackbenchTime => {
                let (run, target) = job.loops.unwrap_or((1, 1));
                scaled_time(
                    metric("startup_s")?,
                    metric("loop_s")?,
                    metric("reap_s")?,
                    run,
                    target,
                )
            }
            Source::WakeupAmean => {
                let name = WAKEUP_ROWS
                    .iter()
                    .find(|(r, _)| c.row.starts_with(&format!("{r}-")))
                    .unwrap()
                    .1;
                schbench_amean(series(name)?)
            }
            Source::RpsHmean => {
                let name = RPS_ROWS
                    .iter()
                    .find(|(r, _)| c.row.starts_with(&format!("{r}-")))
                    .unwrap()
                    .1;
                schbench_hmean(series(name)?)
            }
        };
        out.push((c, v));
    }
    Ok(out)
}

/// Whether this build has a model for the workload line's program.
fn program_known(line: &str) -> Result<(), String> {
    match schedlab_workloads::parse_workload(line) {
        Err(e @ schedlab_workloads::WorkloadError::UnknownProgram { .. }) => Err(e.to_string()),
        _ => Ok(()),
    }
}

/// Builds the job list of a mode.
fn plan(
    sc: &crate::scenario::Scenario,
    spec: &SweepSpec,
    mode: Mode,
    runs: u32,
    hb_runs: u32,
    skipped: &mut Vec<String>,
) -> (Vec<usize>, Vec<Job>, (u32, u32)) {
    let ids: Vec<&str> = sc.variants.iter().map(|v| v.id()).collect();
    let active: Vec<usize> = (0..ids.len())
        .filter(|&i| {
            let id = ids[i];
            if mode.quick {
                match &spec.quick_variants {
                    Some(q) => q.iter().any(|k| k == id),
                    None => !spec.full_only_variants.iter().any(|k| k == id),
                }
            } else {
                true
            }
        })
        .collect();
    let runs_hb = |i: usize| -> bool {
        let id = ids[i];
        match &spec.hackbench_variants {
            Some(h) => h.iter().any(|k| k == id),
            None => !spec.full_only_variants.iter().any(|k| k == id),
        }
    };
    let loops = if mode.full_size {
        spec.hackbench_loops
    } else if mode.quick {
        spec.quick_hackbench_run_loops
    } else {
        spec.hackbench_run_loops
    };
    let groups = if mode.quick {
        &spec.quick_hackbench_groups
    } else {
        &spec.hackbench_groups
    };
    let clients = if mode.quick {
        &spec.quick_dbench_clients
    } else {
        &spec.dbench_clients
    };
    let schbench = spec.schbench(mode.quick).to_string();
    let dbench_ok = mode.skip & SKIP_DBENCH == 0
        && match program_known(&spec.dbench(mode.quick, 1)) {
            Ok(()) => true,
            Err(e) => {
                skipped.push(format!("dbench tables: not run ({e})"));
                false
            }
        };
    for (bit, name) in [
        (SKIP_HACKBENCH, "hackbench"),
        (SKIP_DBENCH, "dbench"),
        (SKIP_SCHBENCH, "schbench"),
    ] {
        if mode.skip & bit != 0 {
            skipped.push(format!("{name} tables: not run (--only)"));
        }
    }
    let mut jobs = Vec::new();
    for &v in &active {
        if runs_hb(v) && mode.skip & SKIP_HACKBENCH == 0 {
            for pipes in [true, false] {
                for &g in groups {
                    for seed in 1..=hb_runs as u64 {
                        jobs.push(Job {
                            variant: v,
                            bench: if pipes {
                                Bench::HackbenchPipes
                            } else {
                                Bench::HackbenchSockets
                            },
                            param: g,
                            seed,
                            line: spec.hackbench(pipes, g, loops),
                            loops: Some((loops, spec.hackbench_loops)),
                        });
                    }
                }
            }
        }
        if dbench_ok {
            for &c in clients {
                for seed in 1..=runs as u64 {
                    jobs.push(Job {
                        variant: v,
                        bench: Bench::Dbench,
                        param: c,
                        seed,
                        line: spec.dbench(mode.quick, c),
                        loops: None,
                    });
                }
            }
        }
        for seed in (1..=runs as u64).filter(|_| mode.skip & SKIP_SCHBENCH == 0) {
            jobs.push(Job {
                variant: v,
                bench: Bench::Schbench,
                param: 0,
                seed,
                line: schbench.clone(),
                loops: None,
            });
        }
    }
    (active, jobs, (loops, spec.hackbench_loops))
}

/// Runs `jobs` through the job runner (largest first), returning each job's result and wall
/// time in job order. `run_one(kernel, line, seed)` is one simulation.
fn run_jobs<F>(
    sc: &crate::scenario::Scenario,
    jobs: &[Job],
    progress: bool,
    jobs_limit: usize,
    run_one: &F,
) -> Vec<(Result<crate::run::RunResult, String>, Duration)>
where
    F: Fn(&str, &str, u64) -> Result<crate::run::RunResult, String> + Sync,
{
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by(|&a, &b| jobs[b].weight().cmp(&jobs[a].weight()).then(a.cmp(&b)));
    let bar = crate::progress::Bar::new(
        progress,
        jobs.len() as u64,
        "{prefix} [{bar:40}] {pos}/{len} runs",
        &sc.name,
    );
    let done = crate::jobs::run_with_bar(order.len(), jobs_limit, bar, |i| {
        let j = &jobs[order[i]];
        let t0 = Instant::now();
        let r = run_one(&sc.variants[j.variant].kernel, &j.line, j.seed);
        (r, t0.elapsed())
    });
    let mut out: Vec<Option<(Result<crate::run::RunResult, String>, Duration)>> =
        (0..jobs.len()).map(|_| None).collect();
    for (k, r) in order.into_iter().zip(done) {
        out[k] = Some(r);
    }
    out.into_iter().map(|r| r.expect("every job ran")).collect()
}

/// One simulation on the scenario's platform.
fn simulate(
    sc: &crate::scenario::Scenario,
    kernel: &str,
    line: &str,
    seed: u64,
) -> Result<crate::run::RunResult, String> {
    // hackbench has no duration of its own and the run stops when it is done, but the default
    // 10 s limit would cut a full-size run of many groups short (296 groups of pipes take
    // ≈ 13 s, of sockets ≈ 50 s): give it an hour.
    let hackbench = line.contains("sched messaging");
    crate::run::run_scenario_line(
        &sc.platform,
        kernel,
        line,
        seed,
        hackbench.then_some(HACKBENCH_LIMIT_NS),
        &sc.cgroups,
    )
}

/// `reproduce` of a scenario of kind sweep.
pub fn execute_scenario(
    sc: &crate::scenario::Scenario,
    spec: &SweepSpec,
    runs: Option<u32>,
    mode: Mode,
    progress: bool,
    jobs: Option<usize>,
) -> Result<SweepOutcome, crate::scenario::ScenarioError> {
    use crate::scenario::ScenarioError;
    let runs = runs.unwrap_or(if mode.quick { sc.quick_runs } else { sc.runs });
    crate::scenario::check_runs(runs)
        .map_err(|m| ScenarioError::Input(format!("--runs {runs}: {m}")))?;
    let hb_runs = if mode.quick {
        spec.quick_hackbench_runs
    } else {
        spec.hackbench_runs
    };
    let mut skipped = Vec::new();
    let (active, jobs_list, hb_loops) = plan(sc, spec, mode, runs, hb_runs, &mut skipped);
    let workers = spec.schbench_workers(mode.quick);
    let jobs_limit = jobs.unwrap_or_else(crate::jobs::default_jobs);
    let results = run_jobs(
        sc,
        &jobs_list,
        progress,
        jobs_limit,
        &|k: &str, l: &str, s: u64| simulate(sc, k, l, s),
    );
    collect(
        sc, spec, mode, runs, hb_runs, &active, &jobs_list, results, hb_loops, skipped, &workers,
    )
    .map_err(ScenarioError::Input)
}

/// Puts the runs' figures into the variants' cells, in table order.
#[allow(clippy::too_many_arguments)]
fn collect(
    sc: &crate::scenario::Scenario,
    spec: &SweepSpec,
    mode: Mode,
    runs: u32,
    hb_runs: u32,
    active: &[usize],
    jobs: &[Job],
    results: Vec<(Result<crate::run::RunResult, String>, Duration)>,
    hb_loops: (u32, u32),
    skipped: Vec<String>,
    workers: &str,
) -> Result<SweepOutcome, String> {
    let mut per: Vec<Vec<(Cell, Vec<f64>)>> = vec![Vec::new(); sc.variants.len()];
    let mut timings = Vec::new();
    let mut lines: Vec<(Bench, String)> = Vec::new();
    for (j, (r, wall)) in jobs.iter().zip(results) {
        let r = r.map_err(|e| {
            format!(
                "{} '{}' seed {}: {e}",
                sc.variants[j.variant].kernel, j.line, j.seed
            )
        })?;
        timings.push((
            format!(
                "{} · {} · seed {}",
                sc.variants[j.variant].id(),
                j.line,
                j.seed
            ),
            wall,
        ));
        if !lines.iter().any(|(b, _)| *b == j.bench) {
            lines.push((j.bench, j.line.clone()));
        }
        let w = r
            .workloads
            .first()
            .ok_or_else(|| format!("'{}': no workload result", j.line))?;
        for (c, v) in figures(j, w, workers)? {
            match per[j.variant].iter_mut().find(|(x, _)| *x == c) {
                Some((_, xs)) => xs.push(v),
                None => per[j.variant].push((c, vec![v])),
            }
        }
    }
    // table order, then the row order of the sweep (as run)
    for cells in per.iter_mut() {
        cells.sort_by_key(|(c, _)| c.table);
    }
    let variants = active
        .iter()
        .map(|&i| {
            let v = &sc.variants[i];
            (
                v.id().to_string(),
                v.kernel.clone(),
                v.label.clone(),
                v.relative_to.clone().unwrap_or_else(|| sc.baseline.clone()),
            )
        })
        .collect();
    let cells = active
        .iter()
        .map(|&i| std::mem::take(&mut per[i]))
        .collect();
    Ok(SweepOutcome {
        mode,
        variants,
        baseline: sc.baseline.clone(),
        spec: spec.clone(),
        cells,
        hackbench_loops: hb_loops,
        skipped,
        lines,
        runs,
        hackbench_runs: hb_runs,
        timings,
        notes: sc.notes.clone(),
    })
}

/// Sort key of a cell inside its table: statistic order, then the row (numbers ascending,
/// schbench rows in mmtests' order).
fn cell_key(c: &Cell) -> (usize, usize, u64) {
    let t = &TABLES[c.table];
    let si = t.stats.iter().position(|(s, _)| *s == c.stat).unwrap_or(0);
    let ri = c
        .row
        .parse::<u64>()
        .ok()
        .or_else(|| {
            WAKEUP_ROWS
                .iter()
                .chain(RPS_ROWS.iter())
                .position(|(r, _)| c.row.starts_with(&format!("{r}-")))
                .map(|i| i as u64)
        })
        .unwrap_or(u64::MAX);
    (c.table, si, ri)
}

/// One report row (the JSON row shape of every scenario, plus a note).
#[derive(Debug, Clone, PartialEq)]
pub struct OutRow {
    pub variant: String,
    pub metric: String,
    pub unit: &'static str,
    pub published: Option<f64>,
    pub simulated: Option<f64>,
    pub simulated_stddev: Option<f64>,
    pub note: Option<String>,
}

/// One acceptance check.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub description: String,
    pub simulated: Option<f64>,
    pub pass: bool,
}

/// The consistency points of the reference column (W§12.3): (table, stat, row, value, what).
const CONSISTENCY: [(&str, &str, &str, f64, &str); 5] = [
    (
        "schbench Requests Per Second",
        "Hmean",
        "RPS-50th",
        9000.0,
        "≈ 9 000 RPS",
    ),
    (
        "hackbench-process-pipes",
        "Amean",
        "1",
        0.2657,
        "1 group ≈ 0.27 s",
    ),
    (
        "hackbench-process-pipes",
        "Amean",
        "296",
        16.1007,
        "296 groups ≈ 16 s",
    ),
    (
        "dbench4 Loadfile Execution Time",
        "Amean",
        "1",
        14.62,
        "1 client ≈ 14.6 ms per loadfile",
    ),
    (
        "dbench4 Throughput",
        "Hmean",
        "1",
        1268.80,
        "1 client ≈ 1 270 MB/s",
    ),
];

impl SweepOutcome {
    fn vi(&self, id: &str) -> Option<usize> {
        self.variants.iter().position(|v| v.0 == id)
    }

    fn samples(&self, v: usize, c: &Cell) -> Option<&[f64]> {
        self.cells[v]
            .iter()
            .find(|(x, _)| x == c)
            .map(|(_, xs)| xs.as_slice())
            .filter(|xs| !xs.is_empty())
    }

    /// Simulated mean of a cell on a variant.
    pub fn mean(&self, id: &str, c: &Cell) -> Option<f64> {
        self.vi(id).and_then(|v| self.samples(v, c)).map(amean)
    }

    /// The variant's cells: those it ran and those it has a published value for, in table
    /// order.
    fn cells_of_variant(&self, v: usize) -> Vec<Cell> {
        let id = &self.variants[v].0;
        let mut out: Vec<Cell> = self.cells[v].iter().map(|(c, _)| c.clone()).collect();
        for p in self.spec.published.iter().filter(|p| p.kernel == *id) {
            let Some(ti) = TABLES.iter().position(|t| t.title == p.table) else {
                continue;
            };
            let stat = TABLES[ti]
                .stats
                .iter()
                .find(|(s, _)| *s == p.stat)
                .map(|(s, _)| *s)
                .unwrap_or("Amean");
            for r in &p.rows {
                let c = Cell {
                    table: ti,
                    stat,
                    row: r.clone(),
                };
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        out.sort_by_key(cell_key);
        out
    }

    /// Simulated gain (fraction) of a cell on variant `v` against its reference.
    fn sim_gain(&self, v: usize, c: &Cell) -> Option<f64> {
        let (id, _, _, reference) = &self.variants[v];
        if reference == id {
            return None;
        }
        let x = self.mean(id, c)?;
        let b = self.mean(reference, c)?;
        Some(gain(b, x, TABLES[c.table].higher_better))
    }

    /// Whether the cell's published value on variant `v` comes from another posting (the
    /// sockets table, published on v2 and compared here with v5).
    fn published_elsewhere(&self, v: usize, c: &Cell) -> bool {
        TABLES[c.table].bench == Bench::HackbenchSockets
            && self.variants[v].0 == self.spec.patched
            && published_of(&self.spec, &self.variants[v].0, c).is_some()
    }

    /// The note of a cell on a variant: scaled hackbench, the v2 sockets column.
    fn note(&self, v: usize, c: &Cell) -> Option<String> {
        let t = &TABLES[c.table];
        let mut notes = Vec::new();
        let hb = matches!(t.bench, Bench::HackbenchPipes | Bench::HackbenchSockets);
        if hb && self.samples(v, c).is_some() && self.hackbench_loops.0 != self.hackbench_loops.1 {
            notes.push(format!(
                "scaled: run at -l {}, start-up + reaping + {} × the loop phase (unrounded)",
                self.hackbench_loops.0,
                self.hackbench_loops.1 as f64 / self.hackbench_loops.0 as f64
            ));
        }
        if self.published_elsewhere(v, c) {
            notes.push(
                self.spec
                    .sockets_note
                    .clone()
                    .unwrap_or_else(|| "published on v2".into()),
            );
        }
        (!notes.is_empty()).then(|| notes.join("; "))
    }

    /// The report rows: every cell a variant ran or has a published value for (each published
    /// value on exactly one row), then, for variants with a reference other than themselves,
    /// one gain row per cell (%, with the published gain where there is one).
    pub fn rows(&self) -> Vec<OutRow> {
        let mut out = Vec::new();
        for v in 0..self.variants.len() {
            let id = &self.variants[v].0;
            let cells = self.cells_of_variant(v);
            for c in &cells {
                let xs = self.samples(v, c);
                out.push(OutRow {
                    variant: id.clone(),
                    metric: c.metric(),
                    unit: TABLES[c.table].unit,
                    published: published_of(&self.spec, id, c).map(|p| p.0),
                    simulated: xs.map(amean),
                    simulated_stddev: xs.map(stddev),
                    note: self.note(v, c),
                });
            }
            if self.variants[v].3 == *id {
                continue;
            }
            for c in &cells {
                let pg = published_of(&self.spec, id, c).and_then(|p| p.1);
                let sg = self.sim_gain(v, c).map(|g| g * 100.0);
                if pg.is_none() && sg.is_none() {
                    continue;
                }
                out.push(OutRow {
                    variant: id.clone(),
                    metric: format!("{} gain", c.metric()),
                    unit: "%",
                    published: pg,
                    simulated: sg,
                    simulated_stddev: None,
                    note: Some(format!(
                        "against {}; positive is better",
                        self.variants[v].3
                    )),
                });
            }
        }
        out
    }

    /// The mark of a cell on the patched variant: SIGN/SIZE for the acceptance cells,
    /// `exempt` for the noise-level ones.
    fn mark(&self, v: usize, c: &Cell) -> &'static str {
        if self.variants[v].0 != self.spec.patched {
            return "";
        }
        if exempt_cell(c) {
            return "exempt";
        }
        if !acceptance_cell(c) {
            return "";
        }
        let (Some(p), Some(s)) = (
            published_of(&self.spec, &self.variants[v].0, c).and_then(|p| p.1),
            self.sim_gain(v, c),
        ) else {
            return "";
        };
        sign_size(p / 100.0, s)
    }

    /// The acceptance checks of W§12.3 on the cells that ran.
    pub fn checks(&self) -> Vec<Check> {
        let mut out = Vec::new();
        if let Some(b) = self.vi(&self.baseline) {
            let workers = self.spec.schbench_workers(self.mode.quick);
            for (table, stat, row, value, what) in CONSISTENCY {
                let Some(ti) = TABLES.iter().position(|t| t.title == table) else {
                    continue;
                };
                let row = if row.starts_with("RPS") {
                    format!("{row}-{workers}")
                } else {
                    row.to_string()
                };
                let c = Cell {
                    table: ti,
                    stat: TABLES[ti].stats.iter().find(|(s, _)| *s == stat).unwrap().0,
                    row,
                };
                let Some(xs) = self.samples(b, &c) else {
                    continue;
                };
                let ratio = amean(xs) / value;
                out.push(Check {
                    description: format!(
                        "{}: {} ({}) within ±20 % of {value} (simulated / published)",
                        self.baseline,
                        c.metric(),
                        what
                    ),
                    simulated: Some(ratio),
                    pass: (0.8..=1.2).contains(&ratio),
                });
            }
        }
        if let Some(p) = self.vi(&self.spec.patched) {
            for c in self.cells_of_variant(p) {
                if !acceptance_cell(&c) {
                    continue;
                }
                let (Some(pg), Some(sg)) = (
                    published_of(&self.spec, &self.spec.patched, &c).and_then(|x| x.1),
                    self.sim_gain(p, &c),
                ) else {
                    continue;
                };
                let mark = sign_size(pg / 100.0, sg);
                out.push(Check {
                    description: format!(
                        "{}: gain of {} has the published sign and is within a factor of 2 of {:+.2} % (simulated gain, %)",
                        self.spec.patched,
                        c.metric(),
                        pg
                    ),
                    simulated: Some(sg * 100.0),
                    pass: mark.is_empty(),
                });
            }
        }
        out
    }

    fn fmt_value(&self, c: &Cell, x: f64) -> String {
        if TABLES[c.table].unit == "s" {
            format!("{x:.4}")
        } else {
            format!("{x:.2}")
        }
    }

    /// The text report: the tables mmtests-style, published beside simulated.
    pub fn render(&self, name: &str, title: &str, seed: &str, platform: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{name} — {title}");
        let _ = writeln!(
            s,
            "seed {seed} · platform {platform} · {} seed(s) per dbench/schbench cell, {} run(s) per hackbench cell{}",
            self.runs,
            self.hackbench_runs,
            if self.mode.quick { " (quick)" } else { "" }
        );
        for (b, l) in &self.lines {
            let _ = writeln!(s, "  {}: '{l}'", b.name());
        }
        let (run, target) = self.hackbench_loops;
        if run != target {
            let _ = writeln!(
                s,
                "  hackbench: run at -l {run}; reported = start-up + reaping + {} × loop phase, from the unrounded simulated times (--full-size runs -l {target})",
                target as f64 / run as f64
            );
        }
        for k in &self.skipped {
            let _ = writeln!(s, "  {k}");
        }
        for (ti, t) in TABLES.iter().enumerate() {
            let vs: Vec<usize> = (0..self.variants.len())
                .filter(|&v| self.cells_of_variant(v).iter().any(|c| c.table == ti))
                .collect();
            if vs.is_empty() {
                continue;
            }
            let _ = writeln!(
                s,
                "\n  {} ({}, {} is better)",
                t.title,
                t.unit,
                if t.higher_better { "higher" } else { "lower" }
            );
            for &v in &vs {
                let (id, _, label, reference) = &self.variants[v];
                let _ = writeln!(
                    s,
                    "    column {id}: {label}{}",
                    if reference != id {
                        format!(" (gain against {reference})")
                    } else {
                        String::new()
                    }
                );
            }
            // a column shows published values only if its variant has some in this table
            let has_pub = |v: usize| {
                self.spec
                    .published
                    .iter()
                    .any(|p| p.kernel == self.variants[v].0 && p.table == t.title)
            };
            let mut head = format!("    {:<24}", "");
            for &v in &vs {
                let other = self.variants[v].3 != self.variants[v].0;
                let _ = write!(
                    head,
                    " | {}{:>20}{}{}",
                    if has_pub(v) {
                        format!("{:>10} ", "published")
                    } else {
                        String::new()
                    },
                    "simulated ± sd",
                    if other && has_pub(v) {
                        "   pub gain"
                    } else {
                        ""
                    },
                    if other { "   sim gain" } else { "" }
                );
            }
            let _ = writeln!(s, "{head}");
            let mut rows: Vec<Cell> = Vec::new();
            for &v in &vs {
                for c in self.cells_of_variant(v) {
                    if c.table == ti && !rows.contains(&c) {
                        rows.push(c);
                    }
                }
            }
            rows.sort_by_key(cell_key);
            for c in &rows {
                let mut line = format!("    {:<24}", format!("{} {}", c.stat, c.row));
                let mut marks = Vec::new();
                for &v in &vs {
                    let id = &self.variants[v].0;
                    let publ = published_of(&self.spec, id, c);
                    let sim = self.samples(v, c).map(|xs| (amean(xs), stddev(xs)));
                    let _ = write!(line, " | ");
                    if has_pub(v) {
                        let _ = write!(
                            line,
                            "{:>10} ",
                            publ.map(|p| self.fmt_value(c, p.0))
                                .unwrap_or_else(|| "—".into())
                        );
                    }
                    let _ = write!(
                        line,
                        "{:>20}",
                        sim.map(|(m, d)| format!(
                            "{} ± {}",
                            self.fmt_value(c, m),
                            self.fmt_value(c, d)
                        ))
                        .unwrap_or_else(|| "—".into()),
                    );
                    if self.variants[v].3 != *id {
                        if has_pub(v) {
                            let _ = write!(
                                line,
                                " {:>10}",
                                publ.and_then(|p| p.1)
                                    .map(|g| format!("{g:+.2}%"))
                                    .unwrap_or_else(|| "—".into())
                            );
                        }
                        let _ = write!(
                            line,
                            " {:>10}",
                            self.sim_gain(v, c)
                                .map(|g| format!("{:+.2}%", g * 100.0))
                                .unwrap_or_else(|| "—".into())
                        );
                    }
                    let m = self.mark(v, c);
                    if !m.is_empty() {
                        marks.push(m);
                    }
                    if self.published_elsewhere(v, c) && !marks.contains(&"†") {
                        marks.push("†");
                    }
                }
                let _ = writeln!(s, "{line} {}", marks.join(" "));
            }
            if t.bench == Bench::HackbenchSockets {
                if let Some(n) = &self.spec.sockets_note {
                    let _ = writeln!(s, "    † {n}");
                }
            }
        }
        let _ = writeln!(
            s,
            "\n  gain: mmtests' column, positive is better. SIGN: opposite direction to the published gain; SIZE: more than a factor of 2 off; exempt: noise-level cells (W§12.3)."
        );
        let _ = writeln!(s, "\n  acceptance (docs/model.md W§12.3):");
        for c in self.checks() {
            let _ = writeln!(
                s,
                "    [{}] {} — simulated {}",
                if c.pass { "ok" } else { "MISS" },
                c.description,
                c.simulated
                    .map(|x| format!("{x:.3}"))
                    .unwrap_or_else(|| "—".into())
            );
        }
        for n in &self.notes {
            let _ = writeln!(s, "\n  note: {n}");
        }
        if self.mode.quick {
            let _ = writeln!(
                s,
                "    [full run only] the cells the quick mode does not run (hackbench 296 groups, dbench ≥ 30 clients but 48 and 141)"
            );
        }
        s
    }

    /// The `--json` document, in the shape of every scenario's (rows carry a `note`).
    pub fn json(&self, name: &str) -> Value {
        let rows: Vec<Value> = self
            .rows()
            .into_iter()
            .map(|r| {
                json!({"variant": r.variant, "metric": r.metric, "unit": r.unit,
                       "published": r.published, "simulated": r.simulated,
                       "simulated_stddev": r.simulated_stddev, "note": r.note})
            })
            .collect();
        let targets: Vec<Value> = self
            .checks()
            .into_iter()
            .map(
                |c| json!({"description": c.description, "simulated": c.simulated, "pass": c.pass}),
            )
            .collect();
        json!({"scenario": name, "quick": self.mode.quick, "runs": self.runs,
               "hackbench_runs": self.hackbench_runs,
               "hackbench_loops": {"run": self.hackbench_loops.0, "published": self.hackbench_loops.1},
               "rows": rows, "targets": targets})
    }

    /// The wall time of the runs, for stderr: total, the slowest runs, and per benchmark.
    pub fn timing_summary(&self) -> String {
        let mut s = String::new();
        let total: Duration = self.timings.iter().map(|t| t.1).sum();
        let _ = writeln!(
            s,
            "{} runs, {:.1} s of simulation (summed over the worker threads)",
            self.timings.len(),
            total.as_secs_f64()
        );
        let mut v: Vec<&(String, Duration)> = self.timings.iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        for (d, w) in v.iter().take(5) {
            let _ = writeln!(s, "  {:>8.2} s  {d}", w.as_secs_f64());
        }
        s
    }
}

/// SIGN when the simulated gain goes the other way, SIZE when it is more than a factor of 2
/// off the published one (both fractions).
pub fn sign_size(published: f64, simulated: f64) -> &'static str {
    if published == 0.0 {
        return "";
    }
    if simulated == 0.0 || published.signum() != simulated.signum() {
        return "SIGN";
    }
    let r = simulated / published;
    if !(0.5..=2.0).contains(&r) {
        return "SIZE";
    }
    ""
}

/// `reproduce NAME --check-scaling`: hackbench at the reproduction's `-l` scaled, against the
/// published `-l`, seed 1, on the baseline and the patched kernel, pipes and sockets.
pub struct ScalingOutcome {
    /// (kernel id, transport, groups, scaled s, full s, phases of the scaled run (s)).
    pub cells: Vec<(String, &'static str, u32, f64, f64, [f64; 3])>,
    /// Per cell: how long each tenth of the full run's messages took to be read (s), from its
    /// `messages_read` series — a steady loop phase has ten equal tenths.
    pub tenths: Vec<Vec<f64>>,
    pub loops: (u32, u32),
    pub timings: Vec<(String, Duration)>,
}

/// How long each tenth of the messages took, from a `messages_read` series of 100 points
/// (s; empty if the series is shorter): point 10·i − 1 is the end of tenth i.
pub fn tenths(points: &[(u64, u64)]) -> Vec<f64> {
    if points.len() < 100 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut prev: Option<u64> = None;
    for i in 1..=10 {
        let t = points[10 * i - 1].0;
        if let Some(p) = prev {
            out.push((t - p) as f64 / 1e9);
        }
        prev = Some(t);
    }
    out
}

/// The groups of the scaling check: the small ones now, the four with `--full-size`.
pub fn scaling_groups(full_size: bool) -> Vec<u32> {
    if full_size {
        vec![1, 12, 48, 296]
    } else {
        vec![1, 12]
    }
}

/// The 1 % rule.
pub fn scaling_ok(scaled: f64, full: f64) -> bool {
    full > 0.0 && (scaled / full - 1.0).abs() <= 0.01
}

pub fn check_scaling(
    sc: &crate::scenario::Scenario,
    spec: &SweepSpec,
    groups: &[u32],
    progress: bool,
    jobs: Option<usize>,
) -> Result<ScalingOutcome, crate::scenario::ScenarioError> {
    use crate::scenario::ScenarioError;
    let kernels: Vec<(String, String)> = [&sc.baseline, &spec.patched]
        .iter()
        .filter_map(|id| sc.variants.iter().find(|v| v.id() == id.as_str()))
        .map(|v| (v.id().to_string(), v.kernel.clone()))
        .collect();
    let loops = (spec.hackbench_run_loops, spec.hackbench_loops);
    let mut list = Vec::new();
    for (k, (_, kernel)) in kernels.iter().enumerate() {
        for pipes in [true, false] {
            for &g in groups {
                for l in [loops.0, loops.1] {
                    list.push((k, kernel.clone(), pipes, g, l));
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..list.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(list[i].3 as u64 * list[i].4 as u64), i));
    let bar = crate::progress::Bar::new(
        progress,
        list.len() as u64,
        "{prefix} [{bar:40}] {pos}/{len} runs",
        &format!("{} --check-scaling", sc.name),
    );
    let done = crate::jobs::run_with_bar(
        order.len(),
        jobs.unwrap_or_else(crate::jobs::default_jobs),
        bar,
        |i| {
            let (_, kernel, pipes, g, l) = &list[order[i]];
            let t0 = Instant::now();
            let r = simulate(sc, kernel, &spec.hackbench(*pipes, *g, *l), 1);
            (r, t0.elapsed())
        },
    );
    let mut res: Vec<Option<([f64; 3], Vec<f64>, Duration)>> = vec![None; list.len()];
    for (k, (r, wall)) in order.into_iter().zip(done) {
        let r = r.map_err(ScenarioError::Input)?;
        let w = r
            .workloads
            .first()
            .ok_or_else(|| ScenarioError::Input("hackbench run without a workload".into()))?;
        let m = |n: &str| {
            w.metrics
                .iter()
                .find(|x| x.name == n)
                .map(|x| x.value)
                .ok_or_else(|| ScenarioError::Input(format!("hackbench gives no '{n}'")))
        };
        let read = w
            .series
            .iter()
            .find(|(n, _)| n == "messages_read")
            .map(|(_, v)| tenths(v))
            .unwrap_or_default();
        res[k] = Some(([m("startup_s")?, m("loop_s")?, m("reap_s")?], read, wall));
    }
    let mut out = ScalingOutcome {
        tenths: Vec::new(),
        cells: Vec::new(),
        loops,
        timings: Vec::new(),
    };
    for pair in list.chunks(2).zip(res.chunks(2)) {
        let ((k, _, pipes, g, _), [Some((small, _, w0)), Some((big, read, w1))]) =
            (&pair.0[0], pair.1)
        else {
            continue;
        };
        out.tenths.push(read.clone());
        let scaled = scaled_time(small[0], small[1], small[2], loops.0, loops.1);
        let full = big.iter().sum::<f64>();
        let t = if *pipes { "pipes" } else { "sockets" };
        out.timings
            .push((format!("{} {t} -g {g} -l {}", kernels[*k].0, loops.0), *w0));
        out.timings
            .push((format!("{} {t} -g {g} -l {}", kernels[*k].0, loops.1), *w1));
        out.cells
            .push((kernels[*k].0.clone(), t, *g, scaled, full, *small));
    }
    Ok(out)
}

impl ScalingOutcome {
    pub fn render(&self, name: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{name} --check-scaling — hackbench -l {} scaled (start-up + reaping + {} × loop) against -l {}, seed 1; rule: within 1 %",
            self.loops.0,
            self.loops.1 as f64 / self.loops.0 as f64,
            self.loops.1
        );
        let _ = writeln!(
            s,
            "  {:<44} {:>8} {:>6} {:>12} {:>12} {:>9} {:>10} {:>10} {:>10}",
            "kernel", "", "groups", "scaled s", "full s", "diff", "start-up", "loop", "reap"
        );
        for (k, t, g, sc, f, ph) in &self.cells {
            let _ = writeln!(
                s,
                "  {:<44} {:>8} {:>6} {:>12.6} {:>12.6} {:>+8.3}% {:>10.6} {:>10.6} {:>10.6} {}",
                k,
                t,
                g,
                sc,
                f,
                (sc / f - 1.0) * 100.0,
                ph[0],
                ph[1],
                ph[2],
                if scaling_ok(*sc, *f) { "ok" } else { "MISS" }
            );
        }
        let _ = writeln!(
            s,
            "\n  time (ms) for each of the tenths 2–10 of the -l {} runs' messages (steady = equal):",
            self.loops.1
        );
        for ((k, t, g, _, _, _), d) in self.cells.iter().zip(&self.tenths) {
            let v: Vec<String> = d.iter().map(|x| format!("{:.1}", x * 1e3)).collect();
            let _ = writeln!(s, "  {:<44} {:>8} {:>6}  {}", k, t, g, v.join(" "));
        }
        s
    }

    pub fn json(&self, name: &str) -> Value {
        let rows: Vec<Value> = self
            .cells
            .iter()
            .map(|(k, t, g, sc, f, _)| {
                json!({"variant": k, "metric": format!("hackbench-process-{t} {g} groups: -l {} scaled / -l {} − 1", self.loops.0, self.loops.1),
                       "unit": "fraction", "published": null, "simulated": sc / f - 1.0,
                       "simulated_stddev": null, "note": null})
            })
            .collect();
        let targets: Vec<Value> = self
            .cells
            .iter()
            .map(|(k, t, g, sc, f, _)| {
                json!({"description": format!("{k}: hackbench-process-{t} {g} groups, scaled within 1 % of -l {}", self.loops.1),
                       "simulated": sc / f - 1.0, "pass": scaling_ok(*sc, *f)})
            })
            .collect();
        json!({"scenario": format!("{name} --check-scaling"), "quick": false, "runs": 1, "rows": rows, "targets": targets})
    }

    pub fn timing_summary(&self) -> String {
        let mut s = String::new();
        for (d, w) in &self.timings {
            let _ = writeln!(s, "  {:>8.2} s  {d}", w.as_secs_f64());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_keeps_the_named_benchmarks() {
        // --only schbench: hackbench (1) and dbench (2) left out
        assert_eq!(parse_only("schbench"), Ok(SKIP_HACKBENCH | SKIP_DBENCH));
        assert_eq!(parse_only("dbench, hackbench"), Ok(SKIP_SCHBENCH));
        assert_eq!(parse_only("hackbench,dbench,schbench"), Ok(0));
        assert!(parse_only("tbench").unwrap_err().contains("'tbench'"));
    }

    use super::*;
    use schedlab_workloads::{Better, Metric};

    const V5: &str = "v6.18+aceccac58ad7+e837456fdca8";

    fn scenario() -> (crate::scenario::Scenario, SweepSpec) {
        let sc = crate::scenario::load("next-buddy").unwrap();
        let sw = sc.sweep.clone().unwrap();
        (sc, sw)
    }

    /// An outcome of the quick variants with hand-made samples per (variant, cell).
    fn outcome(samples: &[(&str, Cell, Vec<f64>)], quick: bool) -> SweepOutcome {
        let (sc, sw) = scenario();
        let ids: Vec<&str> = if quick {
            vec!["v6.18", V5]
        } else {
            sc.variants.iter().map(|v| v.id()).collect()
        };
        let variants: Vec<(String, String, String, String)> = ids
            .iter()
            .map(|id| {
                let v = sc.variants.iter().find(|v| v.id() == *id).unwrap();
                (
                    id.to_string(),
                    v.kernel.clone(),
                    v.label.clone(),
                    v.relative_to.clone().unwrap_or_else(|| sc.baseline.clone()),
                )
            })
            .collect();
        let cells = ids
            .iter()
            .map(|id| {
                samples
                    .iter()
                    .filter(|(k, _, _)| k == id)
                    .map(|(_, c, xs)| (c.clone(), xs.clone()))
                    .collect()
            })
            .collect();
        SweepOutcome {
            mode: Mode {
                quick,
                full_size: false,
                skip: 0,
            },
            variants,
            baseline: sc.baseline.clone(),
            spec: sw,
            cells,
            hackbench_loops: (1000, 10000),
            skipped: Vec::new(),
            lines: Vec::new(),
            runs: 2,
            hackbench_runs: 3,
            timings: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn cell(title: &str, stat: &'static str, row: &str) -> Cell {
        Cell {
            table: TABLES.iter().position(|t| t.title == title).unwrap(),
            stat,
            row: row.into(),
        }
    }

    #[test]
    fn gain_and_scaling_arithmetic() {
        // mmtests' gain from the seed's own rows: Throughput 48 clients
        // (11820.40 − 9540.14) / 9540.14 = 2280.26 / 9540.14 = 0.239017 (published 23.90 %);
        // Loadfile 48 clients (95.91 − 77.22) / 95.91 = 18.69 / 95.91 = 0.194870 (19.49 %);
        // pipes 48 groups (3.5023 − 3.9197) / 3.5023 = −0.119178 (−11.92 %)
        assert!((gain(9540.14, 11820.40, true) - 0.239017).abs() < 1e-6);
        assert!((gain(95.91, 77.22, false) - 0.194870).abs() < 1e-6);
        assert!((gain(3.5023, 3.9197, false) + 0.119178).abs() < 1e-6);
        // scaled hackbench: 10 ms start-up + 10000 / 1000 × 20 ms loop + 5 ms reaping = 0.215 s
        assert!((scaled_time(0.010, 0.020, 0.005, 1000, 10000) - 0.215).abs() < 1e-12);
        // unscaled: the three phases add up
        assert!((scaled_time(0.010, 0.020, 0.005, 10000, 10000) - 0.035).abs() < 1e-12);
        assert!(scaling_ok(1.0099, 1.0) && !scaling_ok(1.0101, 1.0) && !scaling_ok(0.9899, 1.0));
    }

    #[test]
    fn schbench_interval_means_on_hand_values() {
        // three 10-s intervals with wakeup p99 7, 8, 12 µs: Amean 27 / 3 = 9
        let wake = [
            (10_000_000_000, 7),
            (20_000_000_000, 8),
            (30_000_000_000, 12),
        ];
        assert_eq!(schbench_amean(&wake), 9.0);
        // RPS 8000 and 10000: Hmean 2 / (1/8000 + 1/10000) = 2 / 0.000225 = 8888.89
        let rps = [(10_000_000_000, 8000), (20_000_000_000, 10000)];
        assert!((schbench_hmean(&rps) - 80000.0 / 9.0).abs() < 1e-9);
        // Stddev over seeds is the sample one: (1, 2, 3, 4) → sqrt(5 / 3)
        assert!((stddev(&[1.0, 2.0, 3.0, 4.0]) - (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn tenths_of_the_messages() {
        // 100 points, message count 24·(i+1) read at time (i+1)² µs: tenth k ends at point
        // 10k − 1, time (10k)² µs; tenths 2..10 take (10k)² − (10(k−1))² = 100(2k − 1) µs
        let pts: Vec<(u64, u64)> = (1..=100u64).map(|i| (i * i * 1000, 24 * i)).collect();
        let d = tenths(&pts);
        assert_eq!(d.len(), 9);
        for (j, x) in d.iter().enumerate() {
            let k = j as f64 + 2.0;
            assert!((x - 100.0 * (2.0 * k - 1.0) * 1e-6).abs() < 1e-12);
        }
        assert!(tenths(&pts[..99]).is_empty());
    }

    #[test]
    fn sign_and_size_marks() {
        assert_eq!(sign_size(0.239, 0.30), "");
        assert_eq!(sign_size(0.239, -0.05), "SIGN");
        assert_eq!(sign_size(0.239, 0.0), "SIGN");
        // 0.60 / 0.239 = 2.51 and 0.10 / 0.239 = 0.42: outside a factor of 2
        assert_eq!(sign_size(0.239, 0.60), "SIZE");
        assert_eq!(sign_size(0.239, 0.10), "SIZE");
        assert_eq!(sign_size(-0.1192, -0.20), "");
    }

    /// The scenario parses; its published tables are the seed's: 11 + 22 + 22 + 15 + 15 + 4 + 4
    /// = 93 rows per column, two columns, gains on the patched one.
    #[test]
    fn scenario_parses_with_the_seed_tables() {
        let (sc, sw) = scenario();
        assert_eq!(sc.kind.as_deref(), Some("sweep"));
        assert_eq!(sc.platform, "x86-2s-80");
        let n: usize = sw.published.iter().map(|p| p.values.len()).sum();
        let g: usize = sw.published.iter().map(|p| p.gains.len()).sum();
        assert_eq!((n, g), (186, 93));
        assert!(sw
            .published
            .iter()
            .all(|p| (p.kernel == V5) != p.gains.is_empty()));
        // spot checks against the seed text
        let o = outcome(&[], false);
        let val = |k: &str, c: &Cell| published_of(&o.spec, k, c);
        assert_eq!(
            val("v6.18", &cell("hackbench-process-pipes", "Amean", "296")),
            Some((16.1007, None))
        );
        assert_eq!(
            val(
                V5,
                &cell("schbench Wakeup Latency", "Amean", "Wakeup-99.9th-80")
            ),
            Some((328.22, Some(89.72)))
        );
        assert_eq!(
            val(
                V5,
                &cell("dbench4 All Clients Loadfile Execution Time", "Stddev", "7")
            ),
            Some((764.42, Some(-63.60)))
        );
        assert_eq!(
            val("v6.19", &cell("dbench4 Throughput", "Hmean", "1")),
            None
        );
    }

    /// Every published number is on exactly one JSON row, on its variant, in its table's unit;
    /// every other row has `published: null`.
    #[test]
    fn published_values_land_on_exactly_one_row() {
        for quick in [true, false] {
            let o = outcome(&[], quick);
            let rows = o.rows();
            let mut expected = 0;
            for p in &o.spec.published {
                let t = TABLES.iter().find(|t| t.title == p.table).unwrap();
                for (i, r) in p.rows.iter().enumerate() {
                    let m = format!("{} {} {}", p.table, p.stat, r);
                    let hits: Vec<&OutRow> = rows
                        .iter()
                        .filter(|x| x.metric == m && x.variant == p.kernel && x.published.is_some())
                        .collect();
                    assert_eq!(hits.len(), 1, "{} {m}", p.kernel);
                    assert_eq!(hits[0].variant, p.kernel);
                    assert_eq!(hits[0].published, Some(p.values[i]));
                    assert_eq!(hits[0].unit, t.unit);
                    if let Some(g) = p.gains.get(i) {
                        let gm = format!("{m} gain");
                        let hits: Vec<&OutRow> = rows
                            .iter()
                            .filter(|x| {
                                x.metric == gm && x.variant == p.kernel && x.published.is_some()
                            })
                            .collect();
                        assert_eq!(hits.len(), 1, "{gm}");
                        assert_eq!((hits[0].published, hits[0].unit), (Some(*g), "%"));
                        expected += 1;
                    }
                    expected += 1;
                }
            }
            assert_eq!(expected, 186 + 93);
            assert_eq!(
                rows.iter().filter(|r| r.published.is_some()).count(),
                expected
            );
            // the sockets column of v5 says where it was published
            let s = rows
                .iter()
                .find(|r| r.variant == V5 && r.metric == "hackbench-process-sockets Amean 48")
                .unwrap();
            assert!(s.note.as_deref().unwrap().contains("published on v2"));
            // JSON: the rows of every scenario plus a note
            let j = o.json("next-buddy");
            let r0 = &j["rows"][0];
            for k in [
                "variant",
                "metric",
                "unit",
                "published",
                "simulated",
                "simulated_stddev",
            ] {
                assert!(r0.get(k).is_some(), "{k}");
            }
        }
    }

    /// Full mode: the unpublished columns (v6.19, the preempt=lazy pair) show simulated values
    /// and gains against their own reference, without published columns.
    #[test]
    fn full_mode_columns() {
        let lazy = "v6.18 preempt=lazy";
        let lazy5 = "v6.18+aceccac58ad7+e837456fdca8 preempt=lazy";
        let w = |r: &str| cell("schbench Wakeup Latency", "Amean", r);
        let o = outcome(
            &[
                ("v6.18", w("Wakeup-99th-80"), vec![100.0]),
                (V5, w("Wakeup-99th-80"), vec![80.0]),
                ("v6.19", w("Wakeup-99th-80"), vec![110.0]),
                (lazy, w("Wakeup-99th-80"), vec![50.0]),
                (lazy5, w("Wakeup-99th-80"), vec![40.0]),
            ],
            false,
        );
        let text = o.render("next-buddy", "t", "s", "p");
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("Amean Wakeup-99th-80"))
            .unwrap();
        // vanilla 119.61 published, v5 89.94 (+24.80 %) and simulated +20 %; v6.19 −10 % against
        // vanilla; lazy v5 +20 % against lazy vanilla (40 against 50)
        for want in [
            "119.61",
            "89.94",
            "+24.80%",
            "+20.00%",
            "-10.00%",
            "50.00 ± 0.00",
        ] {
            assert!(line.contains(want), "{want}: {line}");
        }
        assert_eq!(line.matches(" | ").count(), 5, "{line}");
        let rows = o.rows();
        let g = rows
            .iter()
            .find(|r| r.variant == lazy5 && r.metric.ends_with("Wakeup-99th-80 gain"))
            .unwrap();
        assert_eq!((g.published, g.simulated), (None, Some(20.0)));
        assert!(g.note.as_deref().unwrap().contains(lazy));
    }

    /// dbench cells from hand-made per-seed values, under the metric names of the dbench model:
    /// means, standard deviations, gains, consistency points and the acceptance marks.
    #[test]
    fn dbench_tables_from_hand_values() {
        let thr = |r: &str| cell("dbench4 Throughput", "Hmean", r);
        let lf = |r: &str| cell("dbench4 Loadfile Execution Time", "Amean", r);
        let o = outcome(
            &[
                ("v6.18", thr("1"), vec![1270.0, 1250.0]),
                (V5, thr("1"), vec![1260.0, 1260.0]),
                ("v6.18", thr("48"), vec![9000.0, 10000.0]),
                (V5, thr("48"), vec![11000.0, 13000.0]),
                ("v6.18", lf("1"), vec![20.0, 20.0]),
                ("v6.18", lf("48"), vec![100.0, 90.0]),
                (V5, lf("48"), vec![110.0, 100.0]),
            ],
            true,
        );
        let rows = o.rows();
        let row = |v: &str, m: &str| {
            rows.iter()
                .find(|r| r.variant == v && r.metric == m)
                .unwrap()
        };
        // 48 clients: means 9500 and 12000; sd of (11000, 13000) = sqrt(2e6) = 1414.21
        let r = row(V5, "dbench4 Throughput Hmean 48");
        assert_eq!(
            (r.simulated, r.published, r.unit),
            (Some(12000.0), Some(11820.40), "MB/s")
        );
        assert!((r.simulated_stddev.unwrap() - 2e6f64.sqrt()).abs() < 1e-9);
        // gain (12000 − 9500) / 9500 = 26.3158 %, published 23.90: ratio 1.10, no mark
        let g = row(V5, "dbench4 Throughput Hmean 48 gain");
        assert!((g.simulated.unwrap() - 2500.0 / 95.0).abs() < 1e-9);
        assert_eq!(g.published, Some(23.90));
        let checks = o.checks();
        let find = |s: &str| checks.iter().find(|c| c.description.contains(s)).unwrap();
        assert!(find("Throughput Hmean 48 has").pass);
        // loadfile 48: 95 → 105 ms, gain (95 − 105) / 95 = −10.53 % against +19.49: SIGN
        let c = find("Loadfile Execution Time Amean 48 has");
        assert!(!c.pass);
        assert!((c.simulated.unwrap() + 1000.0 / 95.0).abs() < 1e-9);
        assert_eq!(o.mark(1, &lf("48")), "SIGN");
        // consistency: 1260 / 1268.80 = 0.9931 passes; 20 / 14.62 = 1.368 misses
        let c = find("Throughput Hmean 1 ");
        assert!(c.pass && (c.simulated.unwrap() - 1260.0 / 1268.80).abs() < 1e-9);
        let c = find("Loadfile Execution Time Amean 1 ");
        assert!(!c.pass && (c.simulated.unwrap() - 20.0 / 14.62).abs() < 1e-9);
        // cells that did not run are not checked; exempt cells are marked, not checked
        assert!(!checks.iter().any(|c| c.description.contains("Amean 296")));
        assert_eq!(
            o.mark(1, &cell("hackbench-process-pipes", "Amean", "48")),
            "exempt"
        );
        let text = o.render("next-buddy", "t", "s", "p");
        assert!(text.contains("SIGN") && text.contains("[MISS]"));
    }

    /// The dbench and hackbench figures come from the workloads' metrics by name.
    #[test]
    fn figures_from_metrics() {
        let m = |n: &str, v: f64| Metric::new(n, v, "", Better::Lower);
        let w = crate::run::WorkloadResult {
            line: String::new(),
            program: String::new(),
            output: String::new(),
            metrics: vec![
                m("throughput_mbs", 1200.0),
                m("loadfile_ms", 15.0),
                m("loadfile_stddev_ms", 0.5),
                m("all_clients_ms", 16.0),
                m("all_clients_stddev_ms", 0.6),
                m("passes", 100.0),
            ],
            series: Vec::new(),
            cut: false,
        };
        let job = Job {
            variant: 0,
            bench: Bench::Dbench,
            param: 4,
            seed: 1,
            line: "dbench 4".into(),
            loops: None,
        };
        let f = figures(&job, &w, "80").unwrap();
        let get = |t: &str, s: &str| {
            f.iter()
                .find(|(c, _)| c.metric() == format!("{t} {s} 4"))
                .unwrap()
                .1
        };
        assert_eq!(get("dbench4 Throughput", "Hmean"), 1200.0);
        assert_eq!(get("dbench4 Loadfile Execution Time", "Stddev"), 0.5);
        assert_eq!(
            get("dbench4 All Clients Loadfile Execution Time", "Amean"),
            16.0
        );
        assert_eq!(f.len(), 5);
        // hackbench: 2 ms + 10 × 30 ms + 1 ms = 0.303 s
        let w = crate::run::WorkloadResult {
            metrics: vec![
                m("startup_s", 0.002),
                m("loop_s", 0.030),
                m("reap_s", 0.001),
            ],
            ..w
        };
        let job = Job {
            bench: Bench::HackbenchPipes,
            loops: Some((1000, 10000)),
            ..job
        };
        let f = figures(&job, &w, "80").unwrap();
        assert_eq!(f.len(), 1);
        assert!((f[0].1 - 0.303).abs() < 1e-12);
        // a missing metric is an error naming it
        let w = crate::run::WorkloadResult {
            metrics: Vec::new(),
            ..w
        };
        assert!(figures(&job, &w, "80").unwrap_err().contains("startup_s"));
    }

    /// The quick mode runs the quick variants on hackbench 1 and 48 groups (one run each),
    /// schbench -r 60 (3 seeds) and, where this build has dbench, 1, 48 and 141 clients -t 10;
    /// the full mode every variant, hackbench on three of them, 10 seeds.
    #[test]
    fn quick_and_full_plans() {
        let (sc, sw) = scenario();
        let mut skipped = Vec::new();
        let quick = Mode {
            quick: true,
            full_size: false,
            skip: 0,
        };
        let (active, jobs, loops) = plan(&sc, &sw, quick, 3, 1, &mut skipped);
        assert_eq!(active, vec![0, 1]);
        assert_eq!(loops, (1000, 10000));
        let hb: Vec<&Job> = jobs
            .iter()
            .filter(|j| matches!(j.bench, Bench::HackbenchPipes | Bench::HackbenchSockets))
            .collect();
        assert_eq!(hb.len(), 2 * 2 * 2);
        assert!(hb
            .iter()
            .any(|j| j.line == "perf bench sched messaging --pipe -g 48 -l 1000"));
        assert!(hb
            .iter()
            .any(|j| j.line == "perf bench sched messaging -g 1 -l 1000"));
        let sb: Vec<&Job> = jobs.iter().filter(|j| j.bench == Bench::Schbench).collect();
        assert_eq!(sb.len(), 2 * 3);
        assert!(sb
            .iter()
            .all(|j| j.line == "schbench -m 1 -t 80 -r 60 -i 10 -z 10"));
        let db: Vec<&Job> = jobs.iter().filter(|j| j.bench == Bench::Dbench).collect();
        if skipped.is_empty() {
            assert_eq!(db.len(), 2 * 3 * 3);
            for c in [1, 48, 141] {
                let l = format!("dbench -t 10 --loadfile client-tiny --show-execute-time {c}");
                assert!(db.iter().any(|j| j.line == l));
            }
        } else {
            assert!(db.is_empty() && skipped[0].contains("dbench"));
        }
        // full: 5 variants; hackbench on the 3 non-lazy ones, 15 groups × 2 × 3 runs
        let mut skipped = Vec::new();
        let (active, jobs, _) = plan(&sc, &sw, Mode::default(), 10, 3, &mut skipped);
        assert_eq!(active.len(), 5);
        let n = |b: Bench| jobs.iter().filter(|j| j.bench == b).count();
        assert_eq!(
            n(Bench::HackbenchPipes) + n(Bench::HackbenchSockets),
            3 * 15 * 2 * 3
        );
        assert_eq!(n(Bench::Schbench), 5 * 10);
        assert!(jobs
            .iter()
            .filter(|j| j.bench == Bench::Schbench)
            .all(|j| j.line == "schbench -m 1 -t 80 -r 180 -i 10 -z 10"));
        if skipped.is_empty() {
            assert_eq!(n(Bench::Dbench), 5 * 11 * 10);
        }
        // --full-size: the published -l
        let full = Mode {
            quick: false,
            full_size: true,
            skip: 0,
        };
        let (_, jobs, loops) = plan(&sc, &sw, full, 10, 3, &mut Vec::new());
        assert_eq!(loops, (10000, 10000));
        assert!(jobs
            .iter()
            .any(|j| j.line == "perf bench sched messaging --pipe -g 296 -l 10000"));
    }

    #[test]
    fn bad_sweep_tables_name_the_key() {
        let text = include_str!("../../../scenarios/next-buddy.toml");
        let err = |t: String| {
            crate::scenario::parse(&t, "nb.toml")
                .err()
                .unwrap()
                .to_string()
        };
        let e = err(text.replacen("table = \"dbench4 Throughput\"", "table = \"dbench5\"", 1));
        assert!(
            e.contains("sweep.published[0].table") && e.contains("dbench5"),
            "{e}"
        );
        let e = err(text.replacen("patched = \"v6.18+", "patched = \"v9+", 1));
        assert!(e.contains("sweep.patched") && e.contains("v9"), "{e}");
        let e = err(text.replacen("values = [1268.80, ", "values = [", 1));
        assert!(e.contains("11 rows but 10 values"), "{e}");
        let e = err(text.replacen("\nkind = \"sweep\"\n", "\n", 1));
        assert!(e.contains("needs kind = \"sweep\""), "{e}");
    }

    /// The whole pipeline in miniature, on one worker thread and on two: the same bytes
    /// (each job is an independent simulation, results kept in job order), every cell of the
    /// runs filled, hackbench rows marked as scaled.
    #[test]
    fn miniature_sweep_is_the_same_on_any_number_of_threads() {
        let (sc, mut sw) = scenario();
        sw.quick_hackbench_groups = vec![1];
        sw.quick_hackbench_run_loops = 5;
        sw.hackbench_loops = 50;
        sw.quick_schbench_line = "schbench -m 1 -t 8 -r 6 -i 3 -z 3".into();
        sw.quick_dbench_clients = vec![1];
        sw.quick_dbench_line = sw.quick_dbench_line.replace("-t 10", "-t 1");
        let mode = Mode {
            quick: true,
            full_size: false,
            skip: 0,
        };
        let one = execute_scenario(&sc, &sw, Some(2), mode, false, Some(1)).unwrap();
        let two = execute_scenario(&sc, &sw, Some(2), mode, false, Some(2)).unwrap();
        let j1 = serde_json::to_string_pretty(&one.json("next-buddy")).unwrap();
        assert_eq!(
            j1,
            serde_json::to_string_pretty(&two.json("next-buddy")).unwrap()
        );
        assert_eq!(
            one.render("n", "t", "s", "p"),
            two.render("n", "t", "s", "p")
        );
        let rows = one.rows();
        let row = |v: &str, m: &str| {
            rows.iter()
                .find(|r| r.variant == v && r.metric == m)
                .unwrap()
        };
        for v in ["v6.18", V5] {
            let r = row(v, "hackbench-process-pipes Amean 1");
            assert!(r.simulated.unwrap() > 0.0);
            assert!(r.note.as_deref().unwrap().starts_with("scaled"));
            let r = row(v, "schbench Requests Per Second Hmean RPS-50th-8");
            assert!(r.simulated.unwrap() > 0.0 && r.published.is_none());
            let r = row(v, "schbench Wakeup Latency Amean Wakeup-99th-8");
            assert!(r.simulated.is_some());
        }
        // one run per hackbench cell in quick mode, two seeds per schbench cell
        assert_eq!(
            one.cells[0]
                .iter()
                .find(|(c, _)| c.metric() == "hackbench-process-sockets Amean 1")
                .unwrap()
                .1
                .len(),
            1
        );
        assert_eq!(
            one.cells[0]
                .iter()
                .find(|(c, _)| c.metric() == "schbench Wakeup Latency Amean Wakeup-50th-8")
                .unwrap()
                .1
                .len(),
            2
        );
    }

    /// Issue #14's scaling rule: hackbench at `-l 1000`, scaled, within 1 % of `-l 10000` at
    /// 1, 12, 48 and 296 groups, pipes and sockets, on vanilla and v5. Hours of CPU in a test
    /// build: run it with `cargo test --release -p schedlab --lib -- --ignored
    /// scaling_within_one_percent_full`, or `schedlab reproduce next-buddy --check-scaling
    /// --full-size`.
    #[test]
    #[ignore]
    fn scaling_within_one_percent_full() {
        scaling_within_one_percent(&scaling_groups(true));
    }

    /// The small part of the rule (1 and 12 groups), what `--check-scaling` runs by default.
    #[test]
    #[ignore]
    fn scaling_within_one_percent_small() {
        scaling_within_one_percent(&scaling_groups(false));
    }

    fn scaling_within_one_percent(groups: &[u32]) {
        let (sc, sw) = scenario();
        let o = check_scaling(&sc, &sw, groups, false, None).unwrap();
        assert_eq!(o.cells.len(), 2 * 2 * groups.len());
        for (k, t, g, scaled, full, _) in &o.cells {
            assert!(
                scaling_ok(*scaled, *full),
                "{k} {t} {g}: {scaled} against {full}"
            );
        }
    }

    /// A tiny hackbench on the seed's platform: the scaled figure is the run's start-up +
    /// reaping + 10 × loop, and the phases add up to the run's own time.
    #[test]
    fn scaled_hackbench_figure_from_a_run() {
        let (sc, sw) = scenario();
        let line = sw.hackbench(true, 1, 10);
        assert_eq!(line, "perf bench sched messaging --pipe -g 1 -l 10");
        let r = simulate(&sc, "v6.18", &line, 1).unwrap();
        let w = &r.workloads[0];
        let get = |n: &str| w.metrics.iter().find(|m| m.name == n).unwrap().value;
        let job = Job {
            variant: 0,
            bench: Bench::HackbenchPipes,
            param: 1,
            seed: 1,
            line,
            loops: Some((10, 100)),
        };
        let f = figures(&job, w, "80").unwrap();
        let want = get("startup_s") + 10.0 * get("loop_s") + get("reap_s");
        assert!((f[0].1 - want).abs() < 1e-12);
        // time_s is from µs readings: within 1 µs of the unrounded sum of the phases
        let sum = get("startup_s") + get("loop_s") + get("reap_s");
        assert!(
            (get("time_s") - sum).abs() <= 1.01e-6,
            "{} {sum}",
            get("time_s")
        );
        assert!(get("loop_s") > 0.0);
    }
}
