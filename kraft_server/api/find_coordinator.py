"""FindCoordinator (key 10), v0-6, answered cleanly while this node runs no group or
transaction coordinator: COORDINATOR_NOT_AVAILABLE (retriable) for every key, with
node id -1. Clients that only probe for a coordinator (Spark's deprecated offset
fetching, ``assign`` + committed-offset look-ups) get an answer instead of a closed
connection. A consumer-group coordinator replaces this module.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import FindCoordinatorResponse
from wire.messages.find_coordinator_response import Coordinator

MESSAGE = "This node runs no group or transaction coordinator."


def find_coordinator_response(version: int, body) -> FindCoordinatorResponse:
    code = ErrorCode.COORDINATOR_NOT_AVAILABLE
    if version >= 4:
        return FindCoordinatorResponse(coordinators=[
            Coordinator(key=key, node_id=-1, host="", port=-1, error_code=code, error_message=MESSAGE)
            for key in body.coordinator_keys])
    return FindCoordinatorResponse(error_code=code, error_message=MESSAGE if version >= 1 else "",
                                   node_id=-1, host="", port=-1)


def handle_find_coordinator_request(call) -> None:
    call.respond(find_coordinator_response(call.api_version, call.body))
