"""A live three-node quorum of our processes, read by other people's code:

- kafka-python (3.x has ``KafkaAdminClient.describe_metadata_quorum``, DescribeQuorum
  through its own protocol classes) agrees with our DescribeQuorum v2 answer, decoded
  by our codecs: leader, epoch, voters with directory ids, controller endpoints, and
  a high watermark that only moves forward;
- Apache Kafka 4.3.1's ``kafka-dump-log --cluster-metadata-decoder`` reads the segment
  files of every live node (``tests/interop/test_storage_java.py`` covers segments our log
  wrote offline; here the Raft core wrote them while replicating): the same batches,
  all valid, and the LeaderChange naming the current leader.

One quorum for the module; every process is killed by the fixture's finalizer.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil

import pytest

from kraft_server.log.meta_properties import read_meta_properties
from tests.support.kraft_nodes import TOPIC, agreed_leader, make_quorum, our_describe_quorum, read_batches, wait_for
from tools.kafka_dist.controller import random_cluster_id


@pytest.fixture(scope="module")
def live_quorum(tmp_path_factory):
    for mod in ("kraft_server.raft.node", "tools.storage"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not there yet")
    nodes = make_quorum(tmp_path_factory.mktemp("quorum"), "dynamic", random_cluster_id())
    try:
        for n in nodes:
            n.start()
        leader, q = agreed_leader(nodes)
        yield nodes, leader
    finally:
        for n in nodes:
            n.kill()


def test_kafka_python_describe_metadata_quorum_agrees_with_ours(live_quorum):
    kafka = pytest.importorskip("kafka")
    from kafka.admin import KafkaAdminClient
    nodes, leader = live_quorum
    assert hasattr(KafkaAdminClient, "describe_metadata_quorum"), kafka.__version__

    admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{leader.client_port}",
                             client_id="process-test", request_timeout_ms=10_000)
    try:
        theirs = admin.describe_metadata_quorum()
    finally:
        admin.close()
    ours = our_describe_quorum(leader.port)

    [topic] = theirs["topics"]
    [part] = topic["partitions"]
    [our_part] = ours.topics[0].partitions
    assert topic["topic_name"] == TOPIC and part["error"] is None
    assert part["leader_id"] == our_part.leader_id == leader.node_id
    assert part["leader_epoch"] == our_part.leader_epoch
    assert 0 < part["high_watermark"] <= our_part.high_watermark  # ours was asked later

    def voters(rows):
        return {r["replica_id"]: r["replica_directory_id"] for r in rows}

    dir_ids = {n.node_id: read_meta_properties(n.data).directory_id for n in nodes}
    assert {k: str(v) for k, v in voters(part["current_voters"]).items()} == \
        {k: str(v) for k, v in dir_ids.items()}
    assert {r.replica_id: r.replica_directory_id for r in our_part.current_voters} == dir_ids
    assert part["observers"] == [] and our_part.observers == []
    endpoints = {n["node_id"]: [(l["name"], l["host"], l["port"]) for l in n["listeners"]]
                 for n in theirs["nodes"]}
    assert endpoints == {n.node_id: [("CONTROLLER", "127.0.0.1", n.port)] for n in nodes}
    for r in part["current_voters"]:
        assert r["log_end_offset"] >= 0 and r["last_fetch_timestamp"] > 0


def _dump(path) -> str:
    from tools.kafka_dist.controller import run_tool
    return run_tool("kafka-dump-log", "--cluster-metadata-decoder", "--files", str(path), timeout=180).stdout


@pytest.mark.java
def test_kafka_dump_log_reads_the_live_segments(live_quorum):
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("no JDK")
    nodes, leader = live_quorum
    q = our_describe_quorum(leader.port).topics[0].partitions[0]
    # Every node holds the committed batches before we look.
    wait_for(lambda: all(max(read_batches(n.data), default=-1) >= 0 and
                         min(read_batches(n.data)) == 0 for n in nodes), 30.0, "replication")
    for node in (leader, next(n for n in nodes if n is not leader)):
        segment = sorted((node.data / "__cluster_metadata-0").glob("*.log"))[0]
        out = _dump(segment)
        assert "isvalid: false" not in out, out[-2000:]
        bases = [int(m) for m in re.findall(r"baseOffset: (\d+)", out)]
        assert bases and bases[0] == 0
        ours = sorted(read_batches(node.data))
        assert bases == ours[:len(bases)]  # the same batches, in order (the file may have grown)
        assert out.count("isvalid: true") == len(bases)
        assert f'LeaderChange: {{"version":0,"leaderId":{q.leader_id},' in out
        # The dynamic quorum's first leader copies the bootstrap voter set into the log.
        assert 'KRaftVersion {"version":0,"kRaftVersion":1}' in out
        for n in nodes:
            assert f'"voterId":{n.node_id},' in out
