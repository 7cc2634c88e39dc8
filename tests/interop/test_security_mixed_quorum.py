"""Mixed quorums over TLS and SASL_SSL (issue 28): an Apache Kafka 4.3.1 controller
leads; our node joins as an observer and dials it with the security of its first
controller listener, checking Kafka's certificate against 127.0.0.1
(``ssl.endpoint.identification.algorithm`` left at https):

- SSL with ``ssl.client.auth=required`` on both sides: we show our keystore (mutual
  TLS), fetch the log and register with Kafka's active controller;
- SASL_SSL with SCRAM-SHA-512 (``sasl.mechanism.controller.protocol``): Kafka holds the
  credential (``kafka-storage format --add-scram``), we verify its server signature,
  the credential replicates to our listener, and our channel renews its 3 s session
  in band (KIP-368) while it keeps fetching.

Certificates are made by the test."""
from __future__ import annotations

import pytest

from tests.support.certs import PASSWORD, Pki
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import OurNode, kafka_release, set_property, wait_for
from tests.support.secure_client import SecureSession, client_context, quorum_partition
from tools.kafka_dist.controller import KafkaController, random_cluster_id, run_tool

pytestmark = pytest.mark.java
SCRAM_JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
              'username="admin" password="admin-secret";')


def _ssl_props(pki) -> dict[str, str]:
    return {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(pki.server.p12),
            "ssl.keystore.password": PASSWORD, "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": str(pki.truststore_p12), "ssl.truststore.password": PASSWORD,
            "ssl.client.auth": "required"}


def _observer_of(ctl, node, cluster_id: str, quorum, protocol: str):
    """Wait for Kafka's leader, format our node as its observer with Kafka's storage
    tool, start it and wait until it has fetched up to the high watermark;
    ``quorum(port)`` asks DescribeQuorum with the test's client security."""
    ctl.format(ctl.format_args)
    ctl.start()
    wait_for(lambda: quorum(ctl.port).leader_id == 1, 90, f"Kafka's controller to lead over {protocol}")
    for path in (node.kafka_config, node.config):
        set_property(path, "controller.quorum.bootstrap.servers", ctl.bootstrap)
    set_property(node.kafka_config, "listener.security.protocol.map", f"CONTROLLER:{protocol}")
    run_tool("kafka-storage", "format", "--cluster-id", cluster_id, "--no-initial-controllers",
             "--config", str(node.kafka_config))
    node.start()

    def caught_up():
        assert node.proc.poll() is None, node.log_tail()
        leader = quorum(ctl.port)
        ours = [o for o in leader.observers if o.replica_id == 2]
        return ours and ours[0].log_end_offset >= leader.high_watermark > 0

    wait_for(caught_up, 90, f"our observer to fetch Kafka's log over {protocol}")
    return caught_up


def _controller(tmp_path, cluster_id, overrides, format_args=()):
    ctl = KafkaController(tmp_path / "kafka", node_id=1, cluster_id=cluster_id, overrides=overrides)
    ctl.format_args = list(format_args)
    return ctl


def test_our_observer_fetches_from_a_kafka_leader_over_mutual_tls(tmp_path):
    need_jdk()
    pki = Pki(tmp_path / "pki")
    cluster_id = random_cluster_id()
    ctl = _controller(tmp_path, cluster_id, {"listener.security.protocol.map": "CONTROLLER:SSL", **_ssl_props(pki)})
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=2, extra=(
        "listener.security.protocol.map=CONTROLLER:SSL,CLIENT:PLAINTEXT",
        *(f"{k}={v}" for k, v in _ssl_props(pki).items())))
    context = client_context(pki, pki.client)
    try:
        _observer_of(ctl, node, cluster_id, lambda port: quorum_partition(port, context), "SSL")
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


def test_our_observer_authenticates_to_a_kafka_leader_with_scram_sha_512(tmp_path):
    need_jdk()
    pki = Pki(tmp_path / "pki")
    cluster_id = random_cluster_id()
    sasl = {"listener.security.protocol.map": "CONTROLLER:SASL_SSL",
            "sasl.enabled.mechanisms": "SCRAM-SHA-512", "sasl.mechanism.controller.protocol": "SCRAM-SHA-512",
            "listener.name.controller.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
            **{k: v for k, v in _ssl_props(pki).items() if k != "ssl.client.auth"}}
    # KIP-368 on Kafka's side: 3 s sessions, which our channel renews in band.
    ctl = _controller(tmp_path, cluster_id, {**sasl, "connections.max.reauth.ms": "3000"},
                      ["--add-scram", "SCRAM-SHA-512=[name=admin,password=admin-secret]"])
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=2, extra=(
        *(f"{k}={v}" for k, v in sasl.items()),
        "listener.security.protocol.map=CONTROLLER:SASL_SSL,CLIENT:PLAINTEXT"))
    context = client_context(pki)
    admin = ("SCRAM-SHA-512", "admin", "admin-secret")
    try:
        caught_up = _observer_of(ctl, node, cluster_id, lambda port: quorum_partition(port, context, admin),
                                 "SASL_SSL")
        # The credential replicated to us too: a client authenticates on our listener with it
        # (an observer answers DescribeQuorum with NOT_LEADER, 6).
        assert wait_for(lambda: quorum_partition(node.port, context, admin).error_code == 6, 30,
                        "SCRAM on our listener") is True
        # Our fetch channel renews its 3 s session in band, twice, and keeps up meanwhile.
        wait_for(lambda: node.log_path.read_text().count("SASL re-authentication to") >= 2, 30,
                 "two in-band re-authentications")
        wait_for(caught_up, 30, "our observer still fetching after re-authenticating")
        assert "authentication to 127.0.0.1" not in node.log_path.read_text().replace(
            "re-authentication to 127.0.0.1", "")
    finally:
        node.kill()
        ctl.close()


@pytest.mark.slow
def test_a_kafka_observer_fetches_from_our_leader_over_sasl_ssl(tmp_path):
    """The other direction: Kafka's Raft client dials our SASL_SSL listener with
    SCRAM-SHA-512 (the credential formatted by ``kraft-storage format --add-scram``),
    checks our certificate's name, fetches our log and registers with us."""
    import subprocess
    import sys
    from tests.support.kraft_nodes import REPO
    need_jdk()
    pki = Pki(tmp_path / "pki")
    cluster_id = random_cluster_id()
    sasl = {"sasl.enabled.mechanisms": "SCRAM-SHA-512", "sasl.mechanism.controller.protocol": "SCRAM-SHA-512",
            "listener.name.controller.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
            **{k: v for k, v in _ssl_props(pki).items() if k != "ssl.client.auth"}}
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=1, extra=(
        *(f"{k}={v}" for k, v in sasl.items()),
        "listener.security.protocol.map=CONTROLLER:SASL_SSL,CLIENT:PLAINTEXT"))
    subprocess.run([sys.executable, "-m", "tools.storage", "format", "--cluster-id", cluster_id, "--standalone",
                    "--release-version", kafka_release(), "--config", str(node.config), "--add-scram", "SCRAM-SHA-512=[name=admin,password=admin-secret]"],
                   check=True, cwd=REPO, timeout=60)
    ctl = KafkaController(tmp_path / "kafka", node_id=2, cluster_id=cluster_id, format_mode="no-initial-controllers",
                          bootstrap_servers=node.bootstrap,
                          overrides={**sasl, "listener.security.protocol.map": "CONTROLLER:SASL_SSL"})
    context = client_context(pki)
    admin = ("SCRAM-SHA-512", "admin", "admin-secret")
    try:
        node.start()
        wait_for(lambda: quorum_partition(node.port, context, admin).leader_id == 1, 60, "our leader over SASL_SSL")
        ctl.format()
        ctl.start()

        def kafka_caught_up():
            assert ctl.running, ctl.log_tail()
            leader = quorum_partition(node.port, context, admin)
            theirs = [o for o in leader.observers if o.replica_id == 2]
            return theirs and theirs[0].log_end_offset >= leader.high_watermark > 0

        wait_for(kafka_caught_up, 120, "Kafka's observer fetching from us over SASL_SSL/SCRAM-SHA-512")
        assert wait_for(lambda: "persisted to the metadata log" in ctl.log_text(), 60,
                        "Kafka's ControllerRegistration committed by us")
    finally:
        ctl.close()
        node.kill()
