"""The storage check, config → core config, and the entry point's refusals."""
from __future__ import annotations


import pytest

from kraft_server.__main__ import main
from kraft_server.config import KafkaConfig
from kraft_server.log.meta_properties import MetaProperties, write_meta_properties
from wire.uuids import random_directory_id
from kraft_server.log.startup import StorageError, check_storage
from kraft_server.shell.quorum_setup import quorum_config



def props(tmp_path, **extra):
    p = {
        "process.roles": "controller", "node.id": "1",
        "listeners": "CONTROLLER://127.0.0.1:9093,CLIENT://127.0.0.1:9092",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,CLIENT:PLAINTEXT",
        "controller.quorum.bootstrap.servers": "127.0.0.1:9093",
        "metadata.log.dir": str(tmp_path / "data"), "log.dirs": str(tmp_path / "data"),
    }
    p.update(extra)
    return p


def test_unformatted_directory_is_refused_with_a_hint(tmp_path):
    config = KafkaConfig.from_props(props(tmp_path))
    with pytest.raises(StorageError) as err:
        check_storage(config, "my.properties")
    text = str(err.value)
    assert "meta.properties" in text and "format" in text and "--standalone" in text
    assert "my.properties" in text


def test_node_id_mismatch_is_refused(tmp_path):
    (tmp_path / "data").mkdir()
    write_meta_properties(tmp_path / "data", MetaProperties("abc", 2, random_directory_id()))
    with pytest.raises(StorageError, match="Stored node id 2"):
        check_storage(KafkaConfig.from_props(props(tmp_path)))


def test_formatted_directory_gives_the_core_its_config(tmp_path):
    (tmp_path / "data").mkdir()
    dir_id = random_directory_id()
    write_meta_properties(tmp_path / "data", MetaProperties("MkU3OEVBNTcwNTJENDM2Qg", 1, dir_id))
    config = KafkaConfig.from_props(props(tmp_path, **{"controller.quorum.request.timeout.ms": "1234"}))
    meta = check_storage(config)
    q = quorum_config(config, meta)
    assert (q.node_id, q.cluster_id, q.directory_id) == (1, "MkU3OEVBNTcwNTJENDM2Qg", dir_id)
    assert [(e.name, e.port) for e in q.listeners] == [("CONTROLLER", 9093)]  # controller listener only
    assert q.bootstrap_servers == (("127.0.0.1", 9093),) and q.request_timeout_ms == 1234


def test_main_reports_an_unformatted_directory(tmp_path, capsys):
    cfg = tmp_path / "server.properties"
    cfg.write_text("\n".join(f"{k}={v}" for k, v in props(tmp_path).items()))
    assert main([str(cfg)]) == 1
    assert "format" in capsys.readouterr().err


def test_main_usage(capsys):
    assert main([]) == 2
    assert "usage" in capsys.readouterr().err
