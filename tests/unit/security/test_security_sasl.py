"""SASL without sockets: SCRAM-SHA-256 against RFC 7677's example exchange (server
and client side), PLAIN's checks, and the SASL gate in a pipeline: KIP-152 framing
(SaslHandshake v1 then SaslAuthenticate), v0 bare tokens, and what closes the
connection before authentication (Kafka's SaslServerAuthenticator)."""
from __future__ import annotations

import base64
import struct

import pytest

from kraft_server.api.registry import listener_apis
from kraft_server.net.pipeline import Pipeline, ProtocolViolation
from kraft_server.net.sasl_gate import SaslGate
from kraft_server.security.plain import PlainError, PlainServer
from kraft_server.security.principal import ANONYMOUS
from kraft_server.security.sasl_config import ServerSasl
from kraft_server.security.scram import ScramClient, ScramError, ScramServer, make_credential
from wire.headers import decode_response, encode_request
from wire.messages import (
    ApiVersionsRequest, DescribeQuorumRequest, SaslAuthenticateRequest, SaslHandshakeRequest)

# RFC 7677 section 3.
NONCE = "rOprNGfwEbeRWgbNEkqO"
SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
CLIENT_FINAL = b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
CREDENTIAL = make_credential("SCRAM-SHA-256", "pencil", base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096)


def test_rfc7677_client_side():
    client = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce=NONCE)
    assert client.first() == b"n,,n=user,r=" + NONCE.encode()
    assert client.final(SERVER_FIRST) == CLIENT_FINAL
    client.verify(SERVER_FINAL)
    with pytest.raises(ScramError, match="verification failed"):
        client.verify(b"v=" + base64.b64encode(b"x" * 32))


def test_rfc7677_server_side(monkeypatch):
    server = ScramServer("SCRAM-SHA-256", lambda m, u: CREDENTIAL if u == "user" else None)
    monkeypatch.setattr("secrets.token_urlsafe", lambda n: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")
    assert server.evaluate(b"n,,n=user,r=" + NONCE.encode()) == SERVER_FIRST
    assert server.evaluate(CLIENT_FINAL) == SERVER_FINAL
    assert server.complete and server.authorization_id == "user"


def test_scram_failures():
    server = ScramServer("SCRAM-SHA-256", lambda m, u: CREDENTIAL)
    first = server.evaluate(b"n,,n=user,r=abc")
    nonce = first.split(b",")[0][2:].decode()
    with pytest.raises(ScramError, match="^Invalid client credentials$"):
        server.evaluate(f"c=biws,r={nonce},p={base64.b64encode(b'0' * 32).decode()}".encode())
    with pytest.raises(ScramError, match="Invalid user credentials"):
        ScramServer("SCRAM-SHA-256", lambda m, u: None).evaluate(b"n,,n=ghost,r=abc")
    with pytest.raises(ScramError) as err:
        ScramServer("SCRAM-SHA-256", lambda m, u: CREDENTIAL).evaluate(b"n,a=admin,n=user,r=abc")
    assert err.value.exposed and "authorization id that is different" in str(err.value)


def test_plain_checks():
    server = PlainServer({"alice": "secret"})
    with pytest.raises(PlainError, match="^Authentication failed: Invalid username or password$"):
        server.evaluate(b"\0alice\0wrong")
    with pytest.raises(PlainError, match="username not specified"):
        server.evaluate(b"\0\0x")
    assert server.evaluate(b"alice\0alice\0secret") == b"" and server.authorization_id == "alice"


def _pipeline():
    pipeline = Pipeline("CLIENT", listener_apis(False))
    SaslGate(ServerSasl(["PLAIN"], {"alice": "secret"}), "SASL_PLAINTEXT", "CLIENT").attach(pipeline)
    return pipeline


def _answer(pipeline, api_key, version):
    data = pipeline.output()
    return decode_response(data[4:], api_key, version)[1]


def test_gate_kip152_framing_then_requests_flow():
    pipeline = _pipeline()
    pipeline.receive_data(encode_request(18, 3, 1, ApiVersionsRequest(client_software_name="t",
                                                                       client_software_version="1"), "c"))
    assert pipeline.next_call().api_key == 18  # ApiVersions goes to the dispatcher as usual
    pipeline.receive_data(encode_request(17, 1, 2, SaslHandshakeRequest(mechanism="PLAIN"), "c"))
    assert pipeline.next_call() is None  # answered by the gate, in order after ApiVersions
    pipeline.receive_data(encode_request(36, 2, 3, SaslAuthenticateRequest(auth_bytes=b"\0alice\0secret"), "c"))
    assert pipeline.next_call() is None
    assert pipeline.principal == "User:alice" and pipeline.gate is None
    pipeline.receive_data(encode_request(55, 2, 4, DescribeQuorumRequest(topics=[]), "c"))
    assert pipeline.next_call().principal == "User:alice"


def test_gate_v0_bare_tokens():
    pipeline = _pipeline()
    pipeline.receive_data(encode_request(17, 0, 1, SaslHandshakeRequest(mechanism="PLAIN"), "c"))
    assert pipeline.next_call() is None
    assert _answer(pipeline, 17, 0).error_code == 0
    token = b"\0alice\0secret"
    pipeline.receive_data(struct.pack(">i", len(token)) + token)
    assert pipeline.next_call() is None
    assert pipeline.output() == struct.pack(">i", 0) and pipeline.principal == "User:alice"


def test_gate_refuses_a_large_frame_by_its_size_before_buffering_it():
    pipeline = _pipeline()
    with pytest.raises(ProtocolViolation):
        pipeline.receive_data(struct.pack(">i", 524289))
    pipeline = _pipeline()
    _authenticate(pipeline, 1, b"\0alice\0secret")
    pipeline.receive_data(struct.pack(">i", 524289))  # authenticated: socket.request.max.bytes again


def test_gate_closes_on_other_requests_and_failures():
    pipeline = _pipeline()
    assert pipeline.principal == ANONYMOUS
    pipeline.receive_data(encode_request(55, 2, 1, DescribeQuorumRequest(topics=[]), "c"))
    with pytest.raises(ProtocolViolation, match="Unexpected Kafka request of type DESCRIBE_QUORUM during SASL handshake"):
        pipeline.next_call()
    pipeline = _pipeline()
    pipeline.receive_data(encode_request(17, 1, 1, SaslHandshakeRequest(mechanism="PLAIN"), "c"))
    pipeline.next_call()
    pipeline.output()
    pipeline.receive_data(encode_request(36, 2, 2, SaslAuthenticateRequest(auth_bytes=b"\0alice\0bad"), "c"))
    pipeline.next_call()
    answer = _answer(pipeline, 36, 2)
    assert answer.error_code == 58 and pipeline.failed  # answered, then closed


def _authenticate(pipeline, corr, token, handshake_version=1):
    pipeline.receive_data(encode_request(17, handshake_version, corr, SaslHandshakeRequest(mechanism="PLAIN"), "c"))
    assert pipeline.next_call() is None
    assert _answer(pipeline, 17, handshake_version).error_code == 0
    pipeline.receive_data(encode_request(36, 1, corr + 1, SaslAuthenticateRequest(auth_bytes=token), "c"))
    assert pipeline.next_call() is None
    return _answer(pipeline, 36, 1)


def test_kip368_session_lifetime_reauthentication_and_expiry(monkeypatch):
    now = [100.0]
    monkeypatch.setattr("kraft_server.net.sasl_gate.time.monotonic", lambda: now[0])
    pipeline = Pipeline("CLIENT", listener_apis(False))
    SaslGate(ServerSasl(["PLAIN"], {"alice": "secret", "bob": "b"}, reauth_ms={"PLAIN": 1000}),
             "SASL_PLAINTEXT", "CLIENT").attach(pipeline)
    assert _authenticate(pipeline, 1, b"\0alice\0secret").session_lifetime_ms == 1000
    now[0] += 0.9  # before expiry: requests flow, and a SaslHandshake re-authenticates in band
    pipeline.receive_data(encode_request(55, 2, 3, DescribeQuorumRequest(topics=[]), "c"))
    assert pipeline.next_call().principal == "User:alice"
    pipeline._calls.clear()
    assert _authenticate(pipeline, 4, b"\0alice\0secret").error_code == 0
    now[0] += 0.6  # past the first session, inside the renewed one
    pipeline.receive_data(encode_request(55, 2, 6, DescribeQuorumRequest(topics=[]), "c"))
    assert pipeline.next_call() is not None
    pipeline._calls.clear()
    # Another principal on re-authentication: Kafka's message, then closed.
    answer = _authenticate(pipeline, 7, b"\0bob\0b")
    assert (answer.error_code, answer.error_message) == (
        58, "Cannot change principals during re-authentication from User.alice: User.bob")
    assert pipeline.failed
    # Past the lifetime without re-authenticating: the next request closes the connection.
    pipeline = Pipeline("CLIENT", listener_apis(False))
    SaslGate(ServerSasl(["PLAIN"], {"alice": "secret"}, reauth_ms={"PLAIN": 1000}),
             "SASL_PLAINTEXT", "CLIENT").attach(pipeline)
    _authenticate(pipeline, 1, b"\0alice\0secret")
    now[0] += 1.0
    pipeline.receive_data(encode_request(55, 2, 3, DescribeQuorumRequest(topics=[]), "c"))
    with pytest.raises(ProtocolViolation, match="expired session"):
        pipeline.next_call()


def test_api_versions_before_sasl_completes_is_not_target_checked():
    """KIP-1242 on a SASL client listener: the ApiVersions before authentication is
    answered as Kafka's SaslServerAuthenticator answers it (no ClusterId/NodeId check);
    once authenticated, one naming another cluster gets REBOOTSTRAP_REQUIRED, as from
    Kafka's KafkaApis."""
    from kraft_server.api.dispatch import Dispatcher
    from kraft_server.api.views import Features

    class View:
        cluster_id, node_id = "c1", 3

        def features(self):
            return Features()

    pipeline = _pipeline()
    dispatcher = Dispatcher(View(), None, tables={"CLIENT": listener_apis(False)},
                            controller_listeners={"CONTROLLER"}, advertised={})
    elsewhere = ApiVersionsRequest(client_software_name="t", client_software_version="1",
                                   cluster_id="another", node_id=3)
    pipeline.receive_data(encode_request(18, 5, 1, elsewhere, "c"))
    dispatcher(pipeline.next_call())
    first = _answer(pipeline, 18, 5)
    assert first.error_code == 0 and first.api_keys
    pipeline.receive_data(encode_request(17, 1, 2, SaslHandshakeRequest(mechanism="PLAIN"), "c"))
    assert pipeline.next_call() is None
    pipeline.output()
    pipeline.receive_data(encode_request(36, 2, 3, SaslAuthenticateRequest(auth_bytes=b"\0alice\0secret"), "c"))
    assert pipeline.next_call() is None and pipeline.principal == "User:alice"
    pipeline.output()
    pipeline.receive_data(encode_request(18, 5, 4, elsewhere, "c"))
    dispatcher(pipeline.next_call())
    second = _answer(pipeline, 18, 5)
    assert second.error_code == 129 and second.api_keys == []
