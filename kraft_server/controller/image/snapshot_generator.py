"""When to write a snapshot, and what goes in it (Kafka's ``SnapshotGenerator`` and
``RecordsSnapshotWriter``).

Trigger (``SnapshotGenerator.publishLogDelta``), checked each time committed log
batches were replayed: a snapshot is due once ``metadata.log.max.record.bytes.between.snapshots``
bytes of batches were replayed since the last one, or else once
``metadata.log.max.snapshot.interval.ms`` passed since the last one (0 disables
the time rule). Loading a snapshot or writing one resets both counters
(``resetSnapshotCounters``); the clock starts when the generator does. Leaders
and followers alike snapshot what they replayed.

Layout and rendering: ``snapshot_build.py``. A due snapshot is rendered a slice per
turn of the loop (``start``, then ``SnapshotBuild.step``, then ``finish``), as Kafka
writes it on the loader's thread and not the controller's; while one is being
rendered no other starts (Kafka does not schedule one while its emitter's queue is
busy) and the counters keep counting.

The id is ``(last replayed offset + 1, its epoch)``; nothing is written when that
snapshot exists already. The file appears only after fsync and rename
(``FileSnapshotWriter.freeze``).
"""
from __future__ import annotations

import logging
import time

from kraft_server.common.values import OffsetAndEpoch

from .snapshot_build import RECORDS_PER_BATCH, SnapshotBuild, render_snapshot

log = logging.getLogger(__name__)

__all__ = ["RECORDS_PER_BATCH", "SnapshotGenerator", "render_snapshot"]


class SnapshotGenerator:
    def __init__(self, max_bytes: int, max_interval_ms: int, now_ms: int) -> None:
        self.max_bytes = max_bytes
        self.max_interval_ms = max_interval_ms
        self.bytes_since = 0
        self.last_ms = now_ms
        self.written: list[OffsetAndEpoch] = []

    def reset(self, now_ms: int) -> None:
        self.bytes_since = 0
        self.last_ms = now_ms

    def due(self, replayed_bytes: int, now_ms: int) -> str | None:
        """Why a snapshot is due after replaying ``replayed_bytes`` more, or None."""
        if replayed_bytes <= 0:
            return None
        self.bytes_since += replayed_bytes
        if self.bytes_since >= self.max_bytes:
            return f"we have replayed at least {self.max_bytes} bytes"
        if self.max_interval_ms and now_ms - self.last_ms >= self.max_interval_ms:
            return f"we have waited at least {self.max_interval_ms} ms"
        return None

    def start(self, raft_log, image, kraft_version: int, voters, now_ms: int) -> SnapshotBuild | None:
        """Begin rendering the image as a snapshot (None when that snapshot, or a newer
        one, exists already)."""
        self.reset(now_ms)
        if image.offset < 0:
            return None
        snapshot_id = OffsetAndEpoch(image.offset + 1, image.epoch)
        if self._superseded(raft_log, snapshot_id):
            return None
        return SnapshotBuild(image, snapshot_id, kraft_version, voters, now_ms)

    @staticmethod
    def _superseded(raft_log, snapshot_id) -> bool:
        latest = raft_log.latest_snapshot()
        # Kafka: never older than (or equal to) the latest snapshot
        return latest is not None and (latest >= snapshot_id or latest.offset >= snapshot_id.offset)

    def finish(self, raft_log, build: SnapshotBuild, now_ms: int) -> OffsetAndEpoch | None:
        """Write a rendered snapshot; its id (None when one as new came meanwhile)."""
        snapshot_id = build.snapshot_id
        if self._superseded(raft_log, snapshot_id):
            return None
        data = build.data()
        t0 = time.perf_counter()
        writer = raft_log.create_snapshot(snapshot_id)
        try:
            writer.append(data)
            writer.freeze()
        except BaseException:
            writer.abort()
            raise
        self.written.append(snapshot_id)
        log.info("Created snapshot %s (%d bytes): rendered in %d slice(s), %.0f ms on the loop over %d ms, "
                 "written in %.0f ms", snapshot_id, len(data), build.slices, build.busy_s * 1000,
                 now_ms - build.now_ms, (time.perf_counter() - t0) * 1000)
        return snapshot_id

    def emit(self, raft_log, image, kraft_version: int, voters, now_ms: int) -> OffsetAndEpoch | None:
        """Write the image as a snapshot at once; returns its id (None when it already exists)."""
        build = self.start(raft_log, image, kraft_version, voters, now_ms)
        if build is None:
            return None
        build.finish()
        return self.finish(raft_log, build, now_ms)
