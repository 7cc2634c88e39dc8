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
        self.leader_checked: set = set()  # (node, epoch) already verified

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
            if not node.is_voter():
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
        hwm = node.high_watermark
        if hwm is None:
            return
        prev = self.hwms.get(node_id)
        if prev is not None and hwm < prev:
            raise InvariantViolation(f"node {node_id}: HWM went back from {prev} to {hwm}")
        self.hwms[node_id] = hwm
        if hwm > self.checked.get(node_id, 0):
            self._check_committed(node_id, log, hwm)

    def _check_committed(self, node_id: int, log, hwm: int) -> None:
        start = self.checked.get(node_id, 0)
        for base, last, _, data in log.batches_from(start):
            if base >= hwm:
                break
            if last >= hwm:
                raise InvariantViolation(f"node {node_id}: HWM {hwm} inside batch {base}-{last}")
            known = self.committed.get(base)
            if known is None:
                self._record(node_id, base, last, data)
            elif known[1] != data:
                raise InvariantViolation(f"node {node_id}: committed batch at {base} differs")
        self.checked[node_id] = hwm

    def _record(self, node_id: int, base: int, last: int, data: bytes) -> None:
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
        self.committed_end = max(self.committed_end, last + 1)

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
