"""Control records and the KRaft control batches that carry them.

A control record's key is ``ControlRecordTypeSchema`` v0, 4 bytes: ``int16
version = 0, int16 type``. Its value is the type's message (LeaderChangeMessage,
SnapshotHeaderRecord, ..., VotersRecord) serialized at v0 with no version
prefix; this module takes those values as bytes from the generated codecs.

:func:`control_batch` builds a batch as ``LeaderState.createControlRecordsBuilder``
and ``RecordsSnapshotWriter`` do through ``MemoryRecordsBuilder``: control flag
(0x20) set, not transactional, producer id/epoch and base sequence -1,
CREATE_TIME, partition leader epoch = the leader's epoch. Every record is
appended with the same ``currentTimeMs`` that is also the builder's
``logAppendTime``, so base and max timestamps both equal it and every
timestamp delta is 0; offset deltas count up from 0; no headers.

The Raft core builds and reads control batches as messages rather than bytes:
:func:`build_control_batch` encodes them, :func:`control_records` decodes them.
"""
from __future__ import annotations

import struct
from enum import IntEnum

from ..exceptions import DecodeError, EncodeError
from ..messages import (
    KRaftVersionRecord, LeaderChangeMessage, SnapshotFooterRecord, SnapshotHeaderRecord,
    VotersRecord,
)
from .batch import RecordBatch, batch_records, build_batch
from .compression import CompressionType
from .header import CONTROL_MASK, BatchError, BatchInfo
from .record import Record

__all__ = [
    "ControlRecordType",
    "CONTROL_KEY_SIZE",
    "encode_control_key",
    "decode_control_key",
    "control_record_type",
    "control_batch",
    "build_control_batch",
    "control_records",
]

_KEY = struct.Struct(">hh")
CONTROL_KEY_SIZE = _KEY.size
CONTROL_KEY_VERSION = 0


class ControlRecordType(IntEnum):
    """Kafka's ``ControlRecordType`` (UNKNOWN, -1, is not a type one can write)."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


# Keys never change, so build them once.
_KEYS = {t: _KEY.pack(CONTROL_KEY_VERSION, t) for t in ControlRecordType}


def encode_control_key(kind: ControlRecordType) -> bytes:
    """The 4-byte key of a control record of type ``kind``."""
    try:
        return _KEYS[ControlRecordType(kind)]
    except ValueError:
        raise EncodeError(f"unknown control record type {kind}") from None


def decode_control_key(key) -> tuple[int, int]:
    """``(version, type_id)`` of a control record key, as ``ControlRecordType.parseTypeId`` reads it.

    A negative version or a key shorter than 4 bytes is an error. A newer
    version is read as v0 (its first two fields are the same), and bytes past
    the fourth are ignored, as Kafka ignores them. The type id may be one this
    Kafka does not know; see :func:`control_record_type`.
    """
    if key is None:
        raise DecodeError("control record has a null key")
    if len(key) < CONTROL_KEY_SIZE:
        raise DecodeError(f"control record key of {len(key)} bytes; at least {CONTROL_KEY_SIZE} needed")
    version, type_id = _KEY.unpack_from(key, 0)
    if version < 0:
        raise DecodeError(f"invalid control record key version {version}")
    return version, type_id


def control_record_type(key) -> ControlRecordType:
    """The known type of a control record key; ``DecodeError`` for an unknown one.

    KRaft refuses unknown control types in ``__cluster_metadata``
    (``ControlRecord``'s constructor); a consumer would skip them.
    """
    _, type_id = decode_control_key(key)
    try:
        return ControlRecordType(type_id)
    except ValueError:
        raise DecodeError(f"unknown control record type {type_id}") from None


def control_batch(base_offset: int, leader_epoch: int, timestamp: int, items, *,
                  compression: CompressionType = CompressionType.NONE) -> bytes:
    """A KRaft control batch holding ``items``, ``(ControlRecordType, value bytes)`` pairs.

    Byte-for-byte what Kafka's ``MemoryRecordsBuilder`` writes for the same
    inputs (uncompressed; KRaft writes its log uncompressed).
    """
    items = list(items)
    if not items:
        raise EncodeError("a control batch needs at least one record")
    if leader_epoch == -1 and any(kind == ControlRecordType.LEADER_CHANGE for kind, _ in items):
        # MemoryRecordsBuilder.appendLeaderChangeMessage refuses NO_PARTITION_LEADER_EPOCH.
        raise EncodeError("a LeaderChange record needs a valid partition leader epoch")
    if compression == CompressionType.NONE:
        return build_batch(base_offset, leader_epoch, timestamp,
                           [(encode_control_key(kind), bytes(value)) for kind, value in items], control=True)
    records = [
        Record(offset_delta=i, key=encode_control_key(kind), value=bytes(value))
        for i, (kind, value) in enumerate(items)
    ]
    return RecordBatch(
        base_offset=base_offset,
        partition_leader_epoch=leader_epoch,
        attributes=CONTROL_MASK | compression,
        last_offset_delta=len(records) - 1,
        base_timestamp=timestamp,
        max_timestamp=timestamp,
        records=records,
    ).encode()


_CONTROL_CLASSES = {
    ControlRecordType.LEADER_CHANGE: LeaderChangeMessage,
    ControlRecordType.SNAPSHOT_HEADER: SnapshotHeaderRecord,
    ControlRecordType.SNAPSHOT_FOOTER: SnapshotFooterRecord,
    ControlRecordType.KRAFT_VERSION: KRaftVersionRecord,
    ControlRecordType.KRAFT_VOTERS: VotersRecord,
}


def build_control_batch(base_offset: int, epoch: int, timestamp_ms: int,
                        messages: list[tuple[ControlRecordType, object]]) -> bytes:
    """A control batch of ``(type, message)`` pairs; each message is written at v0
    with no version prefix (``ControlRecordUtils``)."""
    records = [(encode_control_key(kind), msg.encode(0)) for kind, msg in messages]
    return build_batch(base_offset, epoch, timestamp_ms, records, control=True)


def control_records(buf, info: BatchInfo) -> list[tuple[ControlRecordType, object]]:
    """Decoded control records of a control batch; unknown types raise (R/ControlRecord)."""
    out = []
    for key, value in batch_records(buf, info):
        if key is None or len(key) < CONTROL_KEY_SIZE:
            raise BatchError("control record without a ControlRecordTypeSchema key")
        _, kind = _KEY.unpack_from(key)
        try:
            kind = ControlRecordType(kind)
            cls = _CONTROL_CLASSES[kind]
        except (ValueError, KeyError):
            raise BatchError(f"unknown control record type {kind}") from None
        out.append((kind, cls.decode(value, 0)))
    return out
