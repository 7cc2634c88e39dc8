"""Record batch v2 as the core needs it: build data and control batches, walk batches.

The core needs only uncompressed batches that it builds itself plus a header
walk over what it fetched, so this is a small fast path next to ``wire.records``
(which it shares the varints and control types with; ``wire.records`` does
compression and full decoding). Layout (``DefaultRecordBatch``, magic 2):
baseOffset i64, length i32, partitionLeaderEpoch i32, magic i8, crc u32
(CRC-32C over attributes..end), attributes i16, lastOffsetDelta i32,
baseTimestamp i64, maxTimestamp i64, producerId i64, producerEpoch i16,
baseSequence i32, recordsCount i32, then the records (61-byte header).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import crc32c

from wire.records.control import ControlRecordType  # noqa: F401  (re-exported for the core)
from wire.varint import read_varint, read_varlong, write_varint

from wire.messages import (
    KRaftVersionRecord, LeaderChangeMessage, SnapshotFooterRecord, SnapshotHeaderRecord,
    VotersRecord,
)

HEADER_SIZE = 61
_HEAD = struct.Struct(">qiibI")  # baseOffset, length, epoch, magic, crc
_BODY = struct.Struct(">hiqqqhii")  # attributes .. recordsCount
CONTROL_FLAG = 0x20


_CONTROL_CLASSES = {
    ControlRecordType.LEADER_CHANGE: LeaderChangeMessage,
    ControlRecordType.SNAPSHOT_HEADER: SnapshotHeaderRecord,
    ControlRecordType.SNAPSHOT_FOOTER: SnapshotFooterRecord,
    ControlRecordType.KRAFT_VERSION: KRaftVersionRecord,
    ControlRecordType.KRAFT_VOTERS: VotersRecord,
}


class BatchError(ValueError):
    """Bytes that are not whole, valid record batches."""


@dataclass(frozen=True, slots=True)
class BatchInfo:
    base_offset: int
    last_offset: int
    epoch: int
    is_control: bool
    start: int  # byte position in the buffer walked
    end: int

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1


def _record(offset_delta: int, key: bytes | None, value: bytes | None) -> bytes:
    body = bytearray(b"\x00")  # attributes
    body += write_varint(0)  # timestamp delta
    body += write_varint(offset_delta)
    for part in (key, value):
        if part is None:
            body += write_varint(-1)
        else:
            body += write_varint(len(part))
            body += part
    body += write_varint(0)  # no headers
    return write_varint(len(body)) + bytes(body)


def build_batch(base_offset: int, epoch: int, timestamp_ms: int,
                records: list[tuple[bytes | None, bytes | None]], control: bool = False) -> bytes:
    """One uncompressed batch of (key, value) records, as KRaft leaders write them:
    CREATE_TIME, producer id/epoch/sequence -1, partitionLeaderEpoch = ``epoch``."""
    if not records:
        raise ValueError("a batch needs at least one record")
    payload = b"".join(_record(i, k, v) for i, (k, v) in enumerate(records))
    attributes = CONTROL_FLAG if control else 0
    body = _BODY.pack(attributes, len(records) - 1, timestamp_ms, timestamp_ms,
                      -1, -1, -1, len(records)) + payload
    crc = crc32c.crc32c(body)
    length = 4 + 1 + 4 + len(body)  # epoch, magic, crc, body
    return _HEAD.pack(base_offset, length, epoch, 2, crc) + body


def build_control_batch(base_offset: int, epoch: int, timestamp_ms: int,
                        messages: list[tuple[ControlRecordType, object]]) -> bytes:
    """A control batch: key = ControlRecordTypeSchema v0 (version 0, type), value = the
    record at v0 with no version prefix (``ControlRecordUtils``)."""
    records = [(struct.pack(">hh", 0, int(kind)), msg.encode(0)) for kind, msg in messages]
    return build_batch(base_offset, epoch, timestamp_ms, records, control=True)


def walk(buf, verify: bool = False) -> list[BatchInfo]:
    """Headers of the whole batches in ``buf`` (a trailing partial batch is an error)."""
    out = []
    p, n = 0, len(buf)
    while p < n:
        if n - p < HEADER_SIZE:
            raise BatchError(f"partial batch header at byte {p}")
        base, length, epoch, magic, crc = _HEAD.unpack_from(buf, p)
        end = p + 12 + length
        if magic != 2 or length < HEADER_SIZE - 12 or end > n:
            raise BatchError(f"bad batch at byte {p} (magic {magic}, length {length})")
        attributes, last_delta = struct.unpack_from(">hi", buf, p + 21)
        if verify and crc32c.crc32c(bytes(buf[p + 21:end])) != crc:
            raise BatchError(f"CRC mismatch in batch at offset {base}")
        out.append(BatchInfo(base, base + last_delta, epoch, bool(attributes & CONTROL_FLAG), p, end))
        p = end
    return out


def records(buf, info: BatchInfo) -> list[tuple[bytes | None, bytes | None]]:
    """The (key, value) pairs of one uncompressed batch."""
    (count,) = struct.unpack_from(">i", buf, info.start + 57)
    p = info.start + HEADER_SIZE
    out = []
    for _ in range(count):
        length, p = read_varint(buf, p)
        end = p + length
        q = p + 1  # attributes
        _, q = read_varlong(buf, q)  # timestamp delta
        _, q = read_varint(buf, q)  # offset delta
        parts = []
        for _ in range(2):
            size, q = read_varint(buf, q)
            if size < 0:
                parts.append(None)
            else:
                parts.append(bytes(buf[q:q + size]))
                q += size
        out.append((parts[0], parts[1]))
        p = end
    return out


def control_records(buf, info: BatchInfo) -> list[tuple[ControlRecordType, object]]:
    """Decoded control records of a control batch; unknown types raise (R/ControlRecord)."""
    out = []
    for key, value in records(buf, info):
        if key is None or len(key) < 4:
            raise BatchError("control record without a ControlRecordTypeSchema key")
        _, kind = struct.unpack_from(">hh", key)
        try:
            kind = ControlRecordType(kind)
            cls = _CONTROL_CLASSES[kind]
        except (ValueError, KeyError):
            raise BatchError(f"unknown control record type {kind}") from None
        out.append((kind, cls.decode(value, 0)))
    return out
