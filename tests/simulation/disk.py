"""A simulated node's log on a disk that can fail (issue 27): the shell's disk
interface is where a real node meets a failing fsync (EIO) or a full disk (ENOSPC),
and ``kraft_server/log/disk.py`` turns both into ``LogDirFailure``. ``SimDisk``
raises the same error at the same calls; the simulation (``cluster.Simulation``) then
stops the node as the real one stops (fail-stop: nothing after it sent or
acknowledged) and restarts it later on what it had fsync'd."""
from __future__ import annotations

import errno
import os

from kraft_server.log.disk import LogDirFailure
from kraft_server.log.memory import MemoryLog


class SimDisk(MemoryLog):
    failing: str | None = None  # "fsync" (the next flush fails) or "append" (the next append)

    def flush(self) -> None:
        if self.failing == "fsync":
            self.failing = None
            raise LogDirFailure("sim-disk", "fsync", OSError(errno.EIO, os.strerror(errno.EIO)))
        super().flush()

    def append(self, data: bytes) -> None:
        if self.failing == "append":
            self.failing = None
            raise LogDirFailure("sim-disk", "append to", OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
        super().append(data)
