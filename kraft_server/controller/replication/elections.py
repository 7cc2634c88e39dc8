"""Leader elections asked for by an admin (ElectLeaders, key 43) or by the periodic
preferred-leader task, pure (Kafka's ``ReplicationControlManager.electLeaders`` and
``maybeBalancePartitionLeaders``).

* PREFERRED (0): a partition already led by its first replica needs no election
  (ELECTION_NOT_NEEDED); otherwise the first replica leads if it is in the ISR and
  acceptable (``leader_acceptor.py``: active, its log directory online), else
  PREFERRED_LEADER_NOT_AVAILABLE.
* UNCLEAN (1): a partition with a leader needs none (ELECTION_NOT_NEEDED); otherwise
  the first acceptable ISR member (clean), else the first acceptable replica (unclean: it
  becomes the ISR, LeaderRecoveryState RECOVERING), else ELIGIBLE_LEADERS_NOT_AVAILABLE.

With no partitions named (null), every partition is considered and the ones needing
no election are left out of the answer. Unknown partitions are
UNKNOWN_TOPIC_OR_PARTITION. The leader epoch goes up with every new leader.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import PartitionChangeRecord

from ..image.broker_index import NO_LEADER
from ..image.topics import partition_record_version
from .leader_acceptor import leader_acceptor
from .partition_change import unclean_enabled, unclean_leader

PREFERRED, UNCLEAN = 0, 1
MAX_ELECTIONS_PER_IMBALANCE = 1000


def elect(image, p, election_type: int) -> tuple[int, PartitionChangeRecord | None]:
    """``(error, record)`` for one partition."""
    preferred = p.replicas[0] if p.replicas else -1
    needed = p.leader != preferred if election_type == PREFERRED else p.leader < 0
    if not needed:
        return ErrorCode.ELECTION_NOT_NEEDED, None
    active = leader_acceptor(image, p)
    record = PartitionChangeRecord(partition_id=p.partition_id, topic_id=p.topic_id)
    if election_type == PREFERRED:
        if preferred in p.isr and active(preferred):
            record.leader = preferred
            if p.last_known_elr:
                record.last_known_elr = []
            return 0, record
        return ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, None
    for r in p.replicas:
        if r in p.isr and active(r):
            record.leader = r
            return 0, record
    if unclean_leader(p, record, active) is not None:
        return 0, record
    return ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, None


def elect_leaders(image, election_type: int, wanted):
    """``wanted``: ``[(topic, [partition ids])]``, or None for every partition.
    Returns ``(results, records)``: results are ``[(topic, [(partition, error)])]``."""
    pv = partition_record_version(image.metadata_version() or 0)
    results, records = [], []
    everything = wanted is None
    if everything:
        wanted = [(t.name, sorted(t.partitions)) for t in image.topics]
    for name, ids in wanted:
        topic = image.topics.by_name.get(name)
        out = []
        for pid in ids:
            p = topic.partitions.get(pid) if topic is not None else None
            if p is None:
                out.append((pid, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            error, record = elect(image, p, election_type)
            if record is not None:
                records.append((record, pv))
            if not (everything and error == ErrorCode.ELECTION_NOT_NEEDED):
                out.append((pid, error))
        if out or not everything:
            results.append((name, out))
    return results, records


def imbalanced(image, limit: int = MAX_ELECTIONS_PER_IMBALANCE) -> list:
    """PartitionChangeRecords moving up to ``limit`` partitions back to their preferred
    leader (the periodic task run every ``leader.imbalance.check.interval.seconds``)."""
    return _elect_up_to(image, (p for _, p in image.topics.partitions()
                                if p.replicas and p.leader != p.replicas[0]), PREFERRED, limit)


def leaderless_unclean(image, limit: int = MAX_ELECTIONS_PER_IMBALANCE) -> list:
    """PartitionChangeRecords electing leaders, uncleanly if need be, for up to ``limit``
    leaderless partitions of topics with unclean election enabled (the periodic task
    run every ``unclean.leader.election.interval.ms``)."""
    return _elect_up_to(image, (p for t, p in image.topics.partitions_of(NO_LEADER)
                                if unclean_enabled(image, t.name)), UNCLEAN, limit)


def _elect_up_to(image, partitions, election, limit: int) -> list:
    pv = partition_record_version(image.metadata_version() or 0)
    out = []
    for p in partitions:
        _, record = elect(image, p, election)
        if record is not None:
            out.append((record, pv))
            if len(out) >= limit:
                break
    return out
