"""The requests whose TimeoutMs is their deadline in the controller's write queue, as
Kafka 4.3.1's ``ControllerApis`` sets it (``requestTimeoutMsToDeadlineNs``: arrival +
TimeoutMs, so 0 or less has always passed by the time the event would run):
CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders and
AlterPartitionReassignments. One still queued at its deadline is answered
REQUEST_TIMED_OUT on every part of the request with no message (``write_queue.py``;
Kafka's queue fails the event with a bare ``TimeoutException`` and the request's
``getErrorResponse`` answers it), validateOnly ones included. Once started, an
operation waits for its commit however long that takes.

A request for which Kafka's controller queues no event has no deadline: what
``ControllerApis`` answers itself (a name given twice, ``__cluster_metadata``, a
DeleteTopics entry with neither name nor id, items the authorizer refused) is taken
out first, and ``QuorumController`` answers an empty remainder at once. An
AlterPartitionReassignments with no topics is answered before the queue
(``controller_writes.submit``).

Each predicate below is one API's ``deadline`` in the table (``registry.py``), whose
``deadline(api_key, version, body)`` gives the TimeoutMs to the queue, or None.
"""
from __future__ import annotations

from collections import Counter

from wire.uuids import ZERO_UUID

METADATA_TOPIC = "__cluster_metadata"


def _once(names) -> set:
    """The names given exactly once (Kafka answers the repeated ones itself)."""
    return {n for n, k in Counter(names).items() if k == 1}


def create_topics_queued(version: int, body) -> bool:
    return bool(_once(t.name for t in body.topics) - {METADATA_TOPIC})


def delete_topics_queued(version: int, body) -> bool:
    """``ControllerApis.deleteTopics``: an entry with a name is a name, one with only a
    non-zero id an id; a lookup event is queued for the names or ids given once."""
    if version < 6:
        return bool(_once(body.topic_names))
    names = [t.name for t in body.topics if t.name is not None and t.topic_id == ZERO_UUID]
    ids = [t.topic_id for t in body.topics if t.name is None and t.topic_id != ZERO_UUID]
    return bool(_once(names) or _once(ids))


def create_partitions_queued(version: int, body) -> bool:
    return bool(_once(t.name for t in body.topics))


def elect_leaders_queued(version: int, body) -> bool:
    """Null is every partition (queued); an empty list is answered at once."""
    return body.topic_partitions is None or len(body.topic_partitions) > 0


def always_queued(version: int, body) -> bool:
    """AlterPartitionReassignments (one with no topics is answered before the queue)."""
    return True
