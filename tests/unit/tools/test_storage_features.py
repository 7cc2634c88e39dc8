"""``kraft-storage format --feature``, ``version-mapping`` and ``feature-dependencies``:
the argument parsing and the answers, as Apache Kafka 4.4.0's ``kafka-storage`` gives
them (``tests/interop/test_storage_features_java.py`` runs a sample through both)."""
from __future__ import annotations

import pytest

from kraft_server.log.bootstrap import DEFAULT_FEATURES, read_bootstrap_checkpoint
from tests.unit.tools.test_storage_format import CLUSTER, run, write_config
from tools.storage.feature_arg import (
    FeatureArgError,
    java_short,
    parse_format_feature,
    parse_format_features,
    parse_lookup_feature,
)

CRASH = 'Exception in thread "main" java.lang.'


@pytest.mark.parametrize("text, value", [
    ("0", 0), ("1", 1), ("+3", 3), ("-1", -1), ("007", 7), ("32767", 32767), ("-32768", -32768),
    ("32768", None), ("-32769", None), ("", None), ("x", None), ("1.0", None), ("1_0", None),
    (" 1", None), ("0x1", None), ("1=2", None),
])
def test_java_short(text, value):
    assert java_short(text) == value


@pytest.mark.parametrize("arg, parsed", [
    ("group.version=1", ("group.version", 1)),
    (" group.version = 0 ", ("group.version", 0)),  # both sides trimmed
    ("=1", ("", 1)),
    ("foo=-2", ("foo", -2)),
])
def test_format_feature_parses(arg, parsed):
    assert parse_format_feature(arg) == parsed


@pytest.mark.parametrize("arg, message", [
    ("group.version", "Can't parse feature=level string group.version: equals sign not found."),
    ("group.version=x", "Can't parse feature=level string group.version=x: unable to parse x as a short."),
    ("group.version=1=2", "Can't parse feature=level string group.version=1=2: unable to parse 1=2 as a short."),
    ("group.version=", "Can't parse feature=level string group.version=: unable to parse  as a short."),
    ("a=99999", "Can't parse feature=level string a=99999: unable to parse 99999 as a short."),
])
def test_format_feature_refused(arg, message):
    with pytest.raises(FeatureArgError) as exc:
        parse_format_feature(arg)
    assert str(exc.value) == message


def test_format_features_last_wins():
    assert parse_format_features(["group.version=1", "share.version=0", "group.version=0"]) == {
        "group.version": 0, "share.version": 0}


@pytest.mark.parametrize("arg, outcome", [
    ("group.version=1", ("group.version", 1)),
    ("group.version= 1", ("group.version", 1)),
    ("group.version", "Invalid feature format: group.version. Expected format: 'feature=version' "
                      "(e.g. 'group.version=1')"),
    ("a=b=c", "Invalid version format: b=c for feature a"),
    ("group.version=99999", "Invalid version format: 99999 for feature group.version"),
    ("group.version=", "Invalid version format:  for feature group.version"),
])
def test_lookup_feature(arg, outcome):
    if isinstance(outcome, tuple):
        assert parse_lookup_feature(arg) == outcome
        return
    with pytest.raises(FeatureArgError) as exc:
        parse_lookup_feature(arg)
    assert str(exc.value) == outcome


# ---------------------------------------------------------------------------------
# format --feature
# ---------------------------------------------------------------------------------

def _format(tmp_path, capsys, *args, static=False):
    cfg = write_config(tmp_path, static=static)
    return run(capsys, "format", "-t", CLUSTER, "-c", cfg, *args)


@pytest.mark.parametrize("args, levels", [
    # a feature below the release's default is left out of the records (level 0)
    (["-s", "-f", "group.version=0"], {**DEFAULT_FEATURES, "group.version": 0}),
    (["-s", "-f", "share.version=1", "-f", "transaction.version=1"],
     {**DEFAULT_FEATURES, "share.version": 1, "transaction.version": 1}),
    # metadata.version through --feature: that level's defaults for the others
    (["-s", "-f", "metadata.version=25"], {"metadata.version": 25, "group.version": 1, "transaction.version": 2}),
    # a feature above what the release defaults to
    (["-s", "-r", "4.0", "-f", "share.version=1", "-f", "streams.version=1"],
     {"metadata.version": 25, "group.version": 1, "share.version": 1, "streams.version": 1,
      "transaction.version": 2}),
    (["-s", "-f", "kraft.version=1"], DEFAULT_FEATURES),
    (["-N", "-f", "kraft.version=1"], DEFAULT_FEATURES),
    (["-r", "3.8", "-f", "kraft.version=0"], {"metadata.version": 20}),  # static quorum, below
])
def test_format_with_features(tmp_path, capsys, args, levels):
    code, out, err = _format(tmp_path, capsys, *args, static="-s" not in args and "-N" not in args)
    assert (code, err) == (0, "")
    meta = tmp_path / "meta"
    written = {n: lvl for n, lvl in levels.items() if lvl > 0}
    assert read_bootstrap_checkpoint(meta) == written
    records = out.splitlines()[0]
    assert "kraft.version" not in records
    for name, level in written.items():
        assert f"FeatureLevelRecord(name='{name}', featureLevel={level})" in records


SUPPORTED = ("eligible.leader.replicas.version, group.version, kraft.version, share.version, "
             "streams.version, transaction.version")
KRAFT0 = ("Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags --standalone, "
          "--initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try "
          "removing the --feature flag for kraft.version.")


@pytest.mark.parametrize("args, message", [
    (["-s", "-f", "foo.version=1"], f"Unsupported feature: foo.version. Supported features are: {SUPPORTED}"),
    (["-s", "-f", "zz=1", "-f", "aa=1"], f"Unsupported feature: aa. Supported features are: {SUPPORTED}"),
    (["-s", "-f", "group.version=x"],
     CRASH + "RuntimeException: Can't parse feature=level string group.version=x: unable to parse x as a short."),
    (["-s", "-f", "group.version=5"],
     CRASH + "IllegalArgumentException: No feature:group.version with feature level 5"),
    (["-s", "-f", "share.version=-1"],
     CRASH + "IllegalArgumentException: No feature:share.version with feature level -1"),
    (["-s", "-r", "3.9", "-f", "eligible.leader.replicas.version=1"],
     CRASH + "IllegalArgumentException: eligible.leader.replicas.version could not be set to 1 because it "
             "depends on metadata.version level 23"),
    # checked in name order: eligible... before group...
    (["-s", "-r", "3.9", "-f", "group.version=5", "-f", "eligible.leader.replicas.version=1"],
     CRASH + "IllegalArgumentException: eligible.leader.replicas.version could not be set to 1 because it "
             "depends on metadata.version level 23"),
    (["-s", "-r", "4.0", "-f", "metadata.version=25"],
     "Use --release-version instead of --feature metadata.version=X to avoid ambiguity."),
    (["-s", "-f", "metadata.version=34"], "metadata.version 4.5-IV0 is not yet stable."),
    (["-s", "-f", "metadata.version=5"],
     CRASH + "IllegalArgumentException: No MetadataVersion with feature level 5. "
             "Valid feature levels are from 7 to 34."),
    (["-s", "-f", "kraft.version=0"], KRAFT0),
    (["-N", "-f", "kraft.version=0"], KRAFT0),
    (["-s", "-f", "kraft.version=0", "-f", "group.version=5"], KRAFT0),  # before the levels
    (["-s", "-f", "kraft.version=2"],
     CRASH + "IllegalArgumentException: No feature:kraft.version with feature level 2"),
    (["-s", "-r", "3.4", "-f", "group.version=1", "-S", "SCRAM-SHA-256=[name=alice,password=alice-secret]"],
     "SCRAM is only supported in metadata.version 3.5-IV2 or later."),
    # the order of Kafka's checks: --release-version, then --feature values, then the quorum flags
    (["-r", "9.9", "-f", "group.version=x"], "Unknown metadata.version '9.9'. Supported metadata.version are: "),
    (["-f", "group.version=x"], CRASH + "RuntimeException: Can't parse feature=level string group.version=x"),
    (["-f", "foo=1"], "Because controller.quorum.voters is not set on this controller, you must specify one of "
                      "the following: --standalone, --initial-controllers, or --no-initial-controllers."),
])
def test_format_features_refused(tmp_path, capsys, args, message):
    code, out, err = _format(tmp_path, capsys, *args)
    assert (code, out) == (1, "")
    assert err.startswith(message) and err.endswith("\n") and err.count("\n") == 1
    assert not (tmp_path / "meta" / "meta.properties").exists()


def test_format_kraft_version_1_on_a_static_quorum(tmp_path, capsys):
    code, _, err = _format(tmp_path, capsys, "-f", "kraft.version=1", static=True)
    assert code == 1
    assert err == ("Cannot set kraft.version to 1 unless controller.quorum.voters is empty and one of the flags "
                   "--standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic "
                   "controllers support, try using one of --standalone, --initial-controllers, or "
                   "--no-initial-controllers and removing controller.quorum.voters.\n")


# ---------------------------------------------------------------------------------
# version-mapping, feature-dependencies
# ---------------------------------------------------------------------------------

@pytest.mark.parametrize("args, lines", [
    ([], ["metadata.version=33 (4.4-IV2)", "kraft.version=1", "transaction.version=2", "group.version=1",
          "eligible.leader.replicas.version=1", "share.version=2", "streams.version=1"]),
    (["-r", "4.0"], ["metadata.version=25 (4.0)", "kraft.version=1", "transaction.version=2", "group.version=1",
                     "eligible.leader.replicas.version=0", "share.version=0", "streams.version=0"]),
    (["--release-version", "3.3-IV3"], ["metadata.version=7 (3.3-IV3)", "kraft.version=0", "transaction.version=0",
                                        "group.version=0", "eligible.leader.replicas.version=0", "share.version=0",
                                        "streams.version=0"]),
    (["-r", "4.0.1"], ["metadata.version=25 (4.0.1)"]),
    (["-r", "4.5-IV0"], ["metadata.version=34 (4.5-IV0)"]),  # a testing level is looked up too
])
def test_version_mapping(capsys, args, lines):
    code, out, err = run(capsys, "version-mapping", *args)
    assert (code, err) == (0, "")
    assert out.splitlines()[:len(lines)] == lines and len(out.splitlines()) == 7


@pytest.mark.parametrize("release", ["9.9", "4.5", "3.2", " 4.0"])
def test_version_mapping_refused(capsys, release):
    code, out, err = run(capsys, "version-mapping", "-r", release)
    assert (code, out) == (1, "")
    assert err.startswith(f"Unknown metadata.version '{release}'. Supported metadata.version are: 3.3-IV3, ")
    assert err.endswith(", 4.4-IV2, 4.5-IV0\n")


def test_feature_dependencies(capsys):
    code, out, err = run(capsys, "feature-dependencies", "-f", "eligible.leader.replicas.version=1",
                         "-f", "metadata.version=34", "--feature", "group.version=0", "-f", "kraft.version=1")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "eligible.leader.replicas.version=1 requires:", "    metadata.version=23 (4.0-IV1)",
        "metadata.version=34 (4.5-IV0) has no dependencies.", "group.version=0 has no dependencies.",
        "kraft.version=1 has no dependencies."]


@pytest.mark.parametrize("arg, message", [
    ("foo=1", "Unknown feature: foo"),
    ("=1", "Unknown feature: "),
    ("share.version=3", "Feature level 3 is not supported for feature share.version"),
    ("metadata.version=5", "Unknown metadata.version 5"),
    ("metadata.version=35", "Unknown metadata.version 35"),
    ("group.version", "Invalid feature format: group.version. Expected format: 'feature=version' "
                      "(e.g. 'group.version=1')"),
])
def test_feature_dependencies_refused_after_what_it_printed(capsys, arg, message):
    code, out, err = run(capsys, "feature-dependencies", "-f", "group.version=1", "-f", arg, "-f", "kraft.version=0")
    assert (code, out, err) == (1, "group.version=1 has no dependencies.\n", message + "\n")
