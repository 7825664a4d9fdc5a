//! Scenarios of kind `interbench` (seed 001, `schedlab reproduce dl-server-wakeup`): every kernel
//! variant runs interbench's benchmarked task (Audio) under each load for many seeds; the report
//! puts interbench's own table rows (latencies in 100 ns units) beside the published ones, counts
//! the *bad* runs (a Write-row maximum above 10 ms: a missed Audio deadline, which interbench
//! prints as ordinary latency + one 50 ms interval), and explains each missed deadline with what
//! the fair_server did on CPU 0 at that moment (docs/model.md R§4.9).
//!
//! One run is one `interbench -r -t T -u -w LOAD -W BENCH` invocation on its own seed. The
//! published "after" table is one interbench block, so the report's after table is the block of
//! the seed with the largest Write maximum (its other loads are run with that seed too);
//! means over seeds are separate rows without a published value. Nothing here depends on the
//! variant: every variant runs the same platform, workload and seeds.

use crate::stats::{amean, stddev};
use serde::Deserialize;
use serde_json::{json, Value};
use std::fmt::Write;

/// The `[interbench]` table of a scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IbSpec {
    pub bench: String,
    pub loads: Vec<String>,
    /// interbench `-t` of the full runs (s).
    pub duration_s: u32,
    /// Seeds of the Write load per variant.
    pub write_runs: u32,
    /// Seeds of every other load (for the variants in `other_load_variants`).
    pub other_runs: u32,
    pub other_load_variants: Vec<String>,
    /// `--quick`: `-t` of the other loads, `-t` of the Write runs, and the Write seeds.
    pub quick_duration_s: u32,
    pub quick_write_duration_s: u32,
    pub quick_write_seeds: Vec<u64>,
    /// schedlab's own interbench options appended to every run (`--units 100ns`, …).
    #[serde(default)]
    pub options: String,
    /// A run is bad when its Write-row maximum exceeds this (ms).
    #[serde(default = "default_bad_ms")]
    pub bad_ms: f64,
}

fn default_bad_ms() -> f64 {
    10.0
}

/// The load that carries the intermittent effect.
pub const WRITE: &str = "Write";

/// One interbench row, as interbench computes it (latencies in ns; percentages).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Row {
    pub n: u64,
    pub mean_ns: f64,
    /// True standard deviation (the modified interbench's "SD").
    pub sd_ns: f64,
    pub median_ns: f64,
    pub max_ns: f64,
    pub desired_cpu: f64,
    pub deadlines_met: f64,
}

/// A fair_server run at deadline priority on the benchmark's CPU (the run's server log).
pub use crate::run::DlServerRun as Activation;

/// What one run gives the scenario.
#[derive(Debug, Clone, Default)]
pub struct IbRun {
    pub row: Row,
    /// Every latency sample: (time of the activation in ns, sample in ns, penalty included).
    pub samples: Vec<(u64, u64)>,
    /// fair_server activations on CPU 0.
    pub activations: Vec<Activation>,
}

/// Constants of interbench's accounting the checks rely on (docs/model.md W§6).
const MISSED_LO_NS: u64 = 50_000_000;
const MISSED_HI_NS: u64 = 50_100_000;
const ORDINARY_NS: u64 = 1_000_000;

impl IbRun {
    pub fn is_bad(&self, bad_ms: f64) -> bool {
        self.row.max_ns > bad_ms * 1e6
    }
    /// Samples that are neither ordinary (< 1 ms) nor ordinary + one missed 50 ms interval
    /// (in [50.0, 50.1] ms): a stall visible as such, which the published row rules out.
    pub fn odd_samples(&self) -> usize {
        self.samples
            .iter()
            .filter(|&&(_, s)| !(s < ORDINARY_NS || (MISSED_LO_NS..=MISSED_HI_NS).contains(&s)))
            .count()
    }
    /// Samples carrying a missed-deadline penalty.
    pub fn missed(&self) -> Vec<(u64, u64)> {
        self.samples
            .iter()
            .copied()
            .filter(|&(_, s)| s >= MISSED_LO_NS)
            .collect()
    }
    pub fn non_starved_activations(&self) -> usize {
        self.activations.iter().filter(|a| !a.starved).count()
    }
    /// The activation that explains a missed deadline whose sample was taken at `t`: the last
    /// non-starved activation that started at most one Audio interval plus its run before.
    pub fn cause_of(&self, t: u64, interval_ns: u64) -> Option<&Activation> {
        self.activations.iter().rfind(|a| {
            !a.starved
                && a.t_start <= t
                && t <= a.t_end + 2 * interval_ns
                && a.held_off.iter().any(|(w, _)| w.contains("FIFO"))
        })
    }
}

/// interbench's pooled summary row (docs/model.md W§6): mean of the means, SD from the mean of
/// the variances plus the population variance of the means, max of the maxima.
pub fn pooled(rows: &[Row]) -> (f64, f64, f64) {
    if rows.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let n = rows.len() as f64;
    let mean = rows.iter().map(|r| r.mean_ns).sum::<f64>() / n;
    let var_within = rows.iter().map(|r| r.sd_ns * r.sd_ns).sum::<f64>() / n;
    let var_between = rows
        .iter()
        .map(|r| (r.mean_ns - mean) * (r.mean_ns - mean))
        .sum::<f64>()
        / n;
    let max = rows.iter().map(|r| r.max_ns).fold(0.0, f64::max);
    (mean, (var_within + var_between).sqrt(), max)
}

/// ns → interbench's 100 ns unit.
fn u100(ns: f64) -> f64 {
    ns / 100.0
}

/// One simulation: (variant index, load, seed, interbench -t in s).
#[derive(Debug, Clone, PartialEq)]
struct Job {
    variant: usize,
    load: String,
    seed: u64,
    t: u32,
}

/// The seeds and run lengths of one mode.
struct Plan {
    write_seeds: Vec<u64>,
    write_t: u32,
    other_seeds: Vec<u64>,
    other_t: u32,
}

impl IbSpec {
    fn plan(&self, quick: bool, runs: Option<u32>) -> Plan {
        if quick {
            Plan {
                write_seeds: self.quick_write_seeds.clone(),
                write_t: self.quick_write_duration_s,
                other_seeds: vec![1],
                other_t: self.quick_duration_s,
            }
        } else {
            let w = runs.unwrap_or(self.write_runs) as u64;
            let o = runs
                .map(|r| r.min(self.other_runs))
                .unwrap_or(self.other_runs) as u64;
            Plan {
                write_seeds: (1..=w).collect(),
                write_t: self.duration_s,
                other_seeds: (1..=o).collect(),
                other_t: self.duration_s,
            }
        }
    }

    /// The workload line of one run (interbench's own options; seed-001 output units).
    pub fn line(&self, load: &str, t: u32) -> String {
        format!(
            "interbench -r -t {t} -u -w {load} -W {} --units 100ns",
            self.bench
        )
    }
}

/// The results of an interbench scenario.
pub struct IbOutcome {
    pub quick: bool,
    pub variants: Vec<(String, String)>,
    pub spec: IbSpec,
    /// Per variant: per load: (seed, run), in seed order.
    pub runs: Vec<Vec<(String, Vec<(u64, IbRun)>)>>,
    /// Per variant: the seed whose block is the variant's table (largest Write maximum).
    pub table_seed: Vec<Option<u64>>,
    pub published: Vec<(String, String, f64)>,
    pub baseline: String,
}

/// Runs a scenario of kind interbench. `run_one(kernel, line, seed)` performs one simulation
/// (the caller supplies the platform and the collection of the run's samples and server log).
pub fn execute<F>(
    spec: &IbSpec,
    variants: &[(String, String)],
    baseline: &str,
    published: Vec<(String, String, f64)>,
    quick: bool,
    runs: Option<u32>,
    jobs_limit: usize,
    bar: crate::progress::Bar,
    run_one: F,
) -> Result<IbOutcome, String>
where
    F: Fn(&str, &str, u64) -> Result<IbRun, String> + Sync,
{
    let plan = spec.plan(quick, runs);
    let others = |v: usize| -> bool {
        let k = &variants[v].0;
        spec.other_load_variants.contains(k) || (quick && k == baseline)
    };
    let mut jobs = Vec::new();
    for (v, (kernel, _)) in variants.iter().enumerate() {
        for &seed in &plan.write_seeds {
            jobs.push(Job {
                variant: v,
                load: WRITE.into(),
                seed,
                t: plan.write_t,
            });
        }
        if !others(v) || (quick && kernel != baseline) {
            continue;
        }
        for load in spec.loads.iter().filter(|l| *l != WRITE) {
            for &seed in &plan.other_seeds {
                jobs.push(Job {
                    variant: v,
                    load: load.clone(),
                    seed,
                    t: plan.other_t,
                });
            }
        }
    }
    let go = |jobs: &[Job], bar: crate::progress::Bar| -> Result<Vec<IbRun>, String> {
        crate::jobs::run_with_bar(jobs.len(), jobs_limit, bar, |i| {
            let j = &jobs[i];
            run_one(&variants[j.variant].0, &spec.line(&j.load, j.t), j.seed)
        })
        .into_iter()
        .collect()
    };
    let results = go(&jobs, bar)?;
    let mut all: Vec<(Job, IbRun)> = jobs.into_iter().zip(results).collect();
    // The table of a variant with other loads is one block: the seed with the largest Write
    // maximum, with its other loads run on that seed if they were not already.
    let mut table_seed = vec![None; variants.len()];
    let mut extra = Vec::new();
    for (v, slot) in table_seed.iter_mut().enumerate() {
        if !others(v) {
            continue;
        }
        let best = all
            .iter()
            .filter(|(j, _)| j.variant == v && j.load == WRITE)
            .max_by(|a, b| {
                a.1.row
                    .max_ns
                    .total_cmp(&b.1.row.max_ns)
                    .then(b.0.seed.cmp(&a.0.seed))
            })
            .map(|(j, _)| j.seed);
        *slot = best;
        if let Some(s) = best {
            for load in spec.loads.iter().filter(|l| *l != WRITE) {
                let have = all
                    .iter()
                    .any(|(j, _)| j.variant == v && j.seed == s && j.load == *load);
                if !have {
                    extra.push(Job {
                        variant: v,
                        load: load.clone(),
                        seed: s,
                        t: plan.other_t,
                    });
                }
            }
        }
    }
    if !extra.is_empty() {
        let more = go(&extra, crate::progress::Bar::new(false, 0, "", ""))?;
        all.extend(extra.into_iter().zip(more));
    }
    let mut per: Vec<Vec<(String, Vec<(u64, IbRun)>)>> = (0..variants.len())
        .map(|_| spec.loads.iter().map(|l| (l.clone(), Vec::new())).collect())
        .collect();
    for (j, r) in all {
        if let Some(slot) = per[j.variant].iter_mut().find(|(l, _)| *l == j.load) {
            slot.1.push((j.seed, r));
        }
    }
    for v in per.iter_mut() {
        for (_, rs) in v.iter_mut() {
            rs.sort_by_key(|(s, _)| *s);
        }
    }
    Ok(IbOutcome {
        quick,
        variants: variants.to_vec(),
        spec: spec.clone(),
        runs: per,
        table_seed,
        published,
        baseline: baseline.to_string(),
    })
}

/// The columns of an interbench row, as metric suffixes, with their unit.
const COLUMNS: [(&str, &str); 6] = [
    ("mean", "100ns"),
    ("sd", "100ns"),
    ("median", "100ns"),
    ("max", "100ns"),
    ("desired_cpu", "%"),
    ("deadlines_met", "%"),
];

fn column(r: &Row, c: &str) -> f64 {
    match c {
        "mean" => u100(r.mean_ns),
        "sd" => u100(r.sd_ns),
        "median" => u100(r.median_ns),
        "max" => u100(r.max_ns),
        "desired_cpu" => r.desired_cpu,
        _ => r.deadlines_met,
    }
}

/// One report row.
pub struct OutRow {
    pub variant: String,
    pub metric: String,
    pub unit: &'static str,
    pub published: Option<f64>,
    pub simulated: Option<f64>,
    pub simulated_stddev: Option<f64>,
}

/// One acceptance check.
pub struct Check {
    pub description: String,
    pub simulated: Option<f64>,
    pub pass: bool,
}

impl IbOutcome {
    fn vi(&self, kernel: &str) -> Option<usize> {
        self.variants.iter().position(|v| v.0 == kernel)
    }
    fn runs_of(&self, v: usize, load: &str) -> &[(u64, IbRun)] {
        self.runs[v]
            .iter()
            .find(|(l, _)| l == load)
            .map(|(_, r)| r.as_slice())
            .unwrap_or(&[])
    }
    fn published(&self, kernel: &str, metric: &str) -> Option<f64> {
        self.published
            .iter()
            .find(|(k, m, _)| k == kernel && m == metric)
            .map(|p| p.2)
    }
    fn has_published(&self, kernel: &str) -> bool {
        self.published.iter().any(|(k, _, _)| k == kernel)
    }
    /// The variant's table: (load, row) of its table seed's block.
    fn block(&self, v: usize) -> Vec<(String, Row)> {
        let Some(s) = self.table_seed[v] else {
            return Vec::new();
        };
        self.spec
            .loads
            .iter()
            .filter_map(|l| {
                self.runs_of(v, l)
                    .iter()
                    .find(|(seed, _)| *seed == s)
                    .map(|(_, r)| (l.clone(), r.row))
            })
            .collect()
    }
    fn bad_runs(&self, v: usize) -> Vec<&(u64, IbRun)> {
        self.runs_of(v, WRITE)
            .iter()
            .filter(|(_, r)| r.is_bad(self.spec.bad_ms))
            .collect()
    }

    /// The rows of the report (and of its JSON): a variant with published values gets them
    /// beside its table (means over seeds for the reference variant, whose runs agree, and
    /// the table seed's block for the others); every variant gets means over seeds without
    /// a published value, the fraction of bad runs, the Write maximum of its worst run, and the
    /// fair_server activations on CPU 0 that happened while the fair class was not starved.
    pub fn rows(&self) -> Vec<OutRow> {
        let mut out = Vec::new();
        for (v, (kernel, _)) in self.variants.iter().enumerate() {
            let publ = self.has_published(kernel);
            let block = self.block(v);
            if publ {
                let use_mean = *kernel == self.baseline;
                for load in &self.spec.loads {
                    for (c, unit) in COLUMNS {
                        let metric = format!("{load} {c}");
                        let (sim, sd) = if use_mean {
                            let xs: Vec<f64> = self
                                .runs_of(v, load)
                                .iter()
                                .map(|(_, r)| column(&r.row, c))
                                .collect();
                            if xs.is_empty() {
                                (None, None)
                            } else {
                                (Some(amean(&xs)), Some(stddev(&xs)))
                            }
                        } else {
                            (
                                block
                                    .iter()
                                    .find(|(l, _)| l == load)
                                    .map(|(_, r)| column(r, c)),
                                None,
                            )
                        };
                        out.push(OutRow {
                            variant: kernel.clone(),
                            metric,
                            unit,
                            published: self.published(kernel, &format!("{load} {c}")),
                            simulated: sim,
                            simulated_stddev: sd,
                        });
                    }
                }
                if !use_mean && block.len() == self.spec.loads.len() {
                    let rows: Vec<Row> = block.iter().map(|(_, r)| *r).collect();
                    let (m, sd, mx) = pooled(&rows);
                    for (c, x) in [("mean", m), ("sd", sd), ("max", mx)] {
                        let metric = format!("summary {c}");
                        out.push(OutRow {
                            variant: kernel.clone(),
                            published: self.published(kernel, &metric),
                            metric,
                            unit: "100ns",
                            simulated: Some(u100(x)),
                            simulated_stddev: None,
                        });
                    }
                }
            }
            if !publ || *kernel != self.baseline {
                for load in &self.spec.loads {
                    let rs = self.runs_of(v, load);
                    if rs.is_empty() {
                        continue;
                    }
                    for (c, unit) in COLUMNS {
                        let xs: Vec<f64> = rs.iter().map(|(_, r)| column(&r.row, c)).collect();
                        out.push(OutRow {
                            variant: kernel.clone(),
                            metric: format!("{load} {c}, mean over {} seeds", xs.len()),
                            unit,
                            published: None,
                            simulated: Some(amean(&xs)),
                            simulated_stddev: Some(stddev(&xs)),
                        });
                    }
                }
            }
            let writes = self.runs_of(v, WRITE);
            let bad = self.bad_runs(v);
            out.push(OutRow {
                variant: kernel.clone(),
                metric: format!("runs with Write max > {} ms", self.spec.bad_ms),
                unit: "fraction",
                published: None,
                simulated: (!writes.is_empty()).then(|| bad.len() as f64 / writes.len() as f64),
                simulated_stddev: None,
            });
            out.push(OutRow {
                variant: kernel.clone(),
                metric: "Write max of the worst run".into(),
                unit: "100ns",
                published: None,
                simulated: writes
                    .iter()
                    .map(|(_, r)| u100(r.row.max_ns))
                    .reduce(f64::max),
                simulated_stddev: None,
            });
            let act: Vec<f64> = writes
                .iter()
                .map(|(_, r)| r.non_starved_activations() as f64)
                .collect();
            out.push(OutRow {
                variant: kernel.clone(),
                metric:
                    "fair_server activations on CPU 0 while fair was not starved, per Write run"
                        .into(),
                unit: "events",
                published: None,
                simulated: (!act.is_empty()).then(|| amean(&act)),
                simulated_stddev: (!act.is_empty()).then(|| stddev(&act)),
            });
        }
        out
    }
}

/// The Audio interval (docs/model.md W§6): the penalty interbench adds to a missed period.
const AUDIO_INTERVAL_NS: u64 = 50_000_000;

impl IbOutcome {
    /// The acceptance clauses of docs/model.md W§12.2, one check each.
    pub fn checks(&self) -> Vec<Check> {
        let mut out = Vec::new();
        let b = self.baseline.clone();
        // 1. before rows within ±30 % of the published means
        if let Some(v) = self.vi(&b) {
            for load in &self.spec.loads {
                let xs: Vec<f64> = self
                    .runs_of(v, load)
                    .iter()
                    .map(|(_, r)| column(&r.row, "mean"))
                    .collect();
                let Some(p) = self.published(&b, &format!("{load} mean")) else {
                    continue;
                };
                let ratio = (!xs.is_empty()).then(|| amean(&xs) / p);
                out.push(Check {
                    description: format!(
                        "{b}: {load} mean within ±30 % of the published {p} (simulated/published)"
                    ),
                    simulated: ratio,
                    pass: ratio.is_some_and(|r| (0.7..=1.3).contains(&r)),
                });
            }
        }
        // the variant(s) with a published bad run: the others with published values
        let afters: Vec<usize> = self
            .variants
            .iter()
            .enumerate()
            .filter(|(_, v)| v.0 != b && self.has_published(&v.0))
            .map(|(i, _)| i)
            .collect();
        for &a in &afters {
            let k = &self.variants[a].0;
            let bad = self.bad_runs(a);
            out.push(Check {
                description: format!(
                    "{k}: at least one bad run (Write max > {} ms)",
                    self.spec.bad_ms
                ),
                simulated: Some(bad.len() as f64),
                pass: !bad.is_empty(),
            });
            let odd: usize = bad.iter().map(|(_, r)| r.odd_samples()).sum();
            out.push(Check {
                description: format!(
                    "{k}: in the bad runs every Write sample is < 1 ms or in [50.0, 50.1] ms (samples outside)"
                ),
                simulated: Some(odd as f64),
                pass: !bad.is_empty() && odd == 0,
            });
            let worst_met = bad
                .iter()
                .map(|(_, r)| r.row.deadlines_met)
                .reduce(f64::min);
            let equal = bad.iter().all(|(_, r)| {
                (r.row.desired_cpu - r.row.deadlines_met).abs() < 1e-9
                    && r.row.deadlines_met < 100.0
            });
            out.push(Check {
                description: format!(
                    "{k}: in the bad runs Desired CPU % = Deadlines met % < 100 (lowest Deadlines met %)"
                ),
                simulated: worst_met,
                pass: !bad.is_empty() && equal,
            });
            let mut other_max: Option<f64> = None;
            for load in self.spec.loads.iter().filter(|l| *l != WRITE) {
                for (_, r) in self.runs_of(a, load) {
                    let ms = r.row.max_ns / 1e6;
                    other_max = Some(other_max.map_or(ms, |m: f64| m.max(ms)));
                }
            }
            out.push(Check {
                description: format!(
                    "{k}: every other load's max < 1 ms in every seed (largest, ms)"
                ),
                simulated: other_max,
                pass: other_max.is_some_and(|m| m < 1.0),
            });
            let (mut n, mut explained) = (0usize, 0usize);
            for (_, r) in &bad {
                for (t, _) in r.missed() {
                    n += 1;
                    if r.cause_of(t, AUDIO_INTERVAL_NS).is_some() {
                        explained += 1;
                    }
                }
            }
            out.push(Check {
                description: format!(
                    "{k}: every missed deadline follows a fair_server run on CPU 0 that started while fair was not starved and held off a FIFO task (fraction explained)"
                ),
                simulated: (n > 0).then(|| explained as f64 / n as f64),
                pass: n > 0 && explained == n,
            });
        }
        // 7. before, fixed and the controls: no bad run, no non-starved activation
        for (v, (k, label)) in self.variants.iter().enumerate() {
            if afters.contains(&v) || k.contains("sched_rt_runtime_us") {
                continue;
            }
            let writes = self.runs_of(v, WRITE);
            let bad = self.bad_runs(v).len();
            let act: usize = writes
                .iter()
                .map(|(_, r)| r.non_starved_activations())
                .sum();
            out.push(Check {
                description: format!(
                    "{k} ({label}): no bad run and no fair_server activation on CPU 0 while fair was not starved (bad runs + such activations)"
                ),
                simulated: Some((bad + act) as f64),
                pass: !writes.is_empty() && bad + act == 0,
            });
        }
        // 8. sched_rt_runtime_us = 980000 changes nothing, seed for seed
        for (v, (k, _)) in self.variants.iter().enumerate() {
            let Some(base) = k.split(" sched_rt_runtime_us").next().filter(|b| *b != k) else {
                continue;
            };
            let Some(bv) = self.vi(base) else { continue };
            let (x, y) = (self.runs_of(v, WRITE), self.runs_of(bv, WRITE));
            let differ = x
                .iter()
                .filter(|(s, r)| {
                    y.iter()
                        .find(|(t, _)| t == s)
                        .is_none_or(|(_, q)| q.row.max_ns != r.row.max_ns)
                })
                .count();
            out.push(Check {
                description: format!(
                    "{k}: the same Write max as {base}, seed for seed (seeds that differ)"
                ),
                simulated: Some(differ as f64),
                pass: !x.is_empty() && differ == 0,
            });
        }
        out
    }

    /// Text lines explaining each missed deadline of the worst bad run of every variant.
    pub fn explain(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (v, (k, _)) in self.variants.iter().enumerate() {
            let bad = self.bad_runs(v);
            let Some((seed, r)) = bad
                .iter()
                .max_by(|a, b| a.1.row.max_ns.total_cmp(&b.1.row.max_ns))
            else {
                continue;
            };
            let missed = r.missed();
            out.push(format!(
                "{k}: {} of {} runs bad; worst is seed {seed} (Write max {:.0} x 100 ns, {} missed deadlines):",
                bad.len(),
                self.runs_of(v, WRITE).len(),
                u100(r.row.max_ns),
                missed.len()
            ));
            for (t, sample) in missed.iter().take(6) {
                let line = match r.cause_of(*t, AUDIO_INTERVAL_NS) {
                    Some(a) => {
                        let held: Vec<String> = a
                            .held_off
                            .iter()
                            .map(|(w, ns)| format!("{w} {:.1} ms", *ns as f64 / 1e6))
                            .collect();
                        format!(
                            "  t = {:.3} s sample {:.2} ms: fair_server started at {:.3} s while fair was not starved ({}), preempted {}, ran the fair tasks {:.1} ms at deadline priority; held off {}",
                            *t as f64 / 1e9,
                            *sample as f64 / 1e6,
                            a.t_start as f64 / 1e9,
                            format_args!(
                                "{}; runtime {:.2} ms, deadline {:.3} s",
                                a.how,
                                a.runtime as f64 / 1e6,
                                a.deadline as f64 / 1e9
                            ),
                            a.preempted.as_deref().unwrap_or("nothing (CPU was idle)"),
                            (a.t_end - a.t_start) as f64 / 1e6,
                            if held.is_empty() { "nobody".into() } else { held.join(", ") }
                        )
                    }
                    None => format!(
                        "  t = {:.3} s sample {:.2} ms: no fair_server activation explains it",
                        *t as f64 / 1e9,
                        *sample as f64 / 1e6
                    ),
                };
                out.push(line);
            }
            if missed.len() > 6 {
                out.push(format!("  … and {} more", missed.len() - 6));
            }
        }
        out
    }

    /// The text report.
    pub fn render(&self, name: &str, title: &str, seed: &str, platform: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{name} — {title}");
        let plan = self.spec.plan(self.quick, None);
        let _ = writeln!(
            s,
            "seed {seed} · platform {platform} · '{}' · Write: {} seed(s) of {} s per variant{}",
            self.spec.line("LOAD", plan.write_t),
            self.runs_of(0, WRITE).len(),
            plan.write_t,
            if self.quick { " (quick)" } else { "" }
        );
        let rows = self.rows();
        let mut last = String::new();
        for r in &rows {
            if r.variant != last {
                let label = self
                    .variants
                    .iter()
                    .find(|v| v.0 == r.variant)
                    .map(|v| v.1.as_str())
                    .unwrap_or("");
                let _ = writeln!(s, "\n  {} [{}]", r.variant, label);
                let _ = writeln!(
                    s,
                    "    {:<52} {:>10} {:>22}  unit",
                    "metric", "published", "simulated (± sd over seeds)"
                );
                last = r.variant.clone();
            }
            let _ = writeln!(
                s,
                "    {:<52} {:>10} {:>22}  {}",
                r.metric,
                r.published.map(fmt).unwrap_or_else(|| "—".into()),
                match (r.simulated, r.simulated_stddev) {
                    (Some(x), Some(d)) => format!("{} ± {}", fmt(x), fmt(d)),
                    (Some(x), None) => fmt(x),
                    _ => "—".into(),
                },
                r.unit
            );
        }
        let ex = self.explain();
        if !ex.is_empty() {
            let _ = writeln!(s, "\n  missed Audio deadlines and their cause:");
            for l in ex {
                let _ = writeln!(s, "  {l}");
            }
        }
        let _ = writeln!(s, "\n  acceptance targets (docs/model.md W§12.2):");
        for c in self.checks() {
            let _ = writeln!(
                s,
                "    [{}] {} — simulated {}",
                if c.pass { "ok" } else { "MISS" },
                c.description,
                c.simulated.map(fmt).unwrap_or_else(|| "—".into())
            );
        }
        s
    }

    /// The `--json` document, in the shape of every scenario's; `runs` is the number of seeds
    /// of the Write load per variant.
    pub fn json(&self, name: &str) -> Value {
        let runs = self.runs_of(0, WRITE).len();
        let rows: Vec<Value> = self
            .rows()
            .into_iter()
            .map(|r| {
                json!({"variant": r.variant, "metric": r.metric, "unit": r.unit,
                       "published": r.published, "simulated": r.simulated,
                       "simulated_stddev": r.simulated_stddev})
            })
            .collect();
        let targets: Vec<Value> = self
            .checks()
            .into_iter()
            .map(
                |c| json!({"description": c.description, "simulated": c.simulated, "pass": c.pass}),
            )
            .collect();
        json!({"scenario": name, "quick": self.quick, "runs": runs, "rows": rows, "targets": targets})
    }
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

/// `reproduce` of a scenario of kind interbench: the variants, the published values and the
/// runs through [`crate::run::run`] on the scenario's platform.
pub fn execute_scenario(
    sc: &crate::scenario::Scenario,
    ib: &IbSpec,
    runs: Option<u32>,
    quick: bool,
    progress: bool,
    jobs: Option<usize>,
) -> Result<IbOutcome, crate::scenario::ScenarioError> {
    use crate::scenario::ScenarioError;
    if let Some(n) = runs {
        crate::scenario::check_runs(n)
            .map_err(|m| ScenarioError::Input(format!("--runs {n}: {m}")))?;
    }
    let variants: Vec<(String, String)> = sc
        .variants
        .iter()
        .map(|v| (v.kernel.clone(), v.label.clone()))
        .collect();
    let published = sc
        .published
        .iter()
        .map(|p| (p.kernel.clone(), p.metric.clone(), p.value))
        .collect();
    let plan = ib.plan(quick, runs);
    let n_jobs = variants.len() * plan.write_seeds.len()
        + (ib.loads.len() - 1) * plan.other_seeds.len() * ib.other_load_variants.len().max(1);
    let bar = crate::progress::Bar::new(
        progress,
        n_jobs as u64,
        "{prefix} [{bar:40}] {pos}/{len} runs",
        &sc.name,
    );
    execute(
        ib,
        &variants,
        &sc.baseline,
        published,
        quick,
        runs,
        jobs.unwrap_or_else(crate::jobs::default_jobs),
        bar,
        |kernel, line, seed| {
            let r =
                crate::run::run_scenario_line(&sc.platform, kernel, line, seed, None, &sc.cgroups)?;
            collect(&r)
        },
    )
    .map_err(ScenarioError::Input)
}

/// The scenario's view of one run: the benchmarked task's row and latency samples from the
/// interbench model (its metrics `{bench}_{load}_latency_*` in 100 ns units and its series
/// `{bench}_{load}_latency`), the fair_server activations on CPU 0 from the kernel's log.
pub fn collect(r: &crate::run::RunResult) -> Result<IbRun, String> {
    let w = r
        .workloads
        .first()
        .ok_or_else(|| "interbench run without a workload".to_string())?;
    let (name, samples) = w
        .series
        .iter()
        .find(|(n, _)| n.ends_with("_latency"))
        .ok_or_else(|| format!("{}: no latency series (did the run end early?)", w.line))?;
    let prefix = name.trim_end_matches("latency");
    let metric = |m: &str| {
        w.metrics
            .iter()
            .find(|x| x.name == format!("{prefix}{m}"))
            .map(|x| x.value)
            .ok_or_else(|| format!("{}: no metric {prefix}{m}", w.line))
    };
    let row = Row {
        n: samples.len() as u64,
        mean_ns: metric("latency_mean")? * 100.0,
        sd_ns: metric("latency_sd")? * 100.0,
        median_ns: metric("latency_median")? * 100.0,
        max_ns: metric("latency_max")? * 100.0,
        desired_cpu: metric("desired_cpu")?,
        deadlines_met: metric("deadlines_met")?,
    };
    Ok(IbRun {
        row,
        samples: samples.clone(),
        activations: activations(r, 0),
    })
}

/// The fair_server runs at deadline priority on `cpu`, from the kernel's server log.
fn activations(r: &crate::run::RunResult, cpu: u32) -> Vec<Activation> {
    r.dl_server_runs
        .iter()
        .filter(|x| x.cpu == cpu)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(mean: f64, sd: f64, max: f64) -> Row {
        Row {
            n: 1200,
            mean_ns: mean * 100.0,
            sd_ns: sd * 100.0,
            median_ns: mean * 100.0,
            max_ns: max * 100.0,
            desired_cpu: 100.0,
            deadlines_met: 100.0,
        }
    }

    /// The pooled summary rows of both published seed-001 blocks from their per-load rows
    /// (docs/seeds.md): 136.8 ± 78.462 max 331 before, 1298.4 ± 24118 max 500418 after.
    #[test]
    fn pooled_reproduces_the_published_summaries() {
        let before = [
            row(76.6, 8.3654, 166.0),
            row(78.5, 3.9433, 107.0),
            row(76.4, 8.123, 157.0),
            row(72.0, 6.4733, 127.0),
            row(255.3, 26.627, 331.0),
            row(226.6, 12.38, 262.0),
            row(84.2, 6.6207, 125.0),
            row(225.3, 23.949, 328.0),
        ];
        let (m, sd, mx) = pooled(&before);
        assert!((u100(m) - 136.8).abs() < 0.1, "{}", u100(m));
        assert!((u100(sd) - 78.462).abs() < 0.05, "{}", u100(sd));
        assert_eq!(u100(mx), 331.0);
        let after = [
            row(68.4, 9.7864, 169.0),
            row(74.4, 3.724, 97.0),
            row(72.0, 6.5681, 129.0),
            row(66.9, 5.9059, 117.0),
            row(9576.9, 67639.0, 500418.0),
            row(209.3, 11.018, 267.0),
            row(80.5, 8.0993, 125.0),
            row(239.0, 29.447, 372.0),
        ];
        let (m, sd, mx) = pooled(&after);
        assert!((u100(m) - 1298.4).abs() < 0.1, "{}", u100(m));
        assert!((u100(sd) - 24118.0).abs() < 1.0, "{}", u100(sd));
        assert_eq!(u100(mx), 500418.0);
    }

    /// Classification of samples: 25 µs is ordinary, 50.04 ms is ordinary + the 50 ms penalty,
    /// 20 ms and 97.5 ms are neither (a visible stall; a stall on top of a missed deadline).
    #[test]
    fn odd_samples_and_bad_runs() {
        let r = IbRun {
            row: Row {
                max_ns: 50_041_800.0,
                ..Default::default()
            },
            samples: vec![
                (0, 25_000),
                (1, 50_041_800),
                (2, 20_000_000),
                (3, 97_500_000),
            ],
            activations: vec![],
        };
        assert!(r.is_bad(10.0));
        assert_eq!(r.odd_samples(), 2);
        assert_eq!(r.missed(), vec![(1, 50_041_800), (3, 97_500_000)]);
    }

    /// A missed deadline at t is explained by the last non-starved activation that held off a
    /// FIFO task and started no more than its run plus two intervals before t.
    #[test]
    fn cause_of_a_missed_deadline() {
        let act = |t: u64, starved: bool, fifo: bool| Activation {
            cpu: 0,
            t_start: t,
            t_end: t + 50_000_000,
            starved,
            how: "",
            runtime: 0,
            deadline: 0,
            preempted: None,
            held_off: Some((if fifo { "tk (FIFO 96)" } else { "x (OTHER)" }.into(), 1)),
        };
        let r = IbRun {
            activations: vec![
                act(1_000_000_000, false, true),
                act(2_000_000_000, true, true),
                act(3_000_000_000, false, false),
            ],
            ..Default::default()
        };
        let iv = 50_000_000;
        assert_eq!(
            r.cause_of(1_060_000_000, iv).map(|a| a.t_start),
            Some(1_000_000_000)
        );
        // starved activations and activations that held off no FIFO task explain nothing
        assert!(r.cause_of(2_060_000_000, iv).is_none());
        assert!(r.cause_of(3_060_000_000, iv).is_none());
        // too late after the activation
        assert!(r.cause_of(1_200_000_000, iv).is_none());
    }

    /// Seed 001 in miniature, `reproduce dl-server-wakeup --quick` as shipped: the Write load of
    /// every variant on the scenario's fixed seed list (which holds a seed that is bad in the
    /// full run) and every load of the "before" kernel once. Expected from the mechanism
    /// (docs/model.md R§4.9), not from earlier output: only the "after" kernel (and the same
    /// kernel with sched_rt_runtime_us = 980000, which changes only DL admission on v6.12)
    /// restarts the fair_server at deadline priority without starvation, so only they have a
    /// bad run; in a bad run every missed deadline is one 50 ms interval on top of an ordinary
    /// latency and is explained by such a server run that held off a FIFO task.
    #[test]
    fn dl_server_wakeup_quick_mechanism() {
        let sc = crate::scenario::load("dl-server-wakeup").unwrap();
        let ib = sc.interbench.clone().unwrap();
        let o = execute_scenario(&sc, &ib, None, true, false, None).unwrap();
        let before = o.vi(&sc.baseline).unwrap();
        let after = o.vi("v6.12+115135422562+d66792919d4f").unwrap();
        // every load of the before kernel ran
        for l in &ib.loads {
            assert!(!o.runs_of(before, l).is_empty(), "{l}");
        }
        for (v, (k, _)) in o.variants.iter().enumerate() {
            let bad = o.bad_runs(v);
            let activations: usize = o
                .runs_of(v, WRITE)
                .iter()
                .map(|(_, r)| r.non_starved_activations())
                .sum();
            if k.starts_with("v6.12+115135422562+d66792919d4f") && !k.contains("cccb45d7c429") {
                assert!(!bad.is_empty(), "{k}: no bad run");
                assert!(activations > 0, "{k}");
                for (_, r) in &bad {
                    assert_eq!(r.odd_samples(), 0, "{k}");
                    for (t, _) in r.missed() {
                        assert!(r.cause_of(t, AUDIO_INTERVAL_NS).is_some(), "{k} at {t}");
                    }
                }
            } else {
                assert!(bad.is_empty(), "{k}: bad run");
                assert_eq!(activations, 0, "{k}: non-starved activations");
            }
        }
        // the 980000 variant is the after variant, seed for seed
        let rt = o
            .variants
            .iter()
            .position(|v| v.0.contains("sched_rt_runtime_us=980000"))
            .unwrap();
        let maxes = |v: usize| -> Vec<f64> {
            o.runs_of(v, WRITE)
                .iter()
                .map(|(_, r)| r.row.max_ns)
                .collect()
        };
        assert_eq!(maxes(rt), maxes(after));
        // the report and its JSON carry the published rows beside the simulated ones
        let j = o.json(&sc.name);
        let rows = j["rows"].as_array().unwrap();
        assert!(rows.iter().any(|r| r["metric"] == "Write max"
            && r["published"] == 500418.0
            && r["unit"] == "100ns"));
        assert!(!j["targets"].as_array().unwrap().is_empty());
    }
}
