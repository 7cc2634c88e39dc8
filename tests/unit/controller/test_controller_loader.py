"""The metadata loader's budgeted catch-up: replaying a long committed log a slice at a
time gives the same image, offset, epoch and timestamp as replaying it at once."""
from __future__ import annotations

import random

from kraft_server.controller.image import records as rec
from kraft_server.controller.image.loader import MetadataLoader
from kraft_server.log.memory import MemoryLog
from wire.messages import LeaderChangeMessage
from wire.records import ControlRecordType, build_control_batch, build_value_batch, read_header, walk


def _log(seed: int, batches: int = 300) -> MemoryLog:
    """Data batches (features, configs, NoOps, NoOp-only batches) and control batches,
    over several epochs."""
    rng = random.Random(seed)
    log, epoch, now = MemoryLog(), 1, 1_700_000_000_000
    for i in range(batches):
        now += rng.randint(0, 5)
        base = log.end_offset()
        if rng.random() < 0.1:
            epoch += 1
            log.append(build_control_batch(base, epoch, now, [(ControlRecordType.LEADER_CHANGE,
                                                             LeaderChangeMessage(leader_id=1, voters=[], granting_voters=[]))]))
            continue
        values = []
        for _ in range(rng.randint(1, 6)):
            kind = rng.random()
            if kind < 0.5:
                values.append(rec.no_op())
            elif kind < 0.8:
                values.append(rec.config(4, "", f"name-{rng.randint(0, 20)}", str(rng.randint(0, 9))))
            else:
                values.append(rec.feature_level(f"feature.{rng.randint(0, 5)}", rng.randint(0, 3)))
        log.append(build_value_batch(base, epoch, now, values))
    log.flush()
    return log


def _state(loader: MetadataLoader):
    img = loader.image
    return img.snapshot_records(), img.offset, img.epoch, img.last_timestamp, loader.next_offset


def test_a_budgeted_catch_up_equals_one_catch_up_and_stops_near_its_budget():
    seed = random.randrange(1 << 30)
    print(f"loader seed {seed}")
    log = _log(seed)
    end = log.end_offset()
    whole = MetadataLoader(log)
    whole.catch_up(end)
    infos = walk(log.read(0, 1 << 30))
    last = infos[-1]
    assert whole.next_offset == end == last.next_offset
    assert (whole.image.offset, whole.image.epoch) == (last.last_offset, last.epoch)
    assert whole.image.last_timestamp == read_header(log.read(last.base_offset, 1), 0).max_timestamp

    sizes = {info.next_offset: info.end - info.start for info in infos}
    for budget in (1, 100, 1000):
        sliced = MetadataLoader(log)
        calls = 0
        while sliced.behind(end):
            before = sliced.next_offset
            replayed, _ = sliced.catch_up(end, budget)
            calls += 1
            assert sliced.next_offset > before  # at least one batch each time
            # whole batches, stopping once the budget is reached
            assert replayed - sizes[sliced.next_offset] < budget
            assert sliced.image.offset == sliced.next_offset - 1
        assert _state(sliced) == _state(whole), (seed, budget)
        assert calls > 1


def test_catch_up_stops_at_the_high_watermark_on_a_batch_boundary():
    log = _log(7, batches=40)
    infos = walk(log.read(0, 1 << 30))
    middle = infos[len(infos) // 2]
    loader = MetadataLoader(log)
    loader.catch_up(middle.last_offset)  # the batch holding the watermark is not committed
    assert loader.next_offset == middle.base_offset
    loader.catch_up(middle.next_offset)
    assert loader.next_offset == middle.next_offset
