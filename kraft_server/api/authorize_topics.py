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

from wire.errors import ErrorCode

from . import registry as r
from .call import CallWrapper
from wire.uuids import ZERO_UUID

DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
# api key -> (response list, topic-name field, partitions field, partition index field)
_SHAPES = {r.FETCH: ("responses", "topic", "partitions", "partition_index"),
           r.METADATA: ("topics", "name", None, None),
           r.LIST_OFFSETS: ("topics", "name", "partitions", "partition_index"),
           r.OFFSET_FOR_LEADER_EPOCH: ("topics", "topic", "partitions", "partition"),
           r.DESCRIBE_TOPIC_PARTITIONS: ("topics", "name", None, None)}
# what a refused partition says besides its error (Kafka's error partitions)
_UNKNOWN = {"high_watermark": -1, "last_stable_offset": -1, "log_start_offset": -1, "records": b"",
            "timestamp": -1, "offset": -1, "leader_epoch": -1, "end_offset": -1}


def _refused_partition(p, index_field: str):
    q = type(p)()
    setattr(q, index_field, getattr(p, index_field))
    q.error_code = DENIED
    for field, value in _UNKNOWN.items():
        if hasattr(q, field):
            setattr(q, field, value)
    return q


def _refused_topic(t, api_key: int, name_field: str, parts_field, index_field):
    q = type(t)()
    setattr(q, name_field, getattr(t, name_field))
    if hasattr(t, "topic_id"):
        q.topic_id = t.topic_id if api_key == r.FETCH else ZERO_UUID
    if parts_field is None:  # a topic-level error (Metadata, DescribeTopicPartitions)
        q.error_code = DENIED
        q.partitions = []
    else:
        setattr(q, parts_field, [_refused_partition(p, index_field) for p in getattr(t, parts_field)])
    return q


def mask(api_key: int, request, answer, refused, topics):
    """``answer`` with the refused topics' entries replaced (a new object), or itself."""
    list_field, name_field, parts_field, index_field = _SHAPES[api_key]
    entries = getattr(answer, list_field, None) or []

    def name_of(t):
        name = getattr(t, name_field, None)
        if not name and getattr(t, "topic_id", None) is not None and topics is not None:
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
            kept.append(_refused_topic(t, api_key, name_field, parts_field, index_field))
    masked = type(answer).__new__(type(answer))
    for slot in type(answer).__slots__:
        setattr(masked, slot, getattr(answer, slot))
    setattr(masked, list_field, kept)
    return masked


class Masked(CallWrapper):
    """The call, its answer masked for the topics the caller may not see."""

    def __init__(self, call, refused, topics) -> None:
        super().__init__(call)
        self.refused, self.topics = refused, topics

    def respond(self, body, api_version: int | None = None, shared: bool = False) -> None:
        masked = mask(self.call.api_key, self.call.body, body, self.refused, self.topics)
        self.call.respond(masked, api_version, shared=shared and masked is body)
