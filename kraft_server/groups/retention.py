"""Offset retention, as Kafka's ``offsets.retention.minutes`` (KIP-211): committed offsets
of a group that has been Empty for the retention period are deleted (durably); a group
that never had members (a "simple" group: admin or ``assign()`` commits) loses each
offset that long after it was committed. Groups with members keep their offsets (the
one topic here is the one they consume). Runs every
``offsets.retention.check.interval.ms`` from ``GroupService.poll``.

A group known only from the offset file at start counts as Empty since the start:
that state timestamp is not persisted, so a restart can only lengthen retention.
"""
from __future__ import annotations

import logging

from .group import GroupState

log = logging.getLogger(__name__)


def expired(group, offsets, now: int, retention_ms: int) -> list:
    """The partitions of ``offsets`` that have expired."""
    if group is not None and group.state is not GroupState.EMPTY:
        return []
    if group is not None and group.protocol_type:  # a consumer group, Empty since state_since
        return list(offsets) if now - group.state_since >= retention_ms else []
    return [tp for tp, c in offsets.items() if now - c.commit_timestamp >= retention_ms]


def expire_offsets(service, now: int) -> int:
    """Delete expired offsets; returns how many partitions went."""
    removed = 0
    for group_id in service.store.groups():
        doomed = expired(service.coordinator.group(group_id), service.store.get(group_id), now,
                         service.settings.offsets_retention_ms)
        if not doomed:
            continue
        try:
            service.store.delete(group_id, doomed)
        except OSError as exc:
            log.error("group %s: cannot expire offsets: %s", group_id, exc)
            continue
        removed += len(doomed)
        log.info("group %s: %d committed offsets expired", group_id, len(doomed))
    return removed
