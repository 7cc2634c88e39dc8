"""A segment's batch index, so that start-up need not read every batch of a long log
again (issue 12 item 7). Four files beside the segment's ``.log``, little-endian:

* ``%020d.batchpos`` and ``%020d.batchnext``: a 16-byte header (magic, version,
  column), then one int64 a batch: where it starts, and the offset after it. These
  are the segment's in-memory columns byte for byte: at start-up they are mapped
  and read in place (``column.py``: nothing copied, no per-batch work), searched
  for zero words only when written under an earlier boot (``boot_mark.py``).
* ``%020d.batchcheck``: one 16-byte entry a batch: the segment's max timestamp up to
  this batch (int64), the batch's CRC-32C and how many marks exist up to and
  including it (uint32 each). Only its last entry is read at start-up (and one entry
  when the segment is truncated).
* ``%020d.batchmarks``: what changes rarely, 16 bytes a mark: batch index (int64),
  partition leader epoch (int32), kinds (uint32: 1 control batch, 2 first batch of a
  new epoch run). The first batch of a segment always starts a run.

Entries are appended after each flush (the segment data is durable first), then a
seal (``index_seal.py``: running CRC-32Cs of the flushed bytes and of these files);
truncating the segment truncates the files. They are advisory and never fsync'd on their own:
at start-up they are trusted only if the headers are ours, the entries start at
position 0, the two columns hold no zero-filled word (what a power loss can leave
of an appended file: a real position after the first and a next offset are never
0; searched after a reboot only, see ``boot_mark.py``), the marks that the last check entry counts are all there and well formed, and
the last entry still describes a whole batch of the segment (same next offset,
epoch and CRC, the CRC checked over the bytes), and the last intact seal vouches for
the files and the segment's bytes up to it (only the batches it covers are used).
Otherwise the segment is scanned from its start and the files rewritten; but when
the seal vouches for the files and not for the bytes, ``damaged_end`` says so and
the segment refuses to start (``segments.py``). The files may hold different counts of
entries (each is appended on its own): the smallest count is used and the rest cut
off. ``.batchindex`` (the 40-byte format of
earlier versions) is deleted when a segment is opened, never read. A Kafka
controller opening the directory ignores these files (``LogLoader`` only looks at
``.log`` and index suffixes it knows).
"""
from __future__ import annotations

import bisect
import mmap
import os
import struct
from array import array
from pathlib import Path

from wire.exceptions import DecodeError
from wire.records.header import HEADER_SIZE, crc_matches, read_header

from wire.records.crc import crc32c

from . import disk, index_seal
from .column import Column

SUFFIX = ".batchpos"
NEXT_SUFFIX = ".batchnext"
CHECK_SUFFIX = ".batchcheck"
MARKS_SUFFIX = ".batchmarks"
OLD_SUFFIX = ".batchindex"  # the 40-byte format: deleted on open, rebuilt by a scan

SUFFIXES = (SUFFIX, NEXT_SUFFIX, CHECK_SUFFIX, MARKS_SUFFIX, index_seal.SEAL_SUFFIX)

HEADER = struct.Struct("<8sII")  # magic, version, column
MAGIC, VERSION = b"KRBATCHX", 1
POSITIONS_HEADER = HEADER.pack(MAGIC, VERSION, 1)
NEXT_HEADER = HEADER.pack(MAGIC, VERSION, 2)
WORD = struct.Struct("<q")  # a position or a next offset
ENTRY_SIZE = 2 * WORD.size  # bytes read at start-up a batch
CHECK = struct.Struct("<qII")  # max timestamp so far, CRC, marks so far
MARK = struct.Struct("<qiI")  # batch index, epoch, kinds
CONTROL, EPOCH_START = 1, 2
CONTROL_MASK = 0x20
_ZERO_WORD = bytes(8)


class Loaded:
    """What a valid index says about the segment's first ``count`` batches."""

    def __init__(self, count: int, positions: Column, next_offsets: Column, marks: list,
                 max_timestamp: int, seal: index_seal.Seal):
        self.count = count
        self.seal = seal
        self.positions = positions
        self.next_offsets = next_offsets
        self.marks = marks  # [(batch index, epoch, kinds)]
        self.controls = array("q", [i for i, _, kinds in marks if kinds & CONTROL])
        self.epoch_starts = [(i, epoch) for i, epoch, kinds in marks if kinds & EPOCH_START]
        self.max_timestamp = max_timestamp


def _zero_word(data, start: int, end: int) -> bool:
    """Whether a word of 8 zero bytes, aligned on ``start``, lies in ``data[start:end]``
    (searched in C; unaligned runs of zeros are skipped)."""
    i = data.find(_ZERO_WORD, start, end)
    while i >= 0:
        if (i - start) % 8 == 0:
            return True
        i = data.find(_ZERO_WORD, i + 1, end)
    return False


def _column(path: Path, header: bytes, count: int, check_from: int | None, crc: int) -> Column | None:
    """The first ``count`` words after ``header`` in ``path``, mapped (``column.py``),
    if their CRC-32C is ``crc`` and none at or past word ``check_from`` is a zero
    word (None: not searched)."""
    length = HEADER.size + count * WORD.size
    try:
        with open(path, "rb", buffering=0) as f:
            if os.fstat(f.fileno()).st_size < length:
                return None
            mapped = mmap.mmap(f.fileno(), length, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
    except (OSError, ValueError):
        return None
    if mapped[:HEADER.size] != header or (
            check_from is not None and _zero_word(mapped, HEADER.size + check_from * WORD.size, length)):
        mapped.close()
        return None
    with memoryview(mapped) as whole:
        if crc32c(whole[HEADER.size:]) != crc:
            whole.release()
            mapped.close()
            return None
        return Column(mapped, whole[HEADER.size:].cast("q"))


def _words(path: Path) -> int:
    """Whole words after the header in a column file (a torn last word left out)."""
    try:
        return (os.stat(path).st_size - HEADER.size) // WORD.size
    except OSError:
        return 0


def _read(path: Path) -> bytes | None:
    try:
        with open(path, "rb", buffering=0) as f:
            return f.read()
    except OSError:
        return None


def _read_marks(path: Path, needed: int, count: int, crc: int) -> list | None:
    """The first ``needed`` marks if they are there, their CRC-32C is ``crc``, and they
    are well formed (ascending batch indexes below ``count``, the first one starting
    an epoch run at batch 0)."""
    data = _read(path)
    if data is None or len(data) < needed * MARK.size or crc32c(data[:needed * MARK.size]) != crc:
        return None
    marks = list(MARK.iter_unpack(data[:needed * MARK.size]))
    previous = -1
    for i, _, kinds in marks:
        if not 0 < kinds <= CONTROL | EPOCH_START or not previous < i < count:
            return None
        previous = i
    if not marks or marks[0][0] != 0 or not marks[0][2] & EPOCH_START:
        return None
    return marks


def load(index: "Writer", fd: int, size: int, checked: bool = False) -> tuple[Loaded | None, int]:
    """The index of ``index``'s files if it matches the segment (``fd``, ``size``
    bytes), and where the indexed batches end in the segment (0 when not usable).
    ``checked``: the files were written or checked whole under the current boot
    (``boot_mark.py``), so their columns are not searched for zero words."""
    try:
        check_size = os.stat(index.check_path).st_size
    except OSError:
        return None, 0
    index.damaged_end = 0
    count = min(_words(index.path), _words(index.next_path), check_size // CHECK.size)
    seal = index_seal.last_within(index.seal_path, count) if count > 0 else None
    if seal is None:
        return None, 0
    count = seal.batches
    positions = _column(index.path, POSITIONS_HEADER, count, None if checked else 1,  # the first is 0
                        seal.positions_crc)
    if positions is None:
        return None, 0
    next_offsets = _column(index.next_path, NEXT_HEADER, count, None if checked else 0, seal.next_crc)
    if next_offsets is None:
        positions.release()
        return None, 0
    loaded, end = _check(index, fd, size, seal, positions, next_offsets)
    if loaded is None:
        positions.release()
        next_offsets.release()
    return loaded, end


def _check(index: "Writer", fd: int, size: int, seal: index_seal.Seal, positions: Column,
           next_offsets: Column) -> tuple[Loaded | None, int]:
    """The marks and the last entry against the segment's last indexed batch. The CRC
    of the sealed bytes is for the caller to check (``index_seal.SealCheck``), except
    when the index does not match them: then it says whether the bytes changed
    (``index.damaged_end``) or only the index files did."""
    count = seal.batches
    if positions[0] != 0:
        return None, 0
    marks = _read_marks(index.marks_path, seal.marks, count, seal.marks_crc)
    if marks is None:
        return None, 0
    try:
        with open(index.check_path, "rb", buffering=0) as f:
            max_timestamp, crc, mark_count = CHECK.unpack(os.pread(f.fileno(), CHECK.size,
                                                                   (count - 1) * CHECK.size))
    except (OSError, struct.error):
        return None, 0
    last_epoch = next(e for _, e, kinds in reversed(marks) if kinds & EPOCH_START)
    pos = positions[-1]
    header = None
    if mark_count == seal.marks and 0 <= pos and pos + HEADER_SIZE <= size:
        try:
            header = read_header(os.pread(fd, HEADER_SIZE, pos))
        except DecodeError:
            pass
    if (header is None or pos + header.size != seal.data_end or header.next_offset != next_offsets[-1]
            or header.crc != crc or header.partition_leader_epoch != last_epoch
            or not crc_matches(os.pread(fd, header.size, pos), 0, header)):
        # the seal vouches for the index files: did the bytes it sealed change?
        if size < seal.data_end or index_seal.data_crc(fd, 0, seal.data_end) != seal.data_crc:
            index.damaged_end = seal.data_end
        return None, 0
    return Loaded(count, positions, next_offsets, marks, max_timestamp, seal), seal.data_end


class Writer:
    """Appends the entries of flushed batches; truncates with the segment."""

    def __init__(self, directory: Path, stem: str):
        self.path = directory / (stem + SUFFIX)
        self.next_path = directory / (stem + NEXT_SUFFIX)
        self.check_path = directory / (stem + CHECK_SUFFIX)
        self.marks_path = directory / (stem + MARKS_SUFFIX)
        self.seal_path = directory / (stem + index_seal.SEAL_SUFFIX)
        self.damaged_end = 0  # set by ``load``: sealed bytes that changed end here
        self.old_path = directory / (stem + OLD_SUFFIX)
        self._fds: dict[Path, int] = {}  # kept open while the segment takes appends
        self._reset()

    def _reset(self) -> None:
        self.entries = 0  # batches in the files
        self.marks: list[tuple[int, int, int]] = []  # of the batches in the files or pending
        self.durable_marks = 0  # marks in the marks file
        self.last_epoch = None
        self.seal = index_seal.EMPTY  # the last seal in the seal file
        self._clear_pending()

    def adopt(self, loaded: Loaded) -> None:
        """Continue after a valid ``load``: the files are cut to what it vouched for."""
        self._reset()
        self.entries, self.marks = loaded.count, list(loaded.marks)
        self.durable_marks = len(self.marks)
        self.last_epoch = loaded.epoch_starts[-1][1]
        self._cut_files(loaded.count, len(self.marks))
        self.seal = loaded.seal

    def add(self, header, max_timestamp: int) -> None:
        """A batch appended after the others (its position and next offset are in the
        segment's arrays, which ``flushed`` is given)."""
        epoch, crc, attributes = header[2], header[4], header[5]
        if epoch != self.last_epoch or attributes & CONTROL_MASK:
            self.mark(self.entries + self.pending_count, epoch, attributes)
        self.pending_check += CHECK.pack(max_timestamp, crc, len(self.marks))
        self.pending_count += 1

    def mark(self, i: int, epoch: int, attributes: int) -> None:
        """Batch ``i`` is a control batch or starts a run of ``epoch`` (its check
        entry, added next, counts this mark)."""
        kinds = CONTROL if attributes & CONTROL_MASK else 0
        if epoch != self.last_epoch:
            kinds |= EPOCH_START
            self.last_epoch = epoch
        self.marks.append((i, epoch, kinds))

    def flushed(self, positions: array, next_offsets: array, fd: int, data_end: int) -> None:
        """The segment (``fd``, ``data_end`` bytes) was fsync'd: the entries of its
        batches past ``entries`` (in its ``positions`` and ``next_offsets``) may go to
        the files, marks first, the positions next and the seal last (also after a
        truncation left entries past the last seal kept)."""
        if self.pending_count:
            fresh = self.entries == 0
            new_marks = self.marks[self.durable_marks:]
            if new_marks or fresh:
                self._append(self.marks_path, b"".join(MARK.pack(*m) for m in new_marks), fresh)
            self._append(self.check_path, self.pending_check, fresh)
            start, end = self.entries, self.entries + self.pending_count
            for path, column, header in ((self.next_path, next_offsets, NEXT_HEADER),
                                         (self.path, positions, POSITIONS_HEADER)):
                words = column[start:end].tobytes()
                self._append(path, header + words if fresh else words, fresh)
            self.entries = end
            self.durable_marks = len(self.marks)
            self._clear_pending()
        sealed, end, marks = self.seal, self.entries, self.marks
        if sealed.batches < end:
            seal = index_seal.extend(
                sealed, fd, end, data_end, positions[sealed.batches:end].tobytes(),
                next_offsets[sealed.batches:end].tobytes(), len(marks),
                b"".join(MARK.pack(*m) for m in marks[sealed.marks:]))
            if seal is not None:
                self.seal = seal
                self._append(self.seal_path, seal.pack(), sealed.batches == 0)

    def _append(self, path: Path, data, fresh: bool) -> None:
        """Append ``data`` to ``path`` (emptied first if ``fresh``) on a kept-open fd."""
        fd = self._fds.get(path)
        if fd is None:
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if fresh else 0)
            fd = self._fds[path] = os.open(path, flags, 0o644)
        elif fresh:
            disk.truncate(fd, 0, path)
        disk.write_all(fd, data, path, "append to")

    def close(self) -> None:
        """Close the kept-open files (the segment takes no more appends)."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def _clear_pending(self) -> None:
        """Forget the entries of batches not yet flushed."""
        self.pending_check = bytearray()
        self.pending_count = 0

    def max_timestamp_at(self, i: int) -> int | None:
        """The segment's max timestamp up to batch ``i`` (None if not at hand)."""
        if i < 0:
            return -1
        try:
            if i < self.entries:
                with open(self.check_path, "rb", buffering=0) as f:
                    raw = os.pread(f.fileno(), CHECK.size, i * CHECK.size)
            else:
                at = (i - self.entries) * CHECK.size
                raw = bytes(self.pending_check[at:at + CHECK.size])
            max_timestamp, _, mark_count = CHECK.unpack(raw)
        except (OSError, struct.error):
            return None
        return max_timestamp if mark_count else None  # 0 marks: a zero-filled entry

    def truncate(self, batches: int) -> None:
        """Keep the entries of the first ``batches`` batches."""
        kept = bisect.bisect_left(self.marks, (batches,))
        del self.marks[kept:]
        self.durable_marks = min(self.durable_marks, kept)
        self.last_epoch = next((e for _, e, kinds in reversed(self.marks) if kinds & EPOCH_START), None)
        if batches < self.entries:
            self.entries = batches
            self._clear_pending()
            self._cut_files(batches, self.durable_marks)
        else:
            self.pending_count = batches - self.entries
            del self.pending_check[self.pending_count * CHECK.size:]

    def _cut_files(self, batches: int, marks: int) -> None:
        self.seal = index_seal.cut(self.seal_path, batches)
        column = HEADER.size + batches * WORD.size if batches else 0
        for path, size in ((self.path, column), (self.next_path, column),
                           (self.check_path, batches * CHECK.size),
                           (self.marks_path, marks * MARK.size)):
            try:
                if os.stat(path).st_size > size:
                    os.truncate(path, size)
            except FileNotFoundError:
                pass

    def delete(self) -> None:
        self.close()
        for path in (self.path, self.next_path, self.check_path, self.marks_path, self.seal_path,
                     self.old_path):
            path.unlink(missing_ok=True)
        self._reset()
