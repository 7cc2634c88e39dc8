"""FindCoordinator (key 10), v0-6.

Every node is the coordinator of every group it is asked about: the client listener's
own advertised endpoint is the answer for key type GROUP (v4+ answers each batched key).
Offsets are per node (``service.py``). TRANSACTION and SHARE keys get INVALID_REQUEST
with a message saying why: nothing but the quorum writes ``__cluster_metadata``, so
there are no transactions to coordinate (and no share groups).
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import FindCoordinatorResponse
from wire.messages.find_coordinator_response import Coordinator

GROUP, TRANSACTION, SHARE = 0, 1, 2
NO_TRANSACTIONS = ("This node coordinates consumer groups only: __cluster_metadata is written "
                   "by the KRaft quorum alone, so there are no transactions or share groups")


def _answer(key_type: int, node_id: int, host: str, port: int):
    """(error, message, node, host, port) for one key."""
    if key_type == GROUP:
        return ErrorCode.NONE, None, node_id, host, port
    message = NO_TRANSACTIONS if key_type in (TRANSACTION, SHARE) else f"Unknown key type {key_type}"
    return ErrorCode.INVALID_REQUEST, message, -1, "", -1


def find_coordinator_response(version: int, body, *, node_id: int, host: str, port: int):
    key_type = body.key_type if version >= 1 else GROUP
    if version >= 4:
        coordinators = []
        for key in body.coordinator_keys:
            error, message, node, h, p = _answer(key_type, node_id, host, port)
            coordinators.append(Coordinator(key=key, node_id=node, host=h, port=p,
                                            error_code=error, error_message=message))
        return FindCoordinatorResponse(coordinators=coordinators)
    error, message, node, h, p = _answer(key_type, node_id, host, port)
    return FindCoordinatorResponse(error_code=error, error_message=message, node_id=node, host=h,
                                   port=p)


def handle_find_coordinator_request(call, node_id: int, advertised: dict[str, tuple[str, int]]) -> None:
    host, port = advertised[call.listener]
    call.respond(find_coordinator_response(call.api_version, call.body, node_id=node_id,
                                           host=host, port=port))
