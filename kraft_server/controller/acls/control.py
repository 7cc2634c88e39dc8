"""CreateAcls (30), DeleteAcls (31) and DescribeAcls (29) as Kafka's controller
decides them (``AclApis`` in front of ``AclControlManager`` and ``StandardAuthorizer``).

CreateAcls: one result per creation, in order. INVALID_REQUEST for a CLUSTER resource
not named ``kafka-cluster``, an empty name, a resource type or operation UNKNOWN/ANY,
a pattern type other than LITERAL/PREFIXED, a permission other than ALLOW/DENY, or a
principal without ``:``, an empty host (Kafka's messages). A CIDR host (``10.0.0.0/8``,
Kafka 4.4.0) needs metadata.version 4.4-IV1 (else UNSUPPORTED_VERSION) and a valid
network (else INVALID_REQUEST); the authorizer matches it against the caller's address
(``security/cidr.py``). An ACL that exists already, or twice in
one request, succeeds without a second record. New ACLs are AccessControlEntryRecords
with fresh ids, in one atomic batch, answered after commit.

DeleteAcls: one result per filter, listing every ACL it matched; the matched ids are
removed with RemoveAccessControlEntryRecords in one atomic batch (an ACL matched by
two filters is listed twice, removed once).

DescribeAcls reads the committed image on any node; the ACLs are grouped by resource
pattern (sorted, where Kafka's order is a hash map's).
"""
from __future__ import annotations

import logging

from kraft_server.common import metadata_version
from kraft_server.security import cidr
from kraft_server.security.acls import (
    ALLOW, ANY, CLUSTER, CLUSTER_NAME, DENY, LITERAL, OPERATIONS, PATTERN_TYPES, PERMISSIONS, PREFIXED,
    RESOURCE_TYPES, UNKNOWN, WILDCARD, Acl, AclFilter, known,
)
from wire.errors import ErrorCode
from wire.messages import (
    AccessControlEntryRecord, CreateAclsResponse, DeleteAclsResponse, DescribeAclsResponse,
    RemoveAccessControlEntryRecord,
)
from wire.messages.create_acls_response import AclCreationResult
from wire.messages.delete_acls_response import DeleteAclsFilterResult, DeleteAclsMatchingAcl
from wire.messages.describe_acls_response import AclDescription, DescribeAclsResource
from wire.uuids import random_uuid

from ..write_queue import Write

log = logging.getLogger(__name__)

MAX_DELETED = 10000  # Kafka's BoundedList limit for one delete


def creation_acl(c) -> Acl:
    return Acl(known(RESOURCE_TYPES, c.resource_type), c.resource_name,
               known(PATTERN_TYPES, c.resource_pattern_type), c.principal, c.host,
               known(OPERATIONS, c.operation), known(PERMISSIONS, c.permission_type))


def check_new_acl(acl: Acl) -> str | None:
    """The INVALID_REQUEST message for an ACL Kafka refuses, or None
    (``AclApis`` first, then ``AclControlManager.validateNewAcl``)."""
    if acl.resource_type == CLUSTER and acl.name != CLUSTER_NAME:
        return "The only valid name for the CLUSTER resource is kafka-cluster"
    if not acl.name:
        return "Invalid empty resource name"
    if acl.resource_type in (UNKNOWN, ANY):
        return f"Invalid resourceType {RESOURCE_TYPES[acl.resource_type]}"
    if acl.pattern_type not in (LITERAL, PREFIXED):
        return f"Invalid patternType {PATTERN_TYPES[acl.pattern_type]}"
    if acl.operation in (UNKNOWN, ANY):
        return f"Invalid operation {OPERATIONS[acl.operation]}"
    if acl.permission not in (ALLOW, DENY):
        return f"Invalid permissionType {PERMISSIONS[acl.permission]}"
    if ":" not in acl.principal:
        return (f"Could not parse principal from `{acl.principal}` (no colon is present "
                "separating the principal type from the principal name)")
    if not acl.host:
        return "Host pattern cannot be null or empty"
    return None


def check_host_pattern(host: str, mv: int) -> tuple[int, str] | None:
    """``AclControlManager.validateHostPattern`` for a CIDR host (Kafka 4.4.0): below
    4.4-IV1 UNSUPPORTED_VERSION, a malformed network INVALID_REQUEST."""
    if host == WILDCARD or not cidr.is_cidr(host):
        return None
    if mv < metadata_version.CIDR_ACL:
        return (ErrorCode.UNSUPPORTED_VERSION, "CIDR-based ACL host patterns require metadata version "
                f"{metadata_version.name(metadata_version.CIDR_ACL)} or higher.")
    why = cidr.invalid_reason(host)
    if why is not None:
        return ErrorCode.INVALID_REQUEST, f"Invalid CIDR notation '{host}': {why}"
    return None


def _entry_record(acl: Acl, taken) -> AccessControlEntryRecord:
    acl_id = random_uuid()
    while acl_id in taken:
        acl_id = random_uuid()
    taken.add(acl_id)
    return AccessControlEntryRecord(
        id=acl_id, resource_type=acl.resource_type, resource_name=acl.name,
        pattern_type=acl.pattern_type, principal=acl.principal, host=acl.host,
        operation=acl.operation, permission_type=acl.permission)


def create_acls(acls_image, creations, mv: int = metadata_version.LATEST_PRODUCTION) -> tuple[list, list]:
    """(results, records) for the request's creations at metadata.version ``mv``."""
    existing = acls_image.acls()
    taken = {i for i, _ in acls_image.items()}
    results, records = [], []
    for c in creations:
        acl = creation_acl(c)
        error = check_new_acl(acl)
        if error is not None:
            results.append(AclCreationResult(error_code=ErrorCode.INVALID_REQUEST, error_message=error))
            continue
        refused = check_host_pattern(acl.host, mv)
        if refused is not None:
            results.append(AclCreationResult(error_code=refused[0], error_message=refused[1]))
            continue
        if acl not in existing:
            existing.add(acl)
            records.append((_entry_record(acl, taken), 0))
        else:
            log.debug("Not creating ACL since it already exists: %s", acl)
        results.append(AclCreationResult(error_code=0, error_message=None))
    return results, records


def _matching(acl: Acl, code: int = 0, message: str | None = None) -> DeleteAclsMatchingAcl:
    return DeleteAclsMatchingAcl(error_code=code, error_message=message, resource_type=acl.resource_type,
                                 resource_name=acl.name, pattern_type=acl.pattern_type, principal=acl.principal,
                                 host=acl.host, operation=acl.operation, permission_type=acl.permission)


def delete_acls(acls_image, filters) -> tuple[list, list]:
    """(filter results, records) for the request's filters."""
    items = acls_image.items()
    results, removed = [], {}
    for f in filters:
        flt = AclFilter.of(f)
        error = flt.unknown()
        matched = [] if error else [(i, a) for i, a in items if flt.matches(a)]
        if error is None and len(matched) > MAX_DELETED:
            results.append(DeleteAclsFilterResult(
                error_code=ErrorCode.UNKNOWN_SERVER_ERROR, matching_acls=[],
                error_message=f"Cannot remove more than {MAX_DELETED} acls in a single delete operation."))
            continue
        if error is not None:
            results.append(DeleteAclsFilterResult(error_code=ErrorCode.INVALID_REQUEST, error_message=error,
                                                  matching_acls=[]))
            continue
        removed.update(matched)
        results.append(DeleteAclsFilterResult(error_code=0, error_message=None,
                                              matching_acls=[_matching(a) for _, a in matched]))
    records = [(RemoveAccessControlEntryRecord(id=i), 0) for i in removed]
    return results, records


def describe_acls(acls_image, request) -> DescribeAclsResponse:
    flt = AclFilter.of(request)
    groups: dict[tuple, list] = {}
    for acl in acls_image.acls():
        if flt.matches(acl):
            groups.setdefault((acl.resource_type, acl.name, acl.pattern_type), []).append(acl)
    resources = [DescribeAclsResource(
        resource_type=t, resource_name=n, pattern_type=p,
        acls=[AclDescription(principal=a.principal, host=a.host, operation=a.operation,
                             permission_type=a.permission) for a in sorted(groups[(t, n, p)])])
        for t, n, p in sorted(groups)]
    return DescribeAclsResponse(throttle_time_ms=0, error_code=0, error_message=None, resources=resources)


def _op(decide, items, answer, error_response, verb: str):
    """A write-queue operation: ``decide(image, items) -> (results, records)``."""
    def run(image, next_offset, now_ms):
        results, records = decide(image, items)
        if records:
            log.info("[Controller] %s %d ACL(s)", verb, len(records))
        return Write(records, lambda: answer(results))
    return run, error_response


def create_acls_op(request):
    return _op(lambda image, items: create_acls(image.acls, items, image.metadata_version() or 0),
               request.creations,
               lambda results: CreateAclsResponse(throttle_time_ms=0, results=results),
               lambda code: create_acls_error_response(request, code), "creating")


def delete_acls_op(request):
    return _op(lambda image, items: delete_acls(image.acls, items), request.filters,
               lambda results: DeleteAclsResponse(throttle_time_ms=0, filter_results=results),
               lambda code: delete_acls_error_response(request, code), "removing")


def create_acls_error_response(request, code: int, message: str | None = None) -> CreateAclsResponse:
    return CreateAclsResponse(throttle_time_ms=0, results=[
        AclCreationResult(error_code=code, error_message=message) for _ in request.creations])


def delete_acls_error_response(request, code: int, message: str | None = None) -> DeleteAclsResponse:
    return DeleteAclsResponse(throttle_time_ms=0, filter_results=[
        DeleteAclsFilterResult(error_code=code, error_message=message, matching_acls=[])
        for _ in request.filters])
