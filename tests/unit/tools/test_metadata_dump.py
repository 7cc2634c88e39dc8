"""The differential test's normaliser (``tests/support/metadata_dump.py``) on a
``kafka-dump-log --cluster-metadata-decoder`` capture of Kafka 4.3.1's controller
(``tests/data/controller_diff``): what it keeps, what it normalises away, and that a
changed decision shows up as a difference."""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from tests.support import metadata_dump as md

CAPTURE = Path(__file__).resolve().parents[2] / "data" / "controller_diff" / "kafka-4.3.1.dump.txt"
ROLES = {"victim": 101, "shutdown": 100}


def decisions(text: str) -> md.Decisions:
    return md.normalise(md.parse(text), ROLES, manual_topics=("manual",))


def test_parse_skips_control_batches_and_reads_every_record():
    text = CAPTURE.read_text()
    batches = md.parse(text)
    n = sum(len(b.records) for b in batches)
    assert n == text.count("payload: {")  # every data record, no control record
    assert batches[0].records[0][0] == "BEGIN_TRANSACTION_RECORD"
    assert all(isinstance(d, dict) for b in batches for _, _, d in b.records)


def test_what_kafkas_controller_decided():
    d = decisions(CAPTURE.read_text())
    assert ("NO_OP_RECORD", 0) not in d.kinds
    assert {("REGISTER_BROKER_RECORD", 4), ("PARTITION_RECORD", 2), ("PARTITION_CHANGE_RECORD", 2),
            ("CLEAR_ELR_RECORD", 0), ("BROKER_REGISTRATION_CHANGE_RECORD", 3)} <= d.kinds
    # the victim: registered, cordoned dirs, unfenced, fenced with its partitions, re-registered
    # after an unclean shutdown (ELR cleared first), unfenced with the leaderless ones re-elected
    assert d.lifecycle["V"][3] == (("PARTITION_CHANGE_RECORD", 2), ("BROKER_REGISTRATION_CHANGE_RECORD", 0))
    assert d.lifecycle["V"][4] == (("PARTITION_CHANGE_RECORD", 2), ("REGISTER_BROKER_RECORD", 4))
    assert d.lifecycle["S"][-2] == (("BROKER_REGISTRATION_CHANGE_RECORD", 1), ("PARTITION_CHANGE_RECORD", 2))
    assert d.topics["doomed"]["removed"] and not d.topics["placed3"]["removed"]
    assert d.topics["placed3"]["leader_counts"] == [[2, 2, 1]] and d.topics["placed3"]["clear_elr"] == 1
    assert d.producer_ids == [("PRODUCER_IDS_RECORD", 0, True)]  # the first block: NextProducerId 1000
    # manual partition 0: replicas [V, O1, S], min ISR 3: V's fence fills the ELR
    story = d.stories[("manual", 0)]
    assert story[0][2]["replicas"] == ["V", "O1", "S"]
    assert story[0][2]["directories"] == ["dir(V)", "UNASSIGNED", "dir(S)"]  # O1 has two dirs
    assert story[1][2] == {"directories": ["dir(V)", "dir(O1*)", "dir(S)"]}  # its AssignReplicasToDirs
    assert story[2][2] == {"isr": ["O1", "S"], "leader": "O1", "eligibleLeaderReplicas": ["V"]}
    assert story[3][2] == {"eligibleLeaderReplicas": []}  # its unclean restart
    # an RF-1 partition on the victim: leaderless with ELR, then the last known leader, unclean
    (key,) = [k for k in d.stories if k[0] == "placed1" and k[2] == ("V",)]
    assert key[1] == 2  # created by the third admin batch (after bootstrap, controller registration)
    (rf1,) = d.stories[key]
    assert rf1[-1][2] == {"isr": ["V"], "leader": "V", "leaderRecoveryState": 1, "lastKnownElr": []}


def _rewrite(text: str, fn) -> str:
    """Apply ``fn(payload) -> payload | None`` to every record line (None drops it)."""
    out = []
    for line in text.splitlines():
        m = md.PAYLOAD.match(line)
        if m:
            new = fn(json.loads(m.group(2)))
            if new is None:
                continue
            line = line[:m.start(2)] + json.dumps(new, separators=(",", ":"))
        out.append(line)
    return "\n".join(out) + "\n"


def test_ids_timestamps_epochs_and_noops_are_normalised_away():
    text = CAPTURE.read_text()
    base = decisions(text)

    def shift(p):
        p = copy.deepcopy(p)
        data = p.get("data", {})
        if "brokerEpoch" in data:
            data["brokerEpoch"] += 1000  # another timing: other offsets
        if "incarnationId" in data:
            data["incarnationId"] = "AAAAAAAAAAAAAAAAAAAAZw"
        return None if p["type"] == "NO_OP_RECORD" else p
    other = re.sub(r"CreateTime: \d+", "CreateTime: 1", _rewrite(text, shift))
    assert md.differences(decisions(other), base) == []


def test_a_different_decision_is_a_difference():
    text = CAPTURE.read_text()
    base = decisions(text)
    seen = {"n": 0}

    def new_leader(p):
        if p["type"] == "PARTITION_CHANGE_RECORD" and p["data"].get("leader", -2) >= 0 and seen["n"] == 0:
            seen["n"] += 1
            p = copy.deepcopy(p)
            p["data"]["leader"] = 999
        return p
    diffs = md.differences(decisions(_rewrite(text, new_leader)), base)
    assert diffs and "partition" in diffs[0]

    def no_clear_elr(p):
        return None if p["type"] == "CLEAR_ELR_RECORD" else p
    diffs = md.differences(decisions(_rewrite(text, no_clear_elr)), base)
    assert any("record kinds" in x for x in diffs) and any("admin batches" in x for x in diffs)


def _dump(*batches) -> str:
    """A dump in kafka-dump-log's layout: one batch per list of payloads."""
    lines, offset = [], 0
    for payloads in batches:
        lines.append(f"baseOffset: {offset} lastOffset: {offset + len(payloads) - 1} count: {len(payloads)} "
                     "isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty")
        for p in payloads:
            lines.append(f"| offset: {offset} CreateTime: 1 keySize: -1 valueSize: 4 sequence: -1 "
                         f"headerKeys: [] payload: {json.dumps(p)}")
            offset += 1
    return "\n".join(lines) + "\n"


def test_a_second_fence_of_a_fenced_broker_is_dropped():
    def brc(fenced, epoch=7):
        return {"type": "BROKER_REGISTRATION_CHANGE_RECORD", "version": 0,
                "data": {"brokerId": 101, "brokerEpoch": epoch, "fenced": fenced}}
    register = {"type": "REGISTER_BROKER_RECORD", "version": 4,
                "data": {"brokerId": 101, "brokerEpoch": 7, "incarnationId": "x", "logDirs": []}}
    once = decisions(_dump([register], [brc(-1)], [brc(1)]))
    # the session-expiry task fencing the broker again, before and after it unfenced
    twice = decisions(_dump([register], [brc(1)], [brc(-1)], [brc(1)], [brc(1)]))
    assert md.differences(once, twice) == []
    assert [r[2]["fenced"] for r in twice.brokers["V"][1:]] == [-1, 1]


def test_a_cordon_only_change_in_the_unfence_batch_reads_as_its_own_batch_first():
    """Normalisation 10: one heartbeat that unfences and reports the cordoned dirs
    (Kafka writes the unfence first, one batch) equals two heartbeats that did it apart."""
    register = ("REGISTER_BROKER_RECORD", 4, {"brokerId": 7, "brokerEpoch": 5, "fenced": True, "logDirs": []})
    cordon = ("BROKER_REGISTRATION_CHANGE_RECORD", 3, {"brokerId": 7, "brokerEpoch": 5, "cordonedLogDirs": []})
    unfence = ("BROKER_REGISTRATION_CHANGE_RECORD", 0, {"brokerId": 7, "brokerEpoch": 5, "fenced": -1})
    together = md.normalise([md.Batch(0, [register]), md.Batch(1, [unfence, cordon])], ROLES)
    apart = md.normalise([md.Batch(0, [register]), md.Batch(1, [cordon]), md.Batch(2, [unfence])], ROLES)
    assert together.lifecycle == apart.lifecycle
    assert together.brokers == apart.brokers
    assert together.lifecycle["O1"][1:] == [(("BROKER_REGISTRATION_CHANGE_RECORD", 3),),
                                            (("BROKER_REGISTRATION_CHANGE_RECORD", 0),)]
    # a change that also fences is not cordon-only: it stays where it was
    fence_and_cordon = ("BROKER_REGISTRATION_CHANGE_RECORD", 3,
                        {"brokerId": 7, "brokerEpoch": 5, "fenced": 1, "cordonedLogDirs": []})
    kept = md.normalise([md.Batch(0, [register]), md.Batch(1, [unfence, fence_and_cordon])], ROLES)
    assert kept.lifecycle["O1"][1] == (("BROKER_REGISTRATION_CHANGE_RECORD", 0), ("BROKER_REGISTRATION_CHANGE_RECORD", 3))


def test_split_ops_reads_a_create_topics_merged_after_an_unfence_as_its_own_operation():
    """Normalisation 11: a live Kafka put a CreateTopics behind a broker's unfence in one
    batch; with ``split_ops`` it reads as the run that wrote them apart, without it not."""
    topic = ("TOPIC_RECORD", 0, {"name": "__consumer_offsets", "topicId": "T1"})
    config = ("CONFIG_RECORD", 0, {"resourceType": 2, "resourceName": "__consumer_offsets",
                                   "name": "cleanup.policy", "value": "compact"})
    part = ("PARTITION_RECORD", 2, {"topicId": "T1", "partitionId": 0, "replicas": [7], "isr": [7],
                                    "leader": 7, "leaderEpoch": 0})
    change = ("BROKER_REGISTRATION_CHANGE_RECORD", 0, {"brokerId": 7, "brokerEpoch": 5, "fenced": -1})
    merged = [md.Batch(0, [change, topic, config, part])]
    apart = [md.Batch(0, [change]), md.Batch(1, [topic, config, part])]
    created = (("TOPIC_RECORD", 0), ("CONFIG_RECORD", 0), ("PARTITION_RECORD", 2))
    assert md.normalise(apart, ROLES, split_ops=True).admin == [created]
    assert md.normalise(merged, ROLES, split_ops=True).admin == [created]
    assert md.normalise(merged, ROLES).admin == []  # batch level: not an admin batch
    # two topics of one CreateTopics read as two operations, in order
    other = ("TOPIC_RECORD", 0, {"name": "b", "topicId": "T2"})
    two = md.normalise([md.Batch(0, [topic, part, other])], ROLES, split_ops=True)
    assert two.admin == [(("TOPIC_RECORD", 0), ("PARTITION_RECORD", 2)), (("TOPIC_RECORD", 0),)]


def test_split_ops_keeps_the_captured_run_equal_to_itself():
    text = CAPTURE.read_text()
    a = md.normalise(md.parse(text), ROLES, manual_topics=("manual",), split_ops=True)
    assert md.differences(a, copy.deepcopy(a)) == []
    assert len(a.admin) > len(decisions(text).admin)  # CreateTopics of four topics: four operations


def _with_dirs_assigned(topic: str) -> str:
    """The capture with a directories-only PartitionChangeRecord for partition 0 of
    ``topic`` in a batch of its own, right after the batch that created the topic."""
    batches = md.parse(CAPTURE.read_text())
    ids = {d["name"]: d["topicId"] for b in batches for t, _, d in b.records if t == "TOPIC_RECORD"}
    at = next(i for i, b in enumerate(batches)
              if any(t == "PARTITION_RECORD" and d["topicId"] == ids[topic] for t, _, d in b.records))
    part = next(d for t, _, d in batches[at].records if t == "PARTITION_RECORD" and d["topicId"] == ids[topic]
                and d["partitionId"] == 0)
    unassigned = "AAAAAAAAAAAAAAAAAAAAAQ"
    some_dir = next(x for x in part["directories"] if x != unassigned)
    change = {"type": "PARTITION_CHANGE_RECORD", "version": 2,
              "data": {"partitionId": 0, "topicId": ids[topic], "directories": [
                  some_dir if x == unassigned else x for x in part["directories"]]}}
    payloads = [[{"type": t, "version": v, "data": d} for t, v, d in b.records] for b in batches]
    return _dump(*payloads[:at + 1], [change], *payloads[at + 1:])


def test_a_directory_assignment_of_a_deleted_topic_is_timing_not_a_decision():
    base = decisions(CAPTURE.read_text())
    assert md.differences(decisions(_with_dirs_assigned("doomed")), base) == []
    # on a topic that lives on, the same record is a difference
    diffs = md.differences(decisions(_with_dirs_assigned("placed3")), base)
    assert diffs and "placed3" in diffs[0]
