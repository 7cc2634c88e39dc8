"""The asyncio adapter with a fake transport (no sockets, no loop): what it writes,
when it pauses and resumes reading, and when it closes."""
from __future__ import annotations

import struct

from kraft_server.api.registry import listener_apis
from kraft_server.net.connection import ServerConnection
from wire.headers import encode_request
from wire.messages import VoteRequest, VoteResponse


class FakeTransport:
    def __init__(self):
        self.written = bytearray()
        self.paused = False
        self.pauses = 0
        self.closed = False

    def get_extra_info(self, name, default=None):
        return ("127.0.0.1", 5555) if name == "peername" else default

    def write(self, data):
        self.written += data

    def writelines(self, buffers):
        for data in buffers:
            self.written += data

    def pause_reading(self):
        self.paused = True
        self.pauses += 1

    def resume_reading(self):
        self.paused = False

    def is_closing(self):
        return self.closed

    def close(self):
        self.closed = True


def make(max_in_flight=2):
    calls = []
    conn = ServerConnection("CONTROLLER", listener_apis(True), calls.append, max_bytes=1 << 20,
                            max_in_flight=max_in_flight)
    transport = FakeTransport()
    conn.connection_made(transport)
    return conn, transport, calls


def corr_ids(data):
    out = []
    while data:
        n = struct.unpack_from(">i", data)[0]
        out.append(struct.unpack_from(">i", data, 4)[0])
        data = data[4 + n:]
    return out


def test_reading_pauses_at_the_in_flight_limit_and_resumes_as_answers_go_out():
    conn, t, calls = make(max_in_flight=2)
    conn.data_received(b"".join(encode_request(52, 2, i, VoteRequest(), "c") for i in range(4)))
    assert [c.correlation_id for c in calls] == [0, 1] and t.paused
    calls[0].respond(VoteResponse())
    assert corr_ids(bytes(t.written)) == [0]
    assert [c.correlation_id for c in calls] == [0, 1, 2] and t.paused  # 3 still waits
    calls[1].respond(VoteResponse())
    calls[2].respond(VoteResponse())
    assert [c.correlation_id for c in calls] == [0, 1, 2, 3] and not t.paused
    calls[3].respond(VoteResponse())
    assert corr_ids(bytes(t.written)) == [0, 1, 2, 3]


def test_write_backpressure_pauses_reading():
    conn, t, calls = make(max_in_flight=10)
    conn.pause_writing()
    assert t.paused
    conn.data_received(encode_request(52, 2, 1, VoteRequest(), "c"))
    assert calls == []  # nothing is dispatched while the peer is not reading
    conn.resume_writing()
    assert [c.correlation_id for c in calls] == [1] and not t.paused


def test_a_violation_closes_the_transport_once_earlier_requests_are_answered():
    """Kafka reads the next request only after answering the last one, so a request
    in flight when a bad one arrives is answered first; nothing after the bad one is read
    (live fuzzer finding: the answer was dropped)."""
    conn, t, calls = make()
    conn.data_received(encode_request(52, 2, 1, VoteRequest(), "c"))
    conn.data_received(struct.pack(">i", 0x7FFFFFF0))
    assert not t.closed and t.paused
    conn.data_received(encode_request(52, 2, 2, VoteRequest(), "c"))  # never read
    calls[0].respond(VoteResponse())
    assert corr_ids(bytes(t.written)) == [1] and t.closed and len(calls) == 1


def test_frames_before_a_bad_one_in_the_same_read_are_answered():
    for bad in (struct.pack(">i", 0x7FFFFFFF), struct.pack(">i", -1), struct.pack(">ihh", 4, 999, 0),
                struct.pack(">ihh", 4, 52, 99)):
        conn, t, calls = make(max_in_flight=4)
        conn.data_received(encode_request(52, 2, 1, VoteRequest(), "c") + encode_request(52, 2, 2, VoteRequest(), "c")
                           + bad + encode_request(52, 2, 3, VoteRequest(), "c"))
        assert [c.correlation_id for c in calls] == [1, 2] and not t.closed
        calls[1].respond(VoteResponse())
        calls[0].respond(VoteResponse())
        assert corr_ids(bytes(t.written)) == [1, 2] and t.closed


def test_late_answers_after_a_close_are_dropped():
    conn, t, calls = make()
    conn.data_received(encode_request(52, 2, 1, VoteRequest(), "c"))
    conn.connection_lost(None)
    calls[0].respond(VoteResponse())  # the core answers after the close: no error
    assert t.written == b""


def test_a_handler_exception_closes_only_this_connection():
    def boom(call):
        raise RuntimeError("bug")
    conn = ServerConnection("CONTROLLER", listener_apis(True), boom, max_bytes=1 << 20)
    t = FakeTransport()
    conn.connection_made(t)
    conn.data_received(encode_request(52, 2, 1, VoteRequest(), "c"))
    assert t.closed
