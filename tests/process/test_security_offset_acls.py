"""OffsetCommit and OffsetFetch check the topic as well as the group (issue 28), as a
Kafka broker's KafkaApis does, proven with real clients against one node whose
listeners are SASL_PLAINTEXT (PLAIN users admin, alice, bob, carol) with the
StandardAuthorizer on. Every user may READ the group ``auditors``; on
``__cluster_metadata`` alice has READ, bob DESCRIBE and carol nothing:

- kafka-python: alice commits and reads back her offset; bob's commit is refused
  (TopicAuthorizationFailedError: committing needs READ) but he reads the offset
  (fetching needs DESCRIBE); carol's commit and fetch are answered
  TOPIC_AUTHORIZATION_FAILED and a fetch of all the group's offsets leaves the topic out.
- Kafka 4.3.1's ``kafka-consumer-groups --describe --offsets``: alice sees the
  committed offset and the lag, carol no row for the topic.
"""
from __future__ import annotations

import uuid

import pytest

from tests.support.kraft_nodes import OurNode, wait_for
from tests.support.secure_client import SecureSession, describe_quorum_body
from tools.kafka_dist.controller import run_tool
from wire.messages import CreateAclsRequest, OffsetCommitRequest, OffsetFetchRequest
from wire.messages import offset_commit_request as oc
from wire.messages import offset_fetch_request as of
from wire.messages.create_acls_request import AclCreation

TOPIC, GROUP = "__cluster_metadata", "auditors"
USERS = ("admin", "alice", "bob", "carol")
JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" "
        "password=\"admin-secret\" " + " ".join(f'user_{u}="{u}-secret"' for u in USERS) + ";")
READ, DESCRIBE, GROUP_TYPE, TOPIC_TYPE = 3, 8, 3, 2
DENIED = 29  # TOPIC_AUTHORIZATION_FAILED


def _session(port, user):
    session = SecureSession(port, None, timeout=5.0)
    session.sasl("PLAIN", user, f"{user}-secret")
    return session


def _ask(port, user, body, version):
    session = _session(port, user)
    try:
        return session.request(body, version)
    finally:
        session.close()


def _allow(user, resource_type, name, operation):
    return AclCreation(resource_type=resource_type, resource_name=name, resource_pattern_type=3,
                       principal=f"User:{user}", host="*", operation=operation, permission_type=3)


def _fetch(node, user, topics):
    body = OffsetFetchRequest(groups=[of.OffsetFetchRequestGroup(group_id=GROUP, topics=None if topics is None else [
        of.OffsetFetchRequestTopics(name=t, partition_indexes=[0]) for t in topics])])
    group = _ask(node.client_port, user, body, 9).groups[0]
    return group.error_code, [(t.name, [(p.partition_index, p.committed_offset, p.error_code) for p in t.partitions])
                              for t in group.topics]


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    n = OurNode(tmp_path_factory.mktemp("offset-acls"), extra=(
        "listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT,CLIENT:SASL_PLAINTEXT",
        "sasl.enabled.mechanisms=PLAIN", "sasl.mechanism.controller.protocol=PLAIN",
        f"listener.name.controller.plain.sasl.jaas.config={JAAS}",
        f"listener.name.client.plain.sasl.jaas.config={JAAS}",
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users=User:admin"))
    n.format_with_ours(uuid.uuid4().hex[:22])
    n.start()
    try:
        wait_for(lambda: _ask(n.port, "admin", describe_quorum_body(), 2).topics[0].partitions[0].leader_id == 1,
                 60, "a leader")
        created = _ask(n.port, "admin", CreateAclsRequest(creations=[
            *(_allow(u, GROUP_TYPE, GROUP, READ) for u in ("alice", "bob", "carol")),
            _allow("alice", TOPIC_TYPE, TOPIC, READ), _allow("bob", TOPIC_TYPE, TOPIC, DESCRIBE)]), 3)
        assert [r.error_code for r in created.results] == [0] * 5
        wait_for(lambda: _fetch(n, "bob", [TOPIC])[1][0][1][0][2] == 0, 20, "the ACLs replayed")
        yield n
    finally:
        n.stop()


def _consumer(node, user):
    from kafka import KafkaConsumer
    return KafkaConsumer(bootstrap_servers=f"127.0.0.1:{node.client_port}", group_id=GROUP,
                         security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN", sasl_plain_username=user,
                         sasl_plain_password=f"{user}-secret", enable_auto_commit=False)


def test_commit_needs_read_and_fetch_describe_on_the_topic(node):
    from kafka import TopicPartition
    from kafka.errors import TopicAuthorizationFailedError
    from kafka.structs import OffsetAndMetadata
    tp = TopicPartition(TOPIC, 0)
    alice, bob = _consumer(node, "alice"), _consumer(node, "bob")
    try:
        alice.commit({tp: OffsetAndMetadata(3, "alice", -1)})
        assert alice.committed(tp) == 3
        with pytest.raises(TopicAuthorizationFailedError):
            bob.commit({tp: OffsetAndMetadata(9, "bob", -1)})
        assert bob.committed(tp) == 3  # DESCRIBE is enough to read it, and his commit was not applied
    finally:
        alice.close()
        bob.close()
    # carol (READ on the group only), on the wire: her commit never reaches the group
    commit = OffsetCommitRequest(group_id=GROUP, generation_id_or_member_epoch=-1, member_id="", topics=[
        oc.OffsetCommitRequestTopic(name=TOPIC, partitions=[oc.OffsetCommitRequestPartition(
            partition_index=0, committed_offset=11, committed_metadata="")])])
    answer = _ask(node.client_port, "carol", commit, 9)
    assert [(t.name, [p.error_code for p in t.partitions]) for t in answer.topics] == [(TOPIC, [DENIED])]
    assert _fetch(node, "carol", [TOPIC, "orders"]) == (0, [(TOPIC, [(0, -1, DENIED)]), ("orders", [(0, -1, DENIED)])])
    assert _fetch(node, "carol", None) == (0, [])  # every offset of the group: the topic left out
    assert _fetch(node, "alice", None) == (0, [(TOPIC, [(0, 3, 0)])])


def _describe_offsets(node, tmp_path, user) -> list[list[str]]:
    config = tmp_path / f"{user}.properties"
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                      "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                      f'username="{user}" password="{user}-secret";\n')
    proc = run_tool("kafka-run-class", "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                    "--bootstrap-server", f"127.0.0.1:{node.client_port}", "--command-config", str(config),
                    "--describe", "--group", GROUP, "--offsets", check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [line.split() for line in proc.stdout.splitlines() if line.startswith(GROUP)]


@pytest.mark.java
def test_kafka_consumer_groups_shows_only_the_topics_the_caller_may_describe(node, tmp_path):
    from kafka import TopicPartition
    from kafka.structs import OffsetAndMetadata
    alice = _consumer(node, "alice")
    try:
        alice.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(4, "", -1)})
    finally:
        alice.close()
    rows = _describe_offsets(node, tmp_path, "alice")
    assert [r[:4] for r in rows] == [[GROUP, TOPIC, "0", "4"]], rows
    assert int(rows[0][4]) > 4 and int(rows[0][5]) == int(rows[0][4]) - 4  # LOG-END-OFFSET and LAG
    assert _describe_offsets(node, tmp_path, "carol") == []
