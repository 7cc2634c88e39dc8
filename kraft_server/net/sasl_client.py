"""SASL on an outbound controller connection (Kafka's ``SaslClientAuthenticator``,
KIP-152 framing): after ApiVersions, SaslHandshake v1 with
``sasl.mechanism.controller.protocol``, then SaslAuthenticate requests carrying the
mechanism's tokens until the server's last one is verified (SCRAM checks the
server's signature; OAUTHBEARER sends the token of ``security/oauth_login.py`` and
answers an error challenge with ^A, as Kafka's ``OAuthBearerSaslClient``). Sans-I/O:
the channel sends what ``on_response`` returns. A session with a lifetime (KIP-368)
is renewed in band by a new exchange on the same connection (``peers.py``), as
Kafka's clients re-authenticate.
"""
from __future__ import annotations

from kraft_server.security.oauth_response import InitialResponse
from kraft_server.security.plain import plain_token
from kraft_server.security.scram import ScramClient, ScramError
from wire.errors import error_name
from wire.messages import (
    SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse)


class SaslFailed(Exception):
    pass


class SaslClient:
    def __init__(self, settings, peer_versions: dict[int, tuple[int, int]]):
        self.settings = settings  # kraft_server.security.sasl_config.ClientSasl
        self.mechanism = settings.mechanism
        handshake = peer_versions.get(SaslHandshakeRequest.API_KEY)
        authenticate = peer_versions.get(SaslAuthenticateRequest.API_KEY)
        if handshake is None or handshake[1] < 1 or authenticate is None:
            raise SaslFailed("the peer does not offer SaslHandshake v1 and SaslAuthenticate")
        self.authenticate_version = min(authenticate[1], SaslAuthenticateRequest.MAX_VERSION)
        self._scram = (ScramClient(self.mechanism, settings.username, settings.password)
                       if self.mechanism.startswith("SCRAM-") else None)
        self._step = 0
        self.complete = False
        self.session_lifetime_ms = 0  # KIP-368: re-authenticate before it runs out

    def first_request(self):
        """(api key, version, body) of the SaslHandshake."""
        return SaslHandshakeRequest.API_KEY, 1, SaslHandshakeRequest(mechanism=self.mechanism)

    def on_response(self, body):
        """The next request, or None once authenticated; raises SaslFailed."""
        if isinstance(body, SaslHandshakeResponse):
            if body.error_code:
                raise SaslFailed(f"SaslHandshake failed with {error_name(body.error_code)} "
                                 f"(the server enables {', '.join(body.mechanisms)})")
            return self._authenticate(self._first_token())
        if not isinstance(body, SaslAuthenticateResponse):
            raise SaslFailed(f"unexpected response {type(body).__name__} during SASL")
        if body.error_code:
            raise SaslFailed(f"{error_name(body.error_code)}: {body.error_message}")
        self._step += 1
        self.session_lifetime_ms = body.session_lifetime_ms or 0
        if self.mechanism == "OAUTHBEARER" and body.auth_bytes:  # the server's error challenge
            return self._authenticate(b"\x01")
        try:
            if self._scram is not None and self._step == 1:
                return self._authenticate(self._scram.final(bytes(body.auth_bytes)))
            if self._scram is not None:
                self._scram.verify(bytes(body.auth_bytes))
        except ScramError as exc:
            raise SaslFailed(str(exc)) from None
        self.complete = True
        return None

    def _first_token(self) -> bytes:
        if self._scram is not None:
            return self._scram.first()
        if self.mechanism == "OAUTHBEARER":
            from kraft_server.security.oauth_login import LoginFailed
            try:
                return InitialResponse(self.settings.oauth.token()).to_bytes()
            except LoginFailed as exc:
                raise SaslFailed(str(exc)) from None
        return plain_token(self.settings.username, self.settings.password)

    def _authenticate(self, token: bytes):
        return (SaslAuthenticateRequest.API_KEY, self.authenticate_version,
                SaslAuthenticateRequest(auth_bytes=token))
