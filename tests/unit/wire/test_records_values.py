"""The values-only record paths (``build_value_batch``/``encode_values`` for a leader's
proposals, ``batch_values``/``decode_values`` for the metadata loader) equal the general
ones byte for byte and value for value, and refuse what they refuse. Fresh seeds on
every run (printed), besides the fixed cases."""
from __future__ import annotations

import os
import random

import pytest
from wire.exceptions import DecodeError
from wire.records import (
    HEADER_SIZE, Record, RecordBatch, batch_records, batch_values, build_batch, build_value_batch, walk,
)

from tests.support.fresh_seeds import fresh_rng

SEED = int(os.environ.get("VALUES_SEED", fresh_rng(__name__).randrange(1 << 32)))


def _values(rng: random.Random, n: int) -> list[bytes]:
    return [rng.randbytes(rng.choice((0, 1, 2, 60, 200, 9000, 70000))) for _ in range(n)]


@pytest.mark.parametrize("seed", [1, 2, 3, SEED])
def test_value_batches_equal_the_general_encoder_and_decoder(seed):
    print(f"replay with VALUES_SEED={seed}")
    rng = random.Random(seed)
    for n in (1, 2, 127, 128, 300, 8200):
        values = _values(rng, n if n < 8200 or rng.random() < 0.5 else 200)
        ours = build_value_batch(40, 3, 1234, values)
        assert ours == build_batch(40, 3, 1234, [(None, v) for v in values])
        [info] = walk(ours)
        assert batch_values(ours, info) == [v for _, v in batch_records(ours, info)]
        assert batch_values(bytearray(ours), info) == values


def test_skip_leaves_out_values_with_the_prefix_only():
    values = [b"\x01\x14\x00noop", b"\x01\x0c\x00feature", b"\x01", b"", b"\x01\x14"]
    batch = build_value_batch(0, 1, 5, values)
    [info] = walk(batch)
    assert batch_values(batch, info, skip=b"\x01\x14") == [b"\x01\x0c\x00feature", b"\x01", b""]


def test_keys_headers_and_null_values_are_read_past():
    batch = RecordBatch(base_offset=0, partition_leader_epoch=1, records=[
        Record(offset_delta=0, key=b"k" * 300, value=b"v1", headers=(("h", b"x"), ("g", None))),
        Record(offset_delta=1, timestamp_delta=10**9, value=None),
        Record(offset_delta=2, value=b"v3")]).encode()
    [info] = walk(batch)
    assert batch_values(batch, info) == [b"v1", None, b"v3"]


@pytest.mark.parametrize("damage", range(40))
def test_damaged_records_raise_decode_error_like_the_general_decoder(damage):
    rng = random.Random(damage)
    batch = bytearray(build_value_batch(0, 1, 5, _values(rng, 20)))
    [info] = walk(bytes(batch))
    at = rng.randrange(HEADER_SIZE, len(batch))
    batch[at] = rng.randrange(256)
    general = ours = None
    try:
        general = [v for _, v in batch_records(bytes(batch), info)]
    except DecodeError:
        general = DecodeError
    try:
        ours = batch_values(bytes(batch), info)
    except DecodeError:
        ours = DecodeError
    assert ours == general
