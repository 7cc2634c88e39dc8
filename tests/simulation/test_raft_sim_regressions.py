"""Regressions found by the membership simulation (python -m tests.simulation --membership):
one test per root cause, at the level where the cause lives (core or simulation model)."""
from __future__ import annotations

import uuid

import pytest

from wire.messages import REQUESTS
from wire.messages import begin_quorum_epoch_request as breq

from kraft_server.raft.boundary import InboundRequest
from kraft_server.raft.roles.base import Role
from kraft_server.raft.rpc import fetch
from kraft_server.raft.voters import VoterKey
from wire.uuids import ZERO_UUID
from tests.support.scenario_engine import Scenario


def _cluster() -> Scenario:
    s = Scenario()
    s.run("add-nodes 3 kraft-version=1 observers=0")
    s.run("elect 1")
    assert s.nodes[1].role is Role.LEADER
    return s


def _fetch_from(s: Scenario, replica: int, version: int, directory_id=None):
    """Replica's own Fetch as if it had the leader's whole log, across the codec at
    ``version`` (v16 drops ReplicaDirectoryId)."""
    body = fetch.build_fetch_request(s.nodes[replica])
    body.topics[0].partitions[0].fetch_offset = s.nodes[1].log.end_offset()
    body.topics[0].partitions[0].last_fetched_epoch = s.nodes[1].epoch
    if directory_id is not None:
        body.topics[0].partitions[0].replica_directory_id = directory_id
    body = REQUESTS[fetch.API_KEY].decode(body.encode(version), version)
    s.nodes[1].step(InboundRequest((replica, None), fetch.API_KEY, version, body), s.now)


def test_fetch_below_v17_does_not_count_as_a_voter_known_by_directory():
    """Membership seed 159: a replaced disk (same id, new directory) fetching below
    Fetch v17 was counted as the old voter, and a VotersRecord committed with one
    real holder. Kafka's ReplicaState.matchesKey: a voter known with a directory id
    matches only a fetch carrying that directory id."""
    s = _cluster()
    leader = s.nodes[1]
    state = leader.quorum.state
    hwm = leader.high_watermark
    s.run("propose 1 a")
    s.now += 30  # past append.linger.ms
    s.run("tick 1")
    s.run("process-ready 1")  # appended and flushed by the leader
    assert leader.log.flushed_offset() > hwm
    before = state.voters[3].last_fetch_ms
    s.now += 10
    _fetch_from(s, 3, 16)  # no directory id: an observer as far as the leader knows
    assert state.voters[3].last_fetch_ms == before
    assert state.observers[3].key == VoterKey(3, ZERO_UUID)
    assert 3 not in state.fetched_voters
    assert not state.is_voter_key(VoterKey(3, ZERO_UUID))
    # It was at the leader's end offset, yet it commits nothing.
    assert leader.high_watermark == hwm
    # The voter itself (v17, its directory id) does.
    s.now += 10
    _fetch_from(s, 3, 17)
    assert state.voters[3].last_fetch_ms == s.now
    assert 3 in state.fetched_voters or state.check_quorum_needed() == 1
    assert leader.high_watermark > hwm
    # A different directory at v17 is an observer too.
    _fetch_from(s, 2, 17, directory_id=uuid.UUID(int=202))
    assert state.observers[2].key == VoterKey(2, uuid.UUID(int=202))


def test_a_follower_finds_a_leader_outside_its_voter_set_through_begin_quorum_epoch_v1():
    """Membership seed 170: node 2's latest voter set ({2,3}, uncommitted) lacked the
    new leader 1 of {1,2}; with BeginQuorumEpoch v0 (no LeaderEndpoints) it knew no
    address for 1, never fetched, and unseated leader after leader. Under kraft.version
    1 every peer speaks v1 (the simulation now models that), whose LeaderEndpoints let
    the follower fetch from a leader its voter set does not hold."""
    s = Scenario()
    s.run("add-nodes 3 kraft-version=1 observers=0")
    node = s.nodes[2]
    assert node.voter_set().node(7) is None
    req = breq.BeginQuorumEpochRequest(
        cluster_id=node.config.cluster_id, voter_id=2,
        topics=[breq.TopicData(topic_name="__cluster_metadata", partitions=[breq.PartitionData(
            partition_index=0, voter_directory_id=uuid.UUID(int=2), leader_id=7, leader_epoch=5)])],
        leader_endpoints=[breq.LeaderEndpoint(name="CONTROLLER", host="n7", port=9007)])
    req = REQUESTS[53].decode(req.encode(1), 1)
    node.step(InboundRequest((7, None), 53, 1, req), s.now)
    assert node.role is Role.FOLLOWER and node.quorum.state.leader_id == 7
    node.tick(s.now)
    sent = [r for r in node.ready().requests if r.api_key == fetch.API_KEY]
    assert [(r.destination.node_id, r.destination.endpoint.port) for r in sent] == [(7, 9007)]


def test_simulation_admin_keeps_a_live_majority_and_wipes_only_between_changes():
    """Membership seeds 144 and 220 stalled for reasons no Raft avoids: the admin removed
    a voter while another's disk was gone (leaving {3-old, 4}), or a disk was lost
    while a voter change was uncommitted. The simulated admin no longer does either."""
    from tests.simulation.membership import MembershipSimulation
    sim = MembershipSimulation(0)
    voters = sim.nodes[1].raft.voter_set()
    old3 = voters.node(3).key
    sim._wipe(sim.nodes[3])
    assert not sim._keeps_live_majority(voters.remove(voters.node(2).key))
    assert not sim._keeps_live_majority(voters.remove(voters.node(1).key))
    assert sim._keeps_live_majority(voters.remove(old3))


def test_simulation_wipes_a_disk_only_under_a_leader_that_fenced_earlier_changes():
    """Membership seed 47232952 (issue 32): leader 1 appended {1,2} and resigned; leader 2,
    before committing anything in its epoch, saw {1,2,3} as committed, and node 2's disk
    was lost. Node 1 (newest log) then stood only in {1,2-old}; 3 needed 1's vote, which
    1's newer log refused: a dead end in Kafka too. A disk is now lost only under a leader
    whose high watermark is known (Kafka's condition for the next voter change)."""
    from tests.simulation.membership import MembershipSimulation
    sim = MembershipSimulation(3, churn=False)
    budget = 0
    while (sim.leader() is None or sim.leader().raft.high_watermark is None) and budget < 5000:
        budget += 50
        sim.run(budget)
    leader = sim.leader()
    voters = leader.raft.voter_set()
    assert sim._may_wipe(leader, voters)
    leader.raft.high_watermark = None  # as a new leader before its first commit
    assert not sim._may_wipe(leader, voters)


def test_stale_candidates_are_exempt_from_the_election_sets_overlap_check():
    """Membership seeds 18 and 272: a voter partitioned (or removed) while the set
    changed campaigns with the set it last knew; its majorities may miss the current
    set's, but its log lacks a committed VotersRecord, so it cannot win."""
    from tests.simulation.membership import MembershipChecker
    checker = MembershipChecker()
    checker.voters_checked = {40}
    # (voter ids, VotersRecord offsets held, log start, log end, committed end,
    #  the log's last epoch, the last committed batch's epoch)
    stale = (frozenset({1, 2, 3}), (10,), 0, 60, 60, 4, 4)
    fresh = (frozenset({1, 3, 4}), (10, 25, 40), 0, 60, 60, 4, 4)
    from_snapshot = (frozenset({1, 3, 4}), (), 50, 60, 60, 4, 4)
    assert checker._stale(stale) == "voters"
    assert checker._stale(fresh) is None
    assert checker._stale(from_snapshot) is None
    # Membership seed 117639402 (5 nodes): a voter holding an uncommitted VotersRecord
    # at 52 from an older epoch, while data up to 73 was committed without it, stands
    # with that set: its log ends (53) below the committed end, so it cannot win.
    behind = (frozenset({1, 2, 3, 4, 5, 6, 7}), (10, 25, 40), 0, 53, 73, 4, 4)
    assert checker._stale(behind) == "short"
    # Membership seed 49400798 (issue 32): leader 2 of epoch 17 appended {1,2,5} at 654
    # and resigned before replicating it; 3 led epoch 19 and committed up to 658 over
    # those offsets. 2 had not fetched (nor truncated) yet and stood in epoch 21 with
    # its log [593, 673) of last epoch 17: long enough, but divergent. Every voter that
    # holds the committed epoch-19 batch has a higher (last epoch, end) and refuses it.
    divergent = (frozenset({1, 2, 5}), (592, 597, 654), 593, 673, 658, 17, 19)
    assert checker._stale(divergent) == "divergent"
    # The same log with the committed batch's epoch as its last is up to date.
    assert checker._stale(divergent[:5] + (19, 19)) is None


def test_the_overlap_check_still_catches_two_up_to_date_candidacies():
    """Two candidates of one epoch, both holding all committed data, with voter sets
    whose majorities can miss each other: a violation (the check stays armed)."""
    from tests.simulation.invariants import InvariantViolation
    from tests.simulation.membership import MembershipChecker

    class Candidate:
        role = Role.CANDIDATE
        epoch = 7
        high_watermark = None
        stats = {"truncated_below_hwm": 0, "conflicting_leader": 0, "hwm_regression_ignored": 0}

        def __init__(self, voter_ids, offsets):
            self.quorum = type("Q", (), {"state": type("S", (), {"voter_ids": frozenset(voter_ids)})()})()
            self.history = type("H", (), {"_voter_offsets": offsets})()

    class Log:
        def start_offset(self):
            return 0

        def end_offset(self):
            return 80

        def last_fetched_epoch(self):
            return 7

        def latest_snapshot(self):
            return None

    checker = MembershipChecker()
    checker.committed_end, checker.committed_last_epoch = 73, 6
    checker.check(1, Candidate({1, 2, 3, 4, 6}, [2, 41, 109]), Log())
    with pytest.raises(InvariantViolation, match="candidates used voter sets"):
        checker.check(3, Candidate({1, 2, 3, 4, 5, 6, 7}, [2, 41, 52]), Log())
