"""One server-side connection's request pipeline, sans-I/O.

The asyncio adapter (``connection.py``) feeds bytes in and writes out whatever
``output()`` returns; everything else is decided here, so the rules can be tested
without sockets:

- **Framing.** ``wire.framing.FrameReader`` checks the announced size before
  buffering toward it; a size above ``socket.request.max.bytes`` (or negative) is a
  ``ProtocolViolation`` and the adapter closes *that* connection, as Kafka's
  ``InvalidReceiveException`` does.
- **Which requests we accept.** Each listener exposes a table ``{api_key: (min, max)}``
  (``kraft_server.api.registry``). An API key outside the table (unknown to Kafka, or
  not served on this listener, e.g. Metadata on a controller listener) or a header we
  cannot decode closes the connection: Kafka 4.3.1 does exactly that (checked against
  a real controller, see ``tests/unit/net/test_net_pipeline.py``).
- **Unsupported versions.** ApiVersions at a version we do not know is answered with
  a v0 body carrying UNSUPPORTED_VERSION and our ApiVersions range, so the client can
  retry lower (KIP-511; ``NetworkClient`` retries with the listed max). Any other API
  at an unsupported version closes the connection (what the real controller does).
- **Ordering.** Requests may be answered in any order (some go to the Raft core and
  come back many ticks later) but responses leave in request order, as Kafka clients
  require (they match by correlation id *and* expect FIFO per connection).
- **Flow control.** At most ``max_in_flight`` requests are dispatched and not yet
  answered; further complete frames wait in a backlog and the adapter pauses
  reading while ``wants_pause`` is true. Kafka itself mutes a channel until its one
  in-flight request is answered; we allow bounded pipelining instead.
"""
from __future__ import annotations

import logging
import struct
from collections import deque

from wire.errors import ErrorCode
from wire.exceptions import DecodeError, EncodeError
from wire.framing import DEFAULT_MAX_BYTES, FrameReader, FrameTooLarge
from wire.codec_support import encode_parts
from wire.headers import (
    decode_request_header, encode_response_parts, peek_key_version, response_header_bytes,
)
from wire.messages import REQUESTS, ApiVersionsRequest, ApiVersionsResponse
from wire.messages.api_versions_response import ApiVersion

from kraft_server.security.principal import ANONYMOUS

from .fetch_template import FETCH, FetchTemplate
from .sasl_gate import SASL_APIS, answer_sasl_call

log = logging.getLogger(__name__)

DEFAULT_MAX_IN_FLIGHT = 64


class ProtocolViolation(Exception):
    """The peer broke the protocol: close the connection (nothing is answered)."""


class InboundCall:
    """One request read from a connection (an ``api.call.Call``). It is the ``handle`` the Raft core sees
    in ``InboundRequest`` and hands back in ``OutboundResponse``."""

    __slots__ = ("pipeline", "header", "api_key", "api_version", "body", "listener",
                 "_encoded", "_done")

    def __init__(self, pipeline, header, api_key, api_version, body, listener):
        self.pipeline = pipeline
        self.header = header
        self.api_key = api_key
        self.api_version = api_version
        self.body = body
        self.listener = listener
        self._encoded: list | None = None  # the response frame as buffers
        self._done = False

    @property
    def correlation_id(self) -> int:
        return self.header.correlation_id

    @property
    def done(self) -> bool:
        return self._done

    def respond(self, body, api_version: int | None = None, shared: bool = False) -> None:
        """Answer with ``body`` (encoded at the request's version unless told).
        ``shared``: the same body object answers several requests in a row (observers
        at one fetch offset), so it is encoded once and only the header differs."""
        self.pipeline.complete(self, body, self.api_version if api_version is None else api_version,
                               shared)

    def close_connection(self, reason: str) -> None:
        """Answer nothing and close the connection (Kafka does so for an acks=0
        produce that failed)."""
        self.pipeline.fail(self, reason)

    @property
    def principal(self) -> str:
        """The connection's KafkaPrincipal (``User:ANONYMOUS`` until authenticated)."""
        return self.pipeline.principal

    forwarded = False

    @property
    def token_authenticated(self) -> bool:
        return self.pipeline.token_authenticated

    @property
    def host(self) -> str:
        """The client's address, "" when the adapter did not say."""
        peer = self.pipeline.peer
        return peer[0] if isinstance(peer, tuple) and peer else ""

    def __repr__(self) -> str:
        return (f"InboundCall({self.listener} key={self.api_key} v{self.api_version} "
                f"corr={self.correlation_id})")


class SharedBody:
    """The last few shared response bodies and their encodings: a body answering many
    requests (one Fetch answer for every observer at the same offset, over several
    slices of a Ready) is encoded once; each frame is then one buffer (size prefix and
    header) in front of the same buffers. The bodies are held, so the identity test
    cannot match a new object at a recycled id.

    Every response header starts with the int32 correlation id; what follows it (the
    tagged fields of header v1) is the same for every frame of one API version, so it
    is taken from ``wire.headers`` once and only the id is packed per frame."""

    KEEP = 4  # bodies remembered (a voter's answer between two observers' slices)

    def __init__(self):
        self._bodies: dict = {}  # id(body) -> (body, version, parts, size), oldest first
        self._tails: dict = {}  # (api key, version) -> header bytes after the correlation id

    def frame(self, api_key: int, api_version: int, correlation_id: int, body) -> list:
        entry = self._bodies.get(id(body))
        if entry is None or entry[0] is not body or entry[1] != api_version:
            parts = encode_parts(b"", body, api_version)
            entry = (body, api_version, parts, sum(len(p) for p in parts))
            bodies = self._bodies
            bodies.pop(id(body), None)
            if len(bodies) >= self.KEEP:
                del bodies[next(iter(bodies))]
            bodies[id(body)] = entry
        tail = self._tails.get((api_key, api_version))
        if tail is None:
            tail = self._tails[(api_key, api_version)] = response_header_bytes(api_key, api_version, 0)[4:]
        return [_SIZE_AND_ID.pack(4 + len(tail) + entry[3], correlation_id) + tail, *entry[2]]


_SIZE_AND_ID = struct.Struct(">ii")  # frame size prefix, then the correlation id


_SHARED = SharedBody()


class Pipeline:
    """Frames in, ``InboundCall`` objects out, responses out in request order."""

    def __init__(self, listener: str, apis: dict[int, tuple[int, int]], *,
                 max_bytes: int = DEFAULT_MAX_BYTES,
                 max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
                 on_output=None):
        self.listener = listener
        self.apis = apis
        self.max_in_flight = max_in_flight
        self._reader = FrameReader(max_bytes)
        self.fetches = FetchTemplate()  # a replica's next Fetch read from its last one
        self._backlog: deque[bytes] = deque()  # complete frames not yet dispatched
        self._calls: deque[InboundCall] = deque()  # dispatched, in request order
        self._out: list = []  # buffers (bytes, or views of log segments) to write, in order
        self._on_output = on_output  # called when output() has something new
        self.closed = False
        self.failed: str | None = None  # set when the connection must be closed
        self.peer = None  # the client's (host, port), set by the adapter (DescribeGroups' client host)
        self.close_watchers: dict | None = None  # name -> fn(by_peer), see watch_close
        self.principal = ANONYMOUS  # set by net/secure.py (mutual TLS, SASL)
        self.gate = None  # net/sasl_gate.py SaslGate until SASL authentication succeeds
        self.token_authenticated = False  # a SASL/SCRAM login with a delegation token (tokenauth)

    @property
    def authenticating(self) -> bool:
        """SASL has not completed yet (an ApiVersions now is the pre-authentication one)."""
        return self.gate is not None and self.gate.state != "COMPLETE"

    # -- input ---------------------------------------------------------------------
    def receive_data(self, data) -> None:
        """Buffer bytes; raises ``ProtocolViolation`` on an oversized frame (the whole
        frames before it stay in the backlog: they are still answered)."""
        try:
            self._backlog.extend(self._reader.feed(data))
        except FrameTooLarge as exc:
            self._backlog.extend(exc.frames)
            raise ProtocolViolation(str(exc)) from exc

    @property
    def idle(self) -> bool:
        """Nothing buffered and every request answered."""
        return not self._backlog and not self._calls

    @property
    def has_backlog(self) -> bool:
        """Complete frames read and not yet dispatched."""
        return bool(self._backlog)

    @property
    def in_flight(self) -> int:
        return len(self._calls)

    @property
    def wants_pause(self) -> bool:
        """True while the adapter should stop reading from the socket."""
        return bool(self._backlog) or len(self._calls) >= self.max_in_flight

    def next_call(self) -> InboundCall | None:
        """The next request to dispatch, or None (nothing buffered, or too many in
        flight). Requests answered here (ApiVersions at an unknown version) are not
        returned. Raises ``ProtocolViolation`` for frames that close the connection."""
        while self._backlog and len(self._calls) < self.max_in_flight:
            try:
                call = self._parse(self._backlog.popleft())
            except ProtocolViolation:
                self._backlog.clear()  # Kafka never reads past the bad request
                raise
            if call is not None:
                return call
        return None

    def _parse(self, frame) -> InboundCall | None:
        if self.gate is not None and self.gate.consumed(self, frame):
            return None  # a raw SASL token (after a v0 SaslHandshake)
        known = self.fetches.read(frame)
        if known is not None:  # the last Fetch again, with a new position
            header, body = known
            call = InboundCall(self, header, FETCH, header.request_api_version, body, self.listener)
            self._calls.append(call)
            return call
        try:
            api_key, api_version = peek_key_version(frame)
        except DecodeError as exc:
            raise ProtocolViolation(f"request too short for a header: {exc}") from None
        supported = self.apis.get(api_key)
        if supported is None or api_key not in REQUESTS:
            raise ProtocolViolation(f"API key {api_key} is not served on listener {self.listener}")
        try:
            header, pos = decode_request_header(frame)
        except DecodeError as exc:
            raise ProtocolViolation(f"undecodable request header (key {api_key}): {exc}") from None
        lo, hi = supported
        if not lo <= api_version <= hi:
            if api_key != ApiVersionsRequest.API_KEY:
                raise ProtocolViolation(
                    f"unsupported version {api_version} of API key {api_key} (we serve {lo}-{hi})")
            call = InboundCall(self, header, api_key, api_version, None, self.listener)
            self._calls.append(call)
            # KIP-511: a v0 body the oldest client can parse, listing our range.
            self.complete(call, ApiVersionsResponse(
                error_code=ErrorCode.UNSUPPORTED_VERSION,
                api_keys=[ApiVersion(api_key=ApiVersionsRequest.API_KEY, min_version=lo, max_version=hi)]), 0)
            return None
        try:
            body, _ = REQUESTS[api_key].read(frame, pos, api_version)
        except DecodeError as exc:
            raise ProtocolViolation(
                f"undecodable body of API key {api_key} v{api_version}: {exc}") from None
        if api_key == FETCH:
            self.fetches.learn(frame, header, body, pos, api_version)
        call = InboundCall(self, header, api_key, api_version, body, self.listener)
        self._calls.append(call)
        if api_key in SASL_APIS:
            answer_sasl_call(self, call)  # answered here, never dispatched
            return None
        return call

    # -- output --------------------------------------------------------------------
    def complete(self, call: InboundCall, body, api_version: int, shared: bool = False) -> None:
        if call.pipeline is not self or call._done:
            raise ValueError(f"{call!r} is not pending on this connection")
        if self.closed:
            call._done = True
            return
        try:
            if shared:
                call._encoded = _SHARED.frame(call.api_key, api_version, call.correlation_id, body)
            else:
                call._encoded = encode_response_parts(call.api_key, api_version, call.correlation_id, body)
        except EncodeError as exc:
            # A response the request's version cannot carry is our bug; the client would
            # wait forever for it, so the connection is closed rather than skipped.
            log.error("cannot encode the response to %r: %s", call, exc)
            call._done = True
            self.failed = f"cannot encode the response to {call!r}: {exc}"
            if self._on_output is not None:
                self._on_output()
            return
        call._done = True
        calls, out = self._calls, self._out
        grew = False
        while calls and calls[0]._done:
            head = calls.popleft()
            if head._encoded is not None:
                out.extend(head._encoded)
                head._encoded = None
                grew = True
        if grew and self._on_output is not None:
            self._on_output()

    def answer_and_close(self, header, api_key: int, api_version: int, body, answer, reason: str) -> None:
        """A request answered before dispatch with ``answer`` (the SASL gate's refusal);
        the connection closes once it is written and nothing after it is read."""
        call = InboundCall(self, header, api_key, api_version, body, self.listener)
        self._calls.append(call)
        self._backlog.clear()
        self.complete(call, answer, api_version)
        self.close_after_output(reason)

    def fail(self, call: InboundCall, reason: str) -> None:
        """``call`` gets no answer; the connection is closed once what is ready is written."""
        call._done = True
        self.failed = reason
        if self._on_output is not None:
            self._on_output()

    def write_raw(self, data: bytes) -> None:
        """Queue bytes outside Kafka's request/response framing (v0 SASL tokens)."""
        self._out.append(data)
        if self._on_output is not None:
            self._on_output()

    def close_after_output(self, reason: str) -> None:
        """Close the connection once what is queued is written (a failed SASL exchange)."""
        self.failed = reason
        if self._on_output is not None:
            self._on_output()

    def output(self) -> bytes:
        """Responses ready to be written, in request order."""
        return b"".join(self.output_buffers())

    def output_buffers(self) -> list:
        """The same as buffers, for a gathering write: large records fields (fetch
        answers) are views of the log, not copies."""
        out, self._out = self._out, []
        return out

    def watch_close(self, name: str, fn) -> None:
        """Call ``fn(by_peer)`` once the connection is gone (one watcher per name):
        ``by_peer`` is true for an EOF or a reset, false when we closed it."""
        if self.close_watchers is None:
            self.close_watchers = {}
        self.close_watchers[name] = fn

    def lost(self, by_peer: bool) -> None:
        """The adapter's report that the connection is gone: the watchers are told."""
        watchers, self.close_watchers = self.close_watchers, None
        for fn in (watchers or {}).values():
            try:
                fn(by_peer)
            except Exception:  # a watcher's bug must not break the connection's teardown
                log.exception("close watcher failed")

    def close(self) -> list[InboundCall]:
        """Forget the connection; returns the calls that will never be answered."""
        self.closed = True
        pending = [c for c in self._calls if not c._done]
        self._calls.clear()
        self._backlog.clear()
        self._out.clear()
        return pending

