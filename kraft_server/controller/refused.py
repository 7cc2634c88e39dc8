"""A request the controller refuses: an error code and its message, as Kafka's ``ApiError``."""
from __future__ import annotations


class Refused(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
