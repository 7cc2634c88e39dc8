"""Doors: a node's advertised address on the harness, in front of the chaos proxies
(``proxy.py``).

A node advertises one address per listener, which every peer dials, so a proxy port per
ordered pair cannot be given out there. A broker's inter-broker listener is dialled by
every other broker; a controller's by every peer once it leads: Kafka's brokers and
controllers dial the leader at the endpoint it advertises (KIP-853's leader endpoints,
even on a static quorum), not at the link their voters name. So the advertised address
is a front door (``Door``), which reads the first request's header: its client id names
the dialling node (``DIALLER`` for brokers' inter-broker clients, ``broker-<id>-...``;
``NODE_DIALLER`` for a controller's). The connection is then handed, with the bytes read
so far, to the link ``(dialler, node)`` of the shared ``Proxies``, so that each direction
of each pair is cut, held or delayed on its own.

A dead node's listener refuses connections; a proxy in front of it would accept them
and hide the crash (our controller's fast fencing probes every advertised endpoint and
needs every one refusing). The harness closes a door when it kills its node and opens
it again (same port) before the node starts (``shut``, ``open``).
"""
from __future__ import annotations

import asyncio
import re
import struct

from .proxy import Link, Proxies

DIALLER = re.compile(rb"^broker-(\d+)-")
# Who dials a controller's door: a Raft client (Kafka's and ours are ``raft-client-<id>``),
# a Kafka node's channels to the controller (the client id is the node id alone), our
# controller's registration channel (``controller-<id>-...``).
NODE_DIALLER = re.compile(rb"^(?:raft-client-|broker-|controller-)?(\d+)(?:-|$)")
HEADER_MAX = 4096  # a request header is far shorter; more means it is no node's


class PrefixedReader:
    """A stream reader that first gives back bytes already read."""

    def __init__(self, prefix: bytes, reader: asyncio.StreamReader) -> None:
        self.prefix, self.reader = prefix, reader

    async def read(self, n: int) -> bytes:
        if self.prefix:
            out, self.prefix = self.prefix[:n], self.prefix[n:]
            return out
        return await self.reader.read(n)


def dialler(head: bytes, pattern=DIALLER) -> int | None:
    """The node id in the client id of a request header (size, api key, version,
    correlation id, then the client id as an int16-length string); None if it names none."""
    if len(head) < 14:
        return None
    (length,) = struct.unpack_from(">h", head, 12)
    if length < 0 or len(head) < 14 + length:
        return None
    m = pattern.match(head[14:14 + length])
    return int(m.group(1)) if m else None


async def read_header(reader: asyncio.StreamReader) -> bytes:
    """The first 14 bytes and the client id that follows them."""
    head = await reader.readexactly(14)
    (length,) = struct.unpack_from(">h", head, 12)
    if 0 < length < HEADER_MAX:
        head += await reader.readexactly(length)
    return head


class Door:
    """Node ``dst``'s advertised address: a broker's inter-broker listener, or a
    controller's (``pattern`` NODE_DIALLER)."""

    def __init__(self, proxies: Proxies, dst: int, pattern=DIALLER) -> None:
        self.proxies, self.dst, self.pattern = proxies, dst, pattern
        self.port = 0
        self.server = None
        self.unknown: list[bytes] = []  # client ids of connections from no node we know (closed)
        # a node dialling itself (our controller's registration channel): no link to cut
        real = next(link.target_port for (_, d), link in proxies.links.items() if d == dst)
        self.own = Link(dst, dst, real)

    async def open(self) -> None:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", self.port, reuse_address=True)
        self.port = self.server.sockets[0].getsockname()[1]

    async def shut(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
            self.server = None

    async def _accept(self, reader, writer) -> None:
        try:
            head = await asyncio.wait_for(read_header(reader), 30)
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError):
            writer.transport.abort()
            return
        src = dialler(head, self.pattern)
        link = self.own if src == self.dst else self.proxies.links.get((src, self.dst))
        if link is None:
            self.unknown.append(head[14:])
            writer.transport.abort()
            return
        await link._accept(PrefixedReader(head, reader), writer)  # as if dialled at the link's own port


class Doors:
    """A door per node, served on the proxies' loop; its links must be in ``proxies``
    (built over every node, with each one's real port behind its door)."""

    def __init__(self, proxies: Proxies, brokers, pattern=DIALLER) -> None:
        self.proxies = proxies
        self.doors = {b: Door(proxies, b, pattern) for b in brokers}

    def start(self) -> None:
        for door in self.doors.values():
            self.proxies._call(door.open())

    def strangers(self) -> list[str]:
        """A problem per door that closed connections it could not give a link (a link the
        harness could not cut); each connection is told once."""
        out = []
        for dst, door in self.doors.items():
            if door.unknown:
                names = sorted({bytes(h[:40]).decode("latin-1") for h in door.unknown})
                out.append(f"the door of {dst} closed {len(door.unknown)} connections from no node it knows: {names}")
                door.unknown.clear()
        return out

    def port(self, broker: int) -> int:
        return self.doors[broker].port

    def shut(self, broker: int) -> None:
        """Refuse new connections (those open end with the process's sockets)."""
        self.proxies._call(self.doors[broker].shut())

    def open(self, broker: int) -> None:
        if self.doors[broker].server is None:
            self.proxies._call(self.doors[broker].open())

    def close(self) -> None:
        if self.proxies.thread.is_alive():
            for door in self.doors.values():
                self.proxies._call(door.shut())
