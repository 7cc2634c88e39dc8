"""Java's integer types as Kafka's ConfigDef parses them (``Integer.parseInt`` and
friends after a trim): an optional sign and ASCII digits, within the type's bounds."""
from __future__ import annotations

import re

BOUNDS = {"SHORT": (-(1 << 15), (1 << 15) - 1), "INT": (-(1 << 31), (1 << 31) - 1),
          "LONG": (-(1 << 63), (1 << 63) - 1)}
_DIGITS = re.compile(r"^[+-]?[0-9]+$")


def parse_java_integer(text: str, kind: str) -> int | None:
    """``text`` (already trimmed) as a Java ``kind`` ("SHORT", "INT", "LONG"); None if it is not one."""
    lo, hi = BOUNDS[kind]
    if _DIGITS.match(text) and lo <= (n := int(text)) <= hi:
        return n
    return None
