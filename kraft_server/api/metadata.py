"""Metadata (key 3) on the client listener: just enough for Kafka's ``Admin``
bootstrapped with ``bootstrap.servers`` (e.g. ``kafka-metadata-quorum
--bootstrap-server``) to find a node to send DescribeQuorum and DescribeCluster to.

We present ourselves as the cluster's one broker on the listener the request came
in on, and as its controller (KRaft brokers also report a live broker's id as
``ControllerId``, since clients cannot reach the real controller). This node hosts
no topics: every named topic gets UNKNOWN_TOPIC_OR_PARTITION; "all topics" is none.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import MetadataResponse
from wire.messages.metadata_response import MetadataResponseBroker, MetadataResponseTopic


def metadata_response(version: int, body, *, node_id: int, host: str, port: int,
                      cluster_id: str) -> MetadataResponse:
    all_topics = body.topics is None or (version == 0 and not body.topics)
    topics = [] if all_topics else [
        MetadataResponseTopic(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=t.name or "",
                              topic_id=t.topic_id)
        for t in body.topics]
    return MetadataResponse(
        brokers=[MetadataResponseBroker(node_id=node_id, host=host, port=port, rack=None)],
        cluster_id=cluster_id if version >= 2 else None,
        controller_id=node_id if version >= 1 else -1,
        topics=topics,
    )


def handle_metadata_request(call, view, advertised: dict[str, tuple[str, int]]) -> None:
    host, port = advertised[call.listener]
    call.respond(metadata_response(call.api_version, call.body, node_id=view.node_id, host=host,
                                   port=port, cluster_id=view.cluster_id))
