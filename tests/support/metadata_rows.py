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


def dump_log_rows(data: Path, below: int | None = None) -> list[tuple[int, str, int]]:
    """``[(offset, record type as Kafka names it, version)]`` of every data record, as
    Apache Kafka's ``kafka-dump-log --cluster-metadata-decoder`` reads the segments."""
    import json
    import re

    from tools.kafka_dist.controller import run_tool
    files = ",".join(str(p) for p in segment_files(data))
    out = run_tool("kafka-dump-log", "--cluster-metadata-decoder", "--files", files).stdout
    rows = []
    for match in re.finditer(r"^\| offset: (\d+) .* payload: (\{.*\})$", out, re.MULTILINE):
        offset, payload = int(match.group(1)), json.loads(match.group(2))
        if below is None or offset < below:
            rows.append((offset, payload["type"], payload["version"]))
    return rows


def kafka_type_name(record_name: str) -> str:
    """``FeatureLevelRecord`` -> ``FEATURE_LEVEL_RECORD`` (Kafka's MetadataRecordType names)."""
    from codegen.model import snake_case
    return snake_case(record_name).upper()
