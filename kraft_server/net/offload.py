"""Work that would hold the event loop (a password derivation) run on the loop's
default thread pool, its result handed back on the loop. For rooms that must not
import asyncio (the console's login)."""
from __future__ import annotations

import asyncio
import logging

log = logging.getLogger(__name__)


def offload(fn, done) -> None:
    """``fn()`` off the loop, then ``done(result)`` on it (``done(exception)`` if it raised)."""
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(None, fn)

    def finished(f) -> None:
        if f.cancelled():  # the loop is closing: nobody waits for the answer
            return
        exc = f.exception()
        if exc is not None:
            log.warning("offloaded work failed: %s", type(exc).__name__)
        done(exc if exc is not None else f.result())
    future.add_done_callback(finished)
