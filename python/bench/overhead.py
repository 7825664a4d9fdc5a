#!/usr/bin/env python3
"""Python overhead over the CLI for one run (issue #16's speed target: <= 5 %).

Times the same simulation both ways, interleaved, several repetitions:

- the binary: ``schedlab run ... --json`` as a subprocess (process start included, as a user
  pays it), wall time;
- Python: ``schedlab.run(...)`` in this process (the import is not counted: it happens once
  per session), wall time; and the same plus ``.metrics`` (JSON parsed, DataFrame built),
  what a notebook user typically does next.

Both should be release builds: ``cargo build --release -p schedlab-cli`` and
``pip install ./python`` (maturin builds release). Usage::

    python3 python/bench/overhead.py [--bin target/release/schedlab] [--reps 7]
        [--platform rpi5 --kernel v6.12.81
         --workload 'stress-ng --pipe 4 --timeout 1s --metrics-brief' --duration 1s]

Prints the times per repetition, the minimum and median of each, and the overhead of the
medians. Checks first that both produce the same document.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import schedlab

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "schedlab"))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--platform", default="rpi5")
    ap.add_argument("--kernel", default="v6.12.81")
    ap.add_argument("--workload", default="stress-ng --pipe 4 --timeout 1s --metrics-brief")
    ap.add_argument("--duration", default="1s")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    argv = [
        a.bin, "run", "--platform", a.platform, "--kernel", a.kernel, "--workload", a.workload,
        "--duration", a.duration, "--seed", str(a.seed), "--json",
    ]  # fmt: skip
    kw = dict(
        platform=a.platform, kernel=a.kernel, workloads=[a.workload], duration=a.duration,
        seed=a.seed,
    )  # fmt: skip

    def run_cli() -> tuple[float, str]:
        t = time.perf_counter()
        out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
        return time.perf_counter() - t, out

    def run_py() -> tuple[float, str]:
        t = time.perf_counter()
        r = schedlab.run(**kw)
        return time.perf_counter() - t, r.json_text

    def run_py_metrics() -> tuple[float, str]:
        t = time.perf_counter()
        r = schedlab.run(**kw)
        r.metrics
        return time.perf_counter() - t, r.json_text

    # warm-up, and the same document both ways
    _, doc_cli = run_cli()
    _, doc_py = run_py()
    if doc_cli != doc_py:
        print("the documents differ", file=sys.stderr)
        return 1

    times: dict[str, list[float]] = {"cli": [], "python": [], "python+metrics": []}
    for i in range(a.reps):
        for name, f in (("cli", run_cli), ("python", run_py), ("python+metrics", run_py_metrics)):
            times[name].append(f()[0])
        print(
            f"rep {i + 1}: " + "  ".join(f"{k} {v[-1]:.3f} s" for k, v in times.items()),
            flush=True,
        )
    base = statistics.median(times["cli"])
    for k, v in times.items():
        med = statistics.median(v)
        print(
            f"{k:15s} min {min(v):.3f} s  median {med:.3f} s  "
            f"overhead (medians) {100 * (med - base) / base:+.1f} %"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
