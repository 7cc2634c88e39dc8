"""Start-up recovery of a segment: keep the longest valid prefix.

A batch is valid when its header parses (magic 2, sane length), it is entirely
present, its CRC-32C matches, and its offsets continue the previous batch's. The
first invalid batch marks a torn or corrupt tail: the segment is cut there and
every later segment is deleted, as Kafka's ``LogLoader`` does after an unclean
shutdown (it recovers the metadata log from its start). Each batch is read once,
in chunks of one batch, so a large segment never sits in memory whole.
"""
from __future__ import annotations

import logging
import os

from wire.exceptions import DecodeError
from wire.records.header import HEADER_SIZE, BatchHeader, crc_matches, read_header

from .disk import LogCorruption

log = logging.getLogger(__name__)


def sealed_bytes_changed(path, end: int, problem: str | None) -> LogCorruption:
    """The start-up error for a segment whose fsync'd bytes before ``end`` changed
    (``problem``: the first bad batch a scan found there, if any)."""
    where = problem or "a field that batch CRCs do not cover (base offset, length or leader epoch) changed"
    return LogCorruption(
        f"Segment {os.path.basename(path)} changed below position {end}, which was fsync'd and may hold "
        f"committed records ({where}): refusing to start (restore the file, or remove this voter, "
        "empty its metadata.log.dir and add it again)", path)


def first_problem(path, base_offset: int, end: int) -> str | None:
    """What a scan of the segment's first ``end`` bytes finds wrong, or None."""
    fd = os.open(path, os.O_RDONLY)
    try:
        _, valid, problem = scan_segment(fd, min(end, os.fstat(fd).st_size), base_offset)
    finally:
        os.close(fd)
    return problem if problem is not None else (
        None if valid >= end else f"the segment ends at position {valid}")


def file_problem(path) -> str | None:
    """Why a snapshot file is not whole (a batch that does not parse, is cut short or
    fails its CRC-32C), or None."""
    fd = os.open(path, os.O_RDONLY)
    try:
        _, valid, problem = scan_segment(fd, os.fstat(fd).st_size, None)
    finally:
        os.close(fd)
    return problem if problem or valid else "no batch"


def scan_segment(fd: int, size: int, expected_offset: int | None) -> tuple[list[tuple[int, BatchHeader]], int, str | None]:
    """Return ``(headers, valid_bytes, problem)``: the valid batches with their
    positions, where the valid prefix ends, and why it stopped early (or None)."""
    headers: list[tuple[int, BatchHeader]] = []
    pos = 0
    next_offset = expected_offset
    while pos < size:
        raw_header = os.pread(fd, HEADER_SIZE, pos)
        try:
            header = read_header(raw_header)
        except DecodeError as exc:
            return headers, pos, f"bad batch header at position {pos}: {exc}"
        total = header.size
        if pos + total > size:
            return headers, pos, f"truncated batch at position {pos} ({size - pos} of {total} bytes)"
        if not crc_matches(os.pread(fd, total, pos), 0, header):
            return headers, pos, f"CRC mismatch in batch at offset {header.base_offset} (position {pos})"
        if header.last_offset_delta < 0 or (next_offset is not None and header.base_offset != next_offset):
            return headers, pos, f"batch at position {pos} has base offset {header.base_offset}, expected {next_offset}"
        headers.append((pos, header))
        next_offset = header.next_offset
        pos += total
    return headers, pos, None
