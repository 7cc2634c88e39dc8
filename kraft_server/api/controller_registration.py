"""ControllerRegistration (key 70, v0; KIP-919), controller listener only.

The request is a metadata write: the handler hands it to the controller
(``kraft_server/controller/cluster/registration.py``), which answers once the
RegisterControllerRecord is committed, or with NOT_CONTROLLER when this node is not
the active controller (Kafka's ``ControllerApis.handleControllerRegistration`` →
``QuorumController.registerController``). Kafka first authorizes CLUSTER_ACTION on
the cluster; with no authorizer configured (ours) that always passes.
"""
from __future__ import annotations

from wire.errors import ErrorCode

from kraft_server.controller.cluster.registration import error_response


def handle_controller_registration_request(call, view) -> None:
    controller = view.controller
    if controller is None:  # no metadata controller runs here (a test core)
        call.respond(error_response(ErrorCode.NOT_CONTROLLER))
        return

    def respond(body) -> None:
        if not call.done:  # the connection may have closed meanwhile
            call.respond(body)

    controller.submit_registration(call.body, respond)
