"""Control batches picked out of a byte stream that arrives in arbitrary chunks (a
snapshot fetched with FetchSnapshot), keeping at most one partial batch in hand."""
from __future__ import annotations

import struct

_LENGTH = struct.Struct(">i")  # after the 8-byte base offset
_ATTRIBUTES_LOW = 22  # low byte of the i16 attributes
_CONTROL_FLAG = 0x20
_MIN_BATCH = 61


class ControlBatchScan:
    def __init__(self) -> None:
        self.control: list[bytes] = []
        self._partial: bytes | None = b""  # None: the stream is not batches; stop looking

    def feed(self, data: bytes) -> None:
        if self._partial is None:
            return
        buf, p = self._partial + data, 0
        while len(buf) - p >= 12:
            end = p + 12 + _LENGTH.unpack_from(buf, p + 8)[0]
            if end - p < _MIN_BATCH:
                self._partial = None
                return
            if end > len(buf):
                break
            if buf[p + _ATTRIBUTES_LOW] & _CONTROL_FLAG:
                self.control.append(buf[p:end])
            p = end
        self._partial = buf[p:]

    def batches(self) -> bytes:
        """The control batches seen so far, whole and in order."""
        return b"".join(self.control)
