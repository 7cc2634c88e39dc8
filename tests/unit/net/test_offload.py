"""``net/offload.py``: work run off the loop answers on the loop, an error as a value."""
from __future__ import annotations

import asyncio
import threading

from kraft_server.net.offload import offload


def test_offload_answers_on_the_loop():
    async def main():
        loop_thread, out = threading.get_ident(), []
        offload(lambda: threading.get_ident(), lambda r: out.append((r, threading.get_ident())))
        offload(lambda: 1 / 0, lambda r: out.append((type(r).__name__, threading.get_ident())))
        for _ in range(100):
            if len(out) == 2:
                break
            await asyncio.sleep(0.01)
        return loop_thread, out
    loop_thread, out = asyncio.run(main())
    worker, where = out[0] if isinstance(out[0][0], int) else out[1]
    assert worker != loop_thread and where == loop_thread
    assert ("ZeroDivisionError", loop_thread) in out
