"""The quorum console: a read-only page served by the node (``kraft.console.listener=
HOST:PORT``, off by default) that shows the quorum, its history and the metadata log
live, from the views the API handlers already read.

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
from .http import ConsoleProtocol, load_static
from .state import StateBuilder
from .timeline import Timeline

log = logging.getLogger(__name__)


class Console:
    def __init__(self, view, core, raft_log, controller, clock, peers: dict[int, str], metrics=None):
        self.clock = clock
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
    """``kraft.console.peers`` (``id@host:port``) as links, with our own address."""
    from kraft_server.config import parse_host_port, parse_voters

    peers = {v.node_id: f"http://{v.host}:{v.port}/"
             for v in parse_voters(config["kraft.console.peers"], "kraft.console.peers")}
    own = parse_host_port(config["kraft.console.listener"], "kraft.console.listener")
    if own.host not in ("", "0.0.0.0", "::"):
        peers.setdefault(config.node_id, f"http://{own.host}:{own.port}/")
    return peers


def attach(config, view, core, raft_log, controller, clock, after_cycle, extra_servers):
    """The console's observer chained after ``after_cycle`` and its server added to
    ``extra_servers`` (or sharing the Prometheus server at the same address)."""
    from kraft_server.config import parse_host_port

    ep = parse_host_port(config["kraft.console.listener"], "kraft.console.listener")
    metrics, servers = None, []
    for server in extra_servers:
        name, host, port, factory = server
        if name == "PROMETHEUS" and (host, port) == (ep.host, ep.port):
            from kraft_server.metrics.prometheus import expose  # loaded only when configured
            registry = factory().registry  # one server answers both
            metrics = lambda accept, query: expose(registry, accept, query)  # noqa: E731
        else:
            servers.append(server)
    console = Console(view, core, raft_log, controller, clock, console_peers(config), metrics)

    failures = [0]

    def both(now_ms: int) -> None:
        after_cycle(now_ms)
        try:
            console.observe(now_ms)
        except Exception:  # the console must never stop the node's loop
            failures[0] += 1
            if failures[0] % 1000 == 1:  # the first, then every thousandth
                log.exception("console: observing the node failed (%d times)", failures[0])

    log.info("quorum console on http://%s:%d/%s", ep.host or "0.0.0.0", ep.port,
             " (with /metrics)" if metrics else "")
    return both, servers + [("CONSOLE", ep.host, ep.port, console.protocol)]
