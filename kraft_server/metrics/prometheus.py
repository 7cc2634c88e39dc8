"""The Prometheus endpoint: a per-node ``prometheus_client`` registry and a small
HTTP/1.1 GET handler served on the node's event loop.

Names are what the Prometheus JMX exporter makes of Kafka's MBeans: the domain,
type and name joined and snake-cased, so
``kafka.server:type=raft-metrics,name=number-of-voters`` becomes
``kafka_server_raft_metrics_number_of_voters``. current-state, a string in Kafka,
becomes ``kafka_server_raft_metrics_current_state{state="leader"} 1``.

The registry (:func:`node_registry`) is one per node, so several nodes can run in
one process: a :class:`RaftCollector` that reads the live values at each scrape,
plus the library's standard ``process_*`` and ``python_*`` collectors. The library
writes the exposition: text 0.0.4 by default, OpenMetrics when the scraper's
``Accept`` asks for it (``choose_encoder``), ``?name[]=`` to select series.

Why not the library's own HTTP server: it answers from a thread, and the values
are read from the Raft core, which only the event loop may touch between turns.
:class:`ScrapeProtocol` is an asyncio protocol by duck typing (``connection_made``,
``data_received``, ``connection_lost``) that ``kraft_server/shell/driver.py`` binds:
``GET /metrics`` (or ``/``) answers 200, ``HEAD`` the headers only, other paths 404,
other methods 405. One request per connection (``Connection: close``), which is
what Prometheus needs.
"""
from __future__ import annotations

import logging
from urllib.parse import parse_qs

from prometheus_client import CollectorRegistry, GCCollector, PlatformCollector, ProcessCollector
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import choose_encoder, generate_latest
from prometheus_client.registry import Collector

from kraft_server.net.http_reply import OneResponseProtocol
from .raft_metrics import Metric

log = logging.getLogger(__name__)

PREFIX = "kafka_server_raft_metrics_"
MAX_REQUEST_HEAD = 8192


def metric_name(kafka_name: str, prefix: str = PREFIX) -> str:
    return prefix + kafka_name.replace("-", "_").replace(".", "_")


class RaftCollector(Collector):
    """Kafka's raft-metrics as gauges; ``read()`` returns the live :class:`Metric` list."""

    def __init__(self, read, prefix: str = PREFIX):
        self.read = read
        self.prefix = prefix

    def collect(self):
        families: dict[str, GaugeMetricFamily] = {}
        for m in self.read():
            name = metric_name(m.name, self.prefix)
            family = families.get(name)
            if family is None:
                family = families[name] = GaugeMetricFamily(name, m.help, labels=[k for k, _ in m.labels])
            family.add_metric([v for _, v in m.labels], float(m.value))
        return list(families.values())


def node_registry(read, prefix: str = PREFIX) -> CollectorRegistry:
    """One node's registry: its raft-metrics and the process and Python collectors."""
    # No collector here describes its series (the raft ones come and go with the
    # node's role), so all are asked when ``name[]`` selects series.
    registry = CollectorRegistry(support_collectors_without_names=True)
    registry.register(RaftCollector(read, prefix))
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    return registry


def render(metrics: list[Metric], prefix: str = PREFIX) -> str:
    """The text format (0.0.4) of a fixed list of metrics, without the process ones."""
    registry = CollectorRegistry()
    registry.register(RaftCollector(lambda: metrics, prefix))
    return generate_latest(registry).decode()


def expose(registry: CollectorRegistry, accept: str, query: str) -> tuple[bytes, str]:
    """The body and content type for one scrape, as the library's own server answers."""
    encoder, content_type = choose_encoder(accept)
    names = parse_qs(query).get("name[]")
    target = registry.restricted_registry(names) if names else registry
    return encoder(target), content_type


class ScrapeProtocol(OneResponseProtocol):
    """One HTTP/1.1 request per connection, answered from ``registry``."""

    def __init__(self, registry: CollectorRegistry):
        super().__init__()
        self.registry = registry

    def data_received(self, data: bytes) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            end = self.buffer.find(b"\n\n")
        if end < 0:
            if len(self.buffer) > MAX_REQUEST_HEAD:
                self._reply(431, "Request Header Fields Too Large", b"")
            return
        request_line, *header_lines = self.buffer[:end].decode("latin-1").splitlines()
        parts = request_line.split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            self._reply(400, "Bad Request", b"bad request line\n")
            return
        method, target, _ = parts
        path, _, query = target.partition("?")
        if method not in ("GET", "HEAD"):
            self._reply(405, "Method Not Allowed", b"only GET\n", extra="Allow: GET, HEAD\r\n")
            return
        if path not in ("/metrics", "/"):
            self._reply(404, "Not Found", b"try /metrics\n")
            return
        headers = {}
        for line in header_lines:
            key, sep, value = line.partition(":")
            if sep:
                headers[key.strip().lower()] = value.strip()
        try:
            body, content_type = expose(self.registry, headers.get("accept", ""), query)
        except Exception:  # a scrape must never take the node down
            log.exception("collecting metrics failed")
            self._reply(500, "Internal Server Error", b"collecting metrics failed\n")
            return
        self._reply(200, "OK", body, head_only=method == "HEAD", content_type=content_type)
