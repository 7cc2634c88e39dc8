"""Quorum-move bench (issue 39): the longest time between two acknowledgements of an
acks=all producer while a live cluster's controller quorum moves, ours against Kafka's
own move, in one run.

    python bench/membership/quorum_move.py           # Kafka's controllers -> ours (dynamic and static), and -> new Kafka controllers
    python bench/membership/quorum_move.py --out     # also ours -> Kafka's controllers
    python bench/membership/quorum_move.py --json    # the same figures as JSON

Each row is one run of the documented procedure (``tests/support/quorum_move.py``, the
slow tests ``tests/interop/test_kafka_brokers_move_*.py`` run the same): three
controllers (a dynamic quorum) serving three Apache Kafka brokers, Kafka's
VerifiableProducer (idempotent, acks=all, 100 messages a second) and VerifiableConsumer
on a topic of 3 partitions, RF 3, ``min.insync.replicas=2``; the three new controllers
start as observers; the brokers are restarted one at a time with the new controllers in
``controller.quorum.bootstrap.servers``; the voters move (ours: ``kraft-metadata-quorum
reassign``, the leader last, waiting for the brokers; Kafka: ``kafka-metadata-quorum
add-controller`` three times, then ``remove-controller`` three times, the leader last);
the old controllers stop, and the producer runs 12 s more. The static row starts from
Kafka's controllers set by ``controller.quorum.voters`` (kraft.version 0), upgraded with
``kafka-features upgrade --feature kraft.version=1`` under load before the restarts. Every acknowledged message is
checked consumed, and no broker fenced but by its restart, as in the tests.

Columns: the longest gap (ms, the producer's clock) during the kraft.version upgrade
(static row only), the rolling restart, the move (from its first command to the old
controllers' stop), and after the stop.

``--rounds N`` runs the moves N times, interleaved (round 1 of every move, then round 2,
...), so that whatever else the machine does falls on both sides alike; each cell is
then the median of the N rounds, with every round's figure after it, and a last table
gives ours / Kafka's per column (medians of the dynamic move onto ours against Kafka's
own move).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.quorum_move import run_move  # noqa: E402

# name, old kind, new kind, new ids, Kafka's tools, static, tool
MOVES = [
    ("Kafka's controllers -> ours", "kafka", "ours", (4, 5, 6), False, False, "kraft-metadata-quorum reassign"),
    ("Kafka's controllers -> new Kafka controllers", "kafka", "kafka", (7, 8, 9), True, False,
     "kafka-metadata-quorum add/remove-controller"),
    ("Kafka's static controllers -> ours", "kafka", "ours", (4, 5, 6), False, True,
     "kafka-features upgrade, kraft-metadata-quorum reassign"),
]
OUT = ("ours -> Kafka's controllers", "ours", "kafka", (7, 8, 9), False, False, "kraft-metadata-quorum reassign")
COLUMNS = ("kraft.version upgrade", "restarts", "move", "after the old controllers stopped")


def _cell(values: list[int]) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return str(values[0])
    return f"{statistics.median(values):g} ({', '.join(map(str, values))})"


def ratios(rows: list[dict]) -> dict[str, float | None]:
    """Ours / Kafka's per column: the median of the dynamic move onto ours against the
    median of Kafka's own move (None where either has no figure, or Kafka's is 0)."""
    ours, kafka = rows[0], rows[1]
    out = {}
    for column in COLUMNS:
        a, b = ours["rounds"].get(column), kafka["rounds"].get(column)
        out[column] = (round(statistics.median(a) / statistics.median(b), 2)
                       if a and b and statistics.median(b) > 0 else None)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", action="store_true", help="also move ours back to Kafka's controllers")
    parser.add_argument("--rounds", type=int, default=1, help="run every move this many times, interleaved")
    parser.add_argument("--no-static", action="store_true",
                        help="leave out the static quorum's move (it has no Kafka counterpart in the ratios)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    moves = [m for m in MOVES if not (args.no_static and m[5])] + ([OUT] if args.out else [])
    rows = [{"name": m[0], "tool": m[6], "rounds": {}} for m in moves]
    for round_no in range(1, args.rounds + 1):
        for row, (name, old, new, ids, kafka_tools, static, tool) in zip(rows, moves):
            with tempfile.TemporaryDirectory(prefix="quorum-move-") as tmp:
                gaps = run_move(Path(tmp), old, new, ids, use_kafka_tools=kafka_tools, static=static)
            for column, value in gaps.items():
                row["rounds"].setdefault(column, []).append(value)
            print(f"[round {round_no}/{args.rounds}] {name}: {gaps}", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps({"rows": rows, "ours/kafka": ratios(rows)}, indent=2))
        return 0
    what = "median (each round)" if args.rounds > 1 else "ms"
    print("| move | tool | " + " | ".join(f"longest gap, {c} ({what})" for c in COLUMNS) + " |")
    print("|---|---|" + "---:|" * len(COLUMNS))
    for r in rows:
        print(f"| {r['name']} | {r['tool']} | " + " | ".join(_cell(r["rounds"].get(c, [])) for c in COLUMNS) + " |")
    print()
    print("| ours / Kafka's | " + " | ".join(COLUMNS) + " |")
    print("|---|" + "---:|" * len(COLUMNS))
    print("| dynamic move onto ours / Kafka's own move | "
          + " | ".join("-" if v is None else f"{v:.2f}" for v in ratios(rows).values()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
