"""Requests that write metadata, run one at a time on the active controller and
answered only after their records commit (Kafka's ``ControllerWriteEvent``).

An operation sees the committed image: it runs only when none of our earlier writes
is still uncommitted, so every decision is made on the state the previous one left.
It returns a ``Write``: records (one atomic batch, proposed and drained at once) and
``reply()`` building the answer once the batch is replayed; with no records it is
answered at once. A node that is not the Raft leader, or a leader that loses its
epoch before the commit, answers with ``fail(NOT_CONTROLLER)``. When the Raft core
refuses a proposal for backpressure the operation waits at the head of the queue.

An operation may carry a deadline (Kafka's ``appendWithDeadline``): one that has not
started by then is answered with ``fail(REQUEST_TIMED_OUT)`` and its ``expired()``
hook runs; once started it waits for its commit however long that takes, as Kafka's
deferred write events do.
"""
from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass
from enum import Enum
from typing import Callable

from kraft_server.raft import Backpressure, NotLeader, Role
from wire.errors import ErrorCode
from wire.records import encode_metadata_record

log = logging.getLogger(__name__)


@dataclass
class Write:
    records: list  # (record, version) pairs
    reply: Callable[[], object]
    written: Callable[[int, int], None] | None = None  # (first, last) offsets, once proposed


@dataclass
class _Op:
    name: str
    run: Callable  # (image, next_offset, now_ms) -> Write
    fail: Callable[[int], object]
    respond: Callable[[object], None]
    timeout_ms: int | None = None  # from the first poll after it arrived
    expired: Callable[[], None] | None = None
    deadline_ms: int | None = None


@dataclass
class _Inflight:
    op: _Op
    write: Write
    last: int
    epoch: int


class NotProposed(Enum):
    NOT_LEADER = "not the leader"  # answer NOT_CONTROLLER
    BACKLOG_FULL = "backlog full"  # the core's backpressure: try again next poll


def propose(core, values: list[bytes], now_ms: int, own_batch: bool = True) -> tuple[int, int] | NotProposed:
    """Hand framed records to the Raft core: their (first, last) offsets, or why it would
    not take them. ``own_batch``: drained into a batch of their own at once (Kafka's
    atomic append); else they may share one with what follows."""
    try:
        offsets = core.propose(values, now_ms)
    except NotLeader:
        return NotProposed.NOT_LEADER
    except Backpressure:
        return NotProposed.BACKLOG_FULL
    if own_batch:
        core.drain_proposals()
    return offsets


def next_write_offset(core) -> int:
    """The offset the next proposed record gets (Kafka's ``nextWriteOffset``)."""
    return core.next_write_offset()


class WriteQueue:
    def __init__(self) -> None:
        self.queue: deque[_Op] = deque()
        self.inflight: _Inflight | None = None
        self.stats = {"written": 0, "answered": 0, "rejected": 0, "timed_out": 0}

    def submit(self, name: str, run, fail, respond, timeout_ms: int | None = None, expired=None) -> None:
        self.queue.append(_Op(name, run, fail, respond, timeout_ms, expired))

    def next_deadline(self) -> int | None:
        deadlines = [op.deadline_ms for op in self.queue if op.deadline_ms is not None]
        return min(deadlines) if deadlines else None

    def _time_out(self, now_ms: int) -> None:
        """Answer every queued operation whose deadline passed before it started (the
        deadline counts from the first poll that saw it: the shell polls on arrival)."""
        for op in self.queue:
            if op.timeout_ms is not None and op.deadline_ms is None:
                op.deadline_ms = now_ms + op.timeout_ms
        if not any(op.deadline_ms is not None and op.deadline_ms <= now_ms for op in self.queue):
            return
        keep = deque()
        for op in self.queue:
            if op.deadline_ms is not None and op.deadline_ms <= now_ms:
                self.stats["timed_out"] += 1
                log.warning("controller operation %s timed out in the queue", op.name)
                if op.expired is not None:
                    op.expired()
                self._answer(op, op.fail(ErrorCode.REQUEST_TIMED_OUT))
            else:
                keep.append(op)
        self.queue = keep

    def poll(self, core, image, active: bool, now_ms: int) -> bool:
        proposed = False
        self._time_out(now_ms)
        if self.inflight is not None and not self._complete(core, image):
            return False
        while self.queue and self.inflight is None:
            if core.role is not Role.LEADER:
                self._reject(self.queue.popleft())
                continue
            if not active or not image.has_metadata:
                break  # becoming active: answer once caught up
            op = self.queue.popleft()
            try:
                write = op.run(image, next_write_offset(core), now_ms)
            except Exception:  # our bug: answer the request, keep the node up
                log.exception("controller operation %s failed", op.name)
                self._answer(op, op.fail(ErrorCode.UNKNOWN_SERVER_ERROR))
                continue
            if not write.records:
                self._answer(op, self._reply(op, write))
                continue
            proposal = propose(core, [encode_metadata_record(r, v) for r, v in write.records], now_ms)
            if proposal is NotProposed.NOT_LEADER:
                self._reject(op)
                continue
            if proposal is NotProposed.BACKLOG_FULL:
                self.queue.appendleft(op)  # run it again next poll
                break
            first, last = proposal
            if write.written is not None:
                write.written(first, last)
            self.stats["written"] += 1
            self.inflight = _Inflight(op, write, last, core.epoch)
            proposed = True
        return proposed

    def _complete(self, core, image) -> bool:
        f = self.inflight
        if core.role is not Role.LEADER or core.epoch != f.epoch:
            self.inflight = None
            self._reject(f.op)
            return True
        if image.offset >= f.last:
            self.inflight = None
            self._answer(f.op, self._reply(f.op, f.write))
            return True
        return False

    @staticmethod
    def _reply(op: _Op, write: Write):
        """The answer; a bug building it is UNKNOWN_SERVER_ERROR, never a dead node."""
        try:
            return write.reply()
        except Exception:
            log.exception("controller operation %s failed to answer", op.name)
            return op.fail(ErrorCode.UNKNOWN_SERVER_ERROR)

    def _answer(self, op: _Op, body) -> None:
        self.stats["answered"] += 1
        if body is not None:
            op.respond(body)

    def _reject(self, op: _Op) -> None:
        self.stats["rejected"] += 1
        body = op.fail(ErrorCode.NOT_CONTROLLER)
        if body is not None:
            op.respond(body)
