"""``wire.records.values`` (the compiled leader-batch builder and loader decoder) equals
the reference codecs of ``wire.records.batch`` and ``.record`` byte for byte and value for value, including what
it hands back to them (bad input, values that are not bytes). Fresh seeds every run."""
from __future__ import annotations

import os
import random

import pytest
from wire.exceptions import DecodeError, EncodeError
from wire.records import values as native
from wire.records import walk
from wire.records.batch import batch_values as ref_batch_values
from wire.records.batch import build_value_batch as ref_build
from wire.records.record import decode_values as ref_decode
from wire.records.record import encode_values as ref_encode

from tests.support.fresh_seeds import fresh_rng

SEED = int(os.environ.get("VALUES_SEED", fresh_rng(__name__).randrange(1 << 32)))
NO_OP = b"\x01\x14"


def test_compiled_when_a_compiler_was_there():
    if native.build_value_batch is ref_build:
        pytest.skip("wire.records.values is not compiled (pure Python fallback in use)")
    assert native.build_value_batch.__module__ == "wire.records.values"


@pytest.mark.parametrize("seed", [1, 2, SEED])
def test_equal_to_the_reference(seed):
    print(f"replay with VALUES_SEED={seed}")
    rng = random.Random(seed)
    for n in (1, 2, 63, 64, 127, 128, 300, 9000):
        values = [rng.randbytes(rng.choice((0, 1, 2, 63, 64, 200, 9000, 70000 if n < 300 else 10)))
                  for _ in range(n)]
        values = [NO_OP + v if rng.random() < 0.5 else v for v in values]
        assert native.encode_values(values) == ref_encode(values)
        for args in ((0, 0, 0), (rng.randrange(1 << 62), rng.randrange(1 << 31), rng.randrange(1 << 42)), (5, 1, -1)):
            batch = native.build_value_batch(*args, values)
            assert batch == ref_build(*args, values)
            for buf in (batch, bytearray(batch), memoryview(batch)):
                [info] = walk(buf)
                for skip in (None, NO_OP):
                    assert native.batch_values(buf, info, skip) == ref_batch_values(buf, info, skip)


def test_non_bytes_values_go_to_the_reference():
    values = [bytearray(b"ab"), memoryview(b"cd"), b"ef"]
    assert native.encode_values(values) == ref_encode(values)
    assert native.build_value_batch(1, 2, 3, values) == ref_build(1, 2, 3, values)
    with pytest.raises(EncodeError):
        native.build_value_batch(1, 2, 3, [b"a", 7])
    with pytest.raises(EncodeError):
        native.build_value_batch(1 << 63, 2, 3, [b"a"])
    with pytest.raises(ValueError):
        native.build_value_batch(1, 2, 3, [])


# 510119978: a fifth varint byte past 32 bits, taken by the compiled decoder and refused by the
# reference (found by a fresh seed on 2026-12-02)
@pytest.mark.parametrize("seed", [3, 510119978, SEED])
def test_damaged_sections_get_the_reference_answer(seed):
    print(f"replay with VALUES_SEED={seed}")
    rng = random.Random(seed)
    section = ref_encode([rng.randbytes(rng.choice((0, 5, 130))) for _ in range(20)])
    for _ in range(400):
        data = bytearray(section)
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        data = bytes(data[:rng.randint(len(data) - 3, len(data))])
        count = rng.choice((19, 20, 21))
        try:
            want = ref_decode(data, 0, len(data), count, NO_OP)
        except DecodeError as exc:
            with pytest.raises(DecodeError, match=str(exc)[:20]):
                native.decode_values(data, 0, len(data), count, NO_OP)
        else:
            assert native.decode_values(data, 0, len(data), count, NO_OP) == want


def test_pure_python_env_forces_the_reference_codecs():
    """``KRAFT_PURE_PYTHON=1`` runs every codec pure, the node's own fast paths included."""
    import subprocess
    import sys
    code = ("import wire.records.values as n, wire.records.batch as r; "
            "print(n.build_value_batch is r.build_value_batch)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, KRAFT_PURE_PYTHON="1"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
