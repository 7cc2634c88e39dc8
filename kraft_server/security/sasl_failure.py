"""A failed SASL exchange, with the text Kafka sends back.

Kafka's mechanisms fail in two ways: a ``SaslAuthenticationException``, whose message
goes to the client as is (``exposed``), or a plain ``SaslException``, for which the
client gets only "Authentication failed during authentication due to invalid
credentials with SASL mechanism <name>" (``net/sasl_gate.py``)."""
from __future__ import annotations


class SaslFailure(Exception):
    def __init__(self, message: str, exposed: bool):
        super().__init__(message)
        self.exposed = exposed
