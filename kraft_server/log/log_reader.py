"""Reads of the metadata log for consumers, as views of the segment files.

``read(offset, max_bytes, end)`` returns whole batches from the one holding
``offset``, below ``end`` (the high watermark: Raft high watermarks fall on batch
boundaries), at least one batch even if larger than ``max_bytes`` (KIP-74). The bytes
are a ``memoryview`` of a read-only ``mmap`` of the segment: no copy is made in
Python between the file and the response encoder. Views below the high watermark
stay valid: committed batches are never truncated, and a deleted segment's mapping
lives as long as a view of it does.

Timestamp lookups (ListOffsets) read batch headers only, segment by segment,
skipping segments whose largest timestamp is below the target.
"""
from __future__ import annotations

import mmap

from wire.records import HEADER_SIZE, decode_batch, iter_headers, read_header



class LogReader:
    def __init__(self, raft_log):
        self.log = raft_log
        self._maps: dict[int, tuple[tuple, mmap.mmap]] = {}  # id(segment) -> ((fd, path), map)

    def _segments(self):
        return self.log.segments

    def _view(self, segment, start: int, end: int):
        key = id(segment)
        which = (segment.fd, segment.path)
        known, mapped = self._maps.get(key, (None, None))
        if mapped is None or known != which or len(mapped) < end:
            mapped = mmap.mmap(segment.fd, segment.size, prot=mmap.PROT_READ)
            if len(self._maps) > 2 * len(self.log.segments) + 4:  # forget deleted segments
                live = {id(s) for s in self.log.segments}
                self._maps = {k: v for k, v in self._maps.items() if k in live}
            self._maps[key] = (which, mapped)
        return memoryview(mapped)[start:end]

    def read(self, offset: int, max_bytes: int, end: int):
        """Whole batches holding offsets in [offset, end); empty when none."""
        if offset >= end:
            return b""
        segments = self._segments()
        if segments is None:  # a log without segment files (memory log in tests)
            return self._read_plain(offset, max_bytes, end)
        for segment in reversed(segments):
            if segment.base_offset > offset:
                continue
            if offset >= segment.next_offset:
                return b""
            i = segment.batch_index_for(offset)
            if i is None:
                return b""
            # the last batch to serve: the one ending at or before ``end``
            last = segment.next_offsets.bisect_right(end, i) - 1
            if last < i:
                return b""
            positions = segment.positions
            start = positions[i]

            def position_of(k, positions=positions, size=segment.size):
                return positions[k] if k < len(positions) else size

            stop = position_of(last + 1)
            if stop - start > max_bytes:  # batches i..m-1 fit when position_of(m) - start <= max_bytes
                q = positions.bisect_right(start + max(max_bytes, 0), i + 1, last + 1)
                stop = position_of(max(i + 1, q - 1))
            return self._view(segment, start, stop)
        return b""

    def _read_plain(self, offset: int, max_bytes: int, end: int):
        data = self.log.read(offset, max_bytes)
        pos = 0
        for _, header in iter_headers(data):
            if header.base_offset + header.last_offset_delta + 1 > end:
                break
            pos += header.size
        return memoryview(data)[:pos] if pos else b""

    def batches(self, start: int, end: int):
        """(header, bytes view) of each whole batch from the one holding ``start`` up to
        ``end``, oldest first (the control topic's index reads headers, then the few
        control batches)."""
        segments = self._segments()
        if segments is None:
            data = self.log.read(start, 1 << 62) if start < end else b""
            for pos, header in iter_headers(data):
                if header.base_offset + header.last_offset_delta + 1 > end:
                    return
                yield header, memoryview(data)[pos:pos + header.size]
            return
        for segment in list(segments):
            if segment.next_offset <= start:
                continue
            if segment.base_offset >= end:
                return
            first = segment.batch_index_for(start)
            if first is None:
                continue
            positions, next_offsets = segment.positions, segment.next_offsets
            for i in range(first, len(positions)):
                if next_offsets[i] > end:
                    return
                pos = positions[i]
                header = read_header(self._view(segment, pos, pos + HEADER_SIZE))
                yield header, self._view(segment, pos, pos + header.size)

    # -- timestamps ---------------------------------------------------------------------
    def _headers(self, end: int, wanted=None):
        """(header, segment, position) of every batch below ``end``, oldest first;
        ``wanted(segment)`` false skips a whole segment unread."""
        segments = self._segments()
        if segments is None:
            start = self.log.start_offset()
            data = self.log.read(start, 1 << 62) if start < end else b""
            for pos, header in iter_headers(data):
                if header.base_offset + header.last_offset_delta + 1 > end:
                    return
                yield header, None, pos
            return
        for segment in list(segments):
            if segment.base_offset >= end:
                return
            if wanted is None or wanted(segment):
                yield from self._segment_headers(segment, end)

    def _segment_headers(self, segment, end: int):
        positions, next_offsets = segment.positions, segment.next_offsets
        for i, pos in enumerate(positions):
            if next_offsets[i] > end:
                return
            yield read_header(self._view(segment, pos, pos + HEADER_SIZE)), segment, pos

    def offset_for_timestamp(self, ts: int, end: int):
        """(offset, timestamp, epoch) of the first record below ``end`` whose timestamp
        is >= ``ts``, judged by batch max timestamps (Kafka's ``fetchOffsetByTimestamp``),
        or None."""
        for header, segment, pos in self._headers(end, lambda segment: segment.last_timestamp >= ts):
            if header.max_timestamp >= ts:
                return self._first_record_at_least(header, segment, pos, ts)
        return None

    def max_timestamp(self, end: int):
        """(offset, timestamp, epoch) of the first record holding the largest timestamp
        below ``end`` (ListOffsets MAX_TIMESTAMP), or None for an empty log. As Kafka,
        only the segment(s) with the largest timestamp are read, unless that
        timestamp lies past ``end``."""
        below = [s for s in self._segments() or () if s.base_offset < end]
        if below:
            top = max(s.last_timestamp for s in below)
            for header, segment, pos in self._headers(end, lambda s: s.last_timestamp == top):
                if header.max_timestamp == top:
                    return self._first_record_at_least(header, segment, pos, top)
        best = None
        for header, segment, pos in self._headers(end):
            if best is None or header.max_timestamp > best[0].max_timestamp:
                best = (header, segment, pos)
        if best is None:
            return None
        header, segment, pos = best
        return self._first_record_at_least(header, segment, pos, header.max_timestamp)

    def _first_record_at_least(self, header, segment, pos, ts):
        if segment is not None:
            data = bytes(self._view(segment, pos, pos + header.size))
        else:
            data = self.log.read(header.base_offset, header.size)
        batch, _ = decode_batch(data)
        for record in batch.records:
            stamp = batch.base_timestamp + record.timestamp_delta
            if stamp >= ts:
                return (batch.base_offset + record.offset_delta, stamp,
                        batch.partition_leader_epoch)
        return (header.base_offset, header.max_timestamp, header.partition_leader_epoch)
