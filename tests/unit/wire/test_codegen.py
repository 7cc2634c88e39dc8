"""The code generator on a spec that uses every dialect feature (tests/data/codegen)."""
import importlib
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from codegen.emit import emit_module
from codegen.generate import generate_all, load_models
from codegen.spec import Versions, strip_comments
from wire.exceptions import DecodeError, EncodeError, UnsupportedVersionError

ROOT = Path(__file__).resolve().parents[3]
DATA = Path(__file__).parents[2] / "data" / "codegen"


@pytest.fixture(scope="module")
def ev(tmp_path_factory):
    """The generated module for EverythingRequest, imported from a temp package."""
    out = tmp_path_factory.mktemp("gen") / "gen_everything"
    out.mkdir()
    for name, text in generate_all(DATA, ROOT).items():
        (out / name).write_text(text)
    sys.path.insert(0, str(out.parent))
    try:
        yield importlib.import_module("gen_everything.everything_request")
    finally:
        sys.path.remove(str(out.parent))
        for mod in [m for m in sys.modules if m.startswith("gen_everything")]:
            del sys.modules[mod]


def full(ev, v):
    """Every field non-default, valid at version v."""
    E = ev.EverythingRequest
    o = E(
        legacy_id="client-é", flag=False, i8=-128, i16=-2, u16=65534, i32=-5, i64=2**63 - 1,
        f64=-0.25, text="x" * 200, blob=b"\x00\x01", maybe_blob=b"", batches=b"\xff" * 3,
        ints=[1, -1, 2**31 - 1], longs=[2**40], names=["a", "", "ü"],
        listeners=[ev.Listener(name="CONTROLLER", endpoint=ev.Endpoint(host="h", port=9093)),
                   ev.Listener(name="CONTROLLER", endpoint=ev.Endpoint(host="h2", port=1))],
        owner=ev.Endpoint(host="owner", port=65535),
        items=[ev.Item(key="k", value=3 if v >= 1 else -1, note="n" if v >= 2 else None)],
    )
    if v >= 1:
        o.u32, o.id, o.ids, o.maybe_text = 2**32 - 1, uuid.uuid4(), [uuid.uuid4()], None
    if v <= 1:
        o.only_old = 8
    if v >= 2:
        o.tag_int, o.tag_text, o.tag_ints = 5, None, [9, 8]
        o.tag_leader = ev.Leader(leader_id=1, leader_epoch=2)
        o.tag_maybe = ev.Endpoint(host="t", port=2)
    if v >= 3:
        o.spare = ev.Endpoint(host="spare", port=3)
    if v >= 4:
        o.tag_id = uuid.uuid4()
    return o


@pytest.mark.parametrize("v", range(5))
def test_defaults_and_full_objects_round_trip(ev, v):
    E = ev.EverythingRequest
    for obj in (E(), full(ev, v)):
        data = obj.encode(v)
        back, end = E.read(data, 0, v)
        assert end == len(data)
        assert back == obj, (back, obj)
        assert back.encode(v) == data


def test_defaults_of_every_form(ev):
    o = ev.EverythingRequest()
    assert (o.flag, o.i8, o.u16, o.i32, o.i64, o.f64) == (True, -1, 65535, 2**31 - 1, -2**63, 1.5)
    assert (o.text, o.maybe_text, o.maybe_blob, o.blob, o.ints) == ("hello", None, None, b"", [])
    assert o.id == uuid.UUID(int=0) and o.spare is None and o.owner == ev.Endpoint()
    assert o.tag_leader == ev.Leader(leader_id=-1, leader_epoch=-1)
    assert o.ints is not ev.EverythingRequest().ints  # fresh lists per object


@pytest.mark.parametrize("typed", [False, True])
def test_arrays_of_primitives_decode_to_tuples_equal_to_lists(ev, ev_typed, typed):
    """Decoded arrays of primitives are tuples (the shared () when empty, also for a field
    the version lacks); struct arrays stay lists; a list of the same items is equal."""
    E = (ev_typed if typed else ev).EverythingRequest
    built = full(ev_typed if typed else ev, 2)
    back = E.decode(built.encode(2), 2)
    assert (back.ints, back.longs, back.names, back.tag_ints) == ((1, -1, 2**31 - 1), (2**40,), ("a", "", "ü"), (9, 8))
    assert type(back.ids) is tuple and type(back.listeners) is list and type(back.items) is list
    assert back == built and built == back and not (back != built)
    assert "ints=(1, -1, 2147483647)" in repr(back) and "ints=[1, -1, 2147483647]" in repr(built)
    empty = E.decode(E().encode(0), 0)
    shared = ()
    assert empty.ints is shared and empty.ids is shared and empty.tag_ints is shared and empty.listeners == []
    assert empty == E() and E() == empty
    built.ints = [1, 2]
    assert back != built and built != back  # equal types or not, other items differ
    again = E.decode(back.encode(2), 2)  # tuples encode as lists do
    assert again == back


def test_legacy_string_in_flexible_version(ev):
    # LegacyId has flexibleVersions "none": int16 length even in v2 (like RequestHeader ClientId)
    data = ev.EverythingRequest(legacy_id="ab").encode(2)
    assert data[:4] == b"\x00\x02ab"
    assert ev.EverythingRequest(legacy_id=None).encode(2)[:2] == b"\xff\xff"


def test_compact_and_legacy_lengths(ev):
    E = ev.EverythingRequest
    v1 = E(text="abc").encode(1)
    v2 = E(text="abc").encode(2)
    assert b"\x00\x03abc" in v1 and b"\x04abc" in v2


def test_nullable_struct_marker(ev):
    E = ev.EverythingRequest
    with_spare = E(spare=ev.Endpoint(host="s", port=1)).encode(3)
    without = E().encode(3)
    # -1 marks null, 1 marks present, followed by the struct (compact string, uint16, tags)
    assert len(with_spare) - len(without) == len(b"\x02s\x00\x01\x00")
    assert E.decode(without, 3).spare is None
    assert E.decode(with_spare, 3).spare == ev.Endpoint(host="s", port=1)


def test_tagged_fields_written_only_when_non_default_and_in_tag_order(ev):
    E = ev.EverythingRequest
    assert E().encode(2)[-1] == 0  # empty tagged section
    data = E(tag_int=5, tag_text=None).encode(2)
    # two tagged fields: tag 0 (int32 5), tag 1 (null string with non-null default: one 0 byte)
    assert data.endswith(b"\x02" + b"\x00\x04\x00\x00\x00\x05" + b"\x01\x01\x00")
    assert E.decode(data, 2).tag_text is None


def test_unknown_tagged_fields_are_kept_and_written_back_in_order(ev):
    E = ev.EverythingRequest
    obj = E(tag_int=1, unknown_tagged_fields=[(4, b"four"), (9, b"")])
    data = obj.encode(4)
    back = E.decode(data, 4)
    assert list(back.unknown_tagged_fields) == [(4, b"four"), (9, b"")]
    assert back == obj and back.encode(4) == data
    # tags 0 (known), 4 (unknown) and 9 (unknown), ascending
    assert data.endswith(b"\x03\x00\x04\x00\x00\x00\x01\x04\x04four\x09\x00")


def test_unknown_tags_in_nested_structs(ev):
    E = ev.EverythingRequest
    obj = E(owner=ev.Endpoint(host="h", port=1, unknown_tagged_fields=[(30, b"\x01")]))
    assert E.decode(obj.encode(2), 2).owner.unknown_tagged_fields == [(30, b"\x01")]
    with pytest.raises(UnsupportedVersionError, match="Tagged fields were set"):
        obj.encode(1)


def test_non_ignorable_field_the_version_cannot_carry(ev):
    E = ev.EverythingRequest
    with pytest.raises(UnsupportedVersionError, match="non-default OnlyOld at version 2"):
        E(only_old=8).encode(2)
    E(only_old=7).encode(2)  # the default is fine
    with pytest.raises(UnsupportedVersionError, match="U32"):
        E(u32=1).encode(0)


def test_ignorable_field_is_dropped(ev):
    E = ev.EverythingRequest
    assert E(ids=[uuid.uuid4()]).encode(0) == E().encode(0)


def test_null_where_the_version_is_not_nullable(ev):
    E = ev.EverythingRequest
    with pytest.raises(EncodeError):
        E(longs=None).encode(0)
    assert E.decode(E(longs=None).encode(1), 1).longs is None
    with pytest.raises(EncodeError):
        E(text=None).encode(3)


def test_values_out_of_range_are_encode_errors(ev):
    E = ev.EverythingRequest
    for bad in (dict(u16=-1), dict(i16=40000), dict(u32=2**32), dict(ints=[2**31])):
        with pytest.raises(EncodeError):
            E(**bad).encode(2)


def test_version_out_of_range(ev):
    with pytest.raises(UnsupportedVersionError):
        ev.EverythingRequest().encode(5)
    with pytest.raises(DecodeError):
        ev.EverythingRequest.decode(b"", 9)


def test_every_truncation_is_a_decode_error(ev):
    E = ev.EverythingRequest
    for v in range(5):
        data = full(ev, v).encode(v)
        for cut in range(len(data)):
            with pytest.raises(DecodeError):
                E.decode(data[:cut], v)


@pytest.fixture(scope="module")
def ev_typed(tmp_path_factory):
    """EverythingRequest emitted as a typed module (as for the compiled ones: fields read one
    by one through wire.readers from bytes, typed decoders), imported as pure Python."""
    (model, rel), = [(m, r) for m, r in load_models(DATA, ROOT) if m.name == "EverythingRequest"]
    out = tmp_path_factory.mktemp("gen") / "gen_typed"
    out.mkdir()
    (out / "__init__.py").write_text("")
    (out / "everything_request.py").write_text(emit_module(model, rel, typed=True))
    sys.path.insert(0, str(out.parent))
    try:
        yield importlib.import_module("gen_typed.everything_request")
    finally:
        sys.path.remove(str(out.parent))
        for mod in [m for m in sys.modules if m.startswith("gen_typed")]:
            del sys.modules[mod]


def test_typed_decoders_read_what_the_struct_decoders_read(ev, ev_typed):
    assert "_ri32(b, p" in Path(ev_typed.__file__).read_text() and ev_typed.EverythingRequest._DEC_BYTES
    E, T = ev.EverythingRequest, ev_typed.EverythingRequest
    for v in range(5):
        for obj in (E(), full(ev, v)):
            data = obj.encode(v)
            for buf in (data, bytearray(data), memoryview(data)):
                back, end = T.read(buf, 0, v)
                assert end == len(data) and repr(back) == repr(E.decode(data, v))
                assert back.encode(v) == data
        data = full(ev, v).encode(v)
        for cut in range(len(data)):
            with pytest.raises(DecodeError):
                T.decode(data[:cut], v)


def test_huge_counts_are_refused_before_allocating(ev):
    E = ev.EverythingRequest
    data = bytearray(E().encode(0))
    # Blob's length (int32) claims 2 GB: refused without allocating
    prefix = len(E().encode(0)) - len(E().encode(0).split(b"hello", 1)[1])
    data[prefix:prefix + 4] = b"\x7f\xff\xff\xff"
    with pytest.raises(DecodeError):
        E.decode(bytes(data), 0)


def test_strings_longer_than_kafka_allows_are_refused(ev):
    # a compact length of 40,000: Kafka's reader throws "had invalid length"
    from wire.varint import write_uvarint
    data = ev.EverythingRequest().encode(2)
    start = data.index(b"\x06hello")  # Text, the first compact string after LegacyId's int16
    bad = data[:start] + write_uvarint(40001) + b"x" * 40000 + data[start + 6:]
    with pytest.raises(DecodeError, match="invalid length"):
        ev.EverythingRequest.decode(bad, 2)


def test_generation_is_deterministic():
    first = generate_all(DATA, ROOT)
    assert first == generate_all(DATA, ROOT)
    (model, rel), = load_models(DATA, ROOT)
    assert emit_module(model, rel) == first["everything_request.py"]


def test_identical_versions_share_code(ev):
    src = Path(ev.__file__).read_text()
    # Endpoint is identical in v2, v3 and v4: one function serves them all
    assert "def _e_Endpoint_v2(" in src and "def _e_Endpoint_v3(" not in src


def test_versions_and_comments():
    assert str(Versions.parse("1+")) == "1+" and 7 in Versions.parse("3-7")
    assert Versions.parse("none").empty and 3 not in Versions.parse("none")
    assert strip_comments('{"a": "//x" // c\n}') == '{"a": "//x" \n}'


def test_check_passes_on_the_committed_modules():
    r = subprocess.run([sys.executable, "-m", "codegen", "--check"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_check_fails_on_drift(tmp_path):
    out = tmp_path / "messages"
    run = [sys.executable, "-m", "codegen", "--schemas", str(DATA), "--out", str(out)]
    assert subprocess.run(run, cwd=ROOT, capture_output=True).returncode == 0
    assert subprocess.run(run + ["--check"], cwd=ROOT, capture_output=True).returncode == 0
    target = out / "everything_request.py"
    target.write_text(target.read_text() + "\n# edited by hand\n")
    r = subprocess.run(run + ["--check"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 1 and "everything_request.py differs" in r.stderr
    (out / "orphan.py").write_text("")
    target.unlink()
    r = subprocess.run(run + ["--check"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 1 and "orphan.py has no schema" in r.stderr


def test_large_records_fields_are_joined_once_and_decoded_as_views():
    """Records fields of 64 KiB+ bypass encode()'s buffer; inputs of 1 MiB+ decode to views."""
    from wire.codec_support import SPILL_BYTES, ZERO_COPY_BYTES
    from wire.messages import FetchResponse
    from wire.messages.fetch_response import FetchableTopicResponse, PartitionData

    big = bytes(range(256)) * (ZERO_COPY_BYTES // 256)
    parts = [PartitionData(partition_index=i, records=r)
             for i, r in enumerate([b"small", big, None, b"x" * SPILL_BYTES, b""])]
    msg = FetchResponse(responses=[FetchableTopicResponse(topic="t", partitions=parts)])
    for version in (4, 12, 16):
        plain = bytearray()
        msg.write(plain, version)  # a plain buffer: everything copied in place
        data = msg.encode(version)
        assert type(data) is bytes and data == bytes(plain)
        back = FetchResponse.decode(data, version)
        got = back.responses[0].partitions
        assert [p.records for p in got] == [p.records for p in parts]
        assert isinstance(got[1].records, memoryview) and got[1].records.obj is data
        small = FetchResponse(responses=[FetchableTopicResponse(topic="t", partitions=parts[:1])])
        assert type(FetchResponse.decode(small.encode(version), version).responses[0]
                    .partitions[0].records) is bytes
