"""The console view of metadata rows: one line a record that fits a terminal.

Columns: offset, time of day, type, version and the record's fields as JSON, cut
with ``...`` so that the table Spark's console sink draws is at most ``width``
characters wide. NoOpRecords (one every ``metadata.max.idle.interval.ms``, 500 ms by
default) are left out unless asked for; ``types`` keeps only the named record types.
"""
from __future__ import annotations

import shutil

NOOP = "NoOpRecord"
MIN_WIDTH, MAX_WIDTH = 80, 160
# What Spark's table draws around the fields column: the other columns at their
# widest (offset up to 10 digits, HH:mm:ss.SSS, the longest type name, version) and
# "| " / " " / "|" separators.
_OTHER_COLUMNS = 10 + 12 + len("RemoveUserScramCredentialRecord") + len("version")
_BORDERS = 3 * 5 + 1


def terminal_width(asked: int | None = None) -> int:
    """``asked``, else the terminal's width, kept within 80-160 columns."""
    width = asked or shutil.get_terminal_size((120, 40)).columns
    return max(MIN_WIDTH, min(MAX_WIDTH, width))


def fields_width(width: int) -> int:
    return max(16, width - _OTHER_COLUMNS - _BORDERS)


def parse_types(text: str | None, row_type) -> list[str] | None:
    """``--types`` (comma separated; "Topic" and "TopicRecord" both name TopicRecord),
    as the row type's names; None for all. An unknown name raises ValueError."""
    if not text:
        return None
    known = set(row_type.names.values())
    out = []
    for name in (t.strip() for t in text.split(",") if t.strip()):
        full = name if name.endswith("Record") else name + "Record"
        if full not in known:
            raise ValueError(f"unknown record type {name!r}; known: {', '.join(sorted(known))}")
        out.append(full)
    return out


def select_types(df, types: list[str] | None, include_noop: bool):
    """Rows of the chosen types; without a choice, every type but NoOpRecord unless
    ``include_noop``."""
    from pyspark.sql import functions as F
    if types:
        return df.where(F.col("type_name").isin(types))
    return df if include_noop else df.where((F.col("type_name") != NOOP) | F.col("type_name").isNull())


def console_rows(df, row_type, width: int):
    """offset, time, type_name, version and the fields cut to fit ``width``."""
    from pyspark.sql import functions as F
    room = fields_width(width)
    fields = F.coalesce(*[F.to_json(F.col(c)) for c in row_type.columns.values()], F.col("error"), F.lit("{}"))
    cut = F.when(F.length(fields) > room, F.concat(F.substring(fields, 1, room - 3), F.lit("..."))) \
        .otherwise(fields)
    return df.select("offset", F.date_format("timestamp", "HH:mm:ss.SSS").alias("time"), "type_name",
                     "version", cut.alias("fields"))
