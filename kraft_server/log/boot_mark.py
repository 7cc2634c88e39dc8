"""``batchindex.boot``: the boot id of the machine (Linux's
``/proc/sys/kernel/random/boot_id``, new at every boot) under which every batch
index file of the directory was last written or checked whole.

A zero-filled word in an index file is what a power loss (or an OS crash) can
leave of an append that had not reached the disk; a process killed with kill -9
cannot: what it wrote stays in the page cache, which every later read sees. So
while the machine has not rebooted since the files were written or checked, the
search for zero words (a read of every entry) proves nothing and is skipped; after
a reboot (another id, or no mark) the files are checked whole once, then marked.

The mark is written after the open that checked or rebuilt the files, and never
fsync'd: lost, it only costs one more check; torn or left over from an earlier
boot, it cannot name the current boot. Without a boot id (not Linux) every open
checks. Not covered: a disk that loses written data while the machine keeps
running (a detached device): its files are not what the page cache said either.
"""
from __future__ import annotations

import os
from pathlib import Path

MARK = "batchindex.boot"
BOOT_ID = "/proc/sys/kernel/random/boot_id"


def boot_id() -> str | None:
    try:
        with open(BOOT_ID, "rb") as f:
            text = f.read().strip().decode("ascii")
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def checked_this_boot(directory: Path) -> bool:
    """Whether the mark names the current boot (the index files need no zero search)."""
    current = boot_id()
    if current is None:
        return False
    try:
        return (directory / MARK).read_bytes() == current.encode("ascii")
    except OSError:
        return False


def mark(directory: Path) -> None:
    """Every index file in ``directory`` was written or checked under this boot."""
    current = boot_id()
    if current is None or checked_this_boot(directory):
        return
    path = directory / MARK
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, current.encode("ascii"))
        finally:
            os.close(fd)
    except OSError:
        pass  # only costs a check of the files at the next open
