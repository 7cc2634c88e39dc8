"""``quorum-state``: the durable election state (Kafka's ``FileQuorumStateStore``).

The file is ``QuorumStateData`` as Kafka's generated JSON converter writes it,
compact, plus ``data_version`` (= ``KRaftVersion.quorumStateVersion()``):

* version 1 (kraft.version 1)::

    {"leaderId":1,"leaderEpoch":1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}

* version 0 (kraft.version 0, static voters)::

    {"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}

Version 0 lists the static voters; pass their ids as ``static_voter_ids``.

A second line, ``crc32c=<8 hex digits>``, is the CRC-32C of the first: a flipped bit
(a vote or an epoch changed on disk) is found at start-up and the node refuses to
start. Kafka reads only the file's first line (``FileQuorumStateStore`` calls
``readLine`` once), so a Kafka controller still reads our file; a file without the
line (written by Kafka) is read unchecked.
Writes go to ``quorum-state.tmp``, are fsynced and renamed over the file, and the
directory is fsynced: :meth:`write` is durable on return.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from kraft_server.common.values import ElectionState

from wire.records.crc import crc32c

from .files import atomic_write
from wire.uuids import ZERO_UUID, uuid_from_str, uuid_to_str

QUORUM_STATE = "quorum-state"


class QuorumStateError(ValueError):
    pass


def render_quorum_state(state: ElectionState, static_voter_ids: Iterable[int] = ()) -> bytes:
    directory_id = state.voted_directory_id or ZERO_UUID
    if state.data_version == 0:
        obj = {
            "clusterId": "",
            "leaderId": state.leader_id,
            "leaderEpoch": state.epoch,
            "votedId": state.voted_id,
            "appliedOffset": 0,
            "currentVoters": [{"voterId": v} for v in sorted(static_voter_ids)],
            "data_version": 0,
        }
    elif state.data_version == 1:
        obj = {
            "leaderId": state.leader_id,
            "leaderEpoch": state.epoch,
            "votedId": state.voted_id,
            "votedDirectoryId": uuid_to_str(directory_id),  # type: ignore[arg-type]
            "data_version": 1,
        }
    else:
        raise QuorumStateError(f"Unknown quorum state version {state.data_version}")
    return json.dumps(obj, separators=(",", ":")).encode("utf-8")


def with_check_line(first_line: bytes) -> bytes:
    """The file's content: the JSON line and the line holding its CRC-32C."""
    return first_line + b"\ncrc32c=%08x\n" % crc32c(first_line)


def checked_first_line(data: bytes, where: str = QUORUM_STATE) -> bytes:
    """The JSON line, once the check line (if present) agrees with it."""
    first, _, rest = data.partition(b"\n")
    if rest == b"":
        return first
    if rest != b"crc32c=%08x\n" % crc32c(first):
        raise QuorumStateError(f"{where} is corrupt: its CRC-32C line does not match its content "
                               "(a vote or epoch changed on disk; refusing to start on it)")
    return first


def parse_quorum_state(text: bytes | str, where: str = QUORUM_STATE) -> ElectionState:
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise QuorumStateError(f"Error while reading the Quorum status from the file {where}: {exc}") from exc
    if not isinstance(obj, dict) or "data_version" not in obj:
        raise QuorumStateError(f"Error while reading the Quorum status from the file {where}: missing data_version")
    version = obj["data_version"]
    if version not in (0, 1):
        raise QuorumStateError(f"Unknown quorum state version {version} in {where}")
    voted_dir = ZERO_UUID
    if version == 1 and obj.get("votedDirectoryId"):
        voted_dir = uuid_from_str(obj["votedDirectoryId"])
    return ElectionState(
        epoch=int(obj.get("leaderEpoch", -1)),
        leader_id=int(obj.get("leaderId", -1)),
        voted_id=int(obj.get("votedId", -1)),
        voted_directory_id=voted_dir,
        data_version=version,
    )


class FileQuorumStateStore:
    """``QuorumStateStore`` backed by ``<partition dir>/quorum-state``."""

    def __init__(self, partition_dir: str | Path, static_voter_ids: Iterable[int] = ()) -> None:
        self.path = Path(partition_dir) / QUORUM_STATE
        self.static_voter_ids = tuple(static_voter_ids)

    def read(self) -> ElectionState | None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        return parse_quorum_state(checked_first_line(data, str(self.path)), str(self.path))

    def write(self, state: ElectionState) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, with_check_line(render_quorum_state(state, self.static_voter_ids)))

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)
        Path(str(self.path) + ".tmp").unlink(missing_ok=True)
