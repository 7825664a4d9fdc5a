//! Scenarios of kind `tables` (seed 003, `schedlab reproduce sched-idle-placement`): a few
//! published tables, each a list of rows on one platform — a workload line with a parameter
//! (`make -j{param}`), or one line and several metrics (`real`, `user`, `sys`) — run on two
//! kernels, the baseline and the patched one, and printed beside the published columns with
//! the gain of the patch (docs/model.md W§12.4).
//!
//! One run is one workload line on one kernel and one simulator seed; a cell is the mean over
//! the seeds, with the standard deviation over seeds. Every run also reports how many SCHED_IDLE
//! placements (wake-ups, forks, execs) stacked a task on a CPU that ran only SCHED_IDLE tasks and
//! the run-queue wait those tasks then had (`KernelStats::sched_idle_stacked`): the mechanism of
//! seed 003, shown per row.
//!
//! The checks are the acceptance rules of the scenario file (`[[tables.check]]`), of a few
//! kinds: a minimum gain, a gain smaller than other rows' gains, a maximum |gain|, identical
//! per-seed results on both kernels, the published direction, and a column within a tolerance of
//! its published values. Nothing here depends on the kernel: both columns run the same platform,
//! lines and seeds.

use serde::Deserialize;
use serde_json::{json, Value};
use std::fmt::Write;
use std::time::{Duration, Instant};

/// `m` with its control characters escaped (`\n` as the two characters `\` `n`): an error
/// quotes the file's strings (a check `kind`, a table `id`), and a newline in one must not
/// split the one-line message.
pub fn one_line(m: &str) -> String {
    m.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The `[tables]` table of a scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TablesSpec {
    /// The patched kernel of every table that names none (the baseline is the scenario's).
    pub patched: String,
    /// Where the published numbers come from.
    pub source: String,
    #[serde(rename = "table")]
    pub tables: Vec<TableSpec>,
    #[serde(default, rename = "check")]
    pub checks: Vec<CheckSpec>,
}

/// One published table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    /// Short name the checks and the JSON rows use.
    pub id: String,
    pub title: String,
    pub platform: String,
    /// The workload line; `{param}` is replaced by each parameter.
    pub line: String,
    /// The line in quick mode (default: `line`).
    #[serde(default)]
    pub quick_line: Option<String>,
    /// The parameters (one run per parameter); none = one run of `line`.
    #[serde(default)]
    pub params: Vec<String>,
    /// The parameters of a quick run (default: all).
    #[serde(default)]
    pub quick_params: Option<Vec<String>>,
    /// The model's metrics of a run; with several, each is a row of its own.
    pub metrics: Vec<String>,
    /// Row labels of the metrics (default: the metric names).
    #[serde(default)]
    pub labels: Option<Vec<String>>,
    pub unit: String,
    pub higher_better: bool,
    /// Kernels of this table's two columns (default: the scenario's baseline, `patched`).
    #[serde(default)]
    pub baseline: Option<String>,
    #[serde(default)]
    pub patched: Option<String>,
    /// Seeds per cell (default: the scenario's `runs` / `quick_runs`).
    #[serde(default)]
    pub runs: Option<u32>,
    #[serde(default)]
    pub quick_runs: Option<u32>,
    /// Run in full mode only (sensitivity tables).
    #[serde(default)]
    pub full_only: bool,
    /// Simulated-time limit of a run (`"3h"`; default: the workload's own end).
    #[serde(default)]
    pub duration: Option<String>,
    /// Published values per row (rows: params × metrics, params outer), `nan` = none.
    #[serde(default)]
    pub published_baseline: Vec<f64>,
    #[serde(default)]
    pub published_patched: Vec<f64>,
    #[serde(default)]
    pub published_baseline_sd: Vec<f64>,
    #[serde(default)]
    pub published_patched_sd: Vec<f64>,
    /// Shown under the table.
    #[serde(default)]
    pub note: Option<String>,
}

/// An acceptance rule.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// `gain_min` (every row's gain ≥ value %), `gain_below` (each row's gain below the smallest
    /// gain of the `than` rows), `abs_gain_max` (|gain| < value %), `identical` (both kernels give
    /// the same per-seed values on every row), `direction` (the simulated gain has the published
    /// gain's sign), `within` (the `column` — baseline or patched — within ± value % of the
    /// published values).
    pub kind: String,
    pub table: String,
    /// Rows the rule covers (labels; default: every row of the table).
    #[serde(default)]
    pub rows: Vec<String>,
    #[serde(default)]
    pub than: Vec<String>,
    #[serde(default)]
    pub value: Option<f64>,
    #[serde(default)]
    pub column: Option<String>,
    pub description: String,
}

const KINDS: [&str; 6] = [
    "gain_min",
    "gain_below",
    "abs_gain_max",
    "identical",
    "direction",
    "within",
];

impl TableSpec {
    /// Row labels: params × metrics (params outer).
    pub fn row_labels(&self, params: &[String]) -> Vec<String> {
        let labels = self.labels.clone().unwrap_or_else(|| self.metrics.clone());
        if params.is_empty() {
            return labels;
        }
        let mut out = Vec::new();
        for p in params {
            for l in &labels {
                out.push(if labels.len() == 1 {
                    p.clone()
                } else {
                    format!("{p} {l}")
                });
            }
        }
        out
    }

    fn params(&self, quick: bool) -> Vec<String> {
        match (&self.quick_params, quick) {
            (Some(q), true) => q.clone(),
            _ => self.params.clone(),
        }
    }

    fn kernels<'a>(
        &'a self,
        sc: &'a crate::scenario::Scenario,
        spec: &'a TablesSpec,
    ) -> [&'a str; 2] {
        [
            self.baseline.as_deref().unwrap_or(&sc.baseline),
            self.patched.as_deref().unwrap_or(&spec.patched),
        ]
    }

    fn line(&self, quick: bool, param: Option<&str>) -> String {
        let l = match (&self.quick_line, quick) {
            (Some(q), true) => q,
            _ => &self.line,
        };
        match param {
            Some(p) => l.replace("{param}", p),
            None => l.clone(),
        }
    }

    /// The published value of a row for column `col` (0 baseline, 1 patched), and its sd.
    fn published(&self, label: &str, col: usize) -> (Option<f64>, Option<f64>) {
        let all = self.row_labels(&self.params);
        let Some(i) = all.iter().position(|l| l == label) else {
            return (None, None);
        };
        let (v, sd) = if col == 0 {
            (&self.published_baseline, &self.published_baseline_sd)
        } else {
            (&self.published_patched, &self.published_patched_sd)
        };
        let get = |a: &Vec<f64>| a.get(i).copied().filter(|x| x.is_finite());
        (get(v), get(sd))
    }
}

impl TablesSpec {
    /// Checks the file's consistency: every published list as long as the rows, every check's
    /// table and rows known, kinds known. Errors name the file and the key.
    pub fn check(&self, file: &str) -> Result<(), String> {
        let mut ids = std::collections::BTreeSet::new();
        for t in &self.tables {
            if !ids.insert(t.id.as_str()) {
                return Err(format!("{file}: tables.table.id '{}' is used twice", t.id));
            }
            if t.metrics.is_empty() {
                return Err(format!("{file}: table '{}': metrics is empty", t.id));
            }
            if let Some(l) = &t.labels {
                if l.len() != t.metrics.len() {
                    return Err(format!(
                        "{file}: table '{}': labels has {} entries for {} metrics",
                        t.id,
                        l.len(),
                        t.metrics.len()
                    ));
                }
            }
            if t.params.is_empty() == t.line.contains("{param}") {
                return Err(format!(
                    "{file}: table '{}': the line needs {{param}} exactly when params are given",
                    t.id
                ));
            }
            if let Some(q) = &t.quick_params {
                if let Some(p) = q.iter().find(|p| !t.params.contains(p)) {
                    return Err(format!(
                        "{file}: table '{}': quick_params '{p}' is not in params",
                        t.id
                    ));
                }
            }
            let n = t.row_labels(&t.params).len();
            for (key, v) in [
                ("published_baseline", &t.published_baseline),
                ("published_patched", &t.published_patched),
                ("published_baseline_sd", &t.published_baseline_sd),
                ("published_patched_sd", &t.published_patched_sd),
            ] {
                if !v.is_empty() && v.len() != n {
                    return Err(format!(
                        "{file}: table '{}': {key} has {} values for {n} rows",
                        t.id,
                        v.len()
                    ));
                }
            }
            if let Some(d) = &t.duration {
                schedlab_engine::parse_duration(d)
                    .map_err(|e| format!("{file}: table '{}': duration: {e}", t.id))?;
            }
            for r in [t.runs, t.quick_runs].into_iter().flatten() {
                crate::scenario::check_runs(r)
                    .map_err(|m| format!("{file}: table '{}': runs {r}: {m}", t.id))?;
            }
        }
        for c in &self.checks {
            if !KINDS.contains(&c.kind.as_str()) {
                return Err(format!(
                    "{file}: tables.check kind '{}': unknown (known: {})",
                    c.kind,
                    KINDS.join(", ")
                ));
            }
            let Some(t) = self.tables.iter().find(|t| t.id == c.table) else {
                return Err(format!("{file}: tables.check table '{}': unknown", c.table));
            };
            let rows = t.row_labels(&t.params);
            if let Some(r) = c.rows.iter().chain(&c.than).find(|r| !rows.contains(r)) {
                return Err(format!(
                    "{file}: tables.check on '{}': row '{r}' is not a row of the table",
                    c.table
                ));
            }
            let needs_value = matches!(c.kind.as_str(), "gain_min" | "abs_gain_max" | "within");
            if needs_value && c.value.is_none() {
                return Err(format!(
                    "{file}: tables.check {} on '{}' needs a value",
                    c.kind, c.table
                ));
            }
            if c.kind == "gain_below" && c.than.is_empty() {
                return Err(format!(
                    "{file}: tables.check gain_below on '{}' needs than",
                    c.table
                ));
            }
            if c.kind == "within" && !matches!(c.column.as_deref(), Some("baseline" | "patched")) {
                return Err(format!(
                    "{file}: tables.check within on '{}' needs column = \"baseline\" or \"patched\"",
                    c.table
                ));
            }
        }
        Ok(())
    }

    /// Checks every run of every table as `run` checks it before simulating — platform,
    /// kernel on that platform, workload line and placement — for each parameter of both
    /// modes, so that a bad platform or line in the last table is refused before the first
    /// run rather than after hours of them. Errors name the file and the table.
    pub fn validate_runs(
        &self,
        file: &str,
        baseline: &str,
        cgroups: &crate::cgroups::Cgroups,
    ) -> Result<(), String> {
        for t in &self.tables {
            let kernels = [
                t.baseline.as_deref().unwrap_or(baseline),
                t.patched.as_deref().unwrap_or(&self.patched),
            ];
            let mut lines = Vec::new();
            for quick in [false, true] {
                if t.params.is_empty() {
                    lines.push(t.line(quick, None));
                } else {
                    for p in t.params(quick) {
                        lines.push(t.line(quick, Some(&p)));
                    }
                }
            }
            lines.sort();
            lines.dedup();
            for k in kernels {
                for l in &lines {
                    let spec = crate::run::RunSpec {
                        platform: t.platform.clone(),
                        kernel: k.to_string(),
                        workloads: vec![l.clone()],
                        duration_ns: None,
                        seed: 1,
                        strict: false,
                        trace: None,
                        trace_columns: false,
                        trace_limit: None,
                        progress: false,
                        explain_wakeups: None,
                        cgroups: cgroups.clone(),
                    };
                    crate::run::quiet_warnings(|| crate::run::validate(&spec))
                        .map_err(|e| format!("{file}: table '{}': {e}", t.id))?;
                }
            }
        }
        Ok(())
    }

    /// Every kernel string the tables use (validated by the scenario loader).
    pub fn kernels<'a>(&'a self, baseline: &'a str) -> Vec<&'a str> {
        let mut v = vec![baseline, self.patched.as_str()];
        for t in &self.tables {
            v.extend(t.baseline.as_deref());
            v.extend(t.patched.as_deref());
        }
        v
    }
}

/// One simulation: a table, a parameter, a column, a seed.
struct Job {
    table: usize,
    param: Option<String>,
    col: usize,
    seed: u64,
    line: String,
    kernel: String,
}

/// What a run gives: the table's metrics (in order) and the SCHED_IDLE stacking figures.
#[derive(Clone, Debug, Default)]
struct RunFigures {
    values: Vec<f64>,
    placed: [u64; 3],
    stacked: [u64; 3],
    stacked_wait_ns: u64,
}

/// One row of one column: the per-seed values and the mean stacking figures.
#[derive(Clone, Debug, Default)]
pub struct CellOut {
    pub samples: Vec<f64>,
    pub stacked: [f64; 3],
    pub placed: [f64; 3],
    pub stacked_wait_s: f64,
}

/// The results of one table.
pub struct TableOut {
    pub spec: TableSpec,
    pub kernels: [String; 2],
    pub rows: Vec<String>,
    /// `cells[row][col]`
    pub cells: Vec<[CellOut; 2]>,
    pub runs: u32,
}

/// A checked rule.
pub struct Check {
    pub description: String,
    pub simulated: Option<f64>,
    pub pass: bool,
    /// The rule's rows were not run (quick mode).
    pub skipped: bool,
}

pub struct TablesOutcome {
    pub quick: bool,
    pub runs: u32,
    pub tables: Vec<TableOut>,
    pub checks_spec: Vec<CheckSpec>,
    pub source: String,
    pub notes: Vec<String>,
    /// (platform: line, kernel, wall time) of every run.
    pub timing: Vec<(String, String, Duration)>,
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.iter().sum::<f64>() / v.len() as f64
}

/// Gain of the patched column over the baseline, %, positive = better (mmtests' convention).
pub fn gain(baseline: f64, patched: f64, higher_better: bool) -> f64 {
    if higher_better {
        (patched - baseline) / baseline * 100.0
    } else {
        (baseline - patched) / baseline * 100.0
    }
}

/// `reproduce` of a scenario of kind tables.
pub fn execute_scenario(
    sc: &crate::scenario::Scenario,
    spec: &TablesSpec,
    runs: Option<u32>,
    quick: bool,
    progress: bool,
    jobs: Option<usize>,
) -> Result<TablesOutcome, crate::scenario::ScenarioError> {
    use crate::scenario::ScenarioError;
    if let Some(r) = runs {
        crate::scenario::check_runs(r)
            .map_err(|m| ScenarioError::Input(format!("--runs {r}: {m}")))?;
    }
    let default_runs = if quick { sc.quick_runs } else { sc.runs };
    let active: Vec<usize> = (0..spec.tables.len())
        .filter(|&i| !(quick && spec.tables[i].full_only))
        .collect();
    let table_runs = |t: &TableSpec| -> u32 {
        runs.unwrap_or_else(|| {
            if quick {
                t.quick_runs.unwrap_or(default_runs)
            } else {
                t.runs.unwrap_or(default_runs)
            }
        })
    };
    let mut list = Vec::new();
    for &ti in &active {
        let t = &spec.tables[ti];
        let params: Vec<Option<String>> = if t.params.is_empty() {
            vec![None]
        } else {
            t.params(quick).into_iter().map(Some).collect()
        };
        let kernels = t.kernels(sc, spec);
        for p in &params {
            for seed in 1..=u64::from(table_runs(t)) {
                for (col, k) in kernels.iter().enumerate() {
                    list.push(Job {
                        table: ti,
                        param: p.clone(),
                        col,
                        seed,
                        line: t.line(quick, p.as_deref()),
                        kernel: k.to_string(),
                    });
                }
            }
        }
    }
    let bar = crate::progress::Bar::new(
        progress,
        list.len() as u64,
        "{prefix} [{bar:40}] {pos}/{len} runs",
        &sc.name,
    );
    let jobs_limit = jobs.unwrap_or_else(crate::jobs::default_jobs);
    let results = crate::jobs::run_with_bar(list.len(), jobs_limit, bar, |i| {
        let j = &list[i];
        let t = &spec.tables[j.table];
        let t0 = Instant::now();
        let dur = t
            .duration
            .as_deref()
            .map(|d| schedlab_engine::parse_duration(d).map(|n| n.0).unwrap_or(0));
        let r = crate::run::run_scenario_line(
            &t.platform,
            &j.kernel,
            &j.line,
            j.seed,
            dur,
            &sc.cgroups,
        )
        .and_then(|r| {
            let w = r
                .workloads
                .first()
                .ok_or_else(|| format!("'{}': no workload result", j.line))?;
            let values = t
                .metrics
                .iter()
                .map(|m| {
                    w.metrics
                        .iter()
                        .find(|x| &x.name == m)
                        .map(|x| x.value)
                        .ok_or_else(|| format!("'{}': the model gives no metric '{m}'", j.line))
                })
                .collect::<Result<Vec<f64>, String>>()?;
            Ok(RunFigures {
                values,
                placed: r.sched_idle_placed,
                stacked: r.sched_idle_stacked,
                stacked_wait_ns: r.sched_idle_stacked_wait_ns,
            })
        });
        (r, t0.elapsed())
    });
    let mut timing = Vec::new();
    let mut tables: Vec<TableOut> = Vec::new();
    for &ti in &active {
        let t = &spec.tables[ti];
        let params = t.params(quick);
        let rows = t.row_labels(&params);
        let kernels = t.kernels(sc, spec);
        tables.push(TableOut {
            spec: t.clone(),
            kernels: [kernels[0].to_string(), kernels[1].to_string()],
            cells: vec![Default::default(); rows.len()],
            rows,
            runs: table_runs(t),
        });
    }
    for (j, (r, wall)) in list.iter().zip(results) {
        let platform = &spec.tables[j.table].platform;
        timing.push((format!("{platform}: {}", j.line), j.kernel.clone(), wall));
        let f = r.map_err(|e| ScenarioError::Input(format!("{}: {e}", sc.name)))?;
        let out = tables
            .iter_mut()
            .find(|o| o.spec.id == spec.tables[j.table].id)
            .expect("an active table");
        let nm = out.spec.metrics.len();
        let pi = match &j.param {
            Some(p) => out.spec.params(quick).iter().position(|x| x == p).unwrap(),
            None => 0,
        };
        let runs = f64::from(out.runs);
        for (m, v) in f.values.iter().enumerate() {
            let c = &mut out.cells[pi * nm + m][j.col];
            c.samples.push(*v);
            for k in 0..3 {
                c.placed[k] += f.placed[k] as f64 / runs;
                c.stacked[k] += f.stacked[k] as f64 / runs;
            }
            c.stacked_wait_s += f.stacked_wait_ns as f64 / 1e9 / runs;
        }
    }
    Ok(TablesOutcome {
        quick,
        runs: runs.unwrap_or(default_runs),
        tables,
        checks_spec: spec.checks.clone(),
        source: spec.source.clone(),
        notes: sc.notes.clone(),
        timing,
    })
}

/// A JSON row of the outcome.
pub struct OutRow {
    pub variant: String,
    pub metric: String,
    pub unit: String,
    pub published: Option<f64>,
    pub simulated: f64,
    pub simulated_stddev: f64,
    pub stacked: [f64; 3],
    pub placed: [f64; 3],
    pub stacked_wait_s: f64,
}

impl TablesOutcome {
    fn table(&self, id: &str) -> Option<&TableOut> {
        self.tables.iter().find(|t| t.spec.id == id)
    }

    /// Every cell with its published value (each published number on exactly one row).
    pub fn rows(&self) -> Vec<OutRow> {
        let mut out = Vec::new();
        for t in &self.tables {
            for (r, label) in t.rows.iter().enumerate() {
                for col in 0..2 {
                    let c = &t.cells[r][col];
                    out.push(OutRow {
                        variant: t.kernels[col].clone(),
                        metric: format!("{} {label}", t.spec.id),
                        unit: t.spec.unit.clone(),
                        published: t.spec.published(label, col).0,
                        simulated: mean(&c.samples),
                        simulated_stddev: crate::stats::stddev(&c.samples),
                        stacked: c.stacked,
                        placed: c.placed,
                        stacked_wait_s: c.stacked_wait_s,
                    });
                }
            }
        }
        out
    }

    /// The acceptance rules evaluated (rules whose rows did not run are marked skipped).
    pub fn checks(&self) -> Vec<Check> {
        let mut out = Vec::new();
        for c in &self.checks_spec {
            let Some(t) = self.table(&c.table) else {
                out.push(Check {
                    description: c.description.clone(),
                    simulated: None,
                    pass: false,
                    skipped: true,
                });
                continue;
            };
            let rows: Vec<String> = if c.rows.is_empty() {
                t.rows.clone()
            } else {
                c.rows.clone()
            };
            let idx = |l: &String| t.rows.iter().position(|r| r == l);
            let ran: Vec<usize> = rows.iter().filter_map(idx).collect();
            let than: Vec<usize> = c.than.iter().filter_map(idx).collect();
            if ran.is_empty() || (c.kind == "gain_below" && than.is_empty()) {
                out.push(Check {
                    description: c.description.clone(),
                    simulated: None,
                    pass: false,
                    skipped: true,
                });
                continue;
            }
            let hb = t.spec.higher_better;
            let g = |r: usize| {
                gain(
                    mean(&t.cells[r][0].samples),
                    mean(&t.cells[r][1].samples),
                    hb,
                )
            };
            let (sim, pass) = match c.kind.as_str() {
                "gain_min" => {
                    let worst = ran.iter().map(|&r| g(r)).fold(f64::INFINITY, f64::min);
                    (worst, worst >= c.value.unwrap_or(0.0))
                }
                "gain_below" => {
                    let floor = than.iter().map(|&r| g(r)).fold(f64::INFINITY, f64::min);
                    let top = ran.iter().map(|&r| g(r)).fold(f64::NEG_INFINITY, f64::max);
                    (top, top < floor)
                }
                "abs_gain_max" => {
                    let worst = ran.iter().map(|&r| g(r).abs()).fold(0.0, f64::max);
                    (worst, worst < c.value.unwrap_or(0.0))
                }
                "identical" => {
                    let differing = ran
                        .iter()
                        .filter(|&&r| t.cells[r][0].samples != t.cells[r][1].samples)
                        .count();
                    (differing as f64, differing == 0)
                }
                "direction" => {
                    // the smallest simulated gain in the published direction
                    let mut worst = f64::INFINITY;
                    let mut ok = true;
                    for &r in &ran {
                        let label = &t.rows[r];
                        let (Some(b), Some(p)) =
                            (t.spec.published(label, 0).0, t.spec.published(label, 1).0)
                        else {
                            ok = false;
                            continue;
                        };
                        let pg = gain(b, p, hb);
                        let sg = g(r) * pg.signum();
                        worst = worst.min(sg);
                        ok &= sg > 0.0;
                    }
                    (worst, ok)
                }
                "within" => {
                    let col = usize::from(c.column.as_deref() == Some("patched"));
                    let tol = c.value.unwrap_or(0.0);
                    let mut worst: f64 = 0.0;
                    let mut ok = true;
                    for &r in &ran {
                        match t.spec.published(&t.rows[r], col).0 {
                            Some(p) => {
                                let d = (mean(&t.cells[r][col].samples) / p - 1.0) * 100.0;
                                if d.abs() > worst.abs() {
                                    worst = d;
                                }
                                ok &= d.abs() <= tol;
                            }
                            None => ok = false,
                        }
                    }
                    (worst, ok)
                }
                _ => (f64::NAN, false),
            };
            out.push(Check {
                description: c.description.clone(),
                simulated: sim.is_finite().then_some(sim),
                pass,
                skipped: false,
            });
        }
        out
    }

    pub fn render(&self, name: &str, title: &str, seed: &str) -> String {
        let mut s = String::new();
        let mode = if self.quick { "quick" } else { "full" };
        let _ = writeln!(s, "{name} — {title}");
        let _ = writeln!(s, "  seed {seed}; {mode} mode; published: {}", self.source);
        for t in &self.tables {
            let _ = writeln!(
                s,
                "\n  {} ({}, {} is better) — {}, `{}`, {} seed{} per cell",
                t.spec.title,
                t.spec.unit,
                if t.spec.higher_better {
                    "higher"
                } else {
                    "lower"
                },
                t.spec.platform,
                t.spec.line(self.quick, None),
                t.runs,
                if t.runs == 1 { "" } else { "s" }
            );
            let _ = writeln!(
                s,
                "    columns: {} | {} (gain of the second, positive is better)",
                t.kernels[0], t.kernels[1]
            );
            let _ = writeln!(
                s,
                "    {:<12} | {:>22} {:>22} | {:>22} {:>22} | {:>9} {:>9}",
                "",
                "published",
                "simulated ± sd",
                "published",
                "simulated ± sd",
                "pub gain",
                "sim gain"
            );
            let fmt = |v: f64, sd: Option<f64>| match sd {
                Some(d) => format!("{v:.3} ± {d:.3}"),
                None => format!("{v:.3}"),
            };
            for (r, label) in t.rows.iter().enumerate() {
                let mut line = format!("    {label:<12} |");
                for col in 0..2 {
                    let c = &t.cells[r][col];
                    let (p, psd) = t.spec.published(label, col);
                    let pub_s = p.map(|v| fmt(v, psd)).unwrap_or_else(|| "–".into());
                    let sim = fmt(mean(&c.samples), Some(crate::stats::stddev(&c.samples)));
                    let _ = write!(line, " {pub_s:>22} {sim:>22} |");
                }
                let hb = t.spec.higher_better;
                let pg = match (t.spec.published(label, 0).0, t.spec.published(label, 1).0) {
                    (Some(b), Some(p)) => format!("{:+.2}%", gain(b, p, hb)),
                    _ => "–".into(),
                };
                let sg = gain(
                    mean(&t.cells[r][0].samples),
                    mean(&t.cells[r][1].samples),
                    hb,
                );
                let _ = writeln!(line, " {pg:>9} {:>9}", format!("{sg:+.2}%"));
                s.push_str(&line);
            }
            let _ = writeln!(
                s,
                "    SCHED_IDLE placements per run that stacked the task on a SCHED_IDLE-only CPU (wake-ups/forks/execs of all placements) and those tasks' run-queue wait:"
            );
            let nm = t.spec.metrics.len();
            for (r, label) in t.rows.iter().enumerate() {
                if r % nm != 0 {
                    continue;
                }
                let label = label.split(' ').next().unwrap_or(label);
                let mut line = format!("    {label:<12} |");
                for col in 0..2 {
                    let c = &t.cells[r][col];
                    let _ = write!(
                        line,
                        " {:.0}/{:.0}/{:.0} of {:.0}/{:.0}/{:.0}, wait {:.3} s |",
                        c.stacked[0],
                        c.stacked[1],
                        c.stacked[2],
                        c.placed[0],
                        c.placed[1],
                        c.placed[2],
                        c.stacked_wait_s
                    );
                }
                let _ = writeln!(s, "{line}");
            }
            if let Some(n) = &t.spec.note {
                let _ = writeln!(s, "    note: {n}");
            }
        }
        let _ = writeln!(s, "\n  acceptance (docs/model.md W§12.4):");
        for c in self.checks() {
            if c.skipped {
                let _ = writeln!(s, "    [full run only] {}", c.description);
                continue;
            }
            let v = c
                .simulated
                .map(|v| format!(" — simulated {v:.2}"))
                .unwrap_or_default();
            let mark = if c.pass { "ok" } else { "MISS" };
            let _ = writeln!(s, "    [{mark}] {}{v}", c.description);
        }
        for n in &self.notes {
            let _ = writeln!(s, "\n  note: {n}");
        }
        s
    }

    pub fn json(&self, name: &str) -> Value {
        let rows: Vec<Value> = self
            .rows()
            .into_iter()
            .map(|r| {
                json!({"variant": r.variant, "metric": r.metric, "unit": r.unit,
                       "published": r.published, "simulated": r.simulated,
                       "simulated_stddev": r.simulated_stddev, "note": null,
                       "sched_idle_stacked": {"wakeups": r.stacked[0], "forks": r.stacked[1],
                           "execs": r.stacked[2], "placed_wakeups": r.placed[0],
                           "placed_forks": r.placed[1], "placed_execs": r.placed[2],
                           "wait_s": r.stacked_wait_s}})
            })
            .collect();
        let targets: Vec<Value> = self
            .checks()
            .into_iter()
            .filter(|c| !c.skipped)
            .map(
                |c| json!({"description": c.description, "simulated": c.simulated, "pass": c.pass}),
            )
            .collect();
        json!({"scenario": name, "quick": self.quick, "runs": self.runs,
               "rows": rows, "targets": targets})
    }

    /// Wall time per run, for stderr.
    pub fn timing_summary(&self) -> String {
        let mut s = String::new();
        let total: Duration = self.timing.iter().map(|t| t.2).sum();
        let _ = writeln!(
            s,
            "  total {:.1} s over {} runs",
            total.as_secs_f64(),
            self.timing.len()
        );
        let mut by: Vec<(String, Duration, u32)> = Vec::new();
        for (line, kernel, d) in &self.timing {
            let key = format!("{line} [{kernel}]");
            match by.iter_mut().find(|b| b.0 == key) {
                Some(b) => {
                    b.1 += *d;
                    b.2 += 1;
                }
                None => by.push((key, *d, 1)),
            }
        }
        for (k, d, n) in by {
            let _ = writeln!(s, "  {:>8.1} s  {n} × {k}", d.as_secs_f64());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(params: &[&str], metrics: &[&str], higher_better: bool) -> TableSpec {
        TableSpec {
            id: "t".into(),
            title: "T".into(),
            platform: "smp:2".into(),
            line: if params.is_empty() {
                "x".into()
            } else {
                "x {param}".into()
            },
            quick_line: None,
            params: params.iter().map(|s| s.to_string()).collect(),
            quick_params: None,
            metrics: metrics.iter().map(|s| s.to_string()).collect(),
            labels: None,
            unit: "s".into(),
            higher_better,
            baseline: None,
            patched: None,
            runs: None,
            quick_runs: None,
            full_only: false,
            duration: None,
            published_baseline: vec![],
            published_patched: vec![],
            published_baseline_sd: vec![],
            published_patched_sd: vec![],
            note: None,
        }
    }

    /// Seed 003's own delta column: 4384.728 → 3843.250 s is −12.35 %, a gain (time, lower
    /// is better) of +12.35 %; 27.62 → 30.03 t/s is +8.73 %.
    #[test]
    fn gains_follow_the_seeds_columns() {
        assert!((gain(4384.728, 3843.250, false) - 12.349).abs() < 1e-3);
        assert!((gain(27.62, 30.03, true) - 8.726).abs() < 1e-3);
    }

    /// Rows are params × metrics, params outer; one metric keeps the param as the label.
    #[test]
    fn row_labels() {
        let t = table(&["1", "8"], &["real_s"], false);
        assert_eq!(t.row_labels(&t.params), ["1", "8"]);
        let mut t = table(&[], &["real_s", "user_s"], false);
        t.labels = Some(vec!["real".into(), "user".into()]);
        assert_eq!(t.row_labels(&t.params), ["real", "user"]);
        let t = table(&["a"], &["m", "n"], false);
        assert_eq!(t.row_labels(&t.params), ["a m", "a n"]);
    }

    fn outcome(t: TableSpec, cells: Vec<[Vec<f64>; 2]>, checks: Vec<CheckSpec>) -> TablesOutcome {
        let rows = t.row_labels(&t.params);
        TablesOutcome {
            quick: false,
            runs: 2,
            tables: vec![TableOut {
                kernels: ["a".into(), "b".into()],
                rows,
                cells: cells
                    .into_iter()
                    .map(|[x, y]| {
                        [
                            CellOut {
                                samples: x,
                                ..Default::default()
                            },
                            CellOut {
                                samples: y,
                                ..Default::default()
                            },
                        ]
                    })
                    .collect(),
                runs: 2,
                spec: t,
            }],
            checks_spec: checks,
            source: String::new(),
            notes: vec![],
            timing: vec![],
        }
    }

    fn check(kind: &str, rows: &[&str], than: &[&str], value: Option<f64>) -> CheckSpec {
        CheckSpec {
            kind: kind.into(),
            table: "t".into(),
            rows: rows.iter().map(|s| s.to_string()).collect(),
            than: than.iter().map(|s| s.to_string()).collect(),
            value,
            column: Some("patched".into()),
            description: kind.into(),
        }
    }

    /// Hand-made cells (times, lower is better): row 1 100 → 88 (+12 %), row 32 100 → 95 (+5 %),
    /// row 64 100 → 98 (+2 %), published patched 90 / 95 / 98.
    #[test]
    fn check_kinds_on_hand_values() {
        let mut t = table(&["1", "32", "64"], &["real_s"], false);
        t.published_baseline = vec![100.0, 100.0, 100.0];
        t.published_patched = vec![90.0, 95.0, 98.0];
        let cells = vec![
            [vec![100.0, 100.0], vec![88.0, 88.0]],
            [vec![100.0, 100.0], vec![95.0, 95.0]],
            [vec![100.0, 100.0], vec![98.0, 98.0]],
        ];
        let checks = vec![
            check("gain_min", &["1"], &[], Some(6.0)),  // 12 ≥ 6: pass
            check("gain_min", &["32"], &[], Some(6.0)), // 5 < 6: miss
            check("gain_below", &["32"], &["1"], None), // 5 < 12: pass
            check("abs_gain_max", &["64"], &[], Some(3.0)), // 2 < 3: pass
            check("identical", &["1"], &[], None),      // 100 vs 88: miss
            check("direction", &[], &[], None),         // all published gains > 0: pass
            check("within", &["1"], &[], Some(10.0)),   // 88 / 90 − 1 = −2.2 %: pass
            check("within", &["1"], &[], Some(2.0)),    // −2.2 % beyond 2 %: miss
        ];
        let o = outcome(t, cells, checks);
        let got: Vec<bool> = o.checks().iter().map(|c| c.pass).collect();
        assert_eq!(got, [true, false, true, true, false, true, true, false]);
        let c = o.checks();
        assert!((c[0].simulated.unwrap() - 12.0).abs() < 1e-9);
        assert!((c[6].simulated.unwrap() + 2.2222).abs() < 1e-3);
    }

    /// Both kernels giving the same per-seed values pass `identical`.
    #[test]
    fn identical_needs_equal_samples() {
        let t = table(&["80"], &["real_s"], false);
        let o = outcome(
            t,
            vec![[vec![5.0, 6.0], vec![5.0, 6.0]]],
            vec![check("identical", &[], &[], None)],
        );
        assert!(o.checks()[0].pass);
    }

    /// File errors name the key.
    #[test]
    fn spec_errors_name_the_key() {
        let mut t = table(&["1", "2"], &["real_s"], false);
        t.published_patched = vec![1.0];
        let spec = TablesSpec {
            patched: "v7.1".into(),
            source: String::new(),
            tables: vec![t.clone()],
            checks: vec![],
        };
        assert!(spec
            .check("f.toml")
            .unwrap_err()
            .contains("published_patched has 1 values for 2 rows"));
        let mut spec2 = spec.clone();
        spec2.tables[0].published_patched = vec![];
        spec2.checks = vec![check("gain_min", &["3"], &[], Some(1.0))];
        assert!(spec2.check("f.toml").unwrap_err().contains("row '3'"));
        spec2.checks = vec![check("bogus", &[], &[], None)];
        assert!(spec2.check("f.toml").unwrap_err().contains("kind 'bogus'"));
        spec2.checks = vec![];
        spec2.tables[0].line = "x".into();
        assert!(spec2.check("f.toml").unwrap_err().contains("{param}"));
    }
}
