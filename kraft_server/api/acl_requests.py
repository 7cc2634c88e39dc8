"""CreateAcls (30), DescribeAcls (29) and DeleteAcls (31), v1-3, on the controller
listener (``kraft_server/controller/acl_control.py`` decides them).

Without an authorizer every one is answered SECURITY_DISABLED "No Authorizer is
configured.", as Kafka's ``AclApis``. A request with an UNKNOWN element (a code
Kafka does not know, or 0) closes the connection, as Kafka's request parsing
refuses it. DescribeAcls reads the committed image on any node; Create and Delete
are metadata writes of the active controller (``controller_writes.py``).
"""
from __future__ import annotations

from kraft_server.controller.acl_control import (
    create_acls_error_response, creation_acl, delete_acls_error_response, describe_acls, has_unknown)
from kraft_server.security.acls import AclFilter
from wire.errors import ErrorCode
from wire.messages import DescribeAclsResponse

from . import registry
from .controller_writes import handle_controller_write

NO_AUTHORIZER = "No Authorizer is configured."


def _unknown(call) -> bool:
    body, key = call.body, call.api_key
    if key == registry.CREATE_ACLS:
        return any(has_unknown(creation_acl(c)) for c in body.creations)
    filters = body.filters if key == registry.DELETE_ACLS else [body]
    return any(AclFilter.of(f).unknown() for f in filters)


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
        handle_controller_write(call, view)
