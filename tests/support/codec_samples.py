"""Sample messages for every generated message and version, encoded, for comparing the
compiled and the pure-Python codecs (tests/unit/wire/test_compiled_codecs.py).

``python -m tests.support.codec_samples OUT`` (run with ``KRAFT_PURE_PYTHON=1``) writes a
pickle of ``[(name, version, obj, encoding, repr(decoded), array_shapes(decoded)), ...]``
plus record batches.
The samples: all defaults, every field set, and a few seeded hypothesis draws (with
unknown tagged fields in flexible versions).
"""
from __future__ import annotations

import pickle
import sys

from hypothesis import HealthCheck, given, settings

from tests.support import strategies as S

EXAMPLES = 3
EMPTY = ()  # the shared empty tuple (``x is ()`` draws a SyntaxWarning)
_SETTINGS = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                     suppress_health_check=list(HealthCheck))


def samples(cls, model, version: int) -> list:
    out = [S.default_message(cls), S.filled_message(model, cls, version)]

    @_SETTINGS
    @given(S.messages(model, cls, version, unknown_tags=model.flexible(version)))
    def draw(obj):
        out.append(obj)

    draw()
    return out


def array_shapes(model, obj) -> list:
    """``(path, primitive?, shape)`` for every array field of a decoded ``obj``, nested ones
    included; shape is "()" (the shared empty tuple), "tuple", "list" or "None"."""
    out = []

    def walk(struct, o, path):
        for f in struct.fields:
            value = getattr(o, f.py)
            t = f.type
            if t.kind == "struct" and value is not None:
                walk(model.structs[t.struct], value, f"{path}.{f.py}")
            if t.kind != "array":
                continue
            primitive = t.element.kind != "struct"
            shape = ("None" if value is None else "()" if value is EMPTY else type(value).__name__)
            out.append((f"{path}.{f.py}", primitive, shape))
            if not primitive and value is not None:
                for i, item in enumerate(value):
                    walk(model.structs[t.element.struct], item, f"{path}.{f.py}[{i}]")

    walk(model.top, obj, model.name)
    return out


def message_samples() -> list:
    rows = []
    for name, model in sorted(S.models().items()):
        cls = S.message_class(name)
        for version in S.versions_of(cls):
            for obj in samples(cls, model, version):
                data = obj.encode(version)
                decoded = cls.decode(data, version)
                rows.append((name, version, obj, data, repr(decoded), array_shapes(model, decoded)))
    return rows


def batch_samples() -> list:
    """(records as tuples, encoded batch) for a few record batches."""
    from wire.records import Record, RecordBatch

    rows = []
    for n, size in ((1, 0), (10, 7), (300, 150)):
        records = [Record(offset_delta=i, timestamp_delta=i * 3, key=None if i % 3 else b"k%d" % i,
                          value=bytes([i % 251]) * size, headers=[("h", b"v%d" % i)] if i % 2 else [])
                   for i in range(n)]
        batch = RecordBatch(base_offset=100, partition_leader_epoch=4, base_timestamp=1_700_000_000_000,
                            max_timestamp=1_700_000_000_000 + 3 * n, producer_id=-1, producer_epoch=-1,
                            base_sequence=-1, records=records)
        rows.append(batch.encode())
    return rows


def main(out_path: str) -> None:
    from wire import native

    with open(out_path, "wb") as f:
        pickle.dump({"path": native.DESCRIPTION, "messages": message_samples(),
                     "batches": batch_samples()}, f)


if __name__ == "__main__":
    main(sys.argv[1])
