"""bench/controller/scale.py --sizes 2000 --sides ours --json runs our side of the
scale bench (issue 41) and reports every row with a plausible number; never asserts
on speed (but the stand-in killed is re-led before its session could expire: fencing
on evidence took effect, and no heartbeating stand-in was fenced). Slow: a controller
started twice, 30 stand-ins, a snapshot to wait for (about half a minute)."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


def test_scale_bench_small_reports_every_row():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "controller" / "scale.py"), "--sizes", "2000",
                           "--sides", "ours", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    rows = report["2000"]["ours"]
    from bench.controller.scale import ROWS
    assert tuple(rows) == tuple(ROWS.values())
    assert all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in rows.values()), rows
    assert all(v > 0 for k, v in rows.items() if "count" not in k), rows
    assert rows["stand-in kill -9 -> a third re-led (ms)"] < 4000  # less than the 9 s session
    assert rows["stand-ins fenced while heartbeating (count)"] == 0
