"""Kafka's generic error answer to any request: what ``<X>Request.getErrorResponse(0,
Errors.forCode(code).exception(message))`` builds, for every request type our codecs
know (``wire.messages.REQUESTS``) at every version.

    error_answer(api_key, version, body, code, message=None) -> response body, or None

None only where Kafka answers nothing: a Produce with acks 0, or one with null records
(Kafka's ``getErrorResponse`` throws sizing them, and the connection closes). ``message`` None is the
error's default exception, as ``Errors.exception(null)`` gives.

Three kinds of answers, one file each:

- ``messages.py``: the three ways Kafka's requests turn the exception into an error
  message (``ApiError.fromThrowable``, ``Errors.message()``, ``getMessage()``);
- ``top_level.py``: answers that carry only a top-level error code (and maybe a
  message), written as a table;
- ``refused.py``: the requests Kafka's parsing refuses (nothing can be answered);
- ``mirrored.py``: answers that mirror the request's topics, partitions, groups or
  resources, one small function each (``java_order.py``: Produce's answer follows a
  Java ``HashMap``'s iteration order).

``tests/interop/test_error_answer_vs_kafka.py`` compares every (API, version) byte for
byte with Kafka's own ``getErrorResponse``.
"""
from __future__ import annotations

from wire.messages import REQUESTS

from .messages import known_code
from .mirrored import MIRRORED
from .top_level import top_level_answer, TOP_LEVEL


def error_answer(api_key: int, version: int, body, code: int, message: str | None = None):
    """Kafka's ``getErrorResponse`` for request ``body`` (``api_key`` at ``version``)."""
    code = known_code(code)
    build = MIRRORED.get(api_key)
    if build is not None:
        return build(version, body, code, message)
    if api_key in TOP_LEVEL:
        return top_level_answer(api_key, version, code, message)
    if api_key in REQUESTS:
        raise LookupError(f"no error answer for API key {api_key}")  # a request added without one
    raise KeyError(f"unknown API key {api_key}")


def covered() -> frozenset[int]:
    """The API keys ``error_answer`` answers."""
    return frozenset(MIRRORED) | frozenset(TOP_LEVEL)


__all__ = ["covered", "error_answer"]
