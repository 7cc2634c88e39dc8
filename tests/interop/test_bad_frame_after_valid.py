"""A bad request behind valid ones in the same write, at a real Kafka 4.3.1 controller
and at our node: both answer the valid requests read before it, then close; a bad
request first closes at once and nothing after it is answered. (Kafka reads one
request at a time: a channel is muted until its answer is sent. The live fuzzer found
our node closing at the bad frame and dropping the earlier answers.)"""
from __future__ import annotations

import socket
import struct
import uuid

import pytest

from tests.support.kraft_nodes import OurNode
from tools.kafka_dist.controller import KafkaController
from wire.headers import encode_request
from wire.messages import ApiVersionsRequest, DescribeClusterRequest


def _api_versions(correlation_id: int) -> bytes:
    return encode_request(18, 0, correlation_id, ApiVersionsRequest())


_GOOD = encode_request(60, 1, 5, DescribeClusterRequest())[4:]
BAD = {
    "2 GB size claim": struct.pack(">i", 0x7FFFFFFF) + b"xx",
    "negative size": struct.pack(">i", -1) + b"xx",
    "unknown API key": struct.pack(">ihhi", 8, 999, 0, 5),
    "unsupported version": struct.pack(">ihh", len(_GOOD), 60, 99) + _GOOD[4:],
    "header cut short": struct.pack(">i", 3) + b"\x00\x12\x00",
    "body cut short": struct.pack(">i", len(_GOOD) - 3) + _GOOD[:-3],
}


def _exchange(port: int, data: bytes) -> list:
    """Correlation ids of the answers, then "closed" (or "timeout": still open)."""
    got, buf = [], b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    return got + ["closed"]
                buf += chunk
                while len(buf) >= 8 and len(buf) >= 4 + struct.unpack_from(">i", buf)[0]:
                    got.append(struct.unpack_from(">i", buf, 4)[0])
                    buf = buf[4 + struct.unpack_from(">i", buf)[0]:]
        except ConnectionResetError:
            return got + ["closed"]
        except socket.timeout:
            return got + ["timeout"]


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    kafka = KafkaController(tmp_path_factory.mktemp("kafka"), node_id=1)
    ours = OurNode(tmp_path_factory.mktemp("ours"))
    try:
        kafka.start_ready()
        ours.format_with_ours(uuid.uuid4().hex[:22])
        ours.start()
        ours.wait_leader(60)
        yield {"kafka": kafka.port, "ours": ours.port}
    finally:
        ours.kill()
        kafka.close()


@pytest.mark.parametrize("bad", sorted(BAD))
def test_valid_requests_before_a_bad_one_are_answered(ports, bad):
    behind = {name: _exchange(port, _api_versions(1) + _api_versions(2) + BAD[bad]) for name, port in ports.items()}
    first = {name: _exchange(port, BAD[bad] + _api_versions(1)) for name, port in ports.items()}
    assert behind["kafka"] == [1, 2, "closed"], behind
    assert behind["ours"] == behind["kafka"]
    assert first["kafka"] == ["closed"] and first["ours"] == first["kafka"], first
