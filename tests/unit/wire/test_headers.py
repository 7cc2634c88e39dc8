"""Request/response headers: versions per API version, and frames equal to a real client's."""
import struct

import pytest

from wire.headers import (decode_request_header, decode_response, encode_request,
                          encode_response, request_header_version, response_header_version)
from wire.messages import (ApiVersionsRequest, ApiVersionsResponse, DescribeQuorumRequest,
                           MetadataRequest, RequestHeader, VoteResponse)


def test_header_versions_follow_flexible_versions():
    assert request_header_version(18, 2) == 1 and request_header_version(18, 3) == 2
    assert request_header_version(3, 8) == 1 and request_header_version(3, 9) == 2
    assert request_header_version(52, 0) == 2  # Vote is flexible from v0
    assert response_header_version(3, 9) == 1 and response_header_version(3, 8) == 0


def test_api_versions_response_header_is_always_v0():
    assert response_header_version(18, 4) == 0
    frame = encode_response(18, 4, 7, ApiVersionsResponse(error_code=35))
    # size, correlation id, then the body straight away: no tagged-field byte
    assert frame[4:8] == struct.pack(">i", 7)
    header, body = decode_response(frame[4:], 18, 4)
    assert header.correlation_id == 7 and body.error_code == 35


def test_request_header_v2_keeps_client_id_as_legacy_string():
    frame = encode_request(55, 2, 99, DescribeQuorumRequest(), client_id="adminclient-1")
    payload = frame[4:]
    assert struct.unpack_from(">i", frame)[0] == len(payload)
    # key, version, correlation id, int16-length client id, then the empty tag section
    assert payload[:8] == struct.pack(">hhi", 55, 2, 99)
    assert payload[8:10] == struct.pack(">h", len("adminclient-1"))
    assert payload[10:23] == b"adminclient-1" and payload[23] == 0
    header, pos = decode_request_header(payload)
    assert (header.request_api_key, header.client_id, pos) == (55, "adminclient-1", 24)
    assert DescribeQuorumRequest.read(payload, pos, 2)[0] == DescribeQuorumRequest()


def test_null_client_id_and_v1_header():
    payload = encode_request(3, 8, 1, MetadataRequest(topics=None), client_id=None)[4:]
    header, pos = decode_request_header(payload)
    assert header.client_id is None and payload[8:10] == b"\xff\xff" and pos == 10


def test_response_header_v1_has_tag_section():
    frame = encode_response(52, 2, 5, VoteResponse())
    assert frame[4:9] == struct.pack(">i", 5) + b"\x00"


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_frames_equal_kafka_python_client(version):
    """kafka-python 3.x builds the same ApiVersions request frame as we do."""
    kp = pytest.importorskip("kafka.protocol.metadata")
    req = kp.ApiVersionsRequest(client_software_name="kraft-test", client_software_version="1.0",
                                version=version) if version >= 3 else kp.ApiVersionsRequest(version=version)
    req.with_header(correlation_id=11, client_id="kp")  # sets the header in place
    theirs = req.encode(framed=True, header=True)
    ours = encode_request(18, version, 11, ApiVersionsRequest(
        client_software_name="kraft-test" if version >= 3 else "",
        client_software_version="1.0" if version >= 3 else ""), client_id="kp")
    assert ours == theirs
    header, pos = decode_request_header(ours[4:])
    assert header == RequestHeader(request_api_key=18, request_api_version=version,
                                   correlation_id=11, client_id="kp")
