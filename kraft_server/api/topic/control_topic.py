"""``__cluster_metadata_control``-0: the control records of ``__cluster_metadata``
(LeaderChange, Voters, KRaftVersion, and any other control batch in the log) as
ordinary data records at their original offsets (``as_data.py``), so consumers and
Spark see the quorum's leader and voter history that Kafka consumers otherwise skip.

Offsets line up with the metadata topic: the partition has the same log start,
high watermark, leader epochs and epoch cache. Between control batches there are
gaps; from the last control batch below the high watermark up to it, a fetch gets
an empty control batch (``skip_batch``) so that the consumer's position reaches the
high watermark, as it does on the metadata topic.

The control batches are found by reading batch headers once, up to the high
watermark as it moves, and kept re-encoded (a few per election or membership change);
those below a new log start are dropped.
"""
from __future__ import annotations

import uuid

from wire.records import CONTROL_MASK

from .as_data import as_data_batch, skip_batch
from .batch_list import BatchList
from .partition import MetadataPartition

CONTROL_TOPIC = "__cluster_metadata_control"
CONTROL_TOPIC_ID = uuid.UUID(int=2)  # fixed, so clients may address it by id (Fetch v13+)


class ControlReader:
    def __init__(self, main: MetadataPartition):
        self.main = main
        self.batches = BatchList()
        self.scanned = 0  # every control batch below this offset is in ``batches``

    def _update(self, end: int) -> None:
        start = self.main.start_offset()
        if self.scanned < start:  # retention, or a snapshot installed on a follower
            self.batches.drop_below(start)
            self.scanned = start
        if self.scanned >= end:
            return
        for header, raw in self.main.reader.batches(self.scanned, end):
            if header.attributes & CONTROL_MASK:
                self.batches.append(header.base_offset, header.next_offset, as_data_batch(raw))
            self.scanned = header.next_offset

    def read(self, offset: int, max_bytes: int, end: int) -> bytes:
        self._update(end)
        out, after, more = self.batches.read(offset, max_bytes, end)
        after = max(after, offset)
        if not more and after < end:
            out.append(skip_batch(after, end, self.main.epoch_of(end - 1)))
        return b"".join(out)

    def offset_for_timestamp(self, ts: int, end: int):
        self._update(end)
        return self.batches.offset_for_timestamp(ts, end)

    def max_timestamp(self, end: int):
        self._update(end)
        return self.batches.max_timestamp(end)


class ControlPartition(MetadataPartition):
    """The metadata partition's positions and epochs, the control topic's records."""

    name = CONTROL_TOPIC
    topic_id = CONTROL_TOPIC_ID

    def __init__(self, main: MetadataPartition):
        super().__init__(main.core, main.log, main.node_id)
        self.main = main
        self.reader = ControlReader(main)

    def high_watermark(self) -> int | None:
        return self.main.high_watermark()
