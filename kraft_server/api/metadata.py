"""Metadata (key 3) on the client listener.

We present ourselves as the cluster's one broker on the listener the request came
in on, and as its controller (KRaft brokers also report a live broker's id as
``ControllerId``, since clients cannot reach the real controller). The topics are
``__cluster_metadata`` and its companions (``api/topic/catalog.py``), listed for "all
topics" and when asked by name or, from v10, by topic id; any other topic gets
UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID when asked by id).
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import MetadataResponse
from wire.messages.metadata_response import MetadataResponseBroker, MetadataResponseTopic

from .topic.catalog import NO_TOPICS
from .topic.metadata_topic import metadata_topic
from wire.uuids import ZERO_UUID


def _topic(requested, topics, version: int) -> MetadataResponseTopic:
    name, topic_id = requested.name, requested.topic_id
    partition = topics.named(name) if name is not None else topics.with_id(topic_id)
    if partition is not None:
        return metadata_topic(partition)
    if name is None and topic_id != ZERO_UUID:
        return MetadataResponseTopic(error_code=ErrorCode.UNKNOWN_TOPIC_ID,
                                     name=None if version >= 12 else "", topic_id=topic_id)
    return MetadataResponseTopic(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=name or "",
                                 topic_id=topic_id)


def metadata_response(version: int, body, *, node_id: int, host: str, port: int,
                      cluster_id: str, topics=None) -> MetadataResponse:
    served = topics or NO_TOPICS
    all_topics = body.topics is None or (version == 0 and not body.topics)
    if all_topics:
        topics = [metadata_topic(partition) for partition in served]
    else:
        topics = [_topic(t, served, version) for t in body.topics]
    return MetadataResponse(
        brokers=[MetadataResponseBroker(node_id=node_id, host=host, port=port, rack=None)],
        cluster_id=cluster_id if version >= 2 else None,
        controller_id=node_id if version >= 1 else -1,
        topics=topics,
    )


def handle_metadata_request(call, view, advertised: dict[str, tuple[str, int]], topics=None) -> None:
    host, port = advertised[call.listener]
    call.respond(metadata_response(call.api_version, call.body, node_id=view.node_id, host=host,
                                   port=port, cluster_id=view.cluster_id, topics=topics))
