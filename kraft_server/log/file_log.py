"""``ReplicatedLog`` on disk: the partition directory ``__cluster_metadata-0`` as
Apache Kafka 4.3.1 lays it out (``KafkaMetadataLog`` over ``UnifiedLog``).

Files: ``%020d.log`` segments (+ empty ``.index``/``.timeindex``), snapshots
``%020d-%010d.checkpoint``, ``leader-epoch-checkpoint``, ``partition.metadata``;
``quorum-state`` lives here too but belongs to ``FileQuorumStateStore``.

Durability: ``append`` writes to the active segment with ``pwrite`` (in the page
cache, not yet durable); ``flush`` fsyncs every dirty segment and, if segments
were created or deleted since, the directory; only then does ``flushed_offset``
move. Truncation is applied at once and made durable by the next ``flush``.

Start-up (:meth:`FileReplicatedLog.open`): leftover ``.part``/``.deleted``
snapshots are removed; every segment is scanned (``Segment.recover``: the checks of
``recovery.scan_segment``, read in 4 MiB chunks, keeping no per-batch objects) after
the batches its batch index vouches for (``batch_index.py``: entries written after
each flush, checked against the segment's last indexed batch, mapped rather than
read; searched for zero words only after a reboot, ``boot_mark.py``), and the log is cut at
the first torn or corrupt batch; the epoch cache is rebuilt from
the batches (its checkpoint file rewritten only if it says otherwise); if the
newest snapshot lies beyond the log end (a follower died between installing a
snapshot and truncating), the log restarts at it.
The log start offset is the first segment's base offset after a restart (the
metadata log keeps no ``log-start-offset-checkpoint``; Kafka does the same) and
moves up to a snapshot's end offset with ``delete_before_snapshot``; snapshots
below it are deleted on start-up, as in ``KafkaMetadataLog.recoverSnapshots``.
When the log start moves is decided by ``kraft_server/controller/image/retention.py``
(Kafka's ``maybeClean``: size and age retention over the snapshots).
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

from kraft_server.common.values import OffsetAndEpoch
from wire.exceptions import DecodeError
from wire.records.header import crc_matches, iter_headers

from . import boot_mark
from .epoch_cache import LEADER_EPOCH_CHECKPOINT, LeaderEpochCache
from .files import fsync_dir
from .partition_metadata import write_partition_metadata, PARTITION_METADATA
from .index_seal import SealCheck
from .disk import LogCorruption
from .recovery import file_problem, first_problem, sealed_bytes_changed
from .segments import Segment, parse_segment_name
from .snapshots import (
    BOOTSTRAP_SNAPSHOT_ID,
    FileSnapshotWriter,
    delete_snapshot,
    read_snapshot_bytes,
    scan_snapshots,
    snapshot_file_size,
    snapshot_path,
)

log = logging.getLogger(__name__)

METADATA_PARTITION_DIR = "__cluster_metadata-0"
DEFAULT_SEGMENT_BYTES = 1024 * 1024 * 1024


class LogAppendError(ValueError):
    """Batches that cannot go at the log end (bad offsets, CRC, framing)."""


class FileReplicatedLog:
    def __init__(self, directory: str | Path, *, segment_bytes: int = DEFAULT_SEGMENT_BYTES) -> None:
        """Prefer :meth:`open`; this opens and recovers ``directory`` (the partition dir)."""
        self.directory = Path(directory)
        self.segment_bytes = segment_bytes
        self.directory.mkdir(parents=True, exist_ok=True)
        self.segments: list[Segment] = []
        self.epochs = LeaderEpochCache()
        self._flushed = 0
        self._start = 0
        self._dir_dirty = False
        self._epochs_dirty = False
        self.recovery_problems: list[str] = []
        self._seal_check: SealCheck | None = None
        self._snapshots = scan_snapshots(self.directory)
        self._recover()

    @classmethod
    def open(cls, metadata_log_dir: str | Path, *, segment_bytes: int = DEFAULT_SEGMENT_BYTES) -> "FileReplicatedLog":
        """Open ``<metadata_log_dir>/__cluster_metadata-0``."""
        return cls(Path(metadata_log_dir) / METADATA_PARTITION_DIR, segment_bytes=segment_bytes)

    # -- start-up ----------------------------------------------------------------------
    def _recover(self) -> None:
        bases = sorted(b for b in (parse_segment_name(n) for n in os.listdir(self.directory)) if b is not None)
        expected: int | None = None
        broken = False
        checked = boot_mark.checked_this_boot(self.directory)
        for base in bases:
            segment = Segment(self.directory, base)
            if broken:
                log.warning("deleting segment %s after a corrupt tail", segment.path.name)
                segment.delete()
                self._dir_dirty = True
                continue
            if expected is not None and base != expected:
                self.recovery_problems.append(f"segment {base} does not follow offset {expected}")
                segment.delete()
                self._dir_dirty = True
                broken = True
                continue
            problem = segment.recover(base, self.epochs.assign, checked)
            if problem:
                log.warning("recovering %s: %s; truncated to %d bytes", segment.path.name, problem, segment.size)
                self.recovery_problems.append(f"{segment.path.name}: {problem}")
                broken = True
            self.segments.append(segment)
            expected = segment.next_offset
        if not self.segments:
            self.segments.append(Segment(self.directory, 0, create=True))
            self._dir_dirty = True
        self._start = self.segments[0].base_offset
        for old in [s for s in self._snapshots if s.offset < self._start]:
            delete_snapshot(self.directory, old)
            self._snapshots.remove(old)
        self._check_newest_snapshot()
        # Kafka: a snapshot past the log end means the log restarts at that snapshot.
        latest = self.latest_snapshot()
        if latest is not None and latest.offset > self.end_offset():
            self._truncate_fully_and_start_at(latest.offset)
        if not (self.directory / PARTITION_METADATA).exists():
            write_partition_metadata(self.directory)
        # rewritten (tmp, fsync, rename) only when the batches say something else
        self._epochs_dirty = self._epoch_checkpoint() != self.epochs.render()
        self._flushed = self.end_offset()
        self.flush()
        if any(not segment.is_empty for segment in self.segments):
            boot_mark.mark(self.directory)  # its index files were written or checked under this boot
        self._seal_check = SealCheck([(s.path, s.sealed.data_end, s.sealed.data_crc)
                                      for s in self.segments if s.sealed is not None])

    def wait_verified(self) -> None:
        """Wait for the start-up check of the sealed bytes (``index_seal.SealCheck``);
        raise ``LogCorruption`` if any changed. The node calls it before its Raft loop
        takes a step; nothing it did before depends on those bytes."""
        failed = self._seal_check.wait() if self._seal_check is not None else []
        if failed:
            path, end = failed[0]
            base = parse_segment_name(os.path.basename(path))
            raise sealed_bytes_changed(path, end, first_problem(path, base, end))

    def _check_newest_snapshot(self) -> None:
        """The newest snapshot (the one the node loads and serves) must be whole. A
        corrupt one is set aside (``<name>.corrupt``) when the node loses nothing by it:
        an older snapshot at or after the log start remains and the log reaches past
        the corrupt one's end. Otherwise start-up stops (``LogCorruption``)."""
        while self._snapshots:
            newest = self._snapshots[-1]
            path = snapshot_path(self.directory, newest)
            problem = file_problem(path)
            if problem is None:
                return
            older = [s for s in self._snapshots[:-1] if s.offset >= self._start]
            if not older or self.end_offset() < newest.offset:
                raise LogCorruption(
                    f"Snapshot {path.name} is corrupt ({problem}) and the log does not cover it: refusing to "
                    "start (restore the file, or remove this voter, empty its metadata.log.dir and add it again)",
                    path)
            log.warning("snapshot %s is corrupt (%s): set aside as %s.corrupt; the log and snapshot %s cover it",
                        path.name, problem, path.name, older[-1])
            os.replace(path, path.with_name(path.name + ".corrupt"))
            fsync_dir(self.directory)
            self._snapshots.pop()
            self.recovery_problems.append(f"{path.name}: {problem}")

    def _epoch_checkpoint(self) -> bytes | None:
        try:
            return (self.directory / LEADER_EPOCH_CHECKPOINT).read_bytes()
        except OSError:
            return None

    # -- positions -----------------------------------------------------------------------
    def start_offset(self) -> int:
        return max(self._start, self.segments[0].base_offset)

    def end_offset(self) -> int:
        return self.segments[-1].next_offset

    def flushed_offset(self) -> int:
        return self._flushed

    def last_fetched_epoch(self) -> int:
        return self.epochs.last_fetched_epoch(self.latest_snapshot)

    def epoch_entries(self) -> list[tuple[int, int]]:
        return self.epochs.entries

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        earliest = self._snapshots[0] if self._snapshots else None
        return self.epochs.metadata_end_offset_for(epoch, self.end_offset(), self.last_fetched_epoch(),
                                                   earliest)

    # -- writes ----------------------------------------------------------------------------
    def append(self, batches: bytes) -> None:
        data = memoryview(batches)
        expected = self.end_offset()
        epoch = self.epochs.latest_epoch() or -1
        headers = []
        consumed = 0
        try:
            for pos, header in iter_headers(data):
                if header.base_offset != expected:
                    raise LogAppendError(f"batch base offset {header.base_offset} is not the log end offset {expected}")
                if header.partition_leader_epoch < epoch:
                    raise LogAppendError(f"batch epoch {header.partition_leader_epoch} is below the log's epoch {epoch}")
                epoch = header.partition_leader_epoch
                if not crc_matches(data, pos, header):
                    raise LogAppendError(f"CRC mismatch in batch at offset {header.base_offset}")
                headers.append((pos, header))
                expected = header.next_offset
                consumed = pos + header.size
        except DecodeError as exc:
            raise LogAppendError(str(exc)) from None
        if consumed != len(data) or not headers:
            raise LogAppendError("append needs whole record batches")
        active = self.segments[-1]
        if not active.is_empty and active.size + len(data) > self.segment_bytes:
            active = self._roll(self.end_offset())
        active.append(data, headers)
        for _, header in headers:
            if self.epochs.assign(header.partition_leader_epoch, header.base_offset):
                self._epochs_dirty = True

    def _roll(self, base_offset: int) -> Segment:
        self.segments[-1].index.close()  # it takes no more appends
        segment = Segment(self.directory, base_offset, create=True)
        self.segments.append(segment)
        self._dir_dirty = True
        return segment

    def truncate_to(self, offset: int) -> None:
        if offset >= self.end_offset():
            return
        if offset < self.start_offset():
            self._truncate_fully_and_start_at(offset)
            return
        while len(self.segments) > 1 and self.segments[-1].base_offset > offset:
            self.segments.pop().delete()
            self._dir_dirty = True
        new_end = self.segments[-1].truncate_to(offset)
        if self.epochs.truncate_from_end(new_end):
            self._epochs_dirty = True
        self._flushed = min(self._flushed, new_end)

    def _truncate_fully_and_start_at(self, offset: int) -> None:
        for segment in self.segments:
            segment.delete()
        self.segments = [Segment(self.directory, offset, create=True)]
        self._start = offset
        self.epochs.clear()
        self._epochs_dirty = True
        self._dir_dirty = True
        self._flushed = offset

    def flush(self) -> None:
        active = self.segments[-1]
        for segment in self.segments:
            segment.flush()
            if segment is not active:
                segment.index.close()  # only the active segment keeps its index files open
        if self._epochs_dirty:
            self.epochs.write(self.directory)  # tmp + fsync + rename + dir fsync
            self._epochs_dirty = False
            self._dir_dirty = False
        if self._dir_dirty:
            fsync_dir(self.directory)
            self._dir_dirty = False
        self._flushed = self.end_offset()

    # -- reads -------------------------------------------------------------------------------
    def control_offsets(self, start: int) -> list[int]:
        """Base offsets of the control batches at or after ``start`` (from the
        in-memory index: no reads), so start-up can rebuild the voter history
        without walking every batch."""
        return [b for seg in self.segments if seg.next_offset > start for b in seg.control_offsets(start)]

    def read(self, offset: int, max_bytes: int) -> bytes:
        if offset < self.start_offset():
            raise ValueError(f"offset {offset} is below the log start offset {self.start_offset()}")
        if offset >= self.end_offset():
            return b""
        for segment in reversed(self.segments):
            if segment.base_offset <= offset:
                if offset < segment.next_offset:
                    return segment.read_from(offset, max_bytes)
                break
        return b""

    # -- snapshots -----------------------------------------------------------------------------
    def latest_snapshot(self) -> OffsetAndEpoch | None:
        for snapshot_id in reversed(self._snapshots):
            if snapshot_id != BOOTSTRAP_SNAPSHOT_ID:
                return snapshot_id
        return None

    def snapshots(self) -> list[OffsetAndEpoch]:
        """Every frozen snapshot, oldest first (the bootstrap checkpoint included)."""
        return list(self._snapshots)

    snapshot_ids = snapshots  # the name the controller's retention uses

    def size_bytes(self) -> int:
        """Bytes in the segments (Kafka's ``UnifiedLog.size``, used by snapshot retention)."""
        return sum(segment.size for segment in self.segments)

    def read_snapshot(self, snapshot_id: OffsetAndEpoch, position: int, max_bytes: int) -> bytes:
        return read_snapshot_bytes(self.directory, snapshot_id, position, max_bytes)

    def snapshot_size(self, snapshot_id: OffsetAndEpoch) -> int:
        return snapshot_file_size(self.directory, snapshot_id)

    def create_snapshot(self, snapshot_id: OffsetAndEpoch) -> FileSnapshotWriter:
        if snapshot_id in self._snapshots:
            raise ValueError(f"snapshot {snapshot_id} already exists")
        return FileSnapshotWriter(self.directory, snapshot_id, on_freeze=self._snapshot_frozen)

    def _snapshot_frozen(self, snapshot_id: OffsetAndEpoch) -> None:
        if snapshot_id not in self._snapshots:
            self._snapshots.append(snapshot_id)
            self._snapshots.sort()

    def reset_to_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        if snapshot_id not in self._snapshots:
            raise ValueError(f"snapshot {snapshot_id} does not exist")
        self._truncate_fully_and_start_at(snapshot_id.offset)
        self._delete_snapshots_before(snapshot_id)
        self.flush()

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        """A no-op unless ``snapshot_id`` exists and lies in ``(start, end]`` (Kafka's
        ``deleteBeforeSnapshot`` returns false then)."""
        if snapshot_id not in self._snapshots:
            return
        if not self.start_offset() < snapshot_id.offset <= self.end_offset():
            return
        self._start = snapshot_id.offset
        # Whole segments below the snapshot go; the active segment always stays.
        while len(self.segments) > 1 and self.segments[1].base_offset <= snapshot_id.offset:
            self.segments.pop(0).delete()
            self._dir_dirty = True
        if self.epochs.truncate_from_start(self.start_offset()):
            self._epochs_dirty = True
        self._delete_snapshots_before(snapshot_id)
        self.flush()

    def _delete_snapshots_before(self, snapshot_id: OffsetAndEpoch) -> None:
        for old in [s for s in self._snapshots if s < snapshot_id]:
            delete_snapshot(self.directory, old)
            self._snapshots.remove(old)

    def bootstrap_checkpoint(self) -> bytes | None:
        if BOOTSTRAP_SNAPSHOT_ID not in self._snapshots:
            return None
        return snapshot_path(self.directory, BOOTSTRAP_SNAPSHOT_ID).read_bytes()

    # -- lifecycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        if self._seal_check is not None:
            self._seal_check.wait()  # it reads the segments' files
        for segment in self.segments:
            segment.close()

    def __enter__(self) -> "FileReplicatedLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
