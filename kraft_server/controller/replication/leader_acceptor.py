"""Who may become a partition's leader (Kafka's ``ReplicationControlManager
.LeaderAcceptor``): a broker the caller's rule accepts (by default ``isActive``:
registered, unfenced, not shutting down) whose registration has the partition's
directory for that replica online (``ClusterControlManager.hasOnlineDir``). Every
election goes through it: ElectLeaders and the periodic ones, AlterPartition, a
reassignment's completion or cancel, and the moves when a broker is fenced, shuts
down, comes back or loses a log directory. A new topic's first leaders are only
checked for ``isActive``, as in Kafka.
"""
from __future__ import annotations

from ..image_brokers import MIGRATING_DIR


def directory_of(p, broker_id: int):
    """``PartitionRegistration.directory``: the replica's directory; MIGRATING when the
    partition records none (written before 3.7) or ``broker_id`` is not a replica."""
    dirs = p.directories
    if not dirs:
        return MIGRATING_DIR
    try:
        return dirs[p.replicas.index(broker_id)]
    except (ValueError, IndexError):
        return MIGRATING_DIR


def leader_acceptor(image, p, ok=None):
    """``accept(broker_id) -> bool`` for partition ``p``; ``ok`` replaces ``isActive``
    (e.g. excluding a broker being fenced)."""
    ok = ok or image.brokers.is_active

    def accept(broker_id: int) -> bool:
        if not ok(broker_id):
            return False
        b = image.brokers.get(broker_id)
        return b is not None and b.has_online_dir(directory_of(p, broker_id))
    return accept
