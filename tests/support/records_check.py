"""Cross-checks for record batches, reusable by any test that produces or receives batches.

``assert_matches_reference(blob)`` decodes a records blob with the fast decoder
(``wire.records.iter_batches``) and with the independent construct reference
(``wire.records.reference.parse_batches``), asserts they agree field by field,
that the header-only scan (``iter_headers``) agrees on positions, and that
re-encoding each decoded batch gives back its bytes (uncompressed batches) or
the same batch (compressed ones, whose compressed bytes depend on the
compressor). It returns the decoded batches.
"""
from __future__ import annotations

from wire.records import (
    RecordBatch,
    crc_matches,
    decode_batch,
    decode_control_key,
    iter_batches,
    iter_headers,
)
from wire.records.reference import parse_batches

_HEADER_FIELDS = (
    "base_offset", "partition_leader_epoch", "magic", "crc", "last_offset_delta",
    "base_timestamp", "max_timestamp", "producer_id", "producer_epoch", "base_sequence",
)


def _assert_same_batch(ours: RecordBatch, ref, where: str) -> None:
    for name in _HEADER_FIELDS:
        assert getattr(ours, name) == ref[name], f"{where}: {name} {getattr(ours, name)!r} != {ref[name]!r}"
    attrs = ref.attributes
    assert int(ours.compression) == int(attrs.compression), where
    assert int(ours.timestamp_type) == int(attrs.timestamp_type), where
    assert ours.is_transactional == attrs.transactional, where
    assert ours.is_control == attrs.control, where
    assert ours.has_delete_horizon == attrs.delete_horizon, where
    assert ours.attributes >> 7 == attrs.unused, where
    assert ref.crc_ok, f"{where}: reference says the CRC is wrong"
    assert ref.records_count == len(ours.records) == len(ref.records), where
    for i, (mine, theirs) in enumerate(zip(ours.records, ref.records)):
        at = f"{where} record {i}"
        assert mine.attributes == theirs.attributes, at
        assert mine.timestamp_delta == theirs.timestamp_delta, at
        assert mine.offset_delta == theirs.offset_delta, at
        assert mine.key == theirs.key, at
        assert mine.value == theirs.value, at
        assert list(mine.headers) == [(h.key, h.value) for h in theirs.headers], at
        if ours.is_control:
            if theirs.control is None:
                continue
            assert decode_control_key(mine.key) == (theirs.control.version, int(theirs.control.type)), at


def assert_matches_reference(blob, *, reencode: bool = True) -> list[RecordBatch]:
    """Decode ``blob`` both ways, assert agreement, and return our batches."""
    blob = bytes(blob)
    ours = list(iter_batches(blob))
    ref = parse_batches(blob)
    assert len(ours) == len(ref), f"{len(ours)} batches decoded, reference found {len(ref)}"
    spans = list(iter_headers(blob))
    assert len(spans) == len(ours)
    for n, (batch, theirs, (pos, header)) in enumerate(zip(ours, ref, spans)):
        where = f"batch {n} at {pos}"
        _assert_same_batch(batch, theirs, where)
        assert header.base_offset == batch.base_offset and header.crc == batch.crc, where
        assert header.records_count == len(batch.records), where
        assert crc_matches(blob, pos, header), where
        raw = blob[pos:pos + header.size]
        again, end = decode_batch(raw)
        assert again == batch and end == len(raw), where
        if reencode:
            encoded = batch.encode()
            if batch.compression == 0:
                assert encoded == raw, f"{where}: re-encoding changed the bytes"
            else:
                assert decode_batch(encoded)[0] == batch, f"{where}: re-encoding changed the batch"
    return ours
