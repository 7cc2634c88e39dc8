"""The live fuzzer's inputs and sender (issue 27, ``make fuzz-live``).

Every API key and version a listener advertises (asked with ApiVersions) is encoded
with our generated codecs (``tests/support/codec_samples.py``: the all-defaults and the
every-field-set messages and a few hypothesis draws) and then damaged: body or header mutations
(``tests/support/mutations.py``), truncations, a size prefix that claims more than is
sent (2 GB included) or is negative, versions outside the advertised range, keys the
listener does not serve, and random bytes. Each input goes on its own connection; the
outcome is an answer, a close by the server, or silence (no answer within
``ANSWER_SECONDS``: a long-poll Fetch may legitimately wait).

``LiveFuzzer.run`` sends a budget of inputs from a few concurrent connections; the
caller checks the nodes (``tests/process/test_fuzz_live.py``).
"""
from __future__ import annotations

import asyncio
import random
import struct
import time
from collections import Counter
from dataclasses import dataclass, field

from wire.exceptions import DecodeError
from wire.headers import decode_request_header, decode_response, encode_request
from wire.messages import REQUESTS, ApiVersionsRequest, DescribeClusterRequest, EnvelopeRequest, ProduceRequest

from tests.support.mutations import mutate
from tests.support.codec_samples import samples
from tests.support.strategies import models

CORRELATION_ID = 4242
ANSWER_SECONDS = 1.0  # how long one input waits for an answer before giving up
CONCURRENCY = 8
HUGE = 0x7FFFFFFF  # a 2 GB size claim
# kind -> weight: body mutations reach the handlers, so they get the largest share
KINDS = {"valid": 10, "body": 40, "header": 10, "truncated": 8, "short claim": 6, "huge claim": 6,
         "negative claim": 4, "wrong version": 6, "unknown key": 5, "garbage": 5}
# answers to these kinds are decoded with the request's own key and version
DECODABLE = ("valid", "body")
PIPELINED = 0.2  # the share of inputs written behind a valid request
QUICK = (ApiVersionsRequest.API_KEY, DescribeClusterRequest.API_KEY)  # answered without the core


@dataclass
class Listener:
    node_id: int
    name: str  # "controller" or "client"
    port: int
    apis: dict  # API key -> (min version, max version), from the node's ApiVersions


@dataclass
class Input:
    listener: Listener
    kind: str
    api_key: int
    api_version: int
    data: bytes  # what is written, size prefix included
    half_close: bool = False  # shut our side after writing (the server sees EOF)
    lead: tuple | None = None  # (key, version): a valid request written first, in the same write


@dataclass
class Stats:
    sent: Counter = field(default_factory=Counter)  # per API key
    kinds: Counter = field(default_factory=Counter)
    outcomes: Counter = field(default_factory=Counter)  # answered / closed / silent
    closed_by_kind: Counter = field(default_factory=Counter)
    error_codes: Counter = field(default_factory=Counter)  # non-zero codes in answers
    failures: list = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def inputs(self) -> int:
        return sum(self.kinds.values())


def advertised(port: int) -> dict:
    """The listener's API table, from an ApiVersions v3 answer."""
    from tests.support.kraft_nodes import _roundtrip
    body = ApiVersionsRequest(client_software_name="kraft-fuzz", client_software_version="1")
    r = _roundtrip(port, body, 3)
    assert r.error_code == 0, r
    return {k.api_key: (k.min_version, k.max_version) for k in r.api_keys}


class Seeds:
    """Valid request frames (header + body, no size prefix) per (key, version), cached."""

    def __init__(self):
        self._cache: dict = {}

    def get(self, key: int, version: int) -> list[tuple[bytes, int]]:
        """``[(frame, header length)]``: ``tests/support/codec_samples.py``'s messages."""
        out = self._cache.get((key, version))
        if out is None:
            cls = REQUESTS[key]
            # a version advertised below our codec's range (Produce from v0) is written
            # in the header over the oldest body we can encode
            v = min(max(version, cls.MIN_VERSION), cls.MAX_VERSION)
            bodies = samples(cls, models()[cls.__name__], v)  # default, filled, hypothesis draws
            if key == EnvelopeRequest.API_KEY:
                bodies += self.envelopes()
            head = len(encode_request(key, v, CORRELATION_ID, cls(), "fuzz")) - 4 - len(cls().encode(v))
            out = []
            for body in bodies:
                frame = bytearray(encode_request(key, v, CORRELATION_ID, body, "fuzz")[4:])
                struct.pack_into(">h", frame, 2, version)
                out.append((bytes(frame), head))
            self._cache[(key, version)] = out
        return out


    def envelopes(self) -> list:
        """Envelopes around what a broker forwards (the samples of every inner API at
        its newest forwardable version), so that mutations reach the inner request."""
        from kraft_server.api.registry import ENVELOPED
        out = []
        for inner, (_, hi) in sorted(ENVELOPED.items()):
            cls = REQUESTS[inner]
            for body in samples(cls, models()[cls.__name__], hi)[:2]:
                data = encode_request(inner, hi, 7, body, "forwarded")[4:]
                out.append(EnvelopeRequest(request_data=data, request_principal=b"",
                                           client_host_address=bytes([127, 0, 0, 1])))
        return out


def _prefixed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


class Generator:
    """Seeded inputs over the listeners' advertised APIs."""

    def __init__(self, rnd: random.Random, listeners: list[Listener]):
        self.rnd = rnd
        self.listeners = listeners
        self.seeds = Seeds()

    def next(self) -> Input:
        rnd = self.rnd
        lst = rnd.choice(self.listeners)
        key = rnd.choice(sorted(lst.apis))
        lo, hi = lst.apis[key]
        version = rnd.randint(lo, hi)
        frame, head = rnd.choice(self.seeds.get(key, version))
        kind = rnd.choices(list(KINDS), list(KINDS.values()))[0]
        half_close = False
        if kind == "valid":
            data = _prefixed(frame)
        elif kind == "body":
            other, _ = rnd.choice(self.seeds.get(key, rnd.randint(lo, hi)))
            data = _prefixed(frame[:head] + mutate(rnd, frame[head:], other[head:]))
        elif kind == "header":
            data = _prefixed(mutate(rnd, frame[:head], frame) + frame[head:])
        elif kind == "truncated":
            data = _prefixed(frame[:rnd.randrange(len(frame))])
        elif kind == "short claim":  # the prefix promises more than ever comes
            cut = frame[:rnd.randint(0, len(frame))]
            data = struct.pack(">i", len(frame) + rnd.choice((1, 7, 1000, 1 << 20))) + cut
            half_close = True
        elif kind == "huge claim":
            data = struct.pack(">i", rnd.choice((HUGE, 104857601, 1 << 30))) + frame[:rnd.randint(0, 64)]
            half_close = rnd.random() < 0.5
        elif kind == "negative claim":
            data = struct.pack(">i", rnd.choice((-1, -2, -(1 << 31)))) + frame
        elif kind == "wrong version":
            version = rnd.choice((hi + 1, hi + 2, lo - 1, -1, 0x7FFF, -0x8000))
            data = _prefixed(struct.pack(">hh", key, version) + frame[4:])
        elif kind == "unknown key":
            unknown = [k for k in REQUESTS if k not in lst.apis] + [-1, 999, 0x7FFF]
            key = rnd.choice(unknown)
            data = _prefixed(struct.pack(">hh", key, version) + frame[4:])
        else:  # garbage
            data = _prefixed(rnd.randbytes(rnd.choice((0, 1, 3, 8, 64, 1024))))
        inp = Input(lst, kind, key, version, data, half_close)
        if rnd.random() < PIPELINED:
            # a valid request first (answered at once): Kafka answers it before it reads
            # the next one, so its answer must arrive whatever follows
            lead_key = rnd.choice(QUICK)
            lo, hi = lst.apis[lead_key]
            lead_version = rnd.randint(lo, hi)
            frame, _ = rnd.choice(self.seeds.get(lead_key, lead_version))
            inp.lead = (lead_key, lead_version)
            inp.data = _prefixed(frame) + inp.data
        return inp


def error_codes(obj, out: Counter, depth: int = 0) -> None:
    """Count every non-zero ``error_code`` in a decoded answer."""
    if depth > 6 or obj is None:
        return
    for name in getattr(obj, "__slots__", ()):
        value = getattr(obj, name, None)
        if name == "error_code" and value:
            out[value] += 1
        elif isinstance(value, (list, tuple)):
            for item in value:
                if hasattr(item, "__slots__"):
                    error_codes(item, out, depth + 1)
        elif hasattr(value, "__slots__"):
            error_codes(value, out, depth + 1)


async def _read_frame(reader: asyncio.StreamReader) -> bytes:
    size, = struct.unpack(">i", await reader.readexactly(4))
    return await reader.readexactly(size)


async def exchange(port: int, inp: Input, wait: float = ANSWER_SECONDS) -> tuple[str, bytes | None, bytes | None]:
    """Write one input on a new connection: ``(outcome, answer to the lead request,
    answer)``; the outcome is "answered", "closed" (by the server, before an answer),
    "silent" (no answer within ``wait`` seconds) or "lead unanswered"."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)
    outcome, lead, answer = "silent", None, None
    try:
        writer.write(inp.data)
        if inp.half_close:
            writer.write_eof()
        await writer.drain()
        if inp.lead is not None:
            outcome = "lead unanswered"
            lead = await asyncio.wait_for(_read_frame(reader), wait)
            outcome = "silent"
        answer = await asyncio.wait_for(_read_frame(reader), wait)
        outcome = "answered"
    except (asyncio.IncompleteReadError, OSError):  # OSError: closed while we wrote
        outcome = "closed" if outcome != "lead unanswered" else outcome
    except asyncio.TimeoutError:
        pass
    finally:
        writer.transport.abort()
    return outcome, lead, answer


def outcomes(port: int, inputs: list, wait: float = ANSWER_SECONDS) -> list[str]:
    """Each input's outcome at ``port``, one after another."""
    async def run():
        return [(await exchange(port, inp, wait))[0] for inp in inputs]
    return asyncio.run(run())


class LiveFuzzer:
    def __init__(self, seed: int, listeners: list[Listener]):
        self.gen = Generator(random.Random(seed), listeners)
        self.stats = Stats()

    def run(self, inputs: int, seconds: float) -> Stats:
        asyncio.run(self._run(inputs, seconds))
        return self.stats

    async def _run(self, inputs: int, seconds: float) -> None:
        started = time.monotonic()
        deadline = started + seconds
        queue: asyncio.Queue = asyncio.Queue(maxsize=CONCURRENCY * 2)

        async def worker():
            while (item := await queue.get()) is not None:
                await self._send(item)

        workers = [asyncio.create_task(worker()) for _ in range(CONCURRENCY)]
        for _ in range(inputs):
            if time.monotonic() > deadline:
                break
            await queue.put(self.gen.next())
        for _ in workers:
            await queue.put(None)
        await asyncio.gather(*workers)
        self.stats.elapsed = time.monotonic() - started

    async def _send(self, inp: Input) -> None:
        st = self.stats
        st.sent[inp.api_key] += 1
        st.kinds[inp.kind] += 1
        where = f"node {inp.listener.node_id} {inp.listener.name} port {inp.listener.port}"
        try:
            outcome, lead, answer = await exchange(inp.listener.port, inp)
        except (OSError, asyncio.TimeoutError) as exc:
            st.failures.append(f"cannot connect to {where}: {exc!r}")
            return
        if lead is not None:
            self._check_answer(inp, lead, where, *inp.lead)
        if answer is not None and inp.kind in DECODABLE:
            self._check_answer(inp, answer, where)
        st.outcomes[outcome] += 1
        if outcome == "closed":
            st.closed_by_kind[inp.kind] += 1
        if outcome == "lead unanswered":
            st.failures.append(f"no answer to a valid request key {inp.lead[0]} v{inp.lead[1]} followed by "
                               f"{inp.kind} input key {inp.api_key} v{inp.api_version} from {where}: "
                               f"{inp.data.hex()[:400]}")
        # Kafka closes the connection of a Produce with acks=0 that fails (there is no
        # answer to carry the error), and this node refuses every Produce
        if inp.kind == "valid" and outcome == "closed" and inp.api_key != ProduceRequest.API_KEY \
                and not _acl_request_with_code_zero(inp):
            st.failures.append(f"valid request key {inp.api_key} v{inp.api_version} closed by {where}: "
                               f"{inp.data.hex()[:400]}")

    def _check_answer(self, inp: Input, answer: bytes, where: str, key=None, version=None) -> None:
        key = inp.api_key if key is None else key
        version = inp.api_version if version is None else version
        try:
            header, body = decode_response(answer, key, version)
        except DecodeError as exc:
            self.stats.failures.append(f"undecodable answer to key {key} v{version} "
                                       f"({inp.kind}) from {where}: {exc}; request {inp.data.hex()[:400]}")
            return
        if header.correlation_id != CORRELATION_ID:
            self.stats.failures.append(f"answer with correlation id {header.correlation_id} from {where}")
        error_codes(body, self.stats.error_codes)


ACL_KEYS = (29, 30, 31)  # DescribeAcls, CreateAcls, DeleteAcls


def _acl_request_with_code_zero(inp: Input) -> bool:
    """Kafka's parsing of Create/Describe/DeleteAcls closes the connection when an enum
    field holds 0 (UNKNOWN): a sample with such a field is not a valid request."""
    if inp.api_key not in ACL_KEYS:
        return False
    data = inp.data
    if inp.lead is not None:  # a valid request first, in the same write: skip it
        data = data[4 + struct.unpack_from(">i", data, 0)[0]:]
    frame = data[4:]
    try:
        _, offset = decode_request_header(frame)
        body = REQUESTS[inp.api_key].decode(frame[offset:], inp.api_version)
    except (DecodeError, ValueError):
        return False
    items = body.creations if inp.api_key == 30 else body.filters if inp.api_key == 31 else [body]
    fields = (("resource_type", "resource_pattern_type") if inp.api_key == 30
              else ("resource_type_filter", "pattern_type_filter")) + ("operation", "permission_type")
    return any(getattr(item, f) == 0 for item in items for f in fields)
