"""DescribeDelegationToken (41) answered from a node's own image, as a Kafka broker
answers it from its token cache (``KafkaApis.handleDescribeTokensRequest`` with
``DelegationTokenManager.filterToken``), on any node, active or not:

- no ``delegation.token.secret.key``: DELEGATION_TOKEN_AUTH_DISABLED, no tokens;
- Owners null: every token the caller may see; empty: none;
- a token is listed when one of the named owners is its owner, requester or a renewer
  (``TokenInformation.ownerOrRenewer``), and the caller is its owner, requester or a
  renewer, or may DESCRIBE the DELEGATION_TOKEN named by its id, or DESCRIBE_TOKENS on
  the USER resource of its owner (no authorizer: everyone may);
- expired tokens are listed until the controller's sweep removes them
  (RemoveDelegationTokenRecord), as a broker keeps them in its cache till then.

Tokens come by token id (a broker's order is its ConcurrentHashMap's). The caller
checks (allowTokenRequests) are ``kraft_server/api/delegation_tokens.py``'s.
"""
from __future__ import annotations

from typing import Callable

from kraft_server.security.delegation_token import token_hmac
from wire.errors import ErrorCode
from wire.messages import DescribeDelegationTokenResponse, DelegationTokenRecord
from wire.messages.describe_delegation_token_response import DescribedDelegationToken, DescribedDelegationTokenRenewer

from .control import TokenSettings


def _split(principal: str) -> tuple[str, str]:
    kind, _, name = principal.partition(":")
    return kind, name


def _owner_or_renewer(token: DelegationTokenRecord, principal: str) -> bool:
    return principal in (token.owner, token.requester) or principal in token.renewers


def visible(token: DelegationTokenRecord, requester: str, owners: list[str] | None,
            may_describe: Callable[[DelegationTokenRecord], bool]) -> bool:
    """``filterToken``: asked for (``owners`` None: all), then owned or authorized."""
    if owners is not None and not any(_owner_or_renewer(token, o) for o in owners):
        return False
    return _owner_or_renewer(token, requester) or may_describe(token)


def described(token: DelegationTokenRecord, secret: str, version: int) -> DescribedDelegationToken:
    owner, requester = _split(token.owner), _split(token.requester)
    entry = DescribedDelegationToken(
        principal_type=owner[0], principal_name=owner[1], issue_timestamp=token.issue_timestamp,
        expiry_timestamp=token.expiration_timestamp, max_timestamp=token.max_timestamp, token_id=token.token_id,
        hmac=token_hmac(secret, token.token_id),
        renewers=[DescribedDelegationTokenRenewer(principal_type=k, principal_name=n)
                  for k, n in map(_split, token.renewers)])
    if version >= 3:
        entry.token_requester_principal_type, entry.token_requester_principal_name = requester
    return entry


def describe(image, settings: TokenSettings, requester: str, request, version: int,
             may_describe: Callable[[DelegationTokenRecord], bool]) -> DescribeDelegationTokenResponse:
    if not settings.enabled:
        return DescribeDelegationTokenResponse(error_code=ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED)
    owners = None if request.owners is None else [f"{o.principal_type}:{o.principal_name}" for o in request.owners]
    tokens = [described(t, settings.secret, version) for t in image.tokens.tokens()
              if visible(t, requester, owners, may_describe)]
    return DescribeDelegationTokenResponse(error_code=0, tokens=tokens)
