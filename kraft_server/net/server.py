"""Listeners: one asyncio server per configured listener.

A listener has a name (``CONTROLLER``, ``CLIENT``...), an address, and the table of
APIs it serves (``kraft_server.api.registry``). Connections share nothing but the
``dispatch`` callable, so a misbehaving client (garbage, a 2 GB length prefix, an
unknown API key) loses only its own connection.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from .connection import ServerConnection
from .limits import ConnectionLimits
from .pipeline import DEFAULT_MAX_IN_FLIGHT
from .secure import tls_server_options

log = logging.getLogger(__name__)


@dataclass
class ListenerSpec:
    name: str  # upper-case listener name
    host: str  # bind host ("" or 0.0.0.0 for all interfaces)
    port: int  # 0: let the OS choose (tests); the bound port is reported back
    apis: dict[int, tuple[int, int]] = field(default_factory=dict)
    security: object = None  # kraft_server.security.ListenerSecurity (None: PLAINTEXT)


class Listeners:
    """The running servers and their open connections."""

    def __init__(self, dispatch, *, max_bytes: int, max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
                 limits: ConnectionLimits | None = None, queue=None):
        self._dispatch = dispatch
        self._max_bytes = max_bytes
        self._max_in_flight = max_in_flight
        self.limits = limits or ConnectionLimits()
        self.queue = queue  # request_queue.py RequestQueue (queued.max.requests), or None
        self._sweeper: asyncio.Task | None = None
        self._servers: dict[str, asyncio.AbstractServer] = {}
        self.connections: set[ServerConnection] = set()
        self.bound: dict[str, tuple[str, int]] = {}

    async def start(self, spec: ListenerSpec) -> tuple[str, int]:
        loop = asyncio.get_running_loop()

        def factory():
            return ServerConnection(spec.name, spec.apis, self._dispatch,
                                    max_bytes=self._max_bytes,
                                    max_in_flight=self._max_in_flight,
                                    registry=self.connections, limits=self.limits,
                                    security=spec.security, queue=self.queue)

        host = spec.host or None  # Kafka: an empty host binds every interface
        server = await loop.create_server(factory, host, spec.port, reuse_address=True,
                                          **tls_server_options(spec.security, self.limits))
        sockname = server.sockets[0].getsockname()
        self._servers[spec.name] = server
        self.bound[spec.name] = (sockname[0], sockname[1])
        log.info("listening on %s://%s:%d", spec.name, sockname[0], sockname[1])
        return self.bound[spec.name]

    def start_idle_sweep(self) -> None:
        """Once every listener is bound: close idle connections from now on."""
        if self._sweeper is None and self.limits.sweep_interval_s() is not None:
            self._sweeper = asyncio.get_running_loop().create_task(self._close_idle())

    async def _close_idle(self) -> None:
        """Close connections idle past ``connections.max.idle.ms`` (net/limits.py)."""
        interval = self.limits.sweep_interval_s()
        while True:
            await asyncio.sleep(interval)
            for conn in self.limits.idle(self.connections, time.monotonic()):
                self.limits.idle_closed += 1
                conn.abort(f"idle for more than {self.limits.idle_ms} ms (connections.max.idle.ms)")

    async def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        for server in self._servers.values():
            server.close()
        for conn in list(self.connections):
            conn.abort("shutting down")
        for server in self._servers.values():
            await server.wait_closed()
        self._servers.clear()
