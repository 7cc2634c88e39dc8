"""``python -m tests.chaos_brokers --cycles 20 [--seed N] [--elr on|off] [--fast-fencing on|off]
[--controllers ours] [--workdir DIR]``: one broker chaos run; prints each cycle and the
report, whose last line reads ``acknowledged N, lost L, duplicated D, longest leaderless P ms,
longest without an ack A ms``; exits 1 on a failed check."""
from __future__ import annotations

import argparse
import logging
import random
import sys
import tempfile
from pathlib import Path

from .run import run


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.chaos_brokers", description=__doc__)
    p.add_argument("--seed", type=int, default=None, help="replay a run (default: a fresh seed, printed)")
    p.add_argument("--cycles", type=int, default=20)
    p.add_argument("--controllers", choices=("ours",), default="ours",
                   help="whose controllers (Kafka's: a later increment)")
    p.add_argument("--elr", choices=("on", "off"), default="on", help="eligible.leader.replicas.version 1 or 0")
    p.add_argument("--fast-fencing", choices=("on", "off"), default="on", help="kraft.broker.fast.fencing.enable")
    p.add_argument("--workdir", type=Path, default=None, help="keep the processes' data and logs here")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    print(f"broker chaos: seed {seed}, {args.cycles} cycles, ELR {args.elr}, fast fencing {args.fast_fencing}",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="chaos-brokers-") as tmp:
        workdir = args.workdir or Path(tmp)
        report = run(workdir, seed, args.cycles, elr=args.elr == "on", fast_fencing=args.fast_fencing == "on",
                     on_cycle=lambda line: print(line, flush=True))
        if not report.ok:
            print(f"logs under {workdir}" if args.workdir else "rerun with --workdir to keep the logs", flush=True)
        print(report.format(), flush=True)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
