"""Metadata records the controller writes, framed as ``__cluster_metadata`` values
(``uvarint frameVersion=1, uvarint apiKey, uvarint version, message``).

FeatureLevelRecord, NoOpRecord and RegisterControllerRecord come from the
generated codecs. The transaction markers and ConfigRecord that Kafka's bootstrap
batch carries (``ActivationRecordsGenerator.recordsForEmptyLog``) are tiny
flexible v0 messages and are encoded here by hand.
"""
from __future__ import annotations

import struct

from wire.messages import FeatureLevelRecord, NoOpRecord, RegisterControllerRecord
from wire.records import frame_metadata_record, unframe_metadata_record
from wire.varint import read_uvarint, write_uvarint

CONFIG_RECORD = 4
FEATURE_LEVEL_RECORD = FeatureLevelRecord.API_KEY  # 12
NO_OP_RECORD = NoOpRecord.API_KEY  # 20
BEGIN_TRANSACTION_RECORD = 23
END_TRANSACTION_RECORD = 24
ABORT_TRANSACTION_RECORD = 25
REGISTER_CONTROLLER_RECORD = RegisterControllerRecord.API_KEY  # 27

BROKER_RESOURCE = 4  # ConfigResource.Type.BROKER


def _compact_string(text: str | None) -> bytes:
    if text is None:
        return b"\x00"
    data = text.encode("utf-8")
    return write_uvarint(len(data) + 1) + data


def _read_compact_string(buf, pos: int) -> tuple[str | None, int]:
    n, pos = read_uvarint(buf, pos)
    if n == 0:
        return None, pos
    end = pos + n - 1
    return bytes(buf[pos:end]).decode("utf-8"), end


def feature_level(name: str, level: int) -> bytes:
    return frame_metadata_record(FEATURE_LEVEL_RECORD, 0,
                                 FeatureLevelRecord(name=name, feature_level=level).encode(0))


def no_op() -> bytes:
    return frame_metadata_record(NO_OP_RECORD, 0, NoOpRecord().encode(0))


def register_controller(record: RegisterControllerRecord) -> bytes:
    return frame_metadata_record(REGISTER_CONTROLLER_RECORD, 0, record.encode(0))


def begin_transaction(name: str | None) -> bytes:
    """BeginTransactionRecord v0: Name is tagged field 0 (nullable, default null)."""
    if name is None:
        body = b"\x00"
    else:
        field = _compact_string(name)
        body = write_uvarint(1) + write_uvarint(0) + write_uvarint(len(field)) + field
    return frame_metadata_record(BEGIN_TRANSACTION_RECORD, 0, body)


def end_transaction() -> bytes:
    return frame_metadata_record(END_TRANSACTION_RECORD, 0, b"\x00")


def config(resource_type: int, resource_name: str, name: str, value: str | None) -> bytes:
    body = (struct.pack(">b", resource_type) + _compact_string(resource_name) + _compact_string(name)
            + _compact_string(value) + b"\x00")
    return frame_metadata_record(CONFIG_RECORD, 0, body)


def decode_config(payload) -> tuple[int, str, str, str | None]:
    resource_type = struct.unpack_from(">b", payload, 0)[0]
    resource_name, pos = _read_compact_string(payload, 1)
    name, pos = _read_compact_string(payload, pos)
    value, pos = _read_compact_string(payload, pos)
    return resource_type, resource_name or "", name or "", value


def unframe(value) -> tuple[int, int, memoryview]:
    return unframe_metadata_record(value)
