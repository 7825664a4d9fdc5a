"""Sweeps: the long table, determinism across backends and worker counts, resume after a kill,
the manifest check, compaction, and the TOML front end (python -m schedlab sweep).

Simulated runs are tiny (smp:2, 200 ms) so that the file runs in seconds besides Ray's start-up.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from schedlab import _native
from schedlab.sweep import COLUMNS, SCHEMA, Job, SweepError, jobs_of, sweep

REPO = Path(__file__).resolve().parents[2]
PIPE = "stress-ng --pipe 2 --timeout 1s --metrics-brief"
HOGS = f"rt-app {REPO / 'examples' / 'two-hogs.json'}"

# 2 kernels × 2 workload entries (one a pair of lines) × 3 seeds = 12 jobs
SMALL = dict(
    platforms=["smp:2"],
    kernels=["v6.6.78", "v6.12.81"],
    workloads=[PIPE, [HOGS, PIPE]],
    durations=["200ms"],
    seeds=[1, 2, 3],
)


class Counter:
    """A runner that calls the native module and records the jobs it ran (thread-safe)."""

    def __init__(self):
        self.jobs: list[Job] = []
        self.lock = threading.Lock()

    def __call__(self, job: Job) -> str:
        with self.lock:
            self.jobs.append(job)
        doc, _text, _trace = _native.run_json(
            job.platform, job.kernel, list(job.workloads), job.duration, job.seed
        )
        return doc


def test_cross_product_order_and_ids():
    jobs = jobs_of(**SMALL)
    assert len(jobs) == 1 * 2 * 2 * 1 * 3
    # seed fastest, then duration, workload, kernel, platform
    assert [(j.kernel, j.workloads, j.seed) for j in jobs[:4]] == [
        ("v6.6.78", (PIPE,), 1),
        ("v6.6.78", (PIPE,), 2),
        ("v6.6.78", (PIPE,), 3),
        ("v6.6.78", (HOGS, PIPE), 1),
    ]
    assert len({j.id for j in jobs}) == len(jobs)
    # the id depends on the configuration only
    assert jobs_of(**SMALL)[5].id == jobs[5].id
    assert jobs_of(**{**SMALL, "seeds": "1..3"}) == jobs  # A..B is inclusive
    assert jobs[3].workload == f"{HOGS} + {PIPE}"


def test_long_table_schema_and_rule(tmp_path):
    df = sweep(**SMALL, out=tmp_path / "s", workers=2)
    assert list(df.columns) == list(COLUMNS)
    assert df["seed"].dtype == "int64" and df["value"].dtype == "float64"
    for c in ("platform", "kernel", "workload", "duration", "metric", "unit"):
        assert all(isinstance(v, str) for v in df[c])
    assert pq.read_schema(tmp_path / "s" / "results.parquet").remove_metadata() == SCHEMA
    # the rows of one job against the run's own JSON document
    job = jobs_of(**SMALL)[3]  # v6.6.78, the two-line entry, seed 1
    doc = json.loads(
        _native.run_json(job.platform, job.kernel, list(job.workloads), job.duration, job.seed)[0]
    )
    got = df[(df.kernel == job.kernel) & (df.workload == job.workload) & (df.seed == 1)]
    want = []
    for i, w in enumerate(doc["workloads"]):  # two lines: metric names prefixed "i:"
        for name, m in w["metrics"].items():
            want.append((f"{i}:{name}", m["unit"], float(m["value"])))
    for name, v in doc["sched"].items():  # integers under "sched": sched.NAME, events
        if isinstance(v, int):
            want.append((f"sched.{name}", "events", float(v)))
    assert "sched.sched_switch" in [w[0] for w in want]
    assert list(zip(got.metric, got.unit, got.value)) == want
    assert set(got.duration) == {"200ms"} and set(got.platform) == {"smp:2"}
    # a one-line entry: names unprefixed
    one = df[(df.workload == PIPE)]
    assert "bogo_ops_per_sec" in set(one.metric)
    assert not any(":" in m for m in one.metric)


def test_local_one_and_two_workers_identical(tmp_path):
    a = sweep(**SMALL, out=tmp_path / "w1", workers=1)
    b = sweep(**SMALL, out=tmp_path / "w2", workers=2)
    pd.testing.assert_frame_equal(a, b)
    assert (tmp_path / "w1" / "results.parquet").read_bytes() == (
        tmp_path / "w2" / "results.parquet"
    ).read_bytes()
    # rows in job order: the (kernel, workload, seed) of the rows follow the cross product
    order = [(j.kernel, j.workload, j.seed) for j in jobs_of(**SMALL)]
    seen = list(dict.fromkeys(zip(a.kernel, a.workload, a.seed)))
    assert seen == order


def test_ray_identical_to_local(tmp_path):
    ray = pytest.importorskip("ray")
    local = sweep(**SMALL, out=tmp_path / "local", workers=2)
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        r = sweep(**SMALL, out=tmp_path / "ray", backend="ray")
        r1 = sweep(**SMALL, out=tmp_path / "ray1", backend="ray", workers=1)
    finally:
        if started:
            ray.shutdown()
    pd.testing.assert_frame_equal(local, r)
    pd.testing.assert_frame_equal(local, r1)
    assert (tmp_path / "local" / "results.parquet").read_bytes() == (
        tmp_path / "ray" / "results.parquet"
    ).read_bytes()


def test_compaction_and_resume_of_a_finished_sweep(tmp_path):
    out = tmp_path / "s"
    c = Counter()
    df = sweep(**SMALL, out=out, workers=2, _runner=c)
    assert len(c.jobs) == 12
    # the per-job files are gone; the manifest and the table remain
    assert sorted(p.name for p in out.iterdir()) == ["results.parquet", "sweep.json"]
    assert len(pq.read_table(out / "results.parquet")) == len(df)
    # resuming a finished sweep runs nothing and returns the same table
    c2 = Counter()
    again = sweep(**SMALL, out=out, resume=True, _runner=c2)
    assert c2.jobs == []
    pd.testing.assert_frame_equal(df, again)
    # without resume, a directory holding a sweep is refused
    with pytest.raises(SweepError, match="already holds a sweep"):
        sweep(**SMALL, out=out)


def test_resume_with_another_configuration_refused(tmp_path):
    out = tmp_path / "s"
    sweep(**SMALL, out=out, workers=2)
    with pytest.raises(SweepError, match=r"different configuration.*seed"):
        sweep(**{**SMALL, "seeds": [1, 2, 4]}, out=out, resume=True)
    with pytest.raises(SweepError, match=r"different configuration.*12 jobs there, 8 now"):
        sweep(**{**SMALL, "kernels": ["v6.12.81"], "seeds": [1, 2, 3, 4]}, out=out, resume=True)
    # a non-empty directory without a manifest is not taken over
    other = tmp_path / "other"
    other.mkdir()
    (other / "x").write_text("")
    with pytest.raises(SweepError, match="holds no sweep"):
        sweep(**SMALL, out=other)


KILLED = """
import sys
from schedlab.sweep import sweep
sweep(**{cfg}, out=sys.argv[1], workers=1, progress=False)
"""


def test_resume_after_kill(tmp_path):
    cfg = {**SMALL, "seeds": [1, 2, 3, 4, 5, 6]}  # 24 jobs
    out = tmp_path / "killed"
    jobs_dir = out / "jobs"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    p = subprocess.Popen(
        [sys.executable, "-c", KILLED.format(cfg=repr(cfg)), str(out)], env=env
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            done = list(jobs_dir.glob("*.parquet")) if jobs_dir.exists() else []
            if len(done) >= 3 or p.poll() is not None:
                break
            time.sleep(0.02)
        p.send_signal(signal.SIGKILL)
    finally:
        p.wait()
    assert p.returncode == -signal.SIGKILL, "the sweep ended before it was killed"
    finished = {f.stem: f.stat().st_mtime_ns for f in jobs_dir.glob("*.parquet")}
    assert 3 <= len(finished) < 24
    assert not (out / "results.parquet").exists()

    c = Counter()
    resumed = sweep(**cfg, out=out, resume=True, workers=2, _runner=c)
    ran = {j.id for j in c.jobs}
    # every job ran exactly once overall: the finished ones not again, the rest once
    assert len(c.jobs) == len(ran) == 24 - len(finished)
    assert ran.isdisjoint(finished)
    assert ran | set(finished) == {j.id for j in jobs_of(**cfg)}
    whole = sweep(**cfg, out=tmp_path / "whole", workers=2)
    pd.testing.assert_frame_equal(resumed, whole)


def test_a_refused_job_names_it_and_keeps_finished_ones(tmp_path):
    out = tmp_path / "s"
    with pytest.raises(ValueError, match=r"kernel='v6.12 NO_FROBNICATE'.*NO_FROBNICATE"):
        sweep(["smp:2"], ["v6.12.81", "v6.12 NO_FROBNICATE"], [PIPE], ["200ms"], [1],
              out=out, workers=1)
    assert len(list((out / "jobs").glob("*.parquet"))) == 1


def test_bad_arguments():
    for kw, needle in [
        ({"seeds": "3..1"}, "seeds"),
        ({"seeds": [1, 1]}, "repeats"),
        ({"seeds": [-1]}, "seeds"),
        ({"kernels": []}, "kernels"),
        ({"workloads": [[]]}, "workloads"),
        ({"durations": [5]}, "durations"),
    ]:
        with pytest.raises(SweepError, match=needle):
            sweep(**{**SMALL, **kw}, out="/nonexistent/never-created")
    with pytest.raises(SweepError, match="backend"):
        sweep(**SMALL, out="/nonexistent/x", backend="spark")


def test_ray_address_nobody_answers_at(tmp_path):
    pytest.importorskip("ray")
    import ray

    if ray.is_initialized():
        pytest.skip("Ray already initialised in this process")
    # port 1 on the loopback: refused at once; the directory is not created
    with pytest.raises(SweepError, match="nothing answers at '127.0.0.1:1'"):
        sweep(**SMALL, out=tmp_path / "r", backend="ray", ray_address="127.0.0.1:1")
    assert not (tmp_path / "r").exists()


def test_progress(tmp_path, capsys):
    sweep(**{**SMALL, "seeds": [1]}, out=tmp_path / "a", progress=False)
    assert capsys.readouterr().err == ""
    sweep(**{**SMALL, "seeds": [1]}, out=tmp_path / "b", progress=True)
    assert "4/4 jobs done" in capsys.readouterr().err


def _cli(*args, cwd):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.run(
        [sys.executable, "-m", "schedlab", *args], cwd=cwd, env=env, capture_output=True,
        text=True,
    )


def test_toml_sweep_from_the_command_line(tmp_path):
    (tmp_path / "s.toml").write_text(textwrap.dedent(f"""\
        platforms = "smp:2"
        kernels = ["v6.12.81"]
        workloads = [{json.dumps(PIPE)}]
        durations = ["200ms"]
        seeds = "1..2"
        out = "o"
        """))
    r = _cli("sweep", "s.toml", "--jobs", "2", "--progress", "never", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert "2 jobs" in r.stdout
    df = pd.read_parquet(tmp_path / "o" / "results.parquet")
    assert list(df.columns) == list(COLUMNS) and set(df.seed) == {1, 2}
    # again: refused without --resume, nothing to do with it
    r = _cli("sweep", "s.toml", cwd=tmp_path)
    assert r.returncode == 2 and "--resume" in r.stderr
    r = _cli("sweep", "s.toml", "--resume", "--out", "o", cwd=tmp_path)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(
    "body, words",
    [
        ('platforms = ["smp:2"]\nkernels = ["v6.12"]\n\nworkloads = ["x"]\nseeds = "1..x"\n',
         ["s.toml:5", "seeds", "'1..x'"]),
        ('platforms = ["smp:2"]\nkernels = ["v6.12"]\nworkloads = ["x"]\nsedes = [1]\n',
         ["s.toml:4", "unknown key 'sedes'"]),
        ('platforms = ["smp:2"]\nworkloads = ["x"]\n', ["s.toml", "missing key 'kernels'"]),
        ('platforms = ["smp:2"]\nkernels = "v6.12"\nworkloads = ["x"]\njobs = 0\n',
         ["s.toml:4", "jobs", "0"]),
        ('platforms = ["smp:2"]\nkernels = "v6.12"\nworkloads = ["x"]\nbackend = "spark"\n',
         ["s.toml:4", "backend", "'spark'"]),
        ('platforms = ["smp:2"]\nkernels = [1]\nworkloads = ["x"]\n', ["s.toml:2", "kernels", "1"]),
        ('platforms = ["smp:2"\n', ["s.toml", "invalid TOML", "Unclosed array"]),
        ('platforms = ["smp:2"]\nkernels = = 3\n', ["s.toml:2", "invalid TOML at column 11"]),
        ('platforms = ["smp:2"]\nkernels = ["v6.12"]\nworkloads = [["a", 3]]\n',
         ["s.toml:3", "workloads", "3"]),
    ],
)
def test_toml_errors_exit_2_naming_line_and_key(tmp_path, body, words):
    (tmp_path / "s.toml").write_text(body)
    r = _cli("sweep", "s.toml", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("schedlab: sweep: ") and r.stderr.count("\n") == 1, r.stderr
    for w in words:
        assert w in r.stderr, (w, r.stderr)
    assert not (tmp_path / "s-sweep").exists()  # nothing created for a bad file


def test_report_errors(tmp_path):
    r = _cli("report", "missing.parquet", cwd=tmp_path)
    assert r.returncode == 2 and "missing.parquet: no such file" in r.stderr
    pd.DataFrame({"a": [1]}).to_parquet(tmp_path / "x.parquet")
    r = _cli("report", "x.parquet", cwd=tmp_path)
    assert r.returncode == 2 and "no column 'platform'" in r.stderr, r.stderr
    # a sweep table without rows: one line, exit 2 (not a traceback)
    pq.write_table(SCHEMA.empty_table(), tmp_path / "empty.parquet")
    r = _cli("report", "empty.parquet", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr == "schedlab: report: empty.parquet: the sweep has no rows\n", r.stderr


def test_report_calls_the_native_renderer(tmp_path):
    sweep(**{**SMALL, "seeds": [1]}, out=tmp_path / "s", workers=2)
    r = _cli("report", "s/results.parquet", "-o", "rep", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "rep" / "index.html").read_text()
    assert "<html" in html.lower()
    # the page is the Rust renderer's, from the Parquet rows in the table's order
    table = pd.read_parquet(tmp_path / "s" / "results.parquet")
    assert html == _native.report_sweep_html(list(table.itertuples(index=False, name=None)))


BIN = Path(os.environ.get("SCHEDLAB_BIN", REPO / "target" / "debug" / "schedlab"))


def test_schedlab_sweep_through_the_binary(tmp_path):
    """`schedlab sweep` (Rust) execs this interpreter's `-m schedlab sweep`: same table as the
    Python call, and the file's errors come through as one line with exit 2."""
    if not BIN.exists():
        pytest.fail(f"no schedlab binary at {BIN}: cargo build -p schedlab-cli, or set SCHEDLAB_BIN")
    env = dict(os.environ)
    env["SCHEDLAB_PYTHON"] = sys.executable
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    (tmp_path / "s.toml").write_text(textwrap.dedent(f"""\
        platforms = ["smp:2"]
        kernels = ["v6.6.78", "v6.12.81"]
        workloads = [{json.dumps(PIPE)}]
        durations = ["200ms"]
        seeds = [1, 2]
        """))
    r = subprocess.run([BIN, "sweep", "s.toml", "--jobs", "2", "--no-progress"], cwd=tmp_path,
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = pd.read_parquet(tmp_path / "s-sweep" / "results.parquet")
    want = sweep(["smp:2"], ["v6.6.78", "v6.12.81"], [PIPE], ["200ms"], [1, 2],
                 out=tmp_path / "py", workers=1)
    pd.testing.assert_frame_equal(got, want)
    (tmp_path / "bad.toml").write_text('platforms = ["smp:2"]\nkernels = ["v6.12"]\nworkloads = 3\n')
    r = subprocess.run([BIN, "sweep", "bad.toml"], cwd=tmp_path, env=env, capture_output=True,
                       text=True)
    assert r.returncode == 2
    assert r.stderr.startswith("schedlab: sweep: bad.toml:3: workloads") and r.stderr.count("\n") == 1
