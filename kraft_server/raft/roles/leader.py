"""Leader: replicates through Fetch, decides the high watermark, checks its quorum.

What it tracks (``LeaderState.java``):
- a ``ReplicaState`` per voter of the *latest* voter set (uncommitted VotersRecords
  included, as Kafka does) and per observer that fetched in the last 300 s;
- voters that have not acknowledged the epoch yet (BeginQuorumEpoch is re-sent to
  them until they fetch or answer);
- check-quorum: if no majority fetched within 1.5 x fetch timeout, resign;
- the append linger: proposals wait ``append.linger.ms`` and go out as one batch;
- the one voter change in flight (``membership.PendingChange``, KIP-853) and, under
  kraft.version 0, the voters learned through UpdateRaftVoter for the upgrade to 1
  (``upgrade_voters``, Kafka's ``KRaftVersionUpgrade.Voters``).

When the latest voter set no longer holds the leader, its own state moves to the
observers (as in Kafka) and stops counting toward the high watermark.

Its own end offset counts only once flushed, so the HWM never covers data that a
majority has not made durable.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from kraft_server.raft.quorum_config import OBSERVER_SESSION_TIMEOUT_MS
from kraft_server.raft.roles.base import OwnEpoch, Role
from kraft_server.raft.voters import VoterKey, VoterSet, majority
from wire.uuids import ZERO_UUID

ROLE = Role.LEADER


def _state_matches(stored: VoterKey, key: VoterKey) -> bool:
    """Kafka's ``ReplicaState.matchesKey``: same id and, when the voter is known with a
    directory id, that same directory. A fetch without one (below Fetch v17) does not
    match such a voter: it may come from a replacement disk reusing the id, so it is
    an observer's fetch and never counts toward the HWM or check-quorum. A voter known
    without a directory id (kraft.version 0) matches any fetch with its id."""
    if stored.node_id != key.node_id:
        return False
    return stored.directory_id == ZERO_UUID or stored.directory_id == key.directory_id


CAUGHT_UP_WINDOW_MS = 3_600_000  # an observer fetched within the hour: it may become a voter


@dataclass
class ReplicaState:
    """What the leader knows of one replica (DescribeQuorum's ReplicaState)."""

    key: VoterKey
    end_offset: int = -1  # -1 until it fetched in this epoch
    last_fetch_ms: int = -1
    last_caught_up_ms: int = -1
    last_fetch_leader_leo: int = -1  # leader LEO at the previous fetch

    def record_fetch(self, fetch_offset: int, leader_leo: int, now_ms: int) -> None:
        # LeaderState.ReplicaState.updateFollowerState: caught up now if it reached our
        # LEO; caught up as of its previous fetch if it reached the LEO we had then.
        if fetch_offset >= leader_leo:
            self.last_caught_up_ms = max(self.last_caught_up_ms, now_ms)
        elif fetch_offset >= self.last_fetch_leader_leo > 0:
            self.last_caught_up_ms = max(self.last_caught_up_ms, self.last_fetch_ms)
        self.last_fetch_leader_leo = leader_leo
        self.last_fetch_ms = now_ms
        self.end_offset = fetch_offset


@dataclass
class PendingFetch:
    """A parked Fetch (long poll): answered on new data, a HWM change or MaxWaitMs."""

    inbound: object  # the InboundRequest, answered through the outbox
    key: object  # the fetcher's VoterKey
    partition: object  # the request's FetchPartition
    follower_hwm: int
    high_watermark: int | None  # ours when it was parked
    deadline_ms: int

    @property
    def fetch_offset(self) -> int:
        return self.partition.fetch_offset


@dataclass
class LeaderState(OwnEpoch):
    epoch: int
    local_key: VoterKey
    epoch_start_offset: int
    check_quorum_deadline_ms: int
    voters: dict = field(default_factory=dict)  # node id -> ReplicaState
    observers: dict = field(default_factory=dict)  # node id -> ReplicaState
    unacked_voters: set = field(default_factory=set)  # BeginQuorumEpoch not yet acked
    fetched_voters: set = field(default_factory=set)  # check-quorum window
    granting_voters: tuple = ()
    pending_records: list = field(default_factory=list)  # linger buffer
    pending_bytes: int = 0
    # Proposed batches appended but not committed: (last offset, bytes), oldest first.
    uncommitted: deque = field(default_factory=deque)
    uncommitted_bytes: int = 0
    linger_deadline_ms: int | None = None
    drain_put_off: int | None = None  # the Ready (count) whose answers a due append let go first
    parked: list = field(default_factory=list)  # PendingFetch
    parked_deadline: int | None = None  # the earliest MaxWaitMs deadline in ``parked`` (or earlier)
    parked_quiet: tuple = ()  # (log end, HWM) when a scan of ``parked`` last found nothing due
    answers_deferred: bool = False  # observers' Fetches due but left for the next Ready
    due_observers: int = 0  # ...that many, at the head of ``parked`` (not classified again)
    # Fetch answers of this Ready by (offset, max bytes, listener, version), valid while
    # (log end, HWM, log start) equal ``answers_stamp`` (rpc/fetch.py)
    answers: dict = field(default_factory=dict)
    answers_stamp: tuple = ()
    resign_requested: bool = False
    change: object = None  # membership.PendingChange: an Add/RemoveRaftVoter in flight
    upgrade_voters: VoterSet | None = None  # kraft.version 0: voters as UpdateRaftVoter told us
    upgrade: object = None  # membership.PendingUpgrade: an UpdateFeatures kraft.version upgrade
    own_update_due_ms: int = 0  # own_voter.py: when to compare our voter entry with our listeners
    own_update_done: bool = False
    role = ROLE

    # -- backlog (backpressure for ``propose``) -------------------------------------------
    def backlog_bytes(self) -> int:
        """Bytes proposed in this epoch and not yet committed (lingering or appended)."""
        return self.pending_bytes + self.uncommitted_bytes

    def appended(self, last_offset: int, size: int) -> None:
        self.uncommitted.append((last_offset, size))
        self.uncommitted_bytes += size

    def committed(self, high_watermark: int) -> None:
        while self.uncommitted and self.uncommitted[0][0] < high_watermark:
            self.uncommitted_bytes -= self.uncommitted.popleft()[1]

    # -- replicas -----------------------------------------------------------------------
    def set_voters(self, voters: VoterSet) -> None:
        """Follow the latest voter set: keep known states, move observers that became
        voters (and voters that were removed) across."""
        new = {}
        old_voters = dict(self.voters)
        for key in voters.keys():
            # LeaderState.updateVoterAndObserverStates: the voter state if its key
            # matches (a voter known without a directory id matches any), else the
            # observer with exactly this key, else a fresh one; then re-keyed, so an
            # upgrade to kraft.version 1 gives the voters their directory ids.
            state = self.voters.get(key.node_id)
            if state is None or not _state_matches(state.key, key):
                state = self.observers.get(key.node_id)
                if state is not None and state.key != key:
                    state = None
            if state is None:
                state = ReplicaState(key)
            old_voters.pop(key.node_id, None)
            seen = self.observers.get(key.node_id)
            if seen is not None and seen.key == key:
                del self.observers[key.node_id]
            state.key = key
            new[key.node_id] = state
        for node_id, state in old_voters.items():
            self.observers[node_id] = state
        self.voters = new

    def is_voter_key(self, key: VoterKey) -> bool:
        """A voter of the latest set with a matching directory (a replica that reuses a
        voter's id with a new disk is an observer: ``LeaderState.isVoter``)."""
        state = self.voters.get(key.node_id)
        return state is not None and _state_matches(state.key, key)

    def replica(self, key: VoterKey) -> ReplicaState:
        state = self.voters.get(key.node_id)
        if state is not None and _state_matches(state.key, key):
            return state
        state = self.observers.get(key.node_id)
        if state is None or state.key != key:
            state = self.observers[key.node_id] = ReplicaState(key)
        return state

    def expire_observers(self, now_ms: int) -> None:
        for node_id in [i for i, s in self.observers.items()
                        if now_ms - s.last_fetch_ms >= OBSERVER_SESSION_TIMEOUT_MS
                        and i != self.local_key.node_id]:
            del self.observers[node_id]

    def is_caught_up(self, key: VoterKey, now_ms: int) -> bool:
        """``LeaderState.isReplicaCaughtUp``: the replica caught up once and fetched
        within the last hour."""
        state = self.voters.get(key.node_id)
        if state is None or state.key != key:
            state = self.observers.get(key.node_id)
        if state is None or state.key != key:
            return False
        return state.last_caught_up_ms > 0 and state.last_fetch_ms > now_ms - CAUGHT_UP_WINDOW_MS

    def voter_end_offsets(self) -> list[int]:
        return [max(s.end_offset, 0) for s in self.voters.values()]

    # -- check-quorum (KIP-996 era LeaderState.updateCheckQuorumForFollowingVoter) ------
    def record_voter_fetch(self, node_id: int, now_ms: int, timeout_ms: int) -> None:
        if node_id not in self.voters or node_id == self.local_key.node_id:
            return
        self.fetched_voters.add(node_id)
        if len(self.fetched_voters) >= self.check_quorum_needed():
            self.fetched_voters.clear()
            self.check_quorum_deadline_ms = now_ms + timeout_ms

    def check_quorum_needed(self) -> int:
        need = majority(len(self.voters))
        if self.local_key.node_id in self.voters:
            need -= 1  # the leader counts itself
        return need

    def preferred_candidates(self) -> list[VoterKey]:
        """Other voters, most caught-up first (``nonLeaderVotersByDescendingFetchOffset``)."""
        others = [s for i, s in self.voters.items() if i != self.local_key.node_id]
        others.sort(key=lambda s: (-s.end_offset, s.key.node_id))
        return [s.key for s in others]
