"""Positions in the log and the persisted election state."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class OffsetAndEpoch:
    """A position in the log and the epoch that wrote it (also a snapshot id:
    ``offset`` is the snapshot's end offset, exclusive)."""

    offset: int
    epoch: int


@dataclass(frozen=True)
class ElectionState:
    """What ``quorum-state`` keeps: the epoch, the leader if known, the vote if cast.

    ``voted_directory_id`` is a ``uuid.UUID`` (zero when unknown, or under
    kraft.version 0). ``data_version`` is the file's ``data_version`` (0 or 1,
    following kraft.version)."""

    epoch: int
    leader_id: int = -1
    voted_id: int = -1
    voted_directory_id: object = None
    data_version: int = 1
