"""Broker failure on a controller of ours (issue 11, test b): three Apache Kafka
brokers of the default release (the first test also for every release of the version
matrix, ``tools/kafka_dist/releases.py``: that release's brokers and tools, our quorum
formatted at its metadata.version; issue 38, cell 1), a topic with RF 3 and
min.insync.replicas=2, an acks=all producer running throughout. The broker leading the
most partitions is killed with SIGKILL: it is fenced (at once on evidence of the crash,
issue 29, else once its session ``broker.session.timeout.ms`` expires) and every
leadership moves to an ISR member, and the producer goes on. Restarted, it registers a new
incarnation, is unfenced, and the leaders add it back to every ISR through
AlterPartition. No acknowledged record is lost. The same with a controlled shutdown
(SIGTERM): the broker is InControlledShutdown, its leaderships move before it exits,
the producer sees no error it gives up on. And with three controllers of ours, the
active one killed with SIGKILL: the brokers follow the new one and keep serving."""
from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from kraft_server.controller.image.metadata_image import MetadataImage
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import bootstrap_servers, start_brokers
from tests.support.kraft_nodes import OurNode, read_batches, wait_for
from tools.kafka_dist.controller import run_tool
from tools.kafka_dist.releases import DEFAULT_RELEASE, MATRIX
from wire.records import batch_records, walk

pytestmark = [pytest.mark.java, pytest.mark.slow]
CLUSTER = "QnJva2VyRmFpbHVyZU91cg"
SESSION_MS = 4000
BROKERS = [100, 101, 102]


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


def image_of(node) -> MetadataImage:
    """Our node's metadata log replayed (what it has written so far)."""
    img = MetadataImage()
    for raw in read_batches(node.data).values():
        for info in walk(raw):
            if not info.is_control:
                for i, (_, v) in enumerate(batch_records(raw, info)):
                    img.replay(v, info.base_offset + i)
    return img


class Producer(threading.Thread):
    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True)
        from kafka import KafkaProducer
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", retries=50,
                                      max_in_flight_requests_per_connection=1, request_timeout_ms=15000,
                                      retry_backoff_ms=200, linger_ms=5)
        self.acked: set[bytes] = set()
        self.errors = 0
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            value = b"v%07d" % i
            i += 1
            fut = self.producer.send("events", value=value, key=value)
            fut.add_callback(lambda _md, v=value: self._ok(v))
            fut.add_errback(lambda _e: self._err())
            self.stop.wait(0.005)  # pace, not synchronisation
        self.producer.flush(60)
        self.producer.close(10)

    def _ok(self, v: bytes) -> None:
        with self.lock:
            self.acked.add(v)

    def _err(self) -> None:
        with self.lock:
            self.errors += 1

    def count(self) -> int:
        with self.lock:
            return len(self.acked)


def consume_all(bootstrap: str) -> set[bytes]:
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                             auto_offset_reset="earliest", consumer_timeout_ms=10000)
    try:
        parts = [TopicPartition("events", p) for p in consumer.partitions_for_topic("events")]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        end = consumer.end_offsets(parts)
        seen: set[bytes] = set()
        deadline = time.monotonic() + 120
        while any(consumer.position(tp) < end[tp] for tp in parts) and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=1000).values():
                seen.update(r.value for r in records)
        return seen
    finally:
        consumer.close()


# The default release and every release of the version matrix (issue 38, cell 1).
RELEASES = tuple(dict.fromkeys((DEFAULT_RELEASE, *MATRIX)))


@pytest.mark.parametrize("version", RELEASES)
def test_a_killed_broker_is_fenced_its_leaders_move_and_nothing_acknowledged_is_lost(tmp_path, version):
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=1, extra=(f"broker.session.timeout.ms={SESSION_MS}",))
    node.format_with_ours(CLUSTER, release=version)
    node.start()
    brokers, producer = [], None
    try:
        node.wait_leader()
        brokers = start_brokers(tmp_path, 3, CLUSTER, node.bootstrap, version=version)
        by_id = {b.node_id: b for b in brokers}
        wait_for(lambda: sorted(b.broker_id for b in image_of(node).brokers if not b.fenced) == BROKERS,
                 120, "three unfenced brokers")
        bs = bootstrap_servers(brokers)
        run_tool("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", "events",
                 "--replication-factor", "3", "--partitions", "6", "--config", "min.insync.replicas=2",
                 timeout=120, version=version)
        producer = Producer(bs)
        producer.start()
        wait_for(lambda: producer.count() >= 200, 60, "the producer's first acks")

        parts = dict(image_of(node).topics.by_name["events"].partitions)
        victim_id = Counter(p.leader for p in parts.values()).most_common(1)[0][0]
        victim = by_id[victim_id]
        victim.stop(graceful=False)  # SIGKILL
        killed = time.monotonic()

        def moved():
            img = image_of(node)
            ps = img.topics.by_name["events"].partitions.values()
            return img.brokers.get(victim_id).fenced and all(
                p.leader != victim_id and p.leader >= 0 and victim_id not in p.isr for p in ps)
        wait_for(moved, 30, "the victim fenced and its leaderships moved")
        assert time.monotonic() - killed < SESSION_MS / 1000 + 8

        before = producer.count()
        wait_for(lambda: producer.count() >= before + 200, 60, "the producer continuing")

        victim.start()  # same log dir, a new incarnation
        def rejoined():
            img = image_of(node)
            b = img.brokers.get(victim_id)
            return (b is not None and not b.fenced and all(
                sorted(p.isr) == BROKERS for p in img.topics.by_name["events"].partitions.values()))
        wait_for(rejoined, 120, "the victim unfenced and back in every ISR")
        # kafka-leader-election (an Envelope carrying ElectLeaders) moves the leaders back
        run_tool("kafka-leader-election", "--bootstrap-server", bs, "--election-type", "PREFERRED",
                 "--all-topic-partitions", timeout=120, version=version)
        wait_for(lambda: all(p.leader == p.replicas[0]
                             for p in image_of(node).topics.by_name["events"].partitions.values()),
                 30, "every partition led by its preferred replica")

        producer.stop.set()
        producer.join(90)
        acked = producer.acked
        seen = consume_all(bs)
        lost = acked - seen
        assert not lost, f"{len(lost)} acknowledged records lost (of {len(acked)})"
        assert len(acked) > 400
    finally:
        if producer is not None:
            producer.stop.set()
            producer.join(90)
        for b in brokers:
            b.close()
        node.stop()


def _cluster(tmp_path, n_controllers=1):
    """(controller nodes, leader, brokers, bootstrap) with the topic created."""
    from tests.support.kraft_nodes import agreed_leader, make_quorum
    extra = (f"broker.session.timeout.ms={SESSION_MS}",)
    if n_controllers == 1:
        (tmp_path / "ours").mkdir()
        nodes = [OurNode(tmp_path / "ours", node_id=1, extra=extra)]
        nodes[0].format_with_ours(CLUSTER)
    else:
        nodes = make_quorum(tmp_path, "dynamic", CLUSTER, extra=extra)
    for n in nodes:
        n.start()
    return nodes


def _topic(brokers, node):
    wait_for(lambda: sorted(b.broker_id for b in image_of(node).brokers if not b.fenced) == BROKERS,
             120, "three unfenced brokers")
    bs = bootstrap_servers(brokers)
    run_tool("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", "events",
             "--replication-factor", "3", "--partitions", "6", "--config", "min.insync.replicas=2",
             timeout=120)
    return bs


def _check_nothing_lost(producer, bs):
    producer.stop.set()
    producer.join(90)
    acked = producer.acked
    lost = acked - consume_all(bs)
    assert not lost, f"{len(lost)} acknowledged records lost (of {len(acked)})"
    assert len(acked) > 400


def test_controlled_shutdown_moves_leaders_before_the_broker_exits(tmp_path):
    nodes = _cluster(tmp_path)
    node = nodes[0]
    brokers, producer = [], None
    try:
        node.wait_leader()
        brokers = start_brokers(tmp_path, 3, CLUSTER, node.bootstrap)
        bs = _topic(brokers, node)
        producer = Producer(bs)
        producer.start()
        wait_for(lambda: producer.count() >= 200, 60, "the producer's first acks")
        parts = image_of(node).topics.by_name["events"].partitions
        victim_id = Counter(p.leader for p in parts.values()).most_common(1)[0][0]
        victim = next(b for b in brokers if b.node_id == victim_id)
        victim.stop(graceful=True, timeout=60)  # SIGTERM: controlled shutdown
        assert victim.proc.returncode is not None
        img = image_of(node)
        b = img.brokers.get(victim_id)
        assert b.in_controlled_shutdown and b.fenced
        assert all(p.leader != victim_id for p in img.topics.by_name["events"].partitions.values())
        text = victim.log_text()
        assert "The controller has asked us to exit controlled shutdown." in text
        assert "Transitioning from PENDING_CONTROLLED_SHUTDOWN to SHUTTING_DOWN" in text
        before = producer.count()
        wait_for(lambda: producer.count() >= before + 200, 60, "the producer continuing")
        _check_nothing_lost(producer, bs)
        assert producer.errors == 0
    finally:
        if producer is not None:
            producer.stop.set()
            producer.join(90)
        for b in brokers:
            b.close()
        for n in nodes:
            n.stop()


def test_brokers_follow_a_new_active_controller_after_a_kill(tmp_path):
    from tests.support.kraft_nodes import agreed_leader
    nodes = _cluster(tmp_path, 3)
    brokers, producer = [], None
    try:
        leader, _ = agreed_leader(nodes)
        brokers = start_brokers(tmp_path, 3, CLUSTER, ",".join(n.bootstrap for n in nodes))
        bs = _topic(brokers, leader)
        producer = Producer(bs)
        producer.start()
        wait_for(lambda: producer.count() >= 200, 60, "the producer's first acks")
        leader.kill()
        new, _ = agreed_leader(nodes, exclude=(leader.node_id,))
        assert new.node_id != leader.node_id
        # the brokers forward to the new controller (a topic created now) and keep their
        # sessions with it (nobody fenced)
        run_tool("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", "after",
                 "--replication-factor", "3", "--partitions", "2", timeout=120)
        wait_for(lambda: "after" in image_of(new).topics.by_name, 30, "the new topic in the new leader's log")
        img = image_of(new)
        assert sorted(b.broker_id for b in img.brokers if not b.fenced) == BROKERS  # nobody fenced
        before = producer.count()
        wait_for(lambda: producer.count() >= before + 200, 60, "the producer continuing")
        _check_nothing_lost(producer, bs)
    finally:
        if producer is not None:
            producer.stop.set()
            producer.join(90)
        for b in brokers:
            b.close()
        for n in nodes:
            n.stop()
