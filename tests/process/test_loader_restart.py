"""The metadata loader on restart (Kafka's ``KafkaRaftClient.updateListenersProgress``):
a new listener (next offset 0) is handed the latest snapshot when one exists, even
when the log still starts at 0, and replays only the log after it."""
from __future__ import annotations

from kraft_server.controller.image.loader import MetadataLoader
from kraft_server.log.file_log import FileReplicatedLog
from wire.records import walk

from tests.unit.controller.test_controller_active import Single


def _log_bytes_from(log, offset: int) -> int:
    """Bytes of the log's batches from ``offset`` to its end."""
    total = 0
    while offset < log.end_offset():
        data = log.read(offset, 1 << 20)
        for info in walk(data):
            if info.base_offset >= offset:
                total += info.end - info.start
            offset = max(offset, info.next_offset)
    return total


def _run(tmp_path):
    """A single controller with retention off: the log keeps offset 0 beside its snapshots."""
    log = FileReplicatedLog(tmp_path / "__cluster_metadata-0")
    s = Single(log=log, idle_ms=20, snapshot_max_bytes=600, retention_bytes=-1, retention_ms=-1)
    s.run_for(800)
    hwm = s.core.high_watermark
    image = s.controller.image
    log.close()
    return hwm, image


def test_restart_loads_the_latest_snapshot_then_the_tail(tmp_path):
    hwm, image = _run(tmp_path)
    log = FileReplicatedLog(tmp_path / "__cluster_metadata-0")
    latest = log.latest_snapshot()
    assert log.start_offset() == 0 and latest is not None and 0 < latest.offset < hwm
    loader = MetadataLoader(log)
    replayed, loaded = loader.catch_up(hwm)
    assert loaded and loader.loaded_snapshot == latest
    # only the tail after the snapshot was replayed, not the log from offset 0
    assert replayed == _log_bytes_from(log, latest.offset) < _log_bytes_from(log, 0)
    assert loader.next_offset == hwm
    # and the image is the one the running controller had
    assert loader.image.content() == image.content()
    assert (loader.image.offset, loader.image.epoch) == (image.offset, image.epoch)


def test_restart_without_a_snapshot_replays_from_zero(tmp_path):
    log = FileReplicatedLog(tmp_path / "__cluster_metadata-0")
    s = Single(log=log, idle_ms=20, snapshot_max_bytes=10**9, retention_bytes=-1, retention_ms=-1)
    s.run_for(200)
    hwm, image = s.core.high_watermark, s.controller.image
    assert log.latest_snapshot() is None
    loader = MetadataLoader(log)
    replayed, loaded = loader.catch_up(hwm)
    assert not loaded and replayed == _log_bytes_from(log, 0)
    assert loader.image.content() == image.content()


def test_a_running_loader_is_not_reset_to_a_newer_snapshot(tmp_path):
    """Only a new listener (next offset 0) or one below the log start takes a snapshot."""
    hwm, _ = _run(tmp_path)
    log = FileReplicatedLog(tmp_path / "__cluster_metadata-0")
    latest = log.latest_snapshot()
    loader = MetadataLoader(log)
    loader.next_offset = 1  # as if it had replayed offset 0 already
    loader.image.offset = 0
    _, loaded = loader.catch_up(hwm)
    assert not loaded and loader.loaded_snapshot is None and loader.next_offset == hwm
    assert latest is not None
