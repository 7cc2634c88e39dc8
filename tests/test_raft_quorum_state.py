"""The quorum state machine (raft/quorum_state.py): allowed transitions, persistence
before the swap, and how a node resumes from ``quorum-state``."""
from __future__ import annotations

import random
import uuid

import pytest

from kraft_server.log.memory import MemoryQuorumStateStore
from kraft_server.raft.config import QuorumConfig
from kraft_server.common.values import ElectionState
from kraft_server.raft.quorum_state import IllegalTransition, QuorumState
from kraft_server.raft.roles.base import Role
from kraft_server.raft.voters import VoterKey, VoterNode, VoterSet

ME = VoterKey(1, uuid.UUID(int=11))
VOTERS = VoterSet(tuple(VoterNode(VoterKey(i), ()) for i in (1, 2, 3)))


class RecordingStore(MemoryQuorumStateStore):
    """Fails the test if a state is swapped in before it was written."""

    def __init__(self, quorum_ref):
        super().__init__()
        self.quorum_ref = quorum_ref

    def write(self, state):
        q = self.quorum_ref[0]
        if q is not None and q.state is not None:
            # the old state is still current while we persist the new one
            assert q.state.election(q.data_version) != state or q.state.epoch == state.epoch
        super().write(state)


def quorum(stored=None, log_epoch=0):
    ref = [None]
    store = RecordingStore(ref)
    q = QuorumState(QuorumConfig(node_id=1, cluster_id="c"), store, random.Random(1), ME, 1)
    ref[0] = q
    q.initialize(stored, log_epoch, VOTERS, 0, lambda i: ())
    return q, store


def test_every_transition_is_persisted():
    q, store = quorum()
    steps = [
        (lambda: q.to_prospective({1, 2, 3}, 0), Role.PROSPECTIVE, 0),
        (lambda: q.to_candidate({1, 2, 3}, 0), Role.CANDIDATE, 1),
        (lambda: q.to_unattached(2, 0), Role.UNATTACHED, 2),
        (lambda: q.to_unattached_voted(3, VoterKey(2), 0), Role.UNATTACHED, 3),
        (lambda: q.to_follower(3, 2, (), 0), Role.FOLLOWER, 3),
        (lambda: q.to_prospective({1, 2, 3}, 0), Role.PROSPECTIVE, 3),
        (lambda: q.to_candidate({1, 2, 3}, 0), Role.CANDIDATE, 4),
    ]
    for action, role, epoch in steps:
        action()
        assert (q.role, q.epoch) == (role, epoch)
        assert store.read() == q.state.election(1)
    q.state.granted.add(2)
    q.to_leader(0, VOTERS, 0)
    assert store.read() == ElectionState(4, 1, 1, ME.directory_id, 1)
    q.to_resigned([VoterKey(2)], {1, 2, 3}, 0)
    assert q.role is Role.RESIGNED and store.read().leader_id == 1


def test_vote_survives_restart_and_is_not_given_twice():
    q, store = quorum()
    q.to_unattached_voted(1, VoterKey(2), 0)
    q2, _ = quorum(store.read())
    assert q2.role is Role.UNATTACHED and q2.state.voted_key.node_id == 2
    assert not q2.state.can_grant_vote(VoterKey(3), True, False)
    assert q2.state.can_grant_vote(VoterKey(2), True, False)
    with pytest.raises(IllegalTransition):
        q2.to_unattached_voted(1, VoterKey(3), 0)


@pytest.mark.parametrize("stored,log_epoch,role,epoch", [
    (None, 0, Role.UNATTACHED, 0),
    (ElectionState(5, -1, -1), 7, Role.UNATTACHED, 7),       # the log is ahead of the file
    (ElectionState(5, 1, 1, ME.directory_id), 5, Role.RESIGNED, 5),   # we were leader
    (ElectionState(5, -1, 1, ME.directory_id), 5, Role.CANDIDATE, 5),  # we voted for ourselves
    (ElectionState(5, 2, -1), 5, Role.FOLLOWER, 5),
    (ElectionState(5, -1, 3), 5, Role.UNATTACHED, 5),
])
def test_resume_from_quorum_state(stored, log_epoch, role, epoch):
    q, _ = quorum(stored, log_epoch)
    assert (q.role, q.epoch) == (role, epoch)


@pytest.mark.parametrize("setup,action", [
    ("leader", lambda q: q.to_candidate({1, 2, 3}, 0)),
    ("leader", lambda q: q.to_prospective({1, 2, 3}, 0)),
    ("leader", lambda q: q.to_follower(q.epoch, 2, (), 0)),     # two leaders in one epoch
    ("follower", lambda q: q.to_follower(q.epoch, 3, (), 0)),   # two leaders in one epoch
    ("follower", lambda q: q.to_unattached(q.epoch - 1, 0)),    # epochs never go back
    ("unattached", lambda q: q.to_leader(0, VOTERS, 0)),        # no votes
    ("unattached", lambda q: q.to_resigned([], {1}, 0)),
])
def test_illegal_transitions_raise(setup, action):
    q, _ = quorum()
    if setup == "leader":
        q.to_candidate({1, 2, 3}, 0)
        q.to_leader(0, VOTERS, 0)
    elif setup == "follower":
        q.to_follower(3, 2, (), 0)
    with pytest.raises(IllegalTransition):
        action(q)


def test_higher_epoch_keeps_the_running_election_timer():
    q, _ = quorum()
    deadline = q.state.election_deadline_ms
    q.to_unattached(4, 500)
    assert q.state.election_deadline_ms == deadline


def test_follower_grants_pre_votes_only_before_it_fetched():
    q, _ = quorum()
    q.to_follower(3, 2, (), 0)
    assert q.state.can_grant_vote(VoterKey(3), True, True)
    assert not q.state.can_grant_vote(VoterKey(3), False, True)
    assert not q.state.can_grant_vote(VoterKey(3), True, False)
    q.state.has_fetched = True
    assert not q.state.can_grant_vote(VoterKey(3), True, True)
