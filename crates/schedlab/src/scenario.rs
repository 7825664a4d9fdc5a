//! Seed reproductions (`schedlab reproduce`): scenarios are data (scenarios/*.toml, embedded;
//! a user file is accepted the same way) naming the platform, the workload lines, the kernel
//! variants, the metrics, the published numbers with their source, and acceptance targets.
//!
//! For every metric the report shows the published value, the simulated mean ± standard
//! deviation over seeds, and the relative effect of each variant against its reference
//! variant, published and simulated side by side, marking where the sign or the size disagree.
//! Nothing here is tuned per variant: every variant runs the same platform and workload.

use crate::run::{run, RunError, RunResult, RunSpec};
use crate::stats::{amean, stddev};
use serde::Deserialize;
use serde_json::{json, Value};
use std::fmt::Write;

/// Built-in scenarios: (name, file name, contents).
const BUILTIN: &[(&str, &str, &str)] = &[
    (
        "delay-dequeue",
        "scenarios/delay-dequeue.toml",
        include_str!("../../../scenarios/delay-dequeue.toml"),
    ),
    (
        "dl-server-wakeup",
        "scenarios/dl-server-wakeup.toml",
        include_str!("../../../scenarios/dl-server-wakeup.toml"),
    ),
    (
        "next-buddy",
        "scenarios/next-buddy.toml",
        include_str!("../../../scenarios/next-buddy.toml"),
    ),
    (
        "sched-idle-placement",
        "scenarios/sched-idle-placement.toml",
        include_str!("../../../scenarios/sched-idle-placement.toml"),
    ),
    (
        "preempt-short-buddies",
        "scenarios/preempt-short-buddies.toml",
        include_str!("../../../scenarios/preempt-short-buddies.toml"),
    ),
];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    /// `"interbench"` for the interbench scenarios (scenario_interbench.rs), `"sweep"` for the
    /// mmtests-style sweeps (scenario_sweep.rs); absent for the metric scenarios.
    #[serde(default)]
    pub kind: Option<String>,
    /// The `[interbench]` table of a scenario of kind interbench.
    #[serde(default)]
    pub interbench: Option<crate::scenario_interbench::IbSpec>,
    /// The `[sweep]` table of a scenario of kind sweep.
    #[serde(default)]
    pub sweep: Option<crate::scenario_sweep::SweepSpec>,
    /// The `[tables]` table of a scenario of kind tables (scenario_tables.rs).
    #[serde(default)]
    pub tables: Option<crate::scenario_tables::TablesSpec>,
    pub title: String,
    pub seed: String,
    pub platform: String,
    pub workloads: Vec<String>,
    #[serde(default)]
    pub quick_workloads: Vec<String>,
    #[serde(default)]
    pub duration: Option<String>,
    /// Length of the published runs (`"20s"`). When set, extensive metrics (event counts and
    /// CPU seconds) are reported per that much run time, so that a shorter (quick) run is
    /// compared with the published counts on the same footing.
    #[serde(default)]
    pub published_duration: Option<String>,
    #[serde(default = "default_runs")]
    pub runs: u32,
    #[serde(default = "default_quick_runs")]
    pub quick_runs: u32,
    pub baseline: String,
    pub metrics: Vec<String>,
    #[serde(default)]
    pub explain: Vec<String>,
    /// `COMM[:LONG]`: record the wakeups of these tasks in every run (`--explain-wakeups`);
    /// the `wakeup_long*` explain metrics and the longest waits of seed 1 come from them.
    #[serde(default)]
    pub explain_wakeups: Option<String>,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(rename = "variant")]
    pub variants: Vec<Variant>,
    #[serde(default, rename = "published")]
    pub published: Vec<Published>,
    #[serde(default, rename = "target")]
    pub targets: Vec<Target>,
    /// `[cgroups."/PATH"]` tables: groups created and configured before the workloads start
    /// (crate::cgroups).
    #[serde(default)]
    pub cgroups: crate::cgroups::Cgroups,
}

fn default_runs() -> u32 {
    10
}
fn default_quick_runs() -> u32 {
    3
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub kernel: String,
    pub label: String,
    /// What published numbers, targets, `baseline` and `relative_to` call this variant when
    /// two variants share a kernel (they differ in their workloads); default: the kernel.
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub relative_to: Option<String>,
    /// This variant's workload lines instead of the scenario's (e.g. other custom slices).
    #[serde(default)]
    pub workloads: Option<Vec<String>>,
    #[serde(default)]
    pub quick_workloads: Option<Vec<String>>,
}

impl Variant {
    /// The name published numbers and targets refer to.
    pub fn id(&self) -> &str {
        self.id.as_deref().unwrap_or(&self.kernel)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// The variant (its `id`, which is its kernel unless given).
    #[serde(alias = "variant")]
    pub kernel: String,
    pub metric: String,
    pub value: f64,
    pub source: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    pub description: String,
    pub metric: String,
    /// The variant (its `id`, which is its kernel unless given).
    #[serde(alias = "variant")]
    pub kernel: String,
    #[serde(default)]
    pub relative_to: Option<String>,
    /// Compare the metric divided by this metric of the same variant (e.g. P99 / median).
    #[serde(default)]
    pub divided_by: Option<String>,
    /// Checked on full runs only (e.g. sample counts of the published run length).
    #[serde(default)]
    pub full_only: bool,
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
}

/// Why reproduce failed.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{0}")]
    Input(String),
    #[error("{0}")]
    Run(#[from] RunError),
    /// Writing the report failed (stdout closed or full).
    #[error("writing the report: {0}")]
    Output(std::io::Error),
    /// The HTML report (`--html DIR`) could not be written.
    #[error("{0}")]
    Html(String),
}

impl ScenarioError {
    pub fn code(&self) -> u8 {
        match self {
            ScenarioError::Input(_) => 2,
            ScenarioError::Run(RunError::Invariant(_))
            | ScenarioError::Run(RunError::Trace { .. }) => 1,
            ScenarioError::Run(_) => 2,
            ScenarioError::Output(_) | ScenarioError::Html(_) => 1,
        }
    }
}

/// Parses a scenario file; errors name the file, line and key.
pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    let s: Scenario = toml::from_str(text).map_err(|e| {
        // toml's public error span (byte range of the offending key or value).
        let msg = e.message().trim().replace('\n', "; ");
        let at = e
            .span()
            .map(|sp| {
                let (line, col) = line_col(text, sp.start);
                format!(":{line}:{col}")
            })
            .unwrap_or_default();
        ScenarioError::Input(format!("{file}{at}: {msg}"))
    })?;
    let s = Scenario {
        cgroups: s
            .cgroups
            .located(text, file)
            .map_err(ScenarioError::Input)?,
        ..s
    };
    for (key, n) in [("runs", s.runs), ("quick_runs", s.quick_runs)] {
        check_runs(n).map_err(|m| ScenarioError::Input(format!("{file}: {key} = {n}: {m}")))?;
    }
    let kernels: Vec<&str> = s.variants.iter().map(|v| v.id()).collect();
    for (i, k) in kernels.iter().enumerate() {
        if kernels[..i].contains(k) {
            return Err(ScenarioError::Input(format!(
                "{file}: two [[variant]]s are called '{k}': give them distinct `id`s"
            )));
        }
    }
    let check = |k: &str, what: &str| -> Result<(), ScenarioError> {
        if kernels.contains(&k) {
            Ok(())
        } else {
            Err(ScenarioError::Input(format!(
                "{file}: {what} refers to '{k}', which is not a [[variant]] kernel or id"
            )))
        }
    };
    if let Some(e) = &s.explain_wakeups {
        crate::run::parse_explain_wakeups(e)
            .map_err(|m| ScenarioError::Input(format!("{file}: explain_wakeups: {m}")))?;
    }
    check(&s.baseline, "baseline")?;
    for v in &s.variants {
        schedlab_sched::KernelConfig::parse(&v.kernel)
            .map_err(|e| ScenarioError::Input(format!("{file}: [[variant]] {e}")))?;
        if let Some(r) = &v.relative_to {
            check(r, "variant.relative_to")?;
        }
    }
    for p in &s.published {
        check(&p.kernel, "published.kernel")?;
    }
    for t in &s.targets {
        check(&t.kernel, "target.kernel")?;
        if let Some(r) = &t.relative_to {
            check(r, "target.relative_to")?;
        }
    }
    // `kind = "NAME"` and its `[NAME]` table go together
    for (name, has_table) in [
        ("tables", s.tables.is_some()),
        ("sweep", s.sweep.is_some()),
        ("interbench", s.interbench.is_some()),
    ] {
        let is_kind = s.kind.as_deref() == Some(name);
        let article = if name.starts_with('i') { "an" } else { "a" };
        if is_kind && !has_table {
            return Err(ScenarioError::Input(format!(
                "{file}: kind = \"{name}\" needs {article} [{name}] table"
            )));
        }
        if has_table && !is_kind {
            return Err(ScenarioError::Input(format!(
                "{file}: {article} [{name}] table needs kind = \"{name}\""
            )));
        }
    }
    if let Some(tb) = &s.tables {
        for k in tb.kernels(&s.baseline) {
            check(k, "tables kernel")?;
        }
        // the messages quote the file's strings, which may hold a newline
        let one_line = |m: String| ScenarioError::Input(crate::scenario_tables::one_line(&m));
        tb.check(file).map_err(one_line)?;
        tb.validate_runs(file, &s.baseline, &s.cgroups)
            .map_err(one_line)?;
        return Ok(s);
    }
    if let Some(sw) = &s.sweep {
        sw.check(&kernels, file).map_err(ScenarioError::Input)?;
        return Ok(s);
    }
    if let Some(ib) = &s.interbench {
        for k in &ib.other_load_variants {
            check(k, "interbench.other_load_variants")?;
        }
        if !ib
            .loads
            .iter()
            .any(|l| l == crate::scenario_interbench::WRITE)
        {
            return Err(ScenarioError::Input(format!(
                "{file}: interbench.loads must include Write"
            )));
        }
        return Ok(s);
    }
    if let Some(k) = s.kind.as_deref() {
        return Err(ScenarioError::Input(format!(
            "{file}: kind = \"{k}\": unknown (known: interbench, sweep, tables)"
        )));
    }
    if s.variants.is_empty()
        || (s.workloads.is_empty() && s.variants.iter().any(|v| v.workloads.is_none()))
    {
        return Err(ScenarioError::Input(format!(
            "{file}: needs at least one [[variant]] and one workload"
        )));
    }
    Ok(s)
}

/// Most seeds per configuration (`runs`, `quick_runs`, `--runs`): each seed is one full
/// run, and the result table keeps every sample.
pub const MAX_RUNS: u32 = 10_000;

/// `runs` must be 1..=[`MAX_RUNS`].
pub fn check_runs(n: u32) -> Result<(), String> {
    if n == 0 || n > MAX_RUNS {
        return Err(format!("must be 1..={MAX_RUNS}"));
    }
    Ok(())
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    (line, col)
}

/// Checks the scenario's metric names against what its workloads produce, with a 1 ms run of
/// the first variant (the metric names do not depend on the run length).
fn check_metric_names(
    sc: &Scenario,
    workloads: &[String],
    names: &[String],
) -> Result<(), ScenarioError> {
    let spec = RunSpec {
        platform: sc.platform.clone(),
        kernel: sc.variants[0].kernel.clone(),
        workloads: workloads.to_vec(),
        duration_ns: Some(1_000_000),
        seed: 1,
        strict: false,
        trace: None,
        trace_columns: false,
        trace_limit: None,
        progress: false,
        explain_wakeups: sc.explain_wakeups.clone(),
        cgroups: sc.cgroups.clone(),
    };
    // not quiet: this one run per scenario shows the workloads' warnings once
    let r = run(&spec)?;
    let mut all: Vec<&String> = names.iter().collect();
    all.extend(sc.published.iter().map(|p| &p.metric));
    all.extend(sc.targets.iter().map(|t| &t.metric));
    for n in all {
        if metric_of(&r, n).is_none() {
            let mut known: Vec<String> = r
                .workloads
                .iter()
                .flat_map(|w| w.metrics.iter().map(|m| m.name.clone()))
                .collect();
            known.extend(BUILTIN_METRICS.iter().map(|m| m.to_string()));
            return Err(ScenarioError::Input(format!(
                "{}: unknown metric '{n}' (known for these workloads: {})",
                sc.name,
                known.join(", ")
            )));
        }
    }
    Ok(())
}

/// Metrics every run has, whatever its workloads (see `metric_of`).
const BUILTIN_METRICS: &[&str] = &[
    "sched_switch",
    "sched_migrate_task",
    "delayed_requeue_fraction",
    "delayed_requeue_busy_while_idle",
    "mean_runnable_per_cpu",
    "wakeup_preempt_fraction",
    "idle_fraction",
    "user_s",
    "system_s",
];

/// The built-in scenario `name`, or a scenario file at that path.
pub fn load(name: &str) -> Result<Scenario, ScenarioError> {
    if let Some((_, file, text)) = BUILTIN.iter().find(|(n, _, _)| *n == name) {
        return parse(text, file);
    }
    if name.ends_with(".toml") || std::path::Path::new(name).exists() {
        let text = schedlab_engine::input::read_input_file(std::path::Path::new(name))
            .map_err(|e| ScenarioError::Input(format!("{name}: {e}")))?;
        return parse(&text, name);
    }
    Err(ScenarioError::Input(format!(
        "unknown scenario '{name}' (known: {})",
        BUILTIN.iter().map(|b| b.0).collect::<Vec<_>>().join(", ")
    )))
}

/// `schedlab list scenarios`
pub fn list() -> String {
    let mut s = String::new();
    let width = BUILTIN.iter().map(|b| b.0.len()).max().unwrap_or(0);
    for (name, file, text) in BUILTIN {
        match parse(text, file) {
            Ok(sc) => {
                let _ = writeln!(
                    s,
                    "{:<width$} {} [{} on {}, {} variants]",
                    name,
                    sc.title,
                    sc.seed,
                    sc.platform,
                    sc.variants.len()
                );
            }
            Err(e) => {
                let _ = writeln!(s, "{:<width$} BROKEN: {e}", name);
            }
        }
    }
    s
}

/// Metrics that grow in proportion to the length of a steady run. (Migrations do not: in the
/// seed workloads they happen while the tasks settle, then stop.)
fn is_extensive(metric: &str) -> bool {
    matches!(metric, "sched_switch" | "user_s" | "system_s")
}

/// Values of one metric for one variant over the seeds; extensive metrics are scaled to
/// `per_ns` of simulated time when given.
fn metric_of_scaled(r: &RunResult, name: &str, per_ns: Option<u64>) -> Option<f64> {
    let v = metric_of(r, name)?;
    Some(match per_ns {
        Some(d) if is_extensive(name) && r.sim_time_ns > 0 => v * d as f64 / r.sim_time_ns as f64,
        _ => v,
    })
}

fn metric_of(r: &RunResult, name: &str) -> Option<f64> {
    for w in &r.workloads {
        if let Some(m) = w.metrics.iter().find(|m| m.name == name) {
            return Some(m.value);
        }
    }
    let wakeups = (r.ttwu_local + r.ttwu_remote + r.ttwu_delayed_requeue) as f64;
    let total_cpu = r.ncpus as f64 * r.sim_time_ns as f64;
    Some(match name {
        "sched_switch" => r.nr_switches as f64,
        "sched_migrate_task" => r.nr_migrations as f64,
        "delayed_requeue_fraction" => r.ttwu_delayed_requeue as f64 / wakeups.max(1.0),
        "delayed_requeue_busy_while_idle" => {
            r.ttwu_delayed_requeue_busy_while_idle as f64 / wakeups.max(1.0)
        }
        "mean_runnable_per_cpu" => r.mean_nr_running.iter().sum::<f64>() / r.ncpus as f64,
        "wakeup_preempt_fraction" => {
            let n = r
                .fair_ops
                .iter()
                .find(|(k, _)| k == "wakeup_preempt")
                .map(|(_, v)| *v)
                .unwrap_or(0);
            n as f64 / wakeups.max(1.0)
        }
        "idle_fraction" => {
            r.cpus.iter().map(|c| c.idle_ns as f64).sum::<f64>() / total_cpu.max(1.0)
        }
        "user_s" => r.tasks.iter().map(|t| t.user_ns as f64).sum::<f64>() / 1e9,
        "system_s" => r.tasks.iter().map(|t| t.sys_ns as f64).sum::<f64>() / 1e9,
        w if w.starts_with("wakeup_long") && r.wakeups_comm.is_some() => {
            let long = r.wakeups_comm.as_ref().map_or(0, |c| c.1);
            let reason = w.strip_prefix("wakeup_long_");
            if w != "wakeup_long" && reason.is_none() {
                return None;
            }
            r.wakeups
                .iter()
                .filter(|x| crate::explain::latency(x).is_some_and(|l| l >= long))
                .filter(|x| reason.is_none_or(|n| x.verdict.name() == n))
                .count() as f64
        }
        _ => return None,
    })
}

/// Results of one scenario.
pub struct Outcome {
    pub scenario: Scenario,
    pub quick: bool,
    pub runs: u32,
    /// Per variant, per metric (scenario metrics then explain metrics): samples.
    pub samples: Vec<Vec<Vec<f64>>>,
    pub metric_names: Vec<String>,
    /// Per variant: the longest waits of its first seed (`explain_wakeups`), rendered.
    pub examples: Vec<String>,
    /// Per variant: the workload lines it ran.
    pub variant_workloads: Vec<Vec<String>>,
}

/// Runs every variant `runs` times (seeds 1..=runs) on `jobs` worker threads (default: all
/// cores); the outcome does not depend on `jobs`.
pub fn execute(
    sc: &Scenario,
    runs: Option<u32>,
    quick: bool,
    progress: bool,
    jobs_limit: Option<usize>,
) -> Result<Outcome, ScenarioError> {
    let runs = runs.unwrap_or(if quick { sc.quick_runs } else { sc.runs });
    check_runs(runs).map_err(|m| ScenarioError::Input(format!("--runs {runs}: {m}")))?;
    let workloads_of = |v: &Variant| -> Vec<String> {
        let own = if quick {
            v.quick_workloads.as_ref().or(v.workloads.as_ref())
        } else {
            v.workloads.as_ref()
        };
        match own {
            Some(w) => w.clone(),
            None if quick && !sc.quick_workloads.is_empty() => sc.quick_workloads.clone(),
            None => sc.workloads.clone(),
        }
    };
    let variant_workloads: Vec<Vec<String>> = sc.variants.iter().map(workloads_of).collect();
    let workloads = &variant_workloads[0];
    let duration_ns = match &sc.duration {
        Some(d) => Some(
            schedlab_engine::parse_duration(d)
                .map_err(|e| ScenarioError::Input(format!("{}: duration: {e}", sc.name)))?
                .0,
        ),
        None => None,
    };
    let per_ns = match &sc.published_duration {
        Some(d) => Some(
            schedlab_engine::parse_duration(d)
                .map_err(|e| ScenarioError::Input(format!("{}: published_duration: {e}", sc.name)))?
                .0,
        ),
        None => None,
    };
    let mut names: Vec<String> = sc.metrics.clone();
    for e in &sc.explain {
        if !names.contains(e) {
            names.push(e.clone());
        }
    }
    check_metric_names(sc, workloads, &names)?;
    let jobs: Vec<(usize, u64)> = (0..sc.variants.len())
        .flat_map(|v| (1..=runs as u64).map(move |s| (v, s)))
        .collect();
    let bar = crate::progress::Bar::new(
        progress,
        jobs.len() as u64,
        "{prefix} [{bar:40}] {pos}/{len} runs",
        &sc.name,
    );
    let results = crate::jobs::run_with_bar(
        jobs.len(),
        jobs_limit.unwrap_or_else(crate::jobs::default_jobs),
        bar,
        |i| {
            let (v, seed) = jobs[i];
            let spec = RunSpec {
                platform: sc.platform.clone(),
                kernel: sc.variants[v].kernel.clone(),
                workloads: variant_workloads[v].clone(),
                duration_ns,
                seed,
                strict: false,
                trace: None,
                trace_columns: false,
                trace_limit: None,
                progress: false,
                explain_wakeups: sc.explain_wakeups.clone(),
                cgroups: sc.cgroups.clone(),
            };
            crate::run::quiet_warnings(|| run(&spec))
                .map(|r| {
                    let vals = names
                        .iter()
                        .map(|n| metric_of_scaled(&r, n, per_ns))
                        .collect::<Vec<Option<f64>>>();
                    // the longest waits of the first seed, for the report
                    let example = match (&r.wakeups_comm, seed) {
                        (Some((comm, long)), 1) => crate::explain::text(comm, &r.wakeups, *long, 3),
                        _ => String::new(),
                    };
                    (vals, example)
                })
                .map_err(|e| e.to_string())
        },
    );
    let mut samples = vec![vec![Vec::new(); names.len()]; sc.variants.len()];
    let mut examples = vec![String::new(); sc.variants.len()];
    for (i, r) in results.into_iter().enumerate() {
        let (vals, example) = r.map_err(ScenarioError::Input)?;
        let (v, _) = jobs[i];
        for (m, x) in vals.into_iter().enumerate() {
            if let Some(x) = x {
                samples[v][m].push(x);
            }
        }
        if !example.is_empty() {
            examples[v] = example;
        }
    }
    Ok(Outcome {
        scenario: sc.clone(),
        quick,
        runs,
        samples,
        metric_names: names,
        examples,
        variant_workloads,
    })
}

impl Outcome {
    fn vidx(&self, kernel: &str) -> usize {
        self.scenario
            .variants
            .iter()
            .position(|v| v.id() == kernel)
            .unwrap()
    }
    fn midx(&self, metric: &str) -> Option<usize> {
        self.metric_names.iter().position(|m| m == metric)
    }
    pub fn mean(&self, kernel: &str, metric: &str) -> Option<f64> {
        let m = self.midx(metric)?;
        let v = &self.samples[self.vidx(kernel)][m];
        (!v.is_empty()).then(|| amean(v))
    }
    fn published(&self, kernel: &str, metric: &str) -> Option<&Published> {
        self.scenario
            .published
            .iter()
            .find(|p| p.kernel == kernel && p.metric == metric)
    }
    fn reference_of(&self, v: &Variant) -> String {
        v.relative_to
            .clone()
            .unwrap_or_else(|| self.scenario.baseline.clone())
    }

    /// Whether each acceptance target holds: (target, simulated value, pass).
    pub fn targets(&self) -> Vec<(&Target, Option<f64>, bool)> {
        self.scenario
            .targets
            .iter()
            .filter(|t| !(self.quick && t.full_only))
            .map(|t| {
                let v = self
                    .mean(&t.kernel, &t.metric)
                    .and_then(|x| match &t.divided_by {
                        Some(d) => self.mean(&t.kernel, d).map(|b| x / b),
                        None => Some(x),
                    })
                    .and_then(|x| match &t.relative_to {
                        Some(r) => self.mean(r, &t.metric).map(|b| x / b),
                        None => Some(x),
                    });
                let ok = v
                    .map(|x| {
                        t.min.map(|m| x >= m).unwrap_or(true)
                            && t.max.map(|m| x <= m).unwrap_or(true)
                    })
                    .unwrap_or(false);
                (t, v, ok)
            })
            .collect()
    }

    /// The text report.
    pub fn render(&self) -> String {
        let sc = &self.scenario;
        let mut s = String::new();
        let _ = writeln!(s, "{} — {}", sc.name, sc.title);
        let _ = writeln!(
            s,
            "seed {} · platform {} · workload '{}' · {} run(s) per variant{}",
            sc.seed,
            sc.platform,
            if self.quick && !sc.quick_workloads.is_empty() {
                sc.quick_workloads.join("' + '")
            } else {
                sc.workloads.join("' + '")
            },
            self.runs,
            if self.quick { " (quick)" } else { "" }
        );
        for (v, w) in sc.variants.iter().zip(&self.variant_workloads) {
            if v.workloads.is_some() || v.quick_workloads.is_some() {
                let _ = writeln!(s, "  {} [{}]: '{}'", v.id(), v.label, w.join("' + '"));
            }
        }
        for m in &sc.metrics {
            let Some(mi) = self.midx(m) else { continue };
            let _ = writeln!(s, "\n  {m}");
            let _ = writeln!(
                s,
                "    {:<44} {:>13} {:>24} {:>10} {:>10}",
                "variant", "published", "simulated (mean ± sd)", "pub Δ", "sim Δ"
            );
            for (vi, v) in sc.variants.iter().enumerate() {
                let xs = &self.samples[vi][mi];
                let sim = (!xs.is_empty()).then(|| (amean(xs), stddev(xs)));
                let publ = self.published(v.id(), m);
                let reference = self.reference_of(v);
                let (pd, sd) = if reference == v.id() {
                    (None, None)
                } else {
                    let pd = publ.and_then(|p| {
                        self.published(&reference, m)
                            .map(|b| p.value / b.value - 1.0)
                    });
                    let sd = sim.and_then(|(x, _)| self.mean(&reference, m).map(|b| x / b - 1.0));
                    (pd, sd)
                };
                let mark = match (pd, sd) {
                    (Some(p), Some(q)) => disagreement(p, q),
                    _ => "",
                };
                let _ = writeln!(
                    s,
                    "    {:<44} {:>13} {:>24} {:>10} {:>10} {}",
                    truncate(&format!("{} [{}]", v.id(), v.label), 44),
                    publ.map(|p| fmt(p.value)).unwrap_or_else(|| "—".into()),
                    sim.map(|(a, d)| format!("{} ± {}", fmt(a), fmt(d)))
                        .unwrap_or_else(|| "—".into()),
                    pd.map(pct).unwrap_or_default(),
                    sd.map(pct).unwrap_or_default(),
                    mark
                );
            }
        }
        let _ = writeln!(s, "\n  Δ = change against the variant's reference ({} unless stated). SIGN: opposite direction; SIZE: magnitude off by more than 10 points and 50 %.", sc.baseline);
        if let Some(d) = &sc.published_duration {
            let _ = writeln!(
                s,
                "  sched_switch and CPU seconds are per {d} of simulated run time, as published; migrations are the run's own count."
            );
        }
        if !sc.targets.is_empty() {
            let _ = writeln!(
                s,
                "\n  acceptance targets (the scenario's [[target]] entries):"
            );
            for t in sc.targets.iter().filter(|t| self.quick && t.full_only) {
                let _ = writeln!(s, "    [full run only] {}", t.description);
            }
            for (t, v, ok) in self.targets() {
                let _ = writeln!(
                    s,
                    "    [{}] {} — simulated {}",
                    if ok { "ok" } else { "MISS" },
                    t.description,
                    v.map(fmt).unwrap_or_else(|| "—".into())
                );
            }
        }
        if !sc.explain.is_empty() {
            let _ = writeln!(s, "\n  mechanism (means over seeds):");
            let _ = write!(s, "    {:<44}", "variant");
            for e in &sc.explain {
                let _ = write!(s, " {:>16}", truncate(e, 16));
            }
            s.push('\n');
            for (vi, v) in sc.variants.iter().enumerate() {
                let _ = write!(s, "    {:<44}", truncate(v.id(), 44));
                for e in &sc.explain {
                    let mi = self.midx(e).unwrap();
                    let xs = &self.samples[vi][mi];
                    let _ = write!(
                        s,
                        " {:>16}",
                        if xs.is_empty() {
                            "—".into()
                        } else {
                            fmt(amean(xs))
                        }
                    );
                }
                s.push('\n');
            }
        }
        if self.examples.iter().any(|e| !e.is_empty()) {
            let _ = writeln!(s, "\n  why the wakeups waited (seed 1 of each variant):");
            for (v, e) in sc.variants.iter().zip(&self.examples) {
                let _ = write!(s, "\n  {} [{}]:{}", v.id(), v.label, e);
            }
        }
        for n in &sc.notes {
            let _ = writeln!(s, "\n  note: {n}");
        }
        s
    }

    /// The `--json` document `{scenario, rows: [{variant, metric, unit, published, simulated,
    /// simulated_stddev}], targets: [...]}`.
    pub fn json(&self) -> Value {
        let sc = &self.scenario;
        let mut rows = Vec::new();
        for (vi, v) in sc.variants.iter().enumerate() {
            for (mi, m) in self.metric_names.iter().enumerate() {
                let xs = &self.samples[vi][mi];
                rows.push(json!({
                    "variant": v.id(),
                    "metric": m,
                    "unit": unit_of(m),
                    "published": self.published(v.id(), m).map(|p| p.value),
                    "simulated": (!xs.is_empty()).then(|| amean(xs)),
                    "simulated_stddev": (!xs.is_empty()).then(|| stddev(xs)),
                }));
            }
        }
        let targets: Vec<Value> = self
            .targets()
            .into_iter()
            .map(|(t, v, ok)| json!({"description": t.description, "simulated": v, "pass": ok}))
            .collect();
        json!({"scenario": sc.name, "quick": self.quick, "runs": self.runs, "rows": rows, "targets": targets})
    }
}

fn unit_of(metric: &str) -> &'static str {
    match metric {
        "bogo_ops_per_sec" => "ops/s",
        "user_s" | "system_s" => "s",
        "sched_switch" | "sched_migrate_task" => "events",
        "switches_per_op" => "switches/op",
        "delayed_requeue_fraction"
        | "delayed_requeue_busy_while_idle"
        | "idle_fraction"
        | "wakeup_preempt_fraction" => "fraction",
        "mean_runnable_per_cpu" => "tasks",
        m if m.starts_with("lat_") && m.ends_with("_us") => "us",
        "samples" => "samples",
        m if m.starts_with("wakeup_long") => "wakeups",
        _ => "",
    }
}

/// Marks a simulated relative effect that disagrees with the published one.
fn disagreement(published: f64, simulated: f64) -> &'static str {
    let noise = 0.02;
    if published.abs() > noise
        && simulated.abs() > noise
        && published.signum() != simulated.signum()
    {
        return "SIGN";
    }
    if published.abs() > noise && simulated.abs() <= noise {
        return "SIGN";
    }
    if (published - simulated).abs() > 0.10 && (published - simulated).abs() > 0.5 * published.abs()
    {
        return "SIZE";
    }
    ""
}

fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

fn fmt(x: f64) -> String {
    if x.abs() >= 1000.0 {
        format!("{:.0}", x)
    } else if x.abs() >= 10.0 {
        format!("{:.1}", x)
    } else {
        format!("{:.3}", x)
    }
}

fn truncate(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else {
        s.chars().take(w - 1).collect::<String>() + "…"
    }
}

/// `schedlab reproduce [NAME…] [--runs N] [--quick] [--json]`: every scenario is loaded and
/// checked before any runs; the text report of each is written as soon as it is done. The JSON
/// document is always one object, `{"schema_version": 1, "scenarios": [...]}`, whatever the
/// number of scenarios.
pub fn cli_reproduce(
    names: &[String],
    runs: Option<u32>,
    quick: bool,
    as_json: bool,
    progress: bool,
    out: &mut dyn std::io::Write,
    jobs: Option<usize>,
) -> Result<(), ScenarioError> {
    cli_reproduce_with(
        names,
        runs,
        quick,
        as_json,
        progress,
        out,
        jobs,
        SweepFlags::default(),
    )
}

/// The flags of the sweep scenarios (`--full-size`, `--check-scaling`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SweepFlags {
    /// hackbench at the published `-l` instead of the scaled run.
    pub full_size: bool,
    /// Run the scaling check instead of the reproduction.
    pub check_scaling: bool,
    /// Benchmarks left out (`--only`, [`crate::scenario_sweep::Mode::skip`]).
    pub skip: u8,
}

/// [`cli_reproduce`] with the sweep flags. With `--check-scaling` and no names, only the
/// sweep scenarios run; a named scenario of another kind is an error.
pub fn cli_reproduce_with(
    names: &[String],
    runs: Option<u32>,
    quick: bool,
    as_json: bool,
    progress: bool,
    out: &mut dyn std::io::Write,
    jobs: Option<usize>,
    flags: SweepFlags,
) -> Result<(), ScenarioError> {
    cli_reproduce_html(
        names, runs, quick, as_json, progress, out, jobs, flags, None,
    )
}

/// [`cli_reproduce_with`], and with `html = Some(DIR)` also the HTML report
/// (crate::html): `DIR/SCENARIO.html` per scenario and `DIR/index.html`, written once every
/// scenario has run. DIR is created first, so that an unwritable DIR fails before any run.
pub fn cli_reproduce_html(
    names: &[String],
    runs: Option<u32>,
    quick: bool,
    as_json: bool,
    progress: bool,
    out: &mut dyn std::io::Write,
    jobs: Option<usize>,
    flags: SweepFlags,
    html: Option<&std::path::Path>,
) -> Result<(), ScenarioError> {
    if let Some(dir) = html {
        create_html_dir(dir)?;
    }
    // (scenario, text, JSON) of each scenario run, for the HTML report
    let mut pages: Vec<(Scenario, String, Value)> = Vec::new();
    let mut docs = Vec::new();
    reproduce_each(
        names,
        runs,
        quick,
        progress,
        jobs,
        flags,
        &mut |sc, text, doc| {
            if html.is_some() {
                pages.push((sc.clone(), text.to_string(), doc.clone()));
            }
            if as_json {
                docs.push(doc);
                Ok(())
            } else {
                writeln!(out, "{text}")
                    .and_then(|_| out.flush())
                    .map_err(ScenarioError::Output)
            }
        },
    )?;
    if as_json {
        let doc = reproduce_json(docs);
        writeln!(out, "{}", serde_json::to_string_pretty(&doc).unwrap())
            .and_then(|_| out.flush())
            .map_err(ScenarioError::Output)?;
    }
    if let Some(dir) = html {
        write_html(dir, &pages)?;
    }
    Ok(())
}

/// [`cli_reproduce_with`] rendered both ways from one set of runs: `(reproduce --json
/// document, text)`, each exactly as the CLI prints it (the Python package returns both);
/// with `html = Some(DIR)` also the HTML report, as `reproduce --html DIR` writes it.
pub fn reproduce_outputs(
    names: &[String],
    runs: Option<u32>,
    quick: bool,
    progress: bool,
    jobs: Option<usize>,
    flags: SweepFlags,
    html: Option<&std::path::Path>,
) -> Result<(String, String), ScenarioError> {
    let mut out = Vec::new();
    let mut docs = Vec::new();
    let mut text = String::new();
    if let Some(dir) = html {
        create_html_dir(dir)?;
    }
    reproduce_each(
        names,
        runs,
        quick,
        progress,
        jobs,
        flags,
        &mut |sc, t, doc| {
            text.push_str(t);
            text.push('\n');
            if html.is_some() {
                out.push((sc.clone(), t.to_string(), doc.clone()));
            }
            docs.push(doc);
            Ok(())
        },
    )?;
    if let Some(dir) = html {
        write_html(dir, &out)?;
    }
    let json = serde_json::to_string_pretty(&reproduce_json(docs)).unwrap() + "\n";
    Ok((json, text))
}

/// Runs the scenarios in order and hands each one's text report and JSON document to `each`
/// as soon as it is done.
fn reproduce_each(
    names: &[String],
    runs: Option<u32>,
    quick: bool,
    progress: bool,
    jobs: Option<usize>,
    flags: SweepFlags,
    each: &mut dyn FnMut(&Scenario, &str, Value) -> Result<(), ScenarioError>,
) -> Result<(), ScenarioError> {
    let names: Vec<String> = if names.is_empty() {
        BUILTIN
            .iter()
            .filter(|b| !flags.check_scaling || b.0 == "next-buddy")
            .map(|b| b.0.to_string())
            .collect()
    } else {
        names.to_vec()
    };
    let scenarios: Vec<Scenario> = names.iter().map(|n| load(n)).collect::<Result<_, _>>()?;
    if flags.check_scaling {
        if let Some(sc) = scenarios.iter().find(|s| s.sweep.is_none()) {
            return Err(ScenarioError::Input(format!(
                "--check-scaling: scenario '{}' has no hackbench sweep (only kind = \"sweep\" scenarios do)",
                sc.name
            )));
        }
        if quick {
            return Err(ScenarioError::Input(
                "--check-scaling and --quick cannot be used together".into(),
            ));
        }
    }
    for sc in &scenarios {
        if let Some(sw) = &sc.sweep {
            let (text, doc, timing) = if flags.check_scaling {
                let groups = crate::scenario_sweep::scaling_groups(flags.full_size);
                let o = crate::scenario_sweep::check_scaling(sc, sw, &groups, progress, jobs)?;
                (o.render(&sc.name), o.json(&sc.name), o.timing_summary())
            } else {
                let mode = crate::scenario_sweep::Mode {
                    quick,
                    full_size: flags.full_size,
                    skip: flags.skip,
                };
                let o =
                    crate::scenario_sweep::execute_scenario(sc, sw, runs, mode, progress, jobs)?;
                (
                    o.render(&sc.name, &sc.title, &sc.seed, &sc.platform),
                    o.json(&sc.name),
                    o.timing_summary(),
                )
            };
            if progress {
                // wall times vary from run to run: stderr only, never in the report
                eprint!("{}: wall time per run\n{timing}", sc.name);
            }
            each(sc, &text, doc)?;
            continue;
        }
        if let Some(tb) = &sc.tables {
            let o = crate::scenario_tables::execute_scenario(sc, tb, runs, quick, progress, jobs)?;
            if progress {
                eprint!("{}: wall time per run\n{}", sc.name, o.timing_summary());
            }
            each(
                sc,
                &o.render(&sc.name, &sc.title, &sc.seed),
                o.json(&sc.name),
            )?;
            continue;
        }
        if let Some(ib) = &sc.interbench {
            let o =
                crate::scenario_interbench::execute_scenario(sc, ib, runs, quick, progress, jobs)?;
            each(
                sc,
                &o.render(&sc.name, &sc.title, &sc.seed, &sc.platform),
                o.json(&sc.name),
            )?;
            continue;
        }
        let o = execute(sc, runs, quick, progress, jobs)?;
        each(sc, &o.render(), o.json())?;
    }
    Ok(())
}

/// `--html DIR`: created before any run, so that an unwritable DIR fails at once.
fn create_html_dir(dir: &std::path::Path) -> Result<(), ScenarioError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| ScenarioError::Html(format!("--html: creating {}: {e}", dir.display())))
}

/// The HTML report of the scenarios run: a page each, then the index.
fn write_html(
    dir: &std::path::Path,
    pages: &[(Scenario, String, Value)],
) -> Result<(), ScenarioError> {
    let mut index = Vec::new();
    for (sc, text, doc) in pages {
        let r = crate::plots::reproduction_from_json(doc)
            .map_err(ScenarioError::Html)?
            .into_iter()
            .next()
            .ok_or_else(|| ScenarioError::Html(format!("{}: no results", sc.name)))?;
        let info = crate::html::ScenarioInfo {
            name: r.name.clone(),
            title: sc.title.clone(),
            seed: sc.seed.clone(),
            platform: sc.platform.clone(),
            workloads: sc.workloads.clone(),
            variants: sc
                .variants
                .iter()
                .map(|v| (v.kernel.clone(), v.label.clone()))
                .collect(),
            notes: sc.notes.clone(),
        };
        let html = crate::html::scenario_page(&info, &r, text);
        let path = dir.join(format!("{}.html", crate::html::page_name(&r.name)));
        crate::trace_file::write_file_atomic(&path, html.as_bytes())
            .map_err(|e| ScenarioError::Html(format!("--html: writing {}: {e}", path.display())))?;
        index.push((info, r));
    }
    let path = dir.join("index.html");
    crate::trace_file::write_file_atomic(&path, crate::html::index_page(&index).as_bytes())
        .map_err(|e| ScenarioError::Html(format!("--html: writing {}: {e}", path.display())))
}

/// The one shape of `reproduce --json`, for one scenario or several.
pub fn reproduce_json(scenarios: Vec<Value>) -> Value {
    json!({"schema_version": crate::report::SCHEMA_VERSION, "scenarios": scenarios})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed-000 effects, in miniature: 300 ms of `stress-ng --pipe 4` on rpi5, one seed.
    /// Signs from the published numbers (docs/model.md W§12.1): 6.12 is slower than 6.6 (−34 %,
    /// with 1.7 against 0.45 switches per op); DELAY_DEQUEUE off recovers (+41 %);
    /// PREEMPT_SHORT off changes little (−6 %).
    #[test]
    fn delay_dequeue_quick_signs() {
        let mut sc = load("delay-dequeue").unwrap();
        sc.duration = Some("300ms".into());
        sc.variants.retain(|v| {
            [
                "v6.6.78",
                "v6.12.81",
                "v6.12.81 NO_DELAY_DEQUEUE",
                "v6.12.81 NO_PREEMPT_SHORT",
            ]
            .contains(&v.kernel.as_str())
        });
        sc.targets.clear();
        let o = execute(&sc, Some(1), true, false, None).unwrap();
        let ops = |k: &str| o.mean(k, "bogo_ops_per_sec").unwrap();
        let spo = |k: &str| o.mean(k, "switches_per_op").unwrap();
        assert!(ops("v6.12.81") < 0.9 * ops("v6.6.78"));
        assert!(spo("v6.12.81") > 1.2 && spo("v6.6.78") < spo("v6.12.81"));
        assert!(ops("v6.12.81 NO_DELAY_DEQUEUE") > 1.3 * ops("v6.12.81"));
        let r = ops("v6.12.81 NO_PREEMPT_SHORT") / ops("v6.12.81");
        assert!((0.9..1.1).contains(&r), "{r}");
        // the report renders every variant and the JSON has one row per variant and metric
        let text = o.render();
        assert!(text.contains("v6.12.81 NO_DELAY_DEQUEUE"));
        let j = o.json();
        assert_eq!(
            j["rows"].as_array().unwrap().len(),
            4 * o.metric_names.len()
        );
        // one scenario or two: the same shape, an object with a scenarios array
        for n in [1, 2] {
            let d = reproduce_json(vec![j.clone(); n]);
            assert_eq!(d["schema_version"], 1);
            assert_eq!(d["scenarios"].as_array().unwrap().len(), n);
        }
    }

    /// `reproduce --quick --json` prints the same bytes on one worker thread and on two: each
    /// (variant, seed) job is an independent simulation and results are kept in job order.
    /// Kept cheap: two variants, three seeds, 20 ms each.
    #[test]
    fn jobs_do_not_change_the_output() {
        let mut sc = load("delay-dequeue").unwrap();
        sc.duration = Some("20ms".into());
        sc.variants
            .retain(|v| ["v6.6.78", "v6.12.81"].contains(&v.kernel.as_str()));
        sc.targets.clear();
        let one = execute(&sc, Some(3), true, false, Some(1)).unwrap();
        let two = execute(&sc, Some(3), true, false, Some(2)).unwrap();
        assert_eq!(
            serde_json::to_string_pretty(&one.json()).unwrap(),
            serde_json::to_string_pretty(&two.json()).unwrap()
        );
        assert_eq!(one.render(), two.render());
        // and the runs did happen: three samples per variant of a metric every run reports
        let m = one
            .metric_names
            .iter()
            .position(|n| n == "sched_switch")
            .unwrap();
        assert!(one.samples.iter().all(|v| v[m].len() == 3));
    }

    /// Seed 004 in miniature (2 s of cyclictest, one seed): without 78cde54ea5f0 and with the
    /// 8/20 ms slices some wakeups wait ≥ 500 us because the probe returned the stale
    /// self-buddy of /test-A (docs/model.md W§12.5); with it none does, and its P99 stays
    /// within 2x the median (the acceptance rule).
    #[test]
    fn preempt_short_buddies_mechanism_in_miniature() {
        let mut sc = load("preempt-short-buddies").unwrap();
        for v in &mut sc.variants {
            if let Some(w) = &mut v.quick_workloads {
                w[1] = w[1].replace("-D 5", "-D 2");
            }
        }
        sc.quick_workloads[1] = sc.quick_workloads[1].replace("-D 5", "-D 2");
        sc.targets.retain(|t| t.divided_by.is_some());
        let o = execute(&sc, Some(1), true, false, None).unwrap();
        let m = |k: &str, n: &str| o.mean(k, n).unwrap();
        assert!(m("tip-slices", "wakeup_long_self_buddy") > 0.0);
        assert_eq!(m("patched-slices", "wakeup_long"), 0.0);
        assert!(m("patched-slices", "lat_p99_us") <= 2.0 * m("patched-slices", "lat_p50_us"));
        assert!(m("tip-slices", "lat_max_us") > 10.0 * m("patched-slices", "lat_p50_us"));
        // the report explains the waits of each variant
        assert!(o.render().contains("stale self-buddy"));
    }

    #[test]
    fn builtin_scenarios_parse() {
        for (n, f, t) in BUILTIN {
            let s = parse(t, f).unwrap();
            assert_eq!(&s.name, n);
        }
    }

    #[test]
    fn broken_files_name_file_and_line() {
        let e = parse("name = \"x\"\ntitle = 3\n", "s.toml")
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("s.toml:2:"), "{e}");
        let e = parse(
            "name='x'\ntitle='t'\nseed='s'\nplatform='smp:1'\nworkloads=['w']\nbaseline='v6.6'\nmetrics=[]\n[[variant]]\nkernel='v6.6'\nlabel='a'\n[[published]]\nkernel='v9'\nmetric='m'\nvalue=1\nsource='s'\n",
            "s.toml",
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("'v9'"), "{e}");
        let e = parse("name='x'\nbogus=1\n", "s.toml")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("bogus") && e.starts_with("s.toml:2"), "{e}");
    }

    /// A scenario's kind and its table go together; errors name the file and the key.
    #[test]
    fn interbench_kind_needs_its_table() {
        let head = "name='x'\ntitle='t'\nseed='s'\nplatform='rpi4-rt'\nworkloads=[]\nbaseline='v6.12'\nmetrics=[]\n";
        let variant = "[[variant]]\nkernel='v6.12'\nlabel='a'\n";
        let ib = "[interbench]\nbench='Audio'\nloads=['None','Write']\nduration_s=60\nwrite_runs=2\nother_runs=1\nother_load_variants=['v6.12']\nquick_duration_s=10\nquick_write_duration_s=10\nquick_write_seeds=[1]\n";
        let err = |t: String| parse(&t, "s.toml").err().unwrap().to_string();
        assert!(err(format!("{head}kind='interbench'\n{variant}"))
            .contains("needs an [interbench] table"));
        assert!(err(format!("{head}kind='bogus'\n{variant}")).contains("kind = \"bogus\""));
        assert!(err(format!("{head}{ib}{variant}")).contains("needs kind = \"interbench\""));
        let no_write = ib.replace("'None','Write'", "'None'");
        assert!(err(format!("{head}kind='interbench'\n{no_write}{variant}")).contains("Write"));
        let bad_variant = ib.replace("['v6.12']", "['v9']");
        assert!(err(format!("{head}kind='interbench'\n{bad_variant}{variant}")).contains("'v9'"));
        assert!(parse(&format!("{head}kind='interbench'\n{ib}{variant}"), "s.toml").is_ok());
    }

    #[test]
    fn disagreement_marks() {
        assert_eq!(disagreement(-0.34, -0.30), "");
        assert_eq!(disagreement(-0.34, 0.10), "SIGN");
        assert_eq!(disagreement(0.41, 0.005), "SIGN");
        assert_eq!(disagreement(0.41, 0.05), "SIZE");
        assert_eq!(disagreement(-0.06, -0.03), "");
    }
}
