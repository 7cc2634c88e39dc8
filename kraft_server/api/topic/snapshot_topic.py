"""``__cluster_metadata_snapshot``-0: the oldest snapshot at or after the metadata
log's start offset, so that a consumer can rebuild the full current state after
retention has deleted the beginning of ``__cluster_metadata`` (docs/metadata-topic.md: "the full
state after retention"). Retention moves the log start to a snapshot's end offset, so
this is usually the snapshot *at* the log start; after a restart the log start is the
first segment's base offset, at or below it.

Its records are the snapshot's records at the snapshot's own offsets, 0..n-1: the
metadata records as they are in the ``.checkpoint`` file, and its control records
(SnapshotHeader, KRaftVersion, Voters, SnapshotFooter) as data records keyed by
their type name (``as_data.py``). Every one of those carries two headers naming the
snapshot: ``snapshot.end.offset`` and ``snapshot.epoch`` (ASCII decimals). The end
offset S is where the consumer continues ``__cluster_metadata``: the log holds it for
as long as this snapshot is served (S >= the log start).

While the log start is 0 the served snapshot is the bootstrap checkpoint
(``00000000000000000000-0000000000.checkpoint``) if there is one; with no snapshot
at all the partition is empty (read the log from 0). When retention moves the log
start past S, the next snapshot replaces the content wholesale: a reader that finds the SnapshotHeader's and the
SnapshotFooter's ids differ read across a replacement and starts over. Read it as a
batch (``spark.read``), not as a stream.

The partition's leader epoch is the Raft epoch (checked as on every topic); its
batches carry the snapshot's epoch, and OffsetForLeaderEpoch answers from it.
"""
from __future__ import annotations

import logging
import uuid

from wire.records import CONTROL_MASK, iter_headers

from .as_data import as_data_batch
from .batch_list import BatchList
from .partition import MetadataPartition

log = logging.getLogger(__name__)

SNAPSHOT_TOPIC = "__cluster_metadata_snapshot"
SNAPSHOT_TOPIC_ID = uuid.UUID(int=3)
END_OFFSET_HEADER = "snapshot.end.offset"
EPOCH_HEADER = "snapshot.epoch"


def snapshot_headers(snapshot_id) -> tuple:
    return ((END_OFFSET_HEADER, str(snapshot_id.offset).encode()),
            (EPOCH_HEADER, str(snapshot_id.epoch).encode()))


class SnapshotReader:
    """The served snapshot's batches, loaded when the served snapshot changes."""

    def __init__(self, raft_log):
        self.log = raft_log
        self.snapshot_id = None
        self.batches = BatchList()

    def _wanted(self):
        start = self.log.start_offset()
        kept = [s for s in self.log.snapshot_ids() if s.offset >= start]
        return kept[0] if kept else None

    def current(self) -> BatchList:
        wanted = self._wanted()
        if wanted != self.snapshot_id:
            self.snapshot_id, self.batches = wanted, BatchList()
            if wanted is not None:
                try:
                    self.batches = self._load(wanted)
                except OSError as exc:  # deleted under us: the next read looks again
                    log.warning("cannot read snapshot %s: %s", wanted, exc)
                    self.snapshot_id = None
        return self.batches

    def _load(self, snapshot_id) -> BatchList:
        data = self.log.read_snapshot(snapshot_id, 0, self.log.snapshot_size(snapshot_id))
        headers = snapshot_headers(snapshot_id)
        batches = BatchList()
        for pos, header in iter_headers(data):
            raw = memoryview(data)[pos:pos + header.size]
            if header.attributes & CONTROL_MASK:
                raw = as_data_batch(raw, headers)
            batches.append(header.base_offset, header.next_offset, raw)
        return batches

    def end(self) -> int:
        batches = self.current()
        return batches.nexts[-1] if len(batches) else 0

    def read(self, offset: int, max_bytes: int, end: int) -> bytes:
        out, _, _ = self.current().read(offset, max_bytes, end)
        return b"".join(out)

    def offset_for_timestamp(self, ts: int, end: int):
        return self.current().offset_for_timestamp(ts, end)

    def max_timestamp(self, end: int):
        return self.current().max_timestamp(end)


class SnapshotPartition(MetadataPartition):
    name = SNAPSHOT_TOPIC
    topic_id = SNAPSHOT_TOPIC_ID

    def __init__(self, main: MetadataPartition):
        super().__init__(main.core, main.log, main.node_id)
        self.reader = SnapshotReader(main.log)

    def high_watermark(self) -> int:
        return self.reader.end()

    def high_watermark_current(self) -> bool:
        return True

    def is_leader(self) -> bool:
        return True  # nothing to catch up on: past the end is out of range

    def start_offset(self) -> int:
        return 0

    def end_offset(self) -> int:
        return self.reader.end()

    def _snapshot_epoch(self) -> int:
        self.reader.current()
        snapshot_id = self.reader.snapshot_id
        return snapshot_id.epoch if snapshot_id is not None else -1

    def epoch_of(self, offset: int) -> int:
        return self._snapshot_epoch()

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """A consumer that read an older snapshot's batches learns its position is gone
        (the end of its epoch is offset 0); the served snapshot's epoch ends at its end."""
        ours = self._snapshot_epoch()
        if epoch < 0 or ours < 0:
            return -1, -1
        if epoch < ours:
            return epoch, 0
        return ours, self.reader.end()
