"""The leader-epoch cache (Kafka's ``LeaderEpochFileCache``) and its
``leader-epoch-checkpoint`` file.

Entries are ``(epoch, start_offset)``, both strictly increasing: the first offset
written in each epoch. The file is Kafka's ``CheckpointFile`` text format::

    0            <- format version
    2            <- number of entries
    1 0          <- "epoch start_offset"
    3 17

The file is a convenience for Kafka tools and humans: on start-up the cache is
rebuilt from the batches themselves (every batch carries its leader epoch), so
recovery never trusts a stale checkpoint.
"""
from __future__ import annotations

import bisect
from pathlib import Path

from kraft_server.common.epochs import end_offset_for, metadata_end_offset_for
from kraft_server.common.values import OffsetAndEpoch

from .files import atomic_write

LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"


class LeaderEpochCache:
    def __init__(self, entries: list[tuple[int, int]] | None = None) -> None:
        self._epochs: list[int] = []
        self._offsets: list[int] = []
        for epoch, offset in entries or []:
            self.assign(epoch, offset)

    @property
    def entries(self) -> list[tuple[int, int]]:
        return list(zip(self._epochs, self._offsets))

    def latest_epoch(self) -> int | None:
        return self._epochs[-1] if self._epochs else None

    def last_fetched_epoch(self, latest_snapshot) -> int:
        """A log's last epoch (Kafka's ``lastFetchedEpoch``): the newest entry, else the
        epoch of ``latest_snapshot()`` (asked only then), else 0."""
        if self._epochs:
            return self._epochs[-1]
        snap = latest_snapshot()
        return snap.epoch if snap is not None else 0

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that ``epoch`` starts at ``start_offset``; a no-op unless ``epoch``
        is newer than the latest. Returns whether the cache changed."""
        if epoch < 0:
            return False
        if self._epochs and epoch <= self._epochs[-1]:
            return False
        # Kafka drops entries that the new one contradicts (start offsets must increase).
        while self._offsets and self._offsets[-1] >= start_offset:
            self._epochs.pop()
            self._offsets.pop()
        self._epochs.append(epoch)
        self._offsets.append(start_offset)
        return True

    def truncate_from_end(self, end_offset: int) -> bool:
        """Forget epochs that start at or after ``end_offset`` (log truncated there)."""
        changed = False
        while self._offsets and self._offsets[-1] >= end_offset:
            self._epochs.pop()
            self._offsets.pop()
            changed = True
        return changed

    def truncate_from_start(self, start_offset: int) -> bool:
        """The log now starts at ``start_offset``: entries wholly before it go, and the
        one covering it is moved up to it (``truncateFromStart``)."""
        i = bisect.bisect_right(self._offsets, start_offset) - 1
        if i < 0:
            return False
        changed = i > 0 or self._offsets[i] != start_offset
        del self._epochs[:i]
        del self._offsets[:i]
        self._offsets[0] = start_offset
        return changed

    def clear(self) -> None:
        self._epochs.clear()
        self._offsets.clear()

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> OffsetAndEpoch | None:
        """Kafka's ``endOffsetFor`` (``common/epochs.py``)."""
        return end_offset_for(self._epochs, self._offsets, requested_epoch, log_end_offset)

    def metadata_end_offset_for(self, epoch: int, log_end_offset: int, last_fetched_epoch: int,
                                earliest_snapshot: OffsetAndEpoch | None) -> OffsetAndEpoch:
        """Kafka's ``KafkaMetadataLog.endOffsetForEpoch`` (``common/epochs.py``)."""
        return metadata_end_offset_for(self._epochs, self._offsets, epoch, log_end_offset,
                                       last_fetched_epoch, earliest_snapshot)

    # -- the checkpoint file ---------------------------------------------------------
    def render(self) -> bytes:
        lines = ["0", str(len(self._epochs))] + [f"{e} {o}" for e, o in zip(self._epochs, self._offsets)]
        return ("\n".join(lines) + "\n").encode("ascii")

    def write(self, partition_dir: str | Path) -> None:
        atomic_write(Path(partition_dir) / LEADER_EPOCH_CHECKPOINT, self.render())

    @classmethod
    def parse(cls, text: str) -> "LeaderEpochCache":
        lines = [line for line in text.splitlines() if line.strip()]
        if not lines or lines[0].strip() != "0":
            raise ValueError("Unrecognized version of the leader epoch checkpoint file")
        count = int(lines[1])
        entries = []
        for line in lines[2 : 2 + count]:
            epoch, offset = line.split()
            entries.append((int(epoch), int(offset)))
        if len(entries) != count:
            raise ValueError(f"Expected {count} entries in the leader epoch checkpoint file, found {len(entries)}")
        return cls(entries)

    @classmethod
    def read(cls, partition_dir: str | Path) -> "LeaderEpochCache | None":
        try:
            text = (Path(partition_dir) / LEADER_EPOCH_CHECKPOINT).read_text("ascii")
        except FileNotFoundError:
            return None
        return cls.parse(text)
