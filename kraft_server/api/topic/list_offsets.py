"""ListOffsets (key 2), v1-11, for ``__cluster_metadata``-0 and its companions
(``catalog.py``; each partition object answers for its own records).

- -2 EARLIEST (and -4 EARLIEST_LOCAL: no tiered storage here): the log start offset.
- -1 LATEST: the high watermark, which is also the last stable offset (metadata
  transactions are ordinary records; no isolation level hides anything).
- -3 MAX_TIMESTAMP (v7+): the first record holding the largest timestamp.
- -5 LATEST_TIERED / -6 EARLIEST_PENDING_UPLOAD: offset -1, timestamp -1, epoch -1,
  as Kafka answers for a topic without remote storage.
- a timestamp >= 0: the first record whose timestamp is >= it, judged by batch max
  timestamps; none below the high watermark gives offset -1 and timestamp -1.

All look-ups stay below the high watermark. While the core does not know this
epoch's high watermark (a new leader), LATEST and timestamp look-ups get
OFFSET_NOT_AVAILABLE (LEADER_NOT_AVAILABLE before v5), as Kafka answers while a new
leader's high watermark lags: both are retriable. ``CurrentLeaderEpoch`` (v4+) is
checked as Fetch checks it. ``LeaderEpoch`` is answered from v4 only (the field is
not ignorable below).
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import ListOffsetsResponse
from wire.messages.list_offsets_response import ListOffsetsPartitionResponse, ListOffsetsTopicResponse

from .catalog import NO_TOPICS
from .partition import PARTITION

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED, EARLIEST_PENDING_UPLOAD = -1, -2, -3, -4, -5, -6


def _lookup(partition, ts: int, version: int):
    """(error, offset, timestamp, epoch)."""
    if ts in (EARLIEST, EARLIEST_LOCAL):
        start = partition.start_offset()
        return ErrorCode.NONE, start, -1, partition.epoch_of(start)
    if ts in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return ErrorCode.NONE, -1, -1, -1
    hwm = partition.high_watermark()
    if hwm is None or not partition.high_watermark_current():
        code = ErrorCode.OFFSET_NOT_AVAILABLE if version >= 5 else ErrorCode.LEADER_NOT_AVAILABLE
        return code, -1, -1, -1
    if ts == LATEST:
        return ErrorCode.NONE, hwm, -1, partition.epoch_of(max(hwm - 1, 0))
    if ts == MAX_TIMESTAMP:
        found = partition.reader.max_timestamp(hwm)
    else:
        found = partition.reader.offset_for_timestamp(ts, hwm)
    if found is None:
        return ErrorCode.NONE, -1, -1, -1
    offset, stamp, epoch = found
    return ErrorCode.NONE, offset, stamp, epoch


def _answer(partition, p, version: int) -> ListOffsetsPartitionResponse:
    index = p.partition_index
    if partition is None or index != PARTITION:
        return ListOffsetsPartitionResponse(partition_index=index,
                                            error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    code = partition.check_epoch(p.current_leader_epoch if version >= 4 else -1)
    if code:
        return ListOffsetsPartitionResponse(partition_index=index, error_code=code)
    code, offset, stamp, epoch = _lookup(partition, p.timestamp, version)
    return ListOffsetsPartitionResponse(partition_index=index, error_code=code, offset=offset,
                                        timestamp=stamp, leader_epoch=epoch if version >= 4 else -1)


def list_offsets_response(version: int, body, topics) -> ListOffsetsResponse:
    topics = topics or NO_TOPICS
    return ListOffsetsResponse(topics=[
        ListOffsetsTopicResponse(name=t.name, partitions=[_answer(topics.named(t.name), p, version)
                                                          for p in t.partitions])
        for t in body.topics])


def handle_list_offsets_request(call, topics) -> None:
    call.respond(list_offsets_response(call.api_version, call.body, topics))
