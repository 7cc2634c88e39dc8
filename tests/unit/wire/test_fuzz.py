"""Every decoder gets random and mutated bytes: only ``DecodeError`` may come out.

Decoders: every generated message class at every version (RequestHeader and
ResponseHeader are messages too), ``wire.headers``' frame helpers
(``decode_request_header``, ``decode_response`` for every response version), the
codegen test spec ``EverythingRequest`` (tests/data/codegen: every dialect feature,
uint32, float64, nullable structs...), and ``wire.records``: ``decode_batch`` (with
and without CRC checks, and with the CRC recomputed after mutation so that mutations
reach the records), ``iter_batches``, ``iter_headers``, ``read_header``,
``control_record_type``, ``unframe_metadata_record`` followed by the metadata record's
decoder, ``decode_metadata_record`` (the registry: every metadata record type at every
version, seeded with all-defaults and every-field-set values), and ``decompress`` for
every codec.

Inputs come from seeded ``random.Random`` generators (``FUZZ_SEED``), ``FUZZ_INPUTS``
in all (default 200,000; ``make fuzz`` sets 2,000,000):

1. a deterministic sweep over valid seeds (for messages: the default object and the
   every-field-non-default object of ``tests/support/strategies.py``; for records: batches of
   every codec, control and KRaft data batches): every seed itself, and every length
   position of every seed overwritten with hostile values. Length positions are found
   by walking the seed with the model (int16 string lengths, int32 bytes/array lengths,
   compact uvarint lengths, tag counts, tag numbers and tag sizes) or, in batches, the
   batch layout (batch length, record count, record/key/value/header lengths); each
   gets 0x7fff / 0x7fffffff, INT_MIN, -2, null (-1 / 0), length+1, and overlong
   (6-byte) and 10-byte varints;
2. random inputs up to the budget: random bytes, and one to three stacked mutations of
   a seed (bit flips, interesting bytes, truncations, insertions, deletions, duplicated
   ranges, sometimes repeated up to 64 KiB, 0x7fff/0x7fffffff written anywhere, huge
   varints written or inserted anywhere, splices of two seeds), fed to the seed's own
   decoder or to another one; one in ten as a memoryview.

Checks, for each input:
- the decoder returns or raises ``DecodeError``; any other exception fails the test;
- no hang: a CPU-time watchdog (SIGVTALRM, leaving pytest-timeout's SIGALRM alone)
  aborts an input after HANG_SECONDS, and an input taking more than SLOW_SECONDS of CPU
  fails;
- allocation: on every 100th input (and every 10th of at least 4 KiB) ``tracemalloc``
  measures the peak allocated while decoding; it must stay within
  ``max(ALLOC_FLOOR, ALLOC_FACTOR * len(input))`` (plus, for decoders that decompress,
  the decompression bound they are given times the same factor).

The allocation bound, honestly: 64 KiB or 80x the input. Decoded Python objects are
bigger than their bytes, and the ratio is set by the smallest encodings: an empty
compact array is one input byte but a 56-byte list plus an 8-byte slot in its parent,
so a flexible struct made of empty arrays tends to 64x; an element of ``[]int8`` is one
byte but a tuple slot, a list slot and (below -5) a 28-byte int, 44x; an empty unknown
tagged field is two bytes and a (tag, b"") pair, about 32x. ``test_allocation_worst_shapes``
builds those shapes (every array field at every version filled with 1000 default
elements) and prints the worst ratio (42.7x for our messages; 60x over all of Kafka's);
random inputs stay far below (the run prints its worst ratio). The 64 KiB floor covers
fixed costs such as a new ``struct.Struct`` for an array length seen for the first time.
``test_unknown_tagged_fields_linear_time`` pins the one shape whose cost is about time:
thousands of unknown tagged fields must cost linear time.

A failure prints the decoder, the input in hex (and FUZZ_SEED with the input's number)
and a one-line reproduction.
"""
from __future__ import annotations

import functools
import importlib
import os
import random
import signal
import struct
import sys
import time
import tracemalloc
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from codegen.generate import generate_all, load_models
from codegen.model import FIXED, MessageModel
from wire.exceptions import DecodeError
from wire.varint import write_uvarint, write_varint

from tests.support._targets import target
from tests.support.mutations import HUGE_VARINTS, mutate
from tests.support.strategies import REPO, default_message, filled_message, struct_class

DEFAULT_INPUTS = 200_000
N_INPUTS = int(os.environ.get("FUZZ_INPUTS", DEFAULT_INPUTS))
MASTER_SEED = int(os.environ.get("FUZZ_SEED", "20251123"))
HANG_SECONDS = 10.0  # CPU seconds before the watchdog aborts one input
SLOW_SECONDS = 1.0  # CPU seconds above which one input counts as a failure
ALLOC_FLOOR = 64 * 1024
ALLOC_FACTOR = 80
ALLOC_EVERY = 100
LARGE = 4096  # inputs at least this long are "large"
MAX_FAILURES_SHOWN = 10


# -- targets ---------------------------------------------------------------------------

@dataclass
class Seed:
    data: bytes
    lengths: list = field(default_factory=list)  # (kind, pos, width, value)


@dataclass
class Target:
    name: str
    decode: object  # callable(buf)
    repro: str  # format with {hex}
    seeds: list = field(default_factory=list)
    prepare: object = None  # applied to each input before decoding (e.g. fix a CRC)
    alloc_extra: int = 0  # allocation allowed on top of the bound (bounded decompression)


class Walker:
    """Walks a valid encoding with the model, recording every length position."""

    def __init__(self, model: MessageModel, version: int):
        self.m, self.v = model, version
        self.out: list = []

    def flexible_for(self, f, v):
        if f is not None and f.flexible_override is not None:
            return v in f.flexible_override
        return self.m.flexible(v)

    def uvarint(self, b, p, kind):
        start, value, shift = p, 0, 0
        while True:
            byte = b[p]
            value |= (byte & 0x7F) << shift
            p += 1
            if byte < 0x80:
                break
            shift += 7
        self.out.append((kind, start, p - start, value))
        return value, p

    def struct(self, name, b, p):
        v = self.v
        tagged = {}
        for f in self.m.structs[name].fields:
            if not f.present(v):
                continue
            if f.tagged_at(v):
                tagged[f.tag] = f
                continue
            p = self.value(f.type, b, p, self.flexible_for(f, v), f.nullable_at(v))
        if self.m.flexible(v):
            count, p = self.uvarint(b, p, "uv")
            for _ in range(count):
                tag, p = self.uvarint(b, p, "uv")
                size, p = self.uvarint(b, p, "uv")
                f = tagged.get(tag)
                if f is not None:
                    self.value(f.type, b, p, True, f.nullable_at(v))
                p += size
        return p

    def value(self, t, b, p, flex, nullable):
        k = t.kind
        if t.fixed:
            return p + FIXED[k][1]
        if k == "struct":
            if nullable:
                if b[p] >= 128:
                    return p + 1
                p += 1
            return self.struct(t.struct, b, p)
        if flex:
            n, p = self.uvarint(b, p, "uv")
            n -= 1
        elif k == "string":
            n, = struct.unpack_from(">h", b, p)
            self.out.append(("i16", p, 2, n))
            p += 2
        else:
            n, = struct.unpack_from(">i", b, p)
            self.out.append(("i32", p, 4, n))
            p += 4
        if n < 0:
            return p
        if k == "array":
            for _ in range(n):
                p = self.value(t.element, b, p, flex, False)
            return p
        return p + n


def length_positions(model: MessageModel, version: int, data: bytes, offset: int = 0) -> list:
    w = Walker(model, version)
    end = w.struct(model.name, memoryview(data), offset)
    assert end == len(data), f"walker disagrees with the encoding of {model.name} v{version}"
    return w.out


def message_seeds(pkg, model: MessageModel, version: int) -> list[bytes]:
    """Default and filled (every field non-default) encodings, from tests/support/strategies.py."""
    cls = pkg.BY_NAME[model.name]
    out = []
    for o in (default_message(cls), filled_message(model, cls, version)):
        data = o.encode(version)
        if data not in out:
            out.append(data)
    return out


def message_targets(pkg, models: dict, label: str = "") -> list[Target]:
    targets = []
    for name in sorted(models):
        model, cls = models[name], pkg.BY_NAME[name]
        for v in model.versions:
            t = Target(
                f"{label}{name} v{v}", functools.partial(_read_message, cls, v),
                f"{cls.__module__}.{name}.decode(bytes.fromhex('{{hex}}'), {v})")
            for data in message_seeds(pkg, model, v):
                t.seeds.append(Seed(data, length_positions(model, v, data)))
            targets.append(t)
    return targets


def _read_message(cls, version, buf):
    cls.read(buf, 0, version)


def header_targets(pkg, models: dict) -> list[Target]:
    """wire.headers' frame helpers (bound to wire.messages)."""
    if pkg.__name__ != "wire.messages":
        return []
    from wire import headers

    req = Target("wire.headers.decode_request_header", headers.decode_request_header,
                 "wire.headers.decode_request_header(bytes.fromhex('{hex}'))")
    for key, cls in sorted(pkg.REQUESTS.items()):
        for v, client in ((cls.MIN_VERSION, None), (cls.MAX_VERSION, "client-1")):
            frame = headers.encode_request(key, v, 7, cls(), client_id=client)
            hv = headers.request_header_version(key, v)
            data = frame[4:]
            w = Walker(models["RequestHeader"], hv)
            w.struct("RequestHeader", data, 0)
            req.seeds.append(Seed(data, w.out))
    out = [req]
    for key, cls in sorted(pkg.RESPONSES.items()):
        model = models[cls.__name__]
        for v in model.versions:
            t = Target(f"wire.headers.decode_response key {key} v{v}",
                       functools.partial(headers.decode_response, api_key=key, api_version=v),
                       f"wire.headers.decode_response(bytes.fromhex('{{hex}}'), {key}, {v})")
            for body in message_seeds(pkg, model, v):
                frame = headers.encode_response(key, v, 9, cls.decode(body, v))[4:]
                hv = headers.response_header_version(key, v)
                w = Walker(models["ResponseHeader"], hv)
                start = w.struct("ResponseHeader", frame, 0)
                positions = w.out + length_positions(model, v, frame, start)
                t.seeds.append(Seed(frame, positions))
            out.append(t)
    return out


def everything_targets(tmp_root: Path) -> list[Target]:
    """The codegen test spec that uses every dialect feature, generated into a temp package."""
    data = REPO / "tests" / "data" / "codegen"
    pkg_dir = tmp_root / "fuzz_everything"
    pkg_dir.mkdir(exist_ok=True)
    for name, text in generate_all(data, REPO).items():
        (pkg_dir / name).write_text(text)
    sys.path.insert(0, str(tmp_root))
    try:
        pkg = importlib.import_module("fuzz_everything")
    finally:
        sys.path.remove(str(tmp_root))
    models = {m.name: m for m, _ in load_models(data, REPO)}
    return message_targets(pkg, models, label="codegen test spec ")


RECORDS_MAX_BYTES = 64 * 1024  # decompression bound given to the record decoders here


def fix_crcs(data) -> bytes:
    """Make every batch's stored CRC-32C match its bytes, so mutations reach the records."""
    import crc32c

    b = bytearray(data)
    pos = 0
    while len(b) - pos >= 61:
        length = int.from_bytes(b[pos + 8:pos + 12], "big", signed=True)
        end = min(len(b), pos + 12 + max(length, 0))
        if end - pos < 21:
            break
        b[pos + 17:pos + 21] = crc32c.crc32c(memoryview(b)[pos + 21:end]).to_bytes(4, "big")
        pos = end
    return bytes(b)


def batch_lengths(data: bytes) -> list:
    """Length positions of the (uncompressed) batches of a blob: the batch length, the
    record count, and each record's length, key, value, header count and header lengths."""
    from wire.varint import read_varint, read_varlong

    out, pos = [], 0
    while len(data) - pos >= 61:
        length, = struct.unpack_from(">i", data, pos + 8)
        count, = struct.unpack_from(">i", data, pos + 57)
        attributes, = struct.unpack_from(">h", data, pos + 21)
        out += [("i32", pos + 8, 4, length), ("i32", pos + 57, 4, count)]
        end, p = pos + 12 + length, pos + 61
        if attributes & 0x07 == 0:
            for _ in range(count):
                for what in ("size", "attributes", "timestamp", "offset", "key", "value", "headers"):
                    if what == "attributes":
                        p += 1
                        continue
                    start = p
                    n, p = (read_varlong if what == "timestamp" else read_varint)(data, p)
                    if what in ("size", "key", "value", "headers"):
                        out.append(("zz", start, p - start, n))
                    if what in ("key", "value") and n > 0:
                        p += n
                    if what == "headers":
                        for _ in range(n):
                            for _part in range(2):
                                start = p
                                k, p = read_varint(data, p)
                                out.append(("zz", start, p - start, k))
                                p += max(k, 0)
        pos = end
    return out


def record_seeds(records, pkg, models: dict | None = None) -> dict:
    """Valid batches (every codec, control and data batches, several records) and pieces."""
    from wire.records import (CompressionType, ControlRecordType, Record, RecordBatch,
                              control_batch, data_batch, encode_control_key,
                              frame_metadata_record)

    recs = [
        Record(offset_delta=0, key=b"k", value=b"v" * 40, headers=[("h", b"1"), ("n", None)]),
        Record(attributes=0, timestamp_delta=-5, offset_delta=1, key=None, value=None),
        Record(timestamp_delta=1 << 40, offset_delta=2, key=b"", value=b"\x00" * 200,
               headers=[("é", b"")]),
    ]
    batches = []
    for codec in CompressionType:
        batches.append(RecordBatch(base_offset=100, partition_leader_epoch=3,
                                   attributes=int(codec), base_timestamp=1_700_000_000_000,
                                   producer_id=7, producer_epoch=1, base_sequence=0,
                                   records=recs).encode())
    batches.append(RecordBatch(records=[]).encode())
    batches.append(RecordBatch(attributes=0x10 | 0x08, records=recs[:1]).encode())
    values = []  # every metadata record type at every version, all defaults and every field set
    for key, cls in sorted(getattr(pkg, "METADATA_RECORDS", {}).items()):
        for version in range(cls.MIN_VERSION, cls.MAX_VERSION + 1):
            values.append(frame_metadata_record(key, version, cls().encode(version)))
            if models is not None:
                filled = filled_message(models[cls.__name__], cls, version)
                values.append(frame_metadata_record(key, version, filled.encode(version)))
    if values:
        batches.append(data_batch(0, 1, 1_700_000_000_000, values))
    by_name = getattr(pkg, "BY_NAME", {})
    controls = []
    for kind, name in ((ControlRecordType.LEADER_CHANGE, "LeaderChangeMessage"),
                       (ControlRecordType.SNAPSHOT_HEADER, "SnapshotHeaderRecord"),
                       (ControlRecordType.SNAPSHOT_FOOTER, "SnapshotFooterRecord"),
                       (ControlRecordType.KRAFT_VERSION, "KRaftVersionRecord"),
                       (ControlRecordType.KRAFT_VOTERS, "VotersRecord")):
        cls = by_name.get(name)
        controls.append((kind, cls().encode(cls.MAX_VERSION) if cls else b"\x00\x00"))
    batches.append(control_batch(5, 2, 1_700_000_000_000, controls))
    batches.append(control_batch(9, 2, 0, [(ControlRecordType.COMMIT, b"\x00\x00\x00\x00\x00\x00")]))
    blobs = [batches[0] + batches[-1], b"".join(batches[-3:]) + batches[1][:30]]
    return {
        "batches": batches,
        "blobs": blobs,
        "keys": [encode_control_key(k) for k in ControlRecordType] + [b"\x00\x01\x00\x02\xff"],
        "values": values,
        "compressed": {int(c): [records.compress(int(c), b"".join(batches[:2]) * k) for k in (1, 3)]
                       for c in CompressionType if c},
    }


def record_targets(pkg, models: dict) -> list[Target]:
    """wire.records' decoders, once the package exists."""
    try:
        records = importlib.import_module("wire.records")
    except ImportError:
        return []
    seeds = record_seeds(records, pkg, models)
    mb = RECORDS_MAX_BYTES
    extra = (ALLOC_FACTOR + 4) * mb  # decompressed bytes are decoded in turn
    batch_seeds = [Seed(b, batch_lengths(b)) for b in seeds["batches"]]
    blob_seeds = [Seed(b, batch_lengths(b)) for b in seeds["blobs"]] + batch_seeds
    out = [
        Target("wire.records.decode_batch (CRC fixed up after mutation)",
               lambda b: records.decode_batch(b, 0, True, mb),
               "wire.records.decode_batch(bytes.fromhex('{hex}'))",
               batch_seeds, prepare=fix_crcs, alloc_extra=extra),
        Target("wire.records.decode_batch", lambda b: records.decode_batch(b, 0, True, mb),
               "wire.records.decode_batch(bytes.fromhex('{hex}'))", batch_seeds, alloc_extra=extra),
        Target("wire.records.decode_batch verify_crc=False",
               lambda b: records.decode_batch(b, 0, False, mb),
               "wire.records.decode_batch(bytes.fromhex('{hex}'), verify_crc=False)",
               batch_seeds, alloc_extra=extra),
        Target("wire.records.iter_batches (CRCs fixed up after mutation)",
               lambda b: list(records.iter_batches(b, True, mb)),
               "list(wire.records.iter_batches(bytes.fromhex('{hex}')))",
               blob_seeds, prepare=fix_crcs, alloc_extra=4 * extra),
        Target("wire.records.iter_headers", lambda b: list(records.iter_headers(b)),
               "list(wire.records.iter_headers(bytes.fromhex('{hex}')))", blob_seeds),
        Target("wire.records.read_header", records.read_header,
               "wire.records.read_header(bytes.fromhex('{hex}'))", batch_seeds),
        Target("wire.records.control_record_type", records.control_record_type,
               "wire.records.control_record_type(bytes.fromhex('{hex}'))",
               [Seed(k) for k in seeds["keys"]]),
    ]
    metadata = getattr(pkg, "METADATA_RECORDS", {})

    def unframe_and_decode(buf):
        api_key, version, payload = records.unframe_metadata_record(buf)
        cls = metadata.get(api_key)
        if cls is not None:
            cls.read(payload, 0, version)

    value_seeds = []
    for v in seeds["values"]:
        w = Walker(None, 0)
        key, p = w.uvarint(v, 0, "uv")
        api_key, p = w.uvarint(v, p, "uv")
        version, p = w.uvarint(v, p, "uv")
        cls = metadata[api_key]
        value_seeds.append(Seed(v, w.out + length_positions(models[cls.__name__], version, v, p)))
    out.append(Target("wire.records.unframe_metadata_record + METADATA_RECORDS decode",
                      unframe_and_decode,
                      "wire.records.unframe_metadata_record(bytes.fromhex('{hex}'))", value_seeds))
    if hasattr(records, "decode_metadata_record") and pkg is importlib.import_module("wire.messages"):
        # the registry decodes with wire.messages' classes, so only when those are the target
        out.append(Target("wire.records.decode_metadata_record", records.decode_metadata_record,
                          "wire.records.decode_metadata_record(bytes.fromhex('{hex}'))",
                          value_seeds))
    for codec, datas in sorted(seeds["compressed"].items()):
        out.append(Target(f"wire.records.decompress codec {codec}",
                          functools.partial(records.decompress, codec, max_bytes=mb),
                          f"wire.records.decompress({codec}, bytes.fromhex('{{hex}}'))",
                          [Seed(d) for d in datas], alloc_extra=extra))
    return out


# -- mutations -------------------------------------------------------------------------

I16_LENGTHS = (0x7FFF, -0x8000, -2, -1)
I32_LENGTHS = (0x7FFFFFFF, -0x80000000, -2, -1)
ZZ_LENGTHS = tuple(write_varint(n) for n in (0x7FFFFFFF, -0x80000000, -2, -1)) + (
    b"\x80\x80\x80\x80\x80\x00", b"\xff" * 9 + b"\x01")


def length_variants(seed: Seed):
    """Every length position of a seed overwritten with hostile values."""
    d = seed.data
    for kind, pos, width, value in seed.lengths:
        head, tail = d[:pos], d[pos + width:]
        if kind == "i16":
            for n in I16_LENGTHS + (value + 1,):
                yield head + struct.pack(">h", max(-0x8000, min(0x7FFF, n))) + tail
        elif kind == "i32":
            for n in I32_LENGTHS + (value + 1,):
                yield head + struct.pack(">i", max(-0x80000000, min(0x7FFFFFFF, n))) + tail
        elif kind == "zz":  # zig-zag varint (record batches)
            for raw in ZZ_LENGTHS + (write_varint(max(-0x80000000, min(0x7FFFFFFF, value + 1))),):
                yield head + raw + tail
        else:
            for raw in HUGE_VARINTS + (b"\x00", write_uvarint(min(value + 1, 0xFFFFFFFF))):
                yield head + raw + tail


# -- the harness -----------------------------------------------------------------------

class Hang(BaseException):
    """Raised by the watchdog inside a decoder that runs too long (not an Exception)."""


@dataclass
class Stats:
    inputs: int = 0
    decoded: int = 0
    rejected: int = 0
    large: int = 0
    alloc_samples: int = 0
    worst_ratio: float = 0.0
    worst_ratio_input: str = ""
    worst_peak: int = 0
    slowest: float = 0.0
    slowest_input: str = ""
    slowest_data: bytes = b""
    slowest_target: object = None
    failures: list = field(default_factory=list)


class Harness:
    def __init__(self, targets: list[Target]):
        self.targets = targets
        self.stats = Stats()
        self.current_start = 0.0

    def _watchdog(self, signum, frame):
        if time.process_time() - self.current_start > HANG_SECONDS:
            raise Hang(f"no result after {HANG_SECONDS} CPU seconds")

    def __enter__(self):
        self._old = signal.signal(signal.SIGVTALRM, self._watchdog)
        signal.setitimer(signal.ITIMER_VIRTUAL, 1.0, 1.0)
        return self

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_VIRTUAL, 0, 0)
        signal.signal(signal.SIGVTALRM, self._old)

    def run(self, t: Target, data, where: str):
        if t.prepare is not None:
            data = t.prepare(data)
        st = self.stats
        st.inputs += 1
        n = len(data)
        large = n >= LARGE
        st.large += large
        measure = st.inputs % ALLOC_EVERY == 0 or (large and st.inputs % 10 == 0)
        if measure:
            tracemalloc.start()
        error = None
        self.current_start = t0 = time.process_time()
        try:
            t.decode(data)
            st.decoded += 1
        except DecodeError:
            st.rejected += 1
        except Hang as e:
            error = e
        except Exception as e:  # noqa: BLE001 - the point of the test
            error = e
        elapsed = time.process_time() - t0  # CPU time: a loaded machine does not count
        if measure:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            st.alloc_samples += 1
            ratio = peak / max(n, 1)
            if n >= 1024 and ratio > st.worst_ratio:
                st.worst_ratio, st.worst_ratio_input = ratio, f"{t.name}, {n} bytes, {where}"
            st.worst_peak = max(st.worst_peak, peak)
            limit = max(ALLOC_FLOOR, ALLOC_FACTOR * n) + t.alloc_extra
            if peak > limit:
                self.fail(t, data, where, f"allocated {peak} bytes decoding {n} bytes "
                                          f"(limit {limit})")
        if isinstance(error, Hang):
            self.fail(t, data, where, f"hang: {error}")
        elif error is not None:
            self.fail(t, data, where, "".join(traceback.format_exception_only(error)).strip()
                      + "\n" + "".join(traceback.format_tb(error.__traceback__)[-3:]).rstrip())
        elif elapsed > SLOW_SECONDS and self.retime(t, data) > SLOW_SECONDS:
            self.fail(t, data, where, f"took {elapsed:.2f} s of CPU for {n} bytes")
        if elapsed > st.slowest:
            st.slowest, st.slowest_input = elapsed, f"{t.name}, {n} bytes, {where}"
            st.slowest_data, st.slowest_target = data, t

    def retime(self, t: Target, data) -> float:
        """Best of three CPU times (a first measurement may include a GC pass)."""
        best = float("inf")
        for _ in range(3):
            self.current_start = t0 = time.process_time()
            try:
                t.decode(data)
            except DecodeError:
                pass
            best = min(best, time.process_time() - t0)
        return best

    def fail(self, t: Target, data, where: str, what: str):
        data = bytes(data)
        shown = data if len(data) <= 2048 else data[:2048]
        more = "" if len(data) <= 2048 else f" (first 2048 of {len(data)} bytes)"
        self.stats.failures.append(
            f"{t.name}: {what}\n  input #{self.stats.inputs} ({where}, FUZZ_SEED={MASTER_SEED}) "
            f"hex{more}: {shown.hex()}\n  reproduce: " + t.repro.format(hex=shown.hex()))


@pytest.fixture(scope="module")
def fuzz_targets(tmp_path_factory):
    tgt = target()
    targets = []
    if tgt is not None:
        pkg, models = tgt
        targets += message_targets(pkg, models)
        targets += header_targets(pkg, models)
        targets += record_targets(pkg, models)
    targets += everything_targets(tmp_path_factory.mktemp("fuzzgen"))
    return targets


def test_seeds_decode(fuzz_targets):
    """Every seed is a valid encoding its own decoder accepts (else the sweep means little)."""
    bad = []
    for t in fuzz_targets:
        for s in t.seeds:
            try:
                t.decode(s.data)
            except Exception as e:  # noqa: BLE001
                bad.append(f"{t.name}: {e!r} on {s.data.hex()}")
    assert not bad, "\n".join(bad[:20])


def test_fuzz_decoders(fuzz_targets, capsys):
    t_start = time.perf_counter()
    rnd = random.Random(MASTER_SEED + 1)
    h = Harness(fuzz_targets)
    st = h.stats
    all_seeds = [s.data for t in fuzz_targets for s in t.seeds]
    with h:
        # 1. the deterministic sweep
        for t in fuzz_targets:
            for s in t.seeds:
                h.run(t, s.data, "seed")
                for data in length_variants(s):
                    h.run(t, data, "length sweep")
        swept = st.inputs
        # 2. random inputs up to the budget
        while st.inputs < N_INPUTS:
            t = rnd.choice(fuzz_targets)
            r = rnd.random()
            if r < 0.1 or not t.seeds:
                data = rnd.randbytes(rnd.choice((0, 1, 2, 4, 8, 16, 64, 256)))
                where = "random bytes"
            else:
                src = t if r < 0.85 else rnd.choice(fuzz_targets)  # other decoders' seeds too
                seed = rnd.choice(src.seeds).data if src.seeds else b""
                data = mutate(rnd, seed, rnd.choice(all_seeds))
                where = "mutated seed" if src is t else "mutated foreign seed"
            if rnd.random() < 0.1:
                data = memoryview(data)
                where += " (memoryview)"
            h.run(t, data, where)
            if len(st.failures) > 200:
                break
    elapsed = time.perf_counter() - t_start
    retimed = h.retime(st.slowest_target, st.slowest_data) if st.slowest_target else 0.0
    with capsys.disabled():
        print(f"\nfuzz: {st.inputs} inputs ({swept} from the seed/length sweep, "
              f"{st.large} of >= {LARGE} bytes) over {len(fuzz_targets)} decoders in "
              f"{elapsed:.1f} s; {st.decoded} decoded, {st.rejected} rejected with DecodeError; "
              f"FUZZ_SEED={MASTER_SEED}")
        print(f"fuzz: {st.alloc_samples} allocation samples, largest peak {st.worst_peak} B, "
              f"worst peak/size ratio for inputs >= 1 KiB {st.worst_ratio:.1f} "
              f"({st.worst_ratio_input}); slowest input {st.slowest * 1e3:.1f} ms of CPU "
              f"({st.slowest_input}; {retimed * 1e3:.1f} ms when timed again)")
    assert not st.failures, (f"{len(st.failures)} failing inputs, first "
                             f"{MAX_FAILURES_SHOWN}:\n\n" + "\n\n".join(st.failures[:MAX_FAILURES_SHOWN]))


# -- shapes random inputs would rarely build -----------------------------------------

def _unknown_tags_input(cls, model: MessageModel, version: int, count: int) -> bytes:
    """The default encoding with ``count`` empty unknown tagged fields at the top level."""
    base = cls().encode(version)
    assert base[-1] == 0  # the top-level tag section closes the encoding
    known = {f.tag for f in model.top.fields if f.tagged_at(version)}
    tag = next(t for t in range(1 << 20) if t not in known)
    return base[:-1] + write_uvarint(count) + (write_uvarint(tag) + b"\x00") * count


def _best_time(fn, data, repeat=5, at_least=0.004) -> float:
    """The least CPU time one call takes, over `repeat` rounds; each round repeats the call
    until `at_least` seconds of CPU have passed, so a coarse clock cannot read 0."""
    best = float("inf")
    for _ in range(repeat):
        calls, t0 = 0, time.process_time()
        while True:
            fn(data)
            calls += 1
            spent = time.process_time() - t0
            if spent >= at_least:
                break
        best = min(best, spent / calls)
    return best


def test_unknown_tagged_fields_linear_time():
    """K unknown tags cost O(K): 8x the tags may cost at most 24x the time (quadratic: 64x).

    Kafka keeps unknown tagged fields (Java appends them to a list); a decoder that
    copies the list for every tag turns one ~1 MB frame into minutes of CPU."""
    tgt = target()
    if tgt is None:
        pytest.skip("wire/messages is not generated yet")
    pkg, models = tgt
    slow = []
    for name in sorted(models):
        model, cls = models[name], pkg.BY_NAME[name]
        if not model.versions or not model.flexible(model.versions[-1]):
            continue
        v = model.versions[-1]
        small, big = (_unknown_tags_input(cls, model, v, k) for k in (1000, 8000))
        decode = functools.partial(_read_message, cls, v)
        t_small, t_big = _best_time(decode, small), _best_time(decode, big, repeat=3)
        if len(slow) >= 5:  # the tag loop is the same emitted code everywhere
            slow.append("(stopped after 5 messages)")
            break
        if t_big > 24 * t_small and t_big > 0.005:
            slow.append(f"{name} v{v}: 1000 tags {t_small * 1e3:.2f} ms, 8000 tags "
                        f"{t_big * 1e3:.1f} ms ({t_big / t_small:.0f}x); input for 8000 tags: "
                        f"{name}.decode(default.encode({v})[:-1] + uvarint(8000) + "
                        f"(uvarint(tag) + b'\\x00') * 8000, {v})")
    assert not slow, "decode time grows faster than the number of unknown tagged fields:\n" + \
        "\n".join(slow)


def _struct_paths(model: MessageModel) -> dict:
    """Struct name -> the (struct, field) steps from the top level to it."""
    out, todo = {model.name: []}, [model.name]
    while todo:
        s = todo.pop()
        for f in model.structs[s].fields:
            t = f.type
            child = t.struct if t.kind == "struct" else (
                t.element.struct if t.kind == "array" and t.element.kind == "struct" else None)
            if child is not None and child not in out:
                out[child] = out[s] + [(s, f)]
                todo.append(child)
    return out


_NARROW = {"int8": -100, "int16": -1000, "int32": -100000, "int64": -(10 ** 12),
           "string": "ab", "uuid": __import__("uuid").UUID(int=5), "bool": True,
           "float64": 0.5, "uint16": 1000, "uint32": 100000}


def _array_heavy(pkg, model, version, path, arr, count):
    top = cur = pkg.BY_NAME[model.name]()
    for _, f in path:
        if not f.present(version):
            return None
        t = f.type
        name = t.struct if t.kind == "struct" else t.element.struct
        child = struct_class(pkg.BY_NAME[model.name], name)()
        setattr(cur, f.py, child if t.kind == "struct" else [child])
        cur = child
    el = arr.type.element
    if el.kind == "struct":
        make = struct_class(pkg.BY_NAME[model.name], el.struct)
        setattr(cur, arr.py, [make() for _ in range(count)])
    else:
        setattr(cur, arr.py, [_NARROW[el.kind]] * count)
    return top


def test_allocation_worst_shapes(capsys):
    """Arrays of default (near-smallest) elements, every array field at every version:
    the allocation per input byte that sampling may miss stays under ALLOC_FACTOR.

    The asymptote is 64x: an empty compact array is one input byte and one 56-byte list
    plus its 8-byte slot in the parent."""
    tgt = target()
    if tgt is None:
        pytest.skip("wire/messages is not generated yet")
    pkg, models = tgt
    worst, over, cases = (0.0, ""), [], 0
    for name in sorted(models):
        model, cls = models[name], pkg.BY_NAME[name]
        paths = _struct_paths(model)
        for sname, path in paths.items():
            for f in model.structs[sname].fields:
                if f.type.kind != "array":
                    continue
                for v in model.versions:
                    if not f.present(v):
                        continue
                    obj = _array_heavy(pkg, model, v, path, f, 1000)
                    if obj is None:
                        continue
                    data = obj.encode(v)
                    tracemalloc.start()
                    cls.read(data, 0, v)
                    peak = tracemalloc.get_traced_memory()[1]
                    tracemalloc.stop()
                    cases += 1
                    ratio = peak / len(data)
                    where = f"{name} v{v} {sname}.{f.name} ({f.type}), {len(data)} bytes"
                    worst = max(worst, (ratio, where))
                    if peak > max(ALLOC_FLOOR, ALLOC_FACTOR * len(data)):
                        over.append(f"{where}: {peak} bytes allocated ({ratio:.0f}x)")
    with capsys.disabled():
        print(f"\nallocation: {cases} array-heavy inputs, worst {worst[0]:.1f}x ({worst[1]})")
    assert not over, "\n".join(over)
