"""The live tail of committed records: a cursor that follows the committed, flushed
prefix of ``__cluster_metadata`` and keeps the last ``capacity`` records.

Following is cheap: whole batches are read from the log (page cache) at most
``budget`` bytes per Ready cycle, and record values are kept as bytes; they are
decoded (``fields.decode_value``) only when a page asks, and then once. A cursor
that falls far behind (a burst of commits, the log start moving past it) jumps to
the high watermark's batch rather than replaying what nobody will read.
"""
from __future__ import annotations

import logging
from collections import deque

from wire.records import BatchError, batch_records, control_records, read_header, walk

from .fields import decode_control, decode_value

log = logging.getLogger(__name__)

CAPACITY = 200  # records kept
PER_UPDATE = 40  # records sent to a page per update (at most 4 a second)
BUDGET_BYTES = 64 * 1024  # log bytes read per Ready cycle
JUMP_OFFSETS = 20_000  # further behind than this: jump to the head
NOOP = "NoOpRecord"


class TailEntry:
    """One record: where and when it was committed, and its value until decoded."""

    __slots__ = ("seq", "offset", "timestamp", "control", "raw", "_plain")

    def __init__(self, seq: int, offset: int, timestamp: int, control, raw):
        self.seq = seq
        self.offset = offset
        self.timestamp = timestamp
        self.control = control  # (ControlRecordType, message) for a control record, else None
        self.raw = raw
        self._plain = None

    def plain(self) -> dict:
        """``{seq, offset, time, type, version, fields}`` (decoded on first use)."""
        if self._plain is None:
            if self.control is not None:
                decoded = decode_control(*self.control)
            else:
                decoded = decode_value(self.raw)
            self._plain = {"seq": self.seq, "offset": self.offset, "time": self.timestamp, **decoded}
            self.raw = self.control = None
        return self._plain


class RecordTail:
    def __init__(self, raft_log, capacity: int = CAPACITY, budget: int = BUDGET_BYTES):
        self.log = raft_log
        self.entries: deque[TailEntry] = deque(maxlen=capacity)
        self.budget = budget
        self.cursor: int | None = None  # next offset to read; None until the HWM is known
        self.seq = 0  # records seen so far (the page asks for those after a seq)
        self.skipped = 0  # records jumped over

    def follow(self, high_watermark: int | None) -> None:
        """Read what committed since the last call (about ``budget`` bytes of it)."""
        log_ = self.log
        if high_watermark is None:
            return
        limit = min(high_watermark, log_.flushed_offset(), log_.end_offset())
        if self.cursor is None:
            self.cursor = max(log_.start_offset(), limit - 1)
        if self.cursor < log_.start_offset() or limit - self.cursor > JUMP_OFFSETS:
            target = max(log_.start_offset(), limit - 1)
            self.skipped += max(0, target - self.cursor)
            self.cursor = target
        read = 0
        while self.cursor < limit and read < self.budget:
            try:
                data = log_.read(self.cursor, self.budget)
                infos = walk(data)
            except (ValueError, BatchError) as exc:  # truncated under us: try again next cycle
                log.debug("console tail cannot read at %d: %s", self.cursor, exc)
                return
            if not infos:
                return
            for info in infos:
                if info.base_offset >= limit:
                    break
                self._take(data, info)
                self.cursor = info.next_offset
            read += len(data)

    def _take(self, data, info) -> None:
        timestamp = read_header(data, info.start).max_timestamp
        try:
            if info.is_control:
                items = [(kind_msg, None) for kind_msg in control_records(data, info)]
            else:
                items = [(None, value) for _, value in batch_records(data, info)]
        except ValueError as exc:  # e.g. a compressed batch: shown as one bad entry
            items = [(("error", f"undecodable batch: {exc}"), None)]
        for i, (control, value) in enumerate(items):
            offset = info.base_offset + i
            if offset < self.cursor:
                continue
            self.seq += 1
            self.entries.append(TailEntry(self.seq, offset, timestamp, control, value))

    def since(self, seq: int, limit: int = PER_UPDATE) -> list[dict]:
        """Decoded records after ``seq``, oldest first; all those kept for a page that has
        none (``seq`` 0). A page further behind than ``limit`` records gets ``limit`` of
        them (it counts the rest as not shown): every one that is not a NoOpRecord first,
        newest first, then the newest NoOps. NoOps are the idle leader's clock; a page
        that falls behind loses them, not the records that carry decisions."""
        newer = [e.plain() for e in self.entries if e.seq > seq]
        if seq == 0 or len(newer) <= limit:
            return newer
        kept = [r for r in newer if r["type"] != NOOP][-limit:]
        room = limit - len(kept)
        if room:
            kept += [r for r in newer if r["type"] == NOOP][-room:]
        return sorted(kept, key=lambda r: r["seq"])
