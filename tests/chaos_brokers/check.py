"""The checks of a broker chaos run, pure functions of what the clients printed, what our
controller wrote (``metadata.py``) and the brokers' leader-epoch checkpoints:

* **AcknowledgedConsumed**: every acknowledged message is consumed at the partition and
  offset it was acknowledged at, with its value; a value consumed at two offsets is a
  duplicate;
* **UncleanExplained**: on a topic with ``unclean.leader.election.enable=true`` a loss is
  allowed only on a partition whose history holds an unclean election;
* **EpochsGrow**: in the controller's history a partition's leader epoch never goes back
  and goes up with every new leader; in every broker's ``leader-epoch-checkpoint`` the
  epochs go up with their start offsets, and each is one the controller gave a leader;
* **NoneOfflineAfterHeal**: once the faults are healed no partition is without a leader
  while a member of its ISR (or ELR) is a live broker.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .metadata import Decisions

CHECKPOINT = "leader-epoch-checkpoint"


@dataclass
class Acks:
    acked: int
    lost: list[tuple[int, int]] = field(default_factory=list)  # (partition, offset)
    duplicated: list[str] = field(default_factory=list)  # values consumed at more than one offset


def acknowledged_consumed(acked: dict, consumed: dict) -> Acks:
    """``acked``/``consumed``: (partition, offset) -> value."""
    out = Acks(len(acked))
    out.lost = sorted(k for k, v in acked.items() if consumed.get(k) != v)
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
