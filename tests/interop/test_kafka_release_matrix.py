"""The version matrix, fast cell (issue 38): for the newest patch of every Apache Kafka
4.x line (``tools/kafka_dist/releases.py``), that release's own ``kafka-storage`` formats
a controller of ours at the release's newest metadata.version, one broker of that
release registers on it and unfences, and that release's ``kafka-metadata-quorum``,
``kafka-features``, ``kafka-topics`` and ``kafka-configs`` work through the broker: a
topic is created (an Envelope to our controller), configured, described with its leader,
and serves records to kafka-python. One broker, one controller, a handful of tool JVMs.
``make test`` runs the oldest release and the default one; ``make test-slow`` the others.

A release newer than our controllers gets a second cell: the newest release whose own
metadata.version we serve formats the quorum at our newest metadata.version, and the new
release's broker and tools run on it."""
from __future__ import annotations

import re

import pytest

from kraft_server.log.bootstrap import LATEST_METADATA_VERSION
from tests.interop.test_kafka_brokers_serve_topic import record_kinds, unfenced_brokers
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import BROKER_ID_BASE, start_brokers
from tests.support.kraft_nodes import OurNode, _roundtrip, wait_for
from tools.kafka_dist import MATRIX, RELEASES
from tools.kafka_dist.releases import DEFAULT_RELEASE
from tools.kafka_dist.controller import run_tool
from wire.messages import ApiVersionsRequest

pytestmark = pytest.mark.java
CLUSTER = "VmVyc2lvbk1hdHJpeENlbGw"
N = 200
BROKER = BROKER_ID_BASE

# Cells that fail only for a feature our controllers do not have yet (strict: a cell
# that starts passing fails the run until its mark is removed).
MISSING: dict[str, str] = {}


def _formatter_at(level: int) -> str:
    """The newest release whose own newest metadata.version is ``level`` or lower."""
    fits = [v for v, facts in RELEASES.items() if facts["metadata"][1] <= level]
    return max(fits, key=lambda v: tuple(int(x) for x in v.split(".")))


def _cells() -> list:
    """(release, release whose kafka-storage formats our controller, metadata.version name, level)."""
    cells = []
    for version in MATRIX:
        mv_name, level = RELEASES[version]["metadata"]
        marks = [pytest.mark.xfail(strict=True, reason=MISSING[version])] if version in MISSING else []
        if version not in (MATRIX[0], DEFAULT_RELEASE):  # the oldest and the default in make test
            marks.append(pytest.mark.slow)
        cells.append(pytest.param(version, version, mv_name, level, marks=marks, id=version))
        if level > LATEST_METADATA_VERSION[1]:
            ours = LATEST_METADATA_VERSION
            cells.append(pytest.param(version, _formatter_at(ours[1]), *ours, id=f"{version}-at-{ours[0]}"))
    return cells


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


def finalized_metadata_version(port: int) -> int | None:
    """The metadata.version level our controller's ApiVersions finalizes, if any."""
    r = _roundtrip(port, ApiVersionsRequest(client_software_name="matrix", client_software_version="1"), 3)
    return next((f.max_version_level for f in r.finalized_features if f.name == "metadata.version"), None)


def _status(text: str) -> dict[str, str]:
    return dict(re.findall(r"^(\w+):\s+(.*)$", text, re.M))


@pytest.mark.parametrize("version, formatter, mv_name, mv_level", _cells())
def test_a_release_serves_a_topic_on_our_controller(tmp_path, version, formatter, mv_name, mv_level):
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=1)
    out = run_tool("kafka-storage", "format", "--cluster-id", CLUSTER, "--standalone",
                   "--release-version", mv_name, "--config", str(node.kafka_config), version=formatter)
    assert f"metadata.version {mv_name}" in out.stdout, out.stdout
    node.start()
    brokers = []
    try:
        node.wait_leader()
        wait_for(lambda: finalized_metadata_version(node.port) == mv_level, 15,
                 f"our controller at the formatted metadata.version {mv_name} ({mv_level})")
        brokers = start_brokers(tmp_path, 1, CLUSTER, node.bootstrap, version=version)
        bs = brokers[0].bootstrap

        def unfenced():
            try:
                return unfenced_brokers(brokers[0].port) == [BROKER]
            except (OSError, AssertionError):
                return False
        try:
            wait_for(unfenced, 90, f"Kafka {version}'s broker unfenced")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{brokers[0].log_tail(30)}\n--- ours\n{node.log_tail(30)}") from None

        # kafka-metadata-quorum: DescribeQuorum forwarded by the broker to our leader
        status = _status(run_tool("kafka-metadata-quorum", "--bootstrap-server", bs, "describe", "--status",
                                  version=version, timeout=90).stdout)
        assert status["LeaderId"] == "1" and status["ClusterId"] == CLUSTER, status
        assert int(status["HighWatermark"]) > 0

        # kafka-features: the finalized metadata.version the cell formatted
        features = run_tool("kafka-features", "--bootstrap-server", bs, "describe",
                            version=version, timeout=90).stdout
        assert re.search(rf"Feature: metadata\.version\s.*FinalizedVersionLevel: {re.escape(mv_name)}\s",
                         features), features

        # kafka-topics / kafka-configs: CreateTopics and IncrementalAlterConfigs in Envelopes
        created = run_tool("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", "cell",
                           "--partitions", "3", "--replication-factor", "1", version=version, timeout=90)
        assert "Created topic cell." in created.stdout
        run_tool("kafka-configs", "--bootstrap-server", bs, "--alter", "--entity-type", "topics",
                 "--entity-name", "cell", "--add-config", "retention.ms=86400001", version=version, timeout=90)

        def described():
            d = run_tool("kafka-topics", "--bootstrap-server", bs, "--describe", "--topic", "cell",
                         version=version, timeout=90).stdout
            return d if "retention.ms=86400001" in d else None
        desc = wait_for(described, 30, "the topic config visible on the broker")
        rows = re.findall(r"Partition: (\d+)\tLeader: (-?\d+)\tReplicas: (\d+)\tIsr: (\d*)", desc)
        assert sorted(int(p) for p, *_ in rows) == [0, 1, 2], desc
        assert all(leader == replicas == isr == str(BROKER) for _, leader, replicas, isr in rows), desc

        # the broker serves the topic to a client
        from kafka import KafkaConsumer, KafkaProducer
        producer = KafkaProducer(bootstrap_servers=bs, acks="all")
        try:
            for i in range(N):
                producer.send("cell", str(i).encode())
            producer.flush(60)
        finally:
            producer.close()
        consumer = KafkaConsumer("cell", bootstrap_servers=bs, auto_offset_reset="earliest",
                                 consumer_timeout_ms=30000)
        try:
            seen = sorted(int(m.value) for _, m in zip(range(N), consumer))
        finally:
            consumer.close()
        assert seen == list(range(N))

        kinds = record_kinds(node)
        assert (2, 0) in kinds and (4, 0) in kinds  # TopicRecord, ConfigRecord: written by our controller
        assert any(key == 0 for key, _ in kinds)  # the broker's RegisterBrokerRecord
    finally:
        for b in brokers:
            b.close()
        node.stop()
