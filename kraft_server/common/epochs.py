"""Where an epoch ends, from a log's epoch entries: the arithmetic of Kafka's
``LeaderEpochFileCache.endOffsetFor`` and ``KafkaMetadataLog.endOffsetForEpoch``.

The log keeps the entries (``log/epoch_cache.py``); the core computes the same
answers over the log plus the writes it has decided but not handed over yet
(``raft/log_view.py``). One function, so the two can never disagree.
"""
from __future__ import annotations

import bisect

from kraft_server.common.values import OffsetAndEpoch


def end_offset_for(epochs: list[int], starts: list[int], requested: int,
                   log_end_offset: int) -> OffsetAndEpoch | None:
    """``endOffsetFor`` over entries (``epochs[i]`` starts at ``starts[i]``, both
    increasing): the largest known epoch <= ``requested`` and where it ends; None
    when the requested epoch is unknown (-1, newer than the latest, or no entries)."""
    if requested < 0 or not epochs:
        return None
    if requested == epochs[-1]:
        return OffsetAndEpoch(log_end_offset, requested)
    higher = bisect.bisect_right(epochs, requested)
    if higher >= len(epochs):
        return None
    if higher == 0:  # smaller than every known epoch
        return OffsetAndEpoch(starts[0], requested)
    return OffsetAndEpoch(starts[higher], epochs[higher - 1])


def metadata_end_offset_for(epochs: list[int], starts: list[int], requested: int,
                            log_end_offset: int, last_fetched_epoch: int,
                            earliest_snapshot: OffsetAndEpoch | None) -> OffsetAndEpoch:
    """``KafkaMetadataLog.endOffsetForEpoch``: ``end_offset_for``; the earliest
    snapshot's id when the epoch ends exactly at it (older than the log);
    ``(log end, last fetched epoch)`` when the entries cannot say."""
    found = end_offset_for(epochs, starts, requested, log_end_offset)
    if found is None:
        return OffsetAndEpoch(log_end_offset, last_fetched_epoch)
    if earliest_snapshot is not None and found.offset == earliest_snapshot.offset \
            and found.epoch == requested:
        return earliest_snapshot
    return found
