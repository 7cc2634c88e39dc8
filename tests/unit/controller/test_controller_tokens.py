"""Delegation tokens in the controller, as Kafka's DelegationTokenControlManager decides
them: Create (lifetimes, renewers), Renew and Expire (owner/renewer rules, expiry, max
lifetime), the sweep, the refusals in Kafka's order; the image replaying and
snapshotting the records; a SCRAM login with a token (tokenauth=true)."""
from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from kraft_server.common import metadata_version as mv
from kraft_server.controller.image.metadata_image import MetadataImage
from kraft_server.controller.image.records import feature_level
from kraft_server.controller.tokens import control, ops
from kraft_server.security.delegation_token import TokenCredentials, token_password
from kraft_server.security.scram import ScramClient, ScramError, ScramServer
from wire.errors import ErrorCode as E
from wire.messages import (CreateDelegationTokenRequest, ExpireDelegationTokenRequest, RenewDelegationTokenRequest)
from wire.messages.create_delegation_token_request import CreatableRenewers
from wire.records import encode_metadata_record

SECRET = "token-secret"
S = control.TokenSettings(secret=SECRET, max_lifetime_ms=1000_000, expiry_time_ms=100_000)
ALICE, BOB, CAROL = "User:alice", "User:bob", "User:carol"
T0 = 1_700_000_000_000


def fresh_image(level=mv.LATEST_PRODUCTION):
    image = MetadataImage()
    image.replay(feature_level("metadata.version", level))
    return image


def apply(image, records):
    for record, version in records:
        image.replay(encode_metadata_record(record, version))


def created(image, requester=ALICE, now=T0, settings=S, **request):
    request.setdefault("max_lifetime_ms", -1)
    fields, records = control.create(image, settings, requester, CreateDelegationTokenRequest(**request), now)
    apply(image, records)
    return fields


def renewal(image, principal, mac, now, period=-1):
    code, expiry, records = control.renew(image, S, principal, RenewDelegationTokenRequest(
        hmac=mac, renew_period_ms=period), now)
    apply(image, records)
    return code, expiry


def expiry(image, principal, mac, now, period):
    code, when, records = control.expire(image, S, principal, ExpireDelegationTokenRequest(
        hmac=mac, expiry_time_period_ms=period), now)
    apply(image, records)
    return code, when


def test_create_uses_the_defaults_and_the_hmac_is_kafkas():
    image = fresh_image()
    f = created(image, renewers=[CreatableRenewers(principal_type="User", principal_name="bob")])
    assert f["error_code"] == 0 and len(f["token_id"]) == 22  # Kafka's Uuid text form
    assert (f["issue_timestamp_ms"], f["expiry_timestamp_ms"], f["max_timestamp_ms"]) == (T0, T0 + 100_000, T0 + 1000_000)
    assert f["hmac"] == hmac.new(SECRET.encode(), f["token_id"].encode(), hashlib.sha512).digest()
    record = image.tokens.get(f["token_id"])
    assert (record.owner, record.requester, list(record.renewers)) == (ALICE, ALICE, [BOB])
    # a smaller positive MaxLifetimeMs wins, and caps the expiry
    g = created(image, max_lifetime_ms=50_000)
    assert (g["expiry_timestamp_ms"], g["max_timestamp_ms"]) == (T0 + 50_000, T0 + 50_000)
    # a larger one does not
    assert created(image, max_lifetime_ms=10**12)["max_timestamp_ms"] == T0 + 1000_000


def test_create_for_another_owner_and_the_refusals():
    image = fresh_image()
    f = created(image, requester=CAROL, owner_principal_type="User", owner_principal_name="alice")
    assert (f["principal_name"], f["token_requester_principal_name"]) == ("alice", "carol")
    assert image.tokens.get(f["token_id"]).owner == ALICE
    bad = created(image, renewers=[CreatableRenewers(principal_type="Group", principal_name="g")])
    assert bad["error_code"] == E.INVALID_PRINCIPAL_TYPE
    assert created(image, settings=control.TokenSettings())["error_code"] == E.DELEGATION_TOKEN_AUTH_DISABLED
    assert created(fresh_image(mv.DELEGATION_TOKEN - 1))["error_code"] == E.UNSUPPORTED_VERSION
    assert len(image.tokens) == 1


def test_renew_rules():
    image = fresh_image()
    f = created(image, renewers=[CreatableRenewers(principal_type="User", principal_name="bob")])
    mac = f["hmac"]
    assert renewal(image, CAROL, mac, T0 + 10) == (E.DELEGATION_TOKEN_OWNER_MISMATCH, 0)
    assert renewal(image, ALICE, b"nope", T0 + 10) == (E.DELEGATION_TOKEN_NOT_FOUND, 0)
    assert renewal(image, BOB, mac, T0 + 50_000) == (0, T0 + 150_000)  # a renewer may
    assert renewal(image, ALICE, mac, T0 + 60_000, period=1_000) == (0, T0 + 61_000)  # a smaller period
    assert image.tokens.get(f["token_id"]).expiration_timestamp == T0 + 61_000
    # never past the max timestamp
    assert renewal(image, ALICE, mac, T0 + 61_000, period=10**9) == (0, T0 + 161_000)
    # past its expiry it cannot be renewed (checked before the owner)
    assert renewal(image, CAROL, mac, T0 + 161_001) == (E.DELEGATION_TOKEN_EXPIRED, 0)


def test_renew_stops_at_the_max_timestamp():
    image = fresh_image()
    mac = created(image, max_lifetime_ms=150_000)["hmac"]
    assert renewal(image, ALICE, mac, T0 + 90_000) == (0, T0 + 150_000)


def test_expire_rules_and_the_sweep():
    image = fresh_image()
    a, b = created(image), created(image, requester=BOB)
    assert expiry(image, BOB, a["hmac"], T0 + 1, 10) == (E.DELEGATION_TOKEN_OWNER_MISMATCH, 0)
    assert expiry(image, ALICE, a["hmac"], T0 + 1, 10) == (0, T0 + 11)
    assert image.tokens.get(a["token_id"]).expiration_timestamp == T0 + 11
    assert expiry(image, ALICE, a["hmac"], T0 + 20, 10) == (E.DELEGATION_TOKEN_EXPIRED, 0)
    # the sweep removes what is past its expiry, and leaves the rest
    removals = control.sweep(image, T0 + 20)
    assert [r.token_id for r, _ in removals] == [a["token_id"]]
    apply(image, removals)
    assert image.tokens.get(a["token_id"]) is None and image.tokens.get(b["token_id"]) is not None
    # a negative period removes the token at once
    assert expiry(image, BOB, b["hmac"], T0 + 30, -1) == (0, T0 + 30)
    assert len(image.tokens) == 0
    assert expiry(image, BOB, b["hmac"], T0 + 31, -1) == (E.DELEGATION_TOKEN_NOT_FOUND, 0)


def test_tokens_survive_a_snapshot():
    image = fresh_image()
    created(image)
    created(image, requester=BOB, renewers=[CreatableRenewers(principal_type="User", principal_name="alice")])
    again = MetadataImage()
    for value in image.snapshot_records():
        again.replay(value)
    assert again.content() == image.content() and len(again.tokens) == 2


@pytest.mark.parametrize("version", [1, 2, 3])
def test_answers_at_each_version(version):
    body = CreateDelegationTokenRequest(max_lifetime_ms=-1)
    refused = ops.refusal_response(38, version, body, E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, ALICE)
    assert (refused.error_code, refused.max_timestamp_ms, refused.principal_name) == (64, -1, "alice")
    refused.encode(version)
    run, _ = ops.token_op(38, version, body, S, ALICE)
    answer = run(fresh_image(), 0, T0).reply()
    assert answer.error_code == 0 and answer.encode(version)
    assert answer.token_requester_principal_name == ("alice" if version == 3 else "")


def test_scram_login_with_a_token():
    image = fresh_image()
    f = created(image)
    tokens = TokenCredentials(SECRET, lambda: image)

    def lookup(mechanism, user, token=False):
        return tokens.lookup(mechanism, user) if token else None

    password = base64.b64encode(f["hmac"]).decode()
    assert password == token_password(SECRET, f["token_id"])
    server = ScramServer("SCRAM-SHA-512", lookup)
    client = ScramClient("SCRAM-SHA-512", f["token_id"], password)
    plain_first = client.first()
    client._bare += ",tokenauth=true"  # the extension is part of the client-first-bare, as Kafka's client sends it
    final = client.final(server.evaluate(client.first()))
    client.verify(server.evaluate(final))
    assert server.complete and server.authorization_id == "alice" and server.token_authenticated
    # without the extension the token id is an unknown user; an unknown token is refused
    with pytest.raises(ScramError):
        ScramServer("SCRAM-SHA-512", lookup).evaluate(plain_first)
    with pytest.raises(ScramError, match="Invalid tokenId : nope"):
        ScramServer("SCRAM-SHA-512", lookup).evaluate(b"n,,n=nope,r=abc,tokenauth=true")
    # a wrong password fails the proof
    server = ScramServer("SCRAM-SHA-512", lookup)
    wrong = ScramClient("SCRAM-SHA-512", f["token_id"], "wrong")
    wrong._bare += ",tokenauth=true"
    with pytest.raises(ScramError):
        server.evaluate(wrong.final(server.evaluate(wrong.first())))


def test_a_token_login_session_ends_with_the_token(monkeypatch):
    """Kafka's credential lifetime: a token's expiry caps SessionLifetimeMs, with or
    without connections.max.reauth.ms; an expired token's session ends at once; with
    neither the session has no end (None)."""
    from types import SimpleNamespace

    from kraft_server.net.sasl_gate import SaslGate
    from kraft_server.security.sasl_config import ServerSasl
    monkeypatch.setattr("kraft_server.net.sasl_gate.time.time", lambda: T0 / 1000)
    for reauth, expiry, lifetime in [(0, None, None), (5000, None, 5000), (0, T0 + 70_000, 70_000),
                                     (5000, T0 + 70_000, 5000), (0, T0 - 1, 1)]:
        gate = SaslGate(ServerSasl(["SCRAM-SHA-512"], reauth_ms={"SCRAM-SHA-512": reauth}), "SASL_PLAINTEXT", "C")
        gate.server = SimpleNamespace(mechanism="SCRAM-SHA-512", credential_expiry_ms=expiry, complete=True)
        assert gate._lifetime() == lifetime


def test_the_active_controller_writes_tokens_and_sweeps_the_expired():
    """On a one-voter core: a Create committed and answered, then the periodic sweep
    (delegation.token.expiry.check.interval.ms) removes the token once past its expiry."""
    from tests.unit.controller.test_controller_active import Single
    s = Single(tokens=control.TokenSettings(secret=SECRET, max_lifetime_ms=2000, expiry_time_ms=1000,
                                            check_interval_ms=500))
    s.run_for(600)
    answers = []
    run, fail = ops.token_op(38, 3, CreateDelegationTokenRequest(max_lifetime_ms=-1), s.controller.settings.tokens, ALICE)
    s.controller.submit_write("CreateDelegationToken", run, fail, answers.append)
    s.run_for(50)
    created_at = answers[0].issue_timestamp_ms
    assert answers[0].error_code == 0 and answers[0].expiry_timestamp_ms == created_at + 1000
    assert len(s.controller.image.tokens) == 1
    s.run_for(created_at + 1000 - s.now)  # not yet past its expiry
    assert len(s.controller.image.tokens) == 1
    s.run_for(600)  # past it, and a sweep since
    assert len(s.controller.image.tokens) == 0
    assert (26, 0) in [k for batch in s.data_batches() for k in batch]  # RemoveDelegationTokenRecord
