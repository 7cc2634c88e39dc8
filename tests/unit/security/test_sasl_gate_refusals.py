"""What the SASL gate does with a request that is not the next step of the exchange,
as Kafka's ``SaslServerAuthenticator`` does: before the handshake it closes the
connection unanswered (a second ApiVersions too); after SaslHandshake v1 it answers the
request's own error answer, ILLEGAL_SASL_STATE, and then closes."""
from __future__ import annotations

import pytest

from kraft_server.api.registry import listener_apis
from kraft_server.net.pipeline import Pipeline, ProtocolViolation
from kraft_server.net.sasl_gate import SaslGate
from kraft_server.security.sasl_config import ServerSasl
from wire.errors import ERRORS, ErrorCode
from wire.headers import decode_response, encode_request
from wire.messages import (
    ApiVersionsRequest, CreateAclsRequest, DescribeClusterRequest, DescribeQuorumRequest, MetadataRequest,
    ProduceRequest, SaslAuthenticateRequest, SaslHandshakeRequest)
from wire.messages.create_acls_request import AclCreation
from wire.messages.metadata_request import MetadataRequestTopic

ILLEGAL = int(ErrorCode.ILLEGAL_SASL_STATE)


def _pipeline(listener="CLIENT", controller=False):
    pipeline = Pipeline(listener, listener_apis(controller))
    SaslGate(ServerSasl(["PLAIN"], {"alice": "secret"}), "SASL_PLAINTEXT", listener).attach(pipeline)
    return pipeline


def _frames(data: bytes) -> list[bytes]:
    out = []
    while data:
        size = int.from_bytes(data[:4], "big")
        out.append(data[4:4 + size])
        data = data[4 + size:]
    return out


def _after_handshake(pipeline):
    pipeline.receive_data(encode_request(17, 1, 1, SaslHandshakeRequest(mechanism="PLAIN"), "c"))
    assert pipeline.next_call() is None
    [frame] = _frames(pipeline.output())
    assert decode_response(frame, 17, 1)[1].error_code == 0
    assert pipeline.gate.state == "AUTHENTICATE"


def test_a_request_during_authentication_gets_its_own_error_answer_then_the_connection_closes():
    pipeline = _pipeline()
    _after_handshake(pipeline)
    request = MetadataRequest(topics=[MetadataRequestTopic(name="t")])
    # two requests in one read: the second is never looked at
    pipeline.receive_data(encode_request(3, 12, 7, request, "c")
                          + encode_request(36, 2, 8, SaslAuthenticateRequest(auth_bytes=b"\0alice\0secret"), "c"))
    assert pipeline.next_call() is None
    [frame] = _frames(pipeline.output())
    header, answer = decode_response(frame, 3, 12)
    assert header.correlation_id == 7
    # v12 has no top-level ErrorCode (v13+): the error is on each topic asked for
    assert answer.error_code == 0 and [(t.name, t.error_code) for t in answer.topics] == [("t", ILLEGAL)]
    assert pipeline.failed == "Unexpected Kafka request of type METADATA during SASL authentication."
    assert pipeline.principal != "User:alice" and not pipeline.has_backlog
    pipeline.receive_data(encode_request(36, 2, 9, SaslAuthenticateRequest(auth_bytes=b"\0alice\0secret"), "c"))
    with pytest.raises(ProtocolViolation):
        pipeline.next_call()


@pytest.mark.parametrize("api_key, version, request_, text", [
    (55, 2, DescribeQuorumRequest(topics=[]), ERRORS[ILLEGAL].message),  # Errors.message(), Kafka's choice
    (60, 1, DescribeClusterRequest(), "Unexpected Kafka request of type DESCRIBE_CLUSTER during SASL authentication."),
])
def test_the_message_follows_each_requests_getErrorResponse(api_key, version, request_, text):
    pipeline = _pipeline("CONTROLLER", controller=True)
    _after_handshake(pipeline)
    pipeline.receive_data(encode_request(api_key, version, 5, request_, "c"))
    assert pipeline.next_call() is None
    [frame] = _frames(pipeline.output())
    answer = decode_response(frame, api_key, version)[1]
    assert (answer.error_code, answer.error_message) == (ILLEGAL, text)
    assert pipeline.failed


def test_api_versions_during_authentication_is_answered_as_any_other_request():
    pipeline = _pipeline()
    pipeline.receive_data(encode_request(18, 3, 1, ApiVersionsRequest(client_software_name="t",
                                                                       client_software_version="1"), "c"))
    assert pipeline.next_call().api_key == 18  # the one before the handshake: dispatched as usual
    pipeline._calls.clear()
    _after_handshake(pipeline)
    pipeline.receive_data(encode_request(18, 3, 2, ApiVersionsRequest(), "c"))
    assert pipeline.next_call() is None
    [frame] = _frames(pipeline.output())
    answer = decode_response(frame, 18, 3)[1]
    assert answer.error_code == ILLEGAL and answer.api_keys == []
    assert pipeline.failed


def test_a_second_api_versions_before_the_handshake_closes_unanswered():
    pipeline = _pipeline()
    good = ApiVersionsRequest(client_software_name="t", client_software_version="1")
    pipeline.receive_data(encode_request(18, 3, 1, good, "c"))
    assert pipeline.next_call().api_key == 18
    pipeline.receive_data(encode_request(18, 3, 2, good, "c"))
    with pytest.raises(ProtocolViolation, match="Unexpected ApiVersions request received during SASL "
                                                "authentication state HANDSHAKE_REQUEST"):
        pipeline.next_call()


def test_an_api_versions_kafka_answers_with_an_error_does_not_count():
    pipeline = _pipeline()
    pipeline.receive_data(encode_request(18, 3, 1, ApiVersionsRequest(client_software_name="no spaces!"), "c"))
    assert pipeline.next_call().api_key == 18  # INVALID_REQUEST from the handler; still HANDSHAKE_OR_VERSIONS
    assert pipeline.gate.versions_seen is False
    pipeline.receive_data(encode_request(18, 3, 2, ApiVersionsRequest(client_software_name="t",
                                                                       client_software_version="1"), "c"))
    assert pipeline.next_call().api_key == 18
    assert pipeline.gate.versions_seen is True


def test_requests_with_no_answer_close_unanswered():
    acl = AclCreation(resource_type=0, resource_name="t", resource_pattern_type=3, principal="User:a", host="*",
                      operation=3, permission_type=3)  # resource type UNKNOWN: Kafka's parse refuses it
    for api_key, version, request_ in [(0, 9, ProduceRequest(acks=0, timeout_ms=1, topic_data=[])),
                                       (30, 3, CreateAclsRequest(creations=[acl]))]:
        pipeline = _pipeline("CONTROLLER", controller=True)
        _after_handshake(pipeline)
        pipeline.receive_data(encode_request(api_key, version, 3, request_, "c"))
        with pytest.raises(ProtocolViolation, match="during SASL authentication"):
            pipeline.next_call()
        assert pipeline.output() == b""
    pipeline = _pipeline()
    _after_handshake(pipeline)
    pipeline.receive_data(encode_request(3, 12, 3, MetadataRequest(), "c")[:-1] + b"\xff\xff")  # undecodable
    with pytest.raises(ProtocolViolation):
        pipeline.next_call()
    assert pipeline.output() == b""
