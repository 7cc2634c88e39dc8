"""KIP-868 metadata transactions: the records of an aborted transaction are dropped.

The active controller writes a multi-batch change as ``BeginTransactionRecord``, the
records, then ``EndTransactionRecord`` (committed) or ``AbortTransactionRecord`` (a new
active controller aborts one its predecessor left open). Readers must apply the records
of an ended transaction only, so rows inside a transaction are held back until its end:

- End: the held rows are emitted, in offset order, with the Begin and End markers;
- Abort: only the Begin and Abort markers are emitted, the rows between are dropped;
- a Begin while one is open: the open one's rows are dropped (Kafka refuses such a log;
  we log a warning and keep going);
- the input ends inside a transaction: its rows stay pending. In a stream they are kept
  in the query's state (checkpointed, so a restart resumes with them); a batch job
  leaves them out (the transaction is not over).

This works on raw source rows (``partition``, ``offset``, ``timestamp``, ``value``) before
decoding: the marker type is read from the value's frame.
"""
from __future__ import annotations

import io
import logging

import pandas as pd
import pyarrow as pa

from wire.exceptions import DecodeError
from wire.records import unframe_metadata_record

log = logging.getLogger(__name__)

BEGIN, END, ABORT = 23, 24, 25

RAW_COLUMNS = ("partition", "offset", "timestamp", "value")
RAW_SCHEMA_DDL = "partition int, offset bigint, timestamp timestamp, value binary"
STATE_SCHEMA_DDL = "pending binary"


def record_type(value) -> int | None:
    """The metadata record type in a value's frame, or None when it has none."""
    try:
        return unframe_metadata_record(value)[0]
    except (DecodeError, TypeError):
        return None


def split(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """``rows`` (in offset order) -> (rows to emit, rows of a transaction still open)."""
    keep = [True] * len(rows)
    open_at = None
    for i, value in enumerate(rows["value"]):
        kind = record_type(value)
        if kind == BEGIN:
            if open_at is not None:
                log.warning("BeginTransaction at offset %s inside the transaction begun at %s:"
                            " dropping that one's records", rows["offset"].iat[i], rows["offset"].iat[open_at])
                keep[open_at + 1:i] = [False] * (i - open_at - 1)
            open_at = i
        elif kind == END:
            open_at = None
        elif kind == ABORT and open_at is not None:
            keep[open_at + 1:i] = [False] * (i - open_at - 1)
            open_at = None
    mask = pd.Series(keep, index=rows.index)
    if open_at is None:
        return rows[mask], None
    return rows.iloc[:open_at][mask.iloc[:open_at]], rows.iloc[open_at:]


def merge(pending: pd.DataFrame | None, frames) -> pd.DataFrame:
    """The held rows followed by new ones, in offset order, each offset once."""
    parts = ([pending] if pending is not None else []) + [f for f in frames if len(f)]
    if not parts:
        return pd.DataFrame({c: [] for c in RAW_COLUMNS})
    rows = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].reset_index(drop=True)
    rows = rows.drop_duplicates(subset="offset", keep="first")
    return rows.sort_values("offset", kind="stable").reset_index(drop=True)


def dump_pending(rows: pd.DataFrame) -> bytes:
    """Held rows as Arrow IPC bytes (the stream state)."""
    table = pa.Table.from_pandas(rows[list(RAW_COLUMNS)], preserve_index=False)
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def load_pending(blob) -> pd.DataFrame:
    with pa.ipc.open_stream(pa.py_buffer(bytes(blob))) as reader:
        return reader.read_all().to_pandas()


def stream_step(key, frames, state):
    """``applyInPandasWithState`` function: one partition's rows of one micro-batch."""
    pending = load_pending(state.get[0]) if state.exists else None
    rows = merge(pending, frames)
    out, still_open = split(rows)
    if still_open is None:
        if state.exists:
            state.remove()
    else:
        state.update((dump_pending(still_open),))
    if len(out):
        yield out[list(RAW_COLUMNS)]


def batch_step(rows: pd.DataFrame) -> pd.DataFrame:
    """``applyInPandas`` function: one partition's whole range; an open transaction is left out."""
    out, _ = split(merge(None, [rows]))
    return out[list(RAW_COLUMNS)]
