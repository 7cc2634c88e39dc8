"""Compiled fast paths of the node's hot loops: the leader's value-only batches
(``build_value_batch``) and the loader's replay of them (``batch_values``).

``_values.py`` is their only source: compiled by Cython in pure-Python mode (setup.py),
it runs C loops; run as Python (no compiler, ``KRAFT_PURE_PYTHON=1``, or wire's codecs
running pure) it is wire's own codecs. Which one follows wire's choice
(``wire/native.py``), so the two paths are never mixed; a compiled ``_values`` older than
its ``.py`` or ``.pxd`` is not used either.
"""
import struct

from wire.records import HEADER_SIZE

from wire import native as _wire_native

if not (_wire_native.COMPILED_IN_USE and _wire_native.is_current(__name__ + "._values")):
    # import _values from its .py (what the import system would otherwise prefer is the .so)
    _wire_native.source_only(__path__[0])

from ._values import build_value_batch, decode_values, encode_values  # noqa: E402

_COUNT = struct.Struct(">i")


def batch_values(buf, info, skip: bytes | None = None) -> list:
    """``wire.records.batch_values``: the values of one uncompressed batch found by
    ``walk``, leaving out those that start with the two-byte ``skip``."""
    (count,) = _COUNT.unpack_from(buf, info.start + HEADER_SIZE - 4)
    if type(buf) is not bytes:
        buf = bytes(memoryview(buf)[info.start:info.end])
        return decode_values(buf, HEADER_SIZE, len(buf), count, skip)
    return decode_values(buf, info.start + HEADER_SIZE, info.end, count, skip)


__all__ = ["batch_values", "build_value_batch", "decode_values", "encode_values"]
