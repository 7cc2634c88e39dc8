"""The simulated cluster: nodes, clock, network and faults, driven by one seeded RNG.

Everything that happens is an event on one priority queue ordered by simulated time
(ties by insertion order), so a seed replays exactly. Event kinds: message delivery,
request timeout, node wake-up (at the core's ``next_deadline_ms``), proposal,
crash, restart, partition, heal, clock jump and snapshot.

Every node runs a ``kraft_server.controller.Controller`` beside its core (polled
after each Ready, like the shell does): the leader writes bootstrap, registration
and NoOp records, and every node writes snapshots with small thresholds and
applies Kafka's retention, so log starts move and lagging nodes need FetchSnapshot.
Proposals are ConfigRecords over a bounded key set, so the snapshotted state changes.

Messages cross the generated codec: the sender's body is encoded at the version the
two nodes negotiate (the lower of their maxima, as ApiVersions would give) and the
receiver gets the decoded object. A version below the request's ``min_version``
fails locally with UNSUPPORTED_VERSION, as the shell reports it.
"""
from __future__ import annotations

import heapq
import random
import uuid
from collections import deque
from dataclasses import dataclass, field

from wire.messages import REQUESTS, RESPONSES

from kraft_server.log.disk import LogDirFailure
from kraft_server.log.memory import MemoryQuorumStateStore
from kraft_server.raft.quorum_config import QuorumConfig, StaticVoter
from kraft_server.raft.boundary import Endpoint, InboundRequest, InboundResponse, SendFailure
from kraft_server.raft.node import Backpressure, NotLeader, RaftNode
from kraft_server.raft.roles.base import Role
from kraft_server.raft.voters import VoterKey, VoterNode, VoterSet
from kraft_server.shell.loop import Shell
from wire.messages import KRaftVersionRecord, SnapshotFooterRecord, SnapshotHeaderRecord
from wire.records import ControlRecordType, build_control_batch

from kraft_server.controller import Controller, ControllerSettings
from kraft_server.controller.image import records as metadata_records
from kraft_server.log.bootstrap import DEFAULT_FEATURES

from tests.simulation.disk import SimDisk
from tests.simulation.invariants import Checker

CLUSTER_ID = "sim-cluster-AAAAAAAAAA"
PORT_BASE = 9090
# Highest version per API each simulated node may support; each node draws its own.
VERSION_CHOICES = {1: (15, 16, 17, 18), 52: (2, 2, 2, 1), 53: (0, 1, 1), 54: (0, 1, 1), 59: (0, 1),
                   82: (0,)}
# Under kraft.version 1 every node runs a KIP-853 release (3.9+: kraft.version 1 can only
# be formatted or finalized when every voter supports it), so each one speaks at least
# Fetch v17 and FetchSnapshot v1 (ReplicaDirectoryId), Vote v1, BeginQuorumEpoch v1 and
# EndQuorumEpoch v1 (directory ids, leader endpoints). Mixing in older maxima there would
# model a cluster Kafka cannot form: a fetch without a directory id from a voter known by
# one, or a BeginQuorumEpoch without the endpoints of a leader absent from the
# follower's voter set. Same tuple lengths as above, so the draws consume the RNG alike.
VERSION_CHOICES_KRAFT_V1 = {1: (17, 18, 17, 18), 52: (2, 2, 2, 1), 53: (1, 1, 1), 54: (1, 1, 1),
                            59: (1, 1), 82: (0,)}


@dataclass
class Faults:
    loss: float = 0.02  # probability a message is dropped
    duplicate: float = 0.01  # probability a delivered message arrives twice
    slow_fsync: float = 0.2  # probability a flush takes a while (a crash meanwhile loses it)
    fsync_ms: tuple = (1, 40)
    delay_ms: tuple = (1, 30)  # uniform one-way delay (so messages reorder)
    crash_every_ms: int = 4000  # mean time between crashes (0: never)
    partition_every_ms: int = 5000  # mean time between partitions (0: never)
    jump_every_ms: int = 15000  # mean time between clock jumps (0: never)
    shutdown_every_ms: int = 8000  # mean time between graceful leader shutdowns (0: never)
    snapshot_every_ms: int = 3000  # mean time between snapshots (0: never)
    propose_every_ms: int = 60
    # Probability that a crash closes the node's connections (its peers' requests fail
    # at once with DISCONNECTED, and connecting to it is refused until it restarts), as
    # when its process dies; otherwise the crash is silent (a host that lost power:
    # timeouts only). A graceful stop always closes them; partitions are always silent.
    crash_reset: float = 0.5
    # Probability that a Ready meets a failing disk (issue 27: its fsync fails with EIO,
    # or its appends find the disk full), drawn from the disk generator; the node stops
    # as a real one does (LogDirFailure) and restarts later. Off unless a profile sets it.
    disk_fail: float = 0.0


HEALTHY = Faults(loss=0.0, duplicate=0.0, slow_fsync=0.0, crash_every_ms=0, partition_every_ms=0, jump_every_ms=0, snapshot_every_ms=0,
                 shutdown_every_ms=0)


@dataclass
class SimNode:
    node_id: int
    config: QuorumConfig
    log: SimDisk
    store: MemoryQuorumStateStore
    max_versions: dict
    raft: RaftNode | None = None
    incarnation: int = 0
    wake_at: int | None = None
    io_pending: object = None  # a Ready waiting for its fsync
    shell: Shell | None = None  # performs the core's Ready on this node's log and store
    pending: dict = field(default_factory=dict)  # correlation -> (api_key, destination)
    controller: Controller | None = None
    controller_deadline: int | None = None
    resets: bool = False  # while down: its connections are refused (see Faults.crash_reset)
    snapshot_settings: dict = field(default_factory=dict)
    # The last few messages each way, for the liveness diagnosis (diagnose.py):
    # (time, "req"/"resp"/"fail", api key, peer, what became of it).
    sent: deque = field(default_factory=lambda: deque(maxlen=6))
    received: deque = field(default_factory=lambda: deque(maxlen=6))


class Simulation:
    def __init__(self, seed: int, nodes: int = 3, faults: Faults | None = None,
                 kraft_version: int | None = None, observers: int | None = None):
        self.seed, self.n = seed, nodes
        self.observers = observers if observers is not None else (seed // 2) % 2
        self.rng = random.Random(seed)
        # Connection resets draw from their own generator, so they leave the draws of
        # every other fault where they were.
        self.net_rng = random.Random(seed * 7919 + 17)
        self.disk_rng = random.Random(seed * 6151 + 29)  # disk faults: their own draws too
        self.disk_faults = {"fsync": 0, "append": 0}
        self.faults = faults if faults is not None else Faults()
        self.kraft_version = kraft_version if kraft_version is not None else seed % 2
        self.now = 0
        self.events_run = 0
        self._queue: list = []
        self._seq = 0
        self.partition: dict[int, int] = {}  # node id -> side (no entry: all connected)
        self.checker = Checker()
        self.proposed = self.committed_proposals = 0
        self.nodes = {i: self._make_node(i) for i in range(1, nodes + 1 + self.observers)}
        for node in self.nodes.values():
            self._start(node)
        self._schedule_faults()

    # -- set-up ------------------------------------------------------------------------------
    def _make_node(self, node_id: int) -> SimNode:
        listener = Endpoint("CONTROLLER", f"node{node_id}", PORT_BASE + node_id)
        directory_id = uuid.UUID(int=self.rng.getrandbits(128)) if self.kraft_version else uuid.UUID(int=0)
        kwargs = dict(node_id=node_id, cluster_id=CLUSTER_ID, directory_id=directory_id,
                      listeners=(listener,))
        checkpoint = None
        kwargs["bootstrap_servers"] = tuple((f"node{i}", PORT_BASE + i) for i in range(1, self.n + 1))
        if self.kraft_version == 0:
            kwargs["static_voters"] = tuple(StaticVoter(i, f"node{i}", PORT_BASE + i)
                                            for i in range(1, self.n + 1))
        if self.seed % 4 == 1:
            # A small backlog on a quarter of the seeds: ``propose`` refuses often, so
            # backpressure runs under every fault (no draw from rng: trajectories of
            # the other seeds stay as they were).
            kwargs["max_backlog_bytes"] = 1500
        config = QuorumConfig(**kwargs)
        choices_by_api = VERSION_CHOICES_KRAFT_V1 if self.kraft_version else VERSION_CHOICES
        max_versions = {api: self.rng.choice(choices) for api, choices in choices_by_api.items()}
        node = SimNode(node_id, config, SimDisk(checkpoint), MemoryQuorumStateStore(), max_versions)
        # Small snapshot and retention thresholds (Kafka's defaults are 20 MiB / 100 MiB).
        node.snapshot_settings = dict(snapshot_max_bytes=self.rng.randint(3000, 12000),
                                      snapshot_interval_ms=self.rng.choice((0, 4000)),
                                      retention_bytes=self.rng.randint(4000, 20000),
                                      retention_ms=-1, clean_interval_ms=2000)
        return node

    def _bootstrap_checkpoints(self) -> None:
        """kraft.version 1: every node's log gets the same bootstrap checkpoint
        (``kafka-storage format --initial-controllers``)."""
        voters = VoterSet(tuple(
            VoterNode(VoterKey(n.node_id, n.config.directory_id), n.config.listeners, 0, 1)
            for n in self.nodes.values() if n.node_id <= self.n))
        data = build_control_batch(0, 0, 0, [
            (ControlRecordType.SNAPSHOT_HEADER, SnapshotHeaderRecord(version=0)),
            (ControlRecordType.KRAFT_VERSION, KRaftVersionRecord(version=0, kraft_version=1)),
            (ControlRecordType.KRAFT_VOTERS, voters.to_voters_record())])
        data += build_control_batch(3, 0, 0, [
            (ControlRecordType.SNAPSHOT_FOOTER, SnapshotFooterRecord(version=0))])
        for n in self.nodes.values():
            n.log._bootstrap = data

    def _start(self, node: SimNode) -> None:
        if self.kraft_version and node.log.bootstrap_checkpoint() is None:
            self._bootstrap_checkpoints()
        node.incarnation += 1
        node.resets = False
        node.io_pending = None
        node.pending.clear()
        node.wake_at = None
        node.raft = RaftNode(node.config, node.log, node.store.read(),
                             random.Random(self.rng.getrandbits(64)), self.now)
        node.shell = Shell(node.raft, node.log, node.store)
        settings = ControllerSettings(
            node_id=node.node_id, bootstrap_levels=dict(DEFAULT_FEATURES),
            endpoints=tuple((e.name, e.host, e.port, "PLAINTEXT") for e in node.config.listeners),
            incarnation_id=uuid.UUID(int=self.rng.getrandbits(128)), **node.snapshot_settings)
        node.controller = Controller(node.raft, node.log, settings, self.now)
        node.controller_deadline = None
        self.checker.restarted(node.node_id)
        self._drive(node)

    # -- the event queue -----------------------------------------------------------------------
    def _push(self, at: int, kind: str, *data) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (at, self._seq, kind, data))

    def _schedule_faults(self) -> None:
        f = self.faults
        self._push(self.now + f.propose_every_ms, "propose")
        for kind, mean in (("crash", f.crash_every_ms), ("partition", f.partition_every_ms),
                           ("jump", f.jump_every_ms), ("snapshot", f.snapshot_every_ms),
                           ("shutdown", f.shutdown_every_ms)):
            if mean:
                self._push(self.now + int(self.rng.expovariate(1 / mean)) + 1, kind)

    def run(self, events: int) -> None:
        while self.events_run < events and self._queue:
            at, _, kind, data = heapq.heappop(self._queue)
            self.now = max(self.now, at)
            self.events_run += 1
            getattr(self, "_on_" + kind)(*data)

    def calm(self) -> None:
        """Stop injecting faults: heal, restart everyone, no loss (for liveness checks)."""
        self.faults = Faults(loss=0.0, duplicate=0.0, slow_fsync=0.0, delay_ms=self.faults.delay_ms, crash_every_ms=0,
                             partition_every_ms=0, jump_every_ms=0, snapshot_every_ms=0,
                             shutdown_every_ms=0)
        self.partition.clear()
        self._queue = [e for e in self._queue if e[2] in ("deliver", "timeout", "wake", "propose", "io")]
        heapq.heapify(self._queue)
        for node in self.nodes.values():
            if node.raft is not None and node.raft.role is Role.RESIGNED and node.raft.quorum.state.shutting_down:
                node.raft = None  # the stop this shutdown was heading for
                node.log.failing = None
                node.log.flush()
            if node.raft is None:
                self._start(node)

    # -- driving one node ----------------------------------------------------------------------
    def _drive(self, node: SimNode) -> None:
        """Ready loop for one node: flush, send, advance, until it has nothing more.
        A slow fsync parks the Ready (nothing is sent) until an ``io`` event; a crash
        before it loses the unflushed appends and the unsent messages together."""
        if node.io_pending is not None or node.raft is None:  # parked, or stopped by its disk
            return
        for _ in range(8):
            if self.faults.disk_fail and self.disk_rng.random() < self.faults.disk_fail:
                node.log.failing = self.disk_rng.choice(("fsync", "append"))
            try:
                ready = node.shell.take()
            except LogDirFailure:
                self._disk_failed(node, "append")
                return
            if node.log.failing == "append":
                node.log.failing = "fsync"  # nothing was appended: the flush fails instead
            if ready.flush and self.rng.random() < self.faults.slow_fsync:
                node.io_pending = ready
                lo, hi = self.faults.fsync_ms
                self._push(self.now + self.rng.randint(lo, hi), "io", node.node_id, node.incarnation)
                return
            if not self._complete(node, ready):
                break
        if node.raft is not None:
            self._schedule_wake(node, ready)

    def _on_io(self, node_id, incarnation) -> None:
        node = self.nodes[node_id]
        if node.raft is None or node.incarnation != incarnation or node.io_pending is None:
            return
        ready, node.io_pending = node.io_pending, None
        self._complete(node, ready)
        self._drive(node)

    def _complete(self, node: SimNode, ready) -> bool:
        """Flush, send, advance one Ready; True if the node may have more to do."""
        if not ready.flush:
            node.log.failing = None  # an armed disk fault meets only this Ready's I/O
        try:
            again = node.shell.finish(ready, self.now, lambda r: self._send_request(node, r),
                                      lambda r: self._send_response(node, r))
        except LogDirFailure:
            self._disk_failed(node, "fsync")
            return False
        proposed = self._poll_controller(node)
        if not node.raft.log.has_writes():
            # The log is what the core sees (not so while a parked Ready's fsync let
            # the core decide more writes: the next Ready performs them, then we check).
            self.checker.check(node.node_id, node.raft, node.log)
        return again or proposed or bool(ready.requests) or bool(ready.responses)

    def _disk_failed(self, node: SimNode, kind: str) -> None:
        """Fail-stop, as the real node stops on ``LogDirFailure``: nothing of this Ready
        was sent, what was not fsync'd is lost (after a failed fsync the kernel may
        drop the dirty pages), its connections close; it restarts once the disk is back."""
        node.raft = None
        node.io_pending = None
        node.log.failing = None
        node.log.crash()
        self._reset_connections(node)
        self.disk_faults[kind] += 1
        self._push(self.now + self.disk_rng.randint(50, 3000), "restart", node.node_id)

    def _poll_controller(self, node: SimNode) -> bool:
        proposed, node.controller_deadline = node.controller.poll(self.now)
        self.checker.check_snapshots(node.node_id, node.controller, node.log)
        return proposed

    def _schedule_wake(self, node: SimNode, ready) -> None:
        deadline = ready.next_deadline_ms
        if node.controller_deadline is not None:
            deadline = node.controller_deadline if deadline is None else min(deadline, node.controller_deadline)
        if deadline is not None:
            deadline = max(deadline, self.now + 1)
            if node.wake_at is None or deadline < node.wake_at or node.wake_at <= self.now:
                node.wake_at = deadline
                self._push(deadline, "wake", node.node_id, node.incarnation)

    def _connected(self, a: int, b: int) -> bool:
        return self.partition.get(a, 0) == self.partition.get(b, 0)

    def _deliverable(self, src: int, dst: int) -> bool:
        return self._connected(src, dst) and self.rng.random() >= self.faults.loss

    def _delay(self) -> int:
        lo, hi = self.faults.delay_ms
        return self.rng.randint(lo, hi)

    def _send_request(self, node: SimNode, req) -> None:
        dst = req.destination.node_id
        if dst < 0:  # a bootstrap address: find the node listening there
            dst = req.destination.endpoint.port - PORT_BASE
        node.pending[req.correlation] = (req.api_key, req.destination)
        self._push(self.now + node.config.request_timeout_ms, "timeout", node.node_id,
                   node.incarnation, req.correlation)
        peer = self.nodes.get(dst)
        if peer is not None and peer.raft is None and peer.resets and self._connected(node.node_id, dst):
            node.sent.append((self.now, "req", req.api_key, dst, "refused"))
            self._push(self.now + self.net_rng.randint(1, 5), "fail", node.node_id, node.incarnation,
                       req.correlation, SendFailure.DISCONNECTED)
            return
        version = min(node.max_versions[req.api_key], peer.max_versions[req.api_key]) if peer else 0
        if version < req.min_version:
            self._push(self.now + 1, "fail", node.node_id, node.incarnation, req.correlation,
                       SendFailure.UNSUPPORTED_VERSION)
            return
        payload = req.body.encode(version)  # UnsupportedVersionError here is a core bug
        if peer is None or not self._deliverable(node.node_id, dst):
            node.sent.append((self.now, "req", req.api_key, dst, "lost"))
            return
        node.sent.append((self.now, "req", req.api_key, dst, f"v{version}"))
        for _ in range(2 if self.rng.random() < self.faults.duplicate else 1):
            self._push(self.now + self._delay(), "deliver", "req", dst, node.node_id, node.incarnation,
                       req.correlation, req.api_key, version, payload)

    def _send_response(self, node: SimNode, resp) -> None:
        src, src_inc, corr = resp.handle
        payload = resp.body.encode(resp.api_version)
        if not self._deliverable(node.node_id, src):
            node.sent.append((self.now, "resp", resp.api_key, src, "lost"))
            return
        node.sent.append((self.now, "resp", resp.api_key, src, _error_of(resp.body)))
        for _ in range(2 if self.rng.random() < self.faults.duplicate else 1):
            self._push(self.now + self._delay(), "deliver", "resp", src, src_inc, node.node_id, corr,
                       resp.api_key, resp.api_version, payload)

    # -- event handlers --------------------------------------------------------------------------
    def _on_deliver(self, kind, dst, a, b, corr, api_key, version, payload) -> None:
        if kind == "req":
            node = self.nodes[dst]
            if node.raft is None or not self._connected(a, dst):
                return
            body = REQUESTS[api_key].decode(payload, version)
            node.received.append((self.now, "req", api_key, a, f"v{version}"))
            node.raft.step(InboundRequest((a, b, corr), api_key, version, body), self.now)
            self._drive(node)
        else:
            node = self.nodes[dst]
            if node.raft is None or node.incarnation != a or corr not in node.pending:
                return
            _, destination = node.pending.pop(corr)
            body = RESPONSES[api_key].decode(payload, version)
            node.received.append((self.now, "resp", api_key, b, _error_of(body)))
            node.raft.step(InboundResponse(corr, destination, api_key, body=body), self.now)
            self._drive(node)

    def _on_timeout(self, node_id, incarnation, corr) -> None:
        self._on_fail(node_id, incarnation, corr, SendFailure.TIMEOUT)

    def _on_fail(self, node_id, incarnation, corr, failure) -> None:
        node = self.nodes[node_id]
        if node.raft is None or node.incarnation != incarnation or corr not in node.pending:
            return
        api_key, destination = node.pending.pop(corr)
        node.received.append((self.now, "fail", api_key, destination.node_id, failure.name))
        node.raft.step(InboundResponse(corr, destination, api_key, failure=failure), self.now)
        self._drive(node)

    def _on_wake(self, node_id, incarnation) -> None:
        node = self.nodes[node_id]
        if node.raft is None or node.incarnation != incarnation:
            return
        if node.wake_at is not None and node.wake_at <= self.now:
            node.wake_at = None
        node.raft.tick(self.now)
        self._drive(node)

    def _on_propose(self) -> None:
        self._push(self.now + self.rng.randint(1, 2 * self.faults.propose_every_ms), "propose")
        leaders = [n for n in self.nodes.values() if n.raft is not None and n.raft.role is Role.LEADER]
        if not leaders:
            return
        node = self.rng.choice(leaders)
        count = self.rng.randint(1, 4)
        records = [metadata_records.config(metadata_records.BROKER_RESOURCE, "",
                                           f"sim.k{(self.proposed + i) % 40}",
                                           f"s{self.seed}-p{self.proposed + i}") for i in range(count)]
        try:
            node.raft.propose(records, self.now)
        except (NotLeader, Backpressure):
            return
        self.proposed += count
        self._drive(node)

    def _on_crash(self) -> None:
        self._push(self.now + int(self.rng.expovariate(1 / self.faults.crash_every_ms)) + 1, "crash")
        alive = [n for n in self.nodes.values() if n.raft is not None]
        if not alive:
            return
        node = self.rng.choice(alive)
        node.raft = None
        node.log.crash()
        if self.net_rng.random() < self.faults.crash_reset:
            self._reset_connections(node)
        self._push(self.now + self.rng.randint(10, 3000), "restart", node.node_id)

    def _on_shutdown(self) -> None:
        """Graceful shutdown of the leader: it resigns (EndQuorumEpoch), then stops."""
        self._push(self.now + int(self.rng.expovariate(1 / self.faults.shutdown_every_ms)) + 1, "shutdown")
        node = self.leader()
        if node is None:
            return
        node.raft.resign(self.now)
        self._drive(node)
        self._push(self.now + self.rng.randint(0, 500), "stop", node.node_id, node.incarnation)

    def _on_stop(self, node_id, incarnation) -> None:
        node = self.nodes[node_id]
        if node.raft is None or node.incarnation != incarnation:
            return
        node.raft = None
        node.log.failing = None
        node.log.flush()  # a clean stop flushes
        self._reset_connections(node)  # and closes its sockets
        self._push(self.now + self.rng.randint(10, 2000), "restart", node.node_id)

    def _reset_connections(self, down: SimNode) -> None:
        """``down``'s process is gone: every request a connected peer has in flight to
        it fails with DISCONNECTED, and new ones are refused until it restarts."""
        down.resets = True
        for node in self.nodes.values():
            if node.raft is None or node is down or not self._connected(node.node_id, down.node_id):
                continue
            for corr, (_, destination) in sorted(node.pending.items()):
                dst = destination.node_id if destination.node_id >= 0 else destination.endpoint.port - PORT_BASE
                if dst == down.node_id:
                    self._push(self.now + self.net_rng.randint(1, 5), "fail", node.node_id,
                               node.incarnation, corr, SendFailure.DISCONNECTED)

    def _on_restart(self, node_id) -> None:
        node = self.nodes[node_id]
        if node.raft is None:
            self._start(node)

    def _on_partition(self) -> None:
        self._push(self.now + int(self.rng.expovariate(1 / self.faults.partition_every_ms)) + 1, "partition")
        ids = list(self.nodes)
        self.rng.shuffle(ids)
        cut = self.rng.randint(1, len(ids) - 1)
        self.partition = {i: (0 if k < cut else 1) for k, i in enumerate(ids)}
        self._push(self.now + self.rng.randint(100, 4000), "heal")

    def _on_heal(self) -> None:
        self.partition.clear()

    def _on_jump(self) -> None:
        self._push(self.now + int(self.rng.expovariate(1 / self.faults.jump_every_ms)) + 1, "jump")
        self.now += self.rng.randint(500, 5000)  # a GC pause / VM freeze: every timer is late

    def _on_snapshot(self) -> None:
        self._push(self.now + int(self.rng.expovariate(1 / self.faults.snapshot_every_ms)) + 1, "snapshot")
        candidates = [n for n in self.nodes.values() if n.raft is not None and n.raft.high_watermark]
        if not candidates:
            return
        node = self.rng.choice(candidates)
        node.controller.snapshot(self.now, "the simulation asked")  # as if a trigger fired
        if self.rng.random() < 0.7:
            node.controller.clean(self.now)
        self.checker.check_snapshots(node.node_id, node.controller, node.log)

    # -- results -----------------------------------------------------------------------------------
    def leader(self):
        for n in self.nodes.values():
            if n.raft is not None and n.raft.role is Role.LEADER:
                return n
        return None

    def summary(self) -> dict:
        roles = {i: (n.raft.role.value, n.raft.epoch) if n.raft else ("down", None) for i, n in self.nodes.items()}
        return {"seed": self.seed, "events": self.events_run, "sim_ms": self.now,
                "committed_end": self.checker.committed_end, "proposed": self.proposed,
                "leaders": len(self.checker.leaders), "roles": roles, "disk_faults": dict(self.disk_faults)}


def _error_of(body) -> str:
    """A response's outcome for the traffic record: its error (top level, else its one
    partition's), or a Fetch answer's SnapshotId/DivergingEpoch, or "ok"."""
    code = getattr(body, "error_code", 0)
    for topic in () if code else (getattr(body, "responses", None) or getattr(body, "topics", None) or ()):
        for part in getattr(topic, "partitions", ()):
            code = code or getattr(part, "error_code", 0)
            snap, div = getattr(part, "snapshot_id", None), getattr(part, "diverging_epoch", None)
            if snap is not None and snap.epoch >= 0:
                return f"snapshot {snap.end_offset}-{snap.epoch}"
            if div is not None and div.epoch >= 0:
                return f"diverging {div.end_offset}-{div.epoch}"
    return f"error {code}" if code else "ok"
