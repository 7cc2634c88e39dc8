"""UpdateRaftVoter (API 82, KIP-853): a voter tells the leader its current endpoints
and kraft.version range.

Follower side: under kraft.version 1, once it has fetched in the epoch, a voter
compares what the log says about it with its own listeners and supported range; if
they differ it sends UpdateRaftVoter (re-checked every fetch timeout until the
leader accepts).

Leader side, in Kafka's order (``handleUpdateVoterRequest`` + ``UpdateVoterHandler``):
cluster id; CurrentLeaderEpoch (FENCED / UNKNOWN_LEADER_EPOCH / NOT_LEADER); a voter
id >= 0 and a directory id (INVALID_REQUEST); the default listener present and a
sane version range covering the finalized kraft.version (INVALID_REQUEST); no
uncommitted voter change and a known HWM (REQUEST_TIMED_OUT); the voter known
(VOTER_NOT_FOUND); then a VotersRecord is appended and NONE returned at once.
When the request gives the voter an endpoint it did not have (on a listener the
leader probes, ``endpoint_probe.py``), the leader first sends ApiVersions there, as
Kafka does after 4.4.0 (KAFKA-20661): no answer, or an error, refuses the update with
REQUEST_TIMED_OUT and nothing written (the voter asks again a fetch timeout later);
Kafka 4.4.0 commits the new endpoints unchecked.
Under kraft.version 0 a voter sends it once per leader, and the leader records the
voter's directory id, endpoints and range in ``LeaderState.upgrade_voters`` (the
in-memory voters a kraft.version upgrade writes, ``KRaftVersionUpgrade``) instead of
appending a record; an id not in the static set is VOTER_NOT_FOUND.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import update_raft_voter_request as ureq
from wire.messages import update_raft_voter_response as uresp
from wire.records import ControlRecordType, build_control_batch

from kraft_server.raft import endpoint_probe as probe
from kraft_server.raft import membership, own_voter
from kraft_server.raft.boundary import Endpoint
from kraft_server.raft.roles.base import Role
from kraft_server.raft.rpc.common import cluster_id_ok, handle_common_response
from kraft_server.raft.rpc.fetch import leader_only_error
from kraft_server.raft.voters import VoterKey, VoterNode
from wire.uuids import ZERO_UUID

API_KEY = ureq.UpdateRaftVoterRequest.API_KEY


def maybe_send(node, state, dest, now_ms: int) -> bool:
    if state.update_voter_done or not state.has_fetched \
            or now_ms < state.update_voter_due_ms or not node.is_voter() or not node.config.listeners \
            or node.local_key.directory_id == ZERO_UUID:  # nothing the leader could use
        return False
    logged = node.voter_set().node(node.local_key.node_id)
    mine = own_voter.local_node(node)
    if logged is None or node.kraft_version() >= 1 and not own_voter.differs(logged, mine):
        state.update_voter_done = True
        return False
    state.update_voter_due_ms = now_ms + node.config.fetch_timeout_ms
    body = ureq.UpdateRaftVoterRequest(
        cluster_id=node.config.cluster_id, current_leader_epoch=node.epoch,
        voter_id=node.local_key.node_id, voter_directory_id=node.local_key.directory_id,
        listeners=[ureq.Listener(name=e.name, host=e.host, port=e.port) for e in mine.endpoints],
        kraft_version_feature=ureq.KRaftVersionFeature(min_supported_version=mine.kraft_version_min,
                                                       max_supported_version=mine.kraft_version_max))
    return node.send(dest, API_KEY, body, now_ms)


def _response(node, error=ErrorCode.NONE):
    q = node.quorum
    eps = node.leader_endpoints(node.config.default_listener)
    leader = uresp.CurrentLeader(leader_id=q.leader_id, leader_epoch=q.epoch,
                                 host=eps[0].host if eps else "", port=eps[0].port if eps else -1)
    return uresp.UpdateRaftVoterResponse(error_code=error, current_leader=leader)


def handle_update_voter_request(node, inbound, now_ms: int):
    req = inbound.body
    if not cluster_id_ok(node, req.cluster_id):
        return _response(node, ErrorCode.INCONSISTENT_CLUSTER_ID)
    error = leader_only_error(node, req.current_leader_epoch)
    if error:
        return _response(node, error)
    if req.voter_id < 0 or req.voter_directory_id == ZERO_UUID:
        return _response(node, ErrorCode.INVALID_REQUEST)
    endpoints = tuple(Endpoint(e.name, e.host, e.port) for e in req.listeners)
    if node.config.default_listener not in {e.name for e in endpoints}:
        return _response(node, ErrorCode.INVALID_REQUEST)
    lo, hi = req.kraft_version_feature.min_supported_version, req.kraft_version_feature.max_supported_version
    if lo < 0 or hi < lo or not lo <= node.kraft_version() <= hi:
        return _response(node, ErrorCode.INVALID_REQUEST)
    hwm = node.high_watermark
    leader = node.quorum.state
    membership.expire(node, leader, now_ms)
    if leader.change is not None or hwm is None or node.history.latest_offset() >= hwm:
        return _response(node, ErrorCode.REQUEST_TIMED_OUT)
    new_node = VoterNode(VoterKey(req.voter_id, req.voter_directory_id), endpoints, lo, hi)
    if node.kraft_version() < 1:
        voters = leader.upgrade_voters
        updated = voters.update_ignoring_directory(new_node) if voters is not None else None
        if updated is None:
            return _response(node, ErrorCode.VOTER_NOT_FOUND)
        leader.upgrade_voters = updated
        return _response(node)
    updated = node.voter_set().update(new_node)
    if updated is None:
        return _response(node, ErrorCode.VOTER_NOT_FOUND)
    logged = node.voter_set().node(req.voter_id).endpoints
    new_endpoints = [e for e in probe.endpoints_to_probe(node.config, endpoints) if e not in logged]
    if new_endpoints:  # KAFKA-20661: reach the new address before the voters rely on it
        change = membership.PendingChange(
            membership.UPDATE, inbound, new_node.key, endpoints, True, now_ms,
            probes_left=tuple(new_endpoints[1:]), voter=new_node, reply=lambda error: _response(node, error))
        if not probe.send(node, change, new_endpoints[0], now_ms):
            return _response(node, ErrorCode.REQUEST_TIMED_OUT)
        leader.change = change
        return None  # answered when the probes are
    append_voters(node, updated, now_ms)
    return _response(node)


def append_voters(node, voters, now_ms: int) -> None:
    node.drain_proposals()
    node.leader_append(build_control_batch(
        node.log.end_offset(), node.epoch, now_ms,
        [(ControlRecordType.KRAFT_VOTERS, voters.to_voters_record())]))


def on_probe_answer(node, leader, change, body, failure, now_ms: int) -> bool:
    """The ApiVersions answer from a voter's new endpoint: refused (REQUEST_TIMED_OUT,
    nothing written), the next endpoint, or the VotersRecord appended."""
    if failure is not None or body.error_code:
        node.stats["update_voter_unreachable"] += 1
        membership.finish(node, leader, ErrorCode.REQUEST_TIMED_OUT)
        return False
    if change.probes_left:
        endpoint, *rest = change.probes_left
        change.probes_left = tuple(rest)
        if not probe.send(node, change, endpoint, now_ms):
            membership.finish(node, leader, ErrorCode.REQUEST_TIMED_OUT)
        return True
    updated = node.voter_set().update(change.voter)
    if updated is None:
        membership.finish(node, leader, ErrorCode.VOTER_NOT_FOUND)
        return True
    append_voters(node, updated, now_ms)
    if change.inbound is None:  # the leader's own entry (own_voter.py)
        own_voter.appended(node, leader)
    membership.finish(node, leader)
    return True


def handle_update_voter_response(node, inflight, body, failure, now_ms: int) -> bool:
    if failure is not None:
        return False
    leader = body.current_leader
    eps = (Endpoint(node.config.default_listener, leader.host, leader.port),) if leader.host else ()
    if handle_common_response(node, body.error_code, leader.leader_id, leader.leader_epoch, eps, now_ms):
        return body.error_code == ErrorCode.NONE
    q = node.quorum
    if body.error_code == ErrorCode.NONE and q.role is Role.FOLLOWER and inflight.epoch == q.epoch:
        q.state.update_voter_done = True
    return body.error_code == ErrorCode.NONE
