"""Topics and partitions in the metadata image (Kafka's ``TopicsImage`` and
``PartitionRegistration``), replayed from TopicRecord, PartitionRecord (v0-2),
PartitionChangeRecord (v0-2), RemoveTopicRecord and ClearElrRecord.

A PartitionChangeRecord merges as ``PartitionRegistration.merge``: each field that
is not "no change" (null lists, Leader -2, LeaderRecoveryState -1) replaces the
current one; the leader epoch goes up by one when Leader is set, the partition
epoch always. Snapshots write TopicRecord then each partition's full
PartitionRecord (by partition id), topics ordered by name.
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field

from wire.messages import PartitionRecord

log = logging.getLogger(__name__)

NO_LEADER = -1
NO_LEADER_CHANGE = -2


def partition_record_version(metadata_version: int) -> int:
    """``MetadataVersion.partitionRecordVersion`` (and partitionChangeRecordVersion)."""
    if metadata_version >= 23:  # 4.0-IV1, ELR-capable
        return 2
    return 1 if metadata_version >= 17 else 0  # 3.7-IV2, directory assignment


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: dict[int, PartitionRecord] = field(default_factory=dict)


class TopicsImage:
    def __init__(self) -> None:
        self.by_id: dict[uuid.UUID, Topic] = {}
        self.by_name: dict[str, Topic] = {}
        self._dirs: dict[uuid.UUID, uuid.UUID] = {}  # one object per directory id

    def __len__(self) -> int:
        return len(self.by_id)

    def __iter__(self):
        return iter(self.by_name[n] for n in sorted(self.by_name))

    def partitions(self):
        """Every ``(topic, partition)``."""
        for t in self:
            for pid in sorted(t.partitions):
                yield t, t.partitions[pid]

    # -- replay --------------------------------------------------------------------------
    def add_topic(self, name: str, topic_id: uuid.UUID) -> None:
        t = Topic(name, topic_id)
        self.by_id[topic_id] = t
        self.by_name[name] = t

    def remove_topic(self, topic_id: uuid.UUID) -> Topic | None:
        t = self.by_id.pop(topic_id, None)
        if t is None:
            log.warning("RemoveTopicRecord for unknown topic id %s", topic_id)
            return None
        self.by_name.pop(t.name, None)
        return t

    def add_partition(self, r: PartitionRecord) -> None:
        """Keeps ``r`` itself (replay hands over a freshly decoded record), with the
        topic's id object and shared directory ids: one copy each, not one per partition."""
        t = self.by_id.get(r.topic_id)
        if t is None:
            log.warning("PartitionRecord for unknown topic id %s", r.topic_id)
            return
        r.topic_id = t.topic_id
        if r.directories:
            r.directories = self._shared_dirs(r.directories)
        t.partitions[r.partition_id] = r

    def _shared_dirs(self, dirs: list) -> list:
        shared = self._dirs
        return [shared.setdefault(d, d) for d in dirs]

    def change_partition(self, r) -> None:
        t = self.by_id.get(r.topic_id)
        p = t.partitions.get(r.partition_id) if t is not None else None
        if p is None:
            log.warning("PartitionChangeRecord for unknown partition %s-%d", r.topic_id, r.partition_id)
            return
        t.partitions[r.partition_id] = merge(p, r)

    def clear_elr(self, topic_name: str) -> None:
        """ClearElrRecord: one topic, or every topic when the name is empty."""
        topics = list(self.by_id.values()) if not topic_name else (
            [self.by_name[topic_name]] if topic_name in self.by_name else [])
        for t in topics:
            for pid, p in list(t.partitions.items()):
                if p.eligible_leader_replicas or p.last_known_elr:
                    q = copy_partition(p)
                    q.eligible_leader_replicas = None
                    q.last_known_elr = None
                    q.partition_epoch += 1
                    t.partitions[pid] = q

    def snapshot_records(self, metadata_version: int):
        """``(record, version)``: TopicRecord then its PartitionRecords, per topic."""
        from wire.messages import TopicRecord
        version = partition_record_version(metadata_version)
        out = []
        for t in self:
            out.append((TopicRecord(name=t.name, topic_id=t.topic_id), 0))
            out += [(t.partitions[pid], version) for pid in sorted(t.partitions)]
        return out


def copy_partition(p: PartitionRecord) -> PartitionRecord:
    """A shallow copy (``copy.copy`` without its generic protocol: several times faster)."""
    cls = type(p)
    q = cls.__new__(cls)
    for name in cls.__slots__:
        setattr(q, name, getattr(p, name))
    return q


def merge(p: PartitionRecord, r) -> PartitionRecord:
    """The partition after a PartitionChangeRecord (``PartitionRegistration.merge``)."""
    q = copy_partition(p)
    if r.replicas is not None:
        q.replicas = list(r.replicas)
    if r.isr is not None:
        q.isr = list(r.isr)
    if r.removing_replicas is not None:
        q.removing_replicas = list(r.removing_replicas)
    if r.adding_replicas is not None:
        q.adding_replicas = list(r.adding_replicas)
    if r.leader != NO_LEADER_CHANGE:
        q.leader = r.leader
        q.leader_epoch = p.leader_epoch + 1
    if r.leader_recovery_state != -1:
        q.leader_recovery_state = r.leader_recovery_state
    if r.directories is not None:
        q.directories = list(r.directories)
    if r.eligible_leader_replicas is not None:
        q.eligible_leader_replicas = list(r.eligible_leader_replicas) or None
    if r.last_known_elr is not None:
        q.last_known_elr = list(r.last_known_elr) or None
    q.partition_epoch = p.partition_epoch + 1
    return q
