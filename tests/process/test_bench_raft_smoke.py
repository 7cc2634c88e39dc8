"""bench/raft/raft.py --quick --json runs both quorums (ours and Kafka 4.3.1's TestRaftServer)
and reports every row. Checks structure and that the figures are positive; never
asserts on speed. About 60 s on the project machine (6 processes, 3 of them JVMs), so
it runs in `make test-slow`; each session's full bench run exercises the same code.
"""
from pathlib import Path

import pytest

from tests.support.bench_json import positive, quick_report

pytestmark = [pytest.mark.java, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "raft" / "raft.py"

ROWS = (
    "commit latency p50 (ms)", "commit latency p75 (ms)", "commit latency p99 (ms)",
    "commit latency p999 (ms)", "commit latency p99, linger 0, 1,000 records/s (ms)",
    "throughput held (records/s)",
    "failover: kill -9 -> new leader commits (ms, median)",
    "failover: SIGSTOP (silent) -> new leader commits (ms)",
    "  of which: kill -9 -> new leader elected (ms, median)",
    "start-up -> listening (ms, slowest of 3)", "start-up -> leader known (ms, slowest of 3)",
    "RSS of the leader under load (MiB)", "RSS, largest of 3 (MiB)",
    "overload: worst committed / highest rate held (rungs to 4x capacity)",
    "overload: worst committed / best committed on any rung",
    "overload: commit p99 of accepted records, worst rung (ms)",
    "overload: leader RSS, worst rung (MiB)",
)
OVERLOAD = {r for r in ROWS if r.startswith("overload:")}  # no ladder in a quick run
KAFKA_UNKNOWN = {"commit latency p50 (ms)"}  # TestRaftServer prints p75/p99/p999 only


def test_bench_raft_quick_json():
    report = quick_report(BENCH, timeout=300)
    rows = {r["metric"]: r for r in report["rows"]}
    assert tuple(rows) == ROWS
    for name, row in rows.items():
        # a window the quorum changed leader in was measured again (at most MAX_REPEATS
        # times); a row that failed even so would name why here
        assert row["failed"] == {}, (name, row)
        assert set(row["repeats"]) == {"ours", "kafka"}, (name, row)
        assert all(isinstance(n, int) and 0 <= n <= 3 for n in row["repeats"].values()), (name, row)
        if name in OVERLOAD:
            assert row["ours"] is None and row["met"] is None, (name, row)
            continue
        assert positive(row["ours"]), (name, row)
        if name in KAFKA_UNKNOWN:
            assert row["kafka"] is None and row["ratio"] is None
        else:
            assert positive(row["kafka"]), (name, row)
            assert positive(row["ratio"]), (name, row)
    for impl in ("ours", "kafka"):
        res = report["results"][impl]
        assert res["ladder"] and res["ladder"][0]["rate"] == report["meta"]["rate"]
        assert res["failovers"] and res["failovers"][0]["new_leader"] != res["failovers"][0]["killed"]
        assert res["pause_failover"]["new_leader"] != res["pause_failover"]["stopped"]
        assert res["linger0"]["1000"]["samples" if impl == "ours" else "p99"] > 0
        assert res["repeats"] == rows["commit latency p99 (ms)"]["repeats"][impl]
        assert res["linger0"]["1000"]["repeats"] == rows[
            "commit latency p99, linger 0, 1,000 records/s (ms)"]["repeats"][impl]
