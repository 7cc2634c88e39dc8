"""ACLs and the StandardAuthorizer (issue 28, Authorization) proven with Kafka 4.3.1's
own tools: one node whose controller listener is SASL_SSL (PLAIN users admin, alice,
bob; ``super.users=User:admin``). The real ``kafka-acls --bootstrap-controller``
adds, lists and removes ACLs; ``kafka-metadata-quorum`` is refused or served as the
ACLs say, with Kafka's error and the quorum unaffected; requests a broker would send
(BrokerRegistration) are refused to a principal without CLUSTER_ACTION; kafka-python
reads ``__cluster_metadata`` on the client listener only with READ on the topic."""
from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from tests.support.certs import Pki
from tests.support.controller_scenario import dump_segments
from tests.support.kraft_nodes import REPO, OurNode, _roundtrip, wait_for
from tests.support.secure_client import (
    SecureSession, client_context, describe_quorum_body, sasl_command_config, sasl_ssl_controller)
from tools.kafka_dist.controller import run_tool
from wire.messages import (
    BrokerRegistrationRequest, CreateAclsRequest, DescribeAclsRequest, FetchRequest, MetadataRequest, RemoveRaftVoterRequest)
from wire.messages.create_acls_request import AclCreation

pytestmark = pytest.mark.java
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";')
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
TOPIC = "__cluster_metadata"


def _session(node, pki, user):
    session = SecureSession(node.port, client_context(pki), timeout=5.0)
    session.sasl("PLAIN", user, f"{user}-secret")
    return session


def _ask(node, pki, user, body, version):
    session = _session(node, pki, user)
    try:
        return session.request(body, version)
    finally:
        session.close()


def _leader(node, pki) -> int:
    return _ask(node, pki, "admin", describe_quorum_body(), 2).topics[0].partitions[0].leader_id


@pytest.fixture(scope="module")
def acl_node(tmp_path_factory):
    root = tmp_path_factory.mktemp("acls")
    pki = Pki(root / "pki")
    node = OurNode(root, extra=(*sasl_ssl_controller(pki, "PLAIN", JAAS),
                                f"authorizer.class.name={AUTHORIZER}", "super.users=User:admin"))
    node.format_with_ours(uuid.uuid4().hex[:22])
    node.start()
    try:
        wait_for(lambda: _leader(node, pki) == 1, 60, "a leader over SASL_SSL")
        yield node, pki
    finally:
        node.stop()


def _command_config(tmp_path, pki, user):
    return str(sasl_command_config(tmp_path / f"{user}.properties", pki, "PLAIN", user, f"{user}-secret"))


def _tool(node, tmp_path, pki, user, name, *args, check=True):
    return run_tool(name, "--bootstrap-controller", node.bootstrap, "--command-config",
                    _command_config(tmp_path, pki, user), *args, check=check, timeout=90)


def _all_acls(node, pki):
    return _ask(node, pki, "admin", DescribeAclsRequest(
        resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1, principal_filter=None,
        host_filter=None, operation=1, permission_type=1), 3)


def test_kafka_acls_adds_lists_and_removes(acl_node, tmp_path):
    node, pki = acl_node
    # bob, with no ACL, may not even describe the quorum: the Admin client's DescribeCluster
    # needs ALTER on the CLUSTER on a controller (ControllerApis.handleDescribeCluster)
    denied = _tool(node, tmp_path, pki, "bob", "kafka-metadata-quorum", "describe", "--status", check=False)
    assert denied.returncode != 0
    assert "ClusterAuthorizationException" in denied.stdout + denied.stderr, denied.stdout + denied.stderr
    _tool(node, tmp_path, pki, "admin", "kafka-acls", "--add", "--allow-principal", "User:bob",
          "--operation", "Alter", "--cluster")
    _tool(node, tmp_path, pki, "admin", "kafka-acls", "--add", "--allow-principal", "User:alice",
          "--operation", "Read", "--topic", "orders-", "--resource-pattern-type", "prefixed")
    listed = _tool(node, tmp_path, pki, "admin", "kafka-acls", "--list").stdout
    assert ("Current ACLs for resource `ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, "
            "patternType=LITERAL)`:\n\t(principal=User:bob, host=*, operation=ALTER, "
            "permissionType=ALLOW)") in listed, listed
    assert ("ResourcePattern(resourceType=TOPIC, name=orders-, patternType=PREFIXED)`:\n\t"
            "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)") in listed, listed
    # Kafka's own decoder reads our AccessControlEntryRecords
    dump = dump_segments(sorted((node.data / "__cluster_metadata-0").glob("*.log")))
    assert ('"resourceType":4,"resourceName":"kafka-cluster","patternType":3,"principal":"User:bob",'
            '"host":"*","operation":7,"permissionType":3}') in dump, dump[-2000:]
    assert '"resourceType":2,"resourceName":"orders-","patternType":4,"principal":"User:alice"' in dump
    # the ACL applies at once: bob describes the quorum now (ALTER implies DESCRIBE)
    status = _tool(node, tmp_path, pki, "bob", "kafka-metadata-quorum", "describe", "--status").stdout
    assert "LeaderId:               1" in status
    _tool(node, tmp_path, pki, "admin", "kafka-acls", "--remove", "--force", "--topic", "orders-",
          "--resource-pattern-type", "prefixed")
    left = _all_acls(node, pki)
    assert left.error_code == 0
    assert [(r.resource_type, r.resource_name) for r in left.resources] == [(4, "kafka-cluster")]


def test_remove_controller_needs_alter_on_the_cluster(acl_node, tmp_path):
    node, pki = acl_node
    args = ("remove-controller", "--controller-id", "9", "--controller-directory-id", "AAAAAAAAAAAAAAAAAAAAAA")
    refused = _tool(node, tmp_path, pki, "alice", "kafka-metadata-quorum", *args, check=False)
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "ClusterAuthorizationException" in out, out
    assert "needs ALTER permission" in out, out
    # RemoveRaftVoter itself, on the wire: CLUSTER_AUTHORIZATION_FAILED with the message
    answer = _ask(node, pki, "alice", RemoveRaftVoterRequest(
        cluster_id=None, voter_id=9, voter_directory_id=uuid.UUID(int=1)), 0)
    assert answer.error_code == 31 and "needs ALTER permission" in answer.error_message
    # the super user gets past the authorizer to the quorum's own answer (no such voter)
    admin = _tool(node, tmp_path, pki, "admin", "kafka-metadata-quorum", *args, check=False)
    assert admin.returncode != 0 and "ClusterAuthorizationException" not in admin.stdout + admin.stderr
    assert "Remove voter request didn't include a valid voter" in admin.stderr, admin.stdout + admin.stderr
    assert _leader(node, pki) == 1  # unaffected


def test_refusals_on_the_wire(acl_node):
    node, pki = acl_node
    # a "broker" without CLUSTER_ACTION cannot register
    answer = _ask(node, pki, "bob", BrokerRegistrationRequest(broker_id=5, cluster_id="x",
                                                               incarnation_id=uuid.uuid4()), 4)
    assert answer.error_code == 31  # CLUSTER_AUTHORIZATION_FAILED
    # nor list the ACLs without DESCRIBE on the cluster (alice only reads topics)
    session = _session(node, pki, "alice")
    try:
        listed = session.request(DescribeAclsRequest(
            resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1, principal_filter=None,
            host_filter=None, operation=1, permission_type=1), 3)
        assert listed.error_code == 31 and "needs DESCRIBE permission" in listed.error_message
    finally:
        session.close()


def _metadata_error(node) -> int:
    from wire.messages.metadata_request import MetadataRequestTopic
    answer = _roundtrip(node.client_port, MetadataRequest(topics=[MetadataRequestTopic(name=TOPIC)]), 12)
    return answer.topics[0].error_code


def _fetch(node):
    from wire.messages.fetch_request import FetchPartition, FetchTopic
    return _roundtrip(node.client_port, FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, topics=[
        FetchTopic(topic=TOPIC, partitions=[FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])]),
        12)


def test_reading_the_metadata_topic_needs_read(acl_node):
    from kafka import KafkaConsumer, TopicPartition
    node, pki = acl_node
    # the client listener is PLAINTEXT: User:ANONYMOUS, refused with Kafka's broker errors
    assert _metadata_error(node) == 29  # TOPIC_AUTHORIZATION_FAILED
    listed = _roundtrip(node.client_port, MetadataRequest(topics=None), 12)
    assert TOPIC not in [t.name for t in listed.topics]  # all topics: left out
    assert [p.error_code for p in _fetch(node).responses[0].partitions] == [29]
    answer = _ask(node, pki, "admin", CreateAclsRequest(creations=[AclCreation(
        resource_type=2, resource_name=TOPIC, resource_pattern_type=3, principal="User:ANONYMOUS",
        host="*", operation=3, permission_type=3)]), 3)  # ALLOW READ, which implies DESCRIBE
    assert [c.error_code for c in answer.results] == [0]
    wait_for(lambda: _metadata_error(node) == 0, 20, "the ACL replayed")
    assert [p.error_code for p in _fetch(node).responses[0].partitions] == [0]
    consumer = KafkaConsumer(bootstrap_servers=f"127.0.0.1:{node.client_port}", enable_auto_commit=False)
    try:
        tp = TopicPartition(TOPIC, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        assert wait_for(lambda: consumer.poll(timeout_ms=1000, max_records=50).get(tp), 30, "records")
    finally:
        consumer.close()


def test_another_authorizer_class_stops_start_up_with_one_line(tmp_path):
    node = OurNode(tmp_path, extra=("authorizer.class.name=kafka.security.authorizer.AclAuthorizer",))
    node.format_with_ours(uuid.uuid4().hex[:22])
    proc = subprocess.run([sys.executable, "-m", "kraft_server", str(node.config)], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("ERROR")]
    assert errors == ["ERROR Invalid value kafka.security.authorizer.AclAuthorizer for configuration "
                      f"authorizer.class.name: only {AUTHORIZER} is supported (authorizer.class.name)"], proc.stderr


def test_a_consumer_group_needs_read_on_the_group(acl_node):
    from kafka import KafkaConsumer
    from kafka.errors import GroupAuthorizationFailedError
    node, pki = acl_node
    consumer = KafkaConsumer(TOPIC, bootstrap_servers=f"127.0.0.1:{node.client_port}", group_id="readers",
                             enable_auto_commit=False)
    try:
        with pytest.raises(GroupAuthorizationFailedError):
            wait_for(lambda: consumer.poll(timeout_ms=500), 30, "the group refused")
    finally:
        consumer.close()
