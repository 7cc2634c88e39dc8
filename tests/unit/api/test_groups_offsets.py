"""Committed offsets: the store (kraft_server/groups/offset_store.py) and the
OffsetCommit/OffsetFetch/FindCoordinator answers, through the generated codecs.

The store's contract: a commit is on disk (fsync'd) when ``commit`` returns; a torn
tail (a crash mid-write) is detected by CRC or length and truncated on open; the file
is compacted once it outgrows its live content."""
from __future__ import annotations

import os
import uuid

import pytest

from kraft_server.api.groups import GroupService, handle
from kraft_server.groups import offset_store
from kraft_server.groups.coordinator import GroupSettings
from kraft_server.groups.offset_store import FILE_NAME, CommittedOffset, OffsetStore, read_frames
from wire.errors import ErrorCode as E
from wire.messages import FindCoordinatorRequest, HeartbeatRequest, OffsetCommitRequest, OffsetFetchRequest
from wire.messages import offset_commit_request as oc
from wire.messages import offset_fetch_request as of

from .test_groups_coordinator import FakeCall

TP = ("__cluster_metadata", 0)
META_ID = uuid.UUID(int=1)


def test_commits_survive_reopen(tmp_path):
    store = OffsetStore(tmp_path)
    store.commit("g", {TP: CommittedOffset(5, 2, "meta", 111)})
    store.commit("g", {TP: CommittedOffset(9, 3, None, 222)})
    store.commit("h", {TP: CommittedOffset(1)})
    store.close()
    again = OffsetStore(tmp_path)
    assert again.get("g") == {TP: CommittedOffset(9, 3, None, 222)}
    assert again.groups() == ["g", "h"]
    again.close()


@pytest.mark.parametrize("cut", [1, 4, 8, 12, -1])
def test_a_torn_tail_is_truncated(tmp_path, cut):
    store = OffsetStore(tmp_path)
    store.commit("g", {TP: CommittedOffset(5)})
    good = (tmp_path / FILE_NAME).stat().st_size
    store.commit("g", {TP: CommittedOffset(6)})
    store.close()
    path = tmp_path / FILE_NAME
    data = path.read_bytes()
    path.write_bytes(data[:good + cut] if cut > 0 else data[:-1])  # the second frame torn
    again = OffsetStore(tmp_path)
    assert again.get("g") == {TP: CommittedOffset(5)}
    assert path.stat().st_size == good  # truncated back to the last whole frame
    again.commit("g", {TP: CommittedOffset(7)})  # and appends after it cleanly
    again.close()
    assert OffsetStore(tmp_path).get("g")[TP].offset == 7


def test_a_flipped_byte_fails_the_crc(tmp_path):
    store = OffsetStore(tmp_path)
    store.commit("g", {TP: CommittedOffset(5)})
    good = (tmp_path / FILE_NAME).stat().st_size
    store.commit("g", {TP: CommittedOffset(6)})
    store.close()
    path = tmp_path / FILE_NAME
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    path.write_bytes(bytes(data))
    assert OffsetStore(tmp_path).get("g")[TP].offset == 5
    assert path.stat().st_size == good


def test_the_file_is_compacted_to_its_live_content(tmp_path, monkeypatch):
    monkeypatch.setattr(offset_store, "COMPACT_MIN_BYTES", 1024)
    store = OffsetStore(tmp_path)
    for i in range(200):
        store.commit(f"g{i % 3}", {TP: CommittedOffset(i)})
    size = (tmp_path / FILE_NAME).stat().st_size
    assert size <= 1024 + 100  # bounded, not 200 frames
    frames, valid = read_frames((tmp_path / FILE_NAME).read_bytes())
    assert valid == size
    store.close()
    again = OffsetStore(tmp_path)
    assert {g: again.get(g)[TP].offset for g in again.groups()} == {"g0": 198, "g1": 199, "g2": 197}


# -- the APIs ------------------------------------------------------------------------------

@pytest.fixture
def svc(tmp_path):
    service = GroupService(OffsetStore(tmp_path), lambda: 1_000, GroupSettings(initial_rebalance_delay_ms=0))
    yield service
    service.close()


def send(svc, body, version):
    call = FakeCall(body, version)
    handle(call, svc, 7, {"CLIENT": ("127.0.0.1", 9092)})
    return call.answer


def commit(svc, version, topics, group="g", metadata="m"):
    return send(svc, OffsetCommitRequest(group_id=group, topics=[
        oc.OffsetCommitRequestTopic(name=name, topic_id=tid, partitions=[
            oc.OffsetCommitRequestPartition(partition_index=p, committed_offset=off,
                                            committed_leader_epoch=4, committed_metadata=metadata)
            for p, off in parts])
        for name, tid, parts in topics]), version)


@pytest.mark.parametrize("version", [2, 7, 9])
def test_commit_only_the_metadata_partition(svc, version):
    answer = commit(svc, version, [("__cluster_metadata", None, [(0, 42), (1, 3)]),
                                   ("other", None, [(0, 1)])])
    codes = [[(p.partition_index, p.error_code) for p in t.partitions] for t in answer.topics]
    assert codes == [[(0, 0), (1, E.UNKNOWN_TOPIC_OR_PARTITION)], [(0, E.UNKNOWN_TOPIC_OR_PARTITION)]]
    assert svc.store.get("g")[TP].offset == 42
    assert svc.store.get("g")[TP].leader_epoch == (4 if version >= 6 else -1)


def test_commit_and_fetch_by_topic_id_v10(svc):
    answer = commit(svc, 10, [("", META_ID, [(0, 8)]), ("", uuid.UUID(int=99), [(0, 1)])])
    assert [(t.topic_id, t.partitions[0].error_code) for t in answer.topics] == [
        (META_ID, 0), (uuid.UUID(int=99), E.UNKNOWN_TOPIC_ID)]
    fetched = send(svc, OffsetFetchRequest(groups=[of.OffsetFetchRequestGroup(group_id="g", topics=None)]), 10)
    t = fetched.groups[0].topics[0]
    assert (t.topic_id, t.partitions[0].committed_offset, t.partitions[0].committed_leader_epoch) == (META_ID, 8, 4)


def test_metadata_too_large(svc):
    answer = commit(svc, 8, [("__cluster_metadata", None, [(0, 1)])], metadata="x" * 4097)
    assert answer.topics[0].partitions[0].error_code == E.OFFSET_METADATA_TOO_LARGE
    assert svc.store.get("g") == {}


def test_fetch_v1_v7_and_v8(svc):
    commit(svc, 8, [("__cluster_metadata", None, [(0, 42)])])
    v1 = send(svc, OffsetFetchRequest(group_id="g", topics=[
        of.OffsetFetchRequestTopic(name="__cluster_metadata", partition_indexes=[0, 1])]), 1)
    assert [(p.partition_index, p.committed_offset, p.metadata, p.error_code)
            for p in v1.topics[0].partitions] == [(0, 42, "m", 0), (1, -1, "", 0)]
    v7_all = send(svc, OffsetFetchRequest(group_id="g", topics=None), 7)
    assert [(t.name, [p.committed_offset for p in t.partitions]) for t in v7_all.topics] == [
        ("__cluster_metadata", [42])]
    assert v7_all.topics[0].partitions[0].committed_leader_epoch == 4
    v8 = send(svc, OffsetFetchRequest(groups=[
        of.OffsetFetchRequestGroup(group_id="g", topics=None),
        of.OffsetFetchRequestGroup(group_id="unknown", topics=[
            of.OffsetFetchRequestTopics(name="__cluster_metadata", partition_indexes=[0])])]), 8)
    assert [(g.group_id, g.error_code, [p.committed_offset for t in g.topics for p in t.partitions])
            for g in v8.groups] == [("g", 0, [42]), ("unknown", 0, [-1])]


def test_a_commit_from_outside_a_generation_creates_an_empty_group(svc):
    commit(svc, 9, [("__cluster_metadata", None, [(0, 1)])], group="solo")
    assert svc.coordinator.group("solo").state.value == "Empty"
    # A generation for a group that does not exist: GROUP_ID_NOT_FOUND from v9, before it
    # ILLEGAL_GENERATION (Kafka's OffsetMetadataManager).
    for version, code in ((9, E.GROUP_ID_NOT_FOUND), (8, E.ILLEGAL_GENERATION)):
        answer = send(svc, OffsetCommitRequest(group_id="nope", generation_id_or_member_epoch=3, member_id="m",
                                               topics=[oc.OffsetCommitRequestTopic(name="__cluster_metadata", partitions=[
                                                   oc.OffsetCommitRequestPartition(partition_index=0, committed_offset=1)])]), version)
        assert answer.topics[0].partitions[0].error_code == code


def test_a_failed_write_is_not_acknowledged(svc, monkeypatch):
    def broken(fd):
        raise OSError(5, "Input/output error")
    monkeypatch.setattr(offset_store.os, "fsync", broken)
    answer = commit(svc, 8, [("__cluster_metadata", None, [(0, 1)])])
    assert answer.topics[0].partitions[0].error_code == E.COORDINATOR_NOT_AVAILABLE
    assert svc.store.get("g") == {}


@pytest.mark.parametrize("version", [0, 1, 3])
def test_find_coordinator_single_key(svc, version):
    answer = send(svc, FindCoordinatorRequest(key="g", key_type=0), version)
    assert (answer.error_code, answer.node_id, answer.host, answer.port) == (0, 7, "127.0.0.1", 9092)
    if version >= 1:
        txn = send(svc, FindCoordinatorRequest(key="t", key_type=1), version)
        assert txn.error_code == E.INVALID_REQUEST and "transactions" in txn.error_message
        assert txn.node_id == -1


@pytest.mark.parametrize("version", [4, 6])
def test_find_coordinator_batched(svc, version):
    answer = send(svc, FindCoordinatorRequest(key_type=0, coordinator_keys=["a", "b"]), version)
    assert [(c.key, c.node_id, c.port, c.error_code) for c in answer.coordinators] == [
        ("a", 7, 9092, 0), ("b", 7, 9092, 0)]
    txn = send(svc, FindCoordinatorRequest(key_type=1, coordinator_keys=["t"]), version)
    assert txn.coordinators[0].error_code == E.INVALID_REQUEST


def test_a_long_group_id_is_stored(tmp_path):
    store = OffsetStore(tmp_path)
    group = "g" * 70000  # longer than a 16-bit length
    store.commit(group, {TP: CommittedOffset(1)})
    store.close()
    assert OffsetStore(tmp_path).get(group)[TP].offset == 1


def test_deletions_are_durable(tmp_path):
    store = OffsetStore(tmp_path)
    store.commit("g", {TP: CommittedOffset(5)})
    store.commit("h", {TP: CommittedOffset(6)})
    store.delete("g")
    store.close()
    again = OffsetStore(tmp_path)
    assert again.groups() == ["h"] and again.get("g") == {}
    again.delete("h", [TP])
    again.compact()
    again.close()
    assert OffsetStore(tmp_path).groups() == []


def test_delete_groups_and_offsets(svc):
    from wire.messages import DeleteGroupsRequest, OffsetDeleteRequest
    from wire.messages import offset_delete_request as od
    from .test_groups_coordinator import SESSION, REBALANCE
    from wire.messages import JoinGroupRequest
    from wire.messages.join_group_request import JoinGroupRequestProtocol
    commit(svc, 8, [("__cluster_metadata", None, [(0, 42)])], group="empty")
    commit(svc, 8, [("__cluster_metadata", None, [(0, 7)])], group="busy")
    # A member of "busy" subscribed to __cluster_metadata (ConsumerProtocolSubscription v0).
    sub = b"\x00\x00" + b"\x00\x00\x00\x01" + b"\x00\x12__cluster_metadata" + b"\x00\x00\x00\x00"
    send(svc, JoinGroupRequest(group_id="busy", session_timeout_ms=SESSION, rebalance_timeout_ms=REBALANCE,
                               protocol_type="consumer",
                               protocols=[JoinGroupRequestProtocol(name="range", metadata=sub)]), 3)

    od_answer = send(svc, OffsetDeleteRequest(group_id="busy", topics=[
        od.OffsetDeleteRequestTopic(name="__cluster_metadata", partitions=[
            od.OffsetDeleteRequestPartition(partition_index=0)])]), 0)
    assert od_answer.topics[0].partitions[0].error_code == E.GROUP_SUBSCRIBED_TO_TOPIC
    assert send(svc, OffsetDeleteRequest(group_id="nope"), 0).error_code == E.GROUP_ID_NOT_FOUND
    od_answer = send(svc, OffsetDeleteRequest(group_id="empty", topics=[
        od.OffsetDeleteRequestTopic(name="__cluster_metadata", partitions=[
            od.OffsetDeleteRequestPartition(partition_index=0)])]), 0)
    assert od_answer.error_code == 0 and od_answer.topics[0].partitions[0].error_code == 0
    assert svc.store.get("empty") == {}

    results = send(svc, DeleteGroupsRequest(groups_names=["busy", "empty", "nope"]), 2).results
    assert [(r.group_id, r.error_code) for r in results] == [
        ("busy", E.NON_EMPTY_GROUP), ("empty", 0), ("nope", E.GROUP_ID_NOT_FOUND)]
    assert svc.coordinator.group("empty") is None and svc.store.get("busy")[TP].offset == 7


def test_delete_groups_v3_error_message(svc, monkeypatch):
    """v3 (Kafka 4.4): the per-group checks leave ErrorMessage null, as Kafka's do; a
    deletion that fails on disk says why. Older versions do not carry it on the wire."""
    from wire.headers import encode_response
    from wire.messages import DeleteGroupsRequest
    commit(svc, 8, [("__cluster_metadata", None, [(0, 42)])], group="empty")
    results = send(svc, DeleteGroupsRequest(groups_names=["nope"]), 3).results
    assert [(r.error_code, r.error_message) for r in results] == [(E.GROUP_ID_NOT_FOUND, None)]

    def broken(fd):
        raise OSError(5, "Input/output error")
    monkeypatch.setattr(offset_store.os, "fsync", broken)
    answer = send(svc, DeleteGroupsRequest(groups_names=["empty"]), 3)
    (result,) = answer.results
    assert result.error_code == E.COORDINATOR_NOT_AVAILABLE
    assert result.error_message == "cannot delete the group's offsets: Input/output error"
    assert svc.coordinator.group("empty") is not None  # nothing deleted, nothing acknowledged
    v2, v3 = (encode_response(42, v, 1, answer) for v in (2, 3))
    assert b"Input/output error" in v3 and b"Input/output error" not in v2


def test_offsets_expire_after_retention(tmp_path):
    from .test_groups_coordinator import Clock, advance, joined_member, sync
    from wire.messages import LeaveGroupRequest
    clock = Clock()
    svc = GroupService(OffsetStore(tmp_path), clock, GroupSettings(
        initial_rebalance_delay_ms=0, offsets_retention_ms=60_000,
        offsets_retention_check_interval_ms=1_000))
    svc.clock_obj = clock
    try:
        commit(svc, 8, [("__cluster_metadata", None, [(0, 1)])], group="simple")
        a = joined_member(svc, group="g")  # a consumer group with a member
        a_id = a.answer.member_id
        assert sync(svc, a_id, 1, [(a_id, b"")]).answer.error_code == 0
        answer = send(svc, OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=1, member_id=a_id,
                                               topics=[oc.OffsetCommitRequestTopic(name="__cluster_metadata", partitions=[
                                                   oc.OffsetCommitRequestPartition(partition_index=0, committed_offset=2)])]), 8)
        assert answer.topics[0].partitions[0].error_code == 0
        for _ in range(14):  # 70 s with a live member (heartbeating): its offsets stay
            advance(svc, 5_000)
            assert send(svc, HeartbeatRequest(group_id="g", generation_id=1, member_id=a_id), 4).error_code == 0
        assert svc.store.groups() == ["g"]  # "simple" expired 60 s after its commit
        send(svc, LeaveGroupRequest(group_id="g", member_id=a_id), 2)
        advance(svc, 59_000)
        assert svc.store.get("g")[TP].offset == 2  # Empty for 59 s: kept
        advance(svc, 2_000)
        assert svc.store.groups() == [] and svc.coordinator.group("g") is None
    finally:
        svc.close()
    assert OffsetStore(tmp_path).groups() == []  # durably
