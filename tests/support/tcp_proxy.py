"""A tiny TCP proxy on a free loopback port, for network faults between real
processes (DESIGN: faults go between nodes, never inside the code). It runs its
own asyncio loop in a daemon thread; ``cut()`` resets every connection through it
(both sides see a reset, as when a middlebox drops a flow), new connections are
forwarded again at once. Use it as a context manager: leaving closes everything.
"""
from __future__ import annotations

import asyncio
import socket
import struct
import threading

from tools.kafka_dist.controller import free_port


class TcpProxy:
    def __init__(self, target_host: str, target_port: int, port: int | None = None) -> None:
        self.target = (target_host, target_port)
        self.port = port or free_port()
        self.cuts = 0
        self.accepted = 0
        self._loop = asyncio.new_event_loop()
        self._pairs: set = set()  # (client transport, upstream writer)
        self._server = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> "TcpProxy":
        self._thread.start()
        self._call(self._start())
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, coro, timeout: float = 10.0):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port, reuse_address=True)

    async def _serve(self, reader, writer) -> None:
        self.accepted += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        pair = (writer, up_writer)
        self._pairs.add(pair)
        try:
            await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))
        finally:
            self._pairs.discard(pair)
            for w in pair:
                w.transport.abort()

    def cut(self) -> int:
        """Reset every connection now open through the proxy; returns how many."""
        async def cut_all():
            pairs = list(self._pairs)
            for pair in pairs:
                for w in pair:
                    _reset(w)
            return len(pairs)
        n = self._call(cut_all())
        self.cuts += 1
        return n

    def close(self) -> None:
        if not self._thread.is_alive():
            return

        async def stop():
            if self._server is not None:
                self._server.close()
            for pair in list(self._pairs):
                for w in pair:
                    w.transport.abort()
        self._call(stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


async def _pump(reader, writer) -> None:
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.transport.abort()


def _reset(writer) -> None:
    """Close with a TCP reset (SO_LINGER 0), not a FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()
