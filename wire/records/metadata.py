"""KRaft metadata records: their value framing, and the data batches that carry them.

Every non-control record of ``__cluster_metadata`` has a null key and a value
framed by ``AbstractApiMessageSerde``::

    uvarint frameVersion = 1, uvarint apiKey, uvarint version, message bytes

The message bytes are the record (TopicRecord, RegisterBrokerRecord, ...)
written by the generated codecs at ``version``, with no size prefix.

:func:`data_batch` builds a batch as the raft ``BatchBuilder`` does (the
``BatchAccumulator`` path, not ``MemoryRecordsBuilder``): attributes 0 (no
compression, CREATE_TIME, neither transactional nor control), producer
id/epoch and base sequence -1, base and max timestamp both the append time,
and for each record: attributes 0, timestamp delta 0, offset delta 0, 1, 2...,
null key, the value, no headers.
"""
from __future__ import annotations

from ..exceptions import DecodeError, EncodeError
from ..varint import read_uvarint, write_uvarint
from .batch import RecordBatch, build_batch
from .compression import CompressionType
from .record import Record

__all__ = ["FRAME_VERSION", "frame_metadata_record", "unframe_metadata_record", "data_batch"]

FRAME_VERSION = 1
_SHORT_MAX = 0x7FFF


def frame_metadata_record(api_key: int, version: int, payload) -> bytes:
    """The record value for a metadata record of ``api_key`` written at ``version``."""
    if not 0 <= api_key <= _SHORT_MAX or not 0 <= version <= _SHORT_MAX:
        raise EncodeError(f"metadata record api key {api_key} or version {version} out of range")
    return write_uvarint(FRAME_VERSION) + write_uvarint(api_key) + write_uvarint(version) + bytes(payload)


def _read_short(buf, pos: int, what: str):
    value, pos = read_uvarint(buf, pos)
    if value > _SHORT_MAX:
        raise DecodeError(f"value for {what} was too large ({value})")
    return value, pos


def unframe_metadata_record(buf) -> tuple[int, int, memoryview]:
    """``(api_key, version, payload)`` of a metadata record value.

    The payload is a memoryview into ``buf`` (no copy). Refuses what
    ``AbstractApiMessageSerde.read`` refuses before reading the message: a frame
    version other than 1 (0 was KRaft's 2.8 preview) and a type or version past
    int16.
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
