"""Carrying out one fault of the schedule on the cluster: start it, hold it for its
duration (the harness's clock, not a synchronisation), undo it."""
from __future__ import annotations

import threading
import time

from .proxy import HELD, between
from .schedule import Fault


def target(fault: Fault, ids: list[int], leader: int | None) -> int:
    others = [i for i in ids if i != leader]
    if fault.on_leader and leader is not None:
        return leader
    return others[fault.follower % len(others)]


def run_fault(cluster, fault: Fault, leader: int | None, halt: threading.Event) -> str:
    """Apply ``fault``, wait its duration (or until ``halt``), undo it; what was done."""
    ids = cluster.ids
    node = target(fault, ids, leader)
    proxies = cluster.proxies
    cut = fault.params.get("cut", HELD)
    hold = fault.seconds
    pairs = []  # the links this fault cuts (undone alone: another fault may be running)
    if fault.kind == "kill9":
        cluster.kill9(node)
        undo = lambda: cluster.ensure_running(node)  # noqa: E731
        what = f"kill -9 node {node}"
    elif fault.kind == "pause":
        cluster.pause(node)
        undo = lambda: cluster.resume(node)  # noqa: E731
        what = f"SIGSTOP node {node}"
    elif fault.kind == "restart":
        cluster.restart(node)
        undo = lambda: None  # noqa: E731
        what = f"clean restart of node {node}"
    elif fault.kind == "isolate_leader":
        node = leader if leader is not None else node
        pairs = between([node], [i for i in ids if i != node])
        proxies.cut(pairs, cut)
        what = f"node {node} isolated ({cut})"
    elif fault.kind == "split":
        others = [i for i in ids if i != node]
        minority = [node] + others[:fault.params["minority"] - 1]
        pairs = between(minority, [i for i in ids if i not in minority])
        proxies.cut(pairs, cut)
        what = f"split {sorted(minority)} | {[i for i in ids if i not in minority]} ({cut})"
    elif fault.kind == "one_way":
        node = leader if leader is not None else node
        followers = [i for i in ids if i != node][:fault.params["followers"]]
        pairs = ([(node, f) for f in followers] if fault.params["direction"] == "from_leader"
                 else [(f, node) for f in followers])
        proxies.cut(pairs)
        what = f"one-way cut {pairs}"
    elif fault.kind == "delay":
        proxies.delay(fault.params["ms"] / 1000)
        undo = lambda: proxies.delay(0.0)  # noqa: E731
        what = f"{fault.params['ms']} ms delay on every link"
    elif fault.kind == "flap":
        pairs = between([node], [i for i in ids if i != node])
        deadline = time.monotonic() + hold
        flips = 0
        while time.monotonic() < deadline and not halt.is_set():
            proxies.cut(pairs, cut) if flips % 2 == 0 else proxies.restore(pairs)
            flips += 1
            halt.wait(fault.params["period_s"])
        hold = 0
        what = f"node {node} flapped {flips} times ({cut})"
    else:
        raise ValueError(fault.kind)
    if pairs:
        undo = lambda: proxies.restore(pairs)  # noqa: E731
    try:
        halt.wait(hold)
    finally:
        undo()
    return what
