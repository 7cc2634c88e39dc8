"""Kafka's replication system test on a controller of ours (issue 26, tests with real
brokers): three Apache Kafka 4.3.1 brokers, a topic of 3 partitions with RF 3 and
``min.insync.replicas=2``, Kafka's own VerifiableProducer (acks=all) and VerifiableConsumer
running while the leader of partition 0 is shut down cleanly, killed with SIGKILL, bounced
cleanly or bounced hard (``tests/support/replication_run.py``). Every acknowledged message
(``producer_send_success``) is consumed (``records_consumed``/``record_data``) at the offset
it was acknowledged at, and no consumed value was never sent. Our controller moves the
leaders off the failed broker, fences only it, and brings the ISR back to full after it
returns.

The default test runs two failures on a small load on one controller of ours; the slow ones
run all four (chasing the leader three times in each bounce) with more messages, on three
controllers of ours and, for comparison, on a quorum of Kafka's own controller."""
from __future__ import annotations

import pytest

from tests.support.jdk import need_jdk
from tests.support.replication_run import FAILURES, Cluster, check, run

pytestmark = [pytest.mark.java]
SESSION_MS = 6000


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    need_jdk()
    cluster = Cluster("ours", tmp_path_factory.mktemp("replication-ours"), "UmVwbGljYXRpb25PdXJzMQ", SESSION_MS)
    try:
        yield cluster
    finally:
        cluster.close()


def test_a_leader_shut_down_then_hard_bounced_loses_no_acknowledged_message(ours):
    found = run(ours, "short", ["clean_shutdown", "hard_bounce"], throughput=200)
    check(found)
    assert len(found["victims"]) == 2 and len(found["acked"]) >= 400


def all_four(kind, tmp, cluster_id, controllers=1):
    """Kafka's four failures, three bounces each, on a fresh cluster: the findings, checked."""
    need_jdk()
    cluster = Cluster(kind, tmp, cluster_id, SESSION_MS, controllers=controllers)
    try:
        found = run(cluster, "all", FAILURES, throughput=500, bounces=3, settle=1000)
    finally:
        cluster.close()
    check(found)
    assert len(found["victims"]) == 2 + 2 * 3 and len(found["acked"]) >= 5000


@pytest.mark.slow
def test_every_failure_of_kafkas_replication_test_on_three_controllers_of_ours(tmp_path):
    all_four("ours", tmp_path, "UmVwbGljYXRpb25PdXJzMw", controllers=3)


@pytest.mark.slow
def test_the_same_run_on_a_quorum_of_kafkas_controller(tmp_path):
    all_four("kafka", tmp_path, "UmVwbGljYXRpb25LYWZrYTE")
