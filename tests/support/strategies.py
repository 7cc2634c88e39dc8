"""Hypothesis strategies (and two deterministic builders) for any generated message, from the model.

Everything here walks ``codegen.model`` (one reading of the schemas), so it works for
``wire.messages`` and for any other package the same codegen produced (for instance
one generated from all of Apache Kafka's specs). A message class and its model go
together: ``models()`` and ``message_class()`` give ours; pass others explicitly.

    messages(model, cls, version, unknown_tags=False) -> SearchStrategy of cls instances
    default_message(cls)                               -> cls(): every field at its default
    filled_message(model, cls, version)                -> every field present at version
                                                          set to a non-default, non-null value
    unknown_tag_lists(used_tags)                       -> sorted [(tag, bytes)] avoiding used_tags

What ``messages`` draws, at ``version``:

- only fields present at the version are set; absent ones keep their defaults (so
  ``encode(version)`` never raises UnsupportedVersionError);
- each present field is sometimes left at its default (so tagged fields are both set
  and unset), otherwise drawn from its type: ints over the type's full range (uint16,
  uint32 included), finite float64, any uuid (the zero uuid too), unicode strings and
  bytes of at most ``max_text`` characters/bytes, records as arbitrary bytes, arrays
  of 0..``max_list`` elements, nested structs recursively; about one draw in seven, a
  string/bytes/records value of 120-140 bytes and a fixed-width array of 127-135
  elements, so that compact lengths take two-byte varints;
- ``None`` only where the field is nullable at the version;
- with ``unknown_tags=True`` and a flexible version, every struct may carry
  ``unknown_tagged_fields`` whose tags no field of that struct uses (for pure-Python
  round trips and Kafka's parse-and-reserialise check; Kafka's JSON form cannot carry them).
"""
from __future__ import annotations

import functools
import sys
import uuid
from pathlib import Path

from hypothesis import strategies as st

from codegen.model import INT_RANGES, ZERO_UUID, FieldModel, MessageModel, StructModel, TypeRef

__all__ = [
    "REPO", "models", "message_class", "struct_class", "messages", "default_message",
    "filled_message", "unknown_tag_lists", "versions_of", "value_strategy",
]

REPO = Path(__file__).resolve().parents[2]

MAX_LIST = 3
MAX_TEXT = 24
_OMIT = object()  # "leave this keyword out" (the field keeps its default)


# -- our package ------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def models() -> dict[str, MessageModel]:
    """Our schemas' models by message name (``schemas/`` read by the codegen)."""
    from codegen.generate import load_models

    return {m.name: m for m, _ in load_models(REPO / "schemas", REPO)}


def message_class(name: str):
    """Our generated class for a message name (``wire.messages.BY_NAME``)."""
    from wire.messages import BY_NAME

    return BY_NAME[name]


def versions_of(cls) -> range:
    return range(cls.MIN_VERSION, cls.MAX_VERSION + 1)


def struct_class(cls, struct_name: str):
    """The class of a nested struct: it lives in the message class's module, under Kafka's name."""
    return getattr(sys.modules[cls.__module__], struct_name)


# -- values -----------------------------------------------------------------------------

def _uuids():
    return st.one_of(st.just(ZERO_UUID), st.uuids(), st.integers(0, 3).map(lambda i: uuid.UUID(int=i)))


_ASCII = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
# now and then a value past 127 bytes, so compact lengths take a two-byte varint
_LONG_TEXT = st.text(alphabet=_ASCII, min_size=120, max_size=140).map(lambda s: s + "é")
_LONG_BYTES = st.binary(min_size=127, max_size=140)


def _rarely(common: st.SearchStrategy, rare: st.SearchStrategy, odds: int = 6) -> st.SearchStrategy:
    """``rare`` about once in ``odds + 1`` draws (one_of picks its branches uniformly)."""
    return st.one_of(*([common] * odds), rare)


def _text(max_text: int):
    short = st.one_of(
        st.text(alphabet=_ASCII, max_size=max_text),
        st.text(max_size=max_text),  # any unicode scalar value (no surrogates)
    )
    return _rarely(short, _LONG_TEXT)


def _bytes(max_text: int):
    return _rarely(st.binary(max_size=max_text), _LONG_BYTES)


def _fixed(kind: str):
    if kind == "bool":
        return st.booleans()
    if kind == "float64":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "uuid":
        return _uuids()
    lo, hi = INT_RANGES[kind]
    return st.integers(lo, hi)


class _Builder:
    """Strategies for one (message package class, model, flags), cached per (struct, version)."""

    def __init__(self, model: MessageModel, cls, unknown_tags: bool, max_list: int, max_text: int):
        self.model = model
        self.cls = cls
        self.unknown_tags = unknown_tags
        self.max_list = max_list
        self.max_text = max_text
        self.cache: dict[tuple[str, int], st.SearchStrategy] = {}

    def value(self, t: TypeRef, version: int) -> st.SearchStrategy:
        k = t.kind
        if t.fixed:
            return _fixed(k)
        if k == "string":
            return _text(self.max_text)
        if k in ("bytes", "records"):
            return _bytes(self.max_text)
        if k == "array":
            el = self.value(t.element, version)
            short = st.lists(el, max_size=self.max_list)
            if t.element.fixed:  # cheap elements: now and then past 127 of them
                return _rarely(short, st.lists(el, min_size=127, max_size=135))
            return short
        if k == "struct":
            return self.struct(self.model.structs[t.struct], version)
        raise AssertionError(f"unhandled type {t}")

    def field(self, f: FieldModel, version: int) -> st.SearchStrategy:
        s = self.value(f.type, version)
        if f.nullable_at(version):
            s = st.one_of(st.none(), s)
        if f.default_is_null:
            return s  # None, the default, is already one of the choices
        return st.one_of(st.just(_OMIT), s)  # sometimes the default (a tagged field unset)

    def struct(self, sm: StructModel, version: int) -> st.SearchStrategy:
        key = (sm.name, version)
        got = self.cache.get(key)
        if got is not None:
            return got
        klass = self.cls if sm.is_message else struct_class(self.cls, sm.name)
        present = [f for f in sm.fields if f.present(version)]
        kw = st.fixed_dictionaries({f.py: self.field(f, version) for f in present})
        if self.unknown_tags and self.model.flexible(version):
            used = {f.tag for f in sm.fields if f.tag is not None}
            tags = st.one_of(st.just(()), unknown_tag_lists(used))
        else:
            tags = st.just(())

        def build(kwargs, unknown):
            args = {k: v for k, v in kwargs.items() if v is not _OMIT}
            return klass(**args, unknown_tagged_fields=list(unknown) if unknown else ())

        got = st.builds(build, kw, tags)
        self.cache[key] = got
        return got


def unknown_tag_lists(used_tags=frozenset(), max_size: int = 3) -> st.SearchStrategy:
    """Sorted lists of (tag, bytes) with distinct tags outside ``used_tags``."""
    tag = st.one_of(st.integers(0, 40), st.integers(0, (1 << 31) - 2)).filter(lambda t: t not in used_tags)
    return st.lists(st.tuples(tag, st.binary(max_size=12)), min_size=1, max_size=max_size,
                    unique_by=lambda p: p[0]).map(lambda xs: sorted(xs, key=lambda p: p[0]))


_BUILDERS: dict[tuple, _Builder] = {}


def messages(model: MessageModel, cls, version: int, *, unknown_tags: bool = False,
             max_list: int = MAX_LIST, max_text: int = MAX_TEXT) -> st.SearchStrategy:
    """Instances of ``cls`` (the generated class of ``model``) valid at ``version``."""
    if not cls.MIN_VERSION <= version <= cls.MAX_VERSION:
        raise ValueError(f"{cls.__name__} has no version {version}")
    key = (id(model), cls, unknown_tags, max_list, max_text)
    b = _BUILDERS.get(key)
    if b is None:
        b = _BUILDERS[key] = _Builder(model, cls, unknown_tags, max_list, max_text)
    return b.struct(model.top, version)


def value_strategy(model: MessageModel, cls, t: TypeRef, version: int) -> st.SearchStrategy:
    """Values of one field type (for callers that want a single field)."""
    return _Builder(model, cls, False, MAX_LIST, MAX_TEXT).value(t, version)


# -- deterministic builders -------------------------------------------------------------

def default_message(cls):
    """Every field at its default."""
    return cls()


_INT_PICKS = {
    "int8": 0x5A, "int16": 0x1234, "uint16": 0xBEEF, "int32": 0x12345678,
    "uint32": 0xDEADBEEF, "int64": 0x0123456789ABCDEF,
}


def _filled_value(model: MessageModel, cls, f: FieldModel, t: TypeRef, version: int, default):
    k = t.kind
    if k == "bool":
        return not default
    if k in _INT_PICKS:
        x = _INT_PICKS[k]
        return x if x != default else x + 1
    if k == "float64":
        return 1.5 if default != 1.5 else 2.5
    if k == "uuid":
        u = uuid.uuid5(uuid.NAMESPACE_URL, f"kraft-server/{model.name}/{f.name}")
        return u if u != default else uuid.UUID(int=u.int ^ 1)
    if k == "string":
        s = f"{f.name}-é✓"
        return s if s != default else s + "!"
    if k == "bytes":
        return b"\x00\x01\xfe" + f.name.encode()
    if k == "records":
        return b"records:" + f.name.encode()
    if k == "array":
        return [_filled_value(model, cls, f, t.element, version, None) for _ in range(2)]
    if k == "struct":
        return _filled_struct(model, cls, model.structs[t.struct], version)
    raise AssertionError(f"unhandled type {t}")


def _filled_struct(model: MessageModel, cls, sm: StructModel, version: int):
    klass = cls if sm.is_message else struct_class(cls, sm.name)
    kwargs = {}
    for f in sm.fields:
        if f.present(version):
            default = f.default if f.type.kind not in ("array", "struct") else None
            kwargs[f.py] = _filled_value(model, cls, f, f.type, version, default)
    return klass(**kwargs)


def filled_message(model: MessageModel, cls, version: int):
    """Every field present at ``version`` set to a non-default, non-null value (arrays of two)."""
    return _filled_struct(model, cls, model.top, version)
