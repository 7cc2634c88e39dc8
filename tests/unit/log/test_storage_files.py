"""The small files, byte for byte as Kafka 4.3.1 writes them: meta.properties,
quorum-state (data_version 0 and 1), leader-epoch-checkpoint, partition.metadata,
bootstrap.checkpoint and the bootstrap snapshot; plus the epoch-cache rules."""
from __future__ import annotations

import json
import re
import shutil
import uuid
from pathlib import Path

import pytest

from kraft_server.log.bootstrap import (
    DEFAULT_FEATURES,
    BootstrapRecords,
    DynamicVoter,
    DynamicVoterError,
    parse_bootstrap_checkpoint,
    parse_bootstrap_snapshot,
    parse_dynamic_voters,
    read_bootstrap_records,
    render_bootstrap_checkpoint,
    render_bootstrap_snapshot,
    write_bootstrap_checkpoint,
)
from kraft_server.log.epoch_cache import LeaderEpochCache
from kraft_server.log.meta_properties import (
    MetaProperties,
    MetaPropertiesError,
    read_meta_properties,
    render,
    write_meta_properties,
)
from kraft_server.log.quorum_state_file import FileQuorumStateStore, QuorumStateError, parse_quorum_state, render_quorum_state
from wire.uuids import random_directory_id, random_uuid, uuid_from_str, uuid_to_str
from kraft_server.common.values import ElectionState, OffsetAndEpoch
from wire.records import frame_metadata_record, iter_batches

DATA = Path(__file__).parents[2] / "data/net"
DIR_ID = uuid_from_str("J8aAPcfLQt2bqs1JT_rMgQ")

# -- uuids ------------------------------------------------------------------------------

def test_uuid_text_form():
    assert uuid_to_str(uuid.UUID(int=1)) == "AAAAAAAAAAAAAAAAAAAAAQ"
    assert uuid_from_str("AAAAAAAAAAAAAAAAAAAAAQ") == uuid.UUID(int=1)
    for _ in range(200):
        u = random_uuid()
        s = uuid_to_str(u)
        assert len(s) == 22 and not s.startswith("-") and u.int >= 100
        assert uuid_from_str(s) == u
    assert random_directory_id() != random_directory_id()
    with pytest.raises(ValueError):
        uuid_from_str("bad")


# -- meta.properties ------------------------------------------------------------------------

def test_meta_properties_text(tmp_path):
    meta = MetaProperties(cluster_id="AAAAAAAAAAAAAAAAAAAAAQ", node_id=1, directory_id=DIR_ID)
    write_meta_properties(tmp_path, meta)
    lines = (tmp_path / "meta.properties").read_text().split("\n")
    assert lines[0] == "#"
    assert re.fullmatch(r"#\w{3} \w{3} \d\d \d\d:\d\d:\d\d \S+ \d{4}", lines[1])
    assert lines[2:] == ["node.id=1", "directory.id=J8aAPcfLQt2bqs1JT_rMgQ", "version=1",
                         "cluster.id=AAAAAAAAAAAAAAAAAAAAAQ", ""]
    assert read_meta_properties(tmp_path) == meta
    assert not (tmp_path / "meta.properties.tmp").exists()


def test_meta_properties_as_kafka_wrote_it(tmp_path):
    (tmp_path / "meta.properties").write_text(
        "#\n#Mon Nov 23 09:10:11 UTC 2026\nnode.id=1\ndirectory.id=RfMK0YppTxK3V3jMWbHC9Q\n"
        "version=1\ncluster.id=AAAAAAAAAAAAAAAAAAAAAQ\n")
    meta = read_meta_properties(tmp_path)
    assert (meta.cluster_id, meta.node_id, uuid_to_str(meta.directory_id)) == (
        "AAAAAAAAAAAAAAAAAAAAAQ", 1, "RfMK0YppTxK3V3jMWbHC9Q")


def test_meta_properties_v0_and_errors(tmp_path):
    (tmp_path / "meta.properties").write_text("version=0\nbroker.id=4\ncluster.id=abc\n")
    assert read_meta_properties(tmp_path) == MetaProperties("abc", 4, None, 0)
    (tmp_path / "meta.properties").write_text("version=1\ncluster.id=abc\n")
    with pytest.raises(MetaPropertiesError, match="node.id was not found"):
        read_meta_properties(tmp_path)
    assert read_meta_properties(tmp_path / "nowhere") is None


def test_properties_escaping_round_trips():
    text = render({"cluster.id": "a=b:c #d", "node.id": "1"})
    from kraft_server.config import parse_properties
    assert parse_properties(text) == {"cluster.id": "a=b:c #d", "node.id": "1"}


# -- quorum-state ---------------------------------------------------------------------------

def test_quorum_state_v1_text():
    state = ElectionState(epoch=2, leader_id=-1, voted_id=1, voted_directory_id=DIR_ID, data_version=1)
    text = render_quorum_state(state)
    assert text == (b'{"leaderId":-1,"leaderEpoch":2,"votedId":1,'
                    b'"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}')
    assert parse_quorum_state(text) == state


def test_quorum_state_v0_text():
    state = ElectionState(epoch=1, leader_id=1, voted_id=-1, voted_directory_id=uuid.UUID(int=0), data_version=0)
    assert render_quorum_state(state, [1]) == (
        b'{"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,'
        b'"currentVoters":[{"voterId":1}],"data_version":0}')


def test_quorum_state_as_kafka_wrote_it():
    kafka = b'{"leaderId":1,"leaderEpoch":1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}'
    state = parse_quorum_state(kafka)
    assert state == ElectionState(epoch=1, leader_id=1, voted_id=-1, voted_directory_id=uuid.UUID(int=0), data_version=1)
    assert render_quorum_state(state) == kafka


def test_quorum_state_store_is_atomic(tmp_path):
    store = FileQuorumStateStore(tmp_path)
    store.write(ElectionState(epoch=5, leader_id=2, voted_directory_id=uuid.UUID(int=0)))
    assert not (tmp_path / "quorum-state.tmp").exists()
    first, check = (tmp_path / "quorum-state").read_text().splitlines()
    assert json.loads(first)["leaderEpoch"] == 5 and check.startswith("crc32c=")
    (tmp_path / "quorum-state").write_text("{not json")
    with pytest.raises(QuorumStateError):
        store.read()


def test_a_flipped_bit_in_quorum_state_is_found(tmp_path):
    """The check line catches a flip that still parses (votedId 1 -> 0 is one bit)."""
    store = FileQuorumStateStore(tmp_path)
    store.write(ElectionState(epoch=5, leader_id=-1, voted_id=1, voted_directory_id=uuid.UUID(int=0)))
    data = (tmp_path / "quorum-state").read_bytes()
    assert store.read().voted_id == 1
    flipped = data.replace(b'"votedId":1', b'"votedId":0')
    assert flipped != data and parse_quorum_state(flipped.split(b"\n")[0]).voted_id == 0
    (tmp_path / "quorum-state").write_bytes(flipped)
    with pytest.raises(QuorumStateError, match="corrupt"):
        store.read()
    # a file Kafka wrote (one line, no check) is read unchecked
    (tmp_path / "quorum-state").write_bytes(data.split(b"\n")[0])
    assert store.read().voted_id == 1


# -- leader-epoch-checkpoint ----------------------------------------------------------------

def test_epoch_cache_rules():
    cache = LeaderEpochCache()
    assert cache.end_offset_for(1, 0) is None
    assert cache.assign(1, 0) and cache.assign(3, 10) and not cache.assign(2, 12)
    assert cache.end_offset_for(1, 20) == OffsetAndEpoch(10, 1)
    assert cache.end_offset_for(2, 20) == OffsetAndEpoch(10, 1)
    assert cache.end_offset_for(3, 20) == OffsetAndEpoch(20, 3)
    assert cache.end_offset_for(4, 20) is None
    assert cache.end_offset_for(0, 20) == OffsetAndEpoch(0, 0)
    assert cache.end_offset_for(-1, 20) is None
    cache.assign(5, 10)  # a newer epoch at the same offset replaces the older entry
    assert cache.entries == [(1, 0), (5, 10)]
    cache.truncate_from_start(4)
    assert cache.entries == [(1, 4), (5, 10)]
    cache.truncate_from_end(10)
    assert cache.entries == [(1, 4)]
    assert cache.render() == b"0\n1\n1 4\n"
    assert LeaderEpochCache.parse("0\n2\n1 0\n3 10\n").entries == [(1, 0), (3, 10)]


# -- bootstrap files ------------------------------------------------------------------------

def test_bootstrap_checkpoint_shape():
    data = render_bootstrap_checkpoint(DEFAULT_FEATURES, now_ms=1234)
    batches = list(iter_batches(data))
    assert [(b.base_offset, b.is_control, len(b.records)) for b in batches] == [(0, True, 1), (1, False, 6), (7, True, 1)]
    assert all(b.partition_leader_epoch == 0 for b in batches)
    assert list(parse_bootstrap_checkpoint(data)) == [
        "metadata.version", "eligible.leader.replicas.version", "group.version", "share.version",
        "streams.version", "transaction.version"]
    assert len(data) == 411  # the size of Kafka 4.3.1's own file


def test_a_node_reads_its_bootstrap_records_once(tmp_path, caplog):
    extra = [frame_metadata_record(99, 0, b"\x01\x02")]  # the levels are split off, the rest kept as is
    write_bootstrap_checkpoint(tmp_path, DEFAULT_FEATURES, now_ms=1, extra=extra)
    records = read_bootstrap_records(tmp_path)
    assert (records.levels, records.extra) == (DEFAULT_FEATURES, extra)
    assert read_bootstrap_records(tmp_path / "nowhere") == BootstrapRecords({}, [])
    (tmp_path / "bootstrap.checkpoint").write_bytes(b"\x00" * 11 + b"\x05" + b"\xff" * 20)
    with caplog.at_level("WARNING"):
        assert read_bootstrap_records(tmp_path) == BootstrapRecords({}, [])  # the node still starts
    assert "cannot read the bootstrap records" in caplog.text


def test_a_node_reads_kafkas_own_bootstrap_checkpoint(tmp_path):
    shutil.copy(DATA / "kafka-4.3.1-bootstrap.checkpoint", tmp_path / "bootstrap.checkpoint")
    assert read_bootstrap_records(tmp_path).levels["metadata.version"] == 30


def test_bootstrap_snapshot_shape():
    voters = [DynamicVoter(1, "127.0.0.1", 19093, DIR_ID)]
    data = render_bootstrap_snapshot(voters, "CONTROLLER", now_ms=99)
    batches = list(iter_batches(data))
    assert [(b.base_offset, len(b.records)) for b in batches] == [(0, 3), (3, 1)]
    assert len(data) == 241  # the size of Kafka 4.3.1's own file for one voter on 127.0.0.1
    parsed = parse_bootstrap_snapshot(data)
    assert parsed.kraft_version == 1
    (voter,) = parsed.voters.voters
    assert (voter.voter_id, voter.voter_directory_id, voter.endpoints[0].name, voter.endpoints[0].port) == (
        1, DIR_ID, "CONTROLLER", 19093)
    assert (voter.kraft_version_feature.min_supported_version, voter.kraft_version_feature.max_supported_version) == (0, 1)


@pytest.mark.parametrize("text, message", [
    ("garbage", "No @ found in dynamic voter string."),
    ("@h:1:J8aAPcfLQt2bqs1JT_rMgQ", "Invalid @ at beginning"),
    ("x@h:1:J8aAPcfLQt2bqs1JT_rMgQ", "Failed to parse node id"),
    ("1@h", "No colon following hostname"),
    ("1@h:1", "No colon following port"),
    ("1@[::1:1:J8aAPcfLQt2bqs1JT_rMgQ", "no right bracket"),
    ("1@h:x:J8aAPcfLQt2bqs1JT_rMgQ", "Failed to parse port"),
    ("1@h:1:bad", "Failed to parse directory ID"),
    ("1@h:1:AAAAAAAAAAAAAAAAAAAAAA", "zero-valued directory ID"),
    ("1@h:1:J8aAPcfLQt2bqs1JT_rMgQ,1@g:2:RfMK0YppTxK3V3jMWbHC9Q", "more than once"),
])
def test_dynamic_voter_errors(text, message):
    with pytest.raises(DynamicVoterError, match=re.escape(message)):
        parse_dynamic_voters(text)


def test_dynamic_voter_forms():
    v = parse_dynamic_voters("1@[::1]:9093:J8aAPcfLQt2bqs1JT_rMgQ,2@host:1:RfMK0YppTxK3V3jMWbHC9Q")
    assert v[0] == DynamicVoter(1, "::1", 9093, DIR_ID)
    assert str(v[0]) == "1@[::1]:9093:J8aAPcfLQt2bqs1JT_rMgQ"
