"""Helpers for ``tests/process/test_membership_scenarios.py``: our nodes as processes running
``tools/raft_load_server.py`` (the real node plus a load generator proposing records on
the leader at a modest rate; the controller's NoOpRecords every 50 ms on top), the two
``metadata-quorum`` tools (Apache Kafka 4.3.1's and ours) behind one call, and a
``Recorder`` thread that watches the quorum during a scenario and checks afterwards that
no committed record was lost.

The recorder polls DescribeQuorum on every live node (a few times a second): it notes the
leader and the high watermark it reports, and every ``sample_s`` reads the leader's
segment files (straight from disk, never through our log code) and keeps every batch
that lies wholly below the high watermark that leader reported *before* the read: those
bytes are committed. At the end ``check_no_loss`` waits until every surviving voter's
log reaches the highest high watermark seen and then requires, for every offset below it,
identical batch bytes on every surviving voter and equal to what was seen committed
(or, below a node's first segment, a snapshot covering it).
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from kraft_server.log.meta_properties import read_meta_properties
from wire.uuids import uuid_to_str
from tests.support.kraft_nodes import (
    FAST_QUORUM, PARTITION, OurNode, committed_batches, read_batches, set_property, storage_format,
    wait_for,
)
from tools.kafka_dist.controller import run_tool

REPO = Path(__file__).resolve().parents[2]
TOOLS = ("kafka", "ours")
ELECTION_TIMEOUT_MS = 750  # FAST_QUORUM's controller.quorum.election.timeout.ms
LOAD_RATE = 20  # records/s proposed by the leader's load generator
LOAD_RECORD_SIZE = 128


class LoadNode(OurNode):
    """Our node started through ``tools/raft_load_server.py`` (same node, plus a load
    generator on the leader)."""

    def start(self) -> None:
        log = open(self.log_path, "ab")
        env = dict(os.environ, KRAFT_LOG_LEVEL=os.environ.get("KRAFT_TEST_LOG_LEVEL", "INFO"))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tools.raft_load_server", "--config", str(self.config),
             "--throughput", str(LOAD_RATE), "--record-size", str(LOAD_RECORD_SIZE),
             "--report-interval-ms", "5000"],
            cwd=REPO, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, env=env)
        log.close()

    def directory_id(self) -> str:
        return uuid_to_str(read_meta_properties(self.data).directory_id)

    def pause(self) -> None:
        os.killpg(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.killpg(self.proc.pid, signal.SIGCONT)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        super().kill()


def new_node(root: Path, node_id: int, extra: tuple[str, ...] = ()) -> LoadNode:
    (root / f"n{node_id}").mkdir(exist_ok=True)
    return LoadNode(root / f"n{node_id}", node_id=node_id, extra=FAST_QUORUM + tuple(extra))


def set_bootstrap(node: LoadNode, servers: str) -> None:
    """``controller.quorum.bootstrap.servers`` in both of the node's config files."""
    set_property(node.config, "controller.quorum.bootstrap.servers", servers)
    set_property(node.kafka_config, "controller.quorum.bootstrap.servers", servers)


def format_dynamic(nodes: list[LoadNode], cluster_id: str) -> None:
    """``format --initial-controllers`` with every node of ``nodes`` as an initial voter."""
    from wire.uuids import random_directory_id
    voters = ",".join(f"{n.node_id}@127.0.0.1:{n.port}:{uuid_to_str(random_directory_id())}" for n in nodes)
    for n in nodes:
        set_bootstrap(n, ",".join(m.bootstrap for m in nodes))
        storage_format(n.config, cluster_id, "--initial-controllers", voters)


def format_observer(node: LoadNode, cluster_id: str, bootstrap: str) -> None:
    set_bootstrap(node, bootstrap)
    storage_format(node.config, cluster_id, "--no-initial-controllers")


def wipe(node: LoadNode) -> None:
    shutil.rmtree(node.data)


# -- the two tools -------------------------------------------------------------------------------

def metadata_quorum(tool: str, *args: str, timeout: float = 180.0) -> subprocess.CompletedProcess[str]:
    """``kafka-metadata-quorum`` (Kafka 4.3.1) or ``python -m tools.metadata_quorum``."""
    if tool == "kafka":
        return run_tool("kafka-metadata-quorum", *args, timeout=timeout, check=False)
    return subprocess.run([sys.executable, "-m", "tools.metadata_quorum", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


def metadata_quorum_popen(tool: str, *args: str) -> subprocess.Popen[str]:
    if tool == "kafka":
        from tools.kafka_dist.controller import bin_path, tool_env
        cmd, env = [str(bin_path("kafka-metadata-quorum")), *args], tool_env(None, fast=True)
    else:
        cmd, env = [sys.executable, "-m", "tools.metadata_quorum", *args], None
    return subprocess.Popen(cmd, cwd=REPO, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def add_controller(tool: str, bootstrap: str, node: LoadNode) -> subprocess.CompletedProcess[str]:
    return metadata_quorum(tool, "--bootstrap-controller", bootstrap, "--command-config",
                           str(node.kafka_config), "add-controller")


def remove_controller(tool: str, bootstrap: str, node_id: int, directory: str):
    return metadata_quorum(tool, "--bootstrap-controller", bootstrap, "remove-controller",
                           "-i", str(node_id), "-d", directory)


def first_error_line(stderr: str) -> str:
    """The first stderr line that is not a log line (the Java client's log4j, our tool's WARN)."""
    for line in stderr.splitlines():
        if line.strip() and not re.match(r"^\[\d{4}-\d\d-\d\d |^WARN ", line):
            return line
    return ""


def describe(tool: str, bootstrap: str) -> dict[str, str]:
    from tests.support.kraft_nodes import parse_status
    out = metadata_quorum(tool, "--bootstrap-controller", bootstrap, "describe", "--status")
    assert out.returncode == 0, f"describe --status failed ({tool})\n{out.stdout}\n{out.stderr}"
    return parse_status(out.stdout)


def status_voter_ids(status: dict[str, str]) -> list[int]:
    import json
    return sorted(v["id"] for v in json.loads(status["CurrentVoters"]))


# -- DescribeQuorum with our codecs --------------------------------------------------------------

def quorum_partition(node: OurNode, timeout: float = 2.0):
    """DescribeQuorum v2 on ``node``: its partition (error 0 only on the leader), or None."""
    import socket

    from wire.framing import FrameReader
    from wire.headers import decode_response, encode_request
    from wire.messages import DescribeQuorumRequest
    from wire.messages.describe_quorum_request import PartitionData, TopicData
    body = DescribeQuorumRequest(topics=[TopicData(topic_name="__cluster_metadata",
                                                   partitions=[PartitionData(partition_index=0)])])
    try:
        with socket.create_connection(("127.0.0.1", node.port), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(encode_request(body.API_KEY, 2, 7, body, "membership-test"))
            reader, frames = FrameReader(), []
            while not frames:
                data = s.recv(65536)
                if not data:
                    return None
                frames = reader.feed(data)
        resp = decode_response(frames[0], body.API_KEY, 2)[1]
    except (OSError, ValueError):
        return None
    if resp.error_code or not resp.topics or not resp.topics[0].partitions:
        return None
    part = resp.topics[0].partitions[0]
    return part if part.error_code == 0 else None


def voters_of(part) -> dict[int, str]:
    return {v.replica_id: uuid_to_str(v.replica_directory_id) for v in part.current_voters}


def observers_of(part) -> dict[int, str]:
    return {v.replica_id: uuid_to_str(v.replica_directory_id) for v in part.observers}


# -- the recorder ------------------------------------------------------------------------------

class Recorder:
    """Watches the quorum from a thread: leaders, high watermarks, committed bytes and
    leaderless windows. ``nodes`` may grow while it runs (``watch``)."""

    def __init__(self, nodes: list[LoadNode], poll_s: float = 0.05, sample_s: float = 1.0):
        self.nodes = list(nodes)
        self.poll_s, self.sample_s = poll_s, sample_s
        self.lock = threading.Lock()
        self.committed: dict[int, bytes] = {}  # base offset -> batch bytes seen committed
        self.conflicts: list[str] = []
        self.hwms: list[tuple[float, int, int, int]] = []  # (t, leader, epoch, hwm)
        self.max_hwm = 0
        self.hwm_decreases: list[str] = []
        self.leaderless: list[tuple[float, float]] = []  # closed windows (start, end)
        self._gap_start: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._last_sample = 0.0
        self.skip: set[int] = set()  # node ids not to poll (e.g. paused ones)
        self.error: BaseException | None = None

    def watch(self, node: LoadNode) -> None:
        with self.lock:
            self.nodes.append(node)

    def start(self) -> "Recorder":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        now = time.monotonic()
        if self._gap_start is not None:
            self.leaderless.append((self._gap_start, now))
            self._gap_start = None

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self.poll_once()
                self._stop.wait(self.poll_s)
        except BaseException as exc:  # reported by check_no_loss
            self.error = exc

    def poll_once(self) -> None:
        with self.lock:
            nodes = [n for n in self.nodes if n.node_id not in self.skip
                     and n.proc is not None and n.proc.poll() is None]
        leader = None
        for n in nodes:
            part = quorum_partition(n, timeout=1.0)
            if part is not None and part.leader_id == n.node_id:
                leader = (n, part)  # a leader, even before its first commit (HWM unknown)
                break
        now = time.monotonic()
        if leader is None:
            if self._gap_start is None:
                self._gap_start = now
            return
        if self._gap_start is not None:
            self.leaderless.append((self._gap_start, now))
            self._gap_start = None
        node, part = leader
        hwm = part.high_watermark
        if hwm <= 0:
            return
        with self.lock:
            # A new leader may report a lower HWM than the old one (it learns it from
            # its followers); HWMs only decrease under the same leader-epoch if broken.
            if self.hwms and self.hwms[-1][2] == part.leader_epoch and hwm < self.hwms[-1][3]:
                self.hwm_decreases.append(f"epoch {part.leader_epoch}: {self.hwms[-1][3]} -> {hwm}")
            self.hwms.append((now, part.leader_id, part.leader_epoch, hwm))
            self.max_hwm = max(self.max_hwm, hwm)
        if now - self._last_sample >= self.sample_s:
            self._last_sample = now
            self._sample(node, hwm)

    def _sample(self, node: LoadNode, hwm: int) -> None:
        batches = committed_batches(read_batches(node.data), hwm)
        with self.lock:
            for base, raw in batches.items():
                seen = self.committed.get(base)
                if seen is None:
                    self.committed[base] = raw
                elif seen != raw:
                    self.conflicts.append(f"offset {base}: committed bytes changed (read from node {node.node_id})")

    def max_leaderless_s(self) -> float:
        return max((b - a for a, b in self.leaderless), default=0.0)

    def summary(self) -> str:
        leaders = []
        for _, lid, epoch, _ in self.hwms:
            if not leaders or leaders[-1] != (lid, epoch):
                leaders.append((lid, epoch))
        return (f"max HWM {self.max_hwm}, {len(self.committed)} committed batches seen, leaders (id, epoch) "
                f"{leaders}, longest leaderless window {self.max_leaderless_s():.2f}s")


def snapshot_ends(data: Path) -> list[int]:
    """End offsets of the node's snapshots (``%020d-%010d.checkpoint``), bootstrap one aside."""
    out = []
    for p in (data / PARTITION).glob("*.checkpoint"):
        end = int(p.name.split("-")[0])
        if end > 0:
            out.append(end)
    return sorted(out)


def check_no_loss(recorder: Recorder, survivors: list[LoadNode], timeout: float = 120.0) -> str:
    """Every surviving voter holds, for every offset below the highest high watermark
    seen, the same batch bytes as every other survivor and as seen committed during the
    run (or a snapshot covering it). Returns a one-line summary."""
    from wire.records import read_header
    assert recorder.error is None, f"recorder failed: {recorder.error!r}"
    assert not recorder.conflicts, recorder.conflicts
    assert not recorder.hwm_decreases, recorder.hwm_decreases
    target = recorder.max_hwm
    assert target > 0 and recorder.committed, "nothing was seen committed"

    def log_end(n: LoadNode) -> int:
        batches = read_batches(n.data)
        return max((read_header(raw).next_offset for raw in batches.values()), default=0)

    wait_for(lambda: all(log_end(n) >= target for n in survivors), timeout,
             f"every survivor's log to reach the highest high watermark {target}", interval=0.5)
    logs = {n.node_id: committed_batches(read_batches(n.data), target) for n in survivors}
    for n in survivors:
        mine = logs[n.node_id]
        start = min(mine) if mine else target
        if start > 0:
            assert any(end >= start for end in snapshot_ends(n.data)), \
                f"node {n.node_id}: log starts at {start} with no snapshot covering it"
        # Offsets are contiguous below the target.
        offset = start
        for base in sorted(mine):
            assert base == offset, f"node {n.node_id}: gap or overlap at {offset} (next batch at {base})"
            offset = read_header(mine[base]).next_offset
        for base, raw in recorder.committed.items():
            if base >= start:
                assert mine.get(base) == raw, \
                    f"node {n.node_id}: committed batch at offset {base} lost or changed"
    reference = survivors[0]
    ref = logs[reference.node_id]
    for n in survivors[1:]:
        mine = logs[n.node_id]
        common = set(ref) & set(mine)
        assert all(ref[b] == mine[b] for b in common), \
            f"nodes {reference.node_id} and {n.node_id} differ below HWM {target}"
        assert set(ref) ^ set(mine) <= {b for b in set(ref) | set(mine)
                                         if b < max(min(ref, default=0), min(mine, default=0))}, \
            f"nodes {reference.node_id} and {n.node_id} hold different batch boundaries"
    return recorder.summary()
