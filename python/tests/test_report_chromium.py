"""The HTML report of `schedlab reproduce --html` and a few `schedlab plot` figures, opened in
headless Chromium (Debian's /usr/bin/chromium through playwright): every page renders, every
image loads, nothing is fetched from outside the page, no console or page error.

The binary is $SCHEDLAB_BIN (default target/debug/schedlab, built by `cargo test --workspace`).
Screenshots go to $SCHEDLAB_SCREENSHOTS when set (e.g. /tmp/plot-shots), else to pytest's
temporary directory.
"""

import os
import pathlib
import subprocess

import pytest

# scripts/test sets SCHEDLAB_REQUIRE_CHROMIUM=1: there a missing browser or playwright is a
# failure, not a skip (elsewhere the test skips with the reason)
REQUIRED = os.environ.get("SCHEDLAB_REQUIRE_CHROMIUM") == "1"
if REQUIRED:
    import playwright.sync_api as sync_api
else:
    sync_api = pytest.importorskip("playwright.sync_api")

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("SCHEDLAB_BIN", ROOT / "target" / "debug" / "schedlab"))
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Two kernels, two seeds of 20 ms each: a report in well under a second.
TINY = """\
name = "tiny-pipe"
title = "Tiny pipe scenario for the report test"
seed = "000_3ee2c634270bace4.txt"
platform = "smp:2"
workloads = ["stress-ng --pipe 1 --timeout 1s --metrics-brief"]
duration = "20ms"
runs = 2
quick_runs = 2
baseline = "v6.6"
metrics = ["bogo_ops_per_sec", "switches_per_op"]
notes = ["A writer and its reader on two CPUs: each write wakes the reader.", "Second <note> & more."]

[[variant]]
kernel = "v6.6"
label = "6.6"

[[variant]]
kernel = "v6.12"
label = "6.12"

[[published]]
kernel = "v6.6"
metric = "bogo_ops_per_sec"
value = 2000000
source = "made up for this test"

[[target]]
description = "switches per op above 0"
metric = "switches_per_op"
kernel = "v6.6"
min = 0.0

[[target]]
description = "switches per op above 1000 (a target that misses)"
metric = "switches_per_op"
kernel = "v6.12"
min = 1000.0
"""


def schedlab(*args, cwd):
    if not BIN.exists():
        pytest.fail(f"{BIN} does not exist: build it (cargo build -p schedlab-cli) or set SCHEDLAB_BIN")
    r = subprocess.run([str(BIN), *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"schedlab {' '.join(args)}: {r.stderr}"
    return r


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        (pytest.fail if REQUIRED else pytest.skip)(f"{CHROMIUM} not installed (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


def shots_dir(tmp_path):
    d = os.environ.get("SCHEDLAB_SCREENSHOTS")
    if d:
        pathlib.Path(d).mkdir(parents=True, exist_ok=True)
        return pathlib.Path(d)
    return tmp_path


def open_page(browser, url, shot):
    """Loads url; returns (page, problems) with every console error, page error, failed
    request and request leaving file:/data: URLs."""
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    problems = []
    page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.on(
        "request",
        lambda r: r.url.startswith(("file:", "data:")) or problems.append(f"external request: {r.url}"),
    )
    page.goto(url, wait_until="load")
    page.screenshot(path=str(shot), full_page=True)
    return page, problems


def images_loaded(page):
    return page.eval_on_selector_all(
        "img", "els => els.map(e => [e.getAttribute('alt'), e.complete, e.naturalWidth])"
    )


def test_reproduce_html_report_renders(browser, tmp_path):
    (tmp_path / "tiny.toml").write_text(TINY)
    schedlab("reproduce", "tiny.toml", "--quick", "--html", "report", "--no-progress", cwd=tmp_path)
    report = tmp_path / "report"
    assert sorted(p.name for p in report.iterdir()) == ["index.html", "tiny-pipe.html"]
    shots = shots_dir(tmp_path)

    page, problems = open_page(browser, (report / "index.html").as_uri(), shots / "plot-report-index.png")
    assert "schedlab" in page.title()
    assert page.inner_text("h1") == "schedlab reproductions"
    links = page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href'))")
    assert links == ["tiny-pipe.html"]
    assert problems == []
    page.close()

    page, problems = open_page(browser, (report / "tiny-pipe.html").as_uri(), shots / "plot-report-tiny-pipe.png")
    assert page.title() == "schedlab: tiny-pipe"
    assert page.inner_text("h1") == "Tiny pipe scenario for the report test"
    headings = page.eval_on_selector_all("h2", "els => els.map(e => e.textContent)")
    for h in ["Kernels", "Targets: 1 of 2 pass", "Published vs simulated", "Results", "Mechanism notes", "Text report"]:
        assert h in headings, headings
    # the one metric with a published value has a figure, and it loads
    imgs = images_loaded(page)
    assert len(imgs) == 1, imgs
    for alt, complete, width in imgs:
        assert complete and width > 0, (alt, complete, width)
    assert page.locator("td.pass").all_inner_texts() == ["PASS"]
    assert page.locator("td.miss").all_inner_texts() == ["MISS"]
    assert "Second <note> & more." in page.inner_text("body")
    assert problems == []
    page.close()


def test_plot_figures_render(browser, tmp_path):
    """A trace of a short run, drawn as latency CDF, histogram and timeline: each SVG loads
    as an image of the size it declares."""
    schedlab(
        "run", "--platform", "smp:2", "--kernel", "v6.12",
        "--workload", "stress-ng --pipe 1 --timeout 1s", "--duration", "10ms",
        "--trace", "run.trace", cwd=tmp_path,
    )
    figures = {
        "latency.svg": ["plot", "latency", "run.trace", "--comm", "stress-ng-pipe"],
        "latency-hist.svg": ["plot", "latency", "run.trace", "--hist"],
        "timeline.svg": ["plot", "timeline", "run.trace", "--from", "0.002", "--to", "0.004"],
    }
    imgs = ""
    for name, args in figures.items():
        schedlab(*args, "-o", name, cwd=tmp_path)
        imgs += f'<p><img src="{name}" alt="{name}"></p>\n'
    (tmp_path / "figures.html").write_text(f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>figures</title></head><body>{imgs}</body></html>")
    page, problems = open_page(browser, (tmp_path / "figures.html").as_uri(), shots_dir(tmp_path) / "plot-figures.png")
    loaded = images_loaded(page)
    assert [a for a, _, _ in loaded] == list(figures)
    for alt, complete, width in loaded:
        assert complete and width == 860, (alt, complete, width)
    assert problems == []
    page.close()


def test_sweep_report_renders(browser, tmp_path):
    """`schedlab sweep` then `schedlab report` (both through the Python package): the page
    renders in Chromium, every figure loads, nothing is fetched."""
    import sys

    (tmp_path / "s.toml").write_text(
        'platforms = ["smp:2"]\n'
        'kernels = ["v6.6", "v6.12"]\n'
        'workloads = ["hackbench -p -l 20 -g 1", "hackbench -p -l 20 -g 2"]\n'
        'seeds = "1..2"\n'
    )
    env = dict(os.environ, SCHEDLAB_PYTHON=sys.executable)
    for args in (["sweep", "s.toml", "--no-progress"], ["report", "s-sweep/results.parquet", "-o", "rep"]):
        p = subprocess.run([str(BIN), *args], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    page, problems = open_page(
        browser, (tmp_path / "rep" / "index.html").as_uri(), shots_dir(tmp_path) / "plot-sweep-report.png"
    )
    assert "sweep" in page.title().lower()
    imgs = images_loaded(page)
    assert imgs, "the sweep page has no figure"
    for alt, complete, width in imgs:
        assert complete and width > 0, (alt, complete, width)
    assert problems == []
    page.close()
