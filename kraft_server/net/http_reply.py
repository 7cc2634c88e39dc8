"""One HTTP/1.1 response per connection (``Connection: close``), the shape both the
Prometheus endpoint (``prometheus.ScrapeProtocol``) and the quorum console
(``kraft_server/console/http.py``) answer in: an asyncio protocol by duck typing
(``connection_made``, ``data_received``, ``connection_lost``) that the shell's driver
binds. Kept apart from ``kraft_server/metrics`` so that the console does not load
``prometheus_client`` (about 4 MiB) when no Prometheus endpoint is configured. No
asyncio here: the protocol is duck-typed."""
from __future__ import annotations


class OneResponseProtocol:
    def __init__(self):
        self.transport = None
        self.buffer = b""

    def connection_made(self, transport) -> None:
        self.transport = transport

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
