"""A snapshot's bytes, rendered a slice at a time (Kafka's ``RecordsSnapshotWriter``
layout; Kafka writes it on the loader's own thread, beside the controller's).

Layout, every batch with the snapshot's epoch as its partition leader epoch and
offsets from 0:

* a control batch: SnapshotHeaderRecord (LastContainedLogTimestamp = append time
  of the last replayed batch) and, under kraft.version ≥ 1, KRaftVersionRecord and
  the VotersRecord in force at the snapshot's last offset;
* data batches of ``RECORDS_PER_BATCH``: the image's records (``MetadataImage.snapshot_items``);
* a control batch with the SnapshotFooterRecord.

Encoding a decoded partition costs ~10 µs, so 100,000 of them hold one turn of the
event loop for a second or more. ``SnapshotBuild`` takes the image's records when it
starts (the image replaces a partition's record on change, never edits it, so the
list stays the image at the snapshot's offset while replay goes on) and ``step``
encodes at most ``SLICE_ENCODES`` of them a turn; the file is written once the
footer is.
"""
from __future__ import annotations

import time

from wire.messages import KRaftVersionRecord, SnapshotFooterRecord, SnapshotHeaderRecord
from wire.records import ControlRecordType, build_control_batch, build_value_batch

from .topics import encode_item, partition_record_version

RECORDS_PER_BATCH = 1024
SLICE_ENCODES = 2048  # records encoded per turn of the loop (~20 ms on a loaded 2-core machine)
SLICE_BATCHES = 16  # batches built per turn (records kept as their committed bytes cost little)


class SnapshotBuild:
    def __init__(self, image, snapshot_id, kraft_version: int, voters, now_ms: int) -> None:
        """``voters``: a ``VoterSet`` (used when kraft.version ≥ 1)."""
        t0 = time.perf_counter()
        self.snapshot_id = snapshot_id
        self.epoch = snapshot_id.epoch
        self.now_ms = now_ms
        head = [(ControlRecordType.SNAPSHOT_HEADER,
                 SnapshotHeaderRecord(version=0, last_contained_log_timestamp=max(image.last_timestamp, 0)))]
        if kraft_version > 0:
            head.append((ControlRecordType.KRAFT_VERSION,
                         KRaftVersionRecord(version=0, kraft_version=kraft_version)))
            if voters is not None:
                head.append((ControlRecordType.KRAFT_VOTERS, voters.to_voters_record()))
        self.parts = [build_control_batch(0, self.epoch, now_ms, head)]
        self.offset = len(head)
        self.items = image.snapshot_items()
        self.topics = image.topics  # where an encoded partition is remembered
        self.version = partition_record_version(image.metadata_version() or 0)
        self.next = 0  # the first item not yet in a batch
        self.done = False
        self.slices = 0
        self.busy_s = time.perf_counter() - t0  # time spent on the loop's thread

    def step(self, max_encodes: int | None = None) -> bool:
        """Render whole batches until ``max_encodes`` records were encoded or
        ``SLICE_BATCHES`` batches built (at least one), then the footer once every
        record is in; True when it is."""
        if self.done:
            return True
        t0 = time.perf_counter()
        items, epoch, now_ms = self.items, self.epoch, self.now_ms
        max_encodes = SLICE_ENCODES if max_encodes is None else max_encodes
        encoded = batches = 0
        while self.next < len(items) and encoded < max_encodes and batches < SLICE_BATCHES:
            chunk = items[self.next:self.next + RECORDS_PER_BATCH]
            topics, version = self.topics, self.version
            values = [encode_item(item, topics, version) for item in chunk]
            encoded += sum(1 for item in chunk if type(item) is not bytes)
            self.parts.append(build_value_batch(self.offset, epoch, now_ms, values))
            self.offset += len(chunk)
            self.next += len(chunk)
            batches += 1
        if self.next >= len(items):
            self.parts.append(build_control_batch(self.offset, epoch, now_ms, [
                (ControlRecordType.SNAPSHOT_FOOTER, SnapshotFooterRecord(version=0))]))
            self.items = self.topics = None
            self.done = True
        self.slices += 1
        self.busy_s += time.perf_counter() - t0
        return self.done

    def data(self) -> bytes:
        if not self.done:
            raise RuntimeError("the snapshot is not rendered yet")
        return b"".join(self.parts)

    def finish(self) -> bytes:
        """Render what is left at once; the bytes."""
        while not self.step(1 << 62):
            pass
        return self.data()


def render_snapshot(image, snapshot_id, kraft_version: int, voters, now_ms: int) -> bytes:
    """The snapshot's bytes, rendered at once."""
    return SnapshotBuild(image, snapshot_id, kraft_version, voters, now_ms).finish()
