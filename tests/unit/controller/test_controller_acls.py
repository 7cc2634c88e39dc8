"""ACLs in the controller: CreateAcls/DeleteAcls/DescribeAcls decided as Kafka's AclApis
and AclControlManager decide them (results and records, table-tested), and the image
replaying, removing and snapshotting AccessControlEntryRecords."""
from __future__ import annotations

import pytest

from kraft_server.controller.acls.control import create_acls, delete_acls, describe_acls
from kraft_server.controller.image.metadata_image import MetadataImage
from kraft_server.security import acls as A
from wire.messages import DeleteAclsRequest, DescribeAclsRequest
from wire.messages.create_acls_request import AclCreation
from wire.messages.delete_acls_request import DeleteAclsFilter
from wire.records import decode_metadata_record, encode_metadata_record


def creation(name="foo", rtype=A.TOPIC, pattern=A.LITERAL, principal="User:alice", host="*",
             op=A.READ, perm=A.ALLOW):
    return AclCreation(resource_type=rtype, resource_name=name, resource_pattern_type=pattern,
                       principal=principal, host=host, operation=op, permission_type=perm)


def replayed(image, records):
    for record, version in records:
        image.replay(encode_metadata_record(record, version))
    return image


@pytest.mark.parametrize("c, error", [
    (creation(), None),
    (creation(rtype=A.CLUSTER, name="foo"), "The only valid name for the CLUSTER resource is kafka-cluster"),
    (creation(name=""), "Invalid empty resource name"),
    (creation(rtype=A.ANY), "Invalid resourceType ANY"),
    (creation(pattern=A.MATCH), "Invalid patternType MATCH"),
    (creation(op=A.ANY), "Invalid operation ANY"),
    (creation(perm=A.ANY), "Invalid permissionType ANY"),
    (creation(principal="alice"), "Could not parse principal from `alice` (no colon is present "
                                  "separating the principal type from the principal name)"),
])
def test_create_validation(c, error):
    results, records = create_acls(MetadataImage().acls, [c])
    assert [(r.error_code, r.error_message) for r in results] == [(42 if error else 0, error)]
    assert len(records) == (0 if error else 1)


def test_create_twice_writes_one_record_and_replays():
    image = MetadataImage()
    results, records = create_acls(image.acls, [creation(), creation(), creation(op=A.WRITE)])
    assert [r.error_code for r in results] == [0, 0, 0] and len(records) == 2
    replayed(image, records)
    results, records = create_acls(image.acls, [creation()])  # exists already: success, no record
    assert results[0].error_code == 0 and records == []
    assert image.acls.acls() == {A.Acl(A.TOPIC, "foo", A.LITERAL, "User:alice", "*", A.READ, A.ALLOW),
                                 A.Acl(A.TOPIC, "foo", A.LITERAL, "User:alice", "*", A.WRITE, A.ALLOW)}


def test_delete_and_describe():
    image = MetadataImage()
    replayed(image, create_acls(image.acls, [creation(), creation(op=A.WRITE), creation(name="bar", rtype=A.GROUP),
                                              creation(name="kafka-cluster", rtype=A.CLUSTER, op=A.ALTER)])[1])
    every = dict(resource_type_filter=A.ANY, resource_name_filter=None, pattern_type_filter=A.ANY,
                 principal_filter=None, host_filter=None, operation=A.ANY, permission_type=A.ANY)
    described = describe_acls(image.acls, DescribeAclsRequest(**every))
    assert [(r.resource_type, r.resource_name, len(r.acls)) for r in described.resources] == [
        (A.TOPIC, "foo", 2), (A.GROUP, "bar", 1), (A.CLUSTER, "kafka-cluster", 1)]
    topics = DeleteAclsFilter(**dict(every, resource_type_filter=A.TOPIC))
    results, records = delete_acls(image.acls, DeleteAclsRequest(filters=[topics, topics]).filters)
    assert [len(r.matching_acls) for r in results] == [2, 2] and len(records) == 2  # removed once
    bad = DeleteAclsFilter(**dict(every, operation=0))
    assert delete_acls(image.acls, [bad])[0][0].error_message == "Unknown entryFilter."
    replayed(image, records)
    assert {a.resource_type for a in image.acls.acls()} == {A.GROUP, A.CLUSTER}


def test_snapshot_round_trip():
    image = MetadataImage()
    replayed(image, create_acls(image.acls, [creation(), creation(name="x", pattern=A.PREFIXED, perm=A.DENY)])[1])
    copy = MetadataImage()
    for value in image.snapshot_records():
        copy.replay(value)
    assert copy.content() == image.content() and len(copy.acls.acls()) == 2
    kinds = [decode_metadata_record(v).message.API_KEY for v in image.snapshot_records()]
    assert kinds.count(18) == 2


@pytest.mark.parametrize("host, mv, answer", [
    ("10.0.0.0/8", 32, (0, None)),
    ("10.0.0.0/8", 33, (0, None)),
    ("2001:db8::/32", 32, (0, None)),
    ("10.0.0.0/8", 31, (35, "CIDR-based ACL host patterns require metadata version 4.4-IV1 or higher.")),
    ("10.0.0.0/8", 30, (35, "CIDR-based ACL host patterns require metadata version 4.4-IV1 or higher.")),
    ("10.0.0.0/33", 32, (42, "Invalid CIDR notation '10.0.0.0/33': Value [33] not in range [0,32]")),
    ("10.0.0.256/8", 32, (42, "Invalid CIDR notation '10.0.0.256/8': Value [256] not in range [0,255]")),
    ("10.0.0/8", 32, (42, "Invalid CIDR notation '10.0.0/8': Could not parse [10.0.0/8]")),
    # the IPv6 answers of a live Kafka 4.4.0 controller (kafka-acls --allow-host)
    ("2001:db8::/129", 32, (42, "Invalid CIDR notation '2001:db8::/129': Could not parse [2001:db8::/129] - "
                                "prefix length must be between 0 and 128")),
    ("2001:zz8::/32", 32, (42, "Invalid CIDR notation '2001:zz8::/32': Could not parse [2001:zz8::]")),
    ("10.0.0.1", 30, (0, None)),  # a plain address at any level
    ("*", 30, (0, None)),
    ("", 33, (42, "Host pattern cannot be null or empty")),
])
def test_cidr_host_patterns_from_4_4_iv1(host, mv, answer):
    results, records = create_acls(MetadataImage().acls, [creation(host=host)], mv)
    assert [(r.error_code, r.error_message) for r in results] == [answer]
    assert len(records) == (1 if answer[0] == 0 else 0)
