"""Keeping CPython's cyclic garbage collector off the image.

A collection of the oldest generation walks every tracked object: with 100,000
decoded partitions that is a pause of 50-400 ms on the loop's thread, which lands
inside whatever request allocated last, again and again while the image grows (the
collector runs a full pass each time the objects that survived grow by a quarter).
The image's records hold no reference cycles (a change replaces a partition's
record; reference counting frees the old one), so once built they can sit in the
permanent generation (``gc.freeze``), which no collection walks:

* ``collector_paused``: no collection while a slice of the log or a snapshot is
  replayed (it allocates many objects that all survive);
* ``freeze(whole=True)`` after a large snapshot is loaded: unfreeze everything,
  collect (the replaced image, frozen earlier, is cyclic garbage now: a topic points
  at its ``TopicsImage``), freeze what is left;
* ``Freezer.large_replay`` around a slice of replay of ``LARGE_REPLAY_BYTES`` or
  more (one atomic batch of 100,000 PartitionChangeRecords, say): collect first,
  while what is not frozen is small, replay with the collector paused, then freeze
  what it made, image records that hold no cycles; their collection is skipped;
* ``Freezer.poll`` after every controller poll: once ``FREEZE_RECORDS`` partition
  records were made since the last freeze (decoded on first read, or replaced by a
  change), collect what is not frozen, then freeze it. The collection first means no
  garbage is frozen; what is frozen and later becomes cyclic garbage (a connection
  closed since, say) is found by the next whole freeze, which ``Freezer`` does
  instead of the plain one once ``WHOLE_EVERY_MS`` (10 min) passed since the last.

The cost of each freeze is one collection over what was made since the last one
(logged at DEBUG, with its time; ``kraft_server/metrics/gc_pauses.py`` logs slow ones).
"""
from __future__ import annotations

import gc
import logging
import time
from contextlib import contextmanager

log = logging.getLogger(__name__)

# Partition records made (decoded or replaced) since the last freeze that call for one.
FREEZE_RECORDS = 10_000
# At most this often a freeze first looks at what earlier freezes froze.
WHOLE_EVERY_MS = 600_000
# A slice of replay this large is bracketed by a collection and a freeze (~10,000 records).
LARGE_REPLAY_BYTES = 512 * 1024
SLOW_FREEZE_MS = 100  # a freeze that took this long is logged at INFO


@contextmanager
def collector_paused():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def freeze(whole: bool = False) -> tuple[int, float]:
    """Collect, then move every surviving object out of the collector's reach;
    ``whole``: what earlier freezes froze is collected first too. Returns (objects
    freed, ms taken)."""
    t0 = time.perf_counter()
    if whole:
        gc.unfreeze()
    freed = gc.collect()
    gc.freeze()
    return freed, (time.perf_counter() - t0) * 1000


class Freezer:
    def __init__(self, now_ms: int | None = None, threshold: int = FREEZE_RECORDS,
                 whole_every_ms: int = WHOLE_EVERY_MS) -> None:
        self.threshold = threshold
        self.whole_every_ms = whole_every_ms
        self.image_serial = None  # the image whose records are counted
        self.mark = 0  # its records made at the last freeze
        self.last_whole_ms = now_ms  # None: the first poll's time
        self.freezes = 0

    def poll(self, image, now_ms: int) -> bool:
        """Freeze when enough of ``image``'s partition records were made since the
        last freeze (``TopicsImage.made``); True when it did."""
        if self.last_whole_ms is None:
            self.last_whole_ms = now_ms
        if image.topics.made - self._mark_of(image) < self.threshold:
            return False
        whole = now_ms - self.last_whole_ms >= self.whole_every_ms
        freed, ms = freeze(whole)
        if whole:
            self.last_whole_ms = now_ms
        self._frozen(image, "whole" if whole else "unfrozen", freed, ms)
        return True

    @contextmanager
    def large_replay(self, image):
        """Around a large slice of replay (the collector paused): collect first, while
        what is not frozen is small, then freeze what the replay made (image records:
        no cycles) without collecting the slice's survivors again."""
        t0 = time.perf_counter()
        freed = gc.collect()
        t1 = time.perf_counter()
        yield
        t2 = time.perf_counter()
        gc.freeze()
        self._frozen(image, "prior", freed, (t1 - t0 + time.perf_counter() - t2) * 1000)

    def _mark_of(self, image) -> int:
        """Records of ``image`` made at the last freeze (0 for a new image: a snapshot loaded)."""
        if image.serial != self.image_serial:
            self.image_serial, self.mark = image.serial, 0
        return self.mark

    def _frozen(self, image, kind: str, freed: int, ms: float) -> None:
        made = image.topics.made
        since = made - self._mark_of(image)
        self.freezes += 1
        log.log(logging.INFO if ms >= SLOW_FREEZE_MS else logging.DEBUG,
                "froze the collector's objects after %d partition records (%s collection freed %d; %.0f ms)",
                since, kind, freed, ms)
        self.mark = made
