"""``describe --status`` and ``describe --replication`` text, from a ``QuorumInfo``.

The layout is Kafka 4.3.1's (``MetadataQuorumCommand.handleDescribeStatus`` /
``handleDescribeReplication`` and ``ToolsUtils.prettyPrintTable``):

- status: one ``Label:`` per line, the value starting at column 25;
  ``MaxFollowerLag`` is the leader's LEO minus the lowest voter LEO (the first
  voter with that LEO, in response order); ``MaxFollowerLagTimeMs`` is 0 when
  that voter is the leader, else the difference of the two caught-up
  timestamps, or -1 when one is unknown. Voters and observers print as
  ``{"id": N, "directoryId": "...", "endpoints": ["NAME://host:port"]}``,
  leaving out a zero directory id and an empty endpoint list.
- replication: a table whose cells are padded to the column width and each
  followed by a TAB; rows: the leader, the other voters, the observers.

Our addition (KIP-1204 draft, DescribeQuorum v3): when the server sent
``CommittedVoters``, status also prints ``CommittedVoters:``, and for each voter
in one set but not the other an ``UncommittedAddedVoter:`` or
``UncommittedRemovedVoter:`` line (KIP-853's example output). Against a server
without v3 the output is exactly Kafka's.
"""
from __future__ import annotations

import time

from wire.uuids import ZERO_UUID

from wire.uuids import uuid_to_str

from .client import QuorumInfo, Replica
from .errors import TerseError

LABEL_WIDTH = 24
HEADERS = ("NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp",
           "LastCaughtUpTimestamp", "Status")


def _label(name: str) -> str:
    text = f"{name}:"
    return text.ljust(LABEL_WIDTH) if len(text) < LABEL_WIDTH else text + " "


def replica_json(quorum: QuorumInfo, r: Replica) -> str:
    parts = [f'"id": {r.replica_id}']
    if r.directory_id != ZERO_UUID:
        parts.append(f'"directoryId": "{uuid_to_str(r.directory_id)}"')
    endpoints = quorum.nodes.get(r.replica_id) or []
    if endpoints:
        parts.append('"endpoints": [' + ", ".join(f'"{e}"' for e in endpoints) + "]")
    return "{" + ", ".join(parts) + "}"


def replica_list(quorum: QuorumInfo, replicas: list[Replica]) -> str:
    return "[" + ", ".join(replica_json(quorum, r) for r in replicas) + "]"


def max_follower_lag(quorum: QuorumInfo) -> tuple[int, int]:
    leader = quorum.leader()
    laggard = min(quorum.voters, key=lambda v: v.log_end_offset)  # first minimum, as Stream.min
    lag = leader.log_end_offset - laggard.log_end_offset
    if laggard is leader:
        lag_ms = 0
    elif leader.last_caught_up_timestamp is not None and laggard.last_caught_up_timestamp is not None:
        lag_ms = leader.last_caught_up_timestamp - laggard.last_caught_up_timestamp
    else:
        lag_ms = -1
    return lag, lag_ms


def uncommitted_changes(quorum: QuorumInfo) -> tuple[list[Replica], list[Replica]]:
    """(added, removed): voters of the latest set not yet committed, and committed
    voters the latest set dropped. Empty when the server sent no committed set."""
    if quorum.committed_voters is None:
        return [], []
    committed = {r.key for r in quorum.committed_voters}
    current = {r.key for r in quorum.voters}
    added = [r for r in quorum.voters if r.key not in committed]
    removed = [r for r in quorum.committed_voters if r.key not in current]
    return added, removed


def status_text(cluster_id: str | None, quorum: QuorumInfo) -> str:
    lag, lag_ms = max_follower_lag(quorum)
    lines = [
        _label("ClusterId") + str(cluster_id),
        _label("LeaderId") + str(quorum.leader_id),
        _label("LeaderEpoch") + str(quorum.leader_epoch),
        _label("HighWatermark") + str(quorum.high_watermark),
        _label("MaxFollowerLag") + str(lag),
        _label("MaxFollowerLagTimeMs") + str(lag_ms),
        _label("CurrentVoters") + replica_list(quorum, quorum.voters),
        _label("CurrentObservers") + replica_list(quorum, quorum.observers),
    ]
    if quorum.committed_voters is not None:
        lines.append(_label("CommittedVoters") + replica_list(quorum, quorum.committed_voters))
        added, removed = uncommitted_changes(quorum)
        lines += [_label("UncommittedAddedVoter") + replica_json(quorum, r) for r in added]
        lines += [_label("UncommittedRemovedVoter") + replica_json(quorum, r) for r in removed]
    return "\n".join(lines)


def _relative_ms(timestamp_ms: int, what: str, now_ms: int) -> int:
    if not (0 < timestamp_ms <= now_ms):
        raise TerseError("Error while computing relative time, possible drift in system clock.\n"
                         f"Current timestamp is {now_ms}, {what} timestamp is {timestamp_ms}")
    return now_ms - timestamp_ms


def _timestamp_cell(value: int | None, what: str, human: bool, now_ms: int) -> str:
    if value is None:
        return "-1"
    if human:
        return f"{_relative_ms(value, what, now_ms)} ms ago"
    return str(value)


def replication_rows(quorum: QuorumInfo, human: bool, now_ms: int | None = None) -> list[list[str]]:
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    leader = quorum.leader()
    groups = [([leader], "Leader"),
              ([v for v in quorum.voters if v.replica_id != quorum.leader_id], "Follower"),
              (quorum.observers, "Observer")]
    rows = []
    for replicas, status in groups:
        for r in replicas:
            rows.append([
                str(r.replica_id),
                uuid_to_str(r.directory_id),
                str(r.log_end_offset),
                str(leader.log_end_offset - r.log_end_offset),
                _timestamp_cell(r.last_fetch_timestamp, "last fetch", human, now_ms),
                _timestamp_cell(r.last_caught_up_timestamp, "last caught up", human, now_ms),
                status,
            ])
    return rows


def pretty_table(headers, rows) -> str:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]
    lines = ["".join(cell.ljust(w) + "\t" for cell, w in zip(row, widths)) for row in [list(headers), *rows]]
    return "\n".join(lines)


def replication_text(quorum: QuorumInfo, human: bool, now_ms: int | None = None) -> str:
    return pretty_table(HEADERS, replication_rows(quorum, human, now_ms))
