"""Each listener's security, resolved from ``server.properties`` as Kafka's
``ChannelBuilders`` does:

- ``listener.security.protocol.map`` gives the listener's protocol: PLAINTEXT,
  SSL, SASL_PLAINTEXT or SASL_SSL (``kraft_server/config.py`` reads the map);
- every ``ssl.*`` and ``sasl.*`` property is looked up first with the listener's
  prefix ``listener.name.<lower-case name>.`` and then without it (Kafka's
  ``ListenerName.configPrefix``);
- outbound connections to other controllers use the settings of the first listener
  in ``controller.listener.names`` (Kafka's ``RaftManager``), SASL with
  ``sasl.mechanism.controller.protocol``.
"""
from __future__ import annotations

import ssl
from dataclasses import dataclass

from kraft_server.config import ConfigError

from .principal import ANONYMOUS, NoMatchingRule, PrincipalMapper, distinguished_name, user
from .sasl_config import ClientSasl, ServerSasl, client_sasl, server_sasl

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


def prefix_of(listener: str) -> str:
    return f"listener.name.{listener.lower()}."


def getter(raw: dict[str, str], listener: str):
    """``get(name)``: the listener-prefixed property, else the plain one, else None."""
    prefix = prefix_of(listener)

    def get(name: str) -> str | None:
        value = raw.get(prefix + name, raw.get(name))
        return value.strip() if isinstance(value, str) else value
    return get


def protocol_of(config, listener: str) -> str:
    protocol = config.listener_security_protocol_map.get(listener, "PLAINTEXT")
    if protocol not in PROTOCOLS:
        raise ConfigError(f"Invalid value {config.raw.get('listener.security.protocol.map', '')} for "
                          f"configuration listener.security.protocol.map: No enum constant "
                          f"org.apache.kafka.common.security.auth.SecurityProtocol.{protocol}",
                          "listener.security.protocol.map")
    return protocol


@dataclass
class ListenerSecurity:
    """What a listener needs to accept a connection and name its principal."""

    name: str
    protocol: str
    ssl_context: ssl.SSLContext | None = None
    mapper: PrincipalMapper | None = None
    sasl: ServerSasl | None = None

    @property
    def uses_tls(self) -> bool:
        return self.ssl_context is not None

    def tls_principal(self, transport) -> str:
        """``User:ANONYMOUS`` unless the client showed a certificate; raises
        ``NoMatchingRule`` when ``ssl.principal.mapping.rules`` cannot map it."""
        ssl_object = transport.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
        if not der:
            return ANONYMOUS
        return user(self.mapper.name(distinguished_name(der)))


@dataclass
class ClientSecurity:
    """What an outbound connection to a controller needs."""

    protocol: str
    ssl_context: ssl.SSLContext | None = None
    check_hostname: bool = True
    sasl: ClientSasl | None = None


def listener_security(config, listener: str, credentials=None) -> ListenerSecurity:
    """``credentials(mechanism, user)``: SCRAM credentials from the metadata image."""
    protocol = protocol_of(config, listener)
    get, prefix = getter(config.raw, listener), prefix_of(listener)
    out = ListenerSecurity(listener, protocol)
    if protocol in ("SSL", "SASL_SSL"):
        from .tls import server_context  # cryptography: only with TLS (~0.1-0.2 s to import)

        out.ssl_context = server_context(get, prefix)
        try:
            out.mapper = PrincipalMapper(get("ssl.principal.mapping.rules") or "DEFAULT")
        except ValueError as exc:
            raise ConfigError(f"Invalid value {get('ssl.principal.mapping.rules')} for configuration "
                              f"ssl.principal.mapping.rules: {exc}", "ssl.principal.mapping.rules") from None
    if protocol.startswith("SASL_"):
        out.sasl = server_sasl(config.raw, listener, get, credentials)
    return out


def controller_client_security(config) -> ClientSecurity:
    """Outbound security: the first of ``controller.listener.names``."""
    listener = config.controller_listener_names[0]
    protocol = protocol_of(config, listener)
    get = getter(config.raw, listener)
    out = ClientSecurity(protocol)
    if protocol in ("SSL", "SASL_SSL"):
        from .tls import client_context  # cryptography: only with TLS

        out.ssl_context, out.check_hostname = client_context(get, prefix_of(listener))
    if protocol.startswith("SASL_"):
        out.sasl = client_sasl(config.raw, listener, get)
    return out


__all__ = ["ANONYMOUS", "ClientSecurity", "ListenerSecurity", "NoMatchingRule", "PROTOCOLS",
           "controller_client_security", "getter", "listener_security", "prefix_of", "protocol_of"]
