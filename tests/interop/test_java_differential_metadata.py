"""Differential test of ``__cluster_metadata`` record values against Apache Kafka's own
reader (split from ``test_java_differential.py`` so the two run on two workers).

Metadata record values (``__cluster_metadata``: frame version, type, version, record) go
through Kafka's ``MetadataRecordSerde`` of the suite's default release (``metadata_codec``): the registry of ``wire.records.metadata`` is its
``MetadataRecordType`` table; every (type, version) framed by us is read and written back
byte for byte (defaults, every field set, hypothesis examples with unknown tags); values
both must refuse are refused by both; future versions are read (or refused) as Kafka
reads them; and mutated values (fixed seeds plus a fresh printed one,
``METADATA_DIFF_SEED`` / ``METADATA_DIFF_MUTANTS``) are read by Kafka exactly when ours
reads them, to the same bytes; ``WIDE_VARINTS`` pins how both read 5-byte varints that
are negative Java ints or wider than 32 bits.
"""
from __future__ import annotations

import base64
import os
import random
from pathlib import Path

import pytest
from hypothesis import given

from codegen.generate import load_models
from tests.support import strategies as S
from tests.support.java_tester import JavaCodecTester, sweep_depths, sweep_settings
from tests.support.schemas_release import NEWER_THAN_DEFAULT_RECORDS, PENDING_RECORDS

pytestmark = pytest.mark.java

REPO = Path(__file__).resolve().parents[2]
MODELS = {m.name: m for m, _ in load_models(REPO / "schemas", REPO)}
STATS = {"metadata_values": 0}


@pytest.fixture(scope="session")
def metadata_codec(tmp_path_factory):
    """A CodecTester JVM over the default release's classes, for ``__cluster_metadata``
    values: their schemas are the same in 4.3.1 and 4.4.0, and how malformed values are
    read follows the release the suite runs (Kafka 4.4's readers refuse a tagged-field
    count that is a negative int, as ours do; 4.3.1's read none)."""
    with JavaCodecTester.running(tmp_path_factory.mktemp("codec-tester-metadata")) as tester:
        yield tester


# -- metadata record values (the __cluster_metadata frame around the records) -----------

# Fixed seeds for the mutated-value comparison; each run adds one fresh seed (printed, and
# replayable with METADATA_DIFF_SEED=<seed>).
METADATA_FIXED_SEEDS = (1, 20251125, 4242)
METADATA_MUTANTS_PER_SEED = int(os.environ.get("METADATA_DIFF_MUTANTS", "2000"))


# wire.records decodes with wire.messages: the sweep only applies when that is the target.
metadata_only_ours = pytest.mark.skipif(bool(os.environ.get("KRAFT_TEST_MESSAGES")),
                                        reason="KRAFT_TEST_MESSAGES targets another package")


def _metadata_pairs():
    from wire.records import METADATA_RECORD_DECODERS

    return sorted(METADATA_RECORD_DECODERS.items())


def _kafka_type_ids(metadata_codec) -> set[int]:
    """The metadata record types the suite's Kafka release knows."""
    return {t["id"] for t in metadata_codec.metadata_types()}


def _kafka_reads_value(metadata_codec, api_key, version, cls, obj, what):
    """Kafka's MetadataRecordSerde reads our framed value of obj and writes the same bytes
    back; ours decodes it to obj."""
    from wire.records import MetadataRecord, decode_metadata_record, encode_metadata_record

    value = encode_metadata_record(obj, version)
    [reply] = metadata_codec.metadata_values([value])
    STATS["metadata_values"] += 1
    where = f"{cls.__name__} v{version} ({what}) value {value.hex()[:400]}"
    assert reply.get("ok"), f"{where}: {reply.get('error')}"
    assert (reply["api_key"], reply["version"], reply["class"]) == (api_key, version, cls.__name__), where
    assert base64.b64decode(reply["bytes"]) == value, f"{where}: Kafka re-serialised it differently"
    assert decode_metadata_record(value) == MetadataRecord(api_key, version, obj), where


@metadata_only_ours
def test_metadata_record_types_match_kafka(metadata_codec):
    """Our (type, versions) registry is Kafka's MetadataRecordType table, no more, no less."""
    from wire.records import METADATA_RECORD_DECODERS, METADATA_RECORD_TYPES

    kafka = {t["id"]: (t["class"], t["lowest"], t["highest"]) for t in metadata_codec.metadata_types()}
    ours = {k: (c.__name__, c.MIN_VERSION, c.MAX_VERSION) for k, c in METADATA_RECORD_TYPES.items()}
    # the default release's types; a newer release's that another branch adds are left out
    pending = {key for key, _why in PENDING_RECORDS.values() if key in kafka}
    kafka = {k: v for k, v in kafka.items() if k not in pending}
    newer = set(NEWER_THAN_DEFAULT_RECORDS.values()) - set(kafka)  # a newer release's, not this one's
    assert set(ours) - set(kafka) == newer
    ours = {k: v for k, v in ours.items() if k not in newer}
    assert ours == kafka
    assert len(ours) + len(newer) == 27
    assert {kv for kv in METADATA_RECORD_DECODERS if kv[0] not in newer} == {
        (k, v) for k, (_, lo, hi) in kafka.items() for v in range(lo, hi + 1)}


@metadata_only_ours
@pytest.mark.parametrize("pair", _metadata_pairs(), ids=lambda p: f"{p[1].__name__}-v{p[0][1]}")
@pytest.mark.parametrize("examples", sweep_depths())
def test_metadata_record_values_read_by_kafka(metadata_codec, examples, pair):
    """Every record type at every version, framed: defaults, every field set, hypothesis
    examples, and examples with unknown tagged fields."""
    (api_key, version), cls = pair
    if api_key not in _kafka_type_ids(metadata_codec):
        pytest.skip(f"{cls.__name__} is newer than the suite's Kafka release, whose classes read these values")
    model = MODELS[cls.__name__]
    _kafka_reads_value(metadata_codec, api_key, version, cls, S.default_message(cls), "all defaults")
    _kafka_reads_value(metadata_codec, api_key, version, cls, S.filled_message(model, cls, version),
                       "every field non-default")

    @sweep_settings(examples)
    @given(S.messages(model, cls, version, unknown_tags=model.flexible(version)))
    def examples(obj):
        _kafka_reads_value(metadata_codec, api_key, version, cls, obj, "hypothesis example")

    examples()


def _refusal_cases():
    """Values that both readers must refuse, named: bad frames, unknown types and versions,
    leftovers and truncations."""
    from wire.records import METADATA_RECORD_TYPES, frame_metadata_record
    from wire.varint import write_uvarint

    cases = {
        "empty": b"",
        "frame version 0": b"\x00\x0c\x00\x00\x00\x00",
        "frame version 2": b"\x02\x14\x00\x00",
        "type past int16": b"\x01" + write_uvarint(0x8000) + b"\x00\x00",
        "version past int16": b"\x01\x14" + write_uvarint(0x8000) + b"\x00",
    }
    for key in (6, 13, 16, 29, 100, 0x7FFF):
        cases[f"unknown type {key}"] = frame_metadata_record(key, 0, b"\x00")
    for key, cls in sorted(METADATA_RECORD_TYPES.items()):
        body = cls().encode(cls.MAX_VERSION)
        name = cls.__name__
        cases[f"{name} with a byte left over"] = frame_metadata_record(key, cls.MAX_VERSION, body + b"\x00")
        cases[f"{name} cut short"] = frame_metadata_record(key, cls.MAX_VERSION, body[:-1])
    return cases


def _ours(value):
    """(True, MetadataRecord) or (False, DecodeError text); anything else propagates."""
    from wire.exceptions import DecodeError
    from wire.records import decode_metadata_record

    try:
        return True, decode_metadata_record(value)
    except DecodeError as e:
        return False, str(e)


@metadata_only_ours
def test_metadata_record_refusals_agree(metadata_codec):
    cases = _refusal_cases()
    replies = metadata_codec.metadata_values(list(cases.values()))
    STATS["metadata_values"] += len(cases)
    wrong = []
    for (name, value), reply in zip(cases.items(), replies):
        ok, ours = _ours(value)
        if ok or reply.get("ok"):
            wrong.append(f"{name} ({value.hex()}): ours {'read' if ok else 'refused'} it, "
                         f"Kafka {'read' if reply.get('ok') else 'refused'} it")
    assert not wrong, "\n".join(wrong)


@metadata_only_ours
def test_metadata_record_future_versions_read_as_kafka_reads_them(metadata_codec):
    """Kafka's readers take a version past the last one they know with the newest layout,
    but refuse a nested struct element at it: so do ours. Every type, filled (struct
    elements present) and with default (empty) arrays, one and many versions ahead."""
    from wire.records import METADATA_RECORD_TYPES, frame_metadata_record

    values = []
    known = _kafka_type_ids(metadata_codec)
    for key, cls in sorted(METADATA_RECORD_TYPES.items()):
        if key not in known:  # newer than the suite's Kafka release
            continue
        model = MODELS[cls.__name__]
        for obj in (S.filled_message(model, cls, cls.MAX_VERSION), S.default_message(cls)):
            body = obj.encode(cls.MAX_VERSION)
            for future in (cls.MAX_VERSION + 1, 0x7FFF):
                values.append((cls, future, frame_metadata_record(key, future, body)))
    replies = metadata_codec.metadata_values([v for _, _, v in values])
    STATS["metadata_values"] += len(values)
    read_by_both = refused_by_both = 0
    for (cls, future, value), reply in zip(values, replies):
        ok, got = _ours(value)
        assert ok == bool(reply.get("ok")), \
            f"{cls.__name__} v{future}: ours {got if not ok else 'read it'}; Kafka {reply.get('error', 'read it')}"
        if ok:
            read_by_both += 1
            assert (got.api_key, got.version, reply["version"]) == (cls.API_KEY, future, future)
            assert _reencode(got) == base64.b64decode(reply["bytes"]) == value, cls.__name__
        else:
            refused_by_both += 1
    # RegisterBroker, RegisterController and ClientQuota filled: 3 types x 2 future versions
    assert (read_by_both, refused_by_both) == (len(values) - 6, 6)


def _reencode(record) -> bytes:
    """A decoded value written back as Kafka writes it: a future version with the newest
    layout, a negative one with version 0's and as the 5-byte varint of its int."""
    from wire.varint import write_uvarint

    cls = type(record.message)
    layout = min(max(record.version, cls.MIN_VERSION), cls.MAX_VERSION)
    return (write_uvarint(1) + write_uvarint(record.api_key)
            + write_uvarint(record.version & 0xFFFFFFFF) + record.message.encode(layout))


# 5-byte varints whose value is 2**31 or more: Kafka's readUnsignedVarint keeps 32 bits and
# hands them on as a Java int, so such a varint reads as a negative int (a tag count that
# skips the loop, a nullable length that reads as null, a negative version read as 0, a
# tag size it ignores or refuses) or, past 32 bits, loses its high bits. Ours reads them the same way
# (wire.varint.read_uvarint_int); no writer produces them, so they are pinned here.
WIDE_VARINTS = {
    # tag size 2**32 + 1 of an unknown tag (AbortTransactionRecord): 1 byte read
    "unknown tag size past 32 bits": "011900" "01" "05" "8180808010" "aa",
    # a negative size of an unknown tag: refused
    "unknown tag size negative": "011900" "01" "05" "ffffffff0f" "aa",
    # tag count 2**31: a negative int, refused (from Kafka 4.4; 4.3 read no tagged field)
    "tag count 2**31": "011800" "8080808008",
    # frame version 2**32 + 1: the int is 1
    "frame version past 32 bits": "8180808010" "1400" "00",
    # version -1: read with version 0's layout (so the empty body is cut short)
    "version -1": "0114" "ffffffff0f" "00",
    "version -1 cut short": "0114" "ffffffff0f",
    "version -1 of FeatureLevelRecord": "010c" "ffffffff0f" "0278" "0007" "00",
    # the type as a negative int whose low 16 bits are 20 (NoOpRecord)
    "type -65516": "01" "94808080" "0f" "0000",
    # Reason (tag 0, nullable string) with compact length 2**31 + 1: a negative int, null
    "nullable length past 2**31": "011900" "01" "00" "05" "8180808008",
    # compact length 2**31: minus one wraps to 2**31 - 1, an invalid length
    "nullable length 2**31": "011900" "01" "00" "05" "8080808008",
    # a non-nullable string (ClearElrRecord.TopicName) of length -1 as a 5-byte varint
    "non-nullable length 2**32": "011c00" "8080808010" "00",
}


@pytest.mark.parametrize("name", sorted(WIDE_VARINTS))
def test_metadata_record_wide_varints_agree(metadata_codec, name):
    value = bytes.fromhex(WIDE_VARINTS[name])
    [reply] = metadata_codec.metadata_values([value])
    STATS["metadata_values"] += 1
    ok, ours = _ours(value)
    assert ok == bool(reply.get("ok")), \
        f"{name}: ours {ours if not ok else 'read it'}; Kafka {reply.get('error', 'read it')}"
    if ok:
        assert (ours.api_key, ours.version) == (reply["api_key"], reply["version"])
        assert _reencode(ours) == base64.b64decode(reply["bytes"]), name


def test_metadata_record_wide_varint_cases_split():
    """The pinned cases hold reads and refusals both (else they pin less than they claim)."""
    outcomes = [_ours(bytes.fromhex(h))[0] for h in WIDE_VARINTS.values()]
    assert outcomes.count(True) >= 5 and outcomes.count(False) >= 3


def _mutate_value(rnd, value: bytes) -> bytes:
    data = bytearray(value)
    op = rnd.randrange(7)
    if op == 0 and data:  # flip bits in one byte
        data[rnd.randrange(len(data))] ^= 1 << rnd.randrange(8)
    elif op == 1:  # truncate
        del data[rnd.randrange(len(data) + 1):]
    elif op == 2:  # insert a byte
        data.insert(rnd.randrange(len(data) + 1), rnd.choice((0, 1, 0x7F, 0x80, 0xFF, rnd.randrange(256))))
    elif op == 3 and data:  # delete a byte
        del data[rnd.randrange(len(data))]
    elif op == 4 and len(data) > 2:  # another type id
        data[1] = rnd.randrange(32)
    elif op == 5 and len(data) > 2:  # another version
        data[2] = rnd.randrange(8)
    elif op == 6:  # a 5-byte varint: a negative int, or wider than 32 bits
        at = rnd.randrange(len(data) + 1)
        data[at:at] = rnd.choice((b"\xff\xff\xff\xff\x0f", b"\x81\x80\x80\x80\x10",
                                  b"\x80\x80\x80\x80\x08", b"\x94\x80\x80\x80\x0f"))
    return bytes(data)


@metadata_only_ours
def test_metadata_record_mutants_agree(metadata_codec, capsys):
    """Mutated values of every (type, version): Kafka reads one exactly when ours does, as
    the same type and version, and then both write back the same bytes."""
    from wire.records import encode_metadata_record

    fresh = int(os.environ.get("METADATA_DIFF_SEED") or random.SystemRandom().randrange(1 << 32))
    with capsys.disabled():
        print(f"\nmetadata mutants: seeds {METADATA_FIXED_SEEDS} and fresh {fresh} "
              f"(replay with METADATA_DIFF_SEED={fresh})")
    bases = []
    known = _kafka_type_ids(metadata_codec)
    for (api_key, version), cls in _metadata_pairs():
        if api_key not in known:  # newer than the suite's Kafka release
            continue
        model = MODELS[cls.__name__]
        bases.append(encode_metadata_record(S.filled_message(model, cls, version), version))
        bases.append(encode_metadata_record(S.default_message(cls), version))
    for seed in (*METADATA_FIXED_SEEDS, fresh):
        rnd = random.Random(seed)
        values = []
        for _ in range(METADATA_MUTANTS_PER_SEED):
            value = rnd.choice(bases)
            for _ in range(rnd.randint(1, 3)):
                value = _mutate_value(rnd, value)
            values.append(value)
        replies = metadata_codec.metadata_values(values)
        STATS["metadata_values"] += len(values)
        wrong = []
        for value, reply in zip(values, replies):
            ok, ours = _ours(value)
            if ok != bool(reply.get("ok")):
                wrong.append(f"{value.hex()}: ours {ours if not ok else 'read it'}; "
                             f"Kafka {reply.get('error') if not reply.get('ok') else 'read it'}")
            elif ok and "write_error" in reply:
                # Kafka reads unknown tags in any order but will not write them back out of
                # order; ours sorts them. Only the reading is compared.
                if (ours.api_key, ours.version) != (reply["api_key"], reply["version"]):
                    wrong.append(f"{value.hex()}: both read it, ours as {ours}, Kafka as "
                                 f"{reply['class']} v{reply['version']}")
            elif ok:
                mine = _reencode(ours)
                if (ours.api_key, ours.version) != (reply["api_key"], reply["version"]) or \
                        base64.b64decode(reply["bytes"]) != mine:
                    wrong.append(f"{value.hex()}: both read it, ours as {ours} -> {mine.hex()}, "
                                 f"Kafka as {reply['class']} v{reply['version']} -> "
                                 f"{base64.b64decode(reply['bytes']).hex()}")
        assert not wrong, f"seed {seed}: {len(wrong)} disagreements, e.g.\n" + "\n".join(wrong[:5])


def test_zz_metadata_summary(metadata_codec, capsys):
    """Runs last (file order): makes the sweep's size visible in the test output."""
    with capsys.disabled():
        print(f"\njava differential: {STATS['metadata_values']} metadata record values read by "
              f"MetadataRecordSerde of Kafka {metadata_codec.kafka_version}")
