"""``kraft-metadata-quorum recover`` on Apache Kafka's own controllers (issue 39,
section 2: Kafka has no supported way back from a lost majority).

Three Kafka controllers of the pinned release (a dynamic quorum, NoOpRecords every
50 ms) run until the follower chosen to survive has caught up; all three are
killed (-9) and two directories removed. Our tool reads the survivor's directory as
Kafka wrote it (no high-watermark hint there: the bound is its snapshot, or 0),
writes the survivor's voter set, and the Kafka controller started again on it leads
alone, with every batch the old leader reported committed still in its log.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import read_batches, wait_for
from tests.support.membership_cluster import quorum_partition, voters_of
from tools.kafka_dist.controller import KafkaController, free_port, random_cluster_id
from wire.records import read_header
from wire.uuids import random_directory_id, uuid_to_str

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.java
FAST = {"controller.quorum.election.timeout.ms": "750", "controller.quorum.fetch.timeout.ms": "1500",
        "metadata.max.idle.interval.ms": "50"}


def _log_end(data: Path) -> int:
    return max((read_header(raw).next_offset for raw in read_batches(data).values()), default=0)


@pytest.mark.slow  # three Kafka controllers; ours are recovered in make test
def test_a_kafka_controller_that_survived_alone_leads_again(tmp_path):
    need_jdk()
    cluster_id = random_cluster_id()
    ports = {i: free_port() for i in (1, 2, 3)}
    voters = ",".join(f"{i}@127.0.0.1:{p}:{uuid_to_str(random_directory_id())}" for i, p in ports.items())
    quorum = ",".join(f"127.0.0.1:{p}" for p in ports.values())
    ctls = {i: KafkaController(tmp_path / f"k{i}", node_id=i, port=p, cluster_id=cluster_id,
                               format_mode="initial-controllers", initial_controllers=voters,
                               bootstrap_servers=quorum, overrides=FAST)
            for i, p in ports.items()}
    try:
        for c in ctls.values():
            c.format()
            c.start()

        def leader():
            for i, c in ctls.items():
                p = quorum_partition(SimpleNamespace(port=c.port))
                if p is not None and p.leader_id == i and p.high_watermark > 100:
                    return i, p
            return None
        leader_id, part = wait_for(leader, 180, "a Kafka leader past offset 100", interval=0.3)
        survivor = ctls[min(i for i in ctls if i != leader_id)]
        hwm = part.high_watermark
        wait_for(lambda: _log_end(survivor.data_dir) >= hwm, 30, f"the survivor to reach {hwm}", interval=0.1)
        committed = {b: raw for b, raw in read_batches(ctls[leader_id].data_dir).items()
                     if read_header(raw).next_offset <= hwm}
        for c in ctls.values():
            c.stop(graceful=False)
            if c is not survivor:
                shutil.rmtree(c.data_dir)

        out = subprocess.run([sys.executable, "-m", "tools.metadata_quorum", "recover", "--config",
                              str(survivor.config_path), "--lost-voters-are-gone"],
                             cwd=REPO, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
        lost = sorted(i for i in ctls if ctls[i] is not survivor)
        assert f"lost for good: {lost}; after recovery: [{survivor.node_id}]" in out.stdout, out.stdout
        epoch = int(re.search(r"\(leader epoch (\d+)\)", out.stdout).group(1))
        sys.stderr.write(f"\n[recover-kafka] {out.stdout.splitlines()[3]}\n")

        survivor.start()
        survivor.wait_active(timeout=120)
        led = wait_for(lambda: (p := quorum_partition(SimpleNamespace(port=survivor.port))) is not None
                       and p.leader_id == survivor.node_id and p.high_watermark > 0 and p, 60,
                       "the survivor to lead", interval=0.2)
        assert led.leader_epoch > epoch and list(voters_of(led)) == [survivor.node_id]
        after = read_batches(survivor.data_dir)
        start = min(after)  # Kafka may have cleaned segments below a snapshot meanwhile
        missing = [b for b, raw in committed.items() if b >= start and after.get(b) != raw]
        assert not missing, f"batches committed before the loss gone at {missing[:10]}"
        sys.stderr.write(f"[recover-kafka] Kafka controller {led.leader_id} leads alone at epoch "
                         f"{led.leader_epoch}; {len(committed)} batches committed before the loss kept\n")
    finally:
        for c in ctls.values():
            c.stop(graceful=False)
