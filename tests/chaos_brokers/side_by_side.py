"""Ours and Kafka's controllers side by side (issue 40): the summaries of runs on the
same seeds (``Report.summary``, one JSON object a line as ``--json`` writes them) folded
per side and printed as one table, then what differs: a fault class on which ours lose
acknowledged messages where Kafka's lose none (or the reverse), and one on which ours are
slower, their longest leaderless stretch or longest time without an ack more than
``SLACK_MS`` or ``SLACK_SHARE`` (whichever is larger) over Kafka's: the leaderless watch
polls every 0.2 s and a producer's acks come in bursts, so smaller differences are noise.

Only runs compared like for like count: a seed (and ELR setting) run by both sides through
the same number of cycles. A run whose other side stopped earlier (or is missing) is named
with the reason and left out of the comparison, since its cycles' faults differ.

``python -m tests.chaos_brokers.side_by_side FILE...`` prints the table of saved runs.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .per_fault import KindFigures
from .run import CLEAN, UNCLEAN

SIDES = ("ours", "kafka")
SLACK_MS = 1000
SLACK_SHARE = 0.25
TIMES = (("leaderless_ms", "longest leaderless"), ("ack_gap_ms", "longest without an ack"))


def fold(summaries: list[dict]) -> dict:
    """One side's runs as one: counts add up, longest times take the maximum."""
    out = {"runs": len(summaries), "ok": sum(bool(s["ok"]) for s in summaries), "acked": 0,
           "lost": {CLEAN: 0, UNCLEAN: 0}, "unexplained": 0, "duplicated": 0, "leaderless_ms": 0, "ack_gap_ms": 0,
           "per_kind": {}}
    for s in summaries:
        out["acked"] += s["acked"]
        for topic in (CLEAN, UNCLEAN):
            out["lost"][topic] += s["lost"].get(topic, 0)
        out["unexplained"] += s["unexplained"]
        out["duplicated"] += s["duplicated"]
        out["leaderless_ms"] = max(out["leaderless_ms"], s["leaderless_ms"])
        out["ack_gap_ms"] = max(out["ack_gap_ms"], s["ack_gap_ms"])
        for kind, figures in s["per_kind"].items():
            out["per_kind"].setdefault(kind, KindFigures()).add(KindFigures(**figures))
    return out


def slower(ours: int, kafka: int) -> bool:
    return ours > kafka + max(SLACK_MS, SLACK_SHARE * kafka)


def differences(ours: dict, kafka: dict) -> list[str]:
    """What a reader must look at: losses on one side only, and ours slower."""
    out = []
    if ours["lost"][CLEAN] and not kafka["lost"][CLEAN]:
        out.append(f"ours lose {ours['lost'][CLEAN]} acknowledged messages on {CLEAN}, Kafka's none")
    if kafka["lost"][CLEAN] and not ours["lost"][CLEAN]:
        out.append(f"Kafka's lose {kafka['lost'][CLEAN]} acknowledged messages on {CLEAN}, ours none")
    for kind in sorted(set(ours["per_kind"]) | set(kafka["per_kind"])):
        o, k = ours["per_kind"].get(kind, KindFigures()), kafka["per_kind"].get(kind, KindFigures())
        if o.lost and not k.lost:
            out.append(f"{kind}: ours lose {o.lost} (unclean elections {o.unclean}), Kafka's none "
                       f"(unclean elections {k.unclean})")
        elif k.lost and not o.lost:
            out.append(f"{kind}: Kafka's lose {k.lost} (unclean elections {k.unclean}), ours none "
                       f"(unclean elections {o.unclean})")
        for attr, what in TIMES:
            if slower(getattr(o, attr), getattr(k, attr)):
                out.append(f"{kind}: ours slower, {what} {getattr(o, attr)} ms against Kafka's {getattr(k, attr)} ms")
    for attr, what in TIMES:
        if slower(ours[attr], kafka[attr]):
            out.append(f"over the runs: ours slower, {what} {ours[attr]} ms against Kafka's {kafka[attr]} ms")
    return out


def matched(ours_runs: list[dict], kafka_runs: list[dict]) -> tuple[list[dict], list[dict], list[str]]:
    """(ours, Kafka's) runs paired like for like (same seed, ELR and cycles run), and a
    line for each run left out."""
    kafka_left = list(kafka_runs)
    ours, kafka, out = [], [], []
    for o in ours_runs:
        same = [k for k in kafka_left if (k["seed"], k["elr"]) == (o["seed"], o["elr"])]
        if not same:
            out.append(f"seed {o['seed']}: no run with Kafka's controllers")
            continue
        k = next((k for k in same if k["cycles"] == o["cycles"]), same[0])
        kafka_left.remove(k)
        if k["cycles"] != o["cycles"]:
            out.append(f"seed {o['seed']}: ours ran {o['cycles']} cycles ({o.get('problems', 0)} problems), "
                       f"Kafka's {k['cycles']} ({k.get('problems', 0)} problems)")
            continue
        ours.append(o)
        kafka.append(k)
    out += [f"seed {k['seed']}: no run with ours" for k in kafka_left]
    return ours, kafka, out


def _row(name: str, *cells, width: int = 14) -> str:
    return f"{name:<28}" + "".join(f"{str(c):>{width}}" for c in cells)


def table(ours_runs: list[dict], kafka_runs: list[dict]) -> str:
    every_ours, every_kafka = fold(ours_runs), fold(kafka_runs)
    ours_runs, kafka_runs, left_out = matched(ours_runs, kafka_runs)
    ours, kafka = fold(ours_runs), fold(kafka_runs)
    seeds = sorted({s["seed"] for s in ours_runs + kafka_runs})
    cycles = sorted({s["cycles"] for s in ours_runs + kafka_runs})
    elr = sorted({"on" if s["elr"] else "off" for s in ours_runs + kafka_runs})
    fencing = sorted({"on" if s["fast_fencing"] else "off" for s in ours_runs if s["fast_fencing"] is not None})
    lines = [f"side by side: seeds {', '.join(map(str, seeds)) or 'none'}; cycles {'/'.join(map(str, cycles))}; "
             f"ELR {'/'.join(elr)}; fast fencing: ours {'/'.join(fencing) or '-'}, Kafka's not applicable "
             f"(Kafka's controllers have none)",
             *[f"left out: {why}" for why in left_out],
             _row("", "ours", "kafka"),
             _row("runs ok, all", f"{every_ours['ok']}/{every_ours['runs']}",
                  f"{every_kafka['ok']}/{every_kafka['runs']}"),
             _row("runs ok, compared", f"{ours['ok']}/{ours['runs']}", f"{kafka['ok']}/{kafka['runs']}"),
             _row("acknowledged", ours["acked"], kafka["acked"]),
             _row(f"lost on {CLEAN}", ours["lost"][CLEAN], kafka["lost"][CLEAN]),
             _row(f"lost on {UNCLEAN}", ours["lost"][UNCLEAN], kafka["lost"][UNCLEAN]),
             _row("  not explained", ours["unexplained"], kafka["unexplained"]),
             _row("duplicated", ours["duplicated"], kafka["duplicated"]),
             _row("longest leaderless ms", ours["leaderless_ms"], kafka["leaderless_ms"]),
             _row("longest without an ack ms", ours["ack_gap_ms"], kafka["ack_gap_ms"]),
             "per fault class, ours|kafka:",
             _row("kind", "faults", "elections", "ISR changes", "unclean", "lost", "leaderless ms", "no ack ms")]
    for kind in sorted(set(ours["per_kind"]) | set(kafka["per_kind"])):
        o, k = ours["per_kind"].get(kind, KindFigures()), kafka["per_kind"].get(kind, KindFigures())
        lines.append(_row(kind, *(f"{getattr(o, a)}|{getattr(k, a)}" for a in
                                  ("count", "elections", "isr_changes", "unclean", "lost", "leaderless_ms",
                                   "ack_gap_ms"))))
    found = differences(ours, kafka)
    lines += [f"differs: {d}" for d in found] or [
        f"differs: nothing: ours lose nothing Kafka's keep and are no slower on any fault class "
        f"(within {SLACK_MS} ms or {SLACK_SHARE:.0%})"]
    return "\n".join(lines)


def load(paths) -> dict[str, list[dict]]:
    runs: dict[str, list[dict]] = {side: [] for side in SIDES}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                s = json.loads(line)
                runs[s["controllers"]].append(s)
    return runs


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.chaos_brokers.side_by_side", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", type=Path, help="JSON lines written by python -m tests.chaos_brokers --json")
    args = p.parse_args(argv)
    runs = load(args.files)
    print(table(runs["ours"], runs["kafka"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
