"""metadata.version and feature facts of Kafka 4.4.0 (``kraft_server/common``): the levels
read from MetadataVersion (names, didMetadataChange, production), fromVersionString's
forms, and Feature.defaultLevel per release."""
from __future__ import annotations

import pytest

from kraft_server.common import features as F
from kraft_server.common import metadata_version as MV


def test_levels_names_and_production():
    assert (MV.MINIMUM, MV.LATEST_PRODUCTION, MV.LATEST_TESTING) == (7, 33, 34)
    assert [MV.name(lvl) for lvl in (30, 31, 32, 33, 34)] == ["4.3-IV0", "4.4-IV0", "4.4-IV1", "4.4-IV2", "4.5-IV0"]
    assert list(MV.NAMES) == list(range(7, 35))
    assert MV.is_production(31) and MV.is_production(33) and not MV.is_production(34)
    assert (MV.CIDR_ACL, MV.CONTROLLER_UNREGISTRATION) == (32, 33)


@pytest.mark.parametrize("a, b, changed", [
    (30, 31, False), (31, 32, True), (32, 33, True), (24, 29, False), (22, 23, True), (33, 34, False),
])
def test_metadata_changed_between(a, b, changed):
    assert MV.metadata_changed(a, b) is changed and MV.metadata_changed(b, a) is changed


@pytest.mark.parametrize("text, level", [
    ("4.4", 33), ("4.4.0", 33), ("4.4-IV0", 31), ("4.3", 30), ("4.3.1", 30), ("4.0", 25), ("3.9", 21),
    ("3.9-IV0", 21), ("3.3", 7), ("3.3-IV3", 7),
])
def test_from_version_string(text, level):
    assert MV.from_version_string(text) == level


@pytest.mark.parametrize("text", ["4.5", "4.5-IV0", "3.2", "3.3-IV2", "4", "", "4.4-IV9"])
def test_from_version_string_refuses(text):
    with pytest.raises(ValueError, match=rf"^Unknown metadata.version '{text}'\. Supported metadata.version are: "
                                         r"3\.3-IV3, .*, 4\.4-IV2$"):
        MV.from_version_string(text)


def test_supported_ranges_are_kafka_4_4s_in_its_order():
    assert list(F.SUPPORTED.items()) == [
        ("group.version", (0, 1)), ("kraft.version", (0, 1)), ("metadata.version", (7, 33)),
        ("share.version", (0, 2)), ("streams.version", (0, 1)), ("transaction.version", (0, 2)),
        ("eligible.leader.replicas.version", (0, 1))]
    assert F.dependencies(F.ELR_VERSION, 1) == {"metadata.version": 23}
    assert F.default_level(F.SHARE_VERSION, 30) == 1 and F.default_level(F.SHARE_VERSION, 31) == 2
