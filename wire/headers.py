"""Request and response headers: which header version goes with which API version.

Kafka's rule (``ApiMessageType.requestHeaderVersion``/``responseHeaderVersion``):
a flexible API version uses request header v2 (tagged fields, ClientId still a
legacy nullable string) and response header v1; otherwise v1 and v0 (request
header v0 belonged to ControlledShutdown v0, gone since Kafka 4.0). ApiVersionsResponse always
uses response header v0, so a client that does not yet know the broker's range
can parse it (KIP-511).
"""
from __future__ import annotations

import struct

from .codec_support import encode_parts
from .exceptions import DecodeError
from .messages import REQUESTS, RESPONSES, ApiVersionsRequest, RequestHeader, ResponseHeader

API_VERSIONS_KEY = ApiVersionsRequest.API_KEY
_KEY_VERSION = struct.Struct(">hh")


def request_header_version(api_key: int, api_version: int) -> int:
    cls = REQUESTS.get(api_key)
    return 2 if cls is not None and cls.is_flexible(api_version) else 1


def response_header_version(api_key: int, api_version: int) -> int:
    if api_key == API_VERSIONS_KEY:
        return 0
    cls = RESPONSES.get(api_key)
    return 1 if cls is not None and cls.is_flexible(api_version) else 0


def peek_key_version(frame) -> tuple[int, int]:
    """API key and version: the first four bytes of every request header."""
    if len(frame) < 4:
        raise DecodeError("request shorter than its header")
    return _KEY_VERSION.unpack_from(frame, 0)


def decode_request_header(frame) -> tuple[RequestHeader, int]:
    """Parse the header of a request frame; returns (header, body offset).

    The caller must know the API key (unknown keys have no header rule: Kafka
    closes such connections)."""
    api_key, api_version = peek_key_version(frame)
    return RequestHeader.read(frame, 0, request_header_version(api_key, api_version))


def encode_request(api_key: int, api_version: int, correlation_id: int, body,
                   client_id: str | None = None) -> bytes:
    """A whole request frame (size prefix, header, body)."""
    w = bytearray(4)
    header = RequestHeader(request_api_key=api_key, request_api_version=api_version,
                           correlation_id=correlation_id, client_id=client_id)
    header.write(w, request_header_version(api_key, api_version))
    body.write(w, api_version)
    struct.pack_into(">i", w, 0, len(w) - 4)
    return bytes(w)


def encode_response(api_key: int, api_version: int, correlation_id: int, body) -> bytes:
    """A whole response frame (size prefix, header, body)."""
    w = bytearray(4)
    ResponseHeader(correlation_id=correlation_id).write(
        w, response_header_version(api_key, api_version))
    body.write(w, api_version)
    struct.pack_into(">i", w, 0, len(w) - 4)
    return bytes(w)


def encode_response_parts(api_key: int, api_version: int, correlation_id: int, body) -> list:
    """The same frame as ``encode_response`` as a list of buffers (size prefix first):
    large records fields are referenced, not copied (``codec_support.encode_parts``),
    so a fetch answer goes from the segment's pages to the socket without a copy in
    Python (the transport's ``writelines`` gathers them)."""
    parts = encode_parts(response_header_bytes(api_key, api_version, correlation_id), body, api_version)
    size = sum(len(p) for p in parts)
    return [struct.pack(">i", size), *parts]


def response_header_bytes(api_key: int, api_version: int, correlation_id: int) -> bytes:
    """The response header of a frame (after the size prefix, before the body)."""
    w = bytearray()
    ResponseHeader(correlation_id=correlation_id).write(w, response_header_version(api_key, api_version))
    return bytes(w)


def decode_response(frame, api_key: int, api_version: int):
    """Parse a response frame (without size prefix): returns (header, body)."""
    header, pos = ResponseHeader.read(frame, 0, response_header_version(api_key, api_version))
    body, _ = RESPONSES[api_key].read(frame, pos, api_version)
    return header, body
