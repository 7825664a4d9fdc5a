//! schedlab's figures, drawn once: data in, SVG text out.
//!
//! Every function is pure and deterministic (the same input gives the same bytes: no
//! timestamps, no random ids) and returns a [`PlotError`] for input it cannot draw (no data,
//! a NaN, a negative latency) instead of panicking.
//!
//! Text: plotters is built without its font crates (`ttf`, `ab_glyph`). Labels are laid out
//! with plotters' built-in size estimate and written as SVG `<text font-family="sans-serif">`,
//! which the viewer draws with whatever font it has; nothing here reads a font file, so the
//! figures are the same on a machine without fonts. A PNG would need a font to rasterise the
//! text (shipped with the binary) and is not offered: a browser turns the SVG into pixels.
//!
//! Figures:
//! - [`latency_cdf`], [`latency_histogram`]: wakeup latency per variant (several labelled
//!   sample sets), log x axis;
//! - [`cyclictest_histogram`]: cyclictest's `-h` histogram, per thread counts per µs bucket,
//!   log y axis;
//! - [`cpu_timeline`]: who ran on each CPU, coloured per task, with a legend of the tasks that
//!   ran longest;
//! - [`curves`]: a metric against a workload parameter, one curve per series, mean ± sd;
//! - [`published_vs_simulated`]: a reproduction's published and simulated values per variant.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of every figure, in SVG user units (pixels).
pub const WIDTH: u32 = 860;

/// Why a figure could not be drawn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlotError {
    /// No data (no series, or a series without values); names what is empty.
    #[error("{0}: nothing to plot")]
    Empty(String),
    /// A value that cannot be drawn (NaN, infinite, negative latency, an end before a start).
    #[error("{0}")]
    Invalid(String),
    /// plotters refused to draw (should not happen for valid input).
    #[error("drawing failed: {0}")]
    Draw(String),
}

type R<T> = Result<T, PlotError>;

fn d<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Draw(e.to_string())
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Series colours (Tableau 10 without its grey, which marks "other").
const PALETTE: [RGBColor; 9] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];
const OTHER: RGBColor = RGBColor(0xc7, 0xc7, 0xc7);
const PUBLISHED: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// The colour of series `i` (cycles after nine series).
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

const FONT: &str = "sans-serif";
const TITLE_PX: u32 = 20;
const LABEL_PX: u32 = 14;
/// Longest legend or row label before it is shortened with "…".
const MAX_LABEL: usize = 36;

/// Rough width of `s` at font size `px` (plotters writes `px / 1.24` as the SVG font size;
/// sans-serif averages up to about 0.68 em per character in capitals-heavy labels).
fn text_width(s: &str, px: u32) -> u32 {
    (s.chars().count() as f64 * px as f64 / 1.24 * 0.68).ceil() as u32
}

fn shorten(s: &str) -> String {
    if s.chars().count() <= MAX_LABEL {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(MAX_LABEL - 1).collect();
        t.push('…');
        t
    }
}

/// A number for an axis or a bar: short, no exponent.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if a == 0.0 {
        "0".into()
    } else if a >= 1e9 {
        format!("{}G", trim(format!("{:.2}", v / 1e9)))
    } else if a >= 1e6 {
        format!("{}M", trim(format!("{:.2}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        trim(format!("{v:.2}"))
    } else if a >= 0.001 {
        trim(format!("{v:.4}"))
    } else {
        trim(format!("{v:.7}"))
    }
}

fn check_finite(what: &str, v: f64) -> R<()> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(PlotError::Invalid(format!(
            "{what}: value {v} is not finite"
        )))
    }
}

/// Draws into a fresh SVG string of `WIDTH × height`.
fn svg(height: u32, draw: impl FnOnce(&Area) -> R<()>) -> R<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(d)?;
        draw(&root)?;
        root.present().map_err(d)?;
    }
    Ok(out)
}

/// Splits off a legend column on the right wide enough for `labels` (none: no column).
fn with_legend<'a>(root: &Area<'a>, labels: &[String]) -> (Area<'a>, Option<Area<'a>>) {
    if labels.is_empty() {
        return (root.clone(), None);
    }
    let w = labels
        .iter()
        .map(|l| text_width(&shorten(l), LABEL_PX))
        .max()
        .unwrap_or(0)
        + 40;
    let w = w.clamp(120, WIDTH / 2) as i32;
    let (a, b) = root.split_horizontally(WIDTH as i32 - w);
    (a, Some(b))
}

/// A legend: a colour swatch and a label per entry, from `top` down.
fn draw_legend(area: &Area, entries: &[(String, RGBColor)], top: i32) -> R<()> {
    let style =
        TextStyle::from((FONT, LABEL_PX).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (label, c)) in entries.iter().enumerate() {
        let y = top + 20 * i as i32;
        area.draw(&Rectangle::new([(6, y - 6), (20, y + 6)], c.filled()))
            .map_err(d)?;
        area.draw(&Text::new(shorten(label), (26, y), style.clone()))
            .map_err(d)?;
    }
    Ok(())
}

fn legend_entries(labels: &[String]) -> Vec<(String, RGBColor)> {
    labels
        .iter()
        .enumerate()
        .map(|(i, l)| (l.clone(), colour(i)))
        .collect()
}

/// Log-axis bounds: powers of ten around the smallest positive and the largest value.
fn log_bounds(min_pos: f64, max: f64) -> (f64, f64) {
    let lo = 10f64.powf(min_pos.log10().floor());
    let mut hi = 10f64.powf(max.log10().ceil());
    if hi <= lo {
        hi = lo * 10.0;
    }
    (lo, hi)
}

/// One labelled set of samples (e.g. the wakeup latencies of one variant, in µs).
#[derive(Debug, Clone, PartialEq)]
pub struct Samples {
    pub label: String,
    pub values: Vec<f64>,
}

fn check_samples(what: &str, sets: &[Samples]) -> R<(f64, f64)> {
    if sets.is_empty() {
        return Err(PlotError::Empty(what.into()));
    }
    let mut min_pos = f64::INFINITY;
    let mut max = 0f64;
    let mut zero = false;
    for s in sets {
        if s.values.is_empty() {
            return Err(PlotError::Empty(format!("{what} '{}'", s.label)));
        }
        for &v in &s.values {
            check_finite(&format!("{what} '{}'", s.label), v)?;
            if v < 0.0 {
                return Err(PlotError::Invalid(format!(
                    "{what} '{}': negative value {v}",
                    s.label
                )));
            }
            if v > 0.0 {
                min_pos = min_pos.min(v);
            }
            zero |= v == 0.0;
            max = max.max(v);
        }
    }
    if !min_pos.is_finite() {
        // all zero: one decade above zero
        min_pos = 1.0;
        max = 1.0;
    }
    let (mut lo, hi) = log_bounds(min_pos, max);
    if zero && lo >= min_pos {
        // zeros are drawn at the left edge: keep it below the smallest positive value
        lo /= 10.0;
    }
    Ok((lo, hi))
}

/// At most this many steps per CDF curve (evenly spaced ranks beyond).
const CDF_POINTS: usize = 2000;

/// Wakeup-latency CDF, one curve per sample set: x = latency (`unit`, log scale; zero values
/// are drawn at the left edge), y = fraction of samples at or below x.
pub fn latency_cdf(title: &str, unit: &str, sets: &[Samples]) -> R<String> {
    let (lo, hi) = check_samples("latency samples", sets)?;
    let labels: Vec<String> = sets.iter().map(|s| s.label.clone()).collect();
    svg(480, |root| {
        let (plot, legend) = with_legend(root, &labels);
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .caption(title, (FONT, TITLE_PX))
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d((lo..hi).log_scale(), 0f64..1f64)
            .map_err(d)?;
        chart
            .configure_mesh()
            .x_desc(format!("latency ({unit})"))
            .y_desc("fraction ≤ x")
            .x_label_formatter(&|v| fmt_num(*v))
            .y_label_formatter(&|v| fmt_num(*v))
            .label_style((FONT, LABEL_PX))
            .max_light_lines(0)
            .bold_line_style(RGBColor(0xe2, 0xe2, 0xe2))
            .draw()
            .map_err(d)?;
        for (i, s) in sets.iter().enumerate() {
            let mut v = s.values.clone();
            v.sort_by(f64::total_cmp);
            let n = v.len();
            let step = n.div_ceil(CDF_POINTS).max(1);
            let mut pts = Vec::with_capacity(2 * n / step + 2);
            let mut prev = 0f64;
            let mut k = 0;
            while k < n {
                // the last sample of each kept rank block, so the curve ends at 1
                let j = (k + step - 1).min(n - 1);
                let x = v[j].max(lo);
                let y = (j + 1) as f64 / n as f64;
                pts.push((x, prev));
                pts.push((x, y));
                prev = y;
                k = j + 1;
            }
            chart
                .draw_series(LineSeries::new(pts, colour(i).stroke_width(2)))
                .map_err(d)?;
        }
        if let Some(l) = legend {
            draw_legend(&l, &legend_entries(&labels), 50)?;
        }
        Ok(())
    })
}

/// Number of log-spaced bins per decade in [`latency_histogram`].
const BINS_PER_DECADE: usize = 10;

/// Wakeup-latency histogram, one panel per sample set (same log-spaced bins on every panel):
/// x = latency (`unit`, log scale), y = number of samples in the bin.
pub fn latency_histogram(title: &str, unit: &str, sets: &[Samples]) -> R<String> {
    let (lo, hi) = check_samples("latency samples", sets)?;
    let decades = (hi / lo).log10().round().max(1.0) as usize;
    let nbins = decades * BINS_PER_DECADE;
    let edge = |b: usize| lo * 10f64.powf(b as f64 / BINS_PER_DECADE as f64);
    let panel_h = 170u32;
    let height = 40 + panel_h * sets.len() as u32;
    svg(height, |root| {
        let (head, body) = root.split_vertically(40);
        head.draw(&Text::new(
            title.to_string(),
            ((WIDTH / 2) as i32, 20),
            TextStyle::from((FONT, TITLE_PX).into_font()).pos(Pos::new(HPos::Center, VPos::Center)),
        ))
        .map_err(d)?;
        let panels = body.split_evenly((sets.len(), 1));
        for (i, (s, p)) in sets.iter().zip(panels.iter()).enumerate() {
            let mut counts = vec![0u64; nbins];
            for &v in &s.values {
                let b = if v <= lo {
                    0
                } else {
                    ((v / lo).log10() * BINS_PER_DECADE as f64).floor() as usize
                };
                counts[b.min(nbins - 1)] += 1;
            }
            let top = counts.iter().copied().max().unwrap_or(1).max(1) as f64 * 1.1;
            let last = i + 1 == sets.len();
            let mut chart = ChartBuilder::on(p)
                .margin_left(12)
                .margin_right(30)
                .margin_top(4)
                .caption(shorten(&s.label), (FONT, LABEL_PX + 1))
                .x_label_area_size(if last { 40 } else { 22 })
                .y_label_area_size(56)
                .build_cartesian_2d((lo..hi).log_scale(), 0f64..top)
                .map_err(d)?;
            let mut mesh = chart.configure_mesh();
            mesh.x_label_formatter(&|v| fmt_num(*v))
                .y_label_formatter(&|v| fmt_num(*v))
                .y_labels(4)
                .label_style((FONT, LABEL_PX))
                .max_light_lines(0)
                .bold_line_style(RGBColor(0xe2, 0xe2, 0xe2))
                .y_desc("samples");
            if last {
                mesh.x_desc(format!("latency ({unit})"));
            }
            mesh.draw().map_err(d)?;
            chart
                .draw_series(
                    counts
                        .iter()
                        .enumerate()
                        .filter(|(_, &c)| c > 0)
                        .map(|(b, &c)| {
                            Rectangle::new(
                                [(edge(b), 0.0), (edge(b + 1), c as f64)],
                                colour(i).filled(),
                            )
                        }),
                )
                .map_err(d)?;
        }
        Ok(())
    })
}

/// One thread's column of a cyclictest histogram: `counts[i]` samples had a latency of `i` µs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistSeries {
    pub label: String,
    pub counts: Vec<u64>,
}

/// cyclictest's `-h` histogram as its users plot it: x = latency (µs), y = samples (log
/// scale), one line per thread; empty buckets break the line.
pub fn cyclictest_histogram(title: &str, threads: &[HistSeries]) -> R<String> {
    if threads.is_empty() {
        return Err(PlotError::Empty("cyclictest histogram".into()));
    }
    let mut last = 0usize;
    let mut top = 0u64;
    for t in threads {
        for (i, &c) in t.counts.iter().enumerate() {
            if c > 0 {
                last = last.max(i);
                top = top.max(c);
            }
        }
    }
    if top == 0 {
        return Err(PlotError::Empty(
            "cyclictest histogram (every bucket is 0)".into(),
        ));
    }
    let labels: Vec<String> = threads.iter().map(|t| t.label.clone()).collect();
    // whole µs buckets: at least 0..10, at most 11 ticks (a step of 1 or more, no 0.5)
    let x_hi = (last + 1).max(10) as f64;
    let y_hi = 10f64.powf((top as f64 * 1.5).log10().ceil());
    svg(480, |root| {
        let (plot, legend) = with_legend(root, &labels);
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .caption(title, (FONT, TITLE_PX))
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..x_hi, (0.8f64..y_hi).log_scale())
            .map_err(d)?;
        chart
            .configure_mesh()
            .x_desc("latency (µs)")
            .y_desc("samples")
            .x_labels(11)
            .x_label_formatter(&|v| fmt_num(*v))
            .y_label_formatter(&|v| fmt_num(*v))
            .label_style((FONT, LABEL_PX))
            .max_light_lines(0)
            .bold_line_style(RGBColor(0xe2, 0xe2, 0xe2))
            .draw()
            .map_err(d)?;
        for (i, t) in threads.iter().enumerate() {
            let style = colour(i).stroke_width(2);
            let mut run: Vec<(f64, f64)> = Vec::new();
            let mut flush = |run: &mut Vec<(f64, f64)>| -> R<()> {
                if run.len() == 1 {
                    let (x, y) = run[0];
                    chart
                        .draw_series(std::iter::once(Circle::new((x, y), 2, colour(i).filled())))
                        .map_err(d)?;
                } else if run.len() > 1 {
                    chart
                        .draw_series(LineSeries::new(run.iter().copied(), style))
                        .map_err(d)?;
                }
                run.clear();
                Ok(())
            };
            for (b, &c) in t.counts.iter().enumerate() {
                if c == 0 {
                    flush(&mut run)?;
                } else {
                    run.push((b as f64, c as f64));
                }
            }
            flush(&mut run)?;
        }
        if let Some(l) = legend {
            draw_legend(&l, &legend_entries(&labels), 50)?;
        }
        Ok(())
    })
}

/// One stretch of time a task ran on a CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSpan {
    pub cpu: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    /// What the legend calls it, e.g. `stress-ng-pipe:123` (comm:pid).
    pub task: String,
}

/// Tasks with a colour and a legend entry in [`cpu_timeline`]; the others are grey "other".
pub const TIMELINE_TOP: usize = 9;

/// Who ran on each CPU: one row per CPU (CPU 0 on top), a bar per run coloured per task.
/// The [`TIMELINE_TOP`] tasks with the most run time get a colour and a legend entry, the
/// rest are grey. x = time in ms. Runs closer than half a pixel are merged per colour.
pub fn cpu_timeline(title: &str, nr_cpus: u32, spans: &[RunSpan]) -> R<String> {
    if spans.is_empty() {
        return Err(PlotError::Empty("CPU timeline (no task ran)".into()));
    }
    if nr_cpus == 0 {
        return Err(PlotError::Invalid("CPU timeline: 0 CPUs".into()));
    }
    let mut total: std::collections::BTreeMap<&str, u64> = Default::default();
    let (mut t0, mut t1) = (u64::MAX, 0u64);
    for s in spans {
        if s.end_ns < s.start_ns {
            return Err(PlotError::Invalid(format!(
                "CPU timeline: run of '{}' on CPU {} ends at {} ns before it starts at {} ns",
                s.task, s.cpu, s.end_ns, s.start_ns
            )));
        }
        if s.cpu >= nr_cpus {
            return Err(PlotError::Invalid(format!(
                "CPU timeline: run of '{}' on CPU {} but only {nr_cpus} CPUs",
                s.task, s.cpu
            )));
        }
        *total.entry(&s.task).or_default() += s.end_ns - s.start_ns;
        t0 = t0.min(s.start_ns);
        t1 = t1.max(s.end_ns);
    }
    if t1 == t0 {
        t1 = t0 + 1;
    }
    let mut ranked: Vec<(&str, u64)> = total.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let top: Vec<String> = ranked
        .iter()
        .take(TIMELINE_TOP)
        .map(|t| t.0.to_string())
        .collect();
    let key = |task: &str| top.iter().position(|t| t == task);
    let mut labels = top.clone();
    if ranked.len() > top.len() {
        labels.push(format!("other ({} tasks)", ranked.len() - top.len()));
    }
    let mut entries = legend_entries(&top);
    if ranked.len() > top.len() {
        entries.push((labels[labels.len() - 1].clone(), OTHER));
    }
    // merge runs closer than half a pixel (plot width about WIDTH - legend - axes)
    let ns_per_px = (t1 - t0) as f64 / (WIDTH as f64 * 0.6);
    let mut sorted: Vec<(u32, u64, u64, Option<usize>)> = spans
        .iter()
        .map(|s| (s.cpu, s.start_ns, s.end_ns, key(&s.task)))
        .collect();
    sorted.sort();
    let mut merged: Vec<(u32, u64, u64, Option<usize>)> = Vec::new();
    for s in sorted {
        if let Some(m) = merged.last_mut() {
            if m.0 == s.0 && m.3 == s.3 && (s.1 as f64 - m.2 as f64) <= ns_per_px / 2.0 {
                m.2 = m.2.max(s.2);
                continue;
            }
        }
        merged.push(s);
    }
    let row = (360 / nr_cpus).clamp(6, 28);
    let height = (row * nr_cpus + 110).max(200 + 20 * entries.len() as u32 / 2);
    let ms = |ns: u64| (ns - t0) as f64 / 1e6;
    let x_hi = ms(t1);
    let n = nr_cpus as f64;
    svg(height, |root| {
        let (plot, legend) = with_legend(root, &labels);
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .caption(title, (FONT, TITLE_PX))
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..x_hi, 0f64..n)
            .map_err(d)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_y_axis()
            .x_desc(format!("time (ms from {})", fmt_num(t0 as f64 / 1e6)))
            .x_label_formatter(&|v| fmt_num(*v))
            .label_style((FONT, LABEL_PX))
            .max_light_lines(0)
            .bold_line_style(RGBColor(0xe2, 0xe2, 0xe2))
            .draw()
            .map_err(d)?;
        chart
            .draw_series(merged.iter().map(|&(cpu, a, b, k)| {
                let c = k.map(colour).unwrap_or(OTHER);
                // CPU 0 on top: row i spans y in [n-i-1, n-i]
                let y = n - cpu as f64;
                Rectangle::new([(ms(a), y - 0.9), (ms(b), y - 0.1)], c.filled())
            }))
            .map_err(d)?;
        // CPU labels left of the rows, thinned so that they do not overlap
        let every = (16 / row).max(1) as usize;
        let style =
            TextStyle::from((FONT, LABEL_PX).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        for cpu in (0..nr_cpus as usize).step_by(every) {
            let (x, y) = chart.backend_coord(&(0.0, n - cpu as f64 - 0.5));
            root.draw(&Text::new(format!("CPU{cpu}"), (x - 6, y), style.clone()))
                .map_err(d)?;
        }
        if let Some(l) = legend {
            draw_legend(&l, &entries, 50)?;
        }
        Ok(())
    })
}

/// One point of a curve: mean and standard deviation of the metric over seeds at `x`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    pub x: f64,
    pub mean: f64,
    pub sd: f64,
}

/// A labelled curve (e.g. one kernel) of [`curves`].
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub label: String,
    pub points: Vec<CurvePoint>,
}

/// Curves with error bars (mean ± sd), e.g. throughput against clients or groups, one curve per
/// kernel. Points are joined in order of x.
pub fn curves(title: &str, x_label: &str, y_label: &str, series: &[Curve]) -> R<String> {
    if series.is_empty() {
        return Err(PlotError::Empty("curves".into()));
    }
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0f64, 0f64);
    for c in series {
        if c.points.is_empty() {
            return Err(PlotError::Empty(format!("curve '{}'", c.label)));
        }
        for p in &c.points {
            for v in [p.x, p.mean, p.sd] {
                check_finite(&format!("curve '{}'", c.label), v)?;
            }
            if p.sd < 0.0 {
                return Err(PlotError::Invalid(format!(
                    "curve '{}': negative standard deviation {} at x = {}",
                    c.label, p.sd, p.x
                )));
            }
            x0 = x0.min(p.x);
            x1 = x1.max(p.x);
            y0 = y0.min(p.mean - p.sd);
            y1 = y1.max(p.mean + p.sd);
        }
    }
    let pad = if x1 > x0 { (x1 - x0) * 0.04 } else { 1.0 };
    let (x0, x1) = (x0 - pad, x1 + pad);
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    let ypad = (y1 - y0) * 0.06;
    let (y0, y1) = (if y0 < 0.0 { y0 - ypad } else { 0.0 }, y1 + ypad);
    let labels: Vec<String> = series.iter().map(|s| s.label.clone()).collect();
    svg(480, |root| {
        let (plot, legend) = with_legend(root, &labels);
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .caption(title, (FONT, TITLE_PX))
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(d)?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .x_label_formatter(&|v| fmt_num(*v))
            .y_label_formatter(&|v| fmt_num(*v))
            .label_style((FONT, LABEL_PX))
            .max_light_lines(0)
            .bold_line_style(RGBColor(0xe2, 0xe2, 0xe2))
            .draw()
            .map_err(d)?;
        for (i, c) in series.iter().enumerate() {
            let mut pts = c.points.clone();
            pts.sort_by(|a, b| a.x.total_cmp(&b.x));
            let col = colour(i);
            chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|p| (p.x, p.mean)),
                    col.stroke_width(2),
                ))
                .map_err(d)?;
            chart
                .draw_series(pts.iter().map(|p| {
                    ErrorBar::new_vertical(
                        p.x,
                        p.mean - p.sd,
                        p.mean,
                        p.mean + p.sd,
                        col.filled(),
                        8,
                    )
                }))
                .map_err(d)?;
        }
        if let Some(l) = legend {
            draw_legend(&l, &legend_entries(&labels), 50)?;
        }
        Ok(())
    })
}

/// One variant of a reproduction: the published value (if any) and the simulated mean ± sd.
#[derive(Debug, Clone, PartialEq)]
pub struct BarRow {
    pub label: String,
    pub published: Option<f64>,
    pub simulated: f64,
    pub sd: f64,
}

/// Published against simulated, one row per variant (horizontal bars; the simulated bar has
/// a ± sd error bar and its value written at its end). `unit` labels the x axis.
pub fn published_vs_simulated(title: &str, unit: &str, rows: &[BarRow]) -> R<String> {
    if rows.is_empty() {
        return Err(PlotError::Empty("published vs simulated".into()));
    }
    let (mut lo, mut hi) = (0f64, 0f64);
    for r in rows {
        let what = format!("row '{}'", r.label);
        check_finite(&what, r.simulated)?;
        check_finite(&what, r.sd)?;
        if r.sd < 0.0 {
            return Err(PlotError::Invalid(format!(
                "{what}: negative standard deviation {}",
                r.sd
            )));
        }
        lo = lo.min(r.simulated - r.sd);
        hi = hi.max(r.simulated + r.sd);
        if let Some(p) = r.published {
            check_finite(&what, p)?;
            lo = lo.min(p);
            hi = hi.max(p);
        }
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    // room for the value written after the longest bar
    let span = hi - lo;
    let (lo, hi) = (
        if lo < 0.0 { lo - span * 0.05 } else { 0.0 },
        hi + span * 0.18,
    );
    let label_w = rows
        .iter()
        .map(|r| text_width(&shorten(&r.label), LABEL_PX))
        .max()
        .unwrap_or(0)
        .clamp(40, 300)
        + 16;
    let has_published = rows.iter().any(|r| r.published.is_some());
    let mut entries = vec![("simulated (mean ± sd)".to_string(), colour(0))];
    if has_published {
        entries.push(("published".to_string(), PUBLISHED));
    }
    let labels: Vec<String> = entries.iter().map(|e| e.0.clone()).collect();
    let row_h = if has_published { 44 } else { 28 };
    let height = 110 + row_h * rows.len() as u32;
    let n = rows.len() as f64;
    svg(height, |root| {
        let (plot, legend) = with_legend(root, &labels);
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .caption(title, (FONT, TITLE_PX))
            .x_label_area_size(44)
            .y_label_area_size(label_w)
            .build_cartesian_2d(lo..hi, 0f64..n)
            .map_err(d)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_y_axis()
            .x_desc(unit)
            .x_label_formatter(&|v| fmt_num(*v))
            .label_style((FONT, LABEL_PX))
            .max_light_lines(0)
            .bold_line_style(RGBColor(0xe2, 0xe2, 0xe2))
            .draw()
            .map_err(d)?;
        let value_style = TextStyle::from((FONT, LABEL_PX - 2).into_font())
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (i, r) in rows.iter().enumerate() {
            // row i (top first) spans y in [n-i-1, n-i]
            let top = n - i as f64;
            let (sim_a, sim_b) = if has_published {
                (top - 0.48, top - 0.12)
            } else {
                (top - 0.8, top - 0.2)
            };
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(0.0, sim_a), (r.simulated, sim_b)],
                    colour(0).filled(),
                )))
                .map_err(d)?;
            let mid = (sim_a + sim_b) / 2.0;
            if r.sd > 0.0 {
                chart
                    .draw_series(std::iter::once(ErrorBar::new_horizontal(
                        mid,
                        r.simulated - r.sd,
                        r.simulated,
                        r.simulated + r.sd,
                        BLACK.stroke_width(1),
                        6,
                    )))
                    .map_err(d)?;
            }
            let (x, y) = chart.backend_coord(&(r.simulated.max(0.0) + r.sd, mid));
            root.draw(&Text::new(
                fmt_num(r.simulated),
                (x + 8, y),
                value_style.clone(),
            ))
            .map_err(d)?;
            if let Some(p) = r.published {
                let (pa, pb) = (top - 0.88, top - 0.52);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(0.0, pa), (p, pb)],
                        PUBLISHED.filled(),
                    )))
                    .map_err(d)?;
                let (x, y) = chart.backend_coord(&(p.max(0.0), (pa + pb) / 2.0));
                root.draw(&Text::new(fmt_num(p), (x + 4, y), value_style.clone()))
                    .map_err(d)?;
            }
        }
        let style =
            TextStyle::from((FONT, LABEL_PX).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        for (i, r) in rows.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(lo, n - i as f64 - 0.5));
            root.draw(&Text::new(shorten(&r.label), (x - 6, y), style.clone()))
                .map_err(d)?;
        }
        if let Some(l) = legend {
            draw_legend(&l, &entries, 50)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests;
