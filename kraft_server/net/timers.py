"""A timer on the running event loop, for rooms that must not import asyncio (the
console's update ticks and request timeouts)."""
from __future__ import annotations

import asyncio


def call_later(delay_s: float, callback):
    """``callback()`` after ``delay_s`` seconds; the handle has ``cancel()``. Raises
    RuntimeError when no event loop runs (code driven by hand, e.g. in tests)."""
    return asyncio.get_running_loop().call_later(delay_s, callback)
