"""A tiny, self-contained Kafka wire probe used to poll real controllers.

Deliberately independent of the project's own codecs (``wire/``): the
harness that checks our implementation must not rely on it. Only two
requests, both flexible at the version used (request header v2, response
header v1):

* DescribeCluster v1 with ``EndpointType=2`` (controller): what
  ``kafka-metadata-quorum --bootstrap-controller`` sends first. A controller
  answers with ``ControllerId = <active controller>`` only once the active
  controller's registration is committed, so it is the readiness signal.
* DescribeQuorum v0 for ``__cluster_metadata``/0: leader id, epoch, HWM.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

DESCRIBE_CLUSTER = 60
DESCRIBE_QUORUM = 55
CLIENT_ID = b"kraft-dist-probe"


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _compact_str(s: str) -> bytes:
    b = s.encode()
    return _uvarint(len(b) + 1) + b


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError("truncated response")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b

    def int8(self) -> int:
        return struct.unpack(">b", self.take(1))[0]

    def int16(self) -> int:
        return struct.unpack(">h", self.take(2))[0]

    def int32(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def int64(self) -> int:
        return struct.unpack(">q", self.take(8))[0]

    def uvarint(self) -> int:
        shift = result = 0
        while True:
            b = self.take(1)[0]
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    def compact_nullable_str(self) -> str | None:
        n = self.uvarint()
        return None if n == 0 else self.take(n - 1).decode()

    def skip_tags(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())


def _roundtrip(host: str, port: int, api_key: int, version: int, body: bytes, timeout: float) -> _Reader:
    correlation_id = 0x4B44  # arbitrary
    header = struct.pack(">hhih", api_key, version, correlation_id, len(CLIENT_ID)) + CLIENT_ID + b"\x00"
    frame = header + body
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", _recv_exact(sock, 4))[0]
        r = _Reader(_recv_exact(sock, size))
    if r.int32() != correlation_id:
        raise ValueError("correlation id mismatch")
    r.skip_tags()  # response header v1
    return r


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed by peer")
        buf += chunk
    return bytes(buf)


@dataclass(frozen=True)
class ClusterInfo:
    error_code: int
    cluster_id: str | None
    controller_id: int


@dataclass(frozen=True)
class QuorumInfo:
    error_code: int
    leader_id: int
    leader_epoch: int
    high_watermark: int


def describe_cluster(host: str, port: int, timeout: float = 2.0) -> ClusterInfo:
    # IncludeClusterAuthorizedOperations=false, EndpointType=2, no tags.
    r = _roundtrip(host, port, DESCRIBE_CLUSTER, 1, b"\x00\x02\x00", timeout)
    r.int32()  # ThrottleTimeMs
    error = r.int16()
    r.compact_nullable_str()  # ErrorMessage
    r.int8()  # EndpointType
    cluster_id = r.compact_nullable_str()
    controller_id = r.int32()
    return ClusterInfo(error, cluster_id, controller_id)


def describe_quorum(host: str, port: int, timeout: float = 2.0) -> QuorumInfo:
    body = (
        _uvarint(2)  # Topics: 1 entry
        + _compact_str("__cluster_metadata")
        + _uvarint(2)  # Partitions: 1 entry
        + struct.pack(">i", 0)
        + b"\x00\x00\x00"  # partition, topic, request tags
    )
    r = _roundtrip(host, port, DESCRIBE_QUORUM, 0, body, timeout)
    error = r.int16()
    if error or r.uvarint() != 2:
        return QuorumInfo(error, -1, -1, -1)
    r.compact_nullable_str()  # TopicName
    if r.uvarint() != 2:
        return QuorumInfo(error, -1, -1, -1)
    r.int32()  # PartitionIndex
    p_error = r.int16()
    return QuorumInfo(p_error, r.int32(), r.int32(), r.int64())
