"""The high-watermark hint (``kraft_server/log/hwm_hint.py``): its line, a torn one,
when the writer rewrites it, and how ``recover`` checks it against the log."""
from __future__ import annotations

from kraft_server.common.values import OffsetAndEpoch
from kraft_server.log.hwm_hint import HWM_HINT, LINE_SIZE, HintWriter, epoch_below, parse, read_hint, render
from tools.metadata_quorum.recover import checked_hint


def test_the_line_reads_back_and_a_torn_one_does_not():
    line = render(OffsetAndEpoch(1234, 7))
    assert len(line) == LINE_SIZE and parse(line) == OffsetAndEpoch(1234, 7)
    assert parse(line.replace(b"1234", b"1235")) is None  # a changed digit fails the CRC
    assert parse(line[:10]) is None and parse(b"") is None


def test_epoch_below_an_offset():
    entries = [(1, 0), (3, 10), (4, 25)]
    assert [epoch_below(entries, o) for o in (1, 10, 11, 25, 26, 100)] == [1, 1, 3, 3, 4, 4]
    assert epoch_below([(2, 5)], 5) is None  # offset 4 is under a snapshot


def test_the_writer_rewrites_at_most_once_a_period(tmp_path):
    entries = [(1, 0), (2, 50)]
    writer = HintWriter(tmp_path, every_ms=1000)
    writer.observe(None, lambda: entries, 0)
    assert read_hint(tmp_path) is None
    writer.observe(40, lambda: entries, 0)
    assert read_hint(tmp_path) == OffsetAndEpoch(40, 1)
    writer.observe(60, lambda: entries, 500)  # too soon
    assert read_hint(tmp_path) == OffsetAndEpoch(40, 1)
    writer.observe(60, lambda: entries, 1000)
    assert read_hint(tmp_path) == OffsetAndEpoch(60, 2)
    assert (tmp_path / HWM_HINT).stat().st_size == LINE_SIZE


def test_recover_trusts_a_hint_only_where_the_log_still_holds_it():
    entries = [(1, 0), (2, 50)]
    assert checked_hint(OffsetAndEpoch(60, 2), entries, 70) == OffsetAndEpoch(60, 2)
    assert checked_hint(OffsetAndEpoch(80, 2), entries, 70) is None  # past the log end (truncated)
    assert checked_hint(OffsetAndEpoch(60, 3), entries, 70) is None  # another epoch there now
    assert checked_hint(None, entries, 70) is None
