"""Resigned: a leader that stepped down (shutdown, check-quorum, removal).

It sends EndQuorumEpoch to the voters that have not acknowledged it, naming
preferred candidates (followers by descending fetch offset) so the most caught-up
one campaigns first. It grants no votes in its epoch; after an election timeout it
moves to Unattached in the next epoch (unless it is shutting down).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kraft_server.common.values import ElectionState
from kraft_server.raft.roles.base import Role
from kraft_server.raft.voters import VoterKey

ROLE = Role.RESIGNED


@dataclass
class ResignedState:
    epoch: int
    local_key: VoterKey
    election_deadline_ms: int
    unacked_voters: set = field(default_factory=set)
    preferred_candidates: list = field(default_factory=list)  # VoterKeys, best first
    shutting_down: bool = False
    role = ROLE
    voted_key = None  # a vote to keep only in Unattached, Prospective and Follower
    leader_endpoints = ()  # known for a followed leader only

    @property
    def leader_id(self) -> int:
        return self.local_key.node_id

    def election(self, data_version: int) -> ElectionState:
        k = self.local_key
        return ElectionState(self.epoch, k.node_id, k.node_id, k.directory_id, data_version)

    def can_grant_vote(self, key: VoterKey, log_up_to_date: bool, pre_vote: bool) -> bool:
        return False
