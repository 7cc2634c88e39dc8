"""The authorizer on a client listener, where ``__cluster_metadata`` and its companions
are served as topics: reading them needs what a Kafka broker checks (``KafkaApis``) —
READ on the TOPIC for a consumer's Fetch, DESCRIBE for Metadata, ListOffsets,
OffsetForLeaderEpoch and DescribeTopicPartitions (each API's ``client_topic_check`` in
``registry.py``). DescribeQuorum needs DESCRIBE on the
CLUSTER (a broker forwards it to the controller, which checks that) and a replica's
Fetch CLUSTER_ACTION, as on the controller listener.

The handlers run as usual; their answer is masked on the way out (``Masked``): a
refused topic's entries carry TOPIC_AUTHORIZATION_FAILED and no data, and a refused
topic is left out of an all-topics Metadata answer, as Kafka's broker does. An answer
with nothing refused goes out untouched (shared bodies stay shared).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable

from wire.errors import ErrorCode
from wire.messages import fetch_response as fr
from wire.messages import list_offsets_response as lo
from wire.messages import metadata_response as md
from wire.messages import offset_for_leader_epoch_response as ofle
from wire.messages import describe_topic_partitions_response as dtp
from wire.uuids import ZERO_UUID

from . import registry as r
from .call import CallWrapper

DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED


@dataclass(frozen=True)
class _Shape:
    """Where an answer lists its topics, and what a refused topic's entry says
    (Kafka's error entries: offsets and epochs unknown, no records)."""
    topics: Callable  # answer -> its list of topic entries
    name: Callable  # entry -> topic name ("" or None when addressed by id)
    refused: Callable  # entry -> the entry that replaces it
    field: str  # the answer's field holding the list


def _fetch_refused(t):
    return fr.FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id, partitions=[
        fr.PartitionData(partition_index=p.partition_index, error_code=DENIED, high_watermark=-1,
                         last_stable_offset=-1, log_start_offset=-1, records=b"")
        for p in t.partitions])


def _list_offsets_refused(t):
    return lo.ListOffsetsTopicResponse(name=t.name, partitions=[
        lo.ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=DENIED, timestamp=-1,
                                        offset=-1, leader_epoch=-1)
        for p in t.partitions])


def _epoch_refused(t):
    return ofle.OffsetForLeaderTopicResult(topic=t.topic, partitions=[
        ofle.EpochEndOffset(partition=p.partition, error_code=DENIED, leader_epoch=-1, end_offset=-1)
        for p in t.partitions])


_SHAPES = {
    r.FETCH: _Shape(lambda a: a.responses, lambda t: t.topic, _fetch_refused, "responses"),
    r.METADATA: _Shape(lambda a: a.topics, lambda t: t.name, lambda t: md.MetadataResponseTopic(
        name=t.name, topic_id=ZERO_UUID, error_code=DENIED, partitions=[]), "topics"),
    r.LIST_OFFSETS: _Shape(lambda a: a.topics, lambda t: t.name, _list_offsets_refused, "topics"),
    r.OFFSET_FOR_LEADER_EPOCH: _Shape(lambda a: a.topics, lambda t: t.topic, _epoch_refused, "topics"),
    r.DESCRIBE_TOPIC_PARTITIONS: _Shape(lambda a: a.topics, lambda t: t.name,
                                        lambda t: dtp.DescribeTopicPartitionsResponseTopic(
                                            name=t.name, topic_id=ZERO_UUID, error_code=DENIED, partitions=[]),
                                        "topics"),
}


_BY_ID = (r.FETCH, r.METADATA, r.DESCRIBE_TOPIC_PARTITIONS)  # entries that carry a topic id


def mask(api_key: int, request, answer, refused, topics):
    """``answer`` with the refused topics' entries replaced (a new object), or itself."""
    shape = _SHAPES[api_key]
    entries = shape.topics(answer) or []

    def name_of(t):
        name = shape.name(t)
        if not name and api_key in _BY_ID and topics is not None:  # addressed by topic id
            served = topics.with_id(t.topic_id)
            name = served.name if served is not None else None
        return name

    if not any(name_of(t) and refused(name_of(t)) for t in entries):
        return answer
    all_topics = api_key == r.METADATA and (request.topics is None or not request.topics)
    kept = []
    for t in entries:
        name = name_of(t)
        if not (name and refused(name)):
            kept.append(t)
        elif not all_topics:
            kept.append(shape.refused(t))
    masked = copy.copy(answer)
    setattr(masked, shape.field, kept)
    return masked


class Masked(CallWrapper):
    """The call, its answer masked for the topics the caller may not see."""

    def __init__(self, call, refused, topics) -> None:
        super().__init__(call)
        self.refused, self.topics = refused, topics

    def respond(self, body, api_version: int | None = None, shared: bool = False) -> None:
        masked = mask(self.call.api_key, self.call.body, body, self.refused, self.topics)
        self.call.respond(masked, api_version, shared=shared and masked is body)
