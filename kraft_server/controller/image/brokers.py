"""Broker registrations in the metadata image (Kafka's ``ClusterImage`` brokers and
``BrokerRegistration``), replayed from RegisterBrokerRecord (v0-4),
BrokerRegistrationChangeRecord (v0-3), UnregisterBrokerRecord and the legacy
Fence/UnfenceBrokerRecord.

A registration keeps its RegisterBrokerRecord with the current Fenced,
InControlledShutdown, LogDirs and CordonedLogDirs, so a snapshot writes it back as
one record carrying the broker's present state (``BrokerRegistration.toRecord``).
``register_offset`` is the offset the registration was replayed at (for a
snapshot-loaded one, the snapshot's last offset): a broker is caught up once its
CurrentMetadataOffset reaches it.
"""
from __future__ import annotations

import copy
import logging
from dataclasses import dataclass

from wire.messages import RegisterBrokerRecord
from wire.uuids import MIGRATING_DIR, UNASSIGNED_DIR, LOST_DIR

log = logging.getLogger(__name__)

FENCE = 1  # BrokerRegistrationFencingChange
UNFENCE = -1
IN_CONTROLLED_SHUTDOWN = 1  # BrokerRegistrationInControlledShutdownChange
# DirectoryId's reserved ids: MIGRATING (no directory recorded yet, pre-3.7), UNASSIGNED
# (placed on a broker with several, not yet assigned) and LOST (offline)


@dataclass
class BrokerRegistration:
    record: RegisterBrokerRecord  # current state (fenced etc. kept up to date)
    register_offset: int

    @property
    def broker_id(self) -> int:
        return self.record.broker_id

    @property
    def epoch(self) -> int:
        return self.record.broker_epoch

    @property
    def fenced(self) -> bool:
        return self.record.fenced

    @property
    def in_controlled_shutdown(self) -> bool:
        return self.record.in_controlled_shutdown

    @property
    def active(self) -> bool:
        """Kafka's ``isActive``: registered, unfenced and not shutting down."""
        return not self.record.fenced and not self.record.in_controlled_shutdown

    @property
    def rack(self) -> str | None:
        return self.record.rack

    def has_online_dir(self, dir_id) -> bool:
        """``BrokerRegistration.hasOnlineDir`` (``DirectoryId.isOnline``): MIGRATING and
        UNASSIGNED always, LOST never, any when the registration lists no directory,
        else one it lists (its LogDirs are the online ones)."""
        if dir_id == MIGRATING_DIR or dir_id == UNASSIGNED_DIR:
            return True
        if dir_id == LOST_DIR:
            return False
        dirs = self.record.log_dirs
        return not dirs or dir_id in dirs

    def endpoint(self, listener: str):
        for ep in self.record.end_points:
            if ep.name == listener:
                return ep
        return None


def register_broker_record_version(metadata_version: int) -> int:
    """``MetadataVersion.registerBrokerRecordVersion`` (4.3.1: v4 from 4.3-IV0)."""
    if metadata_version >= 30:
        return 4
    if metadata_version >= 17:
        return 3
    if metadata_version >= 8:
        return 2
    return 1 if metadata_version >= 7 else 0


class BrokersImage:
    def __init__(self) -> None:
        self.brokers: dict[int, BrokerRegistration] = {}
        self._leading = None  # (active ids, {id: online dir ints or None}), rebuilt after a change

    def get(self, broker_id: int) -> BrokerRegistration | None:
        return self.brokers.get(broker_id)

    def __iter__(self):
        return iter(self.brokers[i] for i in sorted(self.brokers))

    def __len__(self) -> int:
        return len(self.brokers)

    # -- replay --------------------------------------------------------------------------
    def register(self, r: RegisterBrokerRecord, offset: int) -> None:
        self.brokers[r.broker_id] = BrokerRegistration(copy.copy(r), offset)
        self._leading = None

    def unregister(self, broker_id: int, epoch: int) -> None:
        b = self.brokers.get(broker_id)
        if b is None or b.epoch != epoch:
            log.warning("UnregisterBrokerRecord for broker %d epoch %d does not match the image",
                        broker_id, epoch)
            return
        del self.brokers[broker_id]
        self._leading = None

    def change(self, r) -> None:
        """A BrokerRegistrationChangeRecord."""
        b = self._matching(r.broker_id, r.broker_epoch)
        if b is None:
            return
        self._leading = None
        rr = b.record = copy.copy(b.record)
        if r.fenced == FENCE:
            rr.fenced = True
        elif r.fenced == UNFENCE:
            rr.fenced = False
        if r.in_controlled_shutdown == IN_CONTROLLED_SHUTDOWN:
            rr.in_controlled_shutdown = True
        if r.log_dirs:
            rr.log_dirs = tuple(r.log_dirs)
        if r.cordoned_log_dirs is not None:
            rr.cordoned_log_dirs = tuple(r.cordoned_log_dirs)

    def set_fenced(self, broker_id: int, epoch: int, fenced: bool) -> None:
        """The legacy FenceBrokerRecord / UnfenceBrokerRecord (replay only)."""
        b = self._matching(broker_id, epoch)
        if b is not None:
            self._leading = None
            b.record = copy.copy(b.record)
            b.record.fenced = fenced

    def _matching(self, broker_id: int, epoch: int) -> BrokerRegistration | None:
        b = self.brokers.get(broker_id)
        if b is None or b.epoch != epoch:
            log.warning("change for broker %d epoch %d does not match the image", broker_id, epoch)
            return None
        return b

    # -- questions -----------------------------------------------------------------------
    def is_active(self, broker_id: int) -> bool:
        b = self.brokers.get(broker_id)
        return b is not None and b.active

    def leading(self):
        """``(active ids, {broker id: its online directories as ints, or None for any})``
        for every registered broker: what the leader acceptor asks for each candidate
        (``replication/leader_acceptor.py``), kept until the next broker change."""
        if self._leading is None:
            self._leading = (frozenset(i for i, b in self.brokers.items() if b.active),
                             {i: frozenset(d.int for d in b.record.log_dirs) if b.record.log_dirs else None
                              for i, b in self.brokers.items()})
        return self._leading

    def owner_of_dir(self, dir_id) -> int | None:
        for b in self.brokers.values():
            if dir_id in b.record.log_dirs:
                return b.broker_id
        return None

    def snapshot_records(self, metadata_version: int):
        """``(record, version)`` per broker, by id."""
        version = register_broker_record_version(metadata_version)
        return [(b.record, version) for b in self]
