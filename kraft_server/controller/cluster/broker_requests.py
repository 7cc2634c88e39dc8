"""BrokerRegistration (62) and BrokerHeartbeat (63) on the active controller: the
write-queue operations built from a request (decisions in ``broker_lifecycle.py``),
the session-expiry fencing task (``broker_sessions.py``) and fencing on evidence of
a crash (``broker_liveness.py``); both fence through ``fence_operation``.

Controlled shutdowns and fencings move a broker's partitions a bounded step a write
(``broker_lifecycle.MOVES_PER_WRITE``); each further step is an operation of its own
at the queue's tail, so other writes go between them. The steps of a fencing are
found again from the image by a newly active controller (a fenced broker still in
ISRs); those of a controlled shutdown start again on the broker's next WantShutDown.

A heartbeat touches its (id, epoch) session before it is queued, as Kafka's
``ControllerApis`` does; the answer reports the state after the batch commits.
"""
from __future__ import annotations

import logging

from wire.messages import BrokerHeartbeatResponse, BrokerRegistrationResponse

from . import broker_lifecycle as lifecycle
from .broker_liveness import DeathEvidence
from .broker_sessions import BrokerSessions
from ..write_queue import Write

log = logging.getLogger(__name__)

EXPIRED_RECHECK_MS = 10


def registration_error_response(code: int) -> BrokerRegistrationResponse:
    return BrokerRegistrationResponse(throttle_time_ms=0, error_code=code, broker_epoch=-1)


def heartbeat_error_response(code: int) -> BrokerHeartbeatResponse:
    return BrokerHeartbeatResponse(throttle_time_ms=0, error_code=code, is_caught_up=False,
                                   is_fenced=True, should_shut_down=False)


class BrokerRequests:
    def __init__(self, cluster_id: str, session_timeout_ms: int, kraft_version,
                 fast_fencing: bool = True) -> None:
        self.cluster_id = cluster_id
        self.sessions = BrokerSessions(session_timeout_ms)
        self.evidence = DeathEvidence(fast_fencing)  # kraft.broker.fast.fencing.enable
        self.kraft_version = kraft_version  # () -> int, from the Raft core
        self.shutdown_offsets: dict[tuple[int, int], int] = {}
        self.moving: set[tuple[int, int]] = set()  # controlled shutdowns with partitions left to move
        self.fencing: set[tuple[int, int]] = set()  # fenced brokers with partitions maybe left to move
        self.active_epoch = -1

    # -- requests ---------------------------------------------------------------------
    def registration(self, body, version: int, now_ms_fn):
        def run(image, next_offset, now_ms):
            err = lifecycle.registration_error(
                image, body, version, cluster_id=self.cluster_id, kraft_version=self.kraft_version(),
                session_valid=lambda i, e: self.sessions.valid(i, e, now_ms))
            if err is not None:
                code, message = err
                log.info("[Controller] broker %d registration refused: %s", body.broker_id, message)
                return Write([], lambda: registration_error_response(code))
            outcome = lifecycle.register(image, body, version, next_offset)

            def written(first, last):
                if first != outcome.epoch and outcome.epoch == next_offset:
                    log.error("broker epoch %d differs from the batch start %d", outcome.epoch, first)
                self.sessions.touch(body.broker_id, outcome.epoch, now_ms_fn())
                log.info("[Controller] registering broker %d (incarnation %s) with epoch %d",
                         body.broker_id, body.incarnation_id, outcome.epoch)
            return Write(outcome.records,
                         lambda: BrokerRegistrationResponse(throttle_time_ms=0, error_code=0,
                                                            broker_epoch=outcome.epoch),
                         written)
        return run, registration_error_response

    def heartbeat(self, body, version: int, now_ms: int, connection=None):
        self.sessions.touch(body.broker_id, body.broker_epoch, now_ms)
        if self.active_epoch >= 0:
            self.evidence.heartbeat(connection, body.broker_id, body.broker_epoch)

        def run(image, next_offset, now):
            key = (body.broker_id, body.broker_epoch)
            outcome = lifecycle.heartbeat(
                image, body, version, shutdown_offset=self.shutdown_offsets.get(key),
                lowest_active_offset=self.sessions.lowest_active_offset(image, body.broker_id))
            if outcome.error:
                return Write([], lambda: BrokerHeartbeatResponse(
                    throttle_time_ms=0, error_code=outcome.error, is_caught_up=False, is_fenced=True,
                    should_shut_down=False))
            self.sessions.offsets[body.broker_id] = body.current_metadata_offset
            if outcome.controlled_shutdown and not outcome.records:
                self.shutdown_offsets[key] = next_offset - 1  # Kafka: the last written offset

            def written(first, last):
                if outcome.controlled_shutdown:
                    self.shutdown_offsets[key] = last
                if outcome.more_moves:
                    (self.fencing if outcome.fenced else self.moving).add(key)
                if outcome.transition:
                    log.info("[Controller] broker %d heartbeat: %s", body.broker_id, outcome.next_state.value)
            return Write(outcome.records,
                         lambda: BrokerHeartbeatResponse(
                             throttle_time_ms=0, error_code=0, is_caught_up=outcome.caught_up,
                             is_fenced=outcome.fenced, should_shut_down=outcome.should_shut_down),
                         written)
        return run, heartbeat_error_response

    def heartbeat_expired(self, image, body) -> None:
        """A heartbeat that timed out in the queue (Kafka's
        ``processExpiredBrokerHeartbeat``): with a current epoch, its metadata offset
        still counts."""
        b = image.brokers.get(body.broker_id)
        if b is not None and b.epoch == body.broker_epoch:
            self.sessions.offsets[body.broker_id] = body.current_metadata_offset
        log.error("[Controller] heartbeat from broker %d timed out in the controller's queue", body.broker_id)

    # -- the session-expiry task ----------------------------------------------------------
    def expiry(self, image, active: bool, epoch: int, now_ms: int):
        """A fence operation for one expired broker, or None; also (re)arms the task."""
        if not active:
            if self.active_epoch >= 0:
                self.evidence.reset()
            self.active_epoch = -1
            return None
        if self.active_epoch != epoch:
            self.active_epoch = epoch
            self.sessions.activate(image, now_ms)
            self.shutdown_offsets.clear()
            self.moving.clear()
            # a fencing the previous controller left half done (or any fenced broker:
            # a step that finds nothing to move writes nothing)
            self.fencing = {(b.broker_id, b.epoch) for b in image.brokers if b.fenced}
            self.evidence.reset()  # a new active controller probes only from what it sees
            return None
        if now_ms < self.sessions.next_check_ms:
            return None
        key = self.sessions.pop_expired(now_ms)
        self.sessions.next_check_ms = now_ms + EXPIRED_RECHECK_MS if key else self.sessions.next_check(now_ms)
        if key is None:
            return None
        return self.fence_operation(*key, "its session expired")

    def dead_broker(self):
        """A fence operation for a broker the evidence says crashed, or None. Its
        session goes too, as an expired one does: the next incarnation may register
        at once (DUPLICATE_BROKER_REGISTRATION needs a live session)."""
        key = self.evidence.pop_dead() if self.active_epoch >= 0 else None
        if key is None:
            return None
        self.sessions.contact.pop(key, None)
        return self.fence_operation(*key, "its connections closed and its listener refused a connection",
                                    only_active=True)

    def shutdown_moves(self):
        """The next step of a controlled shutdown that has partitions left to move (one
        write of at most ``MOVES_PER_WRITE``), or None. The broker is told to shut down
        once it leads nothing and the others have read the last step."""
        def step(image, key):
            b = image.brokers.get(key[0])
            if b is None or b.epoch != key[1] or b.fenced or not b.in_controlled_shutdown \
                    or key not in self.shutdown_offsets:
                return None
            return lifecycle.controlled_shutdown_records(image, key[0])

        def written(key, last):
            self.shutdown_offsets[key] = last
        return self._next_step(self.moving, step, written)

    def fence_moves(self, image):
        """The next step of a fencing that may have partitions left to move, or None.
        Waits until the image has indexed every partition by broker (``TopicsImage
        .warm``), so that a newly active controller does not decode them all at once."""
        if not image.topics.indexed():
            return None

        def step(image, key):
            b = image.brokers.get(key[0])
            if b is None or b.epoch != key[1] or not b.fenced:
                return None  # unfenced again, re-registered or gone: nothing of ours left
            return lifecycle.removal_step(image, key[0])
        return self._next_step(self.fencing, step, lambda key, last: None)

    def _next_step(self, pending: set, step, written):
        """An operation writing ``step(image, key)`` (records and whether more follow,
        or None to stop) for one key of ``pending``, put back while more follow."""
        if not pending or self.active_epoch < 0:
            return None
        key = pending.pop()

        def run(image, next_offset, now):
            out = step(image, key)
            if out is None:
                return Write([], lambda: None)
            records, more = out

            def done(first, last):
                written(key, last)
                if more:
                    pending.add(key)
            return Write(records, lambda: None, done)
        return run

    def fence_operation(self, broker_id: int, broker_epoch: int, why: str, only_active: bool = False):
        """The first write fencing (id, epoch) if that epoch is still current (session
        expiry and evidence of a crash alike: ``lifecycle.fence_records``); the rest
        of its partitions follow in ``fence_moves`` steps."""
        def run(img, next_offset, now):
            b = img.brokers.get(broker_id)
            if b is None or b.epoch != broker_epoch or (only_active and not b.active):
                return Write([], lambda: None)
            # An already fenced broker is fenced again on expiry (Kafka 4.3.1's
            # maybeFenceOneStaleBroker does not look): e.g. a restarted broker that
            # registered but did not heartbeat within the session timeout.
            log.info("[Controller] fencing broker %d: %s", broker_id, why)
            records, more = lifecycle.fence_records(img, broker_id)

            def written(first, last):
                if more:
                    self.fencing.add((broker_id, broker_epoch))
            return Write(records, lambda: None, written)
        return run

    def deadline(self) -> int | None:
        return self.sessions.next_check_ms if self.active_epoch >= 0 else None

