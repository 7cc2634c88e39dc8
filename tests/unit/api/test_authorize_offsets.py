"""The topic checks of OffsetCommit, OffsetFetch and OffsetDelete on the client listener
(kraft_server/api/authorize_offsets.py), through the Guard, the real group handlers and
the generated codecs: refused topics are answered TOPIC_AUTHORIZATION_FAILED as Kafka's
KafkaApis answers them, and never reach the group."""
from __future__ import annotations

import uuid

import pytest

from kraft_server.api.groups import GroupService, handle
from kraft_server.groups.coordinator import GroupSettings
from kraft_server.groups.offset_store import CommittedOffset, OffsetStore
from kraft_server.security import acls as A
from wire.errors import ErrorCode as E
from wire.messages import OffsetCommitRequest, OffsetDeleteRequest, OffsetFetchRequest
from wire.messages import offset_commit_request as oc
from wire.messages import offset_delete_request as od
from wire.messages import offset_fetch_request as of

from .test_authorize_checks import allow, guard_with
from .test_groups_coordinator import FakeCall

TOPIC = "__cluster_metadata"
META_ID = uuid.UUID(int=1)
DENIED = E.TOPIC_AUTHORIZATION_FAILED


class Call(FakeCall):
    principal, host = "User:alice", "127.0.0.1"

    def respond(self, body, api_version=None, shared=False):
        super().respond(body)


@pytest.fixture
def svc(tmp_path):
    store = OffsetStore(tmp_path)
    store.commit("g", {(TOPIC, 0): CommittedOffset(5)})
    service = GroupService(store, lambda: 1_000, GroupSettings(initial_rebalance_delay_ms=0))
    yield service
    service.close()


def send(guard, svc, body, version):
    call = Call(body, version)
    admitted = guard.admit_client(call, None, False)
    if admitted is not None:
        handle(admitted, svc, 7, {"CLIENT": ("127.0.0.1", 9092)})
    return call.answer


def commit(topics, generation=-1, member=""):
    return OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=generation, member_id=member, topics=[
        oc.OffsetCommitRequestTopic(name=name, topic_id=tid, partitions=[
            oc.OffsetCommitRequestPartition(partition_index=0, committed_offset=9, committed_metadata="")])
        for name, tid in topics])


def codes(answer):
    return [(t.name or t.topic_id, [(p.partition_index, p.error_code) for p in t.partitions]) for t in answer.topics]


GROUP_READ = allow(A.READ, rtype=A.GROUP, name="g")


def test_commit_needs_read_on_each_topic(svc):
    guard = guard_with(GROUP_READ)
    # nothing allowed: answered without asking the group (a stale generation is not seen)
    answer = send(guard, svc, commit([(TOPIC, None), ("orders", None)], generation=7, member="m-1"), 8)
    assert codes(answer) == [(TOPIC, [(0, DENIED)]), ("orders", [(0, DENIED)])]
    assert svc.store.get("g")[(TOPIC, 0)].offset == 5
    # READ on the topic: it is committed, the refused one answered first
    guard = guard_with(GROUP_READ, allow(A.READ, name=TOPIC))
    answer = send(guard, svc, commit([("orders", None), (TOPIC, None)]), 8)
    assert codes(answer) == [("orders", [(0, DENIED)]), (TOPIC, [(0, 0)])]
    assert svc.store.get("g")[(TOPIC, 0)].offset == 9
    # DESCRIBE is not enough to commit
    guard = guard_with(GROUP_READ, allow(A.DESCRIBE, name=TOPIC))
    assert codes(send(guard, svc, commit([(TOPIC, None)]), 8)) == [(TOPIC, [(0, DENIED)])]


def test_commit_v10_by_topic_id(svc):
    guard = guard_with(GROUP_READ)
    answer = send(guard, svc, commit([("", META_ID), ("", uuid.UUID(int=99))]), 10)
    assert codes(answer) == [(META_ID, [(0, DENIED)]), (uuid.UUID(int=99), [(0, E.UNKNOWN_TOPIC_ID)])]


def fetch_v7(topics):
    return OffsetFetchRequest(group_id="g", topics=None if topics is None else [
        of.OffsetFetchRequestTopic(name=n, partition_indexes=[0]) for n in topics])


def offsets(topics):
    return [(t.name or t.topic_id, [(p.partition_index, p.committed_offset, p.error_code) for p in t.partitions])
            for t in topics]


@pytest.mark.parametrize("version", [1, 7])
def test_fetch_named_topics_needs_describe(svc, version):
    guard = guard_with(allow(A.DESCRIBE, rtype=A.GROUP, name="g"), allow(A.DESCRIBE, name=TOPIC))
    answer = send(guard, svc, fetch_v7(["orders", TOPIC]), version)
    # the allowed topics' answer first, then the refused ones with offset -1
    assert offsets(answer.topics) == [(TOPIC, [(0, 5, 0)]), ("orders", [(0, -1, DENIED)])]


def test_fetch_all_topics_leaves_the_refused_out(svc):
    group_only = guard_with(allow(A.DESCRIBE, rtype=A.GROUP, name="g"))
    assert offsets(send(group_only, svc, fetch_v7(None), 7).topics) == []
    answer = send(group_only, svc, OffsetFetchRequest(groups=[of.OffsetFetchRequestGroup(group_id="g", topics=None)]),
                  10)
    assert (answer.groups[0].error_code, answer.groups[0].topics) == (0, [])
    with_topic = guard_with(allow(A.DESCRIBE, rtype=A.GROUP, name="g"), allow(A.READ, name=TOPIC))
    assert offsets(send(with_topic, svc, fetch_v7(None), 7).topics) == [(TOPIC, [(0, 5, 0)])]


def test_fetch_batched_groups_v8_and_v10(svc):
    guard = guard_with(allow(A.DESCRIBE, rtype=A.GROUP, name="g"))
    body = OffsetFetchRequest(groups=[
        of.OffsetFetchRequestGroup(group_id="h", topics=None),
        of.OffsetFetchRequestGroup(group_id="g", topics=[of.OffsetFetchRequestTopics(
            name=TOPIC, topic_id=META_ID, partition_indexes=[0])])])
    answer = send(guard, svc, body, 8)
    assert [(g.group_id, g.error_code) for g in answer.groups] == [("h", E.GROUP_AUTHORIZATION_FAILED), ("g", 0)]
    assert offsets(answer.groups[1].topics) == [(TOPIC, [(0, -1, DENIED)])]
    # v10: an id we cannot name is answered UNKNOWN_TOPIC_ID with the refused, in request order
    guard = guard_with(allow(A.DESCRIBE, rtype=A.GROUP, name="g"), allow(A.DESCRIBE, name=TOPIC))
    body.groups[1].topics.insert(0, of.OffsetFetchRequestTopics(topic_id=uuid.UUID(int=99), partition_indexes=[0]))
    answer = send(guard, svc, body, 10)
    assert offsets(answer.groups[1].topics) == [(META_ID, [(0, 5, 0)]),
                                                (uuid.UUID(int=99), [(0, -1, E.UNKNOWN_TOPIC_ID)])]
    answer = send(guard_with(allow(A.DESCRIBE, rtype=A.GROUP, name="g")), svc, body, 10)
    assert offsets(answer.groups[1].topics) == [(uuid.UUID(int=99), [(0, -1, E.UNKNOWN_TOPIC_ID)]),
                                                (META_ID, [(0, -1, DENIED)])]


def test_offset_delete_needs_read_on_the_topic(svc):
    guard = guard_with(allow(A.DELETE, rtype=A.GROUP, name="g"))
    body = OffsetDeleteRequest(group_id="g", topics=[od.OffsetDeleteRequestTopic(
        name=TOPIC, partitions=[od.OffsetDeleteRequestPartition(partition_index=0)])])
    answer = send(guard, svc, body, 0)
    assert (answer.error_code, codes(answer)) == (0, [(TOPIC, [(0, DENIED)])])
    assert svc.store.get("g")[(TOPIC, 0)].offset == 5
    guard = guard_with(allow(A.DELETE, rtype=A.GROUP, name="g"), allow(A.READ, name=TOPIC))
    assert codes(send(guard, svc, body, 0)) == [(TOPIC, [(0, 0)])]
    assert svc.store.get("g") == {}
    # a group error is the whole answer (Kafka's OffsetDeleteResponse.Builder.merge)
    guard = guard_with(allow(A.DELETE, rtype=A.GROUP, name="unknown"))
    body.group_id = "unknown"
    answer = send(guard, svc, body, 0)
    assert (answer.error_code, answer.topics) == (E.GROUP_ID_NOT_FOUND, [])


def test_a_refused_group_on_offset_fetch_v1_errs_each_partition(svc):
    """v1 has no top-level error code: the group's refusal goes on every partition, as
    Kafka's OffsetFetchResponse.groupError writes it for versions below 2."""
    answer = send(guard_with(), svc, fetch_v7([TOPIC]), 1)
    assert offsets(answer.topics) == [(TOPIC, [(0, -1, E.GROUP_AUTHORIZATION_FAILED)])]
    answer = send(guard_with(), svc, fetch_v7([TOPIC]), 2)
    assert (answer.error_code, answer.topics) == (E.GROUP_AUTHORIZATION_FAILED, [])
