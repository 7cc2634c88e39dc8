"""A bearer token checked as Kafka's ``BrokerJwtValidator`` checks it (PyJWT does the
signature and the registered claims):

- a signed JWT (``alg`` none refused), its key chosen from the JWKS by ``kid`` and key
  type; a ``kid`` not in the cache asks the JWKS for a refresh (``jwks.py``);
- ``exp`` and ``iat`` required, ``exp``/``nbf`` checked with
  ``sasl.oauthbearer.clock.skew.seconds`` of leeway;
- ``aud`` must name one of ``sasl.oauthbearer.expected.audience`` when that is set,
  ``iss`` must equal ``sasl.oauthbearer.expected.issuer`` when that is set;
- the principal is the ``sasl.oauthbearer.sub.claim.name`` claim (trimmed, not
  empty); scopes come from ``sasl.oauthbearer.scope.claim.name`` (a string is one
  scope, as in Kafka).

Every failure raises ``JwtInvalid``; Kafka logs its text and tells the client only
``invalid_token``.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import jwt

log = logging.getLogger(__name__)

KEY_TYPES = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}


class JwtInvalid(Exception):
    pass


@dataclass(frozen=True)
class BearerToken:
    value: str = field(repr=False)
    principal: str
    scopes: frozenset[str]
    lifetime_ms: int  # exp, in ms since the epoch
    start_ms: int | None = None  # iat


@dataclass
class ValidatorSettings:
    audiences: list[str] = field(default_factory=list)
    issuer: str | None = None
    clock_skew_s: int = 30
    scope_claim: str = "scope"
    sub_claim: str = "sub"


def _string(name: str, value) -> str:
    if value is None:
        raise JwtInvalid(f"{name} value must be non-null")
    if not isinstance(value, str):
        raise JwtInvalid(f"Could not extract the '{name}' claim from the access token")
    if not value:
        raise JwtInvalid(f"{name} value must be non-empty")
    if not value.strip():
        raise JwtInvalid(f"{name} value must not contain only whitespace")
    return value.strip()


class JwtValidator:
    def __init__(self, jwks, settings: ValidatorSettings):
        self.jwks = jwks  # jwks.RefreshingJwks
        self.settings = settings

    def _key(self, header: dict):
        alg, kid = header.get("alg"), header.get("kid")
        kty = KEY_TYPES.get(str(alg)[:2])
        if kty is None:
            raise JwtInvalid(f"Could not validate the access token: the JWS algorithm {alg} is not allowed")
        keys = self.jwks.keys()
        for key in keys:
            if kid is not None and key.key_id != kid:
                continue
            if key.key_type == kty and key.public_key_use in (None, "sig"):
                return key
        if kid is not None and self.jwks.expedite(str(kid)):
            log.debug("Refreshing JWKs from %s: no key for kid %s", self.jwks.url, kid)
        raise JwtInvalid(f"Could not validate the access token: Unable to find a suitable verification key "
                         f"for JWS w/ header {header} from JWKs obtained from {self.jwks.url}")

    def validate(self, token: str) -> BearerToken:
        s = self.settings
        if token.count(".") != 2:
            raise JwtInvalid("Malformed JWT provided; expected three sections (header, payload, and signature)")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise JwtInvalid(f"Could not validate the access token: {exc}") from None
        key = self._key(header)
        try:
            claims = jwt.decode(
                token, key.key, algorithms=[header["alg"]], audience=s.audiences or None,
                issuer=s.issuer, leeway=s.clock_skew_s,
                options={"require": ["exp", "iat"], "verify_aud": bool(s.audiences), "verify_iat": False})
        except jwt.PyJWTError as exc:
            raise JwtInvalid(f"Could not validate the access token: {exc}") from None
        scope = claims.get(s.scope_claim)
        raw = [scope] if isinstance(scope, str) else list(scope) if isinstance(scope, list) else []
        scopes = set()
        for item in raw:
            item = _string(s.scope_claim, item)
            if item in scopes:
                raise JwtInvalid(f"{s.scope_claim} value must not contain duplicates - {item} already present")
            scopes.add(item)
        exp, iat = claims["exp"], claims.get("iat")
        if not isinstance(exp, (int, float)) or exp < 0:
            raise JwtInvalid(f'exp value must be non-negative; value given was "{exp}"')
        if not isinstance(iat, (int, float)) or isinstance(iat, bool):
            raise JwtInvalid("Could not extract the 'iat' claim from the access token")
        if iat < 0:
            raise JwtInvalid(f'iat value must be null or non-negative; value given was "{iat}"')
        principal = _string(s.sub_claim, claims.get(s.sub_claim))
        return BearerToken(token, principal, frozenset(scopes), int(exp * 1000), int(iat * 1000))
