"""A leader's metadata directory built up front, for ``bench/membership/membership.py``.

``build_leader_dir`` formats node 1 as a one-voter dynamic quorum (our
``kraft-storage format --standalone``: meta.properties, bootstrap.checkpoint and the
0-0 bootstrap checkpoint with the VotersRecord, kraft.version 1), then writes what
that node would hold after ``records`` committed records in epoch 1, in Kafka's
on-disk format, so our node and an Apache Kafka controller can both start on it:

* ``__cluster_metadata-0/00000000000000000000.log``, one segment, partition leader
  epoch 1 everywhere:

  - offset 0: the control batch a first kraft.version-1 leader writes
    (``LeaderState.appendStartOfEpochControlRecords``): LeaderChangeMessage,
    KRaftVersionRecord(1), the VotersRecord of the bootstrap checkpoint;
  - offset 3: the bootstrap batch (``ActivationRecordsGenerator.recordsForEmptyLog``:
    BeginTransaction, the FeatureLevelRecords of bootstrap.checkpoint, EndTransaction),
    from our ``ActiveDuties.bootstrap_records``;
  - then NoOpRecords up to ``records`` records in all, ``batch_records`` per batch.
    The default, 1, is what an idle leader writes (one NoOpRecord batch every
    ``metadata.max.idle.interval.ms``): 1M records are then about 72 MB, under
    Kafka's default ``metadata.max.retention.bytes`` (100 MiB), so a real leader
    still holds the whole log from offset 0 next to its snapshots.

  The NoOp batches differ only in their base offset, which the CRC-32C does not
  cover: one batch is built and its first eight bytes are patched.
* a snapshot ``<S>-0000000001.checkpoint`` near the end (S = the first batch
  boundary at or after ``snapshot_fraction`` of the log), written by our
  controller's ``render_snapshot`` from the image replayed up to S: header,
  KRaftVersionRecord, VotersRecord, the feature levels, footer. The leader loads it
  on start-up and replays the tail after it. A Kafka 4.3.1 leader also answers the
  first Fetch of an empty replica (offset 0) with its latest non-bootstrap snapshot
  id (``KafkaRaftClient.tryCompleteFetchRequest``), so a Kafka joiner takes this
  snapshot and then the tail; where it sits (``snapshot_fraction``) sets that tail.
  ``snapshot_fraction=0`` writes no snapshot: every replica then fetches the log from 0.
* ``quorum-state``: node 1 was the leader of epoch 1 (and voted for itself);
  ``partition.metadata`` and ``leader-epoch-checkpoint`` as Kafka writes them. No
  clean-shutdown marker: Kafka recovers (re-reads) the segment on start-up, as ours
  always does.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from kraft_server.config import KafkaConfig
from kraft_server.controller.image import records as rec
from kraft_server.controller.active import ActiveDuties
from kraft_server.controller.image.metadata_image import MetadataImage
from kraft_server.controller.image.snapshot_generator import render_snapshot
from kraft_server.log.bootstrap import parse_bootstrap_snapshot, read_bootstrap_checkpoint
from kraft_server.log.epoch_cache import LEADER_EPOCH_CHECKPOINT
from kraft_server.log.partition_metadata import write_partition_metadata
from kraft_server.log.quorum_state_file import FileQuorumStateStore
from kraft_server.log.snapshots import BOOTSTRAP_SNAPSHOT_ID, FileSnapshotWriter, snapshot_path
from kraft_server.common.values import ElectionState, OffsetAndEpoch
from tools.storage.formatter import FormatRequest, format_storage
from wire.messages import KRaftVersionRecord, LeaderChangeMessage
from wire.messages.leader_change_message import Voter
from wire.records import ControlRecordType, build_batch, build_control_batch, with_base_offset

PARTITION = "__cluster_metadata-0"
EPOCH = 1


@dataclass
class LeaderDir:
    metadata_dir: Path
    partition_dir: Path
    directory_id: object  # uuid.UUID
    log_end_offset: int
    segment_bytes: int
    snapshot_id: OffsetAndEpoch | None  # None: no snapshot (snapshot_fraction 0)


class _Voters:
    """What ``render_snapshot`` needs of a VoterSet: the VotersRecord."""

    def __init__(self, record):
        self._record = record

    def to_voters_record(self):
        return self._record


def format_node(config_path: Path, cluster_id: str, **flags) -> object:
    """Our ``kraft-storage format`` in-process, at the pinned Kafka release's
    metadata.version (its controllers join these logs); returns the metadata dir's
    directory id."""
    from tools.kafka_dist import KAFKA_VERSION
    flags.setdefault("release_version", ".".join(KAFKA_VERSION.split(".")[:2]))
    config = KafkaConfig.from_file(config_path)
    result = format_storage(FormatRequest(config=config, cluster_id=cluster_id,
                                          printer=lambda _line: None, **flags))
    return result.directory_ids[config.metadata_log_dir]


def build_leader_dir(config_path: Path, cluster_id: str, records: int, *, batch_records: int = 1,
                     snapshot_fraction: float = 0.9) -> LeaderDir:
    directory_id = format_node(config_path, cluster_id, standalone=True)
    config = KafkaConfig.from_file(config_path)
    meta_dir = Path(config.metadata_log_dir)
    part = meta_dir / PARTITION
    voters = parse_bootstrap_snapshot(snapshot_path(part, BOOTSTRAP_SNAPSHOT_ID).read_bytes()).voters
    levels = read_bootstrap_checkpoint(meta_dir)
    now = int(time.time() * 1000)

    head = build_control_batch(0, EPOCH, now, [
        (ControlRecordType.LEADER_CHANGE, LeaderChangeMessage(
            version=0, leader_id=config.node_id, voters=[Voter(voter_id=config.node_id)],
            granting_voters=[Voter(voter_id=config.node_id)])),
        (ControlRecordType.KRAFT_VERSION, KRaftVersionRecord(version=0, kraft_version=1)),
        (ControlRecordType.KRAFT_VOTERS, voters),
    ])
    boot = ActiveDuties(config.node_id, levels, None, 0).bootstrap_records()
    offset = 3
    if records < offset + len(boot) + 1:
        raise ValueError(f"a log needs at least {offset + len(boot) + 1} records")
    out = bytearray(head)
    out += build_batch(offset, EPOCH, now, [(None, v) for v in boot])
    offset += len(boot)
    image = MetadataImage()
    for v in boot:
        image.replay(v)

    noop = rec.no_op()
    template = build_batch(0, EPOCH, now, [(None, noop)] * batch_records)
    snapshot_at = None
    target = records * snapshot_fraction
    while offset < records:
        if snapshot_at is None and offset >= target:
            snapshot_at = offset
        n = min(batch_records, records - offset)
        if n == batch_records:
            out += with_base_offset(template, offset)
        else:
            out += build_batch(offset, EPOCH, now, [(None, noop)] * n)
        offset += n
    if snapshot_at is None:
        snapshot_at = offset

    (part / "00000000000000000000.log").write_bytes(out)
    for suffix in (".index", ".timeindex"):
        (part / f"00000000000000000000{suffix}").touch()
    write_partition_metadata(part)
    (part / LEADER_EPOCH_CHECKPOINT).write_text(f"0\n1\n{EPOCH} 0\n")

    snapshot_id = None
    if snapshot_fraction > 0:
        image.offset, image.epoch, image.last_timestamp = snapshot_at - 1, EPOCH, now
        snapshot_id = OffsetAndEpoch(snapshot_at, EPOCH)
        writer = FileSnapshotWriter(part, snapshot_id)
        with writer:
            writer.append(render_snapshot(image, snapshot_id, 1, _Voters(voters), now))
            writer.freeze()

    FileQuorumStateStore(part).write(ElectionState(
        epoch=EPOCH, leader_id=config.node_id, voted_id=config.node_id,
        voted_directory_id=directory_id, data_version=1))
    return LeaderDir(meta_dir, part, directory_id, offset, len(out), snapshot_id)
