"""TLS listeners (issue 28) proven with real clients: one node whose controller
listener requires mutual TLS (PKCS12 keystore, PEM trust store) and whose client
listener requests it; Kafka 4.3.1's kafka-metadata-quorum and kafka-python connect
over TLS; refused peers (no certificate, an untrusted or expired one, plaintext on
a TLS port) lose only their own connection."""
from __future__ import annotations

import ssl
import uuid

import pytest

from tests.support.certs import PASSWORD, Pki
from tests.support.kraft_nodes import OurNode, wait_for
from tests.support.secure_client import (
    SecureSession, client_context, describe_quorum_body, quorum_partition)
from tools.blocking_client import ConnectionClosed
from tools.kafka_dist.controller import run_tool

TOPIC = "__cluster_metadata"
RULES = r"RULE:^CN=(.*?),OU=Clients,.*$/$1/L,DEFAULT"
IDLE_MS = 2000


def _leader(port: int, context) -> int:
    return quorum_partition(port, context).leader_id


@pytest.fixture(scope="module")
def tls_node(tmp_path_factory):
    root = tmp_path_factory.mktemp("tls")
    pki = Pki(root / "pki")
    node = OurNode(root, extra=(
        "listener.security.protocol.map=CONTROLLER:SSL,CLIENT:SSL",
        "ssl.keystore.type=PKCS12", f"ssl.keystore.location={pki.server.p12}", f"ssl.keystore.password={PASSWORD}",
        "ssl.truststore.type=PEM", f"ssl.truststore.location={pki.truststore_pem}",
        "listener.name.controller.ssl.client.auth=required",
        "listener.name.client.ssl.client.auth=requested",
        f"ssl.principal.mapping.rules={RULES}",
        f"connections.max.idle.ms={IDLE_MS}",
    ))
    node.format_with_ours(uuid.uuid4().hex[:22])
    node.start()
    context = client_context(pki, pki.client)
    try:
        wait_for(lambda: _leader(node.port, context) == 1, 60, "a leader over mutual TLS")
        yield node, pki
    finally:
        node.stop()


def test_kafka_metadata_quorum_describes_over_mutual_tls(tls_node, tmp_path):
    node, pki = tls_node
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=SSL\n" + "".join(
        f"{k}={v}\n" for k, v in pki.p12_client_props(pki.client).items()))
    out = run_tool("kafka-metadata-quorum", "--bootstrap-controller", node.bootstrap,
                   "--command-config", str(config), "describe", "--status").stdout
    assert "LeaderId:               1" in out, out
    # The controller listener's principal: the certificate subject mapped by the first rule.
    assert "as User:alice" in node.log_path.read_text(), "mapped principal not logged"


def test_kafka_python_reads_the_metadata_topic_over_mutual_tls(tls_node):
    from kafka import KafkaConsumer, TopicPartition
    node, pki = tls_node
    consumer = KafkaConsumer(bootstrap_servers=f"127.0.0.1:{node.client_port}", security_protocol="SSL",
                             ssl_cafile=str(pki.truststore_pem), ssl_check_hostname=True,
                             ssl_certfile=str(pki.client.key_pem), ssl_keyfile=str(pki.client.key_pem),
                             enable_auto_commit=False, consumer_timeout_ms=10_000)
    try:
        tp = TopicPartition(TOPIC, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        records = consumer.poll(timeout_ms=10_000, max_records=5)
        assert records.get(tp), "no records from __cluster_metadata over TLS"
        assert "on CLIENT as User:alice" in node.log_path.read_text()  # its certificate, mapped
    finally:
        consumer.close()


@pytest.mark.parametrize("who", ["none", "untrusted", "expired"])
def test_refused_certificates_lose_only_their_connection(tls_node, who):
    node, pki = tls_node
    identity = {"none": None, "untrusted": pki.untrusted, "expired": pki.expired}[who]
    context = client_context(pki, identity)
    with pytest.raises((ssl.SSLError, ConnectionClosed, ConnectionResetError, BrokenPipeError)):
        session = SecureSession(node.port, context, timeout=5.0)
        try:  # TLS 1.3: the client learns of the refusal at its first read
            session.request(describe_quorum_body(), 2)
        finally:
            session.close()
    assert _leader(node.port, client_context(pki, pki.client)) == 1


def test_plaintext_client_on_a_tls_port_is_closed(tls_node):
    node, pki = tls_node
    session = SecureSession(node.client_port, None, timeout=5.0)
    try:
        session.send(describe_quorum_body(), 2)
        assert session.closed_within(10), "plaintext request on a TLS listener not closed"
    finally:
        session.close()
    assert _leader(node.client_port, client_context(pki)) == 1  # requested: no certificate is fine


def test_a_tls_handshake_that_never_finishes_is_closed(tls_node):
    """A client that connects and sends half a ClientHello is dropped after
    connections.max.idle.ms, and the node keeps serving."""
    import socket
    import time
    node, pki = tls_node
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", node.port), timeout=5) as raw:
        raw.sendall(bytes.fromhex("160301"))  # the start of a TLS record, never finished
        raw.settimeout(IDLE_MS / 1000 * 4)
        try:
            closed = raw.recv(1) == b""
        except (ConnectionResetError, socket.timeout) as exc:
            closed = not isinstance(exc, socket.timeout)
        assert closed, "an unfinished TLS handshake was not closed"
    assert time.monotonic() - started >= IDLE_MS / 1000 * 0.9, "closed before the timeout"
    assert _leader(node.port, client_context(pki, pki.client)) == 1


def test_a_jks_keystore_stops_start_up_with_the_keytool_conversion(tmp_path):
    from tests.process.test_startup_errors import formatted, start_fails
    from tests.support.kraft_nodes import set_property
    node = formatted(tmp_path)
    set_property(node.config, "listener.security.protocol.map", "CONTROLLER:SSL,CLIENT:PLAINTEXT")
    set_property(node.config, "ssl.keystore.location", "/etc/kafka/server.keystore.jks")  # type: JKS, Kafka's default
    assert start_fails(node.config) == (
        "ERROR ssl.keystore.type JKS is not supported (listener CONTROLLER): convert it with keytool "
        "-importkeystore -srckeystore /etc/kafka/server.keystore.jks -destkeystore <store.p12> "
        "-deststoretype PKCS12 and set ssl.keystore.type=PKCS12 (ssl.keystore.type)")
