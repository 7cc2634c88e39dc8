"""Wiring: ``server.properties`` → storage check → log and quorum-state store →
``RaftNode`` → the Ready loop on uvloop (``kraft_server/shell/driver.py``).

Start-up, as Kafka's ``KafkaRaftServer`` does it:

1. Read and validate the properties (``kraft_server.config``).
2. Check the log directories were formatted (``kraft_server/log/startup.py``): an
   unformatted directory is refused with a message that says how to format it
   (Kafka refuses too).
3. Open ``__cluster_metadata-0`` (recovering a torn tail) and ``quorum-state``.
4. Build the core and the listeners: the controller listener(s) named by
   ``controller.listener.names``, and every other listener as a client listener.
5. Run until SIGINT/SIGTERM; then the core resigns (EndQuorumEpoch to the other
   voters) and the listeners close.

The only module here that knows the core's internals is ``CoreView`` (below),
which turns them into the plain values the API handlers read
(``kraft_server/api/views.py``).
"""
from __future__ import annotations

import logging
import os
import random
from dataclasses import dataclass

from kraft_server.api import registry
from kraft_server.api.api_versions import SUPPORTED_FEATURES
from kraft_server.api.dispatch import Dispatcher
from kraft_server.api.raft_rpcs import deliver
from kraft_server.api.views import (
    ZERO_UUID, Features, ListenerAddress, QuorumView, ReplicaView, VoterView)
from kraft_server.config import KafkaConfig
from kraft_server.log.startup import StorageError, StorageInfo, check_storage
from kraft_server.net.limits import ConnectionLimits
from kraft_server.raft import Endpoint, QuorumConfig, StaticVoter

log = logging.getLogger("kraft_server")


def probe_listeners(config: KafkaConfig) -> tuple[str, ...]:
    """The controller listeners after the first that share its security protocol: the
    outbound channel speaks that protocol, so it can reach a peer's endpoints on them."""
    from kraft_server.security.listeners import protocol_of
    names = config.controller_listener_names
    if not names:
        return ()
    default = protocol_of(config, names[0])
    return tuple(n for n in names[1:] if protocol_of(config, n) == default)


def quorum_config(config: KafkaConfig, meta: StorageInfo) -> QuorumConfig:
    return QuorumConfig(
        node_id=config.node_id,
        cluster_id=meta.cluster_id,
        directory_id=meta.directory_id or ZERO_UUID,
        static_voters=tuple(StaticVoter(v.node_id, v.host, v.port) for v in config.quorum_voters),
        bootstrap_servers=tuple((e.host, e.port) for e in config.quorum_bootstrap_servers),
        listeners=tuple(Endpoint(e.name, e.host, e.port) for e in config.controller_endpoints()),
        probe_listeners=probe_listeners(config),
        election_timeout_ms=config.quorum_election_timeout_ms,
        fetch_timeout_ms=config.quorum_fetch_timeout_ms,
        election_backoff_max_ms=config.quorum_election_backoff_max_ms,
        request_timeout_ms=config.quorum_request_timeout_ms,
        retry_backoff_ms=config.quorum_retry_backoff_ms,
        append_linger_ms=config.quorum_append_linger_ms,
        auto_join=config.quorum_auto_join_enable,
    )


# -- the view the API handlers read ------------------------------------------------------

def _endpoints(node) -> tuple[ListenerAddress, ...]:
    return tuple(ListenerAddress(e.name, e.host, e.port) for e in node.endpoints)


class CoreView:
    """Adapts ``RaftNode``'s views to ``kraft_server.api.views.NodeView``."""

    def __init__(self, core, node_id: int, cluster_id: str, bootstrap_levels: dict[str, int], clock,
                 controller=None):
        self.core = core
        self.controller = controller  # kraft_server.controller.Controller: the committed image
        self.node_id = node_id
        self.cluster_id = cluster_id
        self._levels = bootstrap_levels
        self._clock = clock

    def now_ms(self) -> int:
        return self._clock()

    def leader_id(self) -> int:
        leader = self.core.leader_id
        return -1 if leader is None else leader

    def voters(self) -> tuple[VoterView, ...]:
        return tuple(VoterView(n.key.node_id, n.key.directory_id, _endpoints(n))
                     for n in self.core.voter_set().nodes)

    def controller_registrations(self):
        """The committed image's RegisterControllerRecords by id, or None while the image
        knows no metadata.version (nothing bootstrapped yet): DescribeCluster's source."""
        controller = self.controller
        if controller is None or not controller.image.has_metadata:
            return None
        return controller.image.controllers, controller.image.metadata_version()

    def features(self) -> Features:
        controller = self.controller
        if controller is not None:
            # Committed FeatureLevelRecords; the epoch is the image's offset
            # (KRaftMetadataCache.features), -1 before the first record.
            finalized, epoch = controller.finalized_features()
            return Features(supported=dict(SUPPORTED_FEATURES), finalized=finalized, epoch=epoch)
        finalized = {"kraft.version": self.core.kraft_version()}
        if "metadata.version" in self._levels:
            finalized["metadata.version"] = self._levels["metadata.version"]
        hwm = self.core.high_watermark
        epoch = hwm - 1 if hwm is not None and hwm > 0 else -1
        return Features(supported=dict(SUPPORTED_FEATURES), finalized=finalized, epoch=epoch)

    def quorum(self, now_ms: int) -> QuorumView:
        core = self.core
        leader = self.leader_id()
        states = core.replica_states(now_ms) if leader == self.node_id else None
        if states is None:  # not the leader (KafkaRaftClient answers NOT_LEADER_OR_FOLLOWER)
            return QuorumView(is_leader=False, leader_id=leader, epoch=core.epoch)
        voter_states, observer_states = states
        voters = tuple(sorted((_replica(r) for r in voter_states), key=lambda r: r.replica_id))
        observers = tuple(sorted((_replica(r) for r in observer_states), key=lambda r: r.replica_id))
        hwm = core.high_watermark
        committed = None
        if hwm is not None:
            # The set as of the HWM (seed 002): a voter whose removal is not committed
            # yet is an observer in the leader's states, and one being added has no
            # committed entry yet.
            known = {(r.replica_id, r.directory_id): r for r in observers + voters}
            committed = tuple(
                known.get((n.key.node_id, n.key.directory_id or ZERO_UUID))
                or ReplicaView(n.key.node_id, n.key.directory_id or ZERO_UUID)
                for n in core.committed_voter_set().nodes)
        return QuorumView(is_leader=True, leader_id=leader, epoch=core.epoch,
                          high_watermark=-1 if hwm is None else hwm,
                          voters=voters, observers=observers, voter_nodes=self.voters(),
                          committed_voters=committed)


def _replica(r) -> ReplicaView:
    """A core ``roles.leader.ReplicaState`` as a DescribeQuorum row."""
    return ReplicaView(
        replica_id=r.key.node_id,
        directory_id=r.key.directory_id or ZERO_UUID,
        log_end_offset=r.end_offset,
        last_fetch_timestamp=r.last_fetch_ms,
        last_caught_up_timestamp=r.last_caught_up_ms,
    )


# -- assembly -----------------------------------------------------------------------------

@dataclass
class Node:
    config: KafkaConfig
    driver: object
    core: object
    raft_log: object
    cluster_id: str
    groups: object = None  # kraft_server.api.groups.GroupService


def build_node(config: KafkaConfig, config_path: str | None = None, *, clock=None, rng=None) -> Node:
    """Everything but the event loop."""
    from kraft_server.controller import Controller, ControllerSettings
    from kraft_server.log.file_log import FileReplicatedLog
    from kraft_server.log.quorum_state_file import FileQuorumStateStore, QuorumStateError
    from kraft_server.log.disk import LogCorruption
    from kraft_server.shell.driver import Driver, wall_clock_ms
    from kraft_server.net.server import ListenerSpec
    from kraft_server.security.listeners import controller_client_security, listener_security
    from kraft_server.security.credentials import scram_lookup
    from kraft_server.log.bootstrap import read_bootstrap_records
    from kraft_server.raft import RaftNode
    from kraft_server.shell.transition_log import TransitionLog

    if not config.is_controller:
        raise StorageError("process.roles must include controller: this node is a KRaft controller", "process.roles")
    clock = clock or wall_clock_ms
    meta = check_storage(config, config_path)
    try:
        raft_log = FileReplicatedLog.open(config.metadata_log_dir,
                                          segment_bytes=config.metadata_log_segment_bytes)
    except LogCorruption as exc:
        raise StorageError(str(exc), exc.path) from None
    store = FileQuorumStateStore(raft_log.directory,
                                 static_voter_ids=[v.node_id for v in config.quorum_voters])
    qconfig = quorum_config(config, meta)
    try:
        election = store.read()
    except QuorumStateError as exc:
        raft_log.close()
        raise StorageError(str(exc), store.path) from None
    core = RaftNode(qconfig, raft_log, election, rng or random.Random(), clock())
    bootstrap = read_bootstrap_records(config.metadata_log_dir)
    controller = Controller(core, raft_log, ControllerSettings.from_config(config, bootstrap.levels), clock())
    controller.duties.bootstrap_extra = bootstrap.extra
    view = CoreView(core, config.node_id, meta.cluster_id, bootstrap.levels, clock, controller)
    groups = _group_service(config, clock)

    controller_names = set(config.controller_listener_names)
    advertised = {e.name: (e.host, e.port) for e in config.effective_advertised_listeners()}
    specs, tables = [], {}
    for ep in config.listeners:
        apis = registry.listener_apis(ep.name in controller_names,
                                      reconfiguration=core.SUPPORTS_RECONFIGURATION)
        tables[ep.name] = apis
        specs.append(ListenerSpec(ep.name, ep.host, ep.port, apis,
                                  security=listener_security(config, ep.name, scram_lookup(
                                      controller, controller.duties.bootstrap_extra))))

    topics, consumer_fetch = _metadata_topic(config, core, raft_log)

    guard = _guard(config, controller)

    def make_dispatcher(submit):
        return Dispatcher(view, submit, tables=tables, controller_listeners=controller_names,
                          advertised=advertised, topics=topics, consumer_fetch=consumer_fetch,
                          groups=groups, guard=guard)

    after_cycle, extra_servers = _chain(TransitionLog(core, config.node_id), consumer_fetch.progress), []
    after_cycle = _with_hint(after_cycle, core, raft_log)
    prometheus = config["kraft.metrics.prometheus.listener"]
    if prometheus:  # off by default; see kraft_server/metrics
        after_cycle, extra_servers = _with_prometheus(config, core, raft_log, clock, after_cycle, prometheus)
    if config["kraft.console.listener"]:  # off by default; see kraft_server/console
        from kraft_server.console import attach
        after_cycle, extra_servers = attach(config, view, core, raft_log, controller, clock, after_cycle,
                                            extra_servers)
    driver = Driver(core, raft_log, make_dispatcher=make_dispatcher, deliver=deliver, store=store,
                    listeners=specs, request_timeout_ms=config.quorum_request_timeout_ms,
                    retry_backoff_ms=config.quorum_retry_backoff_ms,
                    max_bytes=config.socket_request_max_bytes, clock=clock,
                    connection_limits=ConnectionLimits(config["max.connections"], config["max.connections.per.ip"],
                                                       config["connections.max.idle.ms"]),
                    after_cycle=after_cycle, extra_servers=extra_servers, controller=controller,
                    timers=[groups], queued_max_requests=config["queued.max.requests"])
    driver.peers.security = controller_client_security(config)
    groups.wake = driver.wake
    _wire_controller_channel(config, controller, driver)
    return Node(config, driver, core, raft_log, meta.cluster_id, groups)


def _group_service(config: KafkaConfig, clock):
    """The consumer-group coordinator, its offsets in ``metadata.log.dir`` (api/groups)."""
    from kraft_server.api.groups import GroupService
    from kraft_server.api.groups.coordinator import GroupSettings
    from kraft_server.api.groups.offset_store import OffsetStore

    return GroupService(OffsetStore(config.metadata_log_dir), clock, GroupSettings.from_config(config))


def _metadata_topic(config: KafkaConfig, core, raft_log):
    """``__cluster_metadata``-0 and its companions for consumers (kraft_server/api/topic):
    the served topics and the consumer fetch path, whose parked fetches wake after each
    Ready cycle."""
    from kraft_server.api.topic import Topics
    from kraft_server.api.topic.consumer_fetch import ConsumerFetch
    from kraft_server.api.topic.fetch_sessions import FetchSessionCache

    topics = Topics.of_log(core, raft_log, config.node_id)
    slots = int(config["max.incremental.fetch.session.cache.slots"])
    return topics, ConsumerFetch(topics, sessions=FetchSessionCache(slots))


def _chain(first, second):
    def both(now_ms: int) -> None:
        first(now_ms)
        second()
    return both


def _with_hint(after_cycle, core, raft_log):
    """The high-watermark hint (``log/hwm_hint.py``) rewritten after a cycle, now and then."""
    from kraft_server.log.hwm_hint import HintWriter

    hint = HintWriter(raft_log.directory)

    def both(now_ms: int) -> None:
        after_cycle(now_ms)
        hint.observe(core.high_watermark, raft_log.epoch_entries, now_ms)
    return both


def _wire_controller_channel(config: KafkaConfig, controller, driver) -> None:
    """The controller's own outbound channel (ControllerRegistration to the active
    controller; Kafka's NodeToControllerChannelManager), apart from the Raft core's
    peers. Answers come back through ``controller.deliver_response`` and wake the loop."""
    from kraft_server.net.peers import Peers

    channel = Peers(controller.deliver_response, request_timeout_ms=config.quorum_request_timeout_ms,
                    retry_backoff_ms=config.quorum_retry_backoff_ms,
                    client_id=f"controller-{config.node_id}-registration-channel")
    channel.security = driver.peers.security
    controller.outbound = channel.send
    controller.wake = driver.wake
    driver.extra_channels.append(channel)  # closed with the core's when the loop ends
    if config["kraft.broker.fast.fencing.enable"]:
        from kraft_server.net.listener_probe import ListenerProber
        prober = ListenerProber()  # the listener probes of fast fencing
        controller.prober = prober.probe
        driver.extra_channels.append(prober)


def _with_prometheus(config: KafkaConfig, core, raft_log, clock, after_cycle, address: str):
    """The raft-metrics observer chained after ``after_cycle``, and the scrape server."""
    from kraft_server.config import parse_host_port
    from kraft_server.metrics import RaftMetrics, ScrapeProtocol, node_registry

    metrics = RaftMetrics(core, raft_log, fetch_timeout_ms=config.quorum_fetch_timeout_ms)

    def both(now_ms: int) -> None:
        after_cycle(now_ms)
        metrics.observe(now_ms)

    ep = parse_host_port(address, "kraft.metrics.prometheus.listener")
    registry = node_registry(lambda: metrics.collect(clock()))
    factory = lambda: ScrapeProtocol(registry)  # noqa: E731
    return both, [("PROMETHEUS", ep.host, ep.port, factory)]


def run(config_path: str) -> int:
    from kraft_server.shell.driver import run_forever

    config = KafkaConfig.from_file(config_path)
    node = build_node(config, config_path)
    log.info("node %d of cluster %s starting (metadata log %s)", config.node_id,
             node.cluster_id, config.metadata_log_dir)

    def started(bound):
        for name, (host, port) in bound.items():
            log.info("[KRaftServer id=%d] listener %s on %s:%d", config.node_id, name, host, port)
        log.info("[KRaftServer id=%d] Kafka Server started", config.node_id)

    from kraft_server.metrics.gc_pauses import SLOW_MS, GcPauses
    # collections that hold the loop (kraft_server/metrics/gc_pauses.py); the bench lowers the INFO bar
    pauses = GcPauses(float(os.environ.get("KRAFT_GC_SLOW_MS", SLOW_MS))).install()
    node.driver.after_cycle = _chain(node.driver.after_cycle, pauses.report)
    try:
        run_forever(node.driver, on_started=started)
    finally:
        pauses.uninstall()
        pauses.report()
        log.info("garbage collections: %s", pauses.summary())
        log.info("metadata log fsyncs: %s", node.driver.shell.flush_times.summary())
        node.raft_log.close()
        if node.groups is not None:
            node.groups.close()
        log.info("[KRaftServer id=%d] shut down completed", config.node_id)
    return 0


def _guard(config, controller):
    """The ACL checks when ``authorizer.class.name`` names Kafka's StandardAuthorizer
    (kraft_server/api/authorize.py); None (no checks) when it is empty."""
    from kraft_server.api.authorize import Guard
    from kraft_server.security.authorizer import authorizer_from_config
    authorizer = authorizer_from_config(config.raw)
    return None if authorizer is None else Guard(authorizer, lambda: controller.image)
