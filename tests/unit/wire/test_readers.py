"""wire.readers (the typed decoders' fixed-width reads) against ``struct`` on the path in use
(compiled when built): every value, every offset, and reads past either end refused."""
import random
import struct
import uuid

import pytest

from wire import readers

CASES = [("read_bool", "?", 1), ("read_i8", "b", 1), ("read_i16", "h", 2), ("read_u16", "H", 2),
         ("read_i32", "i", 4), ("read_u32", "I", 4), ("read_i64", "q", 8)]


@pytest.mark.parametrize("name,code,size", CASES)
def test_reads_equal_struct(name, code, size):
    read = getattr(readers, name)
    rng = random.Random(size)
    edge = [bytes([0] * size), bytes([0xFF] * size), bytes([0x80] + [0] * (size - 1)),
            bytes([0x7F] + [0xFF] * (size - 1))]
    for raw in edge + [rng.randbytes(size) for _ in range(300)]:
        buf = b"\x01\x02\x03" + raw + b"\x04"
        assert read(buf, 3) == struct.unpack_from(">" + code, buf, 3)[0]
    for pos in (len(buf) - size + 1, len(buf)):
        with pytest.raises((IndexError, struct.error)):
            read(buf, pos)


def test_i32_tuples_and_uuids():
    rng = random.Random(7)
    for n in (0, 1, 3, 31, 32, 500):
        buf = b"\x00" + rng.randbytes(4 * n)
        got = readers.read_i32_tuple(buf, 1, n)
        assert type(got) is tuple and got == struct.unpack_from(f">{n}i", buf, 1)
        with pytest.raises((IndexError, struct.error)):
            readers.read_i32_tuple(buf, 2, n + 1)
    empty = ()
    assert readers.read_i32_tuple(b"", 0, 0) is empty  # the shared empty tuple
    edges = [-2**31, -6, -5, -1, 0, 1, 255, 256, 257, 2**31 - 1]  # around the shared small ints
    got = readers.read_i32_tuple(struct.pack(f">{len(edges)}i", *edges), 0, len(edges))
    assert got == tuple(edges) and all(type(x) is int for x in got)
    for raw in (bytes(16), b"\xff" * 16, rng.randbytes(16)):
        u = readers.read_uuid(b"x" + raw, 1)
        want = uuid.UUID(bytes=raw)
        assert (u, hash(u), repr(u), u.is_safe) == (want, hash(want), repr(want), uuid.SafeUUID.unknown)
    assert readers.read_uuid(bytes(16), 0) is readers.read_uuid(bytes(17), 1)  # the shared zero UUID
    with pytest.raises((IndexError, struct.error)):
        readers.read_uuid(bytes(15), 0)


def test_new_object_leaves_slots_unset():
    class Pair:
        __slots__ = ("a", "b")

    p = readers.new_object(Pair)
    assert type(p) is Pair and not hasattr(p, "a")
    p.a = 1
    assert p.a == 1


def test_set_slot_stores_what_setattr_stores():
    from wire import native

    class Base:
        __slots__ = ("inherited",)

    class Pair(Base):
        __slots__ = ("a", "b")

        @property
        def c(self):
            return 0

    a, b = readers.slot_offset(Pair, "a"), readers.slot_offset(Pair, "b")
    if native.COMPILED_IN_USE:  # the slots' places in the object, distinct
        assert a > 0 and b > 0 and a != b
    else:
        assert a == b == -1
    # not a slot of Pair itself: stored by name
    assert readers.slot_offset(Pair, "inherited") == readers.slot_offset(Pair, "c") == -1
    assert readers.slot_offset(Pair, "missing") == -1
    p = readers.new_object(Pair)
    value = object()
    readers.set_slot(p, a, "a", value)
    readers.set_slot(p, b, "b", [1])
    readers.set_slot(p, b, "b", [2])  # the old value is released, the new one kept
    readers.set_slot(p, -1, "inherited", "x")
    assert (p.a, p.b, p.inherited) == (value, [2], "x")
    with pytest.raises(AttributeError):
        readers.set_slot(p, -1, "c", 1)  # a read-only property refuses as setattr does
    del p.a
    assert not hasattr(p, "a")
