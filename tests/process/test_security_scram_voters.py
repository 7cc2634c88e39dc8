"""SCRAM between freshly formatted voters (issue 28; Kafka's KAFKA-15513): three of our
nodes whose controller listener is SASL_SSL with ``sasl.mechanism.controller.protocol=
SCRAM-SHA-512``, each formatted with ``kraft-storage format --add-scram`` for the user
they dial each other as. Nothing is committed yet when they start, so the credentials
come from the formatted bootstrap checkpoint until the log holds them; the voters
elect a leader, commit the bootstrap records (the credential among them) on every node,
and a SCRAM client then authenticates against every voter.

Apache Kafka 4.3.1 feeds its controllers' SCRAM credentials only from committed
metadata (``ScramPublisher``; the bootstrap records go to the ``QuorumController`` that
will write them), so fresh Kafka voters cannot authenticate each other with SCRAM. A
fresh mixed quorum (two of ours and a Kafka controller, slow) elects one of ours; the
Kafka controller fetches the credential from it, then authenticates SCRAM clients. (Ours
may first vote for Kafka's candidate, which then cannot check their fetches: they time
out and elect one of themselves.)"""
from __future__ import annotations

import uuid

import pytest

from kraft_server.net.sasl_client import SaslFailed
from tests.support.certs import PASSWORD, Pki
from tests.support.kraft_nodes import OurNode, make_quorum, set_property, storage_format, wait_for
from tests.support.metadata_rows import source_rows
from tests.support.secure_client import client_context, quorum_partition, sasl_ssl_controller
from wire.messages import UserScramCredentialRecord
from wire.records import decode_metadata_record

JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";'


def _leader(nodes):
    """The leader's DescribeQuorum partition (client listeners; the others answer
    NOT_LEADER_OR_FOLLOWER), once it has a high watermark."""
    parts = [(n, quorum_partition(n.client_port, None)) for n in nodes]
    leaders = [(n, p) for n, p in parts if p.error_code == 0 and p.leader_id == n.node_id]
    if len(leaders) == 1 and leaders[0][1].high_watermark > 0:
        return leaders[0][1]
    return None


def _credential_offsets(node, below):
    return [r["offset"] for r in source_rows(node.data, below=below)
            if decode_metadata_record(r["value"]).api_key == UserScramCredentialRecord.API_KEY]


def _committed_everywhere(nodes) -> bool:
    part = _leader(nodes)
    return part is not None and all(_credential_offsets(n, part.high_watermark) for n in nodes)


@pytest.mark.parametrize("mode", ["dynamic", "static"])
def test_fresh_voters_elect_and_commit_over_scram_sha_512(tmp_path, mode):
    pki = Pki(tmp_path / "pki")
    extra = (*sasl_ssl_controller(pki, "SCRAM-SHA-512", JAAS),
             "ssl.truststore.type=PEM", f"ssl.truststore.location={pki.truststore_pem}")
    nodes = make_quorum(tmp_path, mode, uuid.uuid4().hex[:22], 3, extra=extra,
                        flags=("--add-scram", "SCRAM-SHA-512=[name=admin,password=admin-secret]"))
    try:
        for node in nodes:
            node.start()
        leader = wait_for(lambda: _leader(nodes), 60, "a leader elected over SASL_SSL/SCRAM-SHA-512")
        assert leader.leader_id in (1, 2, 3)
        # the bootstrap records, the credential among them, committed and on every node's log
        wait_for(lambda: _committed_everywhere(nodes), 30, "the credential committed on every node")
        # a SCRAM client authenticates on every controller listener (the followers answer
        # DescribeQuorum NOT_LEADER_OR_FOLLOWER, as Kafka's)
        codes = [quorum_partition(n.port, client_context(pki), ("SCRAM-SHA-512", "admin", "admin-secret")).error_code
                 for n in nodes]
        assert sorted(codes) == [0, 6, 6]
    finally:
        for node in nodes:
            node.stop()


@pytest.mark.slow  # a Kafka controller
def test_a_fresh_mixed_quorum_elects_ours_and_kafka_learns_the_credential(tmp_path):
    from tests.support.jdk import need_jdk
    from tools.kafka_dist.controller import KafkaController, random_cluster_id
    need_jdk()
    pki = Pki(tmp_path / "pki")
    cluster_id = random_cluster_id()
    scram = ("--add-scram", "SCRAM-SHA-512=[name=admin,password=admin-secret]")
    trust = ("ssl.truststore.type=PEM", f"ssl.truststore.location={pki.truststore_pem}")
    ours = []
    for i in (1, 2):
        (tmp_path / f"n{i}").mkdir()
        ours.append(OurNode(tmp_path / f"n{i}", node_id=i, extra=(*sasl_ssl_controller(pki, "SCRAM-SHA-512", JAAS),
                                                                  *trust)))
    kafka = KafkaController(tmp_path / "kafka", node_id=3, cluster_id=cluster_id, format_mode="static", overrides={
        "listener.security.protocol.map": "CONTROLLER:SASL_SSL", "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "sasl.mechanism.controller.protocol": "SCRAM-SHA-512",
        "listener.name.controller.scram-sha-512.sasl.jaas.config": JAAS, "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": str(pki.server.p12), "ssl.keystore.password": PASSWORD,
        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.truststore_pem),
        "controller.quorum.bootstrap.servers": ""})
    voters = ",".join([*(f"{n.node_id}@127.0.0.1:{n.port}" for n in ours), f"3@{kafka.bootstrap}"])
    kafka.overrides["controller.quorum.voters"] = voters
    for node in ours:
        set_property(node.config, "controller.quorum.voters", voters)
        set_property(node.config, "controller.quorum.bootstrap.servers", "")
        storage_format(node.config, cluster_id, *scram)
    context, admin = client_context(pki), ("SCRAM-SHA-512", "admin", "admin-secret")
    try:
        kafka.format(list(scram))
        kafka.start()
        for node in ours:
            node.start()
        leader = wait_for(lambda: _leader(ours), 90, "one of ours elected over SCRAM-SHA-512")

        def kafka_caught_up():
            part = _leader(ours)
            return [v for v in part.current_voters if v.replica_id == 3 and v.log_end_offset >= part.high_watermark]
        wait_for(kafka_caught_up, 90, "the Kafka controller fetching from our leader")
        assert leader.leader_id in (1, 2)
        # Kafka replays the committed credential once it learns the high watermark: then it
        # authenticates a SCRAM client (a follower answers DescribeQuorum NOT_LEADER_OR_FOLLOWER, 6)
        def kafka_answers():
            try:
                return quorum_partition(kafka.port, context, admin).error_code == 6
            except SaslFailed:
                return False
        assert wait_for(kafka_answers, 30, "SCRAM on Kafka's listener")
    finally:
        for node in ours:
            node.stop()
        kafka.close()
