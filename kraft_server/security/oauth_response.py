"""The OAUTHBEARER client initial response (RFC 7628), read and written as Kafka's
``OAuthBearerClientInitialResponse`` does::

    n,[a=<authzid>],^A auth=Bearer <token> [^A <key>=<value>]* ^A^A

A GS2 header (no channel binding, an optional authorization id), then ``key=value``
pairs separated by ^A (0x01): ``auth`` carries the token, the others are SASL
extensions (names of letters only, values of printable ASCII). A malformed message
raises ``OAuthResponseError``, a plain SaslException in Kafka, so the client gets the
generic failure text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

SEP = "\x01"
_KEY = r"[A-Za-z]+"
_VALUE = r"[\x21-\x7E \t\r\n]+"
_MESSAGE = re.compile(
    rf"n,(?:a=(?P<authzid>(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+))?,{SEP}"
    rf"(?P<pairs>(?:{_KEY}={_VALUE}{SEP})*){SEP}", re.DOTALL)
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_~+/.a-zA-Z0-9]+=*)")
KEY_PATTERN, VALUE_PATTERN = re.compile(_KEY), re.compile(_VALUE)


class OAuthResponseError(ValueError):
    pass


@dataclass
class InitialResponse:
    token: str
    authorization_id: str = ""
    extensions: dict[str, str] = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        check_extensions(self.extensions)
        authzid = f"a={self.authorization_id}" if self.authorization_id else ""
        extra = "".join(f"{SEP}{k}={v}" for k, v in self.extensions.items())
        return f"n,{authzid},{SEP}auth=Bearer {self.token}{extra}{SEP}{SEP}".encode()


def check_extensions(extensions: dict[str, str]) -> None:
    if "auth" in extensions:
        raise OAuthResponseError("Extension name auth is invalid")
    for name, value in extensions.items():
        if not KEY_PATTERN.fullmatch(name):
            raise OAuthResponseError(f"Extension name {name} is invalid")
        if not VALUE_PATTERN.fullmatch(value):
            raise OAuthResponseError(f"Extension value ({value}) for extension {name} is invalid")


def parse_initial_response(data: bytes) -> InitialResponse:
    text = data.decode("utf-8", "replace")
    m = _MESSAGE.fullmatch(text)
    if m is None:
        raise OAuthResponseError("Invalid OAUTHBEARER client first message")
    pairs: dict[str, str] = {}
    for element in m.group("pairs").split(SEP):
        if element:
            key, _, value = element.partition("=")
            pairs[key] = value
    auth = pairs.pop("auth", None)
    if auth is None:
        raise OAuthResponseError("Invalid OAUTHBEARER client first message: 'auth' not specified")
    check_extensions(pairs)
    a = _AUTH.fullmatch(auth)
    if a is None:
        raise OAuthResponseError("Invalid OAUTHBEARER client first message: invalid 'auth' format")
    if a.group("scheme").lower() != "bearer":
        raise OAuthResponseError(f"Invalid scheme in OAUTHBEARER client first message: {a.group('scheme')}")
    return InitialResponse(a.group("token"), m.group("authzid") or "", pairs)
