"""``python3 -m schedlab sweep FILE.toml ...`` and ``python3 -m schedlab report X.parquet ...``:
the bodies of ``schedlab sweep`` and ``schedlab report`` (the Rust CLI delegates here).

Exit status: 0 success; 1 a failure of the run or of its output; 2 bad input (the TOML file,
a flag, a directory holding another sweep, a job's configuration refused by the simulator);
130 interrupted. Every error is one line on stderr, ``schedlab: COMMAND: ...``.

The sweep file (TOML, every key at the top level)::

    platforms = ["rpi5"]                 # or one string
    kernels   = ["v6.6.78", "v6.12.81"]
    workloads = [                        # each entry: a workload line, or a list of lines
        "stress-ng --pipe 4 --timeout 1s --metrics-brief",   # run together in one simulation
        ["rt-app examples/two-hogs.json", "stress-ng --pipe 2 --timeout 1s"],
    ]
    durations = ["1s"]                   # optional; default: the workloads' own duration
    seeds     = "1..10"                  # seeds 1 through 10; or a list [1, 2, 3]; default [1]
    out       = "seed000-sweep"          # optional; default: FILE's name without .toml + "-sweep"
    backend   = "local"                  # or "ray"; optional
    ray_address = "auto"                 # optional: ray.init(address=...) for backend "ray"
    jobs      = 2                        # optional: simulations at once

Relative paths (``out``, files named by workload lines) are relative to the current directory,
as on the command line. Flags override the file: ``--out``, ``--jobs``, ``--ray ADDRESS`` (sets
backend "ray"), ``--resume``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

KEYS = (
    "platforms",
    "kernels",
    "workloads",
    "durations",
    "seeds",
    "out",
    "backend",
    "ray_address",
    "jobs",
)
REQUIRED = ("platforms", "kernels", "workloads")


class InputError(Exception):
    """Bad input: one line, exit 2."""


def _line_of(text: str, key: str) -> int | None:
    pat = re.compile(rf"^\s*(?:{re.escape(key)}|\"{re.escape(key)}\"|'{re.escape(key)}')\s*=")
    for i, line in enumerate(text.splitlines(), 1):
        if pat.match(line):
            return i
    return None


def load_sweep_file(path: str) -> dict:
    """Reads and checks a sweep TOML file; returns the keyword arguments of
    :func:`schedlab.sweep.sweep` (``out`` included). Raises :class:`InputError` naming the file,
    line, key and value."""
    import tomllib

    from .sweep import SweepError, jobs_of

    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        text = raw.decode()
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.start})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.fullmatch(r"(.*) \(at line (\d+), column (\d+)\)", str(e))
        if m:
            raise InputError(
                f"{path}:{m[2]}: invalid TOML at column {m[3]}: {m[1]}"
            ) from None
        raise InputError(f"{path}: invalid TOML: {e}") from None

    def where(key: str) -> str:
        n = _line_of(text, key)
        return f"{path}:{n}" if n else path

    for k, v in doc.items():
        if k not in KEYS:
            kind = "table" if isinstance(v, dict) else "key"
            raise InputError(f"{where(k)}: unknown {kind} '{k}' (keys: {', '.join(KEYS)})")
    for k in REQUIRED:
        if k not in doc:
            raise InputError(f"{path}: missing key '{k}' (required: {', '.join(REQUIRED)})")

    def check(key: str, ok: bool, want: str) -> None:
        if not ok:
            raise InputError(f"{where(key)}: {key}: expected {want}, got {doc[key]!r}")

    if "out" in doc:
        check("out", isinstance(doc["out"], str) and doc["out"].strip() != "", "a directory path")
    if "backend" in doc:
        check("backend", doc["backend"] in ("local", "ray"), "'local' or 'ray'")
    if "ray_address" in doc:
        check("ray_address", isinstance(doc["ray_address"], str), "a Ray address string")
    if "jobs" in doc:
        j = doc["jobs"]
        check("jobs", isinstance(j, int) and not isinstance(j, bool) and 1 <= j <= 1024,
              "a number of simultaneous runs from 1 to 1024")
    kw = {
        "platforms": doc["platforms"],
        "kernels": doc["kernels"],
        "workloads": doc["workloads"],
        "durations": doc.get("durations"),
        "seeds": doc.get("seeds", 1),
    }
    try:
        jobs_of(**kw)
    except SweepError as e:
        key = str(e).split(":", 1)[0]
        raise InputError(f"{where(key)}: {e}") from None
    stem = Path(path).name
    stem = stem[: -len(".toml")] if stem.endswith(".toml") else stem
    kw["out"] = doc.get("out", f"{stem}-sweep")
    kw["backend"] = doc.get("backend", "local")
    kw["ray_address"] = doc.get("ray_address")
    kw["workers"] = doc.get("jobs")
    return kw


def _jobs(v: str) -> int:
    try:
        n = int(v)
    except ValueError:
        n = 0
    if not 1 <= n <= 1024:
        raise argparse.ArgumentTypeError(f"'{v}': a number of simultaneous runs from 1 to 1024")
    return n


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, as the Rust CLI
        sub = self.prog.split()[1:]
        topic = f" {sub[-1]}" if sub else ""
        raise InputError(f"{message} (try 'schedlab help{topic}')")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="schedlab")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    s = sub.add_parser("sweep", help="run a sweep described by a TOML file")
    s.add_argument("file", metavar="FILE.toml")
    s.add_argument("--resume", action="store_true")
    s.add_argument("--ray", metavar="ADDRESS")
    s.add_argument("--out", metavar="DIR")
    s.add_argument("--jobs", metavar="N", type=_jobs)
    s.add_argument("--progress", choices=("auto", "always", "never"), default="auto")
    r = sub.add_parser("report", help="HTML report of a sweep's results.parquet")
    r.add_argument("parquet", metavar="SWEEP.parquet")
    r.add_argument("-o", "--out", metavar="DIR")
    return p


def cmd_sweep(a) -> int:
    from .sweep import SweepError, sweep

    kw = load_sweep_file(a.file)
    if a.out is not None:
        kw["out"] = a.out
    if a.jobs is not None:
        kw["workers"] = a.jobs
    if a.ray is not None:
        kw["backend"] = "ray"
        kw["ray_address"] = a.ray
    kw["progress"] = {"auto": None, "always": True, "never": False}[a.progress]
    try:
        df = sweep(resume=a.resume, **kw)
    except SweepError as e:
        raise InputError(str(e)) from None
    except ValueError as e:
        # schedlab.SchedlabError (a ValueError): the simulator refused a job's input
        if type(e).__name__ != "SchedlabError":
            raise
        raise InputError(str(e)) from None
    except OSError as e:  # the output directory cannot be written
        name = f" {e.filename}" if e.filename else ""
        print(f"schedlab: sweep:{name}: {e.strerror or e}", file=sys.stderr)
        return 1
    njobs = df.groupby(["platform", "kernel", "workload", "duration", "seed"], sort=False).ngroups
    print(f"{njobs} jobs, {len(df)} rows: {Path(kw['out']) / 'results.parquet'}")
    return 0


def read_rows(path: str) -> list[tuple]:
    """The long table of a sweep's Parquet file as a list of 8-tuples in column order
    (``platform, kernel, workload, duration, seed, metric, unit, value``)."""
    import pyarrow.parquet as pq

    from .sweep import COLUMNS

    try:
        t = pq.read_table(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except Exception as e:  # pyarrow raises ArrowInvalid & co. for a file that is not Parquet
        raise InputError(f"{path}: not a Parquet file ({e})") from None
    missing = [c for c in COLUMNS if c not in t.column_names]
    if missing:
        raise InputError(
            f"{path}: no column {', '.join(repr(c) for c in missing)} "
            f"(a sweep's table has {', '.join(COLUMNS)})"
        )
    cols = [t.column(c).to_pylist() for c in COLUMNS]
    for c, vals in zip(COLUMNS, cols):
        if any(v is None for v in vals):
            raise InputError(f"{path}: column '{c}' has empty values")
    return list(zip(*cols))


def cmd_report(a) -> int:
    from . import _native

    rows = read_rows(a.parquet)
    try:
        html = _native.report_sweep_html(rows)
    except _native.SchedlabError as e:
        raise InputError(f"{a.parquet}: {str(e).removeprefix('report: ')}") from None
    out = Path(a.out) if a.out else Path(a.parquet).resolve().parent / "report"
    try:
        out.mkdir(parents=True, exist_ok=True)
        dest = out / "index.html"
        tmp = out / f".index.html.tmp-{os.getpid()}"
        tmp.write_text(html, encoding="utf-8")
        os.replace(tmp, dest)
    except OSError as e:
        print(f"schedlab: report: writing {out}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(dest)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    cmd = argv[0] if argv and argv[0] in ("sweep", "report") else None
    try:
        a = _parser().parse_args(argv)
        return cmd_sweep(a) if a.cmd == "sweep" else cmd_report(a)
    except InputError as e:
        prefix = f"{cmd}: " if cmd and not str(e).startswith(f"{cmd}:") else ""
        print(f"schedlab: {prefix}{e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("schedlab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
