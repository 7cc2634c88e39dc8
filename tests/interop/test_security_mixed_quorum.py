"""A mixed quorum over TLS (issue 28): an Apache Kafka 4.3.1 controller leads with
its controller listener on SSL and ``ssl.client.auth=required``; our node, whose own
controller listener is SSL too, joins as an observer: it dials Kafka over TLS with
the first controller listener's keystore (mutual TLS) and checks Kafka's certificate
against 127.0.0.1 (``ssl.endpoint.identification.algorithm`` left at https), fetches
the log and registers with Kafka's active controller. Certificates are made by the
test."""
from __future__ import annotations

import pytest

from tests.support.certs import PASSWORD, Pki
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import OurNode, set_property, wait_for
from tests.support.secure_client import SecureSession, client_context
from tools.kafka_dist.controller import KafkaController, random_cluster_id, run_tool
from wire.messages import DescribeQuorumRequest
from wire.messages.describe_quorum_request import PartitionData, TopicData

pytestmark = pytest.mark.java


def _quorum(port: int, context):
    body = DescribeQuorumRequest(topics=[TopicData(topic_name="__cluster_metadata",
                                                   partitions=[PartitionData(partition_index=0)])])
    session = SecureSession(port, context, timeout=2.0)
    try:
        return session.request(body, 2).topics[0].partitions[0]
    finally:
        session.close()


def _ssl_props(pki) -> dict[str, str]:
    return {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(pki.server.p12),
            "ssl.keystore.password": PASSWORD, "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": str(pki.truststore_p12), "ssl.truststore.password": PASSWORD,
            "ssl.client.auth": "required"}


def test_our_observer_fetches_from_a_kafka_leader_over_mutual_tls(tmp_path):
    need_jdk()
    pki = Pki(tmp_path / "pki")
    cluster_id = random_cluster_id()
    ctl = KafkaController(tmp_path / "kafka", node_id=1, cluster_id=cluster_id, overrides={
        "listener.security.protocol.map": "CONTROLLER:SSL", **_ssl_props(pki)})
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=2, extra=(
        "listener.security.protocol.map=CONTROLLER:SSL,CLIENT:PLAINTEXT",
        *(f"{k}={v}" for k, v in _ssl_props(pki).items())))
    context = client_context(pki, pki.client)
    try:
        ctl.format()
        ctl.start()
        wait_for(lambda: _quorum(ctl.port, context).leader_id == 1, 90, "Kafka's controller to lead over TLS")
        # Kafka's own storage tool formats our directory as an observer of its quorum.
        for path in (node.kafka_config, node.config):
            set_property(path, "controller.quorum.bootstrap.servers", ctl.bootstrap)
        set_property(node.kafka_config, "listener.security.protocol.map", "CONTROLLER:SSL")
        run_tool("kafka-storage", "format", "--cluster-id", cluster_id, "--no-initial-controllers",
                 "--config", str(node.kafka_config))
        node.start()

        def caught_up():
            assert node.proc.poll() is None, node.log_tail()
            leader = _quorum(ctl.port, context)
            ours = [o for o in leader.observers if o.replica_id == 2]
            return ours and ours[0].log_end_offset >= leader.high_watermark > 0 and leader

        wait_for(caught_up, 90, "our observer to fetch Kafka's log over mutual TLS")
        # Our ControllerRegistration reached Kafka's active controller over the same TLS
        # settings: its DescribeCluster (controllers) lists us with our TLS endpoint.
        assert wait_for(lambda: _registered(ctl, context), 60, "our registration at Kafka's controller") \
            == ("127.0.0.1", node.port)
    finally:
        node.kill()
        ctl.close()


def _registered(ctl, context):
    from wire.messages import DescribeClusterRequest
    session = SecureSession(ctl.port, context, timeout=2.0)
    try:
        answer = session.request(DescribeClusterRequest(endpoint_type=2), 1)
        return next(((b.host, b.port) for b in answer.brokers if b.broker_id == 2), None)
    finally:
        session.close()


SCRAM_JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
              'username="admin" password="admin-secret";')


def test_our_observer_authenticates_to_a_kafka_leader_with_scram_sha_512(tmp_path):
    """SASL_SSL between controllers: Kafka's leader holds the SCRAM-SHA-512 credential
    (``kafka-storage format --add-scram``); we dial it with
    ``sasl.mechanism.controller.protocol=SCRAM-SHA-512`` and the JAAS username/password
    of our controller listener, verify its server signature, fetch and register."""
    need_jdk()
    pki = Pki(tmp_path / "pki")
    cluster_id = random_cluster_id()
    sasl = {"listener.security.protocol.map": "CONTROLLER:SASL_SSL",
            "sasl.enabled.mechanisms": "SCRAM-SHA-512", "sasl.mechanism.controller.protocol": "SCRAM-SHA-512",
            "listener.name.controller.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
            **{k: v for k, v in _ssl_props(pki).items() if k != "ssl.client.auth"}}
    # KIP-368 on Kafka's side: 3 s sessions, which our channel renews in band.
    ctl = KafkaController(tmp_path / "kafka", node_id=1, cluster_id=cluster_id,
                          overrides={**sasl, "connections.max.reauth.ms": "3000"})
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=2, extra=(
        *(f"{k}={v}" for k, v in sasl.items()),
        "listener.security.protocol.map=CONTROLLER:SASL_SSL,CLIENT:PLAINTEXT"))
    context = client_context(pki)

    def quorum(port):
        session = SecureSession(port, context, timeout=2.0)
        try:
            session.sasl("SCRAM-SHA-512", "admin", "admin-secret")
            body = DescribeQuorumRequest(topics=[TopicData(topic_name="__cluster_metadata",
                                                           partitions=[PartitionData(partition_index=0)])])
            return session.request(body, 2).topics[0].partitions[0]
        finally:
            session.close()

    try:
        ctl.format(["--add-scram", "SCRAM-SHA-512=[name=admin,password=admin-secret]"])
        ctl.start()
        wait_for(lambda: quorum(ctl.port).leader_id == 1, 90, "Kafka's controller to lead over SASL_SSL")
        for path in (node.kafka_config, node.config):
            set_property(path, "controller.quorum.bootstrap.servers", ctl.bootstrap)
        set_property(node.kafka_config, "listener.security.protocol.map", "CONTROLLER:SASL_SSL")
        run_tool("kafka-storage", "format", "--cluster-id", cluster_id, "--no-initial-controllers",
                 "--config", str(node.kafka_config))
        node.start()

        def caught_up():
            assert node.proc.poll() is None, node.log_tail()
            leader = quorum(ctl.port)
            ours = [o for o in leader.observers if o.replica_id == 2]
            return ours and ours[0].log_end_offset >= leader.high_watermark > 0

        wait_for(caught_up, 90, "our observer to fetch Kafka's log over SASL_SSL/SCRAM-SHA-512")
        # The credential replicated to us too: a client authenticates on our listener with it.
        assert wait_for(lambda: quorum(node.port).error_code == 6, 30, "SCRAM on our listener") is True
        # Our fetch channel renews its 3 s session in band, twice, and keeps up meanwhile.
        wait_for(lambda: node.log_path.read_text().count("SASL re-authentication to") >= 2, 30,
                 "two in-band re-authentications")
        wait_for(caught_up, 30, "our observer still fetching after re-authenticating")
        assert "authentication to 127.0.0.1" not in node.log_path.read_text().replace(
            "re-authentication to 127.0.0.1", "")
    finally:
        node.kill()
        ctl.close()
