"""DescribeGroups (key 15), v0-6, as Kafka's classic group summary: members with their
metadata and assignment only while Stable; the protocol name only while Stable. A group
we do not know is "Dead" with no error before v6, GROUP_ID_NOT_FOUND from v6 (KIP-1043)."""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import DescribeGroupsResponse
from wire.messages.describe_groups_response import DescribedGroup, DescribedGroupMember

from kraft_server.groups.group import GroupState

GROUP_OPERATIONS = 328  # READ, DELETE and DESCRIBE: what Kafka reports with no authorizer
OPERATIONS_OMITTED = -2147483648


def _describe(group_id: str, group, version: int, operations: int) -> DescribedGroup:
    if group is None:
        if version >= 6:
            return DescribedGroup(error_code=ErrorCode.GROUP_ID_NOT_FOUND, group_id=group_id,
                                  error_message=f"Group {group_id} not found.",
                                  authorized_operations=operations)
        return DescribedGroup(group_id=group_id, group_state=GroupState.DEAD.value,
                              authorized_operations=operations)
    stable = group.state is GroupState.STABLE
    members = [DescribedGroupMember(
        member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
        client_host=m.client_host,
        member_metadata=m.metadata(group.protocol_name) if stable else b"",
        member_assignment=m.assignment if stable else b"")
        for m in group.members.values()]
    return DescribedGroup(group_id=group_id, group_state=group.state.value,
                          protocol_type=group.protocol_type or "",
                          protocol_data=(group.protocol_name or "") if stable else "",
                          members=members, authorized_operations=operations)


def describe_groups(service, version: int, body) -> DescribeGroupsResponse:
    operations = (GROUP_OPERATIONS if version >= 3 and body.include_authorized_operations
                  else OPERATIONS_OMITTED)
    return DescribeGroupsResponse(groups=[
        _describe(g, service.coordinator.group(g), version, operations) for g in body.groups])


def handle_describe_groups_request(call, service) -> None:
    call.respond(describe_groups(service, call.api_version, call.body))
