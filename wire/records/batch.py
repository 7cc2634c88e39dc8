"""Record batch v2 (magic 2): the unit of every Kafka log, fetch and snapshot.

A batch is the 61-byte header of :mod:`.header` followed by the records section
of :mod:`.record`, compressed as a whole when the attributes name a codec
(:mod:`.compression`). :class:`RecordBatch` holds a decoded batch;
:meth:`RecordBatch.encode` writes one, computing the length, the record count
and the CRC-32C. :func:`decode_batch` reads one batch strictly;
:func:`iter_batches` reads a records blob (a Fetch partition's ``Records``, a
log segment) and stops at a trailing partial batch as Kafka's consumers do.

What decoding checks, after ``DefaultRecordBatch``: magic 2, the length covers
the header, the CRC (unless ``verify_crc=False``), a known codec, a
non-negative record count, and records that fill the (decompressed) section
exactly. A batch whose count is 0 has no records and its section is not read,
as in Kafka.

:func:`build_batch` is the fast path for the batches KRaft writes (uncompressed,
no record headers, every timestamp delta 0) and :func:`batch_records` reads
their ``(key, value)`` pairs back; both share the encoder, decoder and header
sealing with :class:`RecordBatch`.
"""
from __future__ import annotations

import struct

from ..exceptions import DecodeError, EncodeError
from .crc import crc32c
from .compression import DEFAULT_MAX_BYTES, CompressionType, compress, decompress
from .header import (
    CONTROL_MASK,
    CRC_START,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    AttributeFlags,
    BatchInfo,
    TimestampType,
    next_batch_size,
    read_header,
)
from .record import Record, decode_records, decode_values, encode_records, encode_values

__all__ = ["Record", "RecordBatch", "decode_batch", "iter_batches", "read_header", "build_batch",
           "batch_records", "build_value_batch", "batch_values"]

_COUNT_AT = HEADER_SIZE - 4  # recordsCount, the header's last field
_COUNT = struct.Struct(">i")

_CODECS = frozenset(int(c) for c in CompressionType)
_COMPARED = (
    "base_offset", "partition_leader_epoch", "magic", "attributes", "last_offset_delta",
    "base_timestamp", "max_timestamp", "producer_id", "producer_epoch", "base_sequence", "records",
)


class RecordBatch(AttributeFlags):
    """A decoded (or to-be-encoded) v2 batch.

    ``crc`` is what the batch carried when decoded (``None`` for one built
    here); it is derived data, so equality ignores it and :meth:`encode`
    recomputes it. ``last_offset_delta`` and ``max_timestamp`` default to what
    Kafka's builders derive from the records: the last record's offset delta,
    and the base timestamp plus the largest timestamp delta.
    """

    __slots__ = (
        "base_offset", "partition_leader_epoch", "magic", "crc", "attributes", "last_offset_delta",
        "base_timestamp", "max_timestamp", "producer_id", "producer_epoch", "base_sequence", "records",
    )

    def __init__(self, *, base_offset: int = 0, partition_leader_epoch: int = -1, magic: int = MAGIC,
                 crc: int | None = None, attributes: int = 0, last_offset_delta: int | None = None,
                 base_timestamp: int = -1, max_timestamp: int | None = None, producer_id: int = -1,
                 producer_epoch: int = -1, base_sequence: int = -1, records=()):
        records = records if type(records) is list else list(records)
        if last_offset_delta is None:
            last_offset_delta = records[-1].offset_delta if records else 0
        if max_timestamp is None:
            max_timestamp = base_timestamp + max((r.timestamp_delta for r in records), default=0)
        self.base_offset = base_offset
        self.partition_leader_epoch = partition_leader_epoch
        self.magic = magic
        self.crc = crc
        self.attributes = attributes
        self.last_offset_delta = last_offset_delta
        self.base_timestamp = base_timestamp
        self.max_timestamp = max_timestamp
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.records = records

    def __eq__(self, other):
        if not isinstance(other, RecordBatch):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _COMPARED)

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"RecordBatch({fields})"

    def offset_of(self, record: Record) -> int:
        return self.base_offset + record[2]

    def timestamp_of(self, record: Record) -> int:
        """The record's timestamp: the batch's max timestamp under LOG_APPEND_TIME."""
        if self.timestamp_type is TimestampType.LOG_APPEND_TIME:
            return self.max_timestamp
        return self.base_timestamp + record[1]

    def encode(self, *, level: int | None = None) -> bytes:
        """The batch's bytes: records compressed per ``attributes``, fresh length and CRC.

        ``level`` is the codec's level on Kafka's scale (``None``: Kafka's default).
        """
        if self.magic != MAGIC:
            raise EncodeError(f"unsupported record batch magic {self.magic}")
        codec = self.attributes & 0x07
        if codec not in _CODECS:
            raise EncodeError(f"unknown compression type id {codec}")
        section = encode_records(self.records)
        if codec:
            section = compress(codec, section, level)
        return _seal(section, self.base_offset, self.partition_leader_epoch, self.attributes,
                     self.last_offset_delta, self.base_timestamp, self.max_timestamp, self.producer_id,
                     self.producer_epoch, self.base_sequence, len(self.records))


def _seal(section: bytes, base_offset: int, epoch: int, attributes: int, last_offset_delta: int,
          base_timestamp: int, max_timestamp: int, producer_id: int, producer_epoch: int,
          base_sequence: int, count: int) -> bytes:
    """The header (length and CRC-32C computed) followed by the records ``section``."""
    length = HEADER_SIZE - LOG_OVERHEAD + len(section)
    try:
        head = bytearray(HEADER.pack(
            base_offset, length, epoch, MAGIC, 0, attributes, last_offset_delta, base_timestamp,
            max_timestamp, producer_id, producer_epoch, base_sequence, count,
        ))
    except struct.error as exc:  # a field out of its range
        raise EncodeError(f"cannot encode batch header: {exc}") from None
    crc = crc32c(section, crc32c(memoryview(head)[CRC_START:]))
    head[17:21] = crc.to_bytes(4, "big")
    return bytes(head) + section


def build_batch(base_offset: int, epoch: int, timestamp_ms: int,
                records: list[tuple[bytes | None, bytes | None]], control: bool = False) -> bytes:
    """One uncompressed batch of (key, value) records, as KRaft leaders write them:
    CREATE_TIME, producer id/epoch/sequence -1, partitionLeaderEpoch = ``epoch``,
    base and max timestamp ``timestamp_ms``, timestamp deltas 0, no record headers."""
    if not records:
        raise ValueError("a batch needs at least one record")
    section = encode_records([(0, 0, i, key, value, ()) for i, (key, value) in enumerate(records)])
    return _seal(section, base_offset, epoch, CONTROL_MASK if control else 0, len(records) - 1,
                 timestamp_ms, timestamp_ms, -1, -1, -1, len(records))


def build_value_batch(base_offset: int, epoch: int, timestamp_ms: int, values: list[bytes]) -> bytes:
    """``build_batch`` of ``(None, value)`` records, through the values-only encoder."""
    if not values:
        raise ValueError("a batch needs at least one record")
    return _seal(encode_values(values), base_offset, epoch, 0, len(values) - 1,
                 timestamp_ms, timestamp_ms, -1, -1, -1, len(values))


def batch_values(buf, info: BatchInfo, skip: bytes | None = None) -> list:
    """The values of one uncompressed batch found by ``walk``, leaving out those that
    start with the two-byte ``skip`` (``decode_values``)."""
    (count,) = _COUNT.unpack_from(buf, info.start + _COUNT_AT)
    if type(buf) is bytes:
        return decode_values(buf, info.start + HEADER_SIZE, info.end, count, skip)
    data = bytes(memoryview(buf)[info.start + HEADER_SIZE:info.end])
    return decode_values(data, 0, len(data), count, skip)


def batch_records(buf, info: BatchInfo) -> list[tuple[bytes | None, bytes | None]]:
    """The (key, value) pairs of one uncompressed batch found by ``walk``."""
    (count,) = _COUNT.unpack_from(buf, info.start + _COUNT_AT)
    if type(buf) is bytes:
        found = decode_records(buf, info.start + HEADER_SIZE, info.end, count)
    else:
        # One copy per batch so that keys and values come out as bytes.
        data = bytes(memoryview(buf)[info.start + HEADER_SIZE:info.end])
        found = decode_records(data, 0, len(data), count)
    return [(record[3], record[4]) for record in found]


def decode_batch(buf, pos: int = 0, verify_crc: bool = True,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[RecordBatch, int]:
    """Decode the batch at ``buf[pos:]``; return it and the position after it.

    ``buf`` is any bytes-like object. ``max_bytes`` bounds the decompressed
    records section. Raises ``DecodeError`` for a truncated or invalid batch.
    """
    header = read_header(buf, pos)
    end = pos + header[1] + LOG_OVERHEAD
    if end > len(buf):
        raise DecodeError(f"truncated record batch: {len(buf) - pos} of {end - pos} bytes")
    if verify_crc:
        computed = crc32c(memoryview(buf)[pos + CRC_START:end])
        if computed != header[4]:
            raise DecodeError(f"record batch is corrupt (stored crc = {header[4]}, computed crc = {computed})")
    attributes = header[5]
    codec = attributes & 0x07
    count = header[12]
    if count < 0:
        raise DecodeError(f"invalid record count {count}")
    if count == 0:
        records = []
    elif codec == 0:
        if type(buf) is bytes:
            records = decode_records(buf, pos + HEADER_SIZE, end, count)
        else:
            # One copy per batch so that keys and values come out as bytes.
            data = bytes(memoryview(buf)[pos + HEADER_SIZE:end])
            records = decode_records(data, 0, len(data), count)
    else:
        if codec not in _CODECS:
            raise DecodeError(f"unknown compression type id {codec}")
        data = decompress(codec, memoryview(buf)[pos + HEADER_SIZE:end], max_bytes)
        records = decode_records(data, 0, len(data), count)
    batch = RecordBatch.__new__(RecordBatch)
    (batch.base_offset, _, batch.partition_leader_epoch, batch.magic, batch.crc, batch.attributes,
     batch.last_offset_delta, batch.base_timestamp, batch.max_timestamp, batch.producer_id,
     batch.producer_epoch, batch.base_sequence, _) = header
    batch.records = records
    return batch, end


def iter_batches(buf, verify_crc: bool = True, max_bytes: int = DEFAULT_MAX_BYTES):
    """Yield each complete batch of a records blob, in order.

    A trailing partial batch ends the iteration quietly (KIP-74 fetches may
    end in one). A blob whose first batch is incomplete yields nothing;
    a Java consumer reports that as "failed to make progress", so a server
    must never send it. Invalid bytes raise ``DecodeError``.
    """
    pos, end = 0, len(buf)
    while True:
        size = next_batch_size(buf, pos)
        if size is None or end - pos < size:
            return
        batch, pos = decode_batch(buf, pos, verify_crc, max_bytes)
        yield batch
