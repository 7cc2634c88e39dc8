"""LeaveGroup (key 13), v0-5: v0-2 name one member; v3+ a batch (KIP-345), answered per
member."""
from __future__ import annotations

import logging

from wire.errors import ErrorCode
from wire.messages import LeaveGroupResponse
from wire.messages.leave_group_response import MemberResponse

log = logging.getLogger(__name__)


def handle_leave_group_request(call, service) -> None:
    body, version = call.body, call.api_version
    if version < 3:
        members = [(body.member_id, None)]
    else:
        members = [(m.member_id, m.group_instance_id) for m in body.members]
    top, errors = service.coordinator.leave(body.group_id, members, service.now())
    log.debug("group %s: LeaveGroup of %s: %s", body.group_id, [m for m, _ in members],
              [ErrorCode(e).name for e in errors])
    if version < 3:
        call.respond(LeaveGroupResponse(error_code=top or errors[0]))
    else:
        call.respond(LeaveGroupResponse(error_code=top, members=[] if top else [
            MemberResponse(member_id=m, group_instance_id=i, error_code=e)
            for (m, i), e in zip(members, errors)]))
    service.touched()
