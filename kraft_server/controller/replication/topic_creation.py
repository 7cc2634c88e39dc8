"""CreateTopics on the active controller, pure (Kafka's
``ReplicationControlManager.createTopics``): validation, placement and the records of
one atomic batch: per created topic a TopicRecord, its ConfigRecords (TOPIC), with ELR
on a ClearElrRecord {TopicName} for a ``min.insync.replicas`` among them (as Kafka
4.3.1's ``ConfigurationControlManager`` follows any such config record), then a
PartitionRecord v2 per partition (ISR = the active replicas, leader = ISR[0], epochs
0, Directories = each broker's only log dir, UNASSIGNED with several, MIGRATING with
none). Each topic succeeds or fails on its own; ``validateOnly`` writes nothing.

Checks, in Kafka's order: duplicate names in the request (INVALID_REQUEST), the
name (INVALID_TOPIC_EXCEPTION; ``__cluster_metadata`` is INVALID_REQUEST), an
existing topic (TOPIC_ALREADY_EXISTS), a name colliding on ``.``/``_``
(INVALID_TOPIC_EXCEPTION), null config values (INVALID_CONFIG), the partition count
and replication factor (-1: the controller's ``num.partitions`` /
``default.replication.factor``, both 1), manual assignments, more than 10,000
partitions (POLICY_VIOLATION), placement (INVALID_REPLICATION_FACTOR).
"""
from __future__ import annotations

import random
import re
import uuid
from dataclasses import dataclass, field

from wire.errors import ErrorCode
from wire.messages import ClearElrRecord, ConfigRecord, PartitionRecord, TopicRecord

from wire.uuids import uuid_to_str

from ..image.topics import partition_record_version
from .partition_change import elr_enabled
from .placement import Candidate, PlacementError, place
from ..configs.control import new_topic_error
from wire.uuids import ZERO_UUID, MIGRATING_DIR, UNASSIGNED_DIR

MAX_PARTITIONS_PER_REQUEST = 10_000
MAX_NAME_LENGTH = 249
LEGAL_NAME = re.compile(r"^[a-zA-Z0-9._-]+$")
MIN_ISR = "min.insync.replicas"
TOPIC_RESOURCE = 2


@dataclass
class TopicResult:
    name: str
    error: int = 0
    message: str | None = None
    topic_id: uuid.UUID = ZERO_UUID
    num_partitions: int = -1
    replication_factor: int = -1
    configs: list = field(default_factory=list)  # (name, value) as set


def name_error(name: str) -> str | None:
    """``Topic.validate``: what is wrong with a topic name, or None."""
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return "Topic name cannot be \".\" or \"..\""
    if len(name) > MAX_NAME_LENGTH:
        return (f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, "
                f"topic name: {name}")
    if not LEGAL_NAME.match(name):
        return (f"Topic name \"{name}\" is illegal, it contains a character other than ASCII "
                f"alphanumerics, '.', '_' and '-'")
    return None


def _unified(name: str) -> str:
    """Names equal after '.' -> '_' collide in metric names (``Topic.unifyCollisionChars``)."""
    return name.replace(".", "_")


def _directory(registration) -> uuid.UUID:
    dirs = registration.record.log_dirs if registration is not None else []
    if len(dirs) == 1:
        return dirs[0]
    return UNASSIGNED_DIR if dirs else MIGRATING_DIR


def _candidates(image) -> list[Candidate]:
    return [Candidate(b.broker_id, b.rack, b.fenced) for b in image.brokers
            if not b.in_controlled_shutdown
            and not (b.record.cordoned_log_dirs and set(b.record.log_dirs) <= set(b.record.cordoned_log_dirs))]


def _manual(image, topic) -> tuple[list[list[int]] | None, tuple[int, str] | None]:
    if topic.num_partitions != -1 or topic.replication_factor != -1:
        return None, (ErrorCode.INVALID_REQUEST, "A manual partition assignment was specified, but "
                      "numPartitions or replicationFactor was not set to -1.")
    by_index = {a.partition_index: list(a.broker_ids) for a in topic.assignments}
    out = []
    for i in range(len(by_index)):
        if i not in by_index:
            return None, (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                          "partitions should be a consecutive 0-based integer sequence")
        replicas = by_index[i]
        if not replicas:
            return None, (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                          f"The manual partition assignment includes an empty replica list.")
        if len(set(replicas)) != len(replicas):
            return None, (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                          f"The manual partition assignment includes the broker {replicas} more than once.")
        for b in replicas:
            if image.brokers.get(b) is None:
                return None, (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                              f"The manual partition assignment includes broker {b}, but no such "
                              f"broker is registered.")
        if out and len(replicas) != len(out[0]):
            return None, (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                          "The manual partition assignment includes a partition with "
                          f"{len(replicas)} replica(s), but this is not consistent with previous "
                          f"partitions, which have {len(out[0])} replica(s).")
        out.append(replicas)
    return out, None


def new_topic_id(rng: random.Random, image) -> uuid.UUID:
    """A random id as ``Uuid.randomUuid`` draws them (never zero or the metadata
    topic's 0:1, never printing with a leading '-'), unused in the image."""
    while True:
        u = uuid.UUID(int=rng.getrandbits(128))
        if u.int > 1 and uuid_to_str(u)[0] != "-" and u not in image.topics.by_id:
            return u


def create_topics(image, request, *, default_partitions: int = 1, default_replication: int = 1,
                  rng: random.Random | None = None, validate_only: bool = False):
    """``(results, records)``: one TopicResult per requested topic, in request order,
    and the ``(record, version)`` pairs of every created topic."""
    rng = rng or random.Random()
    mv = image.metadata_version() or 0
    pv = partition_record_version(mv)
    counts: dict[str, int] = {}
    for t in request.topics:
        counts[t.name] = counts.get(t.name, 0) + 1
    results, records = [], []
    names_now = set(image.topics.by_name)
    unified_now = {_unified(n): n for n in names_now}
    total_partitions = 0
    for t in request.topics:
        res = TopicResult(t.name)
        results.append(res)

        def fail(code, message):
            res.error, res.message = code, message

        if counts[t.name] > 1:
            fail(ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
            continue
        if t.name == "__cluster_metadata":
            fail(ErrorCode.INVALID_REQUEST, "Creation of internal topic __cluster_metadata is prohibited.")
            continue
        bad = name_error(t.name)
        if bad is not None:
            fail(ErrorCode.INVALID_TOPIC_EXCEPTION, bad)
            continue
        if t.name in names_now:
            fail(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{t.name}' already exists.")
            continue
        other = unified_now.get(_unified(t.name))
        if other is not None and other != t.name:
            fail(ErrorCode.INVALID_TOPIC_EXCEPTION,
                 f"Topic '{t.name}' collides with existing topic: {other}")
            continue
        if any(c.value is None for c in t.configs):
            fail(ErrorCode.INVALID_CONFIG, "Null value not supported for topic configs: "
                 + ",".join(c.name for c in t.configs if c.value is None))
            continue
        if t.assignments:
            assignment, err = _manual(image, t)
            if err is not None:
                fail(*err)
                continue
        else:
            n = default_partitions if t.num_partitions == -1 else t.num_partitions
            rf = default_replication if t.replication_factor == -1 else t.replication_factor
            if n <= 0:
                fail(ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid "
                     "non-positive value.")
                continue
            if rf <= 0:
                fail(ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0, "
                     "or -1 to use the default value.")
                continue
            if total_partitions + n > MAX_PARTITIONS_PER_REQUEST:
                fail(ErrorCode.POLICY_VIOLATION, f"Excessively large number of partitions per "
                     f"request.")
                continue
            try:
                assignment = place(_candidates(image), n, rf, rng)
            except PlacementError as exc:
                fail(ErrorCode.INVALID_REPLICATION_FACTOR,
                     f"Unable to replicate the partition {rf} time(s): {exc}")
                continue
        partitions = []
        for i, replicas in enumerate(assignment):
            isr = [b for b in replicas if image.brokers.is_active(b)]
            if not isr:
                code = ErrorCode.INVALID_REPLICA_ASSIGNMENT if t.assignments else ErrorCode.INVALID_REPLICATION_FACTOR
                fail(code, f"Unable to start partition {i}: no active replica in {replicas}.")
                break
            partitions.append((replicas, isr))
        if res.error:
            continue
        bad_configs = new_topic_error(t.name, {c.name: c.value for c in t.configs})
        if bad_configs is not None:  # Kafka's config definitions (configs/validation.py)
            fail(*bad_configs)
            continue
        total_partitions += len(partitions)
        topic_id = new_topic_id(rng, image)
        res.topic_id, res.num_partitions = topic_id, len(partitions)
        res.replication_factor = len(partitions[0][0])
        res.configs = [(c.name, c.value) for c in t.configs]
        names_now.add(t.name)
        unified_now[_unified(t.name)] = t.name
        if validate_only:
            continue
        records.append((TopicRecord(name=t.name, topic_id=topic_id), 0))
        records += [(ConfigRecord(resource_type=TOPIC_RESOURCE, resource_name=t.name, name=c.name,
                                  value=c.value), 0) for c in t.configs]
        if elr_enabled(image):
            records += [(ClearElrRecord(topic_name=t.name), 0) for c in t.configs
                        if c.name == MIN_ISR]
        for i, (replicas, isr) in enumerate(partitions):
            records.append((PartitionRecord(
                partition_id=i, topic_id=topic_id, replicas=list(replicas), isr=isr, leader=isr[0],
                leader_recovery_state=0, leader_epoch=0, partition_epoch=0,
                directories=[_directory(image.brokers.get(b)) for b in replicas]), pv))
    return results, records
