"""RemoveRaftVoter (API 81, v0, KIP-853) on the leader.

Front checks (``KafkaRaftClient.handleRemoveVoterRequest``): cluster id
(INCONSISTENT_CLUSTER_ID); the leader only (NOT_LEADER_OR_FOLLOWER); a voter id >= 0
with a directory id (INVALID_REQUEST). Then ``RemoveVoterHandler``: a change pending
or no HWM yet (REQUEST_TIMED_OUT); kraft.version 0 (UNSUPPORTED_VERSION); an
uncommitted VotersRecord (REQUEST_TIMED_OUT); the key not a voter, or the last one
(VOTER_NOT_FOUND). The new VotersRecord is appended and the reply waits until it
commits, or ``controller.quorum.request.timeout.ms`` passes.

Removing the leader itself is allowed: it keeps leading (without counting itself
toward the HWM) until the removal commits, then resigns (``membership``).
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import RemoveRaftVoterRequest

from kraft_server.raft import membership
from kraft_server.raft.voters import VoterKey

API_KEY = RemoveRaftVoterRequest.API_KEY


def _reply(error, message=None):
    return membership.response(membership.REMOVE, error, message)


def handle_remove_voter_request(node, inbound, now_ms: int):
    req = inbound.body
    error = membership.request_error(node, req, membership.REMOVE)
    if error:
        return _reply(*error)
    leader = node.quorum.state
    error = membership.change_error(node, leader, now_ms, membership.REMOVE)
    if error:
        return _reply(*error)
    key = VoterKey(req.voter_id, req.voter_directory_id)
    current = node.voter_set()
    node_entry = current.node(key.node_id)
    voters = current.remove(key) if node_entry is not None and node_entry.key == key else None
    if voters is None:
        return _reply(ErrorCode.VOTER_NOT_FOUND,
                      f"Cannot remove voter {key} from the set of voters {current.keys()}")
    leader.change = membership.PendingChange(membership.REMOVE, inbound, key, (), True,
                                             now_ms + node.config.request_timeout_ms)
    leader.change.last_offset = membership.append_voters(node, voters, now_ms)
    node.stats["voters_removed"] += 1
    return None  # answered once the removal commits
