"""Network faults between nodes: one TCP proxy per ordered pair of nodes.

Node ``i``'s ``controller.quorum.voters`` names voter ``j`` at the port of link
``(i, j)``, which forwards to ``j``'s real controller listener. Every connection
node ``i`` dials to ``j`` (its requests to ``j`` and ``j``'s answers) crosses that
link, so a link knows who dialled without looking at the bytes, and each
direction of a pair can be cut alone.

A link is ``up``, ``held`` (a partition as TCP sees it: bytes wait in the proxy
and nothing is refused; once healed they are delivered, late, unless a side gave
up and closed) or ``refused`` (open connections are reset and new ones closed at
once). ``delay`` adds latency to every chunk, both ways, keeping the stream's
order. The proxies run on an asyncio loop in a thread of the harness.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time

log = logging.getLogger(__name__)

UP, HELD, REFUSED = "up", "held", "refused"
CHUNK = 65536


class Link:
    def __init__(self, src: int, dst: int, target_port: int):
        self.src, self.dst, self.target_port = src, dst, target_port
        self.port = 0
        self.state = UP
        self.delay_s = 0.0
        self.opened = asyncio.Event()  # set while the link is up
        self.opened.set()
        self.writers: set[asyncio.StreamWriter] = set()
        self.server = None

    def set(self, state: str) -> None:
        self.state = state
        if state == UP:
            self.opened.set()
        else:
            self.opened.clear()
        if state == REFUSED:
            for w in list(self.writers):
                w.transport.abort()

    async def serve(self) -> None:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _accept(self, c_reader, c_writer) -> None:
        if self.state == REFUSED:
            c_writer.transport.abort()
            return
        self.writers.add(c_writer)
        s_writer = None
        try:
            await self.opened.wait()
            if self.state == REFUSED:
                return
            s_reader, s_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
            self.writers.add(s_writer)
            await asyncio.gather(self._pump(c_reader, s_writer), self._pump(s_reader, c_writer))
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            for w in (c_writer, s_writer):
                if w is not None:
                    self.writers.discard(w)
                    w.transport.abort()

    async def _pump(self, reader, writer) -> None:
        """Copy one direction: a reader task queues (arrival time, bytes), the writer
        side waits for arrival + delay and for the link to be up."""
        queue: asyncio.Queue = asyncio.Queue()

        async def read():
            try:
                while data := await reader.read(CHUNK):
                    queue.put_nowait((time.monotonic(), data))
            except OSError:
                pass
            queue.put_nowait((0.0, b""))

        reading = asyncio.ensure_future(read())
        try:
            while True:
                arrived, data = await queue.get()
                if not data:
                    return
                await self.opened.wait()
                wait = arrived + self.delay_s - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                    await self.opened.wait()
                writer.write(data)
                await writer.drain()
        finally:
            reading.cancel()
            writer.transport.abort()


class Proxies:
    """Links for every ordered pair of ``ports`` (node id -> real controller port)."""

    def __init__(self, ports: dict[int, int]):
        self.links = {(i, j): Link(i, j, ports[j]) for i in ports for j in ports if i != j}
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="chaos-proxies", daemon=True)

    def start(self) -> None:
        self.thread.start()
        for link in self.links.values():
            self._call(link.serve())

    def port(self, src: int, dst: int) -> int:
        return self.links[(src, dst)].port

    def _call(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def _apply(self, fn) -> None:
        async def run():
            fn()
        self._call(run())

    def cut(self, pairs, state: str = HELD) -> None:
        """Cut the links ``(src, dst)`` in ``pairs`` (each direction named alone)."""
        self._apply(lambda: [self.links[p].set(state) for p in pairs])

    def restore(self, pairs) -> None:
        """The links in ``pairs`` up again (what one fault cut, leaving others' cuts)."""
        self._apply(lambda: [self.links[p].set(UP) for p in pairs])

    def delay(self, seconds: float, pairs=None) -> None:
        def go():
            for key in (pairs or self.links):
                self.links[key].delay_s = seconds
        self._apply(go)

    def heal(self) -> None:
        def go():
            for link in self.links.values():
                link.delay_s = 0.0
                link.set(UP)
        self._apply(go)

    def close(self) -> None:
        if not self.thread.is_alive():
            return

        async def shut():
            for link in self.links.values():
                link.set(REFUSED)
                if link.server is not None:
                    link.server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        try:
            self._call(shut())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)
            self.loop.close()


def between(group_a, group_b) -> list[tuple[int, int]]:
    """Both directions of every pair across two groups of node ids."""
    return [(a, b) for a in group_a for b in group_b] + [(b, a) for a in group_a for b in group_b]
