"""Prospective (KIP-996): asking for pre-votes at the unchanged epoch.

A voter whose fetch or election timer expired lands here. With a majority of
pre-votes it becomes Candidate (and only then bumps the epoch); if the election is
lost or times out it goes back to following the leader it knew, or to Unattached.
A peer that cannot take Vote v2 counts as a grant (Kafka goes straight to Candidate
on UNSUPPORTED_VERSION, ``KafkaRaftClient.handleVoteResponse``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kraft_server.raft.boundary import Endpoint
from kraft_server.common.values import ElectionState
from kraft_server.raft.roles.base import Role, election_state, same_candidate
from kraft_server.raft.voters import VoterKey

ROLE = Role.PROSPECTIVE


@dataclass
class ProspectiveState:
    epoch: int
    election_deadline_ms: int
    voter_ids: frozenset
    leader_id: int = -1  # the leader we followed before, if any
    leader_endpoints: tuple[Endpoint, ...] = ()
    voted_key: VoterKey | None = None
    leader_resigned: bool = False  # that leader sent us EndQuorumEpoch (see FollowerState)
    granted: set = field(default_factory=set)
    rejected: set = field(default_factory=set)
    # Set when we came early, on a refused or reset connection to that leader: the fetch
    # timeout to return to if the pre-vote is lost (FollowerState.leader_unreachable).
    early_return_deadline_ms: int | None = None
    role = ROLE

    def election(self, data_version: int) -> ElectionState:
        return election_state(self.epoch, self.leader_id, self.voted_key, data_version)

    def can_grant_vote(self, key: VoterKey, log_up_to_date: bool, pre_vote: bool) -> bool:
        if self.voted_key is not None and not pre_vote:
            return same_candidate(self.voted_key, key)
        return log_up_to_date
