"""``python -m tools.kafka_dist [--version X | --matrix]``: prepare one release (the
default release unless ``--version`` names another) or every release of the version
matrix; print each home, one a line."""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor

from . import MATRIX, DistError, ensure_dist


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.kafka_dist")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--version", help="the Apache Kafka release to prepare (default: the suite's default)")
    which.add_argument("--matrix", action="store_true",
                       help=f"prepare the default release and every matrix release ({', '.join(MATRIX)})")
    args = parser.parse_args(argv)
    versions = [None, *MATRIX] if args.matrix else [args.version]
    try:
        # releases side by side: each mostly waits on Maven (a lock per release guards its
        # directory); archives are recorded on a release's first use
        with ThreadPoolExecutor(max_workers=len(versions)) as pool:
            for home in pool.map(lambda v: ensure_dist(v, archive=False), versions):
                print(home, flush=True)
    except (DistError, KeyError) as exc:
        print(f"kafka_dist: {exc.args[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
