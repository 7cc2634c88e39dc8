# C types for wire/readers.py when Cython compiles it (the .py stays the source).
cimport cython

cdef extern from *:
    """
    #include "structmember.h"
    #define __kraft_alloc(t) PyType_GenericAlloc((PyTypeObject *)(t), 0)
    #define __kraft_u128(s, pos) _PyLong_FromByteArray((s) + (pos), 16, 0, 0)
    /* Where a member descriptor's object slot lives in its instances; -1 for any other
       kind of member (then the decoders store by name). */
    static Py_ssize_t __kraft_member_offset(PyObject *d) {
        PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
        return (m->type == T_OBJECT_EX && !(m->flags & READONLY)) ? m->offset : -1;
    }
    /* o.<slot at off> = v without the attribute lookup: what the member descriptor's
       setter does (a fresh object's slots are NULL). */
    static CYTHON_INLINE int __kraft_set_slot(PyObject *o, Py_ssize_t off, PyObject *name, PyObject *v) {
        PyObject **slot, *old;
        if (off < 0) return PyObject_GenericSetAttr(o, name, v);
        slot = (PyObject **)((char *)o + off);
        old = *slot;
        Py_INCREF(v);
        *slot = v;
        Py_XDECREF(old);
        return 0;
    }
    /* The ints -5..256, the very objects PyLong_FromLong returns for them, without the
       call (node ids in replica lists are small). */
    static PyObject *__kraft_small_ints[262];
    static int __kraft_small_ints_ready(void) {
        Py_ssize_t i;
        if (__kraft_small_ints[0] != NULL) return 0;
        for (i = 261; i >= 0; i--)  /* [0] last: the table is complete once it is set */
            if ((__kraft_small_ints[i] = PyLong_FromLong((long)i - 5)) == NULL) return -1;
        return 0;
    }
    static CYTHON_INLINE PyObject *__kraft_int(long v) {
        PyObject *x;
        if ((unsigned long)(v + 5) < 262 && (x = __kraft_small_ints[v + 5]) != NULL) {
            Py_INCREF(x);
            return x;
        }
        /* the same object for a small v: the table fills on the first call */
        if (__kraft_small_ints[0] == NULL && __kraft_small_ints_ready() < 0) return NULL;
        return PyLong_FromLong(v);
    }
    #if defined(__GNUC__) || defined(__clang__)  /* one load and a byte swap */
    static CYTHON_INLINE int32_t __kraft_be32(const unsigned char *s) {
        uint32_t x;
        memcpy(&x, s, 4);
    #if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        x = __builtin_bswap32(x);
    #endif
        return (int32_t)x;
    }
    #else
    #define __kraft_be32(s) ((int32_t)(((uint32_t)(s)[0] << 24) | ((uint32_t)(s)[1] << 16) | \
                                       ((uint32_t)(s)[2] << 8) | (uint32_t)(s)[3]))
    #endif
    /* A tuple of n big-endian int32s from s (the caller checked the bounds); n == 0 gives
       the shared empty tuple (PyTuple_New(0) returns it). */
    static PyObject *__kraft_i32_tuple(const unsigned char *s, Py_ssize_t n) {
        PyObject *out, *x;
        Py_ssize_t i;
        if ((out = PyTuple_New(n)) == NULL) return NULL;
        for (i = 0; i < n; i++, s += 4) {
            if ((x = __kraft_int(__kraft_be32(s))) == NULL) {
                Py_DECREF(out);
                return NULL;
            }
            PyTuple_SET_ITEM(out, i, x);
        }
        return out;
    }
    /* read_i16 / read_i32 as int objects, inlined into the compiled decoders. */
    static PyObject *__kraft_past_end(PyObject *b, Py_ssize_t pos, Py_ssize_t size) {
        PyErr_Format(PyExc_IndexError, "read of %zd bytes at %zd past the end of %zd",
                     size, pos, PyBytes_GET_SIZE(b));
        return NULL;
    }
    static CYTHON_INLINE PyObject *__kraft_obj_i32(PyObject *b, Py_ssize_t pos) {
        if (pos < 0 || pos > PyBytes_GET_SIZE(b) - 4) return __kraft_past_end(b, pos, 4);
        return __kraft_int(__kraft_be32((const unsigned char *)PyBytes_AS_STRING(b) + pos));
    }
    static CYTHON_INLINE PyObject *__kraft_obj_i16(PyObject *b, Py_ssize_t pos) {
        const unsigned char *s;
        if (pos < 0 || pos > PyBytes_GET_SIZE(b) - 2) return __kraft_past_end(b, pos, 2);
        s = (const unsigned char *)PyBytes_AS_STRING(b) + pos;
        return __kraft_int((int16_t)(((uint16_t)s[0] << 8) | (uint16_t)s[1]));
    }
    /* The decoders' own reads: one bounds check for a run of fixed-width fields (need),
       then loads without one (put_i16/put_i32); u8 is b[p] without the wraparound. */
    static int __kraft_short(PyObject *b, Py_ssize_t pos, Py_ssize_t size) {
        __kraft_past_end(b, pos, size);
        return -1;
    }
    static CYTHON_INLINE int __kraft_need(PyObject *b, Py_ssize_t pos, Py_ssize_t size) {
        if (pos < 0 || pos > PyBytes_GET_SIZE(b) - size) return __kraft_short(b, pos, size);
        return 0;
    }
    static CYTHON_INLINE int __kraft_u8(PyObject *b, Py_ssize_t pos) {
        if ((size_t)pos >= (size_t)PyBytes_GET_SIZE(b)) return __kraft_short(b, pos, 1);
        return ((const unsigned char *)PyBytes_AS_STRING(b))[pos];
    }
    #define __kraft_at(b, pos) ((const unsigned char *)PyBytes_AS_STRING(b) + (pos))
    /* o.<slot at off> = v taking over the new reference v (NULL: an error is set), so the
       value is not INCREF'd by the store and DECREF'd as a temporary after it. */
    static CYTHON_INLINE int __kraft_put(PyObject *o, Py_ssize_t off, PyObject *name, PyObject *v) {
        PyObject **slot, *old;
        int r;
        if (v == NULL) return -1;
        if (off < 0) {
            r = PyObject_GenericSetAttr(o, name, v);
            Py_DECREF(v);
            return r;
        }
        slot = (PyObject **)((char *)o + off);
        old = *slot;
        *slot = v;
        Py_XDECREF(old);
        return 0;
    }
    /* Unchecked: the caller's need() covered pos..pos+size. */
    static CYTHON_INLINE int __kraft_put_i32(PyObject *o, Py_ssize_t off, PyObject *name, PyObject *b, Py_ssize_t pos) {
        return __kraft_put(o, off, name, __kraft_int(__kraft_be32(__kraft_at(b, pos))));
    }
    static CYTHON_INLINE int __kraft_put_i16(PyObject *o, Py_ssize_t off, PyObject *name, PyObject *b, Py_ssize_t pos) {
        const unsigned char *s = __kraft_at(b, pos);
        return __kraft_put(o, off, name, __kraft_int((int16_t)(((uint16_t)s[0] << 8) | (uint16_t)s[1])));
    }
    #define __kraft_i32_at(b, pos) ((Py_ssize_t)__kraft_be32(__kraft_at(b, pos)))
    #define __kraft_i16_at(b, pos) ((Py_ssize_t)(int16_t)(((uint16_t)__kraft_at(b, pos)[0] << 8) | (uint16_t)__kraft_at(b, pos)[1]))
    /* o.<slot> = a tuple of n int32s at pos (checked here). */
    static CYTHON_INLINE int __kraft_put_i32_tuple(PyObject *o, Py_ssize_t off, PyObject *name, PyObject *b, Py_ssize_t pos, Py_ssize_t n) {
        if (pos < 0 || n < 0 || n > (PyBytes_GET_SIZE(b) - pos) / 4) return __kraft_short(b, pos, 4 * n);
        return __kraft_put(o, off, name, __kraft_i32_tuple(__kraft_at(b, pos), n));
    }
    /* l[i] = v in a list made by PyList_New(n) (its items start NULL). */
    static CYTHON_INLINE void __kraft_list_set(PyObject *l, Py_ssize_t i, PyObject *v) {
        Py_INCREF(v);
        PyList_SET_ITEM(l, i, v);
    }
    /* t[i] = v in a tuple made by PyTuple_New(n), not yet seen by anyone else. */
    static CYTHON_INLINE void __kraft_tuple_set(PyObject *t, Py_ssize_t i, PyObject *v) {
        Py_INCREF(v);
        PyTuple_SET_ITEM(t, i, v);
    }
    """
    object _alloc "__kraft_alloc"(object cls)
    object _u128 "__kraft_u128"(const unsigned char* s, Py_ssize_t pos)
    Py_ssize_t _member_offset "__kraft_member_offset"(object descriptor)
    int _store "__kraft_set_slot"(object o, Py_ssize_t offset, object name, object value) except -1
    tuple _i32_tuple "__kraft_i32_tuple"(const unsigned char* s, Py_ssize_t n)
    object _obj_i16 "__kraft_obj_i16"(bytes b, Py_ssize_t pos)
    object _obj_i32 "__kraft_obj_i32"(bytes b, Py_ssize_t pos)
    int _need "__kraft_need"(bytes b, Py_ssize_t pos, Py_ssize_t size) except -1
    int _u8 "__kraft_u8"(bytes b, Py_ssize_t pos) except -1
    int _put_i16 "__kraft_put_i16"(object o, Py_ssize_t off, object name, bytes b, Py_ssize_t pos) except -1
    int _put_i32 "__kraft_put_i32"(object o, Py_ssize_t off, object name, bytes b, Py_ssize_t pos) except -1
    Py_ssize_t _i16_at "__kraft_i16_at"(bytes b, Py_ssize_t pos)
    Py_ssize_t _i32_at "__kraft_i32_at"(bytes b, Py_ssize_t pos)
    int _put_i32_tuple "__kraft_put_i32_tuple"(object o, Py_ssize_t off, object name, bytes b, Py_ssize_t pos, Py_ssize_t n) except -1
    list _new_list "PyList_New"(Py_ssize_t n)
    void _list_set "__kraft_list_set"(list l, Py_ssize_t i, object v)
    tuple _new_tuple "PyTuple_New"(Py_ssize_t n)
    void _tuple_set "__kraft_tuple_set"(tuple t, Py_ssize_t i, object v)

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

cpdef Py_ssize_t slot_offset(object cls, object name) except? -2

cpdef int set_slot(object o, Py_ssize_t offset, object name, object value) except -1

@cython.locals(s="const unsigned char*")
cpdef tuple read_i32_tuple(bytes buf, Py_ssize_t pos, Py_ssize_t n)

@cython.locals(hi=cython.ulonglong, lo=cython.ulonglong, s="const unsigned char*")
cpdef object read_uuid(bytes buf, Py_ssize_t pos)

cdef Py_ssize_t _UUID_INT, _UUID_SAFE
