"""Free loopback ports for the processes tests and benches start.

A port is picked at random outside the kernel's ephemeral range, so an outgoing
connection (which takes its local port from that range) cannot grab it between the
pick and the server's bind, and never twice in one process, so two nodes of one
cluster never get the same port. It is checked free by binding it once.

Under pytest-xdist each worker is its own process, so "never twice in one process"
does not keep two workers apart: worker ``i`` of ``n`` (``PYTEST_XDIST_WORKER=gw<i>``,
``PYTEST_XDIST_WORKER_COUNT=n``) draws only from the ``i``-th of ``n`` equal slices of
each span, and no two workers share a slice. Processes a worker starts inherit its
variables and so its slice."""
from __future__ import annotations

import os
import random
import socket
from pathlib import Path

_GIVEN: set[int] = set()
_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_MIN_SPAN = 1000  # a span (or a worker's slice of it) narrower than this is not used


def _ephemeral() -> tuple[int, int]:
    try:
        lo, hi = (int(x) for x in _RANGE_FILE.read_text().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999


def _worker(env=os.environ) -> tuple[int, int]:
    """(index, count) of this pytest-xdist worker; (0, 1) outside xdist."""
    name, count = env.get("PYTEST_XDIST_WORKER", ""), env.get("PYTEST_XDIST_WORKER_COUNT", "")
    if name.startswith("gw") and name[2:].isdigit() and count.isdigit() and int(count) > 0:
        index, total = int(name[2:]), int(count)
        if index < total:
            return index, total
    return 0, 1


def spans(ephemeral: tuple[int, int], worker: tuple[int, int] = (0, 1)) -> list[tuple[int, int]]:
    """The inclusive port ranges this worker draws from: its slice of the ranges below
    and above the ephemeral range."""
    lo, hi = ephemeral
    index, count = worker
    out = []
    for r0, r1 in ((10000, lo - 1), (hi + 1, 65535)):
        width = (r1 - r0 + 1) // count
        s0 = r0 + index * width
        s1 = s0 + width - 1
        if s1 - s0 > _MIN_SPAN:
            out.append((s0, s1))
    return out


def _bindable(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that is free now and new to this process."""
    ranges = spans(_ephemeral(), _worker())
    for _ in range(500) if ranges else ():
        r0, r1 = random.choice(ranges)
        port = random.randint(r0, r1)
        if port not in _GIVEN and _bindable(host, port):
            _GIVEN.add(port)
            return port
    while True:  # no room outside the ephemeral range: let the kernel pick
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
        if port not in _GIVEN:
            _GIVEN.add(port)
            return port
