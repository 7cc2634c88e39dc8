"""The checks of a broker chaos run, pure functions of what the clients printed, what our
controller wrote (``metadata.py``), the brokers' leader-epoch checkpoints and partition
logs (``partition_logs.py``) and what the brokers answered the watcher
(``availability.py``):

* **AcknowledgedConsumed**: every acknowledged message is consumed at the partition and
  offset it was acknowledged at, with its value; a value consumed at two offsets is a
  duplicate; an ack that a later ack at the same offset replaced is lost (the log under
  it was truncated and written again, so neither the producer's nor the consumer's
  last value there shows it);
* **UncleanExplained**: on a topic with ``unclean.leader.election.enable=true`` a loss is
  allowed only on a partition whose history holds an unclean election;
* **EpochsGrow**: in the controller's history a partition's leader epoch never goes back
  and goes up with every new leader; in every broker's ``leader-epoch-checkpoint`` the
  epochs go up with their start offsets, and each is one the controller gave a leader;
* **NoneOfflineAfterHeal**: once the faults are healed no partition is without a leader
  while a member of its ISR (or ELR) is a live broker;
* **OneWriterPerEpoch**: no two brokers hold different batches over one offset of a
  partition in one leader epoch (a follower copies the leader's batches byte for byte,
  so two there means two leaders wrote in that epoch); along each broker's log the
  epochs never go back and the offsets only go forward;
* **HighWatermarkNeverBack**: the high watermark the leaders gave a consumer (ListOffsets
  LATEST, READ_UNCOMMITTED) never goes back, answers from an older leader epoch than
  one already seen left out as a consumer leaves them; a drop across an unclean
  election on that partition is reported with the election, not as a violation;
* **ControllerExplainsBrokers**: every (leader, leader epoch, ISR) a broker showed in its
  Metadata answers is a state our controller's records gave that partition.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .metadata import Decisions
from .partition_logs import Batch

CHECKPOINT = "leader-epoch-checkpoint"
LIMIT = 3  # problems reported per partition and check
CHECKS = ("AcknowledgedConsumed", "UncleanExplained", "EpochsGrow", "NoneOfflineAfterHeal", "OneWriterPerEpoch",
          "HighWatermarkNeverBack", "ControllerExplainsBrokers")


@dataclass
class Acks:
    acked: int
    lost: list[tuple[int, int]] = field(default_factory=list)  # (partition, offset)
    duplicated: list[str] = field(default_factory=list)  # values consumed at more than one offset


def acknowledged_consumed(acked: dict, consumed: dict, replaced=()) -> Acks:
    """``acked``/``consumed``: (partition, offset) -> value; ``replaced``: (partition, offset,
    value) of acks a later ack at that offset replaced in ``acked``."""
    out = Acks(len(acked) + len(replaced))
    out.lost = sorted([k for k, v in acked.items() if consumed.get(k) != v] + [(p, o) for p, o, _ in replaced])
    counts = Counter(consumed.values())
    out.duplicated = sorted(v for v, n in counts.items() if n > 1)
    return out


def unexplained_losses(topic: str, lost, decisions: Decisions) -> list[tuple[int, int]]:
    """The losses of ``topic`` on partitions without an unclean election."""
    unclean = {p for t, p in decisions.unclean_elections() if t == topic}
    return [k for k in lost if k[0] not in unclean]


def epochs_grow(decisions: Decisions) -> list[str]:
    problems = []
    for (topic, p), states in sorted(decisions.history.items()):
        for before, after in zip(states, states[1:]):
            if after.epoch < before.epoch:
                problems.append(f"EpochsGrow: {topic}-{p} leader epoch {before.epoch} -> {after.epoch} "
                                f"at offset {after.offset}")
            elif after.leader != before.leader and after.epoch <= before.epoch:
                problems.append(f"EpochsGrow: {topic}-{p} leader {before.leader} -> {after.leader} "
                                f"in the same epoch {after.epoch} at offset {after.offset}")
    return problems


def read_checkpoint(path: Path) -> list[tuple[int, int]] | None:
    """(epoch, start offset) entries of a leader-epoch-checkpoint file (version 0); None
    while it is incomplete (a broker writing it)."""
    words = path.read_text().split()
    if len(words) < 2 or len(words) != 2 + 2 * int(words[1]):
        return None
    return [(int(words[2 + 2 * i]), int(words[3 + 2 * i])) for i in range(int(words[1]))]


def broker_checkpoints(log_dir: Path, topics) -> dict[tuple[str, int], list[tuple[int, int]]]:
    out = {}
    for topic in topics:
        for part in Path(log_dir).glob(f"{topic}-*"):
            suffix = part.name[len(topic) + 1:]
            if suffix.isdigit() and (part / CHECKPOINT).is_file():
                entries = read_checkpoint(part / CHECKPOINT)
                if entries is not None:
                    out[(topic, int(suffix))] = entries
    return out


def broker_epochs(checkpoints: dict[int, dict], decisions: Decisions) -> list[str]:
    """``checkpoints``: broker id -> (topic, partition) -> [(epoch, start offset)]."""
    problems = []
    for broker, parts in sorted(checkpoints.items()):
        for (topic, p), entries in sorted(parts.items()):
            for (e1, o1), (e2, o2) in zip(entries, entries[1:]):
                if e2 <= e1 or o2 < o1:
                    problems.append(f"EpochsGrow: broker {broker} {topic}-{p} checkpoint goes from epoch {e1} at "
                                    f"{o1} to epoch {e2} at {o2}")
            given = {s.epoch for s in decisions.history.get((topic, p), ()) if s.leader >= 0}
            for epoch, _ in entries:
                if epoch not in given:
                    problems.append(f"EpochsGrow: broker {broker} {topic}-{p} wrote in leader epoch {epoch}, which "
                                    f"the controller never gave a leader (gave {sorted(given)})")
    return problems


def offline_with_live_member(decisions: Decisions, topics, alive) -> list[str]:
    problems = []
    for topic in topics:
        for p in decisions.partitions(topic):
            s = decisions.latest(topic, p)
            live = sorted(set(s.isr + s.elr) & set(alive))
            if s.leader < 0 and live:
                problems.append(f"NoneOfflineAfterHeal: {topic}-{p} has no leader while ISR/ELR members {live} "
                                f"are alive (ISR {list(s.isr)}, ELR {list(s.elr)})")
    return problems


def _capped(found: list[str], what: str) -> list[str]:
    return found[:LIMIT] + ([f"... and {len(found) - LIMIT} more on {what}"] if len(found) > LIMIT else [])


def one_writer_per_epoch(logs: dict[int, dict[tuple[str, int], list[Batch]]]) -> list[str]:
    """``logs``: broker id -> (topic, partition) -> its batches in log order."""
    problems = []
    for topic, p in sorted({key for parts in logs.values() for key in parts}):
        found = []
        holders: dict[int, dict[Batch, list[int]]] = {}  # epoch -> batch -> brokers holding it
        for broker in sorted(logs):
            batches = logs[broker].get((topic, p), [])
            for a, b in zip(batches, batches[1:]):
                if b.epoch < a.epoch or b.base <= a.last:
                    found.append(f"OneWriterPerEpoch: broker {broker} {topic}-{p} log goes back from epoch {a.epoch} "
                                 f"{a.describe()} to epoch {b.epoch} {b.describe()}")
            for b in batches:
                holders.setdefault(b.epoch, {}).setdefault(b, []).append(broker)
        for epoch, batches in sorted(holders.items()):
            reach = None  # of the batches so far (by base offset), the one ending furthest
            for b in sorted(batches, key=lambda b: (b.base, b.last)):
                if reach is not None and b.base <= reach.last:
                    found.append(f"OneWriterPerEpoch: {topic}-{p} epoch {epoch}: brokers {batches[reach]} hold "
                                 f"{reach.describe()}, brokers {batches[b]} hold {b.describe()}")
                if reach is None or b.last > reach.last:
                    reach = b
        problems += _capped(found, f"{topic}-{p}")
    return problems


def hwm_never_back(series: dict[tuple[str, int], list[tuple[int, int]]],
                   decisions: Decisions) -> tuple[list[str], list[str]]:
    """``series``: (topic, partition) -> (leader epoch, high watermark) in the order the
    leaders answered. (problems, drops an unclean election explains)."""
    problems, explained = [], []
    for (topic, p), answers in sorted(series.items()):
        unclean = sorted(s.epoch for s in decisions.history.get((topic, p), ()) if s.unclean)
        found = []
        last = None  # (epoch, hwm) of the answer before
        for epoch, hwm in answers:
            if last is not None and epoch < last[0]:
                continue  # an older leader's answer: a consumer that knows a newer epoch ignores it
            if last is not None and hwm < last[1]:
                text = f"{topic}-{p} high watermark {last[1]} in leader epoch {last[0]} -> {hwm} in epoch {epoch}"
                why = [e for e in unclean if last[0] < e <= epoch]
                if why:
                    explained.append(f"{text}, after the unclean election of epoch {why[0]}")
                else:
                    found.append(f"HighWatermarkNeverBack: {text}")
            last = (epoch, hwm)  # after a drop, later answers are held to the new value
        problems += _capped(found, f"{topic}-{p}")
    return problems, explained


def controller_explains_brokers(shown: dict[tuple, int], decisions: Decisions) -> list[str]:
    """``shown``: (topic, partition, leader or None, leader epoch, ISR sorted) -> the broker
    that showed it first. A leader of None (LEADER_NOT_AVAILABLE: the broker knows the
    leader but not its listener, as for a fenced one) matches any leader of the epoch."""
    problems = []
    for (topic, p, leader, epoch, isr), broker in sorted(shown.items(), key=repr):
        if not any(s.epoch == epoch and tuple(sorted(s.isr)) == isr and leader in (None, s.leader)
                   for s in decisions.history.get((topic, p), ())):
            problems.append(f"ControllerExplainsBrokers: broker {broker} showed {topic}-{p} leader {leader} "
                            f"epoch {epoch} ISR {list(isr)}, a state no record of the controller's gave it")
    return problems
