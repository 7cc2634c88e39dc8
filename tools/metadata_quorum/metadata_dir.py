"""A metadata log directory read without writing to it: what ``recover`` knows of a
stopped controller's log, and of a broker's (which may still be running).

``FileReplicatedLog.open`` recovers the log (cuts a torn tail, rewrites the epoch
checkpoint, adds index files); here nothing is written. The valid prefix is found
the same way (``recovery.scan_segment``: header, length, CRC-32C, offsets that
follow), so the log end seen here is the one the node will see when it starts.
It answers what ``raft.voter_history.load_history`` asks of a log, so the voter set
comes from the same code the node runs.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from kraft_server.common.epochs import metadata_end_offset_for
from kraft_server.common.values import ElectionState, OffsetAndEpoch
from kraft_server.java_properties import load_properties
from kraft_server.log.file_log import METADATA_PARTITION_DIR
from kraft_server.log.meta_properties import MetaProperties, MetaPropertiesError
from kraft_server.log.quorum_state_file import FileQuorumStateStore, QuorumStateError
from kraft_server.log.recovery import scan_segment
from kraft_server.log.segments import parse_segment_name
from kraft_server.log.snapshots import (BOOTSTRAP_SNAPSHOT_ID, read_snapshot_bytes, scan_snapshots,
                                         snapshot_file_size, snapshot_path)
from kraft_server.raft.voter_history import load_history
from wire.records import (
    CompressionType, batch_records, batch_values, control_record_type, iter_batches, read_header,
    unframe_metadata_record, walk,
)
from wire.records.metadata import METADATA_RECORD_TYPES

from .errors import TerseError


@dataclass(frozen=True)
class _Segment:
    base: int
    path: Path
    valid_bytes: int


class MetadataDir:
    """The ``__cluster_metadata-0`` of one log directory, read once."""

    def __init__(self, metadata_log_dir: str | Path):
        self.root = Path(metadata_log_dir)
        self.directory = self.root / METADATA_PARTITION_DIR
        if not self.directory.is_dir():
            raise TerseError(f"No {METADATA_PARTITION_DIR} in {self.root}: is this a metadata log directory?")
        self.meta = _meta(self.root)
        self.problem: str | None = None  # a torn or corrupt tail the node will cut at start-up
        self._segments: list[_Segment] = []
        self._epochs: list[tuple[int, int]] = []  # (epoch, start offset)
        self._controls: dict[int, tuple[Path, int, int]] = {}  # base offset -> (file, position, size)
        self._snapshots = scan_snapshots(self.directory, clean=False)
        self._scan()
        try:
            self.election: ElectionState | None = FileQuorumStateStore(self.directory).read()
        except (QuorumStateError, ValueError) as exc:
            raise TerseError(f"Cannot read the quorum-state of {self.directory}: {exc}") from None

    # -- reading --------------------------------------------------------------------------
    def _scan(self) -> None:
        bases = sorted(b for b in (parse_segment_name(n) for n in os.listdir(self.directory)) if b is not None)
        expected = None
        for base in bases:
            if expected is not None and base != expected:
                self.problem = f"segment {base} does not follow offset {expected}"
                break
            path = self.directory / f"{base:020d}.log"
            fd = os.open(path, os.O_RDONLY)
            try:
                headers, valid, problem = scan_segment(fd, os.fstat(fd).st_size, base)
            finally:
                os.close(fd)
            for pos, header in headers:
                if header.partition_leader_epoch >= 0 and (
                        not self._epochs or header.partition_leader_epoch > self._epochs[-1][0]):
                    self._epochs.append((header.partition_leader_epoch, header.base_offset))
                if header.is_control:
                    self._controls[header.base_offset] = (path, pos, header.size)
            self._segments.append(_Segment(base, path, valid))
            expected = headers[-1][1].next_offset if headers else base
            if problem:
                self.problem = f"{path.name}: {problem}"
                break
        self._start = self._segments[0].base if self._segments else 0
        self._end = expected if expected is not None else 0
        latest = self.latest_snapshot()
        if latest is not None and latest.offset > self._end:  # the log restarts at the snapshot
            self._segments, self._epochs, self._controls = [], [], {}
            self._start = self._end = latest.offset
        self._snapshots = [s for s in self._snapshots if s.offset >= self._start or s == BOOTSTRAP_SNAPSHOT_ID]

    # -- what load_history and the plan ask ------------------------------------------------
    def start_offset(self) -> int:
        return self._start

    def end_offset(self) -> int:
        return self._end

    def epoch_entries(self) -> list[tuple[int, int]]:
        return list(self._epochs)

    def last_fetched_epoch(self) -> int:
        if self._epochs:
            return self._epochs[-1][0]
        snap = self.latest_snapshot()
        return snap.epoch if snap is not None else 0

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        earliest = self._snapshots[0] if self._snapshots else None
        return metadata_end_offset_for([e for e, _ in self._epochs], [o for _, o in self._epochs], epoch,
                                       self._end, self.last_fetched_epoch(), earliest)

    def latest_snapshot(self) -> OffsetAndEpoch | None:
        for snapshot_id in reversed(self._snapshots):
            if snapshot_id != BOOTSTRAP_SNAPSHOT_ID:
                return snapshot_id
        return None

    def bootstrap_checkpoint(self) -> bytes | None:
        if BOOTSTRAP_SNAPSHOT_ID not in self._snapshots:
            return None
        return snapshot_path(self.directory, BOOTSTRAP_SNAPSHOT_ID).read_bytes()

    def read_snapshot(self, snapshot_id: OffsetAndEpoch, position: int, max_bytes: int) -> bytes:
        return read_snapshot_bytes(self.directory, snapshot_id, position, max_bytes)

    def snapshot_size(self, snapshot_id: OffsetAndEpoch) -> int:
        return snapshot_file_size(self.directory, snapshot_id)

    def control_offsets(self, start: int) -> list[int]:
        return sorted(b for b in self._controls if b >= start)

    def read(self, offset: int, max_bytes: int) -> bytes:
        """The control batch at ``offset`` (all ``load_history`` reads here)."""
        path, pos, size = self._controls[offset]
        with open(path, "rb") as f:
            f.seek(pos)
            return f.read(size)

    def voter_history(self):
        """The voter history the node will start with (kraft.version 1: no static voters)."""
        return load_history(SimpleNamespace(static_voters=(), default_listener=None), self)

    def batches(self, start: int, end: int):
        """``(base offset, last offset, epoch, bytes)`` of the batches in ``[start, end)``."""
        for segment in self._segments:
            fd = os.open(segment.path, os.O_RDONLY)
            try:
                headers, _, _ = scan_segment(fd, segment.valid_bytes, segment.base)
                for pos, header in headers:
                    if header.next_offset <= start or header.base_offset >= end:
                        continue
                    yield (header.base_offset, header.last_offset, header.partition_leader_epoch,
                           os.pread(fd, header.size, pos))
            finally:
                os.close(fd)

    def describe_records(self, start: int, end: int) -> str:
        """``3 batches, 5 records: PartitionRecord x3, TopicRecord x1, ...`` for ``[start, end)``."""
        return describe_batches(b[3] for b in self.batches(start, end))


def describe_batches(datas) -> str:
    """Counts of record kinds, read from the batches' framing (no record is decoded
    whole: a million records take seconds, not minutes)."""
    batches, kinds = 0, Counter()
    for data in datas:
        for info in walk(data):
            batches += 1
            if read_header(data, info.start).compression != CompressionType.NONE:
                for batch in iter_batches(bytes(data[info.start:info.end])):
                    for record in batch.records:
                        kinds[_kind(info.is_control, record.key, record.value)] += 1
            elif info.is_control:
                for key, _ in batch_records(data, info):
                    kinds[_kind(True, key, None)] += 1
            else:
                for value in batch_values(data, info):
                    # frame version 1 and a one-byte type: the common case, read without unframing
                    if value is not None and len(value) > 1 and value[0] == 1 and value[1] < 0x80:
                        kinds[_NAMES.get(value[1]) or _kind(False, None, value)] += 1
                    else:
                        kinds[_kind(False, None, value)] += 1
    if not batches:
        return "no batches"
    total = sum(kinds.values())
    parts = ", ".join(f"{name} x{count}" for name, count in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{batches} batch{'es' if batches != 1 else ''}, {total} record{'s' if total != 1 else ''}: {parts}"


_NAMES = {api_key: cls.__name__ for api_key, cls in METADATA_RECORD_TYPES.items()}


def _kind(control: bool, key, value) -> str:
    try:
        if control:
            return control_record_type(key).name
        api_key = unframe_metadata_record(value)[0]
    except ValueError:
        return "undecodable record"
    cls = METADATA_RECORD_TYPES.get(api_key)
    return cls.__name__ if cls is not None else f"unknown record type {api_key}"


def _meta(root: Path) -> MetaProperties:
    path = root / "meta.properties"
    try:
        return MetaProperties.from_props(load_properties(path), str(path))
    except (OSError, MetaPropertiesError, ValueError):
        raise TerseError(f"Unable to read meta.properties from {root}") from None
