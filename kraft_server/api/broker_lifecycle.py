"""BrokerRegistration (key 62, v0-4) and BrokerHeartbeat (key 63, v0-2), controller
listener only. Both are metadata writes of the active controller
(``kraft_server/controller/cluster/broker_requests.py``), answered after commit, or
NOT_CONTROLLER from any other node (Kafka's ``ControllerApis.handleBrokerRegistration``
and ``handleBrokerHeartbeatRequest``; CLUSTER_ACTION is always authorized here).
"""
from __future__ import annotations

from wire.errors import ErrorCode

from kraft_server.controller.cluster.broker_requests import heartbeat_error_response, registration_error_response


def _responder(call):
    def respond(body) -> None:
        if not call.done:  # the connection may have closed meanwhile
            call.respond(body)
    return respond


def handle_broker_registration_request(call, view) -> None:
    controller = view.controller
    if controller is None:
        call.respond(registration_error_response(ErrorCode.NOT_CONTROLLER))
        return
    controller.submit_broker_registration(call.body, call.api_version, _responder(call))


def handle_broker_heartbeat_request(call, view) -> None:
    controller = view.controller
    if controller is None:
        call.respond(heartbeat_error_response(ErrorCode.NOT_CONTROLLER))
        return
    connection = call.pipeline  # its close is evidence for fast fencing (controller/cluster/broker_liveness.py)
    controller.submit_broker_heartbeat(call.body, call.api_version, _responder(call), connection)
    connection.watch_close("broker-heartbeats",
                           lambda by_peer: controller.heartbeat_connection_closed(connection, by_peer))
