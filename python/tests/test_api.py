"""The Python API against the schedlab binary: the same documents byte for byte, the tables
built from them, the errors, the trace.

Runs against the installed (or `maturin develop`ed) package. The binary is $SCHEDLAB_BIN,
default target/debug/schedlab of this checkout (built by `cargo test` / `cargo build`).
The simulations are short (tens of ms simulated) so that a debug build keeps the suite fast.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import schedlab

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("SCHEDLAB_BIN", ROOT / "target" / "debug" / "schedlab"))

PIPE = "stress-ng --pipe 2 --timeout 1s --metrics-brief"
RUN = dict(platform="smp:2", kernel="v6.18", workloads=[PIPE], duration="20ms", seed=3)
RUN_FLAGS = [
    "--platform", "smp:2", "--kernel", "v6.18", "--workload", PIPE,
    "--duration", "20ms", "--seed", "3",
]  # fmt: skip

# A scenario small enough for a test: two kernels, a hackbench that ends by itself after
# 50 loops, one target that passes and one that cannot.
TINY_SCENARIO = """
name = "tiny-hackbench"
title = "Two kernels on a short hackbench (a test scenario)"
seed = "none"
platform = "smp:2"
workloads = ["hackbench -p -l 50 -g 1"]
runs = 2
quick_runs = 1
baseline = "v6.6"
metrics = ["sched_switch", "idle_fraction"]

[[variant]]
kernel = "v6.6"
label = "6.6"

[[variant]]
kernel = "v6.12"
label = "6.12"

[[published]]
kernel = "v6.6"
metric = "sched_switch"
value = 100000
source = "made up for the test"

[[target]]
description = "v6.12/v6.6 switches above 0"
metric = "sched_switch"
kernel = "v6.12"
relative_to = "v6.6"
min = 0.0

[[target]]
description = "a negative idle fraction (cannot pass)"
metric = "idle_fraction"
kernel = "v6.6"
max = -1.0
"""


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    if not BIN.exists():
        pytest.fail(f"no schedlab binary at {BIN}: cargo build -p schedlab-cli, or set SCHEDLAB_BIN")
    p = subprocess.run([str(BIN), *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        pytest.fail(f"schedlab {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p


@pytest.fixture(scope="module")
def result() -> schedlab.Result:
    return schedlab.run(**RUN, trace=True)


@pytest.fixture(scope="module")
def cli_doc() -> dict:
    return json.loads(cli("run", *RUN_FLAGS, "--json").stdout)


# --- round trips against the binary --------------------------------------------------------


def test_run_returns_what_the_binary_prints(result: schedlab.Result) -> None:
    assert result.json_text == cli("run", *RUN_FLAGS, "--json").stdout
    assert result.text == cli("run", *RUN_FLAGS).stdout
    assert result.json["seed"] == 3 and result.json["platform"] == "smp:2"


def test_run_tables_carry_the_documents_numbers(result: schedlab.Result, cli_doc: dict) -> None:
    tasks = result.tasks
    assert len(tasks) == len(cli_doc["tasks"])
    assert tasks["pid"].tolist() == [t["pid"] for t in cli_doc["tasks"]]
    assert tasks["nr_switches"].tolist() == [t["nr_switches"] for t in cli_doc["tasks"]]
    assert tasks["sched.nr_wakeups"].tolist() == [t["sched"]["nr_wakeups"] for t in cli_doc["tasks"]]
    cpus = result.cpus
    assert cpus["idle_ns"].tolist() == [c["idle_ns"] for c in cli_doc["cpus"]]
    # the per-CPU switches add up to the run's sched_switch count (run.rs RunResult)
    assert int(cpus["nr_switches"].sum()) == cli_doc["sched_switch"]
    m = result.metrics
    want = [
        (w["line"], w["program"], name, x["value"], x["unit"])
        for w in cli_doc["workloads"]
        for name, x in w["metrics"].items()
    ]
    assert len(want) > 0
    assert list(m.itertuples(index=False, name=None)) == want
    assert result.output == "".join(w["output"] for w in cli_doc["workloads"])
    assert "stress-ng" in result.output


def test_compare_returns_what_the_binary_prints() -> None:
    args = dict(
        platform="smp:2",
        kernels=["v6.12", "v6.18"],
        workloads=PIPE,
        duration="10ms",
        seed=5,
        runs=2,
        jobs=1,
    )
    flags = [
        "--platform", "smp:2", "--kernel", "v6.12", "--kernel", "v6.18", "--workload", PIPE,
        "--duration", "10ms", "--seed", "5", "--runs", "2", "--jobs", "1",
    ]  # fmt: skip
    c = schedlab.compare(**args)
    doc_text = cli("compare", *flags, "--json").stdout
    assert c.json_text == doc_text
    assert c.text == cli("compare", *flags).stdout
    doc = json.loads(doc_text)
    rows = c.rows
    assert list(rows.columns) == ["kernel", "metric", "unit", "amean", "stddev", "samples"]
    assert rows["amean"].tolist() == [r["amean"] for r in doc["rows"]]
    s = c.samples
    assert len(s) == sum(len(r["samples"]) for r in doc["rows"])
    assert sorted(set(s["seed"].tolist())) == [5, 6]
    # stress-ng reports sched_switch itself; compare does not add its own a second time:
    # one sample per seed
    sw = s[(s["kernel"] == "v6.12") & (s["metric"] == "sched_switch")]
    assert sw["seed"].tolist() == [5, 6]
    assert s["value"].tolist() == [v for r in doc["rows"] for v in r["samples"]]


def test_reproduce_returns_what_the_binary_prints(tmp_path: Path) -> None:
    f = tmp_path / "tiny.toml"
    f.write_text(TINY_SCENARIO)
    r = schedlab.reproduce(str(f), runs=1, jobs=2)
    doc_text = cli("reproduce", str(f), "--runs", "1", "--jobs", "2", "--json", "--no-progress").stdout
    assert r.json_text == doc_text
    assert r.text == cli("reproduce", str(f), "--runs", "1", "--jobs", "2", "--no-progress").stdout
    t = r.targets
    assert list(t.columns) == ["scenario", "target", "simulated", "pass"]
    assert t["scenario"].tolist() == ["tiny-hackbench", "tiny-hackbench"]
    assert t["target"].tolist() == [
        "v6.12/v6.6 switches above 0",
        "a negative idle fraction (cannot pass)",
    ]
    # a ratio of two switch counts is > 0; an idle fraction is never <= -1
    assert t["pass"].tolist() == [True, False]
    assert not r.passed
    rows = r.rows
    assert rows[["variant", "metric"]].values.tolist() == [
        ["v6.6", "sched_switch"],
        ["v6.6", "idle_fraction"],
        ["v6.12", "sched_switch"],
        ["v6.12", "idle_fraction"],
    ]
    assert rows["published"].tolist()[0] == 100000.0
    assert pd.isna(rows["published"].tolist()[1])


# --- schemas -------------------------------------------------------------------------------


def test_table_schemas(result: schedlab.Result, cli_doc: dict) -> None:
    t = result.tasks
    # JSON field names; the nested /proc/PID/sched object flattened as sched.FIELD
    flat = [k for k in cli_doc["tasks"][0] if k != "sched"] + [
        f"sched.{k}" for k in cli_doc["tasks"][0]["sched"]
    ]
    assert list(t.columns) == flat
    assert t["pid"].dtype == "int64" and t["nr_switches"].dtype == "int64"
    assert t["exited"].dtype == "bool"
    assert pd.api.types.is_string_dtype(t["comm"])
    c = result.cpus
    assert list(c.columns) == ["cpu", "idle_ns", "nr_switches", "migrations_in", "migrations_out"]
    assert all(c[k].dtype == "int64" for k in c.columns)
    m = result.metrics
    assert list(m.columns) == ["line", "program", "metric", "value", "unit"]
    assert m["value"].dtype == "float64"


def test_trace_schema(result: schedlab.Result) -> None:
    tr = result.trace()
    assert tuple(tr.columns) == schedlab.TRACE_COLUMNS
    dtypes = {k: str(v) for k, v in tr.dtypes.items()}
    assert dtypes["ts_ns"] == "uint64" and dtypes["cpu"] == "uint32"
    assert dtypes["pid"] == "int32" and dtypes["common_pid"] == "int32"
    assert dtypes["prev_pid"] == "Int32" and dtypes["target_cpu"] == "UInt32"
    assert dtypes["runtime_ns"] == "UInt64" and dtypes["lag"] == "Int64"
    assert dtypes["eligible"] == "boolean"
    assert dtypes["event"] == "category" and dtypes["next_comm"] == "category"
    # the run's sched_switch count (the JSON's) is the number of switch rows
    assert int((tr["event"] == "sched_switch").sum()) == result.json["sched_switch"]
    assert int((tr["event"] == "sched_migrate_task").sum()) == result.json["sched_migrate_task"]


def test_polars_frames(result: schedlab.Result) -> None:
    pl = pytest.importorskip("polars")
    p = result.to_polars()
    assert isinstance(p.tasks, pl.DataFrame)
    assert p.tasks.columns == list(result.tasks.columns)
    assert p.metrics["value"].to_list() == result.metrics["value"].tolist()
    tr = result.trace(frame="polars")
    assert tr.schema["ts_ns"] == pl.UInt64 and tr.schema["prev_pid"] == pl.Int32
    assert tr["ts_ns"].to_list() == result.trace()["ts_ns"].tolist()
    assert schedlab.run(**RUN, frame="polars").cpus.equals(p.cpus)


def test_trace_needs_trace_true() -> None:
    r = schedlab.run(**RUN)
    with pytest.raises(ValueError, match="trace=True"):
        r.trace()


# --- the trace against the text trace ------------------------------------------------------

LINE = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d{3})\] (\S+)\s+(\d+)\.(\d{6}): (\w+): (.*)$")


def test_trace_matches_the_text_trace(result: schedlab.Result, tmp_path: Path) -> None:
    path = tmp_path / "run.trace"
    cli("run", *RUN_FLAGS, "--trace", str(path))
    lines = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    tr = result.trace()
    assert len(tr) == len(lines) > 100
    cols = {k: tr[k].tolist() for k in tr.columns}
    for i, line in enumerate(lines):
        m = LINE.match(line)
        assert m, line
        comm, pid, cpu, flags, sec, usec, event, body = m.groups()
        # the text prints (ts + 500) / 1000 µs (kernel/trace/trace.h ns2usecs)
        assert (cols["ts_ns"][i] + 500) // 1000 == int(sec) * 1_000_000 + int(usec), line
        assert (cols["cpu"][i], cols["flags"][i], cols["event"][i]) == (int(cpu), flags, event)
        assert (cols["common_comm"][i], cols["common_pid"][i]) == (comm.strip(), int(pid))
        # every key=value of the body is the column of that name
        for kv in body.replace(" ==> ", " ").split(" "):
            k, v = kv.split("=", 1)
            got = cols[k][i]
            if isinstance(got, (bool, type(pd.NA))) or v in ("true", "false"):
                assert str(got).lower() == {"1": "true", "0": "false"}.get(v, v), (k, line)
            elif isinstance(got, str):
                assert got == v, (k, line)
            else:
                assert int(got) == int(v), (k, line)


def test_trace_runtime_is_the_time_between_switches(result: schedlab.Result) -> None:
    tr = result.trace()
    sw = tr[tr["event"] == "sched_switch"]
    for cpu, g in sw.groupby("cpu"):
        ts = g["ts_ns"].tolist()
        rt = g["runtime_ns"].tolist()
        assert rt[0] is pd.NA
        assert rt[1:] == [b - a for a, b in zip(ts, ts[1:])]


# --- errors: the binary's message ----------------------------------------------------------


@pytest.mark.parametrize(
    "change, flags",
    [
        (dict(platform="rpi9"), ["--platform", "rpi9"]),
        (dict(kernel="v6.18 NO_SUCH_FEATURE"), ["--kernel", "v6.18 NO_SUCH_FEATURE"]),
        (dict(kernel="v9.99"), ["--kernel", "v9.99"]),
        (dict(duration="0"), ["--duration", "0"]),
        (dict(duration="1x"), ["--duration", "1x"]),
        (dict(duration="0ns"), ["--duration", "0ns"]),
        (dict(seed=-1), ["--seed", "-1"]),
        (dict(workloads=["stress-ng --pipe x"]), ["--workload", "stress-ng --pipe x"]),
        (dict(workloads=["nosuchprog 1"]), ["--workload", "nosuchprog 1"]),
    ],
)
def test_run_errors_carry_the_binarys_message(change: dict, flags: list[str]) -> None:
    args = {**RUN, **change}
    with pytest.raises(schedlab.SchedlabError) as e:
        schedlab.run(**args)
    base = dict(zip(RUN_FLAGS[::2], RUN_FLAGS[1::2]))
    base.update(dict(zip(flags[::2], flags[1::2])))
    p = cli("run", *[x for kv in base.items() for x in kv], check=False)
    assert p.returncode == 2
    assert p.stderr == f"schedlab: {e.value}\n"
    assert isinstance(e.value, ValueError)


def test_int_duration_is_nanoseconds() -> None:
    assert schedlab.run(**{**RUN, "duration": 20_000_000}).json_text == schedlab.run(**RUN).json_text
    with pytest.raises(schedlab.SchedlabError, match="must be greater than 0"):
        schedlab.run(**{**RUN, "duration": 0})


def test_compare_and_reproduce_errors() -> None:
    with pytest.raises(schedlab.SchedlabError) as e:
        schedlab.compare("smp:2", ["v6.18"], PIPE, duration="10ms")
    p = cli("compare", "--platform", "smp:2", "--kernel", "v6.18", "--workload", PIPE, check=False)
    assert (p.returncode, p.stderr) == (2, f"schedlab: {e.value}\n")
    with pytest.raises(schedlab.SchedlabError) as e:
        schedlab.compare("smp:2", ["v6.12", "v6.18"], PIPE, runs=0)
    p = cli(
        "compare", "--platform", "smp:2", "--kernel", "v6.12", "--kernel", "v6.18",
        "--workload", PIPE, "--runs", "0", check=False,
    )  # fmt: skip
    assert (p.returncode, p.stderr) == (2, f"schedlab: {e.value}\n")
    with pytest.raises(schedlab.SchedlabError) as e:
        schedlab.reproduce("no-such-scenario")
    p = cli("reproduce", "no-such-scenario", check=False)
    assert (p.returncode, p.stderr) == (2, f"schedlab: {e.value}\n")


@pytest.mark.parametrize(
    "change, needle",
    [
        (dict(workloads=[1]), "workloads[0]: expected a str, got int"),
        (dict(workloads=None), "workloads: expected a str or a list of str, got NoneType"),
        (dict(seed="1"), "seed: expected an int, got str"),
        (dict(seed=True), "seed: expected an int, got bool"),
        (dict(duration=1.5), "duration: expected a str"),
        (dict(platform=5), "platform: expected a str, got int"),
        (dict(strict="yes"), "strict: expected a bool, got str"),
    ],
)
def test_wrong_types_are_type_errors(change: dict, needle: str) -> None:
    with pytest.raises(TypeError) as e:
        schedlab.run(**{**RUN, **change})
    assert needle in str(e.value)


def test_native_module_checks_types_too() -> None:
    from schedlab import _native

    with pytest.raises(TypeError, match="workloads: expected a list of strings, got a str"):
        _native.run_json("smp:2", "v6.18", PIPE)
    with pytest.raises(TypeError, match="seed: expected an int"):
        _native.run_json("smp:2", "v6.18", [PIPE], "20ms", 1.0)


# --- determinism, threads ------------------------------------------------------------------


def test_same_inputs_same_bytes(result: schedlab.Result) -> None:
    again = schedlab.run(**RUN, trace=True)
    assert again.json_text == result.json_text and again.text == result.text
    assert again.trace().equals(result.trace())
    other = schedlab.run(**{**RUN, "seed": 4})
    assert other.json_text != result.json_text


def test_native_trace_lists_match_the_trace_frame(result: schedlab.Result) -> None:
    from schedlab import _native

    _, _, cols = _native.run_json("smp:2", "v6.18", [PIPE], "20ms", 3, False, True)
    assert tuple(cols) == schedlab.TRACE_COLUMNS
    tr = result.trace()
    for k in ("ts_ns", "event", "comm", "next_pid", "runtime_ns", "eligible"):
        want = [None if v is pd.NA or (isinstance(v, float) and v != v) else v for v in tr[k]]
        assert cols[k] == want, k


def test_the_gil_is_released_while_simulating() -> None:
    """Python code runs in the main thread while another thread is inside a simulation: with
    the GIL held for the whole call, no main-thread iteration could fall inside it."""
    # a run that lasts about half a second of wall time, in a debug or a release build
    t0 = time.monotonic()
    schedlab.run("smp:2", "v6.18", PIPE, duration="10ms")
    per_ms = max(time.monotonic() - t0, 1e-4) / 10
    sim_ms = max(10, min(5000, int(0.5 / per_ms)))
    span: dict[str, float] = {}

    def work() -> None:
        span["start"] = time.monotonic()
        schedlab.run("smp:2", "v6.18", PIPE, duration=f"{sim_ms}ms")
        span["end"] = time.monotonic()

    t = threading.Thread(target=work)
    ticks: list[float] = []
    t.start()
    while t.is_alive():
        ticks.append(time.monotonic())
        time.sleep(0.001)
    t.join()
    inside = [x for x in ticks if span["start"] + 0.05 < x < span["end"] - 0.05]
    assert span["end"] - span["start"] > 0.2, "the run is too short to tell"
    assert len(inside) >= 10


def test_results_and_errors_pickle(result: schedlab.Result) -> None:
    """Ray and multiprocessing move results and errors between processes by pickling."""
    import pickle

    back = pickle.loads(pickle.dumps(result))
    assert back.json_text == result.json_text and back.text == result.text
    assert back.trace().equals(result.trace())
    e = pickle.loads(pickle.dumps(schedlab.SchedlabError("bad")))
    assert type(e) is schedlab.SchedlabError and str(e) == "bad"
