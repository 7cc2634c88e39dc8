"""The topics a client listener serves, by name and by topic id: ``__cluster_metadata``
and its two read-only companions, ``__cluster_metadata_control`` (its control records
as data, ``control_topic.py``) and ``__cluster_metadata_snapshot`` (the snapshot at
its log start, ``snapshot_topic.py``). Each has one partition, 0."""
from __future__ import annotations

from .control_topic import ControlPartition
from .partition import MetadataPartition
from .snapshot_topic import SnapshotPartition


class Topics:
    def __init__(self, partitions=()):
        self.partitions = list(partitions)
        self._by_name = {p.name: p for p in self.partitions}
        self._by_id = {p.topic_id: p for p in self.partitions}

    @classmethod
    def of_log(cls, core, raft_log, node_id: int) -> "Topics":
        main = MetadataPartition(core, raft_log, node_id)
        return cls([main, ControlPartition(main), SnapshotPartition(main)])

    @property
    def main(self) -> MetadataPartition | None:
        return self.partitions[0] if self.partitions else None

    def __iter__(self):
        return iter(self.partitions)

    def __bool__(self) -> bool:
        return bool(self.partitions)

    def named(self, name):
        return self._by_name.get(name)

    def with_id(self, topic_id):
        return self._by_id.get(topic_id)


NO_TOPICS = Topics()
