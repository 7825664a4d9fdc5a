"""The figures and reports from Python are the ones the binary draws: the same Rust code fed
the same data (`schedlab plot ...`, `schedlab reproduce --html`, `schedlab report`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import schedlab
from schedlab.sweep import COLUMNS

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("SCHEDLAB_BIN", ROOT / "target" / "debug" / "schedlab"))

from test_api import TINY_SCENARIO  # noqa: E402  (the same two-kernel test scenario)


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    if not BIN.exists():
        pytest.fail(f"no schedlab binary at {BIN}: cargo build -p schedlab-cli, or set SCHEDLAB_BIN")
    p = subprocess.run([str(BIN), *args], capture_output=True, text=True, cwd=cwd)
    assert p.returncode == 0, p.stderr
    return p


def test_reproduction_figures_and_html_are_the_binarys(tmp_path):
    sc = tmp_path / "tiny.toml"
    sc.write_text(TINY_SCENARIO)
    rep = schedlab.reproduce(str(sc), html=tmp_path / "py-html")
    # the figures of the same JSON document, drawn by `schedlab plot reproduction`
    (tmp_path / "r.json").write_text(rep.json_text)
    cli("plot", "reproduction", str(tmp_path / "r.json"), "-o", str(tmp_path / "cli-figs"))
    figs = rep.figures()
    assert list(figs) == ["tiny-hackbench/sched_switch"]  # the one metric with a published value
    assert figs["tiny-hackbench/sched_switch"] == (
        tmp_path / "cli-figs" / "tiny-hackbench_sched_switch.svg"
    ).read_text()
    # the HTML report: the binary's pages for the same scenario, byte for byte
    cli("reproduce", str(sc), "--html", str(tmp_path / "cli-html"))
    for page in ("index.html", "tiny-hackbench.html"):
        assert (tmp_path / "py-html" / page).read_bytes() == (
            tmp_path / "cli-html" / page
        ).read_bytes(), page


def test_trace_figures_from_a_run():
    r = schedlab.run(
        platform="smp:2",
        kernel="v6.18",
        workloads=["hackbench -p -l 20 -g 1"],
        duration="50ms",
        seed=1,
        trace=True,
    )
    t = r.trace()
    # hackbench's tasks were woken and ran: there are wakeup latencies to draw
    assert (t["event"] == "sched_wakeup").sum() > 0
    svg = schedlab.plot_latency({"6.18": r}, comm="hackbench")
    assert svg.startswith("<svg") and "6.18" in svg and "wakeup latency of hackbench" in svg
    assert schedlab.plot_latency({"6.18": r}, comm="hackbench") == svg  # same bytes
    assert "<svg" in schedlab.plot_latency([("a", r), ("b", r)], hist=True)
    tl = r.plot_timeline()
    assert tl.startswith("<svg") and "hackbench" in tl
    with pytest.raises(schedlab.SchedlabError, match="no wakeup of a task with comm 'nobody'"):
        schedlab.plot_latency({"x": r}, comm="nobody")
    untraced = schedlab.run(platform="smp:1", kernel="v6.18", workloads=["hackbench -p -l 2 -g 1"])
    with pytest.raises(ValueError, match="trace=True"):
        untraced.plot_timeline()


def test_sweep_plot_is_the_binarys(tmp_path):
    # a hand-made long table: two group counts, two seeds, one kernel
    rows = [
        ("smp:2", "v6.18", f"hackbench -g {g}", "1s", s, "time_s", "s", v)
        for g, s, v in [(1, 1, 1.0), (1, 2, 1.2), (2, 1, 2.0), (2, 2, 2.4)]
    ]
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    svg = schedlab.plot_sweep(df, "time_s")
    df.to_csv(tmp_path / "rows.csv", index=False)
    cli("plot", "sweep", str(tmp_path / "rows.csv"), "--metric", "time_s", "-o", str(tmp_path / "s.svg"))
    assert svg == (tmp_path / "s.svg").read_text()
    page = schedlab.report_sweep(df)
    assert page.lower().startswith("<!doctype html") and "data:image/svg+xml;base64," in page


def test_cyclictest_histogram_from_the_simulated_output():
    r = schedlab.run(
        platform="smp:1",
        kernel="v6.18",
        workloads=["cyclictest -t 1 -i 1000 -l 50 -h 100 -q"],
        duration="100ms",
    )
    svg = schedlab.plot_cyclictest(r.output)
    assert svg.startswith("<svg")
