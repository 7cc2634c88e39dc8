"""``python -m kraft_server <server.properties>`` (console script ``kraft-server``).

Exit codes: 0 after a clean shutdown (SIGINT/SIGTERM), 1 for a configuration or
storage problem (the message says what to fix) or a fatal error, 2 for bad usage.
"""
from __future__ import annotations

import logging
import os
import sys

USAGE = "usage: kraft-server <server.properties>"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 2 if not args or args[0] not in ("-h", "--help") else 0
    logging.basicConfig(
        level=os.environ.get("KRAFT_LOG_LEVEL", "INFO").upper(),
        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)",
    )
    from kraft_server.config import ConfigError
    from kraft_server.node import StorageError, run

    try:
        return run(args[0])
    except (ConfigError, StorageError, FileNotFoundError) as exc:
        print(f"kraft-server: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # a second Ctrl-C during shutdown
        return 130
    except Exception:  # already logged by the Ready loop, or a start-up failure
        logging.getLogger("kraft_server").critical("kraft-server stopped on an error", exc_info=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
