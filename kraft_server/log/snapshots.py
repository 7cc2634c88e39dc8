"""Snapshot files (KIP-630): ``<end offset:020>-<epoch:010>.checkpoint``.

Kafka's ``Snapshots`` / ``FileRawSnapshotWriter`` conventions, followed here:

* a snapshot is written to a temporary ``<id>-<random>.checkpoint.part`` (created
  ``0600`` like ``Files.createTempFile``); ``freeze`` fsyncs it, renames it to
  ``<id>.checkpoint`` and makes it read-only (so ``0400``), then fsyncs the dir;
* a deleted snapshot is first renamed ``<id>.checkpoint.deleted``, then removed;
* leftover ``.part`` and ``.deleted`` files are removed on start-up;
* ``00000000000000000000-0000000000.checkpoint`` is the bootstrap checkpoint that
  ``kraft-storage format`` writes for dynamic quorums (``BOOTSTRAP_SNAPSHOT_ID``).
"""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from kraft_server.common.values import OffsetAndEpoch

from . import disk
from .files import fsync_dir

SUFFIX = ".checkpoint"
PARTIAL_SUFFIX = ".checkpoint.part"
DELETED_SUFFIX = ".checkpoint.deleted"
BOOTSTRAP_SNAPSHOT_ID = OffsetAndEpoch(0, 0)
_NAME = re.compile(r"^(\d{20})-(\d{10})(\.checkpoint(?:\.deleted)?|-.*\.checkpoint\.part)$")


def snapshot_name(snapshot_id: OffsetAndEpoch) -> str:
    return f"{snapshot_id.offset:020d}-{snapshot_id.epoch:010d}{SUFFIX}"


def snapshot_path(directory: Path, snapshot_id: OffsetAndEpoch) -> Path:
    return directory / snapshot_name(snapshot_id)


def read_snapshot_bytes(directory: Path, snapshot_id: OffsetAndEpoch, position: int, max_bytes: int) -> bytes:
    """Up to ``max_bytes`` of a snapshot file from ``position`` (FetchSnapshot's slices)."""
    with open(snapshot_path(directory, snapshot_id), "rb") as f:
        f.seek(position)
        return f.read(max_bytes)


def snapshot_file_size(directory: Path, snapshot_id: OffsetAndEpoch) -> int:
    return snapshot_path(directory, snapshot_id).stat().st_size


def parse_snapshot_name(name: str) -> tuple[OffsetAndEpoch, str] | None:
    """``(id, kind)`` with kind ``"frozen"``, ``"partial"`` or ``"deleted"``."""
    m = _NAME.match(name)
    if not m:
        return None
    kind = "frozen" if m.group(3) == SUFFIX else "deleted" if m.group(3) == DELETED_SUFFIX else "partial"
    return OffsetAndEpoch(int(m.group(1)), int(m.group(2))), kind


def scan_snapshots(directory: Path, *, clean: bool = True) -> list[OffsetAndEpoch]:
    """The frozen snapshots, oldest first; partial and deleted leftovers are removed."""
    found: list[OffsetAndEpoch] = []
    removed = False
    for entry in os.scandir(directory):
        parsed = parse_snapshot_name(entry.name)
        if parsed is None:
            continue
        snapshot_id, kind = parsed
        if kind == "frozen":
            found.append(snapshot_id)
        elif clean:
            os.unlink(entry.path)
            removed = True
    if removed:
        fsync_dir(directory)
    return sorted(found)


def delete_snapshot(directory: Path, snapshot_id: OffsetAndEpoch) -> None:
    path = snapshot_path(directory, snapshot_id)
    deleted = path.with_name(path.name + ".deleted")
    try:
        os.replace(path, deleted)
    except FileNotFoundError:
        return
    os.unlink(deleted)
    fsync_dir(directory)


class FileSnapshotWriter:
    """``SnapshotWriter`` over a ``.part`` file; ``freeze`` publishes it."""

    def __init__(self, directory: Path, snapshot_id: OffsetAndEpoch, on_freeze=None) -> None:
        self.directory = directory
        self.snapshot_id = snapshot_id
        stem = snapshot_name(snapshot_id)[: -len(SUFFIX)]
        self.fd, name = tempfile.mkstemp(prefix=stem + "-", suffix=PARTIAL_SUFFIX, dir=directory)
        self.part_path = Path(name)
        self.size = 0
        self.frozen = False
        self._on_freeze = on_freeze

    def append(self, data: bytes) -> None:
        if self.fd < 0:
            raise ValueError(f"snapshot {self.snapshot_id} is already frozen or aborted")
        disk.write_all(self.fd, data, self.part_path, "write snapshot")
        self.size += len(data)

    def freeze(self) -> None:
        if self.fd < 0:
            raise ValueError(f"snapshot {self.snapshot_id} is already frozen or aborted")
        disk.fsync(self.fd, self.part_path)
        os.close(self.fd)
        self.fd = -1
        final = snapshot_path(self.directory, self.snapshot_id)
        os.replace(self.part_path, final)
        os.chmod(final, os.stat(final).st_mode & ~0o222)  # File.setReadOnly()
        fsync_dir(self.directory)
        self.frozen = True
        if self._on_freeze is not None:
            self._on_freeze(self.snapshot_id)

    def abort(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
            self.part_path.unlink(missing_ok=True)

    def __enter__(self) -> "FileSnapshotWriter":
        return self

    def __exit__(self, exc_type, *rest) -> None:
        if not self.frozen:
            self.abort()
