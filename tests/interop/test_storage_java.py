"""Our storage against the real Apache Kafka 4.3.1 (``@pytest.mark.java``):

* ``kafka-dump-log --cluster-metadata-decoder`` reads our segments (control
  batches and metadata records) and our snapshots;
* ``kafka-storage format`` output is read by our readers, and ``kafka-storage
  info`` reads what our ``format`` writes;
* a real controller starts on a directory our ``format --standalone`` made and
  becomes leader;
* our log opens a real controller's partition directory cleanly, and a real
  controller restarts on a log whose segments our log wrote (rolled into several
  segments, with the ``.index`` files left empty).
"""
from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from kraft_server.config import KafkaConfig
from kraft_server.log import batch_index
from kraft_server.common.features import default_levels
from kraft_server.log.bootstrap import (
    parse_bootstrap_snapshot,
    read_bootstrap_checkpoint,
    render_bootstrap_checkpoint,
)
from kraft_server.log.epoch_cache import LeaderEpochCache
from kraft_server.log.file_log import FileReplicatedLog
from kraft_server.log.meta_properties import read_meta_properties
from kraft_server.log.quorum_state_file import FileQuorumStateStore
from kraft_server.log.startup import check_storage
from wire.uuids import uuid_to_str
from kraft_server.common.values import OffsetAndEpoch
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import kafka_release
from tools.kafka_dist.controller import KafkaController, random_cluster_id, run_tool
from tools.kafka_dist.releases import DEFAULT_RELEASE, RELEASES
from tools.storage.__main__ import main as storage_main
from wire.messages import FeatureLevelRecord, KRaftVersionRecord, LeaderChangeMessage, NoOpRecord, VotersRecord
from wire.messages.leader_change_message import Voter as LcVoter
from wire.messages.voters_record import Endpoint, KRaftVersionFeature
from wire.messages.voters_record import Voter as VrVoter
from wire.records import ControlRecordType, control_batch, data_batch, frame_metadata_record, iter_headers

pytestmark = pytest.mark.java

PART = "__cluster_metadata-0"
# what the pinned release's kafka-storage formats without --release-version
PINNED_FEATURES = default_levels(RELEASES[DEFAULT_RELEASE]["metadata"][1])


@pytest.fixture(scope="module", autouse=True)
def _jdk():
    need_jdk()
    from tools.kafka_dist import ensure_dist
    ensure_dist()


def dump_log(path: Path) -> str:
    out = run_tool("kafka-dump-log", "--cluster-metadata-decoder", "--files", str(path), timeout=120)
    return out.stdout


def test_dump_log_reads_our_segments_and_snapshot(tmp_path):
    dir_id = uuid.UUID(int=0x1234_5678_9ABC)
    with FileReplicatedLog.open(tmp_path, segment_bytes=400) as log:
        leader_change = LeaderChangeMessage(leader_id=1, voters=[LcVoter(voter_id=1)],
                                            granting_voters=[LcVoter(voter_id=1)]).encode(0)
        voters = VotersRecord(voters=[VrVoter(
            voter_id=1, voter_directory_id=dir_id, endpoints=[Endpoint(name="CONTROLLER", host="127.0.0.1", port=9093)],
            kraft_version_feature=KRaftVersionFeature(min_supported_version=0, max_supported_version=1))]).encode(0)
        log.append(control_batch(0, 1, 1_700_000_000_000, [
            (ControlRecordType.LEADER_CHANGE, leader_change),
            (ControlRecordType.KRAFT_VERSION, KRaftVersionRecord(kraft_version=1).encode(0)),
            (ControlRecordType.KRAFT_VOTERS, voters),
        ]))
        log.append(data_batch(3, 1, 1_700_000_000_001, [
            frame_metadata_record(FeatureLevelRecord.API_KEY, 0,
                                  FeatureLevelRecord(name="metadata.version", feature_level=30).encode(0)),
        ]))
        for _ in range(8):
            log.append(data_batch(log.end_offset(), 2, 1_700_000_000_002,
                                  [frame_metadata_record(NoOpRecord.API_KEY, 0, NoOpRecord().encode(0))]))
        log.flush()
        assert len(log.segments) > 1
        writer = log.create_snapshot(OffsetAndEpoch(4, 1))
        writer.append(control_batch(0, 1, 5, [(ControlRecordType.SNAPSHOT_HEADER, b"\x00\x00" + (5).to_bytes(8, "big") + b"\x00")]))
        writer.append(data_batch(1, 1, 5, [frame_metadata_record(NoOpRecord.API_KEY, 0, b"\x00")]))
        writer.append(control_batch(2, 1, 5, [(ControlRecordType.SNAPSHOT_FOOTER, b"\x00\x00\x00")]))
        writer.freeze()
    part = tmp_path / PART
    out = dump_log(part / "00000000000000000000.log")
    assert "isControl: true" in out and "isvalid: true" in out and "isvalid: false" not in out
    assert 'LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}' in out
    assert 'KRaftVersion {"version":0,"kRaftVersion":1}' in out
    assert f'"voterDirectoryId":"{uuid_to_str(dir_id)}"' in out
    assert '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":30}}' in out
    later = sorted(p for p in part.glob("*.log"))[-1]
    later_out = dump_log(later)
    assert '"type":"NO_OP_RECORD"' in later_out and "isvalid: true" in later_out
    snap_out = dump_log(part / "00000000000000000004-0000000001.checkpoint")
    assert "Snapshot end offset: 4, epoch: 1" in snap_out
    assert 'SnapshotHeader {"version":0,"lastContainedLogTimestamp":5}' in snap_out
    assert 'SnapshotFooter {"version":0}' in snap_out


def _server_properties(tmp_path: Path, meta: Path, port: int = 19093) -> Path:
    cfg = tmp_path / "server.properties"
    cfg.write_text("\n".join([
        "process.roles=controller", "node.id=1", "controller.listener.names=CONTROLLER",
        f"listeners=CONTROLLER://127.0.0.1:{port}", "listener.security.protocol.map=CONTROLLER:PLAINTEXT",
        f"controller.quorum.bootstrap.servers=127.0.0.1:{port}", f"log.dirs={meta}", f"metadata.log.dir={meta}",
    ]) + "\n")
    return cfg


def test_we_read_what_kafka_storage_formats(tmp_path, capsys):
    meta = tmp_path / "meta"
    cfg = _server_properties(tmp_path, meta)
    cluster = random_cluster_id()
    run_tool("kafka-storage", "format", "-t", cluster, "-c", str(cfg), "--standalone")
    props = read_meta_properties(meta)
    assert (props.cluster_id, props.node_id, props.version) == (cluster, 1, 1)
    assert read_bootstrap_checkpoint(meta) == PINNED_FEATURES
    with FileReplicatedLog.open(meta) as log:
        snap = parse_bootstrap_snapshot(log.bootstrap_checkpoint())
    assert snap.kraft_version == 1
    assert snap.voters.voters[0].voter_directory_id == props.directory_id
    info = check_storage(KafkaConfig.from_file(cfg))
    assert info.cluster_id == cluster
    capsys.readouterr()
    assert storage_main(["info", "-c", str(cfg)]) == 0
    kafka_info = run_tool("kafka-storage", "info", "-c", str(cfg)).stdout
    assert capsys.readouterr().out == kafka_info  # our info prints what Kafka's prints
    # our bytes are Kafka's bytes, timestamps aside (releases up to 4.3; 4.4 writes no
    # bootstrap.checkpoint: the levels are in the bootstrap snapshot, read above)
    if RELEASES[DEFAULT_RELEASE]["metadata"][1] >= 33:
        assert not (meta / "bootstrap.checkpoint").exists()
        return
    kafka = (meta / "bootstrap.checkpoint").read_bytes()
    first_ts = int.from_bytes(kafka[27:35], "big")
    ours = render_bootstrap_checkpoint(PINNED_FEATURES, now_ms=first_ts)
    header_batch = 12 + int.from_bytes(kafka[8:12], "big")
    assert ours[:header_batch] == kafka[:header_batch] and len(ours) == len(kafka)


def test_kafka_storage_info_reads_our_format(tmp_path, capsys):
    meta = tmp_path / "meta"
    cfg = _server_properties(tmp_path, meta)
    cluster = random_cluster_id()
    assert storage_main(["format", "-t", cluster, "-c", str(cfg), "--standalone"]) == 0
    out = run_tool("kafka-storage", "info", "-c", str(cfg)).stdout
    dir_id = uuid_to_str(read_meta_properties(meta).directory_id)
    assert f"Found metadata: {{cluster.id={cluster}, directory.id={dir_id}, node.id=1, version=1}}" in out
    # and Kafka's own format refuses to re-format it, as for its own directories
    proc = run_tool("kafka-storage", "format", "-t", cluster, "-c", str(cfg), "--standalone", check=False)
    assert proc.returncode == 1 and "is already formatted" in proc.stdout + proc.stderr


def _format_with_our_tool(ctl: KafkaController) -> None:
    ctl.write_config()
    assert storage_main(["format", "-t", ctl.cluster_id, "-c", str(ctl.config_path), "--standalone",
                         "--release-version", kafka_release()]) == 0
    ctl.formatted = True  # start() must not run kafka-storage over it


def test_real_controller_starts_on_our_format_and_reads_our_log(tmp_path):
    """Format with our tool; a real controller leads on it. Then our log opens the
    directory the controller wrote; then we rewrite its segments with our log
    (rolled small) and the real controller restarts on them and leads again."""
    ctl = KafkaController(tmp_path / "a")
    _format_with_our_tool(ctl)
    try:
        ctl.start()
        ctl.wait_ready(90)
        q1 = ctl.describe_quorum()
        assert (q1.leader_id, q1.error_code) == (1, 0)
    finally:
        ctl.stop()
    part = ctl.data_dir / PART
    kafka_epochs = LeaderEpochCache.read(part).entries
    with FileReplicatedLog.open(ctl.data_dir) as log:
        assert log.recovery_problems == []
        assert log.end_offset() >= q1.high_watermark
        assert log.epochs.entries == kafka_epochs
        assert log.bootstrap_checkpoint() is not None
        batches = log.read(0, 1 << 30)
        end = log.end_offset()
    store = FileQuorumStateStore(part)
    state = store.read()
    assert state.leader_id == 1 and state.epoch == q1.leader_epoch and state.data_version == 1
    kafka_bytes = store.path.read_bytes()
    store.write(state)  # Kafka restarts on our quorum-state file below: its first line, the
    first, check = store.path.read_bytes().split(b"\n", 1)  # only one Kafka reads, is Kafka's
    assert first == kafka_bytes and check.startswith(b"crc32c=")

    # Rewrite the segments with our log, in many small segments, and restart Kafka on them.
    for p in part.iterdir():
        if p.suffix in (".log", ".index", ".timeindex", ".snapshot") or p.name == "leader-epoch-checkpoint":
            p.unlink()
    with FileReplicatedLog.open(ctl.data_dir, segment_bytes=300) as log:
        assert log.end_offset() == 0
        for pos, header in iter_headers(batches):
            log.append(batches[pos:pos + header.size])
        log.flush()
        assert log.end_offset() == end and len(log.segments) > 2
    try:
        ctl.start()
        ctl.wait_ready(90)
        q2 = ctl.describe_quorum()
        assert q2.leader_id == 1 and q2.leader_epoch > q1.leader_epoch
        assert q2.high_watermark > end
    finally:
        ctl.stop()
    assert "CorruptRecordException" not in ctl.log_text()

    # Kafka ignored our batch index files and appended to the segments: the index still
    # vouches for the batches we wrote, and the log opens as a full scan opens it.
    def opened():
        with FileReplicatedLog.open(ctl.data_dir, segment_bytes=300) as log:
            assert log.recovery_problems == [] and log.end_offset() >= q2.high_watermark
            return (sum(s.from_index for s in log.segments), log.epochs.entries,
                    [(s.base_offset, list(s.positions), list(s.next_offsets)) for s in log.segments])
    indexed, *with_index = opened()
    assert indexed > 0
    for p in part.iterdir():
        if p.suffix in batch_index.SUFFIXES:
            p.unlink()
    assert opened() == (0, *with_index)


def test_real_controller_starts_on_our_static_format(tmp_path):
    """A static quorum (controller.quorum.voters): our format writes no bootstrap
    snapshot; Kafka leads on it and writes quorum-state data_version 0, which we
    read and would write byte for byte."""
    from tools.kafka_dist.controller import free_port

    port = free_port()
    ctl = KafkaController(tmp_path / "s", port=port, format_mode="static", overrides={
        "controller.quorum.voters": f"1@127.0.0.1:{port}", "controller.quorum.bootstrap.servers": ""})
    ctl.write_config()
    assert storage_main(["format", "-t", ctl.cluster_id, "-c", str(ctl.config_path),
                         "--release-version", kafka_release()]) == 0
    assert not (ctl.data_dir / PART).exists()
    ctl.formatted = True
    try:
        ctl.start()
        ctl.wait_ready(90)
    finally:
        ctl.stop()
    store = FileQuorumStateStore(ctl.data_dir / PART, static_voter_ids=[1])
    state = store.read()
    assert state.data_version == 0 and state.leader_id == 1
    from kraft_server.log.quorum_state_file import render_quorum_state
    assert render_quorum_state(state, [1]) == store.path.read_bytes()
    with FileReplicatedLog.open(ctl.data_dir) as log:
        assert log.recovery_problems == [] and log.end_offset() > 0
        assert log.bootstrap_checkpoint() is None


@pytest.mark.parametrize("mode", [["--standalone"], ["--no-initial-controllers"], []])
def test_format_prints_what_kafka_prints(tmp_path, capsys, mode):
    (tmp_path / "k").mkdir(), (tmp_path / "o").mkdir()
    kcfg = _server_properties(tmp_path / "k", tmp_path / "k" / "meta")
    ocfg = _server_properties(tmp_path / "o", tmp_path / "o" / "meta")
    cluster = random_cluster_id()
    kafka = run_tool("kafka-storage", "format", "-t", cluster, "-c", str(kcfg), *mode, check=False)
    capsys.readouterr()
    code = storage_main(["format", "-t", cluster, "-c", str(ocfg), *mode, "--release-version", kafka_release()])
    ours = capsys.readouterr()
    assert code == kafka.returncode
    assert ours.out.replace(str(tmp_path / "o"), str(tmp_path / "k")) == kafka.stdout
    if code:
        assert ours.err.strip() in kafka.stdout + kafka.stderr
