"""The Forwarder (kraft_server/controller/forwarding.py): Envelopes to the leader's
controller listener, answers routed by correlation, NOT_CONTROLLER (None) when no
leader is known, the leader is this node, or the send fails."""
from __future__ import annotations

from types import SimpleNamespace

from kraft_server.controller.forwarding import Forwarder
from kraft_server.raft import Endpoint, InboundResponse
from wire.messages import EnvelopeRequest, EnvelopeResponse


class Core:
    def __init__(self, leader):
        self.leader_id = leader

    def leader_endpoints(self, listener):
        return () if self.leader_id is None or self.leader_id < 0 else (Endpoint("CONTROLLER", "127.0.0.1", 9000 + self.leader_id),)


def test_to_the_leader_and_back():
    f, got = Forwarder(2, "CONTROLLER"), []
    f.forward(EnvelopeRequest(request_data=b"r"), got.append)
    f.forward(EnvelopeRequest(request_data=b"s"), got.append)
    first, second = f.poll(Core(1))
    assert (first.destination.node_id, first.destination.endpoint.port, first.api_key) == (1, 9001, 58)
    assert f.poll(Core(1)) == [] and got == []
    assert not f.on_response(InboundResponse(correlation=5, destination=first.destination, api_key=68))  # not ours
    f.on_response(InboundResponse(correlation=second.correlation, destination=second.destination, api_key=58,
                                  body=EnvelopeResponse(response_data=b"answer")))
    f.on_response(InboundResponse(correlation=first.correlation, destination=first.destination, api_key=58,
                                  body=EnvelopeResponse(error_code=41)))  # NOT_CONTROLLER on the way
    assert got == [b"answer", None]


def test_no_leader_to_forward_to():
    f, got = Forwarder(2, "CONTROLLER"), []
    for leader in (None, -1, 2):  # unknown, or this node (leading, not yet active)
        f.forward(EnvelopeRequest(), got.append)
        assert f.poll(Core(leader)) == []
    assert got == [None, None, None]


def test_a_failed_send():
    f, got = Forwarder(2, "CONTROLLER"), []
    f.forward(EnvelopeRequest(), got.append)
    (sent,) = f.poll(Core(3))
    f.on_response(InboundResponse(correlation=sent.correlation, destination=sent.destination, api_key=58,
                                  failure=SimpleNamespace(value="timeout")))
    assert got == [None]
