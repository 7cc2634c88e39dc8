"""An Apache Kafka 4.3.1 broker with two log directories (JBOD) on a controller of
ours: a new topic's replicas start UNASSIGNED (the broker registered two directories),
the broker places each partition in one of its directories and says so with
AssignReplicasToDirs (key 73), and the controller records the choice
(PartitionChangeRecord v2 with Directories). The broker then serves the topic."""
from __future__ import annotations

import uuid

import pytest

from tests.interop.test_kafka_broker_failure import image_of
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import OurNode, wait_for
from tools.kafka_dist.broker import KafkaBroker

pytestmark = [pytest.mark.java, pytest.mark.slow]  # ~25 s: the pure cases are in tests/unit
CLUSTER = "SkJPRERpcmVjdG9yaWVzMQ"
UNASSIGNED = uuid.UUID(int=1)


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


def test_a_jbod_broker_assigns_its_replicas_to_directories(tmp_path):
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=1)
    node.format_with_ours(CLUSTER)
    node.start()
    dirs = [tmp_path / "broker" / "d1", tmp_path / "broker" / "d2"]
    broker = KafkaBroker(tmp_path / "broker", 100, CLUSTER, node.bootstrap, replication=1,
                         overrides={"log.dirs": ",".join(map(str, dirs))})
    admin = None
    try:
        node.wait_leader()
        broker.start()
        wait_for(lambda: (b := image_of(node).brokers.get(100)) is not None and not b.fenced, 120,
                 "the broker unfenced\n" + broker.log_tail(20))
        registered = list(image_of(node).brokers.get(100).record.log_dirs)
        assert len(registered) == 2
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=30000)
        admin.create_topics({"spread": {"num_partitions": 4, "replication_factor": 1}})

        def assigned():
            t = image_of(node).topics.by_name.get("spread")
            if t is None or len(t.partitions) != 4:
                return None
            found = [p.directories[0] for p in t.partitions.values()]
            return found if all(d in registered for d in found) else None
        found = wait_for(assigned, 60, "every replica assigned to a registered directory\n" + node.log_tail(20))
        assert set(found) <= set(registered)
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
        for i in range(4):
            producer.send("spread", b"x", partition=i).get(30)
        producer.close(10)
        # each partition's log lives in the directory the controller recorded for it
        by_dir = {d.name: d for d in dirs}
        for d in dirs:
            meta = (d / "meta.properties").read_text()
            dir_id = next(line.split("=", 1)[1] for line in meta.splitlines() if line.startswith("directory.id="))
            by_dir[d.name] = dir_id
        parts = image_of(node).topics.by_name["spread"].partitions
        from wire.uuids import uuid_to_str
        for pid, p in parts.items():
            home = next(d for d in dirs if by_dir[d.name] == uuid_to_str(p.directories[0]))
            assert (home / f"spread-{pid}").is_dir(), (pid, home)
        assert image_of(node).bad_records == 0
    finally:
        if admin is not None:
            admin.close()
        broker.close()
        node.stop()
