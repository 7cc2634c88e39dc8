"""Size-prefixed frames: splitting, the size limit before allocation, and headers."""
import struct
import tracemalloc

import pytest

from wire.framing import DEFAULT_MAX_BYTES, FrameReader, FrameTooLarge, frame


def test_frames_split_at_any_boundary():
    payloads = [b"", b"a", b"hello" * 100, bytes(range(256))]
    stream = b"".join(frame(p) for p in payloads)
    for step in (1, 3, 7, len(stream)):
        reader, got = FrameReader(), []
        for i in range(0, len(stream), step):
            got.extend(reader.feed(stream[i:i + step]))
        assert got == payloads
        assert reader.buffered == 0


def test_default_limit_is_kafkas():
    assert DEFAULT_MAX_BYTES == 104857600 == FrameReader().max_bytes


def test_two_gigabyte_claim_is_refused_before_allocating():
    tracemalloc.start()
    try:
        with pytest.raises(FrameTooLarge) as err:
            FrameReader().feed(struct.pack(">i", 0x7FFFFFF0) + b"xx")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    assert err.value.size == 0x7FFFFFF0


def test_negative_size_is_refused():
    with pytest.raises(FrameTooLarge):
        FrameReader().feed(b"\xff\xff\xff\xfe")


def test_limit_is_inclusive():
    reader = FrameReader(max_bytes=10)
    assert reader.feed(frame(b"x" * 10)) == [b"x" * 10]
    with pytest.raises(FrameTooLarge):
        reader.feed(frame(b"x" * 11))


def test_frames_before_an_oversized_prefix_travel_with_the_error():
    reader = FrameReader(100)
    with pytest.raises(FrameTooLarge) as err:
        reader.feed(frame(b"one") + frame(b"two") + struct.pack(">i", 101))
    assert err.value.frames == [b"one", b"two"]
