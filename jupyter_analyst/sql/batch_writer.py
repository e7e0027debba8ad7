"""A result's Arrow record batches, streamed into its Parquet file and hashed on the way.

An engine that hands over record batches (``source_engine.BatchQuery``) has them written
here, in one pass: each batch goes to ``pyarrow.parquet.ParquetWriter`` through
``stream.HashingFile``, so the file and its fingerprint come out together, as DuckDB's own
Parquet does through its pipe (``stream.copy_hashed``). The writer's settings are fixed and
row groups hold :data:`ROW_GROUP_ROWS` rows however the engine cut its batches, so the same
rows give the same bytes on every engine and every run.

A query without its own ORDER BY gets a total order first (every column ascending): its
batches are then gathered before they are written. A result's columns, sample and time
range are read from what was written, never from a second run of the query.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .._text import json_safe
from .query_model import ColumnInfo, QueryResult
from .stream import HashingFile, Staging

#: The first rows read back from a result: as many as the model may be shown of it whole.
SAMPLE_ROWS = 50
ROW_GROUP_ROWS = 122_880
_TEMPORAL = ("DATE", "TIMESTAMP", "TIME")


def write_batches(
    schema: pa.Schema, batches: Iterator[pa.RecordBatch], dest: Path, staging: Staging, *,
    ordered: bool, cap: int, dropped: int | None = 0,
) -> QueryResult:
    """Write ``batches`` (at most ``cap`` rows; ``dropped`` past it: 0 none, ``None`` more
    than were counted) to ``dest``, created in ``staging``, hashed as written."""
    if not ordered:
        table = pa.Table.from_batches(list(batches), schema=schema)
        if table.num_rows:
            keys = [(f.name, "ascending") for f in schema if not pa.types.is_null(f.type)]
            table = table.sort_by(keys) if keys else table
        batches = iter(table.to_batches())
    head: list[pa.RecordBatch] = []
    headed = 0
    rows = 0
    with staging.creating(), open(dest, "wb") as raw:
        sink = HashingFile(raw)
        with pq.ParquetWriter(sink, schema, compression="zstd") as writer:
            pending: list[pa.RecordBatch] = []
            held = 0
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                if headed < SAMPLE_ROWS:
                    head.append(batch.slice(0, SAMPLE_ROWS - headed))
                    headed += head[-1].num_rows
                pending.append(batch)
                held += batch.num_rows
                rows += batch.num_rows
                # Whole row groups as soon as they are full: what is held never passes one.
                while held >= ROW_GROUP_ROWS:
                    gathered = pa.Table.from_batches(pending, schema=schema)
                    writer.write_table(gathered.slice(0, ROW_GROUP_ROWS), row_group_size=ROW_GROUP_ROWS)
                    rest = gathered.slice(ROW_GROUP_ROWS)
                    pending, held = rest.to_batches(), rest.num_rows
            if held or not rows:
                # The last row group; an empty result is written as an empty table, as one
                # written whole would be (the same bytes whichever way it came).
                writer.write_table(pa.Table.from_batches(pending, schema=schema), row_group_size=ROW_GROUP_ROWS)
    columns = [ColumnInfo(name=f.name, type=str(f.type)) for f in schema]
    sample = [{k: json_safe(v) for k, v in row.items()}
              for row in pa.Table.from_batches(head, schema=schema).to_pylist()] if head else []
    out = QueryResult(
        rows=rows, columns=columns, elapsed_s=0.0, sample=sample, row_cap=cap,
        fingerprint=sink.fingerprint(), size=sink.size, time_range=time_range(pq.read_metadata(dest), columns),
    )
    if dropped != 0:
        cap_dropped(out, None if dropped is None else cap + dropped, cap)
    return out


def warm() -> None:
    """Import now what writing rows needs (Arrow reads a list of rows through pandas, which
    takes a few tenths of a second to import on a busy machine): called off the event loop
    when a query is coming, so its first result does not pay for it within its time limit."""
    pa.Table.from_pylist([{"x": 1}]).sort_by([("x", "ascending")])


def head_rows(written: pq.ParquetFile) -> list[dict[str, Any]]:
    """The file's first rows as JSON-safe values (read by Arrow: no engine-side conversion,
    which for DuckDB's time zones would need a module this package does not require)."""
    if written.metadata.num_rows == 0:
        return []
    batch = next(written.iter_batches(batch_size=SAMPLE_ROWS, use_threads=False), None)
    if batch is None:
        return []
    return [{k: json_safe(v) for k, v in row.items()} for row in batch.slice(0, SAMPLE_ROWS).to_pylist()]


def time_range(meta: pq.FileMetaData, columns: list[ColumnInfo]) -> dict[str, list[str]]:
    """First and last value of each date or time column, from the row groups' statistics."""
    temporal = {c.name for c in columns if c.type.upper().startswith(_TEMPORAL)}
    if not temporal:
        return {}
    low: dict[str, Any] = {}
    high: dict[str, Any] = {}
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for j in range(group.num_columns):
            chunk = group.column(j)
            name = chunk.path_in_schema
            stats = chunk.statistics
            if name not in temporal or stats is None or not stats.has_min_max:
                continue
            low[name] = stats.min if name not in low else min(low[name], stats.min)
            high[name] = stats.max if name not in high else max(high[name], stats.max)
    return {c.name: [str(low[c.name]), str(high[c.name])] for c in columns if c.name in low}


def cap_dropped(result: QueryResult, total: int | None, cap: int) -> None:
    """Record what the row cap dropped, given all the query's rows (``None``: unknown)."""
    if total is not None and total <= cap:
        return
    result.truncated = True
    result.dropped = None if total is None else total - cap
