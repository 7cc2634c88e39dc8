"""``Controller``: the object a shell drives next to the Raft core.

``poll(now_ms)`` replays what was committed (``loader``), writes a snapshot when one
is due (``snapshots``; rendered a slice per poll, ``snapshot_build.py``), runs Kafka's
retention cleaning after a snapshot and every 60 s (``retention``), and on the leader
proposes what is due (``active``). It
returns ``(proposed, next_deadline_ms)``: a shell that sees ``proposed`` runs the
Ready loop again so the proposal is appended and replicated.
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field

from kraft_server.common.features import SUPPORTED
from kraft_server.common.metadata_version import DELEGATION_TOKEN
from wire.messages import RegisterControllerRecord
from wire.messages.register_controller_record import ControllerEndpoint, ControllerFeature

from .active import ActiveDuties
from .cluster.broker_requests import BrokerRequests
from .image.loader import MetadataLoader
from .cluster.registration import RegistrationSender, registration_write
from .image.retention import CLEAN_INTERVAL_MS, maybe_clean
from .image.snapshot_generator import SnapshotGenerator
from .replication.elections import imbalanced, leaderless_unclean
from .tokens.control import TokenSettings
from .tokens.ops import sweep_op
from .forwarding import Forwarder
from .write_queue import Write, WriteQueue

log = logging.getLogger(__name__)

MiB = 1024 * 1024
# Log bytes replayed per Ready cycle: a long catch-up (start-up, a burst of commits)
# yields to socket I/O between slices, so fetches keep being answered.
REPLAY_BUDGET_BYTES = 128 * 1024  # ~2k NoOp batches or ~450 records of 256 bytes: a few ms
BUSY_CREDIT_MS = 1000  # a poll this long (real time) is credited to the broker sessions
WARM_BUDGET = 500  # partitions decoded a turn while idle (some 10 ms)

SECURITY_PROTOCOLS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}

# What a Kafka 4.4.0 controller puts in its registration, in its order
# (``kraft_server/common/features.py``).
REGISTRATION_FEATURES: tuple[tuple[str, int, int], ...] = tuple(
    (name, lo, hi) for name, (lo, hi) in SUPPORTED.items())


@dataclass
class ControllerSettings:
    node_id: int
    bootstrap_levels: dict = field(default_factory=dict)  # from bootstrap.checkpoint
    endpoints: tuple = ()  # (name, host, port, security protocol name) of controller listeners
    listener_protocols: dict = field(default_factory=dict)  # every listener's security protocol (client ones too)
    incarnation_id: uuid.UUID | None = None  # a fresh one per process start
    max_idle_interval_ms: int = 500  # metadata.max.idle.interval.ms
    snapshot_max_bytes: int = 20 * MiB  # metadata.log.max.record.bytes.between.snapshots
    snapshot_interval_ms: int = 3_600_000  # metadata.log.max.snapshot.interval.ms
    retention_bytes: int = 100 * MiB  # metadata.max.retention.bytes
    retention_ms: int = 7 * 24 * 3_600_000  # metadata.max.retention.ms
    clean_interval_ms: int = CLEAN_INTERVAL_MS
    broker_session_timeout_ms: int = 9000  # broker.session.timeout.ms
    broker_heartbeat_interval_ms: int = 2000  # broker.heartbeat.interval.ms (half: a heartbeat's deadline)
    leader_balance_interval_ms: int | None = 300_000  # leader.imbalance.check.interval.seconds; None: off
    unclean_election_interval_ms: int = 300_000  # unclean.leader.election.interval.ms
    static_configs: dict = field(default_factory=dict)  # the properties file (DescribeConfigs)
    broker_fast_fencing: bool = True  # kraft.broker.fast.fencing.enable (cluster/broker_liveness.py)
    tokens: TokenSettings = field(default_factory=TokenSettings)  # delegation.token.* (tokens/)

    @classmethod
    def from_config(cls, config, bootstrap_levels: dict) -> "ControllerSettings":
        """From a ``kraft_server.config.KafkaConfig``."""
        protocols = config.listener_security_protocol_map
        return cls(
            node_id=config.node_id,
            bootstrap_levels=dict(bootstrap_levels),
            endpoints=tuple((e.name, e.host, e.port, protocols.get(e.name, "PLAINTEXT"))
                            for e in config.controller_endpoints()),
            listener_protocols=dict(protocols),
            incarnation_id=uuid.uuid4(),
            max_idle_interval_ms=config.metadata_max_idle_interval_ms,
            snapshot_max_bytes=config.metadata_log_max_record_bytes_between_snapshots,
            snapshot_interval_ms=config.metadata_log_max_snapshot_interval_ms,
            retention_bytes=config.metadata_max_retention_bytes,
            retention_ms=config.metadata_max_retention_ms,
            broker_session_timeout_ms=int(config["broker.session.timeout.ms"]),
            broker_heartbeat_interval_ms=int(config["broker.heartbeat.interval.ms"]),
            leader_balance_interval_ms=(int(config["leader.imbalance.check.interval.seconds"]) * 1000
                                        if config["auto.leader.rebalance.enable"] else None),
            unclean_election_interval_ms=int(config["unclean.leader.election.interval.ms"]),
            static_configs=dict(config.raw),
            broker_fast_fencing=bool(config["kraft.broker.fast.fencing.enable"]),
            tokens=TokenSettings(
                secret=config["delegation.token.secret.key"] or None,
                max_lifetime_ms=int(config["delegation.token.max.lifetime.ms"]),
                expiry_time_ms=int(config["delegation.token.expiry.time.ms"]),
                check_interval_ms=int(config["delegation.token.expiry.check.interval.ms"])),
        )

    def registration(self) -> RegisterControllerRecord | None:
        if self.incarnation_id is None:
            return None
        return RegisterControllerRecord(
            controller_id=self.node_id, incarnation_id=self.incarnation_id, zk_migration_ready=False,
            end_points=[ControllerEndpoint(name=n, host=h, port=p,
                                           security_protocol=SECURITY_PROTOCOLS.get(sp, 0))
                        for n, h, p, sp in self.endpoints],
            features=[ControllerFeature(name=n, min_supported_version=lo, max_supported_version=hi)
                      for n, lo, hi in REGISTRATION_FEATURES])


class Controller:
    def __init__(self, core, raft_log, settings: ControllerSettings, now_ms: int) -> None:
        self.core = core
        self.log = raft_log
        self.settings = settings
        self.loader = MetadataLoader(raft_log)
        self.snapshots = SnapshotGenerator(settings.snapshot_max_bytes, settings.snapshot_interval_ms, now_ms)
        self.building = None  # the SnapshotBuild being rendered a slice per poll
        self.duties = ActiveDuties(settings.node_id, settings.bootstrap_levels, settings.registration(),
                                   settings.max_idle_interval_ms)
        self.next_clean_ms = now_ms + settings.clean_interval_ms
        # ControllerRegistration (registration.py): our own registration, sent when
        # another node leads (the requests we answer go through the write queue).
        self.sender = RegistrationSender(settings.node_id, self.duties.registration,
                                         settings.endpoints[0][0] if settings.endpoints else None)
        # token requests a client sends to this node while another is active (forwarding.py)
        self.forwarder = Forwarder(settings.node_id, settings.endpoints[0][0] if settings.endpoints else None)
        # Requests that write metadata (broker registration, heartbeats, ...): run one at
        # a time on the committed image, answered after commit (write_queue.py).
        self.writes = WriteQueue()
        self.brokers = BrokerRequests(core.config.cluster_id, settings.broker_session_timeout_ms,
                                      core.kraft_version, settings.broker_fast_fencing)
        self._now_ms = now_ms
        # The periodic election tasks while active: name -> next run (Kafka's
        # electPreferred and electUnclean).
        self.next_task_ms: dict[str, int] = {}
        self.outbound = None  # the shell's send(OutboundRequest); None: never send
        self.wake = None  # the shell's "run a cycle soon", for arrivals outside the loop
        # the shell's real clock (s) to time its own polls; None (simulations): no credit
        self.busy_clock = None
        # the shell's probe(Probe, done(outcomes)) of a broker's listener
        # (cluster/broker_liveness.py); None: no probes, brokers fenced on expiry only
        self.prober = None
        self._probe_results: list = []
        self._responses: list = []

    # -- called by the shell from outside ``poll`` ---------------------------------------
    def submit_registration(self, body, respond) -> None:
        """An inbound ControllerRegistrationRequest; ``respond(response)`` is called later."""
        run, fail = registration_write(body)
        self._submit("ControllerRegistration", run, fail, respond)

    def submit_broker_registration(self, body, version: int, respond) -> None:
        run, fail = self.brokers.registration(body, version, lambda: self._now_ms)
        self._submit("BrokerRegistration", run, fail, respond)

    def submit_broker_heartbeat(self, body, version: int, respond, connection=None) -> None:
        """As Kafka's ``ControllerApis``: a heartbeat that has not started within half the
        heartbeat interval is answered REQUEST_TIMED_OUT (the broker retries); its
        session was touched on arrival and its metadata offset is still noted.
        ``connection``: an opaque token of the connection it came on, reported again to
        ``heartbeat_connection_closed`` when that closes."""
        run, fail = self.brokers.heartbeat(body, version, self._now_ms, connection)
        self._submit("BrokerHeartbeat", run, fail, respond,
                     timeout_ms=self.settings.broker_heartbeat_interval_ms // 2,
                     expired=lambda: self.brokers.heartbeat_expired(self.image, body))

    def heartbeat_connection_closed(self, connection, by_peer: bool) -> None:
        """A connection that carried broker heartbeats closed (EOF or reset when
        ``by_peer``; else we closed it)."""
        self.brokers.evidence.closed(connection, by_peer, self._now_ms)
        if self.wake is not None:
            self.wake()

    def submit_write(self, name: str, run, fail, respond, timeout_ms: int | None = None) -> None:
        """A write-queue operation (``write_queue.py``) built by an API handler;
        ``timeout_ms``: its deadline in the queue (REQUEST_TIMED_OUT if not started)."""
        self._submit(name, run, fail, respond, timeout_ms=timeout_ms)

    def _submit(self, name, run, fail, respond, **options) -> None:
        self.writes.submit(name, run, fail, respond, **options)
        if self.wake is not None:
            self.wake()

    def is_active(self) -> bool:
        """The active controller (``ActiveDuties.is_active``)."""
        return self.duties.is_active(self.core)

    def deliver_response(self, response) -> None:
        """The ``InboundResponse`` to a request ``outbound`` sent for us."""
        self._responses.append(response)
        if self.wake is not None:
            self.wake()

    @property
    def image(self):
        return self.loader.image

    def finalized_features(self) -> tuple[dict[str, int], int]:
        """(levels, epoch) for ApiVersions, as ``KRaftMetadataCache.features``: the image's
        feature levels plus kraft.version when above 0; the epoch is the image's offset."""
        levels = self.image.finalized_features()
        kraft_version = self.core.kraft_version()
        if kraft_version > 0:
            levels["kraft.version"] = kraft_version
        return levels, self.image.offset

    def note_time(self, now_ms: int) -> None:
        """The loop's time on a turn that skipped ``poll`` (nothing it reacts to
        moved): what arrives next is stamped with it."""
        self._now_ms = now_ms

    def poll(self, now_ms: int) -> tuple[bool, int | None]:
        self._now_ms = now_ms
        started = self.busy_clock() if self.busy_clock is not None else None
        replayed, loaded = self.loader.catch_up(self.core.high_watermark, REPLAY_BUDGET_BYTES)
        if loaded:
            self.snapshots.reset(now_ms)
        reason = self.snapshots.due(replayed, now_ms)
        if reason is not None and self.building is None:
            self.building = self._start_snapshot(now_ms, reason)
        if self.building is not None and self.building.step():
            self._finish_snapshot(now_ms)
        if now_ms >= self.next_clean_ms:
            self.clean(now_ms)
        proposed = self.duties.poll(self.core, self.image, self.loader.next_offset, now_ms)
        active = self.is_active()
        started = self._credit_busy(started)
        fence = self.brokers.expiry(self.image, active and self.image.has_metadata, self.core.epoch, now_ms)
        if fence is not None:
            self.writes.submit("FenceStaleBroker", fence, lambda code: None, lambda body: None)
        self._poll_probes(now_ms)
        dead = self.brokers.dead_broker()
        if dead is not None:
            self.writes.submit("FenceDeadBroker", dead, lambda code: None, lambda body: None)
        moves = self.brokers.shutdown_moves()
        if moves is not None:
            self.writes.submit("ControlledShutdownMoves", moves, lambda code: None, lambda body: None)
        moves = self.brokers.fence_moves(self.image)
        if moves is not None:
            self.writes.submit("FencedBrokerMoves", moves, lambda code: None, lambda body: None)
        self._periodic_elections(active, now_ms)
        proposed = self.writes.poll(self.core, self.image, active, now_ms) or proposed
        # while idle (nothing queued, nothing replayed this turn), the active controller
        # decodes and indexes partitions by broker, WARM_BUDGET a turn (image/broker_index.py)
        warming = active and not replayed and not self.writes.queue and self.image.topics.warm(WARM_BUDGET)
        deadline = self.next_clean_ms
        expiry = self.brokers.deadline()
        if expiry is not None:
            deadline = min(deadline, expiry)
        retry = self.brokers.evidence.next_deadline() if self.prober is not None else None
        if retry is not None and self.brokers.active_epoch >= 0:
            deadline = min(deadline, retry)
        if self.next_task_ms:
            deadline = min(deadline, *self.next_task_ms.values())
        queued = self.writes.next_deadline()
        if queued is not None:
            deadline = min(deadline, queued)
        noop = self.duties.deadline()
        if noop is not None:
            deadline = min(deadline, noop)
        retry = self._poll_sender(now_ms)
        if retry is not None:
            deadline = min(deadline, retry)
        self.loader.freezer.poll(self.image, now_ms)  # records made since the last freeze (collector.py)
        self._credit_busy(started)
        # More to replay: ask for another cycle at once (after the sockets had a turn).
        return (proposed or warming or self.building is not None
                or self.loader.behind(self.core.high_watermark)), deadline

    def _credit_busy(self, started: float | None) -> float | None:
        """Credit the broker sessions with the time since ``started`` when it is
        BUSY_CREDIT_MS or more (``BrokerSessions.credit``); returns the time now."""
        if started is None:
            return None
        now = self.busy_clock()
        busy_ms = int((now - started) * 1000)
        if busy_ms >= BUSY_CREDIT_MS:
            self.brokers.sessions.credit(busy_ms)
            log.info("[Controller] a poll held the loop %d ms: broker sessions credited with it", busy_ms)
        return now

    def _periodic_elections(self, active: bool, now_ms: int) -> None:
        """While active: every ``leader.imbalance.check.interval.seconds`` move up to 1000
        partitions back to their preferred leader (``auto.leader.rebalance.enable``), and
        every ``unclean.leader.election.interval.ms`` elect leaders for leaderless
        partitions of topics allowing unclean election (``elections.py``)."""
        if not active:
            self.next_task_ms.clear()
            return
        tasks = {"BalanceLeaders": (self.settings.leader_balance_interval_ms, imbalanced),
                 "ElectUnclean": (self.settings.unclean_election_interval_ms, leaderless_unclean)}
        self._periodic_token_sweep(now_ms)
        for name, (interval, decide) in tasks.items():
            if interval is None:
                continue
            due = self.next_task_ms.get(name)
            if due is None:
                self.next_task_ms[name] = now_ms + interval
                continue
            if now_ms < due:
                continue
            self.next_task_ms[name] = now_ms + interval

            def run(image, next_offset, now, name=name, decide=decide):
                records = decide(image)
                if records:
                    log.info("[Controller %d] %s: %d partition(s)", self.settings.node_id, name, len(records))
                return Write(records, lambda: None)
            self.writes.submit(name, run, lambda code: None, lambda body: None)

    def _periodic_token_sweep(self, now_ms: int) -> None:
        """While active, with tokens enabled and metadata.version 3.6-IV2 or above: every
        ``delegation.token.expiry.check.interval.ms`` remove the expired tokens (Kafka's
        ``maybeScheduleNextExpiredDelegationTokenSweep``)."""
        tokens = self.settings.tokens
        if not tokens.enabled or (self.image.metadata_version() or 0) < DELEGATION_TOKEN:
            self.next_task_ms.pop("SweepExpiredDelegationTokens", None)
            return
        due = self.next_task_ms.get("SweepExpiredDelegationTokens")
        if due is None or now_ms >= due:
            self.next_task_ms["SweepExpiredDelegationTokens"] = now_ms + tokens.check_interval_ms
        if due is not None and now_ms >= due:
            run, fail = sweep_op()
            self.writes.submit("SweepExpiredDelegationTokens", run, fail, lambda body: None)

    def _poll_probes(self, now_ms: int) -> None:
        """Outcomes of the listener probes in, the probes now due out to the shell."""
        results, self._probe_results = self._probe_results, []
        for probe, outcomes in results:
            self.brokers.evidence.probe_done(probe, outcomes, now_ms)
        if self.prober is None or self.brokers.active_epoch < 0:
            return
        for probe in self.brokers.evidence.due_probes(self.image, now_ms):
            self.prober(probe, lambda outcomes, probe=probe: self._probe_done(probe, outcomes))

    def _probe_done(self, probe, outcomes) -> None:
        self._probe_results.append((probe, outcomes))
        if self.wake is not None:
            self.wake()

    def forward(self, envelope, answer) -> None:
        """An Envelope for the active controller (``forwarding.py``); ``answer(bytes | None)``."""
        if self.outbound is None:
            answer(None)
            return
        self.forwarder.forward(envelope, answer)
        if self.wake is not None:
            self.wake()

    def _poll_sender(self, now_ms: int) -> int | None:
        responses, self._responses = self._responses, []
        for response in responses:
            if not self.forwarder.on_response(response):
                self.sender.on_response(response, now_ms)
        if self.outbound is None:
            return None
        for forwarded in self.forwarder.poll(self.core):
            self.outbound(forwarded)
        request = self.sender.poll(self.core, self.image, now_ms)
        if request is not None:
            self.outbound(request)
            return None
        if self.sender.pending is None and self.sender.next_attempt_ms > now_ms:
            return self.sender.next_attempt_ms
        return None

    def snapshot(self, now_ms: int, reason: str = "requested"):
        """Write a snapshot of the image at once (one being rendered slice by slice is
        finished first); its id, or None when it exists already."""
        if self.building is not None:
            self.building.finish()
            self._finish_snapshot(now_ms)
        build = self._start_snapshot(now_ms, reason)
        if build is None:
            return None
        self.building = build
        build.finish()
        return self._finish_snapshot(now_ms)

    def _start_snapshot(self, now_ms: int, reason: str):
        image = self.image
        voters = self.core.history.committed(image.offset + 1)
        build = self.snapshots.start(self.log, image, self.core.kraft_version(), voters, now_ms)
        if build is not None:
            log.info("[Controller %d] snapshot %s because %s", self.settings.node_id, build.snapshot_id, reason)
        return build

    def _finish_snapshot(self, now_ms: int):
        build, self.building = self.building, None
        sid = self.snapshots.finish(self.log, build, now_ms)
        if sid is not None:
            self.clean(now_ms)
        return sid

    def clean(self, now_ms: int) -> bool:
        self.next_clean_ms = now_ms + self.settings.clean_interval_ms
        return maybe_clean(self.log, self.settings.retention_bytes, self.settings.retention_ms, now_ms)
