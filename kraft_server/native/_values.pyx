# cython: language_level=3, boundscheck=False, wraparound=False
"""C loops for value-only record sections (the KRaft leader's batches): the same bytes
and the same answers as ``wire.records.record.encode_values`` / ``decode_values``, without
a Python object per byte. Anything the fast decoder does not expect is handed to the
reference decoder whole, so its checks and error messages stay the only ones."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.string cimport memcpy

from wire.exceptions import EncodeError
from wire.records.crc import crc32c
from wire.records.header import CRC_START, HEADER, HEADER_SIZE, LOG_OVERHEAD, MAGIC
from wire.records.record import decode_values as _reference_decode
from wire.records.record import encode_values as _reference_encode


cdef inline Py_ssize_t _varint_size(unsigned long long z) noexcept:
    cdef Py_ssize_t n = 1
    while z >= 0x80:
        z >>= 7
        n += 1
    return n


cdef inline Py_ssize_t _put_varint(unsigned char *p, long long v) noexcept:
    cdef unsigned long long z = <unsigned long long>((v << 1) ^ (v >> 63))
    cdef Py_ssize_t n = 0
    while z >= 0x80:
        p[n] = <unsigned char>((z & 0x7F) | 0x80)
        z >>= 7
        n += 1
    p[n] = <unsigned char>z
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
        section = _reference_encode(values)
        out = bytes(HEADER_SIZE) + section
    cdef Py_ssize_t count = len(values), size = PyBytes_GET_SIZE(out)
    try:
        head = HEADER.pack(base_offset, size - LOG_OVERHEAD, epoch, MAGIC, 0, 0, count - 1,
                           timestamp_ms, timestamp_ms, -1, -1, -1, count)
    except Exception as exc:  # a field out of its range
        raise EncodeError(f"cannot encode batch header: {exc}") from None
    cdef unsigned char *p = <unsigned char *>PyBytes_AS_STRING(out)
    memcpy(p, PyBytes_AS_STRING(head), HEADER_SIZE)
    cdef unsigned int crc = crc32c(memoryview(out)[CRC_START:])
    p[17] = (crc >> 24) & 0xFF
    p[18] = (crc >> 16) & 0xFF
    p[19] = (crc >> 8) & 0xFF
    p[20] = crc & 0xFF
    return out


cdef object _encode(list values, Py_ssize_t reserve):
    """The section after ``reserve`` bytes left for the caller, or None when a value is
    not bytes (the reference encoder then decides)."""
    cdef Py_ssize_t count = len(values), i, n, body, total = reserve
    cdef object v
    for i in range(count):
        v = values[i]
        if type(v) is not bytes:
            return None
        n = PyBytes_GET_SIZE(v)
        # attributes, timestamp delta, offset delta, null key, value length, value, headers
        body = 2 + _varint_size(<unsigned long long>(i << 1)) + 1 + _varint_size(<unsigned long long>(n << 1)) + n + 1
        total += _varint_size(<unsigned long long>(body << 1)) + body
    out = PyBytes_FromStringAndSize(NULL, total)
    cdef unsigned char *p = <unsigned char *>PyBytes_AS_STRING(out)
    cdef Py_ssize_t pos = reserve
    for i in range(count):
        v = values[i]
        n = PyBytes_GET_SIZE(v)
        body = 2 + _varint_size(<unsigned long long>(i << 1)) + 1 + _varint_size(<unsigned long long>(n << 1)) + n + 1
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


cdef inline Py_ssize_t _get_varint(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end,
                                    long long *out) noexcept:
    """Reads a zig-zag varint of at most 5 bytes at ``pos``; the position after it, or -1."""
    cdef unsigned long long z = 0
    cdef int shift = 0
    cdef unsigned char b
    while pos < end and shift < 35:
        b = p[pos]
        pos += 1
        z |= (<unsigned long long>(b & 0x7F)) << shift
        if b < 0x80:
            out[0] = <long long>(z >> 1) ^ -(<long long>(z & 1))
            return pos
        shift += 7
    return -1


def decode_values(data, Py_ssize_t start, Py_ssize_t end, Py_ssize_t count, skip=None):
    """The values of the ``count`` records in ``data[start:end]``, leaving out those that
    start with the two-byte ``skip``; as ``wire.records.record.decode_values``."""
    if type(data) is not bytes or count < 0 or start < 0 or end > PyBytes_GET_SIZE(data) \
            or (skip is not None and (type(skip) is not bytes or len(skip) != 2)):
        return _reference_decode(data, start, end, count, skip)
    cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(data)
    cdef int s0 = -1, s1 = -1
    if skip:
        s0, s1 = skip[0], skip[1]
    cdef list values = []
    cdef Py_ssize_t pos = start, limit, i
    cdef long long size, ignored
    for i in range(count):
        pos = _get_varint(p, pos, end, &size)
        if pos < 0 or size < 0 or size > end - pos:
            return _reference_decode(data, start, end, count, skip)
        limit = pos + size
        if pos >= limit:
            return _reference_decode(data, start, end, count, skip)
        pos += 1  # attributes
        pos = _get_varint(p, pos, limit, &ignored)  # timestamp delta
        if pos < 0:
            return _reference_decode(data, start, end, count, skip)
        pos = _get_varint(p, pos, limit, &ignored)  # offset delta
        if pos < 0:
            return _reference_decode(data, start, end, count, skip)
        pos = _get_varint(p, pos, limit, &size)  # key
        if pos < 0 or size > limit - pos:
            return _reference_decode(data, start, end, count, skip)
        if size > 0:
            pos += size
        pos = _get_varint(p, pos, limit, &size)  # value
        if pos < 0 or size > limit - pos:
            return _reference_decode(data, start, end, count, skip)
        if size < 0:
            values.append(None)
        else:
            if not (size >= 2 and p[pos] == s0 and p[pos + 1] == s1):
                values.append(PyBytes_FromStringAndSize(<const char *>(p + pos), size))
            pos += size
        # no headers, and the record ends there: anything else goes to the reference
        if pos >= limit or p[pos] != 0 or pos + 1 != limit:
            return _reference_decode(data, start, end, count, skip)
        pos = limit
    if pos != end:
        return _reference_decode(data, start, end, count, skip)
    return values
