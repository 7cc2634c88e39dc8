"""ACLs as values: Kafka's codes for resource types, pattern types, operations and
permissions (``ResourceType``, ``PatternType``, ``AclOperation``, ``AclPermissionType``
of kafka-clients), one ``Acl`` binding, and the filter rules of
``AclBindingFilter.matches`` that DescribeAcls and DeleteAcls use.

A code Kafka does not know reads as UNKNOWN (0), as its ``fromCode`` does.
"""
from __future__ import annotations

from typing import NamedTuple

RESOURCE_TYPES = {0: "UNKNOWN", 1: "ANY", 2: "TOPIC", 3: "GROUP", 4: "CLUSTER",
                  5: "TRANSACTIONAL_ID", 6: "DELEGATION_TOKEN", 7: "USER"}
PATTERN_TYPES = {0: "UNKNOWN", 1: "ANY", 2: "MATCH", 3: "LITERAL", 4: "PREFIXED"}
OPERATIONS = {0: "UNKNOWN", 1: "ANY", 2: "ALL", 3: "READ", 4: "WRITE", 5: "CREATE", 6: "DELETE",
              7: "ALTER", 8: "DESCRIBE", 9: "CLUSTER_ACTION", 10: "DESCRIBE_CONFIGS",
              11: "ALTER_CONFIGS", 12: "IDEMPOTENT_WRITE", 13: "CREATE_TOKENS", 14: "DESCRIBE_TOKENS",
              15: "TWO_PHASE_COMMIT"}
PERMISSIONS = {0: "UNKNOWN", 1: "ANY", 2: "DENY", 3: "ALLOW"}

UNKNOWN, ANY = 0, 1
TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER = 2, 3, 4, 5, 6, 7
MATCH, LITERAL, PREFIXED = 2, 3, 4
ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION = 2, 3, 4, 5, 6, 7, 8, 9
DESCRIBE_CONFIGS, ALTER_CONFIGS = 10, 11
CREATE_TOKENS, DESCRIBE_TOKENS = 13, 14
DENY, ALLOW = 2, 3

WILDCARD = "*"  # a resource name or host matching any
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"  # the one CLUSTER resource


def known(table: dict, code: int) -> int:
    """The code, or UNKNOWN when Kafka has no such value."""
    return code if code in table else UNKNOWN


class Acl(NamedTuple):
    """One binding: a resource pattern and an access control entry (Kafka's ``StandardAcl``)."""
    resource_type: int
    name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission: int

    def __str__(self) -> str:
        return (f"(resource=({RESOURCE_TYPES.get(self.resource_type)}, {self.name}, "
                f"{PATTERN_TYPES.get(self.pattern_type)}), entry=({self.principal}, {self.host}, "
                f"{OPERATIONS.get(self.operation)}, {PERMISSIONS.get(self.permission)}))")


class AclFilter(NamedTuple):
    """A DescribeAcls/DeleteAcls filter: ANY codes and None strings match anything."""
    resource_type: int
    name: str | None
    pattern_type: int
    principal: str | None
    host: str | None
    operation: int
    permission: int

    @classmethod
    def of(cls, f) -> "AclFilter":
        """From a request's filter fields (DescribeAclsRequest or a DeleteAclsFilter)."""
        return cls(known(RESOURCE_TYPES, f.resource_type_filter), f.resource_name_filter,
                   known(PATTERN_TYPES, f.pattern_type_filter), f.principal_filter, f.host_filter,
                   known(OPERATIONS, f.operation), known(PERMISSIONS, f.permission_type))

    def unknown(self) -> str | None:
        """Kafka's ``validateFilter``: the message when a part is UNKNOWN."""
        if UNKNOWN in (self.resource_type, self.pattern_type):
            return "Unknown patternFilter."
        if UNKNOWN in (self.operation, self.permission):
            return "Unknown entryFilter."
        return None

    def matches(self, acl: Acl) -> bool:
        return self._pattern_matches(acl) and self._entry_matches(acl)

    def _pattern_matches(self, acl: Acl) -> bool:
        # ResourcePatternFilter.matches: MATCH finds the literal, wildcard and prefixed
        # patterns that would apply to the named resource.
        if self.resource_type not in (ANY, acl.resource_type):
            return False
        if self.pattern_type not in (ANY, MATCH, acl.pattern_type):
            return False
        if self.name is None:
            return True
        if self.pattern_type in (ANY, acl.pattern_type):
            return self.name == acl.name
        if acl.pattern_type == LITERAL:
            return self.name == acl.name or acl.name == WILDCARD
        return acl.pattern_type == PREFIXED and self.name.startswith(acl.name)

    def _entry_matches(self, acl: Acl) -> bool:
        return ((self.principal is None or self.principal == acl.principal)
                and (self.host is None or self.host == acl.host)
                and self.operation in (ANY, acl.operation)
                and self.permission in (ANY, acl.permission))
