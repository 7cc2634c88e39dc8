"""When to write a snapshot, and what goes in it (Kafka's ``SnapshotGenerator`` and
``RecordsSnapshotWriter``).

Trigger (``SnapshotGenerator.publishLogDelta``), checked each time committed log
batches were replayed: a snapshot is due once ``metadata.log.max.record.bytes.between.snapshots``
bytes of batches were replayed since the last one, or else once
``metadata.log.max.snapshot.interval.ms`` passed since the last one (0 disables
the time rule). Loading a snapshot or writing one resets both counters
(``resetSnapshotCounters``); the clock starts when the generator does. Leaders
and followers alike snapshot what they replayed.

Layout (``RecordsSnapshotWriter``), every batch with the snapshot's epoch as its
partition leader epoch and offsets from 0:

* a control batch: SnapshotHeaderRecord (LastContainedLogTimestamp = append time
  of the last replayed batch) and, under kraft.version ≥ 1, KRaftVersionRecord and
  the VotersRecord in force at the snapshot's last offset;
* data batches: the image's records (``MetadataImage.snapshot_records``);
* a control batch with the SnapshotFooterRecord.

The id is ``(last replayed offset + 1, its epoch)``; nothing is written when that
snapshot exists already. The file appears only after fsync and rename
(``FileSnapshotWriter.freeze``).
"""
from __future__ import annotations

import logging

from kraft_server.common.values import OffsetAndEpoch
from wire.messages import KRaftVersionRecord, SnapshotFooterRecord, SnapshotHeaderRecord
from wire.records import ControlRecordType, build_batch, build_control_batch

log = logging.getLogger(__name__)

RECORDS_PER_BATCH = 1024


def render_snapshot(image, snapshot_id: OffsetAndEpoch, kraft_version: int, voters,
                    now_ms: int) -> bytes:
    """The snapshot's bytes. ``voters`` is a ``VoterSet`` (used when kraft.version ≥ 1)."""
    epoch = snapshot_id.epoch
    head = [(ControlRecordType.SNAPSHOT_HEADER,
             SnapshotHeaderRecord(version=0, last_contained_log_timestamp=max(image.last_timestamp, 0)))]
    if kraft_version > 0:
        head.append((ControlRecordType.KRAFT_VERSION,
                     KRaftVersionRecord(version=0, kraft_version=kraft_version)))
        if voters is not None:
            head.append((ControlRecordType.KRAFT_VOTERS, voters.to_voters_record()))
    parts = [build_control_batch(0, epoch, now_ms, head)]
    offset = len(head)
    values = image.snapshot_records()
    for i in range(0, len(values), RECORDS_PER_BATCH):
        chunk = values[i:i + RECORDS_PER_BATCH]
        parts.append(build_batch(offset, epoch, now_ms, [(None, v) for v in chunk]))
        offset += len(chunk)
    parts.append(build_control_batch(offset, epoch, now_ms, [
        (ControlRecordType.SNAPSHOT_FOOTER, SnapshotFooterRecord(version=0))]))
    return b"".join(parts)


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

    def emit(self, raft_log, image, kraft_version: int, voters, now_ms: int) -> OffsetAndEpoch | None:
        """Write the image as a snapshot; returns its id (None when it already exists)."""
        self.reset(now_ms)
        if image.offset < 0:
            return None
        snapshot_id = OffsetAndEpoch(image.offset + 1, image.epoch)
        latest = raft_log.latest_snapshot()
        if latest is not None and (latest >= snapshot_id or latest.offset >= snapshot_id.offset):
            return None  # Kafka: never older than (or equal to) the latest snapshot
        data = render_snapshot(image, snapshot_id, kraft_version, voters, now_ms)
        writer = raft_log.create_snapshot(snapshot_id)
        try:
            writer.append(data)
            writer.freeze()
        except BaseException:
            writer.abort()
            raise
        self.written.append(snapshot_id)
        log.info("Created snapshot %s (%d bytes)", snapshot_id, len(data))
        return snapshot_id
