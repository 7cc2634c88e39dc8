"""SASL listeners (issue 28) proven with real clients: one node whose controller
listener is SASL_SSL and client listener SASL_PLAINTEXT, with PLAIN (JAAS
``user_<name>`` options) and SCRAM-SHA-256/512 (users formatted into the metadata log
with Kafka's own ``kafka-storage format --add-scram``); Kafka 4.3.1's
kafka-metadata-quorum (SASL_SSL) and kafka-python (SASL_PLAINTEXT) authenticate;
wrong passwords, unknown users, unsupported mechanisms, requests before
authentication and a handshake left unfinished get Kafka's answers and lose only
their own connection."""
from __future__ import annotations

import uuid

import pytest

from tests.support.certs import PASSWORD, Pki
from tests.support.kraft_nodes import OurNode, wait_for
from tests.support.secure_client import (
    SecureSession, client_context, describe_quorum_body, quorum_partition, sasl_command_config)
from tools.blocking_client import ConnectionClosed
from tools.kafka_dist.controller import run_tool
from wire.messages import MetadataRequest, SaslAuthenticateRequest, SaslHandshakeRequest
from wire.messages.metadata_request import MetadataRequestTopic

TOPIC = "__cluster_metadata"
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_carol="carol-secret";')
IDLE_MS = 3000


def _session(node, pki, mechanism="SCRAM-SHA-512", user="alice", password="alice-secret", port=None):
    session = SecureSession(port or node.port, client_context(pki), timeout=5.0)
    session.sasl(mechanism, user, password)
    return session


def _leader(node, pki) -> int:
    return quorum_partition(node.port, client_context(pki), ("SCRAM-SHA-512", "alice", "alice-secret")).leader_id


@pytest.fixture(scope="module")
def sasl_node(tmp_path_factory):
    root = tmp_path_factory.mktemp("sasl")
    pki = Pki(root / "pki")
    common = ("ssl.keystore.type=PKCS12", f"ssl.keystore.location={pki.server.p12}",
              f"ssl.keystore.password={PASSWORD}", "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512")
    node = OurNode(root, extra=(
        "listener.security.protocol.map=CONTROLLER:SASL_SSL,CLIENT:SASL_PLAINTEXT", *common,
        "sasl.mechanism.controller.protocol=PLAIN",
        f"listener.name.controller.plain.sasl.jaas.config={PLAIN_JAAS}",
        f"listener.name.client.plain.sasl.jaas.config={PLAIN_JAAS}",
        f"connections.max.idle.ms={IDLE_MS}"))
    # Kafka's storage tool writes alice's SCRAM-SHA-512 and bob's SCRAM-SHA-256 credentials
    # (tests/interop/test_security_scram_format.py checks ours writes the same records).
    node.kafka_config.write_text(node.kafka_config.read_text().replace(
        "CONTROLLER:PLAINTEXT", "CONTROLLER:SASL_SSL") + "\n".join(common) + "\n")
    cluster_id = uuid.uuid4().hex[:22]
    run_tool("kafka-storage", "format", "--cluster-id", cluster_id, "--standalone", "--config",
             str(node.kafka_config), "--add-scram", "SCRAM-SHA-512=[name=alice,password=alice-secret]",
             "--add-scram", "SCRAM-SHA-256=[name=bob,password=bob-secret]")
    node.start()
    try:
        wait_for(lambda: _leader(node, pki) == 1, 60, "a leader over SASL_SSL")
        yield node, pki
    finally:
        node.stop()


def _command_config(tmp_path, pki, mechanism, user, password):
    return sasl_command_config(tmp_path / f"{user}.properties", pki, mechanism, user, password)


@pytest.mark.parametrize("mechanism, user, password", [
    ("SCRAM-SHA-512", "alice", "alice-secret"), ("PLAIN", "carol", "carol-secret")])
def test_kafka_metadata_quorum_authenticates(sasl_node, tmp_path, mechanism, user, password):
    node, pki = sasl_node
    proc = run_tool("kafka-metadata-quorum", "--bootstrap-controller", node.bootstrap, "--command-config",
                    str(_command_config(tmp_path, pki, mechanism, user, password)), "describe", "--status")
    assert "LeaderId:               1" in proc.stdout, proc.stdout + proc.stderr


def test_kafka_metadata_quorum_with_a_wrong_password_gets_kafkas_error(sasl_node, tmp_path):
    node, pki = sasl_node
    proc = run_tool("kafka-metadata-quorum", "--bootstrap-controller", node.bootstrap, "--command-config",
                    str(_command_config(tmp_path, pki, "SCRAM-SHA-512", "alice", "wrong")),
                    "describe", "--status", check=False)
    assert proc.returncode != 0
    assert ("Authentication failed during authentication due to invalid credentials with SASL "
            "mechanism SCRAM-SHA-512") in proc.stdout + proc.stderr
    assert _leader(node, pki) == 1


def test_kafka_python_reads_the_metadata_topic_with_scram_sha_256(sasl_node):
    from kafka import KafkaConsumer, TopicPartition
    node, pki = sasl_node
    consumer = KafkaConsumer(bootstrap_servers=f"127.0.0.1:{node.client_port}",
                             security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-256",
                             sasl_plain_username="bob", sasl_plain_password="bob-secret",
                             enable_auto_commit=False)
    try:
        tp = TopicPartition(TOPIC, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        records = wait_for(lambda: consumer.poll(timeout_ms=2000, max_records=50).get(tp), 30,
                           "records over SASL_PLAINTEXT")
        assert records
    finally:
        consumer.close()


def test_refusals_with_kafkas_errors(sasl_node):
    node, pki = sasl_node
    # Unknown PLAIN user: SASL_AUTHENTICATION_FAILED with PlainSaslServer's message, then closed.
    s = SecureSession(node.port, client_context(pki))
    assert s.request(SaslHandshakeRequest(mechanism="PLAIN"), 1).error_code == 0
    answer = s.request(SaslAuthenticateRequest(auth_bytes=b"\0mallory\0x"), 2)
    assert (answer.error_code, answer.error_message) == (58, "Authentication failed: Invalid username or password")
    assert s.closed_within(5)
    # SCRAM for a user with no credential: the generic message (a SaslException in Kafka).
    s = SecureSession(node.port, client_context(pki))
    s.request(SaslHandshakeRequest(mechanism="SCRAM-SHA-256"), 1)
    answer = s.request(SaslAuthenticateRequest(auth_bytes=b"n,,n=nobody,r=abcdefgh"), 2)
    assert answer.error_code == 58 and answer.error_message == (
        "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256")
    # A mechanism not enabled: UNSUPPORTED_SASL_MECHANISM with the enabled list, then closed.
    s = SecureSession(node.port, client_context(pki))
    answer = s.request(SaslHandshakeRequest(mechanism="GSSAPI"), 1)
    assert (answer.error_code, list(answer.mechanisms)) == (33, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
    assert s.closed_within(5)
    # Any other request before authenticating: closed unanswered.
    s = SecureSession(node.port, client_context(pki))
    s.send(describe_quorum_body(), 2)
    with pytest.raises(ConnectionClosed):
        s.read_frame()
    # After SaslHandshake v1, another request gets its own type's error answer (Kafka's
    # getErrorResponse), ILLEGAL_SASL_STATE, then the connection closes.
    s = SecureSession(node.port, client_context(pki))
    assert s.request(SaslHandshakeRequest(mechanism="PLAIN"), 1).error_code == 0
    answer = s.request(describe_quorum_body(), 2)
    assert (answer.error_code, answer.error_message, list(answer.topics)) == (
        34, "Request is not valid given the current SASL state.", [])  # DescribeQuorum's: Errors.message()
    assert s.closed_within(5)
    s = SecureSession(node.client_port, None)  # the SASL_PLAINTEXT client listener
    assert s.request(SaslHandshakeRequest(mechanism="PLAIN"), 1).error_code == 0
    answer = s.request(MetadataRequest(topics=[MetadataRequestTopic(name=TOPIC)]), 12)
    assert [(t.name, t.error_code) for t in answer.topics] == [(TOPIC, 34)]
    assert s.closed_within(5)
    # Already authenticated: SaslAuthenticate answered ILLEGAL_SASL_STATE, as Kafka's ControllerApis.
    s = _session(node, pki, "PLAIN", "carol", "carol-secret")
    answer = s.request(SaslAuthenticateRequest(auth_bytes=b"x"), 1)
    assert (answer.error_code, answer.error_message) == (
        34, "SaslAuthenticate request received after successful authentication")
    s.close()
    assert _leader(node, pki) == 1


def test_v0_handshake_then_raw_tokens(sasl_node):
    node, pki = sasl_node
    s = SecureSession(node.client_port, None)  # the SASL_PLAINTEXT listener
    assert s.request(SaslHandshakeRequest(mechanism="PLAIN"), 0).error_code == 0
    assert s.raw_token(b"\0carol\0carol-secret") == b""  # PLAIN's empty reply, size-prefixed
    assert s.request(describe_quorum_body(), 2).topics[0].partitions[0].leader_id == 1
    s.close()


def test_a_handshake_that_never_finishes_is_closed(sasl_node):
    node, pki = sasl_node
    s = SecureSession(node.port, client_context(pki))
    assert s.request(SaslHandshakeRequest(mechanism="SCRAM-SHA-512"), 1).error_code == 0
    assert s.closed_within(IDLE_MS / 1000 * 3), "an unfinished SASL exchange was not closed"
    assert _leader(node, pki) == 1

