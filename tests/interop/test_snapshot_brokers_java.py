"""A snapshot of ours holding brokers, a topic and producer ids (issue 11: "snapshots
carry the whole image") read by Apache Kafka 4.3.1: ``kafka-dump-log
--cluster-metadata-decoder`` decodes every record in ``MetadataImage.write`` order, and
a real controller starts from it, replaying our RegisterBrokerRecord v4,
TopicRecord, PartitionRecord v2 and ProducerIdsRecord into its own image."""
from __future__ import annotations

import random
import time

import pytest

from kraft_server.config import KafkaConfig
from kraft_server.controller.admin_requests import allocate_producer_ids_op, create_topics_op
from kraft_server.shell.wiring import build_node
from tests.interop.test_snapshot_java import PART, _drive
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import kafka_release, wait_for
from tests.unit.controller.test_controller_brokers import heartbeat, registration
from tests.unit.controller.test_controller_topics import topic
from tools.kafka_dist.controller import KafkaController, run_tool
from tools.storage.__main__ import main as storage_main
from wire.messages import AllocateProducerIdsRequest, CreateTopicsRequest

pytestmark = pytest.mark.java


@pytest.fixture(scope="module", autouse=True)
def _jdk():
    need_jdk()


def test_kafka_loads_our_snapshot_of_brokers_and_topics(tmp_path):
    ctl = KafkaController(tmp_path / "k", overrides={"broker.session.timeout.ms": "4000"})
    ctl.write_config()
    assert storage_main(["format", "-t", ctl.cluster_id, "-c", str(ctl.config_path), "--standalone",
                         "--release-version", kafka_release()]) == 0
    ctl.formatted = True
    clock = [int(time.time() * 1000)]
    node = build_node(KafkaConfig.from_file(str(ctl.config_path)), str(ctl.config_path), clock=lambda: clock[0])
    controller = node.driver.controller
    _drive(node, clock, 1000)

    def call(submit):
        out = []
        submit(out.append)
        for _ in range(200):
            if out:
                return out[0]
            _drive(node, clock, 10)
        raise AssertionError("no answer")

    epochs = {}
    for b in (100, 101, 102):
        req = registration(b)
        req.cluster_id = ctl.cluster_id
        r = call(lambda respond, req=req: controller.submit_broker_registration(req, 4, respond))
        assert r.error_code == 0, r
        epochs[b] = r.broker_epoch
        h = call(lambda respond, b=b: controller.submit_broker_heartbeat(
            heartbeat(b, epochs[b], controller.image.offset, cordoned=[]), 2, respond))
        assert not h.is_fenced
    run_fn, fail = create_topics_op(CreateTopicsRequest(topics=[topic("orders", 3, 3,
                                                                      configs=[("min.insync.replicas", "2")])]),
                                    7, random.Random(1))
    made = call(lambda respond: controller.submit_write("CreateTopics", run_fn, fail, respond))
    assert made.topics[0].error_code == 0
    run_fn, fail = allocate_producer_ids_op(AllocateProducerIdsRequest(broker_id=100, broker_epoch=epochs[100]))
    assert call(lambda respond: controller.submit_write("Alloc", run_fn, fail, respond)).error_code == 0
    _drive(node, clock, 200)
    snap = controller.snapshot(clock[0])
    assert snap is not None
    node.raft_log.close()

    path = ctl.data_dir / PART / f"{snap.offset:020d}-{snap.epoch:010d}.checkpoint"
    out = run_tool("kafka-dump-log", "--cluster-metadata-decoder", "--files", str(path), timeout=120).stdout
    order = ["FEATURE_LEVEL_RECORD", "REGISTER_BROKER_RECORD", "REGISTER_CONTROLLER_RECORD", "TOPIC_RECORD",
             "PARTITION_RECORD", "CONFIG_RECORD", "PRODUCER_IDS_RECORD"]
    positions = [out.find(f'"type":"{name}"') for name in order]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), out
    assert out.count('"type":"REGISTER_BROKER_RECORD","version":4') == 3
    assert out.count('"type":"PARTITION_RECORD","version":2') == 3
    assert '"nextProducerId":1000' in out and "Exception" not in out

    def java_fenced_our_brokers():
        # No broker heartbeats to the Java controller: once their sessions expire it
        # fences them, naming the epochs it replayed from our RegisterBrokerRecords.
        text = ""
        for seg in sorted((ctl.data_dir / PART).glob("*.log")):
            text += run_tool("kafka-dump-log", "--cluster-metadata-decoder", "--files", str(seg),
                             timeout=120).stdout
        return all(f'"brokerId":{b},"brokerEpoch":{epochs[b]},"fenced":1' in text for b in epochs)

    try:
        ctl.start()
        ctl.wait_ready(90)
        wait_for(java_fenced_our_brokers, 60, "the Java controller fencing our three brokers", interval=1.0)
    finally:
        ctl.stop()
    text = ctl.log_text()
    assert f"offset={snap.offset}, epoch={snap.epoch}" in text  # it loaded our snapshot
    assert "CorruptRecordException" not in text
    assert not errors_besides_self_registration(text), errors_besides_self_registration(text)


def errors_besides_self_registration(log: str) -> list[str]:
    """The ERROR lines of a Kafka controller's log, but for one transient of its own: on
    a loaded machine its ControllerRegistration to itself can race its own election and
    is logged as an ERROR with NotControllerException (it retries; nothing of ours is read)."""
    lines = log.splitlines()
    return [line for i, line in enumerate(lines) if " ERROR " in line
            and not ("CONTROLLER_REGISTRATION" in line and i + 1 < len(lines) and "NotControllerException" in lines[i + 1])]
