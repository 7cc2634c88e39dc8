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
    BrokerRegistrationChangeRecord,
    ClearElrRecord,
    ClientQuotaRecord,
    ConfigRecord,
    EndTransactionRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UnregisterControllerRecord,
)
from wire.records import encode_metadata_record, unframe_metadata_record

CONFIG_RECORD = ConfigRecord.API_KEY  # 4
FEATURE_LEVEL_RECORD = FeatureLevelRecord.API_KEY  # 12
NO_OP_RECORD = NoOpRecord.API_KEY  # 20
BEGIN_TRANSACTION_RECORD = BeginTransactionRecord.API_KEY  # 23
END_TRANSACTION_RECORD = EndTransactionRecord.API_KEY  # 24
ABORT_TRANSACTION_RECORD = AbortTransactionRecord.API_KEY  # 25
REGISTER_CONTROLLER_RECORD = RegisterControllerRecord.API_KEY  # 27
REGISTER_BROKER_RECORD = RegisterBrokerRecord.API_KEY  # 0
UNREGISTER_BROKER_RECORD = UnregisterBrokerRecord.API_KEY  # 1
TOPIC_RECORD = TopicRecord.API_KEY  # 2
PARTITION_RECORD = PartitionRecord.API_KEY  # 3
PARTITION_CHANGE_RECORD = PartitionChangeRecord.API_KEY  # 5
FENCE_BROKER_RECORD = FenceBrokerRecord.API_KEY  # 7
UNFENCE_BROKER_RECORD = UnfenceBrokerRecord.API_KEY  # 8
REMOVE_TOPIC_RECORD = RemoveTopicRecord.API_KEY  # 9
PRODUCER_IDS_RECORD = ProducerIdsRecord.API_KEY  # 15
BROKER_REGISTRATION_CHANGE_RECORD = BrokerRegistrationChangeRecord.API_KEY  # 17
CLEAR_ELR_RECORD = ClearElrRecord.API_KEY  # 28
UNREGISTER_CONTROLLER_RECORD = UnregisterControllerRecord.API_KEY  # 29 (Kafka 4.4.0)
CLIENT_QUOTA_RECORD = ClientQuotaRecord.API_KEY  # 14
USER_SCRAM_CREDENTIAL_RECORD = 11  # UserScramCredentialRecord (controller/image/scram.py)
REMOVE_USER_SCRAM_CREDENTIAL_RECORD = 22  # RemoveUserScramCredentialRecord
ACCESS_CONTROL_ENTRY_RECORD = 18  # AccessControlEntryRecord (controller/image/acls.py)
REMOVE_ACCESS_CONTROL_ENTRY_RECORD = 19  # RemoveAccessControlEntryRecord
DELEGATION_TOKEN_RECORD = 10  # DelegationTokenRecord (controller/image/delegation_tokens.py)
REMOVE_DELEGATION_TOKEN_RECORD = 26  # RemoveDelegationTokenRecord

# The record types the image replays (anything else is counted as unknown).
MODELLED_RECORDS = frozenset({
    FEATURE_LEVEL_RECORD, REGISTER_CONTROLLER_RECORD, CONFIG_RECORD, NO_OP_RECORD,
    BEGIN_TRANSACTION_RECORD, END_TRANSACTION_RECORD, ABORT_TRANSACTION_RECORD,
    REGISTER_BROKER_RECORD, UNREGISTER_BROKER_RECORD, TOPIC_RECORD, PARTITION_RECORD,
    PARTITION_CHANGE_RECORD, FENCE_BROKER_RECORD, UNFENCE_BROKER_RECORD, REMOVE_TOPIC_RECORD,
    PRODUCER_IDS_RECORD, BROKER_REGISTRATION_CHANGE_RECORD, CLEAR_ELR_RECORD,
    CLIENT_QUOTA_RECORD, USER_SCRAM_CREDENTIAL_RECORD, REMOVE_USER_SCRAM_CREDENTIAL_RECORD,
    ACCESS_CONTROL_ENTRY_RECORD, REMOVE_ACCESS_CONTROL_ENTRY_RECORD, UNREGISTER_CONTROLLER_RECORD,
    DELEGATION_TOKEN_RECORD, REMOVE_DELEGATION_TOKEN_RECORD,
})

TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC
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
