"""Create/Renew/ExpireDelegationToken before the controller decides
(kraft_server/api/delegation_tokens.py), as Kafka's ControllerApis: who may ask
(allowTokenRequests), the CREATE_TOKENS check on another owner, the client's
TokenAuthenticated flag read from an Envelope."""
from __future__ import annotations

import ipaddress
from types import SimpleNamespace

import pytest

from kraft_server.api import registry
from kraft_server.api.delegation_tokens import allow_token_requests, handle_delegation_token_request
from kraft_server.api.envelope_inner import forwarded_caller
from kraft_server.controller.tokens.control import TokenSettings
from kraft_server.security import acls as A
from wire.errors import ErrorCode as E
from wire.messages import CreateDelegationTokenRequest, DefaultPrincipalData, EnvelopeRequest, RenewDelegationTokenRequest

from .test_authorize_checks import allow, guard_with

ENDPOINTS = (("CONTROLLER", "h", 1, "PLAINTEXT"), ("SECURE", "h", 2, "SASL_SSL"), ("TLS", "h", 3, "SSL"))
CLIENTS = {"CLIENT": "SASL_SSL", "OPEN": "PLAINTEXT"}  # client listeners: as a broker's (KafkaApis)


class FakeController:
    def __init__(self):
        self.settings = SimpleNamespace(listener_protocols={**{n: p for n, _, _, p in ENDPOINTS}, **CLIENTS},
                                        tokens=TokenSettings(secret="s"))
        self.writes = []
        self.active = True
        self.forwarded = []  # (envelope, answer)

    def is_active(self):
        return self.active

    def forward(self, envelope, answer):
        self.forwarded.append((envelope, answer))

    def submit_write(self, name, run, fail, respond, timeout_ms=None):
        self.writes.append(name)


def call(key, body, listener="SECURE", principal="User:alice", version=3, **extra):
    answers = []
    c = SimpleNamespace(api_key=key, api_version=version, body=body, principal=principal, host="127.0.0.1",
                        listener=listener, respond=lambda b, v=None, shared=False: answers.append(b),
                        answers=answers, done=False, **{"forwarded": False, "token_authenticated": False, **extra})
    return c


def create(**kw):
    return CreateDelegationTokenRequest(max_lifetime_ms=-1, **kw)


@pytest.mark.parametrize("listener, principal, extra, allowed", [
    ("SECURE", "User:alice", {}, True),
    ("CONTROLLER", "User:alice", {}, False),  # direct PLAINTEXT
    ("TLS", "User:ANONYMOUS", {}, False),  # 1-way SSL
    ("TLS", "User:CN=client", {}, True),
    ("SECURE", "User:alice", {"token_authenticated": True}, False),
    ("CONTROLLER", "User:alice", {"forwarded": True, "token_authenticated": False}, True),  # forwarded
    ("CONTROLLER", "User:alice", {"forwarded": True, "token_authenticated": True}, False),
    ("CLIENT", "User:alice", {}, True),  # where Kafka's AdminClient sends them
    ("OPEN", "User:ANONYMOUS", {}, False),
    ("CLIENT", "User:alice", {"token_authenticated": True}, False),
])
def test_who_may_ask(listener, principal, extra, allowed):
    view = SimpleNamespace(controller=FakeController())
    c = call(registry.CREATE_DELEGATION_TOKEN, create(), listener=listener, principal=principal, **extra)
    protocol = {**{n: p for n, _, _, p in ENDPOINTS}, **CLIENTS}[listener]
    assert allow_token_requests(c, protocol) is allowed
    handle_delegation_token_request(c, view)
    if allowed:
        assert view.controller.writes == ["CreateDelegationToken"] and c.answers == []
    else:
        answer = c.answers[0]
        assert (answer.error_code, answer.max_timestamp_ms, answer.token_id) == (E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, -1, "")


def test_renew_refused_with_an_error_timestamp():
    c = call(registry.RENEW_DELEGATION_TOKEN, RenewDelegationTokenRequest(hmac=b"x", renew_period_ms=-1),
             listener="CONTROLLER", version=2)
    handle_delegation_token_request(c, SimpleNamespace(controller=FakeController()))
    assert (c.answers[0].error_code, c.answers[0].expiry_timestamp_ms) == (E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, -1)


def test_another_owner_needs_create_tokens_on_that_user():
    body = create(owner_principal_type="User", owner_principal_name="bob")
    refused = call(registry.CREATE_DELEGATION_TOKEN, body)
    handle_delegation_token_request(refused, SimpleNamespace(controller=FakeController()), guard_with())
    answer = refused.answers[0]
    assert (answer.error_code, answer.principal_name, answer.token_requester_principal_name) == (
        E.DELEGATION_TOKEN_AUTHORIZATION_FAILED, "bob", "alice")
    guard = guard_with(allow(A.CREATE_TOKENS, rtype=A.USER, name="User:bob"))
    view = SimpleNamespace(controller=FakeController())
    handle_delegation_token_request(call(registry.CREATE_DELEGATION_TOKEN, body), view, guard)
    assert view.controller.writes == ["CreateDelegationToken"]
    # for oneself no ACL is needed
    mine = SimpleNamespace(controller=FakeController())
    handle_delegation_token_request(call(registry.CREATE_DELEGATION_TOKEN, create()), mine, guard_with())
    assert mine.controller.writes == ["CreateDelegationToken"]


def test_no_controller():
    c = call(registry.CREATE_DELEGATION_TOKEN, create())
    handle_delegation_token_request(c, SimpleNamespace(controller=None))
    assert c.answers[0].error_code == E.NOT_CONTROLLER


def test_the_forwarded_token_flag():
    w = bytearray(b"\x00\x00")
    DefaultPrincipalData(type="User", name="carol", token_authenticated=True).write(w, 0)
    envelope = EnvelopeRequest(request_data=b"", request_principal=bytes(w),
                               client_host_address=ipaddress.ip_address("10.1.2.3").packed)
    assert forwarded_caller(envelope) == ("User:carol", "10.1.2.3", True)


def test_another_node_forwards_in_an_envelope():
    """Not active: the checks, then an Envelope carrying the request as it came, the
    client's principal and address; the client gets the active controller's answer, or
    NOT_CONTROLLER when forwarding fails."""
    from kraft_server.api.controller_writes import handle_envelope_request
    from wire.headers import decode_request_header
    from wire.messages import CreateDelegationTokenResponse, RequestHeader
    controller = FakeController()
    controller.active = False
    view = SimpleNamespace(controller=controller)
    header = RequestHeader(request_api_key=38, request_api_version=3, correlation_id=7, client_id="adminclient-1")
    c = call(registry.CREATE_DELEGATION_TOKEN, create(owner_principal_type="User", owner_principal_name="alice"),
             listener="CLIENT", header=header)
    handle_delegation_token_request(c, view, may_forward=False)  # a controller listener: NOT_CONTROLLER
    assert controller.writes == ["CreateDelegationToken"] and controller.forwarded == []
    controller.writes.clear()
    handle_delegation_token_request(c, view, may_forward=True)
    assert controller.writes == [] and c.answers == []
    (envelope, answer), = controller.forwarded
    assert forwarded_caller(envelope) == ("User:alice", "127.0.0.1", False)
    inner, pos = decode_request_header(bytes(envelope.request_data))
    assert (inner.correlation_id, inner.client_id) == (7, "adminclient-1")
    assert CreateDelegationTokenRequest.read(bytes(envelope.request_data), pos, 3)[0] == c.body
    # the active controller's side takes it as a broker's Envelope
    active = SimpleNamespace(controller=FakeController())
    outer = call(registry.ENVELOPE, envelope, listener="CONTROLLER", version=0)
    handle_envelope_request(outer, active, lambda inner: handle_delegation_token_request(inner, active))
    assert active.controller.writes == ["CreateDelegationToken"]
    from kraft_server.api.envelope_inner import envelope_answer
    reply = CreateDelegationTokenResponse(error_code=0, token_id="t", principal_type="User", principal_name="alice")
    answer(bytes(envelope_answer(38, 3, 7, reply).response_data))
    assert c.answers == [reply]
    # refused before forwarding, as a broker refuses
    plain = call(registry.CREATE_DELEGATION_TOKEN, create(), listener="OPEN", principal="User:ANONYMOUS", header=header)
    handle_delegation_token_request(plain, view, may_forward=True)
    assert plain.answers[0].error_code == E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED and len(controller.forwarded) == 1
    # no leader, or the send failed
    failed = call(registry.RENEW_DELEGATION_TOKEN, RenewDelegationTokenRequest(hmac=b"x", renew_period_ms=-1),
                  version=2, header=header)
    handle_delegation_token_request(failed, view, may_forward=True)
    controller.forwarded[-1][1](None)
    assert failed.answers[0].error_code == E.NOT_CONTROLLER
