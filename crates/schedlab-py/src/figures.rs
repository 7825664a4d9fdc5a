//! Figures and reports for Python: the same Rust drawing code as `schedlab plot` and
//! `schedlab reproduce --html` (crates/schedlab-plot, schedlab::plots, schedlab::html), fed
//! from what the Python layer holds (trace columns, JSON documents, sweep rows). Every
//! function returns SVG or HTML text; bad input is a `SchedlabError`.

use crate::error;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use schedlab::plots::{self, SweepRow};
use schedlab_trace::{TraceEvent, TraceRecord};

/// One trace column as a list, `None` where the event has no such field.
fn col<'py, T: FromPyObjectOwned<'py>>(
    cols: &Bound<'py, PyDict>,
    name: &str,
) -> PyResult<Vec<Option<T>>> {
    match cols.get_item(name)? {
        Some(v) => v
            .extract::<Vec<Option<T>>>()
            .map_err(|e| error(format!("trace column '{name}': {e}"))),
        None => Err(error(format!("trace column '{name}' is missing"))),
    }
}

/// The records the figures read (sched_switch, sched_wakeup, sched_wakeup_new, with the
/// fields the figures use) from `Result.trace()`'s columns; other events keep their time and
/// CPU only.
fn records(cols: &Bound<'_, PyDict>) -> PyResult<Vec<TraceRecord<String>>> {
    let ts: Vec<Option<u64>> = col(cols, "ts_ns")?;
    let cpu: Vec<Option<u32>> = col(cols, "cpu")?;
    let event: Vec<Option<String>> = col(cols, "event")?;
    let comm: Vec<Option<String>> = col(cols, "comm")?;
    let pid: Vec<Option<i32>> = col(cols, "pid")?;
    let prev_comm: Vec<Option<String>> = col(cols, "prev_comm")?;
    let prev_pid: Vec<Option<i32>> = col(cols, "prev_pid")?;
    let next_comm: Vec<Option<String>> = col(cols, "next_comm")?;
    let next_pid: Vec<Option<i32>> = col(cols, "next_pid")?;
    let n = ts.len();
    for (name, len) in [
        ("cpu", cpu.len()),
        ("event", event.len()),
        ("comm", comm.len()),
        ("pid", pid.len()),
        ("prev_comm", prev_comm.len()),
        ("prev_pid", prev_pid.len()),
        ("next_comm", next_comm.len()),
        ("next_pid", next_pid.len()),
    ] {
        if len != n {
            return Err(error(format!(
                "trace column '{name}' has {len} rows, 'ts_ns' has {n}"
            )));
        }
    }
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let (Some(t), Some(c)) = (ts[i], cpu[i]) else {
            return Err(error(format!("trace row {i}: no ts_ns or cpu")));
        };
        let ev = match event[i].as_deref() {
            Some("sched_switch") => TraceEvent::SchedSwitch {
                prev_comm: s(&prev_comm[i]),
                prev_pid: prev_pid[i].unwrap_or(0),
                prev_prio: 0,
                prev_state: String::new(),
                next_comm: s(&next_comm[i]),
                next_pid: next_pid[i].unwrap_or(0),
                next_prio: 0,
            },
            Some(e @ ("sched_wakeup" | "sched_wakeup_new")) => {
                let (comm, pid) = (s(&comm[i]), pid[i].unwrap_or(0));
                if e == "sched_wakeup" {
                    TraceEvent::SchedWakeup {
                        comm,
                        pid,
                        prio: 0,
                        target_cpu: c,
                    }
                } else {
                    TraceEvent::SchedWakeupNew {
                        comm,
                        pid,
                        prio: 0,
                        target_cpu: c,
                    }
                }
            }
            // time and CPU matter (the trace's span, the CPU count); the payload does not
            _ => TraceEvent::SchedWaking {
                comm: String::new(),
                pid: 0,
                prio: 0,
                target_cpu: c,
            },
        };
        out.push(TraceRecord {
            ts_ns: t,
            cpu: c,
            comm: String::new(),
            pid: 0,
            flags: String::new(),
            event: ev,
        });
    }
    Ok(out)
}

fn drawn<T>(r: Result<T, schedlab_plot::PlotError>) -> PyResult<T> {
    r.map_err(|e| error(format!("plot: {e}")))
}

/// Wakeup-latency CDF (or histograms with `hist=True`) of several traces, in µs, as
/// `schedlab plot latency` draws it: `traces` = [(label, trace columns)], `comm` = only the
/// wakeups of tasks with this comm.
#[pyfunction]
#[pyo3(signature = (traces, comm=None, hist=false, title=None))]
pub fn plot_latency(
    traces: Vec<(String, Bound<'_, PyDict>)>,
    comm: Option<String>,
    hist: bool,
    title: Option<String>,
) -> PyResult<String> {
    if traces.is_empty() {
        return Err(error("plot latency: no traces"));
    }
    let mut sets = Vec::new();
    for (label, cols) in &traces {
        let values = plots::latency_us(&records(cols)?, comm.as_deref())
            .map_err(|e| error(format!("plot latency: {label}: {e}")))?;
        sets.push(schedlab_plot::Samples {
            label: label.clone(),
            values,
        });
    }
    drawn(plots::latency_figure(
        &sets,
        comm.as_deref(),
        hist,
        title.as_deref(),
    ))
}

/// Who ran on each CPU between `from_ns` and `to_ns`, as `schedlab plot timeline` draws it.
#[pyfunction]
#[pyo3(signature = (trace, from_ns=None, to_ns=None, title=None))]
pub fn plot_timeline(
    trace: Bound<'_, PyDict>,
    from_ns: Option<u64>,
    to_ns: Option<u64>,
    title: Option<String>,
) -> PyResult<String> {
    let title = title.unwrap_or_else(|| "who ran".to_string());
    plots::timeline_figure(&records(&trace)?, from_ns, to_ns, &title)
        .map_err(|e| error(format!("plot timeline: {e}")))
}

/// cyclictest's `-h` histogram (the program's own output text), as `schedlab plot cyclictest`.
#[pyfunction]
#[pyo3(signature = (output, title=None))]
pub fn plot_cyclictest(output: &str, title: Option<String>) -> PyResult<String> {
    let h = plots::parse_cyclictest_histogram(output)
        .map_err(|e| error(format!("plot cyclictest: {e}")))?;
    let title = title.unwrap_or_else(|| "cyclictest".to_string());
    drawn(schedlab_plot::cyclictest_histogram(&title, &h))
}

/// Published-vs-simulated bars of a `reproduce --json` document: [(scenario, metric, svg)],
/// one per scenario and metric with published values (or only `scenario`/`metric`).
#[pyfunction]
#[pyo3(signature = (doc, scenario=None, metric=None))]
pub fn plot_reproduction(
    doc: &str,
    scenario: Option<String>,
    metric: Option<String>,
) -> PyResult<Vec<(String, String, String)>> {
    let v: serde_json::Value = serde_json::from_str(doc)
        .map_err(|e| error(format!("plot reproduction: not JSON: {e}")))?;
    let scs =
        plots::reproduction_from_json(&v).map_err(|e| error(format!("plot reproduction: {e}")))?;
    let scs: Vec<_> = scs
        .into_iter()
        .filter(|s| scenario.as_deref().is_none_or(|n| s.name == n))
        .collect();
    let out = drawn(plots::reproduction_figures(&scs, metric.as_deref()))?;
    if out.is_empty() {
        return Err(error(
            "plot reproduction: no figure (no simulated values to draw)",
        ));
    }
    Ok(out)
}

type Row = (String, String, String, String, i64, String, String, f64);

fn sweep_rows(rows: Vec<Row>) -> Vec<SweepRow> {
    rows.into_iter()
        .map(
            |(platform, kernel, workload, duration, seed, metric, unit, value)| SweepRow {
                platform,
                kernel,
                workload,
                duration,
                seed,
                metric,
                unit,
                value,
            },
        )
        .collect()
}

/// One metric of a sweep's long table against a workload parameter (mean ± sd over seeds), as
/// `schedlab plot sweep` draws it. `rows` = tuples in the table's column order.
#[pyfunction]
#[pyo3(signature = (rows, metric, x=None, title=None))]
pub fn plot_sweep(
    rows: Vec<Row>,
    metric: &str,
    x: Option<String>,
    title: Option<String>,
) -> PyResult<String> {
    plots::sweep_figure(&sweep_rows(rows), metric, x.as_deref(), title.as_deref())
        .map_err(|e| error(format!("plot sweep: {e}")))
}

/// The HTML page of a sweep (`schedlab report SWEEP.parquet`): `rows` in the long table's
/// column order.
#[pyfunction]
pub fn report_sweep_html(rows: Vec<Row>) -> PyResult<String> {
    schedlab::html::sweep_page(&sweep_rows(rows)).map_err(|e| error(format!("report: {e}")))
}
