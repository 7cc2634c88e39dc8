"""Fetch and FetchSnapshot responses go to the transport as a list of buffers in which
large records fields are the caller's own objects (views of a segment), never copies:
on whichever codec path this process uses (compiled or pure, see wire.native)."""
from __future__ import annotations

import mmap

from wire.codec_support import SPILL_BYTES
from wire.headers import decode_response, encode_response, encode_response_parts
from wire.messages import FetchResponse, FetchSnapshotResponse
from wire.messages.fetch_response import FetchableTopicResponse, PartitionData
from wire.messages.fetch_snapshot_response import PartitionSnapshot, TopicSnapshot


def _segment(size: int) -> memoryview:
    m = mmap.mmap(-1, size)
    m.write(bytes(range(256)) * (size // 256))
    return memoryview(m)


def _held_by_reference(parts: list, *views) -> None:
    for view in views:
        assert any(p is view for p in parts), "a records view was copied"
    assert sum(len(p) for p in parts if any(p is v for v in views)) == sum(len(v) for v in views)


def test_fetch_response_records_views_are_not_copied():
    seg = _segment(4 * SPILL_BYTES)
    a, b = seg[:2 * SPILL_BYTES], seg[2 * SPILL_BYTES:]
    body = FetchResponse(responses=[FetchableTopicResponse(
        topic="t", partitions=[PartitionData(partition_index=0, records=a),
                               PartitionData(partition_index=1, records=b"tiny"),
                               PartitionData(partition_index=2, records=b)])])
    for version in (4, 12, 16):
        parts = encode_response_parts(1, version, 7, body)
        _held_by_reference(parts, a, b)
        joined = b"".join(parts)
        assert joined == encode_response(1, version, 7, body)
        header, back = decode_response(joined[4:], 1, version)
        assert header.correlation_id == 7
        assert [bytes(p.records) for p in back.responses[0].partitions] == [bytes(a), b"tiny", bytes(b)]


def test_fetch_snapshot_response_chunk_is_not_copied():
    chunk = _segment(2 * SPILL_BYTES)
    body = FetchSnapshotResponse(topics=[TopicSnapshot(name="__cluster_metadata", partitions=[
        PartitionSnapshot(index=0, size=len(chunk), position=0, unaligned_records=chunk)])])
    for version in (0, 1):
        parts = encode_response_parts(59, version, 9, body)
        _held_by_reference(parts, chunk)
        joined = b"".join(parts)
        assert joined == encode_response(59, version, 9, body)
        assert decode_response(joined[4:], 59, version)[1] == body
