"""OAUTHBEARER on the server without sockets to a client: the JWKS cache against the
test OIDC provider over HTTPS (refresh on an unknown key id, at most once a minute per
key id; a failed refresh keeps the keys), the validator's refusals (Kafka's
BrokerJwtValidator), the mechanism's invalid_token exchange, the settings' names, and
the session lifetime bounded by the token's exp (KIP-368)."""
from __future__ import annotations

import time

import pytest

from kraft_server.api.registry import listener_apis
from kraft_server.config import ConfigError
from kraft_server.net.pipeline import Pipeline, ProtocolViolation
from kraft_server.net.sasl_gate import SaslGate
from kraft_server.security.oauth_config import oauth_validator
from kraft_server.security.oauth_response import InitialResponse
from kraft_server.security.oauth_server import OAuthBearerServer
from kraft_server.security.oauth_validator import JwtInvalid
from kraft_server.security.sasl_config import ServerSasl
from kraft_server.security.sasl_failure import SaslFailure
from tests.support.certs import Pki
from tests.support.oidc_provider import OidcProvider, validator_for
from wire.headers import decode_response, encode_request
from wire.messages import DescribeQuorumRequest, SaslAuthenticateRequest, SaslHandshakeRequest


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def idp(pki):
    with OidcProvider(pki, {"kraft-client": "s3cret"}) as provider:
        yield provider


def _wait(predicate, timeout=5.0):
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def test_a_good_token_names_its_principal_scopes_and_expiry(idp, pki):
    validator = validator_for(idp, pki)
    token = validator.validate(idp.mint("alice", scope="kafka"))
    assert (token.principal, token.scopes) == ("alice", frozenset({"kafka"}))
    assert abs(token.lifetime_ms - (time.time() + 3600) * 1000) < 5000
    other = validator_for(idp, pki, sub_claim="client_id", scope_claim="roles")
    token = other.validate(idp.mint("x", extra={"client_id": " svc ", "roles": ["a", "b"]}))
    assert (token.principal, token.scopes) == ("svc", frozenset({"a", "b"}))


@pytest.mark.parametrize("change, text", [
    (dict(expires_in=-120), "Signature has expired"),
    (dict(audience="someone-else"), "Audience doesn't match"),
    (dict(issuer="https://elsewhere"), "Invalid issuer"),
    (dict(issued_at=None, extra={"iat": None}), 'Token is missing the "iat" claim'),
    (dict(extra={"iat": "yesterday"}), "Could not extract the 'iat' claim"),
    (dict(extra={"sub": None}), "sub value must be non-null"),
    (dict(extra={"sub": "  "}), "sub value must not contain only whitespace"),
    (dict(extra={"scope": ["a", "a"]}), "must not contain duplicates"),
])
def test_refusals(idp, pki, change, text):
    with pytest.raises(JwtInvalid, match=text):
        validator_for(idp, pki).validate(idp.mint("alice", **change))


def test_clock_skew_forgives_a_just_expired_token(idp, pki):
    token = idp.mint("alice", expires_in=-10)
    assert validator_for(idp, pki).validate(token).principal == "alice"  # 30 s by default
    with pytest.raises(JwtInvalid, match="expired"):
        validator_for(idp, pki, clock_skew_s=0).validate(token)


def test_unsigned_and_malformed_tokens(idp, pki):
    validator = validator_for(idp, pki)
    header, payload, _ = idp.mint("alice").split(".")
    with pytest.raises(JwtInvalid, match="not allowed"):
        validator.validate("eyJhbGciOiJub25lIn0." + payload + ".")
    with pytest.raises(JwtInvalid, match="three sections"):
        validator.validate(header + "." + payload)


def test_unknown_key_id_refreshes_once_a_minute_and_rotation(idp, pki):
    validator = validator_for(idp, pki)
    validator.validate(idp.mint("alice"))
    assert idp.jwks_requests == 1
    old = idp.keys[0]
    idp.rotate(keep_old=True)
    fresh = idp.mint("alice")
    with pytest.raises(JwtInvalid, match="Unable to find a suitable verification key"):
        validator.validate(fresh)  # as Kafka: this one fails, the refresh runs behind it
    _wait(lambda: idp.jwks_requests == 2)
    _wait(lambda: any(k.key_id == idp.keys[0].kid for k in validator.jwks._keys))
    assert validator.validate(fresh).principal == "alice"
    assert validator.validate(idp.mint("alice", key=old)).principal == "alice"  # still published
    with pytest.raises(JwtInvalid):
        validator.validate(idp.mint("alice", kid="never-published"))
    with pytest.raises(JwtInvalid):
        validator.validate(idp.mint("alice", kid="never-published"))
    _wait(lambda: idp.jwks_requests == 3)
    time.sleep(0.2)
    assert idp.jwks_requests == 3  # the same unknown key id again within a minute: no fetch
    idp.rotate()  # the old keys are gone from the JWKS
    validator.jwks.refresh()
    with pytest.raises(JwtInvalid, match="Unable to find"):
        validator.validate(idp.mint("alice", key=old))


def test_a_failed_refresh_keeps_the_keys(idp, pki):
    validator = validator_for(idp, pki)
    validator.validate(idp.mint("alice"))
    idp.stop()
    assert validator.jwks.refresh() is False
    assert validator.validate(idp.mint("alice")).principal == "alice"


def test_a_token_before_the_first_fetch_is_refused_at_once(idp, pki):
    """The event loop never waits for the JWKS: while the first fetch hangs, a token is
    refused as one whose key is unknown, at once; once the keys are in, it passes."""
    import threading

    from kraft_server.security.jwks import RefreshingJwks, fetch_keys
    from kraft_server.security.oauth_validator import JwtValidator, ValidatorSettings
    release = threading.Event()

    def slow_fetch(url, context):
        release.wait(10)
        return fetch_keys(url, context)

    context = validator_for(idp, pki).jwks._context
    jwks = RefreshingJwks(idp.jwks_url, context, fetch=slow_fetch)
    validator = JwtValidator(jwks, ValidatorSettings(audiences=[idp.audience], issuer=idp.issuer))
    started = time.monotonic()
    with pytest.raises(JwtInvalid, match="Unable to find a suitable verification key"):
        validator.validate(idp.mint("alice"))
    assert time.monotonic() - started < 0.5
    release.set()
    _wait(lambda: jwks.keys())
    assert validator.validate(idp.mint("alice")).principal == "alice"
    jwks.stop()


def test_the_mechanism_answers_invalid_token_then_fails_with_it(idp, pki):
    server = OAuthBearerServer(validator_for(idp, pki))
    bad = InitialResponse(idp.mint("alice", audience="other")).to_bytes()
    assert server.evaluate(bad) == b'{"status":"invalid_token"}' and not server.complete
    with pytest.raises(SaslFailure) as err:
        server.evaluate(b"\x01")
    assert err.value.exposed and str(err.value) == '{"status":"invalid_token"}'
    with pytest.raises(SaslFailure, match="authorization id \\(bob\\) that is different"):
        OAuthBearerServer(validator_for(idp, pki)).evaluate(InitialResponse(idp.mint("alice"), "bob").to_bytes())
    with pytest.raises(SaslFailure) as err:
        OAuthBearerServer(validator_for(idp, pki)).evaluate(b"garbage")
    assert not err.value.exposed
    server = OAuthBearerServer(validator_for(idp, pki))
    good = InitialResponse(idp.mint("alice"), "alice", {"traceId": "1"}).to_bytes()
    assert server.evaluate(good) == b"" and server.complete and server.authorization_id == "alice"
    assert server.extensions == {"traceId": "1"}


def _authenticate(pipeline, corr, token: bytes):
    pipeline.receive_data(encode_request(17, 1, corr, SaslHandshakeRequest(mechanism="OAUTHBEARER"), "c"))
    assert pipeline.next_call() is None
    assert decode_response(pipeline.output()[4:], 17, 1)[1].error_code == 0
    pipeline.receive_data(encode_request(36, 2, corr + 1, SaslAuthenticateRequest(auth_bytes=token), "c"))
    assert pipeline.next_call() is None
    return decode_response(pipeline.output()[4:], 36, 2)[1]


def _gate(validator, reauth_ms=0):
    pipeline = Pipeline("CLIENT", listener_apis(False))
    sasl = ServerSasl(["OAUTHBEARER"], reauth_ms={"OAUTHBEARER": reauth_ms}, oauth=validator)
    SaslGate(sasl, "SASL_PLAINTEXT", "CLIENT").attach(pipeline)
    return pipeline


def test_gate_session_lifetime_is_the_token_expiry(idp, pki, monkeypatch):
    validator = validator_for(idp, pki)
    pipeline = _gate(validator)
    answer = _authenticate(pipeline, 1, InitialResponse(idp.mint("alice", expires_in=60)).to_bytes())
    assert answer.error_code == 0 and 55_000 < answer.session_lifetime_ms <= 60_000
    assert pipeline.principal == "User:alice"
    pipeline = _gate(validator, reauth_ms=5000)  # connections.max.reauth.ms shorter than the token
    assert _authenticate(pipeline, 1, InitialResponse(idp.mint("alice")).to_bytes()).session_lifetime_ms == 5000
    now = time.monotonic() + 6
    monkeypatch.setattr("kraft_server.net.sasl_gate.time.monotonic", lambda: now)
    pipeline.receive_data(encode_request(55, 2, 3, DescribeQuorumRequest(topics=[]), "c"))
    with pytest.raises(ProtocolViolation, match="expired session"):
        pipeline.next_call()


def test_gate_refusal_is_kafkas(idp, pki):
    pipeline = _gate(validator_for(idp, pki))
    answer = _authenticate(pipeline, 1, InitialResponse(idp.mint("alice", expires_in=-600)).to_bytes())
    assert (answer.error_code, bytes(answer.auth_bytes)) == (0, b'{"status":"invalid_token"}')
    pipeline.receive_data(encode_request(36, 2, 3, SaslAuthenticateRequest(auth_bytes=b"\x01"), "c"))
    pipeline.next_call()
    answer = decode_response(pipeline.output()[4:], 36, 2)[1]
    assert (answer.error_code, answer.error_message) == (58, '{"status":"invalid_token"}') and pipeline.failed


def test_settings_names_prefixes_and_requirements(idp):
    url = "sasl.oauthbearer.jwks.endpoint.url"
    raw = {f"listener.name.client.oauthbearer.{url}": idp.jwks_url,
           "listener.name.client.sasl.oauthbearer.expected.audience": "a, b",
           "sasl.oauthbearer.expected.issuer": "https://issuer", "sasl.oauthbearer.clock.skew.seconds": "5",
           "listener.name.client.oauthbearer.sasl.oauthbearer.sub.claim.name": "azp",
           "sasl.oauthbearer.jwks.endpoint.refresh.ms": "1000"}
    validator = oauth_validator(raw, "CLIENT")
    s = validator.settings
    assert (s.audiences, s.issuer, s.clock_skew_s, s.sub_claim, s.scope_claim) == (
        ["a", "b"], "https://issuer", 5, "azp", "scope")
    assert validator.jwks.url == idp.jwks_url and validator.jwks.refresh_s == 1.0
    with pytest.raises(ConfigError, match="jwks.endpoint.url is not set"):
        oauth_validator({}, "CLIENT")
    with pytest.raises(ConfigError, match='requires "sasl.oauthbearer.expected.audience"'):
        oauth_validator({url: idp.jwks_url, "sasl.oauthbearer.expected.issuer": "i"}, "CLIENT")
    with pytest.raises(ConfigError, match='requires "sasl.oauthbearer.expected.issuer"'):
        oauth_validator({url: idp.jwks_url, "sasl.oauthbearer.expected.audience": "a"}, "CLIENT")
    lax = oauth_validator({url: idp.jwks_url, "sasl.oauthbearer.allow.unverified.audience": "true",
                           "sasl.oauthbearer.allow.unverified.issuer": "true"}, "CLIENT")
    assert (lax.settings.audiences, lax.settings.issuer) == ([], None)
    with pytest.raises(ConfigError, match="OAuthBearerValidatorCallbackHandler"):
        oauth_validator({url: idp.jwks_url, "sasl.server.callback.handler.class": "com.example.Mine"}, "CLIENT")
