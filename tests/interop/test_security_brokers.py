"""An Apache Kafka 4.3.1 broker on our quorum over SASL_SSL (issue 28): our controller
listener is SASL_SSL with SCRAM-SHA-512 (the broker's credential formatted with
``kraft-storage format --add-scram``); the broker authenticates as a controller
client (``sasl.mechanism.controller.protocol``), registers and serves topics; Kafka's
``kafka-configs --alter --entity-type users`` through the broker forwards
AlterUserScramCredentials to us (Envelope), and the new user then authenticates on
our listener; deleting it again is refused once it is gone, with Kafka's message."""
from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from tests.support.certs import Pki
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import start_brokers
from tests.support.kraft_nodes import OurNode, REPO, kafka_release, wait_for
from tests.support.secure_client import SecureSession, client_context, sasl_ssl_controller
from tools.kafka_dist.controller import run_tool

pytestmark = [pytest.mark.java, pytest.mark.slow]
JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
        'username="broker" password="broker-secret";')


def _authenticates(node, pki, user, password) -> bool:
    try:
        session = SecureSession(node.port, client_context(pki), timeout=5.0)
    except OSError:
        return False
    try:
        session.sasl("SCRAM-SHA-256" if user == "dave" else "SCRAM-SHA-512", user, password)
        return True
    except Exception:
        return False
    finally:
        session.close()


def test_a_kafka_broker_on_our_sasl_ssl_quorum(tmp_path):
    need_jdk()
    pki = Pki(tmp_path / "pki")
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", extra=sasl_ssl_controller(pki, "SCRAM-SHA-512", JAAS,
                                                              "SCRAM-SHA-256,SCRAM-SHA-512"))
    cluster_id = uuid.uuid4().hex[:22]
    subprocess.run([sys.executable, "-m", "tools.storage", "format", "--cluster-id", cluster_id, "--standalone",
                    "--release-version", kafka_release(), "--config", str(node.config), "--add-scram", "SCRAM-SHA-512=[name=broker,password=broker-secret]"],
                   check=True, cwd=REPO, timeout=60)
    node.start()
    brokers = []
    try:
        wait_for(lambda: _authenticates(node, pki, "broker", "broker-secret"), 60, "our SASL_SSL listener")
        brokers = start_brokers(tmp_path, 1, cluster_id, node.bootstrap, overrides={
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_SSL",
            "sasl.mechanism.controller.protocol": "SCRAM-SHA-512",
            "listener.name.controller.scram-sha-512.sasl.jaas.config": JAAS, "sasl.jaas.config": JAAS,
            "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.truststore_pem)})
        bootstrap = brokers[0].bootstrap

        def topic_created():
            proc = run_tool("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", "t1",
                            "--partitions", "2", "--replication-factor", "1", check=False, timeout=60)
            return proc.returncode == 0 or "already exists" in proc.stderr

        wait_for(topic_created, 120, "the broker registered over SASL_SSL and creating a topic")

        def configs(*args):
            return run_tool("kafka-configs", "--bootstrap-server", bootstrap, "--entity-type", "users",
                            "--entity-name", "dave", "--alter", *args, check=False, timeout=60)

        added = configs("--add-config", "SCRAM-SHA-256=[iterations=8192,password=dave-secret]")
        assert added.returncode == 0, added.stdout + added.stderr
        wait_for(lambda: _authenticates(node, pki, "dave", "dave-secret"), 30, "dave's new credential")
        assert not _authenticates(node, pki, "dave", "wrong")
        assert configs("--delete-config", "SCRAM-SHA-256").returncode == 0
        wait_for(lambda: not _authenticates(node, pki, "dave", "dave-secret"), 30, "dave's credential gone")
        again = configs("--delete-config", "SCRAM-SHA-256")
        assert "Attempt to delete a user credential that does not exist" in again.stdout + again.stderr
    finally:
        for b in brokers:
            b.close()
        node.stop()
