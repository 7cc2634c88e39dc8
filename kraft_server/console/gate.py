"""Who may see the console, decided per request before any route:

- the principal: the Basic login's ``User:<name>`` on a ``SASL_SSL`` console (no or
  wrong credentials: 401), else the client certificate's under mutual TLS (mapped by
  ``ssl.principal.mapping.rules``; a DN no rule maps: 403), else ``User:ANONYMOUS``;
- with an authorizer (``authorizer.class.name``), DESCRIBE on the CLUSTER resource
  ``kafka-cluster`` from the client's address, as the node's ACLs decide (403 without).

A plain HTTP console lets everyone in, as before (``secure.py`` gives it an open gate).
"""
from __future__ import annotations

import logging

from kraft_server.security import acls as A

log = logging.getLogger(__name__)

ALLOWED, UNAUTHORIZED, FORBIDDEN = 200, 401, 403


class Gate:
    def __init__(self, security=None, login=None, allowed=None):
        self.security = security  # ListenerSecurity of the console (TLS principal), or None
        self.login = login  # login.BasicLogin, or None
        self.allowed = allowed  # allowed(principal, host, operation, resource type, name), or None

    @property
    def open(self) -> bool:
        return self.login is None and self.allowed is None

    def decide(self, transport, headers: dict, done) -> None:
        """``done(status, principal)``: ALLOWED, UNAUTHORIZED or FORBIDDEN."""
        peer = transport.get_extra_info("peername") if transport is not None else None
        host = peer[0] if peer else ""
        if self.login is not None:
            def logged_in(user) -> None:
                if not isinstance(user, str):
                    done(UNAUTHORIZED, None)
                else:
                    self._authorize(f"User:{user}", host, done)
            self.login.check(headers.get("authorization"), logged_in)
            return
        principal = "User:ANONYMOUS"
        if self.security is not None and self.security.uses_tls and transport is not None:
            from kraft_server.security.principal import NoMatchingRule
            try:
                principal = self.security.tls_principal(transport)
            except NoMatchingRule as exc:
                log.info("console: refused a client certificate: %s", exc)
                done(FORBIDDEN, None)
                return
        self._authorize(principal, host, done)

    def _authorize(self, principal: str, host: str, done) -> None:
        if self.allowed is None or self.allowed(principal, host, A.DESCRIBE, A.CLUSTER, A.CLUSTER_NAME):
            done(ALLOWED, principal)
        else:
            log.info("console: %s from %s lacks DESCRIBE on the cluster", principal, host)
            done(FORBIDDEN, principal)
