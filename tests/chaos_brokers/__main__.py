"""``python -m tests.chaos_brokers --cycles 20 [--seed N[,N...]] [--elr on|off] [--fast-fencing on|off]
[--controllers ours|kafka|both] [--json FILE] [--workdir DIR]``: one broker chaos run per seed and
side; prints each cycle and the report, whose last line reads ``acknowledged N, lost L, duplicated D,
longest leaderless P ms, longest without an ack A ms``. ``--controllers kafka`` puts three Apache
Kafka controllers in place of ours (fast fencing then does not apply); ``--controllers both`` (or
``--compare``) runs ours, then Kafka's, on every seed and ends with the two side by side
(``side_by_side.py``). Exits 1 on a failed check."""
from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import tempfile
from pathlib import Path

from .cluster import CONTROLLERS
from .run import run
from .side_by_side import table


def seeds(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s.strip()]


def one(args, seed: int, controllers: str):
    fencing = "not applicable" if controllers == "kafka" else args.fast_fencing
    print(f"broker chaos: seed {seed}, controllers {controllers}, {args.cycles} cycles, ELR {args.elr}, "
          f"fast fencing {fencing}", flush=True)
    with tempfile.TemporaryDirectory(prefix="chaos-brokers-") as tmp:
        workdir = args.workdir / f"{controllers}-{seed}" if args.workdir else Path(tmp)
        report = run(workdir, seed, args.cycles, elr=args.elr == "on", fast_fencing=args.fast_fencing == "on",
                     on_cycle=lambda line: print(line, flush=True), controllers=controllers)
        if not report.ok:
            print(f"logs under {workdir}" if args.workdir else "rerun with --workdir to keep the logs", flush=True)
        print(report.format(), flush=True)
    if args.json:
        with open(args.json, "a") as f:
            f.write(json.dumps(report.summary()) + "\n")
    return report


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.chaos_brokers", description=__doc__)
    p.add_argument("--seed", type=seeds, default=None,
                   help="replay a run; a comma-separated list runs each (default: a fresh seed, printed)")
    p.add_argument("--cycles", type=int, default=20)
    p.add_argument("--controllers", choices=(*CONTROLLERS, "both"), default="ours",
                   help="whose controllers decide; both: ours then Kafka's on the same seeds, side by side")
    p.add_argument("--compare", action="store_true", help="the same as --controllers both")
    p.add_argument("--elr", choices=("on", "off"), default="on", help="eligible.leader.replicas.version 1 or 0")
    p.add_argument("--fast-fencing", choices=("on", "off"), default="on",
                   help="kraft.broker.fast.fencing.enable (ours only)")
    p.add_argument("--json", type=Path, default=None, help="append each run's summary here, one JSON line")
    p.add_argument("--workdir", type=Path, default=None, help="keep the processes' data and logs here")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    sides = CONTROLLERS if args.compare or args.controllers == "both" else (args.controllers,)
    reports = [one(args, seed, side) for seed in (args.seed or [random.randrange(2**31)]) for side in sides]
    if len(sides) > 1:
        print(table(*[[r.summary() for r in reports if r.controllers == side] for side in CONTROLLERS]), flush=True)
    return 0 if all(r.ok for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
