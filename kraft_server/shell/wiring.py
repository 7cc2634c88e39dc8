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

Beside it: ``quorum_setup.py`` (the core's ``QuorumConfig``), ``core_view.py`` (the only
module that knows the core's internals, as the plain values the API handlers read) and
``after_cycle.py`` (the hooks chained after each turn of the loop).
"""
from __future__ import annotations

import logging
import os
import random
import time
from dataclasses import dataclass

from kraft_server.api import registry
from kraft_server.api.dispatch import Dispatcher
from kraft_server.api.raft_rpcs import deliver
from kraft_server.config import KafkaConfig
from kraft_server.log.startup import StorageError, check_storage
from kraft_server.net.limits import ConnectionLimits

from .after_cycle import chain, with_hint, with_prometheus
from .core_view import CoreView
from .quorum_setup import quorum_config

log = logging.getLogger("kraft_server")


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

    after_cycle, extra_servers = chain(TransitionLog(core, config.node_id), consumer_fetch.progress), []
    after_cycle = with_hint(after_cycle, core, raft_log)
    prometheus = config["kraft.metrics.prometheus.listener"]
    if prometheus:  # off by default; see kraft_server/metrics
        after_cycle, extra_servers = with_prometheus(config, core, raft_log, clock, after_cycle, prometheus)
    if config["kraft.console.listener"]:  # off by default; see kraft_server/console
        from kraft_server.console import attach
        after_cycle, extra_servers = attach(config, view, core, raft_log, controller, clock, after_cycle,
                                            extra_servers, scram_lookup(controller, controller.duties.bootstrap_extra))
    driver = Driver(core, raft_log, make_dispatcher=make_dispatcher, deliver=deliver, store=store,
                    listeners=specs, request_timeout_ms=config.quorum_request_timeout_ms,
                    retry_backoff_ms=config.quorum_retry_backoff_ms,
                    max_bytes=config.socket_request_max_bytes, clock=clock,
                    connection_limits=ConnectionLimits(config["max.connections"], config["max.connections.per.ip"],
                                                       config["connections.max.idle.ms"]),
                    after_cycle=after_cycle, extra_servers=extra_servers, controller=controller,
                    timers=[groups], queued_max_requests=config["queued.max.requests"],
                    client_id=f"raft-client-{config.node_id}")  # Kafka's name for its Raft client
    driver.peers.security = controller_client_security(config)
    groups.wake = driver.wake
    _wire_controller_channel(config, controller, driver)
    return Node(config, driver, core, raft_log, meta.cluster_id, groups)


def _group_service(config: KafkaConfig, clock):
    """The consumer-group coordinator, its offsets in ``metadata.log.dir`` (api/groups)."""
    from kraft_server.api.groups import GroupService
    from kraft_server.groups.coordinator import GroupSettings
    from kraft_server.groups.offset_store import OffsetStore

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
    controller.busy_clock = time.monotonic  # long polls are credited to broker sessions
    driver.extra_channels.append(channel)  # closed with the core's when the loop ends
    if config["kraft.broker.fast.fencing.enable"]:
        from kraft_server.net.listener_probe import ListenerProber
        prober = ListenerProber()  # the listener probes of fast fencing
        controller.prober = prober.probe
        driver.extra_channels.append(prober)


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
    node.driver.after_cycle = chain(node.driver.after_cycle, pauses.report)
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
