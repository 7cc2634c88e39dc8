"""EndQuorumEpoch (API 54): a resigning leader hands over.

The resigned leader names preferred candidates, most caught-up first. A follower
of that leader shortens its fetch timeout by its place in the list: the first
campaigns at once, the n-th after ``retry.backoff * 2^(n-1)`` capped at
``election.backoff.max`` (``KafkaRaftClient.endEpochElectionBackoff``); a voter not
in the list waits a random backoff. v0 names successors by id only.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import end_quorum_epoch_request as ereq
from wire.messages import end_quorum_epoch_response as eresp

from kraft_server.raft.quorum_config import METADATA_TOPIC
from kraft_server.raft.roles.base import Role
from kraft_server.raft.rpc.common import (
    endpoints_from, handle_common_response, leader_response, request_partition, response_partition,
)
from kraft_server.raft.voters import VoterKey
from wire.uuids import ZERO_UUID

API_KEY = ereq.EndQuorumEpochRequest.API_KEY


def build_end_epoch_request(node, preferred: list[VoterKey]):
    part = ereq.PartitionData(
        partition_index=0, leader_id=node.local_key.node_id, leader_epoch=node.quorum.epoch,
        preferred_successors=[k.node_id for k in preferred],  # v0 only; dropped at v1
        preferred_candidates=[ereq.ReplicaInfo(candidate_id=k.node_id, candidate_directory_id=k.directory_id)
                              for k in preferred])
    return ereq.EndQuorumEpochRequest(
        cluster_id=node.config.cluster_id,
        topics=[ereq.TopicData(topic_name=METADATA_TOPIC, partitions=[part])],
        leader_endpoints=[ereq.LeaderEndpoint(name=e.name, host=e.host, port=e.port)
                          for e in node.config.listeners])


def _response(node, error=ErrorCode.NONE, top_error=ErrorCode.NONE):
    return leader_response(node, eresp, eresp.EndQuorumEpochResponse, error, top_error)


def election_backoff_ms(node, preferred: list[VoterKey]) -> int:
    cfg = node.config
    for position, key in enumerate(preferred):
        if key.matches(node.local_key):
            if position == 0:
                return 0
            return min(cfg.election_backoff_max_ms, cfg.retry_backoff_ms << (position - 1))
    return node.rng.randint(0, cfg.election_backoff_max_ms)


def handle_end_epoch_request(node, inbound, now_ms: int):
    req = inbound.body
    part, top_error = request_partition(node, req)
    if part is None:
        return _response(node, top_error=top_error)
    leader_id, epoch = part.leader_id, part.leader_epoch
    if epoch < node.quorum.epoch:
        return _response(node, ErrorCode.FENCED_LEADER_EPOCH)
    if inbound.api_version >= 1:
        preferred = [VoterKey(c.candidate_id, c.candidate_directory_id) for c in part.preferred_candidates]
    else:
        preferred = [VoterKey(i, ZERO_UUID) for i in part.preferred_successors]
    endpoints = endpoints_from(req.leader_endpoints, node.config.default_listener)
    if endpoints and leader_id >= 0:
        node.remember_endpoints(leader_id, endpoints)
    if leader_id != node.local_key.node_id:
        node.maybe_follow(epoch, leader_id, now_ms)
    q = node.quorum
    if q.role is Role.FOLLOWER and q.state.leader_id == leader_id and node.is_voter():
        deadline = now_ms + election_backoff_ms(node, preferred)
        q.state.fetch_deadline_ms = min(q.state.fetch_deadline_ms, deadline)
        q.state.leader_resigned = True
    return _response(node)


def handle_end_epoch_response(node, inflight, body, failure, now_ms: int) -> bool:
    part, endpoints = response_partition(node, body) if failure is None else (None, ())
    if part is None:
        return False
    q = node.quorum
    if q.role is Role.RESIGNED and part.error_code == ErrorCode.NONE and part.leader_epoch <= q.epoch:
        q.state.unacked_voters.discard(inflight.destination.node_id)
    if handle_common_response(node, part.error_code, part.leader_id, part.leader_epoch,
                              endpoints, now_ms):
        return part.error_code == ErrorCode.NONE
    return part.error_code == ErrorCode.NONE
