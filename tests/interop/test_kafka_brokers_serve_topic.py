"""Apache Kafka 4.3.1 brokers serve a topic on a quorum of ours (issue 11, test a-lite):
three broker-only Kafka processes register and unfence, ``kafka-topics --create
--replication-factor 3 --partitions 6`` goes through a broker to our controller (an
Envelope carrying CreateTopics), ``--describe`` shows a leader and a full ISR for every
partition, an idempotent acks=all producer (``kafka-producer-perf-test``; its producer
id block comes from our AllocateProducerIds) writes N records and a kafka-python
consumer in a group (``__consumer_offsets`` created through a plain CreateTopics)
reads all N, each partition's offsets in order; ``kafka-topics --delete`` (Envelope
carrying DeleteTopics) writes a RemoveTopicRecord. One controller in the default suite;
three (the brokers follow the Raft leader) in the slow one."""
from __future__ import annotations

import re

import pytest

from kraft_server.controller.image import records as rec
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import bootstrap_servers, start_brokers
from tests.support.kraft_nodes import OurNode, _roundtrip, agreed_leader, make_quorum, read_batches, wait_for
from tools.kafka_dist.controller import run_tool
from wire.messages import DescribeClusterRequest
from wire.records import batch_records, walk

pytestmark = pytest.mark.java
CLUSTER = "U2VydmVBVG9waWNPbk91cg"
N = 2000
BROKER_IDS = [100, 101, 102]


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


def unfenced_brokers(port: int) -> list[int]:
    r = _roundtrip(port, DescribeClusterRequest(endpoint_type=1, include_fenced_brokers=True), 2)
    return sorted(b.broker_id for b in r.brokers if not b.is_fenced) if r.error_code == 0 else []


def record_kinds(node) -> set[tuple[int, int]]:
    out = set()
    for raw in read_batches(node.data).values():
        for info in walk(raw):
            if not info.is_control:
                out |= {rec.unframe(v)[:2] for _, v in batch_records(raw, info)}
    return out


def image_partitions(node, name: str) -> dict:
    from kraft_server.controller.image.metadata_image import MetadataImage
    img = MetadataImage()
    for raw in read_batches(node.data).values():
        for info in walk(raw):
            if not info.is_control:
                for i, (_, v) in enumerate(batch_records(raw, info)):
                    img.replay(v, info.base_offset + i)
    topic = img.topics.by_name.get(name)
    return dict(topic.partitions) if topic is not None else {}


def serve_a_topic(brokers, controller_node, grow: bool = False) -> None:
    def all_unfenced():
        try:
            return unfenced_brokers(brokers[0].port) == BROKER_IDS
        except (OSError, AssertionError):
            return False
    wait_for(all_unfenced, 120, "three unfenced brokers\n" + brokers[0].log_tail(20))
    bs = bootstrap_servers(brokers)
    out = run_tool("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", "orders",
                   "--replication-factor", "3", "--partitions", "6",
                   "--config", "min.insync.replicas=2", timeout=120)
    assert "Created topic orders." in out.stdout
    desc = run_tool("kafka-topics", "--bootstrap-server", bs, "--describe", "--topic", "orders",
                    timeout=120).stdout
    rows = re.findall(r"Partition: (\d+)\tLeader: (-?\d+)\tReplicas: ([\d,]+)\tIsr: ([\d,]*)", desc)
    assert sorted(int(p) for p, *_ in rows) == list(range(6)), desc
    for _, leader, replicas, isr in rows:
        assert int(leader) in BROKER_IDS and sorted(map(int, isr.split(","))) == BROKER_IDS, desc
        assert int(leader) == int(replicas.split(",")[0])
    assert len({leader for _, leader, _, _ in rows}) == 3  # leaders striped over the brokers
    assert "min.insync.replicas=2" in desc

    perf = run_tool("kafka-producer-perf-test", "--topic", "orders", "--num-records", str(N),
                    "--record-size", "64", "--throughput", "-1", "--command-property",
                    f"bootstrap.servers={bs}", "acks=all", timeout=180)
    assert f"{N} records sent" in perf.stdout, perf.stdout + perf.stderr

    from kafka import KafkaConsumer
    consumer = KafkaConsumer("orders", bootstrap_servers=bs, group_id="readers",
                             auto_offset_reset="earliest", consumer_timeout_ms=30000,
                             enable_auto_commit=True)
    try:
        offsets: dict[int, list[int]] = {}
        seen = 0
        for msg in consumer:
            offsets.setdefault(msg.partition, []).append(msg.offset)
            seen += 1
            if seen >= N:
                break
    finally:
        consumer.close()
    assert seen == N
    for p, offs in offsets.items():
        assert offs == list(range(len(offs))), p  # every record, in partition order
    if grow:  # Envelope carrying CreatePartitions
        run_tool("kafka-topics", "--bootstrap-server", bs, "--alter", "--topic", "orders", "--partitions", "8",
                 timeout=120)
        wait_for(lambda: len(image_partitions(controller_node, "orders")) == 8, 30, "eight partitions")
    gone = run_tool("kafka-topics", "--bootstrap-server", bs, "--delete", "--topic", "orders", timeout=120)
    assert gone.returncode == 0
    wait_for(lambda: (9, 0) in record_kinds(controller_node), 30, "RemoveTopicRecord")
    kinds = record_kinds(controller_node)
    assert (15, 0) in kinds  # ProducerIdsRecord: the idempotent producer got its id from us
    assert (2, 0) in kinds and (3, 2) in kinds  # TopicRecord, PartitionRecord v2


def test_three_kafka_brokers_serve_a_topic_on_one_controller_of_ours(tmp_path):
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=1)
    node.format_with_ours(CLUSTER)
    node.start()
    brokers = []
    try:
        node.wait_leader()
        brokers = start_brokers(tmp_path, 3, CLUSTER, node.bootstrap)
        serve_a_topic(brokers, node)
    finally:
        for b in brokers:
            b.close()
        node.stop()


@pytest.mark.slow
def test_three_kafka_brokers_serve_a_topic_on_three_controllers_of_ours(tmp_path):
    nodes = make_quorum(tmp_path, "dynamic", CLUSTER)
    brokers = []
    try:
        for n in nodes:
            n.start()
        leader, _ = agreed_leader(nodes)
        brokers = start_brokers(tmp_path, 3, CLUSTER, ",".join(n.bootstrap for n in nodes))
        serve_a_topic(brokers, leader, grow=True)
        # every controller replayed the same brokers and topic
        for n in nodes:
            wait_for(lambda n=n: {(2, 0), (3, 2), (0, 4)} <= record_kinds(n), 30, f"node {n.node_id}'s log")
    finally:
        for b in brokers:
            b.close()
        for n in nodes:
            n.stop()
