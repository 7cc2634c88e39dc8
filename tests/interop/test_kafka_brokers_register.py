"""Apache Kafka 4.3.1 brokers (``process.roles=broker``) on a controller of ours: the
broker registers (RegisterBrokerRecord v4, fenced), catches up by fetching
``__cluster_metadata`` as a Raft observer, is unfenced (BrokerRegistrationChangeRecord
v0 Fenced=-1, then the v3 CordonedLogDirs=[] record), and serves; killed with SIGKILL,
it is fenced once its session (``broker.session.timeout.ms``) expires (fast fencing
off here, ``kraft.broker.fast.fencing.enable=false``: this is the session path; the
fast one is ``test_kafka_broker_fast_fencing.py``)."""
from __future__ import annotations

import time

import pytest

from kraft_server.controller.image import records as rec
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import start_brokers
from tests.support.kraft_nodes import OurNode, _roundtrip, read_batches, wait_for
from wire.messages import DescribeClusterRequest
from wire.records import batch_records, walk

pytestmark = pytest.mark.java
CLUSTER = "QnJva2Vyc09uT3VyQ3RsMQ"
SESSION_MS = 3000


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


def broker_view(port: int) -> dict[int, bool]:
    """{broker id: fenced} as a Kafka broker reports them (DescribeCluster v2, fenced included)."""
    r = _roundtrip(port, DescribeClusterRequest(endpoint_type=1, include_fenced_brokers=True), 2)
    assert r.error_code == 0, r
    return {b.broker_id: b.is_fenced for b in r.brokers}


def record_kinds(node) -> list[tuple[int, int]]:
    out = []
    for raw in read_batches(node.data).values():
        for info in walk(raw):
            if not info.is_control:
                out += [rec.unframe(v)[:2] for _, v in batch_records(raw, info)]
    return out


def test_a_kafka_broker_registers_unfences_and_is_fenced_when_killed(tmp_path):
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=1, extra=(f"broker.session.timeout.ms={SESSION_MS}",
                                                         "kraft.broker.fast.fencing.enable=false"))
    node.format_with_ours(CLUSTER)
    node.start()
    brokers = []
    try:
        node.wait_leader()
        brokers = start_brokers(tmp_path, 1, CLUSTER, node.bootstrap)
        b = brokers[0]
        port = b.port

        def unfenced():
            try:
                return broker_view(port) == {b.node_id: False}
            except (OSError, AssertionError):
                return False
        wait_for(unfenced, 90, f"broker {b.node_id} unfenced\n{b.log_tail(20)}")
        kinds = record_kinds(node)
        assert (0, 4) in kinds  # RegisterBrokerRecord v4
        i = kinds.index((0, 4))
        assert (17, 0) in kinds[i:] and (17, 3) in kinds[i:]  # unfence; CordonedLogDirs
        assert "Transitioning from RECOVERY to RUNNING" in b.log_text()

        b.stop(graceful=False)  # SIGKILL: no controlled shutdown
        killed = time.monotonic()
        wait_for(lambda: record_kinds(node).count((17, 0)) >= 2, 30, "the fence record")
        waited = time.monotonic() - killed
        assert waited >= SESSION_MS / 1000 - 1.5, waited  # not before the session could expire
        assert "fencing broker 100: its session expired" in node.log_path.read_text()
    finally:
        for b in brokers:
            b.close()
        node.stop()
