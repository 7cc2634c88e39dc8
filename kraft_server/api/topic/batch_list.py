"""Whole record batches held in offset order, read as a log partition is read.

The companion topics (``control_topic``, ``snapshot_topic``) serve batches that are
not laid out as one segment file: control batches re-encoded as data, or a
snapshot's batches. Each entry is ``(base offset, next offset, bytes)``; offsets
may have gaps between entries. ``read`` has the log's rules: whole batches from
the one holding (or first after) the offset, below ``end``, within ``max_bytes``
but at least one batch (KIP-74).
"""
from __future__ import annotations

import bisect

from wire.records import decode_batch


class BatchList:
    def __init__(self):
        self.bases: list[int] = []
        self.nexts: list[int] = []  # ascending
        self.data: list = []  # bytes-like, one whole batch each

    def __len__(self) -> int:
        return len(self.data)

    def append(self, base: int, next_offset: int, data) -> None:
        self.bases.append(base)
        self.nexts.append(next_offset)
        self.data.append(data)

    def drop_below(self, offset: int) -> None:
        """Forget the batches wholly below ``offset`` (the log start moved)."""
        i = bisect.bisect_right(self.nexts, offset)
        if i:
            del self.bases[:i], self.nexts[:i], self.data[:i]

    def read(self, offset: int, max_bytes: int, end: int) -> tuple[list, int, bool]:
        """(the batches to serve, the offset after the last one (or ``offset``), whether
        batches below ``end`` were left for the next read)."""
        out, size, after = [], 0, offset
        i = bisect.bisect_right(self.nexts, offset)
        while i < len(self.data) and self.nexts[i] <= end:
            n = len(self.data[i])
            if out and size + n > max_bytes:
                break
            out.append(self.data[i])
            size += n
            after = self.nexts[i]
            i += 1
        more = i < len(self.data) and self.nexts[i] <= end
        return out, after, more

    # -- timestamps (ListOffsets), judged by each batch's records as Kafka does ------------
    def _records(self, end: int):
        for base, next_offset, data in zip(self.bases, self.nexts, self.data):
            if next_offset > end:
                return
            batch, _ = decode_batch(data, verify_crc=False)
            for record in batch.records:
                yield (batch.base_offset + record.offset_delta,
                       batch.base_timestamp + record.timestamp_delta, batch.partition_leader_epoch)

    def offset_for_timestamp(self, ts: int, end: int):
        """(offset, timestamp, epoch) of the first record below ``end`` stamped >= ``ts``."""
        return next((found for found in self._records(end) if found[1] >= ts), None)

    def max_timestamp(self, end: int):
        """(offset, timestamp, epoch) of the first record with the largest timestamp."""
        best = None
        for found in self._records(end):
            if best is None or found[1] > best[1]:
                best = found
        return best
