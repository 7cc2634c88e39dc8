"""A broker's log directory on its own small tmpfs, which the ``disk_full`` fault fills
with a file until nothing more fits, then frees (``tests/process/test_disk_full.py``
does the same under one of our nodes).

Mounting needs root and a kernel that lets this process mount; where it cannot,
``mount`` says why and the disk is a plain directory (the fault is then skipped,
saying so). ``unmount`` is lazy (``umount -l``): it detaches the tmpfs even while a
process killed a moment ago still holds a file there, and the memory goes with it."""
from __future__ import annotations

import atexit
import errno
import os
import subprocess
from pathlib import Path

FILLER = "chaos-filler"
CHUNK = 1 << 20
_MOUNTED: "set[SmallDisk]" = set()  # unmounted at exit if a caller did not


class SmallDisk:
    def __init__(self, path: Path, size_mb: int) -> None:
        self.path, self.size_mb = Path(path), size_mb
        self.mounted = False
        self.why_not = "not mounted yet"  # why there is no tmpfs here

    def mount(self) -> bool:
        """Mount a tmpfs of ``size_mb`` at ``path`` (created, and expected empty)."""
        self.path.mkdir(parents=True, exist_ok=True)
        if os.geteuid() != 0:
            self.why_not = "mounting a tmpfs needs root"
            return False
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.size_mb}m,mode=0755", "tmpfs",
                               str(self.path)], capture_output=True, text=True)
        if done.returncode != 0:
            self.why_not = f"cannot mount a tmpfs here: {(done.stderr or done.stdout).strip()}"
            return False
        self.mounted, self.why_not = True, ""
        _MOUNTED.add(self)
        return True

    def fill(self) -> int:
        """Write a file until the disk is full (ENOSPC); the bytes it holds. The free
        space is allocated at once, then written a page at a time up to the last one."""
        if not self.mounted:
            raise RuntimeError(f"no tmpfs at {self.path}: {self.why_not}")
        written = 0
        with open(self.path / FILLER, "ab", buffering=0) as f:
            st = os.statvfs(self.path)
            bulk = st.f_bavail * st.f_frsize - CHUNK
            if bulk > 0:
                try:
                    os.posix_fallocate(f.fileno(), f.tell(), bulk)
                    written = bulk
                    f.seek(0, os.SEEK_END)
                except OSError as exc:  # another writer took some of it first
                    if exc.errno != errno.ENOSPC:
                        raise
            chunk = b"\0" * CHUNK
            while True:
                try:
                    n = f.write(chunk)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break
                written += n
                if n < len(chunk):
                    chunk = chunk[:max(1, len(chunk) - n)]
        return written

    def free(self) -> bool:
        """Remove the filler; whether there was one."""
        try:
            (self.path / FILLER).unlink()
            return True
        except FileNotFoundError:
            return False

    def unmount(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True, check=False)
            self.mounted = False
        _MOUNTED.discard(self)


@atexit.register
def _unmount_leftovers() -> None:
    for disk in list(_MOUNTED):
        disk.unmount()
