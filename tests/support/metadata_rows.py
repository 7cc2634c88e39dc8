"""The data records of a node's ``__cluster_metadata`` segments as Kafka-source rows
(what a consumer returns: control batches skipped), read straight from the files with
``wire.records``: the reference the Spark pipeline's rows are compared with."""
from __future__ import annotations

from pathlib import Path

from tests.support.kraft_nodes import segment_files


def source_rows(data: Path, below: int | None = None) -> list[dict]:
    """``[{partition, offset, timestamp (ms), value}]`` of every data record, in offset
    order; ``below``: only offsets under it (e.g. the high watermark)."""
    from wire.records import CONTROL_MASK, iter_batches
    rows = []
    for path in segment_files(data):
        for batch in iter_batches(path.read_bytes()):
            if batch.attributes & CONTROL_MASK:
                continue
            for record in batch.records:
                offset = batch.offset_of(record)
                if below is None or offset < below:
                    rows.append({"partition": 0, "offset": offset,
                                 "timestamp": batch.timestamp_of(record), "value": record.value})
    return rows
