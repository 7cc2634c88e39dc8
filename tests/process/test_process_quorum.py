"""Three ``python -m kraft_server`` processes on loopback, treated roughly:

- a static quorum (``controller.quorum.voters``) and a dynamic one (``kraft-storage
  format --initial-controllers``) each elect a leader; ``kill -9`` of the leader
  gives a new leader in a higher epoch, and every batch below the old leader's high
  watermark is still there, byte for byte, on both survivors; the killed node, started
  again, catches up to the same bytes;
- a torn tail (garbage appended, or the last batch cut in half) on a killed node is
  cut off at start-up; the node rejoins and its log passes validation;
- a node formatted for another cluster is refused with INCONSISTENT_CLUSTER_ID and
  the other two keep a working quorum.

The committed bytes are read from the segment files themselves (``read_batches``).
Every process is killed in a finalizer; every wait polls with a deadline.
"""
from __future__ import annotations

import importlib.util
import sys
import time

import pytest

from tests.support.kraft_nodes import (
    agreed_leader, committed_batches, make_quorum, read_batches, segment_files, validate_segments,
    wait_for,
)
from tools.kafka_dist.controller import random_cluster_id
from tools.kafka_dist.probe import describe_cluster, describe_quorum


def _need_pieces():
    for mod in ("kraft_server.raft.node", "tools.storage"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not there yet")


def _report(text: str) -> None:
    sys.stderr.write(f"\n{text}\n")


@pytest.fixture
def quorum_factory(request, tmp_path):
    _need_pieces()

    def make(mode: str, **kwargs):
        nodes = make_quorum(tmp_path, mode, random_cluster_id(), **kwargs)
        for n in nodes:
            request.addfinalizer(n.kill)
        for n in nodes:
            n.start()
        return nodes

    return make


def holds(node, batches: dict[int, bytes]) -> bool:
    """The node's segment files hold exactly these batches (and possibly more)."""
    mine = read_batches(node.data)
    return all(mine.get(base) == raw for base, raw in batches.items())


def wait_committed_records(leader, at_least: int, timeout: float):
    """The leader's high watermark, once it reaches ``at_least`` (when the controller
    layer writes NoOpRecords) or whatever it is after ``timeout`` (LeaderChange only)."""
    deadline = time.monotonic() + timeout
    q = describe_quorum("127.0.0.1", leader.port, timeout=2.0)
    while q.high_watermark < at_least and time.monotonic() < deadline:
        time.sleep(0.1)  # poll interval
        q = describe_quorum("127.0.0.1", leader.port, timeout=2.0)
    return q


def grow_log(nodes, leader, q, restarts: int = 2):
    """More committed batches without the controller layer: each graceful restart of
    the leader (SIGTERM: it resigns) starts a new epoch with a LeaderChange batch."""
    for _ in range(restarts):
        assert leader.stop() == 0, leader.log_tail()
        leader.start()
        leader, q = agreed_leader(nodes, timeout=60.0, min_epoch=q.leader_epoch + 1)
    return leader, q


@pytest.mark.parametrize("mode", ["static", "dynamic"])
def test_kill9_of_the_leader_loses_no_committed_record(quorum_factory, mode):
    nodes = quorum_factory(mode)
    t0 = time.monotonic()
    leader, q0 = agreed_leader(nodes)
    _report(f"[{mode}] leader {leader.node_id} in epoch {q0.leader_epoch} after {time.monotonic() - t0:.2f}s")

    # With the controller's NoOpRecords the log grows by itself; without, the log holds
    # LeaderChange batches only, and graceful leader restarts add some.
    q = wait_committed_records(leader, 20, timeout=3.0)
    if q.high_watermark < 20:
        leader, q0 = grow_log(nodes, leader, q0)
        q = wait_committed_records(leader, 0, timeout=0.0)
    assert q.leader_id == leader.node_id
    committed = committed_batches(read_batches(leader.data), q.high_watermark)
    assert len(committed) >= 3 and min(committed) == 0, f"too few committed batches: {sorted(committed)}"
    assert max(committed) < q.high_watermark

    t_kill = time.monotonic()
    leader.kill()  # SIGKILL: no EndQuorumEpoch; its connections are reset
    survivors = [n for n in nodes if n is not leader]
    new_leader, q1 = agreed_leader(nodes, timeout=60.0, exclude={leader.node_id},
                                   min_epoch=q0.leader_epoch + 1)
    failover = time.monotonic() - t_kill
    _report(f"[{mode}] failover after kill -9: {failover:.2f}s (epoch {q0.leader_epoch} -> {q1.leader_epoch}), "
            f"{len(committed)} committed batches up to offset {q.high_watermark}")
    assert q1.leader_epoch > q0.leader_epoch and q1.high_watermark >= q.high_watermark
    # The survivors saw the leader's connections reset and refused: they need not wait
    # out the 1.5 s fetch timeout (FAST_QUORUM) before electing (issue 12, item 1).
    assert failover < 1.5, f"failover took {failover:.2f}s: the fetch timeout was waited"

    for n in survivors:
        wait_for(lambda n=n: holds(n, committed), 30.0, f"node {n.node_id} to hold the committed batches")

    # The killed node comes back as a follower and catches up to the new leader's bytes.
    leader.start()
    q2 = wait_committed_records(new_leader, q1.high_watermark + 1, timeout=0.0)
    target = committed_batches(read_batches(new_leader.data), q2.high_watermark)
    t_restart = time.monotonic()
    wait_for(lambda: holds(leader, target), 60.0, f"restarted node {leader.node_id} to catch up")
    _report(f"[{mode}] restarted node {leader.node_id} caught up to offset {q2.high_watermark} "
            f"in {time.monotonic() - t_restart:.2f}s")
    assert holds(leader, committed)
    same, _ = agreed_leader(nodes, timeout=30.0)
    assert same.node_id == new_leader.node_id  # a rejoining voter does not disrupt the leader
    for n in nodes:
        validate_segments(n.data)


def _append_garbage(node) -> int:
    path = segment_files(node.data)[-1]
    with open(path, "ab") as f:
        f.write(b"\x00\x00\x00\x00\x00\x00\x00\x09\x00\x00\x01\x00garbage after a torn write")
    return path.stat().st_size


def _cut_last_batch(node) -> int:
    """A power loss during the last write: that batch was never fsync'd, so no seal of
    the batch index (written after each fsync) vouches for it either."""
    from kraft_server.log import index_seal
    from wire.records import iter_headers
    path = segment_files(node.data)[-1]
    buf = path.read_bytes()
    batches = list(iter_headers(buf))
    last_pos, last = batches[-1]
    with open(path, "r+b") as f:
        f.truncate(last_pos + last.size // 2)
    index_seal.cut(path.with_suffix(index_seal.SEAL_SUFFIX), len(batches) - 1)
    return last.base_offset


def test_a_torn_tail_is_repaired_at_start_and_the_node_rejoins(quorum_factory):
    nodes = quorum_factory("dynamic")
    leader, q = agreed_leader(nodes)
    if wait_committed_records(leader, 10, timeout=2.0).high_watermark < 10:  # no NoOpRecords yet
        leader, q = grow_log(nodes, leader, q, restarts=1)
    follower = next(n for n in nodes if n is not leader)
    committed = committed_batches(read_batches(leader.data), q.high_watermark)
    wait_for(lambda: holds(follower, committed), 30.0, "the follower to replicate")

    for damage in (_append_garbage, _cut_last_batch):
        warnings = follower.log_path.read_text(errors="replace").count("recovering")
        follower.kill()
        what = damage(follower)
        with pytest.raises(AssertionError):
            validate_segments(follower.data)  # the damage is there
        follower.start()
        leader, q = agreed_leader(nodes, timeout=60.0)
        target = committed_batches(read_batches(leader.data), q.high_watermark)
        wait_for(lambda: holds(follower, target), 60.0, f"node {follower.node_id} to rejoin after {damage.__name__}")
        wait_for(lambda: follower.log_path.read_text(errors="replace").count("recovering") > warnings,
                 10.0, "the recovery warning in the log")
        end = validate_segments(follower.data)
        assert end >= q.high_watermark
        _report(f"{damage.__name__} ({what}): repaired, rejoined, log end {end}")


def test_a_node_of_another_cluster_is_refused_and_the_quorum_keeps_working(quorum_factory):
    from tests.support.kraft_nodes import vote_probe
    from wire.errors import ErrorCode
    nodes = quorum_factory("static", cluster_ids={3: random_cluster_id()})
    stranger = nodes[2]
    leader, q = agreed_leader(nodes, exclude={3})
    assert leader.node_id in (1, 2)

    # What the stranger sends, a peer refuses: Vote with its cluster id. The others agreeing
    # on a leader says nothing of the stranger's own start: wait for it to answer.
    stranger_cluster = wait_for(lambda: describe_cluster("127.0.0.1", stranger.port), 30.0,
                                "node 3 answering DescribeCluster").cluster_id
    assert stranger_cluster != describe_cluster("127.0.0.1", leader.port).cluster_id
    for peer in nodes[:2]:
        assert vote_probe(peer.port, stranger_cluster, candidate_id=3, voter_id=peer.node_id) \
            == ErrorCode.INCONSISTENT_CLUSTER_ID

    # The stranger never follows anyone; the others keep electing and committing.
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        assert describe_cluster("127.0.0.1", stranger.port).controller_id != leader.node_id
        assert stranger.proc.poll() is None, stranger.log_tail()
        time.sleep(0.2)  # poll interval
    leader.kill()
    survivor = next(n for n in nodes[:2] if n is not leader)
    # One of two remaining same-cluster voters cannot win a 3-voter election alone:
    # the stranger's vote must not count. Restart the killed one and the quorum recovers.
    with pytest.raises(AssertionError):
        agreed_leader(nodes, timeout=4.0, exclude={leader.node_id, 3})
    leader.start()
    again, q2 = agreed_leader(nodes, timeout=60.0, exclude={3}, min_epoch=q.leader_epoch + 1)
    assert again.node_id in (1, 2) and q2.high_watermark > q.high_watermark
    assert read_batches(stranger.data) == {}  # it never replicated nor won anything
    assert survivor.proc.poll() is None


BOOTSTRAP_SNAPSHOT = "00000000000000000000-0000000000.checkpoint"


def _snapshots(node) -> list[int]:
    """End offsets of the node's snapshots, the bootstrap one left out."""
    part = node.data / "__cluster_metadata-0"
    return sorted(int(p.name.split("-")[0]) for p in part.glob("*.checkpoint") if p.name != BOOTSTRAP_SNAPSHOT)


def _log_start(node) -> int:
    files = segment_files(node.data)
    return int(files[0].name.split(".")[0]) if files else 0


def _controller_wired() -> bool:
    from pathlib import Path
    import kraft_server.shell.wiring
    return "kraft_server.controller" in Path(kraft_server.shell.wiring.__file__).read_text()


def test_a_node_far_below_the_log_start_receives_a_snapshot(quorum_factory):
    if not _controller_wired():
        pytest.skip("snapshot creation (kraft_server/controller, metadata.log.max.record.bytes."
                    "between.snapshots) is not wired into kraft_server/shell/wiring.py yet")
    nodes = quorum_factory("dynamic", extra=(
        "metadata.log.max.record.bytes.between.snapshots=2000",
        "internal.metadata.log.segment.bytes=2048",
        "metadata.max.retention.bytes=1",
        "metadata.max.retention.ms=1",
    ))
    leader, q = agreed_leader(nodes)
    laggard = next(n for n in nodes if n is not leader)
    wait_for(lambda: read_batches(laggard.data), 30.0, "the laggard to replicate something")
    laggard.kill()
    behind = max(read_batches(laggard.data))
    t0 = time.monotonic()
    wait_for(lambda: _snapshots(leader) and _log_start(leader) > behind, 60.0,
             f"the leader to snapshot and delete the segments below offset {behind}")
    _report(f"leader snapshots {_snapshots(leader)[-3:]}, log start {_log_start(leader)} > laggard's "
            f"{behind}, after {time.monotonic() - t0:.1f}s")

    laggard.start()
    start = _log_start(leader)
    wait_for(lambda: any(s >= start for s in _snapshots(laggard)), 60.0, "the laggard to install a snapshot")
    # It could not have made that snapshot itself: the records below `start` are gone.
    assert "sent FetchSnapshotRequest" in laggard.log_path.read_text(errors="replace")
    leader, q = agreed_leader(nodes, timeout=30.0)
    tail = {b: raw for b, raw in committed_batches(read_batches(leader.data), q.high_watermark).items()
            if b >= max(_snapshots(laggard))}
    wait_for(lambda: holds(laggard, tail), 60.0, "the laggard to catch up after the snapshot")
    validate_segments(laggard.data)
    assert laggard.proc.poll() is None
