"""SASL/PLAIN (RFC 4616) as Kafka's ``PlainSaslServer`` checks it: the token is
``[authzid] NUL username NUL password``; an authorization id must equal the user
name; the password is compared with the JAAS ``user_<name>`` option. Failures
raise ``PlainError`` with Kafka's message.
"""
from __future__ import annotations

import hmac

from .sasl_failure import SaslFailure


class PlainError(SaslFailure):
    """A failed PLAIN exchange (a SaslAuthenticationException in Kafka unless not ``exposed``)."""

    def __init__(self, message: str, exposed: bool = True):
        super().__init__(message, exposed)


class PlainServer:
    mechanism = "PLAIN"
    token_authenticated = False  # a delegation token's login (SCRAM only)
    credential_expiry_ms = None  # no credential expires

    def __init__(self, users: dict[str, str]):
        self._users = users
        self.complete = False
        self.authorization_id: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        parts = token.decode("utf-8", "replace").split("\0")
        if len(parts) != 3:
            raise PlainError("Invalid SASL/PLAIN response: expected 3 tokens, got " + str(len(parts)),
                             exposed=False)
        authzid, username, password = parts
        if not username:
            raise PlainError("Authentication failed: username not specified")
        if not password:
            raise PlainError("Authentication failed: password not specified")
        expected = self._users.get(username)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise PlainError("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise PlainError("Authentication failed: Client requested an authorization id that is "
                             "different from username")
        self.complete, self.authorization_id = True, username
        return b""


def plain_token(username: str, password: str) -> bytes:
    return f"\0{username}\0{password}".encode()
