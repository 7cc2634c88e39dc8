"""bench/raft/observers.py on our side only, with a few observers: the load tool reaches the
log end and the window counts their fetches; checks structure and that the figures are
positive, never speed (that is the bench's job)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_bench_observers_json_ours():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "raft" / "observers.py"), "--impls", "ours", "--counts", "0,3",
                           "--target", "2000", "--warmup", "1", "--measure", "3", "--turns", "1", "--turn", "2.5", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    loaded = report["results"]["ours"]["3"]
    assert 0 < loaded["catch_up_ms"] <= loaded["tailing_ms"]
    assert loaded["fetches"] > 0 and loaded["observer_mib_s"] > 0 and loaded["load_tool_cpu_pct"] > 0
    assert report["results"]["ours"]["0"]["latency"]["p99"] > 0
    # the same leader with the observers paused (no Fetch answered) and fetching, in
    # turns: the baseline of the CPU per fetch
    bracket = loaded["bracket"]
    assert bracket["paused_fetch_rate"] == 0 and bracket["turns"] == 1
    assert bracket["idle_cpu_pct"] > 0 and bracket["fetching_cpu_pct"] > 0 and bracket["fetch_rate"] > 0
    # 5,000 records/s with a 25 ms linger: some batches in the 3 s window, at most 40 a
    # second, give or take a batch at the window's ends and the whole-ms linger timer
    assert all(0 < r["batches_per_s"] <= 42 for r in report["results"]["ours"].values())
    assert all(r["readys_per_s"] > 0 for r in report["results"]["ours"].values())
    per_fetch = next(r for r in report["rows"] if r["metric"].startswith("leader CPU per observer fetch"))
    assert per_fetch["ours"] is not None and per_fetch["kafka"] is None
