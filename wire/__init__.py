"""Kafka's wire format: primitives, framing, generated messages, record batches."""
from . import native  # noqa: F401  (chooses compiled or pure codecs before any is imported)
