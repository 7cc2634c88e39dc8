"""Who may become a partition's leader (Kafka's ``ReplicationControlManager
.LeaderAcceptor``): a broker the caller's rule accepts (by default ``isActive``:
registered, unfenced, not shutting down) whose registration has the partition's
directory for that replica online (``ClusterControlManager.hasOnlineDir``, i.e.
``BrokerRegistration.has_online_dir``). Every election goes through it: ElectLeaders
and the periodic ones, AlterPartition, a reassignment's completion or cancel, and the
moves when a broker is fenced, shuts down, comes back or loses a log directory. A new
topic's first leaders are only checked for ``isActive``, as in Kafka.

Elections run over every partition, so the check works on ints: the image's cached
active ids and online directories (``BrokersImage.leading``).
"""
from __future__ import annotations

from wire.uuids import LOST_DIR, UNASSIGNED_DIR

_ALWAYS_ONLINE = UNASSIGNED_DIR.int  # and MIGRATING (0)
_LOST = LOST_DIR.int


def leader_acceptor(image, p, ok=None):
    """``accept(broker_id) -> bool`` for partition ``p``; ``ok(broker_id)`` replaces
    ``isActive`` (e.g. excluding a broker being fenced, or adding one coming back)."""
    active, online = image.brokers.leading()
    ok = ok or active.__contains__
    replicas, dirs = p.replicas, p.directories

    def accept(broker_id: int) -> bool:
        if not ok(broker_id) or broker_id not in online:
            return False
        if not dirs or broker_id not in replicas:
            return True  # no directory recorded (before 3.7): MIGRATING
        d = dirs[replicas.index(broker_id)].int
        if d <= _ALWAYS_ONLINE:
            return True
        allowed = online[broker_id]
        return d != _LOST and (allowed is None or d in allowed)
    return accept
