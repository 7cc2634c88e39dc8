"""What the nodes say during the run, polled at every node (a thread each, with
Kafka's probe codec, independent of ours): DescribeQuorum, which only the leader
answers (with its epoch and high watermark; others say NOT_LEADER_OR_FOLLOWER, as
Kafka's do), and DescribeCluster, whose controller id is the leader a node follows.
From them:

* the nodes that claim the leadership of each epoch (two for one epoch: a violation);
* the high watermark a leader reports: within an epoch it never goes back, and no
  leader of a later epoch reports less than a leader of an earlier epoch did
  (a new leader reports nothing until it commits in its epoch);
* which node leads now (for the writer): a majority of nodes name the same controller
  and it claims an epoch;
* the time without a leader able to commit: the intervals between two rises of the
  highest high watermark any leader reported (the leader commits a NoOpRecord every
  ``metadata.max.idle.interval.ms``, so a working leader moves it many times a second).
  Those over ``GAP_S`` are kept as gaps; the run names the faults that overlapped them.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from tools.kafka_dist.probe import describe_cluster, describe_quorum

POLL_S = 0.1
FRESH_S = 1.5  # an answer older than this no longer counts towards a majority
LEADER_FRESH_S = 0.5  # nor a leader's claim older than this (a killed or stopped leader)


GAP_S = 1.0


@dataclass
class Gap:
    start: float
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass
class Monitor:
    ports: dict[int, int]
    leaders: dict[int, set[int]] = field(default_factory=dict)  # epoch -> nodes that claimed it
    violations: list[str] = field(default_factory=list)
    hwm: dict[int, int] = field(default_factory=dict)  # epoch -> highest HWM its leader reported
    gaps: list[Gap] = field(default_factory=list)
    # id -> (time, the controller it names, the epoch it claims to lead or -1, its high watermark)
    latest: dict[int, tuple[float, int, int, int]] = field(default_factory=dict)

    def __post_init__(self):
        self.lock = threading.Lock()
        self.halt = threading.Event()
        self.threads = [threading.Thread(target=self._poll, args=(i,), daemon=True, name=f"chaos-monitor-{i}")
                        for i in self.ports]
        self.last_progress: float | None = None  # when the highest HWM last rose

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def stop(self) -> None:
        self.halt.set()
        for t in self.threads:
            if t.is_alive():
                t.join(5)

    def _poll(self, node_id: int) -> None:
        while not self.halt.is_set():
            try:
                port = self.ports[node_id]
                named = describe_cluster("127.0.0.1", port, timeout=0.5)
                q = describe_quorum("127.0.0.1", port, timeout=0.5)
                claim = q.error_code == 0 and q.leader_id == node_id
                self._observe(node_id, named.controller_id if named.error_code == 0 else -1,
                              q.leader_epoch if claim else -1, q.high_watermark if claim else -1)
            except (OSError, ValueError):
                pass
            self.halt.wait(POLL_S)

    def _observe(self, node_id: int, named: int, epoch: int, hwm: int) -> None:
        with self.lock:
            self.latest[node_id] = (time.monotonic(), named, epoch, hwm)
            if epoch < 0:
                return
            claims = self.leaders.setdefault(epoch, set())
            if node_id not in claims:
                claims.add(node_id)
                if len(claims) > 1:
                    self.violations.append(f"SingleLeader: epoch {epoch}: nodes {sorted(claims)} each claimed the leadership")
            if hwm > 0:
                before = max((h for e, h in self.hwm.items() if e < epoch), default=0)
                if hwm < before:
                    self.violations.append(f"MonotonicHighWatermark: leader {node_id} of epoch {epoch} "
                                           f"reports {hwm} after {before} in an earlier epoch")
                if hwm < self.hwm.get(epoch, 0):
                    self.violations.append(f"MonotonicHighWatermark: back in epoch {epoch}: {self.hwm[epoch]} -> {hwm}")
                if hwm > max(self.hwm.values(), default=0):
                    now = time.monotonic()
                    if self.last_progress is not None and now - self.last_progress > GAP_S:
                        self.gaps.append(Gap(self.last_progress, now))
                    self.last_progress = now
                self.hwm[epoch] = max(hwm, self.hwm.get(epoch, 0))

    def leader(self) -> tuple[int, int] | None:
        """(leader id, epoch): a majority of fresh answers name it, and it claims the epoch."""
        now = time.monotonic()
        with self.lock:
            fresh = {i: v for i, v in self.latest.items() if now - v[0] < FRESH_S}
        named = [v[1] for v in fresh.values() if v[1] >= 0]
        need = len(self.ports) // 2 + 1
        for pick in set(named):
            if (named.count(pick) >= need and pick in fresh and fresh[pick][2] >= 0
                    and now - fresh[pick][0] < LEADER_FRESH_S):
                return pick, fresh[pick][2]
        return None

    def guess(self) -> int | None:
        """The node most likely to lead now (for the writer): the agreed leader, else
        any node that says it leads the newest epoch."""
        agreed = self.leader()
        if agreed:
            return agreed[0]
        with self.lock:
            own = [(e, i) for i, (_, _, e, _) in self.latest.items() if e >= 0]
        return max(own)[1] if own else None

    def take_violations(self) -> list[str]:
        """What was seen since the last call."""
        with self.lock:
            out, self.violations = self.violations, []
        return out

    def max_hwm(self) -> int:
        with self.lock:
            return max(self.hwm.values(), default=0)

    def longest_gap(self) -> Gap | None:
        with self.lock:
            return max(self.gaps, key=lambda g: g.seconds, default=None)
