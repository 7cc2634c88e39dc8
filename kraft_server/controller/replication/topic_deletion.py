"""DeleteTopics on the active controller, pure (Kafka's ``ControllerApis.deleteTopics``
then ``ReplicationControlManager.deleteTopics``): topics by name (v1-5) or by name or
id (v6); one RemoveTopicRecord per deleted topic, all in one atomic batch (replay drops
the partitions and the topic's configs).

Errors per topic: a name or id given twice (INVALID_REQUEST), neither or both given
(INVALID_REQUEST), an unknown name (UNKNOWN_TOPIC_OR_PARTITION), an unknown id
(UNKNOWN_TOPIC_ID).
"""
from __future__ import annotations

from collections import Counter

from wire.errors import ErrorCode, error_message
from wire.messages import RemoveTopicRecord
from wire.uuids import ZERO_UUID



def delete_topics(image, request, version: int):
    """``(results, records)``: results are ``(name, topic_id, error, message)``."""
    if version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(n, ZERO_UUID) for n in request.topic_names]
    names = Counter(n for n, _ in wanted if n is not None)
    ids = Counter(i for _, i in wanted if i != ZERO_UUID)
    results, records, deleting = [], [], set()
    for name, topic_id in wanted:
        def fail(code, message=None):
            results.append((name, topic_id, code, message or error_message(code)))
        if (name is None) == (topic_id == ZERO_UUID):
            fail(ErrorCode.INVALID_REQUEST, "Neither topic name nor id were specified."
                 if name is None else "You may not specify both topic name and topic id.")
            continue
        if name is not None and names[name] > 1:
            fail(ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
            continue
        if topic_id != ZERO_UUID and ids[topic_id] > 1:
            fail(ErrorCode.INVALID_REQUEST, "Duplicate topic id.")
            continue
        topic = image.topics.by_name.get(name) if name is not None else image.topics.by_id.get(topic_id)
        if topic is None:
            fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if name is not None else ErrorCode.UNKNOWN_TOPIC_ID)
            continue
        if topic.topic_id in deleting:
            fail(ErrorCode.INVALID_REQUEST, "Duplicate topic id.")
            continue
        deleting.add(topic.topic_id)
        results.append((topic.name, topic.topic_id, 0, None))
        records.append((RemoveTopicRecord(topic_id=topic.topic_id), 0))
    return results, records
