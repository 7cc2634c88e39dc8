"""The ``unclean_election`` fault: an unclean election forced on one partition of the
topic with ``unclean.leader.election.enable=true``, with acknowledged messages only the
old leader and one follower hold.

Its partition has leader ``L`` and followers ``F`` and ``G`` (``fault.follower`` picks
``F``), all three in the ISR (waited for). In turn, each step waiting (with a deadline)
for the brokers' Metadata to show it:

1. ``L`` is cut off from ``F`` (both directions): the ISR shrinks to ``{L, G}``, still
   ``min.insync.replicas``, so acks go on without ``F`` for half the fault's time;
2. ``L`` is cut off from ``G`` too: the ISR shrinks to ``{L}`` (with ELR on, ``G`` goes
   into the ELR);
3. ``G`` is killed (kill -9), and once it has left the Metadata's brokers (fenced),
   ``L`` too: no ISR or ELR member is left alive, and the controller elects ``F``
   uncleanly, which misses what was acknowledged in step 1.

Both stay down for the fault's time; undoing it restores the links and starts them
again (they truncate to ``F``'s log). The report then shows the unclean election and
the losses on that partition it explains. A step whose state never shows (another fault
moved the leadership, say) ends the fault early, saying where.
"""
from __future__ import annotations

import time

from tests.chaos.proxy import REFUSED

STEP_S = 30.0  # an ISR shrink takes replica.lag.time.max.ms (4 s) and a fencing up to a session (6 s)
POLL_S = 0.2


def _until(condition, halt, deadline_s: float = STEP_S) -> bool:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline and not halt.is_set():
        if condition():
            return True
        halt.wait(POLL_S)
    return condition()


def force_unclean(cluster, fault, watch, halt):
    """Steps 1-3 on ``fault.params['partition']`` of the unclean topic; (what was done,
    how to undo it)."""
    from .run import UNCLEAN  # run.py imports the faults

    p = fault.params["partition"]
    name = f"{UNCLEAN}-{p}"

    def full():
        v = watch.view(UNCLEAN, p)
        return (v is not None and v.leader in cluster.broker_ids and v.leader not in cluster.unavailable()
                and len(v.replicas) == 3 and set(v.isr) == set(v.replicas))
    if not _until(full, halt):  # an earlier fault's follower may still be catching up
        return f"unclean election on {name} not forced: no usable leader with a full ISR", lambda: None
    v = watch.view(UNCLEAN, p)
    leader = v.leader
    followers = [r for r in v.replicas if r != leader]
    f = followers[fault.follower % len(followers)]
    g = next(r for r in followers if r != f)
    pairs = [(leader, f), (f, leader)]
    killed: list[int] = []

    def undo():
        cluster.proxies.restore(pairs)
        for b in killed:
            cluster.ensure_running(b)

    def isr_is(members) -> bool:
        now = watch.view(UNCLEAN, p)
        return now is not None and now.leader == leader and set(now.isr) == set(members)

    try:
        cluster.proxies.cut(pairs, REFUSED)
        if not _until(lambda: isr_is({leader, g}), halt):
            return f"{name}: leader {leader} cut off from {f}, the ISR never became [{leader}, {g}]", undo
        halt.wait(fault.seconds / 2)  # acks go on without F
        pairs += [(leader, g), (g, leader)]
        cluster.proxies.cut(pairs, REFUSED)
        if not _until(lambda: isr_is({leader}), halt):
            return f"{name}: leader {leader} cut off from {f} and {g}, the ISR never became [{leader}]", undo
        killed.append(g)
        cluster.kill9(g)
        _until(lambda: g not in watch.listed, halt)  # fenced: it cannot be chosen before F
        killed.append(leader)
        cluster.kill9(leader)
        elected = _until(lambda: (now := watch.view(UNCLEAN, p)) is not None and now.leader == f
                         and now.epoch > v.epoch, halt)
    except BaseException:
        undo()
        raise
    return (f"unclean election forced on {name}: leader {leader} cut off from {f} then {g}, {g} and {leader} "
            f"killed, {f} {'elected' if elected else 'NOT elected within ' + str(STEP_S) + ' s'}"), undo
