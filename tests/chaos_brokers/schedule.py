"""The brokers' fault schedule, drawn from one seed (``tests/chaos/schedule.py``'s
``Fault``: the same seed gives the same kinds, targets, durations and parameters; which
broker leads a partition, or which controller is active, is looked up when the fault
starts).

Kinds (``KINDS``):

* ``kill9_broker``: SIGKILL a broker, started again after the fault's time;
* ``kill9_controller``: SIGKILL the active controller, started again after it;
* ``pause_short``: SIGSTOP a broker for less than its session (``SESSION_MS``), SIGCONT;
* ``pause_long``: the same for longer than its session (the controller fences it);
* ``cut_from_controllers``: every link between a broker and the controllers cut, both
  directions (clients and the other brokers still reach it);
* ``cut_leader``: every link between a partition's leader and the other brokers cut,
  both directions (its followers cannot fetch, the controllers still hear it);
* ``unclean_election``: an unclean election forced on a partition of the unclean topic
  (``forced_unclean.py``); its time is how long the old leader and a follower stay down.

A fault's ``follower`` picks its broker (modulo their number) where no role does.
A cycle has one or two faults; two run one after the other or, one cycle in three,
together. The first cycles go through the kinds in a seeded order."""
from __future__ import annotations

import random

from tests.chaos.schedule import Cycle, Fault

from .cluster import SESSION_MS

KINDS = ("kill9_broker", "kill9_controller", "pause_short", "pause_long", "cut_from_controllers", "cut_leader",
         "unclean_election")
SESSION_S = SESSION_MS / 1000
PARTITIONS = 3


def draw(rng: random.Random, kind: str, topics) -> Fault:
    if kind == "pause_short":
        seconds = rng.uniform(0.3, 0.7) * SESSION_S
    elif kind == "pause_long":
        seconds = rng.uniform(1.4, 2.0) * SESSION_S
    elif kind == "kill9_controller":
        seconds = rng.uniform(1.5, 4.0)
    else:
        seconds = rng.uniform(3.0, 1.8 * SESSION_S)
    f = Fault(kind, round(seconds, 1), on_leader=kind in ("kill9_controller", "cut_leader"),
              follower=rng.randrange(len(topics) * PARTITIONS * 4))
    if kind in ("cut_from_controllers", "cut_leader"):
        f.params["cut"] = rng.choice(("held", "refused"))
    if kind == "cut_leader":
        f.params["topic"] = rng.choice(tuple(topics))
        f.params["partition"] = rng.randrange(PARTITIONS)
    if kind == "unclean_election":
        f.params["partition"] = rng.randrange(PARTITIONS)
    return f


class Schedule:
    def __init__(self, seed: int, topics) -> None:
        self.seed, self.topics = seed, tuple(topics)
        self.rng = random.Random(seed)
        self.order = self.rng.sample(KINDS, len(KINDS))
        self.drawn = 0

    def cycle(self, index: int) -> Cycle:
        """The faults of cycle ``index`` (cycles are drawn in order)."""
        out = []
        for _ in range(self.rng.choice((1, 2))):
            kind = self.order[self.drawn] if self.drawn < len(KINDS) else self.rng.choice(KINDS)
            self.drawn += 1
            out.append(draw(self.rng, kind, self.topics))
        return Cycle(out, len(out) > 1 and self.rng.random() < 0.3)
