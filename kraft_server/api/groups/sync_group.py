"""SyncGroup (key 14), v0-5: the leader brings the assignment; others wait for it."""
from __future__ import annotations

import logging

from wire.errors import ErrorCode
from wire.messages import SyncGroupResponse

from kraft_server.groups.coordinator import SyncResult

log = logging.getLogger(__name__)


def sync_group_response(version: int, result: SyncResult) -> SyncGroupResponse:
    if version < 5:
        return SyncGroupResponse(error_code=result.error, assignment=result.assignment)
    return SyncGroupResponse(error_code=result.error, protocol_type=result.protocol_type,
                             protocol_name=result.protocol_name, assignment=result.assignment)


def handle_sync_group_request(call, service) -> None:
    body, version = call.body, call.api_version
    assignments = {a.member_id: bytes(a.assignment) for a in body.assignments}
    log.debug("group %s: SyncGroup v%d from %s, generation %d, %d assignments",
              body.group_id, version, body.member_id, body.generation_id, len(assignments))

    def answer(result: SyncResult) -> None:
        log.debug("group %s: SyncGroup answer to %s (generation %d): %s", body.group_id,
                  body.member_id, body.generation_id, ErrorCode(result.error).name)
        call.respond(sync_group_response(version, result))
    service.coordinator.sync(
        body.group_id, body.member_id, body.group_instance_id, body.generation_id,
        body.protocol_type if version >= 5 else None, body.protocol_name if version >= 5 else None,
        assignments, service.now(), answer)
    service.touched()
