"""The authorizer on the classic consumer-group APIs of a client listener, as a Kafka
broker checks them (``KafkaApis``): READ on the GROUP to join, sync, heartbeat, leave
and commit offsets, DESCRIBE to fetch offsets, describe a group or find its
coordinator (DESCRIBE on the TRANSACTIONAL_ID for a transaction coordinator), DELETE
to delete a group or its offsets; ListGroups lists every group with DESCRIBE on the
CLUSTER, else only the groups the caller may describe.

A request about one group is answered GROUP_AUTHORIZATION_FAILED when refused; one
about several (DescribeGroups, DeleteGroups, OffsetFetch v8+, FindCoordinator v4+)
goes on with the allowed groups, the refused ones answered first. OffsetCommit,
OffsetFetch and OffsetDelete then check their topics (``authorize_offsets.py``).
"""
from __future__ import annotations

from kraft_server.security import acls as A
from wire.errors import ErrorCode, error_message
from wire.messages import (
    DeleteGroupsRequest, DescribeGroupsRequest, FindCoordinatorRequest, HeartbeatRequest, JoinGroupRequest,
    LeaveGroupRequest, ListGroupsRequest, OffsetCommitRequest, OffsetDeleteRequest, OffsetFetchRequest,
    RESPONSES, SyncGroupRequest,
)
from wire.messages.delete_groups_response import DeletableGroupResult
from wire.messages.describe_groups_response import DescribedGroup
from wire.messages.find_coordinator_response import Coordinator
from wire.messages.offset_fetch_response import OffsetFetchResponseGroup

from .authorize_items import joiner, narrowed_body
from .call import CallWrapper, Narrowed
from .authorize_offsets import OFFSET_APIS, admit_offset_topics, commit_refusal, fetch_refusal

DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED
ONE_GROUP = {JoinGroupRequest.API_KEY: A.READ, SyncGroupRequest.API_KEY: A.READ, HeartbeatRequest.API_KEY: A.READ,
             LeaveGroupRequest.API_KEY: A.READ, OffsetCommitRequest.API_KEY: A.READ,
             OffsetDeleteRequest.API_KEY: A.DELETE, OffsetFetchRequest.API_KEY: A.DESCRIBE}
GROUP_APIS = frozenset(ONE_GROUP) | {DescribeGroupsRequest.API_KEY, DeleteGroupsRequest.API_KEY,
                                     FindCoordinatorRequest.API_KEY, ListGroupsRequest.API_KEY}


def _one_group_refusal(api_key: int, version: int, body):
    if api_key == OffsetCommitRequest.API_KEY:
        return RESPONSES[api_key](topics=commit_refusal(version, body.topics, DENIED))
    if api_key == OffsetFetchRequest.API_KEY and version < 2:  # no top-level error: on each partition
        return RESPONSES[api_key](topics=[fetch_refusal(version, t, DENIED) for t in body.topics])
    answer = RESPONSES[api_key](error_code=DENIED)
    if api_key == JoinGroupRequest.API_KEY:
        answer.generation_id = -1  # UNKNOWN_GENERATION_ID
    return answer


# several groups: request list, response list, refused entry
def _described(g):
    return DescribedGroup(error_code=DENIED, group_id=g, members=[])


def _deleted(g):
    return DeletableGroupResult(group_id=g, error_code=DENIED)


def _fetched(g):
    return OffsetFetchResponseGroup(group_id=g.group_id, topics=[], error_code=DENIED)


def _coordinator(code):
    return lambda key: Coordinator(key=key, node_id=-1, host="", port=-1, error_code=code,
                                   error_message=error_message(code))


def _several(api_key: int, version: int, body):
    """(request list attribute, response list attribute, group of an item, refused entry)."""
    if api_key == DescribeGroupsRequest.API_KEY:
        return "groups", "groups", str, _described
    if api_key == DeleteGroupsRequest.API_KEY:
        return "groups_names", "results", str, _deleted
    if api_key == OffsetFetchRequest.API_KEY and version >= 8:
        return "groups", "groups", lambda g: g.group_id, _fetched
    return None


def admit_group_call(call, allowed):
    """``allowed(operation, resource type, name) -> bool`` for the caller; the call to
    go on with, or None when answered (refused)."""
    call = _admit_group(call, allowed)
    if call is not None and call.api_key in OFFSET_APIS:
        return admit_offset_topics(call, allowed)
    return call


def _admit_group(call, allowed):
    api_key, version, body = call.api_key, call.api_version, call.body
    if api_key == ListGroupsRequest.API_KEY:
        if allowed(A.DESCRIBE, A.CLUSTER, A.CLUSTER_NAME):
            return call
        return _Listing(call, lambda g: allowed(A.DESCRIBE, A.GROUP, g))
    if api_key == FindCoordinatorRequest.API_KEY:
        return _find_coordinator(call, allowed)
    several = _several(api_key, version, body)
    if several is None:
        if allowed(ONE_GROUP[api_key], A.GROUP, body.group_id):
            return call
        call.respond(_one_group_refusal(api_key, version, body))
        return None
    attr, answer_attr, group_of, refused_entry = several
    op = A.DELETE if api_key == DeleteGroupsRequest.API_KEY else A.DESCRIBE
    return _narrow(call, attr, answer_attr, lambda item: allowed(op, A.GROUP, group_of(item)), refused_entry)


def _find_coordinator(call, allowed):
    body, version = call.body, call.api_version
    kind, code = ((A.TRANSACTIONAL_ID, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED) if body.key_type == 1
                  else (A.GROUP, DENIED))
    if version < 4:
        if allowed(A.DESCRIBE, kind, body.key):
            return call
        call.respond(RESPONSES[call.api_key](error_code=code, error_message=error_message(code), node_id=-1,
                                             host="", port=-1))
        return None
    return _narrow(call, "coordinator_keys", "coordinators", lambda key: allowed(A.DESCRIBE, kind, key),
                   _coordinator(code))


def _narrow(call, attr: str, answer_attr: str, allowed, refused_entry):
    items = list(getattr(call.body, attr) or [])
    refused = [i for i in items if not allowed(i)]
    if not refused:
        return call
    refused_answer = RESPONSES[call.api_key](**{answer_attr: [refused_entry(i) for i in refused]})
    kept = [i for i in items if not any(i is x for x in refused)]
    if not kept:
        call.respond(refused_answer)
        return None
    return Narrowed(call, narrowed_body(call.body, attr, kept), joiner(answer_attr, refused_answer))


class _Listing(CallWrapper):
    """ListGroups without DESCRIBE on the cluster: only the groups the caller may describe."""

    def __init__(self, call, visible) -> None:
        super().__init__(call)
        self.visible = visible

    def respond(self, body, api_version: int | None = None, shared: bool = False) -> None:
        body.groups = [g for g in body.groups if self.visible(g.group_id)]
        self.call.respond(body, api_version)
