"""One request to one node's controller listener with our codecs, a fresh connection
each time (cheap on loopback; nothing is left half-read after a timeout)."""
from __future__ import annotations

import socket

from wire.framing import FrameReader
from wire.headers import decode_response, encode_request

CLIENT_ID = "chaos-harness"


def call(port: int, body, version: int, timeout: float):
    """The decoded response body; OSError (timeouts included) when none came."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.settimeout(timeout)
        s.sendall(encode_request(body.API_KEY, version, 1, body, CLIENT_ID))
        reader, frames = FrameReader(), []
        while not frames:
            data = s.recv(65536)
            if not data:
                raise ConnectionResetError("closed before an answer")
            frames = reader.feed(data)
    return decode_response(frames[0], body.API_KEY, version)[1]
