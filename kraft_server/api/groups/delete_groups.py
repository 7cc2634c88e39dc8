"""DeleteGroups (key 42), v0-2: an Empty group and its committed offsets go (the offsets
durably, before the answer); a group with members gets NON_EMPTY_GROUP, an unknown one
GROUP_ID_NOT_FOUND, as Kafka's classic groups answer (``validateDeleteGroup``)."""
from __future__ import annotations

import logging

from wire.errors import ErrorCode
from wire.messages import DeleteGroupsResponse
from wire.messages.delete_groups_response import DeletableGroupResult

from .group import GroupState

log = logging.getLogger(__name__)


def delete_group(service, group_id: str) -> int:
    group = service.coordinator.group(group_id)
    if group is None:
        return ErrorCode.GROUP_ID_NOT_FOUND
    if group.state is not GroupState.EMPTY or group.pending_members:
        return ErrorCode.NON_EMPTY_GROUP
    try:
        service.store.delete(group_id)
    except OSError as exc:
        log.error("group %s: cannot delete its offsets: %s", group_id, exc)
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    del service.coordinator.groups[group_id]
    log.info("group %s deleted", group_id)
    return ErrorCode.NONE


def handle_delete_groups_request(call, service) -> None:
    call.respond(DeleteGroupsResponse(results=[
        DeletableGroupResult(group_id=g, error_code=delete_group(service, g))
        for g in call.body.groups_names]))
    service.touched()
