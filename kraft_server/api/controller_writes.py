"""CreateTopics (19, v2-7), DeleteTopics (20, v1-6), CreatePartitions (37, v0-3),
ElectLeaders (43, v0-2), AlterPartitionReassignments (45, v0-1), ListPartitionReassignments (46, v0),
AlterPartition (56, v2-3), UnregisterBroker (64, v0), AllocateProducerIds (67, v0),
UnregisterController (94, v0; ``controller/cluster/unregister_controller.py``),
AssignReplicasToDirs (73, v0), AlterClientQuotas (49, v0-1) and Envelope (58, v0; also carrying
AlterConfigs and IncrementalAlterConfigs, ``config_requests.py``) on the
controller listener: metadata writes of the active controller
(``kraft_server/controller/admin_requests.py``), answered after commit, NOT_CONTROLLER
elsewhere.

Envelope (what a broker forwards, e.g. ``kafka-topics --create`` through a broker or
Metadata auto-creation): RequestData is the inner request's header and body; it is
decoded and run as if it came directly, and its answer (a response header with the
inner correlation id, then the body) goes back in ResponseData. With an authorizer
the inner request is checked as the client's principal (``authorize.py``). An inner API we do not serve gets the
envelope error UNSUPPORTED_VERSION (the broker hands that one to its client as is);
undecodable inner data gets INVALID_REQUEST. DescribeQuorum, UpdateFeatures and
Add/RemoveRaftVoter go back through the dispatcher (``envelope_inner.py``). NOT_CONTROLLER (this node is not, or no
longer, the active controller) is the envelope's error with no inner response, as
Kafka's ``RequestChannel`` builds it: the broker's forwarding channel then looks for
the new active controller instead of handing the error to its client.
"""
from __future__ import annotations

import logging

from wire.errors import ErrorCode
from wire.exceptions import DecodeError
from wire.headers import decode_request_header, peek_key_version
from wire.messages import (
    REQUESTS, AllocateProducerIdsRequest, AlterClientQuotasRequest, AlterPartitionRequest, AssignReplicasToDirsRequest, CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest, ElectLeadersRequest, EnvelopeResponse, UnregisterBrokerRequest,
    UnregisterControllerRequest,
)
from wire.messages import AddRaftVoterRequest, DescribeQuorumRequest, RemoveRaftVoterRequest, UpdateFeaturesRequest

from wire.messages import AlterPartitionReassignmentsRequest, ListPartitionReassignmentsRequest
from kraft_server.controller.replication.reassignment import (
    alter_error_response, alter_reassignments_op, empty_alter_answer, list_error_response, list_reassignments_op,
)
from . import config_requests, deadlines
from .registry import CREATE_ACLS, DELETE_ACLS
from kraft_server.controller.admin_requests import (
    allocate_error_response, allocate_producer_ids_op, alter_partition_error_response, alter_partition_op,
    assign_dirs_error_response, assign_dirs_op,
    create_partitions_error_response, create_partitions_op, create_topics_error_response, create_topics_op,
    delete_topics_error_response, delete_topics_op, elect_leaders_error_response, elect_leaders_op, unregister_broker_op, unregister_error_response,
)
from kraft_server.controller.cluster import unregister_controller
from kraft_server.controller.client_quotas import alter_client_quotas_error_response, alter_client_quotas_op
from kraft_server.controller.scram_control import (
    alter_user_scram_credentials_error_response, alter_user_scram_credentials_op)
from wire.messages import AlterUserScramCredentialsRequest
from kraft_server.controller.acl_control import (
    create_acls_error_response, create_acls_op, delete_acls_error_response, delete_acls_op)

from .envelope_inner import DISPATCHED, InnerCall, envelope_answer, forwarded_identity

log = logging.getLogger(__name__)

CREATE_TOPICS = CreateTopicsRequest.API_KEY
DELETE_TOPICS = DeleteTopicsRequest.API_KEY
ALTER_PARTITION = AlterPartitionRequest.API_KEY
CREATE_PARTITIONS = CreatePartitionsRequest.API_KEY
UNREGISTER_BROKER = UnregisterBrokerRequest.API_KEY
UNREGISTER_CONTROLLER = UnregisterControllerRequest.API_KEY  # 94 (Kafka 4.4.0)
ELECT_LEADERS = ElectLeadersRequest.API_KEY
ALLOCATE_PRODUCER_IDS = AllocateProducerIdsRequest.API_KEY
ASSIGN_REPLICAS_TO_DIRS = AssignReplicasToDirsRequest.API_KEY
ALTER_CLIENT_QUOTAS = AlterClientQuotasRequest.API_KEY
# Inner requests an Envelope may carry that we answer, with their versions.
ENVELOPED: dict[int, tuple[int, int]] = {CREATE_TOPICS: (2, 7), DELETE_TOPICS: (1, 6),
                                         CREATE_PARTITIONS: (0, 3), UNREGISTER_BROKER: (0, 0),
                                         ELECT_LEADERS: (0, 2), UNREGISTER_CONTROLLER: (0, 0)}
# Reassignments (kafka-reassign-partitions through a broker; controller/reassignment.py).
ALTER_PARTITION_REASSIGNMENTS = AlterPartitionReassignmentsRequest.API_KEY
LIST_PARTITION_REASSIGNMENTS = ListPartitionReassignmentsRequest.API_KEY
ENVELOPED.update({ALTER_PARTITION_REASSIGNMENTS: (0, 1), LIST_PARTITION_REASSIGNMENTS: (0, 0)})
ENVELOPED.update({config_requests.LEGACY: (0, 2), config_requests.INCREMENTAL: (0, 1)})
ENVELOPED[ALTER_CLIENT_QUOTAS] = (0, 1)
ALTER_USER_SCRAM_CREDENTIALS = AlterUserScramCredentialsRequest.API_KEY  # controller/scram_control.py
ENVELOPED[ALTER_USER_SCRAM_CREDENTIALS] = (0, 0)
# answered by the dispatcher, as when sent directly (envelope_inner.py)
ENVELOPED[DescribeQuorumRequest.API_KEY] = (0, 3)
ENVELOPED[UpdateFeaturesRequest.API_KEY] = (0, 2)
ENVELOPED[AddRaftVoterRequest.API_KEY] = (0, 1)
ENVELOPED[RemoveRaftVoterRequest.API_KEY] = (0, 0)
# ACLs (controller/acl_control.py): kafka-acls through a broker; DescribeAcls a broker answers itself
ENVELOPED.update({CREATE_ACLS: (1, 3), DELETE_ACLS: (1, 3)})


def _responder(call):
    def respond(body) -> None:
        if not call.done:
            call.respond(body)
    return respond


def _build(api_key: int, version: int, body, settings=None):
    if api_key == CREATE_TOPICS:
        return "CreateTopics", create_topics_op(body, version, settings=settings)
    if api_key == DELETE_TOPICS:
        return "DeleteTopics", delete_topics_op(body, version)
    if api_key == ALTER_PARTITION:
        return "AlterPartition", alter_partition_op(body, version)
    if api_key == CREATE_PARTITIONS:
        return "CreatePartitions", create_partitions_op(body, version)
    if api_key == UNREGISTER_BROKER:
        return "UnregisterBroker", unregister_broker_op(body)
    if api_key == UNREGISTER_CONTROLLER:
        return "UnregisterController", unregister_controller.unregister_controller_op(body, settings.node_id)
    if api_key == ELECT_LEADERS:
        return "ElectLeaders", elect_leaders_op(body, version)
    if api_key == ALLOCATE_PRODUCER_IDS:
        return "AllocateProducerIds", allocate_producer_ids_op(body)
    if api_key == ASSIGN_REPLICAS_TO_DIRS:
        return "AssignReplicasToDirs", assign_dirs_op(body)
    if api_key == ALTER_PARTITION_REASSIGNMENTS:
        return "AlterPartitionReassignments", alter_reassignments_op(body, version)
    if api_key == LIST_PARTITION_REASSIGNMENTS:
        return "ListPartitionReassignments", list_reassignments_op(body)
    if api_key in (config_requests.LEGACY, config_requests.INCREMENTAL):
        return config_requests.alter_configs_op(api_key, version, body)
    if api_key == ALTER_CLIENT_QUOTAS:
        return "AlterClientQuotas", alter_client_quotas_op(body)
    if api_key == ALTER_USER_SCRAM_CREDENTIALS:
        return "AlterUserScramCredentials", alter_user_scram_credentials_op(body)
    if api_key == CREATE_ACLS:
        return "CreateAcls", create_acls_op(body)
    if api_key == DELETE_ACLS:
        return "DeleteAcls", delete_acls_op(body)
    raise LookupError(api_key)


def error_response(api_key: int, version: int, body, code: int):
    """Every part of the request answered with ``code`` (NOT_CONTROLLER, or the
    authorizer's refusal, ``authorize.py``)."""
    if api_key == CREATE_TOPICS:
        return create_topics_error_response(body, code)
    if api_key == DELETE_TOPICS:
        return delete_topics_error_response(body, version, code)
    if api_key == ALTER_PARTITION:
        return alter_partition_error_response(code)
    if api_key == CREATE_PARTITIONS:
        return create_partitions_error_response(body, code)
    if api_key == UNREGISTER_BROKER:
        return unregister_error_response(code)
    if api_key == UNREGISTER_CONTROLLER:
        return unregister_controller.error_response(code)
    if api_key == ELECT_LEADERS:
        return elect_leaders_error_response(body, version, code)
    if api_key == ASSIGN_REPLICAS_TO_DIRS:
        return assign_dirs_error_response(code)
    if api_key == ALTER_PARTITION_REASSIGNMENTS:
        return alter_error_response(body, code)
    if api_key == LIST_PARTITION_REASSIGNMENTS:
        return list_error_response(body, code)
    if api_key in (config_requests.LEGACY, config_requests.INCREMENTAL):
        return config_requests.error_response(api_key, body, code)
    if api_key == ALTER_CLIENT_QUOTAS:
        return alter_client_quotas_error_response(body, code)
    if api_key == ALTER_USER_SCRAM_CREDENTIALS:
        return alter_user_scram_credentials_error_response(body, code)
    if api_key == CREATE_ACLS:
        return create_acls_error_response(body, code)
    if api_key == DELETE_ACLS:
        return delete_acls_error_response(body, code)
    return allocate_error_response(code)


def _no_controller(api_key: int, version: int, body):
    return error_response(api_key, version, body, ErrorCode.NOT_CONTROLLER)


class _NotController:
    """What an enveloped request's NOT_CONTROLLER becomes: the envelope's own error."""


def _whole_on_timeout(fail, api_key: int, version: int, whole):
    """A request the authorizer narrowed (``authorize_items.py``), past its deadline:
    Kafka's controller future fails, so ``getErrorResponse`` answers every item of the
    request as sent, the refused ones too. ``whole``: (that request, its responder)."""
    sent, respond = whole

    def on_fail(code):
        if code != ErrorCode.REQUEST_TIMED_OUT:
            return fail(code)
        respond(error_response(api_key, version, sent, code))
        return None
    return on_fail


def submit(view, api_key: int, version: int, body, respond, enveloped: bool = False, whole=None) -> None:
    controller = getattr(view, "controller", None)
    if controller is None:
        respond(_NotController() if enveloped else _no_controller(api_key, version, body))
        return
    if api_key == ALTER_PARTITION_REASSIGNMENTS:
        empty = empty_alter_answer(body)
        if empty is not None:
            respond(empty)
            return
    name, (run, fail) = _build(api_key, version, body, getattr(controller, "settings", None))
    if enveloped:
        plain_fail = fail

        def fail(code):
            return _NotController() if code == ErrorCode.NOT_CONTROLLER else plain_fail(code)
    if whole is not None:
        fail = _whole_on_timeout(fail, api_key, version, whole)
    deadline = deadlines.deadline(api_key, version, body)
    options = {} if deadline is None else {"timeout_ms": deadline}
    controller.submit_write(name, run, fail, respond, **options)


def handle_controller_write(call, view) -> None:
    narrowed = getattr(call, "join", None) is not None  # authorize_items.Narrowed
    whole = (call.call.body, _responder(call.call)) if narrowed else None
    submit(view, call.api_key, call.api_version, call.body, _responder(call), whole=whole)


def handle_envelope_request(call, view, dispatch=None) -> None:
    respond = _responder(call)
    data = bytes(call.body.request_data)
    try:
        api_key, version = peek_key_version(data)
        served = ENVELOPED.get(api_key)
        if served is None or not served[0] <= version <= served[1]:
            log.info("Envelope carrying API %d v%d: not served", api_key, version)
            respond(EnvelopeResponse(response_data=None, error_code=ErrorCode.UNSUPPORTED_VERSION))
            return
        header, pos = decode_request_header(data)
        inner, end = REQUESTS[api_key].read(data, pos, version)
        if end != len(data):
            raise DecodeError("bytes left after the enveloped request")
    except (DecodeError, ValueError, IndexError) as exc:
        log.info("undecodable Envelope: %s", exc)
        respond(EnvelopeResponse(response_data=None, error_code=ErrorCode.INVALID_REQUEST))
        return

    inner_call = InnerCall(call, header, api_key, version, inner)
    guard = getattr(dispatch, "guard", None)
    if guard is not None:  # authorize.py: the inner request as the client's principal
        try:
            inner_call.principal, inner_call.host = forwarded_identity(call.body)
        except (DecodeError, ValueError, IndexError) as exc:
            log.info("Envelope with an unreadable principal: %s", exc)
            respond(EnvelopeResponse(response_data=None, error_code=ErrorCode.PRINCIPAL_DESERIALIZATION_FAILURE))
            return
        inner_call = guard.admit(inner_call)
        if inner_call is None:
            return
    if guard is None and api_key in (CREATE_ACLS, DELETE_ACLS):
        inner_call.respond(error_response(api_key, version, inner, ErrorCode.SECURITY_DISABLED))
        return
    if api_key in DISPATCHED and dispatch is not None:
        dispatch(inner_call)
        return
    narrowed, join = inner_call.body, getattr(inner_call, "join", None)  # a Narrowed call's

    def answer(body) -> None:
        respond(envelope_answer(api_key, version, header.correlation_id, body))

    def respond_inner(body) -> None:
        if isinstance(body, _NotController):
            # Kafka's RequestChannel: an inner NOT_CONTROLLER is the envelope's error, so
            # the broker's forwarding channel looks for the new active controller.
            respond(EnvelopeResponse(response_data=None, error_code=ErrorCode.NOT_CONTROLLER))
            return
        answer(body if join is None else join(body))

    whole = None if join is None else (inner, answer)
    submit(view, api_key, version, narrowed, respond_inner, enveloped=True, whole=whole)
