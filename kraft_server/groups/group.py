"""One classic consumer group: its members and its state (plain data, no rules).

The states and their meaning are Kafka's (``ClassicGroupState``):

    Empty                no members (offsets may still be committed)
    PreparingRebalance   members are (re)joining; JoinGroup answers are parked
    CompletingRebalance  the join is done; waiting for the leader's SyncGroup assignment
    Stable               every member has its assignment; heartbeats keep it alive
    Dead                 (only ever reported for a group we do not know)

The transitions live in ``coordinator.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Callable


class GroupState(Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]  # (name, metadata) in the member's preference order
    assignment: bytes = b""
    session_deadline: int = 0
    join_reply: Callable | None = None  # a parked JoinGroup answer
    sync_reply: Callable | None = None  # a parked SyncGroup answer

    def metadata(self, protocol: str) -> bytes:
        for name, data in self.protocols:
            if name == protocol:
                return data
        return b""

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]


@dataclass
class Group:
    group_id: str
    state: GroupState = GroupState.EMPTY
    state_since: int = 0  # when it last became Empty (offset retention counts from there)
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)  # in join order
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    pending_members: dict[str, int] = field(default_factory=dict)  # MEMBER_ID_REQUIRED: id -> deadline
    join_deadline: int | None = None  # when PreparingRebalance gives up waiting
    initial_join_end: int | None = None  # the cap of a delayed first join (Kafka's InitialDelayedJoin)
    pending_sync: set[str] = field(default_factory=set)  # joined but no SyncGroup yet
    sync_deadline: int | None = None

    def is_empty(self) -> bool:
        return not self.members

    def awaiting_join(self) -> int:
        return sum(1 for m in self.members.values() if m.join_reply is not None)

    def all_joined(self) -> bool:
        return self.awaiting_join() == len(self.members) and not self.pending_members

    def max_rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def supports(self, protocol_type: str, names: list[str]) -> bool:
        """Kafka's ``supportsProtocols``: an empty group takes any non-empty offer; otherwise
        the type must match and one protocol must be one every member offers."""
        if not protocol_type or not names:
            return False
        if self.is_empty():
            return True
        if protocol_type != self.protocol_type:
            return False
        common = set(names)
        for m in self.members.values():
            common &= set(m.protocol_names())
        return bool(common)

    def select_protocol(self) -> str:
        """Each member votes for its first choice among the protocols all members offer; the
        most votes win (ties go to the earliest-joined member's preference)."""
        members = list(self.members.values())
        common = set(members[0].protocol_names())
        for m in members[1:]:
            common &= set(m.protocol_names())
        votes: dict[str, int] = {}
        for m in members:
            choice = next(n for n in m.protocol_names() if n in common)
            votes[choice] = votes.get(choice, 0) + 1
        order = [n for n in members[0].protocol_names() if n in common]
        return max(order, key=lambda n: (votes.get(n, 0), -order.index(n)))
