"""Carrying out one fault of the brokers' schedule: start it, hold it for its duration
(the harness's clock, not a synchronisation; what the fault waits for is polled with a
deadline), undo it. Returns what was done, with the fault's parameters; what went wrong
(no controller taking over, a shutdown that never finished) goes into ``problems``.

``monitor`` (``tests/chaos/monitor.py``) tells which controller is active; without it
the controller faults only act, without looking for the takeover."""
from __future__ import annotations

import threading
import time

from tests.chaos.monitor import FRESH_S
from tests.chaos.proxy import between

from .forced_unclean import force_unclean
from .schedule import Fault

POLL_S = 0.1
TAKEOVER_S = 20.0  # an isolated active controller's successor: fetch timeout, then an election
REJOIN_S = 30.0  # the isolated controller follows the new one after the links are back
SHUTDOWN_S = 60.0  # a controlled shutdown still going when the fault's time is up ends within this
DISK_EXIT_S = 30.0  # a broker on a full disk writes (its metadata log, many times a second) and halts


def until(condition, seconds: float, halt: threading.Event) -> float | None:
    """Poll ``condition`` until it holds (the seconds it took) or ``seconds`` pass (None)."""
    started = time.monotonic()
    while True:
        if condition():
            return time.monotonic() - started
        left = started + seconds - time.monotonic()
        if left <= 0 or halt.is_set():
            return None
        halt.wait(min(POLL_S, left))


def others(items, one):
    return [i for i in items if i != one]


def follows(monitor, node: int, leader: int) -> bool:
    """``node`` names ``leader`` as the active controller and claims no leadership."""
    with monitor.lock:
        seen = monitor.latest.get(node)
    return seen is not None and time.monotonic() - seen[0] < FRESH_S and seen[1] == leader and seen[2] < 0


def rejoined(monitor, node: int) -> bool:
    """A majority agrees on an active controller, and ``node`` follows it (or is it again)."""
    agreed = monitor.leader()
    return agreed is not None and (agreed[0] == node or follows(monitor, node, agreed[0]))


def seen(monitor) -> str:
    """What each controller last answered the monitor, for a problem's text."""
    now = time.monotonic()
    with monitor.lock:
        latest = dict(monitor.latest)
    return "the monitor last saw " + ", ".join(
        f"{i} naming {named} ({'leading epoch %d' % epoch if epoch >= 0 else 'not leading'}) {now - t:.1f} s ago"
        for i, (t, named, epoch, _) in sorted(latest.items()))


ELECTION_WORDS = ("transition", "elect", "vote", "prospective", "candidate", "resign")


def election_lines(cluster, ids, n: int = 6) -> str:
    """The last ``n`` lines about elections in each of these controllers' logs."""
    out = []
    for i in ids:
        node = cluster.controllers.nodes.get(i) if hasattr(cluster, "controllers") else None
        if node is None:
            continue
        try:
            tail = node.log_tail(2000).splitlines()
        except OSError:
            continue
        picked = [line.strip()[:240] for line in tail if any(w in line.lower() for w in ELECTION_WORDS)][-n:]
        out.append(f"\n    controller {i}'s log on elections:" + "".join(f"\n      {line}" for line in picked))
    return "".join(out)


def isolate_active_controller(cluster, fault: Fault, active: int | None, monitor, halt, problems) -> str:
    c = active if active is not None else cluster.controller_ids[0]
    cut = fault.params["cut"]
    pairs = between([c], others(cluster.controller_ids, c) + list(cluster.broker_ids))
    what = f"active controller {c} isolated from controllers and brokers ({cut}) {fault.seconds:.1f} s"
    cluster.proxies.cut(pairs, cut)
    try:
        if monitor is None:
            halt.wait(fault.seconds)
            return what
        new = None

        def taken():
            nonlocal new
            agreed = monitor.leader()
            new = agreed[0] if agreed is not None and agreed[0] != c else None
            return new is not None
        took = until(taken, TAKEOVER_S, halt)
        halt.wait(max(0.0, fault.seconds - (took or TAKEOVER_S)))
    finally:
        cluster.proxies.restore(pairs)
    if took is None:
        if not halt.is_set():
            problems.append(f"isolate_active_controller: no other controller took over from {c} within "
                            f"{TAKEOVER_S:.0f} s; {seen(monitor)}{election_lines(cluster, others(cluster.controller_ids, c))}")
        return what + ": no takeover"
    back = until(lambda: rejoined(monitor, c), REJOIN_S, halt)
    if back is None and not halt.is_set():
        problems.append(f"isolate_active_controller: controller {c} did not follow the active controller within "
                        f"{REJOIN_S:.0f} s of its links coming back")
    return (what + f": controller {new} took over after {took:.1f} s, {c} rejoined "
            + (f"{back:.1f} s after the links came back" if back is not None else "NOT"))


def flap(cluster, fault: Fault, broker: int, halt) -> str:
    cut = fault.params["cut"]
    if fault.params["link"] == "controllers":
        pairs, peer = between([broker], cluster.controller_ids), "the controllers"
    else:
        other = others(cluster.broker_ids, broker)[fault.params["peer"] % (len(cluster.broker_ids) - 1)]
        pairs, peer = between([broker], [other]), f"broker {other}"
    flips = 0
    try:
        for i, seconds in enumerate(fault.params["periods"]):
            if halt.is_set():
                break
            if i % 2 == 0:
                cluster.proxies.cut(pairs, cut)
            else:
                cluster.proxies.restore(pairs)
            flips += 1
            halt.wait(seconds)
    finally:
        cluster.proxies.restore(pairs)
    shown = "/".join(f"{s:g}" for s in fault.params["periods"])
    return f"links broker {broker} <-> {peer} flapped ({cut}), down/up {shown} s: {flips} flips"


def delay(cluster, fault: Fault, broker: int, halt) -> str:
    pairs = between([broker], list(cluster.controller_ids) + others(cluster.broker_ids, broker))
    ms = fault.params["latency_ms"]
    cluster.proxies.delay(ms / 1000, pairs)
    try:
        halt.wait(fault.seconds)
    finally:
        cluster.proxies.delay(0.0, pairs)
    return f"{ms} ms each way on every link of broker {broker} ({fault.params['session']} its session) {fault.seconds:.1f} s"


def wait_exit(cluster, broker: int, seconds: float, halt) -> tuple[float | None, int | None]:
    """(seconds until the leaving broker stopped, its return code), or (None, None)."""
    rc = None

    def exited():
        nonlocal rc
        rc = cluster.note_exit(broker)
        return rc is not None
    return until(exited, seconds, halt), rc


def controlled_shutdown(cluster, fault: Fault, broker: int, watch, halt, problems) -> str:
    halt.wait(fault.params.get("after_s", 0.0))  # in the middle of the other fault of its cycle
    with watch.lock:
        led = sum(1 for leader in watch.leaders.values() if leader == broker)
    what = f"SIGTERM broker {broker}" + (f" {fault.params['after_s']} s into the other fault" if "after_s" in fault.params else "")
    if not cluster.terminate(broker):
        return what + " (not running: nothing to shut down)"
    try:
        took, rc = wait_exit(cluster, broker, fault.seconds, halt)
        if took is None:
            took, rc = wait_exit(cluster, broker, SHUTDOWN_S, halt)
            took = None if took is None else took + fault.seconds
        else:
            halt.wait(max(0.0, fault.seconds - took))  # down for the rest of the fault's time
        if took is None:
            cluster.kill9(broker)
            if not halt.is_set():
                problems.append(f"controlled_shutdown: broker {broker} still running {fault.seconds + SHUTDOWN_S:.0f} s "
                                f"after SIGTERM (killed)")
            return what + f" (leading {led} of the topics' partitions): NOT stopped within {fault.seconds + SHUTDOWN_S:.0f} s, killed"
    finally:
        cluster.ensure_running(broker)
    return what + f" (leading {led} of the topics' partitions): controlled shutdown in {took:.1f} s, exit {rc}; started again after {fault.seconds:.1f} s"


def disk_full(cluster, fault: Fault, broker: int, halt) -> str:
    disk = cluster.disks[broker]
    if not disk.mounted:
        return f"disk_full broker {broker} skipped: {disk.why_not}"
    running = cluster.running(broker)
    waited = max(fault.seconds, DISK_EXIT_S) if running else 0.0
    filled, took, rc = 0, None, None
    try:
        filled = cluster.fill_disk(broker)
        took, rc = wait_exit(cluster, broker, waited, halt)
        halt.wait(max(0.0, fault.seconds - (took or waited)))  # full (and the broker down) for the fault's time
    finally:
        cluster.free_disk(broker)
        cluster.ensure_running(broker)
    what = f"log dir of broker {broker} filled ({filled >> 20} MiB) {fault.seconds:.1f} s"
    if not running:
        return what + " (not running)"
    if took is None:
        return what + f": still running after {waited:.0f} s, freed"
    return what + f": it stopped after {took:.1f} s with {rc}, freed and started again"


def run_fault(cluster, fault: Fault, active_controller: int | None, watch, halt: threading.Event,
              monitor=None, problems: list | None = None) -> str:
    brokers = cluster.broker_ids
    broker = brokers[fault.follower % len(brokers)]
    proxies = cluster.proxies
    problems = [] if problems is None else problems
    pairs = []
    undo = lambda: None  # noqa: E731
    if fault.kind == "kill9_broker":
        cluster.kill9(broker)
        undo = lambda: cluster.ensure_running(broker)  # noqa: E731
        what = f"kill -9 broker {broker} {fault.seconds:.1f} s"
    elif fault.kind == "kill9_controller":
        c = active_controller if active_controller is not None else cluster.controller_ids[0]
        cluster.controllers.kill9(c)
        undo = lambda: cluster.controllers.ensure_running(c)  # noqa: E731
        what = f"kill -9 controller {c}" + (" (active)" if active_controller is not None else "") + f" {fault.seconds:.1f} s"
    elif fault.kind in ("pause_short", "pause_long"):
        running = cluster.running(broker)
        cluster.pause(broker)
        undo = lambda: cluster.resume(broker)  # noqa: E731
        what = f"SIGSTOP broker {broker} {fault.seconds:.1f} s" + ("" if running else " (down: nothing to stop)")
    elif fault.kind == "cut_from_controllers":
        pairs = [(broker, c) for c in cluster.controller_ids] + [(c, broker) for c in cluster.controller_ids]
        what = f"broker {broker} cut off from the controllers ({fault.params['cut']}) {fault.seconds:.1f} s"
    elif fault.kind == "cut_leader":
        topic, p = fault.params["topic"], fault.params["partition"]
        leader = watch.leader(topic, p)
        if leader not in brokers:
            leader = broker
        others_ = [b for b in brokers if b != leader]
        pairs = [(leader, b) for b in others_] + [(b, leader) for b in others_]
        what = f"leader {leader} of {topic}-{p} cut off from the other brokers ({fault.params['cut']}) {fault.seconds:.1f} s"
    elif fault.kind == "isolate_active_controller":
        return isolate_active_controller(cluster, fault, active_controller, monitor, halt, problems)
    elif fault.kind == "flap":
        return flap(cluster, fault, broker, halt)
    elif fault.kind == "delay":
        return delay(cluster, fault, broker, halt)
    elif fault.kind == "controlled_shutdown":
        return controlled_shutdown(cluster, fault, broker, watch, halt, problems)
    elif fault.kind == "disk_full":
        return disk_full(cluster, fault, broker, halt)
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
