"""KIP-853 membership changes in the core: what the scenario files
(tests/scenarios/membership_*.txt) do not show line by line."""
from __future__ import annotations

import uuid

from wire.errors import ErrorCode
from wire.messages import api_versions_response as avr

from kraft_server.api import registry
from kraft_server.shell.core_view import CoreView
from kraft_server.raft.boundary import InboundResponse
from kraft_server.raft.roles.base import Role
from kraft_server.raft.voters import VoterKey
from tests.support.scenario_engine import Scenario


def cluster(observers=1) -> Scenario:
    s = Scenario()
    s.run(f"add-nodes 3 kraft-version=1 observers={observers}")
    s.run("elect 1")
    assert s.nodes[1].role is Role.LEADER
    return s


def admin_answers(s: Scenario, node_id: int):
    out = s.run(f"process-ready {node_id}")
    return [line for line in out.splitlines() if "->admin" in line]


def test_removed_leader_does_not_count_itself_and_hwm_never_decreases():
    s = cluster()
    s.run("add-voter 1 4")
    s.run("stabilize")
    leader = s.nodes[1]
    hwm = leader.high_watermark
    s.run("remove-voter 1 1")
    s.run("process-ready 1")  # the VotersRecord {2,3,4} is appended; 1 flushed it
    assert leader.voter_set().ids() == [2, 3, 4]
    assert leader.role is Role.LEADER and 1 not in leader.quorum.state.voters
    # Only 2 fetches the new record: the leader's own copy does not count, so 1 of
    # {2,3,4} is not a majority and the HWM stays where it was.
    s.run("deliver-msgs 2")
    s.run("process-ready 2")
    s.run("deliver-msgs 1")
    s.run("process-ready 1")
    assert leader.high_watermark == hwm
    assert leader.role is Role.LEADER
    s.run("stabilize")
    assert leader.high_watermark == hwm + 1
    assert leader.role is Role.RESIGNED and leader.stats["removed_leader_resigned"] == 1


def test_describe_quorum_shows_latest_and_committed_voters_while_a_change_is_in_flight():
    s = cluster()
    s.run("add-voter 1 4")
    s.run("process-ready 1")
    s.run("deliver-msgs 4")
    s.run("process-ready 1")  # VotersRecord {1,2,3,4} appended, not committed
    view = CoreView(s.nodes[1], 1, "c", {}, lambda: s.now).quorum(s.now)
    assert [r.replica_id for r in view.voters] == [1, 2, 3, 4]
    assert [r.replica_id for r in view.committed_voters] == [1, 2, 3]
    s.run("stabilize")
    view = CoreView(s.nodes[1], 1, "c", {}, lambda: s.now).quorum(s.now)
    assert [r.replica_id for r in view.committed_voters] == [1, 2, 3, 4]
    # Now remove 4: it shows as an observer in the latest set but is still committed.
    s.run("remove-voter 1 4")
    s.run("process-ready 1")
    view = CoreView(s.nodes[1], 1, "c", {}, lambda: s.now).quorum(s.now)
    assert [r.replica_id for r in view.voters] == [1, 2, 3]
    assert [r.replica_id for r in view.committed_voters] == [1, 2, 3, 4]
    assert [r.replica_id for r in view.observers] == [4]
    assert view.committed_voters[3].log_end_offset >= 0  # the observer's real state


def test_a_removed_voter_cannot_disrupt_the_quorum():
    s = cluster(observers=0)
    s.run("remove-voter 1 3")
    s.run("process-ready 1")
    s.run("deliver-msgs 2")  # 3 never hears of its removal
    s.run("process-ready 2")
    s.run("deliver-msgs 1")
    assert admin_answers(s, 1) == ["1->admin RemoveRaftVoterResponse error=0"]
    epoch = s.nodes[1].epoch
    # 3 still thinks it is a voter; its fetch timer runs out and it asks for pre-votes
    # at the unchanged epoch. 1 leads and 2 has fetched from it: both refuse, and
    # nobody's epoch moves (KIP-996).
    s.nodes[3].tick(s.now + 10_000)
    assert s.nodes[3].role is Role.PROSPECTIVE
    s.run("stabilize")
    assert s.nodes[1].role is Role.LEADER and s.nodes[2].role is Role.FOLLOWER
    assert {s.nodes[i].epoch for i in (1, 2)} == {epoch}


def test_losing_leadership_answers_not_leader_or_follower():
    s = cluster()
    s.run("add-voter 1 4")
    s.run("process-ready 1")  # the ApiVersions probe is out
    leader = s.nodes[1]
    leader.resign(s.now)
    assert admin_answers(s, 1) == ["1->admin AddRaftVoterResponse error=6"]


def test_new_voter_without_kraft_version_1_is_invalid_request():
    s = cluster()
    s.run("add-voter 1 4")
    leader = s.nodes[1]
    [probe] = [r for r in leader.ready().requests if r.api_key == 18]
    body = avr.ApiVersionsResponse(supported_features=[avr.SupportedFeatureKey(
        name="kraft.version", min_version=0, max_version=0)])
    leader.step(InboundResponse(probe.correlation, probe.destination, 18, body=body), s.now)
    [answer] = leader.ready().responses
    assert answer.body.error_code == ErrorCode.INVALID_REQUEST
    assert leader.voter_set().ids() == [1, 2, 3]


def test_a_directory_replacement_is_an_observer_until_added():
    s = cluster(observers=0)
    s.run("replace-disk 3 dir=103")
    s.run("stabilize rounds=20")
    leader = s.nodes[1].quorum.state
    assert leader.voters[3].key == VoterKey(3, uuid.UUID(int=3))
    assert leader.observers[3].key == VoterKey(3, uuid.UUID(int=103))
    assert not leader.is_voter_key(VoterKey(3, uuid.UUID(int=103)))


def test_listeners_advertise_reconfiguration():
    from kraft_server.raft.node import RaftNode
    assert RaftNode.SUPPORTS_RECONFIGURATION
    apis = registry.listener_apis(True, reconfiguration=RaftNode.SUPPORTS_RECONFIGURATION)
    assert apis[80] == (0, 1) and apis[81] == (0, 0) and apis[57] == (0, 2)
    assert {80, 81, 57} <= registry.CORE_APIS


def test_removed_leader_handover_survives_a_fetch_answer_sent_before_it_resigned():
    """test_e's race: the removed leader answers a Fetch successfully, then resigns and
    sends EndQuorumEpoch; the follower sees EndQuorumEpoch first and the older Fetch
    answer second. That answer must not put back a whole fetch timeout (nor mark the
    leader as fetched from again), or the handover waits out fetch.timeout.ms."""
    s = cluster()
    s.run("add-voter 1 4")
    s.run("stabilize")
    s.run("remove-voter 1 1")
    held = []  # node 2's Fetch answers from 1, delivered only after 1 resigned
    for _ in range(40):
        s.run("process-ready 1 2 3 4")
        for item in list(s.mailbox):
            dst, kind, src, payload, _ = item
            if (dst, kind, src) == (2, "resp", 1) and payload[1].api_key == 1:
                s.mailbox.remove(item)
                held.append(item)
        if s.nodes[1].role is Role.RESIGNED:
            break
        s.run("deliver-msgs 1 2 3 4")
    assert s.nodes[1].role is Role.RESIGNED and held
    s.run("process-ready 1")  # EndQuorumEpoch to 2, 3 and 4
    follower = s.nodes[2]
    s.run("deliver-msgs 2")  # EndQuorumEpoch first ...
    assert follower.role is Role.FOLLOWER and follower.quorum.state.leader_resigned
    shortened = follower.quorum.state.fetch_deadline_ms
    assert shortened <= s.now + follower.config.election_backoff_max_ms
    s.mailbox.extend(held[-1:])
    s.run("deliver-msgs 2")  # ... then the Fetch answer 1 sent while still leader
    assert follower.role is Role.FOLLOWER and follower.quorum.state.fetch_deadline_ms == shortened
    # A new leader of {2, 3, 4} well within an election timeout.
    start = s.now
    while s.now - start < follower.config.election_timeout_ms:
        s.now += 10
        s.run("tick 2 3 4")
        s.run("stabilize rounds=20")
        if any(s.nodes[i].role is Role.LEADER for i in (2, 3, 4)):
            break
    assert any(s.nodes[i].role is Role.LEADER for i in (2, 3, 4)), \
        [(i, s.nodes[i].role, s.nodes[i].epoch) for i in (2, 3, 4)]


def test_prospective_whose_leader_resigned_returns_with_an_election_backoff():
    """A pre-vote lost while the known leader has resigned goes back to following it
    (KIP-996), but retries after an election backoff, not a whole fetch timeout: that
    leader will never answer a Fetch in this epoch again."""
    s = cluster()
    s.run("add-voter 1 4")
    s.run("stabilize")
    s.run("remove-voter 1 1")
    s.run("stabilize rounds=40")
    assert s.nodes[1].role is Role.RESIGNED
    # Everyone got EndQuorumEpoch; force node 2 through a lost pre-vote.
    node = s.nodes[2]
    assert node.role is Role.FOLLOWER and node.quorum.state.leader_resigned
    node.transition_to_prospective(s.now)
    assert node.role is Role.PROSPECTIVE and node.quorum.state.leader_resigned
    node.election_lost(s.now)
    assert node.role is Role.FOLLOWER and node.quorum.state.leader_resigned
    assert node.quorum.state.fetch_deadline_ms <= s.now + node.config.election_backoff_max_ms


# -- the leader probes the new voter's endpoints (issue 39, section 3; KAFKA-20661) ---------------

def _probe(leader):
    [probe] = [r for r in leader.ready().requests if r.api_key == 18]
    return probe


def _admin_answer(leader):
    [answer] = [r for r in leader.ready().responses if r.handle[0] == "admin"]
    return answer.body


def _kraft_answer(lo=0, hi=1):
    return avr.ApiVersionsResponse(supported_features=[avr.SupportedFeatureKey(
        name="kraft.version", min_version=lo, max_version=hi)])


def test_an_unreachable_new_voter_is_refused_with_the_endpoint_named():
    from kraft_server.raft.boundary import SendFailure
    s = cluster()
    leader = s.nodes[1]
    s.run("add-voter 1 4")
    probe = _probe(leader)
    assert (probe.destination.node_id, probe.destination.endpoint.host, probe.destination.endpoint.port) == \
        (4, "n4", 9004)
    leader.step(InboundResponse(probe.correlation, probe.destination, 18,
                                failure=SendFailure.DISCONNECTED), s.now)
    answer = _admin_answer(leader)
    assert answer.error_code == ErrorCode.REQUEST_TIMED_OUT  # Kafka's code for a failed probe
    assert answer.error_message == (
        "Aborted add voter operation for controller 4 (directory id AAAAAAAAAAAAAAAAAAAABA) since "
        "API_VERSIONS to its endpoint failed: the connection to CONTROLLER://n4:9004 was refused or closed. "
        "Voters must reach each other: check that controller 4 is running and that its "
        "advertised.listeners give an address the controllers can reach")
    assert leader.voter_set().ids() == [1, 2, 3] and leader.quorum.state.change is None
    assert leader.stats["add_voter_unreachable"] == 1 and leader.stats["voters_added"] == 0


def test_a_probe_without_answer_times_out_with_the_endpoint_named():
    s = cluster()
    leader = s.nodes[1]
    s.run("add-voter 1 4")
    _probe(leader)  # sent, never answered
    s.now += leader.config.request_timeout_ms - 1
    leader.tick(s.now)
    assert not [r for r in leader.ready().responses if r.handle[0] == "admin"]
    s.now += 1
    leader.tick(s.now)
    answer = _admin_answer(leader)
    assert answer.error_code == ErrorCode.REQUEST_TIMED_OUT
    assert "since API_VERSIONS to its endpoint failed: CONTROLLER://n4:9004 did not answer within 2000 ms " \
           "(controller.quorum.request.timeout.ms)" in answer.error_message
    assert leader.voter_set().ids() == [1, 2, 3]


def test_an_error_answer_to_the_probe_is_refused_too():
    s = cluster()
    leader = s.nodes[1]
    s.run("add-voter 1 4")
    probe = _probe(leader)
    body = avr.ApiVersionsResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    leader.step(InboundResponse(probe.correlation, probe.destination, 18, body=body), s.now)
    answer = _admin_answer(leader)
    assert answer.error_code == ErrorCode.REQUEST_TIMED_OUT
    assert "CONTROLLER://n4:9004 answered with error CLUSTER_AUTHORIZATION_FAILED" in answer.error_message


def _second_listener(s: Scenario):
    """The leader has a second controller listener, CTRL2, with the same security."""
    from dataclasses import replace
    leader = s.nodes[1]
    leader.config = replace(leader.config, probe_listeners=("CTRL2",))
    return leader


def _add_with_two_listeners(s: Scenario, other: str = "CTRL2"):
    from wire.messages import add_raft_voter_request as areq
    body = areq.AddRaftVoterRequest(
        cluster_id="scenario-cluster-AAAAAA", timeout_ms=30000, voter_id=4,
        voter_directory_id=uuid.UUID(int=4), ack_when_committed=True,
        listeners=[areq.Listener(name="CONTROLLER", host="n4", port=9004),
                   areq.Listener(name=other, host="n4", port=9104)])
    s._admin(1, body, 1)


def test_every_endpoint_on_a_listener_the_leader_speaks_is_probed_in_turn():
    """Kafka probes the default listener only and commits the rest unchecked."""
    from kraft_server.raft.boundary import SendFailure
    s = cluster()
    leader = _second_listener(s)
    _add_with_two_listeners(s)
    first = _probe(leader)
    assert first.destination.endpoint.port == 9004  # the default listener first
    leader.step(InboundResponse(first.correlation, first.destination, 18, body=_kraft_answer()), s.now)
    second = _probe(leader)
    assert (second.destination.endpoint.name, second.destination.endpoint.port) == ("CTRL2", 9104)
    leader.step(InboundResponse(second.correlation, second.destination, 18,
                                failure=SendFailure.TIMEOUT), s.now)
    answer = _admin_answer(leader)
    assert answer.error_code == ErrorCode.REQUEST_TIMED_OUT
    assert "CTRL2://n4:9104 did not answer within 2000 ms" in answer.error_message
    assert leader.voter_set().ids() == [1, 2, 3]


def test_both_endpoints_answering_adds_the_voter_with_both():
    s = cluster()
    leader = _second_listener(s)
    s.run("stabilize")  # observer 4 has caught up
    _add_with_two_listeners(s)
    for _ in range(2):
        probe = _probe(leader)
        leader.step(InboundResponse(probe.correlation, probe.destination, 18, body=_kraft_answer()), s.now)
    assert leader.voter_set().ids() == [1, 2, 3, 4]
    assert [e.name for e in leader.voter_set().node(4).endpoints] == ["CONTROLLER", "CTRL2"]
    s.run("stabilize")
    assert leader.committed_voter_set().ids() == [1, 2, 3, 4]


def test_an_endpoint_on_a_listener_the_leader_lacks_is_not_probed():
    s = cluster()
    leader = _second_listener(s)
    s.run("stabilize")
    _add_with_two_listeners(s, other="ELSEWHERE")
    probe = _probe(leader)
    leader.step(InboundResponse(probe.correlation, probe.destination, 18, body=_kraft_answer()), s.now)
    assert not [r for r in leader.ready().requests if r.api_key == 18]
    assert leader.voter_set().ids() == [1, 2, 3, 4]


def _update_voter(s: Scenario, voter: int, port: int):
    """Voter ``voter`` tells leader 1 it now listens on ``port``."""
    from wire.messages import update_raft_voter_request as ureq
    body = ureq.UpdateRaftVoterRequest(
        cluster_id="scenario-cluster-AAAAAA", current_leader_epoch=s.nodes[1].epoch, voter_id=voter,
        voter_directory_id=uuid.UUID(int=voter),
        listeners=[ureq.Listener(name="CONTROLLER", host=f"n{voter}", port=port)],
        kraft_version_feature=ureq.KRaftVersionFeature(min_supported_version=0, max_supported_version=1))
    s._admin(1, body, 0)


def test_an_update_to_an_unreachable_endpoint_is_refused_before_it_is_written():
    """KAFKA-20661 proper: Kafka 4.4.0 commits UpdateRaftVoter's endpoints unchecked."""
    from kraft_server.raft.boundary import SendFailure
    s = cluster(observers=0)
    s.run("stabilize")
    leader = s.nodes[1]
    end = leader.log.end_offset()
    _update_voter(s, 2, 9902)
    probe = _probe(leader)
    assert (probe.destination.node_id, probe.destination.endpoint.port) == (2, 9902)
    leader.step(InboundResponse(probe.correlation, probe.destination, 18,
                                failure=SendFailure.DISCONNECTED), s.now)
    answer = _admin_answer(leader)
    assert answer.error_code == ErrorCode.REQUEST_TIMED_OUT
    assert leader.log.end_offset() == end  # nothing written
    assert [e.port for e in leader.voter_set().node(2).endpoints] == [9002]
    assert leader.stats["update_voter_unreachable"] == 1 and leader.quorum.state.change is None


def test_an_update_to_a_reachable_endpoint_is_written_once_it_answers():
    s = cluster(observers=0)
    s.run("stabilize")
    leader = s.nodes[1]
    _update_voter(s, 2, 9902)
    probe = _probe(leader)
    leader.step(InboundResponse(probe.correlation, probe.destination, 18, body=_kraft_answer()), s.now)
    answer = _admin_answer(leader)
    assert answer.error_code == ErrorCode.NONE
    assert [e.port for e in leader.voter_set().node(2).endpoints] == [9902]


def test_an_update_that_keeps_the_endpoints_is_written_at_once():
    s = cluster(observers=0)
    s.run("stabilize")
    leader = s.nodes[1]
    _update_voter(s, 2, 9002)  # the same address, as a restart with the same listeners
    ready = leader.ready()
    assert not [r for r in ready.requests if r.api_key == 18]
    [answer] = [r.body for r in ready.responses if r.handle[0] == "admin"]
    assert answer.error_code == ErrorCode.NONE
