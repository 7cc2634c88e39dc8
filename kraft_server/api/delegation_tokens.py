"""Create/Renew/ExpireDelegationToken (38-40) on the controller listener, directly or
forwarded by a broker in an Envelope, as Kafka's ``ControllerApis`` takes them before
the controller decides (``kraft_server/controller/tokens``); on a client listener too,
where Kafka's AdminClient sends them (to a broker, which forwards them; here the active
controller decides itself, another node's client listener forwards them to it in an
Envelope after the checks below, as a broker does: ``controller/forwarding.py``):

- ``allowTokenRequests``: a token-authenticated caller (a login with a token), or a
  direct request on a PLAINTEXT listener, or one on an SSL listener without a client
  certificate (User:ANONYMOUS), is answered DELEGATION_TOKEN_REQUEST_NOT_ALLOWED. A
  forwarded request is allowed whatever the broker's connection to us is;
- Create for an owner other than the requester needs CREATE_TOKENS on that owner's
  USER resource (with an authorizer), else DELEGATION_TOKEN_AUTHORIZATION_FAILED.

The caller is the connection's principal, or for an enveloped request the client's
(``RequestPrincipal``, with its TokenAuthenticated flag).

DescribeDelegationToken (41) is answered by any node from its own image, as a Kafka
broker answers it (``controller/tokens/describe.py``), after the same
``allowTokenRequests``; a broker never forwards it.
"""
from __future__ import annotations

import logging

from kraft_server.api.call import Call
from kraft_server.api.envelope_inner import envelope_for, forwarded_answer
from kraft_server.controller.tokens import ops
from kraft_server.controller.tokens.describe import describe
from kraft_server.security import acls as A
from kraft_server.security.principal import ANONYMOUS
from wire.errors import ErrorCode
from wire.messages import DescribeDelegationTokenResponse

log = logging.getLogger(__name__)


def _protocol(settings, listener: str | None) -> str:
    return settings.listener_protocols.get(listener, "PLAINTEXT")


def allow_token_requests(call: Call, protocol: str) -> bool:
    """Kafka's ``ControllerApis.allowTokenRequests`` (an enveloped call carries the
    client's token flag, a direct one its connection's)."""
    forwarded = call.forwarded
    if call.token_authenticated:
        return False
    if not forwarded and protocol == "PLAINTEXT":
        return False
    return not (not forwarded and protocol == "SSL" and call.principal == ANONYMOUS)


def handle_delegation_token_request(call, view, guard=None, may_forward: bool = False) -> None:
    """``may_forward``: a client listener's call, forwarded when another node is active
    (a controller listener answers NOT_CONTROLLER then, as Kafka's controllers do)."""
    api_key, version, body, principal = call.api_key, call.api_version, call.body, call.principal
    controller = view.controller
    if controller is None:
        call.respond(ops.error_response(api_key, version, body, ErrorCode.NOT_CONTROLLER))
        return
    if not allow_token_requests(call, _protocol(controller.settings, call.listener)):
        call.respond(ops.refusal_response(api_key, version, body, ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
                                          principal))
        return
    if api_key == ops.CREATE and guard is not None:
        owner = ops.control.owner_of(body, principal)
        if owner != principal and not guard.allowed(principal, call.host, A.CREATE_TOKENS, A.USER, owner):
            call.respond(ops.refusal_response(api_key, version, body,
                                              ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED, principal))
            return
    run, fail = ops.token_op(api_key, version, body, controller.settings.tokens, principal)

    def respond(answer) -> None:
        if not call.done:
            call.respond(answer)
    if may_forward and not call.forwarded and not controller.is_active():
        _forward(call, controller, respond)
        return
    name = type(body).__name__.removesuffix("Request")
    controller.submit_write(name, run, fail, respond)


def _forward(call, controller, respond) -> None:
    """To the active controller in an Envelope (``controller/forwarding.py``), as a
    Kafka broker forwards; NOT_CONTROLLER when that fails."""
    def answer(data: bytes | None) -> None:
        if data is None:
            respond(ops.error_response(call.api_key, call.api_version, call.body, ErrorCode.NOT_CONTROLLER))
        else:
            respond(forwarded_answer(call, data))
    controller.forward(envelope_for(call), answer)


def handle_describe_delegation_token_request(call, view, guard=None) -> None:
    """Kafka's ``KafkaApis.handleDescribeTokensRequest``, from this node's image."""
    controller, principal = view.controller, call.principal
    if controller is None:  # no image (unit tests): nothing is known about tokens
        call.respond(DescribeDelegationTokenResponse(error_code=ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED))
        return
    if not allow_token_requests(call, _protocol(controller.settings, call.listener)):
        call.respond(DescribeDelegationTokenResponse(error_code=ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED))
        return

    def may_describe(token) -> bool:  # AuthHelper.authorize: no authorizer, allowed
        return guard is None or guard.allowed(principal, call.host, A.DESCRIBE, A.DELEGATION_TOKEN, token.token_id) \
            or guard.allowed(principal, call.host, A.DESCRIBE_TOKENS, A.USER, token.owner)
    call.respond(describe(controller.image, controller.settings.tokens, principal, call.body, call.api_version,
                          may_describe))
