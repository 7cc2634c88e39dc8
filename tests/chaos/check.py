"""The checker: every node's ``__cluster_metadata`` log read straight from its segment
files while the nodes run (``read_batches`` stops at a batch still being written),
against what the writer was told and what the monitor saw.

Checks (named as in ``tests/simulation/invariants.py`` where they share one):

* **ConsistentCommittedData**: below the high watermark every node holds the same batches, byte
  for byte;
* **AcknowledgedNotLost** (no loss, no duplicate, in order): every acknowledged topic name is in exactly
  one TopicRecord on a majority of the nodes (on all of them once they agree), in the
  order the acks came (the writer sends one request at a time); no name appears twice
  in any log; a name in doubt appears at most once;
* **SingleLeader**: the LeaderChange control records of every log (committed
  or not) name one leader per epoch;
* **SameImage**: replaying each node's committed records gives the same metadata
  image (``MetadataImage.snapshot_records``) at the same offset.

The monitor adds what was observed live (leaders named per epoch, the high watermark
never going back).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from kraft_server.controller.image.metadata_image import MetadataImage
from kraft_server.controller.image.records import TOPIC_RECORD
from tests.support.kraft_nodes import committed_batches, read_batches
from wire.records import ControlRecordType, batch_values, control_records, decode_metadata_record, walk

from wire.records.metadata import unframe_metadata_record


@dataclass
class NodeLog:
    batches: dict[int, bytes]
    end_offset: int
    topics: list[tuple[int, str]] = field(default_factory=list)  # (offset, name) below the HWM
    leader_changes: list[tuple[int, int]] = field(default_factory=list)  # (epoch, leader), whole log


@dataclass
class Verdict:
    high_watermark: int
    acked: int
    lost: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.lost and not self.problems


def end_offset(batches: dict[int, bytes]) -> int:
    if not batches:
        return 0
    last = max(batches)
    return walk(batches[last])[0].next_offset


def read_node(data) -> NodeLog:
    batches = read_batches(data)
    return NodeLog(batches, end_offset(batches))


def _decode(log: NodeLog, hwm: int) -> None:
    for base in sorted(log.batches):
        raw = log.batches[base]
        info = walk(raw)[0]
        if info.is_control:
            for kind, record in control_records(raw, info):
                if kind == ControlRecordType.LEADER_CHANGE:
                    log.leader_changes.append((info.epoch, record.leader_id))
        elif info.next_offset <= hwm:
            for i, value in enumerate(batch_values(raw, info)):
                if unframe_metadata_record(value)[0] == TOPIC_RECORD:
                    log.topics.append((base + i, decode_metadata_record(value).message.name))


def _image(log: NodeLog, hwm: int) -> list[bytes]:
    image = MetadataImage()
    for base, raw in sorted(committed_batches(log.batches, hwm).items()):
        info = walk(raw)[0]
        if not info.is_control:
            for value in batch_values(raw, info):
                image.replay(value, info.last_offset)
    return image.snapshot_records()


def check(logs: dict[int, NodeLog], hwm: int, acked: list[str], in_doubt: list[str],
          observed: list[str] = ()) -> Verdict:
    """``logs`` read once every node's log reaches ``hwm``; ``acked`` in ack order, all
    acknowledged before ``hwm`` was read."""
    v = Verdict(hwm, len(acked), problems=list(observed))
    majority = len(logs) // 2 + 1
    for log in logs.values():
        _decode(log, hwm)
    starts = {i: min(l.batches, default=0) for i, l in logs.items()}
    if any(starts.values()):
        v.problems.append(f"a log no longer starts at 0 ({starts}): the checker reads logs only")
    # agreement below the high watermark
    committed = {i: committed_batches(l.batches, hwm) for i, l in logs.items()}
    ref_id = max(committed, key=lambda i: len(committed[i]))
    for i, batches in committed.items():
        if batches != committed[ref_id]:
            differ = sorted(set(batches.items()) ^ set(committed[ref_id].items()))[:1]
            v.problems.append(f"ConsistentCommittedData: node {i} and node {ref_id} differ below HWM {hwm}, first at base "
                              f"{differ[0][0] if differ else '?'}")
    # acknowledged names: once each, on a majority, in ack order
    positions = {i: {} for i in logs}
    for i, log in logs.items():
        counts = Counter(name for _, name in log.topics)
        for name, n in counts.items():
            if n > 1:
                v.problems.append(f"AcknowledgedNotLost: node {i}: topic {name} written {n} times")
        positions[i] = {name: off for off, name in log.topics}
    for name in acked:
        holders = [i for i in logs if name in positions[i]]
        if len(holders) < majority:
            v.lost.append(name)
    for i in logs:
        offsets = [positions[i][n] for n in acked if n in positions[i]]
        if offsets != sorted(offsets):
            v.problems.append(f"AcknowledgedNotLost: node {i}: acknowledged topics out of ack order")
    for name in in_doubt:
        for i, log in logs.items():
            if sum(1 for _, n in log.topics if n == name) > 1:
                v.problems.append(f"AcknowledgedNotLost: node {i}: in-doubt topic {name} written more than once")
    # one leader per epoch, from every log
    named: dict[int, set[int]] = {}
    for log in logs.values():
        for epoch, leader in log.leader_changes:
            named.setdefault(epoch, set()).add(leader)
    for epoch, leaders in sorted(named.items()):
        if len(leaders) > 1:
            v.problems.append(f"SingleLeader: epoch {epoch}: LeaderChange records name leaders {sorted(leaders)}")
    # the same image at the same offset
    images = {i: _image(log, hwm) for i, log in logs.items()}
    for i, image in images.items():
        if image != images[ref_id]:
            v.problems.append(f"SameImage: node {i}: metadata image at HWM {hwm} differs from node {ref_id}'s")
    return v
