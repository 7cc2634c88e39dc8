"""The continuous writer: CreateTopics, one small topic per request with a unique
name, sent one at a time to whoever leads (the monitor's guess, else the next node).

Placement needs an unfenced broker, so a stand-in broker (``StandInBroker``) registers
with BrokerRegistration and heartbeats the active controller, as a real broker's
lifecycle manager does; it gets fenced like one when faults outlast its session.

Outcomes of a name:

* answered 0 (created): **acknowledged**, with its ack time;
* no answer (timeout, connection closed) or an error (NOT_CONTROLLER, REQUEST_TIMED_OUT,
  INVALID_REPLICATION_FACTOR while the broker is fenced, ...): unknown, sent again with
  the same name (a controller that lost leadership may still see its record committed);
* TOPIC_ALREADY_EXISTS on a retry: one earlier attempt was written. It is **not** counted
  as acknowledged: the checker looks for it (``in_doubt``) and demands at most one copy;
  TOPIC_ALREADY_EXISTS on a first attempt would mean a duplicate name: recorded as an error.
A name still unresolved when the writer stops is in doubt as well.
"""
from __future__ import annotations

import logging
import threading
import time
import uuid

from kraft_server.common.features import SUPPORTED
from wire.errors import ErrorCode
from wire.messages import BrokerHeartbeatRequest, BrokerRegistrationRequest, CreateTopicsRequest
from wire.messages.broker_registration_request import Feature, Listener
from wire.messages.create_topics_request import CreatableTopic

from .client import call

log = logging.getLogger(__name__)

REQUEST_TIMEOUT_S = 4.0
BROKER_ID = 100
HEARTBEAT_S = 0.25
FEATURES = [(name, lo, hi) for name, (lo, hi) in SUPPORTED.items()]  # what our controllers support


def _targets(monitor, ports: dict[int, int], turn: int) -> int:
    guess = monitor.guess()
    ids = sorted(ports)
    return ports[guess] if guess is not None else ports[ids[turn % len(ids)]]


class StandInBroker(threading.Thread):
    def __init__(self, cluster_id: str, ports: dict[int, int], monitor):
        super().__init__(daemon=True, name="chaos-broker")
        self.cluster_id, self.ports, self.monitor = cluster_id, ports, monitor
        self.halt = threading.Event()
        self.incarnation = uuid.uuid4()
        self.epoch = -1
        self.fenced = True

    def _send(self, body, version: int, turn: int):
        try:
            return call(_targets(self.monitor, self.ports, turn), body, version, REQUEST_TIMEOUT_S)
        except (OSError, ValueError):
            return None

    def run(self) -> None:
        turn = 0
        while not self.halt.wait(HEARTBEAT_S):
            turn += 1
            if self.epoch < 0:
                resp = self._send(BrokerRegistrationRequest(
                    broker_id=BROKER_ID, cluster_id=self.cluster_id, incarnation_id=self.incarnation,
                    listeners=[Listener(name="PLAINTEXT", host="127.0.0.1", port=9, security_protocol=0)],
                    features=[Feature(name=n, min_supported_version=lo, max_supported_version=hi)
                              for n, lo, hi in FEATURES],
                    rack=None, log_dirs=[uuid.UUID(int=(BROKER_ID << 64) | 7)], previous_broker_epoch=-1), 4, turn)
                if resp is not None and resp.error_code == 0:
                    self.epoch = resp.broker_epoch
                continue
            resp = self._send(BrokerHeartbeatRequest(
                broker_id=BROKER_ID, broker_epoch=self.epoch, current_metadata_offset=self.monitor.max_hwm(),
                want_fence=False, want_shut_down=False), 1, turn)
            if resp is None:
                continue
            if resp.error_code in (ErrorCode.STALE_BROKER_EPOCH, ErrorCode.BROKER_ID_NOT_REGISTERED):
                self.epoch = -1
            elif resp.error_code == 0:
                self.fenced = resp.is_fenced

    def stop(self) -> None:
        self.halt.set()
        if self.is_alive():
            self.join(10)


class Writer(threading.Thread):
    def __init__(self, ports: dict[int, int], monitor, prefix: str = "chaos"):
        super().__init__(daemon=True, name="chaos-writer")
        self.ports, self.monitor, self.prefix = ports, monitor, prefix
        self.halt = threading.Event()
        self.lock = threading.Lock()
        self.acked: list[tuple[str, float]] = []  # (name, ack time), in ack order
        self.in_doubt: list[str] = []
        self.errors: list[str] = []
        self.attempts = 0
        self.answers: dict[str, int] = {}  # error name -> count, for the report

    def acked_count(self) -> int:
        with self.lock:
            return len(self.acked)

    def run(self) -> None:
        n = 0
        while not self.halt.is_set():
            name = f"{self.prefix}-{n:06d}"
            n += 1
            self._write(name)

    def _write(self, name: str) -> None:
        tries = 0
        while True:
            if self.halt.is_set():
                if tries:
                    with self.lock:
                        self.in_doubt.append(name)
                return
            tries += 1
            self.attempts += 1
            body = CreateTopicsRequest(topics=[CreatableTopic(name=name, num_partitions=1, replication_factor=1)],
                                       timeout_ms=int(REQUEST_TIMEOUT_S * 1000) - 500)
            try:
                resp = call(_targets(self.monitor, self.ports, tries), body, 7, REQUEST_TIMEOUT_S)
                code = resp.topics[0].error_code
            except (OSError, ValueError) as exc:
                code = type(exc).__name__
            self.answers[str(code)] = self.answers.get(str(code), 0) + 1
            if code == 0:
                with self.lock:
                    self.acked.append((name, time.monotonic()))
                return
            if code == ErrorCode.TOPIC_ALREADY_EXISTS:
                with self.lock:
                    (self.in_doubt if tries > 1 else self.errors).append(name)
                return
            self.halt.wait(0.05)  # back off before the retry

    def stop(self) -> None:
        self.halt.set()
        if self.is_alive():
            self.join(REQUEST_TIMEOUT_S * 3)
