"""Disk faults at the log's writes (issue 27): a short write is continued, a full disk
(ENOSPC) or a failing fsync (EIO) raises ``LogDirFailure`` where it happens, naming
the path and the cause, and a failed append leaves no part of its batch on disk."""
from __future__ import annotations

import errno
import os

import pytest

from kraft_server.log import disk
from kraft_server.log.disk import LogDirFailure
from kraft_server.log.file_log import FileReplicatedLog
from wire.records import data_batch, frame_metadata_record

PART = "__cluster_metadata-0"


def batch(offset: int, epoch: int = 1, size: int = 300) -> bytes:
    return data_batch(offset, epoch, 1_000 + offset, [frame_metadata_record(0, 0, b"x" * size)] * 3)


def _short_then(monkeypatch, fail_errno: int | None, keep: int = 7):
    """os.pwrite that writes ``keep`` bytes, then fails with ``fail_errno`` (or goes on)."""
    real = os.pwrite
    calls = []

    def pwrite(fd, data, offset):
        calls.append(len(data))
        if len(calls) == 1:
            return real(fd, bytes(data)[:keep], offset)
        if fail_errno is not None:
            raise OSError(fail_errno, os.strerror(fail_errno))
        return real(fd, data, offset)
    monkeypatch.setattr(os, "pwrite", pwrite)
    return calls


def test_a_short_write_is_continued(tmp_path, monkeypatch):
    with FileReplicatedLog.open(tmp_path) as log:
        log.append(batch(0))
        log.flush()
        calls = _short_then(monkeypatch, None)
        log.append(batch(3))
        log.flush()
        assert len(calls) == 2 and calls[1] == len(batch(3)) - 7
        monkeypatch.undo()
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.end_offset() == 6 and log.recovery_problems == []


def test_a_full_disk_fails_the_append_and_leaves_no_part_of_the_batch(tmp_path, monkeypatch):
    with FileReplicatedLog.open(tmp_path) as log:
        log.append(batch(0))
        log.flush()
        segment = tmp_path / PART / "00000000000000000000.log"
        size = segment.stat().st_size
        _short_then(monkeypatch, errno.ENOSPC)
        with pytest.raises(LogDirFailure) as failure:
            log.append(batch(3))
        monkeypatch.undo()
        assert failure.value.disk_full
        assert str(failure.value) == (f"append to {segment} failed: No space left on device (ENOSPC)")
        assert segment.stat().st_size == size  # the 7 bytes written were cut off
    with FileReplicatedLog.open(tmp_path) as log:  # the restart finds a whole log
        assert log.end_offset() == 3 and log.recovery_problems == []


def test_a_failing_fsync_is_a_log_dir_failure(tmp_path, monkeypatch):
    with FileReplicatedLog.open(tmp_path) as log:
        log.append(batch(0))

        def fsync(fd):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        monkeypatch.setattr(os, "fsync", fsync)
        with pytest.raises(LogDirFailure, match=r"fsync .*00000000000000000000\.log failed: .* \(EIO\)"):
            log.flush()
        monkeypatch.undo()


def test_every_writer_of_the_log_directory_goes_through_the_checked_calls():
    """No raw os.write/pwrite/fsync is left in kraft_server/log but disk.py's (and the boot
    mark's and the high-watermark hint's: best-effort hints whose failure only costs a check
    at the next open, or a wider loss bound in ``recover``'s plan)."""
    import pathlib
    import re
    root = pathlib.Path(disk.__file__).parent
    raw = re.compile(r"\bos\.(write|pwrite|fsync)\(")
    offenders = [f"{p.name}:{i}" for p in sorted(root.glob("*.py")) if p.name not in ("disk.py", "boot_mark.py", "hwm_hint.py")
                 for i, line in enumerate(p.read_text().splitlines(), 1) if raw.search(line)]
    assert offenders == []
