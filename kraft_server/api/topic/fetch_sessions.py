"""Incremental fetch sessions (KIP-227) for consumer fetches, Kafka's ``FetchManager``
rules:

- ``SessionId`` 0, ``SessionEpoch`` -1: sessionless; a full answer, session id 0.
- ``SessionId`` 0, epoch 0: a full fetch that opens a session; the answer carries
  its new id. The next request sends that id with epoch 1, then 2, ...
- ``SessionId`` s, epoch -1: closes session s; sessionless full fetch.
- ``SessionId`` s, epoch 0: closes s and opens a new session (a full fetch).
- ``SessionId`` s, epoch n > 0: incremental. An unknown s is
  FETCH_SESSION_ID_NOT_FOUND, a wrong n INVALID_FETCH_SESSION_EPOCH (both
  top-level, no partitions). Listed partitions are added or updated, forgotten
  ones dropped; the answer lists only the session's partitions that changed (new
  records, or a new high watermark, log start offset or error).

The cache is bounded (``max.incremental.fetch.session.cache.slots``, Kafka's
property, default 1000 sessions): opening a session in a full cache evicts the
least recently used one, whose client then gets FETCH_SESSION_ID_NOT_FOUND and
starts over with a full fetch. A session holds at most ``MAX_SESSION_PARTITIONS``
partitions (there is one real partition; the rest would be unknown ones): a full
fetch listing more opens no session (answered sessionless, which KIP-227 allows),
an incremental one that would grow past it closes the session
(FETCH_SESSION_ID_NOT_FOUND). Versions below 7 have no session fields.
"""
from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import dataclass, field

from wire.errors import ErrorCode

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
DEFAULT_SLOTS = 1000
MAX_SESSION_PARTITIONS = 1000


@dataclass
class SessionPartition:
    """What the client asked for (updated by each request) and what it was last told."""

    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    sent: tuple | None = None  # (high watermark, log start, error) last answered

    def changed(self, answer: tuple) -> bool:
        return self.sent != answer


@dataclass
class FetchSession:
    session_id: int
    epoch: int  # the epoch the next incremental request must carry
    partitions: "OrderedDict[tuple, SessionPartition]" = field(default_factory=OrderedDict)


@dataclass
class FetchContext:
    """How to answer one fetch: the partitions to look at, and whether the answer is
    incremental (only changed partitions) or full (every listed one)."""

    session_id: int  # the answer's SessionId (0: none)
    partitions: list  # [(key, SessionPartition)]; key = (topic name or id, partition)
    incremental: bool
    error: int = ErrorCode.NONE


def _key(version: int, topic, partition: int) -> tuple:
    return (topic.topic_id if version >= 13 else topic.topic, partition)


def requested(version: int, body) -> list:
    """[(key, SessionPartition)] of the request's partitions, in request order."""
    out = []
    for t in body.topics:
        for p in t.partitions:
            out.append((_key(version, t, p.partition),
                        SessionPartition(p.fetch_offset, p.partition_max_bytes,
                                         p.current_leader_epoch if version >= 9 else -1)))
    return out


class FetchSessionCache:
    def __init__(self, slots: int = DEFAULT_SLOTS, rng: random.Random | None = None):
        self.slots = max(0, slots)
        self.sessions: "OrderedDict[int, FetchSession]" = OrderedDict()  # LRU first
        self._rng = rng or random.Random()

    def _new_id(self) -> int:
        while True:
            session_id = self._rng.randint(1, 2**31 - 1)
            if session_id not in self.sessions:
                return session_id

    def _open(self, parts: list) -> int:
        if self.slots == 0 or len(parts) > MAX_SESSION_PARTITIONS:
            return 0
        while len(self.sessions) >= self.slots:
            self.sessions.popitem(last=False)
        session = FetchSession(self._new_id(), 1, OrderedDict(parts))
        self.sessions[session.session_id] = session
        return session.session_id

    def context(self, version: int, body) -> FetchContext:
        parts = requested(version, body)
        if version < 7:
            return FetchContext(0, parts, False)
        session_id, epoch = body.session_id, body.session_epoch
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id:
                self.sessions.pop(session_id, None)
            if epoch == FINAL_EPOCH:
                return FetchContext(0, parts, False)
            new_id = self._open(parts)
            session = self.sessions.get(new_id)
            return FetchContext(new_id, list(session.partitions.items()) if session else parts, False)
        session = self.sessions.get(session_id)
        if session is None:
            return FetchContext(0, [], False, ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if epoch != session.epoch:
            return FetchContext(0, [], False, ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        session.epoch = epoch + 1 if epoch < 2**31 - 1 else 1
        self.sessions.move_to_end(session_id)
        for forgotten in body.forgotten_topics_data:
            for index in forgotten.partitions:
                session.partitions.pop(_key(version, forgotten, index), None)
        for key, wanted in parts:
            known = session.partitions.get(key)
            if known is None:
                session.partitions[key] = wanted
            else:
                known.fetch_offset = wanted.fetch_offset
                known.max_bytes = wanted.max_bytes
                known.current_leader_epoch = wanted.current_leader_epoch
        if len(session.partitions) > MAX_SESSION_PARTITIONS:
            del self.sessions[session_id]
            return FetchContext(0, [], False, ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        return FetchContext(session_id, list(session.partitions.items()), True)
