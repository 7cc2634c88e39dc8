"""The console's HTTP Basic login (``SASL_SSL`` console listener), checked against the
node's SASL users: PLAIN's ``user_<name>`` JAAS options and the SCRAM credentials of
the metadata image, for the mechanisms ``sasl.enabled.mechanisms`` names on the
console (``listener.name.console.``, else the node's).

A SCRAM check derives the salted password (PBKDF2, thousands of rounds): it runs off
the event loop (``net/offload.py``). A login that passed is remembered for
``REMEMBER_S`` by a keyed digest of the header, so a page's every request does not
derive it again, but only while the credential it passed against is still the user's
(a SCRAM credential changed or deleted in the metadata ends it at once). Passwords are
never logged nor kept.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
import time

REMEMBER_S = 60.0
MAX_REMEMBERED = 256


def basic_credentials(header: str | None) -> tuple[str, str] | None:
    """``(user, password)`` of an ``Authorization: Basic`` header, or None."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        text = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    user, sep, password = text.partition(":")
    return (user, password) if sep and user else None


def scram_matches(mechanism: str, credential, password: str) -> bool:
    """The SCRAM check of a password against a stored credential (RFC 5802)."""
    from kraft_server.security.scram import DIGESTS, salted_password

    digest = DIGESTS[mechanism]
    salted = salted_password(mechanism, password, credential.salt, credential.iterations)
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    return hmac.compare_digest(hashlib.new(digest, client_key).digest(), credential.stored_key)


class BasicLogin:
    """``check(header, done)``: ``done(user)`` for good credentials, ``done(None)``
    otherwise; now, or later from the event loop after a SCRAM derivation."""

    def __init__(self, mechanisms, plain_users: dict[str, str], credentials, offload, clock=time.monotonic):
        self.mechanisms = [m for m in mechanisms if m == "PLAIN" or m.startswith("SCRAM-")]
        self.plain_users = plain_users
        self.credentials = credentials  # credentials(mechanism, user) -> ScramCredential | None
        self.offload = offload  # offload(fn, done): fn() off the loop, done(result) on it
        self.clock = clock
        self._key = os.urandom(32)
        self._remembered: dict[bytes, tuple[str, str, bytes, float]] = {}  # user, mechanism, stored key, until

    def _digest(self, header: str) -> bytes:
        return hmac.new(self._key, header.encode("utf-8", "replace"), "sha256").digest()

    def check(self, header: str | None, done) -> None:
        pair = basic_credentials(header)
        if pair is None:
            done(None)
            return
        key = self._digest(header)
        known = self._remembered.get(key)
        if known is not None and known[3] > self.clock() and self._still(*known[:3]):
            done(known[0])
            return
        user, password = pair
        if "PLAIN" in self.mechanisms:
            expected = self.plain_users.get(user)
            if expected is not None and hmac.compare_digest(expected.encode(), password.encode()):
                self._remember(key, user, "PLAIN", b"")
                done(user)
                return
        stored = [(m, c) for m in self.mechanisms if m.startswith("SCRAM-")
                  for c in [self.credentials(m, user) if self.credentials else None] if c is not None]
        if not stored:
            done(None)
            return

        def derive():
            return next(((m, c) for m, c in stored if scram_matches(m, c, password)), None)

        def derived(match) -> None:
            if isinstance(match, tuple):
                self._remember(key, user, match[0], match[1].stored_key)
            done(user if isinstance(match, tuple) else None)
        self.offload(derive, derived)

    def _still(self, user: str, mechanism: str, stored_key: bytes) -> bool:
        """The credential a remembered login passed against is still the user's."""
        if mechanism == "PLAIN":
            return True  # PLAIN users are the node's configuration
        current = self.credentials(mechanism, user) if self.credentials else None
        return current is not None and hmac.compare_digest(current.stored_key, stored_key)

    def _remember(self, key: bytes, user: str, mechanism: str, stored_key: bytes) -> None:
        if len(self._remembered) >= MAX_REMEMBERED:
            now = self.clock()
            self._remembered = {k: v for k, v in self._remembered.items() if v[3] > now}
            if len(self._remembered) >= MAX_REMEMBERED:
                self._remembered.clear()
        self._remembered[key] = (user, mechanism, stored_key, self.clock() + REMEMBER_S)
