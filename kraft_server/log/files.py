"""Durable file operations: the only way ``kraft_server/log`` replaces a file.

Kafka's pattern (``Utils.atomicMoveWithFallback``, ``FileQuorumStateStore``,
``CheckpointFile``, ``PropertiesUtils.writePropertiesFile``): write ``<name>.tmp``,
fsync it, rename it over the target, fsync the directory so the rename itself
survives a crash. On return the new content survives kill -9 and power loss.
"""
from __future__ import annotations

import os
from pathlib import Path

from . import disk


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """fsync a directory so that entries created, renamed or removed in it are durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        disk.fsync(fd, path)
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike[str], data: bytes, *, tmp_suffix: str = ".tmp") -> None:
    """Replace ``path`` with ``data`` durably: tmp file, fsync, rename, fsync dir."""
    path = Path(path)
    tmp = path.with_name(path.name + tmp_suffix)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        disk.write_all(fd, data, tmp)
        disk.fsync(fd, tmp)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def fsync_file(path: str | os.PathLike[str]) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        disk.fsync(fd, path)
    finally:
        os.close(fd)
