"""Outbound channels to peers: connect, negotiate versions, send, time out, back off.

One ``PeerChannel`` per destination address. The Raft core hands over
``OutboundRequest`` objects; every one of them ends as exactly one
``InboundResponse`` passed to ``on_response``: a decoded body, or a ``SendFailure``.

The rules, following Kafka's ``NetworkClient`` and ``KafkaNetworkChannel``:

- **Handshake (KIP-511).** A new connection first sends ApiVersions v4. A peer that
  does not know v4 answers with a v0 body, error UNSUPPORTED_VERSION, listing its
  ApiVersions range: we retry at that range's max (or v0 when it lists none).
- **Version choice.** ``min(peer max, our max)`` for the API; below the request's
  ``min_version`` (or the peer's min, or the peer does not list the API at all) the
  request fails with ``SendFailure.UNSUPPORTED_VERSION`` without being sent.
- **Timeouts.** Each request has ``controller.quorum.request.timeout.ms`` from the
  moment it is handed over (connection set-up included). A request that times out
  after being written also closes the connection, as ``NetworkClient`` does: the
  stream is no longer known to be in sync.
- **Backoff.** After a connection fails, requests to that peer fail at once with
  DISCONNECTED until ``controller.quorum.retry.backoff.ms`` has passed; the next
  request then reconnects.
"""
from __future__ import annotations

import asyncio
import logging
import random
import ssl
import struct
import time
from collections import deque

from kraft_server.raft import InboundResponse, OutboundRequest, SendFailure
from .sasl_client import SaslClient, SaslFailed
from wire.errors import ErrorCode
from wire.exceptions import DecodeError, EncodeError
from wire.framing import DEFAULT_MAX_BYTES, FrameReader
from wire.headers import decode_response, encode_request
from wire.messages import REQUESTS, ApiVersionsRequest, ApiVersionsResponse

log = logging.getLogger(__name__)

HANDSHAKE_VERSION = 4
CLIENT_SOFTWARE_NAME = "kraft-server"
CLIENT_SOFTWARE_VERSION = "0.1.0"


def our_versions(api_key: int) -> tuple[int, int]:
    """The versions our codecs can write for ``api_key``."""
    cls = REQUESTS[api_key]
    return cls.MIN_VERSION, cls.MAX_VERSION


def choose_version(api_key: int, peer: dict[int, tuple[int, int]], min_version: int) -> int | None:
    """The version to send, or None when no usable version exists."""
    if api_key not in peer:
        return None
    ours_lo, ours_hi = our_versions(api_key)
    peer_lo, peer_hi = peer[api_key]
    version = min(ours_hi, peer_hi)
    if version < max(ours_lo, peer_lo, min_version):
        return None
    return version


class _Pending:
    __slots__ = ("request", "version", "timer", "wire_correlation")

    def __init__(self, request: OutboundRequest, timer):
        self.request = request
        self.version = -1
        self.timer = timer
        self.wire_correlation = -1


class PeerChannel(asyncio.Protocol):
    """A client connection to one peer address, with its queue and in-flight map."""

    def __init__(self, peers: "Peers", host: str, port: int):
        self.peers = peers
        self.host = host
        self.port = port
        self.transport: asyncio.Transport | None = None
        self.state = "idle"  # idle, connecting, handshake, sasl, ready, backoff
        self.backoff_until = 0.0
        self.api_versions: dict[int, tuple[int, int]] = {}
        self._handshake_version = HANDSHAKE_VERSION
        self._queue: deque[_Pending] = deque()  # waiting for the handshake
        self._in_flight: dict[int, _Pending] = {}  # by wire correlation id
        self._handshake_corr = -1
        self._next_corr = 0
        self._reader = FrameReader(DEFAULT_MAX_BYTES)
        self._reauth_at: float | None = None  # time.monotonic() to renew the SASL session

    # -- called by Peers ---------------------------------------------------------------
    def submit(self, request: OutboundRequest) -> None:
        loop = asyncio.get_running_loop()
        if self.state == "backoff":
            if time.monotonic() < self.backoff_until:
                self.peers.deliver(request, failure=SendFailure.DISCONNECTED)
                return
            self.state = "idle"
        pending = _Pending(request, None)
        pending.timer = loop.call_later(self.peers.request_timeout_s, self._timed_out, pending)
        if self.state == "ready" and not self._maybe_reauthenticate():
            self._send(pending)
            return
        self._queue.append(pending)
        if self.state == "idle":
            self.state = "connecting"
            loop.create_task(self._connect())

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        security = self.peers.security
        tls = security.ssl_context if security is not None else None
        options = {"ssl": tls, "server_hostname": self.host,
                   "ssl_handshake_timeout": self.peers.request_timeout_s} if tls is not None else {}
        try:
            await loop.create_connection(lambda: self, self.host, self.port, **options)
        except OSError as exc:
            level = logging.WARNING if isinstance(exc, ssl.SSLError) else logging.DEBUG
            log.log(level, "connect to %s:%d failed: %s", self.host, self.port, exc)
            self._failed()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    # -- asyncio.Protocol ----------------------------------------------------------------
    def connection_made(self, transport) -> None:
        self.transport = transport
        self.state = "handshake"
        self._reauth_at = None
        self._reader = FrameReader(DEFAULT_MAX_BYTES)
        self._send_handshake()

    def connection_lost(self, exc) -> None:
        log.debug("connection to %s:%d closed%s", self.host, self.port, f": {exc}" if exc else "")
        self.transport = None
        self._failed()

    def data_received(self, data) -> None:
        try:
            frames = self._reader.feed(data)
            for frame in frames:
                self._on_frame(frame)
        except Exception as exc:  # DecodeError, FrameTooLarge: the stream is unusable
            log.warning("bad response stream from %s:%d: %s", self.host, self.port, exc)
            self.close()

    # -- internals --------------------------------------------------------------------------
    def _corr(self) -> int:
        self._next_corr = (self._next_corr + 1) & 0x7FFFFFFF
        return self._next_corr

    def _send_handshake(self) -> None:
        self._handshake_corr = self._corr()
        body = ApiVersionsRequest(client_software_name=CLIENT_SOFTWARE_NAME,
                                  client_software_version=CLIENT_SOFTWARE_VERSION)
        self.transport.write(encode_request(ApiVersionsRequest.API_KEY, self._handshake_version,
                                            self._handshake_corr, body,
                                            self.peers.client_id))

    def _on_frame(self, frame) -> None:
        if len(frame) < 4:
            raise DecodeError("response shorter than its correlation id")
        corr = struct.unpack_from(">i", frame, 0)[0]
        if self.state == "handshake" and corr == self._handshake_corr:
            self._on_handshake(frame)
            return
        if self.state == "sasl" and corr == self._handshake_corr:
            self._on_sasl(frame)
            return
        pending = self._in_flight.pop(corr, None)
        if pending is None:
            raise DecodeError(f"response with unknown correlation id {corr}")
        request = pending.request
        try:
            _, body = decode_response(frame, request.api_key, pending.version)
        except DecodeError:
            self._finish(pending, failure=SendFailure.DISCONNECTED)
            raise
        self._finish(pending, body=body)
        self._maybe_reauthenticate()

    def _on_handshake(self, frame) -> None:
        version = self._handshake_version
        # ErrorCode is the first body field at every version (after the v0 response
        # header's correlation id). A server that does not know our version answers
        # UNSUPPORTED_VERSION with a v0 body (KIP-511), so read that one at v0.
        if len(frame) < 6:
            raise DecodeError("ApiVersions response too short")
        error_code = struct.unpack_from(">h", frame, 4)[0]
        _, body = decode_response(frame, ApiVersionsRequest.API_KEY,
                                  0 if error_code == ErrorCode.UNSUPPORTED_VERSION else version)
        if body.error_code == ErrorCode.UNSUPPORTED_VERSION:
            listed = [k for k in body.api_keys if k.api_key == ApiVersionsRequest.API_KEY]
            retry = min(listed[0].max_version, version - 1) if listed else 0
            if retry < 0 or retry >= version:
                raise DecodeError("peer cannot negotiate ApiVersions")
            self._handshake_version = max(retry, 0)
            self._send_handshake()
            return
        if body.error_code != 0:
            raise DecodeError(f"ApiVersions failed with error {body.error_code}")
        self.api_versions = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
        self.peer_features = {f.name: (f.min_version, f.max_version)
                              for f in body.supported_features}
        security = self.peers.security
        if security is not None and security.sasl is not None:
            self._sasl = SaslClient(security.sasl, self.api_versions)
            self.state = "sasl"
            self._send_sasl(self._sasl.first_request())
            return
        self._ready()

    def _send_sasl(self, request) -> None:
        api_key, version, body = request
        self._handshake_corr = self._corr()
        self.transport.write(encode_request(api_key, version, self._handshake_corr, body, self.peers.client_id))
        self._sasl_request = (api_key, version)

    def _on_sasl(self, frame) -> None:
        """SASL after ApiVersions (net/sasl_client.py); a failure closes the connection."""
        _, body = decode_response(frame, *self._sasl_request)
        try:
            following = self._sasl.on_response(body)
        except SaslFailed as exc:
            log.warning("SASL/%s authentication to %s:%d failed: %s", self._sasl.mechanism,
                        self.host, self.port, exc)
            self.close()
            return
        if following is not None:
            self._send_sasl(following)
            return
        # KIP-368: renew at 85% to 95% of the session, when idle (Kafka's SaslClientAuthenticator)
        lifetime = self._sasl.session_lifetime_ms
        self._reauth_at = time.monotonic() + lifetime * (0.85 + 0.1 * random.random()) / 1000 \
            if lifetime > 0 else None
        self._ready()

    def _maybe_reauthenticate(self) -> bool:
        """Start re-authenticating in band once the session is due and nothing is in flight."""
        if self._reauth_at is None or self.state != "ready" or self._in_flight \
                or time.monotonic() < self._reauth_at:
            return False
        self._reauth_at = None
        log.debug("SASL re-authentication to %s:%d", self.host, self.port)
        self._sasl = SaslClient(self.peers.security.sasl, self.api_versions)
        self.state = "sasl"
        self._send_sasl(self._sasl.first_request())
        return True

    def _ready(self) -> None:
        self.state = "ready"
        queue, self._queue = self._queue, deque()
        for pending in queue:
            self._send(pending)

    def _send(self, pending: _Pending) -> None:
        request = pending.request
        version = choose_version(request.api_key, self.api_versions, request.min_version)
        if version is None:
            self._finish(pending, failure=SendFailure.UNSUPPORTED_VERSION)
            return
        corr = self._corr()
        try:
            data = encode_request(request.api_key, version, corr, request.body, self.peers.client_id)
        except EncodeError as exc:
            log.debug("cannot encode %s at v%d for %s:%d: %s", type(request.body).__name__,
                      version, self.host, self.port, exc)
            self._finish(pending, failure=SendFailure.UNSUPPORTED_VERSION)
            return
        pending.version = version
        pending.wire_correlation = corr
        self._in_flight[corr] = pending
        self.transport.write(data)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("sent %s v%d to node %d at %s:%d", type(request.body).__name__, version,
                      request.destination.node_id, self.host, self.port)

    def _timed_out(self, pending: _Pending) -> None:
        pending.timer = None
        if pending.wire_correlation >= 0 and self._in_flight.get(pending.wire_correlation) is pending:
            del self._in_flight[pending.wire_correlation]
            self._finish(pending, failure=SendFailure.TIMEOUT)
            self.close()  # the connection's state is unknown now (NetworkClient does this too)
            return
        try:
            self._queue.remove(pending)
        except ValueError:
            return
        self._finish(pending, failure=SendFailure.TIMEOUT)

    def _failed(self) -> None:
        """The connection failed or closed: fail everything, back off."""
        self.transport = None
        self.state = "backoff"
        self.backoff_until = time.monotonic() + self.peers.retry_backoff_s
        pending = list(self._queue) + list(self._in_flight.values())
        self._queue.clear()
        self._in_flight.clear()
        for p in pending:
            self._finish(p, failure=SendFailure.DISCONNECTED)

    def _finish(self, pending: _Pending, *, body=None, failure: SendFailure | None = None) -> None:
        if pending.timer is not None:
            pending.timer.cancel()
            pending.timer = None
        self.peers.deliver(pending.request, body=body, failure=failure)


class Peers:
    """All outbound channels of a node."""

    def __init__(self, on_response, *, request_timeout_ms: int = 2000,
                 retry_backoff_ms: int = 20, client_id: str = "raft-client"):
        self.on_response = on_response
        self.request_timeout_s = request_timeout_ms / 1000.0
        self.retry_backoff_s = retry_backoff_ms / 1000.0
        self.client_id = client_id
        self.security = None  # kraft_server.security.ClientSecurity (None: PLAINTEXT)
        self._channels: dict[tuple[str, int], PeerChannel] = {}

    def send(self, request: OutboundRequest) -> None:
        ep = request.destination.endpoint
        key = (ep.host, ep.port)
        channel = self._channels.get(key)
        if channel is None:
            channel = self._channels[key] = PeerChannel(self, ep.host, ep.port)
        channel.submit(request)

    def deliver(self, request: OutboundRequest, *, body=None, failure=None) -> None:
        if failure is not None:
            ep = request.destination.endpoint
            log.debug("%s to node %d at %s:%d failed: %s", type(request.body).__name__,
                      request.destination.node_id, ep.host, ep.port, failure.value)
        self.on_response(InboundResponse(correlation=request.correlation,
                                         destination=request.destination,
                                         api_key=request.api_key, body=body, failure=failure))

    def idle(self) -> bool:
        """No request is waiting for a connection or for its answer."""
        return all(not c._queue and not c._in_flight for c in self._channels.values())

    def close(self) -> None:
        for channel in self._channels.values():
            channel.close()
