"""CreateAcls (30), DescribeAcls (29) and DeleteAcls (31), v1-3, on the controller
listener (``kraft_server/controller/acls/control.py`` decides them).

Without an authorizer every one is answered SECURITY_DISABLED "No Authorizer is
configured.", as Kafka's ``AclApis``. A request with an element of code 0
(UNKNOWN) closes the connection, as Kafka's request parsing refuses it; other codes
Kafka does not know are answered (as UNKNOWN). DescribeAcls reads the committed image on any node; Create and Delete
are metadata writes of the active controller (``controller_writes.py``).
"""
from __future__ import annotations

from kraft_server.controller.acls.control import (
    create_acls_error_response,
    delete_acls_error_response,
    describe_acls,
)
from wire.errors import ErrorCode
from wire.messages import DescribeAclsResponse

from . import controller_writes, registry  # module objects: registry names this module

NO_AUTHORIZER = "No Authorizer is configured."


def _unknown(call) -> bool:
    """Kafka's request parsing (``Create/Describe/DeleteAclsRequest`` validate) closes
    the connection when a field holds the UNKNOWN code itself, 0; any other code it
    does not know is parsed, read as UNKNOWN and answered (checked with javap)."""
    body, key = call.body, call.api_key
    if key == registry.CREATE_ACLS:
        return any(0 in (c.resource_type, c.resource_pattern_type, c.operation, c.permission_type)
                   for c in body.creations)
    filters = body.filters if key == registry.DELETE_ACLS else [body]
    return any(0 in (f.resource_type_filter, f.pattern_type_filter, f.operation, f.permission_type)
               for f in filters)


def handle_acl_request(call, view, authorizer_on: bool) -> None:
    if _unknown(call):
        call.close_connection("ACL request with UNKNOWN elements")
        return
    key, body = call.api_key, call.body
    if not authorizer_on:
        code = ErrorCode.SECURITY_DISABLED
        if key == registry.DESCRIBE_ACLS:
            call.respond(DescribeAclsResponse(throttle_time_ms=0, error_code=code, error_message=NO_AUTHORIZER,
                                              resources=[]))
        elif key == registry.CREATE_ACLS:
            call.respond(create_acls_error_response(body, code, NO_AUTHORIZER))
        else:
            call.respond(delete_acls_error_response(body, code, NO_AUTHORIZER))
        return
    if key == registry.DESCRIBE_ACLS:
        call.respond(describe_acls(view.controller.image.acls, body))
    else:
        controller_writes.handle_controller_write(call, view)
