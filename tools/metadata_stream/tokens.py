"""``--delegation-token``: the driver logs in with ``--command-config``'s credentials
(SCRAM or PLAIN over SASL_SSL or SASL_PLAINTEXT), asks for a delegation token
(CreateDelegationToken, API 38) with Kafka's own AdminClient in the driver's JVM (the
connector's kafka-clients), and hands the Kafka source, so every executor, only the
token: a SCRAM login with the token id as user name, the HMAC (base64) as password and
``tokenauth=true``. The driver's own ``sasl.jaas.config`` never reaches an executor.

Where the request goes: ``--bootstrap-server``, as ``kafka-delegation-tokens
--bootstrap-server`` sends it. Kafka's AdminClient sends token requests to brokers only
(with ``bootstrap.controllers`` it refuses: UnsupportedEndpointTypeException); a Kafka
broker forwards them to the controllers, and our node answers them on its client
listener itself (the active controller; another node answers NOT_CONTROLLER).

Spark's own token provider (``KafkaDelegationTokenProvider``) only runs under Kerberos:
its AdminClient logs in with GSSAPI unless a JVM-wide JAAS file is set.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule"
TOKEN_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
DEFAULT_TOKEN_MECHANISM = "SCRAM-SHA-512"  # Spark's sasl.token.mechanism default
SASL_PROTOCOLS = ("SASL_SSL", "SASL_PLAINTEXT")
# The driver's own login: replaced by the token's, never handed to the executors.
LOGIN_KEYS = ("sasl.jaas.config", "sasl.mechanism", "sasl.login.class", "sasl.login.callback.handler.class",
              "sasl.client.callback.handler.class")
TIMEOUT_S = 60


class TokenError(Exception):
    """The token could not be obtained (or the settings cannot obtain one)."""


@dataclass(frozen=True)
class Token:
    token_id: str
    hmac: str = field(repr=False)  # base64, the token login's password
    owner: str
    expiry_ms: int


def check_settings(options: dict[str, str]) -> None:
    """Raise TokenError unless the driver's settings can log in with SASL."""
    protocol = options.get("kafka.security.protocol", "PLAINTEXT").upper()
    if protocol not in SASL_PROTOCOLS:
        raise TokenError(f"--delegation-token needs security.protocol SASL_SSL or SASL_PLAINTEXT "
                         f"(the driver logs in to ask for the token), not {protocol}")
    if "kafka.sasl.jaas.config" not in options:
        raise TokenError("--delegation-token needs the driver's sasl.jaas.config in --command-config")


def token_mechanism(options: dict[str, str], wanted: str | None = None) -> str:
    """The SCRAM mechanism of the token login: ``wanted``, else the driver's when it is
    SCRAM, else SCRAM-SHA-512."""
    mechanism = (wanted or options.get("kafka.sasl.mechanism", "")).upper()
    if mechanism in TOKEN_MECHANISMS:
        return mechanism
    if wanted:
        raise TokenError(f"a delegation token logs in with {' or '.join(TOKEN_MECHANISMS)}, not {wanted}")
    return DEFAULT_TOKEN_MECHANISM


def admin_properties(options: dict[str, str], bootstrap_server: str) -> dict[str, str]:
    """The driver's AdminClient settings: every ``kafka.`` source option (the driver's
    credentials included) and where to send the request."""
    props = {key.removeprefix("kafka."): value for key, value in options.items() if key.startswith("kafka.")}
    return {**props, "bootstrap.servers": bootstrap_server}


def token_jaas(token: Token) -> str:
    return f'{SCRAM_LOGIN} required username="{token.token_id}" password="{token.hmac}" tokenauth=true;'


def token_options(options: dict[str, str], token: Token, mechanism: str) -> dict[str, str]:
    """``options`` with the driver's login replaced by the token's."""
    kept = {k: v for k, v in options.items() if k.removeprefix("kafka.") not in LOGIN_KEYS}
    return {**kept, "kafka.sasl.mechanism": mechanism, "kafka.sasl.jaas.config": token_jaas(token)}


class TokenAdmin:
    """Kafka's AdminClient in the driver's JVM (through ``spark._jvm``), for one token."""

    def __init__(self, spark, props: dict[str, str]):
        self.jvm = spark._jvm
        self.where = props["bootstrap.servers"]
        java_props = self.jvm.java.util.Properties()
        for key, value in props.items():
            java_props.setProperty(key, value)
        self.admin = self.jvm.org.apache.kafka.clients.admin.Admin.create(java_props)
        self.hmac_bytes = None

    def _get(self, future, what: str):
        from py4j.protocol import Py4JJavaError
        try:
            return future.get(TIMEOUT_S, self.jvm.java.util.concurrent.TimeUnit.SECONDS)
        except Py4JJavaError as exc:
            raise TokenError(f"{what} at {self.where}: {_cause(exc)}") from None

    def create(self, max_lifetime_ms: int = -1) -> Token:
        admin_pkg = self.jvm.org.apache.kafka.clients.admin
        options = admin_pkg.CreateDelegationTokenOptions().maxlifeTimeMs(max_lifetime_ms)
        token = self._get(self.admin.createDelegationToken(options).delegationToken(), "CreateDelegationToken")
        info = token.tokenInfo()
        self.hmac_bytes = token.hmac()
        created = Token(info.tokenId(), token.hmacAsBase64String(), info.owner().toString(), info.expiryTimestamp())
        log.info("delegation token %s for %s from %s, expires at %d ms", created.token_id, created.owner,
                 self.where, created.expiry_ms)
        return created

    def expire(self) -> None:
        """ExpireDelegationToken with period -1: the token is removed now."""
        options = self.jvm.org.apache.kafka.clients.admin.ExpireDelegationTokenOptions().expiryTimePeriodMs(-1)
        self._get(self.admin.expireDelegationToken(self.hmac_bytes, options).expiryTimestamp(),
                  "ExpireDelegationToken")
        log.info("delegation token expired at %s", self.where)

    def close(self) -> None:
        self.admin.close()


def _cause(exc) -> str:
    """The Kafka exception behind a failed future (ExecutionException's cause)."""
    java = exc.java_exception
    cause = java.getCause() or java
    name = cause.getClass().getSimpleName()
    text = f"{name}: {cause.getMessage()}"
    if name == "NotControllerException":
        text += " (our nodes answer token requests on the active controller's client listener)"
    return text


def obtain(spark, options: dict[str, str], *, bootstrap_server: str, mechanism: str | None = None, max_lifetime_ms: int = -1) -> tuple[dict[str, str], TokenAdmin]:
    """The source options with the token's login instead of the driver's, and the admin
    that holds the token (``expire`` / ``close`` it when the job ends)."""
    check_settings(options)
    chosen = token_mechanism(options, mechanism)
    admin = TokenAdmin(spark, admin_properties(options, bootstrap_server))
    try:
        token = admin.create(max_lifetime_ms)
    except TokenError:
        admin.close()
        raise
    return token_options(options, token, chosen), admin
