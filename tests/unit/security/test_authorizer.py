"""The StandardAuthorizer rules (kraft_server/security/authorizer.py) against a table of
cases read from Kafka 4.3.1's StandardAuthorizerData (authorize, findResult and the
implied-operation sets IMPLIES_DESCRIBE / IMPLIES_DESCRIBE_CONFIGS)."""
from __future__ import annotations

import pytest

from kraft_server.config import ConfigError
from kraft_server.security import acls as A
from kraft_server.security.acls import Acl, AclFilter
from kraft_server.security.authorizer import AclIndex, Authorizer, authorizer_from_config


def acl(name="foo", op=A.READ, perm=A.ALLOW, principal="User:alice", host="*",
        pattern=A.LITERAL, rtype=A.TOPIC):
    return Acl(rtype, name, pattern, principal, host, op, perm)


ALICE, HOST = "User:alice", "10.0.0.1"

# (ACLs, principal, host, operation, resource name, allowed?)  on TOPIC resources
CASES = [
    ([], ALICE, HOST, A.READ, "foo", False),  # no ACL at all: allow.everyone.if.no.acl.found=false
    ([acl()], ALICE, HOST, A.READ, "foo", True),
    ([acl()], "User:bob", HOST, A.READ, "foo", False),  # ACLs on the resource, none for bob
    ([acl()], ALICE, HOST, A.WRITE, "foo", False),
    ([acl()], ALICE, HOST, A.READ, "foobar", False),  # literal: the exact name only
    ([acl(name="*")], ALICE, HOST, A.READ, "anything", True),  # the wildcard resource
    ([acl(name="fo", pattern=A.PREFIXED)], ALICE, HOST, A.READ, "foobar", True),
    ([acl(name="fx", pattern=A.PREFIXED)], ALICE, HOST, A.READ, "foobar", False),
    ([acl(name="*", pattern=A.PREFIXED)], ALICE, HOST, A.READ, "foobar", False),  # prefixed "*" is no wildcard
    ([acl(principal="User:*")], "User:bob", HOST, A.READ, "foo", True),  # the wildcard principal
    ([acl(host=HOST)], ALICE, HOST, A.READ, "foo", True),
    ([acl(host="10.0.0.2")], ALICE, HOST, A.READ, "foo", False),
    # CIDR host patterns (Kafka 4.4.0, CidrUtils.isInRange): network and broadcast included
    ([acl(host="10.0.0.0/8")], ALICE, HOST, A.READ, "foo", True),
    ([acl(host="10.0.0.1/32")], ALICE, HOST, A.READ, "foo", True),
    ([acl(host="10.0.0.0/31")], ALICE, HOST, A.READ, "foo", True),
    ([acl(host="10.0.0.2/31")], ALICE, HOST, A.READ, "foo", False),
    ([acl(host="11.0.0.0/8")], ALICE, HOST, A.READ, "foo", False),
    ([acl(host="0.0.0.0/0")], ALICE, HOST, A.READ, "foo", True),
    ([acl(host="::/0")], ALICE, HOST, A.READ, "foo", False),  # an IPv6 network never holds an IPv4 address
    ([acl(host="2001:db8::/32")], ALICE, "2001:db8::7", A.READ, "foo", True),
    ([acl(host="2001:db8::/32")], ALICE, "2001:db9::7", A.READ, "foo", False),
    ([acl(host="10.0.0.0/8", perm=A.DENY), acl()], ALICE, HOST, A.READ, "foo", False),
    ([acl(op=A.ALL)], ALICE, HOST, A.ALTER_CONFIGS, "foo", True),
    # DENY before ALLOW, whatever the order and however the DENY matches
    ([acl(), acl(perm=A.DENY)], ALICE, HOST, A.READ, "foo", False),
    ([acl(op=A.ALL), acl(name="f", pattern=A.PREFIXED, perm=A.DENY, principal="User:*")], ALICE, HOST,
     A.READ, "foo", False),
    ([acl(op=A.ALL, perm=A.DENY), acl(op=A.ALL)], ALICE, HOST, A.DESCRIBE, "foo", False),
    # implied operations: an ALLOW of READ/WRITE/DELETE/ALTER gives DESCRIBE ...
    ([acl(op=A.READ)], ALICE, HOST, A.DESCRIBE, "foo", True),
    ([acl(op=A.WRITE)], ALICE, HOST, A.DESCRIBE, "foo", True),
    ([acl(op=A.DELETE)], ALICE, HOST, A.DESCRIBE, "foo", True),
    ([acl(op=A.ALTER)], ALICE, HOST, A.DESCRIBE, "foo", True),
    ([acl(op=A.CREATE)], ALICE, HOST, A.DESCRIBE, "foo", False),
    ([acl(op=A.ALTER_CONFIGS)], ALICE, HOST, A.DESCRIBE_CONFIGS, "foo", True),
    ([acl(op=A.DESCRIBE)], ALICE, HOST, A.READ, "foo", False),  # ... never the other way
    # ... and a DENY of READ does not deny DESCRIBE (DENY matches the operation or ALL only)
    ([acl(op=A.DESCRIBE), acl(op=A.READ, perm=A.DENY)], ALICE, HOST, A.DESCRIBE, "foo", True),
    # another resource type's ACLs do not apply
    ([acl(rtype=A.GROUP)], ALICE, HOST, A.READ, "foo", False),
]


@pytest.mark.parametrize("acls,principal,host,op,name,allowed", CASES)
def test_standard_authorizer_rules(acls, principal, host, op, name, allowed):
    authorizer = Authorizer()
    assert authorizer.authorize(AclIndex(acls), principal, host, op, A.TOPIC, name) is allowed


def test_super_users_and_allow_everyone():
    index = AclIndex([acl(perm=A.DENY, op=A.ALL, principal="User:*")])
    root = Authorizer(["User:admin"])
    assert root.authorize(index, "User:admin", HOST, A.WRITE, A.TOPIC, "foo")  # super users skip ACLs
    assert not root.authorize(index, ALICE, HOST, A.WRITE, A.TOPIC, "foo")
    everyone = Authorizer(allow_if_no_acl=True)
    assert everyone.authorize(AclIndex([]), ALICE, HOST, A.ALTER, A.CLUSTER, "kafka-cluster")
    # an ACL on the resource, even for someone else, ends the default
    assert not everyone.authorize(AclIndex([acl(principal="User:bob")]), ALICE, HOST, A.READ, A.TOPIC, "foo")


def test_config():
    assert authorizer_from_config({}) is None
    a = authorizer_from_config({"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                                "super.users": "User:admin; User:CN=broker,O=x ;",
                                "allow.everyone.if.no.acl.found": "true"})
    assert a.super_users == {"User:admin", "User:CN=broker,O=x"} and a.allow_if_no_acl
    with pytest.raises(ConfigError, match="authorizer.class.name"):
        authorizer_from_config({"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})


@pytest.mark.parametrize("flt,matches", [
    (AclFilter(A.ANY, None, A.ANY, None, None, A.ANY, A.ANY), True),
    (AclFilter(A.TOPIC, "foo", A.LITERAL, None, None, A.ANY, A.ANY), True),
    (AclFilter(A.TOPIC, "foo", A.PREFIXED, None, None, A.ANY, A.ANY), False),
    (AclFilter(A.GROUP, None, A.ANY, None, None, A.ANY, A.ANY), False),
    (AclFilter(A.ANY, None, A.ANY, "User:bob", None, A.ANY, A.ANY), False),
    (AclFilter(A.ANY, None, A.ANY, None, "*", A.READ, A.ALLOW), True),
    (AclFilter(A.ANY, None, A.ANY, None, None, A.ANY, A.DENY), False),
])
def test_filters(flt, matches):
    assert flt.matches(acl()) is matches


def test_match_filter_finds_the_patterns_that_apply():
    flt = AclFilter(A.TOPIC, "foobar", A.MATCH, None, None, A.ANY, A.ANY)
    assert flt.matches(acl(name="foobar")) and flt.matches(acl(name="*"))
    assert flt.matches(acl(name="foo", pattern=A.PREFIXED))
    assert not flt.matches(acl(name="foo")) and not flt.matches(acl(name="bar", pattern=A.PREFIXED))
