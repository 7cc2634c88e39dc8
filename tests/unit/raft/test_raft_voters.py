"""Table tests for the pure quorum arithmetic and the immutable voter set (raft/voters.py)."""
from __future__ import annotations

import uuid

import pytest
from wire.messages import VotersRecord

from kraft_server.raft.boundary import Endpoint
from kraft_server.raft.voters import (
    ZERO_UUID, ElectionResult, VoterKey, VoterNode, VoterSet, election_result,
    has_overlapping_majority, high_watermark_of, majority, next_high_watermark,
)

D1, D2 = uuid.UUID(int=1), uuid.UUID(int=2)


def vs(*ids):
    return VoterSet(tuple(VoterNode(VoterKey(i), (Endpoint("CONTROLLER", f"h{i}", 9000 + i),)) for i in ids))


@pytest.mark.parametrize("n,need", [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4), (7, 4)])
def test_majority(n, need):
    assert majority(n) == need


@pytest.mark.parametrize("offsets,hwm", [
    ([10], 10),
    ([10, 5], 5),          # two voters: both must have it
    ([10, 5, 7], 7),       # the middle one
    ([0, 0, 9], 0),
    ([10, 9, 8, 7], 8),    # four voters: three must have it
    ([4, 4, 4, 1, 1], 4),
    ([15, 16, 16], 16),    # leader removed itself: {1, 2} both at 16 (LeaderStateTest)
])
def test_high_watermark_of(offsets, hwm):
    assert high_watermark_of(offsets) == hwm


@pytest.mark.parametrize("current,offsets,epoch_start,leo,expected", [
    (None, [5, 5, 0], 5, 6, None),   # the epoch's first batch (at 5) is not committed yet
    (None, [6, 6, 0], 5, 6, 6),      # it is: the HWM appears
    (6, [6, 6, 0], 5, 6, None),      # no change
    (6, [6, 4, 4], 5, 6, None),      # never moves back, even if followers restarted behind
    (6, [9, 8, 0], 5, 9, 8),
    (None, [9, 9, 9], 5, 7, 7),      # capped by our own log end
])
def test_next_high_watermark(current, offsets, epoch_start, leo, expected):
    assert next_high_watermark(current, offsets, epoch_start, leo) == expected


@pytest.mark.parametrize("voters,granted,rejected,result", [
    ({1}, {1}, set(), ElectionResult.WON),
    ({1, 2, 3}, {1}, set(), ElectionResult.PENDING),
    ({1, 2, 3}, {1, 2}, set(), ElectionResult.WON),
    ({1, 2, 3}, {1}, {2}, ElectionResult.PENDING),
    ({1, 2, 3}, {1}, {2, 3}, ElectionResult.LOST),
    ({1, 2, 3, 4}, {1, 2}, {3}, ElectionResult.PENDING),
    ({1, 2, 3, 4}, {1}, {3, 4}, ElectionResult.LOST),
    ({1, 2, 3}, {1, 9}, set(), ElectionResult.PENDING),  # a non-voter's grant does not count
])
def test_election_result(voters, granted, rejected, result):
    assert election_result(voters, granted, rejected) is result


@pytest.mark.parametrize("a,b,overlap", [
    ((1, 2, 3), (1, 2, 3), True),
    ((1, 2, 3), (1, 2, 3, 4), True),     # add one
    ((1, 2, 3), (1, 2), True),           # remove one
    ((1, 2, 3), (1, 2, 3, 4, 5), False),  # add two at once: {1,2} and {3,4,5} are disjoint
    ((1, 2, 3), (4, 5, 6), False),
    ((1,), (1, 2), True),
])
def test_has_overlapping_majority(a, b, overlap):
    assert has_overlapping_majority(vs(*a), vs(*b)) is overlap


def test_voter_key_matching_treats_zero_directory_as_unknown():
    assert VoterKey(1, D1).matches(VoterKey(1, ZERO_UUID))
    assert VoterKey(1).matches(VoterKey(1, D2))
    assert not VoterKey(1, D1).matches(VoterKey(1, D2))
    assert not VoterKey(1, D1).matches(VoterKey(2, D1))


def test_voter_set_is_immutable_and_changes_return_new_sets():
    base = vs(1, 2, 3)
    added = base.add(VoterNode(VoterKey(4, D1), ()))
    assert added.ids() == [1, 2, 3, 4] and base.ids() == [1, 2, 3]
    assert base.add(VoterNode(VoterKey(2, D1), ())) is None      # id already a voter
    assert base.remove(VoterKey(2)).ids() == [1, 3]
    assert base.remove(VoterKey(9)) is None
    assert vs(1).remove(VoterKey(1)) is None                      # never empty
    moved = base.update(VoterNode(VoterKey(2), (Endpoint("CONTROLLER", "new", 1),)))
    assert moved.endpoint(2, "CONTROLLER").host == "new"
    assert base.update(VoterNode(VoterKey(9), ())) is None
    with pytest.raises(ValueError):
        VoterSet((VoterNode(VoterKey(1), ()), VoterNode(VoterKey(1, D1), ())))


def test_voter_set_round_trips_through_voters_record_codec():
    original = VoterSet((VoterNode(VoterKey(1, D1), (Endpoint("CONTROLLER", "a", 1),), 0, 1),
                         VoterNode(VoterKey(2, D2), (Endpoint("CONTROLLER", "b", 2),), 0, 1)))
    wire_bytes = original.to_voters_record().encode(0)
    assert VoterSet.from_voters_record(VotersRecord.decode(wire_bytes, 0)) == original


def test_is_voter_requires_matching_directory_when_known():
    s = VoterSet((VoterNode(VoterKey(1, D1), ()),))
    assert s.is_voter(VoterKey(1, D1)) and s.is_voter(VoterKey(1))
    assert not s.is_voter(VoterKey(1, D2))
    assert s.is_only_voter(VoterKey(1, D1))


def test_leader_rekeys_voter_states_when_the_set_gains_directory_ids():
    """kraft.version 0 -> 1: voters known without a directory id keep their progress and
    take the upgraded keys (LeaderState.updateVoterAndObserverStates); a voter whose id
    comes back with another directory is a fresh state."""
    import uuid

    from kraft_server.raft.roles.leader import ReplicaState
    from kraft_server.raft.voters import VoterKey
    from wire.uuids import ZERO_UUID

    class Voters:
        def __init__(self, keys):
            self._keys = keys

        def keys(self):
            return self._keys

    from kraft_server.raft.roles.leader import LeaderState
    state = LeaderState.__new__(LeaderState)
    d1, d2, d3 = (uuid.uuid4() for _ in range(3))
    state.voters = {1: ReplicaState(VoterKey(1, ZERO_UUID), end_offset=10),
                    2: ReplicaState(VoterKey(2, d2), end_offset=7)}
    state.observers = {}
    state.set_voters(Voters([VoterKey(1, d1), VoterKey(2, d3)]))
    assert state.voters[1].key == VoterKey(1, d1) and state.voters[1].end_offset == 10
    assert state.voters[2].key == VoterKey(2, d3) and state.voters[2].end_offset == -1
