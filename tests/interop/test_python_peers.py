"""Byte equality with the Python peers: kio 0.6.5 and kafka-python 3.0.12.

For every (message, version) of ours that a peer also implements, with values drawn by
``tests/support/strategies.py`` (plus the default and the every-field-filled object):

- our encoding equals the peer's encoding of the same values, byte for byte;
- the peer decodes our encoding (consuming all of it) to the same values;
- we decode the peer's encoding to an object equal to the one we started from.

Before any value, each field present at the version is matched by name with the peer's
(kio spells ``KRaft`` as ``k_raft`` and drops ``_ms`` from its timedelta fields;
kafka-python patches a few names) and its tag, type and nullability are compared: a
field either side lacks (other than a tagged field the peer's older schema predates) or
a differing shape fails the pair, since values drawn from our model alone would never
show that a peer allows a null we refuse.

Values cross over through small adapters driven by our model, converted where a peer
models a value differently:

- kio: error codes are ``ErrorCode`` members, some int32/int64 fields are ``timedelta``
  or ``datetime`` (-1 is ``None`` where the datetime is optional), the zero uuid is
  ``None``, arrays are tuples;
- kafka-python: the zero uuid is ``None``, ``*AuthorizedOperations`` int32 fields are
  patched into sets of bit numbers ({31}, i.e. INT32_MIN, is ``None``), an absent tagged
  struct is ``None``.

Drawn values are first narrowed to what the peer can hold: an error code the peer's
``ErrorCode`` lacks becomes one it has, kio's timedeltas and datetimes get values their
Python types represent exactly; a tagged field the peer's (older) schema does not know is
left at its default (on the wire it is then absent for both), and, for kafka-python,
tagged fields nested inside a tagged field stay at their defaults (kafka-python writes
and expects an empty tag section there). Where a peer has no class for a message or
version, or cannot represent a type (kafka-python has no uint32), the pair is skipped
with a reason naming the peer and the gap.

Unknown tagged fields: not with kio (it raises on them, a known gap); with kafka-python
only in the decode direction (it keeps them as ``_<tag>`` attributes but never writes
them back).

``PEER_EXAMPLES`` (default 10) sets the number of drawn examples per pair. The number of
pairs compared against each peer is printed at the end of the module.
"""
from __future__ import annotations

import dataclasses
import datetime
import functools
import importlib
import io
import os
import pkgutil
import typing
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.model import ZERO_UUID, FieldModel, MessageModel

from tests.support._targets import target
from tests.support.strategies import filled_message, messages, struct_class

PEER_EXAMPLES = int(os.environ.get("PEER_EXAMPLES", "10"))
KIO, KAFKA_PYTHON = "kio 0.6.5", "kafka-python 3.0.12"

_TARGET = target()
PAIRS = ([pytest.param(name, v, id=f"{name}-v{v}")
          for name, m in sorted(_TARGET[1].items()) for v in m.versions] if _TARGET else [])
COMPARED: dict[str, list] = {KIO: [], KAFKA_PYTHON: []}
SKIPPED: dict[str, list] = {KIO: [], KAFKA_PYTHON: []}


@pytest.fixture(scope="module", autouse=True)
def peer_summary(request):
    yield
    capman = request.config.pluginmanager.getplugin("capturemanager")
    lines = ["", "python peers: (message, version) pairs compared byte for byte:"]
    for peer in (KIO, KAFKA_PYTHON):
        names = sorted({n for n, _ in COMPARED[peer]})
        lines.append(f"  {peer}: {len(COMPARED[peer])} pairs over {len(names)} messages "
                     f"({len(SKIPPED[peer])} pairs skipped: not covered by the peer)")
    with capman.global_and_fixture_disabled():
        print("\n".join(lines))


def _setup(name, version):
    if _TARGET is None:
        pytest.skip("wire/messages is not generated yet")
    pkg, models = _TARGET
    return pkg, models[name], pkg.BY_NAME[name]


def _skip(peer, name, version, why):
    SKIPPED[peer].append((name, version))
    pytest.skip(f"{peer}: {why}")


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


def _default_of(cls, f: FieldModel):
    return getattr(cls(), f.py)


def narrow(model: MessageModel, version: int, obj, keep, fix, in_tagged=False):
    """A copy of our struct ``obj`` narrowed to what a peer can hold.

    ``keep(struct, field, in_tagged)`` false: the field goes back to its default
    (``in_tagged``: some enclosing field is tagged); ``fix(struct, field, value)`` maps a
    primitive value (each element of a primitive array)."""
    cls = type(obj)
    sname = cls.__name__
    kwargs = {}
    for f in model.structs[sname].fields:
        value = getattr(obj, f.py)
        if not f.present(version):
            kwargs[f.py] = value
            continue
        if not keep(sname, f, in_tagged):
            kwargs[f.py] = _default_of(cls, f)
            continue
        inner = in_tagged or f.tagged_at(version)
        t = f.type
        if value is None:
            pass
        elif t.kind == "struct":
            value = narrow(model, version, value, keep, fix, inner)
        elif t.kind == "array" and t.element.kind == "struct":
            value = [narrow(model, version, e, keep, fix, inner) for e in value]
        elif t.kind == "array":
            value = [fix(sname, f, e) for e in value]
        else:
            value = fix(sname, f, value)
        kwargs[f.py] = value
    return cls(**kwargs, unknown_tagged_fields=obj.unknown_tagged_fields)


def _examples(model, cls, version, check, narrow_fn, unknown_tags=False, examples=None):
    """Run ``check`` on the default and filled objects, then on drawn ones."""
    check(narrow_fn(cls()))
    check(narrow_fn(filled_message(model, cls, version)))

    @settings(max_examples=examples or PEER_EXAMPLES, deadline=None, derandomize=True,
              database=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def drawn(data):
        obj = data.draw(messages(model, cls, version, unknown_tags=unknown_tags, max_list=2),
                        label="ours")
        check(narrow_fn(obj))

    drawn()


# -- kio ------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _kio_index() -> dict:
    """(class name, version) -> "module:Class" for every entity kio ships."""
    from kio.schema.index import schema_name_map

    out = {}
    for versions in schema_name_map.values():
        for v, kinds in versions.items():
            for path in kinds.values():
                out[(path.split(":")[1], v)] = path
    return out


def _kio_class(name, version):
    path = _kio_index().get((name, version))
    if path is None:
        return None
    module, cls = path.split(":")
    return getattr(importlib.import_module(module), cls)


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_MS = datetime.timedelta(milliseconds=1)


class KioAdapter:
    """Ours <-> kio dataclasses for one (message, version), matched field by field."""

    def __init__(self, model: MessageModel, version: int, kio_cls):
        from kio.schema.errors import ErrorCode
        from kio.serial import entity_reader, entity_writer

        self.m, self.v = model, version
        self.error_codes = sorted(int(c) for c in ErrorCode)
        self.ErrorCode = ErrorCode
        self.fields: dict[str, dict] = {}  # our struct -> {our field py: kio Field | None}
        self.classes: dict[str, type] = {}  # our struct -> kio class
        self.problems: list[str] = []
        self._map(model.name, kio_cls)
        self.write = entity_writer(kio_cls)
        self.read = entity_reader(kio_cls)

    def _map(self, sname, kcls):
        from kio.serial._introspect import EntityField, EntityTupleField, classify_field

        self.classes[sname] = kcls
        kfields = {_norm(kf.name): kf for kf in dataclasses.fields(kcls)}
        mapping = self.fields[sname] = {}
        used = set()
        for f in self.m.structs[sname].fields:
            if not f.present(self.v):
                continue
            kf = kfields.get(_norm(f.py))
            if kf is None and f.py.endswith("_ms"):  # kio's timedelta fields drop the unit
                kf = kfields.get(_norm(f.py[:-3]))
            mapping[f.py] = kf
            if kf is None:
                if not f.tagged_at(self.v):
                    self.problems.append(f"kio's {kcls.__name__} has no field for {sname}.{f.name}")
                continue
            used.add(kf.name)
            self._compare(sname, f, kf)
            c = classify_field(kf)
            if isinstance(c, (EntityField, EntityTupleField)):
                child = f.type.struct if f.type.kind == "struct" else f.type.element.struct
                if child not in self.classes:
                    self._map(child, c.type_)
        extra = [kf.name for kf in kfields.values() if kf.name not in used]
        if extra:
            self.problems.append(f"kio's {kcls.__name__} has fields we lack at v{self.v}: {extra}")

    _KIO_TYPES = {"error_code": "int16", "timedelta_i32": "int32", "timedelta_i64": "int64",
                  "datetime_i64": "int64"}

    def _compare(self, sname, f, kf):
        """Tag, type and nullability of one field at this version, ours against kio's."""
        where = f"{sname}.{f.name} v{self.v}"
        tag = f.tag if f.tagged_at(self.v) else None
        if kf.metadata.get("tag") != tag:
            self.problems.append(f"{where}: tag {tag}, kio {kf.metadata.get('tag')}")
        leaf = f.type.element if f.type.kind == "array" else f.type
        kt = kf.metadata.get("kafka_type")
        if leaf.kind != "struct" and self._KIO_TYPES.get(kt, kt) != leaf.kind:
            self.problems.append(f"{where}: type {f.type}, kio {kt}")
        # the field's own nullability (kio's is_optional looks inside tuples)
        nullable = type(None) in typing.get_args(kf.type)
        if f.type.kind in ("string", "bytes", "records", "array", "struct") and \
                nullable != f.nullable_at(self.v):
            self.problems.append(f"{where}: nullable {f.nullable_at(self.v)}, kio {nullable}")

    # narrowing: what kio's types can hold
    def keep(self, sname, f, in_tagged):
        return self.fields[sname].get(f.py) is not None

    def fix(self, sname, f, value):
        kf = self.fields[sname][f.py]
        kt = kf.metadata.get("kafka_type")
        if kt == "error_code" and value not in self.error_codes:
            return self.error_codes[value % len(self.error_codes)]
        if kt == "timedelta_i64" and not -(1 << 49) < value < 1 << 49:
            return value % (1 << 49)  # timedelta(milliseconds=...) is exact here
        if kt == "datetime_i64":
            from kio.serial._introspect import is_optional

            if value == -1 and is_optional(kf):
                return value
            # non-negative, and before 2039: kio reads milliseconds through a float of
            # seconds, which stays microsecond-exact only that far
            if not 0 <= value < 1 << 41:
                return value % (1 << 41)
        return value

    # conversions
    def to_kio(self, obj):
        sname = type(obj).__name__
        kcls = self.classes[sname]
        kwargs = {}
        for f in self.m.structs[sname].fields:
            kf = self.fields[sname].get(f.py)
            if kf is None:
                continue
            kwargs[kf.name] = self._value_to(f, kf, getattr(obj, f.py))
        return kcls(**kwargs)

    def _value_to(self, f, kf, value):
        from kio.serial._introspect import is_optional

        if value is None:
            return None
        t = f.type
        if t.kind == "struct":
            return self.to_kio(value)
        if t.kind == "array":
            if t.element.kind == "struct":
                return tuple(self.to_kio(e) for e in value)
            return tuple(self._prim_to(kf, e, False) for e in value)
        return self._prim_to(kf, value, is_optional(kf))

    def _prim_to(self, kf, value, optional):
        kt = kf.metadata.get("kafka_type")
        if kt == "error_code":
            return self.ErrorCode(value)
        if kt in ("timedelta_i32", "timedelta_i64"):
            return datetime.timedelta(milliseconds=value)
        if kt == "datetime_i64":
            return None if optional and value == -1 else _EPOCH + value * _MS
        if kt == "uuid":
            return None if value == ZERO_UUID else value
        return value

    def from_kio(self, kobj, sname, pkg_cls):
        cls = pkg_cls if sname == self.m.name else struct_class(pkg_cls, sname)
        kwargs = {}
        for f in self.m.structs[sname].fields:
            kf = self.fields[sname].get(f.py)
            if kf is None:
                continue
            kwargs[f.py] = self._value_from(f, kf, getattr(kobj, kf.name), pkg_cls)
        return cls(**kwargs)

    def _value_from(self, f, kf, value, pkg_cls):
        t = f.type
        if t.kind == "struct":
            return None if value is None else self.from_kio(value, t.struct, pkg_cls)
        if t.kind == "array":
            if value is None:
                return None
            if t.element.kind == "struct":
                return [self.from_kio(e, t.element.struct, pkg_cls) for e in value]
            return [self._prim_from(kf, e) for e in value]
        return self._prim_from(kf, value)

    def _prim_from(self, kf, value):
        kt = kf.metadata.get("kafka_type")
        if kt == "uuid":
            return ZERO_UUID if value is None else value
        if kt == "error_code":
            return int(value)
        if kt in ("timedelta_i32", "timedelta_i64"):
            return value // _MS
        if kt == "datetime_i64":
            return -1 if value is None else (value - _EPOCH) // _MS
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            return int(value)
        return value

    def encode(self, kobj) -> bytes:
        buf = io.BytesIO()
        self.write(buf, kobj)
        return buf.getvalue()


@pytest.mark.parametrize("name,version", PAIRS)
def test_kio(name, version):
    pkg, model, cls = _setup(name, version)
    kio_cls = _kio_class(name, version)
    if kio_cls is None:
        have = sorted(v for (n, v) in _kio_index() if n == name)
        _skip(KIO, name, version, f"no {name} v{version} in kio "
              + (f"(kio has v{have[0]}-v{have[-1]})" if have else "(kio lacks the message)"))
    ad = KioAdapter(model, version, kio_cls)
    assert not ad.problems, f"{name} v{version}: schemas differ: {ad.problems}"
    COMPARED[KIO].append((name, version))

    def check(ours):
        data = ours.encode(version)
        kobj = ad.to_kio(ours)
        peer = ad.encode(kobj)
        assert peer == data, (f"kio encodes {name} v{version} differently\n ours {data.hex()}\n"
                              f" kio  {peer.hex()}\n value {ours!r}")
        decoded, end = ad.read(data, 0)
        assert end == len(data), f"kio read {end} of our {len(data)} bytes: {data.hex()}"
        assert decoded == kobj, f"kio decodes our {data.hex()} to {decoded!r}, not {kobj!r}"
        assert ad.from_kio(decoded, name, cls) == ours
        assert cls.decode(peer, version) == ours

    _examples(model, cls, version, check,
              lambda o: narrow(model, version, o, ad.keep, ad.fix))


# -- kafka-python ---------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _kafka_python_classes() -> dict:
    """Kafka message name -> kafka-python's class (its JSON-schema-driven messages)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import kafka.protocol as kp
        from kafka.protocol.api_header import RequestHeader, ResponseHeader
        from kafka.protocol.api_message import ApiMessage

    with warnings.catch_warnings():  # kafka-python loads its JSON with importlib's legacy API
        warnings.simplefilter("ignore", DeprecationWarning)
        for mod in pkgutil.walk_packages(kp.__path__, "kafka.protocol."):
            if ".old" not in mod.name and "generate_stubs" not in mod.name:
                importlib.import_module(mod.name)
    out = {"RequestHeader": RequestHeader, "ResponseHeader": ResponseHeader}
    todo = [ApiMessage]
    while todo:
        c = todo.pop()
        for sub in c.__subclasses__():
            todo.append(sub)
            if getattr(sub, "_class_version", None) is None and getattr(sub, "_json", None):
                out.setdefault(sub._json["name"], sub)
    return out


class KafkaPythonAdapter:
    """Ours <-> kafka-python DataContainers for one (message, version)."""

    def __init__(self, model: MessageModel, version: int, kcls):
        self.m, self.v, self.kcls = model, version, kcls
        self.header = kcls.__name__ in ("RequestHeader", "ResponseHeader")
        self.fields: dict[str, dict] = {}  # our struct -> {our field py: kafka-python field}
        self.structs: dict[str, object] = {}  # our struct -> kafka-python StructField
        self.problems: list[str] = []
        self._map(model.name, kcls._struct)

    def _map(self, sname, sf):
        self.structs[sname] = sf
        mapping = self.fields[sname] = {}
        used = set()
        for f in self.m.structs[sname].fields:
            if not f.present(self.v):
                continue
            pf = next((p for p in sf._fields if p._name == f.name), None)
            if pf is None:  # kafka-python's json_patch renames *AuthorizedOperations
                pf = next((p for p in sf._fields if p._type_str == "bitfield"
                           and f.name.endswith("AuthorizedOperations")), None)
            if pf is None or not pf.for_version_q(self.v):
                mapping[f.py] = None
                if not f.tagged_at(self.v):
                    self.problems.append(f"kafka-python's {sf.name} has no field for "
                                         f"{sname}.{f.name} at v{self.v}")
                continue
            mapping[f.py] = pf
            used.add(pf.name)
            self._compare(sname, f, pf)
            if f.type.kind == "struct":
                self._map(f.type.struct, pf)
            elif f.type.kind == "array" and f.type.element.kind == "struct":
                self._map(f.type.element.struct, pf.array_of)
        extra = [p.name for p in sf._fields if p.for_version_q(self.v) and p.name not in used]
        if extra:
            self.problems.append(f"kafka-python's {sf.name} has fields we lack at v{self.v}: {extra}")

    def _compare(self, sname, f, pf):
        """Tag, type and nullability of one field at this version, ours against kafka-python's."""
        v = self.v
        where = f"{sname}.{f.name} v{v}"
        tag = f.tag if f.tagged_at(v) else None
        peer_tag = pf.tag if pf.tagged_field_q(v) else None
        if tag != peer_tag:
            self.problems.append(f"{where}: tag {tag}, kafka-python {peer_tag}")
        peer_type = "int32" if pf._type_str == "bitfield" else pf._type_str
        if peer_type != str(f.type):
            self.problems.append(f"{where}: type {f.type}, kafka-python {pf._type_str}")
        if pf.nullable_for_version_q(v) != f.nullable_at(v):
            self.problems.append(f"{where}: nullable {f.nullable_at(v)}, "
                                 f"kafka-python {pf.nullable_for_version_q(v)}")

    # narrowing
    def keep(self, sname, f, in_tagged):
        if self.fields[sname].get(f.py) is None:
            return False
        return not (in_tagged and f.tagged_at(self.v))  # nested tag sections stay empty

    def fix(self, sname, f, value):
        return value

    # conversions
    @staticmethod
    def _leaf_type(pf):
        return pf.array_of._type_str if pf.is_array() else pf._type_str

    def _prim_to(self, pf, value):
        ts = self._leaf_type(pf)
        if ts == "bitfield":
            bits = {i for i in range(32) if (value & 0xFFFFFFFF) >> i & 1}
            return None if bits == {31} else bits
        if ts == "uuid":
            return None if value == ZERO_UUID else value
        return value

    def _prim_from(self, pf, value):
        ts = self._leaf_type(pf)
        if ts == "bitfield":
            bits = {31} if value is None else value
            u = sum(1 << b for b in bits)
            return u - (1 << 32) if u >= 1 << 31 else u
        if ts == "uuid":
            return ZERO_UUID if value is None else value
        return value

    def to_peer(self, obj, sname=None):
        sname = sname or self.m.name
        kwargs = {}
        dflt = type(obj)()
        for f in self.m.structs[sname].fields:
            pf = self.fields[sname].get(f.py)
            if pf is None:
                continue
            value = getattr(obj, f.py)
            if f.tagged_at(self.v) and value == getattr(dflt, f.py):
                continue  # the peer's own default (None for structs) stands for ours
            t = f.type
            if value is None:
                pass
            elif t.kind == "struct":
                value = self.to_peer(value, t.struct)
            elif t.kind == "array" and t.element.kind == "struct":
                value = [self.to_peer(e, t.element.struct) for e in value]
            elif t.kind == "array":
                value = [self._prim_to(pf, e) for e in value]
            else:
                value = self._prim_to(pf, value)
            kwargs[pf.name] = value
        sf = self.structs[sname]
        if sname == self.m.name:
            return self.kcls(version=self.v, **kwargs)
        return sf.data_class(version=self.v, **kwargs)

    def from_peer(self, kobj, pkg_cls, sname=None):
        sname = sname or self.m.name
        cls = pkg_cls if sname == self.m.name else struct_class(pkg_cls, sname)
        kwargs = {}
        for f in self.m.structs[sname].fields:
            pf = self.fields[sname].get(f.py)
            if pf is None:
                continue
            value = getattr(kobj, pf.name)
            t = f.type
            if value is None:
                if not f.nullable_at(self.v):  # an absent tagged struct
                    continue
            elif t.kind == "struct":
                value = self.from_peer(value, pkg_cls, t.struct)
            elif t.kind == "array" and t.element.kind == "struct":
                value = [self.from_peer(e, pkg_cls, t.element.struct) for e in value]
            elif t.kind == "array":
                value = [self._prim_from(pf, e) for e in value]
            else:
                value = self._prim_from(pf, value)
            kwargs[f.py] = value
        unknown = sorted((int(k[1:]), bytes(v)) for k, v in (kobj.unknown_tags or {}).items())
        return cls(**kwargs, unknown_tagged_fields=unknown or ())

    def flexible(self) -> bool:
        return self.m.flexible(self.v)

    def encode(self, kobj) -> bytes:
        if self.header:
            return kobj.encode(flexible=self.flexible())
        from kafka.protocol.api_message import ApiMessage

        return ApiMessage.encode(kobj, version=self.v)  # not the per-class fix-ups

    def decode(self, data: bytes):
        """(object, bytes consumed), through kafka-python's generic (compiled) decoder."""
        if self.header:
            buf = io.BytesIO(data)
            obj = self.kcls.decode(buf, flexible=self.flexible())
            return obj, buf.tell()
        flex = self.kcls.flexible_version_q(self.v)
        fn = self.kcls._struct.compiled_decode_from(self.v, compact=flex, tagged=flex,
                                                     data_class=self.kcls)
        return fn(memoryview(data), 0)


def _uint32_fields(model: MessageModel, version: int) -> list[str]:
    return [f"{s.name}.{f.name}" for s in model.structs.values() for f in s.fields
            if f.present(version) and (f.type.kind == "uint32" or (
                f.type.kind == "array" and f.type.element.kind == "uint32"))]


@pytest.mark.parametrize("name,version", PAIRS)
def test_kafka_python(name, version):
    pkg, model, cls = _setup(name, version)
    kcls = _kafka_python_classes().get(name)
    if kcls is None:
        _skip(KAFKA_PYTHON, name, version, f"kafka-python has no {name}")
    lo, hi = kcls._valid_versions
    if kcls.__name__ in ("RequestHeader", "ResponseHeader"):
        hi = max(kcls._flexible_versions[0], lo)  # it writes only its first flexible version
    if not lo <= version <= hi:
        _skip(KAFKA_PYTHON, name, version, f"kafka-python's {name} has v{lo}-v{hi}, not v{version}")
    if _uint32_fields(model, version):
        _skip(KAFKA_PYTHON, name, version,
              f"kafka-python has no uint32 type ({_uint32_fields(model, version)})")
    ad = KafkaPythonAdapter(model, version, kcls)
    assert not ad.problems, f"{name} v{version}: schemas differ: {ad.problems}"
    COMPARED[KAFKA_PYTHON].append((name, version))

    def check(ours):
        data = ours.encode(version)
        kobj = ad.to_peer(ours)
        peer = ad.encode(kobj)
        assert peer == data, (f"kafka-python encodes {name} v{version} differently\n"
                              f" ours {data.hex()}\n peer {peer.hex()}\n value {ours!r}")
        decoded, end = ad.decode(data)
        assert end == len(data), f"kafka-python read {end} of our {len(data)} bytes: {data.hex()}"
        assert ad.from_peer(decoded, cls) == ours, \
            f"kafka-python decodes our {data.hex()} to {decoded!r}"
        assert cls.decode(peer, version) == ours

    def check_unknown(ours):  # decode direction only: kafka-python drops them on encode
        data = ours.encode(version)
        decoded, end = ad.decode(data)
        assert end == len(data)
        assert ad.from_peer(decoded, cls) == ours, \
            f"kafka-python decodes our {data.hex()} (unknown tags) to {decoded!r}"

    unknown_tags = model.flexible(version) and not ad.header

    def check_both(narrowed):
        ours, with_unknown = narrowed
        check(ours)
        if with_unknown is not None:
            check_unknown(with_unknown)

    def narrow_fn(o):
        ours = _drop_unknown(model, version, narrow(model, version, o, ad.keep, ad.fix), True)
        if not unknown_tags:
            return ours, None
        # unknown tags may not sit inside a tagged field either (empty sections there)
        return ours, _drop_unknown(model, version, narrow(model, version, o, ad.keep, ad.fix),
                                   False)

    _examples(model, cls, version, check_both, narrow_fn, unknown_tags=unknown_tags)


def _drop_unknown(model, version, obj, everywhere, in_tagged=False):
    """Clear unknown tagged fields in place: everywhere, or only inside tagged fields."""
    if obj is None:
        return None
    if everywhere or in_tagged:
        obj.unknown_tagged_fields = ()
    for f in model.structs[type(obj).__name__].fields:
        if not f.present(version) or f.type.kind not in ("struct", "array"):
            continue
        inner = in_tagged or f.tagged_at(version)
        value = getattr(obj, f.py)
        if f.type.kind == "struct":
            _drop_unknown(model, version, value, everywhere, inner)
        elif f.type.element.kind == "struct" and value is not None:
            for e in value:
                _drop_unknown(model, version, e, everywhere, inner)
    return obj
