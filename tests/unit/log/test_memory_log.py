"""The in-memory log's extras beyond the shared contract (tests/unit/log/test_log_contract.py):
crash semantics and the epoch lookups the core relies on."""
from __future__ import annotations

from kraft_server.log.memory import MemoryLog, MemoryQuorumStateStore
from kraft_server.common.values import ElectionState, OffsetAndEpoch
from tests.support.raft_harness import data_batches


def test_crash_drops_only_what_was_not_flushed():
    log = MemoryLog()
    log.append(data_batches(0, 1, 3))
    log.flush()
    log.append(data_batches(3, 2, 2))
    assert (log.end_offset(), log.flushed_offset()) == (5, 3)
    log.crash()
    assert log.end_offset() == 3 and log.last_fetched_epoch() == 1
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(3, 1)


def test_store_survives_crash_because_writes_are_durable():
    store = MemoryQuorumStateStore()
    store.write(ElectionState(3, -1, 2))
    assert store.read() == ElectionState(3, -1, 2)


def test_end_offset_for_epoch_follows_kafka_leader_epoch_cache():
    log = MemoryLog()
    log.append(data_batches(0, 2, 2) + data_batches(2, 4, 3))
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(2, 2)
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(2, 2)     # largest epoch <= 3
    assert log.end_offset_for_epoch(4) == OffsetAndEpoch(5, 4)
    assert log.end_offset_for_epoch(9) == OffsetAndEpoch(5, 4)
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(0, 1)     # older than anything: ends at our start


def test_truncate_drops_whole_batches_and_epochs():
    log = MemoryLog()
    log.append(data_batches(0, 1, 2) + data_batches(2, 3, 2))
    log.truncate_to(3)                 # inside nothing: batches are single-record, keeps 0..2
    assert log.end_offset() == 3 and log.last_fetched_epoch() == 3
    log.truncate_to(2)
    assert log.end_offset() == 2 and log.end_offset_for_epoch(3) == OffsetAndEpoch(2, 1)


def test_snapshot_moves_log_start_and_answers_epoch_lookups():
    log = MemoryLog()
    log.append(data_batches(0, 1, 4))
    writer = log.create_snapshot(OffsetAndEpoch(3, 1))
    writer.append(log.read(0, 1 << 20))
    writer.freeze()
    log.delete_before_snapshot(OffsetAndEpoch(3, 1))
    assert log.start_offset() == 3 and log.latest_snapshot() == OffsetAndEpoch(3, 1)
    log.reset_to_snapshot(OffsetAndEpoch(3, 1))
    assert (log.start_offset(), log.end_offset(), log.last_fetched_epoch()) == (3, 3, 1)
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(3, 1)
