"""An Apache Kafka 4.3.1 broker with two log directories (JBOD) on a controller of
ours: a new topic's replicas start UNASSIGNED (the broker registered two directories),
the broker places each partition in one of its directories and says so with
AssignReplicasToDirs (key 73), and the controller records the choice
(PartitionChangeRecord v2 with Directories). The broker then serves the topic.

Then a log directory fails under a running broker (replaced by a file, as Kafka's own
``LogDirFailureTest`` does; the broker's next high-watermark checkpoint there fails):
the broker's heartbeat names it offline, and the controller moves the leadership and
ISR membership of the replicas in it to the other broker, records the directory gone
from the registration, and leaves the replicas in the other directory alone."""
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


def _dirs_by_id(dirs) -> dict:
    """{directory id: path} from each log directory's meta.properties."""
    from wire.uuids import uuid_from_str
    out = {}
    for d in dirs:
        meta = (d / "meta.properties").read_text()
        out[uuid_from_str(next(line.split("=", 1)[1] for line in meta.splitlines()
                               if line.startswith("directory.id=")))] = d
    return out


def _started_node(tmp_path):
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=1)
    node.format_with_ours(CLUSTER)
    node.start()
    return node


def _jbod_broker(tmp_path, node, replication: int, overrides=None):
    """Broker 100 with two log directories (not started) and those directories."""
    dirs = [tmp_path / "broker" / "d1", tmp_path / "broker" / "d2"]
    broker = KafkaBroker(tmp_path / "broker", 100, CLUSTER, node.bootstrap, replication=replication,
                         overrides={"log.dirs": ",".join(map(str, dirs)), **(overrides or {})})
    return broker, dirs


def _unfenced(node, broker):
    wait_for(lambda: (b := image_of(node).brokers.get(broker.node_id)) is not None and not b.fenced, 120,
             f"broker {broker.node_id} unfenced\n" + broker.log_tail(20))


def test_a_jbod_broker_assigns_its_replicas_to_directories(tmp_path):
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient
    node = _started_node(tmp_path)
    broker, dirs = _jbod_broker(tmp_path, node, 1)
    admin = None
    try:
        node.wait_leader()
        broker.start()
        _unfenced(node, broker)
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
        by_id = _dirs_by_id(dirs)
        parts = image_of(node).topics.by_name["spread"].partitions
        for pid, p in parts.items():
            home = by_id[p.directories[0]]
            assert (home / f"spread-{pid}").is_dir(), (pid, home)
        assert image_of(node).bad_records == 0
    finally:
        if admin is not None:
            admin.close()
        broker.close()
        node.stop()


def test_a_failed_log_directory_moves_its_leaders_to_the_other_broker(tmp_path):
    import shutil

    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic
    node = _started_node(tmp_path)
    # the metadata log elsewhere: a failed metadata log directory stops the broker
    jbod, dirs = _jbod_broker(tmp_path, node, 2, {"replica.high.watermark.checkpoint.interval.ms": "300",
                                                  "metadata.log.dir": str(tmp_path / "broker" / "meta")})
    other = KafkaBroker(tmp_path / "other", 101, CLUSTER, node.bootstrap, replication=2)
    admin = producer = None
    try:
        node.wait_leader()
        jbod.start()
        other.start()
        _unfenced(node, jbod)
        _unfenced(node, other)
        registered = set(image_of(node).brokers.get(100).record.log_dirs)
        admin = KafkaAdminClient(bootstrap_servers=f"{jbod.bootstrap},{other.bootstrap}", request_timeout_ms=30000)
        admin.create_topics([NewTopic("moving", -1, -1, replica_assignments={i: [100, 101] for i in range(4)})])

        def placed():
            t = image_of(node).topics.by_name.get("moving")
            if t is None or len(t.partitions) != 4:
                return None
            ps = t.partitions.values()
            ok = all(p.directories[0] != UNASSIGNED and p.leader == 100 and set(p.isr) == {100, 101} for p in ps)
            return {i: p.directories[0] for i, p in t.partitions.items()} if ok else None
        homes = wait_for(placed, 90, "replicas placed and in sync\n" + node.log_tail(20))
        producer = KafkaProducer(bootstrap_servers=f"{jbod.bootstrap},{other.bootstrap}", acks="all")
        for i in range(4):
            producer.send("moving", b"before", partition=i).get(30)
        failed = homes[0]
        assert len(set(homes.values())) == 2, homes  # the broker used both directories
        path = _dirs_by_id(dirs)[failed]
        shutil.rmtree(path)
        path.write_text("")  # a file where the directory was: the next checkpoint there fails

        def moved():
            img = image_of(node)
            if failed in img.brokers.get(100).record.log_dirs:
                return False
            for i, p in img.topics.by_name["moving"].partitions.items():
                if homes[i] == failed and (p.leader, tuple(p.isr)) != (101, (101,)):
                    return False
                if homes[i] != failed and (p.leader != 100 or 100 not in p.isr):
                    return False
            return True
        wait_for(moved, 60, "leaders off the failed directory")
        img = image_of(node)
        assert set(img.brokers.get(100).record.log_dirs) == registered - {failed}
        assert not img.brokers.get(100).fenced  # the broker stays up on its other directory
        for i in range(4):  # every partition still takes writes
            producer.send("moving", b"after", partition=i).get(60)
        assert img.bad_records == 0
    finally:
        for c in (producer, admin):
            if c is not None:
                c.close()
        jbod.close()
        other.close()
        node.stop()
