"""Controller registration (KIP-919): both sides of the ControllerRegistration RPC (key 70).

**The active controller** (``registration_write``; Kafka's ``ControllerApis
.handleControllerRegistration`` → ``QuorumController.registerController`` →
``ClusterControlManager.registerController``):

* the request is a controller write event, run by the write queue
  (``controller/write_queue.py``) like every other: only on the *active* controller
  (the Raft leader whose image has caught up with its epoch start), otherwise
  NOT_CONTROLLER (``ControllerExceptions.newWrongControllerException``);
* metadata.version must be 3.7-IV0 (15) or later, else UNSUPPORTED_VERSION
  ("The current MetadataVersion is too old to support controller registrations.");
* nothing else is checked (no cluster id, no incarnation or feature-range check,
  unlike broker registration): the request's fields are copied into a
  RegisterControllerRecord (v0) proposed in its own batch;
* the answer (``ThrottleTimeMs=0``, ``ErrorCode=0``, ``ErrorMessage`` left at its
  generated default ``""``) goes out only once the record is committed and
  replayed, as a write event's future completes; a leader that loses its epoch
  first answers NOT_CONTROLLER. Errors carry ``Errors.message()``, the error's default
  text (``ControllerRegistrationRequest.getErrorResponse``), not the exception's.

**Every other controller** (``RegistrationSender``; Kafka's
``ControllerRegistrationManager``): once the committed image knows a
metadata.version that supports registrations and the active controller is known,
a controller whose incarnation is not the one in the image sends a
ControllerRegistrationRequest to the active controller (its endpoint on our first
controller listener, as ``RaftControllerNodeProvider``), one at a time. A failed
attempt (error code, timeout, disconnect) is retried after an exponential backoff
(100 ms doubling to 120 s, 2 % jitter, as ``ControllerRegistrationManager``'s
default ``ExponentialBackoff``). Success alone does not mark us registered: the
record has to show up in the image ("Our registration has been persisted to the
metadata log"); a later image without it, or with another incarnation, sends again.
The leader registers itself without an RPC (``active.py``).

The Raft core is not involved: the sender hands an ``OutboundRequest`` to the shell
(``Controller.outbound``), which sends it on a channel of its own and brings the
answer back through ``Controller.deliver_response``.
"""
from __future__ import annotations

import logging
import random

from kraft_server.common import metadata_version
from kraft_server.raft import Destination, OutboundRequest, Role
from wire.errors import ErrorCode, error_message
from wire.messages import ControllerRegistrationRequest, ControllerRegistrationResponse, RegisterControllerRecord
from wire.messages.controller_registration_request import Feature, Listener
from wire.messages.register_controller_record import ControllerEndpoint, ControllerFeature

from ..write_queue import Write

log = logging.getLogger(__name__)

CONTROLLER_REGISTRATION = ControllerRegistrationRequest.API_KEY
CONTROLLER_REGISTRATION_MIN_MV = metadata_version.CONTROLLER_REGISTRATION  # 3.7-IV0 (KIP-919)
BACKOFF_INITIAL_MS = 100
BACKOFF_MAX_MS = 120_000
BACKOFF_JITTER = 0.02


def record_from_request(body: ControllerRegistrationRequest) -> RegisterControllerRecord:
    return RegisterControllerRecord(
        controller_id=body.controller_id, incarnation_id=body.incarnation_id,
        zk_migration_ready=body.zk_migration_ready,
        end_points=[ControllerEndpoint(name=l.name, host=l.host, port=l.port,
                                       security_protocol=l.security_protocol) for l in body.listeners],
        features=[ControllerFeature(name=f.name, min_supported_version=f.min_supported_version,
                                    max_supported_version=f.max_supported_version) for f in body.features])


def request_from_record(r: RegisterControllerRecord) -> ControllerRegistrationRequest:
    return ControllerRegistrationRequest(
        controller_id=r.controller_id, incarnation_id=r.incarnation_id,
        zk_migration_ready=r.zk_migration_ready,
        listeners=[Listener(name=e.name, host=e.host, port=e.port, security_protocol=e.security_protocol)
                   for e in r.end_points],
        features=[Feature(name=f.name, min_supported_version=f.min_supported_version,
                          max_supported_version=f.max_supported_version) for f in r.features])


def error_response(code: int) -> ControllerRegistrationResponse:
    return ControllerRegistrationResponse(throttle_time_ms=0, error_code=code,
                                          error_message=error_message(code))


# -- the active controller's side -------------------------------------------------------------

def registration_write(body: ControllerRegistrationRequest):
    """The request as a write-queue operation (``write_queue.py``): ``(run, fail)``."""
    def run(image, next_offset, now_ms):
        if (image.metadata_version() or 0) < CONTROLLER_REGISTRATION_MIN_MV:
            return Write([], lambda: error_response(ErrorCode.UNSUPPORTED_VERSION))

        def written(first, last):
            log.info("[Controller] registering controller %d (incarnation %s) at offset %d",
                     body.controller_id, body.incarnation_id, last)
        return Write([(record_from_request(body), 0)],
                     lambda: ControllerRegistrationResponse(throttle_time_ms=0, error_code=0), written)
    return run, error_response


# -- every other controller's side --------------------------------------------------------------

class RegistrationSender:
    """Kafka's ``ControllerRegistrationManager`` for a follower or observer."""

    def __init__(self, node_id: int, registration: RegisterControllerRecord | None,
                 listener: str | None, rng: random.Random | None = None) -> None:
        self.node_id = node_id
        self.registration = registration
        self.listener = listener
        self.rng = rng or random.Random()
        self.registered_in_log = False
        self.pending: int | None = None  # correlation of the request in flight
        self.next_attempt_ms = 0
        self.failures = 0
        self._correlations = iter(range(1, 1 << 31))
        self._seen = None
        self._entry_at_send = None  # our entry in the image when the request left
        self._acked = False  # acknowledged: wait for the image to change before sending again
        self.stats = {"sent": 0, "succeeded": 0, "failed": 0}

    def _observe(self, image) -> None:
        seen = (image.serial, image.registrations_replayed)
        if seen == self._seen:
            return
        self._seen = seen
        current = image.controllers.get(self.node_id)
        was = self.registered_in_log
        self.registered_in_log = (current is not None
                                  and current.incarnation_id == self.registration.incarnation_id)
        if self.registered_in_log and not was:
            log.info("[ControllerRegistrationManager id=%d] our registration has been persisted to "
                     "the metadata log", self.node_id)

    def poll(self, core, image, now_ms: int) -> OutboundRequest | None:
        if self.registration is None:
            return None
        self._observe(image)
        if (self.registered_in_log or self.pending is not None or now_ms < self.next_attempt_ms
                or core.role is Role.LEADER):
            return None
        entry = image.controllers.get(self.node_id)
        if self._acked and entry is self._entry_at_send:
            return None  # as Kafka: after a success, only a change to our entry sends again
        self._acked = False
        if (image.metadata_version() or 0) < CONTROLLER_REGISTRATION_MIN_MV:
            return None  # metadata.version unknown yet, or too old
        leader = core.leader_id
        if leader is None or leader < 0:
            return None
        endpoints = core.leader_endpoints(self.listener) if self.listener else ()
        if not endpoints:
            return None
        self.pending = next(self._correlations)
        self._entry_at_send = entry
        self.stats["sent"] += 1
        return OutboundRequest(correlation=self.pending, destination=Destination(leader, endpoints[0]),
                               api_key=CONTROLLER_REGISTRATION,
                               body=request_from_record(self.registration))

    def on_response(self, response, now_ms: int) -> None:
        if response.correlation != self.pending:
            return
        self.pending = None
        body = response.body
        if response.failure is None and body is not None and body.error_code == 0:
            self.failures = 0
            self._acked = True
            self.stats["succeeded"] += 1
            log.info("[ControllerRegistrationManager id=%d] the active controller acknowledged our "
                     "registration", self.node_id)
            return
        why = response.failure.value if response.failure is not None else f"error {body.error_code}"
        delay = self._backoff()
        self.failures += 1
        self.stats["failed"] += 1
        self.next_attempt_ms = now_ms + delay
        log.info("[ControllerRegistrationManager id=%d] registration failed (%s); retrying in %d ms",
                 self.node_id, why, delay)

    def _backoff(self) -> int:
        """``ExponentialBackoff(100, 2, 120000, 0.02).backoff(failures)``."""
        base = min(BACKOFF_INITIAL_MS * (2 ** min(self.failures, 30)), BACKOFF_MAX_MS)
        jitter = 1.0 + self.rng.uniform(-BACKOFF_JITTER, BACKOFF_JITTER)
        return int(base * jitter)
