"""SASL on a connection, before any other API (Kafka's ``SaslServerAuthenticator``).

Until authentication succeeds the gate admits only:

- one ApiVersions, then SaslHandshake (state HANDSHAKE); a second ApiVersions closes the
  connection unanswered (Kafka's "Unexpected ApiVersions request received during SASL
  authentication state HANDSHAKE_REQUEST"), and so does any other request ("Unexpected
  Kafka request of type ... during SASL handshake.");
- after SaslHandshake v1, only SaslAuthenticate requests carrying the mechanism's
  tokens (KIP-152). Any other request (ApiVersions too) is decoded and answered with
  its own type's error answer, ILLEGAL_SASL_STATE "Unexpected Kafka request of type
  <NAME> during SASL authentication." (Kafka's ``getErrorResponse``,
  ``kraft_server/api/error_answer``), then the connection closes. One that cannot be
  decoded, that Kafka's parsing refuses, or that Kafka answers nothing (a Produce with
  acks 0) closes it unanswered;
- after SaslHandshake v0, bare size-prefixed tokens both ways;
- mechanisms PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER (``security/oauth_server.py``);
- frames up to ``sasl.server.max.receive.size`` (524288 bytes, Kafka's default).

A mechanism that is not enabled is answered UNSUPPORTED_SASL_MECHANISM with the
enabled list; failed credentials SASL_AUTHENTICATION_FAILED with Kafka's message;
both then close the connection. On success the connection's principal becomes
``User:<name>`` and the gate steps aside. SaslHandshake/SaslAuthenticate on a
connection that is not (or no longer) authenticating are answered ILLEGAL_SASL_STATE,
as Kafka's ControllerApis does. A client that never finishes is closed by
``connections.max.idle.ms`` (net/limits.py), as in Kafka.

KIP-368: with ``connections.max.reauth.ms`` above 0, or a credential that expires
(an OAUTHBEARER token, or the delegation token of a SCRAM login: the lifetime is the
shorter of the two), the SaslAuthenticate (v1+) answer carries SessionLifetimeMs and
the gate stays, in state COMPLETE, watching the session:
a SaslHandshake before expiry re-authenticates in band (same mechanism, same
principal, or SASL_AUTHENTICATION_FAILED with Kafka's message); any other request
after expiry closes the connection (Kafka's "expired session").
"""
from __future__ import annotations

import logging
import re
import struct
import time

from kraft_server.api.error_answer import error_answer
from kraft_server.api.error_answer.refused import refused
from kraft_server.security.oauth_server import OAuthBearerServer
from kraft_server.security.plain import PlainServer
from kraft_server.security.principal import user
from kraft_server.security.sasl_failure import SaslFailure
from kraft_server.security.scram import ScramServer
from wire.errors import ErrorCode
from wire.headers import decode_request_header, peek_key_version
from wire.messages import (
    REQUESTS, ApiVersionsRequest, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
    SaslHandshakeResponse)

log = logging.getLogger(__name__)

API_VERSIONS = ApiVersionsRequest.API_KEY
SASL_HANDSHAKE = SaslHandshakeRequest.API_KEY
SASL_AUTHENTICATE = SaslAuthenticateRequest.API_KEY
SASL_APIS = frozenset({SASL_HANDSHAKE, SASL_AUTHENTICATE})
MAX_RECEIVE_SIZE = 524288  # sasl.server.max.receive.size


def _api_name(api_key: int) -> str:
    """Kafka's ``ApiKeys`` constant name: DescribeQuorumRequest -> DESCRIBE_QUORUM."""
    cls = REQUESTS.get(api_key)
    if cls is None:
        return f"API key {api_key}"
    return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__.removesuffix("Request")).upper()


def _accepted_api_versions(pipeline, frame) -> bool:
    """Whether Kafka would take this ApiVersions as the one before the handshake: a
    version it serves and a valid body (otherwise it answers an error and waits for
    another)."""
    from kraft_server.api.api_versions import valid_request
    try:
        header, pos = decode_request_header(frame)
        version = header.request_api_version
        lo, hi = pipeline.apis.get(API_VERSIONS, (0, -1))
        if not lo <= version <= hi:
            return False
        body, _ = ApiVersionsRequest.read(frame, pos, version)
    except Exception:
        return False  # the pipeline closes the connection
    return valid_request(body, version)


def _violation(message: str):
    from .pipeline import ProtocolViolation
    return ProtocolViolation(message)


class SaslGate:
    def __init__(self, settings, protocol: str, listener: str):
        self.settings = settings  # kraft_server.security.sasl_config.ServerSasl
        self.protocol, self.listener = protocol, listener
        self.principal = None
        # HANDSHAKE, AUTHENTICATE (v1 framing), RAW (v0 framing), COMPLETE, or REFUSED (a
        # request answered ILLEGAL_SASL_STATE: the connection closes once it is written)
        self.state = "HANDSHAKE"
        self.versions_seen = False  # an ApiVersions was accepted (Kafka's HANDSHAKE_REQUEST state)
        self.server = None
        self.expires = None  # time.monotonic() when the session ends (KIP-368), in COMPLETE
        self.previous = None  # (mechanism, principal) of the session being re-authenticated
        self.failure = ""
        self._pipeline, self._max_bytes = None, None  # set by attach / on completion

    def attach(self, pipeline) -> None:
        """Gate ``pipeline``: frames above sasl.server.max.receive.size are refused by
        their size prefix, before anything is buffered, until authentication ends."""
        self._max_bytes = pipeline._reader.max_bytes
        pipeline._reader.max_bytes = min(self._max_bytes, MAX_RECEIVE_SIZE)
        pipeline.gate = self

    # -- frames before the pipeline parses them --------------------------------------
    def consumed(self, pipeline, frame) -> bool:
        """True when the frame was a bare v0 token (answered here); raises
        ProtocolViolation for anything the current state does not admit."""
        if self.state == "COMPLETE":
            return self._in_session(frame)
        if self.state == "REFUSED":
            raise _violation("request after a refused one during SASL authentication")
        if len(frame) > MAX_RECEIVE_SIZE:
            raise _violation("Failing SASL authentication due to invalid receive size")
        if self.state == "RAW":
            reply = self._evaluate(bytes(frame))
            if reply is None:
                raise _violation(f"SASL/{self.server.mechanism} authentication failed")
            pipeline.write_raw(struct.pack(">i", len(reply)) + reply)
            self._maybe_done(pipeline, self._lifetime())
            return True
        try:
            api_key, _ = peek_key_version(frame)
        except Exception:
            raise _violation("Invalid request, potential reasons: kafka client configured with the wrong "
                             "security protocol, it does not support KIP-43 or it is not a kafka client.") from None
        if self.state == "HANDSHAKE":
            if api_key == SASL_HANDSHAKE:
                return False
            if api_key != API_VERSIONS:
                raise _violation(f"Unexpected Kafka request of type {_api_name(api_key)} during SASL handshake.")
            if self.versions_seen:
                raise _violation("Unexpected ApiVersions request received during SASL authentication "
                                 "state HANDSHAKE_REQUEST")
            self.versions_seen = _accepted_api_versions(pipeline, frame)
            return False
        if api_key == SASL_AUTHENTICATE:
            return False
        self._refuse(pipeline, frame, api_key)
        return True

    def _refuse(self, pipeline, frame, api_key: int) -> None:
        """A request other than SaslAuthenticate after SaslHandshake v1: Kafka parses it,
        answers its ``getErrorResponse`` for ILLEGAL_SASL_STATE and closes."""
        reason = f"Unexpected Kafka request of type {_api_name(api_key)} during SASL authentication."
        cls = REQUESTS.get(api_key)
        if cls is None:  # a key we do not know: Kafka's header parse fails on it too
            raise _violation(reason)
        try:
            header, pos = decode_request_header(frame)
            body, _ = cls.read(frame, pos, header.request_api_version)
        except Exception:  # a version or body that does not decode: Kafka's parse fails too
            raise _violation(reason) from None
        version = header.request_api_version
        answer = None if refused(api_key, version, body) else error_answer(
            api_key, version, body, ErrorCode.ILLEGAL_SASL_STATE, reason)
        if answer is None:  # refused by Kafka's parsing, or nothing to answer (acks 0)
            raise _violation(reason)
        self.state = "REFUSED"
        pipeline.answer_and_close(header, api_key, version, body, answer, reason)

    def _in_session(self, frame) -> bool:
        """An authenticated session with a lifetime: re-authentication or expiry."""
        try:
            api_key, _ = peek_key_version(frame)
        except Exception:
            return False  # the pipeline closes it
        if api_key == SASL_HANDSHAKE and time.monotonic() < self.expires:
            self.previous, self.state = (self.server.mechanism, self.principal), "HANDSHAKE"
            self.attach(self._pipeline)
            return False
        if time.monotonic() >= self.expires:
            raise _violation("expired session (connections.max.reauth.ms)")
        return False

    # -- SaslHandshake / SaslAuthenticate ---------------------------------------------
    def handle(self, pipeline, call) -> None:
        if call.api_key == SASL_HANDSHAKE:
            self._handshake(pipeline, call)
        else:
            self._authenticate(pipeline, call)

    def _handshake(self, pipeline, call) -> None:
        mechanism = call.body.mechanism
        enabled = list(self.settings.mechanisms)
        if mechanism not in enabled:
            call.respond(SaslHandshakeResponse(error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                                               mechanisms=enabled))
            pipeline.close_after_output(f"Unsupported SASL mechanism {mechanism}")
            return
        if mechanism == "PLAIN":
            self.server = PlainServer(self.settings.plain_users)
        elif mechanism == "OAUTHBEARER":
            self.server = OAuthBearerServer(self.settings.oauth)
        else:
            self.server = ScramServer(mechanism, self.settings.credentials)
        self.state = "AUTHENTICATE" if call.api_version >= 1 else "RAW"
        call.respond(SaslHandshakeResponse(error_code=0, mechanisms=enabled))

    def _authenticate(self, pipeline, call) -> None:
        reply = self._evaluate(bytes(call.body.auth_bytes or b""))
        if reply is not None and self.server.complete and self.previous is not None:
            reply = self._same_session(reply)
        if reply is None:
            call.respond(SaslAuthenticateResponse(error_code=ErrorCode.SASL_AUTHENTICATION_FAILED,
                                                  error_message=self.failure, auth_bytes=b""))
            pipeline.close_after_output(f"SASL authentication failed: {self.failure}")
            return
        lifetime = self._lifetime()
        # ErrorMessage "" rather than null on success, as Kafka's generated data defaults it
        call.respond(SaslAuthenticateResponse(error_code=0, error_message="", auth_bytes=reply,
                                              session_lifetime_ms=lifetime or 0))
        self._maybe_done(pipeline, lifetime)

    def _lifetime(self) -> int | None:
        """KIP-368: the session's lifetime in ms once complete (None: no end), from
        connections.max.reauth.ms and the credential's expiry (OAUTHBEARER's exp, a
        delegation token's), as
        Kafka's ``calcCompletionTimesAndReturnSessionLifetimeMs``."""
        if not self.server.complete:
            return None
        reauth = self.settings.reauth_ms.get(self.server.mechanism, 0)
        expiry = self.server.credential_expiry_ms
        if expiry is None:
            return reauth or None
        left = max(expiry - int(time.time() * 1000), 1)  # an expired credential's session ends at once
        return min(left, reauth) if reauth else left

    def _same_session(self, reply: bytes) -> bytes | None:
        """Re-authentication keeps the mechanism and the principal (Kafka's ReauthInfo)."""
        mechanism, principal = self.previous
        if self.server.mechanism != mechanism:
            self.failure = (f"SASL mechanism '{self.server.mechanism}' requested by client is not "
                            f"supported for re-authentication of mechanism '{mechanism}'")
            return None
        name = user(self.server.authorization_id)
        if name != principal:
            self.failure = (f"Cannot change principals during re-authentication from "
                            f"{principal.replace(':', '.', 1)}: {name.replace(':', '.', 1)}")
            return None
        return reply

    def _evaluate(self, token: bytes) -> bytes | None:
        """The mechanism's reply, or None with ``self.failure`` set to Kafka's message."""
        try:
            return self.server.evaluate(token)
        except SaslFailure as exc:
            self.failure = str(exc) if exc.exposed else (
                f"Authentication failed during authentication due to invalid credentials with SASL "
                f"mechanism {self.server.mechanism}")
            log.info("SASL/%s authentication failed on %s: %s", self.server.mechanism, self.listener, exc)
            return None

    def _maybe_done(self, pipeline, lifetime_ms: int | None = None) -> None:
        if self.server.complete:
            pipeline.principal = self.principal = user(self.server.authorization_id)
            pipeline.token_authenticated = self.server.token_authenticated
            pipeline._reader.max_bytes = self._max_bytes
            self.previous, self._pipeline = None, pipeline
            if lifetime_ms is not None:  # KIP-368: keep watching the session
                self.state, self.expires = "COMPLETE", time.monotonic() + lifetime_ms / 1000
            else:
                pipeline.gate = None
            log.debug("SASL/%s authenticated %s on %s", self.server.mechanism, pipeline.principal,
                      self.listener)


def answer_sasl_call(pipeline, call) -> None:
    """SaslHandshake/SaslAuthenticate: to the gate while authenticating; otherwise
    ILLEGAL_SASL_STATE, as Kafka's ControllerApis answers them."""
    if pipeline.gate is not None and pipeline.gate.state != "COMPLETE":
        pipeline.gate.handle(pipeline, call)
    elif call.api_key == SASL_HANDSHAKE:
        call.respond(SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[]))
    else:
        call.respond(SaslAuthenticateResponse(
            error_code=ErrorCode.ILLEGAL_SASL_STATE, auth_bytes=b"",
            error_message="SaslAuthenticate request received after successful authentication"))


__all__ = ["SASL_APIS", "SaslGate", "answer_sasl_call"]
