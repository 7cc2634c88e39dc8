"""Kafka's ``StandardAuthorizer`` (``org.apache.kafka.metadata.authorizer``): may this
principal, from this host, perform this operation on this resource?

The rules, as ``StandardAuthorizerData.authorize`` and ``findResult`` apply them:

- a principal named in ``super.users`` (``User:alice;User:bob``) may do anything;
- the ACLs that apply to a resource are the LITERAL ones on its name and on ``*``, and
  the PREFIXED ones whose name starts the resource's name;
- an ACL matches when its principal is the caller's or ``User:*``, its host is the
  caller's address or ``*``, and its operation is the one asked, or ALL; an ALLOW ACL
  also matches DESCRIBE when it grants READ, WRITE, DELETE or ALTER, and
  DESCRIBE_CONFIGS when it grants ALTER_CONFIGS;
- a matching DENY wins over any ALLOW; a matching ALLOW allows;
- no ACL on the resource at all (for anyone): ``allow.everyone.if.no.acl.found``
  decides (false by default); ACLs on it but none allowing this caller: denied.

``AclIndex`` files the ACLs by resource type, then literal name or prefix, so a check
costs a few dictionary lookups (one per length that some prefixed ACL has), where
``StandardAuthorizerData`` walks a sorted set.
"""
from __future__ import annotations

import logging

from kraft_server.config import ConfigError

from . import cidr
from .acls import (
    ALL, ALLOW, ALTER, ALTER_CONFIGS, DELETE, DENY, DESCRIBE, DESCRIBE_CONFIGS, LITERAL, OPERATIONS,
    PREFIXED, READ, RESOURCE_TYPES, WILDCARD, WILDCARD_PRINCIPAL, WRITE,
)

log = logging.getLogger(__name__)

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
IMPLIES = {DESCRIBE: frozenset({DESCRIBE, READ, WRITE, DELETE, ALTER}),
           DESCRIBE_CONFIGS: frozenset({DESCRIBE_CONFIGS, ALTER_CONFIGS})}
_EMPTY: tuple = ()


class AclIndex:
    """The ACLs of an image by (resource type) -> (literal by name, prefixed by prefix)."""

    def __init__(self, acls) -> None:
        self._by_type: dict[int, tuple[dict, dict, list]] = {}
        for acl in acls:
            literal, prefixed, _ = self._by_type.setdefault(acl.resource_type, ({}, {}, []))
            table = literal if acl.pattern_type == LITERAL else prefixed if acl.pattern_type == PREFIXED else None
            if table is not None:
                table.setdefault(acl.name, []).append(acl)
        for _, prefixed, lengths in self._by_type.values():
            lengths.extend(sorted({len(p) for p in prefixed}))  # only these prefixes can match

    def applying(self, resource_type: int, name: str) -> list:
        """Every ACL whose pattern covers the resource."""
        tables = self._by_type.get(resource_type)
        if tables is None:
            return []
        literal, prefixed, lengths = tables
        found = list(literal.get(name, _EMPTY))
        if name != WILDCARD:
            found += literal.get(WILDCARD, _EMPTY)
        for end in lengths:
            if end > len(name):
                break
            found += prefixed.get(name[:end], _EMPTY)
        return found


def _matches(acl, principal: str, host: str, operation: int) -> bool:
    if acl.principal != principal and acl.principal != WILDCARD_PRINCIPAL:
        return False
    if acl.host != WILDCARD and acl.host != host and not cidr.in_range(host, acl.host):
        return False
    if acl.operation == ALL or acl.operation == operation:
        return True
    # Only an ALLOW grants the implied operations (a DENY of READ does not deny DESCRIBE).
    return acl.permission == ALLOW and acl.operation in IMPLIES.get(operation, _EMPTY)


class Authorizer:
    def __init__(self, super_users=(), allow_if_no_acl: bool = False) -> None:
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_if_no_acl

    def authorize(self, index: AclIndex, principal: str, host: str, operation: int,
                  resource_type: int, name: str) -> bool:
        if principal in self.super_users:
            return True
        applying = index.applying(resource_type, name)
        allowed = False
        for acl in applying:
            if _matches(acl, principal, host, operation):
                if acl.permission == DENY:
                    return False
                allowed = True
        if not applying:
            allowed = self.allow_if_no_acl
        if not allowed and log.isEnabledFor(logging.DEBUG):
            log.debug("Principal = %s is Denied operation = %s from host = %s on resource = %s:LITERAL:%s",
                      principal, OPERATIONS.get(operation), host, RESOURCE_TYPES.get(resource_type), name)
        return allowed


def authorizer_from_config(raw: dict) -> Authorizer | None:
    """``authorizer.class.name`` (empty: no checks), ``super.users``,
    ``allow.everyone.if.no.acl.found``; raises ConfigError (a one-line start-up error)
    for an authorizer class other than Kafka's StandardAuthorizer."""
    name = raw.get("authorizer.class.name", "").strip()
    if not name:
        return None
    if name != STANDARD_AUTHORIZER:
        raise ConfigError(f"Invalid value {name} for configuration authorizer.class.name: "
                         f"only {STANDARD_AUTHORIZER} is supported")
    users = [u.strip() for u in raw.get("super.users", "").split(";") if u.strip()]
    flag = raw.get("allow.everyone.if.no.acl.found", "false").strip().lower()
    if flag not in ("true", "false"):
        raise ConfigError(f"Invalid value {flag} for configuration allow.everyone.if.no.acl.found: "
                         "Expected value to be either true or false")
    return Authorizer(users, flag == "true")
