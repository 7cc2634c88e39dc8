"""What our controllers decided, read from a controller's ``__cluster_metadata`` log on
disk (below the high watermark): for every partition, its states in log order, each
with the leader, leader epoch, ISR and ELR after one PartitionRecord or
PartitionChangeRecord; and the brokers' fencing.

An election is **unclean** when the new leader was in neither the ISR nor the ELR of the
state before it (or the record marks the leader RECOVERING, as an unclean election does).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kraft_server.controller.image.topics import merge
from tests.support.kraft_nodes import committed_batches, read_batches
from wire.messages import (BrokerRegistrationChangeRecord, FenceBrokerRecord, PartitionChangeRecord, PartitionRecord,
                           RegisterBrokerRecord, RemoveTopicRecord, TopicRecord, UnfenceBrokerRecord)
from wire.records import batch_records, decode_metadata_record, walk

RECOVERING = 1  # LeaderRecoveryState


@dataclass(frozen=True)
class State:
    offset: int
    leader: int
    epoch: int
    isr: tuple[int, ...]
    elr: tuple[int, ...] = ()
    unclean: bool = False


@dataclass
class Decisions:
    """Partition histories by (topic name, partition), and which brokers are fenced at the end."""
    history: dict[tuple[str, int], list[State]] = field(default_factory=dict)
    fenced: dict[int, bool] = field(default_factory=dict)
    fencings: list[tuple[int, int]] = field(default_factory=list)  # (offset, broker)
    end: int = 0  # the offset after the last record read

    def latest(self, topic: str, partition: int) -> State | None:
        states = self.history.get((topic, partition))
        return states[-1] if states else None

    def partitions(self, topic: str) -> list[int]:
        return sorted(p for t, p in self.history if t == topic)

    def unclean_elections(self) -> dict[tuple[str, int], list[State]]:
        out: dict[tuple[str, int], list[State]] = {}
        for key, states in self.history.items():
            for s in states:
                if s.unclean:
                    out.setdefault(key, []).append(s)
        return out


    def since(self, offset: int) -> dict[str, int]:
        """What was decided from ``offset`` on: leader elections (clean and unclean), ISR
        changes and fencings."""
        out = {"elections": 0, "unclean": 0, "isr changes": 0, "fencings": 0}
        for states in self.history.values():
            for before, after in zip(states, states[1:]):
                if after.offset >= offset:
                    out["elections"] += after.leader != before.leader and after.leader >= 0
                    out["unclean"] += after.unclean
                    out["isr changes"] += after.isr != before.isr
        out["fencings"] = sum(1 for o, _ in self.fencings if o >= offset)
        return out


def _state(offset: int, p, before: State | None, marks_recovering: bool) -> State:
    elected = before is not None and p.leader >= 0 and p.leader != before.leader
    unclean = elected and (p.leader not in before.isr and p.leader not in before.elr or marks_recovering)
    return State(offset, p.leader, p.leader_epoch, tuple(p.isr), tuple(p.eligible_leader_replicas or ()), unclean)


def decisions(records) -> Decisions:
    """``records``: (offset, decoded record) in log order."""
    d = Decisions()
    names: dict = {}  # topic id -> name
    current: dict = {}  # (topic id, partition) -> PartitionRecord as replayed
    for offset, r in records:
        d.end = offset + 1
        if isinstance(r, TopicRecord):
            names[r.topic_id] = r.name
        elif isinstance(r, RemoveTopicRecord):
            names.pop(r.topic_id, None)
        elif isinstance(r, (PartitionRecord, PartitionChangeRecord)) and r.topic_id in names:
            key = (r.topic_id, r.partition_id)
            if isinstance(r, PartitionRecord):
                p, recovering = r, False
            elif key in current:
                p, recovering = merge(current[key], r), r.leader_recovery_state == RECOVERING
            else:
                continue
            current[key] = p
            states = d.history.setdefault((names[r.topic_id], r.partition_id), [])
            states.append(_state(offset, p, states[-1] if states else None, recovering))
        elif isinstance(r, RegisterBrokerRecord):
            d.fenced[r.broker_id] = r.fenced
        elif isinstance(r, FenceBrokerRecord):
            d.fenced[r.id] = True
            d.fencings.append((offset, r.id))
        elif isinstance(r, UnfenceBrokerRecord):
            d.fenced[r.id] = False
        elif isinstance(r, BrokerRegistrationChangeRecord) and r.fenced:
            d.fenced[r.broker_id] = r.fenced > 0  # BrokerRegistrationFencingChange: 1 fence, -1 unfence
            if r.fenced > 0:
                d.fencings.append((offset, r.broker_id))
    return d


def log_records(data: Path, high_watermark: int | None = None):
    """(offset, decoded record) of the data records of a node's log, below
    ``high_watermark`` if given."""
    batches = read_batches(data)
    if high_watermark is not None:
        batches = committed_batches(batches, high_watermark)
    for base in sorted(batches):
        raw = batches[base]
        for info in walk(raw):
            if info.is_control:
                continue
            for i, (_, value) in enumerate(batch_records(raw, info)):
                yield info.base_offset + i, decode_metadata_record(value).message


def read_decisions(data: Path, high_watermark: int | None = None) -> Decisions:
    return decisions(log_records(data, high_watermark))
