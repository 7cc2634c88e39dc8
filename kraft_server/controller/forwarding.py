"""Token requests a non-active node forwards to the active controller in an Envelope
(KIP-590), as a Kafka broker's ``ForwardingManager`` does: the client's request as it
came, its principal and address (``api/envelope_inner.py``), over the controller
listener, through the controller's outbound channel. The answer is the active
controller's; NOT_CONTROLLER when no leader is known, or the send fails or times out
(``quorum.request.timeout.ms``), or the Envelope itself carries an error.

Sans I/O: ``forward`` queues, ``poll`` hands out what to send, ``on_response`` takes
the answers (routed by correlation).
"""
from __future__ import annotations

import logging
from typing import Callable

from kraft_server.raft import Destination, OutboundRequest
from wire.messages import EnvelopeRequest

log = logging.getLogger(__name__)
ENVELOPE = EnvelopeRequest.API_KEY
FIRST_CORRELATION = 1 << 40  # apart from the registration sender's


class Forwarder:
    def __init__(self, node_id: int, listener: str | None) -> None:
        self.node_id = node_id
        self.listener = listener  # the first of controller.listener.names
        self._queued: list[tuple[EnvelopeRequest, Callable]] = []
        self._pending: dict[int, Callable] = {}
        self._correlations = iter(range(FIRST_CORRELATION, 1 << 62))

    def forward(self, envelope: EnvelopeRequest, answer: Callable) -> None:
        """``answer(response_data | None)``: the inner response's bytes, None for NOT_CONTROLLER."""
        self._queued.append((envelope, answer))

    def poll(self, core) -> list[OutboundRequest]:
        queued, self._queued = self._queued, []
        leader = core.leader_id
        endpoints = core.leader_endpoints(self.listener) if self.listener and leader is not None else ()
        out = []
        for envelope, answer in queued:
            if leader is None or leader < 0 or leader == self.node_id or not endpoints:
                answer(None)
                continue
            correlation = next(self._correlations)
            self._pending[correlation] = answer
            out.append(OutboundRequest(correlation=correlation, destination=Destination(leader, endpoints[0]),
                                       api_key=ENVELOPE, body=envelope))
        return out

    def on_response(self, response) -> bool:
        """Takes an answer to a forwarded request (False: not ours)."""
        answer = self._pending.pop(response.correlation, None)
        if answer is None:
            return False
        body = response.body
        if response.failure is not None or body is None or body.error_code:
            log.info("forwarding to the active controller failed: %s",
                     response.failure if body is None else f"error {body.error_code}")
            answer(None)
        else:
            answer(bytes(body.response_data))
        return True
