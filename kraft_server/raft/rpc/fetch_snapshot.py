"""FetchSnapshot (API 59, KIP-630): a follower below the leader's log start copies
the leader's snapshot in chunks, then restarts its log at the snapshot's end.

Leader side: the usual cluster id and CurrentLeaderEpoch checks; the snapshot must
be the leader's latest one (else SNAPSHOT_NOT_FOUND: the follower goes back to
Fetch and is told the new id); Position must be inside it (POSITION_OUT_OF_RANGE).
The bootstrap checkpoint 0-0 is never served (``latest_snapshot`` excludes it).
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import fetch_snapshot_request as sreq
from wire.messages import fetch_snapshot_response as sresp

from kraft_server.raft.quorum_config import MAX_SNAPSHOT_CHUNK, METADATA_TOPIC
from kraft_server.common.values import OffsetAndEpoch
from kraft_server.raft.roles.base import Role
from kraft_server.raft.voters import VoterKey
from kraft_server.raft.rpc.common import (
    cluster_id_ok, follow_current_leader, single_partition,
)
from kraft_server.raft.rpc.fetch import leader_only_error

API_KEY = sreq.FetchSnapshotRequest.API_KEY


def build_fetch_snapshot_request(node, download):
    sid = download.snapshot_id
    part = sreq.PartitionSnapshot(partition=0, current_leader_epoch=node.quorum.epoch,
                                  snapshot_id=sreq.SnapshotId(end_offset=sid.offset, epoch=sid.epoch),
                                  position=download.position,
                                  replica_directory_id=node.local_key.directory_id)
    return sreq.FetchSnapshotRequest(cluster_id=node.config.cluster_id,
                                     replica_id=node.local_key.node_id, max_bytes=MAX_SNAPSHOT_CHUNK,
                                     topics=[sreq.TopicSnapshot(name=METADATA_TOPIC, partitions=[part])])


def _response(node, listener, error=ErrorCode.NONE, top_error=ErrorCode.NONE, snapshot=None,
              size=0, position=0, data=b""):
    if top_error:
        return sresp.FetchSnapshotResponse(error_code=top_error)
    q = node.quorum
    part = sresp.PartitionSnapshot(
        index=0, error_code=error,
        current_leader=sresp.LeaderIdAndEpoch(leader_id=q.leader_id, leader_epoch=q.epoch),
        size=size, position=position, unaligned_records=data)
    if snapshot is not None:
        part.snapshot_id = sresp.SnapshotId(end_offset=snapshot.offset, epoch=snapshot.epoch)
    return sresp.FetchSnapshotResponse(
        topics=[sresp.TopicSnapshot(name=METADATA_TOPIC, partitions=[part])],
        node_endpoints=[sresp.NodeEndpoint(node_id=q.leader_id, host=e.host, port=e.port)
                        for e in node.leader_endpoints(listener)])


def handle_fetch_snapshot_request(node, inbound, now_ms: int):
    req = inbound.body
    if not cluster_id_ok(node, req.cluster_id):
        return _response(node, inbound.listener, top_error=ErrorCode.INCONSISTENT_CLUSTER_ID)
    part = single_partition(req.topics, name=lambda t: t.name, index=lambda p: p.partition)
    if part is None or req.replica_id < 0:
        return _response(node, inbound.listener, top_error=ErrorCode.INVALID_REQUEST)
    error = leader_only_error(node, part.current_leader_epoch)
    if error:
        return _response(node, inbound.listener, error)
    sid = OffsetAndEpoch(part.snapshot_id.end_offset, part.snapshot_id.epoch)
    if node.log.latest_snapshot() != sid:
        return _response(node, inbound.listener, ErrorCode.SNAPSHOT_NOT_FOUND)
    size = node.log.snapshot_size(sid)
    if part.position < 0 or part.position >= size:
        return _response(node, inbound.listener, ErrorCode.POSITION_OUT_OF_RANGE)
    # Check-quorum counts it only from the voter itself, directory included (Kafka's
    # updateCheckQuorumForFollowingVoter with ReplicaState.matchesKey): a replacement
    # disk reusing a voter's id is an observer.
    leader = node.quorum.state
    if leader.is_voter_key(VoterKey(req.replica_id, part.replica_directory_id)):
        leader.record_voter_fetch(req.replica_id, now_ms, node.config.check_quorum_timeout_ms)
        leader.unacked_voters.discard(req.replica_id)
    data = node.log.read_snapshot(sid, part.position, max(1, min(req.max_bytes, MAX_SNAPSHOT_CHUNK)))
    return _response(node, inbound.listener, snapshot=sid, size=size, position=part.position, data=data)


def handle_fetch_snapshot_response(node, inflight, body, failure, now_ms: int) -> bool:
    if failure is not None or body.error_code:
        return False
    part = single_partition(body.topics, name=lambda t: t.name, index=lambda p: p.index)
    if part is None:
        return False
    if follow_current_leader(node, part, body.node_endpoints, now_ms):
        return part.error_code == ErrorCode.NONE
    q = node.quorum
    if q.role is not Role.FOLLOWER or q.state.snapshot is None or inflight.epoch != q.epoch:
        return True
    download = q.state.snapshot
    sid = OffsetAndEpoch(part.snapshot_id.end_offset, part.snapshot_id.epoch)
    if part.error_code or sid != download.snapshot_id or part.position != download.position:
        node.log.snapshot_abort(download.snapshot_id)
        q.state.snapshot = None  # start over with a Fetch: the leader names the snapshot
        return True
    data = bytes(part.unaligned_records or b"")
    node.log.snapshot_chunk(download.snapshot_id, download.position, data)
    download.position += len(data)
    download.scan.feed(data)
    if not q.state.leader_resigned:  # see rpc/fetch.py: an answer sent before it resigned
        q.state.has_fetched = True
        q.state.fetch_deadline_ms = now_ms + node.config.fetch_timeout_ms
    if download.position >= part.size:
        q.state.snapshot = None
        _install(node, download.snapshot_id, download.scan.batches())
    return True


def _install(node, snapshot_id: OffsetAndEpoch, control_batches: bytes) -> None:
    """The fetched snapshot is complete: the log restarts at its end, and the voter
    history is rebuilt from its control batches."""
    node.log.install_snapshot(snapshot_id)
    node.history.reset(0)
    node.history.observe_snapshot(control_batches, snapshot_id.offset)
    node.stats["snapshots_installed"] += 1
