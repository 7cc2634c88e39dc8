"""AddRaftVoter (API 80, v0-1, KIP-853) on the leader, and the ApiVersions probe of
the new voter it needs.

Front checks (``KafkaRaftClient.handleAddVoterRequest``), in order: cluster id
(INCONSISTENT_CLUSTER_ID); the leader only (NOT_LEADER_OR_FOLLOWER; the response
has no field naming the leader); a voter id >= 0 with a directory id, and
listeners that include the leader's default controller listener (INVALID_REQUEST).

Then ``AddVoterHandler``: a change already pending, or no HWM yet
(REQUEST_TIMED_OUT); kraft.version 0 (UNSUPPORTED_VERSION); an uncommitted
VotersRecord (REQUEST_TIMED_OUT); the id already a voter (DUPLICATE_VOTER). Then
ApiVersions goes to the new voter's default listener (not sendable now:
REQUEST_TIMED_OUT). Its answer: an error, a refused connection or no answer
(REQUEST_TIMED_OUT, naming the endpoint: ``endpoint_probe.py``), a kraft.version
range missing or not covering the finalized level (INVALID_REQUEST). Beyond Kafka,
the new voter's endpoints on our other controller listeners are probed the same
way, one after the other. Then the voter not a caught-up observer
(REQUEST_TIMED_OUT); else the new VotersRecord is appended and the reply waits for
it to commit (v1 ``AckWhenCommitted=false``: replies at once). The request's
TimeoutMs is ignored, as in Kafka: the timer is ``controller.quorum.request.timeout.ms``,
restarted for each probe and once more for the commit.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import AddRaftVoterRequest

from kraft_server.raft import endpoint_probe as probe
from kraft_server.raft import membership
from kraft_server.raft.boundary import Endpoint
from kraft_server.raft.roles.base import Role
from kraft_server.raft.rpc import update_voter
from kraft_server.raft.voters import VoterKey, VoterNode

API_KEY = AddRaftVoterRequest.API_KEY
API_VERSIONS_KEY = probe.API_VERSIONS_KEY
KRAFT_VERSION = "kraft.version"


def _reply(error, message=None):
    return membership.response(membership.ADD, error, message)


def handle_add_voter_request(node, inbound, now_ms: int):
    req = inbound.body
    error = membership.request_error(node, req, membership.ADD)
    if error:
        return _reply(*error)
    endpoints = tuple(Endpoint(e.name, e.host, e.port) for e in req.listeners)
    listener = node.config.default_listener
    if all(e.name != listener for e in endpoints):
        return _reply(ErrorCode.INVALID_REQUEST,
                      f"Add voter request didn't include the endpoint ({listener}) for the default listener")
    leader = node.quorum.state
    error = membership.change_error(node, leader, now_ms, membership.ADD)
    if error:
        return _reply(*error)
    key = VoterKey(req.voter_id, req.voter_directory_id)
    if node.voter_set().node(req.voter_id) is not None:
        return _reply(ErrorCode.DUPLICATE_VOTER,
                      f"The voter id for {key} is already part of the set of voters")
    first, *rest = probe.endpoints_to_probe(node.config, endpoints)
    ack = req.ack_when_committed if inbound.api_version >= 1 else True
    change = membership.PendingChange(membership.ADD, inbound, key, endpoints, ack, now_ms,
                                      probes_left=tuple(rest))
    if not probe.send(node, change, first, now_ms):
        return _reply(ErrorCode.REQUEST_TIMED_OUT, f"New voter {key} is not ready to receive requests")
    leader.change = change
    return None  # answered when the change finishes


def handle_api_versions_response(node, inflight, body, failure, now_ms: int) -> bool:
    """``AddVoterHandler.handleApiVersionsResponse``, for each endpoint probed."""
    if node.role is not Role.LEADER:
        return failure is None
    leader = node.quorum.state
    change = leader.change
    if change is None or change.kind not in (membership.ADD, membership.UPDATE) \
            or change.probe_correlation != inflight.correlation:
        return failure is None  # nothing waits for it any more
    if change.kind == membership.UPDATE:
        return update_voter.on_probe_answer(node, leader, change, body, failure, now_ms)
    if failure is not None or body.error_code:
        code = body.error_code if failure is None else 0
        text = probe.failure_text(change.probing, failure, code, node.config.request_timeout_ms)
        node.stats["add_voter_unreachable"] += 1
        membership.finish(node, leader, ErrorCode.REQUEST_TIMED_OUT, probe.refusal(change.key, text))
        return False
    if change.kraft_range is None:  # the default listener's answer
        finalized = node.kraft_version()
        feature = next((f for f in body.supported_features if f.name == KRAFT_VERSION), None)
        if feature is None or not feature.min_version <= finalized <= feature.max_version:
            membership.finish(node, leader, ErrorCode.INVALID_REQUEST,
                              f"Aborted add voter operation for {change.key} since its {KRAFT_VERSION} "
                              f"range doesn't support the finalized version {finalized}")
            return True
        change.kraft_range = (feature.min_version, feature.max_version)
    if change.probes_left:
        endpoint, *rest = change.probes_left
        change.probes_left = tuple(rest)
        if not probe.send(node, change, endpoint, now_ms):
            membership.finish(node, leader, ErrorCode.REQUEST_TIMED_OUT,
                              f"New voter {change.key} is not ready to receive requests")
        return True
    change.probing, change.timeout_message = None, None
    change.deadline_ms = now_ms + node.config.request_timeout_ms
    if not leader.is_caught_up(change.key, now_ms):
        membership.finish(node, leader, ErrorCode.REQUEST_TIMED_OUT,
                          f"Aborted add voter operation for {change.key} since it is lagging behind")
        return True
    voters = node.voter_set().add(VoterNode(change.key, change.endpoints, *change.kraft_range))
    if voters is None:  # cannot happen: the id was checked, and only we append
        membership.finish(node, leader, ErrorCode.DUPLICATE_VOTER)
        return True
    change.last_offset = membership.append_voters(node, voters, now_ms)
    node.stats["voters_added"] += 1
    if not change.ack_when_committed:
        membership.finish(node, leader)
    return True
