"""``python -m tests.simulation.long``: the long sweep (``make simulate-long``).

Every configuration the simulation has (default, chaos and disk profiles, membership
changes, a majority lost and recovered, each on 3 and 5 voters) for ``--seeds`` seeds x ``--events`` events, in
parallel on every core. The first seed is drawn fresh on each run (printed, and
``--first-seed`` replays a run), so repeated sweeps keep looking somewhere new.
Prints the seeds run, events, failures and each failure's replay command; exits 1
on any failure.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from tests.simulation.runner import RECOVER, replay_command, run_case

# (name, profile, nodes, membership); each gets its own seed block so the six
# configurations do not replay one another's runs.
CONFIGURATIONS = (
    ("default-3", "default", 3, False),
    ("default-5", "default", 5, False),
    ("chaos-3", "chaos", 3, False),
    ("chaos-5", "chaos", 5, False),
    ("membership-3", "default", 3, True),
    ("membership-5", "default", 5, True),
    ("disk-3", "disk", 3, False),
    ("disk-5", "disk", 5, False),
    ("recover-3", "default", 3, RECOVER),
    ("recover-5", "default", 5, RECOVER),
)
BLOCK = 10_000_000  # seed distance between configurations
CHUNK = 25  # seeds per task


# Membership counters summed over a configuration's seeds (how often the schedule
# reached candidacies of one epoch with different voter sets, and of which kind).
COUNTERS = ("voter_changes_committed", "split_epochs", "wide_election_pairs", "stale_election_pairs",
            "divergent_election_pairs")


def _run_chunk(task):
    name, profile, nodes, membership, seeds, events = task
    failures, events_run, counts = [], 0, dict.fromkeys(COUNTERS, 0)
    counts["seeds_split"] = 0
    for seed in seeds:
        try:
            summary = run_case(seed, events, nodes, profile, membership)
            events_run += summary["events"]
            for key in COUNTERS:
                counts[key] += summary.get(key, 0)
            counts["seeds_split"] += bool(summary.get("split_epochs"))
        except Exception as exc:  # noqa: BLE001 - collect and go on
            first_line = str(exc).splitlines()[0] if str(exc) else ""
            failures.append((seed, f"{type(exc).__name__}: {first_line}",
                             replay_command(seed, events, nodes, profile, membership)))
    return name, len(seeds), events_run, failures, counts


def _ignore_sigint() -> None:
    """Workers leave SIGINT and SIGTERM to the main process, which reports what finished."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.simulation.long")
    p.add_argument("--seeds", type=int, default=1000, help="seeds per configuration")
    p.add_argument("--events", type=int, default=10_000)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--first-seed", type=int, help="replay a sweep (default: drawn fresh)")
    p.add_argument("--only", help="comma-separated configuration names")
    args = p.parse_args(argv)
    first = args.first_seed if args.first_seed is not None else random.SystemRandom().randrange(1, 10**6) * 100
    configs = [c for c in CONFIGURATIONS if not args.only or c[0] in args.only.split(",")]
    print(f"simulate-long: first seed {first} (replay the sweep with --first-seed {first}), "
          f"{args.seeds} seeds x {args.events} events per configuration, {args.jobs} jobs", flush=True)
    per_config = []
    for k, (name, profile, nodes, membership) in enumerate(CONFIGURATIONS):
        if (name, profile, nodes, membership) not in configs:
            continue
        base = first + k * BLOCK
        per_config.append([(name, profile, nodes, membership,
                            range(base + start, base + min(start + CHUNK, args.seeds)), args.events)
                           for start in range(0, args.seeds, CHUNK)])
    # Round-robin over the configurations, so a sweep cut short has run each of them.
    tasks = [t for group in zip(*per_config) for t in group]
    # SIGINT or SIGTERM (a shell starts background jobs with SIGINT ignored) ends the
    # sweep early; the figures printed are those of the chunks that finished.
    import signal
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    started = time.monotonic()
    totals = {c[0]: [0, 0, [], {}] for c in configs}
    done = 0
    pool = ProcessPoolExecutor(max_workers=args.jobs, initializer=_ignore_sigint)
    try:
        for name, seeds, events, failures, counts in pool.map(_run_chunk, tasks):
            t = totals[name]
            t[0] += seeds
            t[1] += events
            t[2].extend(failures)
            for key, value in counts.items():
                t[3][key] = t[3].get(key, 0) + value
            done += 1
            for seed, error, replay in failures:  # at once: a long sweep may be cut short
                print(f"  FAIL {name} seed {seed}: {error}\n    replay: {replay}", flush=True)
            if done % max(len(tasks) // 50, 1) == 0:
                failed = sum(len(v[2]) for v in totals.values())
                seeds_done = ", ".join(f"{n} {v[0]}" for n, v in totals.items())
                print(f"  {done}/{len(tasks)} chunks ({seeds_done} seeds), {failed} failures, "
                      f"{time.monotonic() - started:.0f} s", flush=True)
    except KeyboardInterrupt:
        print("simulate-long: interrupted; the figures below are the chunks that finished", flush=True)
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in procs:
            proc.kill()  # the chunks under way are not counted
    else:
        pool.shutdown()
    print(f"\n{'configuration':<14} {'seeds':>6} {'events':>12} {'failures':>8}")
    for name, (seeds, events, failures, _) in totals.items():
        print(f"{name:<14} {seeds:>6} {events:>12,} {len(failures):>8}")
    for name, (_, _, _, counts) in totals.items():
        if counts.get("voter_changes_committed"):
            print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    all_failures = [f for v in totals.values() for f in v[2]]
    print(f"{'total':<14} {sum(v[0] for v in totals.values()):>6} "
          f"{sum(v[1] for v in totals.values()):>12,} {len(all_failures):>8}")
    for seed, error, replay in all_failures:
        print(f"FAIL seed {seed}: {error}\n  replay: {replay}")
    print(f"simulate-long: {len(all_failures)} failures in {time.monotonic() - started:.0f} s")
    return 1 if all_failures else 0


if __name__ == "__main__":
    sys.exit(main())
