"""This node's OAUTHBEARER login: client credentials at the test OIDC provider's token
endpoint over HTTPS, the settings' names (Kafka's configs, else the JAAS options), and
our SASL client against our gate: accepted, and refused with Kafka's exchange."""
from __future__ import annotations

import pytest

from kraft_server.config import ConfigError
from kraft_server.net.sasl_client import SaslClient, SaslFailed
from kraft_server.security.oauth_config import https_context, token_source
from kraft_server.security.oauth_login import ClientCredentials, LoginFailed, TokenSource, expiry_ms
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
