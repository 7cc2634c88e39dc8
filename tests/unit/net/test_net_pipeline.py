"""The server-side request pipeline, without sockets: ordering, flow control, and
what closes a connection (checked against a real Kafka 4.3.1 controller's behaviour,
recorded in tests/data/net/real_controller_4.3.1.json and noted below)."""
from __future__ import annotations

import struct

import pytest

from kraft_server.api.registry import listener_apis
from kraft_server.net.pipeline import Pipeline, ProtocolViolation
from wire.headers import decode_response, encode_request
from wire.messages import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, VoteRequest, VoteResponse


def apiv(corr, version=3):
    return encode_request(18, version, corr, ApiVersionsRequest(client_software_name="t",
                                                                client_software_version="1"), "c")


def vote(corr, version=2):
    return encode_request(52, version, corr, VoteRequest(cluster_id="x"), "c")


def raw_request(key, version, corr, tail=b""):
    """A request header v2 by hand (client id "c", no tags) plus ``tail``."""
    body = struct.pack(">hhi", key, version, corr) + struct.pack(">h", 1) + b"c" + b"\x00" + tail
    return struct.pack(">i", len(body)) + body


def frames(data: bytes) -> list[bytes]:
    out = []
    while data:
        n = struct.unpack_from(">i", data)[0]
        out.append(data[4:4 + n])
        data = data[4 + n:]
    return out


def correlation_ids(data: bytes) -> list[int]:
    return [struct.unpack_from(">i", f)[0] for f in frames(data)]


@pytest.fixture
def pipe():
    return Pipeline("CONTROLLER", listener_apis(True))


def drain(pipe):
    calls = []
    while (c := pipe.next_call()) is not None:
        calls.append(c)
    return calls


def test_pipelined_requests_are_answered_in_request_order(pipe):
    pipe.receive_data(vote(1) + apiv(2) + vote(3) + apiv(4))
    c1, c2, c3, c4 = drain(pipe)
    c4.respond(ApiVersionsResponse())  # answered first, written last
    c2.respond(ApiVersionsResponse())
    assert pipe.output() == b""  # 1 is still pending: nothing may overtake it
    c1.respond(VoteResponse())
    assert correlation_ids(pipe.output()) == [1, 2]
    c3.respond(VoteResponse())
    assert correlation_ids(pipe.output()) == [3, 4]
    assert pipe.in_flight == 0 and not pipe.failed


def test_bytes_split_anywhere(pipe):
    stream = vote(7) + apiv(8)
    got = []
    for b in stream:
        pipe.receive_data(bytes([b]))
        got += drain(pipe)
    assert [c.correlation_id for c in got] == [7, 8]


def test_flow_control_holds_requests_beyond_the_limit():
    pipe = Pipeline("CONTROLLER", listener_apis(True), max_in_flight=2)
    pipe.receive_data(b"".join(vote(i) for i in range(5)))
    first = drain(pipe)
    assert [c.correlation_id for c in first] == [0, 1]
    assert pipe.wants_pause  # the adapter stops reading
    first[0].respond(VoteResponse())
    assert [c.correlation_id for c in drain(pipe)] == [2]
    first[1].respond(VoteResponse())
    rest = drain(pipe)
    assert [c.correlation_id for c in rest] == [3]
    assert pipe.wants_pause  # 4 still in the backlog


def test_unknown_api_key_closes_the_connection(pipe):
    # Kafka 4.3.1 closes the connection without a word (recorded: "unknown key -> None").
    pipe.receive_data(raw_request(999, 0, 9))
    with pytest.raises(ProtocolViolation):
        pipe.next_call()


def test_broker_api_on_a_controller_listener_closes_the_connection(pipe):
    # Metadata is not a controller API: the real controller closed the connection.
    pipe.receive_data(encode_request(3, 12, 9, MetadataRequest(), "c"))
    with pytest.raises(ProtocolViolation):
        pipe.next_call()


def test_unsupported_version_of_another_api_closes_the_connection(pipe):
    # Vote v9 to a real controller: connection closed.
    pipe.receive_data(raw_request(52, 9, 9, b"\x00\x01\x00"))
    with pytest.raises(ProtocolViolation):
        pipe.next_call()


@pytest.mark.parametrize("version", [6, 127])
def test_unsupported_api_versions_gets_kafkas_v0_answer(pipe, version):
    pipe.receive_data(raw_request(18, version, 9, b"\x02x\x021\x00"))
    assert pipe.next_call() is None  # answered by the pipeline itself
    out = pipe.output()
    # Byte for byte what Kafka 4.4.0's controller sends for ApiVersions v6 and v127 (4.3.1's
    # ended 0004: its range; tests/interop/test_api_versions.py compares live).
    recorded = bytes.fromhex("00000009002300000001001200000005")
    assert out == struct.pack(">i", len(recorded)) + recorded
    _, body = decode_response(frames(out)[0], 18, 0)
    assert body.error_code == 35


def test_garbage_header_closes_the_connection(pipe):
    pipe.receive_data(struct.pack(">i", 2) + b"\x00\x12")
    with pytest.raises(ProtocolViolation):
        pipe.next_call()
    pipe2 = Pipeline("CONTROLLER", listener_apis(True))
    # ApiVersions v3 whose client id length runs past the frame.
    pipe2.receive_data(struct.pack(">i", 10) + struct.pack(">hhi", 18, 3, 1) + b"\x7f\x00")
    with pytest.raises(ProtocolViolation):
        pipe2.next_call()


def test_truncated_body_closes_the_connection(pipe):
    whole = vote(5)
    body = whole[4:-3]
    pipe.receive_data(struct.pack(">i", len(body)) + body)
    with pytest.raises(ProtocolViolation):
        pipe.next_call()


def test_two_gigabyte_length_prefix_closes_the_connection(pipe):
    with pytest.raises(ProtocolViolation):
        pipe.receive_data(struct.pack(">i", 0x7FFFFFF0) + b"xx")


def test_answers_to_a_closed_connection_are_dropped(pipe):
    pipe.receive_data(vote(1))
    (call,) = drain(pipe)
    assert pipe.close() == [call]
    call.respond(VoteResponse())  # the core answers late: no error, nothing written
    assert pipe.output() == b""


def test_a_response_the_version_cannot_carry_fails_the_connection(pipe):
    pipe.receive_data(vote(1, version=0))
    (call,) = drain(pipe)
    from wire.messages.vote_response import NodeEndpoint  # v1+ tagged field
    call.respond(VoteResponse(node_endpoints=[NodeEndpoint(node_id=1, host="h", port=1)]))
    assert pipe.failed


def test_a_shared_answer_is_encoded_once_and_framed_per_connection():
    from wire.headers import encode_response
    from wire.messages import FetchRequest
    from wire.messages import fetch_response as fresp
    from kraft_server.net import pipeline as pipeline_module

    def answer(records):
        return fresp.FetchResponse(responses=[fresp.FetchableTopicResponse(
            partitions=[fresp.PartitionData(high_watermark=7, records=records)])])

    body = answer(b"r" * 5000)
    encodes = []
    real = pipeline_module.encode_parts
    pipeline_module.encode_parts = lambda *a: encodes.append(a) or real(*a)
    try:
        outs = []
        for corr, version in ((5, 17), (9, 17), (3, 12), (4, 12), (6, 11)):  # 11: header v0
            pipe = Pipeline("CONTROLLER", listener_apis(True))
            pipe.receive_data(encode_request(1, version, corr, FetchRequest(), "c"))
            (call,) = drain(pipe)
            call.respond(body, shared=True)
            outs.append((pipe.output(), encode_response(1, version, corr, body)))
        other = answer(b"s" * 5000)  # a new object is encoded anew, never taken for the last
        pipe = Pipeline("CONTROLLER", listener_apis(True))
        pipe.receive_data(encode_request(1, 17, 11, FetchRequest(), "c"))
        (call,) = drain(pipe)
        call.respond(other, shared=True)
        outs.append((pipe.output(), encode_response(1, 17, 11, other)))
    finally:
        pipeline_module.encode_parts = real
    assert all(got == want for got, want in outs)
    assert len(encodes) == 4  # once per (body, version)


def test_frames_are_the_same_whether_a_read_holds_one_frame_part_of_one_or_several():
    reqs = [encode_request(18, 3, corr, ApiVersionsRequest(), "c") for corr in (1, 2, 3, 4)]
    pipe = Pipeline("CONTROLLER", listener_apis(True))
    pipe.receive_data(reqs[0])                      # exactly one frame (the usual read)
    pipe.receive_data(reqs[1][:3])                  # a frame cut inside its size prefix...
    pipe.receive_data(reqs[1][3:] + reqs[2][:10])   # ...and one cut inside its body
    pipe.receive_data(reqs[2][10:])
    pipe.receive_data(reqs[3])                      # one frame again, after the pieces
    assert [c.correlation_id for c in drain(pipe)] == [1, 2, 3, 4]
    small = Pipeline("CONTROLLER", listener_apis(True), max_bytes=len(reqs[0]) - 5)
    with pytest.raises(ProtocolViolation):  # a whole frame above the limit is refused too
        small.receive_data(reqs[0])
