"""The Apache Kafka releases we prepare, one row of plain facts each.

``MATRIX`` is the newest patch of every 4.x line that resolves from Maven Central
(checked with mvn against org.apache.kafka:kafka-server's maven-metadata on
2026-12-01). ``DEFAULT_RELEASE`` is the one every test uses unless it names
another: switching the suite to a newer release is this one line.

Per release:
  log4j2, slf4j  the logging backend its release tarball ships in libs/. Read from
                 its kafka-server pom (log4j-api/log4j-core, slf4j-api); 4.0.x's
                 poms name no log4j, so 4.0.2 takes the 4.0 line's log4j2 build
                 version.
  classes        wrapper scripts whose main class differs from the default table
                 (recipe.TOOL_CLASSES); checked against the release's jars by every
                 preparation.
  metadata       the release's newest production metadata.version (name, level),
                 as its ``kafka-storage format`` picks it without --release-version.
"""

from __future__ import annotations

DEFAULT_RELEASE = "4.4.0"

RELEASES: dict[str, dict] = {
    "4.0.2": {
        "log4j2": "2.24.3",
        "slf4j": "1.7.36",
        # DumpLogSegments is in core (kafka.tools) up to 4.2, in the tools module from 4.3.
        "classes": {"kafka-dump-log": "kafka.tools.DumpLogSegments"},
        "metadata": ("4.0-IV3", 25),
    },
    "4.1.2": {
        "log4j2": "2.25.3",
        "slf4j": "1.7.36",
        "classes": {"kafka-dump-log": "kafka.tools.DumpLogSegments"},
        "metadata": ("4.1-IV1", 27),
    },
    "4.2.2": {
        "log4j2": "2.25.5",
        "slf4j": "1.7.36",
        "classes": {"kafka-dump-log": "kafka.tools.DumpLogSegments"},
        "metadata": ("4.2-IV1", 29),
    },
    "4.3.1": {
        "log4j2": "2.25.4",
        "slf4j": "1.7.36",
        "metadata": ("4.3-IV0", 30),
    },
    "4.3.2": {
        "log4j2": "2.25.5",
        "slf4j": "1.7.36",
        "metadata": ("4.3-IV0", 30),
    },
    "4.4.0": {
        "log4j2": "2.25.5",
        "slf4j": "1.7.36",
        # 4.4 moved ConfigCommand from core (kafka.admin) to the tools module.
        "classes": {"kafka-configs": "org.apache.kafka.tools.ConfigCommand"},
        "metadata": ("4.4-IV2", 33),
    },
}

# The newest patch of each 4.x line: what the version-matrix tests run.
MATRIX: tuple[str, ...] = ("4.0.2", "4.1.2", "4.2.2", "4.3.2", "4.4.0")


def release_facts(version: str) -> dict:
    try:
        return RELEASES[version]
    except KeyError:
        raise KeyError(
            f"Apache Kafka {version} is not in tools/kafka_dist/releases.py (known: {', '.join(RELEASES)})"
        ) from None
