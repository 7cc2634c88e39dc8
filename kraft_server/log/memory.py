"""In-memory ReplicatedLog and QuorumStateStore for tests and simulations.

Same contract as the on-disk log (``kraft_server/raft/log_api.py``), plus ``crash()``:
what was not flushed is gone, exactly as after kill -9 (the store writes are
durable on return, so they survive). Batches are kept as bytes with their offsets
and epochs; an epoch index gives ``end_offset_for_epoch`` without scanning.
"""
from __future__ import annotations

import bisect

from kraft_server.log.epoch_cache import LeaderEpochCache
from kraft_server.common.values import ElectionState, OffsetAndEpoch
from wire.records import walk


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
    segments = None  # no segment files: readers take the batches from memory (log/log_reader.py)

    def __init__(self, bootstrap_checkpoint: bytes | None = None):
        self._bases: list[int] = []  # base offset of each batch
        self._batches: list[tuple[int, int, int, bytes]] = []  # (base, last, epoch, bytes)
        self._start = 0
        self._flushed = 0
        self._snapshots: dict[OffsetAndEpoch, bytes] = {}
        self._bootstrap = bootstrap_checkpoint
        self._epochs = LeaderEpochCache()  # the same cache (and answers) as the file log

    # -- positions ----------------------------------------------------------------------
    def start_offset(self) -> int:
        return self._start

    def end_offset(self) -> int:
        return self._batches[-1][1] + 1 if self._batches else self._start

    def flushed_offset(self) -> int:
        return min(self._flushed, self.end_offset())

    def latest_snapshot(self) -> OffsetAndEpoch | None:
        return max(self._snapshots) if self._snapshots else None

    def last_fetched_epoch(self) -> int:
        return self._epochs.last_fetched_epoch(self.latest_snapshot)

    def epoch_entries(self) -> list[tuple[int, int]]:
        return self._epochs.entries

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        return self._epochs.metadata_end_offset_for(epoch, self.end_offset(), self.last_fetched_epoch(),
                                                    self._earliest_snapshot())

    def _earliest_snapshot(self) -> OffsetAndEpoch | None:
        """As the file log sees it: the bootstrap checkpoint counts as snapshot 0-0
        until the log start moves past it."""
        if self._bootstrap is not None and self._start == 0:
            return OffsetAndEpoch(0, 0)
        return min(self._snapshots) if self._snapshots else None

    # -- writes -------------------------------------------------------------------------
    def append(self, data: bytes) -> None:
        data = bytes(data)
        for info in walk(data):
            if info.base_offset != self.end_offset():
                raise ValueError(f"append at {info.base_offset}, log end is {self.end_offset()}")
            latest = self._epochs.latest_epoch()
            if latest is not None and info.epoch < latest:
                raise ValueError(f"epoch {info.epoch} after epoch {latest}")
            self._epochs.assign(info.epoch, info.base_offset)
            self._bases.append(info.base_offset)
            self._batches.append((info.base_offset, info.last_offset, info.epoch, data[info.start:info.end]))

    def truncate_to(self, offset: int) -> None:
        i = bisect.bisect_right(self._bases, offset) - 1
        if i >= 0 and self._batches[i][1] < offset:
            i += 1  # offset is at or past the end of batch i: keep it
        i = max(i, 0)
        del self._bases[i:], self._batches[i:]
        self._epochs.truncate_from_end(self.end_offset())
        self._flushed = min(self._flushed, self.end_offset())

    def flush(self) -> None:
        self._flushed = self.end_offset()

    def crash(self) -> None:
        """kill -9: drop every batch that was not flushed."""
        if self._flushed < self.end_offset():
            self.truncate_to(self._flushed)

    # -- reads --------------------------------------------------------------------------
    def control_offsets(self, start: int) -> None:
        return None  # no index: readers walk the batches

    def wait_verified(self) -> None:
        pass  # nothing on disk to check

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
        """Kafka's ``truncateToLatestSnapshot``: the log restarts at the snapshot and
        the snapshots before it are forgotten (the file log deletes them too), so the
        earliest snapshot is always at or above the log start."""
        if snapshot_id not in self._snapshots:
            raise ValueError(f"snapshot {snapshot_id} does not exist")
        self._bases.clear(), self._batches.clear()
        self._epochs.clear()
        self._start = self._flushed = snapshot_id.offset
        self._forget_snapshots_before(snapshot_id)

    def _forget_snapshots_before(self, snapshot_id: OffsetAndEpoch) -> None:
        for old in [s for s in self._snapshots if s < snapshot_id]:
            del self._snapshots[old]

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        if snapshot_id.offset > self.end_offset() or snapshot_id.offset <= self._start:
            return
        i = bisect.bisect_left(self._bases, snapshot_id.offset)
        if i >= len(self._bases) or self._bases[i] != snapshot_id.offset:
            if snapshot_id.offset != self.end_offset():
                return  # not on a batch boundary: keep the log as it is
        del self._bases[:i], self._batches[:i]
        self._start = snapshot_id.offset
        self._epochs.truncate_from_start(self._start)
        self._forget_snapshots_before(snapshot_id)

    def bootstrap_checkpoint(self) -> bytes | None:
        return self._bootstrap
