"""The Raft core's fast path in wire.records (``build_batch``, ``build_control_batch``,
``walk``, ``batch_records``, ``control_records``) is byte-identical to the general
``RecordBatch`` encoder (which is byte-exact with Kafka), and reads back what either writes."""
from __future__ import annotations

import pytest
from wire import records as wr
from wire.messages import KRaftVersionRecord, LeaderChangeMessage
from wire.messages import leader_change_message as lcm
from wire.records import (
    BatchError, ControlRecordType, Record, RecordBatch, batch_records, build_batch,
    build_control_batch, control_records, walk,
)


def test_data_batch_bytes_match_wire_records():
    ours = build_batch(7, 2, 99, [(None, b"x"), (None, b"yy")])
    assert ours == wr.data_batch(7, 2, 99, [b"x", b"yy"])
    assert ours == RecordBatch(base_offset=7, partition_leader_epoch=2, base_timestamp=99, records=[
        Record(offset_delta=0, value=b"x"), Record(offset_delta=1, value=b"yy")]).encode()


def test_control_batch_bytes_match_wire_records():
    msg = LeaderChangeMessage(version=0, leader_id=1, voters=[lcm.Voter(voter_id=1)])
    ours = build_control_batch(5, 3, 1234, [(ControlRecordType.LEADER_CHANGE, msg)])
    assert ours == wr.control_batch(5, 3, 1234, [(wr.ControlRecordType.LEADER_CHANGE, msg.encode(0))])
    assert ours == RecordBatch(base_offset=5, partition_leader_epoch=3, base_timestamp=1234,
                               attributes=wr.CONTROL_MASK, records=[
                                   Record(key=wr.encode_control_key(ControlRecordType.LEADER_CHANGE),
                                          value=msg.encode(0))]).encode()


def test_walk_and_control_records_read_wire_records_output():
    data = wr.data_batch(0, 1, 0, [b"a", b"b", b"c"]) + wr.control_batch(
        3, 2, 0, [(wr.ControlRecordType.KRAFT_VERSION, KRaftVersionRecord(version=0, kraft_version=1).encode(0))])
    infos = walk(data, verify=True)
    assert [(i.base_offset, i.last_offset, i.epoch, i.is_control) for i in infos] == [
        (0, 2, 1, False), (3, 3, 2, True)]
    [(kind, rec)] = control_records(data, infos[1])
    assert kind is ControlRecordType.KRAFT_VERSION and rec.kraft_version == 1
    assert [v for _, v in batch_records(data, infos[0])] == [b"a", b"b", b"c"]
    # Any buffer reads the same, and keys and values come out as bytes.
    for buf in (bytearray(data), memoryview(data)):
        assert batch_records(buf, walk(buf)[0]) == [(None, b"a"), (None, b"b"), (None, b"c")]


def test_walk_rejects_partial_and_corrupt_batches():
    data = build_batch(0, 1, 0, [(None, b"abc")])
    with pytest.raises(BatchError):
        walk(data[:-1])
    corrupt = bytearray(data)
    corrupt[-2] ^= 0xFF
    with pytest.raises(BatchError):
        walk(bytes(corrupt), verify=True)


def test_unknown_control_type_is_refused():
    data = build_batch(0, 1, 0, [(b"\x00\x00\x00\x63", b"")], control=True)
    with pytest.raises(BatchError):
        control_records(data, walk(data)[0])


def test_with_base_offset_keeps_the_crc_valid():
    data = build_batch(0, 1, 0, [(None, b"abc")])
    moved = wr.with_base_offset(data, 1234)
    assert moved == build_batch(1234, 1, 0, [(None, b"abc")])
    assert walk(moved, verify=True)[0].base_offset == 1234


def test_walk_refuses_damaged_bytes_only_with_batch_error():
    """Truncated or bit-flipped batches: ``walk`` raises BatchError and nothing else; what
    it accepts with ``verify`` (the CRC still matches) reads back as the original records."""
    import random

    rng = random.Random(9)
    pairs = [(None, b"v" * 10), (b"k", None), (None, b"")]
    good = build_batch(5, 2, 7, pairs) + build_control_batch(
        8, 2, 7, [(ControlRecordType.KRAFT_VERSION, KRaftVersionRecord(version=0, kraft_version=1))])
    for _ in range(2000):
        data = bytearray(good)
        if rng.random() < 0.5:
            del data[rng.randrange(len(data)):]
        else:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        try:
            infos = walk(bytes(data), verify=True)
        except BatchError:
            continue
        if data:  # else nothing to walk, nothing found
            assert batch_records(bytes(data), infos[0]) == pairs
