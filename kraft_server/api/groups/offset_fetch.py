"""OffsetFetch (key 9), v1-10.

v1-7 ask for one group at the top level, v8+ for a batch of groups; a null topic list
(v2+) means every partition the group committed. A partition with no committed offset
answers offset -1 with no error, as Kafka does; so does an unknown group. v10 addresses
topics by id (``topics.METADATA_TOPIC_ID``); an id we do not know gets UNKNOWN_TOPIC_ID.
There are no transactional offsets here, so ``RequireStable`` never waits.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import OffsetFetchResponse
from wire.messages import offset_fetch_response as r

from kraft_server.groups import topics

NO_OFFSET = -1


def _wanted(version: int, requested, committed) -> list[tuple[str | None, object, list[int]]]:
    """(topic name or None when unknown, request topic or None, partitions) to answer."""
    if requested is None:  # every committed partition
        by_topic: dict[str, list[int]] = {}
        for (topic, partition) in sorted(committed):
            by_topic.setdefault(topic, []).append(partition)
        return [(t, None, ps) for t, ps in by_topic.items()]
    out = []
    for t in requested:
        name = topics.topic_name(t.topic_id) if version >= 10 else t.name
        out.append((name, t, list(t.partition_indexes)))
    return out


def _partitions(cls, name, indexes, committed, version: int, missing_error: int):
    rows = []
    for i in indexes:
        c = committed.get((name, i)) if name is not None else None
        if c is None:
            rows.append(cls(partition_index=i, committed_offset=NO_OFFSET, committed_leader_epoch=-1,
                            metadata="", error_code=missing_error if name is None else 0))
        else:
            rows.append(cls(partition_index=i, committed_offset=c.offset,
                            committed_leader_epoch=c.leader_epoch if version >= 5 else -1,
                            metadata=c.metadata if c.metadata is not None else "", error_code=0))
    return rows


def _group_topics(version: int, group_id: str, requested, service):
    committed = service.store.get(group_id)
    wanted = _wanted(version, requested, committed)
    if version < 8:
        return [r.OffsetFetchResponseTopic(
            name=name, partitions=_partitions(r.OffsetFetchResponsePartition, name, ps, committed,
                                              version, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            for name, _, ps in wanted]
    return [r.OffsetFetchResponseTopics(
        name=(name or "") if version < 10 else "",
        topic_id=(req.topic_id if req is not None else topics.topic_id(name)) if version >= 10
        else topics.ZERO_UUID,
        partitions=_partitions(r.OffsetFetchResponsePartitions, name, ps, committed, version,
                               ErrorCode.UNKNOWN_TOPIC_ID))
        for name, req, ps in wanted]


def offset_fetch(service, version: int, body) -> OffsetFetchResponse:
    if version < 8:
        requested = body.topics if version >= 2 else (body.topics or [])
        return OffsetFetchResponse(topics=_group_topics(version, body.group_id, requested, service),
                                   error_code=ErrorCode.NONE)
    return OffsetFetchResponse(groups=[
        r.OffsetFetchResponseGroup(group_id=g.group_id,
                                   topics=_group_topics(version, g.group_id, g.topics, service))
        for g in body.groups])


def handle_offset_fetch_request(call, service) -> None:
    call.respond(offset_fetch(service, call.api_version, call.body))
