"""net/ over real loopback sockets (uvloop): listeners, pipelining, bad clients, and
outbound peer channels (handshake, fallback, timeouts, backoff), with a fake core."""
from __future__ import annotations

import asyncio
import struct
import time

import pytest

from kraft_server.api.dispatch import Dispatcher
from kraft_server.api.raft_rpcs import deliver
from kraft_server.api.registry import listener_apis
from kraft_server.shell.driver import Driver, new_event_loop
from kraft_server.net.server import ListenerSpec
from kraft_server.raft.boundary import Destination, Endpoint, OutboundRequest, SendFailure
from tests.support.net_fakes import FakeCore, FakeLog, FakeView
from wire.framing import FrameReader
from wire.headers import decode_response, encode_request
from wire.messages import ApiVersionsRequest, DescribeClusterRequest, VoteRequest, VoteResponse

T = 10.0  # seconds: every wait in these tests has a deadline


def run(coro):
    loop = new_event_loop()
    try:
        return loop.run_until_complete(asyncio.wait_for(coro, 60))
    finally:
        loop.close()


def make_driver(core=None, apis=None, **kw):
    core = core or FakeCore()
    view = FakeView()
    tables = {"CONTROLLER": apis or listener_apis(True)}

    def make_dispatcher(submit):
        return Dispatcher(view, submit, tables=tables, controller_listeners={"CONTROLLER"},
                          advertised={"CONTROLLER": ("127.0.0.1", 0)})

    return Driver(core, FakeLog(), make_dispatcher=make_dispatcher, deliver=deliver,
                  listeners=[ListenerSpec("CONTROLLER", "127.0.0.1", 0, tables["CONTROLLER"])], **kw)


class Client:
    def __init__(self, reader, writer):
        self.reader, self.writer, self.frames = reader, writer, FrameReader()
        self.got: list[bytes] = []

    @classmethod
    async def connect(cls, port):
        r, w = await asyncio.open_connection("127.0.0.1", port)
        return cls(r, w)

    async def frame(self):
        while not self.got:
            data = await asyncio.wait_for(self.reader.read(65536), T)
            if not data:
                raise ConnectionError("closed")
            self.got += self.frames.feed(data)
        return self.got.pop(0)

    async def closed(self) -> bool:
        try:
            while True:
                data = await asyncio.wait_for(self.reader.read(65536), T)
                if not data:
                    return True
        except ConnectionResetError:
            return True

    def send(self, data):
        self.writer.write(data)


def apiv(corr, version=3):
    return encode_request(18, version, corr, ApiVersionsRequest(client_software_name="t",
                                                                client_software_version="1"), "c")


async def started(driver):
    bound = await driver.start()
    task = asyncio.get_running_loop().create_task(driver.run())
    return bound["CONTROLLER"][1], task


async def stop(driver, task):
    driver.request_stop()
    await asyncio.wait_for(task, T)


def test_pipelined_requests_answered_in_order_even_when_the_core_is_slow():
    async def main():
        driver = make_driver(FakeCore(delay_cycles=3))
        port, task = await started(driver)
        c = await Client.connect(port)
        # Vote (held by the core for 3 cycles), ApiVersions (answered at once), Vote.
        c.send(encode_request(52, 2, 1, VoteRequest(), "c") + apiv(2)
               + encode_request(52, 2, 3, VoteRequest(), "c"))
        got = [await c.frame() for _ in range(3)]
        assert [struct.unpack_from(">i", f)[0] for f in got] == [1, 2, 3]
        assert isinstance(decode_response(got[0], 52, 2)[1], VoteResponse)
        await stop(driver, task)
        assert driver.log.flushes >= 1  # the Ready loop flushed before answering
    run(main())


def test_oversized_frame_closes_only_that_connection():
    async def main():
        driver = make_driver()
        port, task = await started(driver)
        bad, good = await Client.connect(port), await Client.connect(port)
        bad.send(struct.pack(">i", 0x7FFFFFF0) + b"\x00\x12")
        assert await bad.closed()
        good.send(apiv(5))
        assert struct.unpack_from(">i", await good.frame())[0] == 5
        await stop(driver, task)
    run(main())


@pytest.mark.parametrize("payload", [
    struct.pack(">i", 2) + b"\x00\x12",  # shorter than a header
    struct.pack(">i", 10) + struct.pack(">hhi", 18, 3, 1) + b"\x7f\x00",  # client id overruns
    struct.pack(">i", 10) + struct.pack(">hhi", 999, 0, 1) + b"\x00\x00",  # unknown API key
    struct.pack(">i", 10) + struct.pack(">hhi", 3, 12, 1) + b"\x00\x00",  # broker-only API
])
def test_bad_requests_close_the_connection(payload):
    async def main():
        driver = make_driver()
        port, task = await started(driver)
        c, other = await Client.connect(port), await Client.connect(port)
        c.send(payload)
        assert await c.closed()
        other.send(apiv(1))
        assert struct.unpack_from(">i", await other.frame())[0] == 1
        await stop(driver, task)
    run(main())


def test_describe_cluster_from_the_fake_view():
    async def main():
        driver = make_driver()
        port, task = await started(driver)
        c = await Client.connect(port)
        c.send(encode_request(60, 2, 4, DescribeClusterRequest(endpoint_type=2), "c"))
        _, body = decode_response(await c.frame(), 60, 2)
        assert (body.error_code, body.endpoint_type, body.controller_id) == (0, 2, 1)
        assert [(b.broker_id, b.port) for b in body.brokers] == [(1, 9093)]
        await stop(driver, task)
    run(main())


def test_many_pipelined_requests_with_flow_control():
    async def main():
        driver = make_driver(FakeCore(delay_cycles=1))
        port, task = await started(driver)
        c = await Client.connect(port)
        n = 500
        c.send(b"".join(encode_request(52, 2, i, VoteRequest(), "c") for i in range(n)))
        got = [struct.unpack_from(">i", await c.frame())[0] for _ in range(n)]
        assert got == list(range(n))
        await stop(driver, task)
    run(main())


class CountingCore(FakeCore):
    """Records how many requests each turn of the Ready loop steps in."""

    def __init__(self):
        super().__init__(delay_cycles=1)
        self.turn, self.per_turn = 0, []

    def step(self, item, now_ms):
        super().step(item, now_ms)
        self.turn += 1

    def tick(self, now_ms):
        self.per_turn.append(self.turn)
        self.turn = 0


def test_queued_max_requests_bounds_what_waits_for_the_loop_across_connections():
    async def main():
        core = CountingCore()
        driver = make_driver(core, queued_max_requests=3)
        port, task = await started(driver)
        clients = [await Client.connect(port) for _ in range(20)]
        n = 10
        for c in clients:
            c.send(b"".join(encode_request(52, 2, i, VoteRequest(), "c") for i in range(n)))
        for c in clients:  # every request answered, in order, on every connection
            assert [struct.unpack_from(">i", await c.frame())[0] for _ in range(n)] == list(range(n))
        queue = driver.request_queue
        assert max(core.per_turn) <= 3 and queue.peak == 3, (max(core.per_turn), queue.peak)
        assert queue.times_full > 0 and queue.size == 0 and queue.waiting == 0
        assert sum(core.per_turn) == 20 * n
        await stop(driver, task)
    run(main())


# -- outbound ---------------------------------------------------------------------------

def vote_to(port, corr=1, min_version=0):
    return OutboundRequest(correlation=corr, destination=Destination(2, Endpoint("CONTROLLER", "127.0.0.1", port)),
                           api_key=52, body=VoteRequest(cluster_id="x"), min_version=min_version)


async def until(pred, what):
    deadline = time.monotonic() + T
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


def test_peer_round_trip_and_version_negotiation():
    async def main():
        server = make_driver()
        port, stask = await started(server)
        client_core = FakeCore()
        client = make_driver(client_core)
        _, ctask = await started(client)
        client_core.outbox.append(vote_to(port, 1))
        client.wake()
        await until(lambda: client_core.responses, "a Vote response")
        resp = client_core.responses[0]
        assert resp.failure is None and isinstance(resp.body, VoteResponse) and resp.correlation == 1
        await stop(client, ctask)
        await stop(server, stask)
    run(main())


def test_fallback_to_older_api_versions_and_unsupported_min_version():
    async def main():
        # A peer that only knows ApiVersions 0-2 and Vote 0-1 (like an older Kafka).
        server = make_driver(apis={18: (0, 2), 52: (0, 1)})
        port, stask = await started(server)
        core = FakeCore()
        client = make_driver(core)
        _, ctask = await started(client)
        core.outbox += [vote_to(port, 1), vote_to(port, 2, min_version=2)]
        client.wake()
        await until(lambda: len(core.responses) == 2, "two outcomes")
        by_corr = {r.correlation: r for r in core.responses}
        assert by_corr[1].failure is None  # sent at v1 after the KIP-511 fallback
        assert by_corr[2].failure is SendFailure.UNSUPPORTED_VERSION  # PreVote needs v2
        channel = next(iter(client.peers._channels.values()))
        assert channel._handshake_version == 2 and channel.api_versions[52] == (0, 1)
        await stop(client, ctask)
        await stop(server, stask)
    run(main())


def test_refused_connection_fails_fast_then_backs_off():
    async def main():
        from tools.kafka_dist.controller import free_port
        dead = free_port()
        core = FakeCore()
        client = make_driver(core, retry_backoff_ms=60_000)
        _, ctask = await started(client)
        core.outbox.append(vote_to(dead, 1))
        client.wake()
        await until(lambda: core.responses, "a failure")
        assert core.responses[0].failure is SendFailure.DISCONNECTED
        t0 = time.monotonic()
        core.outbox.append(vote_to(dead, 2))  # inside the backoff: no new connection attempt
        client.wake()
        await until(lambda: len(core.responses) == 2, "a second failure")
        assert core.responses[1].failure is SendFailure.DISCONNECTED
        assert time.monotonic() - t0 < 1.0
        await stop(client, ctask)
    run(main())


def test_silent_peer_times_out():
    async def main():
        silent = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = silent.sockets[0].getsockname()[1]
        core = FakeCore()
        client = make_driver(core, request_timeout_ms=200)
        _, ctask = await started(client)
        t0 = time.monotonic()
        core.outbox.append(vote_to(port, 1))
        client.wake()
        await until(lambda: core.responses, "a timeout")
        assert core.responses[0].failure is SendFailure.TIMEOUT
        assert 0.15 < time.monotonic() - t0 < 5
        await stop(client, ctask)
        silent.close()
    run(main())


def test_stop_asks_the_core_to_resign_then_closes_listeners():
    async def main():
        core = FakeCore()
        driver = make_driver(core)
        port, task = await started(driver)
        c = await Client.connect(port)
        await stop(driver, task)
        assert core.shutdown_started
        assert await c.closed()  # open connections are closed too
        with pytest.raises(OSError):
            await asyncio.open_connection("127.0.0.1", port)
    run(main())


def test_shutdown_waits_for_the_core_until_its_deadline():
    class SlowToResign(FakeCore):
        def shutdown_complete(self):
            return False  # e.g. EndQuorumEpoch still unanswered

    async def main():
        driver = make_driver(SlowToResign(), shutdown_timeout_ms=300)
        port, task = await started(driver)
        t0 = time.monotonic()
        await stop(driver, task)
        assert 0.25 < time.monotonic() - t0 < 5
    run(main())
