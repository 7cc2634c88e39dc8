"""ListGroups (key 16), v0-5: every group we know (all are classic groups), filtered by
state (v4+, case-insensitive as in Kafka) and by type (v5+)."""
from __future__ import annotations

from wire.messages import ListGroupsResponse
from wire.messages.list_groups_response import ListedGroup

CLASSIC = "classic"


def list_groups(service, version: int, body) -> ListGroupsResponse:
    states = {s.lower() for s in body.states_filter} if version >= 4 else set()
    types = {t.lower() for t in body.types_filter} if version >= 5 else set()
    listed = []
    for group_id, group in sorted(service.coordinator.groups.items()):
        state = group.state.value
        if states and state.lower() not in states:
            continue
        if types and CLASSIC not in types:
            continue
        listed.append(ListedGroup(group_id=group_id, protocol_type=group.protocol_type or "",
                                  group_state=state, group_type=CLASSIC))
    return ListGroupsResponse(groups=listed)


def handle_list_groups_request(call, service) -> None:
    call.respond(list_groups(service, call.api_version, call.body))
