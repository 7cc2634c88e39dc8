"""How Kafka's requests turn ``Errors.forCode(code).exception(message)`` into the
message of an error answer. Three readings occur:

- ``api_message``: ``ApiError.fromThrowable(e).message()``: null for
  UNKNOWN_SERVER_ERROR (never leak a server's internals) and when the exception's
  message is the error's default one; otherwise the message;
- ``default_message``: ``Errors.message()``, the error's default message whatever the
  exception said;
- ``raw_message``: ``e.getMessage()``, the message, or the default one when none was
  given (``Errors.exception(null)`` builds the default exception).
"""
from __future__ import annotations

from wire.errors import ERRORS, ErrorCode

UNKNOWN = int(ErrorCode.UNKNOWN_SERVER_ERROR)


def known_code(code: int) -> int:
    """``Errors.forCode``: a code Kafka does not know is UNKNOWN_SERVER_ERROR."""
    return code if code in ERRORS else UNKNOWN


def default_message(code: int, message: str | None = None) -> str:
    return ERRORS[code].message


def raw_message(code: int, message: str | None) -> str:
    return ERRORS[code].message if message is None else message


def api_message(code: int, message: str | None) -> str | None:
    if code == UNKNOWN or message is None or message == ERRORS[code].message:
        return None
    return message


def no_message(code: int, message: str | None) -> None:
    return None
