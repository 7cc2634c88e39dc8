"""Fast fencing of a crashed broker (issue 29): the rule of
``cluster/broker_liveness.DeathEvidence`` as tables, then stories on a one-voter
controller whose listener probes are answered by hand (the real probes and real
brokers are in ``tests/unit/net/test_listener_probe.py`` and
``tests/interop/test_kafka_broker_fast_fencing.py``)."""
from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest

from kraft_server.controller.cluster.broker_liveness import (
    ACCEPTED, ARM, DEATH, DEATH_PROBES, REFUSED, UNKNOWN, DeathEvidence, verdict,
)
from wire.messages import PartitionRecord, TopicRecord
from wire.records import encode_metadata_record

from tests.unit.controller.test_controller_brokers import Cluster, heartbeat


# -- the rule, pure ------------------------------------------------------------------------

def image(epoch=10, fenced=False, shutting_down=False, broker_id=1):
    b = SimpleNamespace(broker_id=broker_id, epoch=epoch, active=not fenced and not shutting_down,
                        record=SimpleNamespace(end_points=[SimpleNamespace(host="h", port=9092)]))
    return SimpleNamespace(brokers={broker_id: b})


def armed(ev, conns=("c1",), img=None):
    img = img or image()
    for c in conns:
        ev.heartbeat(c, 1, 10)
    (probe,) = ev.due_probes(img, 0)
    assert probe.purpose == ARM and probe.endpoints == (("h", 9092),)
    ev.probe_done(probe, [ACCEPTED], 0)
    return img


@pytest.mark.parametrize("outcomes, answer", [
    ([ACCEPTED], ACCEPTED), ([REFUSED, ACCEPTED], ACCEPTED), ([REFUSED], REFUSED),
    ([REFUSED, REFUSED], REFUSED), ([REFUSED, UNKNOWN], UNKNOWN), ([UNKNOWN], UNKNOWN), ([], UNKNOWN),
])
def test_only_every_endpoint_refusing_is_a_refusal(outcomes, answer):
    assert verdict(outcomes) == answer


def test_connections_closed_by_the_broker_and_a_refused_listener_are_death():
    ev = DeathEvidence()
    img = armed(ev)
    assert ev.due_probes(img, 5) == []  # armed, alive: nothing to probe
    ev.closed("c1", by_peer=True, now_ms=7)
    (probe,) = ev.due_probes(img, 7)
    assert probe.purpose == DEATH
    assert ev.pop_dead() is None
    ev.probe_done(probe, [REFUSED], 8)
    assert ev.pop_dead() == (1, 10)
    assert ev.due_probes(img, 9) == [] and ev.next_deadline() is None


def test_a_fenced_broker_heartbeating_is_not_probed_and_sets_no_deadline():
    """A broker in RECOVERY heartbeats while fenced: no arming probe, no timer (a busy
    loop otherwise); its unfencing commits, and the next poll arms it."""
    ev = DeathEvidence()
    ev.heartbeat("c1", 1, 10)
    assert ev.due_probes(image(fenced=True), 0) == [] and ev.next_deadline() is None
    (probe,) = ev.due_probes(image(), 5)
    assert probe.purpose == ARM
    ev.probe_done(probe, [REFUSED], 6)  # Kafka opens its listener after it is unfenced
    assert ev.due_probes(image(), 6) == [] and ev.next_deadline() == 206


@pytest.mark.parametrize("case", ["listener accepts", "probe times out", "we closed it",
                                  "another connection open", "never seen accepting",
                                  "heartbeat since", "fenced", "in controlled shutdown",
                                  "new incarnation", "disabled", "no close (SIGSTOP)"])
def test_no_death_without_the_whole_rule(case):
    ev = DeathEvidence(enabled=case != "disabled")
    img = image()
    if case == "never seen accepting":
        ev.heartbeat("c1", 1, 10)
        (arm,) = ev.due_probes(img, 0)
        ev.probe_done(arm, [REFUSED], 0)  # e.g. the listener not bound yet
    elif case == "another connection open":
        armed(ev, conns=("c1", "c2"))
    elif case != "disabled":
        armed(ev)
    if case == "no close (SIGSTOP)":
        assert all(p.purpose == ARM for p in ev.due_probes(img, 1))
        return
    ev.closed("c1", by_peer=case != "we closed it", now_ms=1)
    if case == "fenced":
        img = image(fenced=True)
    elif case == "in controlled shutdown":
        img = image(shutting_down=True)
    elif case == "new incarnation":
        img = image(epoch=55)
    probes = [p for p in ev.due_probes(img, 1) if p.purpose == DEATH]
    if case == "heartbeat since":
        ev.heartbeat("c3", 1, 10)  # it reconnected while the probe ran
    for probe in probes:
        answer = {"listener accepts": ACCEPTED, "probe times out": UNKNOWN}.get(case, REFUSED)
        ev.probe_done(probe, [answer], 2)
    if case in ("listener accepts", "probe times out", "heartbeat since"):
        assert probes, "the probe ran"
    else:
        assert not probes
    assert ev.pop_dead() is None


def test_a_listener_that_still_accepts_is_probed_a_few_times_then_left_to_the_session():
    ev = DeathEvidence()
    img = armed(ev)
    ev.closed("c1", by_peer=True, now_ms=100)
    now, probes = 100, 0
    for _ in range(20):
        for probe in ev.due_probes(img, now):
            probes += 1
            ev.probe_done(probe, [ACCEPTED], now)
        assert ev.due_probes(img, now) == []  # the retry waits
        deadline = ev.next_deadline()
        if deadline is None:
            break
        assert deadline > now
        now = deadline
    assert probes == DEATH_PROBES and ev.pop_dead() is None
    assert now - 100 < 2000  # all within ~1.3 s of the close


def test_a_refusal_on_a_retry_is_death():
    """kill -9: the heartbeat socket's EOF may arrive before the listening socket is gone."""
    ev = DeathEvidence()
    img = armed(ev)
    ev.closed("c1", by_peer=True, now_ms=0)
    (first,) = ev.due_probes(img, 0)
    ev.probe_done(first, [ACCEPTED], 1)
    assert ev.due_probes(img, 1) == []  # not before the retry is due
    assert ev.next_deadline() == 11
    (second,) = ev.due_probes(img, ev.next_deadline())
    ev.probe_done(second, [REFUSED], 120)
    assert ev.pop_dead() == (1, 10)


def test_only_the_endpoints_seen_accepting_are_probed_for_death():
    """A broker advertising a listener this controller cannot reach (a timeout) is
    still fenced on evidence: its reachable listener, seen accepting, now refuses."""
    ev = DeathEvidence()
    b = image().brokers[1]
    b.record.end_points.append(SimpleNamespace(host="10.9.9.9", port=9093))
    img = SimpleNamespace(brokers={1: b})
    ev.heartbeat("c1", 1, 10)
    (arm,) = ev.due_probes(img, 0)
    assert arm.endpoints == (("h", 9092), ("10.9.9.9", 9093))
    ev.probe_done(arm, [ACCEPTED, UNKNOWN], 1)
    ev.closed("c1", by_peer=True, now_ms=2)
    (death,) = ev.due_probes(img, 2)
    assert death.endpoints == (("h", 9092),)
    ev.probe_done(death, [REFUSED], 3)
    assert ev.pop_dead() == (1, 10)


def test_the_same_connection_heartbeating_for_a_new_epoch_moves_to_it():
    ev = DeathEvidence()
    armed(ev)
    ev.heartbeat("c1", 1, 11)
    assert ev.tracks[(1, 10)].conns == set() and ev.tracks[(1, 11)].conns == {"c1"}


# -- stories on a controller ------------------------------------------------------------------

class Probed(Cluster):
    """A Cluster whose listener probes wait in ``probes`` for the test to answer."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.probes = []
        self.controller.prober = lambda probe, done: self.probes.append((probe, done))

    def answer(self, outcome):
        probes, self.probes = self.probes, []
        for probe, done in probes:
            done([outcome] * len(probe.endpoints))
        self.run_for(10)
        return [p.purpose for p, _ in probes]

    def beat_on(self, conn, broker_id, epoch):
        out = []
        self.controller.submit_broker_heartbeat(
            heartbeat(broker_id, epoch, self.controller.image.offset), 2, out.append, conn)
        self.run_for(20)
        assert out and out[0].error_code == 0
        return out[0]

    def topic(self):
        tid = uuid.UUID(int=77)
        self.core.propose([encode_metadata_record(TopicRecord(name="t", topic_id=tid), 0),
                           encode_metadata_record(PartitionRecord(
                               partition_id=0, topic_id=tid, replicas=[1, 2], isr=[1, 2], leader=1,
                               leader_epoch=0, partition_epoch=0), 2)], self.now)
        self.run_for(100)


def two_brokers(c):
    e1, e2 = c.up(1), c.up(2)
    c.topic()
    c.beat_on("conn1", 1, e1)
    c.beat_on("conn2", 2, e2)
    assert c.answer(ACCEPTED) == [ARM, ARM]
    return e1, e2


def test_a_crashed_broker_is_fenced_at_once_with_the_session_expiry_records():
    c = Probed()
    e1, _ = two_brokers(c)
    start = c.now
    c.controller.heartbeat_connection_closed("conn1", by_peer=True)
    c.run_for(5)
    assert c.answer(REFUSED) == [DEATH]
    img = c.controller.image
    assert img.brokers.get(1).fenced and not img.brokers.get(2).fenced
    p = img.topics.by_name["t"].partitions[0]
    assert (p.leader, p.isr, p.leader_epoch) == (2, (2,), 1)  # as on session expiry
    assert c.now - start < 100  # simulated ms, not the 9 s session
    # its session went with it: a new incarnation registers at once
    r = c.register(1, incarnation=uuid.uuid4())
    assert r.error_code == 0 and r.broker_epoch != e1


def test_a_cut_connection_to_a_live_broker_fences_nobody():
    c = Probed()
    e1, e2 = two_brokers(c)
    c.controller.heartbeat_connection_closed("conn1", by_peer=True)
    for _ in range(DEATH_PROBES + 2):
        c.run_for(200)
        c.answer(ACCEPTED)  # the broker's listener still accepts
    c.beat_on("conn1b", 1, e1)  # it reconnects
    assert not c.controller.image.brokers.get(1).fenced


def test_a_new_active_controller_starts_without_evidence():
    c = Probed()
    two_brokers(c)
    c.controller.brokers.expiry(c.controller.image, True, c.core.epoch + 1, c.now)  # as on a new term
    assert c.controller.brokers.evidence.tracks == {}
    c.controller.heartbeat_connection_closed("conn1", by_peer=True)  # seen before: not its evidence
    c.run_for(50)
    assert c.probes == [] and not c.controller.image.brokers.get(1).fenced


# -- the rule under random interleavings --------------------------------------------------------

@pytest.mark.parametrize("seed", range(40))
def test_random_interleavings_never_fence_a_live_broker_and_do_fence_a_killed_one(seed):
    """A seeded model of one broker: heartbeats on new connections, cuts by a proxy,
    closes of ours, pauses (SIGSTOP: the listener still accepts), lost probes, and
    maybe a kill (every connection closes, the listener refuses a few probes later).
    While the broker lives nothing is dead; once killed (armed before), it is."""
    import random
    rng = random.Random(seed)
    ev, img, now = DeathEvidence(), image(), 0
    conns, n, killed_at_probe, probes_after_kill, expect_dead = set(), 0, None, 0, False
    kill_step = rng.choice([None, rng.randrange(50, 250)])
    for step in range(300):
        now += rng.choice([1, 5, 10, 50])
        alive = kill_step is None or step < kill_step
        if step == kill_step:
            # the rule can hold: connections open to close, and the listener seen accepting
            expect_dead = bool(conns) and ev.tracks[(1, 10)].armed
            for c in conns:
                ev.closed(c, by_peer=True, now_ms=now)
            conns.clear()
            killed_at_probe = rng.randrange(0, 3)  # the listener outlives the EOF by 0-2 probes
        elif alive:
            action = rng.random()
            if action < 0.3 and not (conns and rng.random() < 0.5):
                n += 1
                conns.add(n)
                ev.heartbeat(n, 1, 10)
            elif action < 0.4 and conns:
                ev.heartbeat(rng.choice(sorted(conns)), 1, 10)
            elif action < 0.5 and conns:
                c = rng.choice(sorted(conns))
                conns.discard(c)
                ev.closed(c, by_peer=rng.random() < 0.7, now_ms=now)  # a cut, or a close of ours
        for probe in ev.due_probes(img, now):
            if alive:
                outcome = UNKNOWN if rng.random() < 0.1 else ACCEPTED  # paused or not, it accepts
            else:
                probes_after_kill += 1
                outcome = ACCEPTED if probes_after_kill <= killed_at_probe else REFUSED
            ev.probe_done(probe, [outcome], now + rng.choice([0, 1, 3]))
        dead = ev.pop_dead()
        if alive:
            assert dead is None, f"a live broker declared dead at step {step}"
        elif dead is not None:
            assert dead == (1, 10)
            return
    assert not expect_dead, "killed after it was armed, but never declared dead"
