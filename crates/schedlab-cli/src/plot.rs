//! `schedlab plot KIND …`: read the input, extract (schedlab::plots), draw
//! (schedlab_plot), write the SVG atomically.

use crate::args::PlotWhat;
use schedlab::plots;
use schedlab_trace::TraceRecord;
use std::path::{Path, PathBuf};

/// `Err((code, message))` as in main.rs.
type Res<T> = Result<T, (u8, String)>;

fn bad(kind: &str, msg: impl std::fmt::Display) -> (u8, String) {
    (2, format!("plot {kind}: {msg}"))
}

fn read(kind: &str, path: &Path) -> Res<String> {
    std::fs::read_to_string(path).map_err(|e| bad(kind, format!("{}: {e}", path.display())))
}

fn read_trace(kind: &str, path: &Path) -> Res<Vec<TraceRecord>> {
    let text = read(kind, path)?;
    schedlab_trace::parse_trace(&text).map_err(|e| {
        bad(
            kind,
            format!("{} line {}: {}", path.display(), e.line, e.error),
        )
    })
}

fn write(kind: &str, path: &Path, svg: &str) -> Res<()> {
    schedlab::trace_file::write_file_atomic(path, svg.as_bytes())
        .map_err(|e| (1, format!("plot {kind}: writing {}: {e}", path.display())))
}

fn draw<T>(kind: &str, r: Result<T, schedlab_plot::PlotError>) -> Res<T> {
    r.map_err(|e| bad(kind, e))
}

fn file_label(p: &Path) -> String {
    p.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// A time on the trace clock: seconds (`1.5`) or a duration (`1500ms`).
fn parse_time(kind: &str, flag: &str, v: &str) -> Res<u64> {
    if let Ok(s) = v.trim().parse::<f64>() {
        if s.is_finite() && s >= 0.0 {
            return Ok((s * 1e9).round() as u64);
        }
    }
    schedlab::parse_duration(v).map(|d| d.0).map_err(|_| {
        bad(
            kind,
            format!("{flag} '{v}': expected seconds (1.5) or a duration (1500ms)"),
        )
    })
}

/// A file name part: letters, digits, `.`, `-`; everything else `_`.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

pub fn run(what: PlotWhat) -> Res<()> {
    match what {
        PlotWhat::Latency {
            traces,
            comm,
            labels,
            hist,
            title,
            output,
        } => {
            let k = "latency";
            if !labels.is_empty() && labels.len() != traces.len() {
                return Err(bad(
                    k,
                    format!(
                        "--label given {} times for {} traces (give one per trace, in order)",
                        labels.len(),
                        traces.len()
                    ),
                ));
            }
            let mut sets = Vec::new();
            for (i, t) in traces.iter().enumerate() {
                let recs = read_trace(k, t)?;
                let values = plots::latency_us(&recs, comm.as_deref())
                    .map_err(|e| bad(k, format!("{}: {e}", t.display())))?;
                sets.push(schedlab_plot::Samples {
                    label: labels.get(i).cloned().unwrap_or_else(|| file_label(t)),
                    values,
                });
            }
            let svg = draw(
                k,
                plots::latency_figure(&sets, comm.as_deref(), hist, title.as_deref()),
            )?;
            write(k, &output, &svg)
        }
        PlotWhat::Timeline {
            trace,
            from,
            to,
            title,
            output,
        } => {
            let k = "timeline";
            let from = from.map(|v| parse_time(k, "--from", &v)).transpose()?;
            let to = to.map(|v| parse_time(k, "--to", &v)).transpose()?;
            if let (Some(a), Some(b)) = (from, to) {
                if b <= a {
                    return Err(bad(k, "--to must be after --from"));
                }
            }
            let recs = read_trace(k, &trace)?;
            let title = title.unwrap_or_else(|| format!("who ran: {}", file_label(&trace)));
            let svg = plots::timeline_figure(&recs, from, to, &title).map_err(|e| match e {
                plots::FigureError::NoData(m) => bad(k, format!("{}: {m}", trace.display())),
                plots::FigureError::Plot(e) => bad(k, e),
            })?;
            write(k, &output, &svg)
        }
        PlotWhat::Cyclictest {
            input,
            title,
            output,
        } => {
            let k = "cyclictest";
            let text = read(k, &input)?;
            let h = plots::parse_cyclictest_histogram(&text)
                .map_err(|e| bad(k, format!("{}: {e}", input.display())))?;
            let title = title.unwrap_or_else(|| format!("cyclictest: {}", file_label(&input)));
            let svg = draw(k, schedlab_plot::cyclictest_histogram(&title, &h))
                .map_err(|(c, e)| (c, format!("{e} ({})", input.display())))?;
            write(k, &output, &svg)
        }
        PlotWhat::Reproduction {
            input,
            scenario,
            metric,
            output,
        } => {
            let k = "reproduction";
            let text = read(k, &input)?;
            let doc: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| bad(k, format!("{}: not JSON: {e}", input.display())))?;
            let mut scs = plots::reproduction_from_json(&doc)
                .map_err(|e| bad(k, format!("{}: {e}", input.display())))?;
            if let Some(n) = &scenario {
                let names: Vec<String> = scs.iter().map(|s| s.name.clone()).collect();
                scs.retain(|s| &s.name == n);
                if scs.is_empty() {
                    return Err(bad(
                        k,
                        format!(
                            "--scenario '{n}' is not in {} (it has: {})",
                            input.display(),
                            names.join(", ")
                        ),
                    ));
                }
            }
            let figures: Vec<(String, String)> =
                draw(k, plots::reproduction_figures(&scs, metric.as_deref()))?
                    .into_iter()
                    .map(|(sc, m, svg)| (format!("{}_{}.svg", slug(&sc), slug(&m)), svg))
                    .collect();
            if figures.is_empty() {
                return Err(bad(
                    k,
                    match &metric {
                        Some(m) => {
                            format!("{}: no simulated value of metric '{m}'", input.display())
                        }
                        None => format!("{}: no simulated values", input.display()),
                    },
                ));
            }
            let is_svg = output
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
            if is_svg {
                if figures.len() > 1 {
                    return Err(bad(
                        k,
                        format!(
                            "{} figures ({}): give --scenario and --metric for one, or -o DIRECTORY",
                            figures.len(),
                            figures.iter().map(|f| f.0.trim_end_matches(".svg")).collect::<Vec<_>>().join(", ")
                        ),
                    ));
                }
                return write(k, &output, &figures[0].1);
            }
            std::fs::create_dir_all(&output)
                .map_err(|e| (1, format!("plot {k}: creating {}: {e}", output.display())))?;
            for (name, svg) in &figures {
                write(k, &PathBuf::from(&output).join(name), svg)?;
            }
            Ok(())
        }
        PlotWhat::Sweep {
            input,
            metric,
            x,
            title,
            output,
        } => {
            let k = "sweep";
            let text = read(k, &input)?;
            let rows = plots::parse_sweep_csv(&text)
                .map_err(|e| bad(k, format!("{}: {e}", input.display())))?;
            let svg = plots::sweep_figure(&rows, &metric, x.as_deref(), title.as_deref()).map_err(
                |e| match e {
                    plots::FigureError::NoData(m) => bad(k, format!("{}: {m}", input.display())),
                    plots::FigureError::Plot(e) => bad(k, e),
                },
            )?;
            write(k, &output, &svg)
        }
    }
}
