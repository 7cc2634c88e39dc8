"""Kafka's replication system test (``tests/kafkatest/tests/core/replication_test.py``),
reproduced on three Apache Kafka brokers (the default release unless ``Cluster`` names
another) over a controller quorum, ours or Kafka's: a topic of 3 partitions, RF 3,
``min.insync.replicas=2``; Kafka's VerifiableProducer (acks=all) and VerifiableConsumer
run throughout while the leader of partition 0 fails in one of Kafka's four ways:

* ``clean_shutdown``: SIGTERM (controlled shutdown), the broker stays down a while;
* ``hard_shutdown``: SIGKILL, down until its session expires and it is fenced;
* ``clean_bounce``: SIGTERM and restart, chasing the new leader, ``bounces`` times;
* ``hard_bounce``: SIGKILL and restart at once, chasing the new leader, ``bounces`` times.

Kafka's test ends each run with the failed broker down; here the broker comes back after
each failure so that one cluster serves them all, and before the next one every broker
is unfenced and every ISR full again. What the controller did is read from its metadata
log (the same replay for both kinds of quorum)."""
from __future__ import annotations

import logging
import time
from pathlib import Path
from types import SimpleNamespace

from tests.interop.test_kafka_broker_failure import image_of
from tests.support.kafka_brokers import bootstrap_servers, start_brokers
from tests.support.kraft_nodes import OurNode, agreed_leader, make_quorum, wait_for
from tests.support.verifiable import VerifiableConsumer, VerifiableProducer
from tools.kafka_dist.controller import KafkaController, run_tool

log = logging.getLogger(__name__)
BROKERS = [100, 101, 102]
FAILURES = ("clean_shutdown", "hard_shutdown", "clean_bounce", "hard_bounce")


class Cluster:
    """A started quorum (``kind`` "ours", of ``controllers`` voters, or "kafka", of one) and
    three brokers of Kafka ``version`` (default: the default release); ``release`` is the
    metadata.version our nodes are formatted at (default: the default release's)."""

    def __init__(self, kind: str, tmp: Path, cluster_id: str, session_ms: int, controllers: int = 1,
                 version: str | None = None, release: str | None = None) -> None:
        self.kind, self.tmp, self.version = kind, Path(tmp), version
        self.brokers: list = []
        extra = {"broker.session.timeout.ms": str(session_ms)}
        if kind == "kafka":
            ctl = KafkaController(self.tmp / "controller", node_id=1, cluster_id=cluster_id, overrides=extra)
            ctl.start_ready()
            self.bootstrap, self.meta, self._stop = ctl.bootstrap, SimpleNamespace(data=ctl.data_dir), ctl.close
        else:
            self._ours(cluster_id, tuple(f"{k}={v}" for k, v in extra.items()), controllers, release)
        try:
            self.brokers = start_brokers(self.tmp, 3, cluster_id, self.bootstrap,
                                         overrides={"initial.broker.registration.timeout.ms": "180000"},
                                         version=version)
            self.wait_healthy(None, 120)
        except BaseException:
            self.close()
            raise
        self.servers = bootstrap_servers(self.brokers)

    def _ours(self, cluster_id: str, extra: tuple, controllers: int, release: str | None) -> None:
        (self.tmp / "controller").mkdir()
        if controllers == 1:
            nodes = [OurNode(self.tmp / "controller", node_id=1, extra=extra)]
            nodes[0].format_with_ours(cluster_id, release=release)
        else:
            flags = ("--release-version", release) if release else ()
            nodes = make_quorum(self.tmp / "controller", "dynamic", cluster_id, n=controllers, extra=extra,
                                flags=flags)
        self._stop = lambda: [n.stop() for n in nodes]
        for n in nodes:
            n.start()
        self.bootstrap = ",".join(n.bootstrap for n in nodes)
        self.meta, _ = agreed_leader(nodes)  # its log: what the active controller wrote

    def close(self) -> None:
        for b in self.brokers:
            b.close()
        self._stop()

    def image(self):
        return image_of(self.meta)

    def broker(self, broker_id: int):
        return next(b for b in self.brokers if b.node_id == broker_id)

    def leader(self, topic: str, partition: int = 0) -> int:
        return self.image().topics.by_name[topic].partitions[partition].leader

    def wait_healthy(self, topic: str | None, timeout: float) -> None:
        """Every broker registered and unfenced, every partition of ``topic`` led with a full ISR."""
        def healthy():
            img = self.image()
            if sorted(b.broker_id for b in img.brokers if not b.fenced) != BROKERS:
                return False
            if topic is None:
                return True
            parts = img.topics.by_name[topic].partitions.values()
            return all(p.leader >= 0 and sorted(p.isr) == BROKERS for p in parts)
        wait_for(healthy, timeout, f"every broker unfenced and every ISR of {topic} full", interval=0.5)


def create_topic(cluster: Cluster, topic: str) -> None:
    run_tool("kafka-topics", "--bootstrap-server", cluster.servers, "--create", "--topic", topic,
             "--partitions", "3", "--replication-factor", "3", "--config", "min.insync.replicas=2",
             timeout=120, version=cluster.version)
    cluster.wait_healthy(topic, 60)


def _moved_off(cluster: Cluster, topic: str, victim: int, clean: bool) -> None:
    """The victim fenced, in controlled shutdown if it shut down cleanly (not if killed), out
    of every ISR and leading nothing; nobody else fenced."""
    def moved():
        img = cluster.image()
        others = [b for b in img.brokers if b.broker_id != victim]
        assert not any(b.fenced for b in others), f"a live broker fenced: {others}"
        parts = img.topics.by_name[topic].partitions.values()
        gone = img.brokers.get(victim)
        return gone.fenced and gone.in_controlled_shutdown == clean and all(
            p.leader not in (victim, -1) and victim not in p.isr for p in parts)
    wait_for(moved, 60, f"broker {victim} fenced, out of every ISR, leading nothing", interval=0.5)


def _restart(cluster: Cluster, broker, epoch: int) -> None:
    """Started again on its log dir: registered anew (a later broker epoch) and unfenced."""
    broker.start()
    wait_for(lambda: any(b.broker_id == broker.node_id and b.epoch > epoch and not b.fenced
                         for b in cluster.image().brokers),
             120, f"broker {broker.node_id} registered again and unfenced", interval=0.5)


def fail(cluster: Cluster, topic: str, kind: str, producer: VerifiableProducer, bounces: int) -> list[int]:
    """One of Kafka's four failures of the leader of partition 0, then the broker back;
    the brokers failed, in order."""
    def produced_more(n):
        before = producer.num_acked()
        wait_for(lambda: producer.num_acked() >= before + n, 90,
                 f"{n} more acknowledged messages after {kind}", interval=0.5)

    victims = []
    for _ in range(1 if kind.endswith("shutdown") else bounces):
        victim = cluster.broker(cluster.leader(topic))
        epoch = cluster.image().brokers.get(victim.node_id).epoch
        victims.append(victim.node_id)
        victim.stop(graceful=kind.startswith("clean"), timeout=60)
        if kind.endswith("shutdown"):
            _moved_off(cluster, topic, victim.node_id, kind.startswith("clean"))
            produced_more(100)  # two replicas of three: min.insync.replicas holds, acks=all goes on
        _restart(cluster, victim, epoch)
    if kind.endswith("bounce"):
        produced_more(100)
    cluster.wait_healthy(topic, 120)
    return victims


def run(cluster: Cluster, topic: str, failures, *, throughput: int, bounces: int = 1,
        settle: int = 200) -> dict:
    """Produce and consume through ``failures``; the findings, checked by ``check``."""
    create_topic(cluster, topic)
    work = cluster.tmp / topic
    work.mkdir()
    consumer = VerifiableConsumer(work, cluster.servers, topic, group=f"{topic}-group", version=cluster.version)
    producer = VerifiableProducer(work, cluster.servers, topic, throughput, version=cluster.version)
    try:
        def started():
            consumer.poll()
            assert producer.alive() and consumer.alive()
            return producer.num_acked() >= settle and consumer.consumed
        wait_for(started, 90, "the producer's and the consumer's first messages", interval=0.5)
        t0 = time.monotonic()
        victims, took = [], {}
        for kind in failures:
            start = time.monotonic()
            victims += fail(cluster, topic, kind, producer, bounces)
            took[kind] = round(time.monotonic() - start, 1)
        log.info("%s quorum: failures took %s s", cluster.kind, took)
        failed_for = time.monotonic() - t0
        return {**finish(producer, consumer, 90), "failed_for": failed_for, "victims": victims, "took": took}
    finally:
        producer.close()
        consumer.close()


def finish(producer: VerifiableProducer, consumer: VerifiableConsumer, timeout: float) -> dict:
    """Stop the producer, wait until the consumer has every acknowledged message, stop it:
    the findings ``check`` reads."""
    assert producer.stop(), producer.stderr_tail()
    acked = dict(producer.acked)

    def caught_up():
        consumer.poll()
        return all(k in consumer.consumed for k in acked)
    wait_for(caught_up, timeout, "every acknowledged message consumed", interval=0.5)
    consumer.stop()
    tool_data = next(e for e in producer.events if e.get("name") == "tool_data")
    return {"acked": acked, "consumed": dict(consumer.consumed), "ranges": consumer.ranges,
            "summed": consumer.summed, "sent": tool_data["sent"], "errors": producer.errors}


def check(found: dict) -> None:
    """Kafka's validation: nothing acknowledged lost, nothing invented; and (idempotent,
    retrying for ``delivery.timeout.ms``) no send given up."""
    assert not found["errors"], f"sends given up: {found['errors'][:3]}"
    acked, consumed = found["acked"], found["consumed"]
    covered: dict[int, set[int]] = {}
    for p, lo, hi, _ in found["ranges"]:
        covered.setdefault(p, set()).update(range(lo, hi + 1))
    missing = [k for k in acked if k[1] not in covered.get(k[0], ())]
    assert not missing, f"{len(missing)} acknowledged messages outside every records_consumed range"
    wrong = {k: (v, consumed.get(k)) for k, v in acked.items() if consumed.get(k) != v}
    assert not wrong, f"{len(wrong)} acknowledged messages not consumed as sent: {list(wrong.items())[:5]}"
    sent = {str(i) for i in range(found["sent"])}
    invented = {k: v for k, v in consumed.items() if v not in sent}
    assert not invented, f"consumed values never sent: {list(invented.items())[:5]}"
    assert len(set(consumed.values())) == len(consumed), "one value at two offsets (a duplicate write)"
    assert found["summed"] >= len(consumed)
