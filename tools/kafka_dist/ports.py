"""Free loopback ports for the processes tests and benches start.

A port is picked at random outside the kernel's ephemeral range, so an outgoing
connection (which takes its local port from that range) cannot grab it between the
pick and the server's bind, and never twice in one process, so two nodes of one
cluster never get the same port. It is checked free by binding it once."""
from __future__ import annotations

import random
import socket
from pathlib import Path

_GIVEN: set[int] = set()
_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _ephemeral() -> tuple[int, int]:
    try:
        lo, hi = (int(x) for x in _RANGE_FILE.read_text().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999


def _bindable(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that is free now and new to this process."""
    lo, hi = _ephemeral()
    spans = [(r0, r1) for r0, r1 in ((10000, lo - 1), (hi + 1, 65535)) if r1 - r0 > 1000]
    for _ in range(500) if spans else ():
        r0, r1 = random.choice(spans)
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
