"""This node's OAUTHBEARER login: client credentials at the test OIDC provider's token
endpoint over HTTPS, the settings' names (Kafka's configs, else the JAAS options), and
our SASL client against our gate: accepted, and refused with Kafka's exchange."""
from __future__ import annotations

import time

import pytest

from kraft_server.config import ConfigError
from kraft_server.net.sasl_client import SaslClient, SaslFailed
from kraft_server.security.oauth_config import https_context, oauth_getter, refresh_settings, token_source
from kraft_server.security.oauth_login import (
    ClientCredentials, LoginFailed, RefreshSettings, TokenSource, expiry_ms, refresh_at)
from kraft_server.security.oauth_server import OAuthBearerServer
from kraft_server.security.sasl_config import ClientSasl
from tests.support.certs import Pki
from tests.support.oidc_provider import FIRST_WAIT_S, OidcProvider, validator_for
from wire.messages import SaslAuthenticateResponse, SaslHandshakeResponse

MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def idp(pki):
    with OidcProvider(pki, {"node-1": "n1-secret"}) as provider:
        yield provider


def _credentials(idp, pki, secret="n1-secret", **kw):
    context = https_context({"ssl.truststore.location": str(pki.truststore_pem), "ssl.truststore.type": "PEM"})
    return ClientCredentials(idp.token_url, "node-1", secret, scope="kafka", context=context, **kw)


def test_client_credentials_token(idp, pki):
    source = TokenSource(_credentials(idp, pki))
    token = source.token(wait=FIRST_WAIT_S)
    assert validator_for(idp, pki).validate(token).principal == "node-1"
    assert expiry_ms(token) > 0 and idp.token_requests == 1 and source.fetches == 1


def test_wrong_secret_fails_after_retries(idp, pki):
    source = TokenSource(_credentials(idp, pki, secret="wrong", backoff_ms=10, backoff_max_ms=40))
    with pytest.raises(LoginFailed, match="Could not obtain an access token"):
        source.login()
    assert idp.token_requests >= 3


def test_settings_from_kafka_configs_or_jaas(idp, pki):
    jaas = (f'{MODULE} required clientId="node-1" clientSecret="n1-secret" scope="kafka" '
            f'ssl.truststore.location="{pki.truststore_pem}" ssl.truststore.type="PEM";')
    raw = {"listener.name.controller.oauthbearer.sasl.jaas.config": jaas,
           "listener.name.controller.oauthbearer.sasl.login.callback.handler.class": HANDLER,
           "sasl.oauthbearer.token.endpoint.url": idp.token_url, "sasl.login.retry.backoff.max.ms": "500"}
    source = token_source(raw, "CONTROLLER")
    c = source.credentials
    assert (c.client_id, c.client_secret, c.scope, c.backoff_max_ms) == ("node-1", "n1-secret", "kafka", 500)
    assert source.token(wait=FIRST_WAIT_S)
    raw["sasl.oauthbearer.client.credentials.client.id"] = "other"
    assert token_source(raw, "CONTROLLER").credentials.client_id == "other"
    with pytest.raises(ConfigError, match="sasl.login.callback.handler.class"):
        token_source({**raw, "listener.name.controller.oauthbearer.sasl.login.callback.handler.class": ""},
                     "CONTROLLER")
    with pytest.raises(ConfigError, match="token.endpoint.url is required"):
        token_source({k: v for k, v in raw.items() if "token.endpoint" not in k}, "CONTROLLER")


def _run(client, server):
    """Our client against our mechanism, as the gate relays their tokens."""
    step = client.first_request()
    body = SaslHandshakeResponse(error_code=0, mechanisms=["OAUTHBEARER"])
    while True:
        step = client.on_response(body)
        if step is None:
            return
        _, _, request = step
        try:
            reply = server.evaluate(bytes(request.auth_bytes))
            body = SaslAuthenticateResponse(error_code=0, error_message="", auth_bytes=reply,
                                            session_lifetime_ms=0)
        except Exception as exc:  # noqa: BLE001
            body = SaslAuthenticateResponse(error_code=58, error_message=str(exc), auth_bytes=b"")


def test_our_client_against_our_mechanism(idp, pki):
    source = TokenSource(_credentials(idp, pki))
    source.token(wait=FIRST_WAIT_S)  # logged in, as the node is by the time it dials
    settings = ClientSasl("OAUTHBEARER", "", "", oauth=source)
    client = SaslClient(settings, {17: (0, 1), 36: (0, 2)})
    server = OAuthBearerServer(validator_for(idp, pki))
    _run(client, server)
    assert client.complete and server.authorization_id == "node-1"
    strict = OAuthBearerServer(validator_for(idp, pki, audiences=["another-cluster"]))
    with pytest.raises(SaslFailed, match='invalid_token'):
        _run(SaslClient(settings, {17: (0, 1), 36: (0, 2)}), strict)


def test_the_loop_never_waits_for_the_first_token(pki):
    """Before the first login ends, token() fails at once (the connection attempt is
    retried), rather than holding the event loop."""
    import time

    context = https_context({"ssl.truststore.location": str(pki.truststore_pem), "ssl.truststore.type": "PEM"})
    # a port nothing listens on: the login keeps failing in the background
    source = TokenSource(ClientCredentials("https://127.0.0.1:9/token", "node-1", "x", context=context,
                                           backoff_ms=1000, backoff_max_ms=5000))
    started = time.monotonic()
    with pytest.raises(LoginFailed, match="no valid access token"):
        source.token()
    assert time.monotonic() - started < 0.5


def test_refresh_time_as_kafkas_login():
    """Kafka's ExpiringCredentialRefreshingLogin: factor plus jitter of the life, kept
    out of the buffer before exp and past the minimum period; a short-lived token at
    that fraction of what is left."""
    r = RefreshSettings()  # 0.8, 0.05, 60 s, 300 s
    hour = 3600_000
    assert refresh_at(0, 0, hour, r, 0.0) == 2880_000  # 80% of an hour
    assert refresh_at(0, 0, hour, r, 1.0) == 3060_000  # 85%: the jitter's top
    assert refresh_at(0, 0, hour, RefreshSettings(window_factor=1.0, window_jitter=0.0), 0.0) == hour - 300_000
    assert refresh_at(1790_000, 0, hour, RefreshSettings(window_factor=0.5), 0.0) == 1790_000 + 60_000
    assert refresh_at(0, 0, 12_000, r, 0.0) == 9600_000 // 1000  # 12 s < 60 + 300 s: 80% of it
    assert refresh_at(4000, 0, 12_000, r, 0.0) == 4000 + 6400


def test_refresh_settings_read_with_kafkas_ranges():
    raw = {"listener.name.controller.sasl.login.refresh.window.factor": "0.9",
           "sasl.login.refresh.window.jitter": "0", "sasl.login.refresh.min.period.seconds": "5",
           "sasl.login.refresh.buffer.seconds": "10"}
    assert refresh_settings(oauth_getter(raw, "CONTROLLER")) == RefreshSettings(0.9, 0.0, 5, 10)
    assert refresh_settings(oauth_getter({}, "CONTROLLER")) == RefreshSettings(0.8, 0.05, 60, 300)
    for name, value, words in (("sasl.login.refresh.window.factor", "0.4", "at least 0.5"),
                               ("sasl.login.refresh.window.jitter", "0.3", "no more than 0.25"),
                               ("sasl.login.refresh.min.period.seconds", "901", "no more than 900"),
                               ("sasl.login.refresh.buffer.seconds", "x", "Not a number of type SHORT")):
        with pytest.raises(ConfigError, match=words):
            refresh_settings(oauth_getter({name: value}, "CONTROLLER"))


def test_a_short_token_is_renewed_before_it_expires(idp, pki):
    """A 3 s token with Kafka's default margins: renewed at 80-85% of its life, so the
    source never hands out an expired one."""
    idp.lifetime_s = 3
    source = TokenSource(_credentials(idp, pki))
    first = source.token(wait=FIRST_WAIT_S)
    deadline = time.monotonic() + 10
    while source.fetches < 3 and time.monotonic() < deadline:
        assert expiry_ms(source.token()) > time.time() * 1000
        time.sleep(0.05)
    assert source.fetches >= 3 and source.token() != first
