"""A listener's security applied to its connections (``kraft_server/security``
decides; this module only plugs it into the asyncio listener and the pipeline):

- TLS: the listener's ``ssl.SSLContext`` goes to ``create_server``; a TLS
  handshake that does not finish within ``connections.max.idle.ms`` is dropped
  (Kafka closes idle connections, handshaking ones included);
- the principal: ``User:ANONYMOUS``, or the mapped certificate subject (mutual
  TLS), set on the pipeline before the first request is read; a subject that
  ``ssl.principal.mapping.rules`` cannot map closes the connection;
- SASL: the pipeline gets a ``SaslGate`` (``net/sasl_gate.py``) that admits only
  ApiVersions, SaslHandshake and SaslAuthenticate until authentication succeeds.
"""
from __future__ import annotations

import logging

from kraft_server.security.principal import NoMatchingRule
from kraft_server.net.limits import ConnectionLimits

log = logging.getLogger(__name__)

DEFAULT_HANDSHAKE_TIMEOUT_S = 60.0


def tls_server_options(security, limits: ConnectionLimits) -> dict:
    """Extra ``create_server`` arguments for a TLS listener (none for plaintext)."""
    if security is None or security.ssl_context is None:
        return {}
    idle_ms = limits.idle_ms
    timeout = idle_ms / 1000 if idle_ms and idle_ms > 0 else DEFAULT_HANDSHAKE_TIMEOUT_S
    return {"ssl": security.ssl_context, "ssl_handshake_timeout": timeout}


def authenticate(pipeline, security, transport) -> str | None:
    """Set up the connection's principal (and SASL gate); the reason to close it, if any."""
    if security.ssl_context is not None:
        try:
            pipeline.principal = security.tls_principal(transport)
        except NoMatchingRule as exc:
            return f"SSL authentication failed: {exc}"
        log.debug("TLS connection from %s on %s as %s", pipeline.peer, security.name, pipeline.principal)
    if security.sasl is not None:
        from .sasl_gate import SaslGate
        SaslGate(security.sasl, security.protocol, security.name).attach(pipeline)
    return None
