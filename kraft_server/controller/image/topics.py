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

from wire.messages import PartitionRecord
from .broker_index import BrokerIndex, mask_ids
from wire.records import decode_metadata_record, encode_metadata_record

log = logging.getLogger(__name__)

NO_LEADER = -1
NO_LEADER_CHANGE = -2


def partition_record_version(metadata_version: int) -> int:
    """``MetadataVersion.partitionRecordVersion`` (and partitionChangeRecordVersion)."""
    if metadata_version >= 23:  # 4.0-IV1, ELR-capable
        return 2
    return 1 if metadata_version >= 17 else 0  # 3.7-IV2, directory assignment


class Topic:
    """A topic and its partitions by id. Replayed PartitionRecords wait as their record
    values (``pending``) and are decoded, in order, the first time anything reads
    ``partitions``: replay and snapshot loading stay cheap, a topic nobody asks about
    costs its bytes only, and a snapshot writes those bytes back as they are."""
    __slots__ = ("name", "topic_id", "_partitions", "pending", "_owner", "values")

    def __init__(self, name: str, topic_id: uuid.UUID, partitions: dict | None = None, owner=None) -> None:
        self.name = name
        self.topic_id = topic_id
        self._partitions: dict[int, PartitionRecord] = {} if partitions is None else partitions
        self.pending: list | None = None
        self._owner = owner
        # partition id -> the value of its record as committed or last written to a
        # snapshot, while the record is unchanged: a snapshot writes it as it is
        # instead of encoding the record again (``snapshot_records``)
        self.values: dict[int, bytes] = {}

    @property
    def partitions(self) -> dict[int, PartitionRecord]:
        if self.pending is not None:
            self._decode_pending()
        return self._partitions

    def _decode_pending(self, count: int | None = None) -> None:
        """Decode the pending values, or the first ``count`` of them (in replay order:
        the rest stay pending)."""
        values = self.pending
        if count is not None and count < len(values):
            values, self.pending = values[:count], values[count:]
        else:
            self.pending = None
        for value in values:
            try:
                r = decode_metadata_record(value).message
            except (ValueError, TypeError, IndexError, OverflowError) as exc:  # DecodeError is a ValueError
                log.warning("skipped an undecodable PartitionRecord of topic %s: %s", self.name, exc)
                if self._owner is not None:
                    self._owner.bad_records += 1
                continue
            self._keep(r)
            self.values[r.partition_id] = value

    def remember(self, r: PartitionRecord, value: bytes) -> None:
        """``value`` is ``r`` encoded: kept while ``r`` is the partition's record."""
        if self._partitions.get(r.partition_id) is r:
            self.values[r.partition_id] = value

    def _keep(self, r: PartitionRecord) -> None:
        r.topic_id = self.topic_id
        owner = self._owner
        if owner is not None:
            owner.made += 1
            if r.directories:
                r.directories = owner.shared_dirs(r.directories)
            if owner._index is not None:
                owner._index.replace(self._partitions.get(r.partition_id), r)
        self._partitions[r.partition_id] = r
        self.values.pop(r.partition_id, None)

    def pending_values(self, version: int) -> list | None:
        """The undecoded PartitionRecord values, when they are the whole topic, written at
        ``version`` and in partition order with no repeats (what a snapshot writes for it);
        else None. A value goes out as it was committed, as the log holds it."""
        values = self.pending
        if values is None or self._partitions:
            return None
        last = -1
        for value in values:
            pid = int.from_bytes(value[3:7], "big", signed=True)
            if value[2] != version or pid <= last:
                return None
            last = pid
        return values

    def __repr__(self) -> str:
        return f"Topic({self.name!r}, {self.topic_id}, {len(self.partitions)} partitions)"


class TopicsImage:
    def __init__(self) -> None:
        self.by_id: dict[uuid.UUID, Topic] = {}
        self.by_name: dict[str, Topic] = {}
        self.by_raw_id: dict[bytes, Topic] = {}  # by the id's 16 bytes (snapshot loading)
        self._dirs: dict[uuid.UUID, uuid.UUID] = {}  # one object per directory id
        self.bad_records = 0  # pending partition values that did not decode
        self.made = 0  # partition records decoded or replaced so far (collector.Freezer)
        self._index: BrokerIndex | None = None  # started by the first question or ``warm``
        self._undecoded: set = set()  # topic ids with values not yet decoded (once started)

    def __len__(self) -> int:
        return len(self.by_id)

    def __iter__(self):
        return iter(self.by_name[n] for n in sorted(self.by_name))

    def partitions(self):
        """Every ``(topic, partition)``."""
        for t in self:
            for pid in sorted(t.partitions):
                yield t, t.partitions[pid]

    # -- partitions by broker ----------------------------------------------------------------
    def index(self) -> BrokerIndex:
        """The index by broker, every partition in it (decoding what is not yet)."""
        self._start_index()
        for tid in self._undecoded:
            t = self.by_id.get(tid)
            if t is not None:
                t.partitions  # decoding indexes them (``Topic._keep``)
        self._undecoded.clear()
        return self._index

    def indexed(self) -> bool:
        """Whether the index holds every partition (asking it then decodes nothing)."""
        return self._index is not None and not self._undecoded

    def warm(self, budget: int) -> bool:
        """Decode (and index) ``budget`` of the not yet decoded partitions, so that the first fence or shutdown does not decode them
        all on one turn; True while some are left."""
        self._start_index()
        while self._undecoded and budget > 0:
            tid = self._undecoded.pop()
            t = self.by_id.get(tid)
            if t is not None and t.pending is not None:
                budget -= len(t.pending)
                t._decode_pending(len(t.pending) + budget if budget < 0 else None)
                if t.pending is not None:
                    self._undecoded.add(tid)  # the rest on a later turn
        return bool(self._undecoded)

    def _start_index(self) -> None:
        """The index of what is decoded; the topics with values still to decode are
        ``_undecoded`` (``Topic._keep`` indexes each when it is decoded)."""
        if self._index is not None:
            return
        index = BrokerIndex()
        for t in self.by_id.values():
            for p in t._partitions.values():
                index.add(p)
            if t.pending is not None:
                self._undecoded.add(t.topic_id)
        self._index = index

    def partitions_of(self, key: int):
        """``(topic, partition)`` of every partition whose ISR or ELR holds broker ``key``
        (or, for NO_LEADER, every leaderless one), in the order of ``partitions()``."""
        by_topic = self.index().topics_of(key)
        topics = sorted((self.by_id[tid] for tid in by_topic), key=lambda t: t.name)
        for t in topics:
            parts = t.partitions
            for pid in mask_ids(by_topic[t.topic_id]):
                yield t, parts[pid]

    def leads_any(self, broker_id: int) -> bool:
        return self.index().leads_any(broker_id)

    # -- replay --------------------------------------------------------------------------
    def add_topic(self, name: str, topic_id: uuid.UUID) -> None:
        t = Topic(name, topic_id, owner=self)
        self.by_id[topic_id] = t
        self.by_raw_id[topic_id.bytes] = t
        self.by_name[name] = t

    def remove_topic(self, topic_id: uuid.UUID) -> Topic | None:
        t = self.by_id.pop(topic_id, None)
        if t is None:
            log.warning("RemoveTopicRecord for unknown topic id %s", topic_id)
            return None
        self.by_name.pop(t.name, None)
        self.by_raw_id.pop(topic_id.bytes, None)
        if self._index is not None:
            for p in t._partitions.values():
                self._index.remove(p)
            self._undecoded.discard(topic_id)
        return t

    def add_partition(self, r: PartitionRecord) -> None:
        """Keeps ``r`` itself (replay hands over a freshly decoded record), with the
        topic's id object and shared directory ids: one copy each, not one per partition."""
        t = self.by_id.get(r.topic_id)
        if t is None:
            log.warning("PartitionRecord for unknown topic id %s", r.topic_id)
            return
        if t.pending is not None:
            t._decode_pending()  # an earlier record of the same partition goes first
        t._keep(r)

    def add_partition_value(self, value: bytes, topic_id: bytes) -> None:
        """A PartitionRecord value (``topic_id``: its 16 bytes), decoded when the topic is
        first read."""
        t = self.by_raw_id.get(topic_id)
        if t is None:
            log.warning("PartitionRecord for unknown topic id %s", uuid.UUID(bytes=bytes(topic_id)))
            return
        if t.pending is None:
            t.pending = []
        t.pending.append(value)
        if self._index is not None:
            self._undecoded.add(t.topic_id)

    def shared_dirs(self, dirs) -> tuple:
        shared = self._dirs
        return tuple([shared.setdefault(d, d) for d in dirs])

    def change_partition(self, r) -> None:
        t = self.by_id.get(r.topic_id)
        p = t.partitions.get(r.partition_id) if t is not None else None
        if p is None:
            log.warning("PartitionChangeRecord for unknown partition %s-%d", r.topic_id, r.partition_id)
            return
        q = t.partitions[r.partition_id] = merge(p, r)
        t.values.pop(r.partition_id, None)
        if self._index is not None:
            self._index.replace(p, q)
        self.made += 1

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
                    t.values.pop(pid, None)
                    self.made += 1
                    if self._index is not None:
                        self._index.replace(p, q)

    def snapshot_records(self, metadata_version: int) -> list:
        """Per topic (by name), its TopicRecord as ``(record, 0)``, then its partitions
        (by id): the value of one still undecoded, or unchanged since it was decoded or
        last written (bytes), else its PartitionRecord itself, to be encoded at
        ``partition_record_version`` (``encode_partition``). No object per partition:
        a snapshot's list of 100,000 of them would be that many more for the cyclic
        collector to walk while the snapshot is written."""
        from wire.messages import TopicRecord
        version = partition_record_version(metadata_version)
        out = []
        for t in self:
            out.append((TopicRecord(name=t.name, topic_id=t.topic_id), 0))
            values = t.pending_values(version)
            if values is not None:
                out += values
                continue
            partitions, known = t.partitions, t.values
            for pid in sorted(partitions):
                value = known.get(pid)
                # frame 1, type 3, then the version
                out.append(value if value is not None and value[2] == version else partitions[pid])
        return out

    def encode_partition(self, r: PartitionRecord, version: int) -> bytes:
        """``r`` encoded, remembered by its topic while it is the partition's record."""
        value = encode_metadata_record(r, version)
        t = self.by_id.get(r.topic_id)
        if t is not None:
            t.remember(r, value)
        return value


def encode_item(item, topics: TopicsImage, version: int) -> bytes:
    """A value of ``MetadataImage.snapshot_items``: bytes as they are, a ``(record,
    version)`` pair encoded, a PartitionRecord encoded at ``version`` (and remembered)."""
    if type(item) is bytes:
        return item
    if type(item) is tuple:
        return encode_metadata_record(item[0], item[1])
    return topics.encode_partition(item, version)


def copy_partition(p: PartitionRecord) -> PartitionRecord:
    """A shallow copy (``copy.copy`` without its generic protocol: several times faster)."""
    cls = type(p)
    q = cls.__new__(cls)
    for name in cls.__slots__:
        setattr(q, name, getattr(p, name))
    return q


def merge(p: PartitionRecord, r) -> PartitionRecord:
    """The partition after a PartitionChangeRecord (``PartitionRegistration.merge``).
    Its id lists stay tuples, as a decoded PartitionRecord holds them."""
    q = copy_partition(p)
    if r.replicas is not None:
        q.replicas = tuple(r.replicas)
    if r.isr is not None:
        q.isr = tuple(r.isr)
    if r.removing_replicas is not None:
        q.removing_replicas = tuple(r.removing_replicas)
    if r.adding_replicas is not None:
        q.adding_replicas = tuple(r.adding_replicas)
    if r.leader != NO_LEADER_CHANGE:
        q.leader = r.leader
        q.leader_epoch = p.leader_epoch + 1
    if r.leader_recovery_state != -1:
        q.leader_recovery_state = r.leader_recovery_state
    if r.directories is not None:
        q.directories = tuple(r.directories)
    if r.eligible_leader_replicas is not None:
        q.eligible_leader_replicas = tuple(r.eligible_leader_replicas) or None
    if r.last_known_elr is not None:
        q.last_known_elr = tuple(r.last_known_elr) or None
    q.partition_epoch = p.partition_epoch + 1
    return q
