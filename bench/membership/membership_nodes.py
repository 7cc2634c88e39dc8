"""Processes and probes for ``bench/membership/membership.py``.

* ``NodeProc``: one controller process, ours (``python -m kraft_server``) or Apache
  Kafka 4.3.1's (``bin/kafka-server-start``, Kafka's server heap ``-Xmx1G -Xms1G``
  and the wrapper's G1 options, as ``bench/raft/raft.py`` runs Kafka), in its own session
  with stdout and stderr in a file; ``kill`` SIGKILLs the process group.
* ``QuorumProbe``: DescribeQuorum v2 for ``__cluster_metadata``/0 over one kept-open
  connection (our codecs), read as the bench needs it: leader, high watermark, the
  voters and the observers with their log end offsets and caught-up timestamps.
* ``find_voters_record``: the offset of the newest VotersRecord naming a node, read
  straight from the leader's segment files (what the leader wrote, complete
  batches only), so "committed" can be checked against the high watermark.
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tools.kafka_dist.ports import free_port  # noqa: F401  (re-exported)
from wire.exceptions import DecodeError
from wire.framing import FrameReader
from wire.headers import decode_response, encode_request
from wire.messages import AddRaftVoterRequest, ApiVersionsRequest, DescribeQuorumRequest
from wire.messages.describe_quorum_request import PartitionData, TopicData
from wire.records import ControlRecordType, control_records, iter_headers, walk

ROOT = Path(__file__).resolve().parents[2]
KAFKA_HEAP = "-Xmx1G -Xms1G"  # kafka-server-start.sh's default heap
TOPIC = "__cluster_metadata"
# The distribution's server logging (INFO to stderr) plus Kafka's request log, whose
# "Completed request" lines carry the API key and totalTimeMs; Unix-ms timestamps.
KAFKA_REQUEST_LOG4J = """Configuration:
  name: bench-membership
  Appenders:
    Console:
      name: STDERR
      target: SYSTEM_ERR
      PatternLayout:
        pattern: "[%d{UNIX_MILLIS}] %p %m (%c)%n"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: STDERR
    Logger:
      - name: org.apache.kafka.clients
        level: WARN
      - name: kafka.request.logger
        level: DEBUG
"""
ADD_RAFT_VOTER = AddRaftVoterRequest.API_KEY


def now_ms() -> float:
    return time.time() * 1000.0


def write_properties(path: Path, props: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


@dataclass
class NodeProc:
    impl: str  # "ours" or "kafka"
    node_id: int
    port: int
    config: Path
    out: Path
    request_log: bool = False  # log when requests arrive (node 1: AddRaftVoter)
    proc: subprocess.Popen | None = None
    spawn_ms: float = 0.0
    listen_ms: float | None = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def command(self) -> tuple[list[str], dict[str, str], Path]:
        if self.impl == "ours":
            env = dict(os.environ)
            env.setdefault("KRAFT_LOG_LEVEL", "INFO")
            if self.request_log:
                return [sys.executable, str(ROOT / "bench" / "membership" / "membership_ournode.py"), str(self.config)], env, ROOT
            return [sys.executable, "-m", "kraft_server", str(self.config)], env, ROOT
        from tools.kafka_dist import bin_path, java_executable
        env = dict(os.environ)
        env.setdefault("KAFKA_HEAP_OPTS", KAFKA_HEAP)
        env.pop("KAFKA_JVM_PERFORMANCE_OPTS", None)  # the wrapper's production G1 options
        env["LOG_DIR"] = str(self.out.parent / f"logs{self.node_id}")
        if self.request_log:
            yaml = self.out.parent / f"log4j2-node{self.node_id}.yaml"
            yaml.write_text(KAFKA_REQUEST_LOG4J)
            env["KAFKA_LOG4J_OPTS"] = f"-Dlog4j2.configurationFile={yaml}"
        if "JAVA_HOME" not in env:
            env["JAVA_HOME"] = str(Path(java_executable()).resolve().parents[1])
        return [str(bin_path("kafka-server-start")), str(self.config)], env, self.out.parent

    def start(self) -> None:
        argv, env, cwd = self.command()
        out = open(self.out, "ab")
        try:
            self.spawn_ms = now_ms()
            self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            out.close()
        self.listen_ms = None

    def check_listening(self) -> bool:
        if self.listen_ms is None and self.alive:
            with socket.socket() as s:
                s.settimeout(0.05)
                try:
                    s.connect(("127.0.0.1", self.port))
                    self.listen_ms = now_ms()
                except OSError:
                    pass
        return self.listen_ms is not None

    def kill(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass

    def rss_mib(self) -> float | None:
        """VmRSS of the process (the wrappers exec the JVM, so this is the JVM)."""
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except (OSError, AttributeError):
            return None
        return None

    def tail(self, lines: int = 25) -> str:
        try:
            text = self.out.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            text = []
        return f"--- {self.impl} node {self.node_id} ({self.out})\n" + "\n".join(text)


_OURS_RECEIVED = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\] DEBUG received (\w+)Request on ")
_KAFKA_COMPLETED = re.compile(r"^\[(\d+)\] DEBUG Completed request:(\{.*\}) \(kafka\.request\.logger\)$")


def request_arrivals(node: "NodeProc", api_key: int, name: str) -> list[float]:
    """Unix ms at which node 1 received each request of one API, from its output: ours
    logs "received <Name>Request" on arrival (local time, ms); Kafka's request log
    prints the completion time and totalTimeMs (arrival = completion - total)."""
    out = []
    try:
        lines = node.out.read_text(errors="replace").splitlines()
    except OSError:
        return out
    for line in lines:
        if node.impl == "ours":
            m = _OURS_RECEIVED.match(line)
            if m and m[3] == name:
                out.append(time.mktime(time.strptime(m[1], "%Y-%m-%d %H:%M:%S")) * 1000 + int(m[2]))
        elif f'"requestApiKey":{api_key},' in line:
            m = _KAFKA_COMPLETED.match(line)
            if m:
                data = json.loads(m[2])
                out.append(int(m[1]) - float(data["totalTimeMs"]))
    return out


@dataclass
class Replica:
    replica_id: int
    log_end_offset: int
    last_fetch_timestamp: int
    last_caught_up_timestamp: int


@dataclass
class Quorum:
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: dict[int, Replica]
    observers: dict[int, Replica]


class QuorumProbe:
    """Requests to one node over a kept-open connection (reopened after an error)."""

    def __init__(self, port: int, timeout: float = 2.0):
        self.port, self.timeout = port, timeout
        self.sock: socket.socket | None = None
        self.reader = FrameReader()
        self.correlation = 0

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _request(self, body, version: int):
        if self.sock is None:
            self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout)
            self.reader = FrameReader()
        self.correlation += 1
        try:
            self.sock.sendall(encode_request(body.API_KEY, version, self.correlation, body, "bench-membership"))
            while True:
                data = self.sock.recv(1 << 16)
                if not data:
                    raise ConnectionError("connection closed")
                frames = self.reader.feed(data)
                if frames:
                    header, resp = decode_response(frames[0], body.API_KEY, version)
                    if header.correlation_id != self.correlation:
                        raise ConnectionError("correlation id mismatch")
                    return resp
        except BaseException:
            self.close()
            raise

    def describe_quorum(self) -> Quorum | None:
        resp = self._request(DescribeQuorumRequest(topics=[TopicData(
            topic_name=TOPIC, partitions=[PartitionData(partition_index=0)])]), 2)
        if resp.error_code or not resp.topics or not resp.topics[0].partitions:
            return None
        p = resp.topics[0].partitions[0]
        if p.error_code:
            return None

        def table(states):
            return {s.replica_id: Replica(s.replica_id, s.log_end_offset, s.last_fetch_timestamp,
                                          s.last_caught_up_timestamp) for s in states}
        return Quorum(p.leader_id, p.leader_epoch, p.high_watermark, table(p.current_voters),
                      table(p.observers))

    def api_keys(self) -> dict[int, tuple[int, int]]:
        resp = self._request(ApiVersionsRequest(client_software_name="bench-membership",
                                                client_software_version="1"), 3)
        return {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}


def find_voters_record(partition_dir: Path, node_id: int, first_segment_from: int = 0) -> int | None:
    """Offset of the newest VotersRecord naming ``node_id`` in the segments of
    ``partition_dir``; the first segment is read from byte ``first_segment_from``
    (the end of what the bench generated), the others whole."""
    found = None
    for i, seg in enumerate(sorted(partition_dir.glob("*.log"))):
        with open(seg, "rb") as f:
            if i == 0:
                f.seek(first_segment_from)
            data = f.read()
        try:
            for pos, header in iter_headers(data):  # stops at a batch still being written
                if header.is_control:
                    batch = data[pos:pos + header.size]
                    for j, (kind, msg) in enumerate(control_records(batch, walk(batch)[0])):
                        if kind == ControlRecordType.KRAFT_VOTERS and any(
                                v.voter_id == node_id for v in msg.voters):
                            found = header.base_offset + j
        except DecodeError:
            pass  # garbage past the last whole batch: the end
    return found
