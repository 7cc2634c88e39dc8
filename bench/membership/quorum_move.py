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
"""
from __future__ import annotations

import argparse
import json
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", action="store_true", help="also move ours back to Kafka's controllers")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    rows = []
    for name, old, new, ids, kafka_tools, static, tool in MOVES + ([OUT] if args.out else []):
        with tempfile.TemporaryDirectory(prefix="quorum-move-") as tmp:
            gaps = run_move(Path(tmp), old, new, ids, use_kafka_tools=kafka_tools, static=static)
        rows.append({"name": name, "tool": tool, **gaps})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print("| move | tool | " + " | ".join(f"longest gap, {c} (ms)" for c in COLUMNS) + " |")
    print("|---|---|" + "---:|" * len(COLUMNS))
    for r in rows:
        print(f"| {r['name']} | {r['tool']} | " + " | ".join(str(r.get(c, "-")) for c in COLUMNS) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
