"""Voter sets (KIP-853) and the quorum arithmetic, as pure values and functions.

``VoterSet`` is immutable: ``add``, ``remove`` and ``update`` return a new set (or
None when the change is not allowed), like Kafka's ``VoterSet``. A voter is keyed
by ``VoterKey`` (node id + directory id); under kraft.version 0 (static
``controller.quorum.voters``) directory ids are unknown, which we spell as the zero
UUID, as the wire does.

The arithmetic (``majority``, ``high_watermark_of``, ``election_result``,
``has_overlapping_majority``) takes plain numbers and sets so it can be table-tested
without a node.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from enum import Enum

from kraft_server.raft.boundary import Endpoint
from wire.uuids import ZERO_UUID



@dataclass(frozen=True, slots=True)
class VoterKey:
    """Kafka's ``ReplicaKey``: a node id and, under kraft.version 1, a directory id."""

    node_id: int
    directory_id: uuid.UUID = ZERO_UUID

    def matches(self, other: "VoterKey") -> bool:
        """Same node, and the same directory when both sides know it."""
        if self.node_id != other.node_id:
            return False
        if self.directory_id == ZERO_UUID or other.directory_id == ZERO_UUID:
            return True
        return self.directory_id == other.directory_id


@dataclass(frozen=True, slots=True)
class VoterNode:
    key: VoterKey
    endpoints: tuple[Endpoint, ...]
    kraft_version_min: int = 0
    kraft_version_max: int = 0

    def endpoint(self, listener: str) -> Endpoint | None:
        for ep in self.endpoints:
            if ep.name == listener:
                return ep
        return None


@dataclass(frozen=True)
class VoterSet:
    """An immutable map node id -> VoterNode (one directory per id, as in Kafka)."""

    nodes: tuple[VoterNode, ...]

    def __post_init__(self):
        ids = [n.key.node_id for n in self.nodes]
        if len(ids) != len(set(ids)):
            raise ValueError(f"duplicate voter ids in {ids}")
        object.__setattr__(self, "nodes", tuple(sorted(self.nodes, key=lambda n: n.key.node_id)))
        object.__setattr__(self, "_by_id", {n.key.node_id: n for n in self.nodes})

    # -- views ---------------------------------------------------------------------
    def ids(self) -> list[int]:
        return [n.key.node_id for n in self.nodes]

    def keys(self) -> list[VoterKey]:
        return [n.key for n in self.nodes]

    def __len__(self) -> int:
        return len(self.nodes)

    def node(self, node_id: int) -> VoterNode | None:
        return self._by_id.get(node_id)

    def is_voter(self, key: VoterKey) -> bool:
        node = self._by_id.get(key.node_id)
        return node is not None and node.key.matches(key)

    def is_only_voter(self, key: VoterKey) -> bool:
        return len(self.nodes) == 1 and self.is_voter(key)

    def endpoint(self, node_id: int, listener: str) -> Endpoint | None:
        node = self._by_id.get(node_id)
        return node.endpoint(listener) if node else None

    # -- changes (KIP-853): each returns a new set or None ----------------------------
    def add(self, node: VoterNode) -> "VoterSet | None":
        if node.key.node_id in self._by_id:
            return None
        return VoterSet(self.nodes + (node,))

    def remove(self, key: VoterKey) -> "VoterSet | None":
        if not self.is_voter(key) or len(self.nodes) == 1:
            return None
        return VoterSet(tuple(n for n in self.nodes if n.key.node_id != key.node_id))

    def update(self, node: VoterNode) -> "VoterSet | None":
        old = self._by_id.get(node.key.node_id)
        if old is None or old.key != node.key:
            return None
        return VoterSet(tuple(node if n.key.node_id == node.key.node_id else n for n in self.nodes))

    def update_ignoring_directory(self, node: VoterNode) -> "VoterSet | None":
        """Replace the voter with ``node``'s id whatever its directory (kraft.version 0:
        the static set has none; ``VoterSet.updateVoterIgnoringDirectoryId``)."""
        if node.key.node_id not in self._by_id:
            return None
        return VoterSet(tuple(node if n.key.node_id == node.key.node_id else n for n in self.nodes))

    # -- conversions -----------------------------------------------------------------
    @classmethod
    def from_static(cls, voters, listener: str) -> "VoterSet":
        """``controller.quorum.voters``: kraft.version 0, directory ids unknown."""
        return cls(tuple(VoterNode(VoterKey(v.node_id), (Endpoint(listener, v.host, v.port),), 0, 0)
                         for v in voters))

    @classmethod
    def from_voters_record(cls, record) -> "VoterSet":
        return cls(tuple(
            VoterNode(VoterKey(v.voter_id, v.voter_directory_id),
                      tuple(Endpoint(e.name, e.host, e.port) for e in v.endpoints),
                      v.kraft_version_feature.min_supported_version,
                      v.kraft_version_feature.max_supported_version)
            for v in record.voters))

    def to_voters_record(self):
        from wire.messages import voters_record as vr
        return vr.VotersRecord(version=0, voters=[
            vr.Voter(voter_id=n.key.node_id, voter_directory_id=n.key.directory_id,
                     endpoints=[vr.Endpoint(name=e.name, host=e.host, port=e.port) for e in n.endpoints],
                     kraft_version_feature=vr.KRaftVersionFeature(
                         min_supported_version=n.kraft_version_min,
                         max_supported_version=n.kraft_version_max))
            for n in self.nodes])


# -- arithmetic ------------------------------------------------------------------------
def majority(voter_count: int) -> int:
    """Votes (or acks) needed out of ``voter_count``."""
    return voter_count // 2 + 1


def high_watermark_of(end_offsets: list[int]) -> int:
    """The offset a majority of voters has reached: the entry at index ``n // 2`` of the
    end offsets sorted descending (``LeaderState.maybeUpdateHighWatermark``). Voters that
    never fetched count as 0 (Kafka: empty end offsets sort last)."""
    if not end_offsets:
        raise ValueError("no voters")
    ordered = sorted(end_offsets, reverse=True)
    return ordered[len(ordered) // 2]


def next_high_watermark(current: int | None, end_offsets: list[int], epoch_start_offset: int,
                        log_end_offset: int) -> int | None:
    """The leader's new HWM, or None if it must not move. It only moves forward, and
    only once it passes the epoch start offset (a record of this epoch is committed:
    Raft's rule that a leader commits only its own epoch's entries directly)."""
    candidate = min(high_watermark_of(end_offsets), log_end_offset)
    if candidate <= epoch_start_offset:
        return None
    if current is not None and candidate <= current:
        return None
    return candidate


class ElectionResult(Enum):
    PENDING = "pending"
    WON = "won"
    LOST = "lost"


def election_result(voter_ids: set[int], granted: set[int], rejected: set[int]) -> ElectionResult:
    """WON with a majority of grants, LOST once a majority can no longer be reached."""
    need = majority(len(voter_ids))
    if len(granted & voter_ids) >= need:
        return ElectionResult.WON
    if len(voter_ids) - len(rejected & voter_ids) < need:
        return ElectionResult.LOST
    return ElectionResult.PENDING


def has_overlapping_majority(a: VoterSet, b: VoterSet) -> bool:
    """True when any majority of ``a`` and any majority of ``b`` share a voter: the
    condition under which going from ``a`` to ``b`` in one step is safe (KIP-853 allows
    one voter added or removed at a time)."""
    ids_a, ids_b = set(a.ids()), set(b.ids())
    # Two majorities overlap unless both can be chosen disjoint: that needs
    # majority(a) + majority(b) <= |a ∪ b| counting shared voters once.
    return majority(len(ids_a)) + majority(len(ids_b)) > len(ids_a | ids_b)
