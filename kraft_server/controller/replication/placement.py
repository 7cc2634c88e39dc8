"""Striped, rack-aware replica placement (Kafka's ``StripedReplicaPlacer``), pure.

Candidates are the registered brokers not shutting down, fenced ones included. Racks
are sorted (no rack first); each rack keeps its unfenced and its fenced brokers in
a random rotation, and the rack list starts at a random offset. For partition ``p``
the rack list and every rack's brokers are rotated ``p`` places further, so leaders
(the first replica) stripe across brokers. The first replica comes from the first
rack with an unfenced broker; the rest go round-robin over the racks, unfenced
before fenced within a rack, never the same broker twice.

Errors (INVALID_REPLICATION_FACTOR): no unfenced candidate, or a replication factor
larger than the candidate count.
"""
from __future__ import annotations

import random
from dataclasses import dataclass


class PlacementError(ValueError):
    pass


@dataclass(frozen=True)
class Candidate:
    broker_id: int
    rack: str | None
    fenced: bool


class _Rack:
    def __init__(self, brokers: list[Candidate], rng: random.Random) -> None:
        self.unfenced = sorted(b.broker_id for b in brokers if not b.fenced)
        self.fenced = sorted(b.broker_id for b in brokers if b.fenced)
        self.u_offset = rng.randrange(len(self.unfenced)) if self.unfenced else 0
        self.f_offset = rng.randrange(len(self.fenced)) if self.fenced else 0

    def order(self, p: int) -> list[int]:
        """This rack's brokers for partition ``p``: unfenced (rotated), then fenced."""
        u, f = self.unfenced, self.fenced
        out = [u[(self.u_offset + p + i) % len(u)] for i in range(len(u))] if u else []
        return out + ([f[(self.f_offset + p + i) % len(f)] for i in range(len(f))] if f else [])


def place(candidates: list[Candidate], num_partitions: int, replication_factor: int,
          rng: random.Random | None = None) -> list[list[int]]:
    rng = rng or random.Random()
    unfenced = [c for c in candidates if not c.fenced]
    if not unfenced:
        raise PlacementError("All brokers are currently fenced.")
    if replication_factor > len(candidates):
        raise PlacementError(
            f"The target replication factor of {replication_factor} cannot be reached because only "
            f"{len(candidates)} broker(s) are registered.")
    names = sorted({c.rack for c in candidates}, key=lambda r: (r is not None, r or ""))
    racks = [_Rack([c for c in candidates if c.rack == name], rng) for name in names]
    rack_offset = rng.randrange(len(racks))
    out = []
    for p in range(num_partitions):
        rotated = [racks[(rack_offset + p + i) % len(racks)] for i in range(len(racks))]
        orders = [r.order(p) for r in rotated]
        first_rack = next(i for i, r in enumerate(rotated) if r.unfenced)
        chosen = [orders[first_rack][0]]
        cursors = [0] * len(rotated)
        cursors[first_rack] = 1
        i = first_rack + 1
        while len(chosen) < replication_factor:
            k = i % len(rotated)
            i += 1
            order = orders[k]
            while cursors[k] < len(order) and order[cursors[k]] in chosen:
                cursors[k] += 1
            if cursors[k] < len(order):
                chosen.append(order[cursors[k]])
                cursors[k] += 1
        out.append(chosen)
    return out
