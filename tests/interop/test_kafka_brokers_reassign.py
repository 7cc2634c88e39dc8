"""Partition reassignment with Apache Kafka 4.3.1's own tool and brokers on a controller
of ours (issue 26): four real brokers, ``kafka-reassign-partitions --bootstrap-server``
(the brokers forward AlterPartitionReassignments and ListPartitionReassignments to us in
an Envelope).

* ``--generate`` then ``--execute`` moving every replica off one broker, ``--verify``
  until complete: the new replicas join the ISR through AlterPartition, we complete the
  reassignment, and every record produced before is still consumed.
* A replication-factor change 3→2 and 2→3, and the same refused with
  ``--disallow-replication-factor-change`` (AllowReplicationFactorChange=false, v1).
* ``kafka-broker-api-versions`` through a broker: AlterPartitionReassignments 0-1 and
  ListPartitionReassignments 0 usable (a broker advertises a forwardable API only as far
  as its controller does).
* ``--cancel`` of a reassignment kept in flight by a target broker killed with SIGKILL
  (registered and unfenced until its session expires, so the tool accepts it, but it
  never fetches and so never joins the ISR); ``--list`` through a broker and straight to
  our controller listener (``--bootstrap-controller``) print the same.

The tool's ``--throttle`` sets ``*.replication.throttled.*`` configs through
IncrementalAlterConfigs, which this branch does not serve, so no step here throttles
and ``--verify``/``--cancel`` run with ``--preserve-throttles`` (they would otherwise
clear throttles the same way).

One cluster for the module; the cancel test kills a broker, so it runs last. The slow
variant is Kafka's reassignment system test on the same cluster.
"""
from __future__ import annotations

import json

import pytest

from tests.interop.test_kafka_broker_failure import image_of
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import bootstrap_servers, start_brokers
from tests.support.kraft_nodes import OurNode, wait_for
from tools.kafka_dist.controller import run_tool

pytestmark = [pytest.mark.java]
CLUSTER = "UmVhc3NpZ25PdXJRdW9ydW0"
BROKERS = [100, 101, 102, 103]
SESSION_MS = 60000  # the broker the cancel test kills stays unfenced meanwhile


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    need_jdk()
    tmp = tmp_path_factory.mktemp("reassign")
    (tmp / "ours").mkdir()
    # fast fencing off: a killed target must stay registered and unfenced until its
    # session expires (the tool refuses unknown brokers; a paused one would stall the
    # tool's admin client instead), as on Kafka's controllers
    node = OurNode(tmp / "ours", node_id=1, extra=(f"broker.session.timeout.ms={SESSION_MS}",
                                                   "kraft.broker.fast.fencing.enable=false"))
    node.format_with_ours(CLUSTER)
    node.start()
    brokers = []
    try:
        node.wait_leader()
        brokers = start_brokers(tmp, 4, CLUSTER, node.bootstrap,
                                overrides={"initial.broker.registration.timeout.ms": "180000"})
        wait_for(lambda: sorted(b.broker_id for b in image_of(node).brokers if not b.fenced) == BROKERS,
                 120, "four unfenced brokers")
        yield node, brokers, bootstrap_servers(brokers), tmp
    finally:
        for b in brokers:
            b.close()
        node.stop()


def tool(bs, *args, check=True, timeout=120):
    return run_tool("kafka-reassign-partitions", "--bootstrap-server", bs, *args, check=check, timeout=timeout)


def create(bs, name, partitions=None, rf=None, assignment=None):
    args = ["--bootstrap-server", bs, "--create", "--topic", name]
    if assignment is not None:
        args += ["--replica-assignment", ",".join(":".join(map(str, r)) for r in assignment)]
    else:
        args += ["--partitions", str(partitions), "--replication-factor", str(rf)]
    run_tool("kafka-topics", *args, timeout=120)


def partitions(node, name):
    return image_of(node).topics.by_name[name].partitions


def write_plan(tmp, name, plan):
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r, "log_dirs": ["any"] * len(r)} for t, p, r in plan]}))
    return str(path)


def verify_until_complete(bs, path, parts, timeout=90):
    def done():
        out = tool(bs, "--verify", "--preserve-throttles", "--reassignment-json-file", path).stdout
        return out if out.count("is completed") == parts else None
    return wait_for(done, timeout, "kafka-reassign-partitions --verify: every partition completed", interval=1.0)


def produce(bs, topic, n):
    from kafka import KafkaProducer
    producer = KafkaProducer(bootstrap_servers=bs, acks="all", retries=20, linger_ms=5)
    try:
        for f in [producer.send(topic, key=b"k%d" % i, value=b"v%06d" % i) for i in range(n)]:
            f.get(timeout=60)
    finally:
        producer.close(10)
    return {b"v%06d" % i for i in range(n)}


def consume(bs, topic, want):
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bs, enable_auto_commit=False, auto_offset_reset="earliest")
    try:
        parts = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic)]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        seen = set()

        def all_seen():
            for records in consumer.poll(timeout_ms=500).values():
                seen.update(r.value for r in records)
            return want <= seen
        wait_for(all_seen, 60, f"every record of {topic} consumed", interval=0)
        return seen
    finally:
        consumer.close()


def generate(bs, tmp, topic, broker_list):
    """``--generate``'s proposal: ``[(topic, partition, replicas)]``."""
    topics = tmp / f"{topic}-topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    out = tool(bs, "--generate", "--topics-to-move-json-file", str(topics), "--broker-list", broker_list).stdout
    assert "Current partition replica assignment" in out
    proposed = json.loads(out.split("Proposed partition reassignment configuration")[1].strip())
    return [(p["topic"], p["partition"], p["replicas"]) for p in proposed["partitions"]]


def check_assigned(node, plan):
    """Every partition of ``plan`` on its target replicas, all in sync, nothing running."""
    for topic, pid, replicas in plan:
        p = partitions(node, topic)[pid]
        assert list(p.replicas) == replicas and sorted(p.isr) == sorted(replicas), (topic, pid, p)
        assert not p.adding_replicas and not p.removing_replicas and p.leader in replicas


def test_generate_execute_verify_moves_every_replica_off_a_broker(cluster):
    node, brokers, bs, tmp = cluster
    create(bs, "moves", partitions=4, rf=3)
    sent = produce(bs, "moves", 400)
    plan = generate(bs, tmp, "moves", "101,102,103")
    assert len(plan) == 4 and all(100 not in r and len(r) == 3 for _, _, r in plan)
    path = write_plan(tmp, "moves", plan)
    out = tool(bs, "--execute", "--reassignment-json-file", path).stdout
    assert "Successfully started partition reassignments for moves-0,moves-1,moves-2,moves-3" in out
    verify_until_complete(bs, path, 4)
    check_assigned(node, plan)
    assert tool(bs, "--list").stdout.strip().endswith("No partition reassignments found.")
    assert sent <= consume(bs, "moves", sent)


def test_brokers_advertise_the_reassignment_apis_as_their_controller_does(cluster):
    """A 4.3.1 broker advertises a forwardable API only as far as its controller does."""
    node, brokers, bs, tmp = cluster
    out = run_tool("kafka-broker-api-versions", "--bootstrap-server", brokers[0].bootstrap, timeout=120).stdout
    lines = [line.strip().rstrip(",") for line in out.splitlines()]
    assert "AlterPartitionReassignments(45): 0 to 1 [usable: 1]" in lines, out
    assert "ListPartitionReassignments(46): 0 [usable: 0]" in lines, out


@pytest.mark.slow  # a variant of generate/execute/verify
def test_replication_factor_change_down_and_up_and_its_refusal(cluster):
    node, brokers, bs, tmp = cluster
    create(bs, "rf", assignment=[[100, 101, 102]])
    sent = produce(bs, "rf", 100)
    down = write_plan(tmp, "rf-down", [("rf", 0, [101, 102])])
    refused = tool(bs, "--execute", "--disallow-replication-factor-change", "--reassignment-json-file", down,
                   check=False)
    assert refused.returncode != 0
    assert "The replication factor is changed from 3 to 2" in refused.stdout + refused.stderr
    assert list(partitions(node, "rf")[0].replicas) == [100, 101, 102]
    tool(bs, "--execute", "--reassignment-json-file", down)
    verify_until_complete(bs, down, 1)
    p = partitions(node, "rf")[0]
    assert (list(p.replicas), sorted(p.isr)) == ([101, 102], [101, 102])
    up = write_plan(tmp, "rf-up", [("rf", 0, [101, 102, 103])])
    tool(bs, "--execute", "--reassignment-json-file", up)
    verify_until_complete(bs, up, 1)
    p = partitions(node, "rf")[0]
    assert (list(p.replicas), sorted(p.isr)) == ([101, 102, 103], [101, 102, 103])
    assert sent <= consume(bs, "rf", sent)


@pytest.mark.slow
def test_kafkas_reassignment_system_test_under_load(cluster):
    """Kafka's ``reassign_partitions_test.py`` reproduced: 20 partitions at RF 3 under an
    acks=all load; a generated plan over all four brokers; one moving everything off
    broker 100 while broker 102 is killed and restarted; a cancel of a move kept in
    flight by a killed target (100); a replication-factor change 3→2→3; nothing that
    was acknowledged is lost."""
    from tests.interop.test_kafka_broker_failure import Producer, _check_nothing_lost
    node, brokers, bs, tmp = cluster
    by_id = {b.node_id: b for b in brokers}
    run_tool("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", "events", "--partitions", "20",
             "--replication-factor", "3", "--config", "min.insync.replicas=2", timeout=120)
    producer = Producer(bs)
    producer.start()
    try:
        wait_for(lambda: producer.count() >= 200, 60, "the producer's first acks")
        # 1. plain
        plan = generate(bs, tmp, "events", "100,101,102,103")
        path = write_plan(tmp, "events-1", plan)
        tool(bs, "--execute", "--reassignment-json-file", path)
        verify_until_complete(bs, path, 20, timeout=300)
        check_assigned(node, plan)
        # 2. while bouncing a broker (it re-registers once its old session is over)
        plan = generate(bs, tmp, "events", "101,102,103")
        path = write_plan(tmp, "events-2", plan)
        tool(bs, "--execute", "--reassignment-json-file", path)
        by_id[102].stop(graceful=False)
        by_id[102].start()
        verify_until_complete(bs, path, 20, timeout=400)
        # 4.3.1 completes a move once the adding replicas are in sync: the restarted
        # broker may still be catching up, so wait for it to rejoin every ISR
        wait_for(lambda: all(sorted(p.isr) == sorted(p.replicas)
                             for p in partitions(node, "events").values()), 180, "broker 102 back in every ISR")
        check_assigned(node, plan)
        before = producer.count()
        wait_for(lambda: producer.count() >= before + 200, 120, "the producer continuing")
        # 3. cancel: broker 100 (no replicas left) killed, a move onto it stays in flight
        old_epoch = image_of(node).brokers.get(100).epoch
        by_id[100].stop(graceful=False)
        live = bootstrap_servers([b for b in brokers if b.node_id != 100])
        current = list(partitions(node, "events")[0].replicas)
        path = write_plan(tmp, "events-3", [("events", 0, current[:2] + [100])])
        tool(live, "--execute", "--reassignment-json-file", path)
        assert "events-0: replicas: " in tool(live, "--list").stdout
        tool(live, "--cancel", "--preserve-throttles", "--reassignment-json-file", path)
        p = partitions(node, "events")[0]
        assert list(p.replicas) == current and not p.adding_replicas and not p.removing_replicas
        by_id[100].start()
        # back = its new incarnation registered and unfenced (the killed one's session may
        # not have expired yet: it is still unfenced then, which proves nothing)
        wait_for(lambda: (lambda b: b.epoch > old_epoch and not b.fenced)(image_of(node).brokers.get(100)),
                 180, "broker 100 re-registered and unfenced")
        # 4. replication factor 3 -> 2 -> 3
        down = write_plan(tmp, "events-4", [("events", 1, [101, 102])])
        tool(bs, "--execute", "--reassignment-json-file", down)
        verify_until_complete(bs, down, 1)
        up = write_plan(tmp, "events-5", [("events", 1, [101, 102, 100])])
        tool(bs, "--execute", "--reassignment-json-file", up)
        verify_until_complete(bs, up, 1, timeout=120)
        check_assigned(node, [("events", 1, [101, 102, 100])])
    finally:
        producer.stop.set()
        producer.join(90)
    _check_nothing_lost(producer, bs)


@pytest.mark.slow  # a variant of generate/execute/verify
def test_cancel_an_in_flight_reassignment(cluster):
    node, brokers, bs, tmp = cluster
    create(bs, "cancel", assignment=[[100, 101]])
    # Killed, broker 103 stays registered and unfenced until its session expires (the
    # tool's broker check passes) but it fetches nothing: it cannot join the ISR.
    gone = next(b for b in brokers if b.node_id == 103)
    gone.stop(graceful=False)
    bs = bootstrap_servers([b for b in brokers if b is not gone])
    assert not image_of(node).brokers.get(103).fenced
    path = write_plan(tmp, "cancel", [("cancel", 0, [100, 101, 103])])
    tool(bs, "--execute", "--reassignment-json-file", path)
    verify = tool(bs, "--verify", "--preserve-throttles", "--reassignment-json-file", path).stdout
    assert "Reassignment of partition cancel-0 is still in progress." in verify
    listed = tool(bs, "--list").stdout
    assert "cancel-0: replicas: 100,101,103. adding: 103." in listed.splitlines(), listed
    # straight to our controller listener too (no Envelope)
    direct = run_tool("kafka-reassign-partitions", "--bootstrap-controller", node.bootstrap, "--list",
                      timeout=120).stdout
    assert direct == listed
    p = partitions(node, "cancel")[0]
    assert (list(p.replicas), list(p.adding_replicas), sorted(p.isr)) == ([100, 101, 103], [103], [100, 101])
    out = tool(bs, "--cancel", "--preserve-throttles", "--reassignment-json-file", path).stdout
    assert "Successfully cancelled partition reassignment for: cancel-0" in out.splitlines()
    p = partitions(node, "cancel")[0]
    assert (list(p.replicas), sorted(p.isr)) == ([100, 101], [100, 101])
    assert not p.adding_replicas and not p.removing_replicas
    assert tool(bs, "--list").stdout.strip().endswith("No partition reassignments found.")
