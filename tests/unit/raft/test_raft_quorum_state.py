"""The quorum state machine (raft/quorum_state.py): allowed transitions, the election
state each one leaves for the shell to persist, and how a node resumes from ``quorum-state``."""
from __future__ import annotations

import random
import uuid

import pytest

from kraft_server.log.memory import MemoryQuorumStateStore
from kraft_server.raft.quorum_config import QuorumConfig
from kraft_server.common.values import ElectionState
from kraft_server.raft.quorum_state import IllegalTransition, QuorumState
from kraft_server.raft.roles.base import Role
from kraft_server.raft.voters import VoterKey, VoterNode, VoterSet

ME = VoterKey(1, uuid.UUID(int=11))
VOTERS = VoterSet(tuple(VoterNode(VoterKey(i), ()) for i in (1, 2, 3)))


def quorum(stored=None, log_epoch=0):
    q = QuorumState(QuorumConfig(node_id=1, cluster_id="c"), random.Random(1), ME, 1)
    q.initialize(stored, log_epoch, VOTERS, 0, lambda i: ())
    store = MemoryQuorumStateStore()
    persist(q, store)
    return q, store


def persist(q, store) -> None:
    """What the shell does with each Ready: write the state the transitions left."""
    unsaved = q.take_unsaved()
    assert unsaved is not None, "a transition left nothing to persist"
    store.write(unsaved)
    assert q.take_unsaved() is None  # handed out once


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
        persist(q, store)
        assert (q.role, q.epoch) == (role, epoch)
        assert store.read() == q.state.election(1)
    q.state.granted.add(2)
    q.to_leader(0, VOTERS, 0)
    persist(q, store)
    assert store.read() == ElectionState(4, 1, 1, ME.directory_id, 1)
    q.to_resigned([VoterKey(2)], {1, 2, 3}, 0)
    persist(q, store)
    assert q.role is Role.RESIGNED and store.read().leader_id == 1


def test_vote_survives_restart_and_is_not_given_twice():
    q, store = quorum()
    q.to_unattached_voted(1, VoterKey(2), 0)
    persist(q, store)
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
