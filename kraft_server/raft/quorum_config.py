"""Quorum configuration for the core, with Kafka's property names and defaults.

Each field names the Kafka property it mirrors (``controller.quorum.*`` from
``QuorumConfig.java``). The shell (``kraft_server/config.py``) parses properties
files into this dataclass; simulations build it directly.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from kraft_server.raft.boundary import Endpoint
from wire.uuids import ZERO_UUID


# The metadata partition every KRaft RPC names (``Topic.CLUSTER_METADATA_TOPIC_*``).
METADATA_TOPIC = "__cluster_metadata"
METADATA_PARTITION = 0
METADATA_TOPIC_ID = uuid.UUID(bytes=b"\x00" * 15 + b"\x01")  # AAAAAAAAAAAAAAAAAAAAAQ

# KRaft followers long-poll the leader for at most this long (KafkaRaftClient's
# fetch max wait, 500 ms; well under the 2000 ms request timeout).
FETCH_MAX_WAIT_MS = 500
MAX_FETCH_BYTES = 8 * 1024 * 1024
MAX_BATCH_BYTES = 8 * 1024 * 1024
MAX_BACKLOG_BYTES = 2 * MAX_BATCH_BYTES
MAX_SNAPSHOT_CHUNK = 1024 * 1024  # bytes per FetchSnapshot response
# Observers drop out of DescribeQuorum 300 s after their last fetch (LeaderState).
OBSERVER_SESSION_TIMEOUT_MS = 300_000


@dataclass(frozen=True)
class StaticVoter:
    """One entry of ``controller.quorum.voters`` (``id@host:port``)."""

    node_id: int
    host: str
    port: int


@dataclass(frozen=True)
class QuorumConfig:
    node_id: int  # node.id
    cluster_id: str  # from meta.properties
    directory_id: uuid.UUID = ZERO_UUID  # meta.properties directory.id of metadata.log.dir
    # controller.quorum.voters (static quorum, kraft.version 0); empty for dynamic quorums.
    static_voters: tuple[StaticVoter, ...] = ()
    # controller.quorum.bootstrap.servers: (host, port) pairs observers fetch from.
    bootstrap_servers: tuple[tuple[str, int], ...] = ()
    # advertised controller listeners of this node; the first is the default listener
    # (the first entry of controller.listener.names).
    listeners: tuple[Endpoint, ...] = ()
    # our other controller listeners with the default listener's security protocol: a
    # leader can reach a new voter's endpoints on them too (raft/endpoint_probe.py)
    probe_listeners: tuple[str, ...] = ()
    election_timeout_ms: int = 1000  # controller.quorum.election.timeout.ms
    fetch_timeout_ms: int = 2000  # controller.quorum.fetch.timeout.ms
    election_backoff_max_ms: int = 1000  # controller.quorum.election.backoff.max.ms
    request_timeout_ms: int = 2000  # controller.quorum.request.timeout.ms
    retry_backoff_ms: int = 20  # controller.quorum.retry.backoff.ms
    append_linger_ms: int = 25  # controller.quorum.append.linger.ms
    # kraft.version levels this software supports (KRaftVersion 0..1).
    kraft_version_min: int = 0
    kraft_version_max: int = 1
    fetch_max_wait_ms: int = FETCH_MAX_WAIT_MS
    auto_join: bool = False  # controller.quorum.auto.join.enable (KIP-853, raft/auto_join.py)
    # Backpressure (no Kafka property; Kafka's accumulator is unbounded): ``propose``
    # refuses while the leader's proposed-but-uncommitted bytes exceed this.
    max_backlog_bytes: int = MAX_BACKLOG_BYTES

    @property
    def default_listener(self) -> str:
        return self.listeners[0].name if self.listeners else "CONTROLLER"

    @property
    def check_quorum_timeout_ms(self) -> int:
        # LeaderState: the leader resigns when no majority fetched in 1.5x fetch timeout.
        return int(self.fetch_timeout_ms * 1.5)
