"""DescribeDelegationToken (41) from a node's image, as a Kafka broker answers it
(KafkaApis.handleDescribeTokensRequest, DelegationTokenManager.filterToken): the
Owners filter, who sees which token (owner, requester, renewer, DESCRIBE on the
DELEGATION_TOKEN, DESCRIBE_TOKENS on the owner), the refusals and every field."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from kraft_server.api import registry
from kraft_server.api.delegation_tokens import handle_describe_delegation_token_request
from kraft_server.api.registry import listener_apis
from kraft_server.controller.tokens.control import TokenSettings
from kraft_server.security import acls as A
from kraft_server.security.delegation_token import token_hmac
from wire.errors import ErrorCode as E
from wire.messages import DescribeDelegationTokenRequest, DescribeDelegationTokenResponse
from wire.messages.create_delegation_token_request import CreatableRenewers
from wire.messages.describe_delegation_token_request import DescribeDelegationTokenOwner

from ..controller.test_controller_tokens import SECRET, T0, created, fresh_image
from .test_authorize_checks import allow, guard_with
from .test_delegation_token_requests import CLIENTS, ENDPOINTS, call

ALICE, BOB, CAROL, DAVE = "User:alice", "User:bob", "User:carol", "User:dave"


@pytest.fixture
def view():
    """Three tokens: alice's (bob renews), bob's, carol's created by admin for carol."""
    image = fresh_image()
    created(image, ALICE, renewers=[CreatableRenewers(principal_type="User", principal_name="bob")])
    created(image, BOB, now=T0 + 1)
    created(image, "User:admin", now=T0 + 2, owner_principal_type="User", owner_principal_name="carol")
    settings = SimpleNamespace(listener_protocols={**{n: p for n, _, _, p in ENDPOINTS}, **CLIENTS},
                               tokens=TokenSettings(secret=SECRET, max_lifetime_ms=1000_000, expiry_time_ms=100_000))
    return SimpleNamespace(controller=SimpleNamespace(image=image, settings=settings))


def ask(view, principal, owners=None, version=3, guard=None, listener="CLIENT", **extra):
    body = DescribeDelegationTokenRequest(owners=None if owners is None else [
        DescribeDelegationTokenOwner(principal_type="User", principal_name=o.split(":")[1]) for o in owners])
    c = call(registry.DESCRIBE_DELEGATION_TOKEN, body, listener=listener, principal=principal, version=version,
             **extra)
    handle_describe_delegation_token_request(c, view, guard)
    (answer,) = c.answers
    return answer


def owners_seen(answer) -> list[str]:
    assert answer.error_code == 0
    return sorted(f"{t.principal_type}:{t.principal_name}" for t in answer.tokens)


def test_owners_renewers_and_requesters_see_their_tokens(view):
    assert owners_seen(ask(view, ALICE, guard=guard_with())) == [ALICE]
    assert owners_seen(ask(view, BOB, guard=guard_with())) == [ALICE, BOB]  # a renewer of alice's
    assert owners_seen(ask(view, CAROL, guard=guard_with())) == [CAROL]
    assert owners_seen(ask(view, "User:admin", guard=guard_with(super_users=()))) == [CAROL]  # its requester
    assert owners_seen(ask(view, DAVE, guard=guard_with())) == []
    assert owners_seen(ask(view, DAVE)) == [ALICE, BOB, CAROL]  # no authorizer: every token


def test_describe_acls_open_others_tokens(view):
    carols = view.controller.image.tokens.tokens()
    carols = next(t for t in carols if t.owner == CAROL).token_id
    by_token = guard_with(allow(A.DESCRIBE, rtype=A.DELEGATION_TOKEN, name=carols, principal=DAVE))
    assert owners_seen(ask(view, DAVE, guard=by_token)) == [CAROL]
    by_owner = guard_with(allow(A.DESCRIBE_TOKENS, rtype=A.USER, name=BOB, principal=DAVE))
    assert owners_seen(ask(view, DAVE, guard=by_owner)) == [BOB]
    assert owners_seen(ask(view, "User:admin", guard=guard_with())) == [ALICE, BOB, CAROL]  # a super user


def test_the_owners_filter(view):
    assert owners_seen(ask(view, DAVE, owners=[BOB])) == [ALICE, BOB]  # bob owns one, renews the other
    assert owners_seen(ask(view, DAVE, owners=[CAROL, ALICE])) == [ALICE, CAROL]
    assert owners_seen(ask(view, DAVE, owners=[])) == []  # empty: none, null: all
    assert owners_seen(ask(view, ALICE, owners=[BOB], guard=guard_with())) == [ALICE]  # and still only what one may see


@pytest.mark.parametrize("version", [1, 2, 3])
def test_every_field(view, version):
    (token,) = ask(view, ALICE, owners=[ALICE], version=version).tokens
    (record,) = [t for t in view.controller.image.tokens.tokens() if t.owner == ALICE]
    assert (token.principal_type, token.principal_name, token.issue_timestamp, token.expiry_timestamp,
            token.max_timestamp, token.token_id) == ("User", "alice", T0, T0 + 100_000, T0 + 1000_000,
                                                      record.token_id)
    assert token.hmac == token_hmac(SECRET, record.token_id)
    assert [(r.principal_type, r.principal_name) for r in token.renewers] == [("User", "bob")]
    requester = (token.token_requester_principal_type, token.token_requester_principal_name)
    assert requester == (("User", "alice") if version >= 3 else ("", ""))
    encoded = DescribeDelegationTokenResponse(tokens=[token]).encode(version)
    assert DescribeDelegationTokenResponse.decode(encoded, version).tokens == [token]


def test_expired_tokens_stay_until_swept(view):
    image = view.controller.image
    (record,) = [t for t in image.tokens.tokens() if t.owner == BOB]
    from kraft_server.controller.tokens.control import sweep
    from tests.unit.controller.test_controller_tokens import apply
    assert owners_seen(ask(view, BOB, owners=[BOB])) == [ALICE, BOB]  # past its expiry, not yet swept
    apply(image, sweep(image, record.expiration_timestamp + 1))
    assert owners_seen(ask(view, BOB, owners=[BOB])) == []


@pytest.mark.parametrize("listener, principal, extra", [
    ("OPEN", ALICE, {}),  # PLAINTEXT
    ("TLS", "User:ANONYMOUS", {}),  # SSL without a client certificate
    ("CLIENT", ALICE, {"token_authenticated": True}),
])
def test_refused_callers(view, listener, principal, extra):
    answer = ask(view, principal, listener=listener, **extra)
    assert (answer.error_code, answer.tokens) == (E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, [])
    assert ask(view, "User:CN=client", listener="TLS").error_code == 0  # SSL with a certificate


def test_no_secret_key(view):
    view.controller.settings.tokens = TokenSettings()
    answer = ask(view, ALICE)
    assert (answer.error_code, answer.tokens) == (E.DELEGATION_TOKEN_AUTH_DISABLED, [])
    assert ask(view, ALICE, listener="OPEN").error_code == E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED  # checked first


def test_served_on_both_listeners():
    assert listener_apis(True)[41] == listener_apis(False)[41] == (1, 3)
