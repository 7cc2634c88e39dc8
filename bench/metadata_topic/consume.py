"""Consumer read throughput: the metadata log from our node vs the same batches from an
Apache Kafka 4.3.1 broker's ordinary topic, same clients.

    python bench/metadata_topic/consume.py [--records 20000] [--record-bytes 1000] [--clients python,java]

For each batch size (1 KiB: one ~1 KB record per batch; 64 KiB: 64 per batch) it
builds the same batches once: metadata records (a ConfigRecord padded to
``--record-bytes``), uncompressed, as a KRaft leader writes them. Our node (one
standalone controller of ours) gets them appended to its ``__cluster_metadata`` log
while stopped and commits them when it restarts; the Kafka broker (combined
broker+controller, ``tests/support/kafka_broker.py``) gets each batch in its own
Produce request (acks=all) on topic ``bench``, so both serve the same bytes. Then,
one run each:

- ``python``: kafka-python 3.0.12 (``assign``, seek to the first bench record, poll
  until all arrived; the wall time from the first poll);
- ``java``: Kafka 4.3.1's ``kafka-consumer-perf-test`` (``ConsumerPerformance``, via
  ``kafka-run-class``; subscribe mode, a fresh group; its ``fetch.MB.sec``, which
  leaves out the group join).

Prints MB/s (10^6 bytes of record values, as ConsumerPerformance counts) and
records/s, the ratio ours / Kafka, and the CPU seconds our node's process and the
broker's JVM spent while each client read (from /proc: what bounds the server side).
Both JVMs (broker and perf tool) run with Kafka's own default JVM options
(``kafka-run-class``: G1, full JIT, 1 GiB heap), not the tests' fast-start ones.
"""
from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

TOPIC = "bench"
KAFKA_JVM = ("-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 "
             "-XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true")
SIZES = {"1 KiB": 1, "64 KiB": 64}  # records per batch


def values(n: int, record_bytes: int) -> list[bytes]:
    from wire.messages import ConfigRecord
    from wire.records import encode_metadata_record
    pad = max(record_bytes - 40, 1)
    return [encode_metadata_record(ConfigRecord(resource_type=4, resource_name="", name="bench.padding",
                                                value=f"{i:08d}".ljust(pad, "x")), 0) for i in range(n)]


def batches(vals: list[bytes], per_batch: int, base: int | None, epoch: int) -> list[bytes]:
    """Consecutive batches from offset ``base``; all at base offset 0 when None (a
    producer's batches: the broker assigns the offsets)."""
    from wire.records import data_batch
    now = int(time.time() * 1000)
    return [data_batch(0 if base is None else base + i, epoch, now, vals[i:i + per_batch])
            for i in range(0, len(vals), per_batch)]


# -- our node ------------------------------------------------------------------------------

def our_node(workdir: Path, vals: list[bytes], per_batch: int):
    """A started node of ours whose log holds the bench batches; (node, first offset, end)."""
    from kraft_server.log.file_log import FileReplicatedLog
    from tests.support.kraft_nodes import OurNode, wait_for
    workdir.mkdir()
    node = OurNode(workdir, extra=("metadata.max.idle.interval.ms=60000",))
    node.format_with_ours(uuid.uuid4().hex[:22])
    node.start()
    node.wait_leader(60)
    node.stop()
    with FileReplicatedLog.open(node.data) as log:
        first = log.end_offset()
        for batch in batches(vals, per_batch, first, log.last_fetched_epoch()):
            log.append(batch)
        end = log.end_offset()
        log.flush()
    node.start()
    node.wait_leader(60)
    wait_for(lambda: latest(node.client_port, "__cluster_metadata") >= end, 120, "the bench batches committed")
    return node, first, end


def latest(port: int, topic: str) -> int:
    from tests.support.kraft_nodes import _roundtrip
    from wire.messages import ListOffsetsRequest
    from wire.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsTopic
    body = ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic(name=topic, partitions=[
        ListOffsetsPartition(partition_index=0, timestamp=-1)])])
    try:
        (p,) = _roundtrip(port, body, 9).topics[0].partitions
    except OSError:
        return -1
    return p.offset if p.error_code == 0 else -1


# -- the Kafka broker ------------------------------------------------------------------------

def fill_kafka(bootstrap: str, vals: list[bytes], per_batch: int) -> None:
    """Topic ``bench`` (1 partition) holding the batches, one Produce request each,
    pipelined (at most 64 in flight)."""
    from kafka.admin import KafkaAdminClient, NewTopic
    from wire.framing import FrameReader
    from wire.headers import decode_response, encode_request
    from wire.messages import ProduceRequest
    from wire.messages.produce_request import PartitionProduceData, TopicProduceData
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
    finally:
        admin.close()
    host, port = bootstrap.rsplit(":", 1)
    from tests.support.kraft_nodes import wait_for
    wait_for(lambda: latest(int(port), TOPIC) == 0, 60, "topic bench has a leader")
    todo = batches(vals, per_batch, None, -1)
    with socket.create_connection((host, int(port)), timeout=60) as s:
        reader, sent, done = FrameReader(), 0, 0
        while done < len(todo):
            while sent < len(todo) and sent - done < 64:
                body = ProduceRequest(acks=-1, timeout_ms=30000, topic_data=[TopicProduceData(
                    name=TOPIC, partition_data=[PartitionProduceData(index=0, records=todo[sent])])])
                s.sendall(encode_request(0, 9, sent, body, "bench"))
                sent += 1
            for frame in reader.feed(s.recv(1 << 20)):
                response = decode_response(frame, 0, 9)[1]
                for t in response.responses:
                    for p in t.partition_responses:
                        if p.error_code:
                            raise RuntimeError(f"produce failed: error {p.error_code}")
                done += 1


# -- consumers -------------------------------------------------------------------------------

def python_consumer(bootstrap: str, topic: str, first: int, n: int) -> tuple[float, int]:
    """(seconds, value bytes) for kafka-python to read ``n`` records from ``first``."""
    from kafka import KafkaConsumer, TopicPartition
    tp = TopicPartition(topic, 0)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        consumer.assign([tp])
        consumer.seek(tp, first)
        consumer.poll(timeout_ms=0)  # connect and look up metadata before the clock starts
        got, size, start = 0, 0, time.perf_counter()
        while got < n:
            for records in consumer.poll(timeout_ms=1000).values():
                for r in records:
                    if r.offset >= first and got < n:
                        got += 1
                        size += len(r.value)
        return time.perf_counter() - start, size
    finally:
        consumer.close()


def java_consumer(bootstrap: str, topic: str, n: int) -> tuple[float, float]:
    """(fetch MB/s, fetch records/s) from ConsumerPerformance reading ``n`` records."""
    from tools.kafka_dist.controller import run_tool
    run = run_tool("kafka-run-class", "org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server",
                   bootstrap, "--topic", topic, "--messages", str(n), "--group", f"bench-{uuid.uuid4().hex[:8]}",
                   "--timeout", "60000", timeout=300)
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    header = [h.strip() for h in lines[-2].split(",")]
    row = dict(zip(header, (v.strip() for v in lines[-1].split(","))))
    return float(row["fetch.MB.sec"]), float(row["fetch.nMsg.sec"])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its reaped children, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def measured(pids: list[int], run):
    """(run(), [CPU seconds each pid spent during it])."""
    before = [cpu_seconds(p) for p in pids]
    result = run()
    return result, [cpu_seconds(p) - b for p, b in zip(pids, before)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=20000)
    ap.add_argument("--record-bytes", type=int, default=1000)
    ap.add_argument("--clients", default="python,java")
    args = ap.parse_args()
    clients = args.clients.split(",")
    os.environ["KAFKA_JVM_PERFORMANCE_OPTS"] = KAFKA_JVM  # for the broker and the perf tool
    os.environ["KAFKA_HEAP_OPTS"] = "-Xmx1g -Xms1g"
    from tests.support.kafka_broker import kafka_broker
    vals = values(args.records, args.record_bytes)
    total = sum(len(v) for v in vals)
    results = []
    for label, per_batch in SIZES.items():
        with tempfile.TemporaryDirectory(prefix="bench-consume-") as tmp:
            tmp = Path(tmp)
            ours, first, _ = our_node(tmp / "ours", vals, per_batch)
            kafka, kafka_bootstrap = kafka_broker(tmp / "kafka")
            try:
                fill_kafka(kafka_bootstrap, vals, per_batch)
                our_bootstrap = f"127.0.0.1:{ours.client_port}"
                pids = [ours.proc.pid, kafka.proc.pid]
                if "python" in clients:
                    (ours_s, _), (o_cpu, _) = measured(pids, lambda: python_consumer(
                        our_bootstrap, "__cluster_metadata", first, args.records))
                    (kafka_s, _), (_, k_cpu) = measured(pids, lambda: python_consumer(
                        kafka_bootstrap, TOPIC, 0, args.records))
                    results.append((label, "kafka-python", total / ours_s / 1e6, args.records / ours_s,
                                    total / kafka_s / 1e6, args.records / kafka_s, o_cpu, k_cpu))
                if "java" in clients:
                    # ConsumerPerformance reads from offset 0: on our node the first few dozen
                    # records it counts are the node's own (small) and as many bench ones are left.
                    (o_mb, o_rec), (o_cpu, _) = measured(pids, lambda: java_consumer(
                        our_bootstrap, "__cluster_metadata", args.records))
                    (k_mb, k_rec), (_, k_cpu) = measured(pids, lambda: java_consumer(
                        kafka_bootstrap, TOPIC, args.records))
                    results.append((label, "java perf-test", o_mb, o_rec, k_mb, k_rec, o_cpu, k_cpu))
            finally:
                ours.stop()
                kafka.close()
    print(f"\n{args.records} records of {args.record_bytes} bytes ({total / 1e6:.1f} MB of values), one run each\n")
    print(f"{'batches':8} {'client':15} {'ours MB/s':>10} {'ours rec/s':>11} {'Kafka MB/s':>11} "
          f"{'Kafka rec/s':>12} {'ours/Kafka':>10} {'ours CPU s':>10} {'Kafka CPU s':>11}")
    for label, client, o_mb, o_rec, k_mb, k_rec, o_cpu, k_cpu in results:
        print(f"{label:8} {client:15} {o_mb:10.1f} {o_rec:11.0f} {k_mb:11.1f} {k_rec:12.0f} {o_mb / k_mb:9.2f}x"
              f" {o_cpu:10.2f} {k_cpu:11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
