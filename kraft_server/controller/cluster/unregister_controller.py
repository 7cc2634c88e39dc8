"""UnregisterController (94, v0, new in Kafka 4.4.0): remove a controller's registration
(``QuorumController.unregisterController`` then ``ClusterControlManager.unregisterController``).

Refusals, in Kafka 4.4.0's order (its messages):

1. the active controller itself: INVALID_REQUEST, "Controller cannot unregister itself
   while it is active.";
2. metadata.version below 4.4-IV2: UNSUPPORTED_VERSION, "The current MetadataVersion is
   too old to support controller unregistration.";
3. no registration for that id: CONTROLLER_ID_NOT_REGISTERED, "Controller ID N is not
   currently registered.".

Otherwise one UnregisterControllerRecord v0; its replay drops the registration from
the image (``image/metadata_image.py``), so DescribeCluster stops listing it. Kafka checks nothing
about the Raft voters here: a voter that is still running registers again.
"""
from __future__ import annotations

import logging

from kraft_server.common import metadata_version
from wire.errors import ErrorCode, error_message
from wire.messages import UnregisterControllerRecord, UnregisterControllerResponse

from ..write_queue import Write

log = logging.getLogger(__name__)


def error_response(code: int, message: str | None = None) -> UnregisterControllerResponse:
    if message is None:
        message = error_message(code)
    return UnregisterControllerResponse(throttle_time_ms=0, error_code=code, error_message=message)


def refusal(image, node_id: int, controller_id: int) -> tuple[int, str] | None:
    if controller_id == node_id:
        return ErrorCode.INVALID_REQUEST, "Controller cannot unregister itself while it is active."
    if (image.metadata_version() or 0) < metadata_version.CONTROLLER_UNREGISTRATION:
        return (ErrorCode.UNSUPPORTED_VERSION,
                "The current MetadataVersion is too old to support controller unregistration.")
    if controller_id not in image.controllers:
        return ErrorCode.CONTROLLER_ID_NOT_REGISTERED, f"Controller ID {controller_id} is not currently registered."
    return None


def unregister_controller_op(request, node_id: int):
    """The write-queue operation (run on the committed image, answered after commit)."""
    def run(image, next_offset, now_ms):
        why = refusal(image, node_id, request.controller_id)
        if why is not None:
            return Write([], lambda: error_response(*why))
        log.info("[Controller %d] unregistering controller %d", node_id, request.controller_id)
        return Write([(UnregisterControllerRecord(controller_id=request.controller_id), 0)],
                     lambda: UnregisterControllerResponse(throttle_time_ms=0, error_code=0, error_message=None))
    return run, error_response
