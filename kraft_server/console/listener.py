"""``kraft.console.listener`` as Kafka writes a listener: ``PROTOCOL://HOST:PORT``, the
protocol named as in ``listener.security.protocol.map``, or ``HOST:PORT`` alone for
plain HTTP (the default, unchanged):

- ``PLAINTEXT`` plain HTTP, no login;
- ``SSL`` HTTPS; under mutual TLS (``ssl.client.auth``) the client certificate's
  principal, else ``User:ANONYMOUS``;
- ``SASL_SSL`` HTTPS and an HTTP Basic login checked against the node's SASL PLAIN
  users and SCRAM credentials.

``SASL_PLAINTEXT`` is refused: a Basic login would cross the network in the clear.
The console's ``ssl.*`` and ``sasl.*`` settings are read as for a listener named
``CONSOLE``: ``listener.name.console.<property>``, else ``<property>``.
"""
from __future__ import annotations

from dataclasses import dataclass

NAME = "CONSOLE"  # the listener name of its ``listener.name.console.*`` properties
PROP = "kraft.console.listener"
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_SSL")


@dataclass(frozen=True)
class ConsoleListener:
    protocol: str
    host: str
    port: int

    @property
    def tls(self) -> bool:
        return self.protocol != "PLAINTEXT"

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"


def parse_console_listener(value: str, prop: str = PROP) -> ConsoleListener:
    from kraft_server.config import ConfigError, parse_host_port

    text = value.strip()
    protocol, sep, address = text.partition("://")
    if not sep:
        protocol, address = "PLAINTEXT", text
    protocol = protocol.strip().upper()
    if protocol not in PROTOCOLS:
        why = ("a Basic login would cross the network in the clear; use SASL_SSL"
               if protocol == "SASL_PLAINTEXT" else f"the protocol must be one of {', '.join(PROTOCOLS)}")
        raise ConfigError(f"Invalid value {value} for configuration {prop}: {why}", prop)
    ep = parse_host_port(address, prop)
    return ConsoleListener(protocol, ep.host, ep.port)
