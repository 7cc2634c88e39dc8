"""``high-watermark``: the highest high watermark this node has known, a hint for
``kraft-metadata-quorum recover`` (``tools/metadata_quorum/recover.py``).

Kafka keeps the high watermark in memory only, so a controller that outlives a lost
majority cannot say how much of its log was committed but for its latest snapshot.
This file says more. One line, ``<offset> <epoch> crc32c=<8 hex>``, padded to a
fixed size: the high watermark, the leader epoch of the batch just below it (a reader
checks it against the log: the same epoch at the same offset means the same records,
so a log truncated and rewritten since is caught), and the CRC-32C of the two.

Written in place at most once a second while the value moves, never fsync'd: a hint.
A kill -9 leaves it in the page cache; a power cut may leave an older value (an older
bound) or a torn line (its CRC fails: no hint). Any high watermark ever known stays
true: committed records stay committed.
"""
from __future__ import annotations

import os
from pathlib import Path

from kraft_server.common.values import OffsetAndEpoch
from wire.records.crc import crc32c

HWM_HINT = "high-watermark"
LINE_SIZE = 64
WRITE_EVERY_MS = 1000


def render(hint: OffsetAndEpoch) -> bytes:
    body = b"%d %d" % (hint.offset, hint.epoch)
    line = body + b" crc32c=%08x" % crc32c(body)
    return line.ljust(LINE_SIZE - 1) + b"\n"


def parse(data: bytes) -> OffsetAndEpoch | None:
    """The hint, or None when the line is not whole."""
    try:
        body, _, check = data.strip().rpartition(b" crc32c=")
        if check != b"%08x" % crc32c(body):
            return None
        offset, epoch = (int(x) for x in body.split())
    except ValueError:
        return None
    return OffsetAndEpoch(offset, epoch) if offset > 0 and epoch >= 0 else None


def read_hint(partition_dir: str | Path) -> OffsetAndEpoch | None:
    try:
        return parse((Path(partition_dir) / HWM_HINT).read_bytes())
    except OSError:
        return None


def epoch_below(entries: list[tuple[int, int]], offset: int) -> int | None:
    """The leader epoch of the record at ``offset - 1`` from (epoch, start offset) entries."""
    found = None
    for epoch, start in entries:
        if start > offset - 1:
            break
        found = epoch
    return found


class HintWriter:
    """Rewrites the hint when the high watermark moved and a second has passed."""

    def __init__(self, partition_dir: str | Path, every_ms: int = WRITE_EVERY_MS):
        self.path = Path(partition_dir) / HWM_HINT
        self.every_ms = every_ms
        self.written: int | None = None
        self.at_ms = -every_ms

    def observe(self, high_watermark: int | None, epoch_entries, now_ms: int) -> None:
        """``epoch_entries``: a callable giving the log's (epoch, start offset) pairs."""
        if high_watermark is None or high_watermark == self.written or now_ms - self.at_ms < self.every_ms:
            return
        epoch = epoch_below(epoch_entries(), high_watermark)
        if epoch is None:
            return  # the batch below it is under a snapshot: the snapshot says as much
        self.at_ms, self.written = now_ms, high_watermark
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        except OSError:
            return  # a hint: the disk's own troubles are the log's to report
        try:
            os.pwrite(fd, render(OffsetAndEpoch(high_watermark, epoch)), 0)
        except OSError:
            pass
        finally:
            os.close(fd)
