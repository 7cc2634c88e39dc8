"""A mixed quorum with brokers attached (issue 11, test e): two controllers of ours and
one Apache Kafka 4.3.1 controller, three Kafka brokers. Leadership moves from one of
ours to Kafka's controller and back (SIGSTOP of the leader); whoever leads serves the
brokers (their heartbeats keep them unfenced, ``kafka-topics --create`` through a
broker is written by it), and each side replays the other's records: our follower's
image holds the topic Kafka's controller created, and a topic created by ours again
afterwards shows up in the Java controller's log (``kafka-dump-log``)."""
from __future__ import annotations

import os
import signal
import time

import pytest

from kraft_server.controller.image.metadata_image import MetadataImage
from wire.uuids import random_directory_id, uuid_to_str
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import bootstrap_servers, start_brokers
from tests.support.kraft_nodes import (
    FAST_QUORUM, OurNode, agreed_leader, read_batches, set_property, storage_format, wait_for,
)
from tools.kafka_dist.controller import KafkaController, free_port, run_tool
from wire.records import batch_records, walk

pytestmark = [pytest.mark.java, pytest.mark.slow]
CLUSTER = "TWl4ZWRRdW9ydW1Ccm9rZXI"
BROKERS = [100, 101, 102]


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


def image_of(node) -> MetadataImage:
    img = MetadataImage()
    for raw in read_batches(node.data).values():
        for info in walk(raw):
            if not info.is_control:
                for i, (_, v) in enumerate(batch_records(raw, info)):
                    img.replay(v, info.base_offset + i)
    return img


def kafka_log(ctl) -> str:
    part = ctl.data_dir / "__cluster_metadata-0"
    return "".join(run_tool("kafka-dump-log", "--cluster-metadata-decoder", "--files", str(seg),
                            timeout=120).stdout for seg in sorted(part.glob("*.log")))


def pause(proc, seconds: float) -> None:
    os.killpg(proc.pid, signal.SIGSTOP)
    try:
        time.sleep(seconds)  # long enough for the others to elect (fetch timeout 1.5 s)
    finally:
        os.killpg(proc.pid, signal.SIGCONT)


def mixed_quorum(tmp_path, cluster_id: str, extra: tuple = (), kafka_overrides: dict | None = None):
    """``(ours, ctl, quorum)``: two of our nodes (ids 1, 2) and Kafka's controller (id 3)
    formatted as one quorum with fast elections, none started; ``quorum`` is the
    bootstrap list. ``extra``/``kafka_overrides``: more settings for ours/Kafka's."""
    ours = []
    for i in (1, 2):
        (tmp_path / f"n{i}").mkdir()
        ours.append(OurNode(tmp_path / f"n{i}", node_id=i, extra=(*FAST_QUORUM, *extra)))
    kport = free_port()
    ports = {1: ours[0].port, 2: ours[1].port, 3: kport}
    voters = ",".join(f"{i}@127.0.0.1:{p}:{uuid_to_str(random_directory_id())}" for i, p in ports.items())
    quorum = ",".join(f"127.0.0.1:{p}" for p in ports.values())
    for n in ours:
        set_property(n.config, "controller.quorum.bootstrap.servers", quorum)
        storage_format(n.config, cluster_id, "--initial-controllers", voters)
    ctl = KafkaController(tmp_path / "kafka", node_id=3, port=kport, cluster_id=cluster_id,
                          format_mode="initial-controllers", initial_controllers=voters,
                          bootstrap_servers=quorum, overrides={
                              "controller.quorum.election.timeout.ms": "750",
                              "controller.quorum.fetch.timeout.ms": "1500",
                              "metadata.max.idle.interval.ms": "50", **(kafka_overrides or {})})
    return ours, ctl, quorum


def start_mixed(ours, ctl):
    """Format Kafka's controller, start all three; the leader they agree on."""
    ctl.format()
    for n in ours:
        n.start()
    ctl.start()
    return agreed_leader([*ours, ctl], timeout=120)[0]


def test_leadership_moves_between_a_java_and_a_python_controller_serving_brokers(tmp_path):
    ours, ctl, quorum = mixed_quorum(tmp_path, CLUSTER)
    nodes = [*ours, ctl]
    brokers = []
    try:
        leader = start_mixed(ours, ctl)
        brokers = start_brokers(tmp_path, 3, CLUSTER, quorum)
        bs = bootstrap_servers(brokers)
        follower = next(n for n in ours if n is not leader) if leader is not ctl else ours[0]
        wait_for(lambda: sorted(b.broker_id for b in image_of(follower).brokers if not b.fenced) == BROKERS,
                 120, "three unfenced brokers")

        # Move leadership to Kafka's controller: pause whoever of ours leads.
        for _ in range(8):
            if leader is ctl:
                break
            pause(leader.proc, 4.0)
            leader, _ = agreed_leader(nodes, timeout=60)
        assert leader is ctl, "Kafka's controller never won an election"
        from tests.interop.test_kafka_brokers_serve_topic import unfenced_brokers
        wait_for(lambda: unfenced_brokers(brokers[0].port) == BROKERS, 60, "brokers serving under Kafka's lead")
        run_tool("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", "by-kafka",
                 "--replication-factor", "3", "--partitions", "3", timeout=120)
        for n in ours:  # both of ours replay what the Java controller wrote
            wait_for(lambda n=n: len(image_of(n).topics.by_name.get("by-kafka").partitions
                                     if "by-kafka" in image_of(n).topics.by_name else {}) == 3,
                     60, f"node {n.node_id} replaying Kafka's topic")
        time.sleep(3)  # a few heartbeat rounds with Kafka's controller (2 s interval)
        img = image_of(ours[0])
        assert sorted(b.broker_id for b in img.brokers if not b.fenced) == BROKERS
        assert img.bad_records == 0 and img.unknown_records == 0

        # And back to one of ours: pause Kafka's controller.
        for _ in range(4):
            if leader is not ctl:
                break
            pause(ctl.proc, 4.0)
            leader, _ = agreed_leader(nodes, timeout=60)
        assert leader is not ctl
        run_tool("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", "by-python",
                 "--replication-factor", "3", "--partitions", "3", timeout=120)
        wait_for(lambda: "by-python" in image_of(leader).topics.by_name, 30, "our topic")
        def replayed_by_kafka():
            text = kafka_log(ctl)
            return text if '"name":"by-python"' in text else None
        text = wait_for(replayed_by_kafka, 60, "Kafka's controller replaying our topic", interval=1.0)
        assert text.count('"type":"PARTITION_RECORD"') >= 6
        assert sorted(b.broker_id for b in image_of(leader).brokers if not b.fenced) == BROKERS
        lines = ctl.log_text().splitlines()
        assert "Replayed TopicRecord for topic by-python" in "\n".join(lines)
        # Kafka logs the heartbeats it refused as a former leader (NotControllerException)
        # and our DescribeCluster probes while it is catching up after the pause
        # (UnsupportedVersionException); any other error would be a record it could not
        # take from us.
        errors = [(line, lines[i + 1] if i + 1 < len(lines) else "") for i, line in enumerate(lines)
                  if " ERROR " in line]
        assert all("NotControllerException" in nxt or ("DESCRIBE_CLUSTER" in line and "UnsupportedVersion" in nxt)
                   for line, nxt in errors), errors
    finally:
        for b in brokers:
            b.close()
        ctl.close()
        for n in ours:
            n.kill()
