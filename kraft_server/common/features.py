"""The features a Kafka 4.4.0 node knows (``Feature``, ``FeatureVersion``): the one home
for our supported ranges and for the levels each release formats with.

- ``SUPPORTED``: what our controllers advertise (ApiVersions) and register with,
  Kafka 4.4.0's ``QuorumFeatures.defaultSupportedFeatureMap(false)``: metadata.version
  from 3.3-IV3 to the latest production level, every other feature from 0 to its
  latest production level; in the order a 4.4.0 controller writes them.
- ``VERSIONS``: per feature, each level with the metadata.version it bootstraps from
  (``bootstrapMetadataVersion``) and the levels it depends on (``dependencies``).
- ``default_levels(mv)``: ``Feature.defaultLevel`` for each feature at ``mv``, the
  feature set ``kafka-storage format --release-version`` writes.
"""
from __future__ import annotations

from . import metadata_version as mv

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
ELR_VERSION = "eligible.leader.replicas.version"
SHARE_VERSION = "share.version"
STREAMS_VERSION = "streams.version"

# feature -> ((level, bootstrap metadata.version, {feature: level it needs}), ...), level 0 first;
# in Kafka's ``Feature`` order (``kafka-storage version-mapping`` prints them so)
VERSIONS: dict[str, tuple[tuple[int, int, dict[str, int]], ...]] = {
    KRAFT_VERSION: ((0, 7, {}), (1, 21, {})),  # 1 from 3.9-IV0
    TRANSACTION_VERSION: ((0, 7, {}), (1, 24, {}), (2, 24, {})),  # 4.0-IV2
    GROUP_VERSION: ((0, 7, {}), (1, 22, {})),  # 4.0-IV0
    ELR_VERSION: ((0, 7, {}), (1, 26, {METADATA_VERSION: mv.ELR})),  # 4.1-IV0, needs 4.0-IV1
    SHARE_VERSION: ((0, 7, {}), (1, 28, {}), (2, 31, {})),  # 4.2-IV0, 4.4-IV0
    STREAMS_VERSION: ((0, 7, {}), (1, 29, {})),  # 4.2-IV1
}


def latest_production(feature: str) -> int:
    return VERSIONS[feature][-1][0]


SUPPORTED: dict[str, tuple[int, int]] = {
    GROUP_VERSION: (0, latest_production(GROUP_VERSION)),
    KRAFT_VERSION: (0, latest_production(KRAFT_VERSION)),
    METADATA_VERSION: (mv.MINIMUM, mv.LATEST_PRODUCTION),
    SHARE_VERSION: (0, latest_production(SHARE_VERSION)),
    STREAMS_VERSION: (0, latest_production(STREAMS_VERSION)),
    TRANSACTION_VERSION: (0, latest_production(TRANSACTION_VERSION)),
    ELR_VERSION: (0, latest_production(ELR_VERSION)),
}


def default_level(feature: str, metadata_version: int) -> int:
    """``Feature.defaultLevel``: the highest level whose bootstrap metadata.version is
    not above ``metadata_version``."""
    level = 0
    for lvl, bootstrap, _ in VERSIONS[feature]:
        if bootstrap <= metadata_version:
            level = lvl
    return level


def default_levels(metadata_version: int) -> dict[str, int]:
    """The levels ``kafka-storage format`` writes for ``metadata_version``
    (``BootstrapMetadata.fromVersions``): metadata.version first, then by name every
    other feature at a level above 0, but kraft.version (kept by Raft)."""
    out = {METADATA_VERSION: metadata_version}
    for feature in sorted(VERSIONS):
        level = default_level(feature, metadata_version)
        if feature != KRAFT_VERSION and level > 0:
            out[feature] = level
    return out


def has_level(feature: str, level: int) -> bool:
    """``Feature.fromFeatureLevel`` finds ``level`` (every level we know is production)."""
    return any(lvl == level for lvl, _, _ in VERSIONS.get(feature, ()))


def dependencies(feature: str, level: int) -> dict[str, int]:
    for lvl, _, needs in VERSIONS.get(feature, ()):
        if lvl == level:
            return needs
    return {}
