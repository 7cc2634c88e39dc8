"""``kafka-storage format --add-scram`` arguments, with Kafka's syntax and messages
(``org.apache.kafka.metadata.storage.ScramParser``)::

    --add-scram 'SCRAM-SHA-256=[name=alice,password=alice-secret]'
    --add-scram 'SCRAM-SHA-512=[name=bob,iterations=8192,salt="MWx2...",saltedpassword="mT0y..."]'

``salt`` and ``saltedpassword`` are base64; ``iterations`` defaults to 4096 and must
lie in 4096..16384. Each argument becomes a UserScramCredentialRecord in the
bootstrap checkpoint; the first active controller commits it with the feature levels.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets

from kraft_server.security.scram import DIGESTS, MECHANISM_IDS, MIN_ITERATIONS, salted_password
from wire.messages import UserScramCredentialRecord

MAX_ITERATIONS = 16384


class ScramArgError(ValueError):
    pass


def _unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value


def _components(mechanism: str, text: str) -> dict[str, str]:
    if not text.startswith("["):
        raise ScramArgError("Expected configuration string to start with [")
    if not text.endswith("]"):
        raise ScramArgError("Expected configuration string to end with ]")
    out = {}
    for part in text[1:-1].split(","):
        key, sep, value = part.partition("=")
        if not sep:
            raise ScramArgError(f"No equals sign found in SCRAM component: {part}")
        out[key.strip()] = _unquote(value.strip())
    return out


def _b64(value: str, what: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ScramArgError(f"Failed to decode given {what}: {value}") from None


def parse_add_scram(argument: str) -> UserScramCredentialRecord:
    mechanism, sep, rest = argument.partition("=")
    if not sep:
        raise ScramArgError(f"Failed to find equals sign in SCRAM argument '{argument}'")
    mechanism = mechanism.strip()
    if mechanism not in DIGESTS:
        raise ScramArgError(f"The add-scram mechanism {mechanism} is not supported.")
    parts = _components(mechanism, rest.strip())
    name = parts.pop("name", None)
    if name is None:
        raise ScramArgError("You must supply 'name' to add-scram")
    salt = _b64(parts.pop("salt"), "salt") if "salt" in parts else None
    try:
        iterations = int(parts.pop("iterations", MIN_ITERATIONS))
    except ValueError as exc:
        raise ScramArgError(f"Failed to parse iterations count: {exc}") from None
    password, salted = parts.pop("password", None), parts.pop("saltedpassword", None)
    if parts:
        raise ScramArgError(f"Unknown SCRAM configurations: {', '.join(parts)}")
    if iterations < MIN_ITERATIONS:
        raise ScramArgError(f"The 'iterations' value must be >= {MIN_ITERATIONS} for add-scram using {mechanism}")
    if iterations > MAX_ITERATIONS:
        raise ScramArgError(f"The 'iterations' value must be <= {MAX_ITERATIONS} for add-scram using {mechanism}")
    if password is None and salted is None:
        raise ScramArgError("You must supply one of 'password' or 'saltedpassword' to add-scram")
    if salted is not None and salt is None:
        raise ScramArgError("You must supply 'salt' with 'saltedpassword' to add-scram")
    salt = salt if salt is not None else secrets.token_bytes(32)
    key = _b64(salted, "saltedPassword") if salted is not None else \
        salted_password(mechanism, password, salt, iterations)
    digest = DIGESTS[mechanism]
    client_key = hmac.new(key, b"Client Key", digest).digest()
    return UserScramCredentialRecord(
        name=name, mechanism=MECHANISM_IDS[mechanism], salt=salt,
        stored_key=hashlib.new(digest, client_key).digest(),
        server_key=hmac.new(key, b"Server Key", digest).digest(), iterations=iterations)
