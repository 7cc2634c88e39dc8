"""Broker registration and heartbeats as pure functions over the image (Kafka's
``ClusterControlManager.registerBroker``, ``BrokerHeartbeatManager
.calculateNextBrokerState`` and ``ReplicationControlManager.processBrokerHeartbeat``).

Each returns the records to write (``(record, version)`` pairs, one atomic batch)
and what to answer; the caller proposes them and answers after commit.

States (``BrokerControlState``): FENCED, UNFENCED, CONTROLLED_SHUTDOWN (unfenced,
shutting down) and SHUTDOWN_NOW (fenced, may exit). Transitions write:

* unfence: BrokerRegistrationChangeRecord v0 {Fenced=-1}, then a PartitionChangeRecord
  for every leaderless partition the broker can now lead;
* fence (and SHUTDOWN_NOW): PartitionChangeRecords taking the broker out of the ISRs
  it is in, then BrokerRegistrationChangeRecord v0 {Fenced=1}; at most
  ``MOVES_PER_WRITE`` changes a write, the rest in later writes;
* controlled shutdown: BrokerRegistrationChangeRecord v1 {InControlledShutdown=1},
  then the same ISR/leader moves;
* MV >= 3.7-IV2: OfflineLogDirs the registration still lists move the broker out of
  the ISRs of its replicas there, then a v2 record with the directories left
  (``replication/offline_dirs.py``);
* MV >= 4.3-IV0: a v3 record with the heartbeat's CordonedLogDirs when they differ
  from the registration's (so each broker's first RECOVERY heartbeat writes one).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from enum import Enum

from wire.errors import ErrorCode
from wire.messages import BrokerRegistrationChangeRecord, RegisterBrokerRecord, UnregisterBrokerRecord
from wire.messages.register_broker_record import BrokerEndpoint, BrokerFeature

from ..image.brokers import FENCE, IN_CONTROLLED_SHUTDOWN, UNFENCE, register_broker_record_version
from ..image.broker_index import NO_LEADER
from ..image.topics import partition_record_version
from ..replication.offline_dirs import offline_dirs_records
from ..replication.partition_change import broker_removed, broker_returned, broker_unclean_shutdown, elr_enabled
from wire.uuids import MIGRATING_DIR, UNASSIGNED_DIR, LOST_DIR

METADATA_VERSION = "metadata.version"
CORDONED_DIRS_MIN_MV = 30  # 4.3-IV0
DIRECTORY_ASSIGNMENT_MIN_MV = 17  # 3.7-IV2
# A controlled shutdown or a fencing moves at most this many ISRs and leaderships in
# one write (a few tens of ms of the loop); Kafka writes them all in one event.
MOVES_PER_WRITE = 4000
# DirectoryId.MIGRATING, UNASSIGNED, LOST
RESERVED_DIRS = frozenset({MIGRATING_DIR, UNASSIGNED_DIR, LOST_DIR})


class State(Enum):
    FENCED = "FENCED"
    UNFENCED = "UNFENCED"
    CONTROLLED_SHUTDOWN = "CONTROLLED_SHUTDOWN"
    SHUTDOWN_NOW = "SHUTDOWN_NOW"

    @property
    def fenced(self) -> bool:
        return self in (State.FENCED, State.SHUTDOWN_NOW)


@dataclass
class Outcome:
    error: int = 0
    message: str | None = None
    records: list = field(default_factory=list)  # (record, version)
    epoch: int = -1  # registration: the broker epoch
    caught_up: bool = False  # heartbeat reply
    fenced: bool = True
    should_shut_down: bool = False
    next_state: State | None = None
    controlled_shutdown: bool = False  # entered CONTROLLED_SHUTDOWN: remember the batch end
    more_moves: bool = False  # the controlled shutdown or fencing has more partitions to move
    transition: bool = False  # the heartbeat changed the broker's state


# -- registration ---------------------------------------------------------------------

def registration_error(image, req, version: int, *, cluster_id: str, kraft_version: int,
                       session_valid) -> tuple[int, str] | None:
    """The first failing check of ``registerBroker``, or None. ``session_valid(id, epoch)``
    says whether the heartbeat tracker still holds a live session."""
    if req.cluster_id != cluster_id:
        return (ErrorCode.INCONSISTENT_CLUSTER_ID,
                f"Expected cluster ID {cluster_id}, but got cluster ID {req.cluster_id}")
    existing = image.brokers.get(req.broker_id)
    if existing is not None and existing.record.incarnation_id != req.incarnation_id \
            and session_valid(req.broker_id, existing.epoch):
        return (ErrorCode.DUPLICATE_BROKER_REGISTRATION,
                f"Another broker is registered with that broker id. "
                f"Broker {req.broker_id} is already registered with epoch {existing.epoch}")
    if version >= 1 and req.is_migrating_zk_broker:
        return (ErrorCode.BROKER_ID_NOT_REGISTERED,
                "Controller does not support registering ZK brokers.")
    mv = image.metadata_version() or 0
    if mv >= DIRECTORY_ASSIGNMENT_MIN_MV:
        dirs = list(req.log_dirs) if version >= 2 else []
        if not dirs:
            return ErrorCode.INVALID_REGISTRATION, "No directories specified in request"
        if any(d in RESERVED_DIRS for d in dirs):
            return ErrorCode.INVALID_REGISTRATION, "Reserved directory ID in request"
        if len(set(dirs)) != len(dirs):
            return ErrorCode.INVALID_REGISTRATION, "Duplicate directory ID in request"
        for d in dirs:
            owner = image.brokers.owner_of_dir(d)
            if owner is not None and owner != req.broker_id:
                return (ErrorCode.INVALID_REGISTRATION,
                        f"Broker {owner} is already registered with directory {d}")
    offered = {f.name: (f.min_supported_version, f.max_supported_version) for f in req.features}
    if METADATA_VERSION not in offered:
        return ErrorCode.INVALID_REGISTRATION, "Request features do not contain 'metadata.version'"
    finalized = dict(image.finalized_features())
    finalized["kraft.version"] = kraft_version
    for name, (lo, hi) in offered.items():
        level = finalized.get(name, 0)
        if not lo <= level <= hi:
            return (ErrorCode.UNSUPPORTED_VERSION,
                    f"Unable to register because the broker does not support finalized version "
                    f"{level} of {name}. The broker wants a version between {lo} and {hi}, inclusive.")
    for name, level in finalized.items():
        if level > 0 and name not in offered:
            return (ErrorCode.UNSUPPORTED_VERSION,
                    f"Unable to register because the broker does not support finalized version "
                    f"{level} of {name}. The broker wants a version between 0 and 0, inclusive.")
    return None


def register_record(req, version: int, epoch: int) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(
        broker_id=req.broker_id, is_migrating_zk_broker=False, incarnation_id=req.incarnation_id,
        broker_epoch=epoch,
        end_points=[BrokerEndpoint(name=l.name, host=l.host, port=l.port,
                                   security_protocol=l.security_protocol) for l in req.listeners],
        features=[BrokerFeature(name=f.name, min_supported_version=f.min_supported_version,
                                max_supported_version=f.max_supported_version) for f in req.features],
        rack=req.rack, fenced=True, in_controlled_shutdown=False,
        log_dirs=sorted(req.log_dirs, key=_uuid_order) if version >= 2 else [])


def _uuid_order(u: uuid.UUID):
    """``Uuid.compareTo``: signed most significant half, then signed least."""
    msb, lsb = u.int >> 64, u.int & ((1 << 64) - 1)
    return (msb - (1 << 64) if msb >> 63 else msb, lsb - (1 << 64) if lsb >> 63 else lsb)


def register(image, req, version: int, next_offset: int) -> Outcome:
    """Records for an accepted registration; the epoch is the batch's first offset."""
    mv = image.metadata_version() or 0
    rv = register_broker_record_version(mv)
    existing = image.brokers.get(req.broker_id)
    if existing is not None and existing.record.incarnation_id == req.incarnation_id:
        r = register_record(req, version, existing.epoch)
        r.fenced, r.in_controlled_shutdown = existing.fenced, existing.in_controlled_shutdown
        r.cordoned_log_dirs = existing.record.cordoned_log_dirs
        return Outcome(records=[(r, rv)], epoch=existing.epoch)
    # The shutdown records of the previous incarnation: clean when the broker names the
    # epoch it shut down cleanly in (v3+ PreviousBrokerEpoch); an unclean one also
    # leaves every ELR.
    clean = version >= 3 and existing is not None and existing.epoch == req.previous_broker_epoch
    if clean or not elr_enabled(image):
        changes = removal_changes(image, req.broker_id)
    else:
        changes = [c for c in (broker_unclean_shutdown(image, t.name, p, req.broker_id)
                               for t, p in image.topics.partitions_of(req.broker_id)) if c is not None]
    records = [(change, partition_record_version(mv)) for change in changes]
    return Outcome(records=records + [(register_record(req, version, next_offset), rv)],
                   epoch=next_offset)


# -- fencing ---------------------------------------------------------------------------

def removal_changes(image, broker_id: int, limit: int | None = None) -> list:
    """PartitionChangeRecords taking ``broker_id`` out of every ISR (and leadership),
    the first ``limit`` of them when one is given."""
    out = []
    for topic, p in image.topics.partitions_of(broker_id):
        change = broker_removed(image, topic.name, p, broker_id)
        if change is not None:
            out.append(change)
            if len(out) == limit:
                break
    return out


def removal_step(image, broker_id: int) -> tuple[list, bool]:
    """One bounded step: ``broker_id`` out of at most ``MOVES_PER_WRITE`` ISRs and
    leaderships, and whether more are left."""
    mv = image.metadata_version() or 0
    changes = removal_changes(image, broker_id, MOVES_PER_WRITE)
    return [(c, partition_record_version(mv)) for c in changes], len(changes) == MOVES_PER_WRITE


def fence_records(image, broker_id: int) -> tuple[list, bool]:
    """The first write of a fencing and whether more steps follow: at most
    ``MOVES_PER_WRITE`` partition changes, then BrokerRegistrationChangeRecord
    {Fenced=1} (Kafka's ``handleBrokerFenced`` order, which writes every change in
    that one batch). The rest go in later writes at the queue's tail
    (``removal_step`` from ``BrokerRequests.fence_moves``). Safe to split: no leader
    or ISR member is chosen among fenced brokers, so a fenced broker left in some
    ISRs is only passed over until its step; a step that finds it unfenced again or
    re-registered (another epoch) stops, as that state is then the broker's own."""
    b = image.brokers.get(broker_id)
    out, more = removal_step(image, broker_id)
    out.append((BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=b.epoch, fenced=FENCE), 0))
    return out, more


def unfence_records(image, broker_id: int) -> list:
    b = image.brokers.get(broker_id)
    mv = image.metadata_version() or 0
    out = [(BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=b.epoch, fenced=UNFENCE), 0)]
    for _, p in image.topics.partitions_of(NO_LEADER):  # only a leaderless one changes
        change = broker_returned(image, p, broker_id)
        if change is not None:
            out.append((change, partition_record_version(mv)))
    return out


def controlled_shutdown_records(image, broker_id: int) -> tuple[list, bool]:
    """The records of one step of a controlled shutdown and whether more steps follow:
    InControlledShutdown (the first time), then the broker out of at most
    ``MOVES_PER_WRITE`` ISRs and leaderships. The rest go in later writes
    (``BrokerRequests.shutdown_moves``), each at the queue's tail, so that other
    writes are not held behind 300,000 leaderships moving at once."""
    b = image.brokers.get(broker_id)
    out = []
    if not b.in_controlled_shutdown:
        out.append((BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=b.epoch,
                                                   in_controlled_shutdown=IN_CONTROLLED_SHUTDOWN), 1))
    # the image may still count the broker active: removal_changes excludes it explicitly
    moves, more = removal_step(image, broker_id)
    return out + moves, more


def unregister_records(image, broker_id: int) -> list:
    """UnregisterBroker: the broker leaves every ISR and ELR (as after an unclean
    shutdown), then UnregisterBrokerRecord v0. Empty when it is not registered."""
    b = image.brokers.get(broker_id)
    if b is None:
        return []
    mv = image.metadata_version() or 0
    out = [(c, partition_record_version(mv)) for c in (
        broker_unclean_shutdown(image, t.name, p, broker_id) for t, p in image.topics.partitions_of(broker_id))
        if c is not None]
    out.append((UnregisterBrokerRecord(broker_id=broker_id, broker_epoch=b.epoch), 0))
    return out


def leads_any(image, broker_id: int) -> bool:
    return image.topics.leads_any(broker_id)


# -- heartbeat ---------------------------------------------------------------------------

def current_state(b) -> State:
    if b.fenced:
        return State.FENCED
    return State.CONTROLLED_SHUTDOWN if b.in_controlled_shutdown else State.UNFENCED


def heartbeat(image, req, version: int, *, shutdown_offset: int | None,
              lowest_active_offset: int) -> Outcome:
    """``shutdown_offset``: the end of the batch that put the broker in controlled
    shutdown (None when this controller did not see it happen); ``lowest_active_offset``: the lowest metadata offset
    reported by the active brokers other than this one."""
    b = image.brokers.get(req.broker_id)
    if b is None:
        return Outcome(error=ErrorCode.STALE_BROKER_EPOCH,
                       message=f"Broker {req.broker_id} sent a heartbeat before registration.")
    if b.epoch != req.broker_epoch:
        return Outcome(error=ErrorCode.STALE_BROKER_EPOCH,
                       message=f"Expected broker epoch {b.epoch}, but got broker epoch {req.broker_epoch}")
    caught_up = req.current_metadata_offset >= b.register_offset
    current = current_state(b)
    if current is State.CONTROLLED_SHUTDOWN and shutdown_offset is None:
        # Kafka keeps the controlled-shutdown offset in the active controller's memory
        # only (BrokerHeartbeatManager, rebuilt on activation): a controller that became
        # active since sees the broker as UNFENCED, and a WantShutDown starts the
        # controlled shutdown again (its InControlledShutdown record is not repeated).
        current = State.UNFENCED
    nxt = current
    if current is State.FENCED:
        if req.want_shut_down:
            nxt = State.SHUTDOWN_NOW
        elif not req.want_fence and caught_up:
            nxt = State.UNFENCED
    elif current is State.UNFENCED:
        if req.want_fence:
            nxt = State.SHUTDOWN_NOW if req.want_shut_down else State.FENCED
        elif req.want_shut_down:
            nxt = State.CONTROLLED_SHUTDOWN if leads_any(image, b.broker_id) else State.SHUTDOWN_NOW
    elif current is State.CONTROLLED_SHUTDOWN:
        if not leads_any(image, b.broker_id) and (shutdown_offset is None
                                                   or shutdown_offset <= lowest_active_offset):
            nxt = State.SHUTDOWN_NOW
    records, more = [], False
    if nxt is not current:
        if nxt in (State.FENCED, State.SHUTDOWN_NOW):
            records, more = fence_records(image, b.broker_id)
        elif nxt is State.UNFENCED:
            records = unfence_records(image, b.broker_id)
        elif nxt is State.CONTROLLED_SHUTDOWN:
            records, more = controlled_shutdown_records(image, b.broker_id)
    mv = image.metadata_version() or 0
    if mv >= DIRECTORY_ASSIGNMENT_MIN_MV and version >= 1 and req.offline_log_dirs:
        records = records + offline_dirs_records(image, b.broker_id, set(req.offline_log_dirs))
    cordoned = req.cordoned_log_dirs if version >= 2 else None
    if mv >= CORDONED_DIRS_MIN_MV and cordoned is not None \
            and list(cordoned) != (list(b.record.cordoned_log_dirs) if b.record.cordoned_log_dirs is not None else None):
        records.append((BrokerRegistrationChangeRecord(broker_id=b.broker_id, broker_epoch=b.epoch,
                                                       cordoned_log_dirs=list(cordoned)), 3))
    return Outcome(records=records, caught_up=caught_up, fenced=nxt.fenced,
                   should_shut_down=nxt is State.SHUTDOWN_NOW, next_state=nxt,
                   controlled_shutdown=nxt is State.CONTROLLED_SHUTDOWN and nxt is not current,
                   transition=nxt is not current, more_moves=more)
