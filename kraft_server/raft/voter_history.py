"""Which voter set and kraft.version were in force at each offset (KIP-853).

Kafka's ``KRaftControlRecordStateMachine`` keeps the same history: it reads
KRaftVersionRecord and VotersRecord control records from the snapshot and the log,
and records at which offset each took effect. The base comes from the bootstrap
checkpoint (offset -1, kraft.version 1) or from ``controller.quorum.voters``
(kraft.version 0, which has no records at all).

- ``latest()`` is what the leader replicates to and counts votes in: Kafka acts on a
  VotersRecord as soon as it is in the log, committed or not.
- ``committed(high_watermark)`` is the set as of the high watermark.
- ``truncate_to(offset)`` forgets entries the log dropped (follower divergence).
"""
from __future__ import annotations

import bisect

from wire.records import ControlRecordType, control_records, walk

from kraft_server.raft.quorum_config import MAX_BATCH_BYTES
from kraft_server.raft.voters import VoterSet


class VoterHistory:
    def __init__(self, base: VoterSet, base_kraft_version: int, base_offset: int = -1):
        self._base = base
        self._base_kraft_version = base_kraft_version
        self._base_offset = base_offset
        self._voter_offsets: list[int] = []
        self._voter_sets: list[VoterSet] = []
        self._version_offsets: list[int] = []
        self._versions: list[int] = []
        self.next_offset = 0  # how far the log has been read

    # -- feeding ------------------------------------------------------------------------
    def add_voters(self, offset: int, voters: VoterSet) -> None:
        if self._voter_offsets and offset <= self._voter_offsets[-1]:
            raise ValueError(f"voter set at {offset} is not after {self._voter_offsets[-1]}")
        self._voter_offsets.append(offset)
        self._voter_sets.append(voters)

    def add_kraft_version(self, offset: int, version: int) -> None:
        self._version_offsets.append(offset)
        self._versions.append(version)

    def observe(self, buf) -> None:
        """Read control records from whole log batches appended at ``next_offset``."""
        for info in walk(buf):
            if info.base_offset < self.next_offset:
                continue  # already read (a snapshot overlapping the log)
            if info.is_control:
                for i, (kind, msg) in enumerate(control_records(buf, info)):
                    self._apply(info.base_offset + i, kind, msg)
            self.next_offset = info.next_offset

    def observe_snapshot(self, buf, snapshot_end: int) -> None:
        """A snapshot's control records take effect at ``snapshot_end - 1`` whatever
        offsets its batches carry (``KRaftControlRecordStateMachine``)."""
        found = {}
        for info in walk(buf):
            if info.is_control:
                for kind, msg in control_records(buf, info):
                    found[kind] = msg
        for kind, msg in found.items():
            self._apply(snapshot_end - 1, kind, msg)
        self.next_offset = snapshot_end

    def _apply(self, offset: int, kind, msg) -> None:
        if kind is ControlRecordType.KRAFT_VOTERS:
            self.add_voters(offset, VoterSet.from_voters_record(msg))
        elif kind is ControlRecordType.KRAFT_VERSION:
            self.add_kraft_version(offset, msg.kraft_version)

    def truncate_to(self, offset: int) -> None:
        """Forget entries at or after ``offset``."""
        i = bisect.bisect_left(self._voter_offsets, offset)
        del self._voter_offsets[i:], self._voter_sets[i:]
        j = bisect.bisect_left(self._version_offsets, offset)
        del self._version_offsets[j:], self._versions[j:]
        self.next_offset = min(self.next_offset, offset)

    def reset(self, next_offset: int) -> None:
        """Forget everything read from the log (before re-reading a snapshot)."""
        self._voter_offsets.clear(), self._voter_sets.clear()
        self._version_offsets.clear(), self._versions.clear()
        self.next_offset = next_offset

    # -- views --------------------------------------------------------------------------
    def latest(self) -> VoterSet:
        return self._voter_sets[-1] if self._voter_sets else self._base

    def latest_offset(self) -> int:
        """Offset of the newest VotersRecord; -1 when the set is the base one."""
        return self._voter_offsets[-1] if self._voter_offsets else self._base_offset

    def entries(self) -> list[tuple[int, VoterSet]]:
        """``(offset, voter set)`` of the base set and of every VotersRecord read, oldest
        first (the console's voter-set history)."""
        return [(self._base_offset, self._base)] + list(zip(self._voter_offsets, self._voter_sets))

    def committed(self, high_watermark: int | None) -> VoterSet:
        """The voter set whose record is below the high watermark."""
        if high_watermark is None:
            return self._base if not self._voter_offsets or self._voter_offsets[0] >= 0 else self._voter_sets[0]
        i = bisect.bisect_left(self._voter_offsets, high_watermark)
        return self._voter_sets[i - 1] if i > 0 else self._base

    def kraft_version(self) -> int:
        return self._versions[-1] if self._versions else self._base_kraft_version

    def only_from_bootstrap(self) -> bool:
        """True when kraft.version is 1 but no VotersRecord reached the log yet: the
        first leader must write KRaftVersion and Voters records at the start of its
        epoch (``LeaderState.appendStartOfEpochControlRecords``)."""
        return self._base_kraft_version >= 1 and not self._voter_offsets


def load_history(config, log) -> VoterHistory:
    """The history at start-up: the static voters (kraft.version 0) or the bootstrap
    checkpoint, then the latest snapshot, then the control batches of the log (from its
    batch index when it has one, else by reading the whole log)."""
    if config.static_voters:
        history = VoterHistory(VoterSet.from_static(config.static_voters, config.default_listener), 0)
    else:
        base, version = VoterSet(()), 1
        checkpoint = log.bootstrap_checkpoint()
        if checkpoint:
            probe = VoterHistory(base, 1)
            probe.observe(checkpoint)
            base, version = probe.latest(), probe.kraft_version()
        history = VoterHistory(base, version)
    snap = log.latest_snapshot()
    if snap is not None:
        history.observe_snapshot(log.read_snapshot(snap, 0, log.snapshot_size(snap)), snap.offset)
    offset = max(log.start_offset(), history.next_offset)
    controls = log.control_offsets(offset)
    if controls is not None:  # only the control batches carry voter history
        for base in controls:
            history.observe(log.read(base, 1))  # that one batch
        history.next_offset = max(history.next_offset, log.end_offset())
        return history
    while offset < log.end_offset():
        history.observe(log.read(offset, MAX_BATCH_BYTES))
        offset = history.next_offset
    return history
