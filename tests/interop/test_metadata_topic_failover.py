"""kill -9 of the Raft leader of a 3-node quorum of ours while kafka-python reads
``__cluster_metadata``-0 from a follower: the follower's epoch changes with the
election, so kafka-python validates its position with OffsetForLeaderEpoch (without
an answer it stops fetching for good, KIP-320) and reads on. What it read equals
the survivors' committed log: every data record once, in order, no gap.

kafka-python bootstraps from a random server and every node names itself the
partition's leader, so consumers are built until one reads from a follower.
(kafka-python 3.0.12 never goes back to its bootstrap servers: a consumer whose
only known broker dies stays stuck. Our Metadata lists only the answering node,
so a kafka-python consumer reading from the node that dies does not move on; see
docs/metadata-topic.md.)
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess

import pytest

from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import agreed_leader, make_quorum, read_batches, wait_for
from tools.kafka_dist import bin_path
from tools.kafka_dist.controller import random_cluster_id, tool_env
from wire.records import decode_batch

TOPIC = "__cluster_metadata"


def data_records(node) -> dict[int, bytes]:
    out = {}
    for raw in read_batches(node.data).values():
        batch, _ = decode_batch(raw)
        if not batch.is_control:
            for r in batch.records:
                out[batch.base_offset + r.offset_delta] = bytes(r.value)
    return out


def test_kafka_python_reads_on_when_the_leader_is_killed(tmp_path, caplog):
    from kafka import KafkaConsumer, TopicPartition
    nodes = make_quorum(tmp_path, "dynamic", random_cluster_id())
    consumer = None
    got: list[tuple[int, int, bytes]] = []

    def poll() -> None:
        for records in consumer.poll(timeout_ms=200).values():
            got.extend((r.offset, r.leader_epoch, r.value) for r in records)

    try:
        for n in nodes:
            n.start()
        leader, quorum = agreed_leader(nodes)
        tp = TopicPartition(TOPIC, 0)
        for _ in range(40):  # each try reads from a follower with probability 2/3
            consumer = KafkaConsumer(bootstrap_servers=[f"127.0.0.1:{n.client_port}" for n in nodes],
                                     enable_auto_commit=False, request_timeout_ms=3000)
            consumer.assign([tp])
            consumer.seek(tp, 0)
            wait_for(lambda: poll() or got, 30, "the first records", interval=0)
            serving = consumer._client.cluster.leader_for_partition(tp)
            if serving != leader.node_id:
                break
            consumer.close()
            consumer, got[:] = None, []
        assert consumer is not None, "no consumer read from a follower in 40 tries"
        wait_for(lambda: poll() or len(got) >= 20, 30, "20 records", interval=0)
        caplog.set_level(logging.DEBUG, logger="kafka.consumer.fetcher")
        caplog.clear()
        killed_at = got[-1][0]
        leader.kill()
        survivors = [n for n in nodes if n is not leader]

        def read_past_the_election() -> bool:
            poll()
            return got[-1][1] > quorum.leader_epoch and got[-1][0] > killed_at + 10

        wait_for(read_past_the_election, 60, "records of the new epoch", interval=0)
        assert consumer._client.cluster.leader_for_partition(tp) == serving
        assert "Sending OffsetForLeaderEpochRequest" in caplog.text
    finally:
        if consumer is not None:
            consumer.close()
        for n in nodes:
            n.kill()
    offsets = [o for o, _, _ in got]
    assert offsets == sorted(set(offsets)), "a record twice or out of order"
    log = data_records(next(n for n in survivors if n.node_id == serving))
    assert offsets == [o for o in sorted(log) if o <= offsets[-1]]  # every committed data record
    assert all(log[o] == v for o, _, v in got)


@pytest.mark.java
def test_java_console_consumer_reads_on_when_the_leader_is_killed(tmp_path):
    """The Java console consumer of Kafka 4.3.1 (assign mode) over the same kill -9.
    Which node it reads from is its choice (each names itself leader); when it is the
    killed one, the client goes back to its bootstrap servers and reads on."""
    need_jdk()
    nodes = make_quorum(tmp_path, "dynamic", random_cluster_id())
    out_path = tmp_path / "consumer.out"
    proc = None

    def offsets() -> list[int]:
        return [int(line.split(":")[1]) for line in out_path.read_text().split()
                if line.startswith("Offset:")]

    try:
        for n in nodes:
            n.start()
        leader, quorum = agreed_leader(nodes)
        with open(out_path, "w") as out:
            proc = subprocess.Popen(
                [str(bin_path("kafka-console-consumer")),
                 "--bootstrap-server", ",".join(f"127.0.0.1:{n.client_port}" for n in nodes),
                 "--topic", TOPIC, "--partition", "0", "--offset", "earliest", "--max-messages", "100000",
                 "--formatter-property", "print.offset=true", "--formatter-property", "print.value=false"],
                stdout=out, stderr=subprocess.STDOUT, env=tool_env(), start_new_session=True)
        wait_for(lambda: len(offsets()) >= 30, 60, "30 records read")
        killed_at = offsets()[-1]
        leader.kill()
        survivors = [n for n in nodes if n is not leader]
        agreed_leader(survivors, exclude=(leader.node_id,), min_epoch=quorum.leader_epoch + 1)
        wait_for(lambda: offsets()[-1] > killed_at + 30, 60, "records after the election")
    finally:
        if proc is not None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        for n in nodes:
            n.kill()
    got = offsets()
    assert got == sorted(set(got)), "a record twice or out of order"
    log = max((data_records(n) for n in survivors), key=len)  # the survivor that has it all
    assert got == [o for o in sorted(log) if o <= got[-1]]
