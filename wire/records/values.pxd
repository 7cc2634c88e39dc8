# C types for wire/records/values.py when Cython compiles it (the .py stays the source).
cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.string cimport memcpy

@cython.locals(n=Py_ssize_t)
cdef inline Py_ssize_t _varint_size(unsigned long long z) noexcept

@cython.locals(z=cython.ulonglong, n=Py_ssize_t)
cdef inline Py_ssize_t _put_varint(unsigned char *p, long long v) noexcept

@cython.locals(size=Py_ssize_t, p="unsigned char *", crc=cython.uint)
cdef object _seal(bytes out, object base_offset, object epoch, object timestamp_ms, Py_ssize_t count)

@cython.locals(count=Py_ssize_t, i=Py_ssize_t, n=Py_ssize_t, body=Py_ssize_t, total=Py_ssize_t,
               pos=Py_ssize_t, p="unsigned char *")
cdef object _encode(list values, Py_ssize_t reserve)

@cython.locals(z=cython.ulonglong, shift=cython.int, b=cython.uchar)
cdef inline Py_ssize_t _get_varint(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end,
                                   long long *out) noexcept

@cython.locals(p="const unsigned char *", s0=cython.int, s1=cython.int, values=list,
               pos=Py_ssize_t, limit=Py_ssize_t, i=Py_ssize_t, size=cython.longlong,
               ignored=cython.longlong)
cdef object _decode(bytes data, Py_ssize_t start, Py_ssize_t end, Py_ssize_t count, object skip)
