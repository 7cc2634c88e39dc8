"""Reading Kafka message-spec JSON: comments, version ranges and the raw spec tree.

The dialect is Apache Kafka's (``clients/src/main/resources/common/message``): plain
JSON plus ``//`` line comments and ``/* */`` blocks. Version ranges are written
``"3"``, ``"0-2"``, ``"1+"`` or ``"none"``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

MAX_VERSION = 0x7FFF  # "N+" means up to the largest int16, as in Kafka's Versions


@dataclass(frozen=True)
class Versions:
    """An inclusive version range; empty when lowest > highest."""

    lowest: int
    highest: int

    NONE: "Versions" = None  # type: ignore[assignment]  (set below)

    @classmethod
    def parse(cls, text, default: "Versions | None" = None) -> "Versions":
        if text is None:
            if default is None:
                raise ValueError("missing version range")
            return default
        text = str(text).strip()
        if text == "none":
            return cls.NONE
        if text.endswith("+"):
            return cls(int(text[:-1]), MAX_VERSION)
        if "-" in text:
            lo, hi = text.split("-", 1)
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    @property
    def empty(self) -> bool:
        return self.lowest > self.highest

    def __contains__(self, version: int) -> bool:
        return self.lowest <= version <= self.highest

    def intersect(self, other: "Versions") -> "Versions":
        lo, hi = max(self.lowest, other.lowest), min(self.highest, other.highest)
        return Versions(lo, hi) if lo <= hi else Versions.NONE

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.highest == MAX_VERSION:
            return f"{self.lowest}+"
        if self.lowest == self.highest:
            return str(self.lowest)
        return f"{self.lowest}-{self.highest}"


Versions.NONE = Versions(1, 0)


def strip_comments(text: str) -> str:
    """Remove // and /* */ comments that are outside JSON strings."""
    out = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_string = False
            i += 1
        elif c == '"':
            in_string = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def load_json_with_comments(path) -> dict:
    return json.loads(strip_comments(Path(path).read_text(encoding="utf-8")))


@dataclass
class FieldSpec:
    name: str
    type: str
    versions: Versions
    nullable_versions: Versions = Versions.NONE
    tagged_versions: Versions = Versions.NONE
    tag: int | None = None
    default: str | None = None
    ignorable: bool = False
    map_key: bool = False
    flexible_versions: Versions | None = None  # field-level override
    fields: list["FieldSpec"] | None = None  # None: no inline definition; []: an empty one
    struct_versions: Versions | None = None  # for nested structs: the field's versions

    @classmethod
    def from_json(cls, d: dict, parent_versions: Versions) -> "FieldSpec":
        versions = Versions.parse(d.get("versions"))
        raw = d.get("default")
        fs = cls(
            name=d["name"],
            type=d["type"],
            versions=versions,
            nullable_versions=Versions.parse(d.get("nullableVersions", "none")),
            tagged_versions=Versions.parse(d.get("taggedVersions", "none")),
            tag=d.get("tag"),
            default=None if raw is None else (str(raw).lower() if isinstance(raw, bool) else str(raw)),
            ignorable=bool(d.get("ignorable", False)),
            map_key=bool(d.get("mapKey", False)),
            flexible_versions=Versions.parse(d["flexibleVersions"]) if "flexibleVersions" in d else None,
        )
        if (fs.tag is None) != fs.tagged_versions.empty:
            raise ValueError(f"field {fs.name}: tag and taggedVersions go together")
        if "fields" in d:
            fs.fields = [FieldSpec.from_json(f, versions) for f in d["fields"]]
        return fs


@dataclass
class MessageSpec:
    name: str
    type: str  # request, response, header, data, metadata
    api_key: int | None
    valid_versions: Versions
    flexible_versions: Versions
    fields: list[FieldSpec]
    common_structs: list[FieldSpec]
    listeners: list[str]
    source: str = ""

    @classmethod
    def from_json(cls, d: dict, source: str = "") -> "MessageSpec":
        valid = Versions.parse(d["validVersions"])
        common = []
        for s in d.get("commonStructs", []):
            sv = Versions.parse(s.get("versions", "0+"))
            cs = FieldSpec(name=s["name"], type=s["name"], versions=sv)
            cs.fields = [FieldSpec.from_json(f, sv) for f in s.get("fields", [])]
            common.append(cs)
        return cls(
            name=d["name"],
            type=d["type"],
            api_key=d.get("apiKey"),
            valid_versions=valid,
            flexible_versions=Versions.parse(d.get("flexibleVersions", "none")),
            fields=[FieldSpec.from_json(f, valid) for f in d.get("fields", [])],
            common_structs=common,
            listeners=list(d.get("listeners", [])),
            source=source,
        )


def load_spec(path) -> MessageSpec:
    return MessageSpec.from_json(load_json_with_comments(path), source=str(path))
