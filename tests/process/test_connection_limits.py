"""Connection limits and floods at a live node (issue 27): Kafka's max.connections.per.ip
closes the connection past the limit; connections.max.idle.ms closes a client that
holds a partial frame (one byte a second); 10,000 idle connections and such a client
do not stop the quorum from committing, and the node's RSS stays bounded (printed)."""
from __future__ import annotations

import socket
import struct
import time
import uuid

from tests.support.kraft_nodes import OurNode, describe_quorum, wait_for
from wire.framing import FrameReader
from wire.headers import encode_request
from wire.messages import VoteRequest


def _rss_mib(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _closed_by_peer(sock: socket.socket, timeout: float) -> bool:
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def _hwm(node) -> int:
    return describe_quorum("127.0.0.1", node.port, timeout=2.0).high_watermark


def _pipelining_flood(node, socks) -> None:
    """100 connections pipeline 50 Votes each (answered by the Raft core) at a node with
    queued.max.requests=8: every request is answered in order and the quorum commits."""
    batch = b"".join(encode_request(52, 2, i, VoteRequest(cluster_id="other"), "flood") for i in range(50))
    flood = [socket.create_connection(("127.0.0.1", node.port)) for _ in range(100)]
    socks.extend(flood)
    hwm, began = _hwm(node), time.monotonic()
    for s in flood:
        s.sendall(batch)
    for s in flood:
        reader, got = FrameReader(), []
        s.settimeout(30)
        while len(got) < 50:
            data = s.recv(65536)
            assert data, "the node closed a pipelining connection"
            got += reader.feed(data)
        assert [struct.unpack_from(">i", f)[0] for f in got] == list(range(50))
    print(f"5,000 pipelined Votes on 100 connections answered in {time.monotonic() - began:.2f} s "
          f"with queued.max.requests=8")
    wait_for(lambda: _hwm(node) > hwm + 5, 30, "commits after the pipelining flood")
    assert "request queue full (queued.max.requests=8)" in node.log_path.read_text(errors="replace")


def test_per_ip_limit_idle_partial_frames_and_a_flood_of_idle_connections(tmp_path):
    node = OurNode(tmp_path, extra=("metadata.max.idle.interval.ms=100", "queued.max.requests=8"))
    node.format_with_ours(uuid.uuid4().hex[:22])
    node.start()
    socks = []
    try:
        node.wait_leader(60)
        rss_before = _rss_mib(node.proc.pid)
        started = time.monotonic()
        for _ in range(10_000):
            s = socket.create_connection(("127.0.0.1", node.client_port))
            socks.append(s)
        hwm_flooded = _hwm(node)
        wait_for(lambda: _hwm(node) > hwm_flooded + 10, 30, "commits while 10,000 connections are open")
        rss_flooded = _rss_mib(node.proc.pid)
        print(f"10,000 idle connections opened in {time.monotonic() - started:.1f} s; node RSS "
              f"{rss_before:.1f} MiB before, {rss_flooded:.1f} MiB with them open")
        assert rss_flooded < rss_before + 400
        for s in socks:
            s.close()
        socks.clear()
        _pipelining_flood(node, socks)
    finally:
        for s in socks:
            s.close()
        node.stop()

    (tmp_path / "limited").mkdir()
    limited = OurNode(tmp_path / "limited", extra=("metadata.max.idle.interval.ms=100", "max.connections.per.ip=5",
                                                   "connections.max.idle.ms=1500"))
    limited.format_with_ours(uuid.uuid4().hex[:22])
    limited.start()
    try:
        limited.wait_leader(60)
        five = [socket.create_connection(("127.0.0.1", limited.client_port)) for _ in range(5)]
        socks.extend(five)
        sixth = socket.create_connection(("127.0.0.1", limited.client_port))
        socks.append(sixth)
        assert _closed_by_peer(sixth, 10), "the sixth connection from one address stayed open"
        log = limited.log_path.read_text(errors="replace")
        assert "too many connections from 127.0.0.1 (max.connections.per.ip=5)" in log
        for s in five:
            s.close()
        # the trickler: a frame that claims 100 bytes, sent one byte at a time
        trickler = socket.create_connection(("127.0.0.1", limited.client_port))
        socks.append(trickler)
        frame = struct.pack(">i", 100) + bytes(100)
        began, closed = time.monotonic(), False
        for b in frame[:8]:
            try:
                trickler.send(bytes([b]))
            except OSError:
                closed = True
                break
            if _closed_by_peer(trickler, 0.5):
                closed = True
                break
        assert closed, "a partial frame held past connections.max.idle.ms was not closed"
        assert 1.0 < time.monotonic() - began < 6.0
        assert "(connections.max.idle.ms)" in limited.log_path.read_text(errors="replace")
        assert _hwm(limited) > 0  # and the node still answers
    finally:
        for s in socks:
            s.close()
        limited.stop()
