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
from .error_answer.refused import refused

NO_AUTHORIZER = "No Authorizer is configured."


def handle_acl_request(call, view, authorizer_on: bool) -> None:
    refusal = refused(call.api_key, call.api_version, call.body)
    if refusal is not None:  # Kafka's request parsing refuses it (error_answer/refused.py)
        call.close_connection(refusal)
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
