"""The metadata-record registry of ``wire.records.metadata`` and the controller's records.

Without a JVM: the registry's coverage, round trips of every (type, version) through
the ``__cluster_metadata`` frame, what is refused, the controller's record bytes pinned
as written before they moved onto the generated codecs, and a small decoder fuzz
(fixed seeds plus one fresh printed seed; ``METADATA_FUZZ_SEED`` replays one). The
comparison with Kafka's own ``MetadataRecordSerde`` is in ``test_java_differential_metadata.py``.
"""
from __future__ import annotations

import os
import random

import pytest

from tests.support import strategies as S
from wire.exceptions import DecodeError
from wire.records import (
    METADATA_RECORD_DECODERS,
    METADATA_RECORD_TYPES,
    MetadataRecord,
    decode_metadata_record,
    encode_metadata_record,
    frame_metadata_record,
    metadata_record_class,
)

MODELS = S.models()
PAIRS = sorted(METADATA_RECORD_DECODERS.items())
# Kafka 4.3.1's MetadataRecordType: (key, name, last version); keys 6, 13 and 16 are retired.
KAFKA_TYPES = [
    (0, "RegisterBrokerRecord", 4), (1, "UnregisterBrokerRecord", 0), (2, "TopicRecord", 0),
    (3, "PartitionRecord", 2), (4, "ConfigRecord", 0), (5, "PartitionChangeRecord", 2),
    (7, "FenceBrokerRecord", 0), (8, "UnfenceBrokerRecord", 0), (9, "RemoveTopicRecord", 0),
    (10, "DelegationTokenRecord", 0), (11, "UserScramCredentialRecord", 0),
    (12, "FeatureLevelRecord", 0), (14, "ClientQuotaRecord", 0), (15, "ProducerIdsRecord", 0),
    (17, "BrokerRegistrationChangeRecord", 3), (18, "AccessControlEntryRecord", 0),
    (19, "RemoveAccessControlEntryRecord", 0), (20, "NoOpRecord", 0),
    (21, "ZkMigrationStateRecord", 0), (22, "RemoveUserScramCredentialRecord", 0),
    (23, "BeginTransactionRecord", 0), (24, "EndTransactionRecord", 0),
    (25, "AbortTransactionRecord", 0), (26, "RemoveDelegationTokenRecord", 0),
    (27, "RegisterControllerRecord", 0), (28, "ClearElrRecord", 0),
    (29, "UnregisterControllerRecord", 0),  # Kafka 4.4.0
]


def _id(pair):
    (key, version), cls = pair
    return f"{cls.__name__}-v{version}"


def test_registry_is_the_facts_sheet_table():
    ours = [(k, c.__name__, c.MAX_VERSION) for k, c in sorted(METADATA_RECORD_TYPES.items())]
    assert ours == KAFKA_TYPES
    assert all(c.MIN_VERSION == 0 and c.FLEXIBLE_MIN == 0 for c in METADATA_RECORD_TYPES.values())
    assert len(PAIRS) == sum(last + 1 for _, _, last in KAFKA_TYPES) == 38
    for (key, version), cls in PAIRS:
        assert cls.API_KEY == key and metadata_record_class(key, version) is cls


def _fields(fields):
    for f in fields:
        yield f
        if f.fields:
            yield from _fields(f.fields)


def test_every_field_range_is_open_ended():
    """The premise of reading a future version with the newest layout (module docstring of
    wire.records.metadata): no field stops at a version, so version N+1 reads as N does."""
    from codegen.spec import MAX_VERSION

    closed = [f"{cls.__name__}.{f.name} {f.versions}"
              for cls in METADATA_RECORD_TYPES.values()
              for f in _fields(MODELS[cls.__name__].spec.fields)
              if f.versions.highest != MAX_VERSION
              or (not f.tagged_versions.empty and f.tagged_versions.highest != MAX_VERSION)
              or (not f.nullable_versions.empty and f.nullable_versions.highest != MAX_VERSION)]
    assert closed == []


@pytest.mark.parametrize("pair", PAIRS, ids=_id)
def test_round_trip_through_the_frame(pair):
    (key, version), cls = pair
    for obj in (S.default_message(cls), S.filled_message(MODELS[cls.__name__], cls, version)):
        value = encode_metadata_record(obj, version)
        assert value[:3] == bytes([1, key, version])  # frame version 1; keys and versions < 128
        assert value[3:] == obj.encode(version)
        got = decode_metadata_record(value)
        assert got == MetadataRecord(key, version, obj)
        assert decode_metadata_record(memoryview(value)) == got


def test_versions_differ_where_kafka_added_fields():
    """A record written at a later version is not the earlier encoding (the registry must
    pick the version's own decoder): PartitionRecord v1 adds the untagged Directories."""
    from uuid import UUID

    from wire.messages import PartitionRecord

    p = PartitionRecord(replicas=[1, 2], directories=[UUID(int=7), UUID(int=8)])
    v0, v1 = encode_metadata_record(PartitionRecord(replicas=[1, 2]), 0), encode_metadata_record(p, 1)
    assert len(v1) == len(v0) + 1 + 32
    assert decode_metadata_record(v1).message == p
    with pytest.raises(DecodeError, match="garbage"):  # v1 bytes framed as v0: Directories left over
        decode_metadata_record(frame_metadata_record(3, 0, v1[3:]))


@pytest.mark.parametrize("value, message", [
    (b"", "truncated"),
    (b"\x00\x0c\x00\x00\x00", "frame version 0"),
    (b"\x02\x14\x00\x00", "unknown frame version 2"),
    (b"\x01\x06\x00\x00", "Unknown metadata id 6"),
    (b"\x01\x0d\x00\x00", "Unknown metadata id 13"),
    (b"\x01\x10\x00\x00", "Unknown metadata id 16"),
    (b"\x01\x1e\x00\x00", "Unknown metadata id 30"),
    (b"\x01\x80\x80\x02\x00\x00", "too large"),
    (b"\x01\x14\x00\x00\x00", "1 byte\\(s\\) of garbage after NoOpRecord"),
    (b"\x01\x0c\x00\x05abc", "past the end|malformed"),
    (b"\x01\x11\x01" + bytes(12) + b"\x01\x02\x01\x01", "Tag 2 is not valid for version 1"),
])
def test_refused(value, message):
    with pytest.raises(DecodeError, match=message):
        decode_metadata_record(value)


@pytest.mark.parametrize("hexed, value, end", [
    ("00", 0, 1), ("7f", 127, 1), ("8001", 128, 2), ("ffffffff07", 0x7FFFFFFF, 5),
    ("8080808008", -0x80000000, 5), ("ffffffff0f", -1, 5), ("8180808010", 1, 5),
    ("ffffffff7f", -1, 5), ("94808080" "0f", -0x0FFFFFEC, 5),
])
def test_uvarint_as_a_java_int(hexed, value, end):
    """ByteUtils.readUnsignedVarint: 32 bits kept, signed; and the compact length after it."""
    from wire.codec_support import read_compact_length
    from wire.varint import read_uvarint_int

    assert read_uvarint_int(bytes.fromhex(hexed), 0) == (value, end)
    length = read_compact_length(bytes.fromhex(hexed), 0)[0]
    assert length == (0x7FFFFFFF if value == -0x80000000 else value - 1)


@pytest.mark.parametrize("hexed, message", [("", "truncated"), ("80", "truncated"),
                                            ("8080808080", "too long"), ("ffffffff8f01", "too long")])
def test_uvarint_as_a_java_int_refused(hexed, message):
    from wire.varint import read_uvarint_int

    with pytest.raises(DecodeError, match=message):
        read_uvarint_int(bytes.fromhex(hexed), 0)


def test_known_tag_read_by_its_type():
    """Kafka reads a known tagged field by its type and never looks at its size prefix: a
    Leader (tag 1, int32) announced as 9 bytes is read as its 4, and the next tag follows."""
    from wire.messages import PartitionChangeRecord

    body = bytes(4 + 16) + b"\x02" + b"\x01\x09\x00\x00\x00\x07" + b"\x05\x01\x01"
    got = decode_metadata_record(frame_metadata_record(5, 0, body)).message
    assert got == PartitionChangeRecord(partition_id=0, leader=7, leader_recovery_state=1)


def test_future_versions():
    """Read with the newest layout, as Kafka reads them; refused with a struct element."""
    from wire.messages import ClientQuotaRecord, PartitionChangeRecord, RegisterBrokerRecord

    change = PartitionChangeRecord(partition_id=3, leader=1)
    got = decode_metadata_record(frame_metadata_record(5, 3, change.encode(2)))
    assert got == MetadataRecord(5, 3, change)
    empty = RegisterBrokerRecord(broker_id=9)
    assert decode_metadata_record(frame_metadata_record(0, 9, empty.encode(4))).message == empty
    filled = S.filled_message(MODELS["RegisterBrokerRecord"], RegisterBrokerRecord, 4)
    assert filled.end_points
    with pytest.raises(DecodeError, match="Can't read version 5 of BrokerEndpoint"):
        decode_metadata_record(frame_metadata_record(0, 5, filled.encode(4)))
    quota = ClientQuotaRecord(entity=[S.struct_class(ClientQuotaRecord, "EntityData")(entity_type="user")])
    with pytest.raises(DecodeError, match="EntityData"):
        decode_metadata_record(frame_metadata_record(14, 1, quota.encode(0)))


# -- the controller's records (kraft_server/controller/image/records.py) ------------------------

# Bytes as the hand-written encoders produced them before the move to generated codecs.
CONTROLLER_BYTES = [
    ("config", (4, "", "min.insync.replicas", "2"),
     "0104000401146d696e2e696e73796e632e7265706c69636173023200"),
    ("config", (2, "topic-é", "x", None), "0104000209746f7069632dc3a902780000"),
    ("begin_transaction", ("Bootstrap records",),
     "01170001001212426f6f747374726170207265636f726473"),
    ("begin_transaction", (None,), "01170000"),
    ("begin_transaction", ("",), "01170001000101"),
    ("end_transaction", (), "01180000"),
    ("no_op", (), "01140000"),
    ("feature_level", ("metadata.version", 27), "010c00116d657461646174612e76657273696f6e001b00"),
    ("feature_level", ("kraft.version", 0), "010c000e6b726166742e76657273696f6e000000"),
]


@pytest.mark.parametrize("function, args, hexed", CONTROLLER_BYTES,
                         ids=[f"{f}{a}" for f, a, _ in CONTROLLER_BYTES])
def test_controller_record_bytes(function, args, hexed):
    from kraft_server.controller.image import records as rec

    value = getattr(rec, function)(*args)
    assert value.hex() == hexed
    got = decode_metadata_record(value)
    assert got.api_key == getattr(rec, f"{function.upper()}_RECORD")
    if function == "config":
        assert rec.decode_config(rec.unframe(value)[2]) == args
        assert (got.message.resource_type, got.message.resource_name, got.message.name,
                got.message.value) == args


def test_image_replays_through_the_registry():
    """The controller's image reads its record types as Kafka does (a later version of
    FeatureLevelRecord with the newest layout, leftover bytes refused) and counts the types
    it does not model."""
    from wire.messages import FeatureLevelRecord, ZkMigrationStateRecord
    from kraft_server.controller.image import records as rec
    from kraft_server.controller.image.metadata_image import MetadataImage

    img = MetadataImage()
    img.replay(encode_metadata_record(ZkMigrationStateRecord(), 0))  # not modelled (no ZooKeeper migration)
    assert (img.unknown_records, img.bad_records) == (1, 0)
    body = FeatureLevelRecord(name="metadata.version", feature_level=27).encode(0)
    img.replay(frame_metadata_record(12, 1, body))  # a version Kafka 4.3.1 does not know yet
    assert img.metadata_version() == 27 and img.bad_records == 0
    img.replay(frame_metadata_record(12, 0, body[:-1] + b"\x00\x00"))  # one byte left over
    img.replay(rec.config(rec.BROKER_RESOURCE, "", "min.insync.replicas", "2") + b"\x00")
    assert img.bad_records == 2 and img.configs == {}
    img.replay(rec.config(rec.BROKER_RESOURCE, "", "min.insync.replicas", "2"))
    assert img.configs == {(4, "", "min.insync.replicas"): "2"}


# -- fuzz: only DecodeError comes out --------------------------------------------------------

FIXED_SEEDS = (7, 20251125)
FUZZ_INPUTS_PER_SEED = 3000


def _mutate(rnd: random.Random, data: bytes) -> bytes:
    d = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        op = rnd.randrange(6)
        if op == 0 and d:
            d[rnd.randrange(len(d))] = rnd.randrange(256)
        elif op == 1:
            del d[rnd.randrange(len(d) + 1):]
        elif op == 2:
            at = rnd.randrange(len(d) + 1)
            d[at:at] = rnd.choice((b"\xff\xff\xff\xff\x0f", b"\x80", b"\x7f", bytes([rnd.randrange(256)])))
        elif op == 3 and d:
            del d[rnd.randrange(len(d))]
        elif op == 4 and len(d) > 3:
            d[rnd.randrange(1, 3)] = rnd.randrange(32)
        elif op == 5 and d:
            a = rnd.randrange(len(d))
            d[a:a] = d[a:a + rnd.randrange(1, 40)] * rnd.randrange(1, 4)
    return bytes(d)


def test_decoder_fuzz(capsys):
    fresh = int(os.environ.get("METADATA_FUZZ_SEED") or random.SystemRandom().randrange(1 << 32))
    with capsys.disabled():
        print(f"\nmetadata decoder fuzz: seeds {FIXED_SEEDS} and fresh {fresh} "
              f"(replay with METADATA_FUZZ_SEED={fresh})")
    bases = [encode_metadata_record(obj, v) for (k, v), cls in PAIRS
             for obj in (S.default_message(cls), S.filled_message(MODELS[cls.__name__], cls, v))]
    outcomes = {"read": 0, "refused": 0}
    for seed in (*FIXED_SEEDS, fresh):
        rnd = random.Random(seed)
        for i in range(FUZZ_INPUTS_PER_SEED):
            data = _mutate(rnd, rnd.choice(bases))
            try:
                decode_metadata_record(data)
                outcomes["read"] += 1
            except DecodeError:
                outcomes["refused"] += 1
            except Exception as e:  # noqa: BLE001 - the point of the test
                pytest.fail(f"seed {seed} input {i}: {type(e).__name__}: {e}\n  "
                            f"decode_metadata_record(bytes.fromhex('{data.hex()}'))")
    # both outcomes happen, or the mutations say little
    assert outcomes["read"] > 100 and outcomes["refused"] > 100, outcomes
