"""AssignReplicasToDirs (key 73, v0) on the active controller, pure (Kafka's
``ReplicationControlManager.handleAssignReplicasToDirs``): a broker with several log
directories (JBOD) names the directory holding each of its replicas.

The broker epoch must match its registration, else STALE_BROKER_EPOCH for the whole
request. Per partition: unknown topic id UNKNOWN_TOPIC_ID, unknown partition
UNKNOWN_TOPIC_OR_PARTITION, the sender not a replica NOT_LEADER_OR_FOLLOWER;
otherwise a PartitionChangeRecord setting the sender's entry of Directories (none
when it already names that directory). Not atomic in Kafka (``ControllerResult.of``);
one batch here. A directory the registration does not have online
(``BrokerRegistration.hasOnlineDir``) is recorded the same way, then the broker leaves
the ISR (and leadership) of each partition so assigned (``offline_dirs.py``).
"""
from __future__ import annotations

import logging
import uuid

from wire.errors import ErrorCode
from wire.messages import AssignReplicasToDirsResponse, PartitionChangeRecord
from wire.messages.assign_replicas_to_dirs_response import DirectoryData, PartitionData, TopicData

from ..image.topics import partition_record_version
from .offline_dirs import offline_assignment_records

log = logging.getLogger(__name__)

DIRECTORY_ASSIGNMENT_MIN_MV = 17  # 3.7-IV2


def error_response(code: int) -> AssignReplicasToDirsResponse:
    return AssignReplicasToDirsResponse(throttle_time_ms=0, error_code=code, directories=[])


def assign_dirs(image, request) -> tuple[AssignReplicasToDirsResponse, list]:
    """``(response, records)``; records are ``(PartitionChangeRecord, version)``."""
    mv = image.metadata_version() or 0
    if mv < DIRECTORY_ASSIGNMENT_MIN_MV:
        return error_response(ErrorCode.UNSUPPORTED_VERSION), []
    b = image.brokers.get(request.broker_id)
    if b is None or b.epoch != request.broker_epoch:
        return error_response(ErrorCode.STALE_BROKER_EPOCH), []
    version = partition_record_version(mv)
    records, dirs, offline = [], [], {}
    # Several entries may touch one partition: each builds on the previous change.
    pending: dict[tuple[uuid.UUID, int], list] = {}
    for d in request.directories:
        online = b.has_online_dir(d.id)
        if not online:
            log.warning("[Controller] broker %d assigns replicas to offline directory %s",
                        request.broker_id, d.id)
        topics = []
        for t in d.topics:
            topic = image.topics.by_id.get(t.topic_id)
            results = []
            for part in t.partitions:
                code = _assign(topic, t.topic_id, part.partition_index, request.broker_id, d.id, pending)
                if code == 0 and not online:
                    offline[(t.topic_id, part.partition_index)] = (topic.name, topic.partitions[part.partition_index])
                results.append(PartitionData(partition_index=part.partition_index, error_code=code))
            topics.append(TopicData(topic_id=t.topic_id, partitions=results))
        dirs.append(DirectoryData(id=d.id, topics=topics))
    for (topic_id, index), directories in pending.items():
        p = image.topics.by_id[topic_id].partitions[index]
        if directories != list(p.directories or []):
            records.append((PartitionChangeRecord(partition_id=index, topic_id=topic_id,
                                                  directories=directories), version))
    records += offline_assignment_records(image, request.broker_id, offline.values())
    return AssignReplicasToDirsResponse(throttle_time_ms=0, error_code=0, directories=dirs), records


def _assign(topic, topic_id, index: int, broker_id: int, dir_id, pending) -> int:
    if topic is None:
        log.warning("[Controller] AssignReplicasToDirs from broker %d: unknown topic id %s", broker_id, topic_id)
        return ErrorCode.UNKNOWN_TOPIC_ID
    p = topic.partitions.get(index)
    if p is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if broker_id not in p.replicas:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    key = (topic_id, index)
    current = pending.get(key)
    if current is None:
        current = list(p.directories or [])
        if len(current) != len(p.replicas):  # pre-3.7 records carry none
            current = [uuid.UUID(int=1)] * len(p.replicas)
        pending[key] = current
    current[p.replicas.index(broker_id)] = dir_id
    return 0
