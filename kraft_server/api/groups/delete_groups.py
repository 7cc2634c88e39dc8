"""DeleteGroups (key 42), v0-3: an Empty group and its committed offsets go (the offsets
durably, before the answer); a group with members gets NON_EMPTY_GROUP, an unknown one
GROUP_ID_NOT_FOUND, as Kafka's classic groups answer (``validateDeleteGroup``).

v3 (Kafka 4.4) adds a per-group ``ErrorMessage``. Kafka 4.4 leaves it null for those
per-group checks and fills it only when the deletion itself fails (the exception's
message); ours likewise: null but when the offsets cannot be deleted, then the cause."""
from __future__ import annotations

import logging

from wire.errors import ErrorCode
from wire.messages import DeleteGroupsResponse
from wire.messages.delete_groups_response import DeletableGroupResult

from kraft_server.groups.group import GroupState

log = logging.getLogger(__name__)


def delete_group(service, group_id: str) -> DeletableGroupResult:
    group = service.coordinator.group(group_id)
    if group is None:
        return DeletableGroupResult(group_id=group_id, error_code=ErrorCode.GROUP_ID_NOT_FOUND)
    if group.state is not GroupState.EMPTY or group.pending_members:
        return DeletableGroupResult(group_id=group_id, error_code=ErrorCode.NON_EMPTY_GROUP)
    try:
        service.store.delete(group_id)
    except OSError as exc:
        log.error("group %s: cannot delete its offsets: %s", group_id, exc)
        return DeletableGroupResult(group_id=group_id, error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE,
                                    error_message=f"cannot delete the group's offsets: {exc.strerror or exc}")
    del service.coordinator.groups[group_id]
    log.info("group %s deleted", group_id)
    return DeletableGroupResult(group_id=group_id, error_code=ErrorCode.NONE)


def handle_delete_groups_request(call, service) -> None:
    call.respond(DeleteGroupsResponse(results=[delete_group(service, g)
                                               for g in call.body.groups_names]))
    service.touched()
