"""``kraft-storage format --add-scram`` writes the same UserScramCredentialRecords as
Apache Kafka 4.3.1's ``kafka-storage format --add-scram`` (salt and iterations given,
so both are deterministic), and refuses bad arguments with ScramParser's messages."""
from __future__ import annotations

import base64
import subprocess
import sys

import pytest

from kraft_server.log.bootstrap import bootstrap_extra_records
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import REPO
from tools.kafka_dist.controller import random_cluster_id, run_tool
from tools.storage.scram_arg import ScramArgError, parse_add_scram

pytestmark = pytest.mark.java
SALT = base64.b64encode(b"a-fixed-salt-for-the-test").decode()
ARGS = [f'SCRAM-SHA-256=[name=alice,password=alice-secret,salt="{SALT}",iterations=8192]',
        f"SCRAM-SHA-512=[name=bob,password=bob-secret,salt={SALT}]"]


def _props(directory) -> str:
    return (f"process.roles=controller\nnode.id=1\ncontroller.listener.names=CONTROLLER\n"
            f"listeners=CONTROLLER://127.0.0.1:19093\ncontroller.quorum.bootstrap.servers=127.0.0.1:19093\n"
            f"log.dirs={directory}\n")


def test_ours_and_kafkas_add_scram_write_the_same_records(tmp_path):
    need_jdk()
    cluster_id = random_cluster_id()
    flags = [a for arg in ARGS for a in ("--add-scram", arg)]
    (tmp_path / "kafka.properties").write_text(_props(tmp_path / "kafka"))
    (tmp_path / "ours.properties").write_text(_props(tmp_path / "ours"))
    run_tool("kafka-storage", "format", "--cluster-id", cluster_id, "--standalone",
             "--config", str(tmp_path / "kafka.properties"), *flags)
    subprocess.run([sys.executable, "-m", "tools.storage", "format", "--cluster-id", cluster_id, "--standalone",
                    "--config", str(tmp_path / "ours.properties"), *flags], check=True, cwd=REPO, timeout=60)
    theirs = bootstrap_extra_records(tmp_path / "kafka")
    assert len(theirs) == 2
    assert bootstrap_extra_records(tmp_path / "ours") == theirs


@pytest.mark.parametrize("arg, message", [
    ("SCRAM-SHA-1=[name=a,password=b]", "The add-scram mechanism SCRAM-SHA-1 is not supported."),
    ("SCRAM-SHA-256=name=a,password=b]", "Expected configuration string to start with ["),
    ("SCRAM-SHA-256=[password=b]", "You must supply 'name' to add-scram"),
    ("SCRAM-SHA-256=[name=a]", "You must supply one of 'password' or 'saltedpassword' to add-scram"),
    ("SCRAM-SHA-256=[name=a,password=b,iterations=10]",
     "The 'iterations' value must be >= 4096 for add-scram using SCRAM-SHA-256"),
])
def test_bad_add_scram_arguments(arg, message):
    with pytest.raises(ScramArgError) as err:
        parse_add_scram(arg)
    assert str(err.value) == message
