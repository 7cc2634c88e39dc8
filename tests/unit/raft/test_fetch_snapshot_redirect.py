"""When a Fetch is answered with a SnapshotId (KIP-630), as Kafka 4.3.1 decides it:

* ``KafkaRaftClient.tryCompleteFetchRequest``: FetchOffset 0 while the leader holds a
  snapshot other than the bootstrap checkpoint 0-0 -> the latest snapshot's id, even
  though the log still starts at 0 (an empty replica takes the snapshot and the tail,
  not the whole log);
* ``ReplicatedLog.validateOffsetAndEpoch``: the snapshot test is against the
  *earliest* snapshot (offset below the log start, offset at the log start with
  another epoch, or a LastFetchedEpoch older than the earliest snapshot's); only the
  id sent back is the latest. A position the log still holds is checked against the
  log's epochs, however old its epoch is next to the newest snapshot.
"""
from __future__ import annotations

import pytest

from kraft_server.common.values import OffsetAndEpoch
from kraft_server.raft.rpc.fetch import fetch_position, validate_position
from tests.support.raft_harness import ask, data_batches, drain, elect, fetch_request, make_node, partition
from tests.unit.log.test_log_contract import KINDS, make_log


def snapshot(log, sid):
    writer = log.create_snapshot(sid)
    writer.append(b"snapshot")
    writer.freeze()
    return sid


@pytest.fixture(params=KINDS)
def kind(request):
    return request.param


def epochs_log(kind, tmp_path, bootstrap=False):
    """Offsets 0-9 in epoch 1, 10-19 in epoch 2, 20-29 in epoch 3."""
    log = make_log(kind, tmp_path, bootstrap=bootstrap)
    for epoch in (1, 2, 3):
        log.append(data_batches(log.end_offset(), epoch, 10))
    log.flush()
    return log


def test_empty_replica_is_sent_the_latest_snapshot_though_the_log_starts_at_zero(kind, tmp_path):
    log = epochs_log(kind, tmp_path)
    snapshot(log, OffsetAndEpoch(12, 2))
    latest = snapshot(log, OffsetAndEpoch(25, 3))
    assert log.start_offset() == 0
    assert fetch_position(log, 0, 0) == ("snapshot", latest)
    # the log-only check alone would have served offset 0 from the log
    assert validate_position(log, 0, 0) == ("valid", OffsetAndEpoch(0, 0))


def test_bootstrap_checkpoint_alone_does_not_redirect(kind, tmp_path):
    log = epochs_log(kind, tmp_path, bootstrap=True)
    assert fetch_position(log, 0, 0) == ("valid", OffsetAndEpoch(0, 0))
    assert fetch_position(log, 5, 1) == ("valid", OffsetAndEpoch(5, 1))


def test_old_epoch_inside_the_log_is_valid_not_a_snapshot(kind, tmp_path):
    """The newest snapshot is in epoch 3; a fetcher at offset 15 (epoch 2) is still
    served from the log: the earliest snapshot (here the bootstrap 0-0) decides."""
    log = epochs_log(kind, tmp_path, bootstrap=True)
    snapshot(log, OffsetAndEpoch(25, 3))
    assert fetch_position(log, 15, 2) == ("valid", OffsetAndEpoch(15, 2))
    assert fetch_position(log, 10, 1) == ("valid", OffsetAndEpoch(10, 1))
    # a divergent position is still a divergence, not a snapshot
    assert fetch_position(log, 12, 1) == ("diverging", OffsetAndEpoch(10, 1))


def test_snapshot_rules_use_the_earliest_snapshot_and_answer_the_latest(kind, tmp_path):
    log = epochs_log(kind, tmp_path)
    earliest = snapshot(log, OffsetAndEpoch(12, 2))
    latest = snapshot(log, OffsetAndEpoch(25, 3))
    log.delete_before_snapshot(earliest)  # log start 12, snapshots 12-2 and 25-3
    assert log.start_offset() == 12
    assert fetch_position(log, 5, 1) == ("snapshot", latest)      # below the log start
    assert fetch_position(log, 12, 1) == ("snapshot", latest)     # at the start, other epoch
    assert fetch_position(log, 12, 2) == ("valid", OffsetAndEpoch(12, 2))
    assert fetch_position(log, 15, 2) == ("valid", OffsetAndEpoch(15, 2))  # older than latest: fine
    assert fetch_position(log, 22, 3) == ("valid", OffsetAndEpoch(22, 3))
    assert fetch_position(log, 15, 1) == ("snapshot", latest)     # epoch older than the earliest


def leader_with_log(snapshot_at=None):
    """Node 1 leads epoch 1 with 40 one-record batches after its LeaderChange batch."""
    node = make_node()
    elect(node)
    drain(node, 10_000)
    for i in range(40):
        node.leader_append(data_batches(node.log.end_offset(), node.epoch, 1))
    drain(node, 10_000)
    if snapshot_at is not None:
        snapshot(node.shell.log, OffsetAndEpoch(snapshot_at, node.epoch))
    return node


def test_leader_answers_an_empty_fetcher_with_its_snapshot():
    node = leader_with_log(snapshot_at=30)
    assert node.log.start_offset() == 0
    [resp] = ask(node, fetch_request(replica=2, epoch=1, offset=0, last_epoch=0, max_wait=0), 10_001)
    p = partition(resp)
    assert (p.snapshot_id.end_offset, p.snapshot_id.epoch) == (30, 1)
    assert not p.records
    # a replica with data is still served from the log
    [resp] = ask(node, fetch_request(replica=2, epoch=1, offset=5, last_epoch=1, max_wait=0), 10_002)
    p = partition(resp)
    assert p.snapshot_id.epoch == -1 and p.records


def test_leader_without_snapshot_serves_offset_zero_from_the_log():
    node = leader_with_log()
    [resp] = ask(node, fetch_request(replica=2, epoch=1, offset=0, last_epoch=0, max_wait=0), 10_001)
    p = partition(resp)
    assert p.snapshot_id.epoch == -1 and p.records
