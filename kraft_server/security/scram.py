"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka runs them
(``ScramSaslServer``, ``ScramSaslClient``, ``ScramFormatter``): no channel binding
(gs2 header ``n,,``), an optional authorization id that must equal the user name,
at least 4096 iterations; of the extensions only ``tokenauth=true`` counts: the user
name is then a delegation token's id, looked up with ``credentials(mechanism, id,
token=True)``, and the principal is the token's owner (``delegation_token.py``).

Credentials are Kafka's ``ScramCredential``: salt, stored key, server key and
iterations (UserScramCredentialRecord in the metadata log); the password itself is
never kept. Failures raise ``ScramError`` with Kafka's message.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from .sasl_failure import SaslFailure

MIN_ITERATIONS = 4096
DIGESTS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
MECHANISM_IDS = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}  # Kafka's ScramMechanism.type()


class ScramError(SaslFailure):
    """A failed SCRAM exchange (a SaslException in Kafka unless ``exposed``)."""

    def __init__(self, message: str, exposed: bool = False):
        super().__init__(message, exposed)


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def _hmac(digest: str, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, digest).digest()


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b))


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac(DIGESTS[mechanism], password.encode("utf-8"), salt, iterations)


def make_credential(mechanism: str, password: str, salt: bytes | None = None,
                    iterations: int = MIN_ITERATIONS) -> ScramCredential:
    digest = DIGESTS[mechanism]
    salt = salt if salt is not None else secrets.token_bytes(32)
    salted = salted_password(mechanism, password, salt, iterations)
    client_key = _hmac(digest, salted, b"Client Key")
    return ScramCredential(salt, hashlib.new(digest, client_key).digest(),
                           _hmac(digest, salted, b"Server Key"), iterations)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _attrs(message: str) -> dict[str, str]:
    out = {}
    for part in message.split(","):
        key, sep, value = part.partition("=")
        if sep and len(key) == 1:
            out.setdefault(key, value)
    return out


def decode_name(saslname: str) -> str:
    return saslname.replace("=2C", ",").replace("=3D", "=")


def encode_name(username: str) -> str:
    return username.replace("=", "=3D").replace(",", "=2C")


_CLIENT_FIRST = re.compile(
    r"n,(?:a=(?P<authzid>[^,]*))?,(?P<bare>n=(?P<name>[^,]*),r=(?P<nonce>[^,]+)(?:,(?P<extensions>.*))?)$")


def _token_login(extensions: str | None) -> bool:
    """Kafka's ``ScramExtensions``: ``tokenauth=true`` logs in with a delegation token."""
    return any(part == "tokenauth=true" for part in (extensions or "").split(","))


class ScramServer:
    """One server-side exchange: ``evaluate(token) -> reply``; ``complete`` and
    ``authorization_id`` once the client's proof checked out."""

    def __init__(self, mechanism: str, credentials):
        self.mechanism, self.digest = mechanism, DIGESTS[mechanism]
        self._credentials = credentials  # (mechanism, user) -> ScramCredential | None
        self._state = "first"
        self.complete = False
        self.authorization_id: str | None = None  # a token login's: the token's owner
        self.token_authenticated = False
        self.credential_expiry_ms: int | None = None  # a token's expiry timestamp: caps the session

    def evaluate(self, token: bytes) -> bytes:
        text = token.decode("utf-8", "replace")
        if self._state == "first":
            return self._first(text)
        if self._state == "final":
            return self._final(text)
        raise ScramError(f"Unexpected SASL request in state {self._state.upper()}")

    def _first(self, text: str) -> bytes:
        m = _CLIENT_FIRST.match(text)
        if m is None:
            raise ScramError("Invalid SCRAM client first message")
        user = decode_name(m.group("name"))
        owner = user
        if _token_login(m.group("extensions")):  # the user is a token id (delegation_token.py)
            token = self._credentials(self.mechanism, user, token=True) if self._credentials else None
            if token is None:
                raise ScramError(f"Token Authentication failed: Invalid tokenId : {user}")
            credential, owner, self.credential_expiry_ms = token
            self.token_authenticated = True
        else:
            credential = self._credentials(self.mechanism, user) if self._credentials else None
        if credential is None:
            raise ScramError("Authentication failed: Invalid user credentials")
        authzid = m.group("authzid")
        if authzid and authzid != user:
            raise ScramError("Authentication failed: Client requested an authorization id that is "
                             "different from username", exposed=True)
        if credential.iterations < MIN_ITERATIONS:
            raise ScramError(f"Iterations {credential.iterations} is less than the minimum "
                             f"{MIN_ITERATIONS} for {self.mechanism}")
        self._user, self._credential = owner, credential
        self._nonce = m.group("nonce") + secrets.token_urlsafe(24)
        self._server_first = f"r={self._nonce},s={_b64(credential.salt)},i={credential.iterations}"
        self._client_first_bare = m.group("bare")
        self._state = "final"
        return self._server_first.encode()

    def _final(self, text: str) -> bytes:
        without_proof, sep, proof = text.rpartition(",p=")
        attrs = _attrs(without_proof)
        if not sep or "c" not in attrs or "r" not in attrs:
            raise ScramError("Authentication failed: Invalid client final message")
        if attrs["r"] != self._nonce:
            raise ScramError("Invalid client nonce in the final client message.")
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        try:
            client_proof = base64.b64decode(proof, validate=True)
        except ValueError:
            raise ScramError("Authentication failed: Invalid client final message") from None
        signature = _hmac(self.digest, self._credential.stored_key, auth_message)
        client_key = _xor(client_proof, signature)
        if len(client_proof) != len(signature) or not hmac.compare_digest(
                hashlib.new(self.digest, client_key).digest(), self._credential.stored_key):
            raise ScramError("Invalid client credentials")
        self._state, self.complete, self.authorization_id = "complete", True, self._user
        return f"v={_b64(_hmac(self.digest, self._credential.server_key, auth_message))}".encode()


class ScramClient:
    """The client side, for outbound controller connections: ``first()``, then
    ``final(server_first)``, then ``verify(server_final)``."""

    def __init__(self, mechanism: str, username: str, password: str, nonce: str | None = None):
        self.mechanism, self.digest = mechanism, DIGESTS[mechanism]
        self._password = password
        self._bare = f"n={encode_name(username)},r={nonce or secrets.token_urlsafe(24)}"

    def first(self) -> bytes:
        return f"n,,{self._bare}".encode()

    def final(self, server_first: bytes) -> bytes:
        text = server_first.decode("utf-8", "replace")
        attrs = _attrs(text)
        nonce, salt, iterations = attrs.get("r", ""), attrs.get("s"), int(attrs.get("i", "0") or 0)
        if not nonce.startswith(_attrs(self._bare)["r"]) or salt is None or iterations < MIN_ITERATIONS:
            raise ScramError("Invalid SCRAM server first message")
        salted = salted_password(self.mechanism, self._password, base64.b64decode(salt), iterations)
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self._bare},{text},{without_proof}".encode()
        client_key = _hmac(self.digest, salted, b"Client Key")
        stored_key = hashlib.new(self.digest, client_key).digest()
        proof = _xor(client_key, _hmac(self.digest, stored_key, auth_message))
        self._expected = _hmac(self.digest, _hmac(self.digest, salted, b"Server Key"), auth_message)
        return f"{without_proof},p={_b64(proof)}".encode()

    def verify(self, server_final: bytes) -> None:
        attrs = _attrs(server_final.decode("utf-8", "replace"))
        if "e" in attrs:
            raise ScramError(f"Sasl authentication using {self.mechanism} failed with error: {attrs['e']}")
        if base64.b64decode(attrs.get("v", "")) != self._expected:
            raise ScramError("Sasl client verification failed")
