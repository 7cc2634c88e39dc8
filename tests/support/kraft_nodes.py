"""Our node as a process on free loopback ports, for integration and interop tests:
``python -m kraft_server`` in its own session, its log in a file, stopped with
SIGTERM (then SIGKILL) and always killed by the caller's finalizer."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tools.kafka_dist.controller import free_port, run_tool
from tools.kafka_dist.probe import describe_cluster, describe_quorum

REPO = Path(__file__).resolve().parents[2]


class OurNode:
    """``python -m kraft_server`` in its own session, log to a file."""

    def __init__(self, workdir: Path, node_id: int = 1, extra: tuple[str, ...] = ()):
        self.workdir = workdir
        self.node_id = node_id
        self.port = free_port()
        self.client_port = free_port()
        self.data = workdir / "data"
        self.config = workdir / "server.properties"
        self.log_path = workdir / "node.log"
        self.proc: subprocess.Popen | None = None
        controller_only = [
            "process.roles=controller",
            f"node.id={node_id}",
            f"controller.quorum.bootstrap.servers=127.0.0.1:{self.port}",
            "controller.listener.names=CONTROLLER",
            f"log.dirs={self.data}",
            f"metadata.log.dir={self.data}",
        ]
        # Kafka refuses a controller-only node with a non-controller listener, so
        # kafka-storage gets the CONTROLLER listener only; our node also has CLIENT.
        self.kafka_config = workdir / "kafka.properties"
        self.kafka_config.write_text("\n".join(controller_only + [
            f"listeners=CONTROLLER://127.0.0.1:{self.port}",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT",
        ]) + "\n")
        self.config.write_text("\n".join(controller_only + [
            f"listeners=CONTROLLER://127.0.0.1:{self.port},CLIENT://127.0.0.1:{self.client_port}",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,CLIENT:PLAINTEXT",
            *extra,
        ]) + "\n")

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def format_with_kafka(self, cluster_id: str) -> None:
        run_tool("kafka-storage", "format", "--cluster-id", cluster_id, "--standalone",
                 "--config", str(self.kafka_config))

    def format_as_observer_of(self, bootstrap: str, cluster_id: str, version: str | None = None) -> None:
        """Point both property files at another quorum's ``bootstrap`` and format with
        Kafka's ``--no-initial-controllers`` (release ``version``'s ``kafka-storage``,
        default: the default release): the node starts as an observer there."""
        for path in (self.kafka_config, self.config):
            set_property(path, "controller.quorum.bootstrap.servers", bootstrap)
        run_tool("kafka-storage", "format", "--cluster-id", cluster_id,
                 "--no-initial-controllers", "--config", str(self.kafka_config), version=version)

    def format_with_ours(self, cluster_id: str, release: str | None = None) -> None:
        """Formatted by our kraft-storage at ``release``'s metadata.version (default: the
        suite's Kafka release)."""
        subprocess.run([sys.executable, "-m", "tools.storage", "format", "--cluster-id", cluster_id,
                        "--standalone", "--release-version", release or kafka_release(),
                        "--config", str(self.config)],
                       check=True, cwd=REPO, timeout=60)

    def start(self, log_level: str = "DEBUG") -> None:
        log = open(self.log_path, "ab")
        env = dict(os.environ, KRAFT_LOG_LEVEL=log_level)
        self.proc = subprocess.Popen([sys.executable, "-m", "kraft_server", str(self.config)],
                                     cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True, env=env)
        log.close()

    def log_tail(self, n: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def wait_leader(self, timeout: float = 30.0):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"node exited with {self.proc.returncode}\n{self.log_tail()}")
            try:
                info = describe_cluster("127.0.0.1", self.port, timeout=1.0)
                if info.error_code == 0 and info.controller_id == self.node_id:
                    q = describe_quorum("127.0.0.1", self.port, timeout=1.0)
                    if q.error_code == 0 and q.leader_id == self.node_id and q.high_watermark > 0:
                        return q
                last = info
            except (OSError, ValueError) as exc:
                last = exc
            time.sleep(0.05)  # poll interval
        raise AssertionError(f"no leader after {timeout}s (last: {last!r})\n{self.log_tail()}")

    def stop(self, timeout: float = 15.0) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


def parse_status(text: str) -> dict[str, str]:
    """``kafka-metadata-quorum describe --status`` output as a dict."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return out


# -- quorums of our processes, for the process tests --------------------------------------

PARTITION = "__cluster_metadata-0"

# Faster than Kafka's defaults so failover fits a test, slow enough for a loaded
# 2-core machine; a NoOpRecord every 50 ms (when the controller layer is there)
# gives a stream of committed records.
FAST_QUORUM = (
    "controller.quorum.election.timeout.ms=750",
    "controller.quorum.fetch.timeout.ms=1500",
    "controller.quorum.election.backoff.max.ms=500",
    "metadata.max.idle.interval.ms=50",
)


def set_property(path: Path, key: str, value: str) -> None:
    """Replace (or add) ``key=value`` in a properties file."""
    lines = [l for l in path.read_text().splitlines() if not l.startswith(f"{key}=")]
    path.write_text("\n".join(lines + [f"{key}={value}"]) + "\n")


def kafka_release() -> str:
    """The pinned Kafka's release (``4.4`` for 4.4.0): the ``--release-version`` our nodes
    are formatted with, so that their metadata.version is one Kafka peers of that release
    support (an older pinned release, such as 4.3.1, supports levels only up to its own)."""
    from tools.kafka_dist import KAFKA_VERSION
    return ".".join(KAFKA_VERSION.split(".")[:2])


def storage_format(config: Path, cluster_id: str, *flags: str) -> None:
    """Our ``kraft-storage format`` (in-process: the same CLI code, no interpreter start-up),
    at the pinned Kafka's release unless ``flags`` name one."""
    import contextlib
    import io

    from tools.storage.__main__ import main as storage_main
    if not {"-r", "--release-version"} & set(flags):
        flags = (*flags, "--release-version", kafka_release())
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = storage_main(["format", "--cluster-id", cluster_id, "--config", str(config), *flags])
    assert rc == 0, out.getvalue()


def make_quorum(workdir: Path, mode: str, cluster_id: str, n: int = 3, extra: tuple[str, ...] = (),
                cluster_ids: dict[int, str] | None = None, flags: tuple[str, ...] = ()) -> list[OurNode]:
    """``n`` formatted (not started) nodes: ``mode`` is ``static`` (controller.quorum.voters,
    kraft.version 0) or ``dynamic`` (``format --initial-controllers``, kraft.version 1).
    ``cluster_ids`` overrides the cluster id some nodes are formatted with; ``flags``
    go to every format (e.g. ``--add-scram``)."""
    from wire.uuids import random_directory_id, uuid_to_str
    nodes = []
    for i in range(1, n + 1):
        (workdir / f"n{i}").mkdir()
        nodes.append(OurNode(workdir / f"n{i}", node_id=i, extra=FAST_QUORUM + tuple(extra)))
    for node in nodes:
        if mode == "static":
            set_property(node.config, "controller.quorum.voters",
                         ",".join(f"{m.node_id}@127.0.0.1:{m.port}" for m in nodes))
            set_property(node.config, "controller.quorum.bootstrap.servers", "")
        else:
            set_property(node.config, "controller.quorum.bootstrap.servers",
                         ",".join(m.bootstrap for m in nodes))
    voters = ",".join(f"{m.node_id}@127.0.0.1:{m.port}:{uuid_to_str(random_directory_id())}" for m in nodes)
    for node in nodes:
        cid = (cluster_ids or {}).get(node.node_id, cluster_id)
        quorum = () if mode == "static" else ("--initial-controllers", voters)
        storage_format(node.config, cid, *quorum, *flags)
    return nodes


def agreed_leader(nodes, timeout: float = 60.0, exclude=(), min_epoch: int = 0):
    """Poll until the live nodes (not in ``exclude``) name the same leader, in an epoch
    of at least ``min_epoch``, and it answers DescribeQuorum with a high watermark."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        live = [n for n in nodes if n.node_id not in exclude]
        for n in live:
            if n.proc is not None and n.proc.poll() is not None:
                raise AssertionError(f"node {n.node_id} exited with {n.proc.returncode}\n{n.log_tail()}")
        try:
            seen = {describe_cluster("127.0.0.1", n.port, timeout=2.0).controller_id for n in live}
            if len(seen) == 1 and (leader := next(iter(seen))) >= 0 and leader not in exclude:
                node = next(n for n in nodes if n.node_id == leader)
                q = describe_quorum("127.0.0.1", node.port, timeout=2.0)
                if (q.error_code == 0 and q.leader_id == leader and q.leader_epoch >= min_epoch
                        and q.high_watermark > 0):
                    return node, q
            last = seen
        except (OSError, ValueError) as exc:
            last = exc
        time.sleep(0.1)  # poll interval
    tails = "\n".join(f"--- node {n.node_id}\n{n.log_tail(20)}" for n in nodes)
    raise AssertionError(f"no agreed leader after {timeout}s (last: {last!r})\n{tails}")


def segment_files(data: Path) -> list[Path]:
    return sorted((data / PARTITION).glob("*.log"))


def read_batches(data: Path) -> dict[int, bytes]:
    """``{base offset: batch bytes}`` of every valid batch in the node's segments, read
    straight from the files (never through our log, which would recover them). Stops
    at the first incomplete or corrupt batch."""
    from wire.records import crc_matches, iter_headers
    out: dict[int, bytes] = {}
    for path in segment_files(data):
        buf = path.read_bytes()
        for pos, header in iter_headers(buf):
            if not crc_matches(buf, pos, header):
                return out
            out[header.base_offset] = buf[pos:pos + header.size]
    return out


def committed_batches(batches: dict[int, bytes], high_watermark: int) -> dict[int, bytes]:
    """The batches wholly below the high watermark."""
    from wire.records import read_header
    return {base: raw for base, raw in batches.items() if read_header(raw).next_offset <= high_watermark}


def validate_segments(data: Path) -> int:
    """Check every segment the way start-up recovery does (complete batches, CRC-32C,
    offsets continuing across segments, nothing after the last batch); returns the
    log end offset."""
    from kraft_server.log.recovery import scan_segment
    expected = None
    for path in segment_files(data):
        base = int(path.name.split(".")[0])
        assert expected is None or base == expected, f"{path.name} does not follow offset {expected}"
        fd = os.open(path, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            headers, valid, problem = scan_segment(fd, size, base)
        finally:
            os.close(fd)
        assert problem is None and valid == size, f"{path.name}: {problem} ({valid} of {size} bytes valid)"
        expected = headers[-1][1].next_offset if headers else base
    return expected if expected is not None else 0


def wait_for(condition, timeout: float, what: str, interval: float = 0.1):
    """Poll ``condition()`` until it returns a truthy value; AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            result = condition()
            if result:
                return result
            last = result
        except (OSError, ValueError) as exc:
            last = exc
        time.sleep(interval)  # poll interval
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


# -- raw requests with our codecs ------------------------------------------------------------

TOPIC = "__cluster_metadata"


def _roundtrip(port: int, body, version: int):
    """One request with our codecs; the decoded response body."""
    from wire.framing import FrameReader
    from wire.headers import decode_response, encode_request
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(encode_request(body.API_KEY, version, 7, body, "process-test"))
        reader, frames = FrameReader(), []
        while not frames:
            data = s.recv(65536)
            assert data, "connection closed"
            frames = reader.feed(data)
    return decode_response(frames[0], body.API_KEY, version)[1]


def vote_probe(port: int, cluster_id: str, *, candidate_id: int, voter_id: int) -> int:
    """A PreVote (Vote v2) as node ``candidate_id`` of ``cluster_id`` would send it; the
    top-level error code of the answer."""
    from wire.messages import VoteRequest
    from wire.messages.vote_request import PartitionData, TopicData
    body = VoteRequest(cluster_id=cluster_id, voter_id=voter_id, topics=[TopicData(
        topic_name=TOPIC, partitions=[PartitionData(
            partition_index=0, replica_epoch=0, replica_id=candidate_id,
            last_offset_epoch=0, last_offset=0, pre_vote=True)])])
    return _roundtrip(port, body, 2).error_code


def our_describe_quorum(port: int):
    from wire.messages import DescribeQuorumRequest
    from wire.messages.describe_quorum_request import PartitionData, TopicData
    body = DescribeQuorumRequest(topics=[TopicData(topic_name=TOPIC,
                                                   partitions=[PartitionData(partition_index=0)])])
    return _roundtrip(port, body, 2)
