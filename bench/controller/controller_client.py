"""Requests the controller bench sends itself, with our codecs over one socket: the
part of a broker a controller sees (BrokerRegistration v4 and BrokerHeartbeat v1 for
brokers that host nothing), CreateTopics v7 straight to a controller, and Metadata
v12 to a real broker. The same bytes go to our controllers and to Kafka's."""
from __future__ import annotations

import threading
import uuid

from kraft_server.common.features import SUPPORTED
from tools.blocking_client import BlockingConnection
from wire.messages import (
    BrokerHeartbeatRequest, BrokerRegistrationRequest, CreateTopicsRequest, DescribeClusterRequest,
    ElectLeadersRequest, MetadataRequest,
)
from wire.messages.broker_registration_request import Feature, Listener
from wire.messages.create_topics_request import CreatableTopic
from wire.messages.metadata_request import MetadataRequestTopic

# What a broker of the release our controllers follow offers (wide enough for every finalized level).
BROKER_FEATURES = tuple((name, lo, hi) for name, (lo, hi) in SUPPORTED.items())
CAUGHT_UP = (1 << 62)  # a CurrentMetadataOffset past any registration


class Connection(BlockingConnection):
    """One connection, one request at a time."""

    def __init__(self, host: str, port: int, timeout: float = 60.0) -> None:
        super().__init__(host, port, timeout=timeout, client_id="bench")


def create_topics(conn: Connection, names, partitions: int, rf: int, validate_only: bool = False):
    body = CreateTopicsRequest(topics=[CreatableTopic(name=n, num_partitions=partitions, replication_factor=rf)
                                       for n in names], timeout_ms=120000, validate_only=validate_only)
    return conn.request(body, 7)


def elect_preferred_everywhere(conn: Connection):
    """ElectLeaders v2, PREFERRED, every partition (null topics): the controller reads
    every partition to decide."""
    return conn.request(ElectLeadersRequest(election_type=0, topic_partitions=None, timeout_ms=120000), 2)


def partition_leaders(conn: Connection, topic: str) -> dict[int, int]:
    """{partition: leader id} a broker's Metadata answer gives for ``topic``."""
    r = conn.request(MetadataRequest(topics=[MetadataRequestTopic(name=topic)],
                                     allow_auto_topic_creation=False), 12)
    return {p.partition_index: p.leader_id for t in r.topics if t.name == topic for p in t.partitions}


def unfenced_brokers(conn: Connection) -> list[int]:
    """Broker ids a broker's DescribeCluster v2 (fenced ones included) reports unfenced."""
    r = conn.request(DescribeClusterRequest(endpoint_type=1, include_fenced_brokers=True), 2)
    return sorted(b.broker_id for b in r.brokers if not b.is_fenced)


def registration(broker: int, cluster_id: str, log_dirs) -> BrokerRegistrationRequest:
    """A stand-in's BrokerRegistration v4 (a new incarnation each time)."""
    return BrokerRegistrationRequest(
        broker_id=broker, cluster_id=cluster_id, incarnation_id=uuid.uuid4(),
        listeners=[Listener(name="PLAINTEXT", host="127.0.0.1", port=19000 + broker, security_protocol=0)],
        features=[Feature(name=n, min_supported_version=lo, max_supported_version=hi)
                  for n, lo, hi in BROKER_FEATURES],
        rack=None, log_dirs=log_dirs, previous_broker_epoch=-1)


class BrokerStandIns(threading.Thread):
    """``ids`` brokers that register with the active controller at ``port`` and heartbeat
    every ``interval`` s, asking to be unfenced; they host no partitions."""

    def __init__(self, port: int, cluster_id: str, ids, interval: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.port, self.cluster_id, self.ids, self.interval = port, cluster_id, list(ids), interval
        self.epochs: dict[int, int] = {}
        self.unfenced: set[int] = set()
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.held: set[int] = set()  # brokers whose heartbeats stop
        self.dirs: list | None = None  # the log directories to register with (default: a new one)

    def register(self, conn: Connection) -> None:
        for i in self.ids:
            r = conn.request(registration(i, self.cluster_id, self.dirs or [uuid.uuid4()]), 4)
            if r.error_code:
                raise RuntimeError(f"BrokerRegistration of {i}: error {r.error_code}")
            self.epochs[i] = r.broker_epoch

    def run(self) -> None:
        try:
            conn = Connection("127.0.0.1", self.port)
            self.register(conn)
            while not self.stop.is_set():
                for i, epoch in list(self.epochs.items()):
                    if i in self.held:
                        continue
                    r = conn.request(BrokerHeartbeatRequest(broker_id=i, broker_epoch=epoch,
                                                            current_metadata_offset=CAUGHT_UP), 1)
                    if r.error_code == 0 and not r.is_fenced:
                        self.unfenced.add(i)
                self.stop.wait(self.interval)  # the heartbeat period
            conn.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the bench
            if not self.stop.is_set():
                self.error = exc
