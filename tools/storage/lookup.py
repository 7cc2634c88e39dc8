"""``kraft-storage version-mapping`` and ``feature-dependencies``: Kafka 4.4.0's
``kafka-storage`` look-ups of what a release formats and what a level needs.

- ``version-mapping [--release-version R]``: ``metadata.version=<level> (<R as
  given>)`` then every feature (Kafka's ``Feature`` order) at its default level
  for that metadata.version; R may name a level above the latest production one
  (the tool reads it with unstable levels allowed); without R, the latest
  production level.
- ``feature-dependencies --feature F=L ...``: per argument, in order, ``F=L has
  no dependencies.`` or ``F=L requires:`` and one indented line per dependency;
  the first bad argument stops the run after what was already printed.
"""
from __future__ import annotations

from typing import Callable

from kraft_server.common import features, metadata_version

from .feature_arg import FeatureArgError, parse_lookup_feature


class LookupRefused(RuntimeError):
    """A refusal with Kafka's message; the CLI prints it and exits 1."""


def version_mapping(release: str | None, printer: Callable[[str], None] = print) -> None:
    text = metadata_version.name(metadata_version.LATEST_PRODUCTION) if release is None else release
    try:
        level = metadata_version.from_version_string(text, unstable=True)
    except ValueError as exc:
        raise LookupRefused(str(exc)) from None
    printer(f"metadata.version={level} ({text})")
    for feature in features.VERSIONS:
        printer(f"{feature}={features.default_level(feature, level)}")


def _level_text(feature: str, level: int) -> str:
    if feature == features.METADATA_VERSION:
        return f"{feature}={level} ({metadata_version.name(level)})"
    return f"{feature}={level}"


def feature_dependencies(args: list[str], printer: Callable[[str], None] = print) -> None:
    for arg in args:
        try:
            name, level = parse_lookup_feature(arg)
        except FeatureArgError as exc:
            raise LookupRefused(str(exc)) from None
        if name == features.METADATA_VERSION:
            if level not in metadata_version.NAMES:
                raise LookupRefused(f"Unknown metadata.version {level}")
            printer(f"{_level_text(name, level)} has no dependencies.")
            continue
        if name not in features.VERSIONS:
            raise LookupRefused(f"Unknown feature: {name}")
        if not features.has_level(name, level):
            raise LookupRefused(f"Feature level {level} is not supported for feature {name}")
        needs = features.dependencies(name, level)
        if not needs:
            printer(f"{name}={level} has no dependencies.")
            continue
        printer(f"{name}={level} requires:")
        for dep, dep_level in needs.items():
            printer(f"    {_level_text(dep, dep_level)}")
