"""Replicas whose log directory went offline, pure (Kafka's
``ReplicationControlManager.handleDirectoriesOffline`` and the offline-directory step
of ``handleAssignReplicasToDirs``).

* A heartbeat's OfflineLogDirs (MV >= 3.7-IV2): for each of them the registration
  still lists (in its order), the broker leaves the ISR, and so the leadership, of
  every partition whose replica on it lives in that directory, as when it is fenced;
  then a BrokerRegistrationChangeRecord v2 carries the directories left online. Later
  heartbeats naming the same directories change nothing. (An empty LogDirs means "no
  change" on replay, in Kafka as here.)
* AssignReplicasToDirs naming a directory the registration does not have online: after
  the Directories changes, the broker leaves the ISR of each partition so assigned.

Both are computed on the image before the batch, as Kafka does. The leader acceptor
(``leader_acceptor.py``) then keeps such replicas from being elected.
"""
from __future__ import annotations

import logging

from wire.messages import BrokerRegistrationChangeRecord
from wire.uuids import uuid_to_str

from ..image.topics import partition_record_version
from .partition_change import broker_removed

log = logging.getLogger(__name__)


def _in_dir(p, broker_id: int, d) -> bool:
    """Whether ``broker_id``'s replica of ``p`` lives in directory ``d``."""
    return broker_id in p.replicas and bool(p.directories) and p.directories[p.replicas.index(broker_id)] == d


def _removals(image, broker_id: int, partitions) -> list:
    pv = partition_record_version(image.metadata_version() or 0)
    out = []
    for topic_name, p in partitions:
        change = broker_removed(image, topic_name, p, broker_id)
        if change is not None:
            out.append((change, pv))
    return out


def offline_dirs_records(image, broker_id: int, offline) -> list:
    """``(record, version)`` pairs for a heartbeat reporting ``offline`` directories."""
    b = image.brokers.get(broker_id)
    dirs = list(b.record.log_dirs or ())
    gone = [d for d in dirs if d in offline]
    if not gone:
        return []
    out = []
    for d in gone:
        out += _removals(image, broker_id, ((t.name, p) for t, p in image.topics.partitions()
                                            if _in_dir(p, broker_id, d)))
    left = [d for d in dirs if d not in offline]
    log.warning("[Controller] directories %s of broker %d marked offline, remaining: %s",
                [uuid_to_str(d) for d in gone], broker_id, [uuid_to_str(d) for d in left])
    out.append((BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=b.epoch, log_dirs=left), 2))
    return out


def offline_assignment_records(image, broker_id: int, partitions) -> list:
    """``partitions``: ``(topic name, partition)`` just assigned to an offline directory."""
    return _removals(image, broker_id, partitions)
