"""The in-memory batch index of a segment (``kraft_server/log/segments.py``): compact
(``Column``: ``array('q')``, or the mapped batch index after a restart; no per-batch
objects kept or built on open), and still exact for
recovery, reads and truncation."""
from __future__ import annotations

import os
import random
import struct
import tempfile
import tracemalloc
from array import array

import pytest

from kraft_server.log import segments
from kraft_server.log.column import Column
from kraft_server.log.file_log import FileReplicatedLog
from kraft_server.log.recovery import scan_segment
from wire.records import build_batch

PART = "__cluster_metadata-0"


def one_record_batches(n: int, epoch: int = 1) -> bytes:
    """``n`` one-record batches at offsets 0..n-1 (the CRC does not cover the base offset)."""
    template = build_batch(0, epoch, 1, [(None, b"x" * 8)])
    out = bytearray(template * n)
    for i in range(n):
        struct.pack_into(">q", out, i * len(template), i)
    return bytes(out)


def mixed_batches(rng: random.Random, count: int) -> bytes:
    """Batches of 1-30 records of 1-400 bytes, epochs 1..3 rising."""
    out, offset, epoch = bytearray(), 0, 1
    for i in range(count):
        if i and i % (count // 3) == 0:
            epoch += 1
        n = rng.randint(1, 30)
        out += build_batch(offset, epoch, 1000 + i, [(None, os.urandom(rng.randint(1, 400))) for _ in range(n)])
        offset += n
    return bytes(out)


def write_log(tmp_path, data: bytes):
    part = tmp_path / PART
    part.mkdir(parents=True, exist_ok=True)
    (part / "00000000000000000000.log").write_bytes(data)
    return part


def reference_read(positions, size, i, max_bytes):
    """The original linear scan of ``Segment.read_from``."""
    start = positions[i]
    j = i + 1
    while j < len(positions) and positions[j] - start <= max_bytes:
        j += 1
    end = positions[j] if j < len(positions) else size
    if end - start > max_bytes and j - 1 > i:
        end = positions[j - 1]
    return start, end


def test_index_is_two_int64_columns(tmp_path):
    part = write_log(tmp_path, one_record_batches(1000))
    with FileReplicatedLog(part) as log:  # scanned: the entries are in the columns' arrays
        seg = log.segments[0]
        for column in (seg.positions, seg.next_offsets):
            assert isinstance(column, Column) and column.head is None
            assert isinstance(column.tail, array) and column.tail.typecode == "q"
        assert len(seg.positions) == 1000 and seg.next_offsets[-1] == 1000
        assert not hasattr(seg, "base_offsets")
        assert [seg.base_offset_at(i) for i in (0, 1, 999)] == [0, 1, 999]
        positions, next_offsets = list(seg.positions), list(seg.next_offsets)
    with FileReplicatedLog(part) as log:  # from the batch index: mapped, nothing copied
        seg = log.segments[0]
        for column, expected in ((seg.positions, positions), (seg.next_offsets, next_offsets)):
            assert column.head.format == "q" and len(column.head) == 1000 and not column.tail
            assert list(column) == expected
        assert [seg.base_offset_at(i) for i in (0, 1, 999)] == [0, 1, 999]
        log.append(build_batch(1000, 1, 5, [(None, b"y")]))  # appends go to the array
        assert len(seg.positions.tail) == 1 and seg.next_offsets[-1] == 1001
        assert log.read(999, 1 << 20)[:8] == struct.pack(">q", 999)
        log.truncate_to(500)  # into the mapped part: copied, unmapped, the index file cut
        assert seg.positions.head is None and list(seg.positions) == positions[:500]
        log.flush()
    with FileReplicatedLog(part) as log:
        assert log.segments[0].from_index == 500 and list(log.segments[0].positions) == positions[:500]


@pytest.mark.parametrize("chunk", [61, 100, 1000, 1 << 22])
def test_chunked_recovery_matches_scan_segment(tmp_path, monkeypatch, chunk):
    """Batches straddling chunk edges and batches bigger than a chunk are read whole."""
    monkeypatch.setattr(segments, "SCAN_CHUNK", chunk)
    data = mixed_batches(random.Random(chunk), 60)
    part = write_log(tmp_path, data)
    with open(part / "00000000000000000000.log", "rb") as f:
        headers, valid, problem = scan_segment(f.fileno(), len(data), 0)
    assert problem is None and valid == len(data)
    with FileReplicatedLog(part) as log:
        seg = log.segments[0]
        assert list(seg.positions) == [p for p, _ in headers]
        assert list(seg.next_offsets) == [h.next_offset for _, h in headers]
        assert seg.last_timestamp == max(h.max_timestamp for _, h in headers)
        assert log.epochs.end_offset_for(1, log.end_offset()) is not None
        assert log.last_fetched_epoch() == 3
        assert log.read(0, 1 << 30) == data


@pytest.mark.parametrize("damage", ["crc", "torn", "offset"])
def test_chunked_recovery_cuts_where_scan_segment_does(tmp_path, monkeypatch, damage):
    monkeypatch.setattr(segments, "SCAN_CHUNK", 300)
    data = bytearray(mixed_batches(random.Random(7), 30))
    pos = [p for p, _ in scan_segment_bytes(bytes(data))][17]
    if damage == "crc":
        data[pos + 70] ^= 0xFF
    elif damage == "torn":
        del data[pos + 40:]
    else:
        struct.pack_into(">q", data, pos, 10**6)
    part = write_log(tmp_path, bytes(data))
    with FileReplicatedLog(part) as log:
        seg = log.segments[0]
        assert seg.size == pos == os.path.getsize(seg.path)
        assert len(seg.positions) == 17 and log.recovery_problems


def scan_segment_bytes(data: bytes):
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        headers, _, _ = scan_segment(f.fileno(), len(data), 0)
    return headers


def test_reads_match_the_linear_scan(tmp_path):
    rng = random.Random(3)
    data = mixed_batches(rng, 200)
    part = write_log(tmp_path, data)
    with FileReplicatedLog(part) as log:
        seg = log.segments[0]
        positions = list(seg.positions)
        for _ in range(500):
            offset = rng.randrange(log.end_offset())
            max_bytes = rng.choice([1, 100, 1000, 5000, 1 << 20])
            i = seg.batch_index_for(offset)
            start, end = reference_read(positions, seg.size, i, max_bytes)
            assert log.read(offset, max_bytes) == data[start:end]


def test_truncate_then_append_then_reopen(tmp_path):
    data = one_record_batches(5000)
    part = write_log(tmp_path, data)
    size = len(data) // 5000
    with FileReplicatedLog(part) as log:
        log.truncate_to(1234)
        assert log.end_offset() == 1234 and len(log.segments[0].positions) == 1234
        assert log.read(1233, 1)[:8] == struct.pack(">q", 1233)
        log.append(build_batch(1234, 2, 5, [(None, b"y")]))
        log.flush()
        assert log.end_offset() == 1235
    with FileReplicatedLog(part) as log:
        assert log.end_offset() == 1235 and log.segments[0].size == 1234 * size + len(
            build_batch(1234, 2, 5, [(None, b"y")]))
        assert log.last_fetched_epoch() == 2


def test_open_keeps_no_per_batch_objects(tmp_path):
    """A million one-record batches used ~120 bytes a batch of lists of ints (and ~370
    at the peak of open, with every header kept); now 16 bytes a batch."""
    n = 20_000
    part = write_log(tmp_path, one_record_batches(n))
    tracemalloc.start()
    try:
        log = FileReplicatedLog(part)
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    try:
        assert log.end_offset() == n
        assert current < 30 * n + 200_000, current
        assert peak < segments.SCAN_CHUNK + 40 * n + 200_000, peak
    finally:
        log.close()
