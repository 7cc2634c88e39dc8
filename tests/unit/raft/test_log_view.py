"""``LogView`` (the log as the core sees it, with its own pending writes) answers
exactly as the log would had the writes been performed: a random walk of appends,
truncations, snapshot installs and hand-overs, checked after every step against a
twin log that performs each write at once, for the file log and the memory log.
Seeds: a fixed set plus fresh ones (printed)."""
from __future__ import annotations

import random

import pytest

from kraft_server.common.values import OffsetAndEpoch
from kraft_server.log import memory
from kraft_server.log.file_log import FileReplicatedLog
from kraft_server.raft.log_view import LogView
from kraft_server.shell.log_writes import LogWriter
from tests.support.fresh_seeds import fresh_rng
from wire.records import data_batch, frame_metadata_record

_RNG = fresh_rng(__name__)
FRESH = [_RNG.randrange(10**9) for _ in range(3)]
SEEDS = [1, 2, 3, 4, 5] + FRESH


def _batch(offset: int, epoch: int, rng) -> bytes:
    values = [frame_metadata_record(0, 0, bytes([rng.randrange(256)]) * rng.randrange(1, 40))
              for _ in range(rng.randrange(1, 4))]
    return data_batch(offset, epoch, 1_000 + offset, values)


def _open(kind, path):
    return FileReplicatedLog.open(path) if kind == "file" else memory.MemoryLog()


def _same(view: LogView, twin, epoch_top: int) -> None:
    assert view.start_offset() == twin.start_offset()
    assert view.end_offset() == twin.end_offset()
    assert view.last_fetched_epoch() == twin.last_fetched_epoch()
    assert view.latest_snapshot() == twin.latest_snapshot()
    assert view.snapshot_ids() == twin.snapshot_ids()
    for epoch in range(epoch_top + 2):
        assert view.end_offset_for_epoch(epoch) == twin.end_offset_for_epoch(epoch), epoch
    for offset in range(twin.start_offset(), twin.end_offset() + 1):
        for max_bytes in (1, 150, 10_000):
            assert bytes(view.read(offset, max_bytes)) == bytes(twin.read(offset, max_bytes)), (offset, max_bytes)


@pytest.mark.parametrize("kind", ["file", "memory"])
@pytest.mark.parametrize("seed", SEEDS)
def test_view_answers_as_the_log_would(kind, seed, tmp_path):
    print(f"seed {seed}")
    rng = random.Random(seed)
    log, twin = _open(kind, tmp_path / "a"), _open(kind, tmp_path / "b")
    view, writer = LogView(log), LogWriter(log)
    epoch = 1
    for _ in range(60):
        op = rng.random()
        if op < 0.45:
            epoch += rng.random() < 0.3
            data = b"".join(_batch(view.end_offset() + 0, epoch, rng) for _ in range(1))
            view.append(data)
            twin.append(data)
        elif op < 0.65 and twin.end_offset() > twin.start_offset():
            offset = rng.randrange(twin.start_offset(), twin.end_offset())
            view.truncate_to(offset)
            twin.truncate_to(offset)
        elif op < 0.72 and OffsetAndEpoch(twin.end_offset() + 3, epoch) not in twin.snapshot_ids():
            sid = OffsetAndEpoch(twin.end_offset() + 3, epoch)
            chunks = [rng.randbytes(rng.randrange(1, 30)) for _ in range(rng.randrange(1, 3))]
            position = 0
            for chunk in chunks:
                view.snapshot_chunk(sid, position, chunk)
                position += len(chunk)
            view.install_snapshot(sid)
            w = twin.create_snapshot(sid)
            for chunk in chunks:
                w.append(chunk)
            w.freeze()
            twin.reset_to_snapshot(sid)
        else:
            writer.perform(view.take_writes())
            assert not view.has_writes()
        _same(view, twin, epoch)
    writer.perform(view.take_writes())
    _same(view, twin, epoch)
    _same(LogView(log), twin, epoch)  # the log itself now holds what the view showed
