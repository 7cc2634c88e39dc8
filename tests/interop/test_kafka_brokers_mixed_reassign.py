"""A reassignment across a change of controller (issue 26): two controllers of ours and
one Apache Kafka 4.3.1 controller in one quorum, four Kafka brokers. A reassignment
started with ``kafka-reassign-partitions`` under one kind of controller is completed
by the other kind, both ways:

1. one of ours leads; a move onto broker 103 starts while 103 is down (killed, still
   registered and unfenced: the tool accepts it, it cannot join the ISR);
2. leadership moves to Kafka's controller (ours paused); 103 restarts, joins the ISR
   through AlterPartition to Kafka's controller, which completes our reassignment;
3. the same the other way: Kafka's controller starts a move onto a killed broker 100,
   leadership comes back to ours, 100 restarts and ours completes Kafka's reassignment.

Each side replays the other's AddingReplicas/RemovingReplicas (Kafka's controller could
not complete our move otherwise): our images agree with the tool's ``--verify`` and
hold no record they could not read. Nothing is lost: records produced (acks=all)
before each move and while it is in flight are all consumed at the end, and nothing
else is.
"""
from __future__ import annotations

import json

import pytest

from tests.interop.test_kafka_brokers_mixed_quorum import image_of, mixed_quorum, pause, start_mixed
from tests.interop.test_kafka_brokers_reassign import consume
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import bootstrap_servers, start_brokers
from tests.support.kraft_nodes import agreed_leader, wait_for
from tools.kafka_dist.controller import run_tool

pytestmark = [pytest.mark.java, pytest.mark.slow]
CLUSTER = "TWl4ZWRSZWFzc2lnblRlc3Q"
BROKERS = [100, 101, 102, 103]
SESSION_MS = 30000  # a killed broker stays unfenced while the tool starts the move


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


def _move_leadership(nodes, leader, to_kafka: bool):
    ctl = nodes[-1]
    for _ in range(8):
        if (leader is ctl) == to_kafka:
            return leader
        pause(leader.proc, 4.0)
        leader, _ = agreed_leader(nodes, timeout=60)
    raise AssertionError(f"leadership never moved {'to' if to_kafka else 'from'} Kafka's controller")


def _plan(tmp, name, moves):
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "mixed", "partition": p, "replicas": r, "log_dirs": ["any"] * len(r)} for p, r in moves]}))
    return str(path)


def _produce(servers, tag: str, n: int = 200) -> set[bytes]:
    """``n`` records tagged ``tag``, each acknowledged by every ISR member (acks=all)."""
    from kafka import KafkaProducer
    values = [b"%s-%04d" % (tag.encode(), i) for i in range(n)]
    producer = KafkaProducer(bootstrap_servers=servers, acks="all", retries=20, linger_ms=5)
    try:
        for f in [producer.send("mixed", value=v) for v in values]:
            f.get(timeout=60)
    finally:
        producer.close(10)
    return set(values)


def _tool(servers, *args):
    return run_tool("kafka-reassign-partitions", "--bootstrap-server", servers, *args, timeout=120).stdout


def test_a_reassignment_started_by_one_kind_of_controller_is_completed_by_the_other(tmp_path):
    ours, ctl, quorum = mixed_quorum(tmp_path, CLUSTER, extra=(f"broker.session.timeout.ms={SESSION_MS}",
                                                               "kraft.broker.fast.fencing.enable=false"),
                                     kafka_overrides={"broker.session.timeout.ms": str(SESSION_MS)})
    nodes = [*ours, ctl]
    brokers = []
    try:
        leader = start_mixed(ours, ctl)
        brokers = start_brokers(tmp_path, 4, CLUSTER, quorum,
                                overrides={"initial.broker.registration.timeout.ms": "180000"})
        by_id = {b.node_id: b for b in brokers}
        wait_for(lambda: sorted(b.broker_id for b in image_of(ours[0]).brokers if not b.fenced) == BROKERS,
                 120, "four unfenced brokers")
        bs = bootstrap_servers(brokers)
        run_tool("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", "mixed",
                 "--replica-assignment", "100:101:102", timeout=120)

        def state(node):
            p = image_of(node).topics.by_name["mixed"].partitions[0]
            return list(p.replicas), sorted(p.isr), list(p.adding_replicas or ()), list(p.removing_replicas or ())

        sent = set()
        for starter_is_kafka, victim, target in ((False, 103, [101, 102, 103]), (True, 100, [102, 103, 100])):
            leader = _move_leadership(nodes, leader, to_kafka=starter_is_kafka)
            live = bootstrap_servers([b for b in brokers if b.node_id != victim])
            sent |= _produce(live, f"before-{victim}")
            old_epoch = image_of(ours[0]).brokers.get(victim).epoch
            by_id[victim].stop(graceful=False)
            path = _plan(tmp_path, f"to-{victim}", [(0, target)])
            _tool(live, "--execute", "--reassignment-json-file", path)
            assert "still in progress" in _tool(live, "--verify", "--preserve-throttles",
                                                "--reassignment-json-file", path)
            wait_for(lambda: state(ours[0])[2] == [victim], 30, "our follower replaying the move")
            sent |= _produce(live, f"in-flight-{victim}")
            leader = _move_leadership(nodes, leader, to_kafka=not starter_is_kafka)
            by_id[victim].start()
            wait_for(lambda: "is completed" in _tool(bs, "--verify", "--preserve-throttles",
                                                     "--reassignment-json-file", path),
                     240, f"the move onto {victim} completed by the other controller", interval=2.0)
            for n in ours:
                wait_for(lambda n=n: state(n) == (target, sorted(target), [], []), 60,
                         f"node {n.node_id} replaying the completion")
            # The restarted broker may complete the move before it is registered: its
            # registration is refused (DUPLICATE_BROKER_REGISTRATION) until the killed
            # incarnation's session expires, and only then does it open its listener.
            wait_for(lambda: (lambda b: b.epoch > old_epoch and not b.fenced)(image_of(ours[0]).brokers.get(victim)),
                     SESSION_MS / 1000 + 60, f"broker {victim}'s new incarnation registered and unfenced")
        for n in ours:
            img = image_of(n)
            assert img.bad_records == 0 and img.unknown_records == 0
        seen = consume(bs, "mixed", sent)
        assert seen == sent, f"{len(seen - sent)} record(s) consumed that were never sent"
    finally:
        for b in brokers:
            b.close()
        ctl.close()
        for n in ours:
            n.kill()
