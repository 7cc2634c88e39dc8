"""The ``feature=level`` arguments of ``kraft-storage``, read as Kafka 4.4.0's
``kafka-storage`` reads them.

- ``format --feature`` (``StorageTool.parseNameAndLevel``): split at the first
  ``=``, both sides trimmed, the level a Java ``short``; anything else is an
  uncaught RuntimeException (exit 1, the message in a stack trace).
- ``feature-dependencies --feature``: the same split, with the tool's own terse
  messages ("Invalid feature format", "Invalid version format").
"""
from __future__ import annotations

import re

_SHORT = re.compile(r"[+-]?[0-9]+")


class FeatureArgError(ValueError):
    """A ``feature=level`` argument Kafka's tool refuses; ``str`` is its message."""


def java_short(text: str) -> int | None:
    """``Short.parseShort(text)``, or None where Java throws NumberFormatException."""
    if not _SHORT.fullmatch(text):
        return None
    value = int(text)
    return value if -32768 <= value <= 32767 else None


def _split(arg: str) -> tuple[str, str] | None:
    name, eq, level = arg.partition("=")
    return (name.strip(), level.strip()) if eq else None


def parse_format_feature(arg: str) -> tuple[str, int]:
    """One ``format --feature`` value; FeatureArgError with the RuntimeException's message."""
    split = _split(arg)
    if split is None:
        raise FeatureArgError(f"Can't parse feature=level string {arg}: equals sign not found.")
    name, text = split
    level = java_short(text)
    if level is None:
        raise FeatureArgError(f"Can't parse feature=level string {arg}: unable to parse {text} as a short.")
    return name, level


def parse_format_features(args: list[str]) -> dict[str, int]:
    """Every ``format --feature`` value, the last one winning for a feature named twice."""
    out: dict[str, int] = {}
    for arg in args:
        name, level = parse_format_feature(arg)
        out[name] = level
    return out


def parse_lookup_feature(arg: str) -> tuple[str, int]:
    """One ``feature-dependencies --feature`` value; FeatureArgError with its message."""
    split = _split(arg)
    if split is None:
        raise FeatureArgError(f"Invalid feature format: {arg}. Expected format: 'feature=version' "
                              "(e.g. 'group.version=1')")
    name, text = split
    level = java_short(text)
    if level is None:
        raise FeatureArgError(f"Invalid version format: {text} for feature {name}")
    return name, level
