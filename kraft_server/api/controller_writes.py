"""The APIs with a ``write`` in the table (``registry.py``: CreateTopics, DeleteTopics,
AlterPartition, the reassignments, client quotas, SCRAM, ACLs, configs through an
Envelope, ...) and the Envelope itself, on the controller listener: metadata writes of
the active controller (``kraft_server/controller``), answered after commit,
NOT_CONTROLLER elsewhere.

Envelope (what a broker forwards, e.g. ``kafka-topics --create`` through a broker or
Metadata auto-creation): RequestData is the inner request's header and body; it is
decoded and run as if it came directly, and its answer (a response header with the
inner correlation id, then the body) goes back in ResponseData. With an authorizer
the inner request is checked as the client's principal (``authorize.py``). An inner API we do not serve gets the
envelope error UNSUPPORTED_VERSION (the broker hands that one to its client as is);
undecodable inner data gets INVALID_REQUEST. An enveloped API with no ``write``
(DescribeQuorum, UpdateFeatures, Add/RemoveRaftVoter) goes back through the dispatcher
(``envelope_inner.py``). NOT_CONTROLLER (this node is not, or no longer, the active controller) is the envelope's error with no inner response, as
Kafka's ``RequestChannel`` builds it: the broker's forwarding channel then looks for
the new active controller instead of handing the error to its client.
"""
from __future__ import annotations

import logging

from wire.errors import ErrorCode
from wire.exceptions import DecodeError
from wire.headers import decode_request_header, peek_key_version
from wire.messages import REQUESTS, AlterPartitionReassignmentsRequest, CreateAclsRequest, DeleteAclsRequest, EnvelopeResponse
from wire.messages import CreateDelegationTokenRequest, ExpireDelegationTokenRequest, RenewDelegationTokenRequest
from kraft_server.controller.replication.reassignment import empty_alter_answer

from . import registry  # the table (it names this module's handlers: read at call time)
from .call import Narrowed
from .envelope_inner import InnerCall, envelope_answer, forwarded_caller

log = logging.getLogger(__name__)

ALTER_PARTITION_REASSIGNMENTS = AlterPartitionReassignmentsRequest.API_KEY
ACL_WRITES = (CreateAclsRequest.API_KEY, DeleteAclsRequest.API_KEY)
# Decided on the client's identity even without an authorizer (api/delegation_tokens.py)
TOKEN_APIS = (CreateDelegationTokenRequest.API_KEY, RenewDelegationTokenRequest.API_KEY,
              ExpireDelegationTokenRequest.API_KEY)


def _responder(call):
    def respond(body) -> None:
        if not call.done:
            call.respond(body)
    return respond


def error_response(api_key: int, version: int, body, code: int):
    """Every part of the request answered with ``code`` (``registry.error_response``)."""
    return registry.error_response(api_key, version, body, code)


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
    controller = view.controller
    if controller is None:
        respond(_NotController() if enveloped else _no_controller(api_key, version, body))
        return
    if api_key == ALTER_PARTITION_REASSIGNMENTS:
        empty = empty_alter_answer(body)
        if empty is not None:
            respond(empty)
            return
    api = registry.API[api_key]
    name, (run, fail) = api.name, api.write(version, body, controller.settings)
    if enveloped:
        plain_fail = fail

        def fail(code):
            return _NotController() if code == ErrorCode.NOT_CONTROLLER else plain_fail(code)
    if whole is not None:
        fail = _whole_on_timeout(fail, api_key, version, whole)
    deadline = registry.deadline(api_key, version, body)
    options = {} if deadline is None else {"timeout_ms": deadline}
    controller.submit_write(name, run, fail, respond, **options)


def handle_controller_write(call, view) -> None:
    whole = (call.call.body, _responder(call.call)) if isinstance(call, Narrowed) else None
    submit(view, call.api_key, call.api_version, call.body, _responder(call), whole=whole)


def handle_envelope_request(call, view, dispatch=None, guard=None) -> None:
    """``dispatch``: where an inner call with no ``write`` goes; ``guard``: the authorizer's
    (``authorize.Guard``), None without one."""
    respond = _responder(call)
    data = bytes(call.body.request_data)
    try:
        api_key, version = peek_key_version(data)
        api = registry.API.get(api_key)
        if api is None or not api.envelope or not api.controller[0] <= version <= api.controller[1]:
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
    if guard is not None or api_key in TOKEN_APIS:  # the inner request as the client's principal
        try:
            inner_call.principal, inner_call.host, inner_call.token_authenticated = forwarded_caller(call.body)
        except (DecodeError, ValueError, IndexError) as exc:
            log.info("Envelope with an unreadable principal: %s", exc)
            respond(EnvelopeResponse(response_data=None, error_code=ErrorCode.PRINCIPAL_DESERIALIZATION_FAILURE))
            return
        inner_call = inner_call if guard is None else guard.admit(inner_call)
        if inner_call is None:
            return
    if guard is None and api_key in ACL_WRITES:
        inner_call.respond(error_response(api_key, version, inner, ErrorCode.SECURITY_DISABLED))
        return
    if api.write is None and dispatch is not None:  # DescribeQuorum, UpdateFeatures, voter changes
        dispatch(inner_call)
        return
    narrowed, join = inner_call.body, inner_call.join if isinstance(inner_call, Narrowed) else None

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
