"""The brokers' partition logs, read straight from their segment files while they run.

Issue 40 names Kafka's ``kafka-dump-log`` for this; we read the same files with our own
batch-header reader (``wire.records.iter_headers``) instead: the fields the checks need
(base and last offset, partition leader epoch, CRC, producer id, epoch and base sequence)
are all in the 61-byte header, and one JVM per broker per cycle would cost the machine
more than the check. The records themselves are not decoded.

A segment is ``<base offset:020>.log`` in ``<log dir>/<topic>-<partition>/``. A batch
being appended is left out (``iter_headers`` stops at a partial batch); a segment that
vanishes between listing and reading (deleted after a truncation) is skipped; reading
stops at bytes that do not parse or a batch whose CRC does not match (a tail being
written as it is read, or torn by a kill -9, which the broker truncates on its next start).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wire.exceptions import DecodeError
from wire.records import crc_matches, iter_headers


@dataclass(frozen=True)
class Batch:
    base: int
    last: int
    epoch: int  # partitionLeaderEpoch, stamped by the leader that appended it
    crc: int
    producer_id: int
    producer_epoch: int
    sequence: int  # baseSequence

    def describe(self) -> str:
        return (f"offsets {self.base}-{self.last} (crc {self.crc:08x}, producer {self.producer_id}/"
                f"{self.producer_epoch} sequence {self.sequence})")


def segment_batches(raw: bytes) -> list[Batch]:
    out = []
    try:
        for pos, h in iter_headers(raw):
            if not crc_matches(raw, pos, h):
                break
            out.append(Batch(h.base_offset, h.last_offset, h.partition_leader_epoch, h.crc, h.producer_id,
                             h.producer_epoch, h.base_sequence))
    except DecodeError:
        pass  # what came before it stands
    return out


def partition_batches(part_dir: Path) -> list[Batch]:
    """Every whole batch of one partition directory, in log order."""
    segments = sorted((p for p in Path(part_dir).glob("*.log") if p.stem.isdigit()), key=lambda p: int(p.stem))
    out: list[Batch] = []
    for seg in segments:
        try:
            raw = seg.read_bytes()
        except FileNotFoundError:
            continue
        out += segment_batches(raw)
    return out


def broker_batches(log_dir: Path, topics) -> dict[tuple[str, int], list[Batch]]:
    """(topic, partition) -> batches, for the ``topics`` partitions in one broker's log dir."""
    out = {}
    for topic in topics:
        for part in Path(log_dir).glob(f"{topic}-*"):
            suffix = part.name[len(topic) + 1:]
            if suffix.isdigit() and part.is_dir():
                out[(topic, int(suffix))] = partition_batches(part)
    return out
