"""Size-prefixed frames, sans-I/O.

Every Kafka request and response travels as ``int32 size`` + ``size`` bytes. The
``FrameReader`` is fed whatever the socket delivered and hands back whole frames.
It checks the announced size against ``socket.request.max.bytes`` (Kafka's
default 104857600) *before* buffering toward it, so a prefix that claims 2 GB
costs four bytes, not 2 GB: the caller closes that connection, as Kafka does
(``InvalidReceiveException``).
"""
from __future__ import annotations

import struct

DEFAULT_MAX_BYTES = 104857600  # socket.request.max.bytes
_SIZE = struct.Struct(">i")


class FrameTooLarge(Exception):
    """The announced frame size is negative or above the limit; close the connection."""

    def __init__(self, size: int, limit: int, frames: list | None = None):
        super().__init__(f"Invalid receive (size = {size} larger than {limit})"
                         if size >= 0 else f"Invalid receive (size = {size})")
        self.size = size
        self.limit = limit
        self.frames = frames or []  # the whole frames read before the bad prefix


class FrameReader:
    """Collects bytes and splits them into frames (without the size prefix)."""

    __slots__ = ("max_bytes", "_buf", "_need")

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES):
        self.max_bytes = max_bytes
        self._buf = bytearray()
        self._need = -1  # size of the frame being collected, -1 while reading the prefix

    @property
    def buffered(self) -> int:
        return len(self._buf)

    def feed(self, data) -> list[bytes]:
        """Add bytes; return the frames now complete (possibly none)."""
        buf = self._buf
        if not buf and len(data) >= 4 and _SIZE.unpack_from(data, 0)[0] == len(data) - 4 <= self.max_bytes:
            return [bytes(data[4:])]  # exactly one whole frame (the usual read): no buffering
        buf += data
        frames = []
        while True:
            if self._need < 0:
                if len(buf) < 4:
                    return frames
                size = _SIZE.unpack_from(buf, 0)[0]
                if size < 0 or size > self.max_bytes:
                    raise FrameTooLarge(size, self.max_bytes, frames)
                self._need = size
            end = 4 + self._need
            if len(buf) < end:
                return frames
            with memoryview(buf) as view:
                frames.append(bytes(view[4:end]))  # one copy (a slice would copy twice)
            del buf[:end]
            self._need = -1


def frame(payload) -> bytes:
    """Prefix a payload with its size."""
    return _SIZE.pack(len(payload)) + bytes(payload)
