"""The iteration order of a Java ``HashMap``, for Produce's error answer: Kafka's
``ProduceRequest.partitionSizes()`` collects the request's partitions into a
``HashMap<TopicIdPartition, Integer>`` with ``compute`` and ``getErrorResponse`` walks
that map.

A HashMap walks its table bucket by bucket. ``compute`` puts a new key at the head of
its bucket (``put`` would append it), and a resize splits each bucket keeping its
order, so a bucket holds its keys newest first. The table starts at 16 buckets;
``compute`` doubles it *before* looking the key up whenever the size already passes
three quarters of the table (so also for a key seen before). A key's bucket is its
``hashCode()`` spread (``h ^ h >>> 16``) masked by the table size. (Buckets of more
than 8 keys in a table of 64 or more become trees, whose order differs; a request would
need 9 partitions whose hashes collide in one bucket.)
"""
from __future__ import annotations


def _int32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def string_hash(s: str) -> int:
    """``String.hashCode()``: over UTF-16 code units."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return _int32(h)


def uuid_hash(u) -> int:
    """``Uuid.hashCode()``: the high and low halves of msb ^ lsb, xored."""
    value = u.int
    xor = (value >> 64) ^ (value & 0xFFFFFFFFFFFFFFFF)
    return _int32((xor >> 32) ^ xor)


def topic_id_partition_hash(topic_id, name: str, partition: int) -> int:
    tp = _int32(31 * (31 + partition) + string_hash(name))  # TopicPartition.hashCode()
    return _int32(31 * (31 + uuid_hash(topic_id)) + tp)


def compute_order(keys: list, hashes: list[int]) -> list:
    """The distinct ``keys`` in the iteration order of a HashMap filled by one
    ``compute`` call per item of ``keys`` (repeats included)."""
    seen: dict = {}  # key -> spread hash, in insertion order
    capacity = 16
    for key, h in zip(keys, hashes):
        if len(seen) > capacity * 3 // 4:
            capacity *= 2
        if key not in seen:
            h &= 0xFFFFFFFF
            seen[key] = h ^ (h >> 16)
    buckets: dict[int, list] = {}
    for key, spread in reversed(seen.items()):  # newest first within a bucket
        buckets.setdefault(spread & (capacity - 1), []).append(key)
    return [key for index in sorted(buckets) for key in buckets[index]]


def produce_order(body) -> list[tuple]:
    """(topic name, topic id, partition index) of a ProduceRequest, as Kafka walks them."""
    keys = [(t.name, t.topic_id, p.index) for t in body.topic_data for p in t.partition_data]
    return compute_order(keys, [topic_id_partition_hash(i, n, p) for n, i, p in keys])
