"""The 61-byte header of a v2 record batch, read without touching the records.

Layout (``DefaultRecordBatch``)::

    BaseOffset:int64 Length:int32 PartitionLeaderEpoch:int32 Magic:int8
    CRC:uint32 Attributes:int16 LastOffsetDelta:int32 BaseTimestamp:int64
    MaxTimestamp:int64 ProducerId:int64 ProducerEpoch:int16 BaseSequence:int32
    RecordsCount:int32

``Length`` counts the bytes after itself, so a batch occupies ``Length + 12``
bytes. The CRC-32C covers Attributes to the end of the batch: not the base
offset, length, leader epoch or magic, so a leader can restamp the base offset
and epoch without recomputing it.

The server needs only this header for log recovery, fetch and offset lookups,
so :func:`read_header` and :func:`iter_headers` stop here; :mod:`.batch` decodes
records. Only magic 2 exists here: KRaft never wrote anything older.

Two walks share this layout. :func:`iter_headers` is lenient (a fetch or a torn
log may end in a partial batch) and gives every field. :func:`walk` is the Raft
core's: strict (the bytes must be whole batches, else :class:`BatchError`), it
reads only the fields the core uses into :class:`BatchInfo`, and it is on the
hot path of every append and fetch, so it unpacks two small structs per batch
instead of building a :class:`BatchHeader`.
"""
from __future__ import annotations

import struct
from enum import IntEnum
from typing import NamedTuple

from ..exceptions import DecodeError
from .crc import crc32c
from .compression import CompressionType

__all__ = [
    "BatchHeader",
    "TimestampType",
    "HEADER",
    "HEADER_SIZE",
    "LOG_OVERHEAD",
    "CRC_START",
    "MAGIC",
    "COMPRESSION_MASK",
    "TIMESTAMP_TYPE_MASK",
    "TRANSACTIONAL_MASK",
    "CONTROL_MASK",
    "DELETE_HORIZON_MASK",
    "read_header",
    "iter_headers",
    "crc_matches",
    "BatchError",
    "BatchInfo",
    "walk",
    "with_base_offset",
]

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
LOG_OVERHEAD = 12  # base offset + length: the bytes Length does not count
MAGIC_OFFSET = 16
CRC_START = 21  # the attributes field; the CRC covers from here to the end
MAGIC = 2
# Kafka rejects a length below the v0 record overhead before even looking at the
# magic (ByteBufferLogInputStream); a v2 batch also needs its whole header.
_MIN_LENGTH = HEADER_SIZE - LOG_OVERHEAD  # 49

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40

_INT32 = struct.Struct(">i")
_unpack_head = struct.Struct(">qiibI").unpack_from  # baseOffset, length, partitionLeaderEpoch, magic, crc
_unpack_tail = struct.Struct(">hi").unpack_from  # attributes, lastOffsetDelta (at CRC_START)
_BASE_OFFSET = struct.Struct(">q")


class TimestampType(IntEnum):
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class AttributeFlags:
    """Read-only views of ``self.attributes``, shared by headers and batches."""

    __slots__ = ()

    @property
    def compression(self) -> CompressionType:
        return CompressionType(self.attributes & COMPRESSION_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType.LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_MASK else TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_MASK)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1


_FIELDS = (
    "base_offset", "batch_length", "partition_leader_epoch", "magic", "crc",
    "attributes", "last_offset_delta", "base_timestamp", "max_timestamp",
    "producer_id", "producer_epoch", "base_sequence", "records_count",
)


class BatchHeader(AttributeFlags, tuple):
    """The header fields as an immutable tuple, straight from ``struct.unpack``."""

    __slots__ = ()

    @property
    def size(self) -> int:
        """Bytes the whole batch occupies (header and records)."""
        return self[1] + LOG_OVERHEAD

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={value!r}" for name, value in zip(_FIELDS, self))
        return f"BatchHeader({inner})"


for _i, _name in enumerate(_FIELDS):
    setattr(BatchHeader, _name, property(lambda self, _i=_i: self[_i], doc=f"header field {_name}"))
del _i, _name

_new_header = tuple.__new__


def read_header(buf, pos: int = 0) -> BatchHeader:
    """The header of the batch at ``pos``; the records need not be present.

    Raises ``DecodeError`` if fewer than 61 bytes remain, the magic is not 2, or
    the length is too small to hold the header.
    """
    if len(buf) - pos < HEADER_SIZE:
        raise DecodeError(f"truncated batch header: {len(buf) - pos} of {HEADER_SIZE} bytes")
    header = _new_header(BatchHeader, HEADER.unpack_from(buf, pos))
    if header[3] != MAGIC:
        raise DecodeError(f"unsupported record batch magic {header[3]}")
    if header[1] < _MIN_LENGTH:
        raise DecodeError(f"record batch length {header[1]} is smaller than the header")
    return header


def next_batch_size(buf, pos: int) -> int | None:
    """The size of the batch at ``pos``, or None if too little is there to tell.

    Follows Kafka's ``ByteBufferLogInputStream.nextBatchSize``: a bad length is
    an error as soon as the 12-byte prefix is present; a bad magic as soon as
    the magic byte is.
    """
    remaining = len(buf) - pos
    if remaining < LOG_OVERHEAD:
        return None
    length = _INT32.unpack_from(buf, pos + 8)[0]
    if length < _MIN_LENGTH:
        raise DecodeError(f"record batch length {length} is smaller than the header")
    if remaining <= MAGIC_OFFSET:
        return None
    magic = buf[pos + MAGIC_OFFSET]
    if magic != MAGIC:
        raise DecodeError(f"unsupported record batch magic {magic}")
    return length + LOG_OVERHEAD


def iter_headers(buf, pos: int = 0):
    """Yield ``(position, BatchHeader)`` for each complete batch from ``pos``.

    Stops quietly at a trailing partial batch (a fetch may end in one; a log
    may end in a torn write). Whether the first batch was whole is for the
    caller to judge: nothing yielded means it was not.
    """
    end = len(buf)
    while True:
        size = next_batch_size(buf, pos)
        if size is None or end - pos < size:
            return
        yield pos, read_header(buf, pos)
        pos += size


def crc_matches(buf, pos: int, header: BatchHeader) -> bool:
    """Whether the stored CRC-32C matches the bytes of the batch at ``pos``."""
    end = pos + header[1] + LOG_OVERHEAD
    if end > len(buf):
        return False
    return crc32c(memoryview(buf)[pos + CRC_START:end]) == header[4]


def with_base_offset(batch, base_offset: int) -> bytes:
    """The same batch at another base offset; the CRC stays valid, as it does not cover it."""
    return _BASE_OFFSET.pack(base_offset) + bytes(batch[8:])


# -- the core's strict walk -------------------------------------------------------------

class BatchError(ValueError):
    """Bytes that are not whole, valid record batches."""


class BatchInfo(NamedTuple):
    """What the core reads of one batch (a tuple: ``walk`` makes one per batch, and a
    tuple is made without a Python-level ``__init__``)."""

    base_offset: int
    last_offset: int
    epoch: int
    is_control: bool
    start: int  # byte position in the buffer walked
    end: int

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1


_new_info = tuple.__new__


def walk(buf, verify: bool = False) -> list[BatchInfo]:
    """Headers of the whole batches in ``buf`` (a trailing partial batch is an error)."""
    out = []
    p, n = 0, len(buf)
    while p < n:
        if n - p < HEADER_SIZE:
            raise BatchError(f"partial batch header at byte {p}")
        base, length, epoch, magic, crc = _unpack_head(buf, p)
        end = p + LOG_OVERHEAD + length
        if magic != MAGIC or length < _MIN_LENGTH or end > n:
            raise BatchError(f"bad batch at byte {p} (magic {magic}, length {length})")
        attributes, last_delta = _unpack_tail(buf, p + CRC_START)
        if verify and crc32c(memoryview(buf)[p + CRC_START:end]) != crc:
            raise BatchError(f"CRC mismatch in batch at offset {base}")
        out.append(_new_info(BatchInfo, (base, base + last_delta, epoch, bool(attributes & CONTROL_MASK), p, end)))
        p = end
    return out
