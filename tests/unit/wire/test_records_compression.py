"""The batch codecs: Kafka's framing of each, what the readers accept, and bounded output."""
from __future__ import annotations

import gzip
import os
import random
import struct
import tracemalloc
import zlib

import cramjam
import lz4.block
import lz4.frame
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.records_check import assert_matches_reference
from wire.exceptions import DecodeError, EncodeError
from wire.records import CompressionType, Record, RecordBatch, compress, decode_batch, decompress
from wire.records.compression import DEFAULT_MAX_BYTES

CODECS = list(CompressionType)
COMPRESSED = CODECS[1:]
MiB = 1 << 20


def _large(n: int) -> bytes:
    # Half noise, half zeros; seeded so that hypothesis can replay it.
    return random.Random(n).randbytes(n // 2) + bytes(n - n // 2)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(CODECS), st.one_of(st.binary(max_size=300), st.integers(30000, 140000).map(_large)))
def test_round_trip(codec, data):
    assert decompress(codec, compress(codec, data)) == data


@pytest.mark.parametrize("codec", COMPRESSED)
@pytest.mark.parametrize("size", [1, 32 * 1024, 32 * 1024 + 1, 64 * 1024, 200_000])
def test_round_trip_across_block_boundaries(codec, size):
    data = os.urandom(size // 2) + bytes(size - size // 2)
    assert decompress(codec, compress(codec, data)) == data


@pytest.mark.parametrize("codec", COMPRESSED)
def test_levels_on_kafkas_scale(codec):
    data = b"abc" * 10000
    for level in {CompressionType.GZIP: (1, 9), CompressionType.SNAPPY: (None,),
                  CompressionType.LZ4: (1, 9, 17), CompressionType.ZSTD: (-5, 1, 22)}[codec]:
        assert decompress(codec, compress(codec, data, level)) == data


def test_unknown_codec():
    with pytest.raises(EncodeError):
        compress(5, b"x")
    with pytest.raises(DecodeError):
        decompress(7, b"x")


def test_none_is_bounded_too():
    assert decompress(0, b"abc") == b"abc"
    with pytest.raises(DecodeError):
        decompress(0, b"abcd", max_bytes=3)


# --- snappy: xerial framing ----------------------------------------------------------

XERIAL_HEADER = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)


def test_snappy_writes_xerial_frames_of_32k_blocks():
    data = os.urandom(70000)
    out = compress(CompressionType.SNAPPY, data)
    assert out.startswith(XERIAL_HEADER)
    pos, blocks = 16, []
    while pos < len(out):
        (size,) = struct.unpack_from(">i", out, pos)
        blocks.append(bytes(cramjam.snappy.decompress_raw(out[pos + 4:pos + 4 + size])))
        pos += 4 + size
    assert [len(b) for b in blocks] == [32768, 32768, 70000 - 65536]
    assert b"".join(blocks) == data


def _raw(data: bytes) -> bytes:
    return bytes(cramjam.snappy.compress_raw(data))


def _chunk(data: bytes) -> bytes:
    block = _raw(data)
    return struct.pack(">i", len(block)) + block


def test_snappy_reads_what_snappyinputstream_reads():
    # Unframed raw snappy (SnappyInputStream falls back to Snappy.uncompress).
    assert decompress(CompressionType.SNAPPY, _raw(b"hello" * 100)) == b"hello" * 100
    assert decompress(CompressionType.SNAPPY, _raw(b"hi")) == b"hi"  # shorter than the 16-byte header
    # Concatenated streams: a second header where a chunk length would be.
    stream = XERIAL_HEADER + _chunk(b"one") + XERIAL_HEADER + _chunk(b"two")
    assert decompress(CompressionType.SNAPPY, stream) == b"onetwo"
    # A trailing stub of fewer than 4 bytes ends the stream.
    assert decompress(CompressionType.SNAPPY, XERIAL_HEADER + _chunk(b"x") + b"\x00\x00") == b"x"
    # A header of a stream with no chunks.
    assert decompress(CompressionType.SNAPPY, XERIAL_HEADER) == b""
    # A concatenated "header" whose magic is wrong stops reading, as in SnappyInputStream.
    assert decompress(CompressionType.SNAPPY, XERIAL_HEADER + _chunk(b"a") + b"\x82SNAPPZ\x00" + bytes(8)) == b"a"


@pytest.mark.parametrize("stream", [
    b"",
    XERIAL_HEADER + struct.pack(">i", -5) + b"xxxxx",
    XERIAL_HEADER + struct.pack(">i", 10) + b"short",
    XERIAL_HEADER + struct.pack(">i", 3) + b"\xff\xff\xff",
    XERIAL_HEADER + _chunk(b"x") + b"\x82SNA",
    b"\x05\x00abc",  # raw block: declared 5, corrupt
])
def test_snappy_refuses_broken_streams(stream):
    with pytest.raises(DecodeError):
        decompress(CompressionType.SNAPPY, stream)


# --- lz4: Kafka's LZ4 frame ----------------------------------------------------------

def test_lz4_writes_kafkas_frame():
    data = os.urandom(100_000) + bytes(100_000)
    out = compress(CompressionType.LZ4, data)
    # magic, FLG 0x60 (v1, independent blocks, nothing optional), BD 0x40 (64 KiB), HC 0x82
    assert out[:7] == bytes.fromhex("04224d18604082")
    assert out[-4:] == b"\x00\x00\x00\x00"  # end mark, no content checksum
    pos, sizes = 7, []
    while True:
        (word,) = struct.unpack_from("<I", out, pos)
        if word == 0:
            break
        size = word & 0x7FFFFFFF
        raw = word & 0x80000000
        block = out[pos + 4:pos + 4 + size]
        sizes.append(len(block) if raw else len(lz4.block.decompress(block, uncompressed_size=65536)))
        pos += 4 + size
    assert pos + 4 == len(out)
    assert sizes[:3] == [65536, 65536, 65536] and sum(sizes) == len(data)
    # Incompressible blocks are stored raw, flagged by the high bit.
    assert struct.unpack_from("<I", out, 7)[0] & 0x80000000


def test_lz4_reads_the_optional_fields_kafka_reads():
    data = b"kafka" * 5000
    for kwargs in ({"store_size": True}, {"content_checksum": True}, {"block_checksum": True},
                   {"block_size": lz4.frame.BLOCKSIZE_MAX4MB}):
        frame = lz4.frame.compress(data, block_linked=False, **kwargs)
        assert decompress(CompressionType.LZ4, frame) == data
    # Bytes after the end mark are ignored (Lz4BlockInputStream stops at the end mark).
    assert decompress(CompressionType.LZ4, compress(CompressionType.LZ4, data) + b"junk") == data


@pytest.mark.parametrize("mutate", [
    lambda f: lz4.frame.compress(b"x" * 100000, block_linked=True),  # dependent blocks
    lambda f: b"\x05" + f[1:],                                    # magic
    lambda f: f[:4] + bytes([f[4] | 0x80]) + f[5:],                # version 2 (and a bad HC)
    lambda f: f[:5] + b"\x30" + f[6:],                             # block size id 3
    lambda f: f[:6] + bytes([f[6] ^ 0xFF]) + f[7:],                # header checksum
    lambda f: f[:-4],                                              # no end mark
    lambda f: f[:20],                                              # truncated block
    lambda f: f[:5],                                               # truncated header
])
def test_lz4_refuses_what_kafka_refuses(mutate):
    frame = compress(CompressionType.LZ4, b"y" * 1000 + os.urandom(100))
    with pytest.raises(DecodeError):
        decompress(CompressionType.LZ4, mutate(frame))


# --- zstd ---------------------------------------------------------------------------------

def test_zstd_frames_without_content_size_and_concatenated_frames():
    data = os.urandom(5000) + bytes(300_000)
    streamed = zstandard.ZstdCompressor(write_content_size=False).compress(data)
    assert zstandard.get_frame_parameters(streamed).content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert decompress(CompressionType.ZSTD, streamed) == data
    cobj = zstandard.ZstdCompressor(write_checksum=True).compressobj()
    chunked = cobj.compress(data[:1000]) + cobj.compress(data[1000:]) + cobj.flush()
    assert decompress(CompressionType.ZSTD, chunked) == data
    two = compress(CompressionType.ZSTD, b"first") + compress(CompressionType.ZSTD, b"second")
    assert decompress(CompressionType.ZSTD, two) == b"firstsecond"
    skippable = struct.pack("<II", 0x184D2A50, 3) + b"abc"
    assert decompress(CompressionType.ZSTD, skippable + compress(CompressionType.ZSTD, b"z")) == b"z"


@pytest.mark.parametrize("cut", [1, 3, 4, 5, 8])
def test_zstd_refuses_truncated_frames(cut):
    frame = zstandard.ZstdCompressor(write_checksum=True).compress(os.urandom(1000))
    with pytest.raises(DecodeError):
        decompress(CompressionType.ZSTD, frame[:-cut])


@pytest.mark.parametrize("stream", [b"", b"\x28\xb5\x2f", b"garbage!", None])
def test_zstd_refuses_garbage(stream):
    if stream is None:
        stream = compress(CompressionType.ZSTD, b"ok") + b"trailing"
    with pytest.raises(DecodeError):
        decompress(CompressionType.ZSTD, stream)


# --- gzip ---------------------------------------------------------------------------------

def test_gzip_members_and_trailing_bytes():
    two = gzip.compress(b"one") + gzip.compress(b"two")
    assert decompress(CompressionType.GZIP, two) == b"onetwo"
    assert decompress(CompressionType.GZIP, gzip.compress(b"one") + b"garbage") == b"one"
    assert compress(CompressionType.GZIP, b"x")[:4] == b"\x1f\x8b\x08\x00"
    assert compress(CompressionType.GZIP, b"x") == compress(CompressionType.GZIP, b"x")  # mtime 0: deterministic
    for bad in (b"", gzip.compress(b"abc" * 100)[:-9], b"\x1f\x8b\x08\x00garbage-garbage"):
        with pytest.raises(DecodeError):
            decompress(CompressionType.GZIP, bad)


# --- bounded decompression ----------------------------------------------------------------

def _bomb(codec, size: int) -> bytes:
    """``size`` zero bytes compressed, built without holding them all."""
    step = bytes(MiB)
    if codec == CompressionType.GZIP:
        z = zlib.compressobj(1, zlib.DEFLATED, 31)
        return b"".join([z.compress(step) for _ in range(size // MiB)] + [z.flush()])
    if codec == CompressionType.ZSTD:
        z = zstandard.ZstdCompressor(level=1).compressobj()
        return b"".join([z.compress(step) for _ in range(size // MiB)] + [z.flush()])
    if codec == CompressionType.LZ4:
        z = lz4.frame.LZ4FrameCompressor(block_linked=False, block_size=lz4.frame.BLOCKSIZE_MAX64KB)
        return b"".join([z.begin()] + [z.compress(step) for _ in range(size // MiB)] + [z.flush()])
    chunk = _chunk(bytes(32 * 1024))
    return XERIAL_HEADER + chunk * (size // (32 * 1024))


def _peak_during(fn) -> int:
    tracemalloc.start()
    try:
        fn()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize("codec", COMPRESSED)
def test_bombs_are_refused_within_the_limit(codec):
    bomb = _bomb(codec, 16 * MiB)
    assert len(bomb) < 2 * MiB

    def refuse():
        with pytest.raises(DecodeError, match="exceed"):
            decompress(codec, bomb, max_bytes=MiB)

    assert _peak_during(refuse) < len(bomb) + 3 * MiB
    # Exactly at the limit is fine.
    assert len(decompress(codec, bomb, max_bytes=16 * MiB)) == 16 * MiB


def test_default_limit_refuses_a_bigger_bomb():
    bomb = _bomb(CompressionType.ZSTD, DEFAULT_MAX_BYTES + MiB)

    def refuse():
        with pytest.raises(DecodeError, match="exceed"):
            decompress(CompressionType.ZSTD, bomb)

    # The output buffer grows by ~1/8 at a time, so the peak is a little over the limit.
    assert _peak_during(refuse) < DEFAULT_MAX_BYTES * 1.2


@pytest.mark.parametrize("craft", ["snappy-raw", "snappy-xerial", "zstd-content-size", "lz4-content-size"])
def test_declared_sizes_are_not_trusted(craft):
    if craft == "snappy-raw":
        codec, data = CompressionType.SNAPPY, b"\xff\xff\xff\xff\x0f" + b"\x00" * 32
    elif craft == "snappy-xerial":
        block = b"\xff\xff\xff\xff\x0f\x00"
        codec, data = CompressionType.SNAPPY, XERIAL_HEADER + struct.pack(">i", len(block)) + block
    elif craft == "zstd-content-size":
        frame = bytearray(zstandard.ZstdCompressor(write_content_size=True).compress(b"a" * 70000))
        fhd = frame[4]
        assert fhd >> 6 == 2  # a 4-byte content size follows the header descriptor (single segment)
        struct.pack_into("<I", frame, 5, 0xFFFFFFF0)
        codec, data = CompressionType.ZSTD, bytes(frame)
    else:
        frame = bytearray(lz4.frame.compress(b"a" * 1000, store_size=True, block_linked=False))
        struct.pack_into("<Q", frame, 6, 1 << 40)
        codec, data = CompressionType.LZ4, bytes(frame)

    def refuse():
        with pytest.raises(DecodeError):
            decompress(codec, data, max_bytes=MiB)

    assert _peak_during(refuse) < 2 * MiB


@pytest.mark.parametrize("codec", COMPRESSED)
def test_a_bomb_batch_is_refused_by_decode_batch(codec):
    import crc32c
    bomb = _bomb(codec, 4 * MiB)
    head = bytearray(RecordBatch(records=[Record()]).encode()[:61])
    struct.pack_into(">i", head, 8, 49 + len(bomb))
    struct.pack_into(">h", head, 21, codec)
    blob = bytearray(head + bomb)
    struct.pack_into(">I", blob, 17, crc32c.crc32c(bytes(blob[21:])))
    with pytest.raises(DecodeError, match="exceed"):
        decode_batch(bytes(blob), max_bytes=MiB)


# --- compressed batches -----------------------------------------------------------------------

@pytest.mark.parametrize("codec", COMPRESSED)
def test_compressed_batches_against_the_reference(codec):
    recs = [Record(offset_delta=i, timestamp_delta=i, key=b"k%d" % i, value=os.urandom(50) + bytes(500),
                   headers=[("trace", b"%d" % i)]) for i in range(300)]
    batch = RecordBatch(base_offset=1000, partition_leader_epoch=4, base_timestamp=1_700_000_000_000,
                        attributes=codec, records=recs)
    blob = batch.encode()
    assert len(blob) < 61 + sum(len(r.value) for r in recs) // 2
    [decoded] = assert_matches_reference(blob)
    assert decoded == batch
