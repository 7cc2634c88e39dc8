"""The shell's half of fast fencing (issue 29) on real loopback sockets: what a
listener probe (``net/listener_probe.py``) reports for a listening socket, a closed
port and a SIGSTOPped process's listening socket (the kernel still completes the
handshake: why a paused broker is never fenced on evidence), and how a server
connection reports its close (by the peer, or by us) to ``Pipeline.watch_close``."""
from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from types import SimpleNamespace

from kraft_server.net.listener_probe import ACCEPTED, REFUSED, UNKNOWN, ListenerProber
from kraft_server.net.server import Listeners, ListenerSpec

LISTEN = "import socket,sys\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen(8)\n" \
         "print(s.getsockname()[1],flush=True)\nsys.stdin.read()\n"


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # bound, never listened: a SYN to it gets a reset
    return port


def probe(endpoints, timeout_ms=500):
    async def run():
        prober, got = ListenerProber(timeout_ms=timeout_ms), asyncio.get_running_loop().create_future()
        prober.probe(SimpleNamespace(broker_id=1, epoch=2, purpose="test", endpoints=tuple(endpoints)),
                     got.set_result)
        try:
            return await asyncio.wait_for(got, 5)
        finally:
            prober.close()
    return asyncio.run(run())


def test_accepted_refused_and_a_paused_process_still_accepts():
    proc = subprocess.Popen([sys.executable, "-c", LISTEN], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        port = int(proc.stdout.readline())
        assert probe([("127.0.0.1", port), ("127.0.0.1", closed_port())]) == [ACCEPTED, REFUSED]
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            assert probe([("127.0.0.1", port)]) == [ACCEPTED]  # the kernel answers the SYN
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        proc.kill()
        proc.wait(10)
        assert probe([("127.0.0.1", port)]) == [REFUSED]  # the process is gone: so is its socket
    finally:
        proc.kill()
        proc.wait(10)


def test_a_name_that_does_not_resolve_is_no_evidence():
    assert probe([("no-such-host.invalid", 9092)]) == [UNKNOWN]


def test_a_connection_reports_who_closed_it():
    async def run():
        listeners = Listeners(lambda call: None, max_bytes=1 << 20)
        host, port = await listeners.start(ListenerSpec("CONTROLLER", "127.0.0.1", 0, {}))
        seen = []

        async def connect_and_watch():
            reader, writer = await asyncio.open_connection(host, port)
            deadline = time.monotonic() + 5
            while len(listeners.connections) != 1 and time.monotonic() < deadline:
                await asyncio.sleep(0.01)  # poll for the server side's accept
            (conn,) = listeners.connections
            conn.pipeline.watch_close("t", seen.append)
            return conn, reader, writer

        conn, _, writer = await connect_and_watch()
        writer.close()  # EOF from the peer
        deadline = time.monotonic() + 5
        while not seen and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        conn, reader, writer = await connect_and_watch()
        conn.abort("ours")
        await reader.read()  # our close reaches the client
        deadline = time.monotonic() + 5
        while len(seen) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        writer.close()
        await listeners.close()
        return seen
    assert asyncio.run(run()) == [True, False]
