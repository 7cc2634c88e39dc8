"""Committed consumer-group offsets, kept durably in one file of ``metadata.log.dir``.

Kafka keeps them in the ``__consumer_offsets`` topic; this node has no data topics, so a
plain append-only file does the same job: ``kraft-group-offsets.log`` beside
``meta.properties`` (a file, not a directory, so nothing takes it for a partition).

Each OffsetCommit that is accepted becomes one frame, written and fsync'd before the
answer leaves (``commit`` returns only once the bytes are on disk)::

    length:uint32  crc:uint32 (zlib CRC-32 of the payload)  payload
    payload = kind:int8  group:str32  count:uint16  count x entry
              (kind 0 sets the entries' offsets, kind 1 deletes those partitions)
    entry   = topic:str16  partition:int32  offset:int64  leader_epoch:int32
              metadata:nullable str32  commit_timestamp:int64

One frame per request makes a commit of several partitions all-or-nothing, as Kafka's
is. On open the frames are replayed until the first one that is short or fails its CRC
(a write torn by a crash); the file is truncated there and fsync'd. The file stays
bounded: once it is more than ``COMPACT_FACTOR`` times the size the live offsets need
(and over ``COMPACT_MIN_BYTES``), it is rewritten with one frame per group through a
temporary file, fsync and rename (``kraft_server/log/files.atomic_write``).
"""
from __future__ import annotations

import logging
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from kraft_server.log.files import atomic_write, fsync_dir

log = logging.getLogger(__name__)

FILE_NAME = "kraft-group-offsets.log"
COMPACT_FACTOR = 4
COMPACT_MIN_BYTES = 1 << 20
_FRAME_HEAD = struct.Struct(">II")
_ENTRY = struct.Struct(">iqi")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_MAX_FRAME = 64 << 20  # a longer length field is garbage: treat as a torn tail


@dataclass(frozen=True)
class CommittedOffset:
    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""
    commit_timestamp: int = -1


class CorruptFrame(ValueError):
    pass


def _str16(value: str) -> bytes:
    raw = value.encode()
    return _U16.pack(len(raw)) + raw


def _str32(value: str) -> bytes:
    raw = value.encode()
    return _I32.pack(len(raw)) + raw


SET, DELETE = b"\x00", b"\x01"
_GONE = CommittedOffset(-1)


def encode_frame(group: str, entries: dict[tuple[str, int], CommittedOffset], kind: bytes = SET) -> bytes:
    parts = [kind, _str32(group), _U16.pack(len(entries))]
    for (topic, partition), c in entries.items():
        parts.append(_str16(topic))
        parts.append(_ENTRY.pack(partition, c.offset, c.leader_epoch))
        if c.metadata is None:
            parts.append(_I32.pack(-1))
        else:
            raw = c.metadata.encode()
            parts.append(_I32.pack(len(raw)) + raw)
        parts.append(_I64.pack(c.commit_timestamp))
    payload = b"".join(parts)
    return _FRAME_HEAD.pack(len(payload), zlib.crc32(payload)) + payload


class _Reader:
    def __init__(self, buf: bytes):
        self.buf, self.pos = buf, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.buf):
            raise CorruptFrame("entry runs past its frame")
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, st: struct.Struct):
        return st.unpack(self.take(st.size))

    def str16(self) -> str:
        return self.take(self.unpack(_U16)[0]).decode()


def decode_payload(payload: bytes) -> tuple[bytes, str, dict[tuple[str, int], CommittedOffset]]:
    r = _Reader(payload)
    kind = r.take(1)
    if kind not in (SET, DELETE):
        raise CorruptFrame("unknown frame kind")
    group = r.take(r.unpack(_I32)[0]).decode()
    entries = {}
    for _ in range(r.unpack(_U16)[0]):
        topic = r.str16()
        partition, offset, epoch = r.unpack(_ENTRY)
        size = r.unpack(_I32)[0]
        metadata = None if size == -1 else r.take(size).decode()
        entries[(topic, partition)] = CommittedOffset(offset, epoch, metadata, r.unpack(_I64)[0])
    if r.pos != len(payload):
        raise CorruptFrame("trailing bytes in a frame")
    return kind, group, entries


def read_frames(data: bytes) -> tuple[list[tuple[bytes, str, dict]], int]:
    """The frames of a file's bytes, and the length of its valid prefix."""
    frames, pos = [], 0
    while pos + _FRAME_HEAD.size <= len(data):
        length, crc = _FRAME_HEAD.unpack_from(data, pos)
        end = pos + _FRAME_HEAD.size + length
        if length > _MAX_FRAME or end > len(data):
            break
        payload = data[pos + _FRAME_HEAD.size:end]
        if zlib.crc32(payload) != crc:
            break
        try:
            frames.append(decode_payload(payload))
        except (CorruptFrame, UnicodeDecodeError):
            break
        pos = end
    return frames, pos


class OffsetStore:
    """``{group: {(topic, partition): CommittedOffset}}`` backed by the frame file."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.path = Path(directory) / FILE_NAME
        self.offsets: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
        self._live_bytes = 0
        self._file_bytes = 0
        self._load()
        existed = self.path.exists()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        if not existed:
            fsync_dir(self.path.parent)  # the new file's entry survives a crash too

    def _load(self) -> None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        frames, valid = read_frames(data)
        for kind, group, entries in frames:
            self._apply(kind, group, entries)
        if valid < len(data):
            log.warning("%s: truncating a torn tail of %d bytes at byte %d",
                        self.path, len(data) - valid, valid)
            with open(self.path, "r+b") as f:
                f.truncate(valid)
                f.flush()
                os.fsync(f.fileno())
        self._file_bytes = valid
        self._live_bytes = sum(len(encode_frame(g, e)) for g, e in self.offsets.items())

    def groups(self) -> list[str]:
        return sorted(self.offsets)

    def get(self, group: str) -> dict[tuple[str, int], CommittedOffset]:
        return self.offsets.get(group, {})

    def _apply(self, kind: bytes, group: str, entries) -> None:
        if kind == SET:
            self.offsets.setdefault(group, {}).update(entries)
            return
        current = self.offsets.get(group, {})
        for key in entries:
            current.pop(key, None)
        if not current:
            self.offsets.pop(group, None)

    def commit(self, group: str, entries: dict[tuple[str, int], CommittedOffset]) -> None:
        """Append and fsync; the offsets are visible only once durable. Raises OSError."""
        self._append(SET, group, entries)

    def delete(self, group: str, partitions=None) -> None:
        """Forget ``partitions`` (all when None) of ``group``, durably. Raises OSError."""
        keys = list(self.get(group)) if partitions is None else list(partitions)
        if keys:
            self._append(DELETE, group, {k: _GONE for k in keys})

    def _append(self, kind: bytes, group: str, entries) -> None:
        frame = encode_frame(group, entries, kind)
        view = memoryview(frame)
        try:
            while view:
                view = view[os.write(self._fd, view):]
            os.fsync(self._fd)
        except OSError:
            self._reopen_at(self._file_bytes)  # drop a partial frame before the next commit
            raise
        self._file_bytes += len(frame)
        before = self.offsets.get(group)
        old_size = len(encode_frame(group, before)) if before else 0
        self._apply(kind, group, entries)
        after = self.offsets.get(group)
        self._live_bytes += (len(encode_frame(group, after)) if after else 0) - old_size
        if self._file_bytes > max(COMPACT_MIN_BYTES, COMPACT_FACTOR * self._live_bytes):
            self.compact()

    def compact(self) -> None:
        """Rewrite the file with one frame per group (durably, atomically)."""
        data = b"".join(encode_frame(g, e) for g, e in sorted(self.offsets.items()))
        os.close(self._fd)
        atomic_write(self.path, data)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        self._file_bytes = self._live_bytes = len(data)
        log.info("%s compacted to %d bytes", self.path, len(data))

    def _reopen_at(self, size: int) -> None:
        os.close(self._fd)
        with open(self.path, "r+b") as f:
            f.truncate(size)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


