"""The two kinds of failure the tool reports, as Kafka's tool reports them.

``kafka-metadata-quorum`` (``MetadataQuorumCommand.mainNoExit``) exits 1 in both
cases. A ``TerseException`` (bad flags, a bad controller config file) prints only
its message. Anything else, in practice the ``ExecutionException`` of an admin
future, prints ``e.getMessage()`` (which for an ``ExecutionException`` is the
cause's ``toString()``: ``org.apache.kafka.common.errors.<Class>: <message>``)
followed by a Java stack trace. We print the same first line and no stack.
"""
from __future__ import annotations

from wire.errors import error_info

KAFKA_ERRORS_PACKAGE = "org.apache.kafka.common.errors"


class TerseError(Exception):
    """A usage or configuration problem: printed as it is, exit code 1."""


class KafkaApiError(Exception):
    """An error a server answered with (or the client's own timeout), printed the
    way a Java ``ApiException`` renders: ``<package>.<Class>: <message>``."""

    def __init__(self, code: int, message: str | None = None):
        info = error_info(code)
        self.code = info.code
        self.name = info.name
        self.retriable = info.retriable
        # Errors.exception(message): a null message means the default one.
        self.message = info.message if message is None else message
        self.exception_class = info.exception or "UnknownServerException"
        super().__init__(self.java_text())

    def java_text(self) -> str:
        return f"{KAFKA_ERRORS_PACKAGE}.{self.exception_class}: {self.message}"


class ClientTimeout(KafkaApiError):
    """The admin call ran out of time (Java's ``TimeoutException``)."""

    def __init__(self, message: str):
        super().__init__(7, message)  # REQUEST_TIMED_OUT maps to TimeoutException
