"""The checks of issue 40 that read the brokers themselves, each passing on a correct
cluster's inputs and broken on purpose: OneWriterPerEpoch on segment files written by
hand in Kafka's format (two brokers with different batches over one offset in one
epoch, a log whose epochs go back), HighWatermarkNeverBack on high watermark series
(going down within an epoch, across a clean election, and across an unclean one, which
explains it), ControllerExplainsBrokers on Metadata states (one no record gave). Also
the watcher's pieces that feed them (Metadata and ListOffsets answers through our
codecs), the report's line of checks, and the unclean_election fault's steps on a
cluster played by hand."""
from __future__ import annotations

import threading
import uuid

from tests.chaos.schedule import Fault
from tests.chaos_brokers import check as chk
from tests.chaos_brokers.availability import HighWatermarks, PartitionView, Watch, list_offsets_latest, views_from
from tests.chaos_brokers.clients import Producer
from tests.chaos_brokers.forced_unclean import force_unclean
from tests.chaos_brokers.metadata import Decisions, State, decisions
from tests.chaos_brokers.partition_logs import broker_batches, segment_batches
from tests.chaos_brokers.run import CLEAN, UNCLEAN, Report
from wire.messages import ListOffsetsResponse, MetadataResponse, PartitionChangeRecord, PartitionRecord, TopicRecord
from wire.messages.list_offsets_response import ListOffsetsPartitionResponse, ListOffsetsTopicResponse
from wire.messages.metadata_response import (MetadataResponseBroker, MetadataResponsePartition,
                                             MetadataResponseTopic)
from wire.records import Record, RecordBatch

TID = uuid.uuid5(uuid.NAMESPACE_OID, "t")


# -- OneWriterPerEpoch ----------------------------------------------------------------------

def batch(base: int, epoch: int, values: list[bytes], producer: int = 7, sequence: int = 0) -> bytes:
    """An idempotent producer's batch as a leader appends it."""
    return RecordBatch(base_offset=base, partition_leader_epoch=epoch, producer_id=producer, producer_epoch=0,
                       base_sequence=sequence, base_timestamp=1000,
                       records=[Record(offset_delta=i, value=v) for i, v in enumerate(values)]).encode()


def write_log(log_dir, part: str, segments: dict[int, list[bytes]]) -> None:
    d = log_dir / part
    d.mkdir(parents=True)
    for base, batches in segments.items():
        (d / f"{base:020d}.log").write_bytes(b"".join(batches))
    (d / f"{0:020d}.index").write_bytes(b"\0" * 8)  # not a segment: left alone


A = batch(0, 0, [b"a", b"b"], sequence=0)  # offsets 0-1, epoch 0
B = batch(2, 0, [b"c"], sequence=2)  # offset 2, epoch 0
C = batch(3, 2, [b"d", b"e"], sequence=3)  # offsets 3-4, epoch 2 (a new leader)


def logs_of(tmp_path, brokers: dict[int, dict[int, list[bytes]]]) -> dict:
    for b, segments in brokers.items():
        write_log(tmp_path / f"b{b}", "t-0", segments)
    return {b: broker_batches(tmp_path / f"b{b}", ["t"]) for b in brokers}


def test_segments_are_read_in_offset_order_leaving_out_a_partial_tail_and_a_torn_batch(tmp_path):
    write_log(tmp_path, "t-0", {3: [C, B[:30]], 0: [A, B]})
    write_log(tmp_path, "t-1", {0: [A, B[:-1] + bytes([B[-1] ^ 1]), C]})  # the second batch's CRC is wrong
    write_log(tmp_path, "t-2", {0: [A, b"\0" * 70]})  # zeros after it: not a batch
    (tmp_path / "t-x").mkdir()
    got = broker_batches(tmp_path, ["t"])
    assert sorted(got) == [("t", 0), ("t", 1), ("t", 2)]
    assert [(b.base, b.last, b.epoch, b.producer_id, b.sequence) for b in got[("t", 0)]] == [
        (0, 1, 0, 7, 0), (2, 2, 0, 7, 2), (3, 4, 2, 7, 3)]
    assert [b.base for b in got[("t", 1)]] == [0]
    assert [b.base for b in got[("t", 2)]] == [0]
    assert segment_batches(b"") == []


def test_replicas_holding_the_same_batches_pass_a_lagging_one_and_an_older_epoch_too(tmp_path):
    old = batch(3, 1, [b"x"], sequence=3)  # written by a deposed leader in epoch 1, not yet truncated
    logs = logs_of(tmp_path, {100: {0: [A, B, C]}, 101: {0: [A, B]}, 102: {0: [A, B, old]}})
    assert chk.one_writer_per_epoch(logs) == []


def test_two_batches_over_one_offset_in_one_epoch_are_caught(tmp_path):
    other = batch(3, 2, [b"D", b"E"], producer=8)  # another writer, epoch 2, same offsets
    shifted = batch(4, 2, [b"z"], sequence=9)  # epoch 2 again, from inside C's offsets
    logs = logs_of(tmp_path, {100: {0: [A, B, C]}, 101: {0: [A, B, other]}, 102: {0: [A, B], 4: [shifted]}})
    problems = chk.one_writer_per_epoch(logs)
    assert len(problems) == 2, problems  # each against the batch reaching furthest before it
    assert all(p.startswith("OneWriterPerEpoch: t-0 epoch 2: brokers [100] hold offsets 3-4") for p in problems)
    assert "brokers [101] hold offsets 3-4 (crc" in problems[0] and "producer 8/0" in problems[0]
    assert "brokers [102] hold offsets 4-4" in problems[1]


def test_a_log_whose_epoch_goes_back_is_caught(tmp_path):
    logs = logs_of(tmp_path, {100: {0: [A, C, batch(5, 1, [b"f"])]}})
    problems = chk.one_writer_per_epoch(logs)
    assert len(problems) == 1 and "broker 100 t-0 log goes back from epoch 2" in problems[0], problems


def test_problems_are_capped_per_partition(tmp_path):
    mine = [batch(i, 0, [b"m"], sequence=i) for i in range(6)]
    theirs = [batch(i, 0, [b"t"], producer=9, sequence=i) for i in range(6)]
    problems = chk.one_writer_per_epoch(logs_of(tmp_path, {100: {0: mine}, 101: {0: theirs}}))
    assert len(problems) == chk.LIMIT + 1 and problems[-1] == "... and 3 more on t-0"


# -- HighWatermarkNeverBack -------------------------------------------------------------------

def partition(leader, isr, p=0):
    return PartitionRecord(partition_id=p, topic_id=TID, replicas=[100, 101, 102], isr=isr, leader=leader,
                           leader_epoch=0, partition_epoch=0)


def change(p=0, **kw):
    return PartitionChangeRecord(partition_id=p, topic_id=TID, **kw)


def history(*records) -> Decisions:
    return decisions(enumerate([TopicRecord(name="t", topic_id=TID), *records]))


# t-0: epoch 0 led by 100, epoch 1 by 101 (clean), epoch 2 leaderless, epoch 3 102 (unclean)
D = history(partition(100, [100, 101]), change(leader=101, isr=[101]), change(leader=-1),
            change(leader=102, isr=[102], leader_recovery_state=1))


def test_a_high_watermark_that_only_grows_passes_and_a_stale_leaders_answer_is_left_out():
    series = {("t", 0): [(0, 10), (0, 15), (1, 15), (1, 30), (0, 12), (1, 31)]}  # (0, 12): a deposed leader
    assert chk.hwm_never_back(series, D) == ([], [])


def test_a_high_watermark_going_back_in_one_epoch_or_across_a_clean_election_is_caught():
    problems, explained = chk.hwm_never_back({("t", 0): [(0, 10), (0, 15), (0, 14), (1, 20), (1, 30), (1, 25)]}, D)
    assert problems == ["HighWatermarkNeverBack: t-0 high watermark 15 in leader epoch 0 -> 14 in epoch 0",
                        "HighWatermarkNeverBack: t-0 high watermark 30 in leader epoch 1 -> 25 in epoch 1"]
    assert explained == []
    problems, _ = chk.hwm_never_back({("t", 0): [(0, 15), (1, 12)]}, D)  # the new leader below the old one
    assert problems == ["HighWatermarkNeverBack: t-0 high watermark 15 in leader epoch 0 -> 12 in epoch 1"]


def test_a_high_watermark_going_back_across_an_unclean_election_is_explained_by_it():
    problems, explained = chk.hwm_never_back({("t", 0): [(1, 30), (3, 22), (3, 25)]}, D)
    assert problems == []
    assert explained == ["t-0 high watermark 30 in leader epoch 1 -> 22 in epoch 3, after the unclean election "
                         "of epoch 3"]
    problems, _ = chk.hwm_never_back({("t", 0): [(1, 30), (3, 22), (3, 21)]}, D)  # but not a drop after it
    assert problems == ["HighWatermarkNeverBack: t-0 high watermark 22 in leader epoch 3 -> 21 in epoch 3"]


def test_high_watermark_answers_are_kept_when_they_change():
    hw = HighWatermarks()
    asked = {("t", 0): 1, ("t", 1): 4}
    resp = ListOffsetsResponse(topics=[ListOffsetsTopicResponse(name="t", partitions=[
        ListOffsetsPartitionResponse(partition_index=0, offset=15, leader_epoch=1),
        ListOffsetsPartitionResponse(partition_index=1, error_code=78, offset=-1),  # OFFSET_NOT_AVAILABLE
        ListOffsetsPartitionResponse(partition_index=2, offset=3, leader_epoch=0)])])  # not asked
    hw.observe_answer(resp, asked)
    hw.observe_answer(resp, asked)
    hw.observe(("t", 0), 1, 16)
    assert hw.series == {("t", 0): [(1, 15), (1, 16)]}
    req = list_offsets_latest(asked)
    assert req.replica_id == -1 and req.isolation_level == 0
    assert [(p.partition_index, p.current_leader_epoch, p.timestamp) for p in req.topics[0].partitions] == [
        (0, 1, -1), (1, 4, -1)]


# -- ControllerExplainsBrokers ----------------------------------------------------------------

def metadata(*partitions) -> MetadataResponse:
    return MetadataResponse(brokers=[MetadataResponseBroker(node_id=b) for b in (100, 101)], topics=[
        MetadataResponseTopic(name="t", partitions=list(partitions)),
        MetadataResponseTopic(name="other", partitions=[MetadataResponsePartition(partition_index=0)])])


def shown_by(broker, resp) -> dict:
    return {(*key, v.leader, v.epoch, v.isr): broker for key, v in views_from(resp, ["t"]).items()}


def test_every_state_a_broker_shows_that_a_record_gave_passes():
    resp = metadata(MetadataResponsePartition(partition_index=0, leader_id=101, leader_epoch=1, isr_nodes=[101],
                                              replica_nodes=[100, 101, 102]),
                    MetadataResponsePartition(partition_index=1, error_code=5, leader_id=-1, leader_epoch=1,
                                              isr_nodes=[101]))  # its leader fenced: LEADER_NOT_AVAILABLE
    shown = {**shown_by(100, metadata(MetadataResponsePartition(partition_index=0, leader_id=100, isr_nodes=[
        101, 100], leader_epoch=0))), **shown_by(101, resp)}
    assert set(shown) == {("t", 0, 100, 0, (100, 101)), ("t", 0, 101, 1, (101,)), ("t", 1, None, 1, (101,))}
    d = history(partition(100, [100, 101]), partition(100, [100, 101], p=1), change(leader=101, isr=[101]),
                change(p=1, leader=101, isr=[101]))
    assert chk.controller_explains_brokers(shown, d) == []


def test_a_state_no_record_gave_is_caught():
    d = history(partition(100, [100, 101]), change(leader=101, isr=[101]))
    shown = {("t", 0, 101, 1, (101,)): 100,
             ("t", 0, 102, 1, (101,)): 101,  # the epoch's leader was 101
             ("t", 0, 100, 0, (100,)): 102,  # an ISR epoch 0 never had
             ("t", 2, 100, 0, (100,)): 102}  # a partition never created
    problems = chk.controller_explains_brokers(shown, d)
    assert len(problems) == 3, problems
    assert "broker 101 showed t-0 leader 102 epoch 1 ISR [101]" in problems[1]


def test_the_watch_keeps_every_state_shown_and_the_freshest_view_as_a_client_does():
    w = Watch(cluster=None, topics=["t"])
    new = MetadataResponsePartition(partition_index=0, leader_id=101, leader_epoch=2, isr_nodes=[101, 100])
    stale = MetadataResponsePartition(partition_index=0, leader_id=100, leader_epoch=1, isr_nodes=[100, 101])
    w.note_views(101, metadata(new))
    w.note_views(100, metadata(stale))  # a broker that has not heard of epoch 2 yet
    assert w.view("t", 0) == PartitionView(101, 2, (100, 101), ())
    assert w.snapshot()[0] == {("t", 0, 101, 2, (100, 101)): 101, ("t", 0, 100, 1, (100, 101)): 100}
    assert w.listed == {100, 101}


# -- AcknowledgedConsumed: an ack replaced at its offset ------------------------------------------

def test_an_ack_replaced_by_a_later_ack_at_its_offset_is_lost():
    p = Producer.__new__(Producer)  # its event handling alone, no process
    p.acked, p.ack_times, p.replaced, p.events = {}, [], [], []
    for offset, value in ((5, "5"), (6, "6"), (5, "5"), (5, "2192")):  # the same ack twice, then a new one at 5
        p.on_event({"name": "producer_send_success", "partition": 2, "offset": offset, "value": value, "timestamp": 1})
    assert p.acked == {(2, 5): "2192", (2, 6): "6"} and p.replaced == [(2, 5, "5")]
    consumed = {(2, 5): "2192", (2, 6): "6"}  # the consumer read the log again after the truncation
    assert chk.acknowledged_consumed(p.acked, consumed).lost == []  # what the last values alone show
    v = chk.acknowledged_consumed(p.acked, consumed, p.replaced)
    assert v.acked == 3 and v.lost == [(2, 5)] and not v.duplicated


# -- the report ---------------------------------------------------------------------------------

def test_the_report_counts_what_each_check_found():
    r = Report(seed=1, elr=True, fast_fencing=True, acked={CLEAN: 10, UNCLEAN: 5}, lost={CLEAN: [], UNCLEAN: [(0, 3)]},
               duplicated={CLEAN: [], UNCLEAN: []}, unexplained=[(0, 3)],
               problems=["cycle 2: OneWriterPerEpoch: t-0 epoch 2: ...", "cycle 2: HighWatermarkNeverBack: t-0 ..."],
               covered={"OneWriterPerEpoch": "40 batches on 4 brokers"},
               hwm_explained=["t-1 high watermark 30 in leader epoch 1 -> 22 in epoch 3, after ..."])
    assert r.fired() == {"AcknowledgedConsumed": 0, "UncleanExplained": 1, "EpochsGrow": 0, "NoneOfflineAfterHeal": 0,
                         "OneWriterPerEpoch": 1, "HighWatermarkNeverBack": 1, "ControllerExplainsBrokers": 0}
    text = r.format()
    assert "OneWriterPerEpoch 1 (40 batches on 4 brokers)" in text
    assert "high watermark back after an unclean election: t-1" in text
    assert not r.ok


# -- the unclean_election fault's steps, on a cluster played by hand -----------------------------

class PlayedCluster:
    """Links and kills recorded; the partition's Metadata follows from them as a correct
    controller would decide: a follower cut off from the leader leaves the ISR, and with
    the leader and the other follower down the cut-off follower is elected uncleanly."""

    def __init__(self) -> None:
        self.broker_ids = [100, 101, 102, 103]
        self.cut_links: set = set()
        self.down: set = set()
        self.steps: list = []
        self.proxies = self

    # the proxies
    def cut(self, pairs, state) -> None:
        self.cut_links |= set(pairs)
        self.steps.append(("cut", sorted(pairs)))

    def restore(self, pairs) -> None:
        self.cut_links -= set(pairs)
        self.steps.append(("restore", sorted(pairs)))

    # the processes
    def unavailable(self) -> set:
        return set(self.down)

    def kill9(self, b) -> None:
        self.down.add(b)
        self.steps.append(("kill9", b))

    def ensure_running(self, b) -> None:
        self.down.discard(b)
        self.steps.append(("start", b))


class PlayedWatch:
    def __init__(self, cluster: PlayedCluster, shrinks: bool = True) -> None:
        self.cluster, self.shrinks = cluster, shrinks

    @property
    def listed(self) -> set:
        return set(self.cluster.broker_ids) - self.cluster.down

    def view(self, topic, p):
        c = self.cluster
        if {100, 102} <= c.down:
            return PartitionView(101, 6, (101,), (100, 101, 102))
        isr = tuple(sorted({100} | {r for r in (101, 102) if (100, r) not in c.cut_links or not self.shrinks}))
        return PartitionView(100, 5, isr, (100, 101, 102))


def test_the_unclean_election_fault_cuts_then_kills_in_turn_and_undoes_it():
    cluster = PlayedCluster()
    fault = Fault("unclean_election", 0.2, follower=0, params={"partition": 1})
    what, undo = force_unclean(cluster, fault, PlayedWatch(cluster), threading.Event())
    assert what == ("unclean election forced on chaos-unclean-1: leader 100 cut off from 101 then 102, 102 and 100 "
                    "killed, 101 elected")
    assert cluster.steps == [("cut", [(100, 101), (101, 100)]),
                             ("cut", [(100, 101), (100, 102), (101, 100), (102, 100)]),
                             ("kill9", 102), ("kill9", 100)]
    undo()
    assert not cluster.cut_links and not cluster.down


def test_the_unclean_election_fault_stops_where_the_cluster_does_not_follow():
    cluster = PlayedCluster()
    cluster.down.add(100)  # the leader is down already: nothing to force
    fault = Fault("unclean_election", 0.2, follower=0, params={"partition": 0})
    halt = threading.Event()
    halt.set()  # the run stopping: a wait gives up at once
    what, undo = force_unclean(cluster, fault, PlayedWatch(cluster), halt)
    assert what.endswith("not forced: no usable leader with a full ISR") and cluster.steps == []
    cluster.down.clear()
    fault.follower = 1  # F is 102
    what, undo = force_unclean(cluster, fault, PlayedWatch(cluster, shrinks=False), halt)
    assert what == "chaos-unclean-0: leader 100 cut off from 102, the ISR never became [100, 101]"
    assert cluster.steps == [("cut", [(100, 102), (102, 100)])]
    undo()
    assert not cluster.cut_links and not cluster.down
