"""Big-endian fixed-width reads from a ``bytes`` buffer, for the generated decoders.

Compiled by Cython (the C types are in ``readers.pxd``), each read is a bounds check and a
few byte loads; in pure Python each is one ``struct`` call. A read past the end raises
``IndexError`` (compiled) or ``struct.error`` (pure): ``Message.read`` maps both to
``DecodeError``. ``buf`` is always ``bytes`` here (``Message.read`` sees to it).
"""
from __future__ import annotations

import struct
from types import MemberDescriptorType
from uuid import UUID, SafeUUID

try:
    import cython
except ImportError:
    from . import _nocython as cython

__all__ = ["new_object", "slot_offset", "set_slot", "read_bool", "read_i8", "read_i16", "read_u16", "read_i32", "read_u32", "read_i64",
           "read_i32_tuple", "read_uuid"]

_S_b = struct.Struct(">b")
_S_h = struct.Struct(">h")
_S_H = struct.Struct(">H")
_S_i = struct.Struct(">i")
_S_I = struct.Struct(">I")
_S_q = struct.Struct(">q")
_S_QQ = struct.Struct(">QQ")
_ARRAYS_i = tuple(struct.Struct(f">{n}i") for n in range(32))
_ZERO_UUID = UUID(int=0)
_new = object.__new__
_set = object.__setattr__
_UNKNOWN = SafeUUID.unknown


def new_object(cls):
    """``object.__new__(cls)`` for a generated class (slots unset, ``__init__`` not run)."""
    if cython.compiled:
        return _alloc(cls)
    return _new(cls)


def slot_offset(cls, name):
    """Where ``cls``'s slot ``name`` lives in its instances, for ``set_slot``: the member
    descriptor's offset when compiled and ``name`` is a plain object slot of ``cls`` itself,
    else -1 (then ``set_slot`` stores by name)."""
    d = cls.__dict__.get(name)
    if cython.compiled:
        if type(d) is MemberDescriptorType and d.__objclass__ is cls:
            return _member_offset(d)
    return -1


def set_slot(o, offset, name, value):
    """``object.__setattr__(o, name, value)``; compiled, a store straight into the slot at ``offset`` (from
    ``slot_offset(type(o), name)``), without the attribute lookup."""
    if cython.compiled:
        return _store(o, offset, name, value)
    _set(o, name, value)
    return 0


def _past_end(buf, pos, size):
    raise IndexError(f"read of {size} bytes at {pos} past the end of {len(buf)}")


def read_bool(buf, pos):
    if cython.compiled:
        if pos < 0 or pos >= len(buf):
            _past_end(buf, pos, 1)
        s = buf
        return s[pos] != 0
    return buf[pos] != 0 if pos >= 0 else _past_end(buf, pos, 1)


def read_i8(buf, pos):
    if cython.compiled:
        if pos < 0 or pos >= len(buf):
            _past_end(buf, pos, 1)
        s = buf
        return s[pos]
    return _S_b.unpack_from(buf, pos)[0]


def read_i16(buf, pos):
    if cython.compiled:
        if pos < 0 or pos + 2 > len(buf):
            _past_end(buf, pos, 2)
        s = buf
        x = s[pos]
        x = (x << 8) | s[pos + 1]
        return x
    return _S_h.unpack_from(buf, pos)[0]


def read_u16(buf, pos):
    if cython.compiled:
        if pos < 0 or pos + 2 > len(buf):
            _past_end(buf, pos, 2)
        s = buf
        x = s[pos]
        x = (x << 8) | s[pos + 1]
        return x
    return _S_H.unpack_from(buf, pos)[0]


def read_i32(buf, pos):
    if cython.compiled:
        if pos < 0 or pos + 4 > len(buf):
            _past_end(buf, pos, 4)
        s = buf
        x = s[pos]
        x = (x << 8) | s[pos + 1]
        x = (x << 8) | s[pos + 2]
        x = (x << 8) | s[pos + 3]
        return x
    return _S_i.unpack_from(buf, pos)[0]


def read_u32(buf, pos):
    if cython.compiled:
        if pos < 0 or pos + 4 > len(buf):
            _past_end(buf, pos, 4)
        s = buf
        x = s[pos]
        x = (x << 8) | s[pos + 1]
        x = (x << 8) | s[pos + 2]
        x = (x << 8) | s[pos + 3]
        return x
    return _S_I.unpack_from(buf, pos)[0]


def _u64(s, pos):
    x = s[pos]
    for i in range(pos + 1, pos + 8):
        x = (x << 8) | s[i]
    return x


def read_i64(buf, pos):
    if cython.compiled:
        if pos < 0 or pos + 8 > len(buf):
            _past_end(buf, pos, 8)
        return _u64(buf, pos)
    return _S_q.unpack_from(buf, pos)[0]


def read_i32_tuple(buf, pos, n):
    """``n`` int32s from ``pos`` as a tuple, ``()`` for none (the caller has checked ``n``
    is not negative)."""
    if cython.compiled:
        if pos < 0 or pos + 4 * n > len(buf):
            _past_end(buf, pos, 4 * n)
        s = buf
        return _i32_tuple(s + pos, n)
    if n < 32:
        return _ARRAYS_i[n].unpack_from(buf, pos)
    return struct.unpack_from(f">{n}i", buf, pos)


def read_uuid(buf, pos):
    """A UUID built without ``UUID.__init__``'s argument checks; the zero UUID is shared."""
    if cython.compiled:
        if pos < 0 or pos + 16 > len(buf):
            _past_end(buf, pos, 16)
        hi = _u64(buf, pos)
        lo = _u64(buf, pos + 8)
        if hi == 0 and lo == 0:
            return _ZERO_UUID
        s = buf
        u = _alloc(UUID)
        _store(u, _UUID_INT, "int", _u128(s, pos))
        _store(u, _UUID_SAFE, "is_safe", _UNKNOWN)
        return u
    hi, lo = _S_QQ.unpack_from(buf, pos)
    if hi == 0 and lo == 0:
        return _ZERO_UUID
    value = (hi << 64) | lo
    u = _new(UUID)
    _set(u, "int", value)
    _set(u, "is_safe", _UNKNOWN)
    return u


_UUID_INT = slot_offset(UUID, "int")
_UUID_SAFE = slot_offset(UUID, "is_safe")
