"""What the active controller writes (Kafka's ``QuorumController`` on claiming
leadership, and its periodic tasks). What the Raft leader writes before it, at the
start of its epoch, is in ``raft/start_of_epoch.py``.

* **Activation** waits until the image has replayed everything committed before
  this epoch (Kafka's raft client tells the listener it leads only once it has
  caught up to the epoch start offset). On a log with no metadata yet it proposes
  the bootstrap records in one batch, as ``ActivationRecordsGenerator.recordsForEmptyLog``
  does at a metadata.version with KIP-868 transactions: BeginTransactionRecord
  ("Bootstrap records"), the FeatureLevelRecords of ``bootstrap.checkpoint``,
  a cluster-level ``min.insync.replicas`` ConfigRecord when ELR is enabled, and
  EndTransactionRecord.
* **Self-registration**: a RegisterControllerRecord for this node when the image has
  none or a different one (a new incarnation after every start), once
  metadata.version is 3.7-IV0 (15) or later. In Kafka every controller sends the
  ControllerRegistration RPC (``ControllerRegistrationManager``) and the active one
  writes the record, itself included; here the leader writes its own record
  directly and the others send the RPC (``registration.py``).
* **NoOpRecord** every ``metadata.max.idle.interval.ms`` while active (0 disables),
  the ``writeNoOpRecord`` task, so the high watermark moves on an idle quorum.

A write is "in flight" until the image replays past its last offset; nothing is
proposed twice meanwhile. Losing leadership forgets it (the next leader decides).
"""
from __future__ import annotations

import logging

from .image import records as rec
from .cluster.registration import CONTROLLER_REGISTRATION_MIN_MV
from .write_queue import NotProposed, propose

log = logging.getLogger(__name__)

ELR_FEATURE = "eligible.leader.replicas.version"


def leads(core) -> bool:
    """The Raft leader, not resigning (a shutdown's EndQuorumEpoch on its way)."""
    return core.leads()


class ActiveDuties:
    def __init__(self, node_id: int, bootstrap_levels: dict[str, int], registration,
                 idle_interval_ms: int, min_insync_replicas: int = 1) -> None:
        self.node_id = node_id
        self.bootstrap_levels = dict(bootstrap_levels)
        self.registration = registration  # a RegisterControllerRecord, or None
        self.idle_interval_ms = idle_interval_ms
        self.min_insync_replicas = min_insync_replicas
        self.epoch = -1  # the epoch we are (or were last) active in
        self.active = False
        self.inflight_end = -1  # last offset of our newest uncommitted write
        self.next_noop_ms: int | None = None
        self.stats = {"bootstrap": 0, "registrations": 0, "noops": 0}
        self._registration_checked = None
        self.bootstrap_extra: list[bytes] = []  # bootstrap.checkpoint's other records (--add-scram)

    def is_active(self, core) -> bool:
        """The active controller: the Raft leader whose image caught up with its epoch."""
        return self.active and self.epoch == core.epoch and leads(core)

    # -- the record sets --------------------------------------------------------------
    def bootstrap_records(self) -> list[bytes]:
        levels = self.bootstrap_levels
        out = [rec.begin_transaction("Bootstrap records"),
               rec.feature_level("metadata.version", levels["metadata.version"])]
        out += [rec.feature_level(n, lvl) for n, lvl in sorted(levels.items())
                if n not in ("metadata.version", "kraft.version") and lvl > 0]
        if levels.get(ELR_FEATURE, 0) > 0:
            out.append(rec.config(rec.BROKER_RESOURCE, "", "min.insync.replicas",
                                  str(self.min_insync_replicas)))
        out += self.bootstrap_extra
        out.append(rec.end_transaction())
        return out

    # -- one poll ---------------------------------------------------------------------------
    def poll(self, core, image, next_offset: int, now_ms: int) -> bool:
        """Propose what is due; True when something was proposed."""
        if not leads(core):
            self.active = False
            self.next_noop_ms = None
            return False
        if core.epoch != self.epoch:
            self.epoch, self.active, self.inflight_end = core.epoch, False, -1
        if not self.active:
            if core.high_watermark is None or next_offset < core.epoch_start_offset():
                return False  # not caught up with what earlier epochs committed
            self.active = True
            log.info("[Controller %d] active in epoch %d at offset %d", self.node_id, core.epoch,
                     next_offset)
            if self.idle_interval_ms > 0:
                self.next_noop_ms = now_ms + self.idle_interval_ms
        if self.inflight_end >= next_offset:
            return self._maybe_noop(core, now_ms)
        if not image.has_metadata:
            if "metadata.version" not in self.bootstrap_levels:
                return False  # nothing to bootstrap from (an unformatted feature set)
            return self._write(core, self.bootstrap_records(), now_ms, "bootstrap", own_batch=True)
        mv = image.metadata_version() or 0
        if self.registration is not None and mv >= CONTROLLER_REGISTRATION_MIN_MV:
            seen = (image.serial, image.registrations_replayed)
            if seen != self._registration_checked:
                if image.controllers.get(self.node_id) != self.registration:
                    return self._write(core, [rec.register_controller(self.registration)], now_ms,
                                       "registrations")
                self._registration_checked = seen  # ours is in the image: no need to look again
        return self._maybe_noop(core, now_ms)

    def _maybe_noop(self, core, now_ms: int) -> bool:
        if self.next_noop_ms is None or now_ms < self.next_noop_ms:
            return False
        self.next_noop_ms = now_ms + self.idle_interval_ms
        return self._write(core, [rec.no_op()], now_ms, "noops", track=False)

    def _write(self, core, values: list[bytes], now_ms: int, what: str, own_batch: bool = False,
               track: bool = True) -> bool:
        proposal = propose(core, values, now_ms, own_batch)  # bootstrap: its own batch, as Kafka's
        if proposal is NotProposed.NOT_LEADER:
            self.active = False
            return False
        if proposal is NotProposed.BACKLOG_FULL:
            return False  # the next poll tries again
        _, last = proposal
        if track:
            self.inflight_end = max(self.inflight_end, last)
        self.stats[what] += 1
        return True

    def deadline(self) -> int | None:
        return self.next_noop_ms if self.active else None
