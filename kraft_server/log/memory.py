"""In-memory ReplicatedLog and QuorumStateStore for tests and simulations.

Same contract as the on-disk log (``kraft_server/raft/log_api.py``), plus ``crash()``:
what was not flushed is gone, exactly as after kill -9 (the store writes are
durable on return, so they survive). Batches are kept as bytes with their offsets
and epochs; an epoch index gives ``end_offset_for_epoch`` without scanning.
"""
from __future__ import annotations

import bisect

from kraft_server.raft import batches
from kraft_server.raft.log_api import ElectionState, OffsetAndEpoch


class MemoryQuorumStateStore:
    def __init__(self):
        self.state: ElectionState | None = None
        self.writes = 0

    def read(self) -> ElectionState | None:
        return self.state

    def write(self, state: ElectionState) -> None:
        self.state = state
        self.writes += 1


class MemorySnapshotWriter:
    def __init__(self, log: "MemoryLog", snapshot_id: OffsetAndEpoch):
        self._log, self._id, self._parts = log, snapshot_id, []
        self.done = False

    def append(self, data: bytes) -> None:
        if self.done:
            raise RuntimeError("snapshot already frozen or aborted")
        self._parts.append(bytes(data))

    def freeze(self) -> None:
        self.done = True
        self._log._snapshots[self._id] = b"".join(self._parts)

    def abort(self) -> None:
        self.done = True
        self._parts = []


class MemoryLog:
    def __init__(self, bootstrap_checkpoint: bytes | None = None):
        self._bases: list[int] = []  # base offset of each batch
        self._batches: list[tuple[int, int, int, bytes]] = []  # (base, last, epoch, bytes)
        self._start = 0
        self._flushed = 0
        self._snapshots: dict[OffsetAndEpoch, bytes] = {}
        self._bootstrap = bootstrap_checkpoint
        # epoch index: epochs and the start offset of each, in log order
        self._epochs: list[int] = []
        self._epoch_starts: list[int] = []

    # -- positions ----------------------------------------------------------------------
    def start_offset(self) -> int:
        return self._start

    def end_offset(self) -> int:
        return self._batches[-1][1] + 1 if self._batches else self._start

    def flushed_offset(self) -> int:
        return min(self._flushed, self.end_offset())

    def latest_snapshot(self) -> OffsetAndEpoch | None:
        return max(self._snapshots) if self._snapshots else None

    def _base_epoch(self) -> int:
        snap = self.latest_snapshot()
        return snap.epoch if snap is not None and snap.offset == self._start else 0

    def last_fetched_epoch(self) -> int:
        return self._batches[-1][2] if self._batches else self._base_epoch()

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        i = bisect.bisect_right(self._epochs, epoch) - 1
        if i < 0:
            snap = self.latest_snapshot()
            if snap is not None and snap.offset == self._start and epoch >= snap.epoch:
                return OffsetAndEpoch(snap.offset, snap.epoch)
            if not self._epochs:
                return OffsetAndEpoch(self.end_offset(), self.last_fetched_epoch())
            # Older than anything we hold: it ended where our first epoch starts
            # (LeaderEpochFileCache.endOffsetFor).
            return OffsetAndEpoch(self._epoch_starts[0], epoch)
        end = self._epoch_starts[i + 1] if i + 1 < len(self._epochs) else self.end_offset()
        return OffsetAndEpoch(end, self._epochs[i])

    # -- writes -------------------------------------------------------------------------
    def append(self, data: bytes) -> None:
        data = bytes(data)
        for info in batches.walk(data):
            if info.base_offset != self.end_offset():
                raise ValueError(f"append at {info.base_offset}, log end is {self.end_offset()}")
            if self._epochs and info.epoch < self._epochs[-1]:
                raise ValueError(f"epoch {info.epoch} after epoch {self._epochs[-1]}")
            if not self._epochs or info.epoch > self._epochs[-1]:
                self._epochs.append(info.epoch)
                self._epoch_starts.append(info.base_offset)
            self._bases.append(info.base_offset)
            self._batches.append((info.base_offset, info.last_offset, info.epoch, data[info.start:info.end]))

    def truncate_to(self, offset: int) -> None:
        i = bisect.bisect_right(self._bases, offset) - 1
        if i >= 0 and self._batches[i][1] < offset:
            i += 1  # offset is at or past the end of batch i: keep it
        i = max(i, 0)
        del self._bases[i:], self._batches[i:]
        self._rebuild_epochs()
        self._flushed = min(self._flushed, self.end_offset())

    def _rebuild_epochs(self) -> None:
        self._epochs, self._epoch_starts = [], []
        for base, _, epoch, _ in self._batches:
            if not self._epochs or epoch > self._epochs[-1]:
                self._epochs.append(epoch)
                self._epoch_starts.append(base)

    def flush(self) -> None:
        self._flushed = self.end_offset()

    def crash(self) -> None:
        """kill -9: drop every batch that was not flushed."""
        if self._flushed < self.end_offset():
            self.truncate_to(self._flushed)

    # -- reads --------------------------------------------------------------------------
    def read(self, offset: int, max_bytes: int) -> bytes:
        i = bisect.bisect_right(self._bases, offset) - 1
        if i < 0 or offset >= self.end_offset():
            return b""
        out, size = [], 0
        while i < len(self._batches):
            chunk = self._batches[i][3]
            if out and size + len(chunk) > max_bytes:
                break
            out.append(chunk)
            size += len(chunk)
            i += 1
        return b"".join(out)

    def batches(self):
        """(base, last, epoch, bytes) of every batch (tests and invariant checks)."""
        return list(self._batches)

    def batches_from(self, offset: int):
        """Batches whose last offset is >= ``offset``, in order."""
        i = max(bisect.bisect_right(self._bases, offset) - 1, 0)
        while i < len(self._batches):
            batch = self._batches[i]
            if batch[1] >= offset:
                yield batch
            i += 1

    # -- snapshots ----------------------------------------------------------------------
    def read_snapshot(self, snapshot_id: OffsetAndEpoch, position: int, max_bytes: int) -> bytes:
        return self._snapshots[snapshot_id][position:position + max_bytes]

    def snapshot_size(self, snapshot_id: OffsetAndEpoch) -> int:
        return len(self._snapshots[snapshot_id])

    def has_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        return snapshot_id in self._snapshots

    def snapshot_ids(self) -> list[OffsetAndEpoch]:
        """Every snapshot, oldest first (the bootstrap checkpoint is kept apart)."""
        return sorted(self._snapshots)

    def size_bytes(self) -> int:
        return sum(len(batch[3]) for batch in self._batches)

    def create_snapshot(self, snapshot_id: OffsetAndEpoch) -> MemorySnapshotWriter:
        return MemorySnapshotWriter(self, snapshot_id)

    def reset_to_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        self._bases.clear(), self._batches.clear()
        self._epochs.clear(), self._epoch_starts.clear()
        self._start = self._flushed = snapshot_id.offset

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        if snapshot_id.offset > self.end_offset() or snapshot_id.offset <= self._start:
            return
        i = bisect.bisect_left(self._bases, snapshot_id.offset)
        if i >= len(self._bases) or self._bases[i] != snapshot_id.offset:
            if snapshot_id.offset != self.end_offset():
                return  # not on a batch boundary: keep the log as it is
        del self._bases[:i], self._batches[:i]
        self._start = snapshot_id.offset
        self._rebuild_epochs()
        for old in [s for s in self._snapshots if s < snapshot_id]:
            del self._snapshots[old]

    def bootstrap_checkpoint(self) -> bytes | None:
        return self._bootstrap
