"""``GroupService``: the coordinator state, the offset store and the clock, as the group
API handlers (one module per API in this package) and the node's loop see them.

- Handlers call the coordinator with ``service.now()`` and answer on the call; after each
  request ``service.touched()`` wakes the loop so that a changed deadline is seen.
- The loop calls ``service.poll(now_ms)`` every cycle (``shell/driver.py``): it runs the
  coordinator's timers and returns the next deadline. Between requests and before that
  deadline nothing can be due, so the groups are not walked on every cycle.
- A group that is Empty and has no committed offsets is forgotten (Kafka's cleanup does
  the same, later); groups with offsets outlive their members and a restart, until
  their offsets expire (``retention.py``).

Offsets are per node: each node of a quorum keeps its own file and every node names
itself the coordinator of every group (see docs/metadata-topic.md, "Consumer groups").
"""
from __future__ import annotations

import logging

from .coordinator import GroupCoordinator, GroupSettings
from .group import GroupState
from .offset_store import OffsetStore
from .retention import expire_offsets

log = logging.getLogger(__name__)


class GroupService:
    def __init__(self, store: OffsetStore, clock, settings: GroupSettings = GroupSettings(),
                 coordinator: GroupCoordinator | None = None):
        self.store = store
        self.clock = clock
        self.settings = settings
        self.coordinator = coordinator or GroupCoordinator(settings)
        self.wake = lambda: None  # set by the shell: run a loop cycle soon
        self._changed = True  # a request came in since the last tick
        self._next: int | None = None  # the earliest deadline as of the last tick
        now = clock()
        for group_id in store.groups():  # groups known only by their offsets start Empty
            self.coordinator.ensure_group(group_id, now)
        self._next_retention = now + settings.offsets_retention_check_interval_ms

    def now(self) -> int:
        return self.clock()

    def touched(self) -> None:
        self._changed = True
        self.wake()

    def poll(self, now_ms: int) -> int | None:
        if now_ms >= self._next_retention:
            self._next_retention = now_ms + self.settings.offsets_retention_check_interval_ms
            if expire_offsets(self, now_ms):
                self._changed = True
        if self._changed or (self._next is not None and now_ms >= self._next):
            self._changed = False
            self._next = self.coordinator.tick(now_ms)
            self._prune()
        return self._next if self._next is not None and self._next < self._next_retention \
            else self._next_retention

    def _prune(self) -> None:
        groups = self.coordinator.groups
        for group_id in [g for g, grp in groups.items()
                         if grp.state is GroupState.EMPTY and not grp.members
                         and not grp.pending_members and not self.store.get(g)]:
            del groups[group_id]

    def close(self) -> None:
        self.store.close()


def client_host(call) -> str:
    """The client's address as Kafka reports it (``/127.0.0.1``)."""
    return f"/{call.host}" if call.host else ""
