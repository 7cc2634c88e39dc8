"""Enveloped requests that are not controller writes: DescribeQuorum (55),
AddRaftVoter (80), RemoveRaftVoter (81) and UpdateFeatures (57), which a Kafka 4.3.1
broker forwards for ``kafka-metadata-quorum --bootstrap-server`` and
``kafka-features --bootstrap-server``.

As Kafka's ``ControllerApis.handleEnvelopeRequest``, the inner request goes through
the same dispatcher as a direct one: ``InnerCall`` stands in for the connection's
call, so the Raft core (voter changes) or the local handler (DescribeQuorum) answers
it as usual, and its answer is wrapped in the EnvelopeResponse (response header with
the inner correlation id, then the body). An inner answer whose top-level error is
NOT_CONTROLLER becomes the envelope's error instead, as Kafka's ``RequestChannel``
does, so the broker looks for the new active controller.
"""
from __future__ import annotations

import ipaddress

from wire.errors import ErrorCode
from wire.headers import decode_response, encode_request, response_header_version
from wire.messages import DefaultPrincipalData, EnvelopeRequest, EnvelopeResponse, ResponseHeader


def envelope_answer(api_key: int, version: int, correlation_id: int, body) -> EnvelopeResponse:
    if getattr(body, "error_code", 0) == ErrorCode.NOT_CONTROLLER:
        return EnvelopeResponse(response_data=None, error_code=ErrorCode.NOT_CONTROLLER)
    w = bytearray()
    ResponseHeader(correlation_id=correlation_id).write(w, response_header_version(api_key, version))
    body.write(w, version)
    return EnvelopeResponse(response_data=bytes(w), error_code=0)


def forwarded_identity(envelope) -> tuple[str, str]:
    """(principal, host) of the client a broker forwards for: ``RequestPrincipal`` is
    DefaultPrincipalData after a 2-byte version (``DefaultKafkaPrincipalBuilder``),
    ``ClientHostAddress`` the address's 4 or 16 bytes. ValueError if unreadable."""
    principal, host, _ = forwarded_caller(envelope)
    return principal, host


def envelope_for(call) -> EnvelopeRequest:
    """What a Kafka broker sends for ``call`` (``ForwardingManager``): the request as it
    came (header and body), the client's principal and address, read back by
    ``forwarded_caller``."""
    kind, _, name = call.principal.partition(":")
    principal = bytearray(2)  # DefaultPrincipalData v0 after its version
    DefaultPrincipalData(type=kind, name=name, token_authenticated=call.token_authenticated).write(principal, 0)
    header = call.header
    data = encode_request(call.api_key, call.api_version, header.correlation_id, call.body, header.client_id)
    return EnvelopeRequest(request_data=data[4:], request_principal=bytes(principal),
                           client_host_address=ipaddress.ip_address(call.host or "0.0.0.0").packed)


def forwarded_answer(call, response_data: bytes):
    """The inner answer of an EnvelopeResponse to ``envelope_for(call)``."""
    return decode_response(response_data, call.api_key, call.api_version)[1]


def forwarded_caller(envelope) -> tuple[str, str, bool]:
    """``forwarded_identity`` and whether the client logged in with a delegation token
    (DefaultPrincipalData's TokenAuthenticated)."""
    data = bytes(envelope.request_principal or b"")
    if len(data) < 2:
        raise ValueError("no principal in the Envelope")
    principal, end = DefaultPrincipalData.read(data, 2, int.from_bytes(data[:2], "big"))
    if end != len(data):
        raise ValueError("bytes left after the Envelope's principal")
    host = str(ipaddress.ip_address(bytes(envelope.client_host_address)))
    return f"{principal.type}:{principal.name}", host, principal.token_authenticated


class InnerCall:
    """The enveloped request, a ``call.Call`` as the connection's ``InboundCall`` is."""

    def __init__(self, outer, header, api_key: int, api_version: int, body):
        self.outer = outer
        self.header = header
        self.api_key = api_key
        self.api_version = api_version
        self.body = body
        self.listener = outer.listener
        self.principal = outer.principal  # the client's, once the guard read it
        self.host = ""
        self.token_authenticated = False  # the client's login was a delegation token's
        self.forwarded = True
        self._done = False

    @property
    def done(self) -> bool:
        return self._done or self.outer.done

    def respond(self, body, api_version: int | None = None, shared: bool = False) -> None:
        if self.done:
            return
        self._done = True
        version = self.api_version if api_version is None else api_version
        self.outer.respond(envelope_answer(self.api_key, version, self.header.correlation_id, body))

    def close_connection(self, reason: str) -> None:
        self._done = True
        self.outer.close_connection(reason)

    def __repr__(self) -> str:
        return f"InnerCall(key={self.api_key} v{self.api_version} in {self.outer!r})"
