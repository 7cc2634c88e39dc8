"""One blocking Kafka-protocol connection over our codecs: a request, then its answer.

The tools (``metadata_quorum``), the benches and the tests' secured sessions all speak
through it; each adds only what it needs on top (version choice, SASL, retries).
PLAINTEXT, or TLS with an ``ssl.SSLContext``."""
from __future__ import annotations

import socket
import ssl

from wire.framing import FrameReader
from wire.headers import decode_response, encode_request


class ConnectionClosed(ConnectionError):
    """The server closed the connection (or reset it)."""


class BlockingConnection:
    def __init__(self, host: str, port: int, *, timeout: float = 30.0, connect_timeout: float | None = None,
                 context: ssl.SSLContext | None = None, client_id: str = "kraft-client",
                 nodelay: bool = False) -> None:
        self.host, self.port, self.client_id = host, port, client_id
        raw = socket.create_connection((host, port), timeout=connect_timeout or timeout)
        raw.settimeout(timeout)
        if nodelay:
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = context.wrap_socket(raw, server_hostname=host) if context is not None else raw
        self._reader = FrameReader()
        self._frames: list = []
        self.correlation = 0

    def send(self, body, version: int) -> int:
        """Write one request; its correlation id."""
        self.correlation += 1
        self.sock.sendall(encode_request(body.API_KEY, version, self.correlation, body, self.client_id))
        return self.correlation

    def read_frame(self):
        """The next response frame (header and body, undecoded)."""
        while not self._frames:
            try:
                data = self.sock.recv(1 << 16)
            except (ConnectionResetError, ssl.SSLError) as exc:
                raise ConnectionClosed(str(exc)) from None
            if not data:
                raise ConnectionClosed("connection closed by the server")
            self._frames.extend(self._reader.feed(data))
        return self._frames.pop(0)

    def request(self, body, version: int):
        """``body`` sent at ``version``; the decoded answer."""
        self.send(body, version)
        return decode_response(self.read_frame(), body.API_KEY, version)[1]

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
