"""The resolved model: field types, structs (nested and common), Python names, defaults.

``build_model(spec)`` turns a parsed ``MessageSpec`` into a ``MessageModel`` whose
structs are looked up by name, whose fields know their kind (fixed-width, string,
bytes, records, array, struct) and their default as a Python value. The emitter
and the tests (hypothesis strategies, the Java differential tester, the fuzzer)
all walk this model, so there is one reading of the schemas.
"""
from __future__ import annotations

import base64
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .spec import FieldSpec, MessageSpec, Versions

# struct-module codes and sizes of the fixed-width types
FIXED = {
    "bool": ("?", 1),
    "int8": ("b", 1),
    "int16": ("h", 2),
    "uint16": ("H", 2),
    "int32": ("i", 4),
    "uint32": ("I", 4),
    "int64": ("q", 8),
    "float64": ("d", 8),
    "uuid": ("16s", 16),
}
VARIABLE = ("string", "bytes", "records")
INT_RANGES = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "uint32": (0, (1 << 32) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
}
ZERO_UUID = uuid.UUID(int=0)


def snake_case(name: str) -> str:
    """Kafka's CamelCase field names as Python attribute names (KRaft → kraft)."""
    name = name.replace("KRaft", "Kraft")
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return name.lower()


def uuid_from_base64(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


@dataclass
class TypeRef:
    """A field's type: a primitive name, or an array of one, or a struct name."""

    kind: str  # a FIXED key, "string", "bytes", "records", "array" or "struct"
    element: "TypeRef | None" = None  # for arrays
    struct: str | None = None  # struct name for struct kinds

    @property
    def fixed(self) -> bool:
        return self.kind in FIXED

    @property
    def primitive_array(self) -> bool:
        """An array whose elements are not structs: decoded into a tuple."""
        return self.kind == "array" and self.element.kind != "struct"

    def __str__(self) -> str:
        if self.kind == "array":
            return "[]" + str(self.element)
        return self.struct if self.kind == "struct" else self.kind


def parse_type(text: str) -> TypeRef:
    if text.startswith("[]"):
        elem = parse_type(text[2:])
        if elem.kind == "array":
            raise ValueError("arrays of arrays are not supported (use a struct)")
        if elem.kind == "records":
            raise ValueError("arrays of records are not supported")
        return TypeRef("array", element=elem)
    if text in FIXED or text in VARIABLE:
        return TypeRef(text)
    if not text[:1].isupper():
        raise ValueError(f"unknown type {text!r}")
    return TypeRef("struct", struct=text)


@dataclass
class FieldModel:
    spec: FieldSpec
    name: str  # Kafka's name
    py: str  # Python attribute name
    type: TypeRef
    versions: Versions
    nullable: Versions
    tagged: Versions
    tag: int | None
    ignorable: bool
    flexible_override: Versions | None
    default_text: str | None
    default: object = None  # Python value; for arrays/structs, a marker (see default_kind)

    @property
    def default_is_null(self) -> bool:
        return self.default_text == "null"

    def present(self, v: int) -> bool:
        return v in self.versions

    def tagged_at(self, v: int) -> bool:
        return v in self.tagged and v in self.versions

    def nullable_at(self, v: int) -> bool:
        return v in self.nullable


@dataclass
class StructModel:
    name: str  # Python class name (= Kafka struct name)
    fields: list[FieldModel]
    versions: Versions  # where the struct can appear
    is_message: bool = False


@dataclass
class MessageModel:
    spec: MessageSpec
    name: str
    module: str  # module name under wire.messages
    structs: dict[str, StructModel] = field(default_factory=dict)  # includes the top level
    order: list[str] = field(default_factory=list)  # definition order, children first

    @property
    def top(self) -> StructModel:
        return self.structs[self.name]

    @property
    def versions(self) -> range:
        v = self.spec.valid_versions
        return range(v.lowest, v.highest + 1)

    def flexible(self, v: int) -> bool:
        return v in self.spec.flexible_versions


def _parse_default(f: FieldSpec, t: TypeRef):
    d = f.default
    if d == "null":
        if f.versions.intersect(f.nullable_versions) != f.versions:
            raise ValueError(f"field {f.name}: default null needs every version nullable")
        return None
    if t.kind in INT_RANGES:
        if d in (None, ""):
            return 0
        value = int(d, 16) if d.lower().startswith(("0x", "-0x")) else int(d)
        lo, hi = INT_RANGES[t.kind]
        if not lo <= value <= hi:
            raise ValueError(f"field {f.name}: default {d} out of range")
        return value
    if t.kind == "bool":
        if d in (None, "", "false"):
            return False
        if d == "true":
            return True
        raise ValueError(f"field {f.name}: bad bool default {d!r}")
    if t.kind == "float64":
        return float(d) if d not in (None, "") else 0.0
    if t.kind == "string":
        return d if d is not None else ""
    if t.kind == "uuid":
        return ZERO_UUID if d in (None, "") else uuid_from_base64(d)
    if t.kind in ("bytes", "records"):
        if d not in (None, ""):
            raise ValueError(f"field {f.name}: bytes defaults must be empty or null")
        return b""
    if t.kind in ("array", "struct"):
        if d not in (None, ""):
            raise ValueError(f"field {f.name}: {t.kind} defaults must be empty or null")
        return "new"  # a fresh empty list / default struct
    raise ValueError(f"field {f.name}: unhandled type {t}")


def _field_model(f: FieldSpec) -> FieldModel:
    t = parse_type(f.type)
    if not f.tagged_versions.empty:
        if f.versions.intersect(f.tagged_versions) != f.tagged_versions:
            raise ValueError(f"field {f.name}: taggedVersions must be within versions")
        if t.kind == "records":
            raise ValueError(f"field {f.name}: records cannot be tagged")
    if not f.nullable_versions.empty and t.fixed:
        raise ValueError(f"field {f.name}: type {t} cannot be nullable")
    return FieldModel(
        spec=f, name=f.name, py=snake_case(f.name), type=t, versions=f.versions,
        nullable=f.nullable_versions, tagged=f.tagged_versions, tag=f.tag,
        ignorable=f.ignorable, flexible_override=f.flexible_versions,
        default_text=f.default, default=_parse_default(f, t),
    )


def _struct_name(t: TypeRef) -> str | None:
    if t.kind == "struct":
        return t.struct
    if t.kind == "array" and t.element.kind == "struct":
        return t.element.struct
    return None


def build_model(spec: MessageSpec, module: str) -> MessageModel:
    m = MessageModel(spec=spec, name=spec.name, module=module)
    common = {c.name: c for c in spec.common_structs}
    reserved = {"unknown_tagged_fields"}

    def add_struct(name: str, fields: list[FieldSpec], versions: Versions, is_message=False):
        if name in m.structs:
            raise ValueError(f"{spec.name}: struct {name} defined twice")
        sm = StructModel(name=name, fields=[], versions=versions, is_message=is_message)
        m.structs[name] = sm
        seen_tags: set[int] = set()
        for f in fields:
            fm = _field_model(f)
            if fm.py in reserved or any(x.py == fm.py for x in sm.fields):
                raise ValueError(f"{spec.name}.{name}: field name {fm.py} clashes")
            if fm.tag is not None:
                if fm.tag in seen_tags:
                    raise ValueError(f"{spec.name}.{name}: tag {fm.tag} used twice")
                seen_tags.add(fm.tag)
            sm.fields.append(fm)
            child = _struct_name(fm.type)
            if child is not None:
                if f.fields is not None:
                    add_struct(child, f.fields, fm.versions)
                elif child in common:
                    if child not in m.structs:
                        add_struct(child, common[child].fields, common[child].versions)
                else:
                    raise ValueError(f"{spec.name}: struct type {child} has no definition")
        m.order.append(name)  # children were appended first

    add_struct(spec.name, spec.fields, spec.valid_versions, is_message=True)
    for name in common:
        if name not in m.structs:  # unused common structs are still generated
            add_struct(name, common[name].fields, common[name].versions)
    return m


def module_name(message_name: str) -> str:
    return snake_case(message_name)


def schema_files(root: Path) -> list[Path]:
    return sorted(p for p in Path(root).rglob("*.json"))
