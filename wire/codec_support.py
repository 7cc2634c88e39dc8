"""What generated codecs share: base classes, tagged-field sections, array packing.

Generated modules (``wire/messages``) hold the per-version straight-line code; this
module holds the few pieces that are the same for every message. Decoders raise
only ``DecodeError``; encoders raise ``EncodeError``/``UnsupportedVersionError``.
"""
from __future__ import annotations

import struct
from uuid import UUID, SafeUUID

from .exceptions import DecodeError, EncodeError, UnsupportedVersionError
from .varint import read_uvarint, read_uvarint_int, write_uvarint

__all__ = [
    "ARRAYS", "DEFAULT", "Message", "Struct", "StructCodec", "UUID", "ZERO_UUID", "DecodeError",
    "EncodeError", "UnsupportedVersionError", "new", "pack_array",
    "read_compact_length", "read_uvarint", "read_uvarint_int", "same_items", "same_tags", "unpack_array",
    "uuid_from_bytes", "write_tags", "write_uvarint",
]

StructCodec = struct.Struct


def read_compact_length(buf, pos: int):
    """A compact length as Kafka's readers compute it: ``readUnsignedVarint() - 1`` in Java
    ``int`` arithmetic (-1 is null; a varint of 2**31 or more is a negative int, so null
    too; and 2**31 itself wraps to 2**31 - 2)."""
    n, pos = read_uvarint_int(buf, pos)
    return (0x7FFFFFFF if n == -0x80000000 else n - 1), pos
new = object.__new__
ZERO_UUID = UUID(int=0)
_ZERO16 = bytes(16)


class _Default:
    """Marks an omitted keyword argument whose default is a fresh list or struct."""

    __slots__ = ()

    def __repr__(self):
        return "DEFAULT"


DEFAULT = _Default()

# Records fields this large are not copied into encode()'s buffer but held by reference
# (a gathering write sends them). A KRaft batch answered to observers is ~33 KB: copied
# twice (the growing buffer, then bytes()) into fresh memory it cost 30-300 us an encode.
SPILL_BYTES = 1 << 13


class _Output(bytearray):
    """``encode()``'s buffer: ``parts`` holds what came before each large records
    field, and the field itself, so that ``encode()`` copies those bytes once."""

    __slots__ = ("parts",)

    def __init__(self):
        super().__init__()
        self.parts = []


def spill(w: bytearray, data) -> None:
    """Append a large records field to ``w``, by reference when ``w`` is ``encode()``'s."""
    if type(w) is _Output:
        w.parts.append(bytes(w))
        w.parts.append(data)
        del w[:]
    else:
        w += data


def encode_parts(head: bytes, message, version: int) -> list:
    """``head`` then ``message`` at ``version``, as a list of buffers whose concatenation
    is the encoding: records fields of ``SPILL_BYTES`` or more are in the list by
    reference (e.g. views of a log segment), never copied; the rest is copied once."""
    w = _Output()
    w += head
    message.write(w, version)
    if w.parts:
        w.parts.append(bytes(w))
        return w.parts
    return [bytes(w)]


ZERO_COPY_BYTES = 1 << 20  # from this input size on, records fields are views
# Errors a malformed input can provoke inside straight-line decode code.
_DECODE_FAILURES = (struct.error, IndexError, ValueError, TypeError, OverflowError,
                    MemoryError, RecursionError)
_ENCODE_FAILURES = (struct.error, TypeError, AttributeError, OverflowError, ValueError)


_set = object.__setattr__
_UNKNOWN = SafeUUID.unknown


def uuid_from_bytes(raw) -> UUID:
    """``UUID(bytes=raw)`` without its argument checks (raw is 16 bytes from a Struct)."""
    if raw == _ZERO16:
        return ZERO_UUID
    u = new(UUID)
    _set(u, "int", int.from_bytes(raw, "big"))
    _set(u, "is_safe", _UNKNOWN)
    return u


_array_structs: dict[tuple[str, int], struct.Struct] = {}

# Arrays of up to SMALL_ARRAY-1 fixed-width elements: generated code indexes these
# precompiled Structs directly (replica lists, ISR lists...), skipping a call.
SMALL_ARRAY = 32
ARRAYS = {code: tuple(struct.Struct(f">{n}{code}") for n in range(SMALL_ARRAY))
          for code in "?bhHiIqd"}


def pack_array(code: str, values) -> bytes:
    n = len(values)
    s = _array_structs.get((code, n))
    if s is None:
        s = struct.Struct(f">{n}{code}")
        if n < 4096:
            _array_structs[(code, n)] = s
    return s.pack(*values)


def unpack_array(code: str, n: int, buf, pos: int) -> tuple:
    s = _array_structs.get((code, n))
    if s is None:
        s = struct.Struct(f">{n}{code}")
        if n < 4096:
            _array_structs[(code, n)] = s
    return s.unpack_from(buf, pos)


def same_items(a, b) -> bool:
    """For an array-of-primitives field whose values are not ``==``: equal all the same
    when one is a tuple (decoded) and the other a list (built) of the same items."""
    return type(a) is not type(b) and a is not None and b is not None and tuple(a) == tuple(b)


def same_tags(a, b) -> bool:
    return list(a) == list(b)


def write_tags(w: bytearray, known: list, unknown) -> None:
    """Write a tagged-field section: known and unknown fields merged in tag order."""
    fields = list(known)
    if unknown:
        fields.extend((t, bytes(d)) for t, d in unknown)
        fields.sort(key=lambda item: item[0])
        tags = [t for t, _ in fields]
        if len(set(tags)) != len(tags):
            raise EncodeError(f"duplicate tag in tagged fields: {tags}")
    w += write_uvarint(len(fields))
    for tag, data in fields:
        w += write_uvarint(tag)
        w += write_uvarint(len(data))
        w += data


def _repr(obj) -> str:
    parts = [f"{n}={getattr(obj, n)!r}" for n in obj.__slots__ if n != "unknown_tagged_fields"]
    if obj.unknown_tagged_fields:
        parts.append(f"unknown_tagged_fields={obj.unknown_tagged_fields!r}")
    return f"{type(obj).__name__}({', '.join(parts)})"


class Struct:
    """Base of generated structs: slots, keyword construction, equality, repr."""

    __slots__ = ()
    __hash__ = None  # mutable
    __repr__ = _repr


def _read(cls, buf, pos: int, version: int):
    """Decode one message at ``pos``; returns ``(message, end_position)``.

    ``records`` fields are slices of ``buf``: views, not copies, when ``buf`` is a
    memoryview, which a large ``bytes`` input (1 MiB or more) is turned into here,
    as Kafka's MemoryRecords wraps a slice of the response buffer. A message without
    records fields whose decoders are typed (``_DEC_BYTES``) reads a ``bytes`` copy of
    any other buffer."""
    if not (cls.MIN_VERSION <= version <= cls.MAX_VERSION):
        cls._check_version(version, DecodeError)
    try:
        if cls._DEC_BYTES:
            if type(buf) is not bytes:
                buf = bytes(buf)
        elif type(buf) is bytes and len(buf) >= ZERO_COPY_BYTES:
            buf = memoryview(buf)
        return cls._DEC[version - cls.MIN_VERSION](buf, pos)
    except DecodeError:
        raise
    except _DECODE_FAILURES as e:
        raise DecodeError(f"malformed {cls.__name__} v{version}: {e}") from None


class Message(Struct):
    """Base of generated top-level messages: version dispatch and error mapping."""

    __slots__ = ()
    API_KEY: int | None = None
    MESSAGE_TYPE = ""
    MIN_VERSION = 0
    MAX_VERSION = 0
    FLEXIBLE_MIN: int | None = None
    LISTENERS: tuple = ()
    _ENC: tuple = ()
    _DEC: tuple = ()
    _DEC_BYTES = False  # its decoders read ``bytes`` (wire.readers): other inputs are copied

    @classmethod
    def is_flexible(cls, version: int) -> bool:
        return cls.FLEXIBLE_MIN is not None and version >= cls.FLEXIBLE_MIN

    @classmethod
    def _check_version(cls, version: int, exc):
        if not (cls.MIN_VERSION <= version <= cls.MAX_VERSION):
            raise exc(f"{cls.__name__} has no version {version} "
                      f"(valid {cls.MIN_VERSION}-{cls.MAX_VERSION})")

    def write(self, w: bytearray, version: int) -> None:
        """Append this message's encoding at ``version`` to ``w``."""
        cls = type(self)
        if not (cls.MIN_VERSION <= version <= cls.MAX_VERSION):
            cls._check_version(version, UnsupportedVersionError)
        try:
            cls._ENC[version - cls.MIN_VERSION](w, self)
        except EncodeError:
            raise
        except _ENCODE_FAILURES as e:
            raise EncodeError(f"cannot encode {cls.__name__} v{version}: {e}") from e

    def encode(self, version: int) -> bytes:
        w = _Output()
        self.write(w, version)
        if w.parts:  # large records fields were set aside: one join copies everything once
            w.parts.append(w)
            return b"".join(w.parts)
        return bytes(w)

    read = classmethod(_read)  # decode one message at ``pos``: ``(message, end_position)``

    @classmethod
    def decode(cls, buf, version: int):
        return _read(cls, buf, 0, version)[0]
