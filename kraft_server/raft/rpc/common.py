"""Checks and helpers every KRaft RPC shares.

``handle_common_response`` is Kafka's ``maybeHandleCommonResponse``: any response
that names a leader or epoch newer than ours moves us to it before the
RPC-specific handling runs.
"""
from __future__ import annotations

from wire.errors import ErrorCode

from kraft_server.raft.quorum_config import METADATA_PARTITION, METADATA_TOPIC
from kraft_server.raft.boundary import Endpoint
from kraft_server.raft.roles.base import Role


def cluster_id_ok(node, cluster_id) -> bool:
    """Requests may omit the cluster id (null); a different one is rejected with
    INCONSISTENT_CLUSTER_ID (``KafkaRaftClient.hasValidClusterId``)."""
    return cluster_id is None or cluster_id == node.config.cluster_id


def _topic_name(topic) -> str:
    return topic.topic_name


def _partition_index(part) -> int:
    return part.partition_index


def single_partition(topics, name=_topic_name, index=_partition_index):
    """The one ``__cluster_metadata``/0 partition of a request, or None (the caller
    answers INVALID_REQUEST, as Kafka does for anything else). ``name`` and ``index``
    read a topic's name and a partition's index where a message names them otherwise."""
    if len(topics) != 1:
        return None
    topic = topics[0]
    if name(topic) != METADATA_TOPIC:
        return None
    parts = topic.partitions
    if len(parts) != 1 or index(parts[0]) != METADATA_PARTITION:
        return None
    return parts[0]


def request_partition(node, req) -> tuple[object, int]:
    """The request's one ``__cluster_metadata``/0 partition and NONE, or None and the
    top-level error Kafka answers: INCONSISTENT_CLUSTER_ID first, then INVALID_REQUEST."""
    if not cluster_id_ok(node, req.cluster_id):
        return None, ErrorCode.INCONSISTENT_CLUSTER_ID
    part = single_partition(req.topics)
    if part is None:
        return None, ErrorCode.INVALID_REQUEST
    return part, ErrorCode.NONE


def leader_response(node, messages, response, error: int = ErrorCode.NONE, top_error: int = ErrorCode.NONE,
                    **fields):
    """The answer Vote, BeginQuorumEpoch and EndQuorumEpoch share (``messages``: the
    response's generated module, ``response``: its class): a top-level error alone, or
    the one partition with the leader and epoch we know (plus ``fields``) and that
    leader's endpoints."""
    if top_error:
        return response(error_code=top_error)
    q = node.quorum
    part = messages.PartitionData(partition_index=0, error_code=error, leader_id=q.leader_id,
                                  leader_epoch=q.epoch, **fields)
    return response(
        topics=[messages.TopicData(topic_name=METADATA_TOPIC, partitions=[part])],
        node_endpoints=[messages.NodeEndpoint(node_id=q.leader_id, host=e.host, port=e.port)
                        for e in node.leader_endpoints(node.config.default_listener)])


def response_partition(node, body) -> tuple[object, tuple[Endpoint, ...]]:
    """Such an answer's one partition and the endpoints it gives for the leader it names,
    or (None, ()) when it carries a top-level error or not exactly that partition."""
    if body.error_code:
        return None, ()
    part = single_partition(body.topics)
    if part is None:
        return None, ()
    return part, node_endpoints_for(body.node_endpoints, part.leader_id, node.config.default_listener)


def endpoints_from(entries, listener: str) -> tuple[Endpoint, ...]:
    """A LeaderEndpoints list; an endpoint without a name is on ``listener``."""
    return tuple(Endpoint(e.name or listener, e.host, e.port) for e in entries)


def node_endpoints_for(entries, node_id: int, listener: str) -> tuple[Endpoint, ...]:
    return tuple(Endpoint(listener, e.host, e.port) for e in entries if e.node_id == node_id)


def follow_current_leader(node, part, node_endpoints, now_ms: int) -> bool:
    """``handle_common_response`` for a Fetch or FetchSnapshot answer's partition, whose
    leader comes as ``CurrentLeader``."""
    leader = part.current_leader
    endpoints = node_endpoints_for(node_endpoints, leader.leader_id, node.config.default_listener)
    return handle_common_response(node, part.error_code, leader.leader_id, leader.leader_epoch, endpoints, now_ms)


def handle_common_response(node, error: int, leader_id: int, epoch: int,
                           endpoints: tuple[Endpoint, ...], now_ms: int) -> bool:
    """Move to a newer epoch or a newly learned leader. Returns True when the response
    is stale or was fully handled here (the caller should stop)."""
    q = node.quorum
    if epoch < q.epoch:
        return True  # an answer from an older epoch: nothing in it applies to us now
    if endpoints:
        node.remember_endpoints(leader_id, endpoints)
    if epoch > q.epoch:
        node.transition_to_epoch(epoch, leader_id, now_ms)
        return True
    # Only a leader we did not know: a Prospective whose fetch timed out still knows
    # its old leader, and a resigned leader keeps naming itself; going back to it would
    # stall the election (Kafka checks ``!quorum.hasLeader()``).
    # A leader nobody can tell us the address of (one that removed itself from the
    # voter set) is not worth following: we could not fetch from it.
    if leader_id >= 0 and leader_id != node.local_key.node_id and q.leader_id < 0 and q.role in (
            Role.UNATTACHED, Role.PROSPECTIVE, Role.CANDIDATE) and node.voter_destination(leader_id):
        node.transition_to_follower(epoch, leader_id, now_ms)
        return True
    return error in (ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.NOT_LEADER_OR_FOLLOWER,
                     ErrorCode.UNKNOWN_LEADER_EPOCH, ErrorCode.BROKER_NOT_AVAILABLE,
                     ErrorCode.INCONSISTENT_CLUSTER_ID, ErrorCode.INVALID_REQUEST)
