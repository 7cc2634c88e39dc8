"""JoinGroup (key 11), v0-9: the request becomes a ``coordinator.JoinRequest``; the answer
may come at once (errors, MEMBER_ID_REQUIRED on v4+) or when the rebalance completes."""
from __future__ import annotations

import logging

from wire.errors import ErrorCode
from wire.messages import JoinGroupResponse
from wire.messages.join_group_response import JoinGroupResponseMember

from kraft_server.groups.coordinator import JoinRequest, JoinResult
from kraft_server.groups.service import client_host

log = logging.getLogger(__name__)


def join_group_response(version: int, result: JoinResult) -> JoinGroupResponse:
    name = result.protocol_name
    if name is None and version < 7:
        name = ""  # not nullable before v7
    return JoinGroupResponse(
        error_code=result.error, generation_id=result.generation_id,
        protocol_type=result.protocol_type if version >= 7 else None, protocol_name=name,
        leader=result.leader, member_id=result.member_id, skip_assignment=result.skip_assignment,
        members=[JoinGroupResponseMember(member_id=m, group_instance_id=i, metadata=md)
                 for m, i, md in result.members])


def join_request(version: int, body, client_id: str, host: str) -> JoinRequest:
    rebalance = body.rebalance_timeout_ms if version >= 1 else body.session_timeout_ms
    return JoinRequest(
        group_id=body.group_id, member_id=body.member_id,
        group_instance_id=body.group_instance_id, client_id=client_id, client_host=host,
        session_timeout_ms=body.session_timeout_ms, rebalance_timeout_ms=rebalance,
        protocol_type=body.protocol_type,
        protocols=[(p.name, bytes(p.metadata)) for p in body.protocols],
        require_known_member_id=version >= 4 and body.group_instance_id is None,
        supports_skip_assignment=version >= 9)


def handle_join_group_request(call, service) -> None:
    version = call.api_version
    req = join_request(version, call.body, call.header.client_id or "", client_host(call))
    log.debug("group %s: JoinGroup v%d from %r (client %s, rebalance timeout %d ms)",
              req.group_id, version, req.member_id, req.client_id, req.rebalance_timeout_ms)

    def answer(result: JoinResult) -> None:
        log.debug("group %s: JoinGroup answer to %s: %s, generation %d, leader %s",
                  req.group_id, result.member_id, ErrorCode(result.error).name,
                  result.generation_id, result.leader)
        call.respond(join_group_response(version, result))
    service.coordinator.join(req, service.now(), answer)
    service.touched()
