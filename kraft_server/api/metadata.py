"""Metadata (key 3) on the client listener.

We present ourselves as the cluster's one broker on the listener the request came
in on, and as its controller (KRaft brokers also report a live broker's id as
``ControllerId``, since clients cannot reach the real controller). The one topic is
``__cluster_metadata`` (``api/topic/metadata_topic.py``), listed for "all topics"
and when asked by name or, from v10, by topic id; any other topic gets
UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID when asked by id).
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import MetadataResponse
from wire.messages.metadata_response import MetadataResponseBroker, MetadataResponseTopic

from .topic.metadata_topic import metadata_topic
from .topic.partition import TOPIC, TOPIC_ID
from .views import ZERO_UUID


def _topic(requested, partition, version: int) -> MetadataResponseTopic:
    name, topic_id = requested.name, requested.topic_id
    if partition is not None and (name == TOPIC or (name is None and topic_id == TOPIC_ID)):
        return metadata_topic(partition)
    if name is None and topic_id != ZERO_UUID:
        return MetadataResponseTopic(error_code=ErrorCode.UNKNOWN_TOPIC_ID,
                                     name=None if version >= 12 else "", topic_id=topic_id)
    return MetadataResponseTopic(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=name or "",
                                 topic_id=topic_id)


def metadata_response(version: int, body, *, node_id: int, host: str, port: int,
                      cluster_id: str, partition=None) -> MetadataResponse:
    all_topics = body.topics is None or (version == 0 and not body.topics)
    if all_topics:
        topics = [metadata_topic(partition)] if partition is not None else []
    else:
        topics = [_topic(t, partition, version) for t in body.topics]
    return MetadataResponse(
        brokers=[MetadataResponseBroker(node_id=node_id, host=host, port=port, rack=None)],
        cluster_id=cluster_id if version >= 2 else None,
        controller_id=node_id if version >= 1 else -1,
        topics=topics,
    )


def handle_metadata_request(call, view, advertised: dict[str, tuple[str, int]], partition=None) -> None:
    host, port = advertised[call.listener]
    call.respond(metadata_response(call.api_version, call.body, node_id=view.node_id, host=host,
                                   port=port, cluster_id=view.cluster_id, partition=partition))
