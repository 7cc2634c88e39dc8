"""The ``.batchindex`` of a segment (``kraft_server/log/batch_index.py``): start-up takes
the flushed batches from it instead of scanning them again, and recovers exactly as a
full scan would whatever the index holds (missing, stale, torn, garbage)."""
from __future__ import annotations

import os
import random
import struct

import pytest

from kraft_server.log import batch_index
from kraft_server.log.file_log import FileReplicatedLog
from wire.records import build_batch

PART = "__cluster_metadata-0"


def batch(offset: int, epoch: int, n: int = 1) -> bytes:
    return build_batch(offset, epoch, 1000 + offset, [(None, os.urandom(20))] * n)


def fill(log, epochs, rng=None):
    rng = rng or random.Random(0)
    for e in epochs:
        log.append(batch(log.end_offset(), e, rng.randint(1, 5)))


def state(log):
    seg = log.segments[-1]
    return (list(seg.positions), list(seg.next_offsets), seg.last_timestamp, log.epochs.entries,
            log.end_offset(), log.read(0, 1 << 30))


def reference(tmp_path):
    """The same directory opened with every index removed (a full scan)."""
    part = tmp_path / PART
    for f in part.glob("*" + batch_index.SUFFIX):
        f.unlink()
    with FileReplicatedLog(part) as log:
        assert log.segments[-1].from_index == 0
        return state(log)


def test_reopen_takes_flushed_batches_from_the_index(tmp_path):
    with FileReplicatedLog.open(tmp_path) as log:
        fill(log, [1] * 50 + [2] * 30 + [5] * 20)
        log.flush()
        expected = state(log)
    index = tmp_path / PART / ("0" * 20 + batch_index.SUFFIX)
    assert index.stat().st_size == 100 * batch_index.ENTRY_SIZE
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 100
        assert state(log) == expected
        assert log.epochs.entries == [(1, 0), (2, expected[1][49]), (5, expected[1][79])]
        fill(log, [6] * 5)  # appends after an indexed open go on indexing
        log.flush()
        expected = state(log)
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 105 and state(log) == expected
    assert reference(tmp_path) == expected


def test_unflushed_batches_are_scanned_and_a_torn_tail_cut(tmp_path):
    with FileReplicatedLog.open(tmp_path) as log:
        fill(log, [1] * 40)
        log.flush()
        fill(log, [1] * 10)  # written, never flushed: not in the index
        seg = log.segments[0]
        os.pwrite(seg.fd, b"\x00\x00\x00\x00\x00\x00\x00\x33\x00\x00\x01", seg.size)  # a torn batch
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 40
        assert log.end_offset() == log.segments[0].next_offsets[-1] and len(log.segments[0].positions) == 50
        assert log.recovery_problems  # the torn batch was cut
        expected = state(log)
    assert reference(tmp_path) == expected


def test_truncation_truncates_the_index(tmp_path):
    with FileReplicatedLog.open(tmp_path) as log:
        fill(log, [1] * 30)
        log.flush()
        log.truncate_to(log.segments[0].next_offsets[9])  # keep 10 batches
        fill(log, [2] * 5)
        log.flush()
        data = log.read(0, 1 << 30)
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 15 and log.read(0, 1 << 30) == data
        got = state(log)
    assert got == reference(tmp_path)


@pytest.mark.parametrize("damage", ["stale", "garbage", "short", "empty", "shifted", "zero-page"])
def test_a_bad_index_falls_back_to_a_full_scan(tmp_path, damage):
    with FileReplicatedLog.open(tmp_path) as log:
        fill(log, [1] * 30)
        log.flush()
    index = tmp_path / PART / ("0" * 20 + batch_index.SUFFIX)
    good = index.read_bytes()
    if damage == "stale":
        # the segment was truncated and rewritten but the index kept its old entries
        with FileReplicatedLog.open(tmp_path) as log:
            log.truncate_to(log.segments[0].next_offsets[19])
            fill(log, [3] * 10, random.Random(9))
            log.flush()
        index.write_bytes(good)
    elif damage == "garbage":
        index.write_bytes(os.urandom(len(good)))
    elif damage == "short":
        index.write_bytes(good[:-7])  # a torn last entry: the whole entries before it still count
    elif damage == "empty":
        index.write_bytes(b"")
    elif damage == "zero-page":
        # entries 5-14 never reached the disk, the last one did (a power loss)
        size = batch_index.ENTRY_SIZE
        index.write_bytes(good[:5 * size] + bytes(10 * size) + good[15 * size:])
    else:
        entries = bytearray(good)
        struct.pack_into("<q", entries, len(entries) - batch_index.ENTRY_SIZE, 5)  # last position wrong
        index.write_bytes(bytes(entries))
    with FileReplicatedLog.open(tmp_path) as log:
        seg = log.segments[0]
        if damage == "short":
            assert seg.from_index == 29
        else:
            assert seg.from_index == 0
        got = state(log)
    assert got == reference(tmp_path)
    with FileReplicatedLog.open(tmp_path) as log:  # the index was rewritten: used next time
        assert log.segments[0].from_index == len(got[0]) and state(log) == got


def test_rolled_and_deleted_segments_keep_their_own_index(tmp_path):
    with FileReplicatedLog.open(tmp_path, segment_bytes=2000) as log:
        fill(log, [1] * 60)
        log.flush()
        assert len(log.segments) > 2
        bases = [s.base_offset for s in log.segments]
        counts = [len(s.positions) for s in log.segments]
        data = b"".join(log.read(s.base_offset, 1 << 30) for s in log.segments)
    with FileReplicatedLog.open(tmp_path, segment_bytes=2000) as log:
        assert [s.from_index for s in log.segments] == counts
        assert [s.base_offset for s in log.segments] == bases
        whole = b"".join(log.read(s.base_offset, 1 << 30) for s in log.segments)
        assert whole == data
        log.truncate_to(bases[1])  # deletes the later segments with their index files
    part = tmp_path / PART
    left = sorted(p.name for p in part.glob("*" + batch_index.SUFFIX))
    assert left == [f"{b:020d}{batch_index.SUFFIX}" for b in bases[:2]]
    assert (part / left[1]).stat().st_size == 0  # the emptied segment's index is empty too


def test_control_batches_are_indexed_for_the_voter_history(tmp_path):
    from wire.messages import LeaderChangeMessage
    from wire.records import ControlRecordType, build_control_batch, walk

    def control(offset, epoch):
        return build_control_batch(offset, epoch, 5, [(ControlRecordType.LEADER_CHANGE, LeaderChangeMessage(
            version=0, leader_id=1, voters=[], granting_voters=[]))])

    with FileReplicatedLog.open(tmp_path, segment_bytes=3000) as log:
        for epoch in (1, 2, 3, 4):
            log.append(control(log.end_offset(), epoch))
            fill(log, [epoch] * 12)
        log.flush()
        log.append(control(log.end_offset(), 5))  # not flushed: scanned at the next open
        walked = [i.base_offset for s in log.segments for i in walk(log.read(s.base_offset, 1 << 30))
                  if i.is_control]
        assert log.control_offsets(0) == walked and len(walked) == 5
    with FileReplicatedLog.open(tmp_path, segment_bytes=3000) as log:
        assert sum(s.from_index for s in log.segments) > 0
        assert log.control_offsets(0) == walked
        assert log.control_offsets(walked[2]) == walked[2:]
        log.truncate_to(walked[3] + 1)
        assert log.control_offsets(0) == walked[:4]
