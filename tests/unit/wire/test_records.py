"""Record batch v2: round trips, the construct reference, CRC, partial batches, peers.

Every batch these tests produce goes through ``records_check.assert_matches_reference``
(fast decoder == construct reference decoder, and re-encoding is exact). The peer
tests decode our batches with kafka-python 3.0.12 and kio 0.6.5 and decode theirs
with ours; uncompressed batches built by both from the same inputs are byte-equal.
Codec details and decompression bombs: ``test_records_compression.py``; Kafka's own
classes: ``test_records_java.py``.
"""
from __future__ import annotations

import datetime
import io
import struct
import types
import warnings

import cramjam
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.records import readers as kio_readers
from kio.records.schema import NewRecordBatch as KioNewBatch
from kio.records.schema import Record as KioRecord
from kio.records.schema import RecordHeader as KioHeader
from kio.records.writers import write_new_batch
from kio.static.primitive import TZAwareMicros, i8, i16, i32, i64

from tests.support.records_check import assert_matches_reference
from wire.exceptions import DecodeError, EncodeError
from wire.records import (
    BatchHeader,
    CompressionType,
    ControlRecordType,
    Record,
    RecordBatch,
    TimestampType,
    control_batch,
    control_record_type,
    crc_matches,
    data_batch,
    decode_batch,
    decode_control_key,
    encode_control_key,
    frame_metadata_record,
    iter_batches,
    iter_headers,
    read_header,
    unframe_metadata_record,
)
from wire.records.header import CONTROL_MASK, TRANSACTIONAL_MASK

with warnings.catch_warnings():
    # kafka-python 3.0.12 loads its bundled schemas with deprecated importlib calls.
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatchBuilder
    from kafka.record.memory_records import MemoryRecords

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
CODECS = list(CompressionType)

# --- strategies -------------------------------------------------------------------

nullable_bytes = st.one_of(
    st.none(),
    st.just(b""),
    st.binary(max_size=40),
    st.binary(min_size=200, max_size=3000),  # two- and three-byte length varints
)
# Any Unicode but surrogates (which UTF-8 cannot carry): non-ASCII keys included.
header_keys = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
headers = st.lists(st.tuples(header_keys, nullable_bytes), max_size=4)


@st.composite
def records(draw, min_size=0, max_size=30, control=False):
    n = draw(st.integers(min_size, max_size))
    out = []
    for i in range(n):
        if control:
            key = encode_control_key(draw(st.sampled_from(list(ControlRecordType))))
        else:
            key = draw(nullable_bytes)
        out.append(Record(
            attributes=draw(st.sampled_from([0, 0, 0, 1, -1, 127, -128])),
            timestamp_delta=draw(st.one_of(st.just(0), st.integers(-(2**40), 2**40))),
            offset_delta=draw(st.one_of(st.just(i), st.integers(*INT32))),
            key=key,
            value=draw(nullable_bytes),
            headers=[] if control else draw(headers),
        ))
    return out


@st.composite
def batches(draw, codecs=CODECS):
    control = draw(st.booleans())
    recs = draw(records(control=control))
    attributes = draw(st.sampled_from(codecs))
    if control:
        attributes |= CONTROL_MASK
    if draw(st.booleans()):
        attributes |= TRANSACTIONAL_MASK
    if draw(st.booleans()):
        attributes |= 0x08  # LOG_APPEND_TIME
    return RecordBatch(
        base_offset=draw(st.integers(0, 2**62)),
        partition_leader_epoch=draw(st.integers(*INT32)),
        attributes=attributes,
        last_offset_delta=draw(st.one_of(st.none(), st.integers(*INT32))),
        base_timestamp=draw(st.one_of(st.just(-1), st.integers(0, 2**50))),
        max_timestamp=draw(st.one_of(st.none(), st.integers(-1, 2**50))),
        producer_id=draw(st.one_of(st.just(-1), st.integers(0, 2**62))),
        producer_epoch=draw(st.integers(-1, 2**15 - 1)),
        base_sequence=draw(st.integers(*INT32)),
        records=recs,
    )


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- round trips ------------------------------------------------------------------

@SETTINGS
@given(batches())
def test_round_trip_and_reference(batch):
    blob = batch.encode()
    decoded, end = decode_batch(blob)
    assert decoded == batch
    assert end == len(blob)
    assert decoded.crc == struct.unpack_from(">I", blob, 17)[0]
    [again] = assert_matches_reference(blob)
    assert again == batch


@SETTINGS
@given(st.lists(batches(), min_size=1, max_size=4), st.data())
def test_blob_of_batches_with_partial_tail(batch_list, data):
    blobs = [b.encode() for b in batch_list]
    whole = b"".join(blobs)
    assert list(iter_batches(whole)) == batch_list
    assert_matches_reference(whole)
    # Cut anywhere: exactly the batches that are complete come out.
    cut = data.draw(st.integers(0, len(whole)))
    ends = [sum(len(b) for b in blobs[:i + 1]) for i in range(len(blobs))]
    complete = sum(1 for e in ends if e <= cut)
    assert list(iter_batches(whole[:cut])) == batch_list[:complete]
    assert [pos for pos, _ in iter_headers(whole[:cut])] == ([0] + ends)[:complete]
    assert_matches_reference(whole[:cut])


@pytest.mark.parametrize("buf_type", [bytes, bytearray, memoryview])
def test_any_bytes_like_input_gives_bytes_fields(buf_type):
    batch = RecordBatch(base_timestamp=5, records=[Record(key=b"k", value=b"v", headers=[("h", b"x")])])
    decoded, _ = decode_batch(buf_type(batch.encode()))
    rec = decoded.records[0]
    assert type(rec.key) is bytes and type(rec.value) is bytes and type(rec.headers[0][1]) is bytes
    assert decoded == batch


def test_decode_at_offset_in_larger_buffer():
    a = RecordBatch(base_offset=0, records=[Record(value=b"a")]).encode()
    b = RecordBatch(base_offset=1, records=[Record(value=b"b")]).encode()
    batch, end = decode_batch(a + b, len(a))
    assert batch.base_offset == 1 and end == len(a) + len(b)


# --- the batch and record objects -------------------------------------------------------

def test_properties_and_derived_defaults():
    recs = [Record(offset_delta=0, timestamp_delta=5), Record(offset_delta=3, timestamp_delta=-2)]
    batch = RecordBatch(base_offset=10, base_timestamp=1000, records=recs,
                        attributes=CompressionType.LZ4 | 0x08 | TRANSACTIONAL_MASK | CONTROL_MASK)
    assert batch.last_offset_delta == 3 and batch.max_timestamp == 1005
    assert batch.last_offset == 13 and batch.next_offset == 14
    assert batch.compression is CompressionType.LZ4
    assert batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert batch.is_transactional and batch.is_control and not batch.has_delete_horizon
    assert batch.offset_of(recs[1]) == 13
    assert batch.timestamp_of(recs[1]) == 1005  # LOG_APPEND_TIME: the batch's max timestamp
    plain = RecordBatch(base_timestamp=1000, records=recs)
    assert plain.timestamp_of(recs[1]) == 998
    assert RecordBatch().last_offset_delta == 0 and RecordBatch().max_timestamp == -1
    assert "RecordBatch(base_offset=10" in repr(batch) and "Record(attributes=0" in repr(batch)


def test_equality_ignores_crc_but_nothing_else():
    a = RecordBatch(records=[Record(value=b"x")])
    decoded, _ = decode_batch(a.encode())
    assert decoded.crc is not None and a.crc is None and decoded == a
    assert RecordBatch(records=[Record(value=b"y")]) != a
    assert RecordBatch(records=[Record(value=b"x")], producer_epoch=3) != a
    assert a != "batch"


def test_record_is_immutable_keyword_built_and_only_equal_to_records():
    r = Record(key=b"k", headers=[("a", None)])
    assert r == Record(key=b"k", headers=(("a", None),))
    assert r != (0, 0, 0, b"k", None, (("a", None),))
    assert hash(r) == hash(Record(key=b"k", headers=[("a", None)]))
    with pytest.raises(AttributeError):
        r.key = b"z"
    with pytest.raises(TypeError):
        Record(0, 0)  # keywords only
    import pickle
    assert pickle.loads(pickle.dumps(r)) == r


@pytest.mark.parametrize("kwargs", [
    {"magic": 1},
    {"attributes": 5},
    {"base_offset": 2**63},
    {"producer_epoch": 2**15},
    {"records": [Record(offset_delta=2**31)]},
    {"records": [Record(timestamp_delta=2**63)]},
    {"records": [Record(attributes=128)]},
    {"records": [Record(key="text")]},
    {"records": [Record(headers=[(b"bytes-key", b"v")])]},
    {"records": [Record(headers=[("\ud800", b"v")])]},
])
def test_encode_refuses_what_cannot_be_written(kwargs):
    with pytest.raises(EncodeError):
        RecordBatch(**kwargs).encode()


def test_header_key_bytes_that_are_not_utf8_survive_a_round_trip():
    good = RecordBatch(records=[Record(headers=[("k\u00ff", b"v")])]).encode()
    bad = good.replace("k\u00ff".encode(), b"k\xff\xfe")  # same length, invalid UTF-8
    bad = _with_fresh_crc(bad)
    batch, _ = decode_batch(bad)
    assert batch.encode() == bad


# --- header-only access -------------------------------------------------------------------

def test_read_header_and_scan():
    blob = RecordBatch(base_offset=42, partition_leader_epoch=7, base_timestamp=9,
                       records=[Record(offset_delta=i, value=b"v") for i in range(3)]).encode()
    header = read_header(blob)
    assert isinstance(header, BatchHeader)
    assert (header.base_offset, header.partition_leader_epoch, header.records_count) == (42, 7, 3)
    assert header.size == len(blob) and header.last_offset == 44 and header.next_offset == 45
    assert header.compression is CompressionType.NONE and not header.is_control
    assert "BatchHeader(base_offset=42" in repr(header)
    assert crc_matches(blob, 0, header)
    assert not crc_matches(blob[:-1] + bytes([blob[-1] ^ 1]), 0, header)
    assert not crc_matches(blob[:-1], 0, header)
    assert list(iter_headers(blob + blob)) == [(0, header), (len(blob), header)]


@pytest.mark.parametrize("magic", [0, 1, 3, -1])
def test_other_magic_is_refused(magic):
    blob = bytearray(RecordBatch(records=[Record()]).encode())
    blob[16] = magic & 0xFF
    for call in (lambda: read_header(blob), lambda: decode_batch(blob), lambda: list(iter_batches(blob)),
                 lambda: list(iter_headers(blob))):
        with pytest.raises(DecodeError, match="magic"):
            call()


def test_bad_length_is_refused_as_soon_as_it_is_visible():
    blob = bytearray(RecordBatch(records=[Record()]).encode())
    struct.pack_into(">i", blob, 8, 48)  # shorter than the header
    with pytest.raises(DecodeError):
        list(iter_batches(blob[:12]))  # Kafka checks the length with only 12 bytes present
    with pytest.raises(DecodeError):
        read_header(blob)


# --- CRC ---------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(batches(), st.data())
def test_any_corruption_after_the_crc_field_is_detected(batch, data):
    blob = bytearray(batch.encode())
    pos = data.draw(st.integers(21, len(blob) - 1))
    blob[pos] ^= data.draw(st.integers(1, 255))
    with pytest.raises(DecodeError):
        decode_batch(blob)
    with pytest.raises(DecodeError):
        list(iter_batches(blob))
    assert not crc_matches(blob, 0, read_header(blob))


def test_crc_does_not_cover_base_offset_or_leader_epoch():
    """A leader restamps both without recomputing the CRC (DefaultRecordBatch javadoc)."""
    blob = bytearray(RecordBatch(base_offset=1, partition_leader_epoch=1, records=[Record(value=b"x")]).encode())
    struct.pack_into(">qii", blob, 0, 999, struct.unpack_from(">i", blob, 8)[0], 77)
    batch, _ = decode_batch(blob)
    assert (batch.base_offset, batch.partition_leader_epoch) == (999, 77)


def test_crc_check_can_be_skipped():
    blob = bytearray(RecordBatch(records=[Record(value=b"x")]).encode())
    blob[17] ^= 0xFF  # the stored CRC itself
    with pytest.raises(DecodeError, match="corrupt"):
        decode_batch(blob)
    batch, _ = decode_batch(blob, verify_crc=False)
    assert batch.records == [Record(value=b"x")]


# --- truncation, partial batches, malformed records ------------------------------------------------

def test_trailing_partial_batch_is_dropped_and_incomplete_first_batch_yields_nothing():
    one = RecordBatch(base_offset=0, records=[Record(value=b"a" * 100)]).encode()
    two = RecordBatch(base_offset=1, records=[Record(value=b"b" * 100)]).encode()
    blob = one + two
    for cut in range(len(blob) + 1):
        got = [b.base_offset for b in iter_batches(blob[:cut])]
        assert got == ([0, 1] if cut == len(blob) else [0] if cut >= len(one) else [])
        if cut < len(one):
            with pytest.raises(DecodeError):
                decode_batch(blob[:cut])


def _with_fresh_crc(blob) -> bytes:
    import crc32c
    blob = bytearray(blob)
    struct.pack_into(">I", blob, 17, crc32c.crc32c(bytes(blob[21:])))
    return bytes(blob)


def _one_record_batch(record_bytes: bytes, count: int = 1) -> bytes:
    head = RecordBatch(records=[]).encode()[:61]
    blob = bytearray(head + record_bytes)
    struct.pack_into(">i", blob, 8, len(blob) - 12)
    struct.pack_into(">i", blob, 57, count)
    return _with_fresh_crc(blob)


# A minimal record is 6 bytes after its length: attributes 0, timestamp delta 0,
# offset delta 0, key null (0x01), value null (0x01), no headers (0x00).
@pytest.mark.parametrize("body, why", [
    (b"\x0c\x00\x00\x00\x01\x01\x00\x00", "a byte left after the last record"),
    (b"\x0e\x00\x00\x00\x01\x01\x00\x00", "the fields take 6 of the 7 bytes the length says"),
    (b"\x0e\x00\x00\x00\x01\x01\x00", "the length runs past the section"),
    (b"\x0c\x00\x00\x00\x01\x0a\x00", "the value runs past the record"),
    (b"\x0e\x00\x00\x00\x01\x01\x01\x00", "negative header count"),
    (b"\x0e\x00\x00\x00\x01\x01\x08\x00", "header count larger than the bytes left"),
    (b"\x10\x00\x00\x00\x01\x01\x02\x01\x00", "negative header key length"),
    (b"\x12\x00\x00\x00\x01\x01\x02\x08a\x01", "header key runs past the record"),
    (b"\x01", "negative record length"),
    (b"\xff\xff\xff\xff\xff\x01", "varint too long"),
    (b"\x0c\x00\x00\x00\x01\x01\x00\x0c\x00\x00\x00\x01\x01\x00", "two records where one was announced"),
])
def test_malformed_records_are_refused(body, why):
    blob = _one_record_batch(body)
    with pytest.raises(DecodeError):
        decode_batch(blob)
    with pytest.raises(DecodeError):
        from wire.records.reference import parse_batches
        parse_batches(blob)


def test_well_formed_hand_written_record():
    # length 6: attributes 0, ts 0, offset 0, key null, value "" (length 0), headers 0
    body = b"\x0c\x00\x00\x00\x01\x00\x00"
    batch, _ = decode_batch(_one_record_batch(body))
    assert batch.records == [Record(value=b"")]
    assert_matches_reference(_one_record_batch(body))


def test_any_negative_key_length_is_null_as_in_kafka():
    body = b"\x0c\x00\x00\x00\x03\x03\x00"  # key length -2, value length -2
    batch, _ = decode_batch(_one_record_batch(body))
    assert batch.records == [Record()]


def test_record_count_rules():
    blob = bytearray(RecordBatch(records=[Record()]).encode())
    struct.pack_into(">i", blob, 57, -1)
    with pytest.raises(DecodeError, match="count"):
        decode_batch(_with_fresh_crc(blob))
    struct.pack_into(">i", blob, 57, 2)  # more records announced than present
    with pytest.raises(DecodeError):
        decode_batch(_with_fresh_crc(blob))
    # Count 0: Kafka returns no records without reading the section.
    struct.pack_into(">i", blob, 57, 0)
    batch, _ = decode_batch(_with_fresh_crc(blob))
    assert batch.records == []


def test_unknown_codec_is_refused_on_decode():
    blob = bytearray(RecordBatch(records=[Record()]).encode())
    struct.pack_into(">h", blob, 21, 6)
    with pytest.raises(DecodeError, match="compression"):
        decode_batch(_with_fresh_crc(blob))


# --- control records and batches ---------------------------------------------------------------------

def test_control_keys():
    assert [int(t) for t in ControlRecordType] == [0, 1, 2, 3, 4, 5, 6]
    assert encode_control_key(ControlRecordType.LEADER_CHANGE) == b"\x00\x00\x00\x02"
    assert encode_control_key(6) == b"\x00\x00\x00\x06"
    assert decode_control_key(b"\x00\x00\x00\x05") == (0, 5)
    assert decode_control_key(b"\x00\x01\x00\x05\xff") == (1, 5)  # newer version read as v0, extra bytes ignored
    assert decode_control_key(b"\x00\x00\x00\x63") == (0, 99)
    assert control_record_type(b"\x00\x00\x00\x04") is ControlRecordType.SNAPSHOT_FOOTER
    for bad in (None, b"", b"\x00\x00\x00", b"\xff\xff\x00\x02"):
        with pytest.raises(DecodeError):
            decode_control_key(bad)
    with pytest.raises(DecodeError, match="unknown"):
        control_record_type(b"\x00\x00\x00\x07")
    with pytest.raises(EncodeError):
        encode_control_key(-1)


def test_control_batch_is_what_kafkas_builder_writes():
    blob = control_batch(100, 5, 1_700_000_000_123, [
        (ControlRecordType.LEADER_CHANGE, b"\x00\x00\x00\x01\x00\x00\x00\x00"),
        (ControlRecordType.KRAFT_VERSION, b"\x00\x00\x00\x01"),
        (ControlRecordType.KRAFT_VOTERS, b"\x00\x00\x00\x00"),
    ])
    [batch] = assert_matches_reference(blob)
    assert batch.is_control and not batch.is_transactional
    assert batch.attributes == 0x20 and batch.timestamp_type is TimestampType.CREATE_TIME
    assert (batch.base_offset, batch.partition_leader_epoch, batch.last_offset_delta) == (100, 5, 2)
    assert batch.base_timestamp == batch.max_timestamp == 1_700_000_000_123
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
    assert [r.offset_delta for r in batch.records] == [0, 1, 2]
    assert {r.timestamp_delta for r in batch.records} == {0}
    assert [control_record_type(r.key) for r in batch.records] == [
        ControlRecordType.LEADER_CHANGE, ControlRecordType.KRAFT_VERSION, ControlRecordType.KRAFT_VOTERS]
    assert batch.records[1].value == b"\x00\x00\x00\x01" and batch.records[0].headers == ()
    # The exact bytes, field by field (DefaultRecordBatch.writeHeader + DefaultRecord.writeTo).
    assert blob[:21] == struct.pack(">qiib", 100, len(blob) - 12, 5, 2) + blob[17:21]
    assert blob[21:61] == struct.pack(">hiqqqhii", 0x20, 2, 1_700_000_000_123, 1_700_000_000_123, -1, -1, -1, 3)
    assert blob[61:61 + 19] == bytes([36, 0, 0, 0, 8, 0, 0, 0, 2, 16]) + b"\x00\x00\x00\x01\x00\x00\x00\x00" + b"\x00"


def test_control_batch_needs_records_and_a_leader_epoch_for_leader_change():
    with pytest.raises(EncodeError):
        control_batch(0, 1, 0, [])
    with pytest.raises(EncodeError, match="epoch"):
        control_batch(0, -1, 0, [(ControlRecordType.LEADER_CHANGE, b"")])
    assert control_batch(0, -1, 0, [(ControlRecordType.SNAPSHOT_FOOTER, b"\x00\x00")])


# --- metadata records -----------------------------------------------------------------------------

def test_metadata_framing():
    framed = frame_metadata_record(2, 1, b"payload")
    assert framed == b"\x01\x02\x01payload"
    api_key, version, payload = unframe_metadata_record(framed)
    assert (api_key, version, bytes(payload)) == (2, 1, b"payload")
    assert isinstance(payload, memoryview)
    big = frame_metadata_record(300, 200, b"")
    assert big[:5] == b"\x01\xac\x02\xc8\x01" and unframe_metadata_record(big)[:2] == (300, 200)
    for bad in (b"", b"\x00\x02\x00", b"\x02\x02\x00", b"\x01", b"\x01\x02", b"\x01\x80\x80\x02\x00", b"\x01\x02\x80"):
        with pytest.raises(DecodeError):
            unframe_metadata_record(bad)
    with pytest.raises(DecodeError, match="frame version 0"):
        unframe_metadata_record(b"\x00\x02\x00")
    with pytest.raises(EncodeError):
        frame_metadata_record(-1, 0, b"")


def test_data_batch_is_what_batchbuilder_writes():
    values = [frame_metadata_record(2, 0, b"x" * n) for n in (0, 10, 300)]
    blob = data_batch(7, 3, 1234, values)
    [batch] = assert_matches_reference(blob)
    assert batch.attributes == 0 and (batch.base_offset, batch.partition_leader_epoch) == (7, 3)
    assert batch.base_timestamp == batch.max_timestamp == 1234 and batch.last_offset_delta == 2
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
    assert batch.records == [Record(offset_delta=i, value=v) for i, v in enumerate(values)]
    with pytest.raises(EncodeError):
        data_batch(0, 0, 0, [])


# --- kafka-python 3.0.12 -------------------------------------------------------------------------------



@pytest.fixture
def kafka_python_snappy(monkeypatch):
    """kafka-python needs python-snappy for raw blocks; lend it cramjam's (its xerial framing is its own)."""
    import kafka.codec
    if kafka.codec.snappy is None:
        shim = types.SimpleNamespace(
            compress=lambda data: bytes(cramjam.snappy.compress_raw(bytes(data))),
            decompress=lambda data: bytes(cramjam.snappy.decompress_raw(bytes(data))),
        )
        monkeypatch.setattr(kafka.codec, "snappy", shim)


def _kafka_python_view(blob):
    out = []
    for batch in MemoryRecords(bytes(blob)):
        assert batch.validate_crc()
        out.append((
            batch.base_offset, batch.leader_epoch, batch.attributes, batch.last_offset_delta,
            batch.first_timestamp, batch.max_timestamp, batch.producer_id, batch.producer_epoch,
            batch.base_sequence,
            [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in batch],
        ))
    return out


def _our_view(blob):
    out = []
    for b in iter_batches(blob):
        out.append((
            b.base_offset, b.partition_leader_epoch, b.attributes, b.last_offset_delta,
            b.base_timestamp, b.max_timestamp, b.producer_id, b.producer_epoch, b.base_sequence,
            [(b.offset_of(r), b.timestamp_of(r), r.key, r.value, list(r.headers)) for r in b.records],
        ))
    return out


def _zero_attributes(rs):
    # kafka-python skips a record's attributes as if they were a varint, so it
    # misreads any byte >= 0x80 there. Kafka always writes 0.
    return [Record(timestamp_delta=r.timestamp_delta, offset_delta=r.offset_delta, key=r.key, value=r.value,
                   headers=r.headers) for r in rs]




@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(batch=batches(), data=st.data())
def test_kafka_python_reads_our_batches(kafka_python_snappy, batch, data):
    batch.records = _zero_attributes(batch.records) or data.draw(
        records(min_size=1, max_size=5, control=batch.is_control).map(_zero_attributes))
    blob = batch.encode()
    assert _kafka_python_view(blob) == _our_view(blob)
    assert_matches_reference(blob)


def _build_with_kafka_python(codec, base_ts, rows, transactional=False, producer=(-1, -1, -1)):
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=transactional,
                                        producer_id=producer[0], producer_epoch=producer[1],
                                        base_sequence=producer[2], batch_size=1 << 30)
    for offset, ts, key, value, hdrs in rows:
        assert builder.append(offset, ts, key, value, hdrs) is not None
    return bytes(builder.build())


rows_strategy = st.lists(
    st.tuples(st.integers(0, 2**31 - 1), st.integers(0, 2**45), nullable_bytes, nullable_bytes,
              headers.map(lambda hs: [(k, v) for k, v in hs])),
    min_size=1, max_size=20,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(codec=st.sampled_from(CODECS), rows=rows_strategy, transactional=st.booleans())
def test_we_read_kafka_python_batches(kafka_python_snappy, codec, rows, transactional):
    producer = (1234, 5, 17) if transactional else (-1, -1, -1)
    blob = _build_with_kafka_python(codec, rows[0][1], rows, transactional, producer)
    assert _our_view(blob) == _kafka_python_view(blob)
    [batch] = assert_matches_reference(blob)
    assert batch.is_transactional == transactional
    assert batch.compression in (codec, CompressionType.NONE)  # kafka-python drops a codec that does not help


def test_kafka_python_keeps_the_codec_when_it_helps(kafka_python_snappy):
    rows = [(i, 1000 + i, b"key", b"v" * 500, [("h", b"x")]) for i in range(20)]
    for codec in CODECS:
        [batch] = assert_matches_reference(_build_with_kafka_python(codec, 1000, rows))
        assert batch.compression is codec
        assert len(batch.records) == 20


@settings(max_examples=100, deadline=None)
@given(rows=rows_strategy, transactional=st.booleans())
def test_uncompressed_batches_are_byte_equal_to_kafka_pythons(rows, transactional):
    producer = (99, 1, 0) if transactional else (-1, -1, -1)
    theirs = _build_with_kafka_python(0, rows[0][1], rows, transactional, producer)
    first_ts = rows[0][1]
    ours = RecordBatch(
        base_offset=0, partition_leader_epoch=0,
        attributes=TRANSACTIONAL_MASK if transactional else 0,
        last_offset_delta=rows[-1][0],
        base_timestamp=first_ts, max_timestamp=max(r[1] for r in rows),
        producer_id=producer[0], producer_epoch=producer[1], base_sequence=producer[2],
        records=[Record(timestamp_delta=ts - first_ts, offset_delta=off, key=k, value=v, headers=h)
                 for off, ts, k, v, h in rows],
    ).encode()
    assert ours == theirs


def test_kafka_python_sees_control_batches_as_control(kafka_python_snappy):
    blob = control_batch(3, 2, 10, [(ControlRecordType.LEADER_CHANGE, b"\x00\x00\x00\x01")])
    [batch] = list(MemoryRecords(blob))
    assert batch.is_control_batch and batch.next_offset == 4
    [rec] = list(batch)
    assert rec.type == ControlRecordType.LEADER_CHANGE and rec.version == 0


# --- kio 0.6.5 ---------------------------------------------------------------------------------------------
# kio.records handles uncompressed batches only (no codecs at all) and reads
# timestamps into datetimes truncated to whole seconds; header keys are bytes.



def _kio_view(blob):
    batch, size = kio_readers.read_batch(blob, 0)
    assert size == len(blob)
    return (batch.base_offset, batch.partition_leader_epoch, batch.crc, batch.attributes, batch.last_offset_delta,
            batch.base_timestamp, batch.max_timestamp, batch.producer_id, batch.producer_epoch,
            batch.base_sequence,
            [(r.attributes, int(r.timestamp.timestamp()), r.offset, r.key, r.value,
              [(h.key, h.value) for h in r.headers]) for r in batch.records])


def _ours_as_kio(batch):
    return (batch.base_offset, batch.partition_leader_epoch, batch.crc, batch.attributes, batch.last_offset_delta,
            batch.base_timestamp, batch.max_timestamp, batch.producer_id, batch.producer_epoch,
            batch.base_sequence,
            [(r.attributes, batch.timestamp_of(r) // 1000, batch.offset_of(r), r.key, r.value,
              [(k.encode("utf-8", "surrogateescape"), v) for k, v in r.headers]) for r in batch.records])


second_records = st.lists(
    st.tuples(st.integers(1_000_000_000, 2_000_000_000), nullable_bytes, nullable_bytes,
              headers, st.sampled_from([0, 1, -1])),
    min_size=1, max_size=15,
)


@settings(max_examples=60, deadline=None)
@given(rows=second_records, base_offset=st.integers(0, 2**40), epoch=st.integers(*INT32))
def test_kio_reads_ours_and_we_read_kios_byte_for_byte(rows, base_offset, epoch):
    kio_records = tuple(
        KioRecord(attributes=i8(attrs),
                  timestamp=TZAwareMicros.parse(datetime.datetime.fromtimestamp(secs, datetime.UTC)),
                  offset=i64(base_offset + i), key=key, value=value,
                  headers=tuple(KioHeader(key=k.encode(), value=v) for k, v in hdrs))
        for i, (secs, key, value, hdrs, attrs) in enumerate(rows)
    )
    buf = io.BytesIO()
    write_new_batch(buf, KioNewBatch(producer_id=i64(-1), producer_epoch=i16(-1), base_sequence=i32(-1),
                                     partition_leader_epoch=i32(epoch), attributes=i16(0), records=kio_records))
    theirs = buf.getvalue()
    first_ms = rows[0][0] * 1000
    ours_batch = RecordBatch(
        base_offset=base_offset, partition_leader_epoch=epoch, last_offset_delta=len(rows) - 1,
        base_timestamp=first_ms, max_timestamp=max(r[0] for r in rows) * 1000,
        records=[Record(attributes=attrs, timestamp_delta=secs * 1000 - first_ms, offset_delta=i, key=key,
                        value=value, headers=hdrs)
                 for i, (secs, key, value, hdrs, attrs) in enumerate(rows)],
    )
    ours = ours_batch.encode()
    assert ours == theirs
    [decoded] = assert_matches_reference(theirs)
    assert _kio_view(ours) == _ours_as_kio(decoded)
