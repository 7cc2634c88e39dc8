"""SASL settings of a listener (server side) and of outbound controller connections
(client side), with Kafka's property names:

- ``sasl.enabled.mechanisms`` (per listener; Kafka's default GSSAPI is not served
  here, so a SASL listener must name PLAIN, SCRAM-SHA-256/512 and/or OAUTHBEARER,
  whose settings ``oauth_config.py`` reads);
- the JAAS entry of each mechanism: ``listener.name.<l>.<mechanism>.sasl.jaas.config``,
  else ``sasl.jaas.config``. PLAIN's server side takes its users from Kafka's
  ``PlainLoginModule`` options ``user_<name>="<password>"``; the client side (and
  outbound controller connections) use ``username`` and ``password``;
- ``sasl.mechanism.controller.protocol``: the mechanism controllers use with each other.

SCRAM users live in the metadata log (UserScramCredentialRecord), not here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kraft_server.config import ConfigError

from .jaas import JaasError, parse_jaas

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")


@dataclass
class ServerSasl:
    mechanisms: list[str]
    plain_users: dict[str, str] = field(default_factory=dict, repr=False)
    credentials: object = None  # credentials(mechanism, user) -> ScramCredential | None
    reauth_ms: dict[str, int] = field(default_factory=dict)  # connections.max.reauth.ms by mechanism
    oauth: object = None  # OAUTHBEARER: oauth_validator.JwtValidator (oauth_config.py)


@dataclass
class ClientSasl:
    mechanism: str
    username: str
    password: str = field(repr=False)
    oauth: object = None  # OAUTHBEARER: oauth_login.TokenSource (oauth_config.py)


def _jaas(raw: dict[str, str], listener: str, get, mechanism: str):
    key = f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config"
    text = raw.get(key) or get("sasl.jaas.config")
    if not text:
        return None, key
    try:
        return parse_jaas(text), key
    except JaasError as exc:
        raise ConfigError(f"Invalid value for configuration {key}: {exc}", key) from None


def _check(mechanisms: list[str], prop: str) -> None:
    for m in mechanisms:
        if m not in MECHANISMS:
            raise ConfigError(f"Invalid value {','.join(mechanisms)} for configuration {prop}: SASL mechanism "
                              f"{m} is not supported here (supported: {', '.join(MECHANISMS)})", prop)


def _reauth_ms(raw: dict[str, str], listener: str, get, mechanism: str) -> int:
    """KIP-368's ``connections.max.reauth.ms`` (0: sessions never expire), which Kafka
    also takes with the listener and mechanism prefix."""
    key = f"listener.name.{listener.lower()}.{mechanism.lower()}.connections.max.reauth.ms"
    value = raw.get(key) or get("connections.max.reauth.ms") or "0"
    try:
        return max(int(value.strip()), 0)
    except ValueError:
        raise ConfigError(f"Invalid value {value} for configuration connections.max.reauth.ms: "
                          f"Not a number of type LONG", "connections.max.reauth.ms") from None


def server_sasl(raw: dict[str, str], listener: str, get, credentials) -> ServerSasl:
    prop = f"listener.name.{listener.lower()}.sasl.enabled.mechanisms"
    mechanisms = [m.strip() for m in (get("sasl.enabled.mechanisms") or "GSSAPI").split(",") if m.strip()]
    _check(mechanisms, prop)
    out = ServerSasl(mechanisms, credentials=credentials)
    for mechanism in mechanisms:
        out.reauth_ms[mechanism] = _reauth_ms(raw, listener, get, mechanism)
    if "PLAIN" in mechanisms:
        module, key = _jaas(raw, listener, get, "PLAIN")
        if module is None:
            raise ConfigError(f"PLAIN is enabled on listener {listener} but {key} is not set "
                              f"(PlainLoginModule with user_<name>=\"<password>\" options)", key)
        out.plain_users = {k[5:]: v for k, v in module.options.items() if k.startswith("user_")}
    if "OAUTHBEARER" in mechanisms:
        from .oauth_config import oauth_validator  # PyJWT: only with OAUTHBEARER
        out.oauth = oauth_validator(raw, listener)
        out.oauth.jwks.start()  # the first JWKS fetch, in the background (Kafka: at configure)
    return out


def client_sasl(raw: dict[str, str], listener: str, get) -> ClientSasl:
    mechanism = (raw.get("sasl.mechanism.controller.protocol") or "GSSAPI").strip()
    _check([mechanism], "sasl.mechanism.controller.protocol")
    if mechanism == "OAUTHBEARER":
        from .oauth_config import token_source  # PyJWT: only with OAUTHBEARER
        source = token_source(raw, listener)
        source.start()  # the first token, in the background (Kafka: at login)
        return ClientSasl(mechanism, "", "", oauth=source)
    module, key = _jaas(raw, listener, get, mechanism)
    if module is None or "username" not in module.options or "password" not in module.options:
        raise ConfigError(f"{key} must give username and password for controller connections "
                          f"(sasl.mechanism.controller.protocol={mechanism})", key)
    return ClientSasl(mechanism, module.options["username"], module.options["password"])
