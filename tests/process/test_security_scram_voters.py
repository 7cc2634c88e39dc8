"""SCRAM between freshly formatted voters (issue 28; Kafka's KAFKA-15513): three of our
nodes whose controller listener is SASL_SSL with ``sasl.mechanism.controller.protocol=
SCRAM-SHA-512``, each formatted with ``kraft-storage format --add-scram`` for the user
they dial each other as. Nothing is committed yet when they start, so the credentials
come from the formatted bootstrap checkpoint until the log holds them; the voters
elect a leader, commit the bootstrap records (the credential among them) on every node,
and a SCRAM client then authenticates against every voter."""
from __future__ import annotations

import uuid

import pytest

from tests.support.certs import Pki
from tests.support.kraft_nodes import make_quorum, wait_for
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
        # the bootstrap records, the credential among them, committed and on every node's log
        assert all(v.log_end_offset >= 0 for v in leader.current_voters)
        wait_for(lambda: all(_credential_offsets(n, _leader(nodes).high_watermark) for n in nodes), 30,
                 "the credential committed on every node")
        # a SCRAM client authenticates on every controller listener (the followers answer
        # DescribeQuorum NOT_LEADER_OR_FOLLOWER, as Kafka's)
        codes = [quorum_partition(n.port, client_context(pki), ("SCRAM-SHA-512", "admin", "admin-secret")).error_code
                 for n in nodes]
        assert sorted(codes) == [0, 6, 6]
    finally:
        for node in nodes:
            node.stop()
