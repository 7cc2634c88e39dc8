"""The live fuzzer (issue 27, "Connections and bad input at a live node"): mutated,
truncated and lying requests of every API key and version that each listener of a
running 3-node quorum of our processes advertises (``tests/support/live_fuzz.py``),
while valid clients keep asking DescribeQuorum, ApiVersions, Metadata and a consumer
Fetch of ``__cluster_metadata`` on every node, and an Apache Kafka 4.3.1 broker
registered on the quorum keeps its session (it stays unfenced).

Checks: no node exits or logs a traceback or a fatal error; every node's RSS stays
within RSS_GROWTH_MIB of its start (printed); every valid request gets a correct
answer; the high watermark keeps advancing (the longest stall is printed and bounded);
every batch committed before the run is still on every node, byte for byte.

The seed is fresh and printed; ``FUZZ_LIVE_SEED=N`` replays a run's inputs (the same
sequence; eight connections at a time, so their interleaving may differ), and a failure
shows the offending input in hex. The default-suite
test sends FUZZ_LIVE_INPUTS (6,000) inputs in at most 45 s; ``make fuzz-live`` runs the
slow test: FUZZ_LIVE_INPUTS (default 100,000) within FUZZ_LIVE_SECONDS (default 600).
"""
from __future__ import annotations

import os
import random
import re
import sys
import threading
import time
from collections import Counter

import pytest

from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import start_brokers
from tests.support.kraft_nodes import (
    _roundtrip, agreed_leader, committed_batches, make_quorum, read_batches, wait_for,
)
from tests.support.live_fuzz import LiveFuzzer, Listener, advertised
from tools.kafka_dist.controller import random_cluster_id
from tools.kafka_dist.probe import describe_quorum
from wire.errors import ErrorCode, error_name
from wire.messages import REQUESTS
from wire.records import crc_matches, iter_headers

pytestmark = pytest.mark.java  # the Kafka broker on the quorum

TOPIC = "__cluster_metadata"
RSS_GROWTH_MIB = 150
MAX_STALL_SECONDS = 15.0  # longest time the high watermark may stand still
BAD_LOG = re.compile(r"Traceback|\bfatal\b", re.IGNORECASE)


def _rss_mib(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _broker_unfenced(broker) -> bool:
    """The broker, asked itself (DescribeCluster v2, fenced ones included), lists
    itself unfenced."""
    from wire.messages import DescribeClusterRequest
    r = _roundtrip(broker.port, DescribeClusterRequest(endpoint_type=1, include_fenced_brokers=True), 2)
    assert r.error_code == 0, r
    return {b.broker_id: b.is_fenced for b in r.brokers}.get(broker.node_id) is False


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Three of our nodes and one Apache Kafka 4.3.1 broker registered on them."""
    need_jdk()
    work = tmp_path_factory.mktemp("fuzzlive")
    cluster_id = random_cluster_id()
    nodes = make_quorum(work, "dynamic", cluster_id)
    brokers = []
    try:
        for n in nodes:
            n.start()
        agreed_leader(nodes, timeout=60)
        brokers = start_brokers(work, 1, cluster_id, ",".join(n.bootstrap for n in nodes))
        wait_for(lambda: _broker_unfenced(brokers[0]), 90, f"the broker unfenced\n{brokers[0].log_tail(20)}")
        yield nodes, brokers[0]
    finally:
        for b in brokers:
            b.close()
        for n in nodes:
            n.kill()


def _metadata(port: int):
    from wire.messages import MetadataRequest
    from wire.messages.metadata_request import MetadataRequestTopic
    r = _roundtrip(port, MetadataRequest(topics=[MetadataRequestTopic(name=TOPIC)],
                                         allow_auto_topic_creation=False), 12)
    (t,) = r.topics
    assert t.error_code == 0 and t.name == TOPIC and len(t.partitions) == 1, t
    return r


def _consumer_fetch(port: int):
    from wire.messages import FetchRequest
    from wire.messages.fetch_request import FetchPartition, FetchTopic, ReplicaState
    body = FetchRequest(replica_id=-1, replica_state=ReplicaState(replica_id=-1), max_wait_ms=0, min_bytes=0,
                        max_bytes=1 << 16, session_id=0, session_epoch=-1, topics=[FetchTopic(
                            topic=TOPIC, partitions=[FetchPartition(partition=0, fetch_offset=0,
                                                                    partition_max_bytes=1 << 16)])])
    r = _roundtrip(port, body, 12)
    (t,) = r.responses
    (p,) = t.partitions
    assert r.error_code == 0 and p.error_code == 0 and p.high_watermark > 0 and len(p.records) > 0, p
    records = bytes(p.records)
    headers = list(iter_headers(records))
    assert headers and headers[0][1].base_offset == p.log_start_offset, headers[:1]
    assert all(crc_matches(records, pos, h) for pos, h in headers), "a batch with a bad CRC"
    return p.high_watermark


class ValidClients(threading.Thread):
    """Asks every node, in turn, the four valid requests; records failures, answer
    times and the highest high watermark seen over time."""

    def __init__(self, nodes, tables: dict, broker):
        super().__init__(daemon=True)
        self.nodes, self.tables, self.broker = nodes, tables, broker
        self.done = threading.Event()
        self.failures: list[str] = []
        self.requests = Counter()
        self.slowest = 0.0
        self.hwm = (time.monotonic(), 0)  # (when it last moved, highest seen)
        self.longest_stall = 0.0

    def run(self) -> None:
        while not self.done.is_set():
            for node in self.nodes:
                self.ask(node)
            self.ask_broker()
            self.done.wait(0.05)  # pacing, not synchronisation

    def ask_broker(self) -> None:
        """The Kafka broker keeps its session: it stays registered and unfenced."""
        try:
            assert self.broker.proc.poll() is None, "the Kafka broker exited"
            assert _broker_unfenced(self.broker), "the Kafka broker is fenced"
        except Exception as exc:  # noqa: BLE001
            self.failures.append(f"broker {self.broker.node_id}: {exc!r}")
        self.requests["broker DescribeCluster"] += 1

    def ask(self, node) -> None:
        if node.proc.poll() is not None:
            self.failures.append(f"node {node.node_id} exited with {node.proc.returncode}")
            self.done.set()
            return
        checks = (
            ("DescribeQuorum", lambda: self.quorum(node)),
            ("ApiVersions", lambda: self.api_versions(node)),
            ("Metadata", lambda: _metadata(node.client_port)),
            ("Fetch", lambda: self.saw(_consumer_fetch(node.client_port))),
        )
        for name, check in checks:
            started = time.monotonic()
            try:
                check()
            except Exception as exc:  # noqa: BLE001 - every failure is a finding
                self.failures.append(f"{name} to node {node.node_id}: {exc!r}")
            self.slowest = max(self.slowest, time.monotonic() - started)
            self.requests[name] += 1

    def quorum(self, node) -> None:
        q = describe_quorum("127.0.0.1", node.port, timeout=5.0)
        assert q.error_code in (0, ErrorCode.NOT_LEADER_OR_FOLLOWER), q
        if q.error_code == 0:
            self.saw(q.high_watermark)

    def api_versions(self, node) -> None:
        for port in (node.port, node.client_port):
            assert advertised(port) == self.tables[port], f"ApiVersions on port {port} changed"

    def saw(self, hwm: int) -> None:
        now, (since, best) = time.monotonic(), self.hwm
        self.longest_stall = max(self.longest_stall, now - since)
        if hwm > best:
            self.hwm = (now, hwm)


def _bad_log_lines(node) -> list[str]:
    return [line for line in node.log_path.read_text(errors="replace").splitlines() if BAD_LOG.search(line)]


def _report(text: str) -> None:
    sys.stderr.write(text + "\n")


def _fuzz(cluster, inputs: int, seconds: float) -> None:
    nodes, broker = cluster
    seed = int(os.environ.get("FUZZ_LIVE_SEED") or random.SystemRandom().randrange(1 << 32))
    _report(f"\nfuzz-live: FUZZ_LIVE_SEED={seed}, budget {inputs} inputs or {seconds:.0f} s")
    tables = {}
    listeners = []
    for n in nodes:
        for name, port in (("controller", n.port), ("client", n.client_port)):
            tables[port] = advertised(port)
            listeners.append(Listener(n.node_id, name, port, tables[port]))
    leader, q = agreed_leader(nodes, timeout=30)
    reference = committed_batches(read_batches(leader.data), q.high_watermark)
    rss_before = {n.node_id: _rss_mib(n.proc.pid) for n in nodes}
    clients = ValidClients(nodes, tables, broker)
    clients.saw(q.high_watermark)
    clients.start()
    try:
        stats = LiveFuzzer(seed, listeners).run(inputs, seconds)
    finally:
        clients.done.set()
        clients.join(30)
    clients.saw(clients.hwm[1])  # a stall still going at the end counts
    rss_after = {n.node_id: _rss_mib(n.proc.pid) for n in nodes}

    names = {k: REQUESTS[k].__name__.removesuffix("Request") for k in REQUESTS}
    per_key = ", ".join(f"{names.get(k, k)} {c}" for k, c in sorted(stats.sent.items()))
    _report(f"fuzz-live: {stats.inputs} inputs in {stats.elapsed:.1f} s "
            f"({stats.inputs / max(stats.elapsed, 1e-9):.0f}/s) to {len(listeners)} listeners")
    _report(f"fuzz-live: per API key: {per_key}")
    _report(f"fuzz-live: per kind: {dict(stats.kinds)}")
    _report(f"fuzz-live: outcomes: {dict(stats.outcomes)}; connections closed by the server per kind: "
            f"{dict(stats.closed_by_kind)}")
    _report("fuzz-live: error codes answered: " + ", ".join(
        f"{error_name(c)} {n}" for c, n in stats.error_codes.most_common()))
    _report(f"fuzz-live: valid requests {dict(clients.requests)}, slowest answer {clients.slowest:.2f} s; "
            f"high watermark {q.high_watermark} -> {clients.hwm[1]}, longest stall "
            f"{clients.longest_stall:.1f} s")
    _report("fuzz-live: RSS MiB before -> after: " + ", ".join(
        f"node {i} {rss_before[i]:.1f} -> {rss_after[i]:.1f}" for i in sorted(rss_before)))

    problems = stats.failures[:10] + clients.failures[:10]
    for n in nodes:
        if n.proc.poll() is not None:
            problems.append(f"node {n.node_id} exited with {n.proc.returncode}\n{n.log_tail()}")
        problems += [f"node {n.node_id} log: {line}" for line in _bad_log_lines(n)[:5]]
        if rss_after[n.node_id] > rss_before[n.node_id] + RSS_GROWTH_MIB:
            problems.append(f"node {n.node_id} RSS grew {rss_before[n.node_id]:.1f} -> "
                            f"{rss_after[n.node_id]:.1f} MiB")
    assert not problems, f"FUZZ_LIVE_SEED={seed}:\n" + "\n".join(problems)
    assert clients.hwm[1] > q.high_watermark, "the quorum committed nothing during the run"
    assert clients.longest_stall < MAX_STALL_SECONDS, f"the high watermark stood still {clients.longest_stall:.1f} s"

    def all_hold():
        return all(all(read_batches(n.data).get(b) == raw for b, raw in reference.items()) for n in nodes)
    wait_for(all_hold, 30, f"the {len(reference)} batches committed before the run on every node")


def test_live_fuzz_short(cluster):
    _fuzz(cluster, int(os.environ.get("FUZZ_LIVE_INPUTS", 6000)), float(os.environ.get("FUZZ_LIVE_SECONDS", 45)))


LONG_SECONDS = float(os.environ.get("FUZZ_LIVE_SECONDS", 600))


@pytest.mark.slow
@pytest.mark.timeout(LONG_SECONDS + 300)
def test_live_fuzz_long(cluster):
    _fuzz(cluster, int(os.environ.get("FUZZ_LIVE_INPUTS", 100_000)), LONG_SECONDS)
