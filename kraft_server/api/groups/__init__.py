"""The classic consumer-group protocol on the client listener (issue 10).

A consumer of ``__cluster_metadata`` that subscribes (kafka-python with ``group_id``,
``kafka-console-consumer`` without ``--partition``, ``kcat -G``) or that commits offsets
needs a group coordinator: ``kraft_server/groups`` is one, for that one topic. This
package is its request side, one module per API: FindCoordinator, JoinGroup, SyncGroup,
Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, ListGroups, DescribeGroups,
DeleteGroups, OffsetDelete.

``handle(call, service, node_id, advertised)`` routes one decoded request.
"""
from __future__ import annotations

from wire.messages import (
    DeleteGroupsRequest, DescribeGroupsRequest, OffsetDeleteRequest, FindCoordinatorRequest, HeartbeatRequest, JoinGroupRequest,
    LeaveGroupRequest, ListGroupsRequest, OffsetCommitRequest, OffsetFetchRequest,
    SyncGroupRequest,
)

from .delete_groups import handle_delete_groups_request
from .describe_groups import handle_describe_groups_request
from .find_coordinator import handle_find_coordinator_request
from .heartbeat import handle_heartbeat_request
from .join_group import handle_join_group_request
from .leave_group import handle_leave_group_request
from .list_groups import handle_list_groups_request
from .offset_commit import handle_offset_commit_request
from .offset_delete import handle_offset_delete_request
from .offset_fetch import handle_offset_fetch_request
from kraft_server.groups.service import GroupService
from .sync_group import handle_sync_group_request

_HANDLERS = {
    OffsetCommitRequest.API_KEY: handle_offset_commit_request,
    OffsetFetchRequest.API_KEY: handle_offset_fetch_request,
    JoinGroupRequest.API_KEY: handle_join_group_request,
    HeartbeatRequest.API_KEY: handle_heartbeat_request,
    LeaveGroupRequest.API_KEY: handle_leave_group_request,
    SyncGroupRequest.API_KEY: handle_sync_group_request,
    DescribeGroupsRequest.API_KEY: handle_describe_groups_request,
    ListGroupsRequest.API_KEY: handle_list_groups_request,
    DeleteGroupsRequest.API_KEY: handle_delete_groups_request,
    OffsetDeleteRequest.API_KEY: handle_offset_delete_request,
}


def handle(call, service: GroupService, node_id: int, advertised: dict[str, tuple[str, int]]) -> None:
    if call.api_key == FindCoordinatorRequest.API_KEY:
        handle_find_coordinator_request(call, node_id, advertised)
    else:
        _HANDLERS[call.api_key](call, service)


__all__ = ["GroupService", "handle"]
