"""The admin and broker requests of the controller bench's operation rows (issue 26),
with our codecs, sent straight to the active controller, ours or Kafka's: the same
bytes to both. Each helper raises when an answer carries an error the row did not
expect, so a row never times a refusal."""
from __future__ import annotations

import math
import time
import traceback

from wire.messages import (
    AlterPartitionReassignmentsRequest, AlterPartitionRequest, BrokerHeartbeatRequest,
    DescribeConfigsRequest, ElectLeadersRequest, IncrementalAlterConfigsRequest,
    ListPartitionReassignmentsRequest,
)
from wire.messages.alter_partition_reassignments_request import ReassignablePartition, ReassignableTopic
from wire.messages.alter_partition_request import BrokerState, PartitionData, TopicData
from wire.messages.describe_configs_request import DescribeConfigsResource
from wire.messages.elect_leaders_request import TopicPartitions
from wire.messages.incremental_alter_configs_request import AlterableConfig, AlterConfigsResource

TOPIC = 2  # ConfigResource.Type.TOPIC
SET = 0  # AlterConfigOp.OpType.SET
ELECTION_NOT_NEEDED = 84
TIMEOUT_MS = 120000
# Kafka's controller refuses an operation of more than 10,000 records
# (QuorumController.MAX_RECORDS_PER_USER_OP, a BoundedList in ReplicationControlManager's
# alterPartitionReassignments and electLeaders): requests stay under it.
MAX_PARTITIONS_A_REQUEST = 5000
CONFIG_TOPICS = 1000


def chunks(items: list, size: int):
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _check(errors, what: str) -> None:
    bad = [e for e in errors if e[-1]]
    if bad:
        raise RuntimeError(f"{what}: {len(bad)} error(s), e.g. {bad[:3]}")


def reassign(conn, moves: dict[str, dict[int, list[int]]]) -> None:
    """AlterPartitionReassignments v0 of ``{topic: {partition: target replicas}}``."""
    body = AlterPartitionReassignmentsRequest(timeout_ms=TIMEOUT_MS, topics=[
        ReassignableTopic(name=t, partitions=[ReassignablePartition(partition_index=p, replicas=r)
                                              for p, r in parts.items()])
        for t, parts in moves.items()])
    r = conn.request(body, 0)
    _check([(r.error_code,)] + [(t.name, p.partition_index, p.error_code) for t in r.responses
                                for p in t.partitions], "AlterPartitionReassignments")


def reassignments_in_flight(conn) -> int:
    """How many partitions ListPartitionReassignments v0 (every topic) lists."""
    r = conn.request(ListPartitionReassignmentsRequest(timeout_ms=TIMEOUT_MS, topics=None), 0)
    _check([(r.error_code,)], "ListPartitionReassignments")
    return sum(len(t.partitions) for t in r.topics)


def alter_isr(conn, leader: int, changes, epochs: dict[int, int]) -> None:
    """AlterPartition v3 from broker ``leader``: ``changes`` are ``(topic_id, PartitionRecord,
    new ISR)``, the record giving the leader and partition epochs the change is based on."""
    by_topic: dict = {}
    for topic_id, p, isr in changes:
        by_topic.setdefault(topic_id, []).append(PartitionData(
            partition_index=p.partition_id, leader_epoch=p.leader_epoch,
            new_isr_with_epochs=[BrokerState(broker_id=b, broker_epoch=epochs[b]) for b in isr],
            leader_recovery_state=0, partition_epoch=p.partition_epoch))
    body = AlterPartitionRequest(broker_id=leader, broker_epoch=epochs[leader], topics=[
        TopicData(topic_id=t, partitions=parts) for t, parts in by_topic.items()])
    r = conn.request(body, 3)
    _check([(r.error_code,)] + [(t.topic_id, p.partition_index, p.error_code) for t in r.topics
                                for p in t.partitions], "AlterPartition")


def elect_preferred(conn, partitions: dict[str, list[int]]) -> int:
    """ElectLeaders v2 (PREFERRED) of ``{topic: partitions}``; returns how many were elected
    (a partition already led by its preferred replica answers ELECTION_NOT_NEEDED)."""
    body = ElectLeadersRequest(election_type=0, timeout_ms=TIMEOUT_MS, topic_partitions=[
        TopicPartitions(topic=t, partitions=ps) for t, ps in partitions.items()])
    r = conn.request(body, 2)
    results = [(t.topic, p.partition_id, p.error_code) for t in r.replica_election_results
               for p in t.partition_result]
    _check([(r.error_code,)] + [x for x in results if x[-1] != ELECTION_NOT_NEEDED], "ElectLeaders")
    return sum(1 for x in results if x[-1] == 0)


def describe_topic_configs(conn, names) -> int:
    """DescribeConfigs v4 of every config of ``names``; returns how many entries came back."""
    body = DescribeConfigsRequest(resources=[DescribeConfigsResource(resource_type=TOPIC, resource_name=n,
                                                                     configuration_keys=None) for n in names],
                                  include_synonyms=False, include_documentation=False)
    r = conn.request(body, 4)
    _check([(x.resource_name, x.error_code) for x in r.results], "DescribeConfigs")
    return sum(len(x.configs) for x in r.results)


def alter_topic_configs(conn, names, key: str, value: str) -> None:
    """IncrementalAlterConfigs v1: SET ``key`` to ``value`` on each topic of ``names``."""
    body = IncrementalAlterConfigsRequest(validate_only=False, resources=[
        AlterConfigsResource(resource_type=TOPIC, resource_name=n,
                             configs=[AlterableConfig(name=key, config_operation=SET, value=value)])
        for n in names])
    r = conn.request(body, 1)
    _check([(x.resource_name, x.error_code) for x in r.responses], "IncrementalAlterConfigs")


def heartbeat(conn, broker: int, epoch: int, offset: int, want_shut_down: bool = False):
    """BrokerHeartbeat v1 of a broker asking to be unfenced (or to shut down)."""
    return conn.request(BrokerHeartbeatRequest(broker_id=broker, broker_epoch=epoch, current_metadata_offset=offset,
                                               want_fence=False, want_shut_down=want_shut_down), 1)


def named(rows: dict, names: dict) -> dict:
    """``rows`` under their table names (``names``, in its order), times to 0.1 ms; a row
    not measured is NaN."""
    return {names[k]: (rows.get(k, math.nan) if k == "rss" else round(rows.get(k, math.nan), 1)) for k in names}


def measured(run, rows: dict, names: dict) -> dict:
    """``run(rows)`` filling ``rows``; a failure is printed and leaves the rows it did
    not reach NaN (the rest of the bench still runs)."""
    try:
        run(rows)
    except Exception:  # noqa: BLE001 - reported, the table shows what was measured
        traceback.print_exc()
    return named(rows, names)


def config_rows(conn, names, rss) -> dict:
    """The last rows of both operation parts: DescribeConfigs of every topic of ``names``
    (one request), IncrementalAlterConfigs of CONFIG_TOPICS of them (one request), both
    in ms, then the controller's RSS (``rss()``)."""
    t0 = time.monotonic()
    describe_topic_configs(conn, names)
    rows = {"describe": (time.monotonic() - t0) * 1000}
    t0 = time.monotonic()
    alter_topic_configs(conn, names[:CONFIG_TOPICS], "retention.ms", "86400000")
    rows["alter"] = (time.monotonic() - t0) * 1000
    rows["rss"] = rss()
    return rows
