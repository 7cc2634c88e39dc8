"""Errors raised by the codecs.

Decoders raise only ``DecodeError`` whatever the input; encoders raise
``EncodeError`` (or its subclass ``UnsupportedVersionError``) for values the
chosen version cannot carry, mirroring Kafka's UnsupportedVersionException.
"""


class DecodeError(ValueError):
    """The bytes are not a valid encoding (truncated, bad length, bad varint...)."""


class EncodeError(ValueError):
    """The value cannot be encoded (null where not nullable, out of range...)."""


class UnsupportedVersionError(EncodeError):
    """The version is outside the message's range, or cannot carry a set field."""
