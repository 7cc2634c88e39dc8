"""The controller bench reads a controller's metadata log from its files, the same way
for ours and for Kafka's (both write Kafka's segment format): ``LogTail`` replays what
was appended since the last call into a ``MetadataImage``, so the bench knows every
partition's leader and epochs (what a broker stand-in must send in AlterPartition) and
when the controller wrote its PartitionChangeRecords (the batch timestamp is the
controller's wall clock at append)."""
from __future__ import annotations

from pathlib import Path

from kraft_server.controller.image.metadata_image import MetadataImage
from kraft_server.controller.image.records import PARTITION_CHANGE_RECORD, unframe
from wire.records import batch_records, iter_headers, read_header, walk

PARTITION_DIR = "__cluster_metadata-0"


class LogTail:
    def __init__(self, data_dir: Path) -> None:
        self.dir = data_dir / PARTITION_DIR
        self.image = MetadataImage()
        self.read_to: dict[Path, int] = {}
        self.next_offset = 0
        self.change_times: list[float] = []  # wall s of each batch holding a PartitionChangeRecord
        self.change_ends: list[int] = []  # and its last offset

    def poll(self) -> MetadataImage:
        for seg in sorted(self.dir.glob("*.log")):
            pos = self.read_to.get(seg, 0)
            with open(seg, "rb") as f:
                f.seek(pos)
                buf = f.read()
            end = 0
            for at, header in iter_headers(buf):
                end = at + 8 + 4 + header.batch_length
            if end:
                self._replay(buf[:end])
                self.read_to[seg] = pos + end
        return self.image

    def _replay(self, buf: bytes) -> None:
        for info in walk(buf):
            if info.is_control or info.last_offset < self.next_offset:
                continue  # a segment re-read from its start after a roll
            changed = False
            for i, (_, value) in enumerate(batch_records(buf, info)):
                if info.base_offset + i < self.next_offset:
                    continue
                self.image.replay(value, info.base_offset + i)
                changed = changed or unframe(value)[0] == PARTITION_CHANGE_RECORD
            self.next_offset = info.last_offset + 1
            if changed:
                self.change_times.append(read_header(buf, info.start).max_timestamp / 1000)
                self.change_ends.append(info.last_offset)

    def partitions(self):
        """``(Topic, PartitionRecord)`` of every partition in the image."""
        return self.image.topics.partitions()
