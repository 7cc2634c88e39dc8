"""Requests Kafka's parsing itself refuses (``AbstractRequest.parseRequest`` throws):
no error answer can be built for them; Kafka closes the connection unanswered.

The ACL requests validate as they are built: an element holding the UNKNOWN code itself
(0) as resource type, pattern type, operation or permission type fails the parse
(``CreateAclsRequest``/``DescribeAclsRequest``/``DeleteAclsRequest`` validate); any other
code Kafka does not know is parsed and read as UNKNOWN.
"""
from __future__ import annotations

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31


def refused(api_key: int, version: int, body) -> str | None:
    """Why Kafka's parsing refuses ``body``, or None when it parses it."""
    if api_key == CREATE_ACLS:
        bad = any(0 in (c.resource_type, c.resource_pattern_type, c.operation, c.permission_type)
                  for c in body.creations)
    elif api_key in (DESCRIBE_ACLS, DELETE_ACLS):
        filters = body.filters if api_key == DELETE_ACLS else [body]
        bad = any(0 in (f.resource_type_filter, f.pattern_type_filter, f.operation, f.permission_type)
                  for f in filters)
    else:
        return None
    return "ACL request with UNKNOWN elements" if bad else None
