"""AlterPartitionReassignments (45, v0-1) and ListPartitionReassignments (46, v0) on
the active controller, pure decisions and their write-queue operations (Kafka's
``ReplicationControlManager.alterPartitionReassignments`` and
``listPartitionReassignments``; the replica arithmetic is ``reassignment_replicas.py``,
the record ``partition_change.assignment_change``).

Per partition, in Kafka's order: an unknown topic ("Unable to find a topic named
X.") or partition ("Unable to find partition X:N.") is UNKNOWN_TOPIC_OR_PARTITION;
a topic deleted by an earlier write is simply unknown. Null replicas cancel: with no
reassignment running NO_REASSIGNMENT_IN_PROGRESS, a revert whose ISR would be only
adding replicas needs the topic's unclean election, else INVALID_REPLICA_ASSIGNMENT.
A target is checked as a manual assignment (non-empty, registered, distinct:
INVALID_REPLICA_ASSIGNMENT), then, with AllowReplicationFactorChange false (v1),
its size against the current replication factor (replicas + adding - removing
while one runs): INVALID_REPLICATION_FACTOR. Accepted partitions give at most one
PartitionChangeRecord each, all in one atomic batch; failures do not stop the rest.
The list reads the committed image: each partition with adding or removing replicas.

TimeoutMs is the alter's deadline in the write queue (``ControllerApis`` gives the
controller event ``now + TimeoutMs``; the list has none): an alter that has not started
by then is answered REQUEST_TIMED_OUT at the top and on every partition with no message
(Kafka's queue fails it with a message-less ``TimeoutException``), and a TimeoutMs of 0
or less always expires. An alter with no topics is answered at once, by any controller.
"""
from __future__ import annotations

import logging

from wire.errors import ErrorCode, error_message
from wire.messages import AlterPartitionReassignmentsResponse, ListPartitionReassignmentsResponse
from wire.messages.alter_partition_reassignments_response import (
    ReassignablePartitionResponse, ReassignableTopicResponse,
)
from wire.messages.list_partition_reassignments_response import (
    OngoingPartitionReassignment, OngoingTopicReassignment,
)

from kraft_server.common.refused import Refused

from ..image.topics import partition_record_version
from .partition_change import assignment_change, unclean_enabled
from .reassignment_replicas import in_progress, revert, start
from .topic_creation import _directory
from ..write_queue import Write

log = logging.getLogger(__name__)


def _default_dir(image):
    """A new replica's directory: its broker's only one (``ClusterDescriber.defaultDir``)."""
    return lambda b: _directory(image.brokers.get(b))


def _cancel(image, topic_name: str, p):
    if not in_progress(p):
        raise Refused(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, error_message(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS))
    back = revert(p)
    unclean = unclean_enabled(image, topic_name)
    if back.unclean and not unclean:
        raise Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                      f"Unable to revert partition assignment for {topic_name}:{p.partition_id} because "
                      f"it would require an unclean leader election.")
    return assignment_change(image, topic_name, p, isr=back.isr, replicas=back.replicas, removing=[],
                             adding=[], unclean=unclean, default_dir=_default_dir(image))


def _check_target(image, target: list[int]) -> None:
    """``validateManualPartitionAssignment`` (no replication factor to match)."""
    if not target:
        raise Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                      "The manual partition assignment includes an empty replica list.")
    previous = None
    for b in sorted(target):
        if image.brokers.get(b) is None:
            raise Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                          f"The manual partition assignment includes broker {b}, but no such broker is "
                          f"registered.")
        if b == previous:
            raise Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                          f"The manual partition assignment includes the broker {b} more than once.")
        previous = b


def current_replication_factor(p) -> int:
    """``validatePartitionReplicationFactorUnchanged``: while a reassignment runs, the
    replicas plus the adding ones minus the removing ones."""
    if not in_progress(p):
        return len(p.replicas)
    return len((set(p.replicas) | set(p.adding_replicas or ())) - set(p.removing_replicas or ()))


def _change(image, topic_name: str, p, target: list[int], allow_rf_change: bool):
    _check_target(image, target)
    if not allow_rf_change:
        rf = current_replication_factor(p)
        if rf != len(target):
            raise Refused(ErrorCode.INVALID_REPLICATION_FACTOR,
                          f"The replication factor is changed from {rf} to {len(target)}")
    plan = start(p.replicas, target)
    # Kafka's builder keeps the partition's own adding/removing lists when the new
    # plan has none (a target equal to the current replicas, reordered or not).
    return assignment_change(
        image, topic_name, p, isr=list(p.isr), replicas=plan.replicas,
        removing=plan.removing or list(p.removing_replicas or ()),
        adding=plan.adding or list(p.adding_replicas or ()), default_dir=_default_dir(image))


def alter_reassignments(image, request, version: int):
    """``(results, records)``: results are ``[(topic, [(partition, error, message)])]``."""
    pv = partition_record_version(image.metadata_version() or 0)
    allow = request.allow_replication_factor_change if version >= 1 else True
    results, records, done = [], [], 0
    for t in request.topics:
        out = []
        results.append((t.name, out))
        topic = image.topics.by_name.get(t.name)
        for part in t.partitions:
            try:
                if topic is None:
                    raise Refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {t.name}.")
                p = topic.partitions.get(part.partition_index)
                if p is None:
                    raise Refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                  f"Unable to find partition {t.name}:{part.partition_index}.")
                if part.replicas is None:
                    change = _cancel(image, t.name, p)
                else:
                    change = _change(image, t.name, p, list(part.replicas), allow)
            except Refused as exc:
                log.info("Unable to alter partition reassignment for %s:%d: %s", t.name, part.partition_index, exc)
                out.append((part.partition_index, exc.code, str(exc)))
                continue
            if change is not None:
                records.append((change, pv))
            out.append((part.partition_index, 0, None))
            done += 1
    log.info("[Controller] altered %d partition reassignment(s) (%d record(s))", done, len(records))
    return results, records


def list_reassignments(image, topics):
    """``[(topic, [partition])]`` of the ongoing reassignments: every one when ``topics``
    is None (topics by name, partitions by id), else those of the named partitions."""
    wanted = ([(t.name, sorted(t.partitions)) for t in image.topics] if topics is None
              else [(t.name, list(t.partition_indexes)) for t in topics])
    out = []
    for name, ids in wanted:
        topic = image.topics.by_name.get(name)
        if topic is None:
            continue
        found = [topic.partitions[i] for i in ids if i in topic.partitions and in_progress(topic.partitions[i])]
        if found:
            out.append((name, found))
    return out


# -- write-queue operations ---------------------------------------------------------

def alter_error_response(request, code: int) -> AlterPartitionReassignmentsResponse:
    """Kafka's ``getErrorResponse``: the error at the top and on every partition (a
    timed-out one with no message, ``ApiError.fromThrowable`` of a bare TimeoutException)."""
    message = None if code == ErrorCode.REQUEST_TIMED_OUT else error_message(code)
    return AlterPartitionReassignmentsResponse(
        throttle_time_ms=0, error_code=code, error_message=message, responses=[
            ReassignableTopicResponse(name=t.name, partitions=[
                ReassignablePartitionResponse(partition_index=p.partition_index, error_code=code,
                                              error_message=message) for p in t.partitions])
            for t in request.topics])


def empty_alter_answer(request) -> AlterPartitionReassignmentsResponse | None:
    """``QuorumController.alterPartitionReassignments``: no topics, an empty answer
    without an event (so without NOT_CONTROLLER either)."""
    if request.topics:
        return None
    return AlterPartitionReassignmentsResponse(throttle_time_ms=0, allow_replication_factor_change=True,
                                               error_code=0, error_message=None, responses=[])


def alter_reassignments_op(request, version: int):
    def run(image, next_offset, now_ms):
        results, records = alter_reassignments(image, request, version)
        allow = request.allow_replication_factor_change if version >= 1 else True
        body = AlterPartitionReassignmentsResponse(
            throttle_time_ms=0, allow_replication_factor_change=allow, error_code=0, error_message=None,
            responses=[ReassignableTopicResponse(name=name, partitions=[
                ReassignablePartitionResponse(partition_index=i, error_code=e, error_message=m)
                for i, e, m in out]) for name, out in results])
        return Write(records, lambda: body)
    return run, lambda code: alter_error_response(request, code)


def list_error_response(request, code: int) -> ListPartitionReassignmentsResponse:
    return ListPartitionReassignmentsResponse(
        throttle_time_ms=0, error_code=code, error_message=error_message(code), topics=[
            OngoingTopicReassignment(name=t.name, partitions=[
                OngoingPartitionReassignment(partition_index=i, replicas=[], adding_replicas=[],
                                             removing_replicas=[]) for i in t.partition_indexes])
            for t in (request.topics or [])])


def list_reassignments_op(request):
    def run(image, next_offset, now_ms):
        found = list_reassignments(image, request.topics)
        body = ListPartitionReassignmentsResponse(
            throttle_time_ms=0, error_code=0, error_message=None, topics=[
                OngoingTopicReassignment(name=name, partitions=[
                    OngoingPartitionReassignment(partition_index=p.partition_id, replicas=list(p.replicas),
                                                 adding_replicas=list(p.adding_replicas or ()),
                                                 removing_replicas=list(p.removing_replicas or ()))
                    for p in parts]) for name, parts in found])
        return Write([], lambda: body)
    return run, lambda code: list_error_response(request, code)
