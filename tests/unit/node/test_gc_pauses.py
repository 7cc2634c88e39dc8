"""Timing the cyclic collector's pauses (``kraft_server/metrics/gc_pauses.py``): every
collection is counted per generation; those of generation 2 are logged at DEBUG and
slow ones at INFO, after the loop's turn, never from inside the collection."""
from __future__ import annotations

import gc
import logging

from kraft_server.metrics.gc_pauses import GcPauses


def test_a_real_collection_is_timed_and_reported(caplog):
    pauses = GcPauses(slow_ms=1e9).install()
    try:
        gc.collect()
    finally:
        pauses.uninstall()
    assert pauses.count[2] == 1 and pauses.total_ms[2] >= 0 and pauses.kept[0][0] == 2
    assert pauses._callback not in gc.callbacks
    with caplog.at_level(logging.DEBUG, logger="kraft_server.metrics.gc_pauses"):
        pauses.report()
    assert [r.levelno for r in caplog.records] == [logging.DEBUG]
    assert "generation 2" in caplog.records[0].getMessage() and pauses.kept == []


def test_young_collections_are_counted_and_slow_ones_logged_at_info(caplog):
    pauses = GcPauses(slow_ms=100)
    pauses.note(0, 1.0)
    pauses.note(1, 3.0)
    pauses.note(0, 150.0, collected=7)
    assert pauses.count == [2, 1, 0] and pauses.max_ms[0] == 150.0 and pauses.total_ms[0] == 151.0
    assert pauses.kept == [(0, 150.0, 7)]  # fast young ones are not reported
    with caplog.at_level(logging.INFO, logger="kraft_server.metrics.gc_pauses"):
        pauses.report()
    assert [r.levelno for r in caplog.records] == [logging.INFO]
    assert "took 150 ms (7 freed" in caplog.records[0].getMessage()
    assert pauses.summary()["gen0"] == {"count": 2, "total_ms": 151.0, "max_ms": 150.0}


def test_what_waits_for_a_report_is_bounded():
    pauses = GcPauses()
    for i in range(200):
        pauses.note(2, float(i))
    assert len(pauses.kept) == 64 and pauses.kept[-1][1] == 199.0
