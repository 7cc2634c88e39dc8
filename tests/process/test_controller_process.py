"""Our node as a process (``python -m kraft_server``): the active controller writes the
bootstrap batch, its registration and NoOps, snapshots with a small threshold, and
ApiVersions reports the committed features with the image's offset as epoch."""
from __future__ import annotations

import uuid

from kraft_server.controller.image import records as rec
from kraft_server.log.file_log import FileReplicatedLog
from tests.support.kraft_nodes import OurNode, _roundtrip, wait_for
from tools.kafka_dist.releases import DEFAULT_RELEASE, release_facts
from wire.messages import ApiVersionsRequest
from wire.records import batch_records, walk


def _snapshots(node) -> list:
    part = node.data / "__cluster_metadata-0"
    return sorted(p.name for p in part.glob("*.checkpoint") if not p.name.startswith("0" * 20 + "-"))


def test_process_writes_metadata_and_snapshots(tmp_path):
    node = OurNode(tmp_path, extra=("metadata.log.max.record.bytes.between.snapshots=600",
                                    "metadata.max.idle.interval.ms=100"))
    node.format_with_ours(uuid.uuid4().hex[:22])
    node.start()
    try:
        node.wait_leader(60)
        wait_for(lambda: len(_snapshots(node)) >= 2, 60, "two snapshots")
        resp = _roundtrip(node.port, ApiVersionsRequest(client_software_name="t",
                                                        client_software_version="1"), 4)
        finalized = {f.name: f.max_version_level for f in resp.finalized_features}
        level = release_facts(DEFAULT_RELEASE)["metadata"][1]  # formatted at the pinned release
        assert finalized["metadata.version"] == level and finalized["kraft.version"] == 1
        assert finalized["group.version"] == 1 and resp.finalized_features_epoch >= 12
    finally:
        node.stop()
    kinds = []
    with FileReplicatedLog.open(node.data) as log:
        offset = log.start_offset()
        while offset < log.end_offset():
            for info in walk(log.read(offset, 1 << 20)):
                if not info.is_control:
                    data = log.read(info.base_offset, 1 << 20)
                    first = walk(data)[0]
                    kinds.append([rec.unframe(v)[0] for _, v in batch_records(data, first)])
                offset = max(offset, info.next_offset)
    assert kinds[0] == [23, 12, 12, 12, 12, 12, 12, 4, 24]
    # the controller's registration next; on a slow machine the idle interval's first
    # NoOpRecord (100 ms here) may share its batch
    assert kinds[1][0] == 27 and all(k == 20 for k in kinds[1][1:]), kinds[1]
    assert kinds[2:] and all(k == [20] for k in kinds[2:])
    assert "snapshot" in node.log_tail(400).lower()
