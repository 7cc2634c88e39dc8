"""The report's figures per fault class (kind), pure functions of what a run recorded:

* when each fault began (the clock, the wall clock, the active controller's high
  watermark then) and when its cycle ended (after recovery and the check: the clock,
  the wall clock, the controller's log end read by the check);
* the controller's decisions (``metadata.py``), the leaderless stretches
  (``availability.py``, each kept with its start and end) and the producers' ack times.

A fault's **window** of the controller's log runs from its start offset to the start
of the next fault of its cycle (faults in turn) or to its cycle's end (the last fault,
or faults together, which share one window): the elections and ISR changes written
there are the ones it caused, its recovery included. Leaderless stretches and gaps
between acks count for the fault in whose time window (the same bounds, on the clock)
they began, the longest of each; a fault class takes the longest over its faults, the
messages their cycles' checks found lost for the first time with no unclean election to
explain them, and the losses an unclean election explains, given to the fault whose log
window holds that election (a loss on the unclean topic is seen only when a later ack
lands on the same offset, often cycles after the election).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .availability import Leaderless


@dataclass
class FaultStart:
    kind: str
    began: float  # time.monotonic()
    wall_ms: int  # time.time() in ms, the producers' clock
    offset: int | None  # the active controller's high watermark then (None: no leader answered)


@dataclass
class CycleSpan:
    index: int
    together: bool
    faults: list[FaultStart] = field(default_factory=list)
    ended: float = 0.0
    ended_wall_ms: int = 0
    end_offset: int | None = None  # the controller's log end read by the cycle's check
    lost: int = 0  # acknowledged messages the cycle's check found lost for the first time

    @property
    def began(self) -> float:
        return min(f.began for f in self.faults)

    @property
    def began_wall_ms(self) -> int:
        return min(f.wall_ms for f in self.faults)


@dataclass
class KindFigures:
    count: int = 0
    elections: int = 0
    isr_changes: int = 0
    unclean: int = 0
    lost: int = 0
    leaderless_ms: int = 0
    ack_gap_ms: int = 0

    def add(self, other: "KindFigures") -> None:
        """Fold another run's figures in: counts add up, longest times take the maximum."""
        for name in ("count", "elections", "isr_changes", "unclean", "lost"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.leaderless_ms = max(self.leaderless_ms, other.leaderless_ms)
        self.ack_gap_ms = max(self.ack_gap_ms, other.ack_gap_ms)

    def to_dict(self) -> dict:
        return asdict(self)


class Stretches(Leaderless):
    """``Leaderless`` that keeps every stretch: (partition, start, end)."""

    def __init__(self) -> None:
        super().__init__()
        self.ended: list[tuple[tuple[str, int], float, float]] = []

    def end(self, key, now: float) -> None:
        self.ended.append((key, self.since[key], now))
        super().end(key, now)

    def all(self, now: float) -> list[tuple[tuple[str, int], float, float]]:
        """Every stretch, those still open ending at ``now``."""
        return self.ended + [(key, start, now) for key, start in self.since.items()]


def windows(cycle: CycleSpan) -> list[tuple[FaultStart, int | None, int | None]]:
    """(fault, first offset, end offset) of each of the cycle's faults (None: unknown)."""
    if cycle.together:
        starts = [f.offset for f in cycle.faults if f.offset is not None]
        lo = min(starts) if starts else None
        return [(f, lo, cycle.end_offset) for f in cycle.faults]
    ends = [f.offset if f.offset is not None else cycle.end_offset for f in cycle.faults[1:]] + [cycle.end_offset]
    return [(f, f.offset, end) for f, end in zip(cycle.faults, ends)]


def time_windows(cycle: CycleSpan) -> list[tuple[float, float, int, int]]:
    """(start, end) on the clock and (start, end) in wall ms of each of the cycle's faults,
    bounded as ``windows`` bounds the log."""
    if cycle.together:
        return [(cycle.began, cycle.ended, cycle.began_wall_ms, cycle.ended_wall_ms)] * len(cycle.faults)
    nexts = cycle.faults[1:]
    return [(f.began, n.began, f.wall_ms, n.wall_ms) for f, n in zip(cycle.faults, nexts)] + [
        (cycle.faults[-1].began, cycle.ended, cycle.faults[-1].wall_ms, cycle.ended_wall_ms)]


def decided_between(decisions, lo: int, hi: int | None) -> dict[str, int]:
    """Elections (a new leader), unclean elections and ISR changes the controller wrote at
    offsets ``lo`` to ``hi`` (exclusive; None: to the end)."""
    out = {"elections": 0, "unclean": 0, "isr_changes": 0}
    for states in decisions.history.values():
        for before, after in zip(states, states[1:]):
            if after.offset >= lo and (hi is None or after.offset < hi):
                out["elections"] += after.leader != before.leader and after.leader >= 0
                out["unclean"] += after.unclean
                out["isr_changes"] += after.isr != before.isr
    return out


def longest_stretch_ms(stretches, lo: float, hi: float) -> int:
    """The longest of ``stretches`` ((key, start, end), clock seconds) begun in [lo, hi)."""
    return int(max((end - start for _, start, end in stretches if lo <= start < hi), default=0.0) * 1000)


def longest_ack_gap_ms(ack_times: list[int], lo_ms: int, hi_ms: int) -> int:
    """The longest time between two acks (ms) of gaps begun in [lo_ms, hi_ms); a gap still
    open at the last ack the producer gave counts up to ``hi_ms``."""
    gaps = [b - a for a, b in zip(ack_times, ack_times[1:]) if lo_ms <= a < hi_ms]
    if ack_times and lo_ms <= ack_times[-1] < hi_ms:
        gaps.append(hi_ms - ack_times[-1])
    elif not any(lo_ms <= t < hi_ms for t in ack_times):
        before = [t for t in ack_times if t < lo_ms]
        if before:  # no ack in the whole cycle: the gap from the last one before it
            gaps.append(hi_ms - before[-1])
    return max(gaps, default=0)


def per_kind(cycles: list[CycleSpan], decisions, stretches, ack_times: list[list[int]],
             explained: list[int] = ()) -> dict[str, KindFigures]:
    """kind -> its figures over the run's cycles. ``decisions``: the controller's history
    (None: unread, no elections counted); ``stretches``: ``Stretches.all``;
    ``ack_times``: each producer's ack times (ms); ``explained``: for each loss an unclean
    election explains, that election's offset in the controller's log."""
    out: dict[str, KindFigures] = {}
    explained = list(explained)
    for cycle in cycles:
        if not cycle.faults:
            continue
        kinds_seen = set()
        pairs = list(zip(windows(cycle), time_windows(cycle)))
        if cycle.together:  # one window: an explained loss goes to a forced unclean election first
            pairs.sort(key=lambda pair: pair[0][0].kind != "unclean_election")
        for (fault, lo, hi), (t0, t1, w0, w1) in pairs:
            leaderless = longest_stretch_ms(stretches, t0, t1)
            gap = max((longest_ack_gap_ms(t, w0, w1) for t in ack_times), default=0)
            k = out.setdefault(fault.kind, KindFigures())
            k.count += 1
            if lo is not None:
                held = [o for o in explained if o >= lo and (hi is None or o < hi)]
                k.lost += len(held)
                explained = [o for o in explained if o not in held]  # given once
            if decisions is not None and lo is not None:
                d = decided_between(decisions, lo, hi)
                k.elections += d["elections"]
                k.unclean += d["unclean"]
                k.isr_changes += d["isr_changes"]
            k.leaderless_ms = max(k.leaderless_ms, leaderless)
            k.ack_gap_ms = max(k.ack_gap_ms, gap)
            if fault.kind not in kinds_seen:
                k.lost += cycle.lost
                kinds_seen.add(fault.kind)
    return out
