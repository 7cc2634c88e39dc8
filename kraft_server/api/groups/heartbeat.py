"""Heartbeat (key 12), v0-4: keeps a member's session alive; REBALANCE_IN_PROGRESS tells
it to rejoin."""
from __future__ import annotations

from wire.messages import HeartbeatResponse


def handle_heartbeat_request(call, service) -> None:
    body = call.body
    error = service.coordinator.heartbeat(body.group_id, body.member_id, body.group_instance_id,
                                          body.generation_id, service.now())
    call.respond(HeartbeatResponse(error_code=error))
    service.touched()
