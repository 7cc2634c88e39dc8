"""The version matrix, cell 4 (issue 38), in ``make test-slow``: a rolling upgrade of the
brokers on a controller of ours, from the oldest release of the matrix to the newest.

Three Apache Kafka 4.0.2 brokers on our node, formatted at 4.0's metadata.version
(4.0-IV3, 25); a topic of 3 partitions, RF 3, ``min.insync.replicas=2``; Kafka's
VerifiableProducer (acks=all, idempotent) and VerifiableConsumer (4.0.2's tools) run
throughout while each broker is shut down (SIGTERM: a controlled shutdown) and started
again as 4.4.0 on the same log dir, one at a time, the next only once it has registered
again, is unfenced and is back in every ISR. Then 4.4.0's ``kafka-features upgrade
--release-version 4.4`` through a broker finalizes metadata.version 33 (4.4-IV2) on our
controller, and two downgrades are tried (``--release-version 4.3``, and ``--unsafe
--metadata 4.3-IV0``). Every acknowledged message is consumed, at the offset it was
acknowledged at (``replication_run.check``).

The same feature commands then run on Kafka 4.4.0's own controller in the same state
(formatted at 4.0, one 4.4.0 broker): each answers as ours did (exit code, output, the
tool's error line), and the finalized levels end the same."""
from __future__ import annotations

import re
import time

import pytest

from tests.interop.test_kafka_brokers_serve_topic import unfenced_brokers
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import BROKER_ID_BASE, start_brokers
from tests.support.kraft_nodes import _roundtrip, wait_for
from tests.support.membership_cluster import first_error_line
from tests.support.replication_run import Cluster, check, create_topic, finish
from tests.support.verifiable import VerifiableConsumer, VerifiableProducer
from tools.kafka_dist import MATRIX
from tools.kafka_dist.controller import KafkaController, random_cluster_id, run_tool
from wire.messages import ApiVersionsRequest

pytestmark = [pytest.mark.java, pytest.mark.slow]
OLD, NEW = MATRIX[0], MATRIX[-1]  # 4.0.2, 4.4.0
OLD_RELEASE, RELEASE = "4.0", "4.4"  # their release names, as --release-version takes them
TOPIC = "rolling"
SESSION_MS = 6000
# What is run through a broker after the rolling restart, on ours and on Kafka's controller.
COMMANDS = (
    ("upgrade", "--release-version", RELEASE),
    ("downgrade", "--release-version", "4.3"),
    ("downgrade", "--unsafe", "--metadata", "4.3-IV0"),
)


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


def features(bs: str, *args: str) -> tuple[int, str, str]:
    """NEW's ``kafka-features --bootstrap-server``: (exit code, stdout, first error line)."""
    p = run_tool("kafka-features", "--bootstrap-server", bs, *args, version=NEW, check=False, timeout=120)
    return p.returncode, p.stdout.strip(), first_error_line(p.stderr)


def finalized(bs: str) -> dict[str, str]:
    """``kafka-features describe`` through a broker: feature -> finalized level."""
    code, out, err = features(bs, "describe")
    assert code == 0, err
    return dict(re.findall(r"Feature: (\S+)\s+SupportedMinVersion: \S+\s+SupportedMaxVersion: \S+\s+"
                           r"FinalizedVersionLevel: (\S+)", out))


def controller_finalized(port: int) -> dict[str, int]:
    """The finalized feature levels a controller's ApiVersions answers with."""
    r = _roundtrip(port, ApiVersionsRequest(client_software_name="rolling", client_software_version="1"), 3)
    return {f.name: f.max_version_level for f in r.finalized_features}


def _started_version(broker) -> str:
    """The release the broker's newest start-up logged (AppInfoParser's "Kafka version")."""
    return broker.log_text().rsplit("Kafka version: ", 1)[-1].split()[0]


@pytest.mark.timeout(1500)
def test_brokers_upgraded_one_by_one_from_4_0_to_4_4_lose_nothing(tmp_path):
    cluster = Cluster("ours", tmp_path, random_cluster_id(), SESSION_MS, version=OLD, release=OLD_RELEASE)
    node = cluster.meta
    producer = consumer = None
    try:
        before = controller_finalized(node.port)
        assert before["metadata.version"] == 25
        create_topic(cluster, TOPIC)
        work = tmp_path / "clients"
        work.mkdir()
        consumer = VerifiableConsumer(work, cluster.servers, TOPIC, group="rolling-group", version=OLD)
        producer = VerifiableProducer(work, cluster.servers, TOPIC, throughput=200, version=OLD)

        def produced_more(n: int, what: str) -> None:
            start = producer.num_acked()
            wait_for(lambda: producer.alive() and producer.num_acked() >= start + n, 120,
                     f"{n} more acknowledged messages {what}", interval=0.5)

        def started():
            consumer.poll()
            assert producer.alive() and consumer.alive()
            return producer.num_acked() >= 200 and consumer.consumed
        wait_for(started, 120, "the producer's and the consumer's first messages", interval=0.5)

        took = {}
        for broker in cluster.brokers:
            t0 = time.monotonic()
            assert _started_version(broker) == OLD
            epoch = cluster.image().brokers.get(broker.node_id).epoch
            broker.stop(graceful=True, timeout=60)
            produced_more(50, f"with broker {broker.node_id} down")
            broker.version = NEW
            broker.start()
            wait_for(lambda: any(b.broker_id == broker.node_id and b.epoch > epoch and not b.fenced
                                 for b in cluster.image().brokers),
                     120, f"broker {broker.node_id} registered again as {NEW} and unfenced", interval=0.5)
            cluster.wait_healthy(TOPIC, 120)
            assert _started_version(broker) == NEW
            took[broker.node_id] = round(time.monotonic() - t0, 1)
        print(f"\n[rolling] each broker's restart as {NEW}, until every ISR was full again (s): {took}")
        produced_more(100, f"with every broker on {NEW}")

        ours = [features(cluster.servers, *COMMANDS[0])]
        code, out, err = ours[0]
        assert code == 0 and "metadata.version was upgraded to 33." in out, (out, err)
        assert controller_finalized(node.port)["metadata.version"] == 33
        wait_for(lambda: finalized(cluster.servers)["metadata.version"] == "4.4-IV2", 60,
                 "metadata.version 4.4-IV2 on the brokers")
        produced_more(100, "after the features upgrade")
        ours += [features(cluster.servers, *c) for c in COMMANDS[1:]]
        after = controller_finalized(node.port)
        produced_more(50, "after the downgrades")

        found = finish(producer, consumer, 120)
        check(found)
        assert len(found["acked"]) >= 1000
    finally:
        for tool in (producer, consumer):
            if tool is not None:
                tool.close()
        cluster.close()

    # The same commands on Kafka 4.4.0's own controller, formatted at 4.0 as ours was.
    ctl = KafkaController(tmp_path / "kafka", node_id=1, version=NEW)
    brokers = []
    try:
        ctl.format(["--release-version", OLD_RELEASE])
        ctl.start_ready(timeout=120)
        brokers = start_brokers(tmp_path / "kafka", 1, ctl.cluster_id, ctl.bootstrap, version=NEW)
        kbs = brokers[0].bootstrap
        wait_for(lambda: unfenced_brokers(brokers[0].port) == [BROKER_ID_BASE], 120, "Kafka's broker unfenced",
                 interval=0.5)
        assert controller_finalized(ctl.port) == before  # the same state before the commands
        theirs = [features(kbs, *c) for c in COMMANDS]
        for command, (code, out, err) in zip(COMMANDS, theirs):
            print(f"[rolling] Kafka 4.4's kafka-features {' '.join(command)}: exit {code}, "
                  f"{(out.splitlines() or [''])[0]!r} {err!r}")
        for command, mine, kafka in zip(COMMANDS, ours, theirs):
            assert mine == kafka, f"kafka-features {' '.join(command)}: ours {mine}, Kafka 4.4's {kafka}"
        wait_for(lambda: controller_finalized(ctl.port) == after, 30,
                 "the same finalized levels on Kafka's controller")
    finally:
        for b in brokers:
            b.close()
        ctl.close()
