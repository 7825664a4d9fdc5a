//! `schedlab compare`: several kernels on one workload, N seeds each, as an mmtests-style
//! table: Amean (and Hmean for rates), Stddev, % change against the first kernel, and a
//! significance marker.

use crate::run::{run, RunError, RunSpec};
use crate::stats::{amean, hmean, significant, stddev};
use schedlab_workloads::Better;
use serde_json::json;
use std::fmt::Write;

struct Col {
    kernel: String,
    /// metric name -> samples
    samples: Vec<(String, String, Better, Vec<f64>)>,
}

/// Runs the comparison on `jobs` worker threads (default: all cores; the output does not
/// depend on it) and renders it.
pub fn compare(
    base: &RunSpec,
    kernels: &[String],
    runs: u32,
    as_json: bool,
    jobs: Option<usize>,
) -> Result<String, RunError> {
    let cols = compare_cols(base, kernels, runs, jobs)?;
    Ok(if as_json {
        render_json(base, kernels, runs, &cols)
    } else {
        render_text(&cols)
    })
}

/// [`compare`] once, rendered both ways: `(compare --json document, text table)` (the
/// Python package returns both from one set of runs).
pub fn compare_outputs(
    base: &RunSpec,
    kernels: &[String],
    runs: u32,
    jobs: Option<usize>,
) -> Result<(String, String), RunError> {
    let cols = compare_cols(base, kernels, runs, jobs)?;
    Ok((render_json(base, kernels, runs, &cols), render_text(&cols)))
}

/// The runs of a comparison, one column of samples per kernel.
fn compare_cols(
    base: &RunSpec,
    kernels: &[String],
    runs: u32,
    jobs: Option<usize>,
) -> Result<Vec<Col>, RunError> {
    if let Err(m) = crate::scenario::check_runs(runs) {
        return Err(RunError::Config(format!("--runs {runs}: {m}")));
    }
    if base.seed.checked_add(u64::from(runs) - 1).is_none() {
        return Err(RunError::Config(format!(
            "--seed {} with --runs {runs}: the seeds would run past 18446744073709551615 \
             (the largest --seed for {runs} runs is {})",
            base.seed,
            u64::MAX - u64::from(runs - 1)
        )));
    }
    // every kernel (with the platform and the workloads) is checked before anything runs
    for k in kernels {
        let mut spec = base.clone();
        spec.kernel = k.clone();
        crate::run::validate(&spec)?;
    }
    let total = kernels.len() as u64 * u64::from(runs);
    let bar = crate::progress::Bar::new(
        base.progress,
        total,
        "compare [{bar:40}] {pos}/{len} runs {msg}",
        "",
    );
    // one job per (kernel, seed), in the order the columns and samples are filled
    let job_list: Vec<(usize, u32)> = (0..kernels.len())
        .flat_map(|k| (0..runs).map(move |i| (k, i)))
        .collect();
    let results = crate::jobs::run_with_bar(
        job_list.len(),
        jobs.unwrap_or_else(crate::jobs::default_jobs),
        bar,
        |j| {
            let (k, i) = job_list[j];
            let mut spec = base.clone();
            spec.kernel = kernels[k].clone();
            spec.seed = base.seed + u64::from(i);
            spec.trace = None;
            spec.progress = false;
            // jobs run on several threads: nothing is printed from inside a run, the
            // warnings are printed below in job order
            crate::run::quiet_warnings(|| run(&spec))
        },
    );
    // Input warnings are the same for every seed: print each kernel's once, from its first
    // seed's run, in kernel order (the same bytes whatever the number of jobs).
    for (j, r) in results.iter().enumerate() {
        if let (Ok(r), (_, 0)) = (r, job_list[j]) {
            for w in &r.input_warnings {
                eprintln!("schedlab: warning: {w}");
            }
        }
    }
    // A run that stopped a program before its end reports none of its metrics: say which
    // samples are missing from the table, in job order.
    for (j, r) in results.iter().enumerate() {
        if let Ok(r) = r {
            let (k, i) = job_list[j];
            for w in r.workloads.iter().filter(|w| w.cut) {
                eprintln!(
                    "schedlab: warning: kernel '{}' seed {}: workload '{}' was cut at {:.3} s \
                     before the program ended: its metrics are not in the table",
                    kernels[k],
                    base.seed + u64::from(i),
                    w.line,
                    r.sim_time_ns as f64 / 1e9
                );
            }
        }
    }
    let mut results = results.into_iter();
    let mut cols: Vec<Col> = Vec::new();
    for k in kernels {
        let mut col = Col {
            kernel: k.clone(),
            samples: Vec::new(),
        };
        for _ in 0..runs {
            let r = results.next().expect("one result per job")?;
            let mut metrics: Vec<(String, String, Better, f64)> = Vec::new();
            for w in &r.workloads {
                for m in &w.metrics {
                    metrics.push((m.name.clone(), m.unit.clone(), m.better, m.value));
                }
            }
            // the run's own counts, unless a workload reports them already (stress-ng's
            // --metrics-brief prints sched_switch and sched_migrate_task): one sample per
            // seed, never two
            for (name, v) in [
                ("sched_switch", r.nr_switches),
                ("sched_migrate_task", r.nr_migrations),
            ] {
                if !metrics.iter().any(|m| m.0 == name) {
                    metrics.push((name.into(), "".into(), Better::Lower, v as f64));
                }
            }
            for (name, unit, better, v) in metrics {
                match col.samples.iter_mut().find(|s| s.0 == name) {
                    Some(s) => s.3.push(v),
                    None => col.samples.push((name, unit, better, vec![v])),
                }
            }
        }
        cols.push(col);
    }
    Ok(cols)
}

/// The `compare --json` document.
fn render_json(base: &RunSpec, kernels: &[String], runs: u32, cols: &[Col]) -> String {
    let rows: Vec<_> = cols
            .iter()
            .flat_map(|c| {
                c.samples.iter().map(move |(n, u, _, v)| {
                    json!({"kernel": c.kernel, "metric": n, "unit": u, "amean": amean(v), "stddev": stddev(v), "samples": v})
                })
            })
            .collect();
    let doc = json!({
        "schema_version": crate::report::SCHEMA_VERSION,
        "platform": base.platform,
        "workloads": base.workloads,
        "kernels": kernels,
        "runs": runs,
        "first_seed": base.seed,
        "rows": rows,
    });
    serde_json::to_string_pretty(&doc).unwrap() + "\n"
}

/// The mmtests-style table.
fn render_text(cols: &[Col]) -> String {
    let mut s = String::new();
    let width = 22usize;
    let _ = write!(s, "{:<28}", "");
    for c in cols {
        let _ = write!(s, " {:>w$}", truncate(&c.kernel, width), w = width);
    }
    s.push('\n');
    let metrics: Vec<(String, String, Better)> = cols[0]
        .samples
        .iter()
        .map(|(n, u, b, _)| (n.clone(), u.clone(), *b))
        .collect();
    for (name, unit, better) in metrics {
        let get = |c: &Col| {
            c.samples
                .iter()
                .find(|x| x.0 == name)
                .map(|x| x.3.clone())
                .unwrap_or_default()
        };
        let base_v = get(&cols[0]);
        let rate = unit.contains("/s") || name.contains("per_sec") || name.starts_with("rps");
        let mut stat_rows: Vec<(&str, fn(&[f64]) -> f64)> = vec![("Amean", amean)];
        if rate {
            stat_rows.push(("Hmean", hmean));
        }
        stat_rows.push(("Stddev", stddev));
        for (label, f) in stat_rows {
            let _ = write!(s, "{:<28}", truncate(&format!("{label} {name}"), 28));
            let b = f(&base_v);
            for (i, c) in cols.iter().enumerate() {
                let v = get(c);
                let x = f(&v);
                let cell = if label == "Stddev" {
                    fmt_num(x)
                } else {
                    let pct = if b != 0.0 {
                        let d = (x - b) / b.abs() * 100.0;
                        if better == Better::Higher {
                            d
                        } else {
                            -d
                        }
                    } else {
                        0.0
                    };
                    // + 0.0 turns the -0.0 of a lower-is-better metric equal to the base
                    // (always so in the first column) into 0.0, printed "0.00", not "-0.00"
                    let pct = pct + 0.0;
                    let sig = if i > 0 && significant(&base_v, &v) {
                        "*"
                    } else {
                        " "
                    };
                    format!("{} ({:>6.2}%){}", fmt_num(x), pct, sig)
                };
                let _ = write!(s, " {:>w$}", cell, w = width);
            }
            s.push('\n');
        }
    }
    s.push_str("\n% change: positive = better than the first kernel; * = difference larger than twice the pooled standard error.\n");
    s
}

fn fmt_num(x: f64) -> String {
    if x.abs() >= 1e5 {
        format!("{:.0}", x)
    } else if x.abs() >= 100.0 {
        format!("{:.2}", x)
    } else {
        format!("{:.4}", x)
    }
}

fn truncate(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else {
        s.chars().take(w - 1).collect::<String>() + "…"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One sample per seed in every row, also for the counts stress-ng reports itself
    /// (`sched_switch`, `sched_migrate_task` in --metrics-brief), which compare used to add a
    /// second time.
    #[test]
    fn one_sample_per_seed_per_metric() {
        let mut base = RunSpec::new(
            "smp:2",
            "v6.18",
            &["stress-ng --pipe 1 --timeout 1s --metrics-brief"],
        );
        base.duration_ns = Some(5_000_000);
        let kernels = vec!["v6.6".to_string(), "v6.18".to_string()];
        let (json, _) = compare_outputs(&base, &kernels, 2, Some(1)).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        let rows = doc["rows"].as_array().unwrap();
        for name in ["sched_switch", "sched_migrate_task"] {
            // two kernels, each with one row of this metric
            assert_eq!(
                rows.iter().filter(|r| r["metric"] == name).count(),
                2,
                "{name}"
            );
        }
        for r in rows {
            assert_eq!(r["samples"].as_array().unwrap().len(), 2, "{r}");
        }
    }
}
