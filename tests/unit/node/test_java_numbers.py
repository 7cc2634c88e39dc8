"""Java's integer parsing as Kafka's ConfigDef does it: one home (common/java_numbers.py)."""
import pytest

from kraft_server.common.java_numbers import parse_java_integer


@pytest.mark.parametrize("text,kind,want", [
    ("0", "INT", 0), ("+7", "INT", 7), ("-2147483648", "INT", -(1 << 31)), ("2147483647", "INT", (1 << 31) - 1),
    ("2147483648", "INT", None), ("32768", "SHORT", None), ("-32768", "SHORT", -32768),
    ("9223372036854775807", "LONG", (1 << 63) - 1), ("9223372036854775808", "LONG", None),
    ("1.0", "INT", None), ("1e3", "LONG", None), ("", "INT", None), ("0x10", "INT", None),
])
def test_parse_java_integer(text, kind, want):
    assert parse_java_integer(text, kind) == want
