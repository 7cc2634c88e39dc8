"""The console (kraft_server/console) in process, with in-memory transports and logs:
bad requests get an HTTP answer and a closed connection, the page cap holds, a page
that stops reading is dropped without the hub waiting, updates are coalesced; the
records decode with Kafka's field names; the tail follows the committed log."""
from __future__ import annotations

import asyncio
import json
import uuid

import pytest

from kraft_server.console.events import MAX_BUFFERED, EventHub
from kraft_server.console.gate import Gate
from kraft_server.console.fields import camel, decode_value, plain
from kraft_server.console.http import ConsoleProtocol, load_static, parse_head
from wire.messages import NoOpRecord, RegisterBrokerRecord
from wire.messages.register_broker_record import BrokerEndpoint
from wire.records import encode_metadata_record


class FakeTransport:
    def __init__(self, buffered: int = 0):
        self.data = b""
        self.closed = self.aborted = False
        self.buffered = buffered  # what a stalled reader leaves queued

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def get_extra_info(self, name, default=None):
        return default


class FakeConsole:
    def __init__(self, max_pages: int = 2):
        self.static = load_static()
        self.metrics = None
        self.changes = 0
        self.builds = 0
        self.gate = Gate()  # open: no login asked
        self.events = EventHub(self.build, lambda: self.changes, lambda: 0, max_pages=max_pages)

    def build(self, seq: int, sample_ms: int) -> dict:
        self.builds += 1
        return {"recordSeq": 7, "samples": [[1, 2]], "records": [], "since": seq}

    def snapshot(self) -> dict:
        return self.build(0, -1)


def request(console, raw: bytes) -> tuple[ConsoleProtocol, FakeTransport]:
    page, transport = ConsoleProtocol(console), FakeTransport()
    page.connection_made(transport)
    page.data_received(raw)
    return page, transport


def status(transport: FakeTransport) -> int:
    return int(transport.data.split(b" ", 2)[1])


@pytest.mark.parametrize("raw, code", [
    (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 200),
    (b"GET /static/console.js HTTP/1.1\r\n\r\n", 200),
    (b"GET /api/state HTTP/1.0\r\n\r\n", 200),
    (b"GET /nothing HTTP/1.1\r\n\r\n", 404),
    (b"GET /metrics HTTP/1.1\r\n\r\n", 404),  # not shared with Prometheus here
    (b"GET /static/../http.py HTTP/1.1\r\n\r\n", 404),
    (b"POST /api/state HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 405),
    (b"garbage\r\n\r\n", 400),
    (b"GET / SPDY/3\r\n\r\n", 400),
    (b"GET /" + b"a" * 9000, 431),
])
def test_each_request_gets_an_http_answer_and_the_connection_closes(raw, code):
    _, transport = request(FakeConsole(), raw)
    assert status(transport) == code and transport.closed


def test_the_state_is_json_and_head_has_no_body():
    _, transport = request(FakeConsole(), b"GET /api/state HTTP/1.1\r\n\r\n")
    head, body = transport.data.split(b"\r\n\r\n", 1)
    assert b"application/json" in head and json.loads(body)["recordSeq"] == 7
    _, transport = request(FakeConsole(), b"HEAD / HTTP/1.1\r\n\r\n")
    assert transport.data.endswith(b"\r\n\r\n") and b"text/html" in transport.data


def test_an_incomplete_head_waits_for_more():
    assert parse_head(b"GET / HTTP/1.1\r\nHost: x\r\n") is None
    page, transport = request(FakeConsole(), b"GET / HTTP/1.1\r\n")
    assert transport.data == b""
    page.data_received(b"\r\n")
    assert status(transport) == 200


def test_streams_are_capped_slow_pages_dropped_and_updates_coalesced():
    async def scenario():
        console = FakeConsole(max_pages=2)
        one, t1 = request(console, b"GET /events HTTP/1.1\r\n\r\n")
        two, t2 = request(console, b"GET /events HTTP/1.1\r\n\r\n")
        _, t3 = request(console, b"GET /events HTTP/1.1\r\n\r\n")
        assert status(t3) == 503 and t3.closed  # the cap
        assert b"text/event-stream" in t1.data and b"event: full" in t1.data and not t1.closed
        hub = console.events
        before = len(t1.data)
        hub.publish()  # first update: sent
        assert b"event: delta" in t1.data[before:]
        sent = len(t1.data)
        hub.publish()  # nothing changed (and not idle long): coalesced away
        assert len(t1.data) == sent
        console.changes += 1
        t2.buffered = MAX_BUFFERED  # page two stopped reading
        hub.publish()
        assert len(t1.data) > sent and t2.aborted and hub.pages == {one} and hub.dropped == 1
        one.connection_lost(None)  # the browser went away
        assert hub.pages == set()
        hub.close()
    asyncio.run(scenario())


def test_a_stream_ignores_what_the_page_sends_after_its_request():
    async def scenario():
        console = FakeConsole()
        page, transport = request(console, b"GET /events HTTP/1.1\r\n\r\n")
        page.data_received(b"GET / HTTP/1.1\r\n\r\n")
        assert b"text/html" not in transport.data and not transport.closed
        console.events.close()
        assert transport.aborted
    asyncio.run(scenario())


def test_records_decode_with_kafkas_field_names():
    assert camel("is_migrating_zk_broker") == "isMigratingZkBroker"
    assert decode_value(encode_metadata_record(NoOpRecord(), 0)) == {
        "type": "NoOpRecord", "version": 0, "fields": {}, "control": False}
    incarnation = uuid.UUID(int=1)
    record = RegisterBrokerRecord(broker_id=5, incarnation_id=incarnation, broker_epoch=9, fenced=True,
                                  end_points=[BrokerEndpoint(name="PLAINTEXT", host="h", port=9092,
                                                             security_protocol=0)])
    decoded = decode_value(encode_metadata_record(record, 3))
    assert decoded["type"] == "RegisterBrokerRecord" and decoded["version"] == 3
    fields = decoded["fields"]
    assert fields["brokerId"] == 5 and fields["brokerEpoch"] == 9 and fields["fenced"] is True
    assert fields["incarnationId"] == "AAAAAAAAAAAAAAAAAAAAAQ"
    assert fields["endPoints"] == [{"name": "PLAINTEXT", "host": "h", "port": 9092, "securityProtocol": 0}]
    bad = decode_value(b"\x01\x7f\x00junk")
    assert bad["type"] == "(undecodable)" and bad["fields"]["error"]
    assert plain(b"\x00" * 100).endswith("(100 bytes)")


def test_a_request_not_completed_in_time_gets_408():
    async def scenario():
        from kraft_server.console import http
        saved, http.HEAD_TIMEOUT_S = http.HEAD_TIMEOUT_S, 0.01
        try:
            page, transport = request(FakeConsole(), b"GET / HTTP/1.1\r\n")
            deadline = asyncio.get_running_loop().time() + 5
            while not transport.closed and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.01)  # poll interval
            assert status(transport) == 408
            _, done = request(FakeConsole(), b"GET / HTTP/1.1\r\n\r\n")
            assert status(done) == 200
        finally:
            http.HEAD_TIMEOUT_S = saved
    asyncio.run(scenario())


# -- the record tail over a log ---------------------------------------------------------------

def _noops(log, n: int, per_batch: int = 5, timestamp: int = 1000) -> None:
    from wire.records import data_batch
    value = encode_metadata_record(NoOpRecord(), 0)
    for _ in range(n // per_batch):
        log.append(data_batch(log.end_offset(), 1, timestamp, [value] * per_batch))
    log.flush()


def test_the_tail_follows_the_committed_log_and_jumps_when_far_behind():
    from kraft_server.console import tail as tail_module
    from kraft_server.console.tail import RecordTail
    from kraft_server.log.memory import MemoryLog

    log = MemoryLog()
    _noops(log, 20)
    tail = RecordTail(log, capacity=8)
    tail.follow(None)  # the high watermark unknown: nothing
    assert tail.cursor is None
    tail.follow(10)  # starts at the head: the last committed batch's last record
    assert [r["offset"] for r in tail.since(0)] == [9] and tail.cursor == 10
    tail.follow(20)
    records = tail.since(0)
    assert [r["offset"] for r in records] == list(range(12, 20))  # capacity 8
    assert records[-1] == {"seq": 11, "offset": 19, "time": 1000, "type": "NoOpRecord", "version": 0,
                           "fields": {}, "control": False}
    assert [r["offset"] for r in tail.since(7, limit=3)] == [17, 18, 19]  # a page's update: the newest
    _noops(log, tail_module.JUMP_OFFSETS + 100, per_batch=100)
    tail.follow(log.end_offset())  # far behind: jump to the head, count what was skipped
    assert tail.cursor == log.end_offset() and tail.skipped > tail_module.JUMP_OFFSETS
    assert tail.since(0)[-1]["offset"] == log.end_offset() - 1


def test_a_page_behind_gets_the_records_that_are_not_noops_first():
    from kraft_server.console.tail import RecordTail
    from kraft_server.log.memory import MemoryLog
    from wire.records import data_batch

    log = MemoryLog()
    _noops(log, 10)
    register = encode_metadata_record(RegisterBrokerRecord(broker_id=7), 3)
    log.append(data_batch(log.end_offset(), 1, 1000, [register]))  # offset 10
    _noops(log, 10)  # offsets 11-20
    tail = RecordTail(log, capacity=50)
    tail.cursor = 0
    tail.follow(log.end_offset())
    assert [r["offset"] for r in tail.since(0)] == list(range(21))
    update = tail.since(1, limit=3)  # 20 new records, room for 3
    assert [r["offset"] for r in update] == [10, 19, 20]  # the broker's record, then the newest NoOps
    assert update[0]["type"] == "RegisterBrokerRecord" and [r["seq"] for r in update] == [11, 20, 21]
    assert [r["offset"] for r in tail.since(18, limit=3)] == [18, 19, 20]  # not behind: all of them
