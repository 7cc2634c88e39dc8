"""The core's record-batch shim (raft/batches.py) is byte-identical to wire.records
(which is byte-exact with Kafka), and reads back what either one writes."""
from __future__ import annotations

import pytest
from wire import records as wr
from wire.messages import KRaftVersionRecord, LeaderChangeMessage
from wire.messages import leader_change_message as lcm

from kraft_server.raft import batches


def test_data_batch_bytes_match_wire_records():
    ours = batches.build_batch(7, 2, 99, [(None, b"x"), (None, b"yy")])
    assert ours == wr.data_batch(7, 2, 99, [b"x", b"yy"])


def test_control_batch_bytes_match_wire_records():
    msg = LeaderChangeMessage(version=0, leader_id=1, voters=[lcm.Voter(voter_id=1)])
    ours = batches.build_control_batch(5, 3, 1234, [(batches.ControlRecordType.LEADER_CHANGE, msg)])
    assert ours == wr.control_batch(5, 3, 1234, [(wr.ControlRecordType.LEADER_CHANGE, msg.encode(0))])


def test_walk_and_control_records_read_wire_records_output():
    data = wr.data_batch(0, 1, 0, [b"a", b"b", b"c"]) + wr.control_batch(
        3, 2, 0, [(wr.ControlRecordType.KRAFT_VERSION, KRaftVersionRecord(version=0, kraft_version=1).encode(0))])
    infos = batches.walk(data, verify=True)
    assert [(i.base_offset, i.last_offset, i.epoch, i.is_control) for i in infos] == [
        (0, 2, 1, False), (3, 3, 2, True)]
    [(kind, rec)] = batches.control_records(data, infos[1])
    assert kind is batches.ControlRecordType.KRAFT_VERSION and rec.kraft_version == 1
    assert [v for _, v in batches.records(data, infos[0])] == [b"a", b"b", b"c"]


def test_walk_rejects_partial_and_corrupt_batches():
    data = batches.build_batch(0, 1, 0, [(None, b"abc")])
    with pytest.raises(batches.BatchError):
        batches.walk(data[:-1])
    corrupt = bytearray(data)
    corrupt[-2] ^= 0xFF
    with pytest.raises(batches.BatchError):
        batches.walk(bytes(corrupt), verify=True)


def test_unknown_control_type_is_refused():
    data = batches.build_batch(0, 1, 0, [(b"\x00\x00\x00\x63", b"")], control=True)
    with pytest.raises(batches.BatchError):
        batches.control_records(data, batches.walk(data)[0])
