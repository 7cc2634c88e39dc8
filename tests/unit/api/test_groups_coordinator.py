"""The classic group state machine (kraft_server/groups/coordinator.py), driven with
explicit ``now_ms`` and, for the request paths, through the generated codecs at the
versions clients send (FakeCall encodes each request and answer and decodes it back).

Stories: two members rebalance (join, leader assigns, both Stable), a member's session
expires and the survivor rebalances alone, stale generations get ILLEGAL_GENERATION, v4+
joins need MEMBER_ID_REQUIRED, a silent leader is dropped after the rebalance timeout,
and a static member fences its old member id.
"""
from __future__ import annotations

import pytest

from kraft_server.api.groups import GroupService, handle
from kraft_server.groups.coordinator import GroupSettings
from kraft_server.groups.group import GroupState
from kraft_server.groups.offset_store import OffsetStore
from wire.errors import ErrorCode as E
from wire.messages import (
    HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, OffsetCommitRequest, SyncGroupRequest,
    DescribeGroupsRequest, ListGroupsRequest,
)
from wire.messages.join_group_request import JoinGroupRequestProtocol
from wire.messages.leave_group_request import MemberIdentity
from wire.messages.offset_commit_request import OffsetCommitRequestPartition, OffsetCommitRequestTopic
from wire.messages.sync_group_request import SyncGroupRequestAssignment
from wire.messages import RESPONSES

SESSION, REBALANCE = 10_000, 30_000


class Header:
    def __init__(self, client_id):
        self.client_id = client_id


class Pipe:
    peer = ("127.0.0.1", 50000)


class FakeCall:
    """An InboundCall whose body and answer both cross the codec at ``version``."""

    forwarded = token_authenticated = False

    def __init__(self, body, version, client_id="client"):
        self.api_key, self.api_version = body.API_KEY, version
        self.body = type(body).decode(body.encode(version), version)
        self.header, self.pipeline, self.listener = Header(client_id), Pipe(), "CLIENT"
        self.host = self.pipeline.peer[0]
        self.answer = None

    def respond(self, body):
        assert self.answer is None, "answered twice"
        cls = RESPONSES[self.api_key]
        self.answer = cls.decode(body.encode(self.api_version), self.api_version)


class Clock:
    def __init__(self):
        self.now = 1_000_000

    def __call__(self):
        return self.now


@pytest.fixture
def svc(tmp_path):
    clock = Clock()
    service = GroupService(OffsetStore(tmp_path), clock, GroupSettings(initial_rebalance_delay_ms=0))
    service.clock_obj = clock
    yield service
    service.close()


def send(svc, body, version):
    call = FakeCall(body, version)
    handle(call, svc, 1, {"CLIENT": ("127.0.0.1", 9092)})
    return call


def advance(svc, ms):
    svc.clock_obj.now += ms
    return svc.poll(svc.clock_obj.now)


def join(svc, member_id="", version=9, group="g", metadata=b"m", instance=None):
    return send(svc, JoinGroupRequest(
        group_id=group, session_timeout_ms=SESSION, rebalance_timeout_ms=REBALANCE,
        member_id=member_id, group_instance_id=instance, protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=metadata)]), version)


def joined_member(svc, version=9, group="g", metadata=b"m"):
    """MEMBER_ID_REQUIRED then the real join: returns the parked (or answered) call."""
    first = join(svc, version=version, group=group, metadata=metadata)
    assert first.answer.error_code == E.MEMBER_ID_REQUIRED and first.answer.member_id
    return join(svc, first.answer.member_id, version=version, group=group, metadata=metadata)


def sync(svc, member_id, generation, assignments=(), version=5):
    return send(svc, SyncGroupRequest(
        group_id="g", generation_id=generation, member_id=member_id, protocol_type="consumer",
        protocol_name="range", assignments=[SyncGroupRequestAssignment(member_id=m, assignment=a)
                                            for m, a in assignments]), version)


def heartbeat(svc, member_id, generation, version=4):
    return send(svc, HeartbeatRequest(group_id="g", generation_id=generation, member_id=member_id),
                version).answer.error_code


def state(svc, group="g"):
    return svc.coordinator.group(group).state



def test_two_members_rebalance(svc):
    a = joined_member(svc)
    # Alone in an Empty group with no initial delay: generation 1 at once.
    assert a.answer.error_code == 0 and a.answer.generation_id == 1
    a_id = a.answer.member_id
    assert a.answer.leader == a_id and [m.member_id for m in a.answer.members] == [a_id]
    assert sync(svc, a_id, 1, [(a_id, b"all")]).answer.assignment == b"all"
    assert state(svc) is GroupState.STABLE

    b = joined_member(svc, metadata=b"mb")  # b joins: a rebalance starts, b's answer waits
    assert b.answer is None and state(svc) is GroupState.PREPARING_REBALANCE
    assert heartbeat(svc, a_id, 1) == E.REBALANCE_IN_PROGRESS
    a2 = join(svc, a_id)  # a rejoins: everyone is in, generation 2
    assert a2.answer.generation_id == b.answer.generation_id == 2
    b_id = b.answer.member_id
    assert a2.answer.leader == a_id and b.answer.leader == a_id
    assert {m.member_id: m.metadata for m in a2.answer.members} == {a_id: b"m", b_id: b"mb"}
    assert b.answer.members == []  # only the leader sees the members
    assert state(svc) is GroupState.COMPLETING_REBALANCE

    b_sync = sync(svc, b_id, 2)  # the follower waits for the leader's assignment
    assert b_sync.answer is None
    a_sync = sync(svc, a_id, 2, [(a_id, b"x"), (b_id, b"y")])
    assert (a_sync.answer.assignment, b_sync.answer.assignment) == (b"x", b"y")
    assert b_sync.answer.protocol_name == "range" and b_sync.answer.protocol_type == "consumer"
    assert state(svc) is GroupState.STABLE
    assert heartbeat(svc, a_id, 2) == heartbeat(svc, b_id, 2) == E.NONE


def stable_pair(svc):
    a = joined_member(svc)
    a_id = a.answer.member_id
    sync(svc, a_id, 1, [(a_id, b"all")])
    b = joined_member(svc)
    join(svc, a_id)
    b_id = b.answer.member_id
    sync(svc, b_id, 2)
    sync(svc, a_id, 2, [(a_id, b"x"), (b_id, b"y")])
    assert state(svc) is GroupState.STABLE
    return a_id, b_id


def test_session_expiry_removes_the_silent_member(svc):
    a_id, b_id = stable_pair(svc)
    for _ in range(3):  # a keeps heartbeating, b is silent
        advance(svc, SESSION // 3)
        assert heartbeat(svc, a_id, 2) == E.NONE
    deadline = advance(svc, 10)
    assert b_id not in svc.coordinator.group("g").members
    assert state(svc) is GroupState.PREPARING_REBALANCE and deadline is not None
    assert heartbeat(svc, a_id, 2) == E.REBALANCE_IN_PROGRESS
    assert heartbeat(svc, b_id, 2) == E.UNKNOWN_MEMBER_ID
    again = join(svc, a_id)
    assert again.answer.generation_id == 3 and [m.member_id for m in again.answer.members] == [a_id]


def test_stale_generation_is_illegal(svc):
    a_id, b_id = stable_pair(svc)
    assert heartbeat(svc, a_id, 1) == E.ILLEGAL_GENERATION
    assert sync(svc, a_id, 1).answer.error_code == E.ILLEGAL_GENERATION
    commit = send(svc, OffsetCommitRequest(
        group_id="g", generation_id_or_member_epoch=1, member_id=b_id, topics=[
            OffsetCommitRequestTopic(name="__cluster_metadata", partitions=[
                OffsetCommitRequestPartition(partition_index=0, committed_offset=5)])]), 8)
    assert commit.answer.topics[0].partitions[0].error_code == E.ILLEGAL_GENERATION
    assert heartbeat(svc, "nobody", 2) == E.UNKNOWN_MEMBER_ID


def commit_error(svc, member_id, generation):
    return send(svc, OffsetCommitRequest(
        group_id="g", generation_id_or_member_epoch=generation, member_id=member_id, topics=[
            OffsetCommitRequestTopic(name="__cluster_metadata", partitions=[
                OffsetCommitRequestPartition(partition_index=0, committed_offset=5)])]),
        8).answer.topics[0].partitions[0].error_code


def test_a_leader_that_joins_again_in_a_stable_group_starts_a_new_generation(svc):
    """kafka-python 3.0.12 sends a fresh JoinGroup when its previous round finished between
    two polls. Kafka's classicGroupJoinExistingMember: in Stable a follower with unchanged
    metadata gets the current generation back; the leader forces a rebalance. A commit
    is accepted in the current generation while PreparingRebalance, refused with
    REBALANCE_IN_PROGRESS while CompletingRebalance and with ILLEGAL_GENERATION after."""
    a_id, b_id = stable_pair(svc)
    again = join(svc, b_id)  # the follower: answered at once, same generation
    assert (again.answer.error_code, again.answer.generation_id, state(svc)) == (0, 2, GroupState.STABLE)
    assert sync(svc, b_id, 2).answer.assignment == b"y"
    parked = join(svc, a_id)  # the leader: a new rebalance, b must rejoin
    assert parked.answer is None and state(svc) is GroupState.PREPARING_REBALANCE
    assert commit_error(svc, a_id, 2) == E.NONE  # generation 2 is still current
    assert heartbeat(svc, b_id, 2) == E.REBALANCE_IN_PROGRESS
    b3 = join(svc, b_id)
    assert parked.answer.generation_id == b3.answer.generation_id == 3
    assert commit_error(svc, a_id, 3) == E.REBALANCE_IN_PROGRESS  # CompletingRebalance
    assert commit_error(svc, a_id, 2) == E.ILLEGAL_GENERATION
    sync(svc, a_id, 3, [(a_id, b"x"), (b_id, b"y")])
    assert state(svc) is GroupState.STABLE and commit_error(svc, a_id, 3) == E.NONE


def test_member_id_required_only_from_v4_and_pending_ids_expire(svc):
    old = join(svc, version=3)
    assert old.answer.error_code == 0 and old.answer.member_id.startswith("client-")
    pending = join(svc, version=4, group="h")
    assert pending.answer.error_code == E.MEMBER_ID_REQUIRED
    assert pending.answer.generation_id == -1
    advance(svc, SESSION + 1)  # it never came back
    late = join(svc, pending.answer.member_id, version=4, group="h")
    assert late.answer.error_code == E.UNKNOWN_MEMBER_ID


def test_a_leader_that_never_syncs_is_dropped_after_the_rebalance_timeout(svc):
    a_id, b_id = stable_pair(svc)
    join(svc, b_id, metadata=b"changed")  # b changes its subscription: rebalance
    a3 = join(svc, a_id)
    assert a3.answer.generation_id == 3 and state(svc) is GroupState.COMPLETING_REBALANCE
    b_sync = sync(svc, b_id, 3)
    for _ in range(4):  # heartbeats keep both sessions alive; the leader still never syncs
        advance(svc, REBALANCE // 4)
        heartbeat(svc, a_id, 3)
        heartbeat(svc, b_id, 3)
    advance(svc, 1)
    assert b_sync.answer.error_code == E.REBALANCE_IN_PROGRESS
    assert list(svc.coordinator.group("g").members) == [b_id]


def test_leave_rebalances_and_the_last_leave_empties(svc):
    a_id, b_id = stable_pair(svc)
    left = send(svc, LeaveGroupRequest(group_id="g", members=[MemberIdentity(member_id=b_id)]), 5)
    assert left.answer.error_code == 0 and left.answer.members[0].error_code == 0
    assert state(svc) is GroupState.PREPARING_REBALANCE
    assert join(svc, a_id).answer.generation_id == 3
    assert send(svc, LeaveGroupRequest(group_id="g", member_id=a_id), 2).answer.error_code == 0
    # Empty and no committed offsets: the group is forgotten (at the loop's next poll),
    # as Kafka's cleanup does.
    advance(svc, 0)
    assert svc.coordinator.group("g") is None
    assert send(svc, LeaveGroupRequest(group_id="g", member_id=a_id), 1).answer.error_code \
        == E.UNKNOWN_MEMBER_ID


def test_static_member_rejoining_fences_its_old_id(svc):
    first = join(svc, instance="i-1")
    assert first.answer.error_code == 0  # static members skip MEMBER_ID_REQUIRED
    old_id = first.answer.member_id
    assert old_id.startswith("i-1-")
    second = join(svc, instance="i-1")
    new_id = second.answer.member_id
    assert new_id != old_id and second.answer.generation_id == 2
    hb = send(svc, HeartbeatRequest(group_id="g", generation_id=2, member_id=old_id,
                                    group_instance_id="i-1"), 4)
    assert hb.answer.error_code == E.FENCED_INSTANCE_ID


def test_initial_delay_waits_for_more_members(tmp_path):
    clock = Clock()
    svc = GroupService(OffsetStore(tmp_path), clock, GroupSettings(initial_rebalance_delay_ms=3000))
    svc.clock_obj = clock
    a = joined_member(svc)
    assert a.answer is None  # the first rebalance of an Empty group waits 3 s
    advance(svc, 2000)
    b = joined_member(svc)  # ... and a new member pushes it back by another 3 s
    advance(svc, 2000)
    assert a.answer is None
    advance(svc, 1001)
    assert a.answer.generation_id == b.answer.generation_id == 1
    assert len(a.answer.members) == 2
    svc.close()


def test_list_and_describe(svc):
    a_id, b_id = stable_pair(svc)
    listed = send(svc, ListGroupsRequest(states_filter=["stable"]), 5).answer.groups
    assert [(g.group_id, g.group_state, g.protocol_type, g.group_type) for g in listed] == [
        ("g", "Stable", "consumer", "classic")]
    assert send(svc, ListGroupsRequest(states_filter=["Empty"]), 4).answer.groups == []
    described = send(svc, DescribeGroupsRequest(groups=["g", "nope"]), 5).answer.groups
    assert described[0].group_state == "Stable" and described[0].protocol_data == "range"
    assert [(m.member_id, m.member_assignment, m.client_host) for m in described[0].members] == [
        (a_id, b"x", "/127.0.0.1"), (b_id, b"y", "/127.0.0.1")]
    assert (described[1].error_code, described[1].group_state) == (0, "Dead")
    v6 = send(svc, DescribeGroupsRequest(groups=["nope"]), 6).answer.groups[0]
    assert v6.error_code == E.GROUP_ID_NOT_FOUND and v6.error_message == "Group nope not found."


def test_a_repeated_join_while_parked_gets_the_same_answer(svc):
    a_id, b_id = stable_pair(svc)
    join(svc, b_id, metadata=b"changed")  # a rebalance; b's join is parked
    b_again = join(svc, b_id, metadata=b"changed")  # b gave up waiting and asked again
    a3 = join(svc, a_id)
    first = svc.coordinator.group("g")
    assert first.state is GroupState.COMPLETING_REBALANCE and a3.answer.generation_id == 3
    assert b_again.answer.generation_id == 3 and b_again.answer.error_code == 0


def test_bad_joins_are_refused(svc):
    def bad(**kw):
        fields = dict(group_id="g", session_timeout_ms=SESSION, rebalance_timeout_ms=REBALANCE,
                      member_id="", protocol_type="consumer",
                      protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")])
        fields.update(kw)
        return send(svc, JoinGroupRequest(**fields), 9).answer.error_code
    assert bad(group_id="") == E.INVALID_GROUP_ID
    assert bad(session_timeout_ms=1000) == E.INVALID_SESSION_TIMEOUT
    assert bad(protocols=[]) == E.INCONSISTENT_GROUP_PROTOCOL
    assert bad(member_id="never-issued") == E.UNKNOWN_MEMBER_ID
    a_id, _ = stable_pair(svc)
    assert bad(protocol_type="connect") == E.INCONSISTENT_GROUP_PROTOCOL
    assert bad(protocols=[JoinGroupRequestProtocol(name="sticky", metadata=b"")]) \
        == E.INCONSISTENT_GROUP_PROTOCOL


def test_poll_walks_the_groups_only_when_something_can_be_due(svc, monkeypatch):
    a_id, _ = stable_pair(svc)
    ticks = []
    real = svc.coordinator.tick
    monkeypatch.setattr(svc.coordinator, "tick", lambda now: ticks.append(now) or real(now))
    deadline = advance(svc, 0)
    assert len(ticks) == 1 and deadline is not None
    advance(svc, 10)  # no request and nothing due: the cached deadline, no walk
    assert len(ticks) == 1
    heartbeat(svc, a_id, 2)  # a request may move a deadline
    advance(svc, 0)
    assert len(ticks) == 2
    advance(svc, SESSION)  # past the deadline: walked again (and the sessions expire)
    assert len(ticks) == 3


def stable_static_pair(svc):
    a = join(svc, instance="i-a")
    a_id = a.answer.member_id
    sync(svc, a_id, 1, [(a_id, b"all")])
    b = join(svc, instance="i-b", metadata=b"mb")
    join(svc, a_id, instance="i-a")
    b_id = b.answer.member_id
    sync(svc, b_id, 2)
    sync(svc, a_id, 2, [(a_id, b"x"), (b_id, b"y")])
    assert state(svc) is GroupState.STABLE and b.answer.generation_id == 2
    return a_id, b_id


def test_a_static_follower_comes_back_without_a_rebalance(svc):
    a_id, b_id = stable_static_pair(svc)
    back = join(svc, instance="i-b", metadata=b"mb")  # restarted: no member id
    new_b = back.answer.member_id
    assert back.answer.error_code == 0 and new_b != b_id
    assert back.answer.generation_id == 2 and state(svc) is GroupState.STABLE  # no rebalance
    assert back.answer.leader == a_id and not back.answer.skip_assignment
    assert sync(svc, new_b, 2).answer.assignment == b"y"  # its old assignment
    assert heartbeat(svc, a_id, 2) == E.NONE  # the other member never noticed
    fenced = send(svc, HeartbeatRequest(group_id="g", generation_id=2, member_id=b_id,
                                        group_instance_id="i-b"), 4)
    assert fenced.answer.error_code == E.FENCED_INSTANCE_ID


@pytest.mark.parametrize("version", [8, 9])
def test_a_static_leader_comes_back_without_a_rebalance(svc, version):
    a_id, b_id = stable_static_pair(svc)
    back = join(svc, instance="i-a", version=version)
    new_a = back.answer.member_id
    assert back.answer.generation_id == 2 and state(svc) is GroupState.STABLE
    if version >= 9:  # KIP-814: it leads, sees the members, and must not reassign
        assert back.answer.leader == new_a and back.answer.skip_assignment
        assert {m.member_id for m in back.answer.members} == {new_a, b_id}
    else:  # an older client is told the old id leads, so it does not assign
        assert back.answer.leader == a_id and back.answer.members == []
    assert sync(svc, new_a, 2).answer.assignment == b"x"


def test_a_static_member_whose_vote_changes_the_protocol_rebalances(svc):
    first = join(svc, instance="i-a")  # alone, offering only range
    a_id = first.answer.member_id
    sync(svc, a_id, 1, [(a_id, b"all")])
    back = send(svc, JoinGroupRequest(
        group_id="g", session_timeout_ms=SESSION, rebalance_timeout_ms=REBALANCE,
        group_instance_id="i-a", protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="roundrobin", metadata=b""),
                   JoinGroupRequestProtocol(name="range", metadata=b"")]), 9)
    # Its vote now picks roundrobin: a new generation, not the old assignment.
    assert back.answer.generation_id == 2 and back.answer.protocol_name == "roundrobin"
    assert state(svc) is GroupState.COMPLETING_REBALANCE
