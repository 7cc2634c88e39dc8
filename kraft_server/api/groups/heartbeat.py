"""Heartbeat (key 12), v0-4: keeps a member's session alive; REBALANCE_IN_PROGRESS tells
it to rejoin."""
from __future__ import annotations

import logging

from wire.errors import ErrorCode
from wire.messages import HeartbeatResponse

log = logging.getLogger(__name__)


def handle_heartbeat_request(call, service) -> None:
    body = call.body
    error = service.coordinator.heartbeat(body.group_id, body.member_id, body.group_instance_id,
                                          body.generation_id, service.now())
    log.debug("group %s: Heartbeat from %s, generation %d: %s", body.group_id, body.member_id,
              body.generation_id, ErrorCode(error).name)
    call.respond(HeartbeatResponse(error_code=error))
    service.touched()
