"""``__cluster_metadata_control``-0 (the metadata log's control records as data at their
offsets) read by real Kafka clients from our node's client listener: kafka-python
(assign), kcat from Debian (``-C -p 0 -e``: partition EOF means the position reached
the high watermark across the gaps) and the Java console consumer of Kafka 4.3.1.

One standalone node, restarted once so that the log holds a second LeaderChange
(epoch 2) after data; what the clients read is compared with the control batches in
its segment files.
"""
from __future__ import annotations

import time

import pytest

from tests.support.jdk import need_jdk
from tests.interop.test_metadata_topic_clients import bootstrap, kcat
from tests.support.kraft_nodes import OurNode, _roundtrip, read_batches, wait_for
from tools.kafka_dist.controller import random_cluster_id, run_tool
from wire.messages import LeaderChangeMessage, ListOffsetsRequest
from wire.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsTopic
from wire.records import decode_batch
from wire.records.control import ControlRecordType

CONTROL = "__cluster_metadata_control"
NAMES = {ControlRecordType.LEADER_CHANGE: "LeaderChange", ControlRecordType.KRAFT_VERSION: "KRaftVersion",
         ControlRecordType.KRAFT_VOTERS: "Voters"}


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    n = OurNode(tmp_path_factory.mktemp("control"), extra=("metadata.max.idle.interval.ms=500",))
    n.format_with_ours(random_cluster_id())
    n.start()
    try:
        n.wait_leader()
        wait_for(lambda: latest(n) >= 6, 30, "a few NoOp records")
        n.stop()
        n.start()  # a second election: LeaderChange at epoch 2 after data
        wait_for(lambda: len(control_log(n, 10**9)) >= 2 and latest(n) > max(control_log(n, 10**9)) + 3,
                 30, "the second LeaderChange committed, data after it")
        yield n
    finally:
        n.stop()


def latest(node, topic: str = "__cluster_metadata") -> int:
    body = ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic(name=topic, partitions=[
        ListOffsetsPartition(partition_index=0, timestamp=-1)])])
    try:
        (p,) = _roundtrip(node.client_port, body, 9).topics[0].partitions
    except OSError:
        return -1
    return p.offset if p.error_code == 0 else -1


def control_log(node, end: int) -> dict[int, tuple[str, bytes]]:
    """{offset: (type name, value)} of every control record below ``end``, from the segments."""
    out = {}
    for raw in read_batches(node.data).values():
        batch, _ = decode_batch(raw)
        if batch.is_control:
            for r in batch.records:
                offset = batch.base_offset + r.offset_delta
                if offset < end:
                    out[offset] = (NAMES[ControlRecordType(int.from_bytes(r.key[2:4], "big"))], r.value)
    return out


def test_kafka_python_reads_control_records_up_to_the_high_watermark(node):
    from kafka import KafkaConsumer, TopicPartition
    tp = TopicPartition(CONTROL, 0)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap(node), enable_auto_commit=False,
                             consumer_timeout_ms=1000)
    try:
        assert CONTROL in consumer.topics()
        consumer.assign([tp])
        end = consumer.end_offsets([tp])[tp]
        assert consumer.beginning_offsets([tp])[tp] == 0
        consumer.seek(tp, 0)
        got = {}
        deadline = time.monotonic() + 30
        while consumer.position(tp) < end and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                got.update({r.offset: (r.key.decode(), r.value) for r in records})
        assert consumer.position(tp) >= end  # the gaps after the last control record are passed
    finally:
        consumer.close()
    want = control_log(node, end)
    assert {o: v for o, v in got.items() if o < end} == want
    leaders = [LeaderChangeMessage.decode(v, 0).leader_id for k, v in want.values() if k == "LeaderChange"]
    assert len(leaders) >= 2 and set(leaders) == {1}


def test_kcat_lists_and_reads_to_the_end(node):
    listing = kcat("-b", bootstrap(node), "-L")
    assert listing.returncode == 0, listing.stderr
    assert f'topic "{CONTROL}" with 1 partitions' in listing.stdout
    run = kcat("-b", bootstrap(node), "-C", "-t", CONTROL, "-p", "0", "-o", "beginning", "-e",
               "-f", "%o %k\n")
    assert run.returncode == 0, run.stderr  # -e: it reached the end of the partition
    got = [(int(o), k) for o, k in (line.split() for line in run.stdout.splitlines())]
    want = control_log(node, 10**9)
    assert got == [(o, k) for o, (k, _) in sorted(want.items())][:len(got)] and len(got) >= 4


@pytest.mark.java
def test_java_console_consumer_reads_keys_and_offsets(node):
    need_jdk()
    want = sorted(control_log(node, latest(node)).items())
    run = run_tool("kafka-console-consumer", "--bootstrap-server", bootstrap(node), "--topic", CONTROL,
                   "--partition", "0", "--offset", "earliest", "--max-messages", str(len(want)),
                   "--formatter-property", "print.offset=true", "--formatter-property", "print.key=true",
                   "--formatter-property", "print.value=false", timeout=90)
    got = [line.split() for line in run.stdout.splitlines() if line.startswith("Offset:")]
    assert [(int(g[0].split(":")[1]), g[1]) for g in got] == [(o, k) for o, (k, _) in want]
