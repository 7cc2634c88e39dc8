"""One log segment: ``%020d.log`` (the batches, byte for byte as Kafka writes them)
with its ``.index`` and ``.timeindex`` companions, and our batch index
(``batch_index.py``: ``.batchpos``, ``.batchnext``, ``.batchcheck``, ``.batchmarks``:
where each flushed batch starts, read back at start-up instead of scanning the
segment again; ``.batchseal``: CRCs that vouch for them and for the flushed bytes).

A segment keeps, in memory, where each batch starts (``positions``) and the offset
after it (``next_offsets``), so reads and truncation need no on-disk offset index.
Both are ``Column``s (``column.py``: 8 bytes a batch, not a list of int objects: a
leader with a million one-record batches holds 16 MB of index, not ~120 MB; what
the batch index held at start-up stays mapped from its files, not copied). The
``.index``/``.timeindex`` files are created empty: a Kafka controller opening
this directory recovers the metadata log from offset 0 and rebuilds them, and an
empty offset index only makes its lookups start at the segment's first byte, which
is still correct (``kafka-dump-log`` does not need them either).
"""
from __future__ import annotations

import os
from array import array
from pathlib import Path

from wire.exceptions import DecodeError
from wire.records.header import HEADER_SIZE, LOG_OVERHEAD, BatchHeader, crc_matches, read_header

from . import batch_index, disk
from .recovery import sealed_bytes_changed
from .column import Column

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
SCAN_CHUNK = 4 * 1024 * 1024  # bytes read at a time by recovery
CONTROL_MASK = batch_index.CONTROL_MASK


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
        self.positions = Column()  # where each batch starts
        self.next_offsets = Column()  # the offset after each batch (ascending)
        self.controls = array("q")  # indexes of the control batches (voter history)
        self.last_timestamp = -1
        self.dirty = False
        self.sealed = None  # the seal its batch index was loaded with (``recover``)
        for suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX):
            companion = directory / segment_name(base_offset, suffix)
            if create or not companion.exists():
                companion.touch()
        self.index = batch_index.Writer(directory, f"{base_offset:020d}")
        if create:
            self.index.delete()  # a leftover of an earlier segment at this offset

    # -- positions -----------------------------------------------------------------
    @property
    def next_offset(self) -> int:
        return self.next_offsets.last(self.base_offset)

    @property
    def is_empty(self) -> bool:
        return self.positions.head is None and not self.positions.tail

    def _track(self, position: int, header: BatchHeader) -> None:
        if header.is_control:
            self.controls.append(len(self.positions))
        self.positions.tail.append(position)  # appends go to the tail (column.py)
        self.next_offsets.tail.append(header.next_offset)
        self.last_timestamp = max(self.last_timestamp, header.max_timestamp)

    def control_offsets(self, start: int) -> list[int]:
        """Base offsets of the control batches at or after ``start``."""
        return [b for b in map(self.base_offset_at, self.controls) if b >= start]

    def base_offset_at(self, i: int) -> int:
        """Base offset of batch ``i`` (batches are contiguous: the previous one's next)."""
        return self.next_offsets[i - 1] if i > 0 else self.base_offset

    def batch_index_for(self, offset: int) -> int | None:
        """Index of the batch containing ``offset`` (or the first one after it)."""
        i = self.next_offsets.bisect_right(offset)
        return i if i < len(self.positions) else None

    # -- I/O -------------------------------------------------------------------------
    def append(self, data: bytes | memoryview, headers: list[tuple[int, BatchHeader]]) -> None:
        start = self.size
        try:
            disk.write_at(self.fd, data, start, self.path, "append to")
        except disk.LogDirFailure:
            # A full disk must not leave part of a batch behind: cut it off (no space
            # needed), so the log on disk stays whole for the restart.
            try:
                os.ftruncate(self.fd, start)
            except OSError:
                pass
            raise
        for pos, header in headers:
            self._track(start + pos, header)
            self.index.add(header, self.last_timestamp)
        self.size += len(data)
        self.dirty = True

    def recover(self, expected_offset: int | None, on_epoch=None, checked: bool = False) -> str | None:
        """Keep the longest valid prefix of the segment (what ``recovery.scan_segment``
        checks: header, whole batch, CRC-32C, offsets that continue), indexing it as it
        goes; no per-batch objects are kept. The batches a valid batch index
        covers are taken from it (``batch_index.load``; ``checked``: its files were
        written or checked under this boot); the scan starts after them.
        A ``.batchindex`` of an earlier version is deleted, never read.
        Calls ``on_epoch(epoch, base_offset)`` for each batch whose partition leader
        epoch differs from the previous batch's. Returns why it stopped early, or None;
        raises ``LogCorruption``, changing nothing, when bytes its index sealed changed."""
        size, fd = self.size, self.fd
        pos, chunk_start, chunk = 0, 0, b""
        next_offset = expected_offset
        last_epoch = None
        problem = None
        self.index.old_path.unlink(missing_ok=True)
        loaded, pos = batch_index.load(self.index, fd, size, checked)
        self.from_index = loaded.count if loaded is not None else 0  # batches not scanned
        self.sealed = loaded.seal if loaded is not None else None  # its bytes: ``SealCheck``
        if loaded is None:
            self.index.delete()
        else:
            self.positions, self.next_offsets = loaded.positions, loaded.next_offsets
            self.controls = loaded.controls
            self.last_timestamp = max(self.last_timestamp, loaded.max_timestamp)
            self.index.adopt(loaded)
            for i, epoch in loaded.epoch_starts:
                if on_epoch is not None:
                    on_epoch(epoch, self.base_offset_at(i))
                last_epoch = epoch
            next_offset = self.next_offsets[-1]
        positions, controls = self.positions, self.controls
        # the scanned batches follow the indexed ones: appended to the columns' tails
        append_position, append_next = positions.tail.append, self.next_offsets.tail.append
        last_timestamp = self.last_timestamp
        index = self.index
        # the index's check entries, packed here: the header is unpacked once (its named
        # fields are Python-level properties, ~0.1 us each, a million batches at start)
        pending_check, pack_check, marks = index.pending_check, batch_index.CHECK.pack, index.marks
        scanned = 0
        while pos < size:
            rel = pos - chunk_start
            if rel + HEADER_SIZE > len(chunk):
                chunk_start, rel = pos, 0
                chunk = os.pread(fd, min(SCAN_CHUNK, size - pos), pos)
            try:
                header = read_header(chunk, rel)
            except DecodeError as exc:
                problem = f"bad batch header at position {pos}: {exc}"
                break
            base, length, epoch, _, crc, attributes, last_delta, _, max_timestamp = header[:9]
            total = length + LOG_OVERHEAD
            if pos + total > size:
                problem = f"truncated batch at position {pos} ({size - pos} of {total} bytes)"
                break
            if rel + total > len(chunk):
                chunk_start, rel = pos, 0
                chunk = os.pread(fd, min(max(SCAN_CHUNK, total), size - pos), pos)
            if not crc_matches(chunk, rel, header):
                problem = f"CRC mismatch in batch at offset {base} (position {pos})"
                break
            if last_delta < 0 or (next_offset is not None and base != next_offset):
                problem = f"batch at position {pos} has base offset {base}, expected {next_offset}"
                break
            next_offset = base + last_delta + 1
            if attributes & CONTROL_MASK or epoch != last_epoch:  # rare: a mark in the index
                i = len(positions)
                index.mark(i, epoch, attributes)
                if attributes & CONTROL_MASK:
                    controls.append(i)
                if epoch != last_epoch:
                    last_epoch = epoch
                    if on_epoch is not None:
                        on_epoch(epoch, base)
            append_position(pos)
            append_next(next_offset)
            if max_timestamp > last_timestamp:
                last_timestamp = max_timestamp
            pending_check += pack_check(last_timestamp, crc, len(marks))
            scanned += 1
            pos += total
        damaged = self.index.damaged_end
        if damaged:  # the seal vouched for the index files, not for the bytes
            raise sealed_bytes_changed(self.path, damaged, problem if problem is not None and pos < damaged
                                       else None)
        index.pending_count += scanned
        self.last_timestamp = last_timestamp
        self._cut(pos)
        if index.pending_count:
            self.dirty = True  # the next flush makes the scanned batches durable, then indexes them
        return problem

    def _cut(self, valid_bytes: int) -> None:
        if valid_bytes < self.size:
            disk.truncate(self.fd, valid_bytes, self.path)
            disk.fsync(self.fd, self.path)
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
        positions = self.positions
        start = positions[i]
        # the first batch starting more than max_bytes past ``start`` ends the range
        j = positions.bisect_right(start + max_bytes, i + 1)
        end = positions[j] if j < len(positions) else self.size
        if end - start > max_bytes and j - 1 > i:
            end = positions[j - 1]  # the last batch overflows: leave it out
        return self.read(start, end)

    def truncate_to(self, offset: int) -> int:
        """Drop the batch holding ``offset`` and everything after; returns the new
        next offset (a batch is never split, as in Kafka's ``LogSegment.truncateTo``)."""
        i = self.batch_index_for(offset)
        if i is None:
            return self.next_offset
        new_size = self.positions[i]
        del self.positions[i:], self.next_offsets[i:]
        while self.controls and self.controls[-1] >= i:
            self.controls.pop()
        kept_max = self.index.max_timestamp_at(i - 1)
        if kept_max is not None:
            self.last_timestamp = kept_max  # of the batches kept
        self.index.truncate(i)
        disk.truncate(self.fd, new_size, self.path)
        self.size = new_size
        self.dirty = True
        self._reset_indexes()
        return self.next_offset

    def flush(self) -> None:
        if self.dirty:
            disk.fsync(self.fd, self.path)
            self.dirty = False
            self.index.flushed(self.positions, self.next_offsets, self.fd, self.size)

    def close(self) -> None:
        self.index.close()
        self.positions.release()  # unmapped: a closed segment is not read
        self.next_offsets.release()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def delete(self) -> None:
        self.close()
        for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX):
            (self.directory / segment_name(self.base_offset, suffix)).unlink(missing_ok=True)
        self.index.delete()

    def __repr__(self) -> str:
        return f"Segment({self.base_offset}, size={self.size}, next={self.next_offset})"


def batch_size(header: BatchHeader) -> int:
    return header.batch_length + LOG_OVERHEAD
