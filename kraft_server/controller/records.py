"""Metadata records the controller writes, framed as ``__cluster_metadata`` values
(``uvarint frameVersion=1, uvarint apiKey, uvarint version, message``).

Every record comes from the generated codecs (``schemas/records``), written at v0:
FeatureLevelRecord, NoOpRecord and RegisterControllerRecord, and the transaction
markers and ConfigRecord that Kafka's bootstrap batch carries
(``ActivationRecordsGenerator.recordsForEmptyLog``). Reading any record type Kafka
writes is ``wire.records.decode_metadata_record``'s job.
"""
from __future__ import annotations

from wire.messages import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    ConfigRecord,
    EndTransactionRecord,
    FeatureLevelRecord,
    NoOpRecord,
    RegisterControllerRecord,
)
from wire.records import encode_metadata_record, unframe_metadata_record

CONFIG_RECORD = ConfigRecord.API_KEY  # 4
FEATURE_LEVEL_RECORD = FeatureLevelRecord.API_KEY  # 12
NO_OP_RECORD = NoOpRecord.API_KEY  # 20
BEGIN_TRANSACTION_RECORD = BeginTransactionRecord.API_KEY  # 23
END_TRANSACTION_RECORD = EndTransactionRecord.API_KEY  # 24
ABORT_TRANSACTION_RECORD = AbortTransactionRecord.API_KEY  # 25
REGISTER_CONTROLLER_RECORD = RegisterControllerRecord.API_KEY  # 27

BROKER_RESOURCE = 4  # ConfigResource.Type.BROKER


def feature_level(name: str, level: int) -> bytes:
    return encode_metadata_record(FeatureLevelRecord(name=name, feature_level=level), 0)


def no_op() -> bytes:
    return encode_metadata_record(NoOpRecord(), 0)


def register_controller(record: RegisterControllerRecord) -> bytes:
    return encode_metadata_record(record, 0)


def begin_transaction(name: str | None) -> bytes:
    """BeginTransactionRecord v0: Name is tagged field 0 (nullable, default null: not written)."""
    return encode_metadata_record(BeginTransactionRecord(name=name), 0)


def end_transaction() -> bytes:
    return encode_metadata_record(EndTransactionRecord(), 0)


def config(resource_type: int, resource_name: str, name: str, value: str | None) -> bytes:
    record = ConfigRecord(resource_type=resource_type, resource_name=resource_name, name=name,
                          value=value)
    return encode_metadata_record(record, 0)


def decode_config(payload) -> tuple[int, str, str, str | None]:
    """``(resource type, resource name, name, value)`` of a ConfigRecord v0 body."""
    r = ConfigRecord.decode(payload, 0)
    return r.resource_type, r.resource_name, r.name, r.value


def unframe(value) -> tuple[int, int, memoryview]:
    return unframe_metadata_record(value)
