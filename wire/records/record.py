"""One record of a v2 batch, and the records section's encoder and decoder.

Layout (``DefaultRecord``); every integer is a zig-zag varint (varlong for the
timestamp delta) and every length may be -1 for null::

    Length Attributes:int8 TimestampDelta:varlong OffsetDelta:varint
    KeyLength Key ValueLength Value HeadersCount [HeaderKeyLength HeaderKey
    HeaderValueLength HeaderValue]

``Length`` counts the bytes after itself. Header keys are UTF-8 strings and
cannot be null; header values are nullable bytes.

Decoding follows ``DefaultRecord.readFrom``: any negative key or value length
means null, a negative header count or header key length is an error, a header
count larger than the bytes left is an error, and the fields must end exactly
where ``Length`` says. Header keys are decoded with ``surrogateescape`` so
that a key that is not valid UTF-8 (Java would read it with replacement
characters) still re-encodes to the same bytes.

The decoder is the hot path of fetch handling and log replay, so it is one
loop with the common one-byte varints read inline and records built straight
from a tuple.
"""
from __future__ import annotations

from operator import itemgetter

from ..exceptions import DecodeError, EncodeError
from ..varint import read_varint, read_varlong, write_varint, write_varlong

__all__ = ["Record", "encode_records", "decode_records", "encode_values", "decode_values"]

_FIELDS = ("attributes", "timestamp_delta", "offset_delta", "key", "value", "headers")
_new = tuple.__new__
_NULL = write_varint(-1)
_NO_HEADERS = ()


class Record(tuple):
    """A record as stored: deltas relative to its batch, raw key and value.

    Immutable; built with keywords. ``headers`` is a tuple of
    ``(key: str, value: bytes | None)`` pairs (any iterable of pairs is
    accepted). Absolute offset and timestamp need the batch: see
    ``RecordBatch.offset_of`` and ``RecordBatch.timestamp_of``.
    """

    __slots__ = ()

    def __new__(cls, *, attributes: int = 0, timestamp_delta: int = 0, offset_delta: int = 0,
                key: bytes | None = None, value: bytes | None = None, headers=()):
        if headers:
            headers = tuple((k, v) for k, v in headers)
        else:
            headers = _NO_HEADERS
        return _new(cls, (attributes, timestamp_delta, offset_delta, key, value, headers))

    attributes = property(itemgetter(0), doc="int8; unused by Kafka, always 0 when written")
    timestamp_delta = property(itemgetter(1), doc="int64 added to the batch's base timestamp")
    offset_delta = property(itemgetter(2), doc="int32 added to the batch's base offset")
    key = property(itemgetter(3), doc="bytes or None")
    value = property(itemgetter(4), doc="bytes or None")
    headers = property(itemgetter(5), doc="tuple of (str, bytes | None)")

    # Equal only to another Record: a Record is a tuple, but a plain tuple is not a record.
    def __eq__(self, other):
        if isinstance(other, Record):
            return tuple.__eq__(self, other)
        return NotImplemented if not isinstance(other, tuple) else False

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={value!r}" for name, value in zip(_FIELDS, self))
        return f"Record({inner})"

    def __reduce__(self):
        return (_rebuild, (tuple(self),))


def _rebuild(fields):
    return _new(Record, fields)


# --- encoding -----------------------------------------------------------------------

# The int8 attributes: n in [-128, 128) finds its byte (negative indexes wrap).
_INT8 = tuple(bytes((i,)) for i in range(256))


# The zig-zag varint of every n in [0, 8192): all one- and two-byte encodings of
# non-negative values, which covers almost every length and delta.
_VARINT = tuple(write_varint(i) for i in range(8192))
_TABLE_SIZE = len(_VARINT)


def encode_records(records) -> bytes:
    """The records section (uncompressed) for ``records``."""
    try:
        return _encode_records(records)
    except EncodeError:
        raise
    except (ValueError, TypeError, OverflowError, UnicodeError, IndexError) as exc:
        raise EncodeError(f"cannot encode record: {exc}") from None


def _encode_records(records) -> bytes:
    out = bytearray()
    table, size, int8, null = _VARINT, _TABLE_SIZE, _INT8, _NULL
    for attributes, timestamp_delta, offset_delta, key, value, headers in records:
        if not -128 <= attributes <= 127:
            raise EncodeError(f"record attributes {attributes} out of int8 range")
        body = bytearray(int8[attributes])
        if 0 <= timestamp_delta < size:
            body += table[timestamp_delta]
        elif 0 < timestamp_delta < 1 << 20:  # three bytes: deltas up to ~17 minutes
            z = timestamp_delta << 1
            body += bytes(((z & 0x7F) | 0x80, ((z >> 7) & 0x7F) | 0x80, z >> 14))
        else:
            body += write_varlong(timestamp_delta)
        body += table[offset_delta] if 0 <= offset_delta < size else write_varint(offset_delta)
        if key is None:
            body += null
        else:
            n = len(key)
            body += table[n] if n < size else write_varint(n)
            body += key
        if value is None:
            body += null
        else:
            n = len(value)
            body += table[n] if n < size else write_varint(n)
            body += value
        if headers:
            n = len(headers)
            body += table[n] if n < size else write_varint(n)
            for h_key, h_value in headers:
                if not isinstance(h_key, str):
                    raise EncodeError(f"header key must be str, not {type(h_key).__name__}")
                h_key = h_key.encode("utf-8", "surrogateescape")
                n = len(h_key)
                body += table[n] if n < size else write_varint(n)
                body += h_key
                if h_value is None:
                    body += null
                else:
                    n = len(h_value)
                    body += table[n] if n < size else write_varint(n)
                    body += h_value
        else:
            body += table[0]
        n = len(body)
        out += table[n] if n < size else write_varint(n)
        out += body
    return bytes(out)


# --- decoding -----------------------------------------------------------------------

# The zig-zag value of each one-byte varint: most lengths and deltas fit in one byte.
_ZIGZAG = tuple((u >> 1) ^ -(u & 1) for u in range(128))


def _read_headers(data: bytes, pos: int, count: int, limit: int):
    headers = []
    zigzag = _ZIGZAG
    for _ in range(count):
        b = data[pos]
        if b < 0x80:
            size = zigzag[b]
            pos += 1
        else:
            size, pos = read_varint(data, pos)
        if size < 0:
            raise DecodeError(f"invalid negative header key size {size}")
        end = pos + size
        if end > limit:
            raise DecodeError("header key runs past its record")
        h_key = data[pos:end].decode("utf-8", "surrogateescape")
        b = data[end]
        if b < 0x80:
            size = zigzag[b]
            pos = end + 1
        else:
            size, pos = read_varint(data, end)
        if size < 0:
            h_value = None
        else:
            end = pos + size
            if end > limit:
                raise DecodeError("header value runs past its record")
            h_value = data[pos:end]
            pos = end
        headers.append((h_key, h_value))
    return tuple(headers), pos


def decode_records(data: bytes, pos: int, end: int, count: int) -> list[Record]:
    """Decode ``count`` records from ``data[pos:end]``, which they must fill exactly.

    ``data`` should be ``bytes`` so that keys and values come out as bytes.
    """
    if count < 0:
        raise DecodeError(f"invalid record count {count}")
    records = []
    append = records.append
    record_cls = Record
    zigzag = _ZIGZAG
    # Varints are read inline: one byte through the table, two bytes by hand
    # (lengths up to 8 KiB, offset deltas up to 8191), longer ones by a call.
    try:
        for _ in range(count):
            b = data[pos]
            if b < 0x80:
                size = zigzag[b]
                pos += 1
            else:
                c = data[pos + 1]
                if c < 0x80:
                    b = (b & 0x7F) | (c << 7)
                    size = (b >> 1) ^ -(b & 1)
                    pos += 2
                else:
                    size, pos = read_varint(data, pos)
            limit = pos + size
            if size < 0 or limit > end:
                raise DecodeError(f"invalid record size {size}: {end - pos} bytes left in batch")
            attributes = data[pos]
            if attributes > 127:
                attributes -= 256
            b = data[pos + 1]
            if b < 0x80:
                timestamp_delta = zigzag[b]
                pos += 2
            else:
                c = data[pos + 2]
                if c < 0x80:
                    b = (b & 0x7F) | (c << 7)
                    timestamp_delta = (b >> 1) ^ -(b & 1)
                    pos += 3
                elif data[pos + 3] < 0x80:  # three bytes: deltas up to ~17 minutes
                    b = (b & 0x7F) | ((c & 0x7F) << 7) | (data[pos + 3] << 14)
                    timestamp_delta = (b >> 1) ^ -(b & 1)
                    pos += 4
                else:
                    timestamp_delta, pos = read_varlong(data, pos + 1)
            b = data[pos]
            if b < 0x80:
                offset_delta = zigzag[b]
                pos += 1
            else:
                c = data[pos + 1]
                if c < 0x80:
                    b = (b & 0x7F) | (c << 7)
                    offset_delta = (b >> 1) ^ -(b & 1)
                    pos += 2
                else:
                    offset_delta, pos = read_varint(data, pos)
            b = data[pos]
            if b < 0x80:
                size = zigzag[b]
                pos += 1
            else:
                size, pos = read_varint(data, pos)
            if size < 0:
                key = None
            else:
                key = data[pos:pos + size]
                pos += size
            b = data[pos]
            if b < 0x80:
                size = zigzag[b]
                pos += 1
            else:
                c = data[pos + 1]
                if c < 0x80:
                    b = (b & 0x7F) | (c << 7)
                    size = (b >> 1) ^ -(b & 1)
                    pos += 2
                else:
                    size, pos = read_varint(data, pos)
            if size < 0:
                value = None
            else:
                value = data[pos:pos + size]
                pos += size
            b = data[pos]
            if b == 0:
                headers = _NO_HEADERS
                pos += 1
            else:
                if b < 0x80:
                    size = zigzag[b]
                    pos += 1
                else:
                    size, pos = read_varint(data, pos)
                if size < 0 or size > limit - pos:
                    raise DecodeError(f"invalid number of record headers {size}")
                headers, pos = _read_headers(data, pos, size, limit)
            # Also catches a key or value that ran past the record (or the data).
            if pos != limit:
                raise DecodeError(f"record size mismatch: expected to end at {limit}, ended at {pos}")
            append(_new(record_cls, (attributes, timestamp_delta, offset_delta, key, value, headers)))
    except IndexError:
        raise DecodeError("truncated record") from None
    if pos != end:
        raise DecodeError(f"{end - pos} bytes left after the last of {count} records")
    return records


# --- values only: the KRaft paths (a leader's proposals, the metadata loader) ---------

def encode_values(values) -> bytes:
    """The records section for ``values`` as a KRaft leader writes them: null keys,
    timestamp deltas 0, offset deltas 0.., no headers. Equal to ``encode_records`` of
    ``(0, 0, i, None, value, ())`` (a test checks it), about twice as fast."""
    table, size = _VARINT, _TABLE_SIZE
    parts = []
    append = parts.append
    try:
        for i, value in enumerate(values):
            n = len(value)
            head = b"\x00\x00" + (table[i] if i < size else _varint3(i) if i < 1 << 20 else write_varint(i)) + (
                b"\x01") + (table[n] if n < size else write_varint(n))
            body = len(head) + n + 1
            append(table[body] if body < size else write_varint(body))
            append(head)
            append(value)
            append(b"\x00")
    except TypeError as exc:
        raise EncodeError(f"cannot encode record value: {exc}") from None
    return b"".join(parts)


def _varint_at(data, pos: int):
    """One to three bytes by hand (offset deltas of batches up to 1M records), longer
    ones by ``read_varint``."""
    b = data[pos]
    if b < 0x80:
        return _ZIGZAG[b], pos + 1
    c = data[pos + 1]
    if c < 0x80:
        b = (b & 0x7F) | (c << 7)
        return (b >> 1) ^ -(b & 1), pos + 2
    d = data[pos + 2]
    if d < 0x80:
        b = (b & 0x7F) | ((c & 0x7F) << 7) | (d << 14)
        return (b >> 1) ^ -(b & 1), pos + 3
    return read_varint(data, pos)


def _varint3(n: int) -> bytes:
    """The zig-zag varint of 0 <= n < 2**20 (three bytes past the table)."""
    z = n << 1
    return bytes(((z & 0x7F) | 0x80, ((z >> 7) & 0x7F) | 0x80, z >> 14))


def decode_values(data: bytes, pos: int, end: int, count: int, skip: bytes | None = None) -> list:
    """The values of ``count`` records in ``data[pos:end]`` (checked as ``decode_records``
    checks them; keys and headers are read past). A value starting with ``skip`` is
    left out without being copied (the loader's NoOpRecords)."""
    if count < 0:
        raise DecodeError(f"invalid record count {count}")
    values = []
    append = values.append
    zigzag = _ZIGZAG
    s0 = s1 = -1
    if skip:
        if len(skip) != 2:
            raise ValueError("skip is a two-byte prefix")
        s0, s1 = skip[0], skip[1]
    try:
        for _ in range(count):
            b = data[pos]
            if b < 0x80:
                size = zigzag[b]
                pos += 1
            else:
                size, pos = _varint_at(data, pos)
            limit = pos + size
            if size < 0 or limit > end:
                raise DecodeError(f"invalid record size {size}: {end - pos} bytes left in batch")
            if data[pos + 1] < 0x80:  # attributes, then a one-byte timestamp delta
                pos += 2
            else:
                _, pos = read_varlong(data, pos + 1)
            if data[pos] < 0x80:  # offset delta
                pos += 1
            else:
                _, pos = _varint_at(data, pos)
            b = data[pos]  # key
            if b < 0x80:
                size = zigzag[b]
                pos += 1
            else:
                size, pos = _varint_at(data, pos)
            if size > 0:
                pos += size
            b = data[pos]  # value
            if b < 0x80:
                size = zigzag[b]
                pos += 1
            else:
                size, pos = _varint_at(data, pos)
            if size < 0:
                append(None)
            else:
                if not (size >= 2 and data[pos] == s0 and data[pos + 1] == s1):
                    append(data[pos:pos + size])
                pos += size
            b = data[pos]
            if b == 0:
                pos += 1
            else:
                size, pos = _varint_at(data, pos)
                if size < 0 or size > limit - pos:
                    raise DecodeError(f"invalid number of record headers {size}")
                _, pos = _read_headers(data, pos, size, limit)
            if pos != limit:
                raise DecodeError(f"record size mismatch: expected to end at {limit}, ended at {pos}")
    except IndexError:
        raise DecodeError("truncated record") from None
    if pos != end:
        raise DecodeError(f"{end - pos} bytes left after the last of {count} records")
    return values
