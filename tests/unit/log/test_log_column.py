"""``Column`` (``kraft_server/log/column.py``): a mapped head read in place plus an array
tail reads exactly as one ``array('q')`` would: index, slice, iterate, bisect, append,
cut (a cut into the head copies what is kept and unmaps the file). Fresh seeds."""
from __future__ import annotations

import bisect
import mmap
import os
import random
from array import array

import pytest

from kraft_server.log.column import Column
from tests.support.fresh_seeds import fresh_rng

SEED = int(os.environ.get("COLUMN_SEED", fresh_rng(__name__).randrange(1 << 32)))


def mapped_column(tmp_path, values) -> Column:
    path = tmp_path / "column"
    path.write_bytes(b"h" * 16 + array("q", values).tobytes())
    if not values:
        return Column()
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 16 + 8 * len(values), prot=mmap.PROT_READ)
    return Column(mapped, memoryview(mapped)[16:].cast("q"))


@pytest.mark.parametrize("seed", [1, SEED])
def test_reads_as_one_array(tmp_path, seed):
    print(f"replay with COLUMN_SEED={seed}")
    rng = random.Random(seed)
    for _ in range(60):
        n0, nt = rng.randint(0, 25), rng.randint(0, 25)
        values = sorted(rng.sample(range(1000), n0 + nt))
        column = mapped_column(tmp_path, values[:n0])
        for v in values[n0:]:
            column.append(v)
        ref = array("q", values)
        assert len(column) == len(ref) and list(column) == list(ref)
        assert column.last(-7) == (ref[-1] if ref else -7)
        for i in range(-len(ref), len(ref)):
            assert column[i] == ref[i]
        for bad in (len(ref), -len(ref) - 1):
            with pytest.raises(IndexError):
                column[bad]
        for a in range(-2, len(ref) + 2, 3):
            for b in range(-2, len(ref) + 2, 2):
                assert column[a:b] == ref[a:b]
        for x in range(-1, 1001, 37):
            for lo in range(0, len(ref) + 1, 4):
                want = bisect.bisect_right(ref, x, lo)
                assert column.bisect_right(x, lo) == want == bisect.bisect_right(column, x, lo)
                hi = rng.randint(lo, len(ref))
                assert column.bisect_right(x, lo, hi) == bisect.bisect_right(ref, x, lo, hi)
        cut = rng.randint(0, len(ref))
        del column[cut:]
        del ref[cut:]
        assert list(column) == list(ref)
        if cut < n0:
            assert column.head is None  # copied out, the file unmapped
        column.append(5000)
        ref.append(5000)
        assert list(column) == list(ref)
        column.release()


def test_a_released_head_is_not_read(tmp_path):
    column = mapped_column(tmp_path, [0, 5, 9])
    column.release()
    with pytest.raises(ValueError):
        column[1]
