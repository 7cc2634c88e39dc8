"""Resigned: a leader that stepped down (shutdown, check-quorum, removal).

It sends EndQuorumEpoch to the voters that have not acknowledged it, naming
preferred candidates (followers by descending fetch offset) so the most caught-up
one campaigns first. It grants no votes in its epoch; after an election timeout it
moves to Unattached in the next epoch (unless it is shutting down).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kraft_server.raft.roles.base import OwnEpoch, Role
from kraft_server.raft.voters import VoterKey

ROLE = Role.RESIGNED


@dataclass
class ResignedState(OwnEpoch):
    epoch: int
    local_key: VoterKey
    election_deadline_ms: int
    unacked_voters: set = field(default_factory=set)
    preferred_candidates: list = field(default_factory=list)  # VoterKeys, best first
    shutting_down: bool = False
    role = ROLE
