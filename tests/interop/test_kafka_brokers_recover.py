"""A quorum of ours that lost its majority for good, brought back with ``kraft-metadata-quorum
recover`` while three Apache Kafka brokers of the default release serve producers (issue 39,
section 2, with real brokers).

Three controllers of ours serve three Kafka brokers (``controller.quorum.bootstrap.servers``
names the three); Kafka's VerifiableProducer (acks=all, idempotent) and VerifiableConsumer run
on a topic of 3 partitions, RF 3, ``min.insync.replicas=2``, the whole time. The leader and one
follower are killed (-9) and their directories removed; the other follower, the survivor, is
stopped. The steps of docs/operations/recover.md then run as written
(``tests/support/doc_commands.py``): ``recover`` with every broker's metadata directory, the
survivor started, two fresh controllers added back with ``add-controller``. Three variants:

* ``survivor-caught-up``: the survivor held the leader's high watermark at the loss;
* ``survivor-behind-the-brokers``: the survivor stopped (SIGSTOP) while the other two
  committed 20 more offsets and every broker fetched them: ``recover`` takes them from a
  broker's log into the recovered log, and nothing committed is lost;
* ``brokers-records-left-out`` (with ``RECOVER_LEFT_OUT=1``): the same with ``--leave-broker-records``: each broker saw a
  high watermark past the recovered log, and Kafka's broker stops itself when the survivor
  asks it to truncate below it ("below the current high watermark"); it is started again.

Checked: the brokers find the survivor on their own (it is in their bootstrap list); none
is fenced, registers anew or stops, except in the last variant, where each stops and is
restarted; every acknowledged message is consumed; every batch committed before the loss is
in the recovered log, byte for byte, where its records were kept (in the last variant the
missing ones are all at or past the offset ``recover`` printed); a topic created after the
recovery is served by every broker. The longest gap between two acknowledgements across the
loss and the recovery is printed."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.interop.test_kafka_brokers_mixed_quorum import image_of
from tests.support.doc_commands import documented_command
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import bootstrap_servers, start_brokers
from tests.support.kraft_nodes import (
    FAST_QUORUM, REPO, OurNode, agreed_leader, committed_batches, make_quorum, read_batches, wait_for,
)
from tests.support.membership_cluster import quorum_partition, voters_of
from tests.support.quorum_move import TimedProducer, healthy, log_end, log_events, longest_gap_ms
from tests.support.replication_run import check, finish
from tests.support.verifiable import VerifiableConsumer
from tools.kafka_dist.controller import random_cluster_id, run_tool
from tools.metadata_quorum.brokers import fetching_observers
from tools.metadata_quorum.client import AdminClient

pytestmark = [pytest.mark.java, pytest.mark.slow]  # ours without brokers: tests/process/test_recover_majority_loss.py

BROKERS = [100, 101, 102]
TOPIC = "recovering"
THROUGHPUT = 100  # messages a second
PAGE, RUN, GROW = "operations/recover.md", "Running recover", "Growing the quorum back"


def _report(text: str) -> None:
    sys.stderr.write(f"\n[recover-brokers] {text}\n")


def _documented(section: str, starts: str, values: dict[str, str], *more: str) -> subprocess.CompletedProcess:
    words = documented_command(PAGE, section, starts, values)
    assert words[0] == "python"
    return subprocess.run([sys.executable, *words[1:], *more], cwd=REPO, capture_output=True, text=True,
                          timeout=180)


def _wall_ms() -> int:
    return int(time.time() * 1000)


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


# The left-out variant (every broker restarts: about 11 s without acknowledgements) runs
# with RECOVER_LEFT_OUT=1; CI's 90 minutes hold the slow suite with the two supported paths.
VARIANTS = [(False, True, "survivor-caught-up"), (True, True, "survivor-behind-the-brokers")]
if os.environ.get("RECOVER_LEFT_OUT") == "1":
    VARIANTS.append((True, False, "brokers-records-left-out"))


@pytest.mark.timeout(900)
@pytest.mark.parametrize("lagging, taken", [v[:2] for v in VARIANTS], ids=[v[2] for v in VARIANTS])
def test_brokers_under_load_keep_going_through_a_recovered_majority_loss(tmp_path, lagging, taken):
    cluster = random_cluster_id()
    nodes = make_quorum(tmp_path, "dynamic", cluster, n=3)
    extra: list[OurNode] = []
    brokers, producer, consumer = [], None, None
    try:
        for n in nodes:
            n.start()
        leader, _ = agreed_leader(nodes, 120)
        bootstrap = ",".join(n.bootstrap for n in nodes)
        brokers = start_brokers(tmp_path, 3, cluster, bootstrap,
                                overrides={"initial.broker.registration.timeout.ms": "180000"})
        servers = bootstrap_servers(brokers)
        survivor = next(n for n in nodes if n is not leader)
        lost = [n for n in nodes if n is not survivor]
        wait_for(lambda: sorted(b.broker_id for b in image_of(survivor).brokers if not b.fenced) == BROKERS,
                 120, "three unfenced brokers")
        run_tool("kafka-topics", "--bootstrap-server", servers, "--create", "--topic", TOPIC, "--partitions", "3",
                 "--replication-factor", "3", "--config", "min.insync.replicas=2", timeout=120)
        wait_for(lambda: healthy(survivor, BROKERS, TOPIC), 60, "every ISR full", interval=0.5)

        work = tmp_path / "clients"
        work.mkdir()
        consumer = VerifiableConsumer(work, servers, TOPIC, group="recover-group")
        producer = TimedProducer(work, servers, TOPIC, THROUGHPUT)

        def acked_at_least(n):
            consumer.poll()
            assert producer.alive() and consumer.alive()
            return producer.num_acked() >= n
        wait_for(lambda: acked_at_least(200) and consumer.consumed, 120, "the first messages", interval=0.5)

        # The loss: once the survivor holds the leader's high watermark, two of three are gone for good.
        with AdminClient(leader.bootstrap, controllers=True) as admin:
            q = admin.describe_quorum()
            assert q.leader_id == leader.node_id and set(BROKERS) <= fetching_observers(q), q
        if lagging:  # the survivor stops fetching; the other two go on committing, the brokers fetching
            os.kill(survivor.proc.pid, signal.SIGSTOP)
            behind = log_end(survivor.data)

            def ahead():
                with AdminClient(leader.bootstrap, controllers=True) as admin:
                    hwm = admin.describe_quorum().high_watermark
                return hwm >= behind + 20 and all(log_end(b.data_dir) >= hwm for b in brokers) and hwm
            hwm = wait_for(ahead, 30, f"20 offsets committed past node {survivor.node_id}'s {behind}, on every broker",
                           interval=0.1)
        else:
            hwm = q.high_watermark
            wait_for(lambda: log_end(survivor.data) >= hwm, 30, f"node {survivor.node_id} to hold offset {hwm}",
                     interval=0.05)
        for n in lost:
            n.kill()
        loss_ms = _wall_ms()
        survivor.kill() if lagging else survivor.stop()
        before_loss = committed_batches(read_batches(leader.data), hwm)
        for n in lost:
            shutil.rmtree(n.data)
        from_offset = log_end(survivor.data)

        # recover, as documented, with every broker's metadata directory
        t0 = time.monotonic()
        out = _documented(RUN, "python -m tools.metadata_quorum recover", {"survivor.properties": str(survivor.config)},
                          *(a for b in brokers for a in ("--broker-metadata-dir", str(b.data_dir))),
                          *(() if taken else ("--leave-broker-records",)))
        recover_s = time.monotonic() - t0
        assert out.returncode == 0, out.stdout + out.stderr
        lost_ids = sorted(n.node_id for n in lost)
        assert f"lost for good: {lost_ids}; after recovery: [{survivor.node_id}]" in out.stdout, out.stdout
        lost_from = int(re.search(r"committed records from offset (\d+) on", out.stdout).group(1))
        beyond = {int(m.group(1)) for m in re.finditer(r"broker (\d+) \(.*\): holds offsets", out.stdout)}
        if lagging and taken:  # what the brokers fetched past the survivor is taken into the recovered log
            assert f"fetched and node {survivor.node_id} did not" in out.stdout, out.stdout
        elif lagging:  # left out: every broker holds committed records past the recovered log
            assert beyond == set(BROKERS), out.stdout
        _report(f"recover ({recover_s:.2f}s):\n{out.stdout}")

        # the survivor leads; the brokers find it through their bootstrap list
        survivor.start()
        part = wait_for(lambda: (p := quorum_partition(survivor)) is not None and p.leader_id == survivor.node_id
                        and p.high_watermark > from_offset and p, 90, f"node {survivor.node_id} to lead alone",
                        interval=0.2)
        led_ms = _wall_ms()
        assert list(voters_of(part)) == [survivor.node_id], part
        restarted = []

        def brokers_follow():
            for b in brokers:
                if not b.running:  # a broker that stopped itself: named by recover, or a failure
                    _report(f"broker {b.node_id} exited:\n{b.log_tail(40)}")
                    assert b.node_id in beyond, f"broker {b.node_id} exited, recover named only {sorted(beyond)}"
                    assert not taken, f"broker {b.node_id} exited although its records were taken in"
                    assert "below the current high watermark" in b.log_text(), b.log_tail(40)
                    restarted.append(b.node_id)
                    b.start()
            with AdminClient(survivor.bootstrap, controllers=True) as admin:
                return set(BROKERS) <= fetching_observers(admin.describe_quorum())
        wait_for(brokers_follow, 120, "every broker fetching from the survivor", interval=0.2)
        followed_ms = _wall_ms()
        wait_for(lambda: healthy(survivor, BROKERS, TOPIC), 120, "every broker unfenced, every ISR full",
                 interval=0.5)
        target = producer.num_acked() + 3 * THROUGHPUT
        wait_for(lambda: acked_at_least(target), 90, "messages after the recovery", interval=0.5)
        recovered_ms = _wall_ms()
        _report(f"after the loss: node {survivor.node_id} led at +{led_ms - loss_ms} ms, every broker fetched from "
                f"it at +{followed_ms - loss_ms} ms; brokers restarted: {restarted or 'none'}")

        # grow back: two fresh controllers, each an observer first, then add-controller as documented
        for new_id in (4, 5):
            (tmp_path / f"new{new_id}").mkdir()
            n = OurNode(tmp_path / f"new{new_id}", node_id=new_id, extra=FAST_QUORUM)
            extra.append(n)
            n.format_as_observer_of(survivor.bootstrap, cluster)
            n.start()

            def caught_up(new_id=new_id):
                p = quorum_partition(survivor)
                return p is not None and any(o.replica_id == new_id and p.high_watermark - o.log_end_offset < 100
                                             for o in p.observers)
            wait_for(caught_up, 90, f"node {new_id} to fetch as an observer", interval=0.3)
            res = _documented(GROW, "python -m tools.metadata_quorum --bootstrap-controller",
                              {"<survivor host:port>": survivor.bootstrap, "new.properties": str(n.kafka_config)})
            assert res.returncode == 0, res.stdout + res.stderr
        wait_for(lambda: (p := quorum_partition(survivor)) is not None
                 and set(voters_of(p)) == {survivor.node_id, 4, 5}, 90, "voters {survivor, 4, 5}", interval=0.3)
        grown_ms = _wall_ms()

        # the brokers serve a topic created after the recovery
        run_tool("kafka-topics", "--bootstrap-server", servers, "--create", "--topic", "after-recover",
                 "--partitions", "3", "--replication-factor", "3", timeout=120)
        wait_for(lambda: healthy(survivor, BROKERS, "after-recover") and healthy(survivor, BROKERS, TOPIC), 60,
                 "the new topic led by every broker, every ISR full", interval=0.5)
        target = producer.num_acked() + 3 * THROUGHPUT
        wait_for(lambda: acked_at_least(target), 90, "messages after the growth", interval=0.5)

        found = finish(producer, consumer, 120)
        check(found)

        # metadata: nothing committed before the loss is gone below what recover printed
        after = read_batches(survivor.data)
        changed = [b for b, raw in before_loss.items() if after.get(b) != raw]
        bounded = [b for b in changed if b < lost_from]
        assert not bounded, f"batches committed before the loss gone below offset {lost_from}: {bounded[:10]}"
        if taken:
            assert not changed, f"committed batches lost (from {lost_from}, as printed): {changed[:10]}"
        else:
            _report(f"{len(changed)} batches committed before the loss are gone, all from offset {lost_from} on, "
                    "as printed")
        if lagging and not taken:  # a running Kafka broker stops itself rather than truncate below its HWM
            assert sorted(set(restarted)) == BROKERS, restarted
        events = [e for e in log_events(survivor.data) if e[0] >= from_offset]
        offline = [e for e in events if e[1] == "offline"]
        assert not offline or not taken, f"partitions left without a leader: {offline}"
        churn = sorted({b for _, what, b in events if what in ("fence", "register")})
        assert churn == sorted(set(restarted)), f"brokers fenced or registered anew after the loss: {events}"

        gaps = {"loss to recovered": longest_gap_ms(producer.ack_times, loss_ms, recovered_ms),
                "growth": longest_gap_ms(producer.ack_times, recovered_ms, grown_ms),
                "whole run": longest_gap_ms(producer.ack_times)}
        _report(f"{'survivor behind the brokers' if lagging else 'survivor caught up'}"
                f"{'' if taken else ', their records left out'}: "
                f"{len(found['acked'])} acknowledged, all consumed; {len(before_loss)} batches committed before "
                f"the loss (to {hwm}); longest gap between acknowledgements (ms): {gaps}")
    finally:
        for tool_proc in (producer, consumer):
            if tool_proc is not None:
                tool_proc.close()
        for b in brokers:
            b.close()
        for n in nodes + extra:
            n.kill()

