"""DescribeCluster (key 60), v0-2, as a Kafka 4.3.1 controller answers it.

``kafka-metadata-quorum --bootstrap-controller`` (and any ``Admin`` built with
``bootstrap.controllers``) sends DescribeCluster with ``EndpointType=2``
(controller, KIP-919) to learn the controllers and which one is active; it then
sends DescribeQuorum to the active one. What a real controller does, and we do:

- ``EndpointType`` is echoed. Asking a controller listener for brokers (v1+, type 1)
  gives MISMATCHED_ENDPOINT_TYPE; v0 cannot carry the type, so v0 gets
  INVALID_REQUEST. Both with Kafka's message.
- ``Brokers`` lists, from the controller registrations (RegisterControllerRecord,
  KIP-919) of the committed metadata image, each registered controller that has an
  endpoint named like the listener the request came in on, with ``Rack`` null
  (``ControllerRegistrationsPublisher.describeClusterControllers``). A controller
  with no registration, or none for that listener, is left out.
- ``ControllerId`` is the Raft leader only if it is in that list, else -1
  (``AuthHelper.computeDescribeClusterResponse``): a leader whose registration is
  not committed yet is not named, and the admin client keeps retrying.
- A metadata.version older than 3.7-IV0 (15) knows no registrations: Kafka answers
  UNSUPPORTED_VERSION ("Direct-to-controller communication is not supported with
  the current MetadataVersion."), and so do we.
- Before the image holds any metadata.version (a new log before its bootstrap
  records commit) we fall back to the voter set's endpoints on that listener; this
  window is ours alone (Kafka's controller has loaded its bootstrap metadata
  before it serves requests).
- ``ClusterId`` ours.
- ``ClusterAuthorizedOperations`` stays at INT32_MIN unless asked for; asked, a
  controller with no authorizer reports every cluster operation (8096).

On a client listener we answer as a broker would for ``EndpointType=1``: ourselves
on that listener, the registered Apache Kafka brokers (RegisterBrokerRecord) with an
endpoint of the same listener name, unfenced ones only unless v2's
``IncludeFencedBrokers`` asks for all (``IsFenced`` set), and the active controller's id.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import DescribeClusterResponse
from wire.messages.describe_cluster_response import DescribeClusterBroker

from kraft_server.controller.cluster.registration import CONTROLLER_REGISTRATION_MIN_MV

BROKER_ENDPOINT = 1
CONTROLLER_ENDPOINT = 2
ALL_CLUSTER_OPERATIONS = 8096  # what Kafka 4.3.1 reports with no authorizer
OPERATIONS_OMITTED = -2147483648

_TYPE_NAMES = {BROKER_ENDPOINT: "BROKER", CONTROLLER_ENDPOINT: "CONTROLLER"}


def _mismatch(version: int, requested: int, served: int) -> DescribeClusterResponse:
    message = (f"The request was sent to an endpoint of type {_TYPE_NAMES[served]}, "
               f"but we wanted an endpoint of type {_TYPE_NAMES.get(requested, 'UNKNOWN')}")
    code = ErrorCode.MISMATCHED_ENDPOINT_TYPE if version >= 1 else ErrorCode.INVALID_REQUEST
    return DescribeClusterResponse(error_code=code, error_message=message,
                                   endpoint_type=requested)


def describe_cluster_response(version: int, body, *, served: int, cluster_id: str,
                              controller_id: int, nodes) -> DescribeClusterResponse:
    """``nodes``: ``(node_id, host, port)`` or ``(node_id, host, port, rack, fenced)``."""
    requested = body.endpoint_type if version >= 1 else BROKER_ENDPOINT
    if requested != served:
        return _mismatch(version, requested, served)
    return DescribeClusterResponse(
        error_code=0,
        endpoint_type=served,
        cluster_id=cluster_id,
        controller_id=controller_id,
        brokers=[DescribeClusterBroker(broker_id=n[0], host=n[1], port=n[2],
                                       rack=n[3] if len(n) > 3 else None,
                                       is_fenced=n[4] if len(n) > 4 else False)
                 for n in sorted(nodes)],
        cluster_authorized_operations=(ALL_CLUSTER_OPERATIONS
                                       if body.include_cluster_authorized_operations
                                       else OPERATIONS_OMITTED),
    )


NO_DIRECT_TO_CONTROLLER = ("Direct-to-controller communication is not supported with the current "
                           "MetadataVersion.")


def registered_controllers(registrations, listener: str) -> list[tuple[int, str, int]]:
    """``(id, host, port)`` of each registration with an endpoint named ``listener``."""
    nodes = []
    for controller_id, record in sorted(registrations.items()):
        for ep in record.end_points:
            if ep.name == listener:
                nodes.append((controller_id, ep.host, ep.port))
                break
    return nodes


def registered_brokers(view, listener: str, include_fenced: bool) -> list[tuple]:
    """``(id, host, port, rack, fenced)`` of the brokers in the committed image with an
    endpoint named ``listener`` (Kafka's ``getAliveBrokerNodes`` / ``getBrokerNodes``)."""
    controller = view.controller
    if controller is None:
        return []
    out = []
    for b in controller.image.brokers:
        ep = b.endpoint(listener)
        if ep is not None and (include_fenced or not b.fenced):
            out.append((b.broker_id, ep.host, ep.port, b.rack, b.fenced))
    return out


def voter_controllers(voters, listener: str) -> list[tuple[int, str, int]]:
    nodes = []
    for voter in voters:
        for ep in voter.endpoints:
            if ep.name == listener:
                nodes.append((voter.node_id, ep.host, ep.port))
                break
    return nodes


def handle_describe_cluster_request(call, view, *, controller_listener: bool,
                                    advertised: dict[str, tuple[str, int]]) -> None:
    leader = view.leader_id()
    if controller_listener:
        served = CONTROLLER_ENDPOINT
        known = view.controller_registrations()
        if known is None:
            nodes = voter_controllers(view.voters(), call.listener)
        else:
            registrations, metadata_version = known
            if (metadata_version or 0) < CONTROLLER_REGISTRATION_MIN_MV:
                # DescribeClusterRequest.getErrorResponse: code and message, the
                # other fields at their defaults (EndpointType 1, not echoed).
                call.respond(DescribeClusterResponse(error_code=ErrorCode.UNSUPPORTED_VERSION,
                                                     error_message=NO_DIRECT_TO_CONTROLLER))
                return
            nodes = registered_controllers(registrations, call.listener)
            if leader not in {n for n, _, _ in nodes}:
                leader = -1
    else:
        host, port = advertised[call.listener]
        nodes = [(view.node_id, host, port)]
        nodes += registered_brokers(view, call.listener,
                                    include_fenced=call.api_version >= 2 and call.body.include_fenced_brokers)
        served = BROKER_ENDPOINT
    call.respond(describe_cluster_response(call.api_version, call.body, served=served,
                                           cluster_id=view.cluster_id, controller_id=leader,
                                           nodes=nodes))
