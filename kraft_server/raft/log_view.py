"""The log as the core sees it: the shell's log, read-only here, plus the writes the
core has decided since it last handed its writes over in ``Ready``.

The core never mutates the log. Appends, truncations and snapshot installs become
``LogWrite`` entries of the next ``Ready``; the shell performs them, in order, as
soon as it takes that Ready (before it flushes or sends anything), so from then on
the log itself shows them and this overlay is empty again. Between two Readies the
core keeps reading its own decisions through the view: the next batch's base
offset, the epoch a Fetch validates against, the records a parked Fetch is sent.

Every answer here equals what the log would answer had the writes been performed
(``tests/unit/raft/test_log_view.py`` checks that against both logs): positions, the epoch
arithmetic (``common/epochs.py``), reads (whole batches, at least one, at most
``max_bytes`` otherwise) and snapshots.
"""
from __future__ import annotations

from dataclasses import dataclass

from kraft_server.common.epochs import metadata_end_offset_for
from kraft_server.common.values import OffsetAndEpoch
from wire.records import BatchInfo, walk


@dataclass(frozen=True)
class Append:
    """Append whole batches at the log end."""

    data: bytes


@dataclass(frozen=True)
class Truncate:
    """Drop everything at and after ``offset`` (a follower's divergence)."""

    offset: int


@dataclass(frozen=True)
class SnapshotChunk:
    """Bytes of a snapshot being fetched (FetchSnapshot) at ``position``; the chunk at
    position 0 starts the snapshot afresh."""

    snapshot_id: OffsetAndEpoch
    position: int
    data: bytes


@dataclass(frozen=True)
class SnapshotAbort:
    snapshot_id: OffsetAndEpoch


@dataclass(frozen=True)
class InstallSnapshot:
    """Freeze the fetched snapshot and restart the log empty at its end offset."""

    snapshot_id: OffsetAndEpoch


LogWrite = Append | Truncate | SnapshotChunk | SnapshotAbort | InstallSnapshot


class LogView:
    def __init__(self, log):
        self._log = log
        self._writes: list = []
        self._cut: int | None = None  # the log's batches from here on are dropped
        self._installed: OffsetAndEpoch | None = None  # the log restarts at this snapshot
        self._tail: list[tuple[BatchInfo, bytes]] = []  # appended batches

    # -- hand-over --------------------------------------------------------------------
    def take_writes(self) -> list:
        """The writes decided since the last call; the shell performs them at once."""
        writes, self._writes = self._writes, []
        self._cut, self._installed, self._tail = None, None, []
        return writes

    def has_writes(self) -> bool:
        return bool(self._writes)

    # -- the writes the core decides --------------------------------------------------
    def append(self, data: bytes) -> list[BatchInfo]:
        infos = walk(data)
        if infos and infos[0].base_offset != self.end_offset():
            raise ValueError(f"append at {infos[0].base_offset}, log end is {self.end_offset()}")
        self._writes.append(Append(data))
        if len(infos) == 1 and infos[0].start == 0 and infos[0].end == len(data):
            self._tail.append((infos[0], data))
        else:  # views of the one buffer (bytes: it does not change), not copies
            view = memoryview(data)
            self._tail.extend((info, view[info.start:info.end]) for info in infos)
        return infos

    def truncate_to(self, offset: int) -> None:
        if offset >= self.end_offset():
            return
        self._writes.append(Truncate(offset))
        if self._tail and offset >= self._tail[0][0].base_offset:
            # The batch holding ``offset`` goes whole: the log never splits a batch.
            self._tail = [t for t in self._tail if t[0].last_offset < offset]
            return
        self._tail = []
        if self._installed is None:
            cut = walk(self._log.read(offset, 1))[0].base_offset
            self._cut = cut if self._cut is None else min(self._cut, cut)

    def snapshot_chunk(self, snapshot_id: OffsetAndEpoch, position: int, data: bytes) -> None:
        self._writes.append(SnapshotChunk(snapshot_id, position, data))

    def snapshot_abort(self, snapshot_id: OffsetAndEpoch) -> None:
        self._writes.append(SnapshotAbort(snapshot_id))

    def install_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        self._writes.append(InstallSnapshot(snapshot_id))
        self._installed, self._cut, self._tail = snapshot_id, None, []

    # -- positions --------------------------------------------------------------------
    def _durable_end(self) -> int:
        """Where the log's own batches end once the pending cut or install is done."""
        if self._installed is not None:
            return self._installed.offset
        end = self._log.end_offset()
        return end if self._cut is None else min(end, self._cut)

    def start_offset(self) -> int:
        return self._installed.offset if self._installed is not None else self._log.start_offset()

    def end_offset(self) -> int:
        return self._tail[-1][0].last_offset + 1 if self._tail else self._durable_end()

    def flushed_offset(self) -> int:
        if self._installed is not None:
            return self._installed.offset  # installing a snapshot flushes
        return min(self._log.flushed_offset(), self._durable_end())

    def _entries(self) -> tuple[list[int], list[int]]:
        """Epoch entries of the log as it will be: the log's below the cut, then the
        tail's (an epoch enters when it is newer than the last one)."""
        epochs, starts = [], []
        if self._installed is None:
            end = self._durable_end()
            for epoch, start in self._log.epoch_entries():
                if start < end:
                    epochs.append(epoch)
                    starts.append(start)
        for info, _ in self._tail:
            if not epochs or info.epoch > epochs[-1]:
                epochs.append(info.epoch)
                starts.append(info.base_offset)
        return epochs, starts

    def last_fetched_epoch(self) -> int:
        if not self._writes:
            return self._log.last_fetched_epoch()
        epochs, _ = self._entries()
        if epochs:
            return epochs[-1]
        latest = self.latest_snapshot()
        return latest.epoch if latest is not None else 0

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        if not self._writes:
            return self._log.end_offset_for_epoch(epoch)
        epochs, starts = self._entries()
        return metadata_end_offset_for(epochs, starts, epoch, self.end_offset(), self.last_fetched_epoch(),
                                       self._earliest_snapshot())

    # -- reads ------------------------------------------------------------------------
    def read(self, offset: int, max_bytes: int):
        """Whole batches from the one holding ``offset``: the log's, then the tail's."""
        if not self._tail and self._cut is None and self._installed is None:
            return self._log.read(offset, max_bytes)
        if offset >= self.end_offset():
            return b""
        out, size = [], 0
        durable_end = self._durable_end()
        if offset < durable_end:
            held = self._log.read(offset, max_bytes)
            kept = [i for i in walk(held) if i.base_offset < durable_end]
            if kept:
                out.append(bytes(held[:kept[-1].end]))
                size = kept[-1].end
                if kept[-1].next_offset < durable_end:
                    return out[0]  # stopped inside the log (max_bytes or a segment end)
        for info, data in self._tail:
            if info.last_offset < offset:
                continue
            if out and size + len(data) > max_bytes:
                break
            out.append(data)
            size += len(data)
        return b"".join(out)

    def control_offsets(self, start: int) -> list[int] | None:
        """Base offsets of the control batches at or after ``start``, when the log
        keeps them indexed and no write is pending; None: walk the batches instead."""
        if self._tail or self._cut is not None or self._installed is not None:
            return None
        return self._log.control_offsets(start)

    # -- snapshots --------------------------------------------------------------------
    def snapshot_ids(self) -> list[OffsetAndEpoch]:
        ids = self._log.snapshot_ids()
        if self._installed is None:
            return ids
        return sorted({s for s in ids if s >= self._installed} | {self._installed})

    def latest_snapshot(self) -> OffsetAndEpoch | None:
        latest = self._log.latest_snapshot()
        if self._installed is not None and (latest is None or latest < self._installed):
            return self._installed
        return latest

    def _earliest_snapshot(self) -> OffsetAndEpoch | None:
        if self._installed is not None:
            return self.snapshot_ids()[0]
        ids = self._log.snapshot_ids()
        earliest = ids[0] if ids else None
        if (earliest is None or earliest.offset > 0) and self._log.start_offset() == 0 \
                and self._log.bootstrap_checkpoint() is not None:
            return OffsetAndEpoch(0, 0)  # a log that keeps the bootstrap checkpoint apart
        return earliest

    def read_snapshot(self, snapshot_id: OffsetAndEpoch, position: int, max_bytes: int) -> bytes:
        return self._log.read_snapshot(snapshot_id, position, max_bytes)

    def snapshot_size(self, snapshot_id: OffsetAndEpoch) -> int:
        return self._log.snapshot_size(snapshot_id)

    def bootstrap_checkpoint(self) -> bytes | None:
        return self._log.bootstrap_checkpoint()
