"""Three-voter quorums on loopback for ``bench/raft/raft.py``: ours (``tools.raft_load_server``)
and Apache Kafka 4.3.1's ``kafka.tools.TestRaftServer`` (from ``kafka_2.13-4.3.1.jar``).

Both get the same static voter set (``controller.quorum.voters``), the same
``controller.quorum.*`` timeouts and append linger, and the same load flags
(``--throughput``, ``--record-size``). Each node runs in its own session with stdout
and stderr in ``<workdir>/n<id>.out``; ``Cluster.close`` SIGKILLs every process group
it started. What the bench reads is normalised to ``Event(kind, t_ms, node, epoch, ...)``:

* ``leader``: the node learnt the leader of an epoch. Ours: its ``leader`` JSON line.
  Kafka: ``Completed transition to Leader(...)`` / ``FollowerState(... leader=N``
  (INFO, org.apache.kafka.raft.QuorumState, timestamps in Unix ms via our log4j2 file).
* ``claim``: the node became leader. ``hwm_first``: the leader's high watermark became
  known in its epoch, i.e. its first commit (Kafka: LeaderState's "High watermark set
  to ... for the first time for epoch N based on ...").
* ``summary``: Kafka's ``Throughput (bytes/second): ..., Latency (ms): a p75 b p99 c
  p999`` line (printed by WriteStats every 5 s; stamped with the time the bench read
  it). ``stats``: ours, every second, with the latency histogram of that second.
* ``dead``: Kafka's generator thread died ("Error due to").

Listening is observed from outside, the same way for both: a TCP connect to the
node's controller port, polled every few ms.
"""
from __future__ import annotations

import base64
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from tools.kafka_dist.ports import free_port  # noqa: F401  (re-exported)
from wire.exceptions import DecodeError
from wire.records import iter_headers

ROOT = Path(__file__).resolve().parents[2]

QUORUM_DEFAULTS = {  # Kafka's defaults, written out so both sides get the same values
    "controller.quorum.append.linger.ms": "25",
    "controller.quorum.election.timeout.ms": "1000",
    "controller.quorum.fetch.timeout.ms": "2000",
    "controller.quorum.election.backoff.max.ms": "1000",
    "controller.quorum.request.timeout.ms": "2000",
    "controller.quorum.retry.backoff.ms": "20",
}
KAFKA_HEAP = "-Xmx1G -Xms1G"  # kafka-server-start.sh's default heap
KAFKA_LOG4J = """Configuration:
  name: bench-raft
  Appenders:
    Console:
      name: STDOUT
      target: SYSTEM_OUT
      PatternLayout:
        pattern: "[%d{UNIX_MILLIS}] %p %m (%c)%n"
  Loggers:
    Root:
      level: WARN
      AppenderRef:
        - ref: STDOUT
    Logger:
      - name: org.apache.kafka.raft.QuorumState
        level: INFO
      - name: org.apache.kafka.raft.LeaderState
        level: INFO
      - name: kafka.tools
        level: INFO
"""


def random_uuid() -> str:
    """Like Kafka's ``Uuid.randomUuid().toString()``: never starts with "-" (a flag)."""
    while True:
        s = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not s.startswith("-"):
            return s


def now_ms() -> float:
    return time.time() * 1000.0


def rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


@dataclass
class Event:
    kind: str
    t_ms: float
    node: int
    epoch: int = -1
    leader: int = -1
    data: dict = field(default_factory=dict)


class _Tail:
    """New complete lines of a growing file."""

    def __init__(self, path: Path):
        self.path, self.pos, self.rest = path, 0, b""

    def lines(self) -> list[str]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                chunk = f.read()
        except OSError:
            return []
        self.pos += len(chunk)
        data = self.rest + chunk
        *done, self.rest = data.split(b"\n")
        return [d.decode(errors="replace") for d in done]


@dataclass
class NodeProc:
    node_id: int
    port: int
    data_dir: Path
    out: Path
    proc: subprocess.Popen | None = None
    spawn_ms: float = 0.0
    listen_ms: float | None = None
    tail: _Tail | None = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the node's process group (SIGSTOP/SIGCONT: a silent pause)."""
        if self.alive:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        if self.alive:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.proc is not None:
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass


class Cluster:
    """A 3-voter quorum of one implementation; subclasses say how to run a node."""

    name = "?"
    partition_dir = "?"

    def __init__(self, workdir: Path, *, throughput: int, record_size: int, nodes: int = 3,
                 quorum: dict[str, str] | None = None):
        self.quorum = {**QUORUM_DEFAULTS, **(quorum or {})}  # e.g. another append linger
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.throughput, self.record_size = throughput, record_size
        self.nodes = [NodeProc(i, free_port(), self.workdir / f"d{i}", self.workdir / f"n{i}.out")
                      for i in range(1, nodes + 1)]
        self.events: list[Event] = []

    # -- configuration ---------------------------------------------------------------
    def properties(self, n: NodeProc) -> dict[str, str]:
        voters = ",".join(f"{m.node_id}@127.0.0.1:{m.port}" for m in self.nodes)
        return {
            "node.id": str(n.node_id),
            "process.roles": "controller",
            "listeners": f"CONTROLLER://127.0.0.1:{n.port}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
            "controller.quorum.voters": voters,
            "log.dirs": str(n.data_dir),
            "metadata.log.dir": str(n.data_dir),
            **self.quorum,
        }

    def config_path(self, n: NodeProc) -> Path:
        return self.workdir / f"n{n.node_id}.properties"

    def prepare(self) -> None:
        for n in self.nodes:
            self.config_path(n).write_text(
                "".join(f"{k}={v}\n" for k, v in self.properties(n).items()))

    def command(self, n: NodeProc) -> tuple[list[str], dict[str, str], Path]:
        raise NotImplementedError

    def parse(self, n: NodeProc, line: str, read_ms: float) -> Event | None:
        raise NotImplementedError

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        for n in self.nodes:
            self.start_node(n)

    def start_node(self, n: NodeProc) -> None:
        argv, env, cwd = self.command(n)
        out = open(n.out, "ab")
        try:
            n.spawn_ms = now_ms()
            n.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                      stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            out.close()
        n.listen_ms = None
        n.tail = _Tail(n.out)

    def close(self) -> None:
        for n in self.nodes:
            n.kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- observation ---------------------------------------------------------------------
    def poll(self) -> None:
        """Read new output; try a TCP connect to nodes not yet seen listening."""
        for n in self.nodes:
            if n.proc is None:
                continue
            if n.listen_ms is None and n.alive:
                with socket.socket() as s:
                    s.settimeout(0.05)
                    try:
                        s.connect(("127.0.0.1", n.port))
                        n.listen_ms = now_ms()
                    except OSError:
                        pass
            read_ms = now_ms()
            for line in n.tail.lines():
                ev = self.parse(n, line, read_ms)
                if ev is not None:
                    self.events.append(ev)

    def wait(self, cond, timeout_s: float, what: str, interval_s: float = 0.005):
        """Poll until ``cond()`` is truthy (returns it); raise after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.poll()
            got = cond()
            if got:
                return got
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{self.name}: no {what} after {timeout_s}s\n{self.tails()}")
            time.sleep(interval_s)  # poll interval

    def tails(self, lines: int = 15) -> str:
        out = []
        for n in self.nodes:
            try:
                text = n.out.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                text = []
            out.append(f"--- {self.name} node {n.node_id} ({n.out})\n" + "\n".join(text))
        return "\n".join(out)

    def find(self, kind: str, *, after_ms: float = 0.0, node: int | None = None,
             min_epoch: int = -1) -> Event | None:
        for ev in self.events:
            if ev.kind == kind and ev.t_ms >= after_ms and ev.epoch >= min_epoch and (
                    node is None or ev.node == node):
                return ev
        return None

    def node(self, node_id: int) -> NodeProc:
        return next(n for n in self.nodes if n.node_id == node_id)

    def log_dir(self, n: NodeProc) -> Path:
        return n.data_dir / self.partition_dir


class OurCluster(Cluster):
    name = "ours"
    partition_dir = "__cluster_metadata-0"
    topic, topic_id = "__cluster_metadata", "00000000-0000-0000-0000-000000000001"

    def properties(self, n: NodeProc) -> dict[str, str]:
        # Keep every segment, as Kafka's TestRaftServer does: the committed rate is counted
        # from a follower's log after the window, and at 150k records/s of 256 bytes our
        # default retention (metadata.max.retention.bytes, 100 MiB) deletes it within ~2 s.
        return {"metadata.max.retention.bytes": "-1", **super().properties(n)}

    def prepare(self) -> None:
        super().prepare()
        cluster_id = self.cluster_id = random_uuid()
        procs = [subprocess.Popen([sys.executable, "-m", "tools.storage", "format", "--cluster-id", cluster_id,
                                   "--config", str(self.config_path(n))], cwd=ROOT,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for n in self.nodes]
        for p in procs:
            _, err = p.communicate(timeout=60)
            if p.returncode != 0:
                raise RuntimeError(f"tools.storage format failed: {err.decode(errors='replace')}")

    def command(self, n):
        env = dict(os.environ, KRAFT_LOG_LEVEL="WARNING")
        return ([sys.executable, "-m", "tools.raft_load_server", "--config", str(self.config_path(n)),
                 "--throughput", str(self.throughput), "--record-size", str(self.record_size)], env, ROOT)

    def parse(self, n, line, read_ms):
        if line.startswith("{"):
            try:
                d = json.loads(line)
            except ValueError:
                return None
            kind = d.get("ev")
            epoch = d.get("epoch")
            return Event(kind, d["t"], n.node_id, -1 if epoch is None else epoch, d.get("leader", -1), d)
        return None


_K_TS = r"^\[(\d+)\] INFO \[RaftManager id=(\d+)\] "
_K_LEADER = re.compile(_K_TS + r"Completed transition to Leader\(.*?, epoch=(\d+), epochStartOffset")
_K_FOLLOWER = re.compile(_K_TS + r"Completed transition to FollowerState\(.*?epoch=(\d+), leader=(\d+)")
_K_HWM = re.compile(_K_TS + r"High watermark set to .* for the first time for epoch (\d+) based on")
_K_SUMMARY = re.compile(r"Throughput \(bytes/second\): ([\d.]+), Latency \(ms\): ([\d.]+) p75 "
                        r"([\d.]+) p99 ([\d.]+) p999")


class KafkaCluster(Cluster):
    name = "kafka"
    partition_dir = "__raft_performance_test-0"
    # TestRaftServer: cluster id Uuid.ZERO_UUID, topic id new Uuid(0, 2)
    cluster_id = "AAAAAAAAAAAAAAAAAAAAAA"
    topic, topic_id = "__raft_performance_test", "00000000-0000-0000-0000-000000000002"

    def prepare(self) -> None:
        super().prepare()
        (self.workdir / "log4j2.yaml").write_text(KAFKA_LOG4J)

    def command(self, n):
        from tools.kafka_dist import bin_path, java_executable
        env = dict(os.environ)
        env.setdefault("KAFKA_HEAP_OPTS", KAFKA_HEAP)
        env["KAFKA_LOG4J_OPTS"] = f"-Dlog4j2.configurationFile={self.workdir / 'log4j2.yaml'}"
        env["LOG_DIR"] = str(self.workdir / f"logs{n.node_id}")
        if "JAVA_HOME" not in env:
            env["JAVA_HOME"] = str(Path(java_executable()).resolve().parents[1])
        return ([str(bin_path("kafka-run-class")), "kafka.tools.TestRaftServer",
                 "--config", str(self.config_path(n)), "--replica-directory-id", random_uuid(),
                 "--throughput", str(self.throughput), "--record-size", str(self.record_size)],
                env, self.workdir)

    def parse(self, n, line, read_ms):
        m = _K_LEADER.match(line)
        if m:
            t, node, epoch = int(m[1]), int(m[2]), int(m[3])
            self.events.append(Event("leader", t, node, epoch, node))
            return Event("claim", t, node, epoch, node)
        m = _K_FOLLOWER.match(line)
        if m:
            return Event("leader", int(m[1]), int(m[2]), int(m[3]), int(m[4]))
        m = _K_HWM.match(line)
        if m:
            return Event("hwm_first", int(m[1]), int(m[2]), int(m[3]), int(m[2]))
        m = _K_SUMMARY.search(line)
        if m:
            return Event("summary", read_ms, n.node_id, data={
                "bytes_per_s": float(m[1]), "p75": float(m[2]), "p99": float(m[3]), "p999": float(m[4])})
        if "Error due to" in line and "RaftWorkloadGenerator" in line:
            return Event("dead", read_ms, n.node_id, data={"line": line[:300]})
        return None


# -- the log as a witness of what was committed ------------------------------------------

def committed_records(partition_dir: Path, t0_ms: float, t1_ms: float) -> int:
    """Data records in the batches of a follower's log whose base timestamp (set by the
    leader when it built the batch) is in [t0, t1). A follower holds a batch only once
    it was replicated to it, i.e. to a majority of three with the leader."""
    total = 0
    for seg in sorted(Path(partition_dir).glob("*.log")):
        data = seg.read_bytes()
        try:
            for _, header in iter_headers(data):  # stops at a batch still being written
                if not header.is_control and t0_ms <= header.base_timestamp < t1_ms:
                    total += header.records_count
        except DecodeError:
            pass  # garbage past the last whole batch: the end
    return total
