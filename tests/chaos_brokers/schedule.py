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
* ``isolate_active_controller``: every link to and from the active controller cut
  (other controllers and brokers): another controller must take over, and the old one
  follow it once the links are back;
* ``flap``: a broker's links to the controllers (``link=controllers``) or to one other
  broker (``link=broker``) down and up in turn, for the seeded ``periods`` (seconds,
  down first), each either shorter than the heartbeat (``HEARTBEAT_MS``) or longer than
  ``replica.lag.time.max.ms`` (``REPLICA_LAG_MS``), both in every flap;
* ``delay``: ``latency_ms`` added to every link of a broker, each way, ``below`` or
  ``above`` its session. Below: a round trip under half of
  ``controller.quorum.request.timeout.ms`` (2 s), within which a Kafka broker's
  requests to the controllers (its metadata fetches, then its heartbeats, which follow
  the controller those fetches find) must be answered; 824 ms and 1411 ms each way
  already had a broker fenced, its heartbeats never sent (seed 29);
* ``controlled_shutdown``: SIGTERM of a broker, which asks the controller to move its
  leaderships away before it stops; started again after the fault's time. In a cycle
  whose two faults run together it starts ``after_s`` into the other one;
* ``disk_full``: a broker's log directory (its own tmpfs, ``small_disk.py``) filled
  until its writes fail (Kafka then takes the directory offline and, its only one,
  halts the broker); freed and the broker started again after the fault's time.
* ``unclean_election``: an unclean election forced on a partition of the unclean topic
  (``forced_unclean.py``); its time is how long the old leader and a follower stay down.

A fault's ``follower`` picks its broker (modulo their number) where no role does.
A cycle has one or two faults; two run one after the other or, one cycle in three (one
in two with a controlled shutdown), together. The first cycles go through the kinds in
a seeded order. ``recovery_s`` is how long the harness waits for each step of the
recovery after a cycle's faults, from its slowest kind."""
from __future__ import annotations

import random

from tests.chaos.schedule import Cycle, Fault

from .cluster import HEARTBEAT_MS, REPLICA_LAG_MS, SESSION_MS

KINDS = ("kill9_broker", "kill9_controller", "pause_short", "pause_long", "cut_from_controllers", "cut_leader",
         "isolate_active_controller", "flap", "delay", "controlled_shutdown", "disk_full", "unclean_election")
SESSION_S = SESSION_MS / 1000
PARTITIONS = 3
HEARTBEAT_S, REPLICA_LAG_S = HEARTBEAT_MS / 1000, REPLICA_LAG_MS / 1000

# Each step of the recovery (an active controller; every broker unfenced and every
# partition led; a new ack on both topics; the consumers caught up) within this many
# seconds after healing. Measured on 2 busy cores (healing to new acks): a broker's JVM
# started again 9-18 s, a controller taking over or a fenced broker back under 1 s,
# links back under 1 s; each deadline is about three times its kind's worst (a JVM
# start on a loaded machine varies most). Every step is polled: a deadline only bounds
# a recovery that does not come.
RECOVERY_S = {
    "kill9_broker": 60.0, "controlled_shutdown": 60.0, "disk_full": 60.0,  # a broker JVM starts again
    "kill9_controller": 45.0, "isolate_active_controller": 45.0,  # a controller starts again or catches up
    "pause_long": 45.0, "delay": 45.0,  # a fenced broker catches up and is unfenced
    "unclean_election": 60.0,  # the old leader and a follower start again
}
RECOVERY_DEFAULT_S = 30.0  # links back: brokers heartbeat and fetch at once


def periods(rng: random.Random) -> list[float]:
    """A flap's down and up times: 3 to 6 of them, each shorter than the heartbeat or
    longer than replica.lag.time.max.ms, at least one of each."""
    n = rng.randint(3, 6)
    longs = [True, False] + [rng.random() < 0.4 for _ in range(n - 2)]
    rng.shuffle(longs)
    return [round(rng.uniform(1.1, 1.5) * REPLICA_LAG_S if long else rng.uniform(0.2, 0.9) * HEARTBEAT_S, 2)
            for long in longs]


def draw(rng: random.Random, kind: str, topics) -> Fault:
    params: dict = {}
    if kind == "pause_short":
        seconds = rng.uniform(0.3, 0.7) * SESSION_S
    elif kind == "pause_long":
        seconds = rng.uniform(1.4, 2.0) * SESSION_S
    elif kind == "kill9_controller":
        seconds = rng.uniform(1.5, 4.0)
    elif kind == "isolate_active_controller":
        seconds = rng.uniform(4.0, 1.6 * SESSION_S)  # past an election; sometimes past the brokers' sessions
    elif kind == "flap":
        params["periods"] = periods(rng)
        seconds = sum(params["periods"])
    elif kind == "delay":
        # one way: a heartbeat's round trip is twice that
        above = rng.random() < 0.5
        latency = rng.uniform(1.1, 1.4) * SESSION_S if above else rng.uniform(0.01, 0.06) * SESSION_S
        params.update(latency_ms=int(latency * 1000), session="above" if above else "below")
        seconds = rng.uniform(2.0, 3.0) * SESSION_S if above else rng.uniform(1.0, 2.0) * SESSION_S
    else:
        seconds = rng.uniform(3.0, 1.8 * SESSION_S)
    f = Fault(kind, round(seconds, 1), on_leader=kind in ("kill9_controller", "cut_leader", "isolate_active_controller"),
              follower=rng.randrange(len(topics) * PARTITIONS * 4))
    if kind in ("cut_from_controllers", "cut_leader", "isolate_active_controller", "flap"):
        f.params["cut"] = rng.choice(("held", "refused"))
    if kind == "cut_leader":
        f.params["topic"] = rng.choice(tuple(topics))
        f.params["partition"] = rng.randrange(PARTITIONS)
    if kind == "flap":
        f.params["link"] = rng.choice(("controllers", "broker"))
        if f.params["link"] == "broker":
            f.params["peer"] = rng.randrange(3)  # the other broker, among the three others
    if kind == "unclean_election":
        f.params["partition"] = rng.randrange(PARTITIONS)
    f.params.update(params)
    return f


def recovery_s(cycle: Cycle) -> float:
    return max((RECOVERY_S.get(f.kind, RECOVERY_DEFAULT_S) for f in cycle.faults), default=RECOVERY_DEFAULT_S)


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
        shutdowns = [f for f in out if f.kind == "controlled_shutdown"]
        together = len(out) > 1 and self.rng.random() < (0.5 if shutdowns else 0.3)
        if together and len(shutdowns) == 1:
            other = next(f for f in out if f is not shutdowns[0])
            shutdowns[0].params["after_s"] = round(self.rng.uniform(0.2, 0.6) * other.seconds, 1)
        return Cycle(out, together)
