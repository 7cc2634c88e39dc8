"""Committed batches and snapshots → ``MetadataImage`` (Kafka's ``MetadataLoader`` fed
by ``KafkaRaftClient``'s listener callbacks).

Rules, as the raft client applies them to its listeners:

* only batches wholly below the high watermark are replayed (committed data); we
  also stop at the flushed offset, so the image never holds what a crash could
  take from this node's log;
* a fresh loader (next offset 0, i.e. start-up) is handed the latest snapshot when
  there is one besides the bootstrap checkpoint, and then replays only the log
  after it, even when the log still starts at 0 (``updateListenersProgress``:
  ``nextExpectedOffset == 0 && latestSnapshot present``); so is a loader whose
  next offset fell below the log start (a follower that installed a snapshot, or
  retention); otherwise the log is replayed from where we are;
* control batches (LeaderChange, KRaftVersion, Voters) move the offset but are not
  metadata.

PartitionRecords are decoded when their topic is first read (``MetadataImage.replay``),
so loading a snapshot costs little more than reading it.
Replay allocates many long-lived objects; ``collector.py`` keeps CPython's cyclic
collector off them: it is paused while a slice or a snapshot is replayed, and after
a large snapshot the image is moved out of its reach (``gc.freeze``).
"""
from __future__ import annotations

from kraft_server.raft import MAX_BATCH_BYTES
from wire.messages import NoOpRecord
from wire.records import ControlRecordType, batch_records, batch_values, control_records, read_header, walk

from .collector import FREEZE_RECORDS, LARGE_REPLAY_BYTES, Freezer, collector_paused, freeze
from .metadata_image import MetadataImage


# A NoOpRecord value (frame version 1, type 20) changes nothing: not even copied out.
NO_OP_PREFIX = bytes((1, NoOpRecord.API_KEY))


def batch_timestamp(buf, info) -> int:
    return read_header(buf, info.start).max_timestamp


class MetadataLoader:
    def __init__(self, log) -> None:
        self.log = log
        self.image = MetadataImage()
        self.next_offset = 0
        self.loaded_snapshot = None  # id of the snapshot the image was last rebuilt from
        self.freezer = Freezer()  # keeps the collector off the image (collector.py)

    def catch_up(self, high_watermark: int | None, budget: int | None = None) -> tuple[int, bool]:
        """Replay what is committed, or about ``budget`` bytes of it (whole batches, at
        least one) so that a long catch-up does not hold the event loop; ``behind``
        says whether more is ready. Returns (bytes of log batches replayed, snapshot loaded)."""
        log = self.log
        if high_watermark is None or (high_watermark <= self.next_offset and self.next_offset >= log.start_offset()):
            return 0, False  # nothing new committed (the common case)
        limit = min(high_watermark, log.flushed_offset(), log.end_offset())
        loaded = False
        if self.next_offset < high_watermark and (self.next_offset == 0
                                                  or self.next_offset < log.start_offset()):
            # KafkaRaftClient.updateListenersProgress: a new listener (next offset 0)
            # or one below the log start is handed the latest snapshot, if any.
            snap = log.latest_snapshot()
            if snap is not None and snap.offset > self.next_offset:
                self.load_snapshot(snap)
                loaded = True
        if self.next_offset < log.start_offset():
            return 0, loaded  # nothing to rebuild from (cannot happen with a sane log)
        with collector_paused():
            return self._replay_log(log, limit, budget), loaded

    def _replay_log(self, log, limit: int, budget: int | None) -> int:
        replayed = 0
        img = self.image
        while self.next_offset < limit and (budget is None or replayed < budget):
            # at most what is left of the budget (the log returns at least one batch)
            want = MAX_BATCH_BYTES if budget is None else min(budget - replayed, MAX_BATCH_BYTES)
            data = log.read(self.next_offset, want)
            if not data:
                break
            if len(data) >= LARGE_REPLAY_BYTES:
                with self.freezer.large_replay(img):
                    replayed, last = self._replay_data(data, limit, budget, replayed)
            else:
                replayed, last = self._replay_data(data, limit, budget, replayed)
            if last is None:
                break
            # the image is at the slice's last batch (a control batch moves the offset only)
            img.offset, img.epoch = last.last_offset, last.epoch
            img.last_timestamp = batch_timestamp(data, last)
            self.next_offset = last.last_offset + 1
        return replayed

    def _replay_data(self, data, limit: int, budget: int | None, replayed: int):
        """Replay the batches of ``data`` from ``next_offset``; returns (bytes replayed
        in all, the last batch replayed or None)."""
        replay = self.image.replay
        last = None
        for info in walk(data):
            offset = info.last_offset
            if offset < self.next_offset:
                continue
            if offset >= limit or (budget is not None and last is not None and replayed >= budget):
                break
            if not info.is_control:
                # Records are replayed "at" their batch's last offset: a broker applies
                # whole batches, so its registration counts as caught up from there (we
                # and Kafka write the RegisterBrokerRecord last in its batch).
                for value in batch_values(data, info, skip=NO_OP_PREFIX):
                    replay(value, offset)
            replayed += info.end - info.start
            last = info
        return replayed, last

    def behind(self, high_watermark: int | None) -> bool:
        """Is a committed, flushed batch waiting to be replayed?"""
        log = self.log
        return high_watermark is not None and self.next_offset < min(
            high_watermark, log.flushed_offset(), log.end_offset())

    def load_snapshot(self, snapshot_id) -> None:
        """Replace the image with the snapshot's content."""
        data = self.log.read_snapshot(snapshot_id, 0, self.log.snapshot_size(snapshot_id))
        img = MetadataImage()
        records = 0
        with collector_paused():
            for info in walk(data):
                if info.is_control:
                    for kind, msg in control_records(data, info):
                        if kind is ControlRecordType.SNAPSHOT_HEADER:
                            img.last_timestamp = msg.last_contained_log_timestamp
                else:
                    for _, value in batch_records(data, info):
                        img.replay(value, snapshot_id.offset - 1)
                    records += info.last_offset - info.base_offset + 1
        if records >= FREEZE_RECORDS:
            self.image = None  # the image replaced (frozen too, maybe) goes before the rest is frozen
            freeze(whole=True)
        img.offset, img.epoch = snapshot_id.offset - 1, snapshot_id.epoch
        self.image = img
        self.next_offset = snapshot_id.offset
        self.loaded_snapshot = snapshot_id
