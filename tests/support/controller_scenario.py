"""One scripted admin sequence run by three Apache Kafka 4.3.1 brokers against a
1-voter controller quorum, Kafka's own or ours (issue 11 f, the differential test).

The sequence (``run``): the brokers register and unfence (one of them, ``JBOD``, with
two log directories, so it assigns its new replicas with AssignReplicasToDirs); one CreateTopics makes a
placed RF-3 topic with more partitions than brokers and ``min.insync.replicas=2``, a
placed RF-1 topic with configs, a manually placed RF-3 topic with
``min.insync.replicas=3`` (fencing fills its ELR) and a topic that is deleted next;
a consumer group makes the broker create ``__consumer_offsets`` (plain CreateTopics)
and an idempotent producer auto-creates a topic (Envelope, -1/-1) and asks for a
producer id block; the broker leading most partitions is killed with SIGKILL; once
it is fenced and its leaderships moved it is restarted, and the test waits until it
is unfenced and back in every ISR; ``extended``: CreatePartitions (placed and manual)
a preferred leader election of every partition and ``kafka-configs`` changes
(IncrementalAlterConfigs: a topic's retention and ``min.insync.replicas``, with its
ClearElrRecord; a cluster-wide broker default); optionally another broker then
shuts down (SIGTERM: controlled shutdown). The controller is stopped and its metadata log
segments are dumped with the pinned distribution's ``kafka-dump-log
--cluster-metadata-decoder``.

The broker ids that play a part are returned as roles (``victim``, ``shutdown``) so
the normaliser (``tests/support/metadata_dump.py``) can name them the same way in
both runs."""
from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.kraft_nodes import OurNode, wait_for
from tools.kafka_dist.broker import BROKER_ID_BASE, KafkaBroker, bootstrap_servers
from tools.kafka_dist.controller import KafkaController, run_tool
from tools.kafka_dist.probe import describe_cluster

BROKERS = [BROKER_ID_BASE, BROKER_ID_BASE + 1, BROKER_ID_BASE + 2]
SESSION_MS = 3000  # broker.session.timeout.ms on the controller
HEARTBEAT_MS = 500  # broker.heartbeat.interval.ms on the brokers
B0, B1, B2 = BROKERS
# The manual topic: B1 leads 6 of its 8 partitions, so B1 leads the most partitions
# of the cluster whatever the random placement of the others (at most 2+2+2+1 more
# for any broker; at least 1+1+1 more for each): B1 is the victim. B0 leaves last.
MANUAL = {0: [B1, B2, B0], 1: [B1, B0, B2], 2: [B2, B1, B0], 3: [B0, B1, B2],
          4: [B1, B2, B0], 5: [B1, B0, B2], 6: [B1, B2, B0], 7: [B1, B0, B2]}
VICTIM, LEAVING = B1, B0
JBOD = B2  # the broker with two log directories
TOPICS = {
    "placed3": {"num_partitions": 5, "replication_factor": 3, "configs": {"min.insync.replicas": "2"}},
    "placed1": {"num_partitions": 4, "replication_factor": 1,
                "configs": {"retention.ms": "3600000", "cleanup.policy": "compact"}},
    "manual": {"assignments": MANUAL, "configs": {"min.insync.replicas": "3"}},
    "doomed": {"num_partitions": 2, "replication_factor": 2},
}
AUTO_TOPIC = "auto-made"


@dataclass
class Outcome:
    dump: str  # kafka-dump-log --cluster-metadata-decoder of every segment, in order
    roles: dict = field(default_factory=dict)  # role -> broker id
    seconds: float = 0.0


class KafkaSide:
    """A 1-voter quorum of Kafka's controller."""

    def __init__(self, workdir: Path, cluster_id: str) -> None:
        self.ctl = KafkaController(workdir / "controller", node_id=1, cluster_id=cluster_id,
                                   overrides={"broker.session.timeout.ms": str(SESSION_MS)})
        self.bootstrap = self.ctl.bootstrap

    def start(self) -> None:
        self.ctl.start_ready()

    def stop(self) -> None:
        self.ctl.stop()

    def close(self) -> None:
        self.ctl.close()

    def segments(self) -> list[Path]:
        return sorted((self.ctl.data_dir / "__cluster_metadata-0").glob("*.log"))


class OurSide:
    """A 1-voter quorum of ours."""

    def __init__(self, workdir: Path, cluster_id: str) -> None:
        (workdir / "controller").mkdir(parents=True)
        self.node = OurNode(workdir / "controller", node_id=1,
                            extra=(f"broker.session.timeout.ms={SESSION_MS}",))
        self.cluster_id = cluster_id
        self.bootstrap = self.node.bootstrap

    def start(self) -> None:
        self.node.format_with_ours(self.cluster_id)
        self.node.start()
        self.node.wait_leader()

    def stop(self) -> None:
        self.node.stop()

    def close(self) -> None:
        self.node.kill()

    def segments(self) -> list[Path]:
        return sorted((self.node.data / "__cluster_metadata-0").glob("*.log"))


def dump_segments(paths: list[Path]) -> str:
    return "".join(run_tool("kafka-dump-log", "--cluster-metadata-decoder", "--files", str(p),
                            timeout=120).stdout for p in paths)


def _start_brokers(workdir: Path, cluster_id: str, controllers: str) -> list[KafkaBroker]:
    brokers = []
    for i, b in enumerate(BROKERS):
        overrides = {"broker.heartbeat.interval.ms": str(HEARTBEAT_MS)}
        if b == JBOD:  # two log dirs: its replicas are placed by AssignReplicasToDirs
            overrides["log.dirs"] = ",".join(str(workdir / f"broker{i}" / d) for d in ("d1", "d2"))
        brokers.append(KafkaBroker(workdir / f"broker{i}", b, cluster_id, controllers, replication=3,
                                   overrides=overrides))
    errors: list[BaseException] = []

    def fmt(b):
        try:
            b.format()
        except BaseException as exc:  # reported below
            errors.append(exc)
    threads = [threading.Thread(target=fmt, args=(b,)) for b in brokers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    if errors:
        raise errors[0]
    for b in brokers:
        b.start()
    return brokers


def _unfenced(broker) -> list[int]:
    from tests.support.kraft_nodes import _roundtrip
    from wire.messages import DescribeClusterRequest
    r = _roundtrip(broker.port, DescribeClusterRequest(endpoint_type=1, include_fenced_brokers=True), 2)
    return sorted(b.broker_id for b in r.brokers if not b.is_fenced) if r.error_code == 0 else []


def _partitions(admin) -> dict[tuple[str, int], dict]:
    """Every partition's leader, replicas and ISR. A request that a stopping broker drops
    (kafka-python's admin may pick any broker) is raised as ``ConnectionError``, which
    ``wait_for`` takes as "not yet"."""
    from kafka.errors import KafkaTimeoutError, RetriableError
    try:
        topics = admin.describe_topics()
    except (RetriableError, KafkaTimeoutError) as exc:
        raise ConnectionError(f"describe_topics: {exc!r}") from exc
    out = {}
    for t in topics:
        for p in t["partitions"]:
            out[(t["name"], p["partition_index"])] = {
                "leader": p["leader_id"], "replicas": p["replica_nodes"], "isr": p["isr_nodes"]}
    return out


def _alter_configs(bs: str) -> None:
    """IncrementalAlterConfigs through a broker (Envelope): a topic's configs, one a
    min.insync.replicas change, then a cluster-wide broker default."""
    run_tool("kafka-configs", "--bootstrap-server", bs, "--alter", "--entity-type", "topics",
             "--entity-name", "placed1", "--add-config", "retention.ms=3600000,min.insync.replicas=1",
             timeout=120)
    run_tool("kafka-configs", "--bootstrap-server", bs, "--alter", "--entity-type", "topics",
             "--entity-name", "placed1", "--delete-config", "retention.ms", timeout=120)
    run_tool("kafka-configs", "--bootstrap-server", bs, "--alter", "--entity-type", "brokers",
             "--entity-default", "--add-config", "log.retention.ms=7200000", timeout=120)


def run(side, workdir: Path, cluster_id: str, controlled_shutdown: bool = False,
        extended: bool = False) -> Outcome:
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.admin import KafkaAdminClient
    t0 = time.monotonic()
    brokers: list[KafkaBroker] = []
    admin = None
    try:
        side.start()
        brokers = _start_brokers(workdir, cluster_id, side.bootstrap)
        by_id = {b.node_id: b for b in brokers}
        wait_for(lambda: _unfenced(brokers[0]) == BROKERS, 120,
                 "three unfenced brokers\n" + brokers[0].log_tail(20))
        bs = bootstrap_servers(brokers)
        admin = KafkaAdminClient(bootstrap_servers=bs, request_timeout_ms=30000)
        admin.create_topics(TOPICS)
        wait_for(lambda: {"placed3", "placed1", "manual", "doomed"} <= {t for t, _ in _partitions(admin)},
                 60, "the new topics in the brokers' metadata")
        admin.delete_topics(["doomed"])
        wait_for(lambda: "doomed" not in {t for t, _ in _partitions(admin)}, 60, "the deleted topic gone")

        producer = KafkaProducer(bootstrap_servers=bs, enable_idempotence=True, acks="all")
        producer.send(AUTO_TOPIC, b"first").get(60)  # Envelope(CreateTopics -1/-1), AllocateProducerIds
        producer.close(10)
        consumer = KafkaConsumer(AUTO_TOPIC, bootstrap_servers=bs, group_id="diff",
                                 auto_offset_reset="earliest", consumer_timeout_ms=30000)
        try:
            next(iter(consumer))  # FindCoordinator: __consumer_offsets (plain CreateTopics)
        finally:
            consumer.close()

        parts = _partitions(admin)
        leaders = Counter(p["leader"] for p in parts.values())
        victim_id = max(BROKERS, key=lambda b: leaders[b])
        assert victim_id == VICTIM, leaders
        victim = by_id[victim_id]
        victim.stop(graceful=False)  # SIGKILL
        others = [b for b in brokers if b is not victim]

        def moved():
            if victim_id in _unfenced(others[0]):
                return False
            ps = _partitions(admin).values()
            return all(p["leader"] != victim_id and victim_id not in p["isr"] for p in ps)
        wait_for(moved, 60, "the victim fenced and its leaderships moved")

        victim.start()  # same log dir, a new incarnation

        def rejoined():
            if _unfenced(others[0]) != BROKERS:
                return False
            ps = _partitions(admin).values()
            return all(p["leader"] >= 0 and sorted(p["isr"]) == sorted(p["replicas"]) for p in ps)
        wait_for(rejoined, 120, "the victim unfenced and back in every ISR")
        roles = {"victim": victim_id}
        if extended:
            # CreatePartitions (placed, and manual), then a preferred election of all
            admin.create_partitions({"placed3": 7, "manual": {"count": len(MANUAL) + 1,
                                                              "assignments": [[B1, B0, B2]]}})
            wait_for(lambda: sum(1 for t, _ in _partitions(admin) if t in ("placed3", "manual"))
                     == 7 + len(MANUAL) + 1, 60, "the new partitions")
            wait_for(lambda: all(p["leader"] >= 0 and sorted(p["isr"]) == sorted(p["replicas"])
                                 for p in _partitions(admin).values()), 60, "the new partitions in sync")
            admin.elect_leaders(0, None, raise_errors=False)
            wait_for(lambda: all(p["leader"] == p["replicas"][0] for p in _partitions(admin).values()),
                     60, "every partition led by its preferred replica")
            _alter_configs(bs)
        if controlled_shutdown:
            leaving = LEAVING
            by_id[leaving].stop(graceful=True, timeout=60)  # SIGTERM: controlled shutdown
            roles["shutdown"] = leaving
            rest = next(b for b in brokers if b.node_id not in (leaving,))

            def gone():
                if leaving in _unfenced(rest):
                    return False
                return all(p["leader"] != leaving for p in _partitions(admin).values())
            wait_for(gone, 60, "the shut-down broker fenced and leading nothing")
        admin.close()
        admin = None
        side.stop()
        return Outcome(dump_segments(side.segments()), roles, time.monotonic() - t0)
    finally:
        if admin is not None:
            admin.close()
        for b in brokers:
            b.close()
        side.close()
