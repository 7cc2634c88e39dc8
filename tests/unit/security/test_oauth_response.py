"""The OAUTHBEARER client initial response (RFC 7628), as Kafka's
``OAuthBearerClientInitialResponse`` reads and writes it."""
from __future__ import annotations

import pytest

from kraft_server.security.oauth_response import InitialResponse, OAuthResponseError, parse_initial_response


def test_round_trip_with_authzid_and_extensions():
    message = InitialResponse("a.b-c_d.e~f+g/h=", "alice", {"traceId": "123 x", "logicalCluster": "lc-1"})
    data = message.to_bytes()
    assert data == b"n,a=alice,\x01auth=Bearer a.b-c_d.e~f+g/h=\x01traceId=123 x\x01logicalCluster=lc-1\x01\x01"
    assert parse_initial_response(data) == message


def test_bare_token_and_scheme_case():
    parsed = parse_initial_response(b"n,,\x01auth=bearer abc.def.ghi\x01\x01")
    assert (parsed.token, parsed.authorization_id, parsed.extensions) == ("abc.def.ghi", "", {})


@pytest.mark.parametrize("data, message", [
    (b"y,,\x01auth=Bearer t\x01\x01", "Invalid OAUTHBEARER client first message"),
    (b"n,,\x01auth=Bearer t\x01", "Invalid OAUTHBEARER client first message"),
    (b"n,,\x01x=1\x01\x01", "'auth' not specified"),
    (b"n,,\x01auth=Bearer\x01\x01", "invalid 'auth' format"),
    (b"n,,\x01auth=Bearer a b\x01\x01", "invalid 'auth' format"),
    (b"n,,\x01auth=Basic abc\x01\x01", "Invalid scheme"),
    (b"n,,\x01auth=Bearer t\x01a1=x\x01\x01", "Invalid OAUTHBEARER client first message"),
])
def test_malformed(data, message):
    with pytest.raises(OAuthResponseError, match=message):
        parse_initial_response(data)


def test_extension_names_are_checked_when_writing():
    with pytest.raises(OAuthResponseError, match="Extension name auth is invalid"):
        InitialResponse("t", extensions={"auth": "x"}).to_bytes()
    with pytest.raises(OAuthResponseError, match="Extension name a_b is invalid"):
        InitialResponse("t", extensions={"a_b": "x"}).to_bytes()
