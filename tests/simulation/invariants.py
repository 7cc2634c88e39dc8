"""Safety invariants checked after every simulation step.

- SingleLeader: at most one leader per epoch, ever.
- MonotonicEpoch: a node's epoch never decreases (across restarts too: it is stored).
- MonotonicHighWatermark: a node's known HWM never decreases while it runs (it is
  not persisted, as in Kafka) and always sits on a batch boundary.
- ConsistentCommittedData: every batch below a node's HWM is byte-identical to the
  batch the first node committed at that offset, and no two committed batches
  overlap (holes are allowed: a node restored from a snapshot reports only what
  follows the snapshot).
- LeaderHasAllCommitted: a leader's log holds every committed batch above its log
  start (committed data is never lost, even after crashes).
- NoTruncationBelowHWM, NoConflictingLeader: counters the core keeps must stay zero.

Membership changes add their own (``membership.MembershipChecker``).
- SnapshotAtLogStart: a log whose start offset is above 0 has a snapshot ending
  there (Kafka's RaftEventSimulationTest invariant of the same name), and none below
  it: Kafka forgets older snapshots whenever the log start moves (deleteBeforeSnapshot,
  truncateToLatestSnapshot, start-up), and the leader's position checks rely on the
  earliest snapshot being the one at the log start. A model log that kept them sent
  followers a wrong DivergingEpoch (default seed 100102: a committed batch differed)
  or the same snapshot forever (chaos 200084, membership 300011: no progress).
- ConsistentSnapshots: two snapshots with the same id hold the same metadata state,
  whichever node wrote them, and a node's image never goes back in offset.
"""
from __future__ import annotations

import bisect

from kraft_server.raft.roles.base import Role


class InvariantViolation(AssertionError):
    pass


class Checker:
    def __init__(self):
        self.leaders: dict[int, int] = {}  # epoch -> leader id
        self.epochs: dict[int, int] = {}  # node id -> last epoch seen
        self.hwms: dict[int, int] = {}  # node id -> last known HWM (this incarnation)
        self.checked: dict[int, int] = {}  # node id -> offset checked up to
        self.committed: dict[int, tuple] = {}  # base offset -> (last offset, batch bytes)
        self._bases: list[int] = []  # sorted keys of ``committed``
        self.committed_end = 0
        self.committed_last_epoch = -1  # leader epoch of the batch that ends at committed_end
        self.leader_checked: set = set()  # (node, epoch) already verified
        self.snapshot_contents: dict = {}  # snapshot id -> MetadataImage.content()
        self.starts_ok: dict = {}  # node id -> (log start, latest snapshot) last verified
        self.snapshots_written = 0

    def restarted(self, node_id: int) -> None:
        self.hwms.pop(node_id, None)
        self.checked.pop(node_id, None)

    def check(self, node_id: int, node, log) -> None:
        epoch, role = node.epoch, node.role
        last = self.epochs.get(node_id, -1)
        if epoch < last:
            raise InvariantViolation(f"node {node_id}: epoch went back from {last} to {epoch}")
        self.epochs[node_id] = epoch
        if role is Role.LEADER:
            if not self.leader_may_lead(node):
                raise InvariantViolation(f"node {node_id} leads epoch {epoch} but is not a voter")
            other = self.leaders.setdefault(epoch, node_id)
            if other != node_id:
                raise InvariantViolation(f"two leaders in epoch {epoch}: {other} and {node_id}")
            if (node_id, epoch) not in self.leader_checked:
                self.leader_checked.add((node_id, epoch))
                self._leader_has_all(node_id, log)
        for counter in ("truncated_below_hwm", "conflicting_leader", "hwm_regression_ignored"):
            if node.stats[counter]:
                raise InvariantViolation(f"node {node_id}: {counter} = {node.stats[counter]}")
        start = log.start_offset()
        if start > 0 and self.starts_ok.get(node_id) != (start, log.latest_snapshot()):
            ids = log.snapshot_ids()
            if start not in {s.offset for s in ids}:
                raise InvariantViolation(f"node {node_id}: log starts at {start} with no snapshot there")
            if ids[0].offset < start:
                raise InvariantViolation(f"node {node_id}: snapshot {ids[0]} is below the log start {start}")
            self.starts_ok[node_id] = (start, log.latest_snapshot())
        hwm = node.high_watermark
        if hwm is None:
            return
        prev = self.hwms.get(node_id)
        if prev is not None and hwm < prev:
            raise InvariantViolation(f"node {node_id}: HWM went back from {prev} to {hwm}")
        self.hwms[node_id] = hwm
        if hwm > self.checked.get(node_id, 0):
            self._check_committed(node_id, log, hwm)

    def leader_may_lead(self, node) -> bool:
        """A leader is a voter (membership.py relaxes this for a leader being removed)."""
        return node.is_voter()

    def _check_committed(self, node_id: int, log, hwm: int) -> None:
        start = self.checked.get(node_id, 0)
        for base, last, epoch, data in log.batches_from(start):
            if base >= hwm:
                break
            if last >= hwm:
                raise InvariantViolation(f"node {node_id}: HWM {hwm} inside batch {base}-{last}")
            known = self.committed.get(base)
            if known is None:
                self._record(node_id, base, last, epoch, data)
            elif known[1] != data:
                raise InvariantViolation(f"node {node_id}: committed batch at {base} differs")
        self.checked[node_id] = hwm

    def _record(self, node_id: int, base: int, last: int, epoch: int, data: bytes) -> None:
        """A committed batch nobody reported yet. Holes are legitimate (a node that
        installed a snapshot reports only what follows it), overlaps are not: they
        mean two nodes hold different batches at the same committed offsets."""
        i = bisect.bisect_left(self._bases, base)
        if i > 0 and self.committed[self._bases[i - 1]][0] >= base:
            raise InvariantViolation(f"node {node_id}: committed batch {base}-{last} overlaps "
                                     f"batch at {self._bases[i - 1]}")
        if i < len(self._bases) and self._bases[i] <= last:
            raise InvariantViolation(f"node {node_id}: committed batch {base}-{last} overlaps "
                                     f"batch at {self._bases[i]}")
        self._bases.insert(i, base)
        self.committed[base] = (last, data)
        if last + 1 > self.committed_end:
            self.committed_end, self.committed_last_epoch = last + 1, epoch

    def _leader_has_all(self, node_id: int, log) -> None:
        if log.end_offset() < self.committed_end:
            raise InvariantViolation(f"leader {node_id} log ends at {log.end_offset()}, "
                                     f"committed data reaches {self.committed_end}")
        for base, _, _, data in log.batches_from(log.start_offset()):
            if base >= self.committed_end:
                break
            known = self.committed.get(base)
            if known is not None and known[1] != data:
                raise InvariantViolation(f"leader {node_id}: committed batch at {base} differs")

    def check_snapshots(self, node_id: int, controller, log) -> None:
        """Every snapshot this node wrote since the last call holds the same state as any
        other snapshot with that id (read back from the log, as a follower would)."""
        written = controller.snapshots.written
        seen = getattr(controller, "sim_snapshots_checked", 0)
        if seen == len(written):
            return
        from kraft_server.controller.image.loader import MetadataLoader

        for sid in written[seen:]:
            self.snapshots_written += 1
            if sid not in set(log.snapshot_ids()):
                continue  # already removed by retention
            probe = MetadataLoader(log)
            probe.load_snapshot(sid)
            content = probe.image.content()
            known = self.snapshot_contents.setdefault(sid, content)
            if known != content:
                raise InvariantViolation(f"node {node_id}: snapshot {sid} differs from another node's")
        controller.sim_snapshots_checked = len(written)
