"""AlterPartition (key 56, v2-3) on the active controller, pure (Kafka's
``ReplicationControlManager.alterPartition``): a partition leader shrinks or expands
its ISR.

The sender's broker epoch must match its registration (else STALE_BROKER_EPOCH for
the whole request). Per topic, an unknown or zero id is UNKNOWN_TOPIC_ID; per
partition, in Kafka's order: missing (UNKNOWN_TOPIC_OR_PARTITION), a leader or
partition epoch ahead of ours (NOT_CONTROLLER: we are behind), a leader epoch behind
(FENCED_LEADER_EPOCH), a sender that is not the leader (INVALID_REQUEST), a
partition epoch behind (INVALID_UPDATE_VERSION), an ISR outside the replicas, with
duplicates or without the leader, RECOVERING with more than one member or
RECOVERED going back to RECOVERING (INVALID_REQUEST), a member that is unregistered,
fenced, shutting down or has another broker epoch (INELIGIBLE_REPLICA).

While a reassignment runs, the change goes through ``assignment_change``: an ISR
that now holds the adding replicas completes it (the removing replicas leave the
replicas and the ISR, the leader epoch goes up, a removed leader is replaced); when
the leader moves away from the sender the answer is NEW_LEADER_ELECTED, with the
record still written, as Kafka does.

An accepted change is one PartitionChangeRecord (ISR, LeaderRecoveryState and, with
ELR on, ELR/LastKnownElr: below min ISR the ELR holds the old ISR members that left,
else it is cleared). ISR-only changes keep the leader epoch and bump the partition
epoch. The answer carries the state after the change (the current one when nothing
changed, and nothing is written then). As in Kafka's builder, a sender that may no
longer lead (``leader_acceptor.py``: fenced, shutting down, or its replica's log
directory offline) is replaced by the first acceptable replica of the new ISR (or none),
answered NEW_LEADER_ELECTED.
"""
from __future__ import annotations


from wire.errors import ErrorCode
from wire.messages import PartitionChangeRecord

from ..image.topics import merge, partition_record_version
from .leader_acceptor import leader_acceptor
from .partition_change import NO_CHANGE, NO_LEADER, assignment_change, effective_min_isr, elr_enabled, unclean_enabled
from .reassignment_replicas import in_progress
from .topic_creation import _directory as broker_directory
from wire.uuids import ZERO_UUID

RECOVERED, RECOVERING = 0, 1


def _check(image, req_broker: int, p, part, new_isr: list[tuple[int, int]]) -> int:
    if part.leader_epoch > p.leader_epoch or part.partition_epoch > p.partition_epoch:
        return ErrorCode.NOT_CONTROLLER
    if part.leader_epoch < p.leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    if req_broker != p.leader:
        return ErrorCode.INVALID_REQUEST
    if part.partition_epoch < p.partition_epoch:
        return ErrorCode.INVALID_UPDATE_VERSION
    ids = [b for b, _ in new_isr]
    if len(set(ids)) != len(ids) or not set(ids) <= set(p.replicas):
        return ErrorCode.INVALID_REQUEST
    if p.leader not in ids:
        return ErrorCode.INVALID_REQUEST
    if part.leader_recovery_state == RECOVERING and len(ids) > 1:
        return ErrorCode.INVALID_REQUEST
    if p.leader_recovery_state == RECOVERED and part.leader_recovery_state == RECOVERING:
        return ErrorCode.INVALID_REQUEST
    for b, epoch in new_isr:
        reg = image.brokers.get(b)
        if reg is None or reg.fenced or reg.in_controlled_shutdown or (epoch != -1 and epoch != reg.epoch):
            return ErrorCode.INELIGIBLE_REPLICA
    return 0


def _change(image, topic_name: str, p, new_isr: list[int], lrs: int) -> PartitionChangeRecord | None:
    record = PartitionChangeRecord(partition_id=p.partition_id, topic_id=p.topic_id)
    changed = False
    if list(new_isr) != list(p.isr):  # the image holds tuples
        record.isr = list(new_isr)
        changed = True
    if lrs != p.leader_recovery_state:
        record.leader_recovery_state = lrs
        changed = True
    accept = leader_acceptor(image, p)
    if not accept(p.leader):  # the builder's ONLINE election keeps the leader only while valid
        record.leader = next((r for r in p.replicas if r in new_isr and accept(r)), NO_LEADER)
        changed = True
    if elr_enabled(image):
        old_elr = list(p.eligible_leader_replicas or [])
        if len(new_isr) < effective_min_isr(image, topic_name, len(p.replicas)):
            elr = sorted((set(old_elr) | set(p.isr)) - set(new_isr))
            lkelr = list(p.last_known_elr or [])
        else:
            elr, lkelr = [], []
        if elr != old_elr:
            record.eligible_leader_replicas = elr
            changed = True
        if lkelr != list(p.last_known_elr or []):
            record.last_known_elr = lkelr
            changed = True
    return record if changed else None


def alter_partition(image, req, version: int):
    """``(top_error, [(topic_id, [result dict])], records)``."""
    b = image.brokers.get(req.broker_id)
    if b is None or b.epoch != req.broker_epoch:
        return ErrorCode.STALE_BROKER_EPOCH, [], []
    pv = partition_record_version(image.metadata_version() or 0)
    topics, records = [], []
    for t in req.topics:
        topic = image.topics.by_id.get(t.topic_id) if t.topic_id != ZERO_UUID else None
        results = []
        topics.append((t.topic_id, results))
        for part in t.partitions:
            if topic is None:
                results.append({"partition_index": part.partition_index, "error_code": ErrorCode.UNKNOWN_TOPIC_ID})
                continue
            p = topic.partitions.get(part.partition_index)
            if p is None:
                results.append({"partition_index": part.partition_index,
                                "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION})
                continue
            new_isr = ([(s.broker_id, s.broker_epoch) for s in part.new_isr_with_epochs] if version >= 3
                       else [(i, -1) for i in part.new_isr])
            err = _check(image, req.broker_id, p, part, new_isr)
            if err:
                results.append({"partition_index": part.partition_index, "error_code": err})
                continue
            ids = [i for i, _ in new_isr]
            if in_progress(p):
                change = _reassigning_change(image, topic.name, p, ids, part.leader_recovery_state)
            else:
                change = _change(image, topic.name, p, ids, part.leader_recovery_state)
            q = p
            if change is not None:
                records.append((change, pv))
                if change.leader not in (NO_CHANGE, req.broker_id):
                    # the change completed a reassignment that moved the leader away
                    results.append({"partition_index": part.partition_index,
                                    "error_code": ErrorCode.NEW_LEADER_ELECTED})
                    continue
                q = merge(p, change)
            results.append({"partition_index": part.partition_index, "error_code": 0, "leader_id": q.leader,
                            "leader_epoch": q.leader_epoch, "isr": list(q.isr),
                            "leader_recovery_state": q.leader_recovery_state,
                            "partition_epoch": q.partition_epoch})
    return 0, topics, records


def _reassigning_change(image, topic_name: str, p, new_isr: list[int], lrs: int):
    """An ISR change while a reassignment runs: it may complete it (``assignment_change``)."""
    return assignment_change(image, topic_name, p, isr=new_isr, replicas=list(p.replicas),
                             removing=list(p.removing_replicas or ()), adding=list(p.adding_replicas or ()),
                             lrs=lrs, unclean=unclean_enabled(image, topic_name),
                             default_dir=lambda b: broker_directory(image.brokers.get(b)))
