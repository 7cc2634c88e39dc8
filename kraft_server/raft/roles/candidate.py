"""Candidate: the epoch is bumped and our own vote for ourselves is persisted.

With a majority of votes we become Leader; when the election is lost or times out
we back off (randomised, binary exponential) and then go Prospective again
(KIP-996), so a bumped epoch that cannot win does not keep disturbing the quorum.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kraft_server.common.values import ElectionState
from kraft_server.raft.roles.base import Role, election_state
from kraft_server.raft.voters import VoterKey

ROLE = Role.CANDIDATE


@dataclass
class CandidateState:
    epoch: int
    local_key: VoterKey
    election_deadline_ms: int
    voter_ids: frozenset
    granted: set = field(default_factory=set)
    rejected: set = field(default_factory=set)
    backing_off: bool = False  # lost or timed out: waiting out the election backoff
    role = ROLE
    voted_key = None  # a vote to keep only in Unattached, Prospective and Follower
    leader_endpoints = ()  # known for a followed leader only

    @property
    def leader_id(self) -> int:
        return -1

    def election(self, data_version: int) -> ElectionState:
        return election_state(self.epoch, -1, self.local_key, data_version)  # our own vote

    def can_grant_vote(self, key: VoterKey, log_up_to_date: bool, pre_vote: bool) -> bool:
        # Our real vote in this epoch went to ourselves; a pre-vote is only advice.
        return pre_vote and log_up_to_date
