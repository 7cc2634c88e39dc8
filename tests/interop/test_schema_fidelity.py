"""Our schemas/*.json have exactly Apache Kafka 4.4.0's wire shape (the newest release we
follow; every older version of each message is part of that shape, so older clients are
answered byte for byte as before).

Every ``.json`` under ``schemas/`` is matched by base name with the upstream spec of the same
name inside release 4.4.0's jars (kafka-clients and kafka-raft ``common/message/``, kafka-metadata
``common/metadata/``), and compared attribute by attribute, recursing into nested struct
fields and ``commonStructs``. Prose (``about``) is ours and is not compared; ``entityType`` may
be dropped, but if kept it must match.

Normalisation is limited to spellings that cannot change what Kafka's generator builds:
- an absent ``ignorable``/``mapKey``/``latestVersionUnstable`` is false, an absent
  ``nullableVersions``/``taggedVersions`` is "none" (but a message's ``flexibleVersions``
  must be spelled out, as Kafka's generator requires);
- version ranges are compared after parsing ("3-3" == "3");
- ``default`` is compared as the string Kafka's Jackson binding sees (-1 == "-1",
  false == "false"), with no numeric rewriting ("0x7fffffff" != "2147483647").

The one intended difference is the DescribeQuorum v3 extension (KIP-1204 draft, seed 002).
It is spelled out in ``ALLOWED_DIVERGENCES``, and each entry must actually be hit, so the
list cannot rot once the schemas change.
"""

from __future__ import annotations

import json
import zipfile
from functools import lru_cache
from pathlib import Path

import pytest

from tests.support.schemas_release import PENDING_RECORDS, SCHEMAS_RELEASE

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "schemas"
KAFKA_VERSION = SCHEMAS_RELEASE  # not the suite's default release (tests/support/schemas_release.py)

# (artifact, folder inside the jar) searched for a spec of the same base name.
UPSTREAM_LOCATIONS = (
    ("kafka-clients", "common/message/"),
    ("kafka-raft", "common/message/"),
    ("kafka-metadata", "common/metadata/"),
)

# The KRaft RPCs, records and state file (this suite's own files).
REQUIRED_KRAFT = [
    *(f"messages/{api}{kind}.json"
      for api in ("Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "FetchSnapshot", "DescribeQuorum",
                  "UpdateFeatures", "AddRaftVoter", "RemoveRaftVoter", "UpdateRaftVoter")
      for kind in ("Request", "Response")),
    *(f"records/{name}.json"
      for name in ("ControlRecordTypeSchema", "LeaderChangeMessage", "SnapshotHeaderRecord",
                   "SnapshotFooterRecord", "KRaftVersionRecord", "VotersRecord",
                   "FeatureLevelRecord", "NoOpRecord", "RegisterControllerRecord")),
    "state/QuorumStateData.json",
]
# The client-facing RPCs a controller also answers (written alongside, same folder).
REQUIRED_CLIENT = [
    "messages/RequestHeader.json",
    "messages/ResponseHeader.json",
    *(f"messages/{api}{kind}.json"
      for api in ("ApiVersions", "Metadata", "Fetch", "ListOffsets", "OffsetForLeaderEpoch",
                  "FindCoordinator", "DescribeCluster", "DescribeTopicPartitions")
      for kind in ("Request", "Response")),
    # delegation tokens: the forwarded APIs, Describe and their records
    *(f"messages/{verb}DelegationToken{kind}.json"
      for verb in ("Create", "Renew", "Expire", "Describe") for kind in ("Request", "Response")),
    "records/DelegationTokenRecord.json",
    "records/RemoveDelegationTokenRecord.json",
]

# (schema base name, location) -> (upstream value, our value). A whole field present only in
# ours shows up at its path with upstream value ABSENT and our value as its normalised form,
# which also pins its position ("after": the field it follows).
ABSENT = "<absent>"
ALLOWED_DIVERGENCES = {
    # DescribeQuorum v3 (KIP-1204 draft, seed 002): released Kafka stops at v2 and clients
    # negotiate down to it; see the comment blocks in both schema files.
    ("DescribeQuorumRequest", "validVersions"): ("0-2", "0-3"),
    ("DescribeQuorumResponse", "validVersions"): ("0-2", "0-3"),
    ("DescribeQuorumResponse", "fields/Topics/Partitions/CommittedVoters"): (
        ABSENT,
        {"after": "CurrentVoters", "type": "[]ReplicaState", "versions": "3+",
         "nullableVersions": "3+", "ignorable": True, "default": "null"},
    ),
}

MESSAGE_KEYS = {"apiKey", "type", "listeners", "name", "validVersions", "flexibleVersions",
                "latestVersionUnstable", "fields", "commonStructs"}
STRUCT_KEYS = {"name", "versions", "fields"}
FIELD_KEYS = {"name", "type", "versions", "nullableVersions", "taggedVersions", "tag", "default",
              "ignorable", "mapKey", "flexibleVersions", "entityType", "zeroCopy", "about",
              "fields"}


# ---------------------------------------------------------------------------------------------
# Loading

try:
    from codegen.spec import strip_comments
except ImportError:  # codegen not there yet: our dialect only adds full-line // comments
    def strip_comments(text: str) -> str:
        return "\n".join("" if line.lstrip().startswith("//") else line
                         for line in text.splitlines())


def load_json_with_comments(path) -> dict:
    return json.loads(strip_comments(Path(path).read_text(encoding="utf-8")))


def _jar(artifact: str) -> Path:
    from tools.kafka_dist import upstream_jar
    return upstream_jar(artifact, KAFKA_VERSION)


@lru_cache(maxsize=None)
def upstream_index() -> dict[str, list[tuple[str, str]]]:
    """Base name -> [(artifact, entry)] over the three upstream locations."""
    index: dict[str, list[tuple[str, str]]] = {}
    for artifact, folder in UPSTREAM_LOCATIONS:
        with zipfile.ZipFile(_jar(artifact)) as jar:
            for entry in jar.namelist():
                rest = entry[len(folder):]
                if entry.startswith(folder) and rest.endswith(".json") and "/" not in rest:
                    index.setdefault(rest[:-5], []).append((artifact, entry))
    return index


def load_upstream(artifact: str, entry: str) -> dict:
    """One upstream spec; those use // comments too (license header, version notes)."""
    with zipfile.ZipFile(_jar(artifact)) as jar:
        return json.loads(strip_comments(jar.read(entry).decode("utf-8")))


# ---------------------------------------------------------------------------------------------
# Normalisation

def canonical_versions(spec) -> str:
    """A version range as Kafka's Versions.parse reads it, printed canonically."""
    if spec is None:
        return "none"
    text = str(spec).strip()
    if text == "none":
        return "none"
    if text.endswith("+"):
        return f"{int(text[:-1])}+"
    low, dash, high = text.partition("-")
    low_i, high_i = int(low), int(high) if dash else int(low)
    if high_i < low_i:
        raise ValueError(f"bad version range {spec!r}")
    return str(low_i) if low_i == high_i else f"{low_i}-{high_i}"


def jackson_string(value):
    """`default` as Kafka's generator receives it (a JSON scalar bound to a Java String)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def field_attributes(field: dict) -> dict:
    """The wire-relevant attributes of one field, omitting those at their implied default."""
    attrs = {
        "type": field.get("type"),
        "versions": canonical_versions(field.get("versions")),
        "nullableVersions": canonical_versions(field.get("nullableVersions")),
        "taggedVersions": canonical_versions(field.get("taggedVersions")),
        "tag": field.get("tag"),
        "default": jackson_string(field.get("default")),
        "ignorable": bool(field.get("ignorable", False)),
        "mapKey": bool(field.get("mapKey", False)),
        "flexibleVersions": (canonical_versions(field["flexibleVersions"])
                             if "flexibleVersions" in field else None),
    }
    implied = {"nullableVersions": "none", "taggedVersions": "none", "tag": None, "default": None,
               "ignorable": False, "mapKey": False, "flexibleVersions": None}
    return {k: v for k, v in attrs.items() if k not in implied or v != implied[k]}


def field_summary(field: dict, after: str | None) -> dict:
    """A whole field (for one that exists on one side only), nested fields included."""
    summary = {"after": after, **field_attributes(field)}
    if field.get("fields"):
        summary["fields"] = [field_summary(f, None) | {"name": f["name"]}
                             for f in field["fields"]]
    return summary


def message_attributes(spec: dict) -> dict:
    return {
        "name": spec.get("name"),
        "type": spec.get("type"),
        "apiKey": spec.get("apiKey"),
        "validVersions": canonical_versions(spec.get("validVersions")),
        # Kafka's generator insists on flexibleVersions for any live message: no implied value.
        "flexibleVersions": (canonical_versions(spec["flexibleVersions"])
                             if "flexibleVersions" in spec else ABSENT),
        "listeners": spec.get("listeners"),
        "latestVersionUnstable": bool(spec.get("latestVersionUnstable", False)),
    }


# ---------------------------------------------------------------------------------------------
# Comparison

def diff_fields(path: str, ours: list, upstream: list, out: list) -> None:
    ours_by = {f["name"]: f for f in ours}
    up_by = {f["name"]: f for f in upstream}
    if len(ours_by) != len(ours):
        out.append((f"{path}:duplicate-names", None, [f["name"] for f in ours]))
    previous = None
    for f in ours:
        if f["name"] not in up_by:
            out.append((f"{path}/{f['name']}", ABSENT, field_summary(f, previous)))
        previous = f["name"]
    previous = None
    for f in upstream:
        if f["name"] not in ours_by:
            out.append((f"{path}/{f['name']}", field_summary(f, previous), ABSENT))
        previous = f["name"]
    ours_order = [f["name"] for f in ours if f["name"] in up_by]
    up_order = [f["name"] for f in upstream if f["name"] in ours_by]
    if ours_order != up_order:  # wire order is declaration order
        out.append((f"{path}:order", up_order, ours_order))
    for name in up_order:
        mine, theirs = ours_by[name], up_by[name]
        where = f"{path}/{name}"
        a, b = field_attributes(mine), field_attributes(theirs)
        for key in sorted(a.keys() | b.keys()):
            if a.get(key, ABSENT) != b.get(key, ABSENT):
                out.append((f"{where}.{key}", b.get(key, ABSENT), a.get(key, ABSENT)))
        if "entityType" in mine and mine["entityType"] != theirs.get("entityType"):
            out.append((f"{where}.entityType", theirs.get("entityType", ABSENT),
                        mine["entityType"]))
        diff_fields(where, mine.get("fields", []), theirs.get("fields", []), out)


def diff_specs(ours: dict, upstream: dict) -> list[tuple[str, object, object]]:
    """Every wire-relevant difference as (location, upstream value, our value)."""
    out: list = []
    a, b = message_attributes(ours), message_attributes(upstream)
    for key in a:
        if a[key] != b[key]:
            out.append((key, b[key], a[key]))
    diff_fields("fields", ours.get("fields", []), upstream.get("fields", []), out)
    ours_structs = {s["name"]: s for s in ours.get("commonStructs", [])}
    up_structs = {s["name"]: s for s in upstream.get("commonStructs", [])}
    for name in sorted(ours_structs.keys() | up_structs.keys()):
        where = f"commonStructs/{name}"
        if name not in ours_structs or name not in up_structs:
            out.append((where, ABSENT if name not in up_structs else "present",
                        ABSENT if name not in ours_structs else "present"))
            continue
        mine, theirs = ours_structs[name], up_structs[name]
        if canonical_versions(mine.get("versions")) != canonical_versions(theirs.get("versions")):
            out.append((f"{where}.versions", theirs.get("versions"), mine.get("versions")))
        diff_fields(where, mine.get("fields", []), theirs.get("fields", []), out)
    return out


def unknown_keys(spec: dict) -> list[str]:
    """Keys Kafka's dialect does not have (a typo such as "nullableVersion" would otherwise
    vanish silently and change the wire shape)."""
    bad = [f"<message>.{k}" for k in spec if k not in MESSAGE_KEYS]

    def walk(fields, where):
        for f in fields:
            bad.extend(f"{where}/{f.get('name')}.{k}" for k in f if k not in FIELD_KEYS)
            walk(f.get("fields", []), f"{where}/{f.get('name')}")

    walk(spec.get("fields", []), "fields")
    for s in spec.get("commonStructs", []):
        bad.extend(f"commonStructs/{s.get('name')}.{k}" for k in s if k not in STRUCT_KEYS)
        walk(s.get("fields", []), f"commonStructs/{s.get('name')}")
    return bad


# ---------------------------------------------------------------------------------------------
# Tests

SCHEMA_FILES = sorted(SCHEMAS.rglob("*.json"))


def _rel(path: Path) -> str:
    return path.relative_to(SCHEMAS).as_posix()


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=[_rel(p) for p in SCHEMA_FILES])
def test_schema_matches_upstream(path: Path):
    stem = path.stem
    found = upstream_index().get(stem)
    assert found, f"{_rel(path)}: no upstream spec named {stem}.json in {UPSTREAM_LOCATIONS}"
    assert len(found) == 1, f"{stem}.json is ambiguous upstream: {found}"
    ours = load_json_with_comments(path)
    upstream = load_upstream(*found[0])

    assert unknown_keys(ours) == [], f"{_rel(path)}: keys outside Kafka's dialect"

    allowed = {loc: pair for (name, loc), pair in ALLOWED_DIVERGENCES.items() if name == stem}
    used, unexpected = set(), []
    for location, theirs, mine in diff_specs(ours, upstream):
        if allowed.get(location) == (theirs, mine):
            used.add(location)
        else:
            unexpected.append(f"{location}: upstream {theirs!r}, ours {mine!r}")
    assert not unexpected, f"{_rel(path)} differs from {found[0][1]} in {found[0][0]}:\n  " + \
        "\n  ".join(unexpected)
    assert used == set(allowed), \
        f"{_rel(path)}: allow-listed divergences no longer present: {sorted(set(allowed) - used)}"


@pytest.mark.parametrize("rel", REQUIRED_KRAFT + REQUIRED_CLIENT)
def test_required_schema_present(rel: str):
    assert (SCHEMAS / rel).is_file(), f"schemas/{rel} is missing"


def test_every_upstream_metadata_record_has_a_schema():
    """A decoder of ``__cluster_metadata`` needs every record type Kafka can write: each
    ``common/metadata/*.json`` of the kafka-metadata jar has ours in ``schemas/records``
    (same base name), but the pending ones; Kafka 4.4.0 has 27 (keys 0-29 but 6, 13, 16)."""
    upstream = {stem for stem, found in upstream_index().items()
                if any(artifact == "kafka-metadata" for artifact, _ in found)}
    ours = {p.stem for p in (SCHEMAS / "records").glob("*.json")}
    assert sorted(upstream - ours) == sorted(PENDING_RECORDS)  # tests/support/schemas_release.py
    keys = sorted(load_upstream(*upstream_index()[stem][0])["apiKey"] for stem in upstream)
    assert keys == [k for k in range(30) if k not in (6, 13, 16)]


def test_base_names_are_unique():
    stems = [p.stem for p in SCHEMA_FILES]
    assert len(stems) == len(set(stems)), sorted(s for s in stems if stems.count(s) > 1)


def test_allow_list_names_existing_files():
    present = {p.stem for p in SCHEMA_FILES}
    for name, _location in ALLOWED_DIVERGENCES:
        assert name in present, f"ALLOWED_DIVERGENCES names {name}, which has no schema file"


def test_comparison_catches_a_change():
    """The checker itself: a wire-relevant edit and a harmless one, on a real upstream spec."""
    artifact, entry = upstream_index()["VoteResponse"][0]
    upstream = load_upstream(artifact, entry)
    assert diff_specs(upstream, upstream) == []

    harmless = json.loads(json.dumps(upstream))
    for f in harmless["fields"]:
        f.pop("about", None)
        f.pop("entityType", None)
    harmless["fields"][0]["ignorable"] = False
    harmless["fields"][0]["nullableVersions"] = "none"
    assert diff_specs(harmless, upstream) == []

    changed = json.loads(json.dumps(upstream))
    endpoints = changed["fields"][-1]
    endpoints["tag"] = 1
    endpoints["fields"][2]["type"] = "int32"
    endpoints["fields"].reverse()
    locations = {loc for loc, _, _ in diff_specs(changed, upstream)}
    assert locations == {"fields/NodeEndpoints.tag", "fields/NodeEndpoints/Port.type",
                         "fields/NodeEndpoints:order"}
