"""OAUTHBEARER settings of a SASL listener, with Kafka's names. Each property is read
as ``listener.name.<l>.oauthbearer.<name>``, then ``listener.name.<l>.<name>``, then
``<name>``:

- ``sasl.oauthbearer.jwks.endpoint.url`` (required: unsigned tokens, Kafka's
  ``OAuthBearerUnsecuredValidatorCallbackHandler``, are not served);
- ``sasl.oauthbearer.jwks.endpoint.refresh.ms`` (3600000),
  ``...jwks.endpoint.retry.backoff.ms`` (100), ``...retry.backoff.max.ms`` (10000);
- ``sasl.oauthbearer.expected.audience`` (a list) and ``...expected.issuer``, each
  required unless ``sasl.oauthbearer.allow.unverified.audience``/``...issuer`` is
  true (Kafka 4.4);
  ``...clock.skew.seconds`` (30), ``...scope.claim.name`` (scope),
  ``...sub.claim.name`` (sub);
- ``sasl.server.callback.handler.class``: unset or Kafka's
  ``OAuthBearerValidatorCallbackHandler``;
- the HTTPS trust for the JWKS endpoint: the ``ssl.truststore.*`` options of the
  listener's OAUTHBEARER JAAS entry, as Kafka's ``JaasOptionsUtils`` reads them.

This node's own login (``token_source``) also reads ``sasl.login.refresh.window.factor``
(0.5 to 1.0), ``...window.jitter`` (0 to 0.25), ``...min.period.seconds`` (0 to 900)
and ``...buffer.seconds`` (0 to 3600), Kafka's ranges.
"""
from __future__ import annotations

import logging
import ssl

from kraft_server.config import ConfigError, _t_double, _t_short

from .jaas import JaasError, parse_jaas

log = logging.getLogger(__name__)

VALIDATOR_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
JWKS_URL = "sasl.oauthbearer.jwks.endpoint.url"


def oauth_getter(raw: dict[str, str], listener: str):
    prefix = f"listener.name.{listener.lower()}."

    def get(name: str) -> str | None:
        for key in (f"{prefix}oauthbearer.{name}", prefix + name, name):
            value = raw.get(key)
            if value is not None:
                return value.strip()
        return None
    return get


def _number(name: str, value: str | None, default: int, least: int = 0) -> int:
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ConfigError(f"Invalid value {value} for configuration {name}: Not a number of type LONG",
                          name) from None
    if number < least:
        raise ConfigError(f"The OAuth configuration option {name} value must be at least {least}", name)
    return number


AUDIENCE_REQUIRED = (
    'The OAuth validator for the broker requires "{0}" to be configured so that the token\'s audience ("aud") '
    'claim can be verified, but it was not set. Set "{0}" to the audience(s) that identify this cluster, or set '
    '"{1}" to true to accept tokens regardless of their audience.')
ISSUER_REQUIRED = (
    'The OAuth validator for the broker requires "{0}" to be configured so that the token\'s issuer ("iss") '
    'claim can be verified, but it was not set. Set "{0}" to the issuer URL of the OAuth/OIDC provider that '
    'signs the tokens, or set "{1}" to true to accept tokens regardless of their issuer.')


def _required(value, name: str, allow: str | None, text: str) -> None:
    """Kafka 4.4: the audience and the issuer must be checked unless
    ``sasl.oauthbearer.allow.unverified.audience``/``...issuer`` is true."""
    if value:
        return
    opt_out = name.replace("expected", "allow.unverified")
    if (allow or "false").lower() != "true":
        raise ConfigError(text.format(name, opt_out), name)
    log.warning("OAUTHBEARER: %s is not set and %s is true: %s is not checked", name, opt_out,
                "aud" if "audience" in name else "iss")


def https_context(options: dict[str, str]) -> ssl.SSLContext:
    """A client context trusting the JAAS options' ``ssl.truststore.*`` (else the
    system's roots)."""
    from .keystores import load_truststore
    context = ssl.create_default_context()
    pem = load_truststore(options.get, "")
    if pem:
        context.load_verify_locations(cadata=pem)
    if options.get("ssl.endpoint.identification.algorithm", "https") == "":
        context.check_hostname = False
    return context


def jaas_options(raw: dict[str, str], listener: str) -> dict[str, str]:
    key = f"listener.name.{listener.lower()}.oauthbearer.sasl.jaas.config"
    text = raw.get(key) or raw.get(f"listener.name.{listener.lower()}.sasl.jaas.config") or raw.get("sasl.jaas.config")
    if not text:
        return {}
    try:
        return dict(parse_jaas(text).options)
    except JaasError as exc:
        raise ConfigError(f"Invalid value for configuration {key}: {exc}", key) from None


def oauth_validator(raw: dict[str, str], listener: str):
    """The listener's ``JwtValidator``; its JWKS is fetched on first use."""
    from .jwks import RefreshingJwks
    from .oauth_validator import JwtValidator, ValidatorSettings

    get = oauth_getter(raw, listener)
    handler = get("sasl.server.callback.handler.class")
    if handler and handler != VALIDATOR_HANDLER:
        raise ConfigError(f"sasl.server.callback.handler.class {handler} is not supported here "
                          f"(OAUTHBEARER on listener {listener} takes {VALIDATOR_HANDLER})",
                          "sasl.server.callback.handler.class")
    url = get("sasl.oauthbearer.jwks.endpoint.url")
    if not url:
        raise ConfigError(f"OAUTHBEARER is enabled on listener {listener} but {JWKS_URL} is not set "
                          f"(unsecured JWTs are not accepted here)", JWKS_URL)
    if url.split(":", 1)[0].lower() not in ("http", "https", "file"):
        raise ConfigError(f"The OAuth configuration option {JWKS_URL} contains a URL ({url}) that contains an "
                          f"invalid protocol; only \"http\", \"https\", and \"file\" protocol are supported", JWKS_URL)
    context = https_context(jaas_options(raw, listener)) if url.lower().startswith("https:") else None
    refresh = "sasl.oauthbearer.jwks.endpoint.refresh.ms"
    backoff = "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms"
    backoff_max = "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms"
    jwks = RefreshingJwks(
        url, context, refresh_ms=_number(refresh, get("sasl.oauthbearer.jwks.endpoint.refresh.ms"), 3600000, 1),
        backoff_ms=_number(backoff, get("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms"), 100),
        backoff_max_ms=_number(backoff_max, get("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms"), 10000))
    audiences = [a.strip() for a in (get("sasl.oauthbearer.expected.audience") or "").split(",") if a.strip()]
    issuer = get("sasl.oauthbearer.expected.issuer") or None
    _required(audiences, "sasl.oauthbearer.expected.audience", get("sasl.oauthbearer.allow.unverified.audience"),
              AUDIENCE_REQUIRED)
    _required(issuer, "sasl.oauthbearer.expected.issuer", get("sasl.oauthbearer.allow.unverified.issuer"),
              ISSUER_REQUIRED)
    settings = ValidatorSettings(
        audiences=audiences, issuer=issuer,
        clock_skew_s=_number("sasl.oauthbearer.clock.skew.seconds", get("sasl.oauthbearer.clock.skew.seconds"), 30),
        scope_claim=get("sasl.oauthbearer.scope.claim.name") or "scope",
        sub_claim=get("sasl.oauthbearer.sub.claim.name") or "sub")
    return JwtValidator(jwks, settings)


LOGIN_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"


def _ranged(name: str, raw: str | None, default, low, high, parse):
    """A ``sasl.login.refresh.*`` value in Kafka's range (its ConfigDef's words)."""
    value = default if raw is None or raw == "" else parse(name, raw)
    if value < low:
        raise ConfigError(f"Invalid value {raw} for configuration {name}: Value must be at least {low}", name)
    if value > high:
        raise ConfigError(f"Invalid value {raw} for configuration {name}: Value must be no more than {high}", name)
    return value


def refresh_settings(get):
    """``sasl.login.refresh.*`` (Kafka's SaslConfigs ranges) for ``oauth_login.refresh_at``."""
    from .oauth_login import RefreshSettings
    factor, jitter = "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter"
    least, buffer = "sasl.login.refresh.min.period.seconds", "sasl.login.refresh.buffer.seconds"
    return RefreshSettings(
        window_factor=_ranged(factor, get("sasl.login.refresh.window.factor"), 0.8, 0.5, 1.0, _t_double),
        window_jitter=_ranged(jitter, get("sasl.login.refresh.window.jitter"), 0.05, 0.0, 0.25, _t_double),
        min_period_s=_ranged(least, get("sasl.login.refresh.min.period.seconds"), 60, 0, 900, _t_short),
        buffer_s=_ranged(buffer, get("sasl.login.refresh.buffer.seconds"), 300, 0, 3600, _t_short))


def token_source(raw: dict[str, str], listener: str):
    """This node's OAUTHBEARER login for controller connections (``oauth_login.py``)."""
    from .oauth_login import ClientCredentials, TokenSource

    get = oauth_getter(raw, listener)
    handler = get("sasl.login.callback.handler.class")
    if handler != LOGIN_HANDLER:
        raise ConfigError(f"sasl.mechanism.controller.protocol=OAUTHBEARER needs sasl.login.callback.handler.class="
                          f"{LOGIN_HANDLER} (unsecured tokens are not sent from here)",
                          "sasl.login.callback.handler.class")
    url = get("sasl.oauthbearer.token.endpoint.url")
    if not url:
        raise ConfigError("The OAuth configuration option sasl.oauthbearer.token.endpoint.url is required",
                          "sasl.oauthbearer.token.endpoint.url")
    options = jaas_options(raw, listener)
    client_id = get("sasl.oauthbearer.client.credentials.client.id") or options.get("clientId")
    secret = get("sasl.oauthbearer.client.credentials.client.secret") or options.get("clientSecret")
    if not client_id or not secret:
        raise ConfigError("OAUTHBEARER login needs sasl.oauthbearer.client.credentials.client.id and "
                          "...client.secret, or clientId and clientSecret in the JAAS entry", "sasl.jaas.config")
    backoff, backoff_max = "sasl.login.retry.backoff.ms", "sasl.login.retry.backoff.max.ms"
    return TokenSource(refresh=refresh_settings(get), credentials=ClientCredentials(
        url, client_id, secret, scope=get("sasl.oauthbearer.scope") or options.get("scope"),
        context=https_context(options) if url.lower().startswith("https:") else None,
        backoff_ms=_number(backoff, get("sasl.login.retry.backoff.ms"), 100),
        backoff_max_ms=_number(backoff_max, get("sasl.login.retry.backoff.max.ms"), 10000)))
