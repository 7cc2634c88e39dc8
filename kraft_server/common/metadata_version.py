"""metadata.version: the levels Kafka 4.4.0 knows (``MetadataVersion``), read from
kafka-server-common-4.4.0.jar.

Each level has a name (``<release>-IV<n>``) and says whether it changed the metadata
format (``didMetadataChange``: a downgrade across such a level could lose
information). Levels up to ``LATEST_PRODUCTION`` are production (``isProduction``);
above it, only with unstable feature versions enabled, which we never are.
"""
from __future__ import annotations

# (level, name, didMetadataChange), oldest first
VERSIONS: tuple[tuple[int, str, bool], ...] = (
    (7, "3.3-IV3", True), (8, "3.4-IV0", True), (9, "3.5-IV0", False), (10, "3.5-IV1", False),
    (11, "3.5-IV2", True), (12, "3.6-IV0", False), (13, "3.6-IV1", True), (14, "3.6-IV2", True),
    (15, "3.7-IV0", True), (16, "3.7-IV1", False), (17, "3.7-IV2", True), (18, "3.7-IV3", False),
    (19, "3.7-IV4", False), (20, "3.8-IV0", False), (21, "3.9-IV0", False), (22, "4.0-IV0", False),
    (23, "4.0-IV1", True), (24, "4.0-IV2", False), (25, "4.0-IV3", False), (26, "4.1-IV0", False),
    (27, "4.1-IV1", False), (28, "4.2-IV0", False), (29, "4.2-IV1", False), (30, "4.3-IV0", True),
    (31, "4.4-IV0", False), (32, "4.4-IV1", True), (33, "4.4-IV2", True), (34, "4.5-IV0", False),
)
NAMES: dict[int, str] = {level: name for level, name, _ in VERSIONS}
LEVELS: dict[str, int] = {name: level for level, name, _ in VERSIONS}
METADATA_CHANGED = frozenset(level for level, _, changed in VERSIONS if changed)

MINIMUM = 7  # 3.3-IV3
LATEST_PRODUCTION = 33  # 4.4-IV2
LATEST_TESTING = 34  # 4.5-IV0

# The levels that gate behaviour (MetadataVersion.is...Supported)
SCRAM = 11  # 3.5-IV2
DELEGATION_TOKEN = 14  # 3.6-IV2 (KIP-900)
CONTROLLER_REGISTRATION = 15  # 3.7-IV0 (KIP-919)
DIRECTORY_ASSIGNMENT = 17  # 3.7-IV2
ELR = 23  # 4.0-IV1
CORDONED_LOG_DIRS = 30  # 4.3-IV0
CIDR_ACL = 32  # 4.4-IV1
CONTROLLER_UNREGISTRATION = 33  # 4.4-IV2


def name(level: int) -> str:
    return NAMES[level]


def is_production(level: int) -> bool:
    return MINIMUM <= level <= LATEST_PRODUCTION


def versions_text(low: int = MINIMUM, high: int = LATEST_PRODUCTION) -> str:
    """``metadataVersionsToString``: the names from ``low`` to ``high``."""
    return ", ".join(NAMES[lvl] for lvl in range(low, high + 1))


def from_version_string(text: str, unstable: bool = False) -> int:
    """``MetadataVersion.fromVersionString(text, unstable)``: a release (``4.0``, ``4.0.1``:
    its newest production level) or a level name (``3.9-IV0``); ValueError with
    Kafka's message otherwise, or for a level above the latest production one
    (above the latest testing one with ``unstable``, as ``kafka-storage version-mapping``)."""
    highest = LATEST_TESTING if unstable else LATEST_PRODUCTION
    parts = text.split(".")
    key = text if len(parts) <= 2 else ".".join(parts[:2])
    level = LEVELS.get(key)
    if level is None:  # a release name: its newest production level
        releases = [lvl for lvl, nm, _ in VERSIONS if nm.split("-")[0] == key and is_production(lvl)]
        level = max(releases) if releases else None
    if level is None or level > highest:
        raise ValueError(f"Unknown metadata.version '{text}'. Supported metadata.version are: "
                         f"{versions_text(MINIMUM, highest)}")
    return level


def metadata_changed(a: int, b: int) -> bool:
    """``MetadataVersion.checkIfMetadataChanged``: did any level after the lower one,
    up to the higher one, change the metadata format?"""
    low, high = min(a, b), max(a, b)
    return any(lvl in METADATA_CHANGED for lvl in range(low + 1, high + 1))
