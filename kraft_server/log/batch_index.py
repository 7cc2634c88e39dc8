"""A segment's batch index: ``%020d.batchindex`` beside its ``.log``, so that start-up
need not read every batch of a long log again (issue 12 item 7).

One 40-byte entry a batch, in log order, for batches already fsync'd: position,
next offset, the segment's max timestamp up to this batch (int64 each), partition leader epoch (int32), the
batch's CRC-32C (uint32) and attributes (int16, then 6 bytes of padding),
little-endian. Entries are appended after each flush
(the segment data is durable first); truncating the segment truncates the index.
The file is advisory and never fsync'd on its own: at start-up it is trusted only if
its entries start at position 0, it holds no zero-filled stretch (what a power loss
can leave of an appended file) and its last entry still describes a whole batch of
the segment (same next offset, epoch and CRC, the CRC checked over the bytes).
Otherwise the segment is scanned from its start as before and the index rewritten.
A Kafka controller opening the directory ignores the file (``LogLoader`` only looks
at ``.log`` and index suffixes it knows).
"""
from __future__ import annotations

import os
import struct
from array import array
from pathlib import Path

from wire.exceptions import DecodeError
from wire.records.header import HEADER_SIZE, crc_matches, read_header

SUFFIX = ".batchindex"
# position, next offset, max timestamp so far, epoch, crc, attributes (+ padding to 8n bytes)
ENTRY = struct.Struct("<qqqiIh6x")
ENTRY_SIZE = ENTRY.size  # 40
_WORDS = ENTRY_SIZE // 8
CONTROL_MASK = 0x20


def entry(position: int, header, max_timestamp: int) -> bytes:
    return ENTRY.pack(position, header.next_offset, max_timestamp,
                      header.partition_leader_epoch, header.crc, header.attributes)


class Loaded:
    """What a valid index says about the segment's first ``count`` batches. Columns
    are taken with array slices (C loops), not a Python pass over the entries."""

    def __init__(self, data: bytes):
        count = len(data) // ENTRY_SIZE
        data = data[:count * ENTRY_SIZE]
        words = array("q")
        words.frombytes(data)
        self.count = count
        self.positions = words[0::_WORDS]
        self.next_offsets = words[1::_WORDS]
        view = memoryview(data)
        self.epochs = view.cast("i")[6::2 * _WORDS]  # the int32 at byte 24 of each entry
        self.controls = _controls(view.cast("h")[16::4 * _WORDS])  # the int16 at byte 32
        last = ENTRY.unpack_from(data, (count - 1) * ENTRY_SIZE) if count else (0, 0, -1, None, None, 0)
        self.max_timestamp, self.last_epoch, self.last_crc = last[2], last[3], last[4]


# Byte -> 1 if it has the control bit: marks control batches in C (bytes.translate).
_IS_CONTROL = bytes(1 if b & CONTROL_MASK else 0 for b in range(256))


def _controls(attributes) -> array:
    """Indexes of the control batches: the attributes' low bytes marked in C and the
    marks searched (control batches are few), not a Python pass over every batch."""
    marks = attributes.tobytes()[0::2].translate(_IS_CONTROL)  # little-endian: low byte first
    found = array("q")
    i = marks.find(1)
    while i >= 0:
        found.append(i)
        i = marks.find(1, i + 1)
    return found


def load(path: Path, fd: int, size: int) -> tuple[Loaded | None, int]:
    """The index at ``path`` if it matches the segment (``fd``, ``size`` bytes), and
    where the indexed batches end in the segment (0 when there is no usable index)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None, 0
    if data.find(bytes(ENTRY_SIZE), ENTRY_SIZE) >= 0:
        # A zero-filled page (file size made durable before its data, after a power
        # loss): a real entry is never all zeros (next offset and CRC), nor are two
        # entries' neighbouring bytes, so 40 zero bytes past the first entry mean damage.
        return None, 0
    index = Loaded(data)
    if not index.count or index.positions[0] != 0:
        return None, 0
    pos = index.positions[-1]
    if pos + HEADER_SIZE > size:
        return None, 0
    try:
        header = read_header(os.pread(fd, HEADER_SIZE, pos))
    except DecodeError:
        return None, 0
    end = pos + header.size
    if (end > size or header.next_offset != index.next_offsets[-1] or header.crc != index.last_crc
            or header.partition_leader_epoch != index.last_epoch
            or not crc_matches(os.pread(fd, header.size, pos), 0, header)):
        return None, 0
    return index, end


class Writer:
    """Appends entries of flushed batches; truncates with the segment."""

    def __init__(self, path: Path, entries: int):
        self.path = path
        self.entries = entries  # entries in the file
        self.pending = bytearray()  # entries of batches not yet flushed

    def add(self, position: int, header, max_timestamp: int) -> None:
        self.pending += entry(position, header, max_timestamp)

    def flushed(self) -> None:
        """The segment was fsync'd: its pending entries may go to the file."""
        if not self.pending:
            return
        with open(self.path, "ab") as f:
            f.write(self.pending)
        self.entries += len(self.pending) // ENTRY_SIZE
        self.pending = bytearray()

    def rewrite(self, entries: bytes) -> None:
        """Replace the file (after a full scan) with ``entries`` of durable batches."""
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_bytes(entries)
        os.replace(tmp, self.path)
        self.entries, self.pending = len(entries) // ENTRY_SIZE, bytearray()

    def max_timestamp_at(self, i: int) -> int | None:
        """The segment's max timestamp up to batch ``i`` (None if not at hand)."""
        if i < 0:
            return -1
        try:
            if i < self.entries:
                with open(self.path, "rb") as f:
                    f.seek(i * ENTRY_SIZE)
                    raw = f.read(ENTRY_SIZE)
            else:
                at = (i - self.entries) * ENTRY_SIZE
                raw = bytes(self.pending[at:at + ENTRY_SIZE])
            return ENTRY.unpack(raw)[2]
        except (OSError, struct.error):
            return None

    def truncate(self, batches: int) -> None:
        """Keep the entries of the first ``batches`` batches."""
        if batches < self.entries:
            if self.path.exists():
                os.truncate(self.path, batches * ENTRY_SIZE)
            self.entries = batches
            self.pending = bytearray()
        else:
            del self.pending[(batches - self.entries) * ENTRY_SIZE:]

    def delete(self) -> None:
        self.path.unlink(missing_ok=True)
        self.entries, self.pending = 0, bytearray()
