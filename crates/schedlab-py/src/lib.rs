//! `schedlab._native`: the extension module under the Python package `schedlab`
//! (python/schedlab). It calls the same library functions as the `schedlab` binary and
//! returns what the binary prints, byte for byte; the Python layer builds DataFrames from it.
//!
//! - `run_json(platform, kernel, workloads, duration=None, seed=None, strict=False,
//!   trace=False) -> (json, text, trace_columns | None)`
//! - `reproduce_json(names, quick=False, runs=None, jobs=None) -> (json, text)`
//! - `compare_json(platform, kernels, workloads, duration=None, seed=None, runs=None,
//!   jobs=None) -> (json, text)`
//! - `SchedlabError` (a `ValueError`): bad input or a failed run; `str(e)` is the line the
//!   binary prints after `schedlab: `.
//!
//! Arguments are checked as the binary's flag parser checks them, with its messages (the
//! command, the flag and the value; `(try 'schedlab help CMD')` included). `duration` is a
//! string as on the command line (`"1s"`, `"200ms"`) or an int of nanoseconds; `seed`,
//! `runs` and `jobs` are ints (`None`: the binary's default).
//!
//! Every function releases the GIL while it simulates (other Python threads run meanwhile,
//! and several calls from threads simulate in parallel). Nothing is printed except what the
//! binary prints on stderr: input warnings (`schedlab: warning: ...`), and compare's note on
//! cut workloads. A panic (a bug) becomes a `RuntimeError`, never an abort.

mod figures;

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyString};
use schedlab::trace_mem::{ColumnType, FxHasher, TraceColumns, Value, COLUMNS};
use schedlab::{report, RunError, RunSpec};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

pyo3::create_exception!(
    schedlab._native,
    SchedlabError,
    PyValueError,
    "Bad input or a failed run: the message is the line the schedlab binary prints (after \
     'schedlab: ')."
);

pub(crate) fn error(msg: impl Into<String>) -> PyErr {
    SchedlabError::new_err(msg.into())
}

/// The binary's message for a flag value its parser refuses (clap's, folded to one line by
/// crates/schedlab-cli/src/args.rs `one_line`).
fn bad_value(cmd: &str, flag: &str, value: &str, why: &str) -> PyErr {
    error(format!(
        "{cmd}: invalid value '{value}' for '{flag}': {why} (try 'schedlab help {cmd}')"
    ))
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// A Python int (not a bool) as the text a user would have typed on the command line.
fn int_text(arg: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "{arg}: expected an int, got {}",
            type_name(v)
        )));
    }
    Ok(v.str()?.to_string())
}

/// `--duration`: a string as on the command line, or an int of nanoseconds; `None` = the
/// workloads' own length.
fn duration(cmd: &str, v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let text = if let Ok(s) = v.cast::<PyString>() {
        s.to_str()?.to_string()
    } else if v.is_instance_of::<PyInt>() && !v.is_instance_of::<PyBool>() {
        format!("{}ns", v.str()?)
    } else {
        return Err(PyTypeError::new_err(format!(
            "duration: expected a string such as '1s' or '200ms', an int of nanoseconds or \
             None, got {}",
            type_name(v)
        )));
    };
    // crates/schedlab-cli/src/args.rs parse_duration
    let d = schedlab::parse_duration(&text)
        .map_err(|e| bad_value(cmd, "--duration <DUR>", &text, &e.to_string()))?;
    if d.0 == 0 {
        return Err(bad_value(
            cmd,
            "--duration <DUR>",
            &text,
            "must be greater than 0",
        ));
    }
    Ok(Some(d.0))
}

/// `--seed` (default 1).
fn seed(cmd: &str, v: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(1);
    };
    let text = int_text("seed", v)?;
    text.parse().map_err(|_| {
        bad_value(
            cmd,
            "--seed <N>",
            &text,
            &format!("expected a non-negative integer, got '{text}'"),
        )
    })
}

/// `--runs` (`None` if not given).
fn runs(cmd: &str, v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u32>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let text = int_text("runs", v)?;
    let n: u32 = text.parse().map_err(|_| {
        bad_value(
            cmd,
            "--runs <N>",
            &text,
            &format!("expected a positive integer, got '{text}'"),
        )
    })?;
    if n == 0 {
        return Err(bad_value(cmd, "--runs <N>", &text, "must be at least 1"));
    }
    Ok(Some(n))
}

/// `--jobs` (`None` = all cores).
fn jobs(cmd: &str, v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let text = int_text("jobs", v)?;
    match text.parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(Some(n)),
        _ => Err(bad_value(
            cmd,
            "--jobs <N>",
            &text,
            &format!("'{text}': a number of simultaneous runs from 1 to 1024"),
        )),
    }
}

/// A list of strings (a lone string is refused: it would be a list of its characters).
fn strings(arg: &str, v: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if v.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{arg}: expected a list of strings, got a str"
        )));
    }
    v.extract::<Vec<String>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{arg}: expected a list of strings, got {}",
            type_name(v)
        ))
    })
}

/// Runs `f` without the GIL; a panic becomes a `RuntimeError`.
fn simulate<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, String> + Send) -> PyResult<T> {
    let r = py.detach(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(msg)) => Err(error(msg)),
        Err(p) => {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(PyRuntimeError::new_err(format!(
                "schedlab: internal error (a bug, please report it): {what}"
            )))
        }
    }
}

/// The RunSpec of `run`/`compare` (crates/schedlab-cli/src/main.rs `run_spec`).
fn run_spec(
    cmd: &str,
    platform: &str,
    kernel: &str,
    workloads: Vec<String>,
    duration_ns: Option<u64>,
    seed: u64,
) -> PyResult<RunSpec> {
    if workloads.is_empty() {
        return Err(error(format!(
            "{cmd}: at least one --workload is required (e.g. --workload 'rt-app \
             examples/two-hogs.json')"
        )));
    }
    let mut spec = RunSpec::new(platform, kernel, &[]);
    spec.workloads = workloads;
    spec.duration_ns = duration_ns;
    spec.seed = seed;
    spec.progress = false;
    Ok(spec)
}

/// `schedlab run`: `(the --json document, the text, trace columns or None)`.
#[pyfunction]
#[pyo3(signature = (platform, kernel, workloads, duration=None, seed=None, strict=false, trace=false, *, trace_buffers=false))]
fn run_json<'py>(
    py: Python<'py>,
    platform: &str,
    kernel: &str,
    workloads: &Bound<'py, PyAny>,
    duration: Option<&Bound<'py, PyAny>>,
    seed: Option<&Bound<'py, PyAny>>,
    strict: bool,
    trace: bool,
    trace_buffers: bool,
) -> PyResult<(String, String, Option<Bound<'py, PyDict>>)> {
    let duration_ns = self::duration("run", duration)?;
    let seed = self::seed("run", seed)?;
    let workloads = strings("workloads", workloads)?;
    let mut spec = run_spec("run", platform, kernel, workloads, duration_ns, seed)?;
    spec.strict = strict;
    spec.trace_columns = trace;
    let (json, text, columns) = simulate(py, move || {
        let mut r = schedlab::run(&spec).map_err(|e: RunError| e.to_string())?;
        if r.warnings > 0 && strict {
            return Err(format!("{} invariant warnings", r.warnings));
        }
        let columns = match r.trace_columns.take() {
            // packed here, without the GIL
            Some(c) if trace_buffers => Some(Trace::Buffers(pack_columns(&c))),
            Some(c) => Some(Trace::Columns(Box::new(c))),
            None => None,
        };
        let mut json =
            serde_json::to_string_pretty(&report::json(&r)).map_err(|e| format!("JSON: {e}"))?;
        json.push('\n');
        Ok((json, report::text(&r), columns))
    })?;
    let columns = match columns {
        Some(Trace::Buffers(b)) => Some(buffers_dict(py, b)?),
        Some(Trace::Columns(c)) => Some(columns_dict(py, &c)?),
        None => None,
    };
    Ok((json, text, columns))
}

/// The trace columns as a dict of equal-length lists (`None` where an event has no such
/// field); the strings of one column are shared objects.
fn columns_dict<'py>(py: Python<'py>, c: &TraceColumns) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let mut strs: HashMap<&str, Bound<'py, PyString>> = HashMap::new();
    for (name, _) in COLUMNS {
        let mut items: Vec<Bound<'py, PyAny>> = Vec::with_capacity(c.len());
        c.for_each(name, &mut |v| {
            items.push(match v {
                Value::Null => py.None().into_bound(py),
                Value::U64(x) => {
                    let Ok(o) = x.into_pyobject(py);
                    o.into_any()
                }
                Value::I64(x) => {
                    let Ok(o) = x.into_pyobject(py);
                    o.into_any()
                }
                Value::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
                Value::Str(s) => strs
                    .entry(s)
                    .or_insert_with(|| PyString::new(py, s))
                    .clone()
                    .into_any(),
            })
        });
        d.set_item(*name, PyList::new(py, items)?)?;
    }
    Ok(d)
}

/// The trace a run kept, as it leaves the simulating thread.
enum Trace {
    Columns(Box<TraceColumns>),
    Buffers(Vec<Packed>),
}

/// One trace column packed for Arrow (see [`buffers_dict`]).
struct Packed {
    name: &'static str,
    kind: &'static str,
    len: usize,
    validity: Option<Vec<u8>>,
    data: Vec<u8>,
    dictionary: Option<Vec<String>>,
}

/// The trace columns as Arrow-style buffers, for the Python layer (`trace_buffers=True`; a
/// list per column costs a Python object per value): `name -> (type, length, validity, data,
/// dictionary)`. `type` is `u64`, `u32`, `i64`, `i32` (little-endian values), `bool` (one byte
/// per value) or `str` (i32 indices into `dictionary`, a list of str); `validity` is an Arrow
/// validity bitmap (bit i of byte i/8 set = value i present) or None when every value is.
fn buffers_dict(py: Python<'_>, packed: Vec<Packed>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for p in packed {
        let validity = p.validity.map(|v| PyBytes::new(py, &v));
        d.set_item(
            p.name,
            (
                p.kind,
                p.len,
                validity,
                PyBytes::new(py, &p.data),
                p.dictionary,
            ),
        )?;
    }
    Ok(d)
}

/// Packs every column (no Python objects: runs without the GIL).
fn pack_columns(c: &TraceColumns) -> Vec<Packed> {
    let n = c.len();
    let mut out = Vec::with_capacity(COLUMNS.len());
    for (name, ty) in COLUMNS {
        let mut validity = vec![0u8; n.div_ceil(8)];
        let mut nulls = 0usize;
        let width = match ty {
            ColumnType::U64 | ColumnType::I64 => 8,
            ColumnType::U32 | ColumnType::I32 | ColumnType::Str => 4,
            ColumnType::Bool => 1,
        };
        let mut data: Vec<u8> = Vec::with_capacity(n * width);
        let mut dict: Vec<&str> = Vec::new();
        // keyed by address and length: the values borrow the interned strings of `c` (and
        // static event names), so equal keys are the same bytes; no hashing of the text
        let mut dict_index: HashMap<(usize, usize), i32, BuildHasherDefault<FxHasher>> =
            HashMap::default();
        let mut i = 0usize;
        let known = c.for_each(name, &mut |v| {
            match (ty, v) {
                (_, Value::Null) => {
                    nulls += 1;
                    data.extend(std::iter::repeat_n(0u8, width));
                }
                (ColumnType::U64, Value::U64(x)) => data.extend(x.to_le_bytes()),
                (ColumnType::U32, Value::U64(x)) => data.extend((x as u32).to_le_bytes()),
                (ColumnType::I64, Value::I64(x)) => data.extend(x.to_le_bytes()),
                (ColumnType::I32, Value::I64(x)) => data.extend((x as i32).to_le_bytes()),
                (ColumnType::Bool, Value::Bool(b)) => data.push(u8::from(b)),
                (ColumnType::Str, Value::Str(s)) => {
                    let k = *dict_index
                        .entry((s.as_ptr() as usize, s.len()))
                        .or_insert_with(|| {
                            dict.push(s);
                            dict.len() as i32 - 1
                        });
                    data.extend(k.to_le_bytes());
                }
                _ => unreachable!("column {name}: value {v:?} is not a {ty:?}"),
            }
            if v != Value::Null {
                validity[i / 8] |= 1 << (i % 8);
            }
            i += 1;
        });
        assert!(known && i == n, "column {name}: {i} values for {n} records");
        // one entry per distinct text (two copies of one string would be two categories)
        let mut first: HashMap<&str, i32> = HashMap::new();
        let remap: Vec<i32> = dict
            .iter()
            .enumerate()
            .map(|(k, s)| *first.entry(s).or_insert(k as i32))
            .collect();
        if first.len() < dict.len() {
            let mut kept: Vec<i32> = vec![-1; dict.len()];
            let mut unique: Vec<&str> = Vec::new();
            for (k, s) in dict.iter().enumerate() {
                if remap[k] == k as i32 {
                    kept[k] = unique.len() as i32;
                    unique.push(s);
                }
            }
            for w in data.chunks_exact_mut(4) {
                let k = i32::from_le_bytes(w.try_into().unwrap());
                w.copy_from_slice(&kept[remap[k as usize] as usize].to_le_bytes());
            }
            dict = unique;
        }
        let kind = match ty {
            ColumnType::U64 => "u64",
            ColumnType::U32 => "u32",
            ColumnType::I64 => "i64",
            ColumnType::I32 => "i32",
            ColumnType::Bool => "bool",
            ColumnType::Str => "str",
        };
        out.push(Packed {
            name,
            kind,
            len: n,
            validity: (nulls > 0).then_some(validity),
            data,
            dictionary: (*ty == ColumnType::Str)
                .then(|| dict.iter().map(|s| s.to_string()).collect()),
        });
    }
    out
}

/// `schedlab reproduce`: `(the --json document, the text)`.
#[pyfunction]
#[pyo3(signature = (names, quick=false, runs=None, jobs=None, html=None))]
fn reproduce_json(
    py: Python<'_>,
    names: &Bound<'_, PyAny>,
    quick: bool,
    runs: Option<&Bound<'_, PyAny>>,
    jobs: Option<&Bound<'_, PyAny>>,
    html: Option<std::path::PathBuf>,
) -> PyResult<(String, String)> {
    let runs = self::runs("reproduce", runs)?;
    let jobs = self::jobs("reproduce", jobs)?;
    let names = strings("names", names)?;
    simulate(py, move || {
        schedlab::scenario::reproduce_outputs(
            &names,
            runs,
            quick,
            false,
            jobs,
            schedlab::scenario::SweepFlags::default(),
            html.as_deref(),
        )
        .map_err(|e| e.to_string())
    })
}

/// `schedlab compare`: `(the --json document, the text table)`.
#[pyfunction]
#[pyo3(signature = (platform, kernels, workloads, duration=None, seed=None, runs=None, jobs=None))]
fn compare_json(
    py: Python<'_>,
    platform: &str,
    kernels: &Bound<'_, PyAny>,
    workloads: &Bound<'_, PyAny>,
    duration: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    runs: Option<&Bound<'_, PyAny>>,
    jobs: Option<&Bound<'_, PyAny>>,
) -> PyResult<(String, String)> {
    let duration_ns = self::duration("compare", duration)?;
    let seed = self::seed("compare", seed)?;
    let runs = self::runs("compare", runs)?.unwrap_or(3);
    let jobs = self::jobs("compare", jobs)?;
    let kernels = strings("kernels", kernels)?;
    let workloads = strings("workloads", workloads)?;
    if kernels.len() < 2 {
        return Err(error("compare: give at least two --kernel"));
    }
    let spec = run_spec(
        "compare",
        platform,
        &kernels[0],
        workloads,
        duration_ns,
        seed,
    )?;
    simulate(py, move || {
        schedlab::compare::compare_outputs(&spec, &kernels, runs, jobs).map_err(|e| e.to_string())
    })
}

/// The module `schedlab._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SchedlabError", m.py().get_type::<SchedlabError>())?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce_json, m)?)?;
    m.add_function(wrap_pyfunction!(compare_json, m)?)?;
    m.add_function(wrap_pyfunction!(figures::plot_latency, m)?)?;
    m.add_function(wrap_pyfunction!(figures::plot_timeline, m)?)?;
    m.add_function(wrap_pyfunction!(figures::plot_cyclictest, m)?)?;
    m.add_function(wrap_pyfunction!(figures::plot_reproduction, m)?)?;
    m.add_function(wrap_pyfunction!(figures::plot_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(figures::report_sweep_html, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
