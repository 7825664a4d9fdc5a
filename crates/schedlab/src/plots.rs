//! The data behind the figures of `schedlab-plot`: extracted from trace records, from
//! cyclictest's own `-h` output, from a `reproduce --json` document and from a sweep's long
//! table. Inputs are slices of plain structs, outputs plain structs or the plot crate's types,
//! so that the Python bindings can pass rows directly. Errors are one-line messages (the
//! caller adds the file name).

use crate::stats::{amean, stddev};
use schedlab_plot::{BarRow, Curve, CurvePoint, HistSeries, RunSpan};
use schedlab_trace::{TraceEvent, TraceRecord};
use std::collections::BTreeMap;

/// One wakeup and the moment the woken task got the CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WakeupLatency {
    pub comm: String,
    pub pid: i32,
    /// `sched_wakeup`/`sched_wakeup_new` timestamp.
    pub wakeup_ns: u64,
    /// The `sched_switch` that switched to the task (`next_pid`).
    pub latency_ns: u64,
}

/// Wakeup → run latency of every task: from a `sched_wakeup` or `sched_wakeup_new` of pid P
/// to the next `sched_switch` with `next_pid=P`, on any CPU. A second wakeup of a task whose
/// first has not run yet keeps the first; a wakeup never followed by its switch (the trace
/// ends) is left out. The comm is the one the wakeup event prints. Records in trace order.
pub fn wakeup_latencies<S: AsRef<str>>(records: &[TraceRecord<S>]) -> Vec<WakeupLatency> {
    let mut pending: BTreeMap<i32, (u64, &str)> = BTreeMap::new();
    let mut out = Vec::new();
    for r in records {
        match &r.event {
            TraceEvent::SchedWakeup { comm, pid, .. }
            | TraceEvent::SchedWakeupNew { comm, pid, .. }
                if *pid != 0 =>
            {
                pending.entry(*pid).or_insert((r.ts_ns, comm.as_ref()));
            }
            TraceEvent::SchedSwitch { next_pid, .. } => {
                if let Some((t, comm)) = pending.remove(next_pid) {
                    out.push(WakeupLatency {
                        comm: comm.to_string(),
                        pid: *next_pid,
                        wakeup_ns: t,
                        latency_ns: r.ts_ns.saturating_sub(t),
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// One stretch of a task on a CPU, from its switch-in to its switch-out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInterval {
    pub cpu: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub comm: String,
    pub pid: i32,
}

/// Who ran on each CPU: per CPU, from each `sched_switch` to the next one on that CPU. The
/// task a CPU was running before its first switch ran from the first record of the trace;
/// the tasks running at the end run until the last record. The idle task (pid 0) is left
/// out. Returns (number of CPUs = highest CPU seen + 1, intervals ordered by CPU then time).
pub fn run_intervals<S: AsRef<str>>(records: &[TraceRecord<S>]) -> (u32, Vec<RunInterval>) {
    let Some(first) = records.first() else {
        return (0, Vec::new());
    };
    let t_first = first.ts_ns;
    let t_last = records.iter().map(|r| r.ts_ns).max().unwrap_or(t_first);
    let mut nr_cpus = 0u32;
    // per CPU: (pid, comm, since)
    let mut current: BTreeMap<u32, (i32, String, u64)> = BTreeMap::new();
    let mut out = Vec::new();
    for r in records {
        nr_cpus = nr_cpus.max(r.cpu + 1);
        if let TraceEvent::SchedSwitch {
            prev_comm,
            prev_pid,
            next_comm,
            next_pid,
            ..
        } = &r.event
        {
            let since = match current.get(&r.cpu) {
                Some((pid, _, since)) if pid == prev_pid => *since,
                Some(_) => r.ts_ns, // the trace lost the switch-in: nothing to draw
                None => t_first,
            };
            if *prev_pid != 0 && r.ts_ns > since {
                out.push(RunInterval {
                    cpu: r.cpu,
                    start_ns: since,
                    end_ns: r.ts_ns,
                    comm: prev_comm.as_ref().to_string(),
                    pid: *prev_pid,
                });
            }
            current.insert(r.cpu, (*next_pid, next_comm.as_ref().to_string(), r.ts_ns));
        }
    }
    for (cpu, (pid, comm, since)) in current {
        if pid != 0 && t_last > since {
            out.push(RunInterval {
                cpu,
                start_ns: since,
                end_ns: t_last,
                comm,
                pid,
            });
        }
    }
    out.sort_by_key(|a| (a.cpu, a.start_ns));
    (nr_cpus, out)
}

/// The timeline's spans between `from_ns` and `to_ns` (clipped), labelled `comm:pid`.
pub fn timeline_spans(intervals: &[RunInterval], from_ns: u64, to_ns: u64) -> Vec<RunSpan> {
    intervals
        .iter()
        .filter(|i| i.end_ns > from_ns && i.start_ns < to_ns)
        .map(|i| RunSpan {
            cpu: i.cpu,
            start_ns: i.start_ns.max(from_ns),
            end_ns: i.end_ns.min(to_ns),
            task: format!("{}:{}", i.comm, i.pid),
        })
        .collect()
}

/// The histogram of cyclictest's `-h N`/`--histogram=N` (or `-H N`) output: the lines after
/// `# Histogram`, `BUCKET COUNT…` (counts separated by tabs or spaces), up to `# Total:`.
/// One series per thread (`thread 0`, …); with `-H` the extra last column is `all threads`.
/// Text before `# Histogram` on its line (a prefix added by a wrapper) is removed from every
/// line of the block. Errors name the 1-based line.
pub fn parse_cyclictest_histogram(text: &str) -> Result<Vec<HistSeries>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let Some((start, prefix)) = lines.iter().enumerate().find_map(|(i, l)| {
        let at = l.find("# Histogram")?;
        (l[at..].trim_end() == "# Histogram").then(|| (i, &l[..at]))
    }) else {
        return Err("no '# Histogram' line (run cyclictest with -h N or -H N)".into());
    };
    let mut cols: Option<usize> = None;
    let mut buckets: Vec<(u64, Vec<u64>)> = Vec::new();
    let mut threads_named: Option<usize> = None;
    let mut i = start + 1;
    while i < lines.len() {
        let l = lines[i].strip_prefix(prefix).unwrap_or(lines[i]).trim();
        i += 1;
        if l.starts_with('#') {
            if l.starts_with("# Total:") {
                break;
            }
            continue;
        }
        if l.is_empty() {
            continue;
        }
        let mut it = l.split_whitespace();
        let bad = |what: &str| format!("line {i}: {what} in histogram line '{l}'");
        let b: u64 = it
            .next()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| bad("no bucket number"))?;
        let counts: Vec<u64> = it
            .map(|t| {
                t.parse::<u64>()
                    .map_err(|_| bad(&format!("count '{t}' is not a number")))
            })
            .collect::<Result<_, _>>()?;
        if counts.is_empty() {
            return Err(bad("no count"));
        }
        match cols {
            None => cols = Some(counts.len()),
            Some(c) if c != counts.len() => {
                return Err(bad(&format!(
                    "{} counts where the first line has {c}",
                    counts.len()
                )))
            }
            _ => {}
        }
        buckets.push((b, counts));
    }
    // `# Thread N:` lines (overflow cycles) name the threads: a column more is -H's sum
    for l in &lines[i.min(lines.len())..] {
        let l = l.strip_prefix(prefix).unwrap_or(l).trim();
        if l.starts_with("# Thread ") {
            threads_named = Some(threads_named.unwrap_or(0) + 1);
        }
    }
    let Some(cols) = cols else {
        return Err(format!(
            "line {}: '# Histogram' is followed by no bucket line",
            start + 1
        ));
    };
    let size = buckets.iter().map(|b| b.0 + 1).max().unwrap_or(0) as usize;
    let mut series: Vec<HistSeries> = (0..cols)
        .map(|c| HistSeries {
            label: if threads_named == Some(cols - 1) && c == cols - 1 && cols > 1 {
                "all threads".into()
            } else {
                format!("thread {c}")
            },
            counts: vec![0; size],
        })
        .collect();
    for (b, counts) in buckets {
        for (c, v) in counts.into_iter().enumerate() {
            series[c].counts[b as usize] += v;
        }
    }
    Ok(series)
}

/// One row of a reproduction (every scenario kind's JSON has these fields).
#[derive(Debug, Clone, PartialEq)]
pub struct ReproRow {
    pub variant: String,
    pub metric: String,
    pub unit: String,
    pub published: Option<f64>,
    pub simulated: Option<f64>,
    pub simulated_stddev: Option<f64>,
}

/// One acceptance target of a reproduction.
#[derive(Debug, Clone, PartialEq)]
pub struct ReproTarget {
    pub description: String,
    pub simulated: Option<f64>,
    pub pass: bool,
}

/// One scenario of a `reproduce --json` document.
#[derive(Debug, Clone, PartialEq)]
pub struct ReproScenario {
    pub name: String,
    pub quick: bool,
    pub runs: u64,
    pub rows: Vec<ReproRow>,
    pub targets: Vec<ReproTarget>,
}

impl ReproScenario {
    /// The metrics in the order of the rows.
    pub fn metrics(&self) -> Vec<String> {
        let mut m: Vec<String> = Vec::new();
        for r in &self.rows {
            if !m.contains(&r.metric) {
                m.push(r.metric.clone());
            }
        }
        m
    }

    /// The bars of one metric: one per variant with a simulated value.
    pub fn bars(&self, metric: &str) -> Vec<BarRow> {
        self.rows
            .iter()
            .filter(|r| r.metric == metric)
            .filter_map(|r| {
                Some(BarRow {
                    label: r.variant.clone(),
                    published: r.published,
                    simulated: r.simulated?,
                    sd: r.simulated_stddev.unwrap_or(0.0),
                })
            })
            .collect()
    }

    /// The metrics worth a figure: those with a published value, else all.
    pub fn plotted_metrics(&self) -> Vec<String> {
        let all = self.metrics();
        let published: Vec<String> = all
            .iter()
            .filter(|m| {
                self.rows
                    .iter()
                    .any(|r| &r.metric == *m && r.published.is_some())
            })
            .cloned()
            .collect();
        if published.is_empty() {
            all
        } else {
            published
        }
    }

    /// The unit of a metric (from its first row).
    pub fn unit(&self, metric: &str) -> String {
        self.rows
            .iter()
            .find(|r| r.metric == metric)
            .map(|r| r.unit.clone())
            .unwrap_or_default()
    }
}

/// Reads a `reproduce --json` document (`{"schema_version": 1, "scenarios": [...]}`) or a
/// single scenario object.
pub fn reproduction_from_json(doc: &serde_json::Value) -> Result<Vec<ReproScenario>, String> {
    let list: Vec<&serde_json::Value> = match doc.get("scenarios") {
        Some(serde_json::Value::Array(a)) => a.iter().collect(),
        Some(_) => return Err("'scenarios' is not an array".into()),
        None if doc.get("rows").is_some() => vec![doc],
        None => return Err("not a reproduce --json document (no 'scenarios')".into()),
    };
    let num = |v: &serde_json::Value, k: &str, at: &str| -> Result<Option<f64>, String> {
        match v.get(k) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(x) => x
                .as_f64()
                .map(Some)
                .ok_or_else(|| format!("{at}: '{k}' is not a number")),
        }
    };
    let text = |v: &serde_json::Value, k: &str, at: &str| -> Result<String, String> {
        match v.get(k) {
            Some(serde_json::Value::String(s)) => Ok(s.clone()),
            None | Some(serde_json::Value::Null) => Ok(String::new()),
            _ => Err(format!("{at}: '{k}' is not a string")),
        }
    };
    let mut out = Vec::new();
    for (i, s) in list.into_iter().enumerate() {
        let at = format!("scenarios[{i}]");
        let name = s
            .get("scenario")
            .and_then(|v| v.as_str())
            .ok_or_else(|| format!("{at}: no 'scenario' name"))?
            .to_string();
        let arr = |k: &str| -> Result<Vec<serde_json::Value>, String> {
            match s.get(k) {
                Some(serde_json::Value::Array(a)) => Ok(a.clone()),
                None => Ok(Vec::new()),
                _ => Err(format!("{at} ({name}): '{k}' is not an array")),
            }
        };
        let mut rows = Vec::new();
        for (j, r) in arr("rows")?.iter().enumerate() {
            let at = format!("{at} ({name}) rows[{j}]");
            rows.push(ReproRow {
                variant: text(r, "variant", &at)?,
                metric: text(r, "metric", &at)?,
                unit: text(r, "unit", &at)?,
                published: num(r, "published", &at)?,
                simulated: num(r, "simulated", &at)?,
                simulated_stddev: num(r, "simulated_stddev", &at)?,
            });
        }
        let mut targets = Vec::new();
        for (j, t) in arr("targets")?.iter().enumerate() {
            let at = format!("{at} ({name}) targets[{j}]");
            targets.push(ReproTarget {
                description: text(t, "description", &at)?,
                simulated: num(t, "simulated", &at)?,
                pass: t
                    .get("pass")
                    .and_then(|p| p.as_bool())
                    .ok_or_else(|| format!("{at}: 'pass' is not true or false"))?,
            });
        }
        out.push(ReproScenario {
            name,
            quick: s.get("quick").and_then(|q| q.as_bool()).unwrap_or(false),
            runs: s.get("runs").and_then(|q| q.as_u64()).unwrap_or(0),
            rows,
            targets,
        });
    }
    Ok(out)
}

/// One row of a sweep's long table.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRow {
    pub platform: String,
    pub kernel: String,
    pub workload: String,
    pub duration: String,
    pub seed: i64,
    pub metric: String,
    pub unit: String,
    pub value: f64,
}

/// The columns of the long table, in the order a CSV written by the sweep has them.
pub const SWEEP_COLUMNS: [&str; 8] = [
    "platform", "kernel", "workload", "duration", "seed", "metric", "unit", "value",
];

/// Splits one CSV record (RFC 4180: commas, fields in double quotes with `""` for a quote).
fn csv_fields(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut at_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    cur.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                cur.push(c);
            }
        } else if c == '"' && at_start {
            quoted = true;
            at_start = false;
        } else if c == ',' {
            out.push(std::mem::take(&mut cur));
            at_start = true;
        } else {
            cur.push(c);
            at_start = false;
        }
    }
    if quoted {
        return Err("unterminated quoted field".into());
    }
    out.push(cur);
    Ok(out)
}

/// Reads the long table from CSV with a header naming at least [`SWEEP_COLUMNS`] (any order;
/// other columns are ignored). Errors name the 1-based line and column. Quoted fields may not
/// span lines.
pub fn parse_sweep_csv(text: &str) -> Result<Vec<SweepRow>, String> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Err("empty file (expected a header line)".into());
    };
    let header = csv_fields(header.trim_end_matches('\r')).map_err(|e| format!("line 1: {e}"))?;
    let mut idx = [0usize; 8];
    for (k, col) in SWEEP_COLUMNS.iter().enumerate() {
        idx[k] = header
            .iter()
            .position(|h| h.trim() == *col)
            .ok_or_else(|| {
                format!(
                    "line 1: no column '{col}' (the header must name {})",
                    SWEEP_COLUMNS.join(", ")
                )
            })?;
    }
    let mut rows = Vec::new();
    for (i, l) in lines {
        let n = i + 1;
        let f = csv_fields(l.trim_end_matches('\r')).map_err(|e| format!("line {n}: {e}"))?;
        if f.len() != header.len() {
            return Err(format!(
                "line {n}: {} fields, the header has {}",
                f.len(),
                header.len()
            ));
        }
        let get = |k: usize| f[idx[k]].clone();
        let seed = get(4)
            .trim()
            .parse::<i64>()
            .map_err(|_| format!("line {n}: seed '{}' is not an integer", get(4)))?;
        let value = get(7)
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("line {n}: value '{}' is not a number", get(7)))?;
        rows.push(SweepRow {
            platform: get(0),
            kernel: get(1),
            workload: get(2),
            duration: get(3),
            seed,
            metric: get(5),
            unit: get(6),
            value,
        });
    }
    Ok(rows)
}

/// Compares text with its digit runs as numbers: `v6.6` < `v6.18`, `-g 2` < `-g 16`.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let (si, sj) = (i, j);
            while i < a.len() && a[i].is_ascii_digit() {
                i += 1;
            }
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            // without leading zeros, a longer run is a larger number
            let x = &a[si..i];
            let y = &b[sj..j];
            let tx = &x[x.iter().position(|&c| c != b'0').unwrap_or(x.len())..];
            let ty = &y[y.iter().position(|&c| c != b'0').unwrap_or(y.len())..];
            let o = tx.len().cmp(&ty.len()).then(tx.cmp(ty));
            if o != Ordering::Equal {
                return o;
            }
        } else {
            if a[i] != b[j] {
                return a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (a.len() - i).cmp(&(b.len() - j)).then(a.cmp(b))
}

/// The x of a workload line: the number after the token `opt` (`-g 4`, `--groups 4`) or in
/// `opt=4`/`opt4` (`--groups=4`, `-g4`).
fn x_of(workload: &str, opt: &str) -> Option<f64> {
    let toks: Vec<&str> = workload.split_whitespace().collect();
    for (i, t) in toks.iter().enumerate() {
        if *t == opt {
            return toks.get(i + 1).and_then(|v| v.parse().ok());
        }
        if let Some(rest) = t.strip_prefix(opt) {
            let rest = rest.strip_prefix('=').unwrap_or(rest);
            if let Ok(v) = rest.parse() {
                return Some(v);
            }
        }
    }
    None
}

/// The option whose number varies between the workload lines: the token before the only
/// position at which the (equally long) lines differ, when the values there are numbers.
fn varying_option(workloads: &[&str]) -> Option<String> {
    let toks: Vec<Vec<&str>> = workloads
        .iter()
        .map(|w| w.split_whitespace().collect())
        .collect();
    let n = toks.first()?.len();
    if toks.iter().any(|t| t.len() != n) {
        return None;
    }
    let varying: Vec<usize> = (0..n)
        .filter(|&i| toks.iter().any(|t| t[i] != toks[0][i]))
        .collect();
    match varying.as_slice() {
        [i] if *i > 0 && toks.iter().all(|t| t[*i].parse::<f64>().is_ok()) => {
            let opt = toks[0][i - 1];
            toks.iter()
                .all(|t| t[i - 1] == opt)
                .then(|| opt.to_string())
        }
        _ => None,
    }
}

/// Curves of one metric of a sweep against a workload parameter: x = the number after
/// `x_opt` in the workload line (found automatically when `None`: the option whose value is
/// the only difference between the lines), one curve per (platform, kernel, duration, rest of
/// the workload line), mean and sample sd over the seeds at each x. Returns (x option, unit,
/// curves).
pub fn sweep_curves(
    rows: &[SweepRow],
    metric: &str,
    x_opt: Option<&str>,
) -> Result<(String, String, Vec<Curve>), String> {
    let sel: Vec<&SweepRow> = rows.iter().filter(|r| r.metric == metric).collect();
    if sel.is_empty() {
        let mut names: Vec<&str> = rows.iter().map(|r| r.metric.as_str()).collect();
        names.sort();
        names.dedup();
        return Err(format!(
            "no rows of metric '{metric}' (metrics: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    }
    let opt = match x_opt {
        Some(o) => o.to_string(),
        None => {
            let mut ws: Vec<&str> = sel.iter().map(|r| r.workload.as_str()).collect();
            ws.sort();
            ws.dedup();
            varying_option(&ws).ok_or_else(|| {
                format!(
                    "cannot tell which workload option is the x axis of '{metric}' (give --x OPTION, e.g. --x -g)"
                )
            })?
        }
    };
    // series key → x (in millionths, for ordering) → values
    type Key = (String, String, String, String);
    let mut groups: BTreeMap<Key, BTreeMap<i64, (f64, Vec<f64>)>> = BTreeMap::new();
    for r in &sel {
        let x = x_of(&r.workload, &opt).ok_or_else(|| {
            format!(
                "workload '{}' has no number after '{opt}' (the x axis)",
                r.workload
            )
        })?;
        let rest = r
            .workload
            .split_whitespace()
            .scan(false, |skip, t| {
                let out = if *skip {
                    *skip = false;
                    None
                } else if t == opt {
                    *skip = true;
                    None
                } else if t.starts_with(opt.as_str()) && x_of(t, &opt).is_some() {
                    None
                } else {
                    Some(t)
                };
                Some(out)
            })
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        let key = (
            r.platform.clone(),
            r.kernel.clone(),
            r.duration.clone(),
            rest,
        );
        let e = groups
            .entry(key)
            .or_default()
            .entry((x * 1e6).round() as i64)
            .or_insert((x, Vec::new()));
        e.1.push(r.value);
    }
    // label by the parts of the key that vary
    let keys: Vec<&Key> = groups.keys().collect();
    let varies = |f: fn(&Key) -> &String| keys.iter().any(|k| f(k) != f(keys[0]));
    let (vp, vk, vd, vw) = (
        varies(|k| &k.0),
        varies(|k| &k.1),
        varies(|k| &k.2),
        varies(|k| &k.3),
    );
    let mut curves: Vec<Curve> = groups
        .into_iter()
        .map(|(k, pts)| {
            let mut parts = Vec::new();
            if vp {
                parts.push(k.0.clone());
            }
            if vk || !(vp || vd || vw) {
                parts.push(k.1.clone());
            }
            if vd {
                parts.push(k.2.clone());
            }
            if vw {
                parts.push(k.3.clone());
            }
            Curve {
                label: parts.join(", "),
                points: pts
                    .into_values()
                    .map(|(x, v)| CurvePoint {
                        x,
                        mean: amean(&v),
                        sd: stddev(&v),
                    })
                    .collect(),
            }
        })
        .collect();
    curves.sort_by(|a, b| natural_cmp(&a.label, &b.label));
    Ok((opt, sel[0].unit.clone(), curves))
}

#[cfg(test)]
mod tests;

// --- whole figures: what `schedlab plot KIND` and the Python functions draw -----------------

/// A figure could not be made: no data to draw (a one-line message; the caller adds the file
/// or label) or the plot crate refused the data.
#[derive(Debug)]
pub enum FigureError {
    NoData(String),
    Plot(schedlab_plot::PlotError),
}

impl std::fmt::Display for FigureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FigureError::NoData(m) => f.write_str(m),
            FigureError::Plot(e) => write!(f, "{e}"),
        }
    }
}

impl From<schedlab_plot::PlotError> for FigureError {
    fn from(e: schedlab_plot::PlotError) -> Self {
        FigureError::Plot(e)
    }
}

/// The wakeup→run latencies of one trace in µs, only those of tasks named `comm` if given;
/// none is an error (its message names the comm).
pub fn latency_us<S: AsRef<str>>(
    records: &[TraceRecord<S>],
    comm: Option<&str>,
) -> Result<Vec<f64>, String> {
    let values: Vec<f64> = wakeup_latencies(records)
        .into_iter()
        .filter(|w| comm.is_none_or(|c| w.comm == c))
        .map(|w| w.latency_ns as f64 / 1e3)
        .collect();
    if values.is_empty() {
        return Err(match comm {
            Some(c) => format!("no wakeup of a task with comm '{c}' followed by its sched_switch"),
            None => "no sched_wakeup followed by the task's sched_switch".to_string(),
        });
    }
    Ok(values)
}

/// The latency figure of labelled sample sets (from [`latency_us`]): CDF, or a histogram per
/// set with `hist`; the default title names the comm.
pub fn latency_figure(
    sets: &[schedlab_plot::Samples],
    comm: Option<&str>,
    hist: bool,
    title: Option<&str>,
) -> Result<String, schedlab_plot::PlotError> {
    let title = match (title, comm) {
        (Some(t), _) => t.to_string(),
        (None, Some(c)) => format!("wakeup latency of {c}"),
        (None, None) => "wakeup latency".to_string(),
    };
    if hist {
        schedlab_plot::latency_histogram(&title, "µs", sets)
    } else {
        schedlab_plot::latency_cdf(&title, "µs", sets)
    }
}

/// Who ran on each CPU of a trace between `from_ns` and `to_ns`.
pub fn timeline_figure<S: AsRef<str>>(
    records: &[TraceRecord<S>],
    from_ns: Option<u64>,
    to_ns: Option<u64>,
    title: &str,
) -> Result<String, FigureError> {
    let (nr_cpus, iv) = run_intervals(records);
    let spans = timeline_spans(&iv, from_ns.unwrap_or(0), to_ns.unwrap_or(u64::MAX));
    if spans.is_empty() {
        return Err(FigureError::NoData(
            "no task ran in the window (sched_switch records needed)".into(),
        ));
    }
    Ok(schedlab_plot::cpu_timeline(title, nr_cpus, &spans)?)
}

/// Published-vs-simulated bars: (scenario, metric, SVG) for each scenario and each metric
/// with something to draw (only `metric` if given); an empty list when there is none.
pub fn reproduction_figures(
    scenarios: &[ReproScenario],
    metric: Option<&str>,
) -> Result<Vec<(String, String, String)>, schedlab_plot::PlotError> {
    let mut out = Vec::new();
    for sc in scenarios {
        let metrics = match metric {
            Some(m) if sc.metrics().iter().any(|x| x == m) => vec![m.to_string()],
            Some(_) => continue,
            None => sc.plotted_metrics(),
        };
        for m in metrics {
            let bars = sc.bars(&m);
            if bars.is_empty() {
                continue;
            }
            let svg = schedlab_plot::published_vs_simulated(
                &format!("{}: {m}", sc.name),
                &sc.unit(&m),
                &bars,
            )?;
            out.push((sc.name.clone(), m, svg));
        }
    }
    Ok(out)
}

/// One metric of a sweep against a workload option ([`sweep_curves`]), mean ± sd.
pub fn sweep_figure(
    rows: &[SweepRow],
    metric: &str,
    x_opt: Option<&str>,
    title: Option<&str>,
) -> Result<String, FigureError> {
    let (opt, unit, curves) = sweep_curves(rows, metric, x_opt).map_err(FigureError::NoData)?;
    let y = if unit.is_empty() {
        metric.to_string()
    } else {
        format!("{metric} ({unit})")
    };
    let title = title
        .map(str::to_string)
        .unwrap_or_else(|| format!("{metric} against {opt}"));
    Ok(schedlab_plot::curves(&title, &opt, &y, &curves)?)
}
