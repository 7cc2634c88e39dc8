"""DescribeCluster (key 60), v0-2, as a Kafka 4.3.1 controller answers it.

``kafka-metadata-quorum --bootstrap-controller`` (and any ``Admin`` built with
``bootstrap.controllers``) sends DescribeCluster with ``EndpointType=2``
(controller, KIP-919) to learn the controllers and which one is active; it then
sends DescribeQuorum to the active one. What a real controller does, and we do:

- ``EndpointType`` is echoed. Asking a controller listener for brokers (v1+, type 1)
  gives MISMATCHED_ENDPOINT_TYPE; v0 cannot carry the type, so v0 gets
  INVALID_REQUEST. Both with Kafka's message.
- ``Brokers`` lists the controllers' endpoints on the listener the request came in
  on (Kafka reads them from controller registrations; we use the voter set's
  endpoints), ``ControllerId`` is the Raft leader (-1 when unknown), ``ClusterId``
  ours.
- ``ClusterAuthorizedOperations`` stays at INT32_MIN unless asked for; asked, a
  controller with no authorizer reports every cluster operation (8096).

On a client listener we answer as a broker would for ``EndpointType=1``: ourselves
on that listener, and the active controller's id.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import DescribeClusterResponse
from wire.messages.describe_cluster_response import DescribeClusterBroker

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
    """``nodes``: ``(node_id, host, port)`` of what this listener reports."""
    requested = body.endpoint_type if version >= 1 else BROKER_ENDPOINT
    if requested != served:
        return _mismatch(version, requested, served)
    return DescribeClusterResponse(
        error_code=0,
        endpoint_type=served,
        cluster_id=cluster_id,
        controller_id=controller_id,
        brokers=[DescribeClusterBroker(broker_id=n, host=h, port=p, rack=None, is_fenced=False)
                 for n, h, p in sorted(nodes)],
        cluster_authorized_operations=(ALL_CLUSTER_OPERATIONS
                                       if body.include_cluster_authorized_operations
                                       else OPERATIONS_OMITTED),
    )


def handle_describe_cluster_request(call, view, *, controller_listener: bool,
                                    advertised: dict[str, tuple[str, int]]) -> None:
    leader = view.leader_id()
    if controller_listener:
        nodes = []
        for voter in view.voters():
            for ep in voter.endpoints:
                if ep.name == call.listener:
                    nodes.append((voter.node_id, ep.host, ep.port))
                    break
        served = CONTROLLER_ENDPOINT
    else:
        host, port = advertised[call.listener]
        nodes = [(view.node_id, host, port)]
        served = BROKER_ENDPOINT
    call.respond(describe_cluster_response(call.api_version, call.body, served=served,
                                           cluster_id=view.cluster_id, controller_id=leader,
                                           nodes=nodes))
