"""Carrying out one fault of the brokers' schedule: start it, hold it for its duration
(the harness's clock, not a synchronisation), undo it. Returns what was done."""
from __future__ import annotations

import threading

from .forced_unclean import force_unclean
from .schedule import Fault


def run_fault(cluster, fault: Fault, active_controller: int | None, watch, halt: threading.Event) -> str:
    brokers = cluster.broker_ids
    broker = brokers[fault.follower % len(brokers)]
    proxies = cluster.proxies
    pairs = []
    undo = lambda: None  # noqa: E731
    if fault.kind == "kill9_broker":
        cluster.kill9(broker)
        undo = lambda: cluster.ensure_running(broker)  # noqa: E731
        what = f"kill -9 broker {broker}"
    elif fault.kind == "kill9_controller":
        c = active_controller if active_controller is not None else cluster.controller_ids[0]
        cluster.controllers.kill9(c)
        undo = lambda: cluster.controllers.ensure_running(c)  # noqa: E731
        what = f"kill -9 controller {c}" + (" (active)" if active_controller is not None else "")
    elif fault.kind in ("pause_short", "pause_long"):
        running = cluster.running(broker)
        cluster.pause(broker)
        undo = lambda: cluster.resume(broker)  # noqa: E731
        what = f"SIGSTOP broker {broker} {fault.seconds:.1f} s" + ("" if running else " (down: nothing to stop)")
    elif fault.kind == "cut_from_controllers":
        pairs = [(broker, c) for c in cluster.controller_ids] + [(c, broker) for c in cluster.controller_ids]
        what = f"broker {broker} cut off from the controllers ({fault.params['cut']})"
    elif fault.kind == "cut_leader":
        topic, p = fault.params["topic"], fault.params["partition"]
        leader = watch.leader(topic, p)
        if leader not in brokers:
            leader = broker
        others = [b for b in brokers if b != leader]
        pairs = [(leader, b) for b in others] + [(b, leader) for b in others]
        what = f"leader {leader} of {topic}-{p} cut off from the other brokers ({fault.params['cut']})"
    elif fault.kind == "unclean_election":
        what, undo = force_unclean(cluster, fault, watch, halt)
    else:
        raise ValueError(fault.kind)
    if pairs:
        proxies.cut(pairs, fault.params["cut"])
        undo = lambda: proxies.restore(pairs)  # noqa: E731
    try:
        halt.wait(fault.seconds)
    finally:
        undo()
    return what
