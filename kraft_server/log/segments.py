"""One log segment: ``%020d.log`` (the batches, byte for byte as Kafka writes them)
with its ``.index`` and ``.timeindex`` companions.

A segment keeps, in memory, where each batch starts (``positions``) and its base
and next offsets, so reads and truncation need no on-disk offset index. The
``.index``/``.timeindex`` files are created empty: a Kafka controller opening
this directory recovers the metadata log from offset 0 and rebuilds them, and an
empty offset index only makes its lookups start at the segment's first byte, which
is still correct (``kafka-dump-log`` does not need them either).
"""
from __future__ import annotations

import bisect
import os
from pathlib import Path

from wire.records.header import LOG_OVERHEAD, BatchHeader

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"


def segment_name(base_offset: int, suffix: str = LOG_SUFFIX) -> str:
    return f"{base_offset:020d}{suffix}"


def parse_segment_name(name: str) -> int | None:
    stem, dot, suffix = name.partition(".")
    if dot and "." + suffix == LOG_SUFFIX and len(stem) == 20 and stem.isdigit():
        return int(stem)
    return None


class Segment:
    def __init__(self, directory: Path, base_offset: int, *, create: bool = False) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.path = directory / segment_name(base_offset)
        flags = os.O_RDWR | (os.O_CREAT if create else 0)
        self.fd = os.open(self.path, flags, 0o644)
        self.size = os.fstat(self.fd).st_size
        self.positions: list[int] = []
        self.base_offsets: list[int] = []
        self.next_offsets: list[int] = []
        self.last_timestamp = -1
        self.dirty = False
        for suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX):
            companion = directory / segment_name(base_offset, suffix)
            if create or not companion.exists():
                companion.touch()

    # -- positions -----------------------------------------------------------------
    @property
    def next_offset(self) -> int:
        return self.next_offsets[-1] if self.next_offsets else self.base_offset

    @property
    def is_empty(self) -> bool:
        return not self.positions

    def _track(self, position: int, header: BatchHeader) -> None:
        self.positions.append(position)
        self.base_offsets.append(header.base_offset)
        self.next_offsets.append(header.next_offset)
        self.last_timestamp = max(self.last_timestamp, header.max_timestamp)

    def batch_index_for(self, offset: int) -> int | None:
        """Index of the batch containing ``offset`` (or the first one after it)."""
        i = bisect.bisect_right(self.next_offsets, offset)
        return i if i < len(self.positions) else None

    # -- I/O -------------------------------------------------------------------------
    def append(self, data: bytes | memoryview, headers: list[tuple[int, BatchHeader]]) -> None:
        start = self.size
        os.pwrite(self.fd, data, start)
        for pos, header in headers:
            self._track(start + pos, header)
        self.size += len(data)
        self.dirty = True

    def recovered(self, headers: list[tuple[int, BatchHeader]], valid_bytes: int) -> None:
        """Adopt what recovery found valid, cutting anything after it."""
        for pos, header in headers:
            self._track(pos, header)
        if valid_bytes < self.size:
            os.ftruncate(self.fd, valid_bytes)
            os.fsync(self.fd)
            self.size = valid_bytes
            self._reset_indexes()

    def _reset_indexes(self) -> None:
        for suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX):
            path = self.directory / segment_name(self.base_offset, suffix)
            if path.exists():
                os.truncate(path, 0)

    def read(self, start: int, end: int) -> bytes:
        return os.pread(self.fd, end - start, start)

    def read_from(self, offset: int, max_bytes: int) -> bytes:
        """Whole batches from the one holding ``offset``; at least one (KIP-74)."""
        i = self.batch_index_for(offset)
        if i is None:
            return b""
        start = self.positions[i]
        j = i + 1
        while j < len(self.positions) and self.positions[j] - start <= max_bytes:
            j += 1
        # positions[j] (or size) ends the range; step back if the last batch overflows
        end = self.positions[j] if j < len(self.positions) else self.size
        if end - start > max_bytes and j - 1 > i:
            end = self.positions[j - 1]
        return self.read(start, end)

    def truncate_to(self, offset: int) -> int:
        """Drop the batch holding ``offset`` and everything after; returns the new
        next offset (a batch is never split, as in Kafka's ``LogSegment.truncateTo``)."""
        i = self.batch_index_for(offset)
        if i is None:
            return self.next_offset
        new_size = self.positions[i]
        del self.positions[i:], self.base_offsets[i:], self.next_offsets[i:]
        os.ftruncate(self.fd, new_size)
        self.size = new_size
        self.dirty = True
        self._reset_indexes()
        return self.next_offset

    def flush(self) -> None:
        if self.dirty:
            os.fsync(self.fd)
            self.dirty = False

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def delete(self) -> None:
        self.close()
        for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX):
            (self.directory / segment_name(self.base_offset, suffix)).unlink(missing_ok=True)

    def __repr__(self) -> str:
        return f"Segment({self.base_offset}, size={self.size}, next={self.next_offset})"


def batch_size(header: BatchHeader) -> int:
    return header.batch_length + LOG_OVERHEAD
