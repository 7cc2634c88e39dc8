"""bench/wire/codec.py --quick --json runs and reports every row and direction.

Checks the structure and that the numbers are positive; never asserts on speed.
"""
import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "wire" / "codec.py"

ROWS = ("metadata_response_v12", "fetch_response_v16", "describe_quorum_response_v2",
        "vote_request_v2", "record_batch_1000")
DIRECTIONS = ("encode", "decode")
LIBS = ("ours", "kafka_python", "kio")
PEERS = ("kafka_python", "kio")


def _have_our_records() -> bool:
    return importlib.util.find_spec("wire.records") is not None


def _positive(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def test_bench_quick_json():
    proc = subprocess.run([sys.executable, str(BENCH), "--quick", "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout)

    meta = report["meta"]
    assert meta["quick"] is True
    assert meta["pure_codecs"] == "wire codecs: pure Python (KRAFT_PURE_PYTHON is set)"
    results = report["results"]
    assert {(r["row"], r["direction"]) for r in results} == {
        (row, d) for row in ROWS for d in DIRECTIONS}
    assert len(results) == len(ROWS) * len(DIRECTIONS)

    # The bench asserted byte-identical encodings before timing; it says which libraries.
    for row in ROWS:
        libs = set(meta["identical_bytes"][row])
        assert set(PEERS) <= libs
        if row != "record_batch_1000" or _have_our_records():
            assert "ours" in libs

    for r in results:
        where = f"{r['row']}/{r['direction']}"
        assert r["bytes"] > 0, where
        assert "speedup_vs_best_peer" in r, where
        for lib in PEERS:
            assert _positive(r[f"{lib}_us"]), where
        assert r["best_peer"] in PEERS, where
        assert r["best_peer_us"] == min(r[f"{p}_us"] for p in PEERS), where
        ours_expected = r["row"] != "record_batch_1000" or _have_our_records()
        if ours_expected:
            assert _positive(r["ours_us"]), where
            assert _positive(r["speedup_vs_best_peer"]), where
            assert math.isclose(r["speedup_vs_best_peer"], r["best_peer_us"] / r["ours_us"]), where
            # the pure-Python column, timed in a KRAFT_PURE_PYTHON=1 child
            assert _positive(r["pure_us"]) and _positive(r["pure_speedup_vs_best_peer"]), where
        else:
            assert r["ours_us"] is None and r["speedup_vs_best_peer"] is None, where
