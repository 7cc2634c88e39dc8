"""Record batch v2 described a second time, declaratively, with ``construct``.

This is the independent reference decoder: it shares no parsing code with
:mod:`.batch`, :mod:`.header` or :mod:`.record` (only decompression, from
:mod:`.compression`), so the tests can check one against the other and
inspection tools can print a batch field by field. Speed is not a goal.

The layout follows Kafka's ``DefaultRecordBatch`` / ``DefaultRecord`` javadoc;
varints are zig-zag LEB128 (Kafka's ``ByteUtils.readVarint``/``readVarlong``),
at most 5 and 10 bytes.
"""
from __future__ import annotations

import construct as c
import crc32c

from ..exceptions import DecodeError
from .compression import DEFAULT_MAX_BYTES, decompress

__all__ = [
    "Varint",
    "Varlong",
    "Attributes",
    "BatchHeader",
    "RecordBatch",
    "Record",
    "ControlKey",
    "parse_batches",
]


class ZigZag(c.Adapter):
    """A zig-zag varint of ``bits`` bits over construct's unsigned LEB128 ``VarInt``."""

    def __init__(self, bits: int):
        super().__init__(c.VarInt)
        self.bits = bits

    def _decode(self, obj, context, path):
        if obj >> self.bits:
            raise c.ValidationError(f"varint wider than {self.bits} bits", path=path)
        return (obj >> 1) ^ -(obj & 1)

    def _encode(self, obj, context, path):
        if not -(1 << (self.bits - 1)) <= obj < 1 << (self.bits - 1):
            raise c.ValidationError(f"{obj} out of int{self.bits} range", path=path)
        return ((obj << 1) ^ (obj >> (self.bits - 1))) & ((1 << self.bits) - 1)


Varint = ZigZag(32)
Varlong = ZigZag(64)


class _Nullable(c.Adapter):
    """``{length, data}`` <-> ``bytes | None``: any negative length is null, as in Kafka."""

    def _decode(self, obj, context, path):
        return None if obj.length < 0 else obj.data

    def _encode(self, obj, context, path):
        return {"length": -1, "data": None} if obj is None else {"length": len(obj), "data": obj}


NullableBytes = _Nullable(c.Struct(
    "length" / Varint,
    "data" / c.If(c.this.length >= 0, c.Bytes(c.this.length)),
))

class _HeaderKey(c.Adapter):
    """Header keys are non-null UTF-8 strings; surrogateescape keeps invalid bytes."""

    def _decode(self, obj, context, path):
        return obj.decode("utf-8", "surrogateescape")

    def _encode(self, obj, context, path):
        return obj.encode("utf-8", "surrogateescape")


RecordHeader = c.Struct(
    "key" / _HeaderKey(c.Prefixed(c.ExprValidator(Varint, lambda obj, ctx: obj >= 0), c.GreedyBytes)),
    "value" / NullableBytes,
)

# Length counts the bytes after itself; Terminated makes the body fill it exactly.
Record = c.Prefixed(Varint, c.Struct(
    "attributes" / c.Int8sb,
    "timestamp_delta" / Varlong,
    "offset_delta" / Varint,
    "key" / NullableBytes,
    "value" / NullableBytes,
    "headers" / c.PrefixedArray(c.ExprValidator(Varint, lambda obj, ctx: obj >= 0), RecordHeader),
    c.Terminated,
))

# Attributes: an int16, most significant bit first.
Attributes = c.BitStruct(
    "unused" / c.BitsInteger(9),
    "delete_horizon" / c.Flag,
    "control" / c.Flag,
    "transactional" / c.Flag,
    "timestamp_type" / c.Enum(c.BitsInteger(1), CREATE_TIME=0, LOG_APPEND_TIME=1),
    "compression" / c.Enum(c.BitsInteger(3), NONE=0, GZIP=1, SNAPPY=2, LZ4=3, ZSTD=4),
)

# The header fields the CRC covers (everything after it but the records section).
_COVERED_FIELDS = (
    "attributes" / Attributes,
    "last_offset_delta" / c.Int32sb,
    "base_timestamp" / c.Int64sb,
    "max_timestamp" / c.Int64sb,
    "producer_id" / c.Int64sb,
    "producer_epoch" / c.Int16sb,
    "base_sequence" / c.Int32sb,
    "records_count" / c.Int32sb,
)
_CrcCovered = c.Struct(*_COVERED_FIELDS)

# The 61-byte header alone, for tools that look at headers only.
BatchHeader = c.Struct(
    "base_offset" / c.Int64sb,
    "batch_length" / c.Int32sb,
    "partition_leader_epoch" / c.Int32sb,
    "magic" / c.Const(2, c.Int8sb),
    "crc" / c.Int32ub,
    *_COVERED_FIELDS,
)

RecordBatch = c.Struct(
    "base_offset" / c.Int64sb,
    "batch_length" / c.ExprValidator(c.Int32sb, lambda obj, ctx: obj >= 49),
    "partition_leader_epoch" / c.Int32sb,
    "magic" / c.Const(2, c.Int8sb),
    "crc" / c.Int32ub,
    # batch_length counts from the leader epoch: 4 + 1 + 4 bytes precede the CRC'd part.
    "covered" / c.RawCopy(c.FixedSized(c.this.batch_length - 9, c.Struct(
        "header" / _CrcCovered,
        "records_section" / c.GreedyBytes,
    ))),
    "crc_ok" / c.Computed(lambda ctx: crc32c.crc32c(ctx.covered.data) == ctx.crc),
)

ControlKey = c.Struct(
    "version" / c.ExprValidator(c.Int16sb, lambda obj, ctx: obj >= 0),
    "type" / c.Enum(c.Int16sb, ABORT=0, COMMIT=1, LEADER_CHANGE=2, SNAPSHOT_HEADER=3,
                    SNAPSHOT_FOOTER=4, KRAFT_VERSION=5, KRAFT_VOTERS=6),
)

_Int32 = c.Int32sb


def _control_key(key):
    # An inspection tool shows a bad key rather than refusing the whole batch.
    try:
        return ControlKey.parse(key)
    except (c.ConstructError, TypeError):
        return None


def _records(section: bytes, count: int):
    return c.Struct("records" / c.Array(count, Record), c.Terminated).parse(section).records


def parse_batches(blob, max_bytes: int = DEFAULT_MAX_BYTES) -> list[c.Container]:
    """Every complete batch of ``blob`` as a Container, records decoded (and decompressed).

    Each Container has the header fields (``attributes`` as a BitStruct), ``crc``
    and ``crc_ok``, and ``records``: Containers with ``attributes``,
    ``timestamp_delta``, ``offset_delta``, ``key``, ``value``, ``headers``
    (Containers ``key``/``value``) and, in control batches, ``control``
    (``version``/``type`` of the key, None if the key is not one). Stops at a trailing partial batch;
    raises ``DecodeError`` for anything invalid.
    """
    blob = bytes(blob)
    out = []
    pos = 0
    while len(blob) - pos >= 12:
        length = _Int32.parse(blob[pos + 8:pos + 12])
        if len(blob) - pos < 12 + max(length, 0):
            break
        try:
            parsed = RecordBatch.parse(blob[pos:pos + 12 + length])
            header = parsed.covered.value.header
            section = parsed.covered.value.records_section
            count = header.records_count
            if count < 0:
                raise DecodeError(f"invalid record count {count}")
            codec = int(header.attributes.compression)
            if count == 0:
                records = []
            else:
                data = decompress(codec, section, max_bytes) if codec else section
                records = _records(data, count)
            if header.attributes.control:
                for record in records:
                    record.control = _control_key(record.key)
        except c.ConstructError as exc:
            raise DecodeError(f"reference decoder: {exc}") from None
        batch = c.Container(
            base_offset=parsed.base_offset,
            batch_length=parsed.batch_length,
            partition_leader_epoch=parsed.partition_leader_epoch,
            magic=parsed.magic,
            crc=parsed.crc,
            crc_ok=parsed.crc_ok,
        )
        for name, value in header.items():
            if not name.startswith("_"):
                batch[name] = value
        batch.records = list(records)
        out.append(batch)
        pos += 12 + length
    return out
