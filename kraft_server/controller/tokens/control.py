"""Create, Renew and Expire delegation tokens on the active controller, as Kafka's
``DelegationTokenControlManager`` decides them; the sweep of expired tokens.

Each decision is a pure function of the committed image, the settings, the caller and
the time: ``(response fields, records)``. The records go in one atomic batch and the
answer is sent after commit (``*_op``, the write queue). The errors, in Kafka's order:

- no ``delegation.token.secret.key``: DELEGATION_TOKEN_AUTH_DISABLED;
- metadata.version below 3.6-IV2: UNSUPPORTED_VERSION;
- Create: a renewer that is not a ``User``: INVALID_PRINCIPAL_TYPE;
- Renew/Expire: no token with that HMAC: DELEGATION_TOKEN_NOT_FOUND; Renew of an
  expired token: DELEGATION_TOKEN_EXPIRED; a caller neither owner nor renewer:
  DELEGATION_TOKEN_OWNER_MISMATCH (Renew checks expiry first, Expire ownership first);
- Expire with a negative period removes the token at once (RemoveDelegationTokenRecord);
  otherwise an expired token is DELEGATION_TOKEN_EXPIRED.

A token's expiry is ``min(max timestamp, now + period)``, the period being
``delegation.token.expiry.time.ms`` or the request's smaller positive one; its max
timestamp ``now + delegation.token.max.lifetime.ms`` (or the request's smaller
positive MaxLifetimeMs). Sums saturate at Long.MAX_VALUE as Kafka's ``sum``.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from kraft_server.common import metadata_version as mv
from kraft_server.security.delegation_token import token_hmac
from wire.errors import ErrorCode
from wire.messages import DelegationTokenRecord, RemoveDelegationTokenRecord
from wire.uuids import random_uuid, uuid_to_str

log = logging.getLogger(__name__)

LONG_MAX = (1 << 63) - 1
USER = "User"


@dataclass(frozen=True)
class TokenSettings:
    secret: str | None = None  # delegation.token.secret.key; None or empty: tokens disabled
    max_lifetime_ms: int = 7 * 24 * 3_600_000  # delegation.token.max.lifetime.ms
    expiry_time_ms: int = 24 * 3_600_000  # delegation.token.expiry.time.ms
    check_interval_ms: int = 3_600_000  # delegation.token.expiry.check.interval.ms

    @property
    def enabled(self) -> bool:
        return bool(self.secret)


def _sum(now: int, duration: int) -> int:
    return LONG_MAX if now > LONG_MAX - duration else now + duration


def _refused(settings: TokenSettings, image) -> int | None:
    if not settings.enabled:
        return ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
    if (image.metadata_version() or 0) < mv.DELEGATION_TOKEN:
        return ErrorCode.UNSUPPORTED_VERSION
    return None


def _find(image, settings: TokenSettings, mac: bytes) -> DelegationTokenRecord | None:
    mac = bytes(mac or b"")
    for record in image.tokens.tokens():
        if token_hmac(settings.secret, record.token_id) == mac:
            return record
    return None


def _expired(token: DelegationTokenRecord, now: int) -> bool:
    return token.max_timestamp < now or token.expiration_timestamp < now


def _may_renew(token: DelegationTokenRecord, principal: str) -> bool:
    return token.owner == principal or principal in token.renewers


def owner_of(request, requester: str) -> str:
    """The token's owner: the request's (v3+) when named, else the requester."""
    name = request.owner_principal_name
    if name:
        return f"{request.owner_principal_type}:{name}"
    return requester


def create(image, settings: TokenSettings, requester: str, request, now: int, token_id: str | None = None):
    """(fields of CreateDelegationTokenResponse, records)."""
    owner = owner_of(request, requester)
    fields = {"principal_type": owner.split(":", 1)[0], "principal_name": owner.split(":", 1)[1],
              "token_requester_principal_type": requester.split(":", 1)[0],
              "token_requester_principal_name": requester.split(":", 1)[1]}
    refused = _refused(settings, image)
    if refused is not None:
        return {**fields, "error_code": refused}, []
    max_life = settings.max_lifetime_ms
    if request.max_lifetime_ms > 0:
        max_life = min(max_life, request.max_lifetime_ms)
    max_timestamp = _sum(now, max_life)
    expiry = min(max_timestamp, _sum(now, settings.expiry_time_ms))
    renewers = []
    for r in request.renewers:
        if r.principal_type != USER:
            return {**fields, "error_code": ErrorCode.INVALID_PRINCIPAL_TYPE}, []
        renewers.append(f"{r.principal_type}:{r.principal_name}")
    token_id = token_id or uuid_to_str(random_uuid())  # Kafka's Uuid.randomUuid().toString()
    record = DelegationTokenRecord(owner=owner, requester=requester, renewers=renewers, issue_timestamp=now,
                                   max_timestamp=max_timestamp, expiration_timestamp=expiry, token_id=token_id)
    fields.update(error_code=0, issue_timestamp_ms=now, expiry_timestamp_ms=expiry, max_timestamp_ms=max_timestamp,
                  token_id=token_id, hmac=token_hmac(settings.secret, token_id))
    return fields, [(record, 0)]


def _with_expiry(token: DelegationTokenRecord, expiry: int) -> DelegationTokenRecord:
    return DelegationTokenRecord(owner=token.owner, requester=token.requester, renewers=list(token.renewers),
                                 issue_timestamp=token.issue_timestamp, max_timestamp=token.max_timestamp,
                                 expiration_timestamp=expiry, token_id=token.token_id)


def _lookup(image, settings: TokenSettings, hmac: bytes):
    """(error code, token): tokens refused altogether, or no token with this HMAC."""
    refused = _refused(settings, image)
    if refused is not None:
        return refused, None
    token = _find(image, settings, hmac)
    if token is None:
        return ErrorCode.DELEGATION_TOKEN_NOT_FOUND, None
    return 0, token


def renew(image, settings: TokenSettings, principal: str, request, now: int):
    """(error code, expiry timestamp, records)."""
    error, token = _lookup(image, settings, request.hmac)
    if error:
        return error, 0, []
    if _expired(token, now):
        return ErrorCode.DELEGATION_TOKEN_EXPIRED, 0, []
    if not _may_renew(token, principal):
        return ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, 0, []
    period = settings.expiry_time_ms
    if request.renew_period_ms > 0:
        period = min(period, request.renew_period_ms)
    expiry = min(token.max_timestamp, now + period)
    return 0, expiry, [(_with_expiry(token, expiry), 0)]


def expire(image, settings: TokenSettings, principal: str, request, now: int):
    """(error code, expiry timestamp, records)."""
    error, token = _lookup(image, settings, request.hmac)
    if error:
        return error, 0, []
    if not _may_renew(token, principal):
        return ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, 0, []
    if request.expiry_time_period_ms < 0:  # expire at once
        return 0, now, [(RemoveDelegationTokenRecord(token_id=token.token_id), 0)]
    if _expired(token, now):
        return ErrorCode.DELEGATION_TOKEN_EXPIRED, 0, []
    expiry = min(token.max_timestamp, _sum(now, request.expiry_time_period_ms))
    return 0, expiry, [(_with_expiry(token, expiry), 0)]


def sweep(image, now: int) -> list:
    """RemoveDelegationTokenRecords for the tokens past their expiry or max timestamp
    (``sweepExpiredDelegationTokens``)."""
    records = []
    for token in image.tokens.tokens():
        if _expired(token, now):
            log.info("Delegation token expired for token: %s for owner: %s", token.token_id, token.owner)
            records.append((RemoveDelegationTokenRecord(token_id=token.token_id), 0))
    return records
