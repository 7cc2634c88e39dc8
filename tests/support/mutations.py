"""Byte-level mutations of a valid encoding, shared by the decoder fuzz
(tests/unit/wire/test_fuzz.py) and the live fuzz (tests/support/live_fuzz.py)."""
from __future__ import annotations

import random

from wire.varint import write_uvarint

INTERESTING = (0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF)
HUGE_VARINTS = (
    write_uvarint(0x7FFFFFFF), write_uvarint(0xFFFFFFFF), b"\x80\x80\x80\x80\x80\x00",
    b"\xff" * 9 + b"\x01", b"\xff" * 5 + b"\x0f",
)


def mutate(rnd: random.Random, data: bytes, other: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rnd.choice((1, 1, 1, 2, 3))):
        op = rnd.randrange(11)
        n = len(b)
        if op == 0 and n:  # bit flips
            for _ in range(rnd.randint(1, 4)):
                i = rnd.randrange(n)
                b[i] ^= 1 << rnd.randrange(8)
        elif op == 1 and n:  # interesting byte
            b[rnd.randrange(n)] = rnd.choice(INTERESTING)
        elif op == 2:  # truncate
            del b[rnd.randint(0, n):]
        elif op == 3:  # insert random bytes
            i = rnd.randint(0, n)
            b[i:i] = rnd.randbytes(rnd.randint(1, 8))
        elif op == 4 and n:  # delete a range
            i = rnd.randrange(n)
            del b[i:i + rnd.randint(1, 8)]
        elif op == 5 and n:  # duplicate a range, sometimes many times
            i = rnd.randrange(n)
            j = min(n, i + rnd.randint(1, 32))
            times = 1 if rnd.random() < 0.8 else rnd.randint(2, 2000)
            k = rnd.randint(0, n)
            b[k:k] = bytes(b[i:j]) * times
        elif op == 6 and n >= 4:  # 0x7fffffff / 0x7fff anywhere
            i = rnd.randrange(n - 3)
            b[i:i + 4] = rnd.choice((b"\x7f\xff\xff\xff", b"\x80\x00\x00\x00", b"\xff\xff\xff\xfe"))
        elif op == 7 and n >= 2:
            i = rnd.randrange(n - 1)
            b[i:i + 2] = rnd.choice((b"\x7f\xff", b"\x80\x00", b"\xff\xfe"))
        elif op == 8:  # a huge varint, replacing or inserted
            i = rnd.randint(0, n)
            raw = rnd.choice(HUGE_VARINTS)
            b[i:i + rnd.choice((0, 1))] = raw
        elif op == 9:  # splice with another seed
            i, j = rnd.randint(0, n), rnd.randint(0, len(other))
            b = b[:i] + other[j:]
        else:  # overwrite with random bytes
            if n:
                i = rnd.randrange(n)
                b[i:i + 4] = rnd.randbytes(4)
    return bytes(b)
