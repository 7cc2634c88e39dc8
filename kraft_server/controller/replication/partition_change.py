"""Leader and ISR changes when a broker leaves or comes back (Kafka's
``PartitionChangeBuilder`` for ``generateLeaderAndIsrUpdates``), as pure functions over
the image returning a PartitionChangeRecord, or None when nothing changes.

* ``broker_removed``: the broker is fenced, shutting down or unregistered. It leaves
  the ISR and cannot lead. With ELR off, an ISR that would become empty is kept and
  the partition goes leaderless. With ELR on (4.3's default) the ISR may become empty;
  while it is smaller than the effective min ISR, ELR = (old ELR ∪ old ISR) − ISR,
  otherwise ELR and LastKnownElr are cleared; the first time the partition loses its
  ISR, LastKnownElr remembers the last leader.
* With ``unclean.leader.election.enable`` on the topic and no clean candidate left,
  the first acceptable replica is elected uncleanly (ISR = [it], RECOVERING).
* ``broker_returned``: a leaderless partition after the broker was unfenced: the
  first acceptable replica (replicas order) of the ISR, or of the ELR when the ISR is
  empty (it then becomes the ISR), or else the "last known leader", elected unclean
  (ISR = [it], LeaderRecoveryState RECOVERING).

"Acceptable" is Kafka's ``LeaderAcceptor`` (``leader_acceptor.py``): registered,
unfenced, not in controlled shutdown, and the replica's log directory online.
"""
from __future__ import annotations

from wire.messages import PartitionChangeRecord

from .leader_acceptor import leader_acceptor
from .reassignment_replicas import completed

NO_LEADER = -1
NO_CHANGE = -2
RECOVERING = 1
DIRECTORY_ASSIGNMENT_MIN_MV = 17  # 3.7-IV2


def effective_min_isr(image, topic_name: str, replication_factor: int) -> int:
    """min(topic ``min.insync.replicas``, else the cluster default, else 1; the RF)."""
    configs = image.configs
    raw = configs.get((2, topic_name, "min.insync.replicas"),
                      configs.get((4, "", "min.insync.replicas"), "1"))
    try:
        value = int(raw)
    except ValueError:
        value = 1
    return max(1, min(value, replication_factor))


def unclean_enabled(image, topic_name: str) -> bool:
    """``unclean.leader.election.enable`` of a topic: its own config, else the cluster
    default, else false."""
    configs = image.configs
    value = configs.get((2, topic_name, "unclean.leader.election.enable"),
                        configs.get((4, "", "unclean.leader.election.enable"), "false"))
    return value.strip().lower() == "true"


def unclean_leader(p, record, ok) -> PartitionChangeRecord | None:
    """With no clean candidate and unclean election allowed: the first acceptable
    replica leads, alone in the ISR, RECOVERING; ELR and LastKnownElr are cleared."""
    for r in p.replicas:
        if ok(r):
            record.leader, record.isr, record.leader_recovery_state = r, [r], RECOVERING
            if p.eligible_leader_replicas:
                record.eligible_leader_replicas = []
            if p.last_known_elr:
                record.last_known_elr = []
            return record
    return None


def elr_enabled(image) -> bool:
    return image.features.get("eligible.leader.replicas.version", 0) >= 1


def _choose(p, target_isr, target_elr, ok, order=None) -> int:
    """ONLINE election: the current leader if still valid, else the first valid replica
    (of ``order``, the target replicas, when they change)."""
    def valid(r):
        return (r in target_isr or (not target_isr and r in target_elr)) and ok(r)
    if p.leader >= 0 and valid(p.leader):
        return p.leader
    for r in (p.replicas if order is None else order):
        if valid(r):
            return r
    return NO_LEADER


def _finish(p, record, target_isr, leader, target_elr, target_lkelr, elr: bool):
    if elr and leader >= 0 and not target_isr and leader in target_elr:
        target_isr = [leader]  # electing an ELR member makes it the ISR
        target_elr = [r for r in target_elr if r != leader]
    if list(target_isr) != list(p.isr):  # the image holds tuples
        record.isr = list(target_isr)
    if leader != p.leader:
        record.leader = leader
    if elr:
        if leader >= 0 and target_lkelr:
            target_lkelr = []
        if list(target_elr) != list(p.eligible_leader_replicas or ()):
            record.eligible_leader_replicas = list(target_elr)
        if list(target_lkelr) != list(p.last_known_elr or ()):
            record.last_known_elr = list(target_lkelr)
    changed = (record.isr is not None or record.leader != NO_CHANGE
               or record.eligible_leader_replicas is not None or record.last_known_elr is not None
               or record.leader_recovery_state != -1 or record.replicas is not None
               or record.adding_replicas is not None or record.removing_replicas is not None
               or record.directories is not None)
    return record if changed else None


def broker_removed(image, topic_name: str, p, broker_id: int) -> PartitionChangeRecord | None:
    if broker_id not in p.isr:
        return None
    elr = elr_enabled(image)
    record = PartitionChangeRecord(partition_id=p.partition_id, topic_id=p.topic_id)
    active = image.brokers.leading()[0]
    ok = leader_acceptor(image, p, lambda r: r != broker_id and r in active)

    target_isr = [r for r in p.isr if r != broker_id]
    old_elr = list(p.eligible_leader_replicas or [])
    old_lkelr = list(p.last_known_elr or [])
    if not any(ok(r) for r in target_isr) and not (elr and any(ok(r) for r in old_elr)) \
            and unclean_enabled(image, topic_name):
        change = unclean_leader(p, record, ok)  # UNCLEAN election, as Kafka for such topics
        if change is not None:
            return change
    if not elr:
        if not target_isr:
            target_isr = list(p.isr)  # keep the ISR; nobody may lead
            return _finish(p, record, target_isr, NO_LEADER, [], [], False)
        return _finish(p, record, target_isr, _choose(p, target_isr, [], ok), [], [], False)
    min_isr = effective_min_isr(image, topic_name, len(p.replicas))
    if len(target_isr) < min_isr:
        target_elr = sorted((set(old_elr) | set(p.isr)) - set(target_isr))
        target_lkelr = old_lkelr
    else:
        target_elr, target_lkelr = [], []
    leader = _choose(p, target_isr, target_elr, ok)
    if not target_isr and leader == NO_LEADER and old_lkelr != [p.leader] and p.leader >= 0:
        target_lkelr = [p.leader]  # the first time the partition becomes leaderless
    return _finish(p, record, target_isr, leader, target_elr, target_lkelr, True)


def broker_unclean_shutdown(image, topic_name: str, p, broker_id: int) -> PartitionChangeRecord | None:
    """A broker re-registering after an unclean shutdown (ELR on): it leaves the ISR as
    in ``broker_removed`` and the ELR too, since its log may have lost records."""
    change = broker_removed(image, topic_name, p, broker_id)
    elr = change.eligible_leader_replicas if change is not None and change.eligible_leader_replicas is not None \
        else list(p.eligible_leader_replicas or [])
    if broker_id not in elr:
        return change
    if change is None:
        change = PartitionChangeRecord(partition_id=p.partition_id, topic_id=p.topic_id)
    change.eligible_leader_replicas = [r for r in elr if r != broker_id]
    return change


def broker_returned(image, p, broker_id: int) -> PartitionChangeRecord | None:
    """For a leaderless partition once ``broker_id`` is unfenced (it counts as active)."""
    if p.leader != NO_LEADER:
        return None
    elr = elr_enabled(image)
    record = PartitionChangeRecord(partition_id=p.partition_id, topic_id=p.topic_id)
    active = image.brokers.leading()[0]
    ok = leader_acceptor(image, p, lambda r: r == broker_id or r in active)

    target_elr = list(p.eligible_leader_replicas or []) if elr else []
    target_lkelr = list(p.last_known_elr or []) if elr else []
    leader = _choose(p, list(p.isr), target_elr, ok)
    if leader == NO_LEADER and elr and not p.isr and not target_elr and len(target_lkelr) == 1 \
            and ok(target_lkelr[0]):
        leader = target_lkelr[0]  # the last known leader, an unclean election
        record.leader_recovery_state = RECOVERING
        record.isr = [leader]
        record.leader = leader
        record.last_known_elr = []
        return record
    if leader == NO_LEADER:
        return None
    return _finish(p, record, list(p.isr), leader, target_elr, target_lkelr, elr)


def _first_partition_rf(image, topic_name: str, p) -> int:
    """The replica count of the topic's partition 0 (``getTopicEffectiveMinIsr``)."""
    topic = image.topics.by_name.get(topic_name)
    first = topic.partitions.get(0) if topic is not None else None
    return len(first.replicas if first is not None else p.replicas)


def assignment_change(image, topic_name: str, p, *, isr, replicas, removing, adding, lrs: int | None = None,
                      unclean: bool = False, default_dir=None) -> PartitionChangeRecord | None:
    """Kafka's ``PartitionChangeBuilder.build`` for a change that may move replicas: a
    reassignment, its cancel, or an ISR change while one runs (``reassignment.py``,
    ``alter_partition.py``). In Kafka's order: complete the reassignment if the target
    ISR allows it, set the ELR target, elect (the current leader if still valid, else
    the first valid target replica, else the last known leader; with ``unclean``, else
    the first active one; those two alone in the ISR and RECOVERING), bump the leader epoch when replicas go away, then write
    ISR, ELR, Replicas, Removing/AddingReplicas and Directories where they differ.
    ``default_dir(broker)``: the directory of a replica new to the partition."""
    done = completed(replicas, removing, adding, isr)
    if done is not None:
        (replicas, isr), removing, adding = done, [], []
    elr = elr_enabled(image)
    record = PartitionChangeRecord(partition_id=p.partition_id, topic_id=p.topic_id)
    ok = leader_acceptor(image, p)
    target_elr, target_lkelr = [], []
    if elr and len(isr) < effective_min_isr(image, topic_name, _first_partition_rf(image, topic_name, p)):
        target_elr = sorted((set(p.eligible_leader_replicas or ()) | set(p.isr)) - set(isr))
        target_lkelr = list(p.last_known_elr or [])
    leader = _choose(p, isr, target_elr, ok, order=replicas)
    if leader == NO_LEADER:
        known = list(p.last_known_elr or ())
        if elr and not isr and not target_elr and len(known) == 1 and ok(known[0]):
            leader = known[0]  # the last known leader, an unclean election
        elif unclean:
            leader = next((r for r in replicas if ok(r)), NO_LEADER)
        if leader != NO_LEADER:
            isr, target_elr, target_lkelr = [leader], [], []
            record.isr = [leader]
            if p.leader_recovery_state != RECOVERING:
                record.leader_recovery_state = RECOVERING
    if leader == p.leader and not set(p.replicas) <= set(replicas):
        record.leader = p.leader  # replicas leave: the leader epoch goes up
    record.replicas = list(replicas) if list(replicas) != list(p.replicas) else None
    record.removing_replicas = list(removing) if list(removing) != list(p.removing_replicas or ()) else None
    record.adding_replicas = list(adding) if list(adding) != list(p.adding_replicas or ()) else None
    if (image.metadata_version() or 0) >= DIRECTORY_ASSIGNMENT_MIN_MV and replicas:
        current = dict(zip(p.replicas, p.directories or ()))
        dirs = [current[r] if r in current else default_dir(r) for r in replicas]
        if dirs != list(p.directories or ()):
            record.directories = dirs
    if lrs is not None and lrs != p.leader_recovery_state:
        record.leader_recovery_state = lrs  # the requested state wins, as in Kafka
    return _finish(p, record, isr, leader, target_elr, target_lkelr, elr)
