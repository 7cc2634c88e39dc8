"""bench/membership/membership.py --quick --json: an empty controller joins a one-voter quorum
whose log holds 10,000 records, ours and Kafka 4.3.1's, with the real
``kafka-metadata-quorum add-controller``. Checks the structure and that the
figures are positive; never asserts on speed. About 15-30 s on the project machine
(three JVMs start), so it is marked ``java`` but not ``slow``.

Our rows are checked only when our node advertises AddRaftVoter; otherwise they
must read "n/a (AddRaftVoter unsupported)".
"""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.java

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "membership" / "membership.py"

from bench.membership.membership import ROWS, UNSUPPORTED  # noqa: E402
from bench.membership.membership_log import build_leader_dir, format_node  # noqa: E402
from bench.membership.membership_nodes import find_voters_record  # noqa: E402


def _positive(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def _nonnegative(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0


def test_generated_leader_dir(tmp_path):
    """The generated log: offsets continuous, epoch 1, the VotersRecord of node 1 at
    offset 2, a snapshot at a batch boundary near the end; node 2 formats empty."""
    from kraft_server.log.snapshots import scan_snapshots
    from tests.support.kraft_nodes import validate_segments
    props = {"process.roles": "controller", "controller.listener.names": "CONTROLLER",
             "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
             "controller.quorum.bootstrap.servers": "127.0.0.1:19093"}
    for node, port in ((1, 19093), (2, 19094)):
        p = dict(props, **{"node.id": str(node), "listeners": f"CONTROLLER://127.0.0.1:{port}",
                           "log.dirs": str(tmp_path / f"d{node}"),
                           "metadata.log.dir": str(tmp_path / f"d{node}")})
        (tmp_path / f"n{node}.properties").write_text("".join(f"{k}={v}\n" for k, v in p.items()))
    gen = build_leader_dir(tmp_path / "n1.properties", "MkU3OEVBNTcwNTJENDM2Qk", 2000, batch_records=3)
    assert gen.log_end_offset == 2000
    assert validate_segments(tmp_path / "d1") == 2000
    assert find_voters_record(gen.partition_dir, 1) == 2
    assert find_voters_record(gen.partition_dir, 1, gen.segment_bytes) is None
    assert 1800 <= gen.snapshot_id.offset < 1810 and gen.snapshot_id.epoch == 1
    assert gen.snapshot_id in scan_snapshots(gen.partition_dir, clean=False)
    format_node(tmp_path / "n2.properties", "MkU3OEVBNTcwNTJENDM2Qk", no_initial_controllers=True)
    assert (tmp_path / "d2" / "meta.properties").exists()


@pytest.mark.slow  # a bench smoke (JVM quorums)
def test_bench_membership_quick_json():
    proc = subprocess.run([sys.executable, str(BENCH), "--quick", "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    assert report["meta"]["quick"] is True and report["meta"]["sizes"] == [10000]
    rows = report["rows"]
    assert [r["metric"] for r in rows] == [label for label, _, _ in ROWS]
    assert report["meta"]["repeat"] == 1
    (kafka,) = report["results"]["10000"]["kafka"]
    (ours,) = report["results"]["10000"]["ours"]
    # Kafka answers an empty replica's Fetch with its latest snapshot: the generated one.
    assert kafka["node2_snapshot_fetched"] == kafka["snapshot"]
    assert kafka["voters_record_offset"] >= kafka["log_end_offset"]
    assert kafka["high_watermark"] > kafka["voters_record_offset"]
    for r in rows:
        check = _nonnegative if r["key"] in ("listed_to_committed_ms", "request_to_committed_ms") else _positive
        assert check(r["kafka"]), r
        if ours.get("unsupported"):
            if r["key"] not in ("leader_ready_ms", "leader_rss_mib"):
                assert r["ours"] == UNSUPPORTED and r["ratio"] is None, r
        else:
            assert check(r["ours"]), r
            if r["below_resolution"]:
                assert r["ratio"] is None, r
            else:
                assert _nonnegative(r["ratio"]), r
    main = {r["key"]: r for r in rows}
    assert math.isclose(main["total_ms"]["kafka"],
                        main["catch_up_ms"]["kafka"] + main["add_to_committed_ms"]["kafka"])
