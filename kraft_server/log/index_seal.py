"""Seals of a segment's batch index (``%020d.batchseal``): a flipped bit anywhere in a
segment's fsync'd batches or in its batch index is found at start-up without reading
every batch header.

After each flush the index appends one seal: how many batches its files then held,
where their bytes end in the segment, and four running CRC-32Cs (each seal continues
the previous one): of the segment's bytes up to that end, of the ``.batchpos`` and
``.batchnext`` words and of the ``.batchmarks`` entries. The seal ends with the
CRC-32C of its own fields, so a damaged seal is ignored, never believed.

At start-up the index is trusted up to the last intact seal it holds whole:

* the three index CRCs differ: the index files are damaged; the segment is scanned
  and the index rebuilt (nothing is lost);
* they match but the data CRC differs: bytes the node had fsync'd changed. Those
  batches may be committed, and this node may be one of the majority that
  acknowledged them, so they are not truncated: start-up stops (``LogCorruption``).
  The data CRC also covers what a batch's own CRC does not (base offset, length,
  partition leader epoch).

Cost: at flush, a CRC over the bytes just flushed (still in the page cache) and the
new index words; at start-up, one pass of the CRC over the index columns, and one over
the sealed bytes (about 3 GB/s on this machine) in a thread (``SealCheck``: the CRC
releases the GIL) while the node builds its core and binds its listeners; the node
waits for it before its Raft loop takes a step.
"""
from __future__ import annotations

import os
import struct
import threading
from typing import NamedTuple

from wire.records.crc import crc32c

SEAL_SUFFIX = ".batchseal"
FIELDS = struct.Struct("<qqIIIII")  # batches, data end, marks, data, positions, next offsets, marks CRCs
SEAL = struct.Struct("<qqIIIIII")  # the fields and their own CRC-32C
READ_CHUNK = 4 * 1024 * 1024


class Seal(NamedTuple):
    batches: int = 0
    data_end: int = 0
    marks: int = 0
    data_crc: int = 0
    positions_crc: int = 0
    next_crc: int = 0
    marks_crc: int = 0

    def pack(self) -> bytes:
        fields = FIELDS.pack(*self)
        return fields + struct.pack("<I", crc32c(fields))


EMPTY = Seal()


def read_seals(path) -> list[Seal]:
    """The intact seals of ``path`` in order (a damaged or torn one ends the list)."""
    try:
        with open(path, "rb", buffering=0) as f:
            data = f.read()
    except OSError:
        return []
    seals: list[Seal] = []
    for *fields, own in SEAL.iter_unpack(data[:len(data) - len(data) % SEAL.size]):
        if crc32c(FIELDS.pack(*fields)) != own:
            break
        seal = Seal(*fields)
        if seals and (seal.batches < seals[-1].batches or seal.data_end < seals[-1].data_end):
            break
        seals.append(seal)
    return seals


def last_within(path, batches: int) -> Seal | None:
    """The last intact seal covering at most ``batches`` batches (and at least one)."""
    found = None
    for seal in read_seals(path):
        if seal.batches > batches:
            break
        found = seal
    return found if found is not None and found.batches > 0 else None


def data_crc(fd: int, start: int, end: int, crc: int = 0) -> int | None:
    """The running CRC-32C of the segment's bytes ``[start, end)`` (None: the file is shorter)."""
    while start < end:
        chunk = os.pread(fd, min(READ_CHUNK, end - start), start)
        if not chunk:
            return None
        crc = crc32c(chunk, crc)
        start += len(chunk)
    return crc


def extend(seal: Seal, fd: int, batches: int, data_end: int, positions: bytes, next_offsets: bytes,
           marks: int, marks_bytes: bytes) -> Seal | None:
    """The seal after ``seal`` once the index holds ``batches`` batches ending at
    ``data_end``: ``positions``/``next_offsets`` are the column words added since
    ``seal``, ``marks_bytes`` the marks entries added since. None if the segment is
    shorter than ``data_end`` (then nothing is sealed: a wrong seal would stop start-up)."""
    crc = data_crc(fd, seal.data_end, data_end, seal.data_crc)
    if crc is None:
        return None
    return Seal(batches, data_end, marks, crc,
                crc32c(positions, seal.positions_crc), crc32c(next_offsets, seal.next_crc),
                crc32c(marks_bytes, seal.marks_crc))


def cut(path, batches: int) -> Seal:
    """Keep the seals covering at most ``batches`` batches; returns the last one kept."""
    kept = [s for s in read_seals(path) if s.batches <= batches]
    try:
        if os.stat(path).st_size > len(kept) * SEAL.size:
            os.truncate(path, len(kept) * SEAL.size)
    except FileNotFoundError:
        pass
    return kept[-1] if kept else EMPTY


class SealCheck:
    """The sealed bytes of segments checked against their seals in a thread; ``wait``
    returns ``(path, data end)`` of each segment whose bytes changed."""

    def __init__(self, items: list[tuple[object, int, int]]) -> None:
        self.items = items  # (segment path, data end, data CRC)
        self.failed: list[tuple[object, int]] = []
        self._thread = threading.Thread(target=self._run, name="seal-check", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for path, end, crc in self.items:
            try:
                fd = os.open(path, os.O_RDONLY)  # its own descriptor: the segment's may close
                try:
                    got = data_crc(fd, 0, end)
                finally:
                    os.close(fd)
            except OSError:
                got = None
            if got != crc:
                self.failed.append((path, end))

    def wait(self) -> list[tuple[object, int]]:
        self._thread.join()
        return self.failed
