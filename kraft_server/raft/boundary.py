"""What crosses the boundary between the core and its shell.

Inbound: ``InboundRequest`` (a peer or client asked us something; we answer it
later through ``Ready.responses``) and ``InboundResponse`` (the answer to a request
we sent, or why there is none). Outbound: ``OutboundRequest`` and
``OutboundResponse`` in ``Ready``. Bodies are generated message objects from
``wire.messages``; the shell encodes them at the negotiated version.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from kraft_server.common.values import ElectionState


@dataclass(frozen=True)
class Endpoint:
    """Where a peer listens: a listener name and an address."""

    name: str  # listener name, upper-case (e.g. "CONTROLLER")
    host: str
    port: int


@dataclass(frozen=True)
class Destination:
    """A peer to send to: a known node (id >= 0) or a bootstrap address (id -1)."""

    node_id: int
    endpoint: Endpoint


@dataclass
class InboundRequest:
    """A request that reached us. ``handle`` is the shell's, opaque to the core."""

    handle: object
    api_key: int
    api_version: int
    body: object  # a wire.messages request object
    listener: str = "CONTROLLER"


class SendFailure(Enum):
    """Why an outbound request got no response."""

    TIMEOUT = "timeout"  # controller.quorum.request.timeout.ms elapsed
    DISCONNECTED = "disconnected"  # connection refused, reset or closed
    UNSUPPORTED_VERSION = "unsupported_version"  # the peer cannot take the version the body needs


@dataclass
class InboundResponse:
    """The answer to ``OutboundRequest`` number ``correlation``: a body or a failure."""

    correlation: int
    destination: Destination
    api_key: int
    body: object | None = None
    failure: SendFailure | None = None


@dataclass
class OutboundRequest:
    """A request for the shell to send. ``min_version`` is the lowest version that can
    carry what the core put in the body (e.g. Vote v2 for PreVote); the shell uses the
    highest version both sides support and reports UNSUPPORTED_VERSION below the minimum."""

    correlation: int
    destination: Destination
    api_key: int
    body: object
    min_version: int = 0


@dataclass
class OutboundResponse:
    """The answer to an ``InboundRequest``, encoded at that request's version."""

    handle: object
    api_key: int
    api_version: int
    body: object


@dataclass
class Ready:
    """Everything the core wants done now, in this order (``kraft_server/shell``):
    persist ``election`` (durably) if set; perform ``writes`` on the log in order
    (appends, truncation, snapshot chunks and install: ``log_view.LogWrite``); flush
    the log if ``flush``; only then send ``requests`` and ``responses``; then call
    ``advance``. Nothing leaves before what it depends on is durable."""

    flush: bool = False
    requests: list[OutboundRequest] = field(default_factory=list)
    responses: list[OutboundResponse] = field(default_factory=list)
    next_deadline_ms: int | None = None
    writes: list = field(default_factory=list)
    election: ElectionState | None = None
