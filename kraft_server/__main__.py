"""``python -m kraft_server <server.properties>`` (console script ``kraft-server``).

Exit codes: 0 after a clean shutdown (SIGINT/SIGTERM), 1 for a configuration or
storage problem or a fatal error (Kafka's ``kafka-server-start`` exits 1 on any
start-up failure), 2 for bad usage.

A start-up problem the operator can fix is one line on stderr, ``ERROR <what>
(<property or path>)``, not a traceback: a listener port in use, an unreadable or
unformatted ``metadata.log.dir``, log directories of different clusters, a missing
or invalid property. Anything else is logged with its traceback.
"""
from __future__ import annotations

import errno
import logging
import os
import re
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
    from kraft_server.log.disk import LogCorruption, LogDirFailure
    from kraft_server.shell.wiring import StorageError, run
    from wire import native

    logging.getLogger("kraft_server").info("%s", native.describe())

    config_path = args[0]
    try:
        return run(config_path)
    except ConfigError as exc:
        what = str(exc)
        if exc.where and what.startswith(f"{exc.where}: "):
            what = what[len(exc.where) + 2:]
        return fail(what, exc.where or config_path)
    except StorageError as exc:
        return fail(str(exc), exc.path or config_path)
    except LogCorruption as exc:  # fsync'd bytes that changed, found at start-up
        return fail(str(exc), exc.path)
    except LogDirFailure as exc:  # at start-up, or in the Ready loop (logged there too)
        return fail(f"Metadata log directory failure: {exc}", exc.path)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return fail(*bind_failure(exc, config_path))
        if exc.filename is None:
            raise
        if os.path.abspath(exc.filename) == os.path.abspath(config_path):
            return fail(f"Cannot read the configuration file: {exc.strerror}", exc.filename)
        return fail(f"Cannot use the log directory: {exc.strerror}", exc.filename)
    except KeyboardInterrupt:  # a second Ctrl-C during shutdown
        return 130
    except Exception:  # already logged by the Ready loop, or a start-up failure
        logging.getLogger("kraft_server").critical("kraft-server stopped on an error", exc_info=True)
        return 1


def fail(what: str, where) -> int:
    """The one-line start-up error; exit code 1."""
    print(f"ERROR {what.strip().rstrip('.')} ({where})", file=sys.stderr, flush=True)
    return 1


def bind_failure(exc: OSError, config_path: str) -> tuple[str, str]:
    """What could not bind and the property that asked for it, from asyncio's (and
    uvloop's) "error while attempting to bind on address ('HOST', PORT): ..." text."""
    found = re.search(r"address \('([^']*)', (\d+)", str(exc))
    if found is None:
        return f"Socket server failed to bind: {os.strerror(exc.errno)}", "listeners"
    host, port = found.group(1), int(found.group(2))
    what = f"Socket server failed to bind to {host}:{port}"
    from kraft_server.config import KafkaConfig, parse_host_port
    from kraft_server.console.listener import parse_console_listener

    config = KafkaConfig.from_file(config_path)  # it loaded once already
    for ep in config.listeners:
        if ep.port == port:
            return f"{what} (listener {ep.name}): {os.strerror(exc.errno)}", "listeners"
    metrics = config["kraft.metrics.prometheus.listener"]
    if metrics and parse_host_port(metrics, "kraft.metrics.prometheus.listener").port == port:
        return f"{what} (Prometheus metrics): {os.strerror(exc.errno)}", "kraft.metrics.prometheus.listener"
    console = config["kraft.console.listener"]
    if console and parse_console_listener(console).port == port:
        return f"{what} (quorum console): {os.strerror(exc.errno)}", "kraft.console.listener"
    return f"{what}: {os.strerror(exc.errno)}", "listeners"


if __name__ == "__main__":
    sys.exit(main())
