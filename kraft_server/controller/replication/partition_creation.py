"""CreatePartitions on the active controller, pure (Kafka's
``ReplicationControlManager.createPartitions``): grows topics to ``Count`` partitions,
one PartitionRecord v2 per new partition (placed like CreateTopics, at the topic's
replication factor, or as the manual assignments say), all in one atomic batch.

Errors per topic: a name given twice (INVALID_REQUEST), unknown
(UNKNOWN_TOPIC_OR_PARTITION), a count that is not an increase (INVALID_PARTITIONS),
assignments of the wrong number, size or with unknown/duplicate brokers
(INVALID_REPLICA_ASSIGNMENT), placement failures (INVALID_REPLICATION_FACTOR).
"""
from __future__ import annotations

import random
from collections import Counter

from wire.errors import ErrorCode
from wire.messages import PartitionRecord

from ..image.topics import partition_record_version
from .placement import PlacementError, place
from .topic_creation import _candidates, _directory


def _manual(image, assignments, rf: int, new: int):
    if len(assignments) != new:
        return None, (f"Attempted to add {new} additional partition(s), but only "
                      f"{len(assignments)} assignment(s) were specified.")
    out = []
    for a in assignments:
        replicas = list(a.broker_ids)
        if len(replicas) != rf:
            return None, (f"The manual partition assignment includes a partition with {len(replicas)} "
                          f"replica(s), but this is not consistent with previous partitions, which have "
                          f"{rf} replica(s).")
        if len(set(replicas)) != len(replicas):
            return None, f"The manual partition assignment includes the broker {replicas} more than once."
        for b in replicas:
            if image.brokers.get(b) is None:
                return None, (f"The manual partition assignment includes broker {b}, but no such broker "
                              f"is registered.")
        out.append(replicas)
    return out, None


def create_partitions(image, request, rng: random.Random | None = None):
    """``(results, records)``: results are ``(name, error, message)`` in request order."""
    rng = rng or random.Random()
    pv = partition_record_version(image.metadata_version() or 0)
    counts = Counter(t.name for t in request.topics)
    results, records = [], []
    for t in request.topics:
        if counts[t.name] > 1:
            results.append((t.name, ErrorCode.INVALID_REQUEST, "Duplicate topic name."))
            continue
        topic = image.topics.by_name.get(t.name)
        if topic is None:
            results.append((t.name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                            "This server does not host this topic-partition."))
            continue
        current = len(topic.partitions)
        if t.count < current:
            results.append((t.name, ErrorCode.INVALID_PARTITIONS,
                            f"The topic {t.name} currently has {current} partition(s); {t.count} would not "
                            f"be an increase."))
            continue
        if t.count == current:
            results.append((t.name, ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s)."))
            continue
        rf = len(topic.partitions[0].replicas) if 0 in topic.partitions else 1
        new = t.count - current
        if t.assignments is not None:
            assignment, why = _manual(image, t.assignments, rf, new)
            if why is not None:
                results.append((t.name, ErrorCode.INVALID_REPLICA_ASSIGNMENT, why))
                continue
        else:
            try:
                assignment = place(_candidates(image), new, rf, rng)
            except PlacementError as exc:
                results.append((t.name, ErrorCode.INVALID_REPLICATION_FACTOR,
                                f"Unable to replicate the partition {rf} time(s): {exc}"))
                continue
        made, failed = [], None
        for i, replicas in enumerate(assignment):
            isr = [b for b in replicas if image.brokers.is_active(b)]
            if not isr:
                failed = (ErrorCode.INVALID_REPLICA_ASSIGNMENT if t.assignments is not None
                          else ErrorCode.INVALID_REPLICATION_FACTOR,
                          f"Unable to start partition {current + i}: no active replica in {replicas}.")
                break
            made.append(PartitionRecord(
                partition_id=current + i, topic_id=topic.topic_id, replicas=list(replicas), isr=isr,
                leader=isr[0], leader_recovery_state=0, leader_epoch=0, partition_epoch=0,
                directories=[_directory(image.brokers.get(b)) for b in replicas]))
        if failed is not None:
            results.append((t.name, *failed))
            continue
        results.append((t.name, 0, None))
        if not request.validate_only:
            records += [(r, pv) for r in made]
    return results, records
