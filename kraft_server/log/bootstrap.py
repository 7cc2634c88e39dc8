"""What ``kraft-storage format`` writes besides ``meta.properties``.

* ``<dir>/bootstrap.checkpoint`` in **every** log dir (Kafka's
  ``BootstrapDirectory.writeBinaryFile``, a snapshot-shaped file): a control batch
  at offset 0 with a SnapshotHeaderRecord (LastContainedLogTimestamp 0), one data
  batch at offset 1 with a FeatureLevelRecord (v0) for ``metadata.version`` then
  the other features sorted by name with level > 0 (never ``kraft.version``), and a
  control batch with the SnapshotFooterRecord; partition leader epoch 0, batch
  timestamps = now. Written via ``.tmp`` + fsync + rename.
* the bootstrap snapshot ``__cluster_metadata-0/00000000000000000000-0000000000.checkpoint``
  (``Formatter.writeDynamicQuorumSnapshot``), only in the metadata log dir and
  only for dynamic quorums with initial voters: a control batch at offset 0,
  epoch 0, holding SnapshotHeaderRecord(now), KRaftVersionRecord(kraft.version 1)
  and VotersRecord, then a control batch at offset 3 with the footer. Each voter
  has one endpoint named after the first ``controller.listener.names`` entry and
  supports kraft.version 0..1 (``DynamicVoter.toVoterNode``).
"""
from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from wire.messages import (
    FeatureLevelRecord,
    KRaftVersionRecord,
    SnapshotFooterRecord,
    SnapshotHeaderRecord,
    VotersRecord,
)
from wire.messages.voters_record import Endpoint as VoterEndpoint
from wire.messages.voters_record import KRaftVersionFeature
from wire.messages.voters_record import Voter as VoterData
from wire.records import (
    ControlRecordType,
    control_batch,
    control_record_type,
    data_batch,
    decode_metadata_record,
    frame_metadata_record,
    iter_batches,
    unframe_metadata_record,
)

from kraft_server.common import features, metadata_version

from .files import atomic_write
from .file_log import METADATA_PARTITION_DIR
from .snapshots import BOOTSTRAP_SNAPSHOT_ID, FileSnapshotWriter, snapshot_path
from wire.uuids import ZERO_UUID, uuid_from_str, uuid_to_str

log = logging.getLogger(__name__)

BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"
METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"

# Apache Kafka 4.4.0's default feature levels: its latest production metadata.version,
# 4.4-IV2 (as its ``kafka-storage format`` writes them).
LATEST_METADATA_VERSION = (metadata_version.name(metadata_version.LATEST_PRODUCTION),
                           metadata_version.LATEST_PRODUCTION)
DEFAULT_FEATURES: dict[str, int] = features.default_levels(metadata_version.LATEST_PRODUCTION)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _control_value(message) -> bytes:
    return message.encode(0)


# ---------------------------------------------------------------------------------
# bootstrap.checkpoint
# ---------------------------------------------------------------------------------


def render_bootstrap_checkpoint(features: dict[str, int], now_ms: int | None = None,
                                extra: list[bytes] = ()) -> bytes:
    """The checkpoint: feature levels, then ``extra`` framed metadata records
    (UserScramCredentialRecords from ``--add-scram``), as Kafka's BootstrapMetadata."""
    now = _now_ms() if now_ms is None else now_ms
    if METADATA_VERSION not in features:
        raise ValueError("the bootstrap checkpoint needs a metadata.version level")
    ordered = [(METADATA_VERSION, features[METADATA_VERSION])] + sorted(
        (name, level) for name, level in features.items()
        if name not in (METADATA_VERSION, KRAFT_VERSION) and level > 0
    )
    values = [
        frame_metadata_record(FeatureLevelRecord.API_KEY, 0, FeatureLevelRecord(name=n, feature_level=lvl).encode(0))
        for n, lvl in ordered
    ] + list(extra)
    header = control_batch(0, 0, now, [(ControlRecordType.SNAPSHOT_HEADER,
                                        _control_value(SnapshotHeaderRecord(last_contained_log_timestamp=0)))])
    data = data_batch(1, 0, now, values)
    footer = control_batch(1 + len(values), 0, now, [(ControlRecordType.SNAPSHOT_FOOTER,
                                                      _control_value(SnapshotFooterRecord()))])
    return header + data + footer


def write_bootstrap_checkpoint(directory: str | Path, features: dict[str, int], now_ms: int | None = None,
                               extra: list[bytes] = ()) -> Path:
    path = Path(directory) / BOOTSTRAP_CHECKPOINT
    atomic_write(path, render_bootstrap_checkpoint(features, now_ms, extra))
    return path


def bootstrap_file_bytes(directory: str | Path) -> bytes | None:
    """Where the bootstrap records are: ``bootstrap.checkpoint`` (Kafka 3.x to 4.3 and
    ours), else the bootstrap snapshot ``__cluster_metadata-0/...0-0.checkpoint``,
    whose data batch holds them in what Kafka 4.4's ``kafka-storage`` formats
    (``Formatter.writeBoostrapSnapshot``; no bootstrap.checkpoint then)."""
    for path in (Path(directory) / BOOTSTRAP_CHECKPOINT,
                 snapshot_path(Path(directory) / METADATA_PARTITION_DIR, BOOTSTRAP_SNAPSHOT_ID)):
        try:
            return path.read_bytes()
        except FileNotFoundError:
            continue
    return None


def split_bootstrap_records(data: bytes) -> tuple[dict[str, int], list[bytes]]:
    """A bootstrap checkpoint's feature levels, and its other records (``--add-scram``
    credentials) framed, both in file order."""
    levels: dict[str, int] = {}
    extra: list[bytes] = []
    for batch in iter_batches(data):
        if batch.is_control:
            continue
        for record in batch.records:
            if unframe_metadata_record(record.value)[0] == FeatureLevelRecord.API_KEY:
                rec = decode_metadata_record(record.value).message  # as Kafka's serde reads it
                levels[rec.name] = rec.feature_level
            else:
                extra.append(bytes(record.value))
    return levels, extra


def parse_bootstrap_checkpoint(data: bytes) -> dict[str, int]:
    """Feature levels from a bootstrap checkpoint, in file order."""
    return split_bootstrap_records(data)[0]


def bootstrap_extra_records(directory: str | Path) -> list[bytes]:
    """The checkpoint's records other than feature levels, framed, in file order."""
    data = bootstrap_file_bytes(directory)
    return [] if data is None else split_bootstrap_records(data)[1]


def read_bootstrap_checkpoint(directory: str | Path) -> dict[str, int] | None:
    """The formatted feature levels (``bootstrap_file_bytes``); None when there are none."""
    data = bootstrap_file_bytes(directory)
    if data is None:
        return None
    return parse_bootstrap_checkpoint(data) or None


@dataclass(frozen=True)
class BootstrapRecords:
    """What a node starts with from its metadata log dir: the feature levels ``kafka-storage
    format`` wrote, and the other records, which the first active controller commits with them."""
    levels: dict[str, int]
    extra: list[bytes]


def read_bootstrap_records(metadata_log_dir: str | Path) -> BootstrapRecords:
    """The node's one read of its bootstrap records; none when there is no file, and none
    (with a warning) when the file cannot be decoded: the node still starts."""
    data = bootstrap_file_bytes(metadata_log_dir)
    if data is None:
        return BootstrapRecords({}, [])
    try:
        levels, extra = split_bootstrap_records(data)
    except ValueError as exc:
        log.warning("cannot read the bootstrap records in %s: %s", metadata_log_dir, exc)
        return BootstrapRecords({}, [])
    return BootstrapRecords(levels, extra)


# ---------------------------------------------------------------------------------
# Dynamic voters and the bootstrap snapshot 0-0
# ---------------------------------------------------------------------------------


class DynamicVoterError(ValueError):
    pass


@dataclass(frozen=True)
class DynamicVoter:
    """One ``--initial-controllers`` entry: ``id@host:port:directoryId``
    (Kafka's ``DynamicVoter``; IPv6 hosts in brackets)."""

    node_id: int
    host: str
    port: int
    directory_id: uuid.UUID

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.node_id}@{host}:{self.port}:{uuid_to_str(self.directory_id)}"

    @classmethod
    def parse(cls, text: str) -> "DynamicVoter":
        text = text.strip()
        at = text.find("@")
        if at < 0:
            raise DynamicVoterError("No @ found in dynamic voter string.")
        if at == 0:
            raise DynamicVoterError("Invalid @ at beginning of dynamic voter string.")
        try:
            node_id = int(text[:at])
        except ValueError:
            raise DynamicVoterError(f"Failed to parse node id in dynamic voter string.") from None
        if node_id < 0:
            raise DynamicVoterError("Invalid negative node id " + str(node_id) + " in dynamic voter string.")
        rest = text[at + 1 :]
        if rest.startswith("["):
            end = rest.find("]")
            if end < 0:
                raise DynamicVoterError("Hostname began with left bracket, but no right bracket was found.")
            host, rest = rest[1:end], rest[end + 1 :]
            if not rest.startswith(":"):
                raise DynamicVoterError("Port section must start with a colon.")
            rest = rest[1:]
        else:
            colon = rest.find(":")
            if colon < 0:
                raise DynamicVoterError("No colon following hostname could be found.")
            host, rest = rest[:colon], rest[colon + 1 :]
        colon = rest.find(":")
        if colon < 0:
            raise DynamicVoterError("No colon following port could be found.")
        port_text, dir_text = rest[:colon], rest[colon + 1 :]
        try:
            port = int(port_text)
        except ValueError:
            raise DynamicVoterError("Failed to parse port in dynamic voter string.") from None
        if not 0 <= port <= 65535:
            raise DynamicVoterError("Invalid port " + str(port) + " in dynamic voter string.")
        try:
            directory_id = uuid_from_str(dir_text)
        except ValueError:
            raise DynamicVoterError("Failed to parse directory ID in dynamic voter string.") from None
        if directory_id == ZERO_UUID:
            raise DynamicVoterError("Invalid zero-valued directory ID in dynamic voter string.")
        return cls(node_id, host, port, directory_id)


def parse_dynamic_voters(text: str) -> list[DynamicVoter]:
    """``--initial-controllers``: comma-separated voters, unique node ids."""
    if not text.strip():
        raise DynamicVoterError("No voters given.")
    voters = [DynamicVoter.parse(part) for part in text.split(",")]
    seen: set[int] = set()
    for v in voters:
        if v.node_id in seen:
            raise DynamicVoterError(f"Node id {v.node_id} was specified more than once.")
        seen.add(v.node_id)
    return voters


def voters_record(voters: list[DynamicVoter], listener_name: str) -> VotersRecord:
    return VotersRecord(
        version=0,
        voters=[
            VoterData(
                voter_id=v.node_id,
                voter_directory_id=v.directory_id,
                endpoints=[VoterEndpoint(name=listener_name, host=v.host, port=v.port)],
                kraft_version_feature=KRaftVersionFeature(min_supported_version=0, max_supported_version=1),
            )
            for v in voters
        ],
    )


def render_bootstrap_snapshot(voters: list[DynamicVoter], listener_name: str, now_ms: int | None = None) -> bytes:
    now = _now_ms() if now_ms is None else now_ms
    first = control_batch(0, 0, now, [
        (ControlRecordType.SNAPSHOT_HEADER, _control_value(SnapshotHeaderRecord(last_contained_log_timestamp=now))),
        (ControlRecordType.KRAFT_VERSION, _control_value(KRaftVersionRecord(version=0, kraft_version=1))),
        (ControlRecordType.KRAFT_VOTERS, _control_value(voters_record(voters, listener_name))),
    ])
    footer = control_batch(3, 0, now, [(ControlRecordType.SNAPSHOT_FOOTER, _control_value(SnapshotFooterRecord()))])
    return first + footer


def write_bootstrap_snapshot(partition_dir: str | Path, voters: list[DynamicVoter], listener_name: str,
                             now_ms: int | None = None) -> Path:
    partition_dir = Path(partition_dir)
    partition_dir.mkdir(parents=True, exist_ok=True)
    writer = FileSnapshotWriter(partition_dir, BOOTSTRAP_SNAPSHOT_ID)
    with writer:
        writer.append(render_bootstrap_snapshot(voters, listener_name, now_ms))
        writer.freeze()
    return partition_dir / "00000000000000000000-0000000000.checkpoint"


@dataclass(frozen=True)
class BootstrapSnapshot:
    kraft_version: int
    voters: VotersRecord | None


def parse_bootstrap_snapshot(data: bytes) -> BootstrapSnapshot:
    kraft_version = 0
    voters = None
    for batch in iter_batches(data):
        if not batch.is_control:
            continue
        for record in batch.records:
            kind = control_record_type(record.key)
            if kind == ControlRecordType.KRAFT_VERSION:
                kraft_version = KRaftVersionRecord.decode(record.value, 0).kraft_version
            elif kind == ControlRecordType.KRAFT_VOTERS:
                voters = VotersRecord.decode(record.value, 0)
    return BootstrapSnapshot(kraft_version, voters)
