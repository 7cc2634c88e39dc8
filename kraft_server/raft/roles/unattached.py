"""Unattached: an epoch with no known leader, possibly with a vote cast in it.

Voters wait here for the election timeout, then go Prospective. Observers stay here
and look for the leader through ``controller.quorum.bootstrap.servers``.
"""
from __future__ import annotations

from dataclasses import dataclass

from kraft_server.common.values import ElectionState
from kraft_server.raft.roles.base import Role, election_state, same_candidate
from kraft_server.raft.voters import VoterKey

ROLE = Role.UNATTACHED


@dataclass
class UnattachedState:
    epoch: int
    election_deadline_ms: int
    voted_key: VoterKey | None = None
    role = ROLE
    leader_endpoints = ()  # known for a followed leader only

    @property
    def leader_id(self) -> int:
        return -1

    def election(self, data_version: int) -> ElectionState:
        return election_state(self.epoch, -1, self.voted_key, data_version)

    def can_grant_vote(self, key: VoterKey, log_up_to_date: bool, pre_vote: bool) -> bool:
        if self.voted_key is not None:
            if same_candidate(self.voted_key, key):
                return True
            # Another candidate already has our vote in this epoch; a pre-vote does not
            # commit us to anything, so it only needs the log check (KIP-996).
            return pre_vote and log_up_to_date
        return log_up_to_date
