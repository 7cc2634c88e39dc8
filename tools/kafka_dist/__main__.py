"""``python -m tools.kafka_dist``: prepare the distribution, print its home last."""

from __future__ import annotations

import sys

from . import DistError, ensure_dist


def main() -> int:
    try:
        home = ensure_dist()
    except DistError as exc:
        print(f"kafka_dist: {exc}", file=sys.stderr)
        return 1
    print(home)
    return 0


if __name__ == "__main__":
    sys.exit(main())
