"""A quorum that lost its majority for good, brought back with ``kraft-metadata-quorum
recover`` (issue 39, section 2), with our nodes as processes under load
(``tools/raft_load_server.py``, as ``test_membership_scenarios.py``).

Three voters commit records; once the follower chosen to survive holds every batch
the recorder saw committed, the leader and the other follower are killed (-9) and
their directories removed. ``recover`` refuses without ``--lost-voters-are-gone``,
then writes the survivor's new voter set. Kafka's ``kafka-dump-log
--cluster-metadata-decoder`` reads the recovered segment (the VotersRecord of the
survivor alone at the printed offset, in the printed epoch), and a Kafka controller
of the pinned release started on a copy of the directory leads alone. Our survivor
then leads alone, every batch seen committed before the loss is still there byte
for byte, and two new nodes join with ``add-controller``; the grown quorum keeps
committing without losing anything (``check_no_loss``).

The recover and add-controller commands are taken from docs/operations/recover.md ("Running
recover", "Growing the quorum back") and run as written there (``tests/support/doc_commands.py``).

Every process is killed in a finalizer; every wait polls with a deadline.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support.doc_commands import documented_command
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import PARTITION, agreed_leader, read_batches, wait_for
from tests.support.membership_cluster import (
    Recorder, check_no_loss, format_dynamic, format_observer, new_node, quorum_partition,
    voters_of,
)
from tools.kafka_dist.controller import KafkaController, random_cluster_id, run_tool
from wire.records import read_header

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.java


def _report(text: str) -> None:
    sys.stderr.write(f"\n[recover] {text}\n")


def _recover(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tools.metadata_quorum", "recover", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


PAGE = "operations/recover.md"  # run as written there


def _as_documented(section: str, starts: str, values: dict[str, str]) -> subprocess.CompletedProcess[str]:
    words = documented_command(PAGE, section, starts, values)
    assert words[0] == "python"
    return subprocess.run([sys.executable, *words[1:]], cwd=REPO, capture_output=True, text=True, timeout=120)


def _log_end(data) -> int:
    return max((read_header(raw).next_offset for raw in read_batches(data).values()), default=0)


@pytest.fixture
def nodes(tmp_path):
    need_jdk()
    made = {}
    yield made
    for n in made.values():
        n.kill()


def test_a_lone_survivor_leads_and_the_quorum_grows_back(tmp_path, nodes):
    cluster_id = random_cluster_id()
    for i in (1, 2, 3):
        nodes[i] = new_node(tmp_path, i)
    three = [nodes[i] for i in (1, 2, 3)]
    format_dynamic(three, cluster_id)
    for n in three:
        n.start()
    leader_id = agreed_leader(three, timeout=90)[0].node_id
    recorder = Recorder(three).start()
    wait_for(lambda: recorder.max_hwm >= 200 and len(recorder.committed) >= 20, 90,
             "200 offsets committed and sampled", interval=0.2)
    recorder.stop()
    survivor = next(n for n in three if n.node_id != leader_id)
    lost = [n for n in three if n is not survivor]
    seen_end = max(read_header(raw).next_offset for raw in recorder.committed.values())
    wait_for(lambda: _log_end(survivor.data) >= seen_end, 30,
             f"node {survivor.node_id} to hold every batch seen committed (to {seen_end})", interval=0.1)
    survivor.kill()  # stopped, as recover wants; then the majority is lost for good
    for n in lost:
        n.kill()
        shutil.rmtree(n.data)
    before = read_batches(survivor.data)
    survivor_end = _log_end(survivor.data)

    refused = _recover("--config", str(survivor.config))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "--lost-voters-are-gone" in refused.stderr and read_batches(survivor.data) == before
    t0 = time.monotonic()
    out = _as_documented("Running recover", "python -m tools.metadata_quorum recover", {"survivor.properties": str(survivor.config)})
    recover_s = time.monotonic() - t0
    assert out.returncode == 0, out.stdout + out.stderr
    lost_ids = sorted(n.node_id for n in lost)
    assert f"lost for good: {lost_ids}; after recovery: [{survivor.node_id}]" in out.stdout
    assert f"offsets {survivor_end} and on: anything the lost voters committed" in out.stdout
    m = re.search(r"at offset (\d+) \(leader epoch (\d+)\)", out.stdout)
    assert m and int(m.group(1)) == survivor_end, out.stdout
    offset, epoch = int(m.group(1)), int(m.group(2))
    lost_from = int(re.search(r"committed records from offset (\d+) on", out.stdout).group(1))
    assert lost_from <= survivor_end
    _report(f"survivor {survivor.node_id}: log end {survivor_end}, recovery batch at {offset} epoch {epoch}; "
            f"loss bounded from offset {lost_from}; {len(recorder.committed)} batches seen committed to {seen_end}; "
            f"recover took {recover_s:.2f}s (a Python start included)")

    # Kafka reads it: kafka-dump-log decodes the batch, and its controller leads on a copy.
    segment = sorted((survivor.data / PARTITION).glob("*.log"))[-1]
    dump = run_tool("kafka-dump-log", "--cluster-metadata-decoder", "--files", str(segment), timeout=120).stdout
    line = next((ln for ln in dump.splitlines() if f"offset: {offset} " in ln and "KRaftVoters" in ln), None)
    assert line is not None, dump[-3000:]
    assert re.search(rf'"voterId":{survivor.node_id}\b', line) and not any(
        re.search(rf'"voterId":{i}\b', line) for i in lost_ids), line
    header = next(ln for ln in dump.splitlines() if ln.startswith(f"baseOffset: {offset} "))
    assert f"partitionLeaderEpoch: {epoch} " in header and "isControl: true" in header, header
    kafka = KafkaController(tmp_path / "kafka-copy", node_id=survivor.node_id, port=survivor.port,
                            cluster_id=cluster_id, format_mode="no-initial-controllers")
    shutil.copytree(survivor.data, kafka.data_dir)
    kafka.formatted = True
    at_port = SimpleNamespace(port=survivor.port)
    try:
        kafka.start()
        kafka.wait_active(timeout=120)
        quorum = wait_for(lambda: (p := quorum_partition(at_port)) is not None and p.high_watermark > offset and p,
                          60, "the Kafka controller to commit in its epoch", interval=0.2)
        assert quorum.leader_id == survivor.node_id and quorum.leader_epoch > epoch, quorum
        assert list(voters_of(quorum)) == [survivor.node_id], quorum
    finally:
        kafka.stop()
    _report(f"Kafka controller on a copy: leader {quorum.leader_id} at epoch {quorum.leader_epoch}")

    # Our survivor leads alone, with every batch seen committed before the loss.
    t0 = time.monotonic()
    survivor.start()

    def leads():
        part = quorum_partition(survivor)
        return part if part is not None and part.leader_id == survivor.node_id and part.high_watermark > offset \
            else None
    part = wait_for(leads, 90, f"node {survivor.node_id} to lead alone", interval=0.2)
    _report(f"node {survivor.node_id} led and committed {time.monotonic() - t0:.2f}s after its start")
    assert part.leader_epoch > epoch and list(voters_of(part)) == [survivor.node_id]
    after = read_batches(survivor.data)
    missing = [b for b, raw in recorder.committed.items() if after.get(b) != raw]
    assert not missing, f"batches committed before the loss are gone or changed at offsets {missing[:10]}"

    # The quorum grows back, one add-controller at a time, and keeps committing.
    grown = Recorder([survivor]).start()
    for new_id in (4, 5):
        n = nodes[new_id] = new_node(tmp_path, new_id)
        format_observer(n, cluster_id, survivor.bootstrap)
        grown.watch(n)
        n.start()

        def caught_up():
            p = quorum_partition(survivor)
            return p is not None and any(o.replica_id == new_id and p.high_watermark - o.log_end_offset < 500
                                         for o in p.observers)
        wait_for(caught_up, 90, f"node {new_id} to fetch as an observer", interval=0.3)
        res = _as_documented("Growing the quorum back", "python -m tools.metadata_quorum --bootstrap-controller",
                             {"<survivor host:port>": survivor.bootstrap, "new.properties": str(n.kafka_config)})
        assert res.returncode == 0, res.stdout + res.stderr
    wait_for(lambda: (p := quorum_partition(survivor)) is not None and set(voters_of(p)) == {survivor.node_id, 4, 5},
             90, "voters {survivor, 4, 5}", interval=0.3)
    start = grown.max_hwm
    wait_for(lambda: grown.max_hwm >= start + 40, 60, "40 more offsets committed", interval=0.2)
    grown.stop()
    _report(check_no_loss(grown, [survivor, nodes[4], nodes[5]]))


@pytest.mark.slow
def test_two_survivors_of_five_elect_a_leader_between_them(tmp_path, nodes):
    """Five voters, three lost for good: ``recover`` takes both survivors' properties,
    writes to the one with the longer log, and the two elect a leader (the other one
    still holds the old voter set until it fetches the new one)."""
    cluster_id = random_cluster_id()
    five = [nodes.setdefault(i, new_node(tmp_path, i)) for i in range(1, 6)]
    format_dynamic(five, cluster_id)
    for n in five:
        n.start()
    leader_id = agreed_leader(five, timeout=120)[0].node_id
    recorder = Recorder(five).start()
    wait_for(lambda: recorder.max_hwm >= 150 and len(recorder.committed) >= 10, 120,
             "150 offsets committed and sampled", interval=0.2)
    recorder.stop()
    survivors = [n for n in five if n.node_id != leader_id][:2]
    seen_end = max(read_header(raw).next_offset for raw in recorder.committed.values())
    wait_for(lambda: all(_log_end(n.data) >= seen_end for n in survivors), 30,
             f"nodes {[n.node_id for n in survivors]} to hold every batch seen committed", interval=0.1)
    for n in five:
        n.kill()
        if n not in survivors:
            shutil.rmtree(n.data)
    out = _recover(*(a for n in survivors for a in ("--config", str(n.config))), "--lost-voters-are-gone")
    assert out.returncode == 0, out.stdout + out.stderr
    chosen = int(re.search(r"Chosen: node (\d+)", out.stdout).group(1))
    ids = sorted(n.node_id for n in survivors)
    assert chosen in ids and f"after recovery: {ids}" in out.stdout, out.stdout
    _report(out.stdout.splitlines()[1])
    grown = Recorder(survivors).start()
    for n in survivors:
        n.start()

    def led():
        for n in survivors:
            p = quorum_partition(n)
            if p is not None and p.leader_id == n.node_id and sorted(voters_of(p)) == ids and p.high_watermark > 0:
                return p
        return None
    part = wait_for(led, 120, f"a leader among {ids} with voters {ids}", interval=0.2)
    _report(f"leader {part.leader_id} at epoch {part.leader_epoch}")
    start = grown.max_hwm
    wait_for(lambda: grown.max_hwm >= start + 40, 60, "40 more offsets committed", interval=0.2)
    grown.stop()
    for n in survivors:
        after = read_batches(n.data)
        missing = [b for b, raw in recorder.committed.items() if after.get(b) != raw]
        assert not missing, f"node {n.node_id}: batches committed before the loss gone at {missing[:10]}"
    _report(check_no_loss(grown, survivors))
