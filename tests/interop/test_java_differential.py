"""Differential test of the generated codecs against the Java classes of the Apache Kafka
release our schemas follow (4.4.0, ``tests/support/schemas_release.py``).

For every message class of the target package (``wire.messages``) and every version it
supports, except our documented extension DescribeQuorum v3, three kinds of objects:
the all-defaults object, the every-field-non-default object (``strategies.filled_message``)
and hypothesis examples (``strategies.messages``): ``QUICK_EXAMPLES`` (10, or
``JAVA_DIFF_EXAMPLES``) per (message, version) in ``make test``, ``DEEP_EXAMPLES`` (40) in
``make test-slow``.
Each goes to one long-lived JVM (``tests/java/CodecTester.java``), which builds Kafka's
object from the JSON form (``tests/support/kafka_json.py``) and checks both directions: Kafka's
bytes equal ours, and Kafka parses ours (consuming all of them) into an equal object.
Our own decoder must also give the object back from those bytes.

At flexible versions, objects that also carry unknown tagged fields (which the JSON
form cannot express) are checked by round trip: ours decode(encode(x)) == x, and Kafka
parses our bytes and re-serialises them to the same bytes.

Kafka's shipped specs leave parts of the dialect unused (uint32 and float64 arrays,
tagged float64/bytes/uint32, tagged nullable structs, more than 127 tags, uuid and
string defaults, field-level flexibleVersions inside structs...). ``tests/data/synth``
holds specs of ours that use them; Kafka's own generator (``org.apache.kafka:generator``
4.3.1 from Maven Central) turns them into Java classes and the same sweep runs against
those (``test_synthetic_against_kafka_generator``). Specs naming a known codegen bug are
strict xfails: they start failing (XPASS) once the bug is fixed.

Metadata record values are swept in ``test_java_differential_metadata.py`` (its own file,
so the two halves run on two pytest-xdist workers).

``KRAFT_TEST_MESSAGES=dir:package:schema_root`` (as in ``tests/support/_targets.py``) points the
main sweep at another package made by the same codegen, e.g. one generated from all of
Kafka's specs: ``KRAFT_TEST_MESSAGES=/tmp/uppkg:upmsgs:/tmp/up pytest tests/interop/test_java_differential.py``.

The last test prints how many (message, version) pairs and objects were swept.
"""
from __future__ import annotations

import base64
import importlib
import os
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given

from tests.support import strategies as S
from tests.support.java_tester import (GENERATOR_VERSION, QUICK_EXAMPLES, JavaCodecTester, build_synthetic_classes,
                                       sweep_depths, sweep_settings)
from tests.support.schemas_release import SCHEMAS_RELEASE
from tests.support.jdk import need_jdk

pytestmark = pytest.mark.java

REPO = Path(__file__).resolve().parents[2]
# Ours only: DescribeQuorum v3 (KIP-1204 draft, CommittedVoters); released Kafka stops at v2.
EXTENSIONS = {("DescribeQuorumRequest", 3), ("DescribeQuorumResponse", 3)}

SYNTH_DIR = REPO / "tests" / "data" / "synth"
SYNTH_PACKAGE = "org.kraftserver.synth"
# spec name -> (the codegen bug it shows, the exception it raises today); see each spec's comment
KNOWN_CODEGEN_BUGS: dict = {}  # stem -> (reason, exception types): strict xfails

SETTINGS = sweep_settings(QUICK_EXAMPLES)

STATS = {"pairs": set(), "objects": 0, "reparsed": 0, "synth_pairs": set(), "batches": 0}


def _load_target():
    """(package, {name: model}) of the package under test, or (None, {}) before codegen ran."""
    from codegen.generate import load_models

    spec = os.environ.get("KRAFT_TEST_MESSAGES")
    if spec:
        where, package, schema_root = spec.split(":")
        if where not in sys.path:
            sys.path.insert(0, where)
        pkg = importlib.import_module(package)
        pairs = load_models(Path(schema_root).resolve(), Path("/"))
    else:
        if not (REPO / "wire" / "messages" / "__init__.py").exists():
            return None, {}
        pkg = importlib.import_module("wire.messages")
        pairs = load_models(REPO / "schemas", REPO)
    return pkg, {m.name: m for m, _ in pairs}


PKG, MODELS = _load_target()
NAMES = sorted(PKG.BY_NAME) if PKG is not None else []


def _versions(name: str) -> list[int]:
    cls = PKG.BY_NAME[name]
    return [v for v in S.versions_of(cls) if (name, v) not in EXTENSIONS]


@pytest.fixture(scope="session")
def java_codec(tmp_path_factory):
    """One CodecTester JVM over Kafka's own classes; always terminated at the end."""
    with JavaCodecTester.running(tmp_path_factory.mktemp("codec-tester"), version=SCHEMAS_RELEASE) as tester:
        yield tester


@pytest.fixture(scope="session")
def synth_java(tmp_path_factory):
    """A CodecTester JVM that also sees Kafka's generator's classes for tests/data/synth."""
    need_jdk()
    classes = build_synthetic_classes(SYNTH_DIR, SYNTH_PACKAGE)
    tester = JavaCodecTester.start(tmp_path_factory.mktemp("codec-tester-synth"), [classes],
                                   java_package=SYNTH_PACKAGE, version=GENERATOR_VERSION)
    try:
        yield tester
    finally:
        tester.close()


# -- the sweep -----------------------------------------------------------------------------

def _short(x, n=1500) -> str:
    s = repr(x)
    return s if len(s) <= n else s[:n] + f"... ({len(s)} chars)"


def _explain(name, version, what, obj, data, reply) -> str:
    lines = [f"{name} v{version} ({what}): {reply.get('error')}",
             f"  object: {_short(obj)}",
             f"  ours:   {bytes(data).hex()[:600]}"]
    if "java_bytes" in reply:
        lines.append(f"  kafka:  {base64.b64decode(reply['java_bytes']).hex()[:600]}")
    for key in ("java_json", "parsed_json"):
        if key in reply:
            lines.append(f"  {key}: {_short(reply[key], 800)}")
    return "\n".join(lines)


def _roundtrip(cls, name, version, obj, data):
    back, end = cls.read(data, 0, version)
    assert end == len(data), f"{name} v{version}: decode stopped at {end} of {len(data)} bytes"
    assert back == obj, f"{name} v{version}: decode(encode(x)) != x\n  x:    {_short(obj)}\n  back: {_short(back)}"


def _check(tester, model, cls, version, what, obj):
    data = obj.encode(version)
    reply = tester.check(model, obj, version, data)
    STATS["objects"] += 1
    assert reply is None, _explain(model.name, version, what, obj, data, reply)
    _roundtrip(cls, model.name, version, obj, data)


def _sweep(tester, model, cls, version, examples=QUICK_EXAMPLES):
    """Defaults, every field set, hypothesis examples; unknown tagged fields when flexible."""
    settings = sweep_settings(examples)
    name = model.name
    _check(tester, model, cls, version, "all defaults", S.default_message(cls))
    _check(tester, model, cls, version, "every field non-default",
           S.filled_message(model, cls, version))

    @settings
    @given(S.messages(model, cls, version))
    def examples(obj):
        _check(tester, model, cls, version, "hypothesis example", obj)

    examples()

    if model.flexible(version):
        @settings
        @given(S.messages(model, cls, version, unknown_tags=True))
        def unknown_tags(obj):
            data = obj.encode(version)
            _roundtrip(cls, name, version, obj, data)
            reply = tester.reparse(model, data, version)
            STATS["reparsed"] += 1
            assert reply is None, _explain(name, version, "Kafka parse + re-serialise", obj, data, reply)

        unknown_tags()


@pytest.mark.skipif(not NAMES, reason="wire/messages is not generated yet")
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("examples", sweep_depths())
def test_against_kafka(java_codec, examples, name):
    cls = PKG.BY_NAME[name]
    model = MODELS[name]
    for version in _versions(name):
        _sweep(java_codec, model, cls, version, examples)
        STATS["pairs"].add((name, version))


# -- our test specs through Kafka's generator ---------------------------------------------

def _synth_params():
    out = []
    for path in sorted(SYNTH_DIR.glob("*.json")):
        marks = ()
        if path.stem in KNOWN_CODEGEN_BUGS:
            reason, raises = KNOWN_CODEGEN_BUGS[path.stem]
            marks = pytest.mark.xfail(strict=True, reason=reason, raises=raises)
        out.append(pytest.param(path, id=path.stem, marks=marks))
    return out


def _our_codegen(spec: Path, where: Path):
    """Our codegen on one spec: (generated class, model), imported from a scratch package."""
    from codegen.emit import emit_module
    from codegen.generate import load_models, package_init

    alone = where / "spec"
    alone.mkdir(parents=True)
    (alone / spec.name).write_bytes(spec.read_bytes())
    [(model, rel)] = load_models(alone, alone)
    package = f"kraft_synth_{model.module}"
    pkg_dir = where / "pkg" / package
    pkg_dir.mkdir(parents=True)
    (pkg_dir / f"{model.module}.py").write_text(emit_module(model, rel), encoding="utf-8")
    (pkg_dir / "__init__.py").write_text(package_init([model]), encoding="utf-8")
    sys.path.insert(0, str(where / "pkg"))
    try:
        pkg = importlib.import_module(package)
    finally:
        sys.path.remove(str(where / "pkg"))
    return pkg.BY_NAME[model.name], model


@pytest.mark.parametrize("spec", _synth_params())
def test_synthetic_against_kafka_generator(synth_java, spec, tmp_path):
    cls, model = _our_codegen(spec, tmp_path)
    for version in S.versions_of(cls):
        _sweep(synth_java, model, cls, version)
        STATS["synth_pairs"].add((model.name, version))


# -- record batches ------------------------------------------------------------------------

def _record_batches():
    """Hypothesis blobs of 1-3 v2 batches (wire.records): every codec, both timestamp types."""
    from hypothesis import strategies as st

    from wire.records import CompressionType, Record, RecordBatch

    i64 = st.integers(-(1 << 63), (1 << 63) - 1)
    maybe_bytes = st.one_of(st.none(), st.binary(max_size=40), st.binary(min_size=120, max_size=200))
    header = st.tuples(st.text(max_size=10), st.one_of(st.none(), st.binary(max_size=12)))
    record = st.builds(
        lambda ts, od, key, value, headers: Record(timestamp_delta=ts, offset_delta=od, key=key,
                                                   value=value, headers=headers),
        st.one_of(st.integers(0, 1000), i64), st.integers(0, 1 << 20), maybe_bytes, maybe_bytes,
        st.lists(header, max_size=3))
    attributes = st.builds(lambda codec, log_append, txn, control: codec | log_append << 3 | txn << 4 | control << 5,
                           st.sampled_from([int(c) for c in CompressionType]), st.integers(0, 1),
                           st.integers(0, 1), st.integers(0, 1))
    batch = st.builds(
        lambda base, epoch, attrs, ts, pid, pep, seq, recs: RecordBatch(
            base_offset=base, partition_leader_epoch=epoch, attributes=attrs, base_timestamp=ts,
            producer_id=pid, producer_epoch=pep, base_sequence=seq, records=recs),
        st.integers(0, 1 << 40), st.integers(-1, (1 << 31) - 1), attributes,
        st.one_of(st.integers(-1, 1 << 41), i64), i64, st.integers(-(1 << 15), (1 << 15) - 1),
        st.integers(-(1 << 31), (1 << 31) - 1), st.lists(record, max_size=4))
    return st.lists(batch, min_size=1, max_size=3)


def _expected_batch(b) -> dict:
    b64 = (lambda x: None if x is None else base64.b64encode(bytes(x)).decode("ascii"))
    return {
        "baseOffset": b.base_offset, "lastOffset": b.last_offset,
        "partitionLeaderEpoch": b.partition_leader_epoch, "magic": b.magic,
        "producerId": b.producer_id, "producerEpoch": b.producer_epoch,
        "baseSequence": b.base_sequence, "isTransactional": b.is_transactional,
        "isControlBatch": b.is_control, "timestampType": int(b.timestamp_type),
        "maxTimestamp": b.max_timestamp, "compressionType": int(b.compression),
        "records": [{"offset": b.offset_of(r), "timestamp": b.timestamp_of(r), "key": b64(r.key),
                     "value": b64(r.value), "headers": [[k, b64(v)] for k, v in r.headers]}
                    for r in b.records],
    }


def test_record_batches_read_by_kafka(java_codec):
    """Our batch bytes through MemoryRecords.readableRecords: ensureValid (CRC) on every
    batch and record, and Kafka sees our offsets, timestamps, keys, values and headers."""
    pytest.importorskip("wire.records")
    from wire.records import TimestampType, iter_batches

    assert int(TimestampType.LOG_APPEND_TIME) == 1  # Kafka's TimestampType ids

    @SETTINGS
    @given(_record_batches())
    def batches(blob):
        lo, hi = -(1 << 63), (1 << 63) - 1  # absolute timestamps are Java longs: no overflow
        assume(all(lo <= b.base_timestamp + r.timestamp_delta <= hi for b in blob for r in b.records))
        data = b"".join(b.encode() for b in blob)
        reply = java_codec.records(data, [_expected_batch(b) for b in blob])
        STATS["batches"] += len(blob)
        assert reply.get("ok"), f"{reply.get('error')}\n  ours: {blob!r}\n  kafka: {_short(reply.get('seen'))}"
        assert list(iter_batches(data)) == blob

    batches()


# -- summary -------------------------------------------------------------------------------

@pytest.mark.skipif(not NAMES, reason="wire/messages is not generated yet")
def test_zz_sweep_summary(java_codec, capsys):
    """Runs last (file order): makes the sweep's size visible in the test output."""
    expected = sum(len(_versions(n)) for n in NAMES)
    line = (f"java differential: swept {len(STATS['pairs'])} of {expected} (message, version) "
            f"pairs against Kafka {java_codec.kafka_version}'s classes, "
            f"{len(STATS['synth_pairs'])} more from tests/data/synth through Kafka's generator; "
            f"{STATS['objects']} objects both ways, {STATS['reparsed']} with unknown tagged "
            f"fields re-serialised by Kafka; {STATS['batches']} record batches read by MemoryRecords")
    with capsys.disabled():
        print("\n" + line)
