"""Checked disk I/O for the metadata log directory.

Every write goes through ``write_at``/``write_all`` (a short write is continued, an
error raised where it happens) and every fsync through ``fsync``. A failure becomes
``LogDirFailure``, naming the path, what was being done and the OS's cause. The node
treats it as Kafka treats a metadata log directory failure: it stops at once
(fail-stop), so nothing written after the failure is ever acknowledged. After a failed
fsync the kernel may already have dropped the dirty pages, so it is never retried.
"""
from __future__ import annotations

import errno
import os


class LogDirFailure(Exception):
    def __init__(self, path, action: str, cause: OSError):
        super().__init__(path, action, cause)
        self.path, self.action, self.cause = str(path), action, cause

    @property
    def disk_full(self) -> bool:
        return self.cause.errno in (errno.ENOSPC, errno.EDQUOT)

    def __str__(self) -> str:
        name = errno.errorcode.get(self.cause.errno, "?")
        return f"{self.action} {self.path} failed: {self.cause.strerror or self.cause} ({name})"


class LogCorruption(RuntimeError):
    """Data the node wrote and fsync'd changed on disk, and it cannot start without it:
    a one-line message and the file at fault (``path``). Found at start-up
    (``index_seal.py``, ``file_log.py``); the entry point prints it."""

    def __init__(self, message: str, path) -> None:
        super().__init__(message)
        self.path = path


def write_at(fd: int, data, offset: int, path, action: str = "write") -> None:
    """All of ``data`` at ``offset`` (pwrite, continued after a short write)."""
    view, pos = memoryview(data), offset
    try:
        while view:
            n = os.pwrite(fd, view, pos)
            if n <= 0:
                raise OSError(errno.EIO, "the write made no progress")
            view, pos = view[n:], pos + n
    except OSError as exc:
        raise LogDirFailure(path, action, exc) from exc


def write_all(fd: int, data, path, action: str = "write") -> None:
    """All of ``data`` at the file position (write, continued after a short write)."""
    view = memoryview(data)
    try:
        while view:
            n = os.write(fd, view)
            if n <= 0:
                raise OSError(errno.EIO, "the write made no progress")
            view = view[n:]
    except OSError as exc:
        raise LogDirFailure(path, action, exc) from exc


def fsync(fd: int, path) -> None:
    try:
        os.fsync(fd)
    except OSError as exc:
        raise LogDirFailure(path, "fsync", exc) from exc


def truncate(fd: int, size: int, path) -> None:
    try:
        os.ftruncate(fd, size)
    except OSError as exc:
        raise LogDirFailure(path, f"truncate to {size} bytes", exc) from exc
