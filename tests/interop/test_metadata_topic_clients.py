"""``__cluster_metadata``-0 read by real Kafka clients from our node's client listener
(issue 10): kafka-python (assign), kcat from Debian (``-C -p 0`` and ``-L``), the Java
console consumer and ``GetOffsetShell`` of the pinned Kafka 4.3.1, plus raw requests
with our codecs for the long poll and incremental fetch sessions.

One standalone node (a NoOp record commits every second) serves the module; what
the clients read is compared with the batches in its segment files.
"""
from __future__ import annotations

import shutil
import subprocess
import time
import uuid

import pytest

from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import OurNode, _roundtrip, read_batches, wait_for
from tools.kafka_dist.controller import random_cluster_id, run_tool
from wire.errors import ErrorCode
from wire.messages import FetchRequest, ListOffsetsRequest
from wire.messages.fetch_request import FetchPartition, FetchTopic, ReplicaState
from wire.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsTopic
from wire.records import decode_batch, iter_headers

TOPIC = "__cluster_metadata"
TOPIC_ID = uuid.UUID(int=1)  # Kafka's Uuid.METADATA_TOPIC_ID


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    n = OurNode(tmp_path_factory.mktemp("topic"), extra=("metadata.max.idle.interval.ms=1000",))
    n.format_with_ours(random_cluster_id())
    n.start()
    try:
        n.wait_leader()
        yield n
    finally:
        n.stop()


def bootstrap(node) -> str:
    return f"127.0.0.1:{node.client_port}"


def latest(node) -> int:
    body = ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic(name=TOPIC, partitions=[
        ListOffsetsPartition(partition_index=0, timestamp=-1)])])
    (p,) = _roundtrip(node.client_port, body, 9).topics[0].partitions
    assert p.error_code == 0
    return p.offset


def log_records(node, end: int) -> list[tuple[int, bytes]]:
    """(offset, value) of every data record below ``end``, from the segment files."""
    out = []
    for raw in read_batches(node.data).values():
        batch, _ = decode_batch(raw)
        if batch.is_control:
            continue
        for record in batch.records:
            offset = batch.base_offset + record.offset_delta
            if offset < end:
                out.append((offset, bytes(record.value)))
    return sorted(out)


def test_kafka_python_assign_reads_the_log(node):
    from kafka import KafkaConsumer, TopicPartition
    tp = TopicPartition(TOPIC, 0)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap(node), enable_auto_commit=False,
                             consumer_timeout_ms=1000)
    try:
        consumer.assign([tp])
        end = consumer.end_offsets([tp])[tp]
        assert consumer.beginning_offsets([tp])[tp] == 0 and end >= 13
        consumer.seek(tp, 0)
        got = []
        deadline = time.monotonic() + 30
        while consumer.position(tp) < end and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                got += [(r.offset, r.value) for r in records]
    finally:
        consumer.close()
    got = [g for g in got if g[0] < end]
    assert got == log_records(node, end)
    assert got[0][0] == 3  # offsets 0-2: the bootstrap control batch, skipped by the client


def test_kafka_python_producer_is_refused(node):
    from kafka import KafkaProducer
    from kafka.errors import InvalidTopicError
    producer = KafkaProducer(bootstrap_servers=bootstrap(node), retries=0)
    try:
        with pytest.raises(InvalidTopicError):
            producer.send(TOPIC, b"x", partition=0).get(timeout=30)
    finally:
        producer.close(timeout=5)


def kcat(*args: str) -> subprocess.CompletedProcess:
    if shutil.which("kcat") is None:
        pytest.skip("kcat is not installed (Debian: apt-get install -y kcat)")
    return subprocess.run(["kcat", *args], capture_output=True, text=True, timeout=60)


def test_kcat_lists_and_consumes(node):
    listing = kcat("-b", bootstrap(node), "-L")
    assert listing.returncode == 0, listing.stderr
    assert f'topic "{TOPIC}" with 1 partitions' in listing.stdout
    assert "partition 0, leader 1, replicas: 1, isrs: 1" in listing.stdout
    wait_for(lambda: latest(node) >= 20, 30, "20 offsets committed")
    run = kcat("-b", bootstrap(node), "-C", "-t", TOPIC, "-p", "0", "-o", "beginning",
               "-c", "15", "-f", "%o\n")
    assert run.returncode == 0, run.stderr
    offsets = [int(line) for line in run.stdout.split()]
    assert offsets == [o for o, _ in log_records(node, 10**9)][:15]


@pytest.mark.java
def test_java_console_consumer_and_get_offsets(node):
    need_jdk()
    wait_for(lambda: latest(node) >= 16, 30, "16 offsets committed")
    shell = "org.apache.kafka.tools.GetOffsetShell"
    earliest = run_tool("kafka-run-class", shell, "--bootstrap-server", bootstrap(node),
                        "--topic", TOPIC, "--time", "-2").stdout.split()
    assert earliest == [f"{TOPIC}:0:0"]
    before = latest(node)
    (line,) = run_tool("kafka-run-class", shell, "--bootstrap-server", bootstrap(node),
                       "--topic", TOPIC, "--time", "-1").stdout.split()
    assert line.startswith(f"{TOPIC}:0:") and before <= int(line.rsplit(":", 1)[1]) <= latest(node)
    run = run_tool("kafka-console-consumer", "--bootstrap-server", bootstrap(node), "--topic", TOPIC,
                   "--partition", "0", "--offset", "earliest", "--max-messages", "12",
                   "--formatter-property", "print.offset=true",
                   "--formatter-property", "print.value=false", timeout=90)
    offsets = [int(line.split(":")[1]) for line in run.stdout.split() if line.startswith("Offset:")]
    assert offsets == [o for o, _ in log_records(node, 10**9)][:12]
    assert "Processed a total of 12 messages" in run.stderr + run.stdout


def fetch(node, offset: int, *, wait_ms: int, session=(0, -1), version: int = 12, listed: bool = True):
    topic = FetchTopic(topic=TOPIC if version < 13 else "", topic_id=TOPIC_ID if version >= 13 else uuid.UUID(int=0),
                       partitions=[FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)])
    body = FetchRequest(replica_id=-1, replica_state=ReplicaState(replica_id=-1), max_wait_ms=wait_ms,
                        min_bytes=1, max_bytes=1 << 20, session_id=session[0], session_epoch=session[1],
                        topics=[topic] if listed else [])
    return _roundtrip(node.client_port, body, version)


def headers(response):
    (t,) = response.responses
    (p,) = t.partitions
    assert p.error_code == 0
    return [h for _, h in iter_headers(bytes(p.records))]


def test_long_poll_returns_when_a_record_commits(node):
    """A fetch at the high watermark waits, and is answered with the next batch once it
    commits: the batch is younger than the request. (A batch that committed between
    the ListOffsets and the Fetch answers at once; then try again.)"""
    for _ in range(5):
        hwm = latest(node)
        sent_ms = int(time.time() * 1000)
        started = time.monotonic()
        response = fetch(node, hwm, wait_ms=8000)
        elapsed = time.monotonic() - started
        got = headers(response)
        assert got and got[0].base_offset == hwm
        assert elapsed < 6, f"woken after {elapsed:.1f}s, not by the commit"
        if got[0].max_timestamp >= sent_ms:
            return  # appended after the fetch was sent: it waited, then woke
    pytest.fail("every fetch found its batch already committed")


def test_incremental_fetch_session(node):
    full = fetch(node, 0, wait_ms=0, session=(0, 0), version=13)
    session = full.session_id
    assert session > 0 and full.responses[0].topic_id == TOPIC_ID and headers(full)[0].base_offset == 0
    hwm = latest(node)
    # epoch 1 moves the fetch offset to the high watermark and waits for the next commit
    inc = fetch(node, hwm, wait_ms=8000, session=(session, 1), version=13)
    assert inc.session_id == session and headers(inc)[0].base_offset >= hwm
    # epoch 2 lists no partition: the session remembers it
    nxt = fetch(node, 0, wait_ms=8000, session=(session, 2), version=13, listed=False)
    assert nxt.error_code == 0 and headers(nxt)
    assert fetch(node, 0, wait_ms=0, session=(session, 9)).error_code == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    assert fetch(node, 0, wait_ms=0, session=(session ^ 0x5a5a, 1)).error_code == \
        ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_produce_acks_0_closes_only_that_connection(node):
    """A Kafka broker sends nothing to an acks=0 produce and closes the connection when
    it fails; ours always fails here (the topic is written by the quorum only)."""
    import socket

    from wire.headers import encode_request
    from wire.messages import ProduceRequest
    from wire.messages.produce_request import PartitionProduceData, TopicProduceData
    body = ProduceRequest(acks=0, timeout_ms=1000, topic_data=[TopicProduceData(
        name=TOPIC, partition_data=[PartitionProduceData(index=0, records=b"")])])
    with socket.create_connection(("127.0.0.1", node.client_port), timeout=10) as s:
        s.sendall(encode_request(0, 9, 1, body, "t"))
        assert s.recv(100) == b""  # closed, nothing answered
    assert latest(node) > 0  # the node serves on
