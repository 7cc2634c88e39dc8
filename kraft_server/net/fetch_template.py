"""A replica's next Fetch read from its last one, without decoding it again.

A replica (voter, observer) sends the same Fetch over and over: from one request
to the next only the correlation id and the partition's CurrentLeaderEpoch,
FetchOffset and LastFetchedEpoch change (16 fixed-width bytes, side by side since
v12). ``FetchTemplate`` keeps the last Fetch decoded on one connection. A frame of
the same length, equal to it outside those bytes, decodes to the same objects with
those four values changed: they are set in place, which costs a tenth of a decode.

Objects are reused only when nothing else holds them (their reference counts say
so: the previous request was answered and dropped); a request still parked or
queued keeps its own, and the frame is decoded in full. Any frame that does not
match is decoded in full too and becomes the template.
"""
from __future__ import annotations

import struct
from sys import getrefcount

FETCH = 1
_FIELDS = struct.Struct(">iqi")  # CurrentLeaderEpoch, FetchOffset, LastFetchedEpoch
_CORRELATION = struct.Struct(">i")


def _alone() -> int:
    """getrefcount's answer for an object held only by one slot, read through a local
    name, as ``read`` reads them (3 on CPython 3.11: the slot, the local, the argument);
    measured, not assumed, so another interpreter's counting cannot make a shared object
    look alone."""
    class Holder:
        __slots__ = ("value",)

    holder = Holder()
    holder.value = object()
    value = holder.value
    return getrefcount(value)


_ALONE = _alone()


class FetchTemplate:
    __slots__ = ("frame", "at", "header", "body", "hits")

    def __init__(self):
        self.frame = None  # bytes of the last Fetch decoded in full
        self.at = -1  # where its 16 variable bytes start
        self.header = None
        self.body = None
        self.hits = 0  # frames read from the template (tests, profiling)

    def learn(self, frame, header, body, body_pos: int, api_version: int) -> None:
        """Remember a Fetch just decoded in full (one topic, one partition, v12+)."""
        self.frame = None
        if api_version < 12 or len(body.topics) != 1 or len(body.topics[0].partitions) != 1:
            return
        part = body.topics[0].partitions[0]
        frame = bytes(frame)
        pattern = _FIELDS.pack(part.current_leader_epoch, part.fetch_offset, part.last_fetched_epoch)
        at = frame.find(pattern, body_pos)
        if at < 0 or frame.find(pattern, at + 1) >= 0:
            return  # not found once: its place in the frame is not certain
        self.frame, self.at, self.header, self.body = frame, at, header, body

    def read(self, frame):
        """(header, body) of ``frame`` if it is the template's Fetch with new values
        whose objects nobody else holds, else None."""
        old = self.frame
        if old is None or len(frame) != len(old):
            return None
        at = self.at
        if frame[:4] != old[:4] or frame[8:at] != old[8:at] or frame[at + 16:] != old[at + 16:]:
            return None
        header, body = self.header, self.body
        if getrefcount(header) != _ALONE or getrefcount(body) != _ALONE:
            return None
        topics = body.topics
        topic = topics[0]
        partitions = topic.partitions
        part = partitions[0]
        if getrefcount(topics) != _ALONE or getrefcount(topic) != _ALONE \
                or getrefcount(partitions) != _ALONE or getrefcount(part) != _ALONE:
            return None
        header.correlation_id = _CORRELATION.unpack_from(frame, 4)[0]
        part.current_leader_epoch, part.fetch_offset, part.last_fetched_epoch = \
            _FIELDS.unpack_from(frame, at)
        self.frame = frame if type(frame) is bytes else bytes(frame)
        self.hits += 1
        return header, body
