"""The ``ReplicatedLog`` / ``QuorumStateStore`` contract (``kraft_server/raft/log_api.py``),
run against the on-disk log and the in-memory one alike."""
from __future__ import annotations

import uuid

import pytest

from kraft_server.log.bootstrap import DynamicVoter, render_bootstrap_snapshot, write_bootstrap_snapshot
from kraft_server.log.file_log import FileReplicatedLog
from kraft_server.log.quorum_state_file import FileQuorumStateStore
from kraft_server.common.values import ElectionState, OffsetAndEpoch
from wire.records import ControlRecordType, control_batch, data_batch, frame_metadata_record, iter_headers

try:
    from kraft_server.log import memory
except ImportError:  # pragma: no cover - the in-memory log arrives separately
    memory = None

KINDS = ["file"] + (["memory"] if memory is not None else [])
VOTER = DynamicVoter(1, "127.0.0.1", 9093, uuid.UUID(int=12345))


def make_log(kind, tmp_path, bootstrap: bool = False):
    if kind == "file":
        if bootstrap:
            write_bootstrap_snapshot(tmp_path / "__cluster_metadata-0", [VOTER], "CONTROLLER", now_ms=7)
        return FileReplicatedLog.open(tmp_path)
    return memory.MemoryLog(render_bootstrap_snapshot([VOTER], "CONTROLLER", now_ms=7) if bootstrap else None)


def make_store(kind, tmp_path):
    if kind == "file":
        return FileQuorumStateStore(tmp_path, static_voter_ids=[1, 2, 3])
    return memory.MemoryQuorumStateStore()


def batch(offset: int, epoch: int, n: int = 2, size: int = 10) -> bytes:
    values = [frame_metadata_record(0, 0, bytes([i % 256]) * size) for i in range(n)]
    return data_batch(offset, epoch, 1_000 + offset, values)


def fill(log, epochs) -> list[bytes]:
    """Append one 2-record batch per entry of ``epochs``."""
    out = []
    for epoch in epochs:
        b = batch(log.end_offset(), epoch)
        log.append(b)
        out.append(b)
    return out


@pytest.fixture(params=KINDS)
def kind(request):
    return request.param


@pytest.fixture
def log(kind, tmp_path):
    log = make_log(kind, tmp_path)
    yield log
    getattr(log, "close", lambda: None)()


def test_fresh_log(log):
    assert (log.start_offset(), log.end_offset(), log.flushed_offset()) == (0, 0, 0)
    assert log.last_fetched_epoch() == 0
    assert log.latest_snapshot() is None
    assert log.read(0, 1000) == b""
    assert log.bootstrap_checkpoint() is None


def test_append_then_flush(log):
    fill(log, [1, 1, 2])
    assert log.end_offset() == 6
    assert log.flushed_offset() == 0
    log.flush()
    assert log.flushed_offset() == 6
    assert log.last_fetched_epoch() == 2


def test_append_requires_the_log_end_offset(log):
    fill(log, [1])
    with pytest.raises(ValueError):
        log.append(batch(5, 1))
    assert log.end_offset() == 2


def test_append_refuses_an_older_epoch(log):
    fill(log, [3])
    with pytest.raises(ValueError):
        log.append(batch(2, 2))
    assert log.end_offset() == 2


def test_append_several_batches_at_once(log):
    data = batch(0, 1) + batch(2, 1) + batch(4, 3)
    log.append(data)
    assert log.end_offset() == 6
    assert log.last_fetched_epoch() == 3


def test_read_whole_batches(log):
    batches = fill(log, [1, 1, 1])
    assert log.read(0, 1 << 20) == b"".join(batches)
    assert log.read(2, 1 << 20) == b"".join(batches[1:])
    assert log.read(3, 1 << 20) == b"".join(batches[1:])  # mid-batch: from its start
    assert log.read(0, 1) == batches[0]  # at least one batch (KIP-74)
    assert log.read(0, len(batches[0]) + 1) == batches[0]
    assert log.read(6, 100) == b""


def test_truncate(log):
    fill(log, [1, 1, 2, 3])
    log.flush()
    log.truncate_to(4)
    assert log.end_offset() == 4
    assert log.flushed_offset() == 4
    assert log.last_fetched_epoch() == 1
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(4, 1)
    fill(log, [4])
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(4, 1)
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(4, 1)
    assert log.end_offset_for_epoch(4) == OffsetAndEpoch(6, 4)


def test_truncate_mid_batch_drops_the_batch(log):
    fill(log, [1, 1])
    log.truncate_to(3)
    assert log.end_offset() == 2


def test_truncate_past_end_is_a_no_op(log):
    fill(log, [1])
    log.truncate_to(10)
    assert log.end_offset() == 2


def test_end_offset_for_epoch(log):
    fill(log, [1, 1, 3, 3, 5])  # epoch 1: [0,4), 3: [4,8), 5: [8,10)
    assert log.end_offset_for_epoch(5) == OffsetAndEpoch(10, 5)
    assert log.end_offset_for_epoch(6) == OffsetAndEpoch(10, 5)
    assert log.end_offset_for_epoch(4) == OffsetAndEpoch(8, 3)
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(8, 3)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(4, 1)
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(4, 1)


def test_empty_log_end_offset_for_epoch(log):
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(0, 0)


def test_control_batches_are_ordinary_batches(log):
    cb = control_batch(0, 2, 5, [(ControlRecordType.LEADER_CHANGE, b"\x00\x00\x00\x00\x00\x01\x00\x00")])
    log.append(cb)
    fill(log, [2])
    assert log.end_offset() == 3
    assert log.read(0, 1) == cb


def write_snapshot(log, snapshot_id, payload=b"snapshot-bytes"):
    writer = log.create_snapshot(snapshot_id)
    writer.append(payload[:5])
    writer.append(payload[5:])
    writer.freeze()
    return payload


def test_snapshot_create_and_read(log):
    fill(log, [1, 1, 2])
    payload = write_snapshot(log, OffsetAndEpoch(4, 1))
    assert log.latest_snapshot() == OffsetAndEpoch(4, 1)
    assert log.snapshot_size(OffsetAndEpoch(4, 1)) == len(payload)
    assert log.read_snapshot(OffsetAndEpoch(4, 1), 0, 1000) == payload
    assert log.read_snapshot(OffsetAndEpoch(4, 1), 3, 4) == payload[3:7]


def test_aborted_snapshot_is_invisible(log):
    fill(log, [1])
    writer = log.create_snapshot(OffsetAndEpoch(2, 1))
    writer.append(b"partial")
    writer.abort()
    assert log.latest_snapshot() is None


def test_delete_before_snapshot(log):
    fill(log, [1, 1, 2, 2])
    write_snapshot(log, OffsetAndEpoch(4, 1))
    log.delete_before_snapshot(OffsetAndEpoch(4, 1))
    assert log.start_offset() == 4
    assert log.end_offset() == 8
    assert log.latest_snapshot() == OffsetAndEpoch(4, 1)
    assert log.read(4, 1 << 20)[:8] == (4).to_bytes(8, "big")
    assert log.last_fetched_epoch() == 2
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(8, 2)


def test_reset_to_snapshot(log):
    fill(log, [1, 1])
    write_snapshot(log, OffsetAndEpoch(10, 3))
    log.reset_to_snapshot(OffsetAndEpoch(10, 3))
    assert (log.start_offset(), log.end_offset()) == (10, 10)
    assert log.flushed_offset() == 10
    assert log.last_fetched_epoch() == 3
    assert log.latest_snapshot() == OffsetAndEpoch(10, 3)
    fill(log, [4])
    assert log.end_offset() == 12
    assert log.read(10, 1000)[:8] == (10).to_bytes(8, "big")
    assert log.end_offset_for_epoch(4) == OffsetAndEpoch(12, 4)


def test_reset_to_snapshot_forgets_older_snapshots(log):
    """Kafka's truncateToLatestSnapshot forgets the snapshots below the new log start,
    so the earliest snapshot is the one at the start. (The simulation's log once kept
    them: the leader then answered an epoch older than its log with a DivergingEpoch
    at the log start instead of the snapshot, and a follower kept an uncommitted batch
    below the HWM; simulation seeds 100102, 200084 and 300011.)"""
    fill(log, [1, 1])
    write_snapshot(log, OffsetAndEpoch(2, 1))
    write_snapshot(log, OffsetAndEpoch(10, 3))
    log.reset_to_snapshot(OffsetAndEpoch(10, 3))
    assert log.snapshot_ids() == [OffsetAndEpoch(10, 3)]
    fill(log, [4])
    # An epoch older than the log ends at the snapshot at the log start.
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(10, 3)
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(10, 3)


def test_delete_before_snapshot_forgets_older_snapshots(log):
    fill(log, [1, 1, 2, 2])
    write_snapshot(log, OffsetAndEpoch(2, 1))
    write_snapshot(log, OffsetAndEpoch(6, 2))
    log.delete_before_snapshot(OffsetAndEpoch(6, 2))
    assert log.start_offset() == 6
    assert log.snapshot_ids() == [OffsetAndEpoch(6, 2)]
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(6, 2)


def test_reset_to_a_missing_snapshot_is_refused(log):
    fill(log, [1])
    with pytest.raises(ValueError):
        log.reset_to_snapshot(OffsetAndEpoch(10, 3))
    assert log.end_offset() == 2


def test_bootstrap_checkpoint(kind, tmp_path):
    log = make_log(kind, tmp_path, bootstrap=True)
    data = log.bootstrap_checkpoint()
    assert data == render_bootstrap_snapshot([VOTER], "CONTROLLER", now_ms=7)
    assert [h.base_offset for _, h in iter_headers(data)] == [0, 3]
    assert log.latest_snapshot() is None  # 0-0 is not a snapshot of the log
    assert log.end_offset() == 0
    getattr(log, "close", lambda: None)()


# -- QuorumStateStore ---------------------------------------------------------------------

def test_quorum_state_store(kind, tmp_path):
    store = make_store(kind, tmp_path)
    assert store.read() is None
    voted = ElectionState(epoch=3, voted_id=2, voted_directory_id=uuid.UUID(int=99), data_version=1)
    store.write(voted)
    assert store.read() == voted
    leader = ElectionState(epoch=4, leader_id=1, voted_directory_id=uuid.UUID(int=0), data_version=1)
    store.write(leader)
    assert store.read() == leader


def test_quorum_state_store_v0(kind, tmp_path):
    store = make_store(kind, tmp_path)
    state = ElectionState(epoch=2, leader_id=1, voted_id=-1, voted_directory_id=uuid.UUID(int=0), data_version=0)
    store.write(state)
    assert store.read() == state
