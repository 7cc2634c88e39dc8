"""wire/errors.py against the default release's (Kafka 4.4.0) own ``Errors`` enum."""

from __future__ import annotations

import pytest

from wire import errors
from wire.errors import ERRORS, ERRORS_BY_NAME, ErrorCode, ErrorInfo, error_info, error_message, error_name, is_retriable


@pytest.mark.java
def test_table_equals_kafka_errors_enum(tmp_path):
    from tools.kafka_dist import javac_executable
    from tools.kafka_dist.errors_table import java_errors

    try:
        javac_executable()
    except FileNotFoundError as exc:
        pytest.skip(f"no JDK: {exc}")

    rows = java_errors(tmp_path / "classes")  # javac ErrorsDump.java + run against the default release's kafka-clients jar
    assert len(rows) > 100
    java = [(r["code"], r["name"], r["retriable"]) for r in rows]
    ours = [(e.code, e.name, e.retriable) for e in ERRORS.values()]
    assert ours == java  # codes, names, retriable; same order as Errors.values()
    assert [(e.name, e.value) for e in ErrorCode] == [(name, code) for code, name, _ in java]
    # and the rest of the row (exception class and default message) is Kafka's too
    assert [(e.exception, e.message) for e in ERRORS.values()] == [(r["exception"], r["message"]) for r in rows]


def test_enum_and_table_agree():
    assert [(m.name, m.value) for m in ErrorCode] == [(e.name, e.code) for e in ERRORS.values()]
    assert len(set(ERRORS)) == len(ERRORS) == len(ERRORS_BY_NAME)
    assert all(isinstance(e, ErrorInfo) and e.message for e in ERRORS.values())
    assert errors.KAFKA_VERSION == "4.4.0"


@pytest.mark.parametrize(
    "code,name,retriable",
    [
        (-1, "UNKNOWN_SERVER_ERROR", False),
        (0, "NONE", False),
        (6, "NOT_LEADER_OR_FOLLOWER", True),
        (7, "REQUEST_TIMED_OUT", True),
        (8, "BROKER_NOT_AVAILABLE", False),
        (35, "UNSUPPORTED_VERSION", False),
        (41, "NOT_CONTROLLER", True),
        (42, "INVALID_REQUEST", False),
        (74, "FENCED_LEADER_EPOCH", True),
        (75, "UNKNOWN_LEADER_EPOCH", True),
        (104, "INCONSISTENT_CLUSTER_ID", False),
        (125, "INVALID_VOTER_KEY", False),
        (126, "DUPLICATE_VOTER", False),
        (127, "VOTER_NOT_FOUND", False),
    ],
)
def test_kraft_relevant_codes(code, name, retriable):
    assert ErrorCode[name] == code
    assert error_name(code) == name
    assert is_retriable(code) is retriable
    assert ERRORS[code].name == name


def test_unknown_codes():
    assert error_name(32000) == "UNKNOWN_ERROR_CODE(32000)"
    assert is_retriable(32000) is False
    assert error_info(32000) is ERRORS[-1]
    assert error_message(32000) == ERRORS[-1].message
    assert error_message(0) == "NONE"
    with pytest.raises(ValueError):
        ErrorCode(32000)
