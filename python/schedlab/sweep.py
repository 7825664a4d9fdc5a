"""Sweeps: the cross product of platforms × kernels × workloads × durations × seeds, run locally
on a thread pool or as Ray tasks, resumable, collected into one long table.

One *job* is one simulation: (platform, kernel, workload entry, duration, seed). A *workload
entry* is either one workload line (a ``str``) or a list of lines run together in the same
simulation (as repeated ``--workload`` flags).

The long table has the columns ``platform, kernel, workload, duration, seed, metric, unit,
value`` (``value`` float64, ``seed`` int64, the rest strings), one row per (job, metric):

* ``workload`` is the entry's line, or its lines joined with ``" + "`` for a list;
* ``duration`` is the duration as written (``"1s"``), or ``""`` for the workloads' own duration;
* the metrics are, in this order:

  1. every metric of every workload line of the run (``workloads[].metrics`` of the JSON
     document ``schedlab run --json`` prints: name → {value, unit}), in the document's order;
     for an entry of two or more lines the name is prefixed by the line's 0-based index in the
     entry (``"1:bogo_ops_per_sec"``) so that two lines' metrics never share a name;
  2. every integer directly under the run's ``sched`` object (``sched_switch``,
     ``sched_migrate_task``, ``ttwu_local``, ``ttwu_remote``, ``ipis``, ...), named
     ``sched.NAME`` with unit ``events``: run-wide scheduler counts, whatever the workload.

Rows are in job order (the cross product with the seed varying fastest, then duration, workload,
kernel, platform), and within a job in the order above: the same table, row for row and bit for
bit, on either backend and at any worker count.

Files under ``out``:

* ``sweep.json`` — the manifest: the sweep's configuration. Resuming with a different
  configuration is refused (:class:`SweepError`).
* ``jobs/JOBID.parquet`` — one file per finished job, JOBID a hash of the job's configuration;
  written to a temporary name and renamed, so a file present is a finished job.
* ``results.parquet`` — the whole table, written when every job is done; the per-job files are
  then removed. Resuming a finished sweep reads it back without running anything.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["sweep", "Job", "SweepError", "COLUMNS", "SCHEMA", "jobs_of", "rows_of_run"]

#: The long table's columns, in order.
COLUMNS = ("platform", "kernel", "workload", "duration", "seed", "metric", "unit", "value")

#: Its Arrow schema (the Parquet files' schema).
SCHEMA = pa.schema(
    [
        ("platform", pa.string()),
        ("kernel", pa.string()),
        ("workload", pa.string()),
        ("duration", pa.string()),
        ("seed", pa.int64()),
        ("metric", pa.string()),
        ("unit", pa.string()),
        ("value", pa.float64()),
    ]
)

#: Version of the manifest and of the job hash; a change refuses to resume older sweeps.
FORMAT = 1
MANIFEST = "sweep.json"
RESULTS = "results.parquet"
JOBS_DIR = "jobs"


class SweepError(ValueError):
    """A sweep that cannot start or resume: bad configuration, or a directory holding another
    sweep. ``str(e)`` is one line."""


@dataclass(frozen=True)
class Job:
    """One simulation of the sweep."""

    platform: str
    kernel: str
    workloads: tuple[str, ...]
    duration: str | None
    seed: int

    @property
    def workload(self) -> str:
        """The ``workload`` column: the line, or the lines joined with ``" + "``."""
        return " + ".join(self.workloads)

    def config(self) -> dict:
        return {
            "platform": self.platform,
            "kernel": self.kernel,
            "workloads": list(self.workloads),
            "duration": self.duration,
            "seed": self.seed,
        }

    @property
    def id(self) -> str:
        """A stable hash of the configuration (and of the format version): the job file's name."""
        doc = json.dumps([FORMAT, self.config()], sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(doc.encode()).hexdigest()[:20]

    def describe(self) -> str:
        d = self.duration if self.duration is not None else "default"
        return (
            f"platform={self.platform!r} kernel={self.kernel!r} workload={self.workload!r} "
            f"duration={d} seed={self.seed}"
        )


def _str_list(name: str, v, allow_none: bool = False) -> list:
    if isinstance(v, str) or (allow_none and v is None):
        v = [v]
    if not isinstance(v, (list, tuple)) or not v:
        raise SweepError(f"{name}: expected a non-empty list of strings, got {v!r}")
    for x in v:
        if not (isinstance(x, str) and x.strip()) and not (allow_none and x is None):
            raise SweepError(f"{name}: expected a non-empty string, got {x!r}")
    return list(v)


def _workload_entries(v) -> list[tuple[str, ...]]:
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, (list, tuple)) or not v:
        raise SweepError(
            f"workloads: expected a non-empty list of workload lines or lists of lines, got {v!r}"
        )
    out = []
    for e in v:
        if isinstance(e, str):
            e = [e]
        if (
            not isinstance(e, (list, tuple))
            or not e
            or not all(isinstance(x, str) and x.strip() for x in e)
        ):
            raise SweepError(
                f"workloads: an entry is a workload line or a non-empty list of lines, got {e!r}"
            )
        out.append(tuple(e))
    return out


def parse_seeds(v) -> list[int]:
    """Seeds: an int, a list of ints, or ``"A..B"`` (A through B inclusive, like the shell's
    ``{A..B}``)."""
    if isinstance(v, bool):
        raise SweepError(f"seeds: expected a list of integers or 'A..B', got {v!r}")
    if isinstance(v, int):
        v = [v]
    elif isinstance(v, range):
        v = list(v)
    elif isinstance(v, str):
        a, sep, b = v.partition("..")
        try:
            lo, hi = int(a.strip()), int(b.strip())
        except ValueError:
            lo = hi = None
        if not sep or lo is None or hi is None or lo < 0 or hi < lo:
            raise SweepError(
                f"seeds: '{v}' is not a range 'A..B' of non-negative integers with A <= B "
                "(e.g. '1..10' for seeds 1 through 10)"
            )
        return list(range(lo, hi + 1))
    if not isinstance(v, (list, tuple)) or not v:
        raise SweepError(f"seeds: expected a non-empty list of integers or 'A..B', got {v!r}")
    for s in v:
        if isinstance(s, bool) or not isinstance(s, int) or s < 0 or s >= 2**64:
            raise SweepError(f"seeds: {s!r} is not a non-negative integer")
    if len(set(v)) != len(v):
        raise SweepError(f"seeds: {list(v)!r} repeats a seed")
    return list(v)


def jobs_of(platforms, kernels, workloads, durations, seeds) -> list[Job]:
    """The cross product, in job order (seed fastest, then duration, workload, kernel,
    platform). Raises :class:`SweepError` on a malformed list."""
    ps = _str_list("platforms", platforms)
    ks = _str_list("kernels", kernels)
    ws = _workload_entries(workloads)
    ds = _str_list("durations", durations, allow_none=True)
    ss = parse_seeds(seeds)
    for name, lst in (("platforms", ps), ("kernels", ks), ("workloads", ws), ("durations", ds)):
        if len(set(lst)) != len(lst):
            raise SweepError(f"{name}: {[list(x) if isinstance(x, tuple) else x for x in lst]!r} "
                             "repeats an entry")
    return [
        Job(p, k, w, d, s) for p in ps for k in ks for w in ws for d in ds for s in ss
    ]


def rows_of_run(job: Job, doc: dict) -> list[tuple]:
    """The long table's rows of one job from the run's JSON document (see the module docs for
    the rule)."""
    dur = job.duration if job.duration is not None else ""
    head = (job.platform, job.kernel, job.workload, dur, job.seed)
    rows = []
    multi = len(job.workloads) > 1
    for i, w in enumerate(doc.get("workloads", [])):
        for name, m in (w.get("metrics") or {}).items():
            metric = f"{i}:{name}" if multi else name
            rows.append(head + (metric, str(m.get("unit", "")), float(m["value"])))
    for name, v in (doc.get("sched") or {}).items():
        if isinstance(v, int) and not isinstance(v, bool):
            rows.append(head + (f"sched.{name}", "events", float(v)))
    return rows


def _native_runner():
    from . import _native  # the PyO3 module; imported late so that parsing works without it

    def run(job: Job) -> str:
        doc, _text, _trace = _native.run_json(
            job.platform, job.kernel, list(job.workloads), job.duration, job.seed
        )
        return doc

    return run


def run_job(job: Job, runner: Callable[[Job], str] | None = None) -> list[tuple]:
    """Runs one job and returns its rows."""
    run = runner or _native_runner()
    return rows_of_run(job, json.loads(run(job)))


def _table(rows: Sequence[tuple]) -> pa.Table:
    cols = list(zip(*rows)) if rows else [[] for _ in COLUMNS]
    return pa.Table.from_arrays(
        [pa.array(list(c), type=f.type) for c, f in zip(cols, SCHEMA)], schema=SCHEMA
    )


def _write_atomic(table: pa.Table, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def _manifest(jobs_cfg: dict) -> dict:
    return {"format": FORMAT, "kind": "schedlab sweep", "config": jobs_cfg}


class _Progress:
    def __init__(self, total: int, done: int, enabled: bool):
        self.total, self.done, self.enabled = total, done, enabled
        self.start = time.monotonic()
        self.last = 0.0
        self.tty = sys.stderr.isatty()
        self.show(force=True)

    def step(self):
        self.done += 1
        self.show(force=self.done == self.total)

    def show(self, force=False):
        if not self.enabled:
            return
        now = time.monotonic()
        # a terminal line is redrawn in place; into a file or pipe, one line every 10 s
        if not force and now - self.last < (0.5 if self.tty else 10.0):
            return
        self.last = now
        line = f"sweep: {self.done}/{self.total} jobs done ({now - self.start:.0f}s)"
        if self.tty:
            sys.stderr.write("\r" + line + ("\n" if self.done == self.total else ""))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def sweep(
    platforms: Iterable[str] | str,
    kernels: Iterable[str] | str,
    workloads: Iterable[str | Sequence[str]] | str,
    durations: Iterable[str | None] | str | None = None,
    seeds: Iterable[int] | int | str = 1,
    out: str | os.PathLike = "sweep-out",
    backend: str = "local",
    workers: int | None = None,
    resume: bool = False,
    progress: bool | None = None,
    ray_address: str | None = None,
    _runner: Callable[[Job], str] | None = None,
):
    """Runs the cross product platforms × kernels × workloads × durations × seeds and returns
    the long table as a pandas DataFrame (see the module documentation for the rows).

    Args:
        platforms, kernels: as ``schedlab run --platform/--kernel`` (a string means one).
        workloads: entries, each a workload line or a list of lines run together.
        durations: simulated durations as the CLI writes them (``"1s"``); ``None`` (the
            default) runs for the workloads' own duration.
        seeds: a list of seeds, one seed, or ``"A..B"`` (A through B inclusive).
        out: the sweep's directory (created; see the module docs for its files).
        backend: ``"local"`` (a thread pool in this process) or ``"ray"`` (one Ray task per
            job on the cluster ``ray.init(address=ray_address)`` reaches; Ray is initialised
            only if it is not already).
        workers: simulations at once (local default: ``os.cpu_count()``; Ray default: every
            job submitted at once, Ray schedules them on its CPUs).
        resume: continue the sweep already in ``out`` (same configuration), running only the
            jobs without a result. Without it, a directory holding a sweep is refused.
        progress: "jobs done / total" on stderr; ``None`` shows it when stderr is a terminal.
        ray_address: passed to ``ray.init(address=...)``.

    Raises:
        SweepError: bad configuration, or ``out`` holds another sweep.
        schedlab.SchedlabError: a job's simulation refused its input; the message names the
            job. The finished jobs stay on disk, but a corrected configuration is a different
            sweep: give it another directory.
    """
    if backend not in ("local", "ray"):
        raise SweepError(f"backend: '{backend}' is not 'local' or 'ray'")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise SweepError(f"workers: {workers!r} is not a positive integer")
    jobs = jobs_of(platforms, kernels, workloads, durations, seeds)
    if backend == "ray":
        _ray_setup(ray_address)
    # the job list, in order, is the configuration
    manifest = _manifest({"jobs": [j.config() for j in jobs]})

    out = Path(out)
    mpath = out / MANIFEST
    jdir = out / JOBS_DIR
    if mpath.exists():
        try:
            old = json.loads(mpath.read_text())
        except (OSError, ValueError) as e:
            raise SweepError(f"{mpath}: not a sweep manifest ({e})") from None
        if not resume:
            raise SweepError(
                f"{out} already holds a sweep ({mpath}); resume it (resume=True, --resume) "
                "or choose another output directory"
            )
        if old != manifest:
            raise SweepError(
                f"{out}: cannot resume: the sweep there has a different configuration "
                f"({_diff(old, manifest)}); choose another output directory"
            )
    else:
        if out.exists() and any(out.iterdir()):
            raise SweepError(
                f"{out}: the directory exists and is not empty but holds no sweep "
                f"({MANIFEST}); choose another output directory"
            )
        out.mkdir(parents=True, exist_ok=True)
        tmp = mpath.with_name(f".{MANIFEST}.tmp-{os.getpid()}")
        tmp.write_text(json.dumps(manifest, indent=1) + "\n")
        os.replace(tmp, mpath)

    rpath = out / RESULTS
    if rpath.exists():
        _cleanup(jdir, remove_jobs=True)
        return _frame(pq.read_table(rpath))

    jdir.mkdir(exist_ok=True)
    _cleanup(jdir, remove_jobs=False)  # temporaries of a killed run
    pending = [j for j in jobs if not (jdir / f"{j.id}.parquet").exists()]
    prog = _Progress(len(jobs), len(jobs) - len(pending),
                     sys.stderr.isatty() if progress is None else progress)

    def finished(job: Job, rows: list[tuple]) -> None:
        _write_atomic(_table(rows), jdir / f"{job.id}.parquet")
        prog.step()

    if pending:
        if backend == "local":
            _run_local(pending, workers or os.cpu_count() or 1, _runner, finished)
        else:
            _run_ray(pending, workers, ray_address, _runner, finished)

    # compaction: every job file, in job order, into results.parquet
    table = pa.concat_tables(
        [pq.read_table(jdir / f"{j.id}.parquet", schema=SCHEMA) for j in jobs]
    ) if jobs else _table([])
    table = table.combine_chunks()
    _write_atomic(table, rpath)
    _cleanup(jdir, remove_jobs=True)
    return _frame(table)


def _frame(table: pa.Table):
    """The pandas DataFrame of the long table."""
    return table.to_pandas()


def _diff(old: dict, new: dict) -> str:
    if old.get("format") != new.get("format"):
        return f"format {old.get('format')!r}, this version writes {new.get('format')!r}"
    oj, nj = old.get("config", {}).get("jobs", []), new["config"]["jobs"]
    if len(oj) != len(nj):
        return f"{len(oj)} jobs there, {len(nj)} now"
    for a, b in zip(oj, nj):
        if a != b:
            keys = [k for k in b if a.get(k) != b.get(k)]
            k = keys[0] if keys else "?"
            return f"first difference: {k} {a.get(k)!r} there, {b.get(k)!r} now"
    return "manifest differs"


def _cleanup(jdir: Path, remove_jobs: bool) -> None:
    if not jdir.exists():
        return
    for f in jdir.iterdir():
        if f.name.startswith(".") and ".tmp-" in f.name:
            f.unlink(missing_ok=True)
        elif remove_jobs and f.suffix == ".parquet":
            f.unlink(missing_ok=True)
    if remove_jobs:
        try:
            jdir.rmdir()
        except OSError:
            pass


def _run_local(pending, workers, runner, finished) -> None:
    run = runner or _native_runner()
    with ThreadPoolExecutor(max_workers=min(workers, len(pending))) as pool:
        futs = {}
        it = iter(pending)
        try:
            # keep at most 2 × workers jobs queued, so an error stops the sweep quickly
            for job in it:
                futs[pool.submit(run_job, job, run)] = job
                if len(futs) >= 2 * workers:
                    break
            while futs:
                done, _ = wait(futs, return_when=FIRST_COMPLETED)
                for f in sorted(done, key=lambda f: pending.index(futs[f])):
                    job = futs.pop(f)
                    try:
                        rows = f.result()
                    except Exception as e:
                        raise _job_error(job, e) from e
                    finished(job, rows)
                    nxt = next(it, None)
                    if nxt is not None:
                        futs[pool.submit(run_job, nxt, run)] = nxt
        except BaseException:
            for f in futs:
                f.cancel()
            raise


def _job_error(job: Job, e: Exception) -> Exception:
    msg = f"job {job.describe()}: {e}"
    try:
        return type(e)(msg)
    except Exception:
        return SweepError(msg)


def _ray_task(job: Job) -> list[tuple]:
    return run_job(job)


def _ray_setup(address: str | None) -> None:
    """Imports Ray and initialises it unless it already is: before the sweep touches its
    directory, so that a missing cluster leaves nothing to resume."""
    try:
        import ray
    except ImportError:
        raise SweepError(
            "backend 'ray' needs the ray package (pip install ray, or './python[ray]')"
        ) from None
    if not ray.is_initialized():
        _check_reachable(address)
        try:
            ray.init(address=address, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            where = f"at {address!r}" if address else "(ray.init())"
            raise SweepError(f"ray: cannot start or reach a Ray cluster {where}: {e}") from None


def _check_reachable(address: str | None) -> None:
    """For an explicit ``HOST:PORT`` (or ``ray://HOST:PORT``), a TCP connection first: Ray itself
    keeps retrying an address nobody answers at, without end."""
    if not address or address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return
    import socket

    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as e:
        raise SweepError(
            f"ray: nothing answers at {address!r} ({e.strerror or e}); start the cluster "
            "(ray start --head) or give its address"
        ) from None


def _run_ray(pending, workers, address, runner, finished) -> None:
    import ray
    remote = ray.remote(num_cpus=1)(_ray_task if runner is None else
                                    (lambda job: run_job(job, runner)))
    limit = workers or len(pending)
    it = iter(pending)
    refs: dict = {}
    try:
        for job in it:
            refs[remote.remote(job)] = job
            if len(refs) >= limit:
                break
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1)
            for r in ready:
                job = refs.pop(r)
                try:
                    rows = ray.get(r)
                except Exception as e:
                    cause = getattr(e, "cause", None) or e
                    raise _job_error(job, cause) from e
                finished(job, rows)
                nxt = next(it, None)
                if nxt is not None:
                    refs[remote.remote(nxt)] = nxt
    except BaseException:
        for r in refs:
            try:
                ray.cancel(r)
            except Exception:
                pass
        raise
