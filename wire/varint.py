"""Kafka's variable-length integers.

Unsigned varints (``uvarint``, at most 5 bytes) carry compact lengths, counts and
tags in flexible versions; zig-zag varints (``varint``, 32-bit) and varlongs
(64-bit, at most 10 bytes) are used inside record batches. Decoders return
``(value, new_position)`` and raise ``DecodeError`` on truncation or overlong
encodings, as Kafka's ByteUtils does ("Varint is too long").
"""
from .exceptions import DecodeError

# One-byte encodings are by far the commonest (lengths, counts, empty tag sections).
_ONE = tuple(bytes((i,)) for i in range(128))


def write_uvarint(n: int) -> bytes:
    if n < 128:
        if n < 0:
            raise ValueError("uvarint must be non-negative")
        return _ONE[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_uvarint(buf, pos: int):
    """Read an unsigned 32-bit varint; at most 5 bytes."""
    try:
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
        result = b & 0x7F
        shift = 7
        for i in range(pos + 1, pos + 5):
            b = buf[i]
            result |= (b & 0x7F) << shift
            if b < 0x80:
                if result > 0xFFFFFFFF:
                    raise DecodeError("uvarint out of range")
                return result, i + 1
            shift += 7
    except IndexError:
        raise DecodeError("truncated varint") from None
    raise DecodeError("varint is too long")


def read_uvarint_int(buf, pos: int):
    """An unsigned varint as the Java ``int`` Kafka's ``ByteUtils.readUnsignedVarint`` returns.

    At most 5 bytes (a 5th byte with its high bit set is "too long"), but the bits past 32
    of a 5th byte are dropped and the result is signed: ``ff ff ff ff 0f`` is -1 and
    ``81 80 80 80 10`` is 1. Generated message readers and the metadata-record frame read
    with it, so that they accept and refuse what Kafka's do."""
    try:
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
        result = b & 0x7F
        shift = 7
        for i in range(pos + 1, pos + 5):
            b = buf[i]
            result |= (b & 0x7F) << shift
            if b < 0x80:
                result &= 0xFFFFFFFF
                return (result - 0x100000000 if result >= 0x80000000 else result), i + 1
            shift += 7
    except IndexError:
        raise DecodeError("truncated varint") from None
    raise DecodeError("varint is too long")


def _read_unsigned_long(buf, pos: int, max_bytes: int):
    result = 0
    shift = 0
    try:
        for i in range(pos, pos + max_bytes):
            b = buf[i]
            result |= (b & 0x7F) << shift
            if b < 0x80:
                return result, i + 1
            shift += 7
    except IndexError:
        raise DecodeError("truncated varint") from None
    raise DecodeError("varint is too long")


def write_varint(n: int) -> bytes:
    """Zig-zag encode a signed 32-bit integer."""
    if not -0x80000000 <= n <= 0x7FFFFFFF:
        raise ValueError("varint out of int32 range")
    return write_uvarint(((n << 1) ^ (n >> 31)) & 0xFFFFFFFF)


def read_varint(buf, pos: int):
    u, pos = _read_unsigned_long(buf, pos, 5)
    if u > 0xFFFFFFFF:
        raise DecodeError("varint out of range")
    return (u >> 1) ^ -(u & 1), pos


def write_varlong(n: int) -> bytes:
    """Zig-zag encode a signed 64-bit integer."""
    if not -0x8000000000000000 <= n <= 0x7FFFFFFFFFFFFFFF:
        raise ValueError("varlong out of int64 range")
    u = ((n << 1) ^ (n >> 63)) & 0xFFFFFFFFFFFFFFFF
    if u < 128:
        return _ONE[u]
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def read_varlong(buf, pos: int):
    u, pos = _read_unsigned_long(buf, pos, 10)
    if u > 0xFFFFFFFFFFFFFFFF:
        raise DecodeError("varlong out of range")
    return (u >> 1) ^ -(u & 1), pos
