"""All socket I/O of the node, on an asyncio (uvloop) event loop. Besides this package,
only the shell (``shell/driver.py``, the loop) and the consumer's long poll
(``api/topic/long_poll.py``, its timers) touch asyncio.

- ``pipeline.py``: one server connection, sans-I/O (frames → requests, responses in
  request order, what closes a connection, flow control).
- ``connection.py``: the asyncio ``Protocol`` adapter around a pipeline.
- ``server.py``: one listener per configured listener.
- ``peers.py``: outbound channels (ApiVersions handshake, version choice, request
  timeout, reconnect backoff).
- ``listener_probe.py``: whether a broker's listener still accepts (fast fencing).
- ``limits.py``, ``request_queue.py``: Kafka's connection limits and queued requests.
- ``secure.py``, ``sasl_gate.py``, ``sasl_client.py``: TLS and SASL, served and sent.
- ``fetch_template.py``, ``http_reply.py``, ``timers.py``: the Fetch answer's fast path,
  one HTTP answer per connection (metrics, console), loop timers for rooms without asyncio.
The Ready loop that drives the core is ``shell/driver.py``.
"""
