"""The console's HTTP/1.1 server: one asyncio protocol per connection, on the node's
event loop (the snapshot is read from the core, which only the loop may touch).

Routes (read-only; anything but GET and HEAD is 405):

- ``/`` the page, ``/static/<file>`` its CSS and JavaScript (read once at start-up);
- ``/api/state`` the snapshot as JSON (``state.py``);
- ``/events`` server-sent events (``events.py``): the connection stays open;
- ``/metrics`` the Prometheus exposition, when ``kraft.metrics.prometheus.listener``
  names the same address (one server for both).

Every other answer is one response per connection (``Connection: close``). A
request head over 8 KiB or not HTTP/1.x is refused with 431 or 400, one not complete
within 10 s with 408. Before any route, the console's gate (``gate.py``) may answer
401 (no or wrong login) or 403 (no DESCRIBE on the cluster).
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

from kraft_server.net.http_reply import OneResponseProtocol
from kraft_server.net.timers import call_later

from .gate import FORBIDDEN, UNAUTHORIZED

log = logging.getLogger(__name__)

MAX_REQUEST_HEAD = 8192
REALM = "kraft console"
HEAD_TIMEOUT_S = 10.0  # to send a whole request head
STATIC = Path(__file__).with_name("static")
TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}


def load_static(folder: Path = STATIC) -> dict[str, tuple[bytes, str]]:
    """``/static/<name>`` and ``/``: content and type of each file, read once."""
    files = {f"/static/{p.name}": (p.read_bytes(), TYPES.get(p.suffix, "application/octet-stream"))
             for p in sorted(folder.iterdir()) if p.is_file()}
    files["/"] = files["/static/index.html"]
    return files


def parse_head(buffer: bytes):
    """``(method, path, query, headers)`` of a complete request head, ``None`` while
    it is incomplete, or ``(status, reason)`` for a bad one."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        end = buffer.find(b"\n\n")
    if end < 0:
        return (431, "Request Header Fields Too Large") if len(buffer) > MAX_REQUEST_HEAD else None
    request_line, *lines = buffer[:end].decode("latin-1").splitlines()
    parts = request_line.split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        return 400, "Bad Request"
    method, target, _ = parts
    path, _, query = target.partition("?")
    headers = {}
    for line in lines:
        key, sep, value = line.partition(":")
        if sep:
            headers[key.strip().lower()] = value.strip()
    return method, path, query, headers


class ConsoleProtocol(OneResponseProtocol):
    """One connection, bound by the shell's driver like the Prometheus endpoint, whose
    one-response-per-connection replies it shares (``net/http_reply.py``)."""

    def __init__(self, console):
        super().__init__()
        self.console = console  # console.Console: static files, snapshots, the event hub
        self.streaming = False
        self.deciding = False  # the gate's answer is awaited (a SCRAM login)
        self._timer = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        try:  # a connection that never completes its request is closed
            self._timer = call_later(HEAD_TIMEOUT_S, self._expire)
        except RuntimeError:  # no loop: driven by hand (tests)
            self._timer = None

    def _expire(self) -> None:
        self._timer = None
        if self.transport is not None and not self.streaming:
            self._reply(408, "Request Timeout", b"request timeout\n")

    def data_received(self, data: bytes) -> None:
        if self.transport is None or self.transport.is_closing() or self.streaming or self.deciding:
            return  # a page says nothing more on an event stream
        self.buffer += data
        head = parse_head(self.buffer)
        if head is None:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if len(head) == 2:
            self._reply(head[0], head[1], b"bad request\n")
            return
        method, path, query, headers = head
        if method not in ("GET", "HEAD"):
            self._reply(405, "Method Not Allowed", b"read-only: GET\n", extra="Allow: GET, HEAD\r\n")
            return
        gate = self.console.gate
        if gate.open:
            self._serve(method, path, query, headers)
            return
        self.deciding = True

        def decided(status: int, principal) -> None:
            self.deciding = False
            if self.transport is None or self.transport.is_closing():
                return  # the client left during a login check
            if status == UNAUTHORIZED:
                self._reply(401, "Unauthorized", b"log in with a user of the node\n",
                            extra=f'WWW-Authenticate: Basic realm="{REALM}", charset="UTF-8"\r\n')
            elif status == FORBIDDEN:
                self._reply(403, "Forbidden", b"DESCRIBE on the cluster is needed to see the console\n")
            else:
                self._serve(method, path, query, headers)
        try:
            gate.decide(self.transport, headers, decided)
        except Exception:
            log.exception("console: deciding access failed")
            self.deciding = False
            if self.transport is not None:
                self._reply(500, "Internal Server Error", b"console failed\n")

    def _serve(self, method: str, path: str, query: str, headers: dict) -> None:
        try:
            self.route(method, path, query, headers)
        except Exception:  # a page must never take the node down
            log.exception("console request %s failed", path)
            if self.transport is not None and not self.streaming:
                self._reply(500, "Internal Server Error", b"console failed\n")

    def route(self, method: str, path: str, query: str, headers: dict) -> None:
        console, head_only = self.console, method == "HEAD"
        static = console.static.get(path)
        if static is not None:
            self._reply(200, "OK", static[0], content_type=static[1], head_only=head_only)
        elif path == "/api/state":
            body = json.dumps(console.snapshot(), separators=(",", ":")).encode()
            self._reply(200, "OK", body, content_type="application/json", head_only=head_only,
                       extra="Cache-Control: no-store\r\n")
        elif path == "/events" and not head_only:
            self.streaming = console.events.join(self)
            if not self.streaming:
                self._reply(503, "Service Unavailable", b"too many console pages open\n",
                           extra="Retry-After: 5\r\n")
        elif path in ("/metrics", "/metrics/") and console.metrics is not None:
            body, content_type = console.metrics(headers.get("accept", ""), query)
            self._reply(200, "OK", body, content_type=content_type, head_only=head_only)
        else:
            self._reply(404, "Not Found", b"not found\n")

    def connection_lost(self, exc) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.streaming:
            self.console.events.leave(self)
        super().connection_lost(exc)
