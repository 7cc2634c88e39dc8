"""The broker chaos harness's own parts, each shown to catch what it is there for: every
check on inputs built by hand to break it (a lost ack, an offset rewritten, a duplicate,
a loss on the unclean topic with and without an unclean election, an epoch going back,
a broker writing in an epoch the controller never gave, a partition offline beside a live
ISR member), the controller's history read from records, the leaderless stretches, the
broker-to-broker door naming the dialler on a real socket pair, the seeded schedule and
the report's last line."""
from __future__ import annotations

import random
import socket
import struct
import uuid

import pytest

from tests.support.echo_server import echo_server
from tests.chaos.proxy import HELD, Proxies
from tests.chaos_brokers import check as chk
from tests.chaos_brokers.availability import Leaderless
from tests.chaos_brokers.metadata import Decisions, State, decisions
from tests.chaos.doors import NODE_DIALLER, Doors, dialler
from tests.chaos_brokers.run import CLEAN, UNCLEAN, TOPICS, Report, placement
from tests.chaos_brokers.schedule import KINDS, Schedule
from wire.messages import FenceBrokerRecord, PartitionChangeRecord, PartitionRecord, RegisterBrokerRecord, TopicRecord

TID = uuid.uuid5(uuid.NAMESPACE_OID, "t")


# -- AcknowledgedConsumed ---------------------------------------------------------------

def test_every_ack_consumed_at_its_offset_passes():
    acked = {(0, 0): "1", (0, 1): "2", (1, 0): "3"}
    v = chk.acknowledged_consumed(acked, {**acked, (1, 1): "4"})  # more consumed than acked is fine
    assert v.acked == 3 and not v.lost and not v.duplicated


def test_a_missing_ack_an_offset_rewritten_and_a_duplicate_are_caught():
    acked = {(0, 0): "1", (0, 1): "2", (1, 0): "3"}
    consumed = {(0, 0): "1", (0, 1): "9", (1, 1): "1"}  # 2 replaced at its offset, 3 gone, 1 twice
    v = chk.acknowledged_consumed(acked, consumed)
    assert v.lost == [(0, 1), (1, 0)]
    assert v.duplicated == ["1"]


# -- the controller's decisions and UncleanExplained -------------------------------------

def partition(leader, isr, p=0):
    return PartitionRecord(partition_id=p, topic_id=TID, replicas=[100, 101, 102], isr=isr, leader=leader,
                           leader_epoch=0, partition_epoch=0)


def change(p=0, **kw):
    return PartitionChangeRecord(partition_id=p, topic_id=TID, **kw)


def history(*records):
    return decisions(enumerate([TopicRecord(name="t", topic_id=TID), *records]))


def test_decisions_replay_leaders_epochs_and_mark_unclean_elections():
    d = history(partition(100, [100, 101, 102]), partition(101, [101, 102], p=1),
                change(isr=[100]),  # shrink
                change(leader=100, isr=[100]),  # epoch bump, same leader
                change(p=1, leader=102),  # clean: 102 in the ISR
                change(leader=-1, isr=[100]),
                change(leader=101, isr=[101], leader_recovery_state=1),  # unclean
                RegisterBrokerRecord(broker_id=100, fenced=False), FenceBrokerRecord(id=100, epoch=1))
    states = d.history[("t", 0)]
    assert [(s.leader, s.epoch, s.unclean) for s in states] == [
        (100, 0, False), (100, 0, False), (100, 1, False), (-1, 2, False), (101, 3, True)]
    assert [s.unclean for s in d.history[("t", 1)]] == [False, False]
    assert list(d.unclean_elections()) == [("t", 0)]
    assert d.fenced == {100: True} and d.fencings == [(9, 100)]
    assert d.since(0) == {"elections": 2, "unclean": 1, "isr changes": 2, "fencings": 1}
    assert d.since(6) == {"elections": 1, "unclean": 1, "isr changes": 1, "fencings": 1}


def test_an_election_outside_isr_and_elr_is_unclean_even_unmarked():
    d = history(partition(100, [100]), change(leader=-1), change(leader=102))
    assert [s.unclean for s in d.history[("t", 0)]] == [False, False, True]
    elr = history(partition(100, [100]), change(leader=-1, eligible_leader_replicas=[101]), change(leader=101))
    assert not elr.unclean_elections()  # elected from the ELR: clean


def test_a_loss_on_the_unclean_topic_needs_an_unclean_election_on_its_partition():
    d = history(partition(100, [100]), partition(100, [100], p=1), change(leader=-1), change(leader=102))
    assert chk.unexplained_losses("t", [(0, 5), (1, 7)], d) == [(1, 7)]
    assert chk.unexplained_losses("t", [(0, 5)], d) == []


# -- EpochsGrow -------------------------------------------------------------------------

def made(states) -> Decisions:
    return Decisions(history={("t", 0): [State(i, leader, epoch, (leader,))
                                         for i, (leader, epoch) in enumerate(states)]})


def test_epochs_that_go_back_or_a_new_leader_in_the_same_epoch_are_caught():
    assert chk.epochs_grow(made([(100, 0), (101, 1), (101, 1), (102, 2)])) == []
    assert any("1 -> 0" in p for p in chk.epochs_grow(made([(100, 0), (101, 1), (102, 0)])))
    assert any("in the same epoch 1" in p for p in chk.epochs_grow(made([(100, 0), (101, 1), (102, 1)])))


def write_checkpoint(path, entries):
    path.mkdir(parents=True)
    lines = ["0", str(len(entries))] + [f"{e} {o}" for e, o in entries]
    (path / chk.CHECKPOINT).write_text("\n".join(lines) + "\n")


def test_broker_checkpoints_must_grow_and_hold_only_epochs_the_controller_gave(tmp_path):
    write_checkpoint(tmp_path / "b100" / "t-0", [(0, 0), (1, 40), (2, 90)])
    write_checkpoint(tmp_path / "b101" / "t-0", [(0, 0), (2, 90), (1, 95)])
    write_checkpoint(tmp_path / "b102" / "t-0", [(0, 0), (7, 90)])
    d = made([(100, 0), (101, 1), (-1, 2), (102, 3)])
    d.history[("t", 0)][2] = State(2, 100, 2, (100,))
    cps = {b: chk.broker_checkpoints(tmp_path / f"b{b}", ["t"]) for b in (100, 101, 102)}
    assert cps[100] == {("t", 0): [(0, 0), (1, 40), (2, 90)]}
    problems = chk.broker_epochs(cps, d)
    assert len(problems) == 2, problems
    assert "broker 101" in problems[0] and "epoch 2 at 90 to epoch 1 at 95" in problems[0]
    assert "broker 102" in problems[1] and "leader epoch 7" in problems[1]


# -- NoneOfflineAfterHeal -----------------------------------------------------------------

def test_a_partition_offline_beside_a_live_isr_or_elr_member_is_caught():
    d = Decisions(history={("t", 0): [State(0, -1, 3, (100,))], ("t", 1): [State(1, -1, 3, (), (101,))],
                           ("t", 2): [State(2, 102, 3, (102,))]})
    problems = chk.offline_with_live_member(d, ["t"], alive=[100, 101, 102])
    assert [p.split(" has")[0] for p in problems] == ["NoneOfflineAfterHeal: t-0", "NoneOfflineAfterHeal: t-1"]
    assert chk.offline_with_live_member(d, ["t"], alive=[102]) == []  # its members are down: offline is right


# -- the leaderless stretches -------------------------------------------------------------

def test_leaderless_stretches_count_no_leader_and_a_dead_leader():
    s = Leaderless()
    s.observe(0.0, {("t", 0): 100, ("t", 1): 101}, unusable=set())
    s.observe(1.0, {("t", 0): -1, ("t", 1): 101}, unusable={101})
    s.observe(2.5, {("t", 0): 102, ("t", 1): 101}, unusable={101})
    assert s.longest_s == 1.5 and s.longest_what == "t-0"
    assert s.longest_ms(now=4.0) == 3000  # t-1 still led by a dead broker


# -- the door: the dialler named from the client id ----------------------------------------

def header(client_id: bytes, api_key: int = 1) -> bytes:
    body = struct.pack(">hhih", api_key, 13, 7, len(client_id)) + client_id + b"rest"
    return struct.pack(">i", len(body)) + body


def test_the_dialler_is_named_by_the_client_id():
    assert dialler(header(b"broker-101-fetcher-0")) == 101
    assert dialler(header(b"broker-7-txn-marker-sender")) == 7
    assert dialler(header(b"producer-1")) is None
    assert dialler(header(b"broker-101")[:15]) is None


def test_a_controllers_door_names_raft_clients_and_a_nodes_channels():
    assert dialler(header(b"raft-client-2"), NODE_DIALLER) == 2  # Kafka's Raft client, and ours
    assert dialler(header(b"101"), NODE_DIALLER) == 101  # a Kafka broker's channel to the controller
    assert dialler(header(b"controller-3-registration-channel"), NODE_DIALLER) == 3  # ours
    assert dialler(header(b"raft-client"), NODE_DIALLER) is None
    assert dialler(header(b"kraft-dist-probe"), NODE_DIALLER) is None
    assert dialler(header(b"1x"), NODE_DIALLER) is None


@pytest.fixture
def doors():
    srv = echo_server()
    proxies = Proxies({100: srv.getsockname()[1], 101: 1, 102: 1})
    proxies.start()
    d = Doors(proxies, [100])
    d.start()
    yield d
    d.close()
    proxies.close()
    srv.close()


def through(port: int, client_id: bytes, timeout: float = 2.0) -> bytes:
    msg = header(client_id)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(msg)
        got = b""
        while len(got) < len(msg):
            data = s.recv(1000)
            if not data:
                break
            got += data
    return got


def test_the_door_hands_each_dialler_to_its_own_link(doors):
    port = doors.port(100)
    msg = header(b"broker-101-fetcher-0")
    assert through(port, b"broker-101-fetcher-0") == msg  # the bytes read to name it are forwarded
    doors.proxies.cut([(101, 100)], HELD)
    with pytest.raises(socket.timeout):
        through(port, b"broker-101-fetcher-0", timeout=0.5)
    assert through(port, b"broker-102-fetcher-0") == header(b"broker-102-fetcher-0")  # its own link
    assert through(port, b"someone-else") == b""  # closed: no link for it
    assert through(port, b"broker-100-x") == header(b"broker-100-x")  # itself: straight through, never cut
    doors.proxies.heal()
    assert through(port, b"broker-101-fetcher-0") == msg


def test_a_shut_door_refuses_and_opens_again_on_the_same_port(doors):
    port = doors.port(100)
    doors.shut(100)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    doors.open(100)
    assert doors.port(100) == port
    assert through(port, b"broker-102-x") == header(b"broker-102-x")


# -- the schedule and the report -----------------------------------------------------------

def test_schedule_is_replayable_and_covers_every_kind_early():
    def drawn(seed):
        s = Schedule(seed, [CLEAN, UNCLEAN])
        return [f.describe() for c in range(len(KINDS)) for f in s.cycle(c).faults]
    first = drawn(7)
    assert first == drawn(7) and first != drawn(8)
    assert {d.split("(")[0] for d in first} == set(KINDS)


def test_placement_is_the_seeds_and_spreads_the_leaders():
    seed = random.randrange(2**31)
    print(f"placement seed {seed}")
    brokers = [100, 101, 102, 103]
    one = placement(seed, brokers)
    assert one == placement(seed, brokers) and set(one) == set(TOPICS)
    leaders = [ids[0] for t in TOPICS for ids in one[t]]
    assert all(len(set(ids)) == 3 and set(ids) <= set(brokers) for t in TOPICS for ids in one[t])
    assert set(leaders) == set(brokers) and max(leaders.count(b) for b in brokers) == 2  # 6 over 4
    assert any(placement(s, brokers) != one for s in (seed + 1, seed + 2, seed + 3))


def test_the_report_ends_with_the_summary_line_and_fails_on_a_clean_loss():
    r = Report(seed=1, elr=True, fast_fencing=True, acked={CLEAN: 10, UNCLEAN: 5},
               lost={CLEAN: [], UNCLEAN: [(0, 3)]}, duplicated={CLEAN: [], UNCLEAN: []},
               leaderless_ms=1200, ack_gap_ms=3400)
    assert r.ok  # an unclean loss, explained (not in ``unexplained``)
    assert r.format().splitlines()[-1] == ("acknowledged 15, lost 1, duplicated 0, longest leaderless 1200 ms, "
                                           "longest without an ack 3400 ms")
    r.lost[CLEAN] = [(1, 1)]
    assert not r.ok
    r.lost[CLEAN], r.unexplained = [], [(0, 3)]
    assert not r.ok


def test_a_checkpoint_being_written_is_left_out(tmp_path):
    write_checkpoint(tmp_path / "t-0", [(0, 0), (1, 5)])
    (tmp_path / "t-1").mkdir()
    (tmp_path / "t-1" / chk.CHECKPOINT).write_text("0\n2\n0 0\n")  # cut short
    assert chk.broker_checkpoints(tmp_path, ["t"]) == {("t", 0): [(0, 0), (1, 5)]}
