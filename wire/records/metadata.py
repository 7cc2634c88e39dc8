"""KRaft metadata records: their value framing, and the data batches that carry them.

Every non-control record of ``__cluster_metadata`` has a null key and a value
framed by ``AbstractApiMessageSerde``::

    uvarint frameVersion = 1, uvarint apiKey, uvarint version, message bytes

The message bytes are the record (TopicRecord, RegisterBrokerRecord, ...)
written by the generated codecs at ``version``, with no size prefix.

:data:`METADATA_RECORD_DECODERS` maps ``(apiKey, version)`` to the generated class
for each of the 27 record types Kafka 4.4.0 writes (its ``MetadataRecordType``:
keys 0-29 but the retired 6, 13 and 16) at each version it knows;
:func:`decode_metadata_record` reads a whole value as ``MetadataRecordSerde`` does,
refusing what it refuses: an unknown type, a malformed body, and bytes left over
after the body.

A version outside the type's range is *read*, not refused, because Kafka reads it:
a generated message's reader tests a field's version only when the field's range
does not cover every version of the message, and then only as ``version >= n``. So
a version past the last one Kafka 4.3.1 knows reads with the newest layout (new
tagged fields land among the unknown ones; a new untagged field shows up as bytes
left over, refused), and a negative one (the frame's version varint is read as a Java
int, then cast to a short: ``ff ff ff ff 0f`` is -1) with the layout of version 0.
Every field of the 27 schemas has an open-ended range ("n+"), so those are exactly
the layouts Kafka's reader sees (``tests/unit/wire/test_records_metadata.py`` checks that).
Nested structs are stricter: each element's reader refuses a version past the
message's last ("Can't read version 5 of BrokerEndpoint"), so a future version is
refused exactly when it carries a struct element (an empty EndPoints array passes).

:func:`data_batch` builds a batch as the raft ``BatchBuilder`` does (the
``BatchAccumulator`` path, not ``MemoryRecordsBuilder``): attributes 0 (no
compression, CREATE_TIME, neither transactional nor control), producer
id/epoch and base sequence -1, base and max timestamp both the append time,
and for each record: attributes 0, timestamp delta 0, offset delta 0, 1, 2...,
null key, the value, no headers.
"""
from __future__ import annotations

from typing import NamedTuple

from ..codec_support import Struct
from ..exceptions import DecodeError, EncodeError
from ..messages import METADATA_RECORDS
from ..varint import read_uvarint_int, write_uvarint
from .batch import RecordBatch, build_batch
from .compression import CompressionType
from .record import Record

__all__ = ["FRAME_VERSION", "METADATA_RECORD_TYPES", "METADATA_RECORD_DECODERS", "MetadataRecord",
           "frame_metadata_record", "unframe_metadata_record", "metadata_record_class",
           "encode_metadata_record", "decode_metadata_record", "data_batch"]

FRAME_VERSION = 1
_SHORT_MAX = 0x7FFF

# apiKey -> generated class (every schemas/records file of type "metadata").
METADATA_RECORD_TYPES = dict(METADATA_RECORDS)
# (apiKey, version) -> generated class, for every version each type has.
METADATA_RECORD_DECODERS = {
    (api_key, version): cls
    for api_key, cls in sorted(METADATA_RECORD_TYPES.items())
    for version in range(cls.MIN_VERSION, cls.MAX_VERSION + 1)
}


class MetadataRecord(NamedTuple):
    """One decoded metadata record value: its type, the version it was written at, the message."""

    api_key: int
    version: int
    message: object


def frame_metadata_record(api_key: int, version: int, payload) -> bytes:
    """The record value for a metadata record of ``api_key`` written at ``version``."""
    if not 0 <= api_key <= _SHORT_MAX or not 0 <= version <= _SHORT_MAX:
        raise EncodeError(f"metadata record api key {api_key} or version {version} out of range")
    return write_uvarint(FRAME_VERSION) + write_uvarint(api_key) + write_uvarint(version) + bytes(payload)


def _read_short(buf, pos: int, what: str):
    """``AbstractApiMessageSerde.unsignedIntToShort``: the varint as a Java int, refused past
    32767, then cast to a short (so a varint that is a negative int keeps its low 16 bits,
    signed)."""
    value, pos = read_uvarint_int(buf, pos)
    if value > _SHORT_MAX:
        raise DecodeError(f"value for {what} was too large ({value})")
    value &= 0xFFFF
    return (value - 0x10000 if value > _SHORT_MAX else value), pos


def unframe_metadata_record(buf) -> tuple[int, int, memoryview]:
    """``(api_key, version, payload)`` of a metadata record value.

    The payload is a memoryview into ``buf`` (no copy). Refuses what
    ``AbstractApiMessageSerde.read`` refuses before reading the message: a frame
    version other than 1 (0 was KRaft's 2.8 preview) and a type or version past
    int16. Each is a varint read as a Java int and cast to a short (``_read_short``),
    so a varint that is a negative int gives a negative (or wrapped) value, as in Kafka.
    """
    if buf is None:
        raise DecodeError("metadata record has a null value")
    frame_version, pos = _read_short(buf, 0, "frame version")
    if frame_version == 0:
        raise DecodeError("Could not deserialize metadata record with frame version 0")
    if frame_version != FRAME_VERSION:
        raise DecodeError(
            f"Could not deserialize metadata record due to unknown frame version {frame_version}"
            f"(only frame version {FRAME_VERSION} is supported)"
        )
    api_key, pos = _read_short(buf, pos, "type")
    version, pos = _read_short(buf, pos, "version")
    return api_key, version, memoryview(buf)[pos:]


def metadata_record_class(api_key: int, version: int):
    """The generated class that reads ``api_key`` at ``version`` (at any version, as Kafka's
    readers do, see the module docstring); ``DecodeError`` when Kafka 4.3.1 has no such
    type (``MetadataRecordType.fromId``)."""
    cls = METADATA_RECORD_DECODERS.get((api_key, version))
    if cls is None:
        cls = METADATA_RECORD_TYPES.get(api_key)
        if cls is None:
            raise DecodeError(f"Unknown metadata id {api_key}")
    return cls


def encode_metadata_record(message, version: int) -> bytes:
    """``message`` (a generated metadata record) framed as a ``__cluster_metadata`` value."""
    return frame_metadata_record(type(message).API_KEY, version, message.encode(version))


def decode_metadata_record(buf) -> MetadataRecord:
    """A whole metadata record value, decoded: ``MetadataRecord(api_key, version, message)``.

    Only ``DecodeError`` comes out of bad input; like ``AbstractApiMessageSerde.read``, bytes
    after the message are refused."""
    api_key, version, payload = unframe_metadata_record(buf)
    cls = metadata_record_class(api_key, version)
    # Outside its range a version reads with the nearest layout (module docstring).
    message, end = cls.read(payload, 0, min(max(version, cls.MIN_VERSION), cls.MAX_VERSION))
    if version > cls.MAX_VERSION:
        _refuse_future_structs(message, version)
    if end != len(payload):
        raise DecodeError(f"Found {len(payload) - end} byte(s) of garbage after {cls.__name__}")
    return MetadataRecord(api_key, version, message)


def _refuse_future_structs(message, version: int) -> None:
    """A struct element read at a version past the message's last: Kafka's struct readers
    refuse it (any nested struct sits inside a top-level one, so the top level suffices)."""
    for name in type(message).__slots__:
        value = getattr(message, name)
        items = value if isinstance(value, list) else (value,)
        for item in items:
            if isinstance(item, Struct):
                raise DecodeError(f"Can't read version {version} of {type(item).__name__}")


def data_batch(base_offset: int, leader_epoch: int, timestamp: int, values, *,
               compression: CompressionType = CompressionType.NONE) -> bytes:
    """A KRaft data batch of ``values`` (already framed record values), as BatchBuilder writes it."""
    values = [bytes(value) for value in values]
    if not values:
        raise EncodeError("a data batch needs at least one record")
    if compression == CompressionType.NONE:
        return build_batch(base_offset, leader_epoch, timestamp, [(None, value) for value in values])
    records = [Record(offset_delta=i, value=value) for i, value in enumerate(values)]
    return RecordBatch(
        base_offset=base_offset,
        partition_leader_epoch=leader_epoch,
        attributes=int(compression),
        last_offset_delta=len(records) - 1,
        base_timestamp=timestamp,
        max_timestamp=timestamp,
        records=records,
    ).encode()
