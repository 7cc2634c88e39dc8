"""Fast fencing (issue 29) with three real Apache Kafka 4.3.1 brokers on one
controller of ours (``broker.session.timeout.ms`` 9000, Kafka's default), which
the brokers reach through a TCP proxy (the controller advertises the proxy's
address, so their heartbeats, fetches and forwards all cross it). One cluster for
the module; the tests run in order, the kill last:

- the proxy resets every connection: the controller probes each broker's listener,
  which accepts, and fences nobody;
- a broker SIGSTOPped for 5 s: never fenced (its connections stay open, its
  listening socket still completes handshakes);
- a broker SIGSTOPped for 12 s (slow): fenced when its session expires, not before;
- kill -9 of the broker leading the most partitions: every partition has a new
  leader within 1 s, on the controller and in the survivors' Metadata, and no record
  acknowledged with acks=all is lost; restarted on the same port, its new
  incarnation registers at once and is never fenced by the old one's evidence.
"""
from __future__ import annotations

import os
import re
import signal
import socket
import time
from collections import Counter

import pytest

from tests.interop.test_kafka_broker_failure import BROKERS, CLUSTER, Producer, _check_nothing_lost, image_of
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import bootstrap_servers, start_brokers
from tests.support.kraft_nodes import OurNode, wait_for
from tests.support.tcp_proxy import TcpProxy
from tools.kafka_dist.controller import free_port, run_tool
from wire.framing import FrameReader
from wire.headers import decode_response, encode_request
from wire.messages import MetadataRequest
from wire.messages.metadata_request import MetadataRequestTopic

pytestmark = [pytest.mark.java]
SESSION_MS = 9000
HEARTBEAT_MS = 2000  # the brokers' broker.heartbeat.interval.ms (Kafka's default)


class Cluster:
    def __init__(self, workdir) -> None:
        self.proxy = TcpProxy("127.0.0.1", 0, port=free_port())
        (workdir / "ours").mkdir()
        self.node = OurNode(workdir / "ours", node_id=1, extra=(
            f"broker.session.timeout.ms={SESSION_MS}",
            f"advertised.listeners=CONTROLLER://{self.proxy.address}"))
        self.proxy.target = ("127.0.0.1", self.node.port)
        self.brokers, self.producer = [], None
        self.workdir = workdir

    def start(self) -> None:
        self.proxy.__enter__()
        self.node.format_with_ours(CLUSTER)
        self.node.start()
        self.node.wait_leader()
        self.brokers = start_brokers(self.workdir, 3, CLUSTER, self.proxy.address)
        wait_for(lambda: self.unfenced() == BROKERS, 120, "three unfenced brokers")
        self.bs = bootstrap_servers(self.brokers)
        run_tool("kafka-topics", "--bootstrap-server", self.bs, "--create", "--topic", "events",
                 "--replication-factor", "3", "--partitions", "6", "--config", "min.insync.replicas=2",
                 timeout=120)
        wait_for(lambda: all(self.probes(b, "arm", "accepted") for b in BROKERS), 30,
                 "every broker's listener seen accepting")

    def close(self) -> None:
        if self.producer is not None:
            self.producer.stop.set()
            self.producer.join(90)
        for b in self.brokers:
            if b.proc is not None and b.proc.poll() is None:
                os.killpg(b.proc.pid, signal.SIGCONT)
            b.close()
        self.node.stop()
        self.proxy.close()

    def unfenced(self) -> list[int]:
        return sorted(b.broker_id for b in image_of(self.node).brokers if not b.fenced)

    def broker(self, broker_id: int):
        return next(b for b in self.brokers if b.node_id == broker_id)

    def node_log(self) -> str:
        return self.node.log_path.read_text(errors="replace")

    def fencings(self, broker_id: int) -> list[str]:
        """Why our controller fenced ``broker_id``, in order (its log lines)."""
        return re.findall(rf"fencing broker {broker_id}: ([^(\n]*[^ (\n])", self.node_log())

    def probes(self, broker_id: int, purpose: str, outcome: str) -> int:
        return len(re.findall(rf"probe \({purpose}\) of broker {broker_id} .*'{outcome}'", self.node_log()))

    def leaders(self) -> dict[int, int]:
        return {i: p.leader for i, p in image_of(self.node).topics.by_name["events"].partitions.items()}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    need_jdk()
    c = Cluster(tmp_path_factory.mktemp("fast-fencing"))
    try:
        c.start()
        yield c
    finally:
        c.close()


def metadata_leaders(port: int) -> dict[int, int] | None:
    """{partition: leader} of ``events`` in a broker's Metadata v12 (None: no answer)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
            body = MetadataRequest(topics=[MetadataRequestTopic(name="events")], allow_auto_topic_creation=False)
            sock.sendall(encode_request(body.API_KEY, 12, 1, body, "fast-fencing-test"))
            reader, frames = FrameReader(), []
            while not frames:
                data = sock.recv(1 << 16)
                if not data:
                    return None
                frames = reader.feed(data)
    except OSError:
        return None
    r = decode_response(frames[0], body.API_KEY, 12)[1]
    return {p.partition_index: p.leader_id for t in r.topics if t.name == "events" for p in t.partitions}


def paused(cluster, broker_id: int, seconds: float, watch):
    """SIGSTOP the broker for ``seconds`` (a timed fault, checked by ``watch()`` every
    100 ms meanwhile), then SIGCONT; returns the SIGSTOP's monotonic time."""
    pid = cluster.broker(broker_id).proc.pid
    os.killpg(pid, signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        while time.monotonic() - stopped < seconds:
            watch(time.monotonic() - stopped)
            time.sleep(0.1)  # the fault's duration, not synchronisation
    finally:
        os.killpg(pid, signal.SIGCONT)
    return stopped


def test_a_proxy_cutting_live_brokers_connections_fences_nobody(cluster):
    before = {b: cluster.probes(b, "death", "accepted") for b in BROKERS}
    accepted = cluster.proxy.accepted
    assert cluster.proxy.cut() >= 3  # at least every broker's heartbeat connection
    # each broker's heartbeat connection closed: the controller probed its listener,
    # which accepted, so the rule does not hold
    wait_for(lambda: all(cluster.probes(b, "death", "accepted") > before[b] for b in BROKERS), 30,
             "a probe of every broker after the cut")
    # they reconnect through the proxy and go on heartbeating; nobody is fenced
    # meanwhile (watched for 3 s: longer than the probes' retries and one heartbeat)
    wait_for(lambda: cluster.proxy.accepted >= accepted + 3, 30, "the brokers reconnected")
    watched = time.monotonic()
    while time.monotonic() - watched < 3.0:
        assert all(cluster.fencings(b) == [] for b in BROKERS)
        time.sleep(0.1)  # the observation's duration, not synchronisation
    assert cluster.unfenced() == BROKERS


def test_a_broker_paused_for_5_s_is_never_fenced(cluster):
    victim = BROKERS[1]

    def watch(_elapsed):
        assert cluster.fencings(victim) == []
    paused(cluster, victim, 5.0, watch)
    # resumed: it heartbeats again; still nobody fenced (a session is 9 s)
    wait_for(lambda: cluster.unfenced() == BROKERS, 30, "every broker unfenced")
    assert cluster.fencings(victim) == []


@pytest.mark.slow
def test_a_broker_paused_for_12_s_is_fenced_when_its_session_expires(cluster):
    victim = BROKERS[2]
    fenced_at = []

    def watch(elapsed):
        if not fenced_at and cluster.fencings(victim):
            fenced_at.append(elapsed)
    paused(cluster, victim, 12.0, watch)
    assert fenced_at, "fenced while paused"
    # the session (9 s) counts from its last heartbeat, at most one interval before the stop
    assert SESSION_MS - HEARTBEAT_MS - 500 <= fenced_at[0] * 1000 <= SESSION_MS + 1500, fenced_at
    assert cluster.fencings(victim) == ["its session expired"]
    wait_for(lambda: cluster.unfenced() == BROKERS, 60, "the paused broker unfenced again")


def test_kill_9_of_the_busiest_leader_re_leads_every_partition_within_1_s(cluster):
    cluster.producer = producer = Producer(cluster.bs)
    producer.start()
    wait_for(lambda: producer.count() >= 200, 60, "the producer's first acks")
    victim_id = Counter(cluster.leaders().values()).most_common(1)[0][0]
    survivors = [b.port for b in cluster.brokers if b.node_id != victim_id]
    killed = time.monotonic()  # the clock starts before the signal (stop waits for the exit)
    cluster.broker(victim_id).stop(graceful=False)  # SIGKILL

    def controller_moved():
        img = image_of(cluster.node)
        return img.brokers.get(victim_id).fenced and all(
            p.leader not in (victim_id, -1) for p in img.topics.by_name["events"].partitions.values())
    wait_for(controller_moved, 30, "the victim fenced and its leaderships moved", interval=0.02)
    on_controller = time.monotonic() - killed

    def brokers_moved():
        views = [metadata_leaders(port) for port in survivors]
        return all(v is not None and len(v) == 6 and victim_id not in v.values() and -1 not in v.values()
                   for v in views)
    wait_for(brokers_moved, 30, "the survivors' Metadata without the victim", interval=0.02)
    in_metadata = time.monotonic() - killed
    print(f"kill -9 -> re-led: controller {on_controller * 1000:.0f} ms, Metadata {in_metadata * 1000:.0f} ms")
    assert cluster.fencings(victim_id) == ["its connections closed and its listener refused a connection"]
    assert on_controller < 1.0 and in_metadata < 1.0, (on_controller, in_metadata)
    before = producer.count()
    wait_for(lambda: producer.count() >= before + 200, 60, "the producer continuing")
    _check_nothing_lost(producer, cluster.bs)
    # restarted on the same port: the new incarnation registers at once (the old
    # session went with the fence, so no DUPLICATE_BROKER_REGISTRATION wait), is
    # unfenced and rejoins every ISR; the old incarnation's evidence fences nothing more
    victim = cluster.broker(victim_id)
    victim.start()
    wait_for(lambda: cluster.unfenced() == BROKERS and all(
        sorted(p.isr) == BROKERS for p in image_of(cluster.node).topics.by_name["events"].partitions.values()),
        120, "the restarted broker unfenced and back in every ISR")
    assert "DUPLICATE_BROKER_REGISTRATION" not in victim.log_text()
    assert len(cluster.fencings(victim_id)) == 1

