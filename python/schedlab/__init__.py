"""schedlab from Python: a deterministic simulator of the Linux CPU scheduler.

The functions here call the same Rust library as the ``schedlab`` binary, through the
extension module :mod:`schedlab._native` (no subprocess, no second implementation), and
return what the binary prints (``.json``, ``.text``) plus DataFrames built from it::

    import schedlab
    r = schedlab.run(platform="rpi5", kernel="v6.12.81",
                     workloads=["stress-ng --pipe 4 --timeout 1s --metrics-brief"],
                     duration="1s", seed=1)
    r.metrics          # pandas DataFrame: line, program, metric, value, unit
    r.tasks, r.cpus    # one row per task / CPU, columns = the JSON's field names
    print(r.output)    # the benchmarks' own text

Arguments follow the command line: durations are strings as the binary takes them
(``"1s"``, ``"200ms"``, ``"2.5ms"``) or an int of nanoseconds; bad input raises
:class:`SchedlabError` whose message is the line the binary prints after ``schedlab: ``;
an argument of the wrong Python type raises :class:`TypeError`.

Simulations release the GIL: runs started from several threads simulate in parallel.
Nothing is printed, except what the binary prints on stderr too (``schedlab: warning: ...``
for input accepted with a warning, which is also in ``Result.json["warnings"]``).

DataFrames are pandas by default; ``frame="polars"`` (``pip install 'schedlab[polars]'``)
returns polars DataFrames with the same columns.
"""

from __future__ import annotations

import json as _json
import os
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Union

import pyarrow as pa

from schedlab import _native
from schedlab._native import SchedlabError
from schedlab.sweep import SweepError, sweep

if TYPE_CHECKING:  # pragma: no cover
    import pandas
    import polars

__all__ = [
    "Comparison",
    "Duration",
    "Frame",
    "Reproduction",
    "Result",
    "SchedlabError",
    "SweepError",
    "compare",
    "plot_cyclictest",
    "plot_latency",
    "plot_sweep",
    "report_sweep",
    "reproduce",
    "run",
    "sweep",
    "TRACE_COLUMNS",
    "__version__",
]

#: The version of the package (the Rust crates' version).
__version__: str = _native.__version__

#: Which DataFrame library the tables are returned in.
Frame = Literal["pandas", "polars"]

#: A simulated duration: ``"1s"``, ``"200ms"``, ``"2.5ms"``, ... as on the command line, an
#: int of nanoseconds, or None for the workloads' own length (the binary's default).
Duration = Union[str, int, None]

#: A DataFrame of either library.
DataFrame = Union["pandas.DataFrame", "polars.DataFrame"]


# --- argument checks -----------------------------------------------------------------------


def _type_error(arg: str, expected: str, value: object) -> TypeError:
    return TypeError(f"{arg}: expected {expected}, got {type(value).__name__}")


def _str(arg: str, value: object) -> str:
    if not isinstance(value, str):
        raise _type_error(arg, "a str", value)
    return value


def _str_list(arg: str, value: object, *, one_ok: bool = True) -> list[str]:
    """A str (when ``one_ok``) or a sequence of str, as a list."""
    if isinstance(value, str):
        if one_ok:
            return [value]
        raise _type_error(arg, "a list of str", value)
    if not isinstance(value, Sequence) or isinstance(value, (bytes, bytearray)):
        raise _type_error(arg, "a str or a list of str" if one_ok else "a list of str", value)
    out = list(value)
    for i, v in enumerate(out):
        if not isinstance(v, str):
            raise TypeError(f"{arg}[{i}]: expected a str, got {type(v).__name__}")
    return out


def _int(arg: str, value: object, *, optional: bool) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _type_error(arg, "an int or None" if optional else "an int", value)
    return value


def _bool(arg: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _type_error(arg, "a bool", value)
    return value


def _duration(value: object) -> Duration:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _type_error("duration", "a str such as '1s' or '200ms', an int of ns or None", value)


def _frame_arg(frame: object) -> Frame:
    if frame not in ("pandas", "polars"):
        raise ValueError(f"frame: expected 'pandas' or 'polars', got {frame!r}")
    return frame  # type: ignore[return-value]


# --- tables --------------------------------------------------------------------------------


def _polars() -> Any:
    try:
        import polars
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError(
            "frame='polars' needs polars: pip install 'schedlab[polars]'"
        ) from e
    return polars


def _to_frame(table: pa.Table, frame: Frame) -> DataFrame:
    if frame == "polars":
        return _polars().from_arrow(table)
    return table.to_pandas()


def _flatten(obj: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested objects become columns named ``outer.inner`` (``sched.vruntime``)."""
    out: dict[str, Any] = {}
    for k, v in obj.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _records(rows: list[dict[str, Any]], schema: pa.Schema | None = None) -> pa.Table:
    """Rows (all with the same keys, in the same order) as an Arrow table."""
    if schema is not None:
        return pa.Table.from_pylist(rows, schema=schema)
    if not rows:
        return pa.table({})
    keys = list(rows[0])
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    return pa.table({k: pa.array([r.get(k) for r in rows]) for k in keys})


_METRICS_SCHEMA = pa.schema(
    [
        ("line", pa.string()),
        ("program", pa.string()),
        ("metric", pa.string()),
        ("value", pa.float64()),
        ("unit", pa.string()),
    ]
)

_ARROW_INT = {"u64": pa.uint64(), "u32": pa.uint32(), "i64": pa.int64(), "i32": pa.int32()}

#: The columns of :meth:`Result.trace`, in order (see the method for their meaning).
TRACE_COLUMNS: tuple[str, ...] = (
    "ts_ns", "cpu", "flags", "event", "comm", "pid", "common_comm", "common_pid",
    "prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio",
    "runtime_ns", "prio", "target_cpu", "orig_cpu", "dest_cpu", "child_comm", "child_pid",
    "group_dead", "filename", "old_pid", "vruntime", "deadline", "lag", "slice", "eligible",
    "reason", "replaced", "body",
)  # fmt: skip

# every record has these (the others are null where the event has no such field)
_TRACE_DENSE = ("ts_ns", "cpu", "flags", "event", "comm", "pid", "common_comm", "common_pid")


def _trace_table(buffers: dict[str, tuple[Any, ...]]) -> pa.Table:
    """The native module's trace buffers as an Arrow table (no Python object per value)."""
    arrays = {}
    for name, (kind, n, validity, data, dictionary) in buffers.items():
        vbuf = None if validity is None else pa.py_buffer(validity)
        dbuf = pa.py_buffer(data)
        if kind == "str":
            idx = pa.Array.from_buffers(pa.int32(), n, [vbuf, dbuf])
            arr = pa.DictionaryArray.from_arrays(idx, pa.array(dictionary, pa.string()))
        elif kind == "bool":
            arr = pa.Array.from_buffers(pa.uint8(), n, [vbuf, dbuf]).cast(pa.bool_())
        else:
            arr = pa.Array.from_buffers(_ARROW_INT[kind], n, [vbuf, dbuf])
        arrays[name] = arr
    return pa.table(arrays)


def _trace_pandas(table: pa.Table) -> pandas.DataFrame:
    """pandas dtypes that do not depend on the data: numpy integers for the columns every
    record has, nullable integer/boolean dtypes for the others, categoricals for text."""
    import pandas as pd

    nullable = {
        pa.uint64(): pd.UInt64Dtype(),
        pa.uint32(): pd.UInt32Dtype(),
        pa.int64(): pd.Int64Dtype(),
        pa.int32(): pd.Int32Dtype(),
        pa.bool_(): pd.BooleanDtype(),
    }
    df = table.to_pandas(types_mapper=nullable.get)
    for name in _TRACE_DENSE:
        field = table.schema.field(name)
        if pa.types.is_integer(field.type):
            df[name] = df[name].to_numpy(dtype=field.type.to_pandas_dtype())
    return df


# --- results -------------------------------------------------------------------------------


class Result:
    """One run: what ``schedlab run`` prints, and tables built from its JSON document.

    Attributes:
        json_text: the document ``schedlab run --json`` prints, byte for byte.
        text: what ``schedlab run`` prints, byte for byte.
        frame: ``"pandas"`` or ``"polars"``, the library of the tables.
    """

    def __init__(
        self,
        json_text: str,
        text: str,
        trace_buffers: dict[str, tuple[Any, ...]] | None,
        frame: Frame = "pandas",
    ) -> None:
        self.json_text = json_text
        self.text = text
        self.frame: Frame = frame
        self._trace_buffers = trace_buffers

    def __repr__(self) -> str:
        d = self.json
        return (
            f"<schedlab.Result platform={d['platform']!r} kernel={d['kernel']!r} "
            f"seed={d['seed']} sim_time_ns={d['sim_time_ns']}>"
        )

    @cached_property
    def json(self) -> dict[str, Any]:
        """The JSON document as Python objects."""
        return _json.loads(self.json_text)

    @property
    def output(self) -> str:
        """The benchmarks' own text (``workloads[].output``), in workload order, each one
        ending with a newline."""
        parts = [w["output"] for w in self.json["workloads"]]
        return "".join(p if p.endswith("\n") or not p else p + "\n" for p in parts)

    @property
    def tasks(self) -> DataFrame:
        """One row per task, columns = the fields of ``tasks[]`` in the JSON; the nested
        ``sched`` object (``/proc/PID/sched``) is flattened to ``sched.FIELD`` columns."""
        return _to_frame(_records([_flatten(t) for t in self.json["tasks"]]), self.frame)

    @property
    def cpus(self) -> DataFrame:
        """One row per CPU, columns = the fields of ``cpus[]`` in the JSON."""
        return _to_frame(_records(self.json["cpus"]), self.frame)

    @property
    def metrics(self) -> DataFrame:
        """The benchmarks' metrics, long: ``line, program, metric, value, unit`` (value a
        float; a workload cut before its end has none)."""
        rows = [
            {
                "line": w["line"],
                "program": w["program"],
                "metric": name,
                "value": None if m["value"] is None else float(m["value"]),
                "unit": m["unit"],
            }
            for w in self.json["workloads"]
            for name, m in w["metrics"].items()
        ]
        return _to_frame(_records(rows, _METRICS_SCHEMA), self.frame)

    def trace(self, frame: Frame | None = None) -> DataFrame:
        """The sched events of the run (``run(..., trace=True)``), one row per record of the
        text trace ``schedlab run --trace`` writes, built without the text format.

        Columns (:data:`TRACE_COLUMNS`), tracefs field names:

        - ``ts_ns`` (uint64, ns; the text rounds it to µs), ``cpu`` (uint32), ``flags``
          (irq-info column), ``event`` (``sched_switch``, ``sched_wakeup``, ...);
        - ``common_comm``/``common_pid``: the text line's task column, the task current on
          the CPU (``<idle>``/0 for idle);
        - ``comm``/``pid``: the event's own ``comm=``/``pid=`` (the woken, migrated, exiting
          task, ...), for ``sched_switch`` the task column (= prev);
        - per event, null elsewhere: ``prev_comm, prev_pid, prev_prio, prev_state, next_comm,
          next_pid, next_prio`` (switch), ``runtime_ns`` (switch: how long prev ran, the time
          since the CPU's previous switch; derived, null for a CPU's first), ``prio,
          target_cpu`` (waking/wakeup/wakeup_new), ``prio, orig_cpu, dest_cpu`` (migrate),
          ``child_comm, child_pid`` (fork), ``prio, group_dead`` (exit), ``filename, old_pid``
          (exec), ``vruntime, deadline, lag, slice, eligible, reason`` (schedlab_pick),
          ``lag`` (schedlab_delay_dequeue), ``lag, replaced`` (schedlab_requeue), ``body``
          (any other event).

        pandas dtypes: ``ts_ns`` uint64, ``cpu`` uint32, ``pid``/``common_pid`` int32; the
        other integer columns nullable (``UInt64``, ``UInt32``, ``Int64``, ``Int32``),
        booleans ``boolean``, text ``category``. polars: the same as Arrow types
        (``Categorical`` text).

        Args:
            frame: ``"pandas"`` or ``"polars"``; default: the result's.
        """
        if self._trace_buffers is None:
            raise ValueError("trace(): this run kept no trace; run it with trace=True")
        f = self.frame if frame is None else _frame_arg(frame)
        table = _trace_table(self._trace_buffers)
        if f == "polars":
            return _polars().from_arrow(table)
        return _trace_pandas(table)

    def to_polars(self) -> Result:
        """The same result with polars tables."""
        return Result(self.json_text, self.text, self._trace_buffers, "polars")

    def _figure_columns(self) -> dict[str, list[Any]]:
        if self._trace_buffers is None:
            raise ValueError("this run kept no trace; run it with trace=True")
        return _trace_table(self._trace_buffers).select(list(_FIGURE_COLUMNS)).to_pydict()

    def plot_timeline(
        self, from_ns: int | None = None, to_ns: int | None = None, title: str | None = None
    ) -> str:
        """Who ran on each CPU (SVG text), as ``schedlab plot timeline`` draws it from a trace
        file; needs ``trace=True``. ``from_ns``/``to_ns`` bound the window (simulated ns)."""
        return _native.plot_timeline(self._figure_columns(), from_ns, to_ns, title)

    def plot_latency(
        self, comm: str | None = None, hist: bool = False, title: str | None = None
    ) -> str:
        """Wakeup→run latency CDF (``hist=True``: histogram) of this run (SVG text); needs
        ``trace=True``. See :func:`plot_latency` for several runs side by side."""
        return plot_latency({self.kernel_label(): self}, comm=comm, hist=hist, title=title)

    def kernel_label(self) -> str:
        """``KERNEL seed N``: the label figures give this run."""
        return f"{self.json['kernel']} seed {self.json['seed']}"


class _Document:
    """A command's JSON document and text, as the binary prints them, byte for byte."""

    def __init__(self, json_text: str, text: str, frame: Frame = "pandas") -> None:
        self.json_text = json_text
        self.text = text
        self.frame: Frame = frame

    @cached_property
    def json(self) -> dict[str, Any]:
        """The JSON document as Python objects."""
        return _json.loads(self.json_text)


class Reproduction(_Document):
    """A reproduction of built-in seeds or scenario files: what ``schedlab reproduce``
    prints, and its targets and table rows as DataFrames.

    Attributes:
        json_text: the document ``schedlab reproduce --json`` prints, byte for byte.
        text: what ``schedlab reproduce`` prints, byte for byte.
    """

    def __repr__(self) -> str:
        names = [s["scenario"] for s in self.json["scenarios"]]
        return f"<schedlab.Reproduction scenarios={names!r}>"

    @property
    def targets(self) -> DataFrame:
        """One row per acceptance target: ``scenario, target`` (its description),
        ``simulated`` (the value it checks, null when it could not be computed), ``pass``."""
        rows = [
            {
                "scenario": s["scenario"],
                "target": t["description"],
                "simulated": t["simulated"],
                "pass": t["pass"],
            }
            for s in self.json["scenarios"]
            for t in s["targets"]
        ]
        schema = pa.schema(
            [
                ("scenario", pa.string()),
                ("target", pa.string()),
                ("simulated", pa.float64()),
                ("pass", pa.bool_()),
            ]
        )
        return _to_frame(pa.Table.from_pylist(rows, schema=schema), self.frame)

    @property
    def rows(self) -> DataFrame:
        """The published-vs-simulated table rows: ``scenario`` then the fields of
        ``scenarios[].rows[]`` (e.g. ``variant, metric, unit, published, simulated,
        simulated_stddev``; scenario kinds differ in their fields, a missing one is null)."""
        rows = [
            {"scenario": s["scenario"], **_flatten(r)}
            for s in self.json["scenarios"]
            for r in s["rows"]
        ]
        return _to_frame(_records(rows), self.frame)

    @property
    def passed(self) -> bool:
        """Whether every target passed."""
        return all(t["pass"] for s in self.json["scenarios"] for t in s["targets"])

    def figures(self, scenario: str | None = None, metric: str | None = None) -> dict[str, str]:
        """Published-vs-simulated bars (SVG text) per ``"SCENARIO/METRIC"``, the figures of
        ``schedlab plot reproduction`` and of the HTML report."""
        return {
            f"{s}/{m}": svg
            for s, m, svg in _native.plot_reproduction(self.json_text, scenario, metric)
        }


class Comparison(_Document):
    """Several kernels on one workload: what ``schedlab compare`` prints, and its rows.

    Attributes:
        json_text: the document ``schedlab compare --json`` prints, byte for byte.
        text: the mmtests-style table ``schedlab compare`` prints, byte for byte.
    """

    def __repr__(self) -> str:
        d = self.json
        return f"<schedlab.Comparison kernels={d['kernels']!r} runs={d['runs']}>"

    @property
    def rows(self) -> DataFrame:
        """One row per (kernel, metric): ``kernel, metric, unit, amean, stddev, samples``
        (``samples`` a list of floats, one per seed)."""
        schema = pa.schema(
            [
                ("kernel", pa.string()),
                ("metric", pa.string()),
                ("unit", pa.string()),
                ("amean", pa.float64()),
                ("stddev", pa.float64()),
                ("samples", pa.list_(pa.float64())),
            ]
        )
        return _to_frame(pa.Table.from_pylist(self.json["rows"], schema=schema), self.frame)

    @property
    def samples(self) -> DataFrame:
        """The samples, long: ``kernel, metric, unit, seed, value`` (seeds ``first_seed``,
        ``first_seed + 1``, ...). A metric reported by several workloads of one run (two
        stress-ng lines) has that many samples per seed, in run order."""
        first = self.json["first_seed"]
        runs = self.json["runs"]
        rows = [
            {
                "kernel": r["kernel"],
                "metric": r["metric"],
                "unit": r["unit"],
                "seed": first + i // max(1, len(r["samples"]) // runs),
                "value": v,
            }
            for r in self.json["rows"]
            for i, v in enumerate(r["samples"])
        ]
        schema = pa.schema(
            [
                ("kernel", pa.string()),
                ("metric", pa.string()),
                ("unit", pa.string()),
                ("seed", pa.uint64()),
                ("value", pa.float64()),
            ]
        )
        return _to_frame(pa.Table.from_pylist(rows, schema=schema), self.frame)


# --- entry points --------------------------------------------------------------------------


def run(
    platform: str,
    kernel: str,
    workloads: str | Sequence[str],
    duration: Duration = "1s",
    seed: int = 1,
    strict: bool = False,
    trace: bool = False,
    *,
    frame: Frame = "pandas",
) -> Result:
    """Simulates one configuration, as ``schedlab run`` does.

    Args:
        platform: a built-in platform (``rpi5``, ``x86-2s-80``, ...), ``smp:N`` or a TOML
            file (``--platform``).
        kernel: a kernel string, e.g. ``"v6.12.81"`` or ``"v6.18 NO_DELAY_DEQUEUE"``
            (``--kernel``).
        workloads: one workload line or a list of them (``--workload``), e.g.
            ``"stress-ng --pipe 4 --timeout 1s --metrics-brief"``.
        duration: simulated time, ``"1s"``, ``"200ms"``, ... or an int of ns; None: the
            workloads' own length, as the binary without ``--duration``.
        seed: the master seed (``--seed``); same inputs and seed give the same bytes.
        strict: check the invariants after every event, fail at the first violation.
        trace: keep the sched events in memory for :meth:`Result.trace`.
        frame: ``"pandas"`` or ``"polars"`` for the tables.

    Raises:
        SchedlabError: bad input (the binary's message) or a failed run.
        TypeError: an argument of the wrong type.
    """
    args = (
        _str("platform", platform),
        _str("kernel", kernel),
        _str_list("workloads", workloads),
        _duration(duration),
        _int("seed", seed, optional=False),
        _bool("strict", strict),
        _bool("trace", trace),
    )
    f = _frame_arg(frame)
    json_text, text, buffers = _native.run_json(*args, trace_buffers=True)
    return Result(json_text, text, buffers, f)


def reproduce(
    names: str | Sequence[str] | None = None,
    quick: bool = False,
    runs: int | None = None,
    jobs: int | None = None,
    *,
    frame: Frame = "pandas",
    html: str | os.PathLike[str] | None = None,
) -> Reproduction:
    """Reproduces seeds, as ``schedlab reproduce`` does: published vs simulated numbers.

    Args:
        names: a built-in scenario (``"delay-dequeue"``; ``schedlab list scenarios``), a
            scenario TOML file, or a list of them; None: every built-in one (hours).
        quick: fewer seeds and shorter workloads (``--quick``).
        runs: seeds per configuration (``--runs``; default 10, quick 3, or the scenario's).
        jobs: simulations at once (``--jobs``; default: all cores); the results do not
            depend on it.
        frame: ``"pandas"`` or ``"polars"`` for the tables.
        html: also write the HTML report there (``--html DIR``: a page per scenario and
            ``index.html``).

    Raises:
        SchedlabError: an unknown scenario, a bad file, a failed run (the binary's message).
        TypeError: an argument of the wrong type.
    """
    args = (
        [] if names is None else _str_list("names", names),
        _bool("quick", quick),
        _int("runs", runs, optional=True),
        _int("jobs", jobs, optional=True),
    )
    f = _frame_arg(frame)
    if html is not None and not isinstance(html, (str, os.PathLike)):
        raise _type_error("html", "a directory path", html)
    json_text, text = _native.reproduce_json(*args, html=None if html is None else os.fspath(html))
    return Reproduction(json_text, text, f)


def compare(
    platform: str,
    kernels: Sequence[str],
    workloads: str | Sequence[str],
    duration: Duration = "1s",
    seed: int = 1,
    runs: int = 3,
    jobs: int | None = None,
    *,
    frame: Frame = "pandas",
) -> Comparison:
    """Runs several kernels on one workload, ``runs`` seeds each, as ``schedlab compare``.

    Args:
        platform: as for :func:`run`.
        kernels: two or more kernel strings; the first is the base of the % changes.
        workloads: one workload line or a list of them.
        duration: as for :func:`run`.
        seed: the first seed; the runs use ``seed, seed + 1, ...``.
        runs: seeds per kernel (``--runs``).
        jobs: simulations at once (``--jobs``; default: all cores).
        frame: ``"pandas"`` or ``"polars"`` for the tables.

    Raises:
        SchedlabError: bad input (the binary's message) or a failed run.
        TypeError: an argument of the wrong type.
    """
    args = (
        _str("platform", platform),
        _str_list("kernels", kernels, one_ok=False),
        _str_list("workloads", workloads),
        _duration(duration),
        _int("seed", seed, optional=False),
        _int("runs", runs, optional=False),
        _int("jobs", jobs, optional=True),
    )
    f = _frame_arg(frame)
    json_text, text = _native.compare_json(*args)
    return Comparison(json_text, text, f)


# --- figures (drawn by the same Rust code as ``schedlab plot``) ----------------------------

#: The trace columns the figures read.
_FIGURE_COLUMNS = (
    "ts_ns",
    "cpu",
    "event",
    "comm",
    "pid",
    "prev_comm",
    "prev_pid",
    "next_comm",
    "next_pid",
)


def plot_latency(
    runs: dict[str, Result] | Sequence[tuple[str, Result]],
    comm: str | None = None,
    hist: bool = False,
    title: str | None = None,
) -> str:
    """Wakeup→run latency (µs) of several runs, one curve per label: the CDF, or with
    ``hist=True`` a histogram per run. SVG text, the figure ``schedlab plot latency`` draws
    from trace files. Each run needs ``trace=True``; ``comm`` keeps the wakeups of tasks with
    that comm only.
    """
    items = list(runs.items()) if isinstance(runs, dict) else list(runs)
    traces = []
    for label, r in items:
        if not isinstance(r, Result):
            raise _type_error("runs", "Result values", r)
        traces.append((_str("label", label), r._figure_columns()))
    return _native.plot_latency(traces, comm, _bool("hist", hist), title)


def plot_cyclictest(output: str, title: str | None = None) -> str:
    """cyclictest's ``-h``/``--histogram`` output (simulated ``Result.output`` or a real
    run's text) as a histogram per thread (SVG text), as ``schedlab plot cyclictest``."""
    return _native.plot_cyclictest(_str("output", output), title)


def _sweep_rows(table: Any) -> list[tuple[Any, ...]]:
    from schedlab.sweep import COLUMNS

    if hasattr(table, "to_arrow"):  # polars
        table = table.to_arrow()
    elif not isinstance(table, pa.Table):  # pandas
        table = pa.Table.from_pandas(table, preserve_index=False)
    d = table.select(list(COLUMNS)).to_pydict()
    return list(zip(*(d[c] for c in COLUMNS)))


def plot_sweep(
    table: DataFrame, metric: str, x: str | None = None, title: str | None = None
) -> str:
    """One metric of a sweep's long table (:func:`sweep`'s DataFrame) against a workload
    option's value (``x``, e.g. ``"-g"``; found when only one option varies), mean ± sd over
    the seeds, one curve per configuration. SVG text, as ``schedlab plot sweep``."""
    return _native.plot_sweep(_sweep_rows(table), _str("metric", metric), x, title)


def report_sweep(table: DataFrame) -> str:
    """The HTML page of a sweep (``schedlab report``): curves per metric and the table."""
    return _native.report_sweep_html(_sweep_rows(table))
