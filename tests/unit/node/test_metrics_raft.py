"""``RaftMetrics`` offline, on a stand-in core: commit latency from log end offset and
high watermark, the leader-only KIP-853 gauges and the voter-change derivations."""
from __future__ import annotations

import math

from kraft_server.metrics import RaftMetrics
from kraft_server.raft.roles.base import Role
from kraft_server.raft.roles.leader import ReplicaState
from kraft_server.raft.voters import VoterKey, VoterNode, VoterSet


def voter_set(*ids):
    return VoterSet(tuple(VoterNode(VoterKey(i), ()) for i in ids))


class FakeLog:
    def __init__(self):
        self.end = 0

    def end_offset(self):
        return self.end

    def last_fetched_epoch(self):
        return 4


class FakeCore:
    def __init__(self):
        self.role, self.epoch, self.leader_id, self.high_watermark = Role.LEADER, 4, 1, None
        self.local_key = VoterKey(1)
        self.voted_key = None
        self.latest, self.committed = voter_set(1, 2, 3), voter_set(1, 2, 3)
        self.fetches = {1: 0, 2: 0, 3: 0}
        self.observers = []

    def voter_set(self):
        return self.latest

    def committed_voter_set(self):
        return self.committed

    def is_voter(self):
        return True

    def replica_states(self, now_ms):
        return ([ReplicaState(VoterKey(i), last_fetch_ms=t) for i, t in self.fetches.items()],
                list(self.observers))


def values(metrics, now):
    return {(m.name, m.labels): m.value for m in metrics.collect(now)}


def test_commit_latency_is_append_to_high_watermark():
    core, log = FakeCore(), FakeLog()
    m = RaftMetrics(core, log, fetch_timeout_ms=2000)
    m.observe(990)  # first turn as leader: the log is empty
    log.end = 3
    m.observe(1000)  # offsets 0..2 appended at t=1000
    log.end = 5
    m.observe(1010)  # 3..4 at t=1010
    assert math.isnan(m.commit_latency(1010)[0])
    core.high_watermark = 3
    m.observe(1030)  # the first append committed after 30 ms
    assert m.commit_latency(1030) == (30.0, 30.0)
    core.high_watermark = 5
    m.observe(1080)  # the second after 70 ms
    assert m.commit_latency(1080) == (50.0, 70.0)
    assert math.isnan(m.commit_latency(1080 + 61_000)[0])  # samples age out of the window


def test_a_new_epoch_forgets_the_old_appends():
    core, log = FakeCore(), FakeLog()
    m = RaftMetrics(core, log)
    m.observe(0)
    log.end = 3
    m.observe(1)
    core.role = Role.FOLLOWER
    m.observe(10)
    core.role, core.epoch, core.high_watermark = Role.LEADER, 5, 3
    m.observe(5000)
    assert math.isnan(m.commit_latency(5000)[1])  # not a 5 s "latency" from the old epoch


def test_leader_gauges_and_voter_changes():
    core, log = FakeCore(), FakeLog()
    m = RaftMetrics(core, log, fetch_timeout_ms=2000)
    v = values(m, 1000)
    assert v[("current-state", (("state", "leader"),))] == 1
    assert v[("number-of-voters", ())] == 3 and v[("number-of-observers", ())] == 0
    assert v[("high-watermark", ())] == -1 and v[("log-end-epoch", ())] == 4
    assert v[("number-of-offline-voters", ())] == 0
    assert v[("uncommitted-voter-change", ())] == 0

    core.fetches[3] = -1  # never fetched this epoch
    core.latest = voter_set(1, 2, 3, 4)  # a VotersRecord adding 4, not yet committed
    core.observers = [ReplicaState(VoterKey(5))]
    v = values(m, 5000)
    assert v[("number-of-offline-voters", ())] == 2  # 2 fetched at 0 (> 2 s ago) and 3 never
    assert v[("pending-add-voter", ())] == 1 and v[("pending-remove-voter", ())] == 0
    assert v[("uncommitted-voter-change", ())] == 1 and v[("number-of-observers", ())] == 1

    core.latest = core.committed = voter_set(1, 2, 3, 4)
    core.latest = voter_set(1, 2, 4)
    v = values(m, 5000)
    assert v[("pending-add-voter", ())] == 0 and v[("pending-remove-voter", ())] == 1

    core.role, core.leader_id = Role.FOLLOWER, 2
    core.voted_key = None
    v = values(m, 5000)
    assert v[("current-state", (("state", "follower"),))] == 1 and v[("current-leader", ())] == 2
    assert ("number-of-observers", ()) not in v and ("pending-add-voter", ()) not in v
