"""Value-only record sections (the KRaft leader's batches, the metadata loader's
replay): ``build_value_batch``, ``batch_values``, ``encode_values``, ``decode_values``,
the same bytes and answers as the reference codecs in ``batch.py`` and ``record.py``,
in C loops without a Python object per byte. Anything the fast decoder does not
expect is handed to the reference decoder whole, so its checks and error messages
stay the only ones.

Compiled by Cython in pure-Python mode with the other wire modules (``wire/native.py``;
the C types are in ``values.pxd``; this ``.py`` is the only source). Run as Python, the
functions are the reference codecs themselves (bound at the end of the module).
"""
from __future__ import annotations

import struct

from wire.exceptions import EncodeError
from wire.records.batch import build_value_batch as _reference_build
from wire.records.crc import crc32c
from wire.records.header import CRC_START, HEADER, HEADER_SIZE, LOG_OVERHEAD, MAGIC
from wire.records.record import decode_values as _reference_decode
from wire.records.record import encode_values as _reference_encode

try:
    import cython
except ImportError:
    from wire import _nocython as cython

__all__ = ["batch_values", "build_value_batch", "decode_values", "encode_values"]

_COUNT = struct.Struct(">i")


def batch_values(buf, info, skip=None):
    """The values of one uncompressed batch found by ``walk``, leaving out those that
    start with the two-byte ``skip``."""
    (count,) = _COUNT.unpack_from(buf, info.start + HEADER_SIZE - 4)
    if type(buf) is not bytes:
        buf = bytes(memoryview(buf)[info.start:info.end])
        return decode_values(buf, HEADER_SIZE, len(buf), count, skip)
    return decode_values(buf, info.start + HEADER_SIZE, info.end, count, skip)


def _varint_size(z):
    """Bytes of the varint of the zig-zagged ``z``."""
    n = 1
    while z >= 0x80:
        z >>= 7
        n += 1
    return n


def _put_varint(p, v):
    """The zig-zag varint of ``v`` at ``p``; how many bytes it took."""
    z = cython.cast(cython.ulonglong, (v << 1) ^ (v >> 63))
    n = 0
    while z >= 0x80:
        p[n] = cython.cast(cython.uchar, (z & 0x7F) | 0x80)
        z >>= 7
        n += 1
    p[n] = cython.cast(cython.uchar, z)
    return n + 1


def encode_values(values):
    """The records section of ``values`` (a list of bytes): null keys, timestamp deltas 0,
    offset deltas 0.., no headers."""
    if type(values) is not list:
        return _reference_encode(values)
    out = _encode(values, 0)
    return _reference_encode(values) if out is None else out


def build_value_batch(base_offset, epoch, timestamp_ms, values):
    """One uncompressed batch of ``values`` as ``wire.records.build_value_batch`` writes it
    (CREATE_TIME, producer id/epoch/sequence -1, null keys), built in one buffer."""
    if not values:
        raise ValueError("a batch needs at least one record")
    if type(values) is not list:
        values = list(values)
    out = _encode(values, HEADER_SIZE)
    if out is None:
        out = bytes(HEADER_SIZE) + _reference_encode(values)
    return _seal(out, base_offset, epoch, timestamp_ms, len(values))


def _seal(out, base_offset, epoch, timestamp_ms, count):
    """The header and CRC written over the first ``HEADER_SIZE`` bytes of ``out``."""
    size = len(out)
    try:
        head = HEADER.pack(base_offset, size - LOG_OVERHEAD, epoch, MAGIC, 0, 0, count - 1,
                           timestamp_ms, timestamp_ms, -1, -1, -1, count)
    except Exception as exc:  # a field out of its range
        raise EncodeError(f"cannot encode batch header: {exc}") from None
    p = cython.cast(cython.p_uchar, PyBytes_AS_STRING(out))
    memcpy(p, PyBytes_AS_STRING(head), HEADER_SIZE)
    crc = crc32c(memoryview(out)[CRC_START:])
    p[17] = (crc >> 24) & 0xFF
    p[18] = (crc >> 16) & 0xFF
    p[19] = (crc >> 8) & 0xFF
    p[20] = crc & 0xFF
    return out


def _encode(values, reserve):
    """The section after ``reserve`` bytes left for the caller, or None when a value is
    not bytes (the reference encoder then decides)."""
    count = len(values)
    total = reserve
    for i in range(count):
        v = values[i]
        if type(v) is not bytes:
            return None
        n = PyBytes_GET_SIZE(v)
        # attributes, timestamp delta, offset delta, null key, value length, value, headers
        body = 2 + _varint_size(i << 1) + 1 + _varint_size(n << 1) + n + 1
        total += _varint_size(body << 1) + body
    out = PyBytes_FromStringAndSize(cython.NULL, total)
    p = cython.cast(cython.p_uchar, PyBytes_AS_STRING(out))
    pos = reserve
    for i in range(count):
        v = values[i]
        n = PyBytes_GET_SIZE(v)
        body = 2 + _varint_size(i << 1) + 1 + _varint_size(n << 1) + n + 1
        pos += _put_varint(p + pos, body)
        p[pos] = 0
        p[pos + 1] = 0
        pos += 2
        pos += _put_varint(p + pos, i)
        p[pos] = 1
        pos += 1
        pos += _put_varint(p + pos, n)
        memcpy(p + pos, PyBytes_AS_STRING(v), n)
        pos += n
        p[pos] = 0
        pos += 1
    return out


def _get_varint(p, pos, end, out):
    """Reads a zig-zag varint of at most 5 bytes at ``pos`` into ``out[0]``; the position
    after it, or -1 (also for a fifth byte past 32 bits, which the reference refuses)."""
    z = 0
    shift = 0
    while pos < end and shift < 35:
        b = p[pos]
        pos += 1
        z |= cython.cast(cython.ulonglong, b & 0x7F) << shift
        if b < 0x80:
            if z > 0xFFFFFFFF:
                return -1
            out[0] = cython.cast(cython.longlong, z >> 1) ^ -cython.cast(cython.longlong, z & 1)
            return pos
        shift += 7
    return -1


def decode_values(data, start, end, count, skip=None):
    """The values of the ``count`` records in ``data[start:end]``, leaving out those that
    start with the two-byte ``skip``; as ``wire.records.record.decode_values``."""
    if type(data) is not bytes or count < 0 or start < 0 or end > PyBytes_GET_SIZE(data) \
            or (skip is not None and (type(skip) is not bytes or len(skip) != 2)):
        return _reference_decode(data, start, end, count, skip)
    values = _decode(data, start, end, count, skip)
    return _reference_decode(data, start, end, count, skip) if values is None else values


def _decode(data, start, end, count, skip):
    """The values, or None for anything the reference decoder should judge."""
    p = cython.cast(cython.p_const_uchar, PyBytes_AS_STRING(data))
    s0 = -1
    s1 = -1
    if skip:
        s0, s1 = skip[0], skip[1]
    values = []
    pos = start
    for i in range(count):
        pos = _get_varint(p, pos, end, cython.address(size))
        if pos < 0 or size < 0 or size > end - pos:
            return None
        limit = pos + size
        if pos >= limit:
            return None
        pos += 1  # attributes
        pos = _get_varint(p, pos, limit, cython.address(ignored))  # timestamp delta
        if pos < 0:
            return None
        pos = _get_varint(p, pos, limit, cython.address(ignored))  # offset delta
        if pos < 0:
            return None
        pos = _get_varint(p, pos, limit, cython.address(size))  # key
        if pos < 0 or size > limit - pos:
            return None
        if size > 0:
            pos += size
        pos = _get_varint(p, pos, limit, cython.address(size))  # value
        if pos < 0 or size > limit - pos:
            return None
        if size < 0:
            values.append(None)
        else:
            if not (size >= 2 and p[pos] == s0 and p[pos + 1] == s1):
                values.append(PyBytes_FromStringAndSize(cython.cast(cython.p_const_char, p + pos), size))
            pos += size
        # no headers, and the record ends there: anything else goes to the reference
        if pos >= limit or p[pos] != 0 or pos + 1 != limit:
            return None
        pos = limit
    if pos != end:
        return None
    return values


if not cython.compiled:  # pure Python: wire's own codecs, called directly
    build_value_batch = _reference_build  # noqa: F811
    decode_values = _reference_decode  # noqa: F811
    encode_values = _reference_encode  # noqa: F811
