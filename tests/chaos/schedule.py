"""The fault schedule, drawn from one seed: the same seed gives the same faults, the
same roles, durations and parameters (which node plays "the leader" is whoever leads
when the fault starts).

Kinds (``KINDS``): ``kill9`` (SIGKILL, down for a while, started again), ``pause``
(SIGSTOP, then SIGCONT), ``restart`` (SIGTERM, started again at once),
``isolate_leader`` (every link to and from the leader cut), ``split`` (a minority
cut off from the rest, the leader in either side), ``one_way`` (the links in one
direction only between the leader and some followers), ``delay`` (latency on every
link) and ``flap`` (one node cut off and back again, several times). A cycle's faults
run one after the other, or (``together``, about one cycle in three) at the same time:
then a majority may be down or cut off until they are healed."""
from __future__ import annotations

import random
from dataclasses import dataclass, field

KINDS = ("kill9", "pause", "restart", "isolate_leader", "split", "one_way", "delay", "flap")


@dataclass
class Fault:
    kind: str
    seconds: float  # how long it lasts before it is healed
    on_leader: bool = True  # the leader or a follower plays the target
    follower: int = 0  # which follower (index into the others, modulo their number)
    params: dict = field(default_factory=dict)

    def describe(self) -> str:
        who = "leader" if self.on_leader else f"follower#{self.follower}"
        extra = "".join(f" {k}={v}" for k, v in sorted(self.params.items()))
        return f"{self.kind}({who}, {self.seconds:.1f}s{extra})"


def draw(rng: random.Random, kind: str, n: int, scale: float) -> Fault:
    f = Fault(kind, round(rng.uniform(1.5, 4.0) * scale, 1), on_leader=rng.random() < 0.6,
              follower=rng.randrange(n))
    if kind in ("isolate_leader", "split", "flap"):
        f.params["cut"] = rng.choice(("held", "refused"))
    if kind == "split":
        f.params["minority"] = rng.randint(1, (n - 1) // 2)
    elif kind == "one_way":
        f.params["direction"] = rng.choice(("from_leader", "to_leader"))
        f.params["followers"] = rng.randint(1, n - 1)
    elif kind == "delay":
        f.params["ms"] = rng.choice((20, 50, 100, 200, 300))
    elif kind == "flap":
        f.params["period_s"] = round(rng.uniform(0.3, 1.2), 2)
    return f


@dataclass
class Cycle:
    faults: list[Fault]
    together: bool


class Schedule:
    def __init__(self, seed: int, n: int, faults_per_cycle: int = 2, scale: float = 1.0):
        self.seed, self.n = seed, n
        self.rng = random.Random(seed)
        self.faults_per_cycle, self.scale = faults_per_cycle, scale
        self.order = self.rng.sample(KINDS, len(KINDS))

    def cycle(self, index: int) -> Cycle:
        """The faults of cycle ``index`` (cycles are drawn in order). The first cycles
        go through the kinds in a seeded order, so that a short run sees several kinds."""
        out = []
        for k in range(self.faults_per_cycle):
            slot = index * self.faults_per_cycle + k
            if slot < len(KINDS):
                kind = self.order[slot]
            else:
                kind = self.rng.choice(KINDS)
            out.append(draw(self.rng, kind, self.n, self.scale))
        return Cycle(out, self.rng.random() < 0.3)
