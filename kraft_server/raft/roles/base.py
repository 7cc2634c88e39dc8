"""What every quorum state shares."""
from __future__ import annotations

from enum import Enum

from kraft_server.common.values import ElectionState
from kraft_server.raft.voters import VoterKey


class Role(Enum):
    UNATTACHED = "Unattached"
    PROSPECTIVE = "Prospective"
    CANDIDATE = "Candidate"
    LEADER = "Leader"
    FOLLOWER = "Follower"
    RESIGNED = "Resigned"


def same_candidate(voted: VoterKey | None, key: VoterKey) -> bool:
    """A repeated request from the replica we already voted for (same id, and the same
    directory when both are known) may be granted again (Kafka ``UnattachedState``)."""
    return voted is not None and voted.matches(key)


def election_state(epoch: int, leader_id: int, voted: VoterKey | None, data_version: int) -> ElectionState:
    """What ``quorum-state`` keeps of a role: the epoch, the leader it knows (-1: none)
    and the vote it cast (none: -1)."""
    return ElectionState(epoch, leader_id, voted.node_id if voted else -1,
                         voted.directory_id if voted else None, data_version)


class OwnEpoch:
    """Leader and Resigned: the epoch is ours (we won it); we name ourselves its leader,
    and grant no vote in it."""
    voted_key = None  # a vote to keep only in Unattached, Prospective and Follower
    leader_endpoints = ()  # known for a followed leader only

    @property
    def leader_id(self) -> int:
        return self.local_key.node_id

    def election(self, data_version: int) -> ElectionState:
        return election_state(self.epoch, self.local_key.node_id, self.local_key, data_version)

    def can_grant_vote(self, key: VoterKey, log_up_to_date: bool, pre_vote: bool) -> bool:
        return False
