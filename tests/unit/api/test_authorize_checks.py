"""The controller listener's checks (kraft_server/api/authorize.py): every API the
listener serves has its row, refusals are Kafka's errors, requests naming several
topics or config resources go on with the allowed ones, and an Envelope's forwarded
principal is read as DefaultKafkaPrincipalBuilder writes it."""
from __future__ import annotations

import ipaddress
from types import SimpleNamespace

from kraft_server.api import registry
from kraft_server.api.authorize import CLUSTER_CHECKS, CONFIG_CHECKS, TOPIC_CHECKS, Guard
from kraft_server.api.envelope_inner import forwarded_identity
from kraft_server.controller.acls.control import create_acls
from kraft_server.controller.image.metadata_image import MetadataImage
from kraft_server.security import acls as A
from kraft_server.security.authorizer import Authorizer
from wire.messages import (
    CreateTopicsRequest, DefaultPrincipalData, DescribeConfigsRequest, EnvelopeRequest, VoteRequest)
from wire.messages.create_acls_request import AclCreation
from wire.messages.create_topics_request import CreatableTopic
from wire.messages.create_topics_response import CreatableTopicConfigs, CreatableTopicResult
from wire.messages.describe_configs_request import DescribeConfigsResource
from wire.records import encode_metadata_record


def guard_with(*creations, super_users=("User:admin",)):
    image = MetadataImage()
    for record, version in create_acls(image.acls, list(creations))[1]:
        image.replay(encode_metadata_record(record, version))
    return Guard(Authorizer(super_users), lambda: image)


def allow(op, rtype=A.TOPIC, name="a", principal="User:alice"):
    return AclCreation(resource_type=rtype, resource_name=name, resource_pattern_type=A.LITERAL,
                       principal=principal, host="*", operation=op, permission_type=A.ALLOW)


def call(key, body, principal="User:alice", version=0):
    answers = []
    return SimpleNamespace(api_key=key, api_version=version, body=body, principal=principal, host="127.0.0.1",
                           listener="CONTROLLER", respond=lambda b, v=None, shared=False: answers.append(b),
                           answers=answers, done=False, forwarded=False, token_authenticated=False)


def test_every_controller_api_has_its_check():
    served = set(registry.listener_apis(True, reconfiguration=True))
    unchecked = served - set(CLUSTER_CHECKS) - set(TOPIC_CHECKS) - set(CONFIG_CHECKS)
    # the delegation-token APIs: ControllerApis asks only CREATE_TOKENS on another owner's
    # USER resource (api/delegation_tokens.py); the controller checks owners and renewers;
    # Describe checks token by token (controller/tokens/describe.py)
    tokens = {registry.CREATE_DELEGATION_TOKEN, registry.RENEW_DELEGATION_TOKEN, registry.EXPIRE_DELEGATION_TOKEN,
              registry.DESCRIBE_DELEGATION_TOKEN}
    assert unchecked == {registry.API_VERSIONS, *registry.SASL_APIS, *tokens}


def test_cluster_checks_refuse_with_kafkas_error():
    guard = guard_with()
    c = call(registry.VOTE, VoteRequest())
    assert guard.admit(c) is None and c.answers[0].error_code == 31
    admin = call(registry.VOTE, VoteRequest(), principal="User:admin")
    assert guard.admit(admin) is admin and admin.answers == []


def test_create_topics_goes_on_with_the_allowed_topics():
    guard = guard_with(allow(A.CREATE, name="a"))
    body = CreateTopicsRequest(topics=[CreatableTopic(name="a", num_partitions=1, replication_factor=1),
                                       CreatableTopic(name="b", num_partitions=1, replication_factor=1)])
    c = call(registry.CREATE_TOPICS, body, version=7)
    narrowed = guard.admit(c)
    assert [t.name for t in narrowed.body.topics] == ["a"] and [t.name for t in body.topics] == ["a", "b"]
    answer = SimpleNamespace(topics=[CreatableTopicResult(name="a", error_code=0)])
    narrowed.respond(answer)
    assert [(t.name, t.error_code) for t in c.answers[0].topics] == [("b", 29), ("a", 0)]
    # CREATE on the cluster covers every topic
    everyone = guard_with(allow(A.CREATE, rtype=A.CLUSTER, name="kafka-cluster"))
    c = call(registry.CREATE_TOPICS, body, version=4)  # v5+ answers carry configs: see below
    assert everyone.admit(c) is c


def test_create_topics_hides_the_configs_of_topics_the_principal_may_not_describe():
    guard = guard_with(allow(A.CREATE, rtype=A.CLUSTER, name="kafka-cluster"), allow(A.DESCRIBE_CONFIGS, name="a"))
    body = CreateTopicsRequest(topics=[CreatableTopic(name=n, num_partitions=2, replication_factor=1) for n in "ab"])
    c = call(registry.CREATE_TOPICS, body, version=7)
    wrapped = guard.admit(c)
    config = CreatableTopicConfigs(name="cleanup.policy", value="delete", read_only=False, config_source=5,
                                   is_sensitive=False)
    wrapped.respond(SimpleNamespace(topics=[
        CreatableTopicResult(name=n, error_code=0, num_partitions=2, replication_factor=1, configs=[config])
        for n in "ab"]))
    a, b = c.answers[0].topics
    assert (a.topic_config_error_code, a.num_partitions, a.replication_factor, len(a.configs)) == (0, 2, 1, 1)
    assert (b.topic_config_error_code, b.num_partitions, b.replication_factor, b.configs) == (29, -1, -1, [])
    # v4 answers have no configs; a principal who may describe every topic is not wrapped
    assert guard.admit(call(registry.CREATE_TOPICS, body, version=4)).body is body
    describes_all = guard_with(allow(A.CREATE, rtype=A.CLUSTER, name="kafka-cluster"),
                               allow(A.DESCRIBE_CONFIGS, name="*"))
    c = call(registry.CREATE_TOPICS, body, version=7)
    assert describes_all.admit(c) is c


def test_describe_configs_per_resource():
    guard = guard_with(allow(A.DESCRIBE_CONFIGS, name="a"))
    body = DescribeConfigsRequest(resources=[
        DescribeConfigsResource(resource_type=4, resource_name="1", configuration_keys=None),
        DescribeConfigsResource(resource_type=2, resource_name="a", configuration_keys=None),
        DescribeConfigsResource(resource_type=2, resource_name="b", configuration_keys=None)])
    c = call(registry.DESCRIBE_CONFIGS, body, version=4)
    narrowed = guard.admit(c)
    assert [res.resource_name for res in narrowed.body.resources] == ["a"]
    narrowed.respond(SimpleNamespace(results=[]))
    assert [(x.resource_name, x.error_code) for x in c.answers[0].results] == [("1", 31), ("b", 29)]


def test_forwarded_principal():
    w = bytearray(b"\x00\x00")
    DefaultPrincipalData(type="User", name="carol", token_authenticated=False).write(w, 0)
    envelope = EnvelopeRequest(request_data=b"", request_principal=bytes(w),
                               client_host_address=ipaddress.ip_address("10.1.2.3").packed)
    assert forwarded_identity(envelope) == ("User:carol", "10.1.2.3")
    guard = guard_with(allow(A.ALTER, rtype=A.CLUSTER, name="kafka-cluster", principal="User:carol"))
    c = call(registry.ADD_RAFT_VOTER, None, principal="User:carol")
    c.host = "10.1.2.3"
    assert guard.admit(c) is c


def test_group_apis_on_the_client_listener():
    from wire.messages import DescribeGroupsRequest, FindCoordinatorRequest, JoinGroupRequest, ListGroupsResponse
    from wire.messages.describe_groups_response import DescribedGroup
    from wire.messages.list_groups_response import ListedGroup
    guard = guard_with(allow(A.READ, rtype=A.GROUP, name="mine"))
    join = call(JoinGroupRequest.API_KEY, JoinGroupRequest(group_id="theirs"), version=9)
    assert guard.admit_client(join, None, False) is None
    assert (join.answers[0].error_code, join.answers[0].generation_id) == (30, -1)
    ok = call(JoinGroupRequest.API_KEY, JoinGroupRequest(group_id="mine"), version=9)
    assert guard.admit_client(ok, None, False) is ok
    # several groups: READ implies DESCRIBE; the refused group answered first
    described = call(DescribeGroupsRequest.API_KEY, DescribeGroupsRequest(groups=["mine", "theirs"]), version=5)
    narrowed = guard.admit_client(described, None, False)
    assert narrowed.body.groups == ["mine"]
    narrowed.respond(SimpleNamespace(groups=[DescribedGroup(group_id="mine")]))
    assert [(g.group_id, g.error_code) for g in described.answers[0].groups] == [("theirs", 30), ("mine", 0)]
    found = call(registry.FIND_COORDINATOR, FindCoordinatorRequest(key_type=0, coordinator_keys=["theirs"]), version=4)
    assert guard.admit_client(found, None, False) is None and found.answers[0].coordinators[0].error_code == 30
    listed = call(ListGroupsResponse.API_KEY, None, version=4)
    masked = guard.admit_client(listed, None, False)
    masked.respond(ListGroupsResponse(groups=[ListedGroup(group_id="mine"), ListedGroup(group_id="theirs")]))
    assert [g.group_id for g in listed.answers[0].groups] == ["mine"]


def test_create_partitions_has_no_cluster_wide_grant():
    from wire.messages import CreatePartitionsRequest
    from wire.messages.create_partitions_request import CreatePartitionsTopic
    guard = guard_with(allow(A.ALTER, rtype=A.CLUSTER, name="kafka-cluster"))
    body = CreatePartitionsRequest(topics=[CreatePartitionsTopic(name="a", count=2)], timeout_ms=30000)
    c = call(registry.CREATE_PARTITIONS, body, version=3)
    assert guard.admit(c) is None and c.answers[0].results[0].error_code == 29
