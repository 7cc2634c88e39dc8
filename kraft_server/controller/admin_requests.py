"""CreateTopics (19, v2-7), DeleteTopics (20, v1-6) and AllocateProducerIds (67, v0)
as write-queue operations of the active controller (decisions in
``topic_creation.py`` and ``topic_deletion.py``; producer ids in
``ProducerIdControlManager``'s way: blocks of 1000 from the image's NextProducerId,
a ProducerIdsRecord {BrokerId, BrokerEpoch, NextProducerId = start + 1000}; the
broker epoch must match its registration, else STALE_BROKER_EPOCH).

A created topic's answer (v5+) lists every topic config with its value and source
(``configs/effective.py``), computed on the image the topic is created on; an error
answer lists none (Kafka's empty default list). ``validateOnly`` answers the same.
"""
from __future__ import annotations

import logging
import random

from wire.errors import ErrorCode, error_message
from wire.messages import (
    AlterPartitionResponse, AllocateProducerIdsResponse, CreatePartitionsResponse, ElectLeadersResponse,
    UnregisterBrokerResponse, CreateTopicsResponse, DeleteTopicsResponse, ProducerIdsRecord,
)
from wire.messages.alter_partition_response import PartitionData as AlterPartitionData
from wire.messages.alter_partition_response import TopicData as AlterTopicData
from wire.messages.create_partitions_response import CreatePartitionsTopicResult
from wire.messages.create_topics_response import CreatableTopicConfigs, CreatableTopicResult
from wire.messages.elect_leaders_response import PartitionResult, ReplicaElectionResult
from wire.messages.delete_topics_response import DeletableTopicResult

from .cluster import broker_lifecycle
from .configs.describe import NodeConfig
from .configs.effective import effective_topic_configs
from .replication.alter_partition import alter_partition
from .replication.assign_dirs import assign_dirs, error_response as assign_dirs_error_response
from .replication.elections import PREFERRED, elect_leaders
from .replication.partition_creation import create_partitions
from .replication.topic_creation import create_topics
from .replication.topic_deletion import delete_topics
from .write_queue import Write
from wire.uuids import ZERO_UUID

log = logging.getLogger(__name__)

PRODUCER_ID_BLOCK = 1000


def fail_message(code: int) -> str | None:
    """An error answer's message: none for a deadline that passed in the queue (Kafka's
    ``ApiError.fromThrowable`` of a bare ``TimeoutException``)."""
    return None if code == ErrorCode.REQUEST_TIMED_OUT else error_message(code)


def create_topics_error_response(request, code: int) -> CreateTopicsResponse:
    return CreateTopicsResponse(throttle_time_ms=0, topics=[
        CreatableTopicResult(name=t.name, error_code=code, error_message=fail_message(code),
                             num_partitions=-1, replication_factor=-1, configs=[])
        for t in request.topics])


def _result(r, node: NodeConfig) -> CreatableTopicResult:
    if r.error:
        return CreatableTopicResult(name=r.name, error_code=r.error, error_message=r.message,
                                    num_partitions=-1, replication_factor=-1, configs=[])
    return CreatableTopicResult(
        name=r.name, topic_id=r.topic_id, error_code=0, error_message=None,
        num_partitions=r.num_partitions, replication_factor=r.replication_factor,
        configs=[CreatableTopicConfigs(name=e.name, value=e.value, read_only=e.read_only, config_source=e.source,
                                       is_sensitive=e.sensitive)
                 for e in effective_topic_configs(node, dict(r.configs))])


def create_topics_op(request, version: int, rng: random.Random | None = None, settings=None):
    """``settings``: the controller's (its node id and properties: the config layers
    the answer's configs fall back to)."""
    rng = rng or random.Random()
    node_id, static = (settings.node_id, settings.static_configs) if settings is not None else (-1, {})

    def run(image, next_offset, now_ms):
        results, records = create_topics(image, request, rng=rng, validate_only=request.validate_only)
        created = [r.name for r in results if not r.error]
        if records:
            log.info("[Controller] creating topic(s) %s", ", ".join(created))
        node = NodeConfig(image, node_id, static)
        body = CreateTopicsResponse(throttle_time_ms=0, topics=[_result(r, node) for r in results])
        return Write(records, lambda: body)
    return run, lambda code: create_topics_error_response(request, code)


def allocate_error_response(code: int) -> AllocateProducerIdsResponse:
    return AllocateProducerIdsResponse(throttle_time_ms=0, error_code=code, producer_id_start=0,
                                       producer_id_len=0)


def allocate_producer_ids_op(request):
    def run(image, next_offset, now_ms):
        b = image.brokers.get(request.broker_id)
        if b is None or b.epoch != request.broker_epoch:
            return Write([], lambda: allocate_error_response(ErrorCode.STALE_BROKER_EPOCH))
        start = max(image.next_producer_id, 0)
        record = ProducerIdsRecord(broker_id=request.broker_id, broker_epoch=request.broker_epoch,
                                   next_producer_id=start + PRODUCER_ID_BLOCK)
        return Write([(record, 0)], lambda: AllocateProducerIdsResponse(
            throttle_time_ms=0, error_code=0, producer_id_start=start, producer_id_len=PRODUCER_ID_BLOCK))
    return run, allocate_error_response


def assign_dirs_op(request):
    """AssignReplicasToDirs (73, v0): decisions in ``assign_dirs.py``."""
    def run(image, next_offset, now_ms):
        body, records = assign_dirs(image, request)
        return Write(records, lambda: body)
    return run, assign_dirs_error_response


def delete_topics_error_response(request, version: int, code: int) -> DeleteTopicsResponse:
    wanted = ([(t.name, t.topic_id) for t in request.topics] if version >= 6
              else [(n, ZERO_UUID) for n in request.topic_names])
    return DeleteTopicsResponse(throttle_time_ms=0, responses=[
        DeletableTopicResult(name=n, topic_id=i, error_code=code, error_message=fail_message(code))
        for n, i in wanted])


def delete_topics_op(request, version: int):
    def run(image, next_offset, now_ms):
        results, records = delete_topics(image, request, version)
        if records:
            log.info("[Controller] deleting topic(s) %s", ", ".join(n for n, _, e, _ in results if not e))
        return Write(records, lambda: DeleteTopicsResponse(throttle_time_ms=0, responses=[
            DeletableTopicResult(name=n, topic_id=i, error_code=e, error_message=m)
            for n, i, e, m in results]))
    return run, lambda code: delete_topics_error_response(request, version, code)


def alter_partition_error_response(code: int) -> AlterPartitionResponse:
    return AlterPartitionResponse(throttle_time_ms=0, error_code=code, topics=[])


def alter_partition_op(request, version: int):
    """AlterPartition (56, v2-3): decisions in ``alter_partition.py``."""
    def run(image, next_offset, now_ms):
        top, topics, records = alter_partition(image, request, version)
        body = AlterPartitionResponse(throttle_time_ms=0, error_code=top, topics=[
            AlterTopicData(topic_id=tid, partitions=[AlterPartitionData(**r) for r in results])
            for tid, results in topics])
        return Write(records, lambda: body)
    return run, alter_partition_error_response


def create_partitions_error_response(request, code: int) -> CreatePartitionsResponse:
    return CreatePartitionsResponse(throttle_time_ms=0, results=[
        CreatePartitionsTopicResult(name=t.name, error_code=code, error_message=fail_message(code))
        for t in request.topics])


def create_partitions_op(request, version: int, rng: random.Random | None = None):
    """CreatePartitions (37, v0-3): decisions in ``partition_creation.py``."""
    def run(image, next_offset, now_ms):
        results, records = create_partitions(image, request, rng)
        return Write(records, lambda: CreatePartitionsResponse(throttle_time_ms=0, results=[
            CreatePartitionsTopicResult(name=n, error_code=e, error_message=m) for n, e, m in results]))
    return run, lambda code: create_partitions_error_response(request, code)


def unregister_error_response(code: int, message: str | None = None) -> UnregisterBrokerResponse:
    return UnregisterBrokerResponse(throttle_time_ms=0, error_code=code,
                                    error_message=message if message is not None else error_message(code))


def unregister_broker_op(request):
    """UnregisterBroker (64, v0): BROKER_ID_NOT_REGISTERED for an unknown id."""
    def run(image, next_offset, now_ms):
        records = broker_lifecycle.unregister_records(image, request.broker_id)
        if not records:
            return Write([], lambda: unregister_error_response(
                ErrorCode.BROKER_ID_NOT_REGISTERED, f"Broker ID {request.broker_id} is not currently registered"))
        log.info("[Controller] unregistering broker %d", request.broker_id)
        return Write(records, lambda: UnregisterBrokerResponse(throttle_time_ms=0, error_code=0, error_message=None))
    return run, unregister_error_response


def elect_leaders_error_response(request, version: int, code: int) -> ElectLeadersResponse:
    """Kafka's ``ElectLeadersRequest.getErrorResponse``: the error on every requested
    partition, and at the top level only from v1 (v0 has no top-level ErrorCode)."""
    results = [ReplicaElectionResult(topic=t.topic, partition_result=[
        PartitionResult(partition_id=pid, error_code=code, error_message=fail_message(code))
        for pid in t.partitions]) for t in request.topic_partitions or ()]
    return ElectLeadersResponse(throttle_time_ms=0, error_code=code if version >= 1 else 0,
                                replica_election_results=results)


def elect_leaders_op(request, version: int):
    """ElectLeaders (43, v0-2): decisions in ``elections.py``."""
    def run(image, next_offset, now_ms):
        election_type = request.election_type if version >= 1 else PREFERRED
        wanted = (None if request.topic_partitions is None
                  else [(t.topic, list(t.partitions)) for t in request.topic_partitions])
        results, records = elect_leaders(image, election_type, wanted)
        body = ElectLeadersResponse(throttle_time_ms=0, error_code=0, replica_election_results=[
            ReplicaElectionResult(topic=name, partition_result=[
                PartitionResult(partition_id=pid, error_code=e, error_message=error_message(e) if e else None)
                for pid, e in out]) for name, out in results])
        if records:
            log.info("[Controller] electing %d leader(s)", len(records))
        return Write(records, lambda: body)
    return run, lambda code: elect_leaders_error_response(request, version, code)
