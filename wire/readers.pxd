# C types for wire/readers.py when Cython compiles it (the .py stays the source).
cimport cython
from cpython.object cimport PyObject_GenericSetAttr

cdef extern from *:
    """
    #define __kraft_alloc(t) PyType_GenericAlloc((PyTypeObject *)(t), 0)
    #define __kraft_u128(s, pos) _PyLong_FromByteArray((s) + (pos), 16, 0, 0)
    """
    object _alloc "__kraft_alloc"(object cls)
    object _u128 "__kraft_u128"(const unsigned char* s, Py_ssize_t pos)

cpdef object new_object(object cls)

cdef object _past_end(object buf, Py_ssize_t pos, Py_ssize_t size)

@cython.locals(s="const unsigned char*")
cpdef bint read_bool(bytes buf, Py_ssize_t pos) except -1

@cython.locals(s="const unsigned char*")
cpdef signed char read_i8(bytes buf, Py_ssize_t pos) except? -1

@cython.locals(s="const unsigned char*", x=cython.ushort)
cpdef short read_i16(bytes buf, Py_ssize_t pos) except? -1

@cython.locals(s="const unsigned char*", x=cython.ushort)
cpdef unsigned short read_u16(bytes buf, Py_ssize_t pos) except? 0xFFFF

@cython.locals(s="const unsigned char*", x=cython.uint)
cpdef int read_i32(bytes buf, Py_ssize_t pos) except? -1

@cython.locals(s="const unsigned char*", x=cython.uint)
cpdef unsigned int read_u32(bytes buf, Py_ssize_t pos) except? 0xFFFFFFFF

@cython.locals(x=cython.ulonglong, i=Py_ssize_t)
cdef unsigned long long _u64(const unsigned char* s, Py_ssize_t pos) noexcept

cpdef long long read_i64(bytes buf, Py_ssize_t pos) except? -1

@cython.locals(i=Py_ssize_t, out=list)
cpdef list read_i32_list(bytes buf, Py_ssize_t pos, Py_ssize_t n)

@cython.locals(hi=cython.ulonglong, lo=cython.ulonglong, s="const unsigned char*")
cpdef object read_uuid(bytes buf, Py_ssize_t pos)
