"""The Prometheus text exposition format (0.0.4) and a minimal HTTP/1.1 GET server.

Names are what the Prometheus JMX exporter makes of Kafka's MBeans: the domain,
type and name joined and snake-cased, so
``kafka.server:type=raft-metrics,name=number-of-voters`` becomes
``kafka_server_raft_metrics_number_of_voters``. current-state, a string in Kafka,
becomes ``kafka_server_raft_metrics_current_state{state="leader"} 1``.

:class:`ScrapeProtocol` is an asyncio protocol by duck typing (``connection_made``,
``data_received``, ``connection_lost``): ``GET /metrics`` (or ``/``) answers 200 with
the text, ``HEAD`` the headers only, other paths 404 and other methods 405. One
request per connection (``Connection: close``), which is what Prometheus needs.
"""
from __future__ import annotations

import logging
import math

from .raft_metrics import Metric

log = logging.getLogger(__name__)

PREFIX = "kafka_server_raft_metrics_"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MAX_REQUEST_HEAD = 8192


def metric_name(kafka_name: str, prefix: str = PREFIX) -> str:
    return prefix + kafka_name.replace("-", "_").replace(".", "_")


def _value(v: float) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "+Inf" if v > 0 else "-Inf"
        if v.is_integer():
            return str(int(v))
        return repr(v)
    return str(int(v))


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def render(metrics: list[Metric], prefix: str = PREFIX) -> str:
    lines = []
    for m in metrics:
        name = metric_name(m.name, prefix)
        lines.append(f"# HELP {name} {m.help}")
        lines.append(f"# TYPE {name} gauge")
        labels = ",".join(f'{k}="{_escape(v)}"' for k, v in m.labels)
        lines.append(f"{name}{{{labels}}} {_value(m.value)}" if labels else f"{name} {_value(m.value)}")
    return "\n".join(lines) + "\n"


class ScrapeProtocol:
    """One HTTP/1.1 request per connection. ``collect()`` returns the body text."""

    def __init__(self, collect):
        self.collect = collect
        self.transport = None
        self.buffer = b""

    def connection_made(self, transport) -> None:
        self.transport = transport

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
        request_line = self.buffer.split(b"\n", 1)[0].strip().decode("latin-1")
        parts = request_line.split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            self._reply(400, "Bad Request", b"bad request line\n")
            return
        method, target, _ = parts
        path = target.split("?", 1)[0]
        if method not in ("GET", "HEAD"):
            self._reply(405, "Method Not Allowed", b"only GET\n", extra="Allow: GET, HEAD\r\n")
            return
        if path not in ("/metrics", "/"):
            self._reply(404, "Not Found", b"try /metrics\n")
            return
        try:
            body = self.collect().encode()
        except Exception:  # a scrape must never take the node down
            log.exception("collecting metrics failed")
            self._reply(500, "Internal Server Error", b"collecting metrics failed\n")
            return
        self._reply(200, "OK", body, head_only=method == "HEAD", content_type=CONTENT_TYPE)

    def _reply(self, status: int, reason: str, body: bytes, *, head_only: bool = False,
               content_type: str = "text/plain; charset=utf-8", extra: str = "") -> None:
        head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\n{extra}Connection: close\r\n\r\n")
        self.transport.write(head.encode("latin-1") + (b"" if head_only else body))
        self.transport.close()

    def eof_received(self):
        return False

    def connection_lost(self, exc) -> None:
        self.transport = None
