"""bench/membership/startup.py runs our node on a small and a bigger log (first start, clean
restart, restart after kill -9) and reports every row; checks structure and that
the figures are positive, never speed (that is the bench's job)."""
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_startup_json():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "membership" / "startup.py"), "--records", "200,20000", "--repeats", "2",
                           "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    assert [r["start"] for r in report["rows"]] == ["first", "clean", "kill9"]
    for res in report["results"]:
        for start in ("first", "clean", "kill9"):
            got = res[start]
            assert math.isfinite(got["listening_ms"]) and 0 < got["listening_ms"] <= got["ready_ms"]
            assert got["epoch"] >= 2 and got["high_watermark"] > res["records"]
            if start != "first":
                samples = got["samples_ready_ms"]  # the row is the median of the starts
                assert len(samples) == 2 and min(samples) - 1 <= got["ready_ms"] <= max(samples) + 1
        assert 0 < res["open_ms"] < got["listening_ms"]  # from the node's own log
