"""Performing the log writes a ``Ready`` carries, in order, on the real log.

The core decides writes through its ``LogView``; this is the one place they
happen. A fetched snapshot arrives as chunks: the first chunk of a snapshot id
opens its writer, ``SnapshotAbort`` drops it, ``InstallSnapshot`` freezes it and
restarts the log at its end offset.
"""
from __future__ import annotations

from kraft_server.raft import Append, InstallSnapshot, SnapshotAbort, SnapshotChunk, Truncate


class LogWriter:
    def __init__(self, log):
        self.log = log
        self._snapshot = None  # (snapshot id, writer) of the snapshot being fetched

    def perform(self, writes) -> None:
        for write in writes:
            if isinstance(write, Append):
                self.log.append(write.data)
            elif isinstance(write, Truncate):
                self.log.truncate_to(write.offset)
            elif isinstance(write, SnapshotChunk):
                if write.position == 0:
                    self._drop()
                self._writer(write.snapshot_id).append(write.data)
            elif isinstance(write, SnapshotAbort):
                self._drop()
            elif isinstance(write, InstallSnapshot):
                self._writer(write.snapshot_id).freeze()
                self._snapshot = None
                self.log.reset_to_snapshot(write.snapshot_id)
            else:
                raise TypeError(f"not a log write: {write!r}")

    def _writer(self, snapshot_id):
        if self._snapshot is None or self._snapshot[0] != snapshot_id:
            self._drop()
            self._snapshot = (snapshot_id, self.log.create_snapshot(snapshot_id))
        return self._snapshot[1]

    def _drop(self) -> None:
        if self._snapshot is not None:
            self._snapshot[1].abort()
            self._snapshot = None
