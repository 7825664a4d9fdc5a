"""The shipped Python example runs and writes its figures (examples/python)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_delay_dequeue_example(tmp_path):
    p = subprocess.run(
        [sys.executable, str(ROOT / "examples/python/delay_dequeue.py"), "--runs", "1", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    # the table names every kernel of the seed-000 scenario and the published v6.6.78 figure
    assert "v6.6.78" in p.stdout and "2487746" in p.stdout and "v6.12.81 NO_DELAY_DEQUEUE" in p.stdout
    for f in ("bogo_ops.svg", "latency.svg", "rows.csv"):
        assert (tmp_path / f).stat().st_size > 0, f
    assert "<svg" in (tmp_path / "latency.svg").read_text()[:200]
