"""The record-batch codecs: none, gzip, snappy, lz4, zstd, as Kafka frames them.

Only the records section of a v2 batch (everything after the 61-byte header) is
compressed. Each codec here reads what Apache Kafka 4.3.1 reads and writes what
it writes by default, byte for byte (checked against ``MemoryRecordsBuilder`` in
``tests/interop/test_records_java.py``; zstd output past one 128 KiB block may differ,
zstd 1.5.7 here against zstd-jni's 1.5.6, without changing the content):

- gzip (1): a gzip stream (``java.util.zip.GZIPOutputStream``: header MTIME 0,
  XFL 0, OS 255), default level 6 (Kafka's ``Deflater.DEFAULT_COMPRESSION``).
  Concatenated members are read on, as ``GZIPInputStream`` does; bytes after the
  last member that do not start a new one are ignored, as Java ignores them.
- snappy (2): xerial ``SnappyOutputStream`` framing: the 16-byte header
  ``\\x82SNAPPY\\x00`` + int32 version 1 + int32 compatible-version 1, then chunks
  ``[int32 BE compressed length][raw snappy block]``, each block holding at most
  32 KiB of input (snappy-java's default, which Kafka 4.3.1 uses). Like
  ``SnappyInputStream``, the reader falls back to one raw (unframed) snappy block
  when the input is shorter than 16 bytes or lacks the magic, accepts a second
  header where a chunk length would be (concatenated streams), and stops at a
  trailing stub of fewer than 4 bytes.
- lz4 (3): the LZ4 frame format as ``Lz4BlockOutputStream`` writes it: FLG 0x60
  (version 1, independent blocks, no block checksum, no content size, no content
  checksum), BD 0x40 (64 KiB blocks), header checksum 0x82, then blocks and a
  zero end mark. Kafka's default level 9 means lz4-java's fast compressor, which
  is python-lz4's level 0. The reader refuses what ``Lz4BlockInputStream``
  refuses (dependent blocks, another version, reserved bits set) and accepts
  the optional fields it accepts.
- zstd (4): one zstd frame (default level 3), streamed as zstd-jni's
  ``ZstdOutputStream`` does: no content size, no checksum, the data blocks then
  an empty last block. Frames from elsewhere may carry a content size; the
  reader never trusts a declared size, reads across concatenated frames as
  zstd-jni does, and rejects a truncated frame.

Decompression is bounded: every decoder takes ``max_bytes`` and raises
``DecodeError`` as soon as the output would pass it. Output is produced in
steps of at most 256 KiB and no declared size (snappy's length preamble, a zstd
or lz4 content size) is trusted for allocation, so the memory used stays near
``max_bytes`` however small and hostile the input. Every failure of the
underlying libraries surfaces as ``DecodeError`` (or ``EncodeError`` when
compressing).
"""
from __future__ import annotations

import gzip
import struct
import zlib
from enum import IntEnum

import cramjam
import lz4.frame
import zstandard

from ..exceptions import DecodeError, EncodeError

__all__ = [
    "CompressionType",
    "DEFAULT_MAX_BYTES",
    "compress",
    "decompress",
]

# A batch is at most max.message.bytes (1 MiB by default) compressed; 64 MiB of
# output is far past anything legitimate yet cheap to refuse.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

# Output is produced in steps of this size so that a bound check happens
# before, not after, a large allocation.
_STEP = 256 * 1024


class CompressionType(IntEnum):
    """Codec ids of the batch attributes' bits 0-2 (Kafka's ``CompressionType``)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


def _too_big(max_bytes: int) -> DecodeError:
    return DecodeError(f"decompressed records exceed {max_bytes} bytes")


# --- gzip -------------------------------------------------------------------

_GZIP_MAGIC = b"\x1f\x8b"


def _gzip_compress(data, level: int | None) -> bytes:
    out = gzip.compress(bytes(data), compresslevel=6 if level is None else level, mtime=0)
    # Java's GZIPOutputStream header is fixed: MTIME 0, XFL 0, OS 255 (unknown);
    # zlib sets XFL from the level and OS to its platform. Match Java's bytes.
    return out[:8] + b"\x00\xff" + out[10:]


def _gzip_decompress(data, max_bytes: int) -> bytes:
    out = bytearray()
    rest = bytes(data)
    if not rest:
        raise DecodeError("gzip: empty input")
    while True:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        chunk = rest
        while True:
            try:
                out += d.decompress(chunk, max_bytes + 1 - len(out))
            except zlib.error as exc:
                raise DecodeError(f"gzip: {exc}") from None
            if len(out) > max_bytes:
                raise _too_big(max_bytes)
            if d.eof or not d.unconsumed_tail:
                break
            chunk = d.unconsumed_tail
        if not d.eof:
            raise DecodeError("gzip: truncated stream")
        rest = d.unused_data
        # GZIPInputStream reads on only if another member header follows.
        if not rest.startswith(_GZIP_MAGIC):
            return bytes(out)


# --- snappy (xerial framing) ----------------------------------------------------

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_MAGIC_HEAD = struct.unpack(">i", _XERIAL_MAGIC[:4])[0]  # negative as an int32
_XERIAL_BLOCK = 32 * 1024
_INT32 = struct.Struct(">i")


def _snappy_compress(data, level: int | None) -> bytes:
    view = memoryview(data)
    parts = [_XERIAL_HEADER]
    for i in range(0, len(view), _XERIAL_BLOCK):
        block = bytes(cramjam.snappy.compress_raw(view[i:i + _XERIAL_BLOCK]))
        parts.append(_INT32.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_raw(block, budget: int, max_bytes: int) -> bytes:
    if not block:
        raise DecodeError("snappy: empty block")
    try:
        # The block starts with its uncompressed length: check it before
        # letting the library allocate that much.
        declared = cramjam.snappy.decompress_raw_len(block)
    except Exception as exc:  # cramjam raises its own error types
        raise DecodeError(f"snappy: {exc}") from None
    if declared > budget:
        raise _too_big(max_bytes)
    try:
        out = bytes(cramjam.snappy.decompress_raw(block))
    except Exception as exc:
        raise DecodeError(f"snappy: {exc}") from None
    if len(out) != declared:
        raise DecodeError("snappy: block length mismatch")
    return out


def _snappy_decompress(data, max_bytes: int) -> bytes:
    data = bytes(data)
    if not data:
        raise DecodeError("snappy: empty input")  # SnappyInputStream: EMPTY_INPUT
    if len(data) < len(_XERIAL_HEADER) or not data.startswith(_XERIAL_MAGIC):
        return _snappy_raw(data, max_bytes, max_bytes)
    out = bytearray()
    pos = len(_XERIAL_HEADER)
    end = len(data)
    while end - pos >= 4:
        size = _INT32.unpack_from(data, pos)[0]
        pos += 4
        if size == _XERIAL_MAGIC_HEAD:
            # A concatenated stream: the rest of a 16-byte header follows.
            if end - pos < len(_XERIAL_HEADER) - 4:
                raise DecodeError("snappy: truncated concatenated header")
            if data[pos - 4:pos + 4] != _XERIAL_MAGIC:
                return bytes(out)  # SnappyInputStream stops reading here
            pos += len(_XERIAL_HEADER) - 4
            continue
        if size < 0:
            raise DecodeError(f"snappy: negative chunk size {size}")
        if end - pos < size:
            raise DecodeError("snappy: truncated chunk")
        out += _snappy_raw(data[pos:pos + size], max_bytes - len(out), max_bytes)
        pos += size
    return bytes(out)


# --- lz4 (Kafka's LZ4 frame) ------------------------------------------------------

_LZ4_MAGIC = b"\x04\x22\x4d\x18"


def _lz4_compress(data, level: int | None) -> bytes:
    # Kafka level 9 (its default) selects lz4-java's fast compressor, python-lz4's
    # level 0; other levels select the high-compression compressor at that level.
    lz4_level = 0 if level is None or level == 9 else level
    return lz4.frame.compress(
        bytes(data),
        compression_level=lz4_level,
        block_size=lz4.frame.BLOCKSIZE_MAX64KB,
        block_linked=False,
        content_checksum=False,
        block_checksum=False,
        store_size=False,
    )


def _lz4_check_header(data) -> None:
    # What Lz4BlockInputStream's FLG/BD validation refuses; python-lz4 would
    # accept some of it (dependent blocks), so check first.
    if len(data) < 7:
        raise DecodeError("lz4: truncated frame header")
    if bytes(data[:4]) != _LZ4_MAGIC:
        raise DecodeError("lz4: bad magic")
    flg, bd = data[4], data[5]
    if flg >> 6 != 1:
        raise DecodeError(f"lz4: unsupported frame version {flg >> 6}")
    if flg & 0x03:
        raise DecodeError("lz4: reserved FLG bits set")
    if not flg & 0x20:
        raise DecodeError("lz4: dependent blocks are unsupported")
    if bd & 0x8F or not 4 <= (bd >> 4) & 7 <= 7:
        raise DecodeError("lz4: bad block descriptor")


def _lz4_decompress(data, max_bytes: int) -> bytes:
    _lz4_check_header(data)
    dec = lz4.frame.LZ4FrameDecompressor()
    out = bytearray()
    chunk = bytes(data)
    try:
        while not dec.eof:
            step = min(_STEP, max_bytes + 1 - len(out))
            produced = dec.decompress(chunk, max_length=step)
            chunk = b""
            out += produced
            if len(out) > max_bytes:
                raise _too_big(max_bytes)
            if not produced and not dec.eof:
                raise DecodeError("lz4: truncated frame")
    except RuntimeError as exc:  # python-lz4 reports corrupt input this way
        raise DecodeError(f"lz4: {exc}") from None
    # Bytes after the end mark are ignored, as Lz4BlockInputStream ignores them.
    return bytes(out)


# --- zstd -----------------------------------------------------------------------

_ZSTD_MAGIC = 0xFD2FB528
_UINT32_LE = struct.Struct("<I")


def _zstd_compress(data, level: int | None) -> bytes:
    # Stream it as Kafka's ZstdOutputStream does: no content size, the level's
    # parameters for an unknown size, and on close a flush (ending the last
    # data block) then the frame end (an empty last block).
    try:
        cobj = zstandard.ZstdCompressor(level=3 if level is None else level).compressobj()
        return (cobj.compress(bytes(data)) + cobj.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
                + cobj.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH))
    except zstandard.ZstdError as exc:
        raise EncodeError(f"zstd: {exc}") from None


def _zstd_frames_end(data) -> None:
    """Walk the frames' block headers: raise DecodeError unless every frame is whole.

    zstandard's streaming reader returns short output for a truncated frame
    instead of failing, and zstd-jni fails; walking the layout (RFC 8878 §3.1)
    restores that check without decompressing twice.
    """
    pos, end = 0, len(data)
    if end == 0:
        raise DecodeError("zstd: empty input")
    while pos < end:
        if end - pos < 4:
            raise DecodeError("zstd: truncated frame")
        magic = _UINT32_LE.unpack_from(data, pos)[0]
        if magic & 0xFFFFFFF0 == 0x184D2A50:  # skippable frame
            if end - pos < 8:
                raise DecodeError("zstd: truncated skippable frame")
            pos += 8 + _UINT32_LE.unpack_from(data, pos + 4)[0]
            continue
        if magic != _ZSTD_MAGIC:
            raise DecodeError("zstd: unknown frame magic")
        if end - pos < 5:
            raise DecodeError("zstd: truncated frame header")
        fhd = data[pos + 4]
        single_segment = fhd >> 5 & 1
        fcs_size = (0, 2, 4, 8)[fhd >> 6] or (1 if single_segment else 0)
        header = 1 + (0 if single_segment else 1) + (0, 1, 2, 4)[fhd & 3] + fcs_size
        pos += 4 + header
        while True:
            if end - pos < 3:
                raise DecodeError("zstd: truncated block")
            bh = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
            last, kind, size = bh & 1, bh >> 1 & 3, bh >> 3
            if kind == 3:
                raise DecodeError("zstd: reserved block type")
            pos += 3 + (1 if kind == 1 else size)  # an RLE block stores one byte
            if last:
                break
        if fhd & 0x04:  # content checksum
            pos += 4
        if pos > end:
            raise DecodeError("zstd: truncated frame")


def _zstd_decompress(data, max_bytes: int) -> bytes:
    data = bytes(data)
    _zstd_frames_end(data)
    out = bytearray()
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
        while True:
            produced = reader.read(min(_STEP, max_bytes + 1 - len(out)))
            if not produced:
                return bytes(out)
            out += produced
            if len(out) > max_bytes:
                raise _too_big(max_bytes)
    except zstandard.ZstdError as exc:
        raise DecodeError(f"zstd: {exc}") from None


# --- dispatch -------------------------------------------------------------------

_COMPRESS = {
    CompressionType.GZIP: _gzip_compress,
    CompressionType.SNAPPY: _snappy_compress,
    CompressionType.LZ4: _lz4_compress,
    CompressionType.ZSTD: _zstd_compress,
}
_DECOMPRESS = {
    CompressionType.GZIP: _gzip_decompress,
    CompressionType.SNAPPY: _snappy_decompress,
    CompressionType.LZ4: _lz4_decompress,
    CompressionType.ZSTD: _zstd_decompress,
}


def compress(codec: int, data, level: int | None = None) -> bytes:
    """Compress ``data`` (bytes-like) as Kafka's writer for ``codec`` frames it.

    ``level`` uses Kafka's scale for that codec (``compression.gzip.level`` etc.);
    ``None`` means Kafka's default.
    """
    if codec == CompressionType.NONE:
        return bytes(data)
    fn = _COMPRESS.get(codec)
    if fn is None:
        raise EncodeError(f"unknown compression type id {codec}")
    try:
        return fn(data, level)
    except EncodeError:
        raise
    except (ValueError, TypeError, RuntimeError) as exc:  # bad level, not bytes-like...
        raise EncodeError(f"{CompressionType(codec).name.lower()}: {exc}") from None


def decompress(codec: int, data, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """Decompress ``data`` framed by ``codec``; at most ``max_bytes`` of output."""
    if codec == CompressionType.NONE:
        if len(data) > max_bytes:
            raise _too_big(max_bytes)
        return bytes(data)
    fn = _DECOMPRESS.get(codec)
    if fn is None:
        raise DecodeError(f"unknown compression type id {codec}")
    return fn(data, max_bytes)
