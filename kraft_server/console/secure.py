"""The console's TLS context and gate from the node's configuration, with the code the
Kafka listeners use (``kraft_server/security``): ``ssl.*`` and ``sasl.*`` as for a
listener named ``CONSOLE``, and the node's authorizer."""
from __future__ import annotations

from kraft_server.config import ConfigError

from .gate import Gate
from .listener import NAME, ConsoleListener


def _console_raw(raw: dict, mechanisms_prop: str) -> tuple[dict, list[str]]:
    """The configuration with the console's mechanisms narrowed to PLAIN and SCRAM
    (a browser's Basic login carries a password, not a token)."""
    from kraft_server.security.listeners import getter
    names = [m.strip() for m in (getter(raw, NAME)("sasl.enabled.mechanisms") or "").split(",") if m.strip()]
    usable = [m for m in names if m == "PLAIN" or m.startswith("SCRAM-")]
    if not usable:
        raise ConfigError(f"the SASL_SSL console needs PLAIN or SCRAM-SHA-256/512 in {mechanisms_prop} "
                          f"(or sasl.enabled.mechanisms) for its login", mechanisms_prop)
    return {**raw, mechanisms_prop: ",".join(usable)}, usable


def console_security(config, listener: ConsoleListener, controller=None, credentials=None, offload=None):
    """``(ssl_context or None, Gate)``; raises ConfigError for a bad setting."""
    if not listener.tls:  # plain HTTP as before: no login, no ACL check
        return None, Gate()
    from kraft_server.security.authorizer import authorizer_from_config

    authorizer = authorizer_from_config(config.raw)
    allowed = None
    if authorizer is not None and controller is not None:
        def allowed(principal, host, operation, resource_type, name):
            return authorizer.authorize(controller.image.acls.index(), principal, host, operation,
                                        resource_type, name)

    from kraft_server.security.listeners import ListenerSecurity, getter, prefix_of
    from kraft_server.security.principal import PrincipalMapper
    from kraft_server.security.tls import server_context

    get, prefix = getter(config.raw, NAME), prefix_of(NAME)
    security = ListenerSecurity(NAME, listener.protocol, server_context(get, prefix))
    rules = get("ssl.principal.mapping.rules") or "DEFAULT"
    try:
        security.mapper = PrincipalMapper(rules)
    except ValueError as exc:
        raise ConfigError(f"Invalid value {rules} for configuration ssl.principal.mapping.rules: {exc}",
                          "ssl.principal.mapping.rules") from None
    login = None
    if listener.protocol == "SASL_SSL":
        from kraft_server.security.sasl_config import server_sasl

        from .login import BasicLogin
        mechanisms_prop = f"{prefix}sasl.enabled.mechanisms"
        raw, _ = _console_raw(config.raw, mechanisms_prop)
        sasl = server_sasl(raw, NAME, getter(raw, NAME), credentials)
        login = BasicLogin(sasl.mechanisms, sasl.plain_users, credentials, offload)
    return security.ssl_context, Gate(security, login, allowed)
