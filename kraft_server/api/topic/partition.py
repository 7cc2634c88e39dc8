"""``__cluster_metadata``-0 as the consumer-facing handlers see it: this node's log up
to the high watermark it knows, the Raft epoch as the partition leader epoch, and the
epoch checks every partition API applies.

Every node presents itself as the partition's leader (and only replica) on the
listener a client came in on: a consumer reads from whichever node it asked, each
node serving committed data only. The leader epoch reported is the Raft epoch, and
the leader-epoch cache answers OffsetForLeaderEpoch, so clients that validate
positions after an epoch change (KIP-320) do so against real epochs.
"""
from __future__ import annotations

import uuid

from wire.errors import ErrorCode

from kraft_server.log.log_reader import LogReader

TOPIC = "__cluster_metadata"
PARTITION = 0
# Kafka reserves Uuid.METADATA_TOPIC_ID (= Uuid.ONE_UUID) for this topic.
TOPIC_ID = uuid.UUID(int=1)


class MetadataPartition:
    """Reads the core (``RaftNode``) and its log; never writes either."""

    name = TOPIC
    topic_id = TOPIC_ID

    def __init__(self, core, raft_log, node_id: int):
        self.core = core
        self.log = raft_log
        self.node_id = node_id
        self.reader = LogReader(raft_log)
        self._hwm: int | None = None  # the largest high watermark seen (monotonic)

    @property
    def epoch(self) -> int:
        return self.core.epoch

    def high_watermark(self) -> int | None:
        """What consumers may read below: the core's high watermark, capped by what this
        node has flushed, never moving back while the process runs (a new leader's
        high watermark is unknown until its epoch commits: the last one known is kept).
        None until one is known."""
        current = self.core.high_watermark
        if current is not None:
            current = min(current, self.log.flushed_offset())
            if self._hwm is None or current > self._hwm:
                self._hwm = current
        if self._hwm is not None and self._hwm < self.log.start_offset():
            self._hwm = self.log.start_offset()  # a snapshot was installed past it
        return self._hwm

    def is_leader(self) -> bool:
        return self.core.leader_id == self.node_id

    def high_watermark_current(self) -> bool:
        """False while the core does not know this epoch's high watermark (a new
        leader): ListOffsets answers OFFSET_NOT_AVAILABLE then, as Kafka does."""
        return self.core.high_watermark is not None

    def start_offset(self) -> int:
        return self.log.start_offset()

    def end_offset(self) -> int:
        return self.log.end_offset()

    def check_epoch(self, current_leader_epoch: int) -> int:
        """Kafka's rule for a client's current leader epoch: -1 is not checked, an
        older one is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH."""
        if current_leader_epoch < 0:
            return ErrorCode.NONE
        epoch = self.epoch
        if current_leader_epoch < epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if current_leader_epoch > epoch:
            return ErrorCode.UNKNOWN_LEADER_EPOCH
        return ErrorCode.NONE

    def epoch_of(self, offset: int) -> int:
        """The leader epoch of the batch holding ``offset`` (the epoch cache), -1 if unknown."""
        found = -1
        for epoch, start in self.log.epoch_entries():
            if start > offset:
                break
            found = epoch
        return found

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(epoch, end offset) as Kafka's ``LeaderEpochFileCache.endOffsetFor`` answers:
        an epoch newer than the latest the log holds is unknown (-1, -1)."""
        entries = self.log.epoch_entries()
        if epoch < 0 or not entries or epoch > entries[-1][0]:
            return -1, -1
        found = self.log.end_offset_for_epoch(epoch)
        return found.epoch, found.offset

    def is_topic(self, name) -> bool:
        return name == self.name

    def is_topic_id(self, topic_id) -> bool:
        return topic_id == self.topic_id
