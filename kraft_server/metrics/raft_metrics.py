"""Kafka's ``raft-metrics`` group as plain values, computed from read-only views of the core.

Names follow Apache Kafka (``raft/.../internals/KafkaRaftMetrics.java``, MBean
``kafka.server:type=raft-metrics,name=<name>``) and KIP-853's monitoring section:

- every replica: current-state, current-leader, current-vote, current-epoch,
  high-watermark, log-end-offset, log-end-epoch, number-of-voters,
  duplicate-voter-ids, commit-latency-avg, commit-latency-max;
- only the active leader (as in Kafka, where they are added on becoming leader):
  number-of-observers, uncommitted-voter-change, pending-add-voter,
  pending-remove-voter, number-of-offline-voters.

Derived rather than hooked, so the core stays untouched:

- pending-add/remove-voter compare the latest voter set with the committed one (a
  voter only in the latest set is being added; one only in the committed set is being
  removed). Kafka also counts the moment before the VotersRecord is appended (its
  ApiVersions check of the new voter); that phase is not visible here.
- number-of-offline-voters counts voters other than the leader that have not
  fetched within ``controller.quorum.fetch.timeout.ms`` (KIP-853's definition).
- commit latency: each time the leader's log end offset grows (from its first turn
  as leader of an epoch on), the shell's turn time is remembered; when the high watermark passes that offset the elapsed time is one
  sample. It starts at the append, so the ``controller.quorum.append.linger.ms`` a
  proposal waits before its batch is written is not in it (Kafka's batches carry the
  time of their first proposal). Avg and max are over the last ``window_ms`` (Kafka's default metric window
  is 2 samples of 30 s); NaN without samples, as Kafka reports.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from kraft_server.raft import Role

GROUP = "raft-metrics"
WINDOW_MS = 60_000


@dataclass(frozen=True)
class Metric:
    """One value: ``name`` is Kafka's (dashes), ``labels`` extra dimensions."""

    name: str
    help: str
    value: float
    labels: tuple[tuple[str, str], ...] = ()


class RaftMetrics:
    def __init__(self, core, raft_log, *, fetch_timeout_ms: int = 2000, window_ms: int = WINDOW_MS):
        self.core = core
        self.log = raft_log
        self.fetch_timeout_ms = fetch_timeout_ms
        self.window_ms = window_ms
        self._appended: deque = deque()  # (end offset, time it was first seen) on the leader
        self._leader_epoch = None
        self._seen_end = -1
        self._samples: deque = deque()  # (time, latency ms)

    # -- fed by the shell after every turn of the Ready loop ------------------------------
    def observe(self, now_ms: int) -> None:
        core = self.core
        if core.role is not Role.LEADER:
            self._appended.clear()
            self._leader_epoch = None
            return
        end = self.log.end_offset()
        if self._leader_epoch != core.epoch:
            # What is in the log when we first see ourselves leader (earlier epochs, and
            # this epoch's LeaderChange) was not proposed here: no samples for it.
            self._appended.clear()
            self._leader_epoch = core.epoch
            self._seen_end = end
        if end > self._seen_end:
            self._appended.append((end, now_ms))
            self._seen_end = end
        hwm = core.high_watermark
        while self._appended and hwm is not None and hwm >= self._appended[0][0]:
            _, t = self._appended.popleft()
            self._samples.append((now_ms, now_ms - t))
        self._expire(now_ms)

    def _expire(self, now_ms: int) -> None:
        while self._samples and self._samples[0][0] < now_ms - self.window_ms:
            self._samples.popleft()

    # -- the values ---------------------------------------------------------------------------
    def state_name(self) -> str:
        """Kafka's current-state strings."""
        core = self.core
        role = core.role
        if role is Role.LEADER:
            return "leader"
        if role is Role.CANDIDATE:
            return "candidate"
        if role is Role.PROSPECTIVE:
            return "prospective"
        if role is Role.RESIGNED:
            return "resigned"
        if role is Role.FOLLOWER:
            return "follower" if core.is_voter() else "observer"
        if core.voted_key is not None:
            return "voted"
        return "unattached"

    def current_vote(self) -> int:
        core = self.core
        if core.role in (Role.LEADER, Role.CANDIDATE):
            return core.local_key.node_id
        voted = core.voted_key
        return -1 if voted is None else voted.node_id

    def commit_latency(self, now_ms: int) -> tuple[float, float]:
        self._expire(now_ms)
        if not self._samples:
            return math.nan, math.nan
        values = [v for _, v in self._samples]
        return sum(values) / len(values), float(max(values))

    def collect(self, now_ms: int) -> list[Metric]:
        core = self.core
        hwm = core.high_watermark
        voters = core.voter_set()
        ids = [n.key.node_id for n in voters.nodes]
        avg, mx = self.commit_latency(now_ms)
        state = self.state_name()
        out = [
            Metric("current-state", "The current state of this member (label state).", 1.0,
                   (("state", state),)),
            Metric("current-leader", "The current quorum leader's id; -1 indicates unknown.",
                   core.leader_id if core.leader_id is not None else -1),
            Metric("current-vote", "The current voted id; -1 indicates not voted for anyone.",
                   self.current_vote()),
            Metric("current-epoch", "The current quorum epoch.", core.epoch),
            Metric("high-watermark", "The high watermark maintained on this member; -1 if it is unknown.",
                   -1 if hwm is None else hwm),
            Metric("log-end-offset", "The current raft log end offset.", self.log.end_offset()),
            Metric("log-end-epoch", "The current raft log end epoch.", self.log.last_fetched_epoch()),
            Metric("number-of-voters", "Number of voters for the KRaft topic partition.", len(ids)),
            Metric("duplicate-voter-ids", "Number of voter ids that appear more than once in the voter set.",
                   len(ids) - len(set(ids))),
            Metric("commit-latency-avg", "The average time in milliseconds to commit an entry in the raft log.", avg),
            Metric("commit-latency-max", "The maximum time in milliseconds to commit an entry in the raft log.", mx),
        ]
        if core.role is Role.LEADER:
            out.extend(self._leader_metrics(now_ms, voters))
        return out

    def _leader_metrics(self, now_ms: int, latest) -> list[Metric]:
        core = self.core
        states = core.replica_states(now_ms)
        voter_states, observer_states = states if states is not None else ([], [])
        committed = core.committed_voter_set()
        latest_keys, committed_keys = set(latest.keys()), set(committed.keys())
        me = core.local_key.node_id
        offline = sum(1 for s in voter_states if s.key.node_id != me and (
            s.last_fetch_ms < 0 or now_ms - s.last_fetch_ms > self.fetch_timeout_ms))
        return [
            Metric("number-of-observers", "Number of observers being tracked by the KRaft topic partition leader.",
                   len(observer_states)),
            Metric("uncommitted-voter-change", "1 if there is a voter change that has not been committed, 0 otherwise.",
                   int(latest_keys != committed_keys)),
            Metric("pending-add-voter", "1 if there is a pending add voter operation, 0 otherwise.",
                   int(bool(latest_keys - committed_keys))),
            Metric("pending-remove-voter", "1 if there is a pending remove voter operation, 0 otherwise.",
                   int(bool(committed_keys - latest_keys))),
            Metric("number-of-offline-voters",
                   "Number of voters that have not fetched within the fetch timeout.", offline),
        ]
