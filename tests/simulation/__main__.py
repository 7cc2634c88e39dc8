"""``python -m tests.simulation --seeds N --events M [--nodes 3] [--seed S] [--profile chaos]
[--membership [--recover]]``

``--membership`` adds random AddRaftVoter/RemoveRaftVoter and disk replacements
(``tests/simulation/membership.py``), with churn (a leader deposed right after it took a
voter change) unless ``--no-churn``; ``--recover`` adds, once a run, a majority of the
voters lost for good and the survivors recovered by ``kraft-metadata-quorum recover``'s
plan (``tests/simulation/recover.py``).

Runs seeds 0..N-1 (or one ``--seed``), each for M events, and prints a summary;
on an invariant failure it prints the command that replays that seed and exits 1.
"""
from __future__ import annotations

import argparse
import sys
import time

from tests.simulation.cluster import HEALTHY, Faults
from tests.simulation.runner import NO_CHURN, RECOVER, replay_command, run_case

PROFILES = {
    "default": None,  # Faults() defaults: the profile `make test` runs
    "healthy": HEALTHY,
    "chaos": Faults(loss=0.2, delay_ms=(1, 300), crash_every_ms=1500, partition_every_ms=2000,
                    jump_every_ms=5000, snapshot_every_ms=1000, shutdown_every_ms=3000),
    # the default faults and a failing disk (fsync EIO, or a full disk on append) under
    # about one Ready in 500: the node stops as a real one does, and restarts later
    "disk": Faults(disk_fail=0.002),
}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.simulation")
    p.add_argument("--seeds", type=int, default=20, help="run seeds 0..N-1")
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--seed", type=int, help="run just this seed")
    p.add_argument("--events", type=int, default=5000)
    p.add_argument("--nodes", type=int, default=3)
    p.add_argument("--profile", choices=sorted(PROFILES), default="default",
                   help="fault profile (chaos: 20%% loss, 300 ms delays, frequent crashes)")
    p.add_argument("--membership", action="store_true",
                   help="random voter adds/removes and disk replacements (kraft.version 1)")
    p.add_argument("--no-churn", action="store_true",
                   help="with --membership: no deposed leaders right after a voter change")
    p.add_argument("--recover", action="store_true",
                   help="with --membership: once a run, lose a majority of the voters for good and "
                        "recover the survivors (loss allowed only where the plan printed it)")
    p.add_argument("--verbose", "-v", action="store_true")
    args = p.parse_args(argv)
    membership = NO_CHURN if args.membership and args.no_churn else args.membership
    if args.recover:
        if not args.membership:
            p.error("--recover needs --membership")
        membership = RECOVER
    seeds = [args.seed] if args.seed is not None else range(args.first_seed, args.first_seed + args.seeds)
    started, cpu, failed = time.monotonic(), time.process_time(), 0
    for seed in seeds:
        try:
            summary = run_case(seed, args.events, args.nodes, args.profile, membership)
        except Exception as e:  # noqa: BLE001 - report and keep going
            failed += 1
            replay = replay_command(seed, args.events, args.nodes, args.profile, membership)
            print(f"FAIL seed {seed}: {type(e).__name__}: {e}\n  replay: {replay}", flush=True)
            if args.seed is not None:
                raise
            continue
        if args.verbose:
            print(summary, flush=True)
    n = len(seeds)
    print(f"{n - failed}/{n} seeds passed ({args.nodes} nodes x {args.events} events) "
          f"in {time.monotonic() - started:.1f}s ({time.process_time() - cpu:.1f}s CPU)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
