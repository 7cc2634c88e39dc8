"""Reassignment differential (issue 26): one scripted ``kafka-reassign-partitions`` session
with four Apache Kafka 4.3.1 brokers, run on a 1-voter quorum of Kafka 4.3.1's own
controller and on one of ours. Manual assignments only, so nothing is left to chance:
a move (its leader removed), a shrink and a reorder in one plan; a replication-factor
change refused by ``--disallow-replication-factor-change``; a move onto a killed broker
(still registered and unfenced: it never joins the ISR), listed, verified and
cancelled.

What must agree: every line the tool prints (its admin client's log lines and temporary
paths aside), and
each PartitionChangeRecord that touches the replica set (Replicas, AddingReplicas,
RemovingReplicas, Leader, ISR, Directories as broker roles) in log order, and the
partitions' final replicas, ISR and leader.
"""
from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from tests.interop.test_kafka_broker_failure import image_of
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import bootstrap_servers, start_brokers
from tests.support.kraft_nodes import OurNode, read_batches, wait_for
from tools.kafka_dist.controller import KafkaController, run_tool
from wire.messages import PartitionChangeRecord, TopicRecord
from wire.records import batch_records, decode_metadata_record, walk

pytestmark = [pytest.mark.java, pytest.mark.slow]
CLUSTER = "UmVhc3NpZ25EaWZmZXJlbnQ"
SESSION_MS = 60000  # the killed broker stays unfenced through the cancel
BROKERS = [100, 101, 102, 103]


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


def _quorum(kind, tmp):
    """``(bootstrap, metadata data dir, stop)`` of a started 1-voter quorum."""
    if kind == "kafka":
        ctl = KafkaController(tmp / "controller", node_id=1, cluster_id=CLUSTER,
                              overrides={"broker.session.timeout.ms": str(SESSION_MS)})
        ctl.start_ready()
        return ctl.bootstrap, ctl.data_dir, ctl.close
    (tmp / "controller").mkdir()
    # fast fencing off: the killed broker is fenced when its session expires, as Kafka's
    # controller does it (the comparison is of the reassignment, not of the fencing)
    node = OurNode(tmp / "controller", node_id=1, extra=(f"broker.session.timeout.ms={SESSION_MS}",
                                                         "kraft.broker.fast.fencing.enable=false"))
    node.format_with_ours(CLUSTER)
    node.start()
    node.wait_leader()
    return node.bootstrap, node.data, node.kill


def _changes(data) -> list:
    """The PartitionChangeRecords of topic ``d`` that touch its replicas, in log order."""
    names, out = {}, []
    for raw in read_batches(data).values():
        for info in walk(raw):
            if info.is_control:
                continue
            for _, value in batch_records(raw, info):
                r = decode_metadata_record(value).message
                if isinstance(r, TopicRecord):
                    names[r.topic_id] = r.name
                elif isinstance(r, PartitionChangeRecord) and names.get(r.topic_id) == "d" and (
                        r.replicas is not None or r.adding_replicas is not None or r.removing_replicas is not None):
                    out.append((r.partition_id, _ids(r.replicas), _ids(r.adding_replicas),
                                _ids(r.removing_replicas), r.leader, _ids(r.isr),
                                None if r.directories is None else len(r.directories)))
    return out


def _ids(v):
    return None if v is None else list(v)


def _script(kind, tmp):
    bootstrap, data, stop = _quorum(kind, tmp)
    view = SimpleNamespace(data=data)
    brokers, printed = [], []
    try:
        brokers = start_brokers(tmp, 4, CLUSTER, bootstrap)
        wait_for(lambda: sorted(b.broker_id for b in image_of(view).brokers if not b.fenced) == BROKERS,
                 180, "four unfenced brokers")
        bs = bootstrap_servers(brokers)

        def tool(*args, servers=bs, check=True, record=True):
            p = run_tool("kafka-reassign-partitions", "--bootstrap-server", servers, *args, check=check,
                         timeout=120)
            # the admin client's own log lines (a killed broker unreachable) are noise
            lines = (p.stdout.replace(str(tmp), "<tmp>").splitlines()
                     + p.stderr.replace(str(tmp), "<tmp>").splitlines())
            text = "\n".join(line for line in lines if not re.match(r"\[\d{4}-\d\d-\d\d ", line))
            if record:  # a poll's output depends on how fast the moves went: not compared
                printed.append(text if check else text.splitlines()[0])
            return text

        def plan(name, moves):
            path = tmp / f"{name}.json"
            path.write_text(json.dumps({"version": 1, "partitions": [
                {"topic": "d", "partition": p, "replicas": r, "log_dirs": ["any"] * len(r)} for p, r in moves]}))
            return str(path)

        run_tool("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", "d", "--replica-assignment",
                 "100:101:102,101:102:103,102:103:100", timeout=120)
        wait_for(lambda: len(image_of(view).topics.by_name["d"].partitions) == 3, 30, "topic d")
        first = plan("first", [(0, [101, 102, 103]), (1, [101, 102]), (2, [100, 103, 102])])
        tool("--execute", "--reassignment-json-file", first)
        wait_for(lambda: tool("--verify", "--preserve-throttles", "--reassignment-json-file", first, record=False)
                 .count("is completed") == 3, 90, "the first plan complete", interval=1.0)
        tool("--verify", "--preserve-throttles", "--reassignment-json-file", first)  # once complete
        tool("--execute", "--disallow-replication-factor-change", "--reassignment-json-file",
             plan("rf", [(0, [101, 102])]), check=False)
        gone = next(b for b in brokers if b.node_id == 100)
        gone.stop(graceful=False)
        live = bootstrap_servers([b for b in brokers if b is not gone])
        stuck = plan("stuck", [(1, [101, 102, 100])])
        tool("--execute", "--reassignment-json-file", stuck, servers=live)
        tool("--verify", "--preserve-throttles", "--reassignment-json-file", stuck, servers=live)
        tool("--list", servers=live)
        tool("--cancel", "--preserve-throttles", "--reassignment-json-file", stuck, servers=live)
        tool("--list", servers=live)
        final = {pid: (list(p.replicas), sorted(p.isr), p.leader)
                 for pid, p in image_of(view).topics.by_name["d"].partitions.items()}
        return printed, _changes(data), final
    finally:
        for b in brokers:
            b.close()
        stop()


def test_reassignment_as_kafkas_controller_does_it(tmp_path):
    (tmp_path / "kafka").mkdir()
    (tmp_path / "ours").mkdir()
    kafka = _script("kafka", tmp_path / "kafka")
    ours = _script("ours", tmp_path / "ours")
    for k, o in zip(kafka[0], ours[0]):
        assert o == k
    assert len(ours[0]) == len(kafka[0])
    assert ours[1] == kafka[1]
    assert ours[2] == kafka[2]
    # the comparison covered what matters: a move, its completion, a cancel
    assert any(c[2] == [103] for c in kafka[1]) and any(c[2] == [100] for c in kafka[1])
    assert kafka[2][1] == ([101, 102], [101, 102], 101)
