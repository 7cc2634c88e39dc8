"""A request refused: an error code and its message, as Kafka's ``ApiError`` (the
controller's decisions, and the Raft core's kraft.version updates)."""
from __future__ import annotations


class Refused(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
