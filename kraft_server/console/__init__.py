"""The quorum console: a read-only page served by the node (``kraft.console.listener=
HOST:PORT``, off by default) that shows the quorum, its history and the metadata log
live, from the views the API handlers already read.

- ``listener.py`` ``kraft.console.listener`` (``SSL://`` or ``SASL_SSL://`` for HTTPS),
  ``secure.py`` its TLS context and ``gate.py`` who may see it (``login.py``: Basic);

- ``http.py`` the HTTP/1.1 server and its routes;
- ``state.py`` the snapshot (quorum, voter sets, image) as JSON-able data;
- ``timeline.py`` what is remembered over time, fed after every Ready cycle
  (transitions, high-watermark samples, voter-set history) and ``tail.py`` the last
  committed records, decoded by ``fields.py``;
- ``events.py`` server-sent events to open pages: bounded rate, coalesced, a page
  that stops reading is dropped;
- ``static/`` the page: HTML, CSS and one JavaScript file of ours, no build step.

Everything runs on the node's event loop between Ready cycles and never waits for a
page; like the Prometheus endpoint it imports no asyncio (its timers come from
``net/timers.py``, its replies from ``net/http_reply.py``). When ``kraft.metrics.prometheus.listener`` names the same address, one server
answers both (``/metrics`` there).
"""
from __future__ import annotations

import logging

from .events import EventHub
from .gate import Gate
from .http import ConsoleProtocol, load_static
from .listener import parse_console_listener
from .state import StateBuilder
from .timeline import Timeline

log = logging.getLogger(__name__)


class Console:
    def __init__(self, view, core, raft_log, controller, clock, peers: dict[int, str], metrics=None,
                 gate=None):
        self.clock = clock
        self.gate = gate if gate is not None else Gate()  # who may see it (gate.py)
        self.core = core
        self.controller = controller
        self.static = load_static()
        self.timeline = Timeline(core, raft_log, clock())
        self.state = StateBuilder(view, core, raft_log, controller, self.timeline, peers)
        self.events = EventHub(self.snapshot, self.fingerprint, clock)
        self.metrics = metrics  # (accept, query) -> (body, content type), when shared

    def snapshot(self, since_seq: int = 0, since_sample_ms: int = -1) -> dict:
        state = self.state.build(self.clock(), since_seq, since_sample_ms)
        hub = self.events
        state["pages"] = {"open": len(hub.pages), "dropped": hub.dropped, "updates": hub.published}
        return state

    def fingerprint(self) -> tuple:
        core, timeline = self.core, self.timeline
        image = None if self.controller is None else self.controller.image.offset
        return (core.high_watermark, core.role, core.epoch, core.leader_id, timeline.changes,
                timeline.tail.seq, image, core.history.latest_offset())

    def observe(self, now_ms: int) -> None:
        self.timeline(now_ms)

    def protocol(self) -> ConsoleProtocol:
        return ConsoleProtocol(self)


def console_peers(config) -> dict[int, str]:
    """``kraft.console.peers`` (``id@host:port``) as links, with our own address; the
    scheme (http or https) is our console's: a quorum's consoles are set up alike."""
    from kraft_server.config import parse_voters

    own = parse_console_listener(config["kraft.console.listener"])
    peers = {v.node_id: f"{own.scheme}://{v.host}:{v.port}/"
             for v in parse_voters(config["kraft.console.peers"], "kraft.console.peers")}
    if own.host not in ("", "0.0.0.0", "::"):
        peers.setdefault(config.node_id, f"{own.scheme}://{own.host}:{own.port}/")
    return peers


def attach(config, view, core, raft_log, controller, clock, after_cycle, extra_servers, credentials=None):
    """The console's observer chained after ``after_cycle`` and its server added to
    ``extra_servers`` (or sharing the Prometheus server at the same address when the
    console is plain HTTP); ``credentials(mechanism, user)``: the node's SCRAM users."""
    from kraft_server.net.offload import offload

    from .secure import console_security

    ep = parse_console_listener(config["kraft.console.listener"])
    context, gate = console_security(config, ep, controller, credentials, offload)
    metrics, servers = None, []
    for server in extra_servers:
        name, host, port, factory = server[:4]
        if name == "PROMETHEUS" and (host, port) == (ep.host, ep.port):
            if ep.tls:
                from kraft_server.config import ConfigError
                raise ConfigError("kraft.console.listener: a TLS console cannot share its address with "
                                  "kraft.metrics.prometheus.listener (plain HTTP)", "kraft.console.listener")
            from kraft_server.metrics.prometheus import expose  # loaded only when configured
            registry = factory().registry  # one server answers both
            metrics = lambda accept, query: expose(registry, accept, query)  # noqa: E731
        else:
            servers.append(server)
    console = Console(view, core, raft_log, controller, clock, console_peers(config), metrics, gate)

    failures = [0]

    def both(now_ms: int) -> None:
        after_cycle(now_ms)
        try:
            console.observe(now_ms)
        except Exception:  # the console must never stop the node's loop
            failures[0] += 1
            if failures[0] % 1000 == 1:  # the first, then every thousandth
                log.exception("console: observing the node failed (%d times)", failures[0])

    log.info("quorum console on %s://%s:%d/%s%s", ep.scheme, ep.host or "0.0.0.0", ep.port,
             " (with /metrics)" if metrics else "", " (login)" if gate.login is not None else "")
    return both, servers + [("CONSOLE", ep.host, ep.port, console.protocol, context)]
