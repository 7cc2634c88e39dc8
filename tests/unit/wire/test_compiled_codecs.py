"""The compiled codecs (Cython, built from the same .py by setup.py) and the pure-Python
sources agree: a pure child process (KRAFT_PURE_PYTHON=1) encodes samples of every message
and version; here, on the compiled path, the same objects encode to the same bytes and
those bytes decode to equal objects with the same repr, arrays of primitives as tuples
(the shared ``()`` when empty) and struct arrays as lists on both paths. Record batches
likewise."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest

from tests.support import strategies as S
from tests.support.codec_samples import array_shapes
from tests.support.strategies import REPO
from wire import native


def _pure_samples(tmp_path) -> dict:
    out = tmp_path / "samples.pickle"
    env = dict(os.environ, KRAFT_PURE_PYTHON="1")
    subprocess.run([sys.executable, "-m", "tests.support.codec_samples", str(out)],
                   cwd=REPO, env=env, check=True, timeout=300)
    with open(out, "rb") as f:
        return pickle.load(f)


def test_pure_switch_reports_its_path():
    env = dict(os.environ, KRAFT_PURE_PYTHON="1")
    code = ("import wire.native as n, wire.codec_support as c, wire.messages.fetch_response as f;"
            "print(n.describe()); print(c.__file__); print(f.__file__)")
    lines = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, check=True,
                           capture_output=True, text=True, timeout=60).stdout.splitlines()
    assert lines[0] == "wire codecs: pure Python (KRAFT_PURE_PYTHON is set)"
    assert lines[1].endswith("codec_support.py") and lines[2].endswith("fetch_response.py")


@pytest.fixture(scope="module")
def pure(tmp_path_factory):
    if not native.COMPILED_IN_USE:
        pytest.skip(f"the compiled codecs are not in use here: {native.DESCRIPTION}")
    data = _pure_samples(tmp_path_factory.mktemp("pure"))
    assert data["path"].startswith("pure Python")
    return data


def test_compiled_modules_are_extension_modules():
    if not native.COMPILED_IN_USE:
        pytest.skip(f"the compiled codecs are not in use here: {native.DESCRIPTION}")
    import importlib

    for name in native.COMPILED:
        module = importlib.import_module(name)
        assert not module.__file__.endswith(".py"), f"{name} is {module.__file__}"


def test_every_message_and_version_is_identical_compiled_and_pure(pure):
    from wire.messages import BY_NAME

    rows = pure["messages"]
    seen = {(name, version) for name, version, *_ in rows}
    assert seen == {(n, v) for n, c in BY_NAME.items() for v in range(c.MIN_VERSION, c.MAX_VERSION + 1)}
    kinds = set()
    for name, version, obj, data, decoded_repr, pure_shapes in rows:
        cls = BY_NAME[name]
        assert type(obj) is cls  # unpickled into this process's (compiled) class
        assert obj.encode(version) == data, f"{name} v{version}: compiled encodes other bytes"
        decoded = cls.decode(data, version)
        assert decoded == obj, f"{name} v{version}: compiled decodes to a different object"
        assert repr(decoded) == decoded_repr, f"{name} v{version}: repr differs"
        shapes = array_shapes(S.models()[name], decoded)
        assert shapes == pure_shapes, f"{name} v{version}: arrays differ compiled and pure"
        for path, primitive, shape in shapes:
            allowed = ("None", "()", "tuple") if primitive else ("None", "list")
            assert shape in allowed, f"{name} v{version}: {path} decodes to {shape}"
            kinds.add((primitive, shape))
    # the samples hold filled and empty arrays of both kinds
    assert {(True, "()"), (True, "tuple"), (False, "list")} <= kinds


def test_typed_decoders_take_any_buffer_and_refuse_bad_input_with_decode_error(pure):
    """Messages with typed decoders (``_DEC_BYTES``: the three small-message bench rows among
    them) read a bytearray or memoryview as they read bytes; a truncated or a corrupted input
    is a DecodeError; what they decode pickles back to an equal object."""
    from wire.exceptions import DecodeError
    from wire.messages import BY_NAME

    typed = {name for name, cls in BY_NAME.items() if cls._DEC_BYTES}
    assert {"VoteRequest", "DescribeQuorumResponse", "MetadataResponse"} <= typed
    for name, version, obj, data, *_ in pure["messages"]:
        if name not in typed:
            continue
        cls = BY_NAME[name]
        for buf in (bytearray(data), memoryview(data), memoryview(b"xx" + data)[2:]):
            assert cls.decode(buf, version) == obj, f"{name} v{version} from {type(buf).__name__}"
        assert pickle.loads(pickle.dumps(cls.decode(data, version))) == obj
        for cut in range(0, len(data), max(1, len(data) // 16)):
            try:
                cls.decode(data[:cut], version)
            except DecodeError:
                pass
        bad = bytearray(data)
        for i in range(0, len(bad), max(1, len(bad) // 8)):
            bad[i] ^= 0xFF
            try:
                cls.decode(bytes(bad), version)
            except DecodeError:
                pass


def test_decoders_hold_and_release_what_they_store():
    """The decoders store into slots directly when compiled: every stored value is held once
    by its object and released with it, also a default overwritten by a tagged field."""
    if not native.COMPILED_IN_USE:
        # run as Python, CPython counts the references itself; the shared small ints' counts
        # then also move with whatever else the interpreter does between the two readings
        pytest.skip(f"checks the compiled decoders' slot stores; not in use here: {native.DESCRIPTION}")
    from wire.messages import metadata_response as md

    # 217, 218 and 219: shared small ints the int16/int32 fields and lists take from a table
    topic = md.MetadataResponseTopic(name="t", partitions=[
        md.MetadataResponsePartition(partition_index=i, leader_epoch=219, error_code=218,
                                     replica_nodes=[1, 217], isr_nodes=[217],
                                     unknown_tagged_fields=[(7, b"x")] if i % 2 else ())
        for i in range(4)])
    data = md.MetadataResponse(brokers=[md.MetadataResponseBroker(node_id=1, host="h")],
                               topics=[topic], unknown_tagged_fields=[(9, b"yz")]).encode(12)
    zero = md.MetadataResponse.decode(data, 12).topics[0].topic_id  # the decoders' shared zero UUID
    assert zero.int == 0
    shared = [zero, (), 217, 218, 219]

    def counts():
        return [sys.getrefcount(x) for x in shared]

    before = counts()
    kept = [md.MetadataResponse.decode(data, 12) for _ in range(50)]
    assert counts()[0] >= before[0] + 50  # each topic holds the shared zero UUID
    assert counts()[2:] == [before[2] + 50 * 4 * 2, before[3] + 50 * 4, before[4] + 50 * 4]
    assert kept[0].topics[0].partitions[1].unknown_tagged_fields == [(7, b"x")]
    del kept
    assert counts() == before


def test_record_batches_are_identical_compiled_and_pure(pure):
    from wire.records import decode_batch

    for data in pure["batches"]:
        batch, end = decode_batch(data, 0)
        assert end == len(data)
        assert batch.encode() == data


def test_a_stale_or_missing_build_means_pure(tmp_path, monkeypatch):
    from importlib.machinery import EXTENSION_SUFFIXES

    monkeypatch.delenv(native.PURE_ENV, raising=False)
    monkeypatch.setattr(native, "ROOT", tmp_path)
    monkeypatch.setattr(native, "COMPILED", ["wire.a", "wire.b"])
    (tmp_path / "wire").mkdir()
    for name in ("a", "b"):
        (tmp_path / "wire" / f"{name}.py").write_text("")
    assert native._choose() == (False, "pure Python (no compiled modules: no C compiler or Cython at install time)")
    for name in ("a", "b"):
        so = tmp_path / "wire" / f"{name}{EXTENSION_SUFFIXES[0]}"
        so.write_bytes(b"")
        os.utime(so, (2_000_000_000, 2_000_000_000))
    assert native._choose() == (True, "compiled with Cython (2 modules)")
    os.utime(tmp_path / "wire" / "b.py", (2_000_000_100, 2_000_000_100))  # edited after the build
    compiled, why = native._choose()
    assert not compiled and "wire.b is older than its source" in why
    os.utime(tmp_path / "wire" / "b.py", (1_000_000_000, 1_000_000_000))
    (tmp_path / "wire" / "a.pxd").write_text("")  # its C types changed after the build
    os.utime(tmp_path / "wire" / "a.pxd", (2_000_000_100, 2_000_000_100))
    compiled, why = native._choose()
    assert not compiled and "wire.a is older than its source" in why
    monkeypatch.setenv(native.PURE_ENV, "1")
    assert native._choose() == (False, "pure Python (KRAFT_PURE_PYTHON is set)")
