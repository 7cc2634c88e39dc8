"""ACLs with Apache Kafka 4.3.1 peers (issue 28, Authorization), slow.

``kafka-acls`` run step by step against a Kafka controller and against ours prints
the same listings.

Through a Kafka broker on our quorum:
both run Kafka's StandardAuthorizer. The broker forwards ``kafka-acls --add`` to us in
an Envelope, and we check the client's forwarded principal (User:ANONYMOUS on the
broker's PLAINTEXT listener, a super user on the broker but not on our controller):
refused until an ACL we were given directly lets it ALTER the cluster; then the
broker's own authorizer, fed by the AccessControlEntryRecords it replays from our
log, lists what we wrote."""
from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from tests.support.certs import Pki
from tests.support.jdk import need_jdk
from tests.support.kafka_then_ours import kafka_then_ours
from tests.support.kafka_brokers import start_brokers
from tests.support.kraft_nodes import OurNode, REPO, kafka_release, wait_for
from tests.support.secure_client import sasl_command_config, sasl_ssl_controller
from tools.kafka_dist.controller import run_tool

pytestmark = [pytest.mark.java, pytest.mark.slow]
JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
        'username="broker" password="broker-secret";')
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def test_kafka_acls_through_a_broker_is_checked_as_the_client(tmp_path):
    need_jdk()
    pki = Pki(tmp_path / "pki")
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", extra=(*sasl_ssl_controller(pki, "SCRAM-SHA-512", JAAS),
                                             f"authorizer.class.name={AUTHORIZER}", "super.users=User:broker"))
    cluster_id = uuid.uuid4().hex[:22]
    subprocess.run([sys.executable, "-m", "tools.storage", "format", "--cluster-id", cluster_id, "--standalone",
                    "--release-version", kafka_release(), "--config", str(node.config), "--add-scram", "SCRAM-SHA-512=[name=broker,password=broker-secret]"],
                   check=True, cwd=REPO, timeout=60)
    admin = sasl_command_config(tmp_path / "admin.properties", pki, "SCRAM-SHA-512", "broker", "broker-secret")
    node.start()
    brokers = []
    try:
        brokers = start_brokers(tmp_path, 1, cluster_id, node.bootstrap, overrides={
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_SSL",
            "sasl.mechanism.controller.protocol": "SCRAM-SHA-512",
            "listener.name.controller.scram-sha-512.sasl.jaas.config": JAAS, "sasl.jaas.config": JAAS,
            "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.truststore_pem),
            "authorizer.class.name": AUTHORIZER, "super.users": "User:ANONYMOUS;User:broker"})
        bootstrap = brokers[0].bootstrap

        def via_broker(*args):
            return run_tool("kafka-acls", "--bootstrap-server", bootstrap, *args, check=False, timeout=60)

        add = ("--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "t1")
        refused = wait_for(lambda: (lambda p: p if "Authorization" in p.stdout + p.stderr else None)(
            via_broker(*add)), 120, "the broker up and the forwarded CreateAcls refused")
        assert "ClusterAuthorizationException" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
        run_tool("kafka-acls", "--bootstrap-controller", node.bootstrap, "--command-config", str(admin),
                 "--add", "--allow-principal", "User:ANONYMOUS", "--operation", "Alter", "--cluster", timeout=60)
        wait_for(lambda: via_broker(*add).returncode == 0, 60, "the forwarded CreateAcls allowed")
        listed = wait_for(lambda: (lambda out: out if "name=t1" in out else None)(via_broker("--list").stdout),
                          60, "the broker's authorizer listing our ACLs")
        assert "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)" in listed, listed
        assert "(principal=User:ANONYMOUS, host=*, operation=ALTER, permissionType=ALLOW)" in listed, listed
    finally:
        for b in brokers:
            b.close()
        node.stop()


SESSION = [  # kafka-acls arguments, run against each controller in turn
    ("--add", "--allow-principal", "User:bob", "--operation", "Alter", "--cluster"),
    ("--add", "--allow-principal", "User:alice", "--allow-host", "10.0.0.1", "--operation", "Read",
     "--operation", "Describe", "--topic", "orders-", "--resource-pattern-type", "prefixed"),
    ("--add", "--deny-principal", "User:*", "--operation", "Delete", "--group", "*"),
    ("--add", "--allow-principal", "User:bob", "--operation", "Alter", "--cluster"),  # exists: no change
    ("--remove", "--force", "--allow-principal", "User:alice", "--operation", "Describe", "--topic", "orders-",
     "--resource-pattern-type", "prefixed"),
]


def _session(bootstrap: str) -> list[list[str]]:
    """What ``kafka-acls --list`` printed after each step, its lines sorted (Kafka lists
    resources in a hash map's order)."""
    listings = []
    for args in SESSION:
        run_tool("kafka-acls", "--bootstrap-controller", bootstrap, *args, timeout=60)
        out = run_tool("kafka-acls", "--bootstrap-controller", bootstrap, "--list", timeout=60).stdout
        listings.append(sorted(line.strip() for line in out.splitlines() if line.strip()))
    return listings


def test_kafka_acls_prints_the_same_against_ours_and_kafkas_controller(tmp_path):
    need_jdk()
    settings = {"authorizer.class.name": AUTHORIZER, "super.users": "User:ANONYMOUS"}
    theirs, ours = kafka_then_ours(tmp_path, settings, lambda node: _session(node.bootstrap))
    assert ours == theirs
    assert any("host=10.0.0.1, operation=READ" in line for line in ours[-1])
