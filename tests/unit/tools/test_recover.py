"""``kraft-metadata-quorum recover`` on real directories (no node, no JVM): the plan,
its refusals, what it prints as possibly lost, what it writes, and the states a
kill in the middle leaves."""
from __future__ import annotations

import socket
import uuid

import pytest

from kraft_server.common.values import ElectionState
from kraft_server.log.bootstrap import DynamicVoter, write_bootstrap_snapshot
from kraft_server.log.file_log import FileReplicatedLog
from kraft_server.log.meta_properties import MetaProperties, write_meta_properties
from kraft_server.log.quorum_state_file import FileQuorumStateStore
from tools.kafka_dist.ports import free_port
from tools.metadata_quorum import __main__ as cli
from tools.metadata_quorum import recover
from tools.metadata_quorum.errors import TerseError
from tools.metadata_quorum.metadata_dir import MetadataDir
from wire.messages import TopicRecord
from wire.records import data_batch, frame_metadata_record

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"


def _dir_id(n: int) -> uuid.UUID:
    return uuid.UUID(int=(n << 64) | 0xABCDEF)


class Quorum:
    """Three formatted controller directories (kraft.version 1) and their properties."""

    def __init__(self, tmp_path, ids=(1, 2, 3)):
        self.tmp = tmp_path
        self.ports = {i: free_port() for i in ids}
        self.voters = [DynamicVoter(i, "127.0.0.1", self.ports[i], _dir_id(i)) for i in ids]
        self.configs = {}
        for i in ids:
            root = tmp_path / f"node{i}"
            root.mkdir()
            write_meta_properties(root, MetaProperties(CLUSTER, i, _dir_id(i)))
            write_bootstrap_snapshot(root / "__cluster_metadata-0", self.voters, "CONTROLLER", now_ms=1)
            cfg = tmp_path / f"node{i}.properties"
            cfg.write_text(f"node.id={i}\nprocess.roles=controller\nmetadata.log.dir={root}\n"
                           f"controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://127.0.0.1:{self.ports[i]}\n")
            self.configs[i] = str(cfg)

    def root(self, i):
        return self.tmp / f"node{i}"


def broker_dir(tmp_path, node_id: int):
    root = tmp_path / f"broker{node_id}"
    (root / "__cluster_metadata-0").mkdir(parents=True)
    write_meta_properties(root, MetaProperties(CLUSTER, node_id, _dir_id(node_id)))
    return root


def topics(log_root, epoch: int, names):
    """One data batch of TopicRecords at the log end, in ``epoch``."""
    with FileReplicatedLog.open(log_root) as log:
        values = [frame_metadata_record(TopicRecord.API_KEY, 0, TopicRecord(name=n, topic_id=uuid.uuid4()).encode(0))
                  for n in names]
        log.append(data_batch(log.end_offset(), epoch, 1000, values))
        log.flush()


def stored(log_root, epoch: int, leader: int = -1):
    FileQuorumStateStore(log_root / "__cluster_metadata-0").write(ElectionState(epoch, leader, -1, None, 1))


def snapshot_files(root):
    return {p.name: p.read_bytes() for p in (root / "__cluster_metadata-0").iterdir() if p.is_file()}


# -- pieces ---------------------------------------------------------------------------------
def test_common_end_is_where_epochs_first_differ():
    a = [(1, 0), (3, 10)]
    assert recover.common_end(a, 20, [(1, 0), (3, 10)], 15) == 15  # a prefix
    assert recover.common_end(a, 20, [(1, 0), (2, 8)], 12) == 8  # epoch 2 replaced 8.. on b
    assert recover.common_end(a, 20, [(1, 0), (4, 10)], 30) == 10
    assert recover.common_end(a, 20, [(5, 40)], 45, floor=40) == 20  # b starts past a: a's end
    assert recover.common_end([(1, 0)], 5, [(1, 0)], 9) == 5


def test_longest_log_by_last_epoch_then_end_offset():
    def facts(node_id, epoch, end):
        return recover.LogFacts(node_id, None, f"d{node_id}", 0, end, epoch, ((epoch, 0),), None, None)
    chosen, why = recover.longest([facts(1, 3, 50), facts(2, 4, 10), facts(3, 4, 9)])
    assert chosen.node_id == 2
    assert "last epoch 4, end offset 10" in why and "node 1: last epoch 3, end offset 50" in why
    chosen, why = recover.longest([facts(3, 4, 10), facts(2, 4, 10)])
    assert chosen.node_id == 2 and "a tie" in why


# -- the command on directories ---------------------------------------------------------------
def test_refuses_without_the_flag_and_writes_nothing(tmp_path, capsys):
    q = Quorum(tmp_path)
    topics(q.root(1), 2, ["a", "b"])
    stored(q.root(1), 2, leader=2)
    before = snapshot_files(q.root(1))
    assert cli.main(["recover", "--config", q.configs[1]]) == 1
    out, err = capsys.readouterr()
    assert "--lost-voters-are-gone" in err and "nothing written" in err
    assert "lost for good: [2, 3]; after recovery: [1]" in out
    assert "offsets 0 to 2 (1 batch, 2 records: TopicRecord x2): kept from node 1's log" in out
    assert "committed records from offset 0 on" in out
    assert snapshot_files(q.root(1)) == before


def test_recovers_a_lone_survivor(tmp_path, capsys):
    q = Quorum(tmp_path)
    topics(q.root(1), 2, ["a"])
    topics(q.root(1), 5, ["b", "c"])
    stored(q.root(1), 6)
    assert cli.main(["recover", "--config", q.configs[1], "--lost-voters-are-gone", "--epoch-gap", "10"]) == 0
    out = capsys.readouterr().out
    assert "leader epoch 16" in out and "Start node 1: it leads alone at epoch 17" in out
    d = MetadataDir(q.root(1))
    assert d.end_offset() == 4 and d.last_fetched_epoch() == 16 and d.problem is None
    assert d.voter_history().latest().ids() == [1]
    assert d.election == ElectionState(16, -1, -1, d.election.voted_directory_id, 1)
    with FileReplicatedLog.open(q.root(1)) as log:  # the node's own reading agrees
        assert log.end_offset() == 4 and log.epoch_entries()[-1] == (16, 3)
    # a rerun finds the work done
    assert cli.main(["recover", "--config", q.configs[1], "--lost-voters-are-gone"]) == 0
    assert "already the survivors: nothing to recover" in capsys.readouterr().out


def test_a_majority_that_survives_is_not_recovered(tmp_path, capsys):
    q = Quorum(tmp_path)
    assert cli.main(["recover", "--config", q.configs[1], "--config", q.configs[2], "--lost-voters-are-gone"]) == 1
    assert "a majority" in capsys.readouterr().err


def test_refuses_while_a_lost_voter_answers(tmp_path, capsys):
    q = Quorum(tmp_path)
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", q.ports[3]))
        listener.listen()
        assert cli.main(["recover", "--config", q.configs[1], "--lost-voters-are-gone"]) == 1
    err = capsys.readouterr().err
    assert f"node 3 at 127.0.0.1:{q.ports[3]}" in err and "still answers" in err
    assert MetadataDir(q.root(1)).voter_history().latest().ids() == [1, 2, 3]


def test_refuses_while_the_survivor_runs(tmp_path, capsys):
    q = Quorum(tmp_path)
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", q.ports[1]))
        listener.listen()
        assert cli.main(["recover", "--config", q.configs[1], "--lost-voters-are-gone"]) == 1
    assert "Stop it first" in capsys.readouterr().err


def test_two_survivors_of_five_take_the_longer_log(tmp_path, capsys):
    q = Quorum(tmp_path, ids=(1, 2, 3, 4, 5))
    for i in (1, 2):
        topics(q.root(i), 2, ["a", "b"])
    topics(q.root(2), 3, ["c"])
    assert cli.main(["recover", "--config", q.configs[1], "--config", q.configs[2],
                     "--lost-voters-are-gone"]) == 0
    out = capsys.readouterr().out
    assert "Chosen: node 2 has the longest log" in out and "node 1: last epoch 2, end offset 2" in out
    assert MetadataDir(q.root(2)).voter_history().latest().ids() == [1, 2]
    assert MetadataDir(q.root(1)).voter_history().latest().ids() == [1, 2, 3, 4, 5]  # untouched
    assert "Start node 2 and nodes [1]" in out


def test_names_what_a_broker_holds_beyond_the_survivor(tmp_path, capsys):
    q = Quorum(tmp_path)
    topics(q.root(1), 2, ["a", "b"])  # offsets 0-1
    topics(q.root(1), 3, ["c"])  # offset 2: uncommitted, replaced below on broker 9
    ahead = broker_dir(tmp_path, 8)  # the same history and two more records
    topics(ahead, 2, ["a", "b"])
    topics(ahead, 3, ["c"])
    topics(ahead, 3, ["d", "e"])
    diverged = broker_dir(tmp_path, 9)
    topics(diverged, 2, ["a", "b"])
    topics(diverged, 4, ["x"])
    stored(diverged, 7)
    assert cli.main(["recover", "--config", q.configs[1], "--broker-metadata-dir", str(ahead),
                     "--broker-metadata-dir", str(diverged), "--dry-run", "--epoch-gap", "5"]) == 0
    out = capsys.readouterr().out
    # broker 8's two records past the survivor's end are on its history: taken in, not lost
    assert "offsets 3 to 5 (1 batch, 2 records: TopicRecord x2): the lost voters' last records, which broker 8" in out
    assert "broker 8 (" in out and "log ends at 5, within the recovered log" in out
    assert "broker 9 (" in out and "holds offsets 2 to 3 (last epoch 4)" in out
    assert "To write: at offset 5 of node 1's log (after broker 8's offsets 3 to 5)" in out
    assert "leader epoch 12" in out  # above broker 9's quorum-state epoch 7
    assert "Dry run: nothing written." in out
    assert MetadataDir(q.root(1)).voter_history().latest().ids() == [1, 2, 3]


def test_a_torn_batch_is_the_old_state_and_a_rerun_finishes(tmp_path, capsys):
    q = Quorum(tmp_path)
    topics(q.root(1), 2, ["a"])
    plan = recover.make_plan([recover.load_survivor(q.configs[1]).facts])
    segment = q.root(1) / "__cluster_metadata-0" / "00000000000000000000.log"
    with open(segment, "ab") as f:  # killed halfway through the append
        f.write(plan.batch(5)[:40])
    d = MetadataDir(q.root(1))
    assert d.end_offset() == 1 and d.problem and d.voter_history().latest().ids() == [1, 2, 3]
    assert cli.main(["recover", "--config", q.configs[1], "--lost-voters-are-gone"]) == 0
    assert "torn or corrupt tail that will be cut first" in capsys.readouterr().out
    assert MetadataDir(q.root(1)).voter_history().latest().ids() == [1]


def test_killed_before_the_quorum_state_is_the_new_state(tmp_path, capsys):
    q = Quorum(tmp_path)
    topics(q.root(1), 2, ["a"])
    stored(q.root(1), 2)
    plan = recover.make_plan([recover.load_survivor(q.configs[1]).facts])

    class Killed(Exception):
        pass

    class DiesOnWrite:
        def write(self, state):
            raise Killed

    with FileReplicatedLog.open(q.root(1)) as log, pytest.raises(Killed):
        recover.write_recovery(log, DiesOnWrite(), plan)
    d = MetadataDir(q.root(1))
    assert d.voter_history().latest().ids() == [1] and d.election.epoch == 2 < d.last_fetched_epoch()
    assert cli.main(["recover", "--config", q.configs[1], "--lost-voters-are-gone"]) == 0
    assert "nothing to recover" in capsys.readouterr().out


def test_static_quorum_is_refused(tmp_path):
    root = tmp_path / "n1"
    (root / "__cluster_metadata-0").mkdir(parents=True)
    write_meta_properties(root, MetaProperties(CLUSTER, 1, _dir_id(1)))
    cfg = tmp_path / "n1.properties"
    cfg.write_text(f"node.id=1\nprocess.roles=controller\nmetadata.log.dir={root}\n"
                   "controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://127.0.0.1:1\n")
    with pytest.raises(TerseError, match="kraft.version 0"):
        recover.make_plan([recover.load_survivor(str(cfg)).facts])


def test_the_other_commands_still_need_a_bootstrap_flag(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.run(["describe", "--status"])
    assert exc.value.code == 1
    assert "one of the arguments --bootstrap-server --bootstrap-controller is required" in capsys.readouterr().err


def test_a_snapshot_the_survivor_does_not_hold_lowers_the_bound():
    def facts(node_id, epochs, end, snapshot=None, start=0):
        return recover.LogFacts(node_id, None, f"d{node_id}", start, end, epochs[-1][0], tuple(epochs), snapshot,
                                None)
    from kraft_server.common.values import OffsetAndEpoch
    chosen = facts(1, [(1, 0), (2, 10)], 30, OffsetAndEpoch(8, 1))
    assert recover.holds_snapshot(chosen, OffsetAndEpoch(20, 2))  # epoch 2 at offset 19 there too
    assert recover.holds_snapshot(chosen, OffsetAndEpoch(5, 1))  # under its own snapshot
    assert not recover.holds_snapshot(chosen, OffsetAndEpoch(20, 3))  # offset 19 is of epoch 2 here
    assert not recover.holds_snapshot(chosen, OffsetAndEpoch(40, 2))  # past its log end


def test_the_high_watermark_hint_narrows_what_may_be_lost(tmp_path, capsys):
    from kraft_server.log.hwm_hint import HintWriter
    q = Quorum(tmp_path)
    topics(q.root(1), 2, ["a", "b"])  # 0-1
    topics(q.root(1), 2, ["c"])  # 2
    HintWriter(q.root(1) / "__cluster_metadata-0").observe(2, lambda: [(2, 0)], 0)
    assert cli.main(["recover", "--config", q.configs[1], "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "offsets below 2: nothing (known committed" in out and "offsets 2 to 3 (1 batch, 1 record" in out
    assert "committed records from offset 2 on" in out


def test_a_brokers_records_past_the_survivor_are_taken_in(tmp_path, capsys):
    """A broker that fetched the lost leader's last records (the survivor had not) gives
    them to the recovered log: byte for byte, before the recovery batch, so the broker
    need not truncate what it may have seen committed (a running Kafka broker stops
    itself rather than truncate below its high watermark)."""
    q = Quorum(tmp_path)
    topics(q.root(1), 2, ["a", "b"])  # offsets 0-1
    ahead = broker_dir(tmp_path, 8)
    topics(ahead, 2, ["a", "b"])
    topics(ahead, 2, ["c"])  # offset 2
    topics(ahead, 3, ["d"])  # offset 3, a later epoch of the lost voters
    behind = broker_dir(tmp_path, 9)
    topics(behind, 2, ["a", "b"])
    assert cli.main(["recover", "--config", q.configs[1], "--broker-metadata-dir", str(behind),
                     "--broker-metadata-dir", str(ahead), "--lost-voters-are-gone"]) == 0
    out = capsys.readouterr().out
    assert "offsets 2 to 4 (2 batches, 2 records: TopicRecord x2): the lost voters' last records" in out
    assert "broker 9 (" in out and "log ends at 2, within the recovered log" in out
    assert "at offset 4 (leader epoch" in out
    survivor, broker = MetadataDir(q.root(1)), MetadataDir(ahead)
    assert [b[3] for b in survivor.batches(2, 4)] == [b[3] for b in broker.batches(2, 4)]
    assert [e for e, _ in survivor.epoch_entries()][:2] == [2, 3] and survivor.end_offset() == 5
    assert survivor.voter_history().latest().ids() == [1]
    # a rerun finds the survivors alone
    assert cli.main(["recover", "--config", q.configs[1], "--broker-metadata-dir", str(ahead),
                     "--lost-voters-are-gone"]) == 0
    assert "nothing to recover" in capsys.readouterr().out


def test_a_voter_change_the_survivor_never_saw_is_not_taken_in():
    """Records past the survivor's end are taken only up to the first VotersRecord: the
    voter set recovered is the one the survivors know."""
    from kraft_server.raft.voters import VoterKey, VoterNode, VoterSet
    from wire.records import ControlRecordType, build_control_batch

    def facts(node_id, datas):
        blob = b"".join(datas)
        from wire.records import walk as walk_batches
        infos = walk_batches(blob)
        batches = [(i.base_offset, i.last_offset, 2, blob[i.start:i.end]) for i in infos]
        return recover.LogFacts(node_id, _dir_id(node_id), f"n{node_id}", 0, infos[-1].last_offset + 1, 2,
                                ((2, 0),), None, None, batches=lambda s, e: [b for b in batches if s <= b[0] < e])
    a, b = (data_batch(i, 2, 1000, [frame_metadata_record(TopicRecord.API_KEY, 0, TopicRecord(
        name=n, topic_id=uuid.UUID(int=i + 1)).encode(0))]) for i, n in ((0, "a"), (1, "b")))
    voters = VoterSet((VoterNode(VoterKey(1, _dir_id(1)), ()),))
    change = build_control_batch(2, 2, 1000, [(ControlRecordType.KRAFT_VOTERS, voters.to_voters_record())])
    chosen = facts(1, [a])
    taken = recover.adoptable(chosen, facts(8, [a, b, change]))
    assert taken is not None and taken.end == 2 and taken.datas == [b]
    assert recover.adoptable(chosen, facts(9, [a, change])) is None
