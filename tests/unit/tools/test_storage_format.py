"""``kraft-storage`` (format, info, random-uuid) and the node's start-up check."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kraft_server.config import KafkaConfig
from kraft_server.log.bootstrap import DEFAULT_FEATURES, parse_bootstrap_snapshot, read_bootstrap_checkpoint
from kraft_server.log.file_log import FileReplicatedLog
from kraft_server.log.meta_properties import MetaProperties, read_meta_properties, write_meta_properties
from kraft_server.log.startup import StorageError, check_storage
from wire.uuids import uuid_from_str, uuid_to_str
from tools.storage.__main__ import main

REPO = Path(__file__).resolve().parents[3]
CLUSTER = "MkU3OEVBNTcwNTJENDM2Qk"
SNAP = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"


def write_config(tmp_path, *, static=False, dirs=None, node_id=1, roles="controller", extra=""):
    meta = tmp_path / "meta"
    lines = [
        f"process.roles={roles}", f"node.id={node_id}", "controller.listener.names=CONTROLLER",
        "listeners=CONTROLLER://127.0.0.1:19093", "advertised.listeners=CONTROLLER://ctl.example:29093",
        f"metadata.log.dir={meta}", f"log.dirs={','.join(str(d) for d in (dirs or [meta]))}",
    ]
    lines.append("controller.quorum.voters=1@127.0.0.1:19093" if static else
                 "controller.quorum.bootstrap.servers=127.0.0.1:19093")
    path = tmp_path / "server.properties"
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


def run(capsys, *args):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_random_uuid(capsys):
    code, out, _ = run(capsys, "random-uuid")
    assert code == 0 and len(out.strip()) == 22
    uuid_from_str(out.strip())


def test_standalone(tmp_path, capsys):
    cfg = write_config(tmp_path)
    code, out, err = run(capsys, "format", "-t", CLUSTER, "-c", cfg, "--standalone")
    assert code == 0, err
    meta_dir = tmp_path / "meta"
    assert f"Formatting dynamic metadata voter directory {meta_dir} with metadata.version 4.4-IV2." in out
    meta = read_meta_properties(meta_dir)
    assert (meta.cluster_id, meta.node_id, meta.version) == (CLUSTER, 1, 1)
    snap = parse_bootstrap_snapshot((meta_dir / SNAP).read_bytes())
    (voter,) = snap.voters.voters
    # the advertised controller listener wins over listeners; the dir id is the voter's
    assert (voter.voter_id, voter.endpoints[0].host, voter.endpoints[0].port) == (1, "ctl.example", 29093)
    assert voter.voter_directory_id == meta.directory_id
    assert read_bootstrap_checkpoint(meta_dir) == DEFAULT_FEATURES
    # and the file log sees the checkpoint
    with FileReplicatedLog.open(meta_dir) as log:
        assert log.bootstrap_checkpoint() == (meta_dir / SNAP).read_bytes()


def test_initial_controllers_and_data_dirs(tmp_path, capsys):
    data = tmp_path / "data"
    cfg = write_config(tmp_path, dirs=[data, tmp_path / "meta"], node_id=2)
    voters = "1@h1:9093:J8aAPcfLQt2bqs1JT_rMgQ,2@[::1]:9094:RfMK0YppTxK3V3jMWbHC9Q"
    code, out, err = run(capsys, "format", "--cluster-id", CLUSTER, "--config", cfg, "--initial-controllers", voters)
    assert code == 0, err
    assert f"Formatting data directory {data} with metadata.version 4.4-IV2." in out
    meta = read_meta_properties(tmp_path / "meta")
    assert uuid_to_str(meta.directory_id) == "RfMK0YppTxK3V3jMWbHC9Q"
    assert read_meta_properties(data).directory_id not in (meta.directory_id, None)
    assert (data / "bootstrap.checkpoint").exists() and not (data / SNAP).exists()
    snap = parse_bootstrap_snapshot((tmp_path / "meta" / SNAP).read_bytes())
    assert [(v.voter_id, v.endpoints[0].host) for v in snap.voters.voters] == [(1, "h1"), (2, "::1")]


def test_no_initial_controllers(tmp_path, capsys):
    cfg = write_config(tmp_path)
    code, out, err = run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-N")
    assert code == 0, err
    assert "Formatting metadata directory" in out
    assert not (tmp_path / "meta" / SNAP).exists()
    assert read_meta_properties(tmp_path / "meta").directory_id is not None


def test_static_quorum(tmp_path, capsys):
    cfg = write_config(tmp_path, static=True)
    code, _, err = run(capsys, "format", "-t", CLUSTER, "-c", cfg, "--standalone")
    assert code == 1
    assert "You cannot specify controller.quorum.voters and format the node with --initial-controllers or --standalone." in err
    code, out, err = run(capsys, "format", "-t", CLUSTER, "-c", cfg)
    assert code == 0, err
    assert "Formatting metadata directory" in out
    assert not (tmp_path / "meta" / "__cluster_metadata-0").exists()


def test_dynamic_needs_a_mode(tmp_path, capsys):
    cfg = write_config(tmp_path)
    code, _, err = run(capsys, "format", "-t", CLUSTER, "-c", cfg)
    assert code == 1
    assert err.strip() == ("Because controller.quorum.voters is not set on this controller, you must specify one of "
                           "the following: --standalone, --initial-controllers, or --no-initial-controllers.")
    assert not (tmp_path / "meta").exists()


def test_modes_are_exclusive(tmp_path, capsys):
    cfg = write_config(tmp_path)
    with pytest.raises(SystemExit):
        main(["format", "-t", CLUSTER, "-c", str(cfg), "-s", "-N"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_already_formatted(tmp_path, capsys):
    cfg = write_config(tmp_path)
    assert run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-s")[0] == 0
    before = (tmp_path / "meta" / "meta.properties").read_bytes()
    code, _, err = run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-s")
    assert code == 1
    assert f"Log directory {tmp_path / 'meta'} is already formatted. Use --ignore-formatted" in err
    code, out, _ = run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-s", "--ignore-formatted")
    assert code == 0 and "All of the log directories are already formatted." in out
    code, _, err = run(capsys, "format", "-t", "OtherClusterIdAAAAAAAAA", "-c", cfg, "-s", "-g")
    assert code == 1 and "Invalid cluster.id in:" in err
    assert (tmp_path / "meta" / "meta.properties").read_bytes() == before


def test_ignore_formatted_formats_the_others(tmp_path, capsys):
    data = tmp_path / "data"
    cfg = write_config(tmp_path, dirs=[data, tmp_path / "meta"])
    assert run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-N")[0] == 0
    import shutil
    shutil.rmtree(data)
    code, out, err = run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-N", "-g")
    assert code == 0, err
    assert f"Formatting data directory {data}" in out and "Formatting metadata" not in out


def test_release_version(tmp_path, capsys):
    cfg = write_config(tmp_path)
    code, _, err = run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-s", "-r", "9.9")
    assert code == 1 and err.startswith("Unknown metadata.version '9.9'. Supported metadata.version are: 3.3-IV3")
    assert run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-s", "-r", "4.3")[0] == 0
    assert read_bootstrap_checkpoint(tmp_path / "meta")["metadata.version"] == 30


@pytest.mark.parametrize("release, levels", [
    # Kafka 4.4.0's Feature.defaultLevel for each release (a release name means its newest level)
    (None, {"metadata.version": 33, "eligible.leader.replicas.version": 1, "group.version": 1,
            "share.version": 2, "streams.version": 1, "transaction.version": 2}),
    ("4.4-IV0", {"metadata.version": 31, "eligible.leader.replicas.version": 1, "group.version": 1,
                 "share.version": 2, "streams.version": 1, "transaction.version": 2}),
    ("4.3", {"metadata.version": 30, "eligible.leader.replicas.version": 1, "group.version": 1,
             "share.version": 1, "streams.version": 1, "transaction.version": 2}),
    ("4.0", {"metadata.version": 25, "group.version": 1, "transaction.version": 2}),
    ("4.0.1", {"metadata.version": 25, "group.version": 1, "transaction.version": 2}),
    ("4.0-IV0", {"metadata.version": 22, "group.version": 1}),
    ("3.9", {"metadata.version": 21}),
    ("3.9-IV0", {"metadata.version": 21}),
    ("3.3", {"metadata.version": 7}),
])
def test_release_versions_and_their_feature_levels(tmp_path, capsys, release, levels):
    cfg = write_config(tmp_path)
    code, out, err = run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-s", *(["-r", release] if release else []))
    assert code == 0, err
    assert read_bootstrap_checkpoint(tmp_path / "meta") == levels
    from kraft_server.common.metadata_version import name
    assert f"with metadata.version {name(levels['metadata.version'])}." in out


@pytest.mark.parametrize("release", ["4.5", "4.5-IV0", "3.2", "3.3-IV2", "latest", ""])
def test_release_versions_kafka_refuses(tmp_path, capsys, release):
    cfg = write_config(tmp_path)
    code, _, err = run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-s", "-r", release)
    assert code == 1
    assert err.startswith(f"Unknown metadata.version '{release}'. Supported metadata.version are: 3.3-IV3, ")
    assert err.rstrip().endswith("4.3-IV0, 4.4-IV0, 4.4-IV1, 4.4-IV2")
    assert not (tmp_path / "meta" / "meta.properties").exists()


def test_scram_needs_3_5_iv2(tmp_path, capsys):
    cfg = write_config(tmp_path)
    scram = "SCRAM-SHA-256=[name=alice,password=alice-secret]"
    code, _, err = run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-s", "-r", "3.5-IV1", "-S", scram)
    assert code == 1 and err.strip() == "SCRAM is only supported in metadata.version 3.5-IV2 or later."
    assert run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-s", "-r", "3.5-IV2", "-S", scram)[0] == 0


def test_config_errors_are_reported(tmp_path, capsys):
    cfg = write_config(tmp_path, extra="node.id=abc\n")
    code, _, err = run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-s")
    assert code == 1
    assert "ConfigError: Invalid value abc for configuration node.id: Not a number of type INT" in err


def test_info(tmp_path, capsys):
    cfg = write_config(tmp_path)
    code, out, _ = run(capsys, "info", "-c", cfg)
    assert code == 1 and out == f"Found problem:\n  {tmp_path / 'meta'} does not exist\n\n"
    (tmp_path / "meta").mkdir()
    code, out, _ = run(capsys, "info", "-c", cfg)
    assert code == 1
    assert out == f"Found log directory:\n  {tmp_path / 'meta'}\n\nFound problem:\n  {tmp_path / 'meta'} is not formatted.\n\n"
    run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-s")
    code, out, _ = run(capsys, "info", "-c", cfg)
    dir_id = uuid_to_str(read_meta_properties(tmp_path / "meta").directory_id)
    assert code == 0
    assert out == (f"Found log directory:\n  {tmp_path / 'meta'}\n\n"
                   f"Found metadata: {{cluster.id={CLUSTER}, directory.id={dir_id}, node.id=1, version=1}}\n\n")


def test_runs_as_a_module(tmp_path):
    cfg = write_config(tmp_path)
    env_py = [sys.executable, "-m", "tools.storage"]
    cid = subprocess.run(env_py + ["random-uuid"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    proc = subprocess.run(env_py + ["format", "-t", cid, "-c", str(cfg), "-s"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert read_meta_properties(tmp_path / "meta").cluster_id == cid


# -- the node's start-up check -------------------------------------------------------------

def test_startup_refuses_unformatted(tmp_path):
    config = KafkaConfig.from_file(write_config(tmp_path))
    with pytest.raises(StorageError) as info:
        check_storage(config)
    assert "kraft-storage format --cluster-id $(kraft-storage random-uuid) --standalone" in str(info.value)
    assert info.value.path == tmp_path / "meta"
    (tmp_path / "meta").mkdir()
    with pytest.raises(StorageError, match="No `meta.properties` found"):
        check_storage(config)


def test_startup_accepts_a_formatted_dir(tmp_path, capsys):
    cfg = write_config(tmp_path)
    run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-s")
    info = check_storage(KafkaConfig.from_file(cfg))
    assert (info.cluster_id, info.node_id) == (CLUSTER, 1)
    assert info.directory_id == read_meta_properties(tmp_path / "meta").directory_id


def test_startup_refuses_another_node_or_cluster(tmp_path, capsys):
    cfg = write_config(tmp_path)
    run(capsys, "format", "-t", CLUSTER, "-c", cfg, "-s")
    other = KafkaConfig.from_file(write_config(tmp_path, node_id=7))
    with pytest.raises(StorageError, match="Stored node id 1 doesn't match previous node id 7"):
        check_storage(other)


def test_startup_refuses_mixed_clusters_and_adds_missing_dir_ids(tmp_path):
    data, meta = tmp_path / "data", tmp_path / "meta"
    config = KafkaConfig.from_file(write_config(tmp_path, dirs=[data, meta]))
    data.mkdir(), meta.mkdir()
    write_meta_properties(data, MetaProperties("A", 1, None))
    write_meta_properties(meta, MetaProperties("A", 1, None))
    info = check_storage(config)
    assert read_meta_properties(data).directory_id is not None
    assert info.directory_id == read_meta_properties(meta).directory_id
    write_meta_properties(meta, MetaProperties("B", 1, info.directory_id))
    with pytest.raises(StorageError, match="Invalid cluster.id: expected B .*, but read A") as err:
        check_storage(config)
    assert err.value.path == data / "meta.properties"


def test_startup_refuses_an_unformatted_log_dir_and_skips_an_unreadable_one(tmp_path):
    data, meta = tmp_path / "data", tmp_path / "meta"
    config = KafkaConfig.from_file(write_config(tmp_path, dirs=[data, meta]))
    meta.mkdir()
    write_meta_properties(meta, MetaProperties("A", 1, None))
    with pytest.raises(StorageError, match="No `meta.properties` found") as err:
        check_storage(config)
    assert err.value.path == data
    data.write_text("a file, not a directory\n")  # Kafka counts it a failed directory
    assert check_storage(config).dirs.keys() == {meta}
