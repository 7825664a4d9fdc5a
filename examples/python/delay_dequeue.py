"""Seed 000 from Python: the DELAY_DEQUEUE pipe regression on a Raspberry Pi 5.

Reproduces the seed's figure — `stress-ng --pipe 4` bogo ops/s per kernel, published beside
simulated — with `schedlab.reproduce`, then looks at the mechanism the way a notebook would:
two traced runs (v6.6.78, v6.12.81) and the wakeup-latency CDF of the pipe tasks, whose
shift is the switch-per-message ping-pong that DELAY_DEQUEUE brings.

    python3 examples/python/delay_dequeue.py [--runs N] [--full] [--out DIR]

Writes DIR/bogo_ops.svg (published vs simulated), DIR/latency.svg (the CDF) and DIR/rows.csv
(the table), and prints the table. Default: --quick runs (1 s each, 3 seeds), ~30 s.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import schedlab


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=None, help="seeds per kernel (default: 3 quick, 10 full)")
    ap.add_argument("--full", action="store_true", help="the published 20 s runs (≈ 40 CPU-minutes)")
    ap.add_argument("--out", type=Path, default=Path("delay-dequeue-figures"))
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)

    # 1. the reproduction: published and simulated numbers per kernel string
    rep = schedlab.reproduce("delay-dequeue", quick=not a.full, runs=a.runs)
    rows = rep.rows
    ops = rows[rows["metric"] == "bogo_ops_per_sec"][["variant", "published", "simulated", "simulated_stddev"]]
    print(ops.to_string(index=False))
    rows.to_csv(a.out / "rows.csv", index=False)
    (a.out / "bogo_ops.svg").write_text(rep.figures(metric="bogo_ops_per_sec")["delay-dequeue/bogo_ops_per_sec"])
    for t in rep.json["scenarios"][0]["targets"]:
        print(("PASS " if t["pass"] else "MISS ") + t["description"])

    # 2. the mechanism: how long a woken pipe task waits before it runs, on both kernels
    runs = {
        k: schedlab.run(
            platform="rpi5",
            kernel=k,
            workloads=["stress-ng --pipe 4 --timeout 1s --metrics-brief"],
            duration="50ms",
            seed=1,
            trace=True,
        )
        for k in ("v6.6.78", "v6.12.81")
    }
    for k, r in runs.items():
        t = r.trace()
        switches = int((t["event"] == "sched_switch").sum())
        print(f"{k}: {switches} context switches in 50 ms")
    (a.out / "latency.svg").write_text(schedlab.plot_latency(runs, comm="stress-ng-pipe"))
    print(f"figures in {a.out}/")


if __name__ == "__main__":
    main()
