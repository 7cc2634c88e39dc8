"""What every quorum state shares."""
from __future__ import annotations

from enum import Enum

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
