"""``python -m tests.chaos --nodes 3 --cycles 20 [--kafka K] [--seed N] [--workdir DIR]``: one chaos
run over real processes; prints each cycle and the report, exits 1 on a failed check."""
from __future__ import annotations

import argparse
import logging
import random
import sys
import tempfile
from pathlib import Path

from .run import run


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.chaos", description=__doc__)
    p.add_argument("--seed", type=int, default=None, help="replay a run (default: a fresh seed, printed)")
    p.add_argument("--nodes", type=int, default=3, help="voters (our processes)")
    p.add_argument("--kafka", type=int, default=0, help="of the voters, how many are Apache Kafka controllers")
    p.add_argument("--cycles", type=int, default=20)
    p.add_argument("--scale", type=float, default=1.0, help="multiplies every fault's duration")
    p.add_argument("--workdir", type=Path, default=None, help="keep the nodes' data and logs here")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    print(f"chaos: seed {seed}, {args.nodes} voters ({args.kafka} Kafka), {args.cycles} cycles", flush=True)
    with tempfile.TemporaryDirectory(prefix="chaos-") as tmp:
        workdir = args.workdir or Path(tmp)
        report = run(workdir, seed, args.nodes, args.cycles, args.scale,
                     on_cycle=lambda line: print(line, flush=True), kafka=args.kafka)
        print(report.format(), flush=True)
        if not report.ok:
            print(f"node logs under {workdir}" if args.workdir else "rerun with --workdir to keep the node logs")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
