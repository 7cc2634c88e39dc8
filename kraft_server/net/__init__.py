"""All socket I/O of the node, on an asyncio (uvloop) event loop. The only package
that imports asyncio or uvloop.

- ``pipeline.py``: one server connection, sans-I/O (frames → requests, responses in
  request order, what closes a connection, flow control).
- ``connection.py``: the asyncio ``Protocol`` adapter around a pipeline.
- ``server.py``: one listener per configured listener.
- ``peers.py``: outbound channels (ApiVersions handshake, version choice, request
  timeout, reconnect backoff).
- ``driver.py``: the Ready loop: steps arrivals into the Raft core, flushes the log
  before anything is sent, sends, advances, sleeps until the next deadline.
"""
