"""Kafka's ``Errors`` enum, read from the pinned kafka-clients jar.

:func:`java_errors` compiles ``tests/java/ErrorsDump.java`` with ``javac``
into a scratch directory and runs it against ``upstream_jar("kafka-clients")``;
``tests/interop/test_errors.py`` compares its rows with ``wire/errors.py``.

Regenerate ``wire/errors.py`` (e.g. after a Kafka version bump)::

    python -m tools.kafka_dist.errors_table > wire/errors.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from . import KAFKA_VERSION, java_executable, javac_executable, upstream_jar

REPO_ROOT = Path(__file__).resolve().parents[2]
JAVA_SOURCE = REPO_ROOT / "tests" / "java" / "ErrorsDump.java"


def java_errors(workdir: os.PathLike[str] | str | None = None) -> list[dict]:
    """Rows ``{code, name, retriable, exception, message}`` in ``Errors.values()`` order."""
    with tempfile.TemporaryDirectory(prefix="errors-dump-") as tmp:
        out_dir = Path(workdir or tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        clients = str(upstream_jar("kafka-clients"))
        subprocess.run(
            [javac_executable(), "-d", str(out_dir), "-cp", clients, str(JAVA_SOURCE)],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
        cp = os.pathsep.join([str(out_dir), clients, str(upstream_jar("slf4j-api"))])
        proc = subprocess.run(
            [java_executable(), "-cp", cp, "ErrorsDump"],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def render(rows: list[dict]) -> str:
    """The text of ``wire/errors.py`` for ``rows``."""
    table = "".join(
        f"    ({r['code']}, {json.dumps(r['name'])}, {r['retriable']}, "
        f"{'None' if r['exception'] is None else json.dumps(r['exception'])},\n"
        f"     {json.dumps(r['message'])}),\n"
        for r in rows
    )
    members = "".join(f"    {r['name']} = {r['code']}\n" for r in rows)
    return _TEMPLATE.format(version=KAFKA_VERSION, table=table, members=members)


_TEMPLATE = '''\
"""Kafka's error codes: every ``org.apache.kafka.common.protocol.Errors`` of {version}.

Generated from Apache Kafka {version}'s ``Errors.values()`` by
``tests/java/ErrorsDump.java`` run against the pinned kafka-clients jar
(``python -m tools.kafka_dist.errors_table > wire/errors.py``);
``tests/interop/test_errors.py`` re-runs that program and checks this module against
it exactly.

Each row: code, name, retriable (the Java exception is a
``RetriableException``), the Java exception's simple class name (``None`` for
NONE), and Kafka's default message (what Java clients and tools print).

    ErrorCode.NOT_LEADER_OR_FOLLOWER == 6
    error_name(6) == "NOT_LEADER_OR_FOLLOWER"
    is_retriable(6) is True
    ERRORS[6].message
    error_info(9999) is ERRORS[-1]  # unknown codes: UNKNOWN_SERVER_ERROR, as Errors.forCode does
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

KAFKA_VERSION = "{version}"


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    code: int
    name: str
    retriable: bool
    exception: str | None
    message: str


# fmt: off
_TABLE: tuple[tuple[int, str, bool, str | None, str], ...] = (
{table})
# fmt: on


class ErrorCode(IntEnum):
    """Kafka error codes, members named as in Kafka's ``Errors`` enum."""

{members}

ERRORS: dict[int, ErrorInfo] = {{row[0]: ErrorInfo(*row) for row in _TABLE}}
ERRORS_BY_NAME: dict[str, ErrorInfo] = {{e.name: e for e in ERRORS.values()}}
UNKNOWN_SERVER_ERROR = ERRORS[-1]


def error_info(code: int) -> ErrorInfo:
    """The error for ``code``; unknown codes give UNKNOWN_SERVER_ERROR (like ``Errors.forCode``)."""
    return ERRORS.get(code, UNKNOWN_SERVER_ERROR)


def error_name(code: int) -> str:
    """Kafka's name for ``code``, or ``"UNKNOWN_ERROR_CODE(<code>)"`` for a code Kafka {version} lacks."""
    info = ERRORS.get(code)
    return info.name if info is not None else f"UNKNOWN_ERROR_CODE({{code}})"


def is_retriable(code: int) -> bool:
    """Whether Kafka's exception for ``code`` is retriable (unknown codes: no)."""
    info = ERRORS.get(code)
    return info is not None and info.retriable


def error_message(code: int) -> str:
    """Kafka's default message for ``code`` (unknown codes get UNKNOWN_SERVER_ERROR's)."""
    return error_info(code).message
'''


def main() -> int:
    sys.stdout.write(render(java_errors()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
