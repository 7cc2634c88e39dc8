"""BeginQuorumEpoch (API 53): a new leader announces itself to the voters.

The leader re-sends it (with backoff) to every voter that has neither answered nor
fetched in its epoch. A receiver checks the cluster id, that it is the addressee
(INVALID_VOTER_KEY), fences older epochs (FENCED_LEADER_EPOCH), then follows the
leader. v0 is not flexible and carries no endpoints; v1 adds VoterId,
VoterDirectoryId and LeaderEndpoints (KIP-853).
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import begin_quorum_epoch_request as breq
from wire.messages import begin_quorum_epoch_response as bresp

from kraft_server.raft.quorum_config import METADATA_TOPIC
from kraft_server.raft.roles.base import Role
from kraft_server.raft.rpc.common import (
    endpoints_from, handle_common_response, leader_response, request_partition, response_partition,
)
from kraft_server.raft.voters import VoterKey

API_KEY = breq.BeginQuorumEpochRequest.API_KEY


def build_begin_epoch_request(node, voter: VoterKey):
    part = breq.PartitionData(partition_index=0, voter_directory_id=voter.directory_id,
                              leader_id=node.local_key.node_id, leader_epoch=node.quorum.epoch)
    return breq.BeginQuorumEpochRequest(
        cluster_id=node.config.cluster_id, voter_id=voter.node_id,
        topics=[breq.TopicData(topic_name=METADATA_TOPIC, partitions=[part])],
        leader_endpoints=[breq.LeaderEndpoint(name=e.name, host=e.host, port=e.port)
                          for e in node.config.listeners])


def _response(node, error=ErrorCode.NONE, top_error=ErrorCode.NONE):
    return leader_response(node, bresp, bresp.BeginQuorumEpochResponse, error, top_error)


def handle_begin_epoch_request(node, inbound, now_ms: int):
    req = inbound.body
    part, top_error = request_partition(node, req)
    if part is None:
        return _response(node, top_error=top_error)
    if inbound.api_version >= 1 and not node.is_addressed_to_us(req.voter_id, part.voter_directory_id):
        return _response(node, ErrorCode.INVALID_VOTER_KEY)
    leader_id, epoch = part.leader_id, part.leader_epoch
    if leader_id < 0 or leader_id == node.local_key.node_id and epoch >= node.quorum.epoch:
        return _response(node, ErrorCode.INVALID_REQUEST)
    if epoch < node.quorum.epoch:
        return _response(node, ErrorCode.FENCED_LEADER_EPOCH)
    endpoints = endpoints_from(req.leader_endpoints, node.config.default_listener)
    if endpoints:
        node.remember_endpoints(leader_id, endpoints)
    node.maybe_follow(epoch, leader_id, now_ms)
    return _response(node)


def handle_begin_epoch_response(node, inflight, body, failure, now_ms: int) -> bool:
    part, endpoints = response_partition(node, body) if failure is None else (None, ())
    if part is None:
        return False
    if handle_common_response(node, part.error_code, part.leader_id, part.leader_epoch,
                              endpoints, now_ms):
        return part.error_code == ErrorCode.NONE
    q = node.quorum
    if part.error_code == ErrorCode.NONE and q.role is Role.LEADER and inflight.epoch == q.epoch:
        q.state.unacked_voters.discard(inflight.destination.node_id)
    return part.error_code == ErrorCode.NONE
