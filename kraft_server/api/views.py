"""What the API handlers read from the node, as plain values.

The handlers that answer locally (ApiVersions, DescribeCluster, DescribeQuorum) do
not reach into the Raft core's objects: the node hands them a ``NodeView`` whose
methods return the small frozen values below. ``kraft_server/shell/core_view.py`` adapts the
real ``RaftNode`` to it; tests use a fake. Keeping the boundary this narrow lets the
core's internals change without touching the wire handlers.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol
from wire.uuids import ZERO_UUID



@dataclass(frozen=True)
class ListenerAddress:
    name: str  # upper-case listener name
    host: str
    port: int


@dataclass(frozen=True)
class ReplicaView:
    """One row of DescribeQuorum (``ReplicaState``)."""

    replica_id: int
    directory_id: uuid.UUID = ZERO_UUID
    log_end_offset: int = -1
    last_fetch_timestamp: int = -1
    last_caught_up_timestamp: int = -1


@dataclass(frozen=True)
class VoterView:
    """A voter of a voter set: its key and its endpoints (KIP-853 ``VotersRecord``)."""

    node_id: int
    directory_id: uuid.UUID = ZERO_UUID
    endpoints: tuple[ListenerAddress, ...] = ()


@dataclass(frozen=True)
class QuorumView:
    """The leader's picture of the quorum, or just who leads when we do not."""

    is_leader: bool
    leader_id: int  # -1 when unknown
    epoch: int
    high_watermark: int = -1  # -1 while unknown
    voters: tuple[ReplicaView, ...] = ()  # the latest voter set (even uncommitted)
    observers: tuple[ReplicaView, ...] = ()
    voter_nodes: tuple[VoterView, ...] = ()  # endpoints of ``voters`` (DescribeQuorum v2 Nodes)
    committed_voters: tuple[ReplicaView, ...] | None = None  # v3: the set as of the HWM


@dataclass(frozen=True)
class Features:
    """Feature levels for ApiVersions v3+ (KIP-584)."""

    supported: dict[str, tuple[int, int]] = field(default_factory=dict)
    finalized: dict[str, int] = field(default_factory=dict)
    epoch: int = -1  # FinalizedFeaturesEpoch: -1 while unknown


class NodeView(Protocol):
    node_id: int
    cluster_id: str
    controller: Any  # kraft_server.controller.Controller, None on a node without one (NOT_CONTROLLER)

    def controller_registrations(self):
        """The committed controllers' registrations and the metadata.version, or None
        while the image knows no metadata.version (DescribeCluster's source)."""

    def quorum(self, now_ms: int) -> QuorumView:
        """The current quorum picture (called on every DescribeQuorum)."""

    def leader_id(self) -> int:
        """The known leader, -1 if none."""

    def voters(self) -> tuple[VoterView, ...]:
        """The latest voter set with endpoints (DescribeCluster's controllers)."""

    def features(self) -> Features:
        ...

    def now_ms(self) -> int:
        ...
