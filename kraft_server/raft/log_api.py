"""The log and the quorum-state store a node runs on: the core reads the log
(through ``log_view.LogView``, which adds its own pending writes); the shell
(``kraft_server/shell``) performs every write, and persists the election state.

Two implementations of each: ``kraft_server/log/memory.py`` (simulations; a crash
drops what was not flushed) and the on-disk ones in ``kraft_server/log/``
(segments in Kafka's format, snapshots, ``quorum-state``). Both pass
``tests/unit/log/test_log_contract.py``.

Offsets are Kafka's: ``end_offset`` is the next offset to be written (LEO).
Batches are record batch v2 bytes (``wire/records``) whose offsets and leader
epochs are already set: the leader builds them, followers append what they
fetched. Appends are buffered; ``flush`` makes them durable, and
``flushed_offset`` says how far that reached.
"""
from __future__ import annotations

from typing import Protocol

from kraft_server.common.values import ElectionState, OffsetAndEpoch  # noqa: F401 (re-exported)


class QuorumStateStore(Protocol):
    def read(self) -> ElectionState | None:
        """The last written state, or None for a fresh directory."""

    def write(self, state: ElectionState) -> None:
        """Durably replace the state: on return it survives kill -9."""


class SnapshotWriter(Protocol):
    def append(self, data: bytes) -> None:
        """Add bytes (whole batches when the core builds a snapshot, raw chunks when it
        installs one fetched with FetchSnapshot)."""

    def freeze(self) -> None:
        """Make the snapshot durable and visible (``.part`` fsynced, then renamed)."""

    def abort(self) -> None:
        """Forget a partial snapshot."""


class ReplicatedLog(Protocol):
    # -- positions ---------------------------------------------------------------
    def start_offset(self) -> int:
        """Log start offset: the first offset readable from segments."""

    def end_offset(self) -> int:
        """Log end offset, including appends not yet flushed."""

    def flushed_offset(self) -> int:
        """Everything below this offset is durable."""

    def last_fetched_epoch(self) -> int:
        """Epoch of the last batch, or of the latest snapshot when the log is empty
        above it (0 for an empty log)."""

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        """Kafka's leader-epoch cache lookup: the largest epoch <= ``epoch`` that the
        log knows, and the end offset of that epoch (the start offset of the next
        epoch, or the log end offset). ``OffsetAndEpoch(-1, -1)`` when unknown."""

    def epoch_entries(self) -> list[tuple[int, int]]:
        """The leader-epoch cache: (epoch, start offset) pairs, oldest first."""

    # -- writes ------------------------------------------------------------------
    def append(self, batches: bytes) -> None:
        """Append whole batches whose base offset is ``end_offset()``."""

    def truncate_to(self, offset: int) -> None:
        """Drop everything at and after ``offset`` (follower divergence); offsets
        below the flushed offset may be truncated too (Raft allows it for
        uncommitted data)."""

    def flush(self) -> None:
        """fsync; called by the shell when ``Ready.flush`` is set."""

    # -- reads -------------------------------------------------------------------
    def control_offsets(self, start: int) -> list[int] | None:
        """Base offsets of the control batches at or after ``start`` from an index, or
        None when the log keeps no such index (the reader walks the batches)."""

    def read(self, offset: int, max_bytes: int) -> bytes:
        """Whole batches from the one containing ``offset``; at least one batch when
        ``offset < end_offset()`` even if it is larger than ``max_bytes`` (KIP-74)."""

    # -- snapshots (KIP-630) -------------------------------------------------------
    def latest_snapshot(self) -> OffsetAndEpoch | None:
        """The newest complete snapshot, not counting the bootstrap checkpoint 0-0."""

    def read_snapshot(self, snapshot_id: OffsetAndEpoch, position: int, max_bytes: int) -> bytes:
        """Raw bytes of a snapshot file from ``position``."""

    def snapshot_size(self, snapshot_id: OffsetAndEpoch) -> int:
        ...

    def create_snapshot(self, snapshot_id: OffsetAndEpoch) -> SnapshotWriter:
        ...

    def reset_to_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        """After a fetched snapshot is frozen: the log restarts empty at its end offset."""

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        """Advance the log start offset to the snapshot and drop older segments and
        snapshots (retention)."""

    def snapshot_ids(self) -> list[OffsetAndEpoch]:
        """Every snapshot, oldest first (used by ``kraft_server.controller.image.retention``)."""

    def size_bytes(self) -> int:
        """Bytes held in the log (Kafka's ``UnifiedLog.size``; snapshot retention)."""

    def wait_verified(self) -> None:
        """Block until the start-up check of the bytes already on disk is done; raise
        if they changed (the shell calls it before the first step)."""

    def bootstrap_checkpoint(self) -> bytes | None:
        """The bootstrap checkpoint ``00000000000000000000-0000000000.checkpoint``
        written by ``kraft-storage format`` for dynamic quorums, or None."""
