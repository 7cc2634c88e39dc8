"""Why the node changed state, in words an operator reads in the log: derived from
the state it left and the state it entered (``RaftNode.transitions`` keeps them for
the shell's transition log)."""
from __future__ import annotations

from kraft_server.raft.roles.base import Role


def transition_reason(old, new, voters_left: bool = False) -> str:
    o, n = old.role, new.role
    if n is Role.LEADER:
        granted = ", ".join(str(i) for i in new.granting_voters) or "none needed"
        return f"won the election (votes from {granted})"
    if n is Role.RESIGNED:
        if new.shutting_down:
            return "resigned: shutting down"
        if old.resign_requested or voters_left:
            return "resigned: removed from the voter set"
        return "resigned: check-quorum failed (a majority of voters did not fetch within the fetch timeout)"
    if n is Role.CANDIDATE:
        if o is Role.PROSPECTIVE:
            return "won the pre-vote"
        return "standing for election"
    if n is Role.PROSPECTIVE:
        if o is Role.FOLLOWER:
            return f"no answer from leader {old.leader_id} within the fetch timeout"
        if o is Role.CANDIDATE:
            return "election backoff over"
        return "election timeout with no known leader"
    if new.epoch > old.epoch:
        seen = f"leader {new.leader_id}" if new.leader_id >= 0 else "no leader yet"
        return f"epoch {new.epoch} seen ({seen})"
    if o is Role.PROSPECTIVE:
        return "lost the pre-vote"
    if n is Role.FOLLOWER:
        return f"leader {new.leader_id} of epoch {new.epoch} found"
    if o is Role.FOLLOWER:
        return f"leader {old.leader_id} went quiet; looking for it through the bootstrap servers"
    if new.voted_key is not None and old.voted_key is None:
        return f"voted for {new.voted_key.node_id}"
    return "state changed"
