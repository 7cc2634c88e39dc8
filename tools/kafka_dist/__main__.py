"""``python -m tools.kafka_dist [--version X | --matrix]``: prepare one release (the
default release unless ``--version`` names another) or every release of the version
matrix; print each home, one a line."""

from __future__ import annotations

import argparse
import sys

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
        for version in versions:
            print(ensure_dist(version, archive=False), flush=True)  # archives: on a release's first use
    except (DistError, KeyError) as exc:
        print(f"kafka_dist: {exc.args[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
