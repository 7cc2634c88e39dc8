"""OffsetForLeaderEpoch (key 23), v2-4, for ``__cluster_metadata``-0 (and its
companions, ``catalog.py``: the control topic shares its epochs, the snapshot topic
answers from the snapshot's epoch), from the leader-epoch cache: for the requested epoch, the largest epoch <= it that the log
knows and the end offset of that epoch (the start of the next one, or the log end
offset for the latest). A consumer that saw the epoch change (KIP-320) uses it to
check its position was not truncated away; kafka-python stops fetching for good
after an epoch change unless it gets this answer.

``CurrentLeaderEpoch`` is checked as Fetch checks it. As Kafka's
``LeaderEpochFileCache.endOffsetFor``: an epoch older than any the log knows gives
itself and the start of the first known epoch, an epoch newer than the latest
UNDEFINED_EPOCH (-1) and UNDEFINED_EPOCH_OFFSET (-1).
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import OffsetForLeaderEpochResponse
from wire.messages.offset_for_leader_epoch_response import (
    EpochEndOffset, OffsetForLeaderTopicResult)

from .catalog import NO_TOPICS
from .partition import PARTITION


def _answer(partition, p) -> EpochEndOffset:
    if partition is None or p.partition != PARTITION:
        return EpochEndOffset(partition=p.partition, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    code = partition.check_epoch(p.current_leader_epoch)
    if code:
        return EpochEndOffset(partition=p.partition, error_code=code)
    epoch, end_offset = partition.end_offset_for_epoch(p.leader_epoch)
    return EpochEndOffset(partition=p.partition, error_code=ErrorCode.NONE,
                          leader_epoch=epoch, end_offset=end_offset)


def offset_for_leader_epoch_response(body, topics) -> OffsetForLeaderEpochResponse:
    topics = topics or NO_TOPICS
    return OffsetForLeaderEpochResponse(topics=[
        OffsetForLeaderTopicResult(topic=t.topic, partitions=[_answer(topics.named(t.topic), p)
                                                              for p in t.partitions])
        for t in body.topics])


def handle_offset_for_leader_epoch_request(call, topics) -> None:
    call.respond(offset_for_leader_epoch_response(call.body, topics))
