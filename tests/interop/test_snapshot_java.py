"""Our snapshots against the real Apache Kafka 4.3.1 (``@pytest.mark.java``):
``kafka-dump-log --cluster-metadata-decoder`` decodes one, and a real controller
starts (and leads) on a data directory whose log starts at our snapshot."""
from __future__ import annotations

import time

import pytest

from kraft_server.config import KafkaConfig
from kraft_server.shell.wiring import build_node
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import kafka_release
from tools.kafka_dist.controller import KafkaController, run_tool
from tools.kafka_dist.releases import DEFAULT_RELEASE, release_facts
from tools.storage.__main__ import main as storage_main

pytestmark = pytest.mark.java
PART = "__cluster_metadata-0"


@pytest.fixture(scope="module", autouse=True)
def _jdk():
    need_jdk()
    from tools.kafka_dist import ensure_dist
    ensure_dist()


def _drive(node, clock, ms: int, step: int = 10) -> None:
    """The driver's Ready loop without sockets (one voter needs no peers)."""
    core, shell, controller = node.core, node.driver.shell, node.driver.controller
    end = clock[0] + ms
    while clock[0] < end:
        clock[0] += step
        for _ in range(20):
            core.tick(clock[0])
            ready, more = shell.turn(clock[0], lambda r: None, lambda r: None)
            proposed, _ = controller.poll(clock[0])
            if not (more or proposed or ready.flush):
                break


def test_kafka_reads_and_starts_from_our_snapshot(tmp_path):
    ctl = KafkaController(tmp_path / "k", overrides={"internal.metadata.log.segment.bytes": "2048"})
    ctl.write_config()
    assert storage_main(["format", "-t", ctl.cluster_id, "-c", str(ctl.config_path), "--standalone",
                         "--release-version", kafka_release()]) == 0
    ctl.formatted = True

    clock = [int(time.time() * 1000)]
    node = build_node(KafkaConfig.from_file(str(ctl.config_path)), str(ctl.config_path),
                      clock=lambda: clock[0])
    controller = node.driver.controller
    _drive(node, clock, 4000)  # bootstrap, registration, NoOps every 500 ms
    first = controller.snapshot(clock[0])
    _drive(node, clock, 6000)
    second = controller.snapshot(clock[0])
    assert first is not None and second is not None and second.offset > first.offset
    controller.settings.retention_bytes = 0  # keep only the newest snapshot
    controller.clean(clock[0])
    log = node.raft_log
    assert log.start_offset() == second.offset and log.snapshot_ids() == [second]
    end = log.end_offset()
    log.close()

    part = ctl.data_dir / PART
    snap = part / f"{second.offset:020d}-{second.epoch:010d}.checkpoint"
    out = run_tool("kafka-dump-log", "--cluster-metadata-decoder", "--files", str(snap), timeout=120).stdout
    level = release_facts(DEFAULT_RELEASE)["metadata"][1]  # formatted at the pinned release
    for needle in ("SnapshotHeader", "KRaftVersion", "KRaftVoters", f'"name":"metadata.version","featureLevel":{level}',
                   "REGISTER_CONTROLLER_RECORD", "CONFIG_RECORD", "SnapshotFooter"):
        assert needle in out, out
    assert "NO_OP_RECORD" not in out and "Exception" not in out

    try:
        ctl.start()
        ctl.wait_ready(90)
        q = ctl.describe_quorum()
        assert (q.leader_id, q.error_code) == (1, 0)
        assert q.high_watermark > end
    finally:
        ctl.stop()
    text = ctl.log_text()
    assert f"offset={second.offset}, epoch={second.epoch}" in text  # it loaded our snapshot
    assert "CorruptRecordException" not in text and "Unable to" not in text
