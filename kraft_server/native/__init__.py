"""Compiled fast paths of the node's hot loops, each equal to the reference code that is
its fallback (no compiler, ``KRAFT_PURE_PYTHON=1``): the leader's value-only batches
(``build_value_batch``) and the loader's replay of them (``batch_values``)."""
import struct

from wire.records import HEADER_SIZE

from wire import native as _wire_native

try:
    if not _wire_native.COMPILED_IN_USE:  # KRAFT_PURE_PYTHON, or the codecs run pure
        raise ImportError("the codecs run pure Python")
    from ._values import build_value_batch, decode_values, encode_values
except ImportError:  # not compiled
    from wire.records import build_value_batch
    from wire.records.record import decode_values, encode_values

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
