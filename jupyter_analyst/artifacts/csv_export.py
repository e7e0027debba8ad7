"""A dataset as CSV: its Parquet blob converted batch by batch, safe to open in a spreadsheet.

The rows are the model's (its SQL or code chose them, and the source's data may be hostile):
a text cell such as ``=HYPERLINK("http://evil", "x")`` would run as a formula where the file
is opened in a spreadsheet. Every text cell (and column name) that a spreadsheet would read
as a formula, one starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, is
written with a leading ``'``, as OWASP advises; numbers, dates and the rest are written as
they are. A dataset is never read whole: one batch of rows at a time, so a large one takes
the memory of a batch.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

#: Rows converted at a time.
BATCH_ROWS = 10_000
#: What a spreadsheet reads as the start of a formula.
_FORMULA = re.compile(r"^[=+\-@\t\r]")


def neutralised(text: str) -> str:
    """``text`` as a spreadsheet shows it, never as a formula it runs.

    >>> neutralised("=1+1"), neutralised("@SUM(A1)"), neutralised("-2"), neutralised("a=b")
    ("'=1+1", "'@SUM(A1)", "'-2", 'a=b')
    """
    return "'" + text if _FORMULA.match(text) else text


def csv_name(name: str) -> str:
    """The file name a dataset's CSV is saved under: its own, with ``.csv`` for ``.parquet``.

    >>> csv_name("outputs/sales.parquet"), csv_name("by_region"), csv_name("a.pq")
    ('sales.csv', 'by_region.csv', 'a.csv')
    """
    base = name.rsplit("/", 1)[-1] or "dataset"
    return re.sub(r"\.(parquet|pq)$", "", base, flags=re.IGNORECASE) + ".csv"


def _as_text(values: list[Any]) -> list[str | None]:
    # Nested values (lists, structs, maps) have no CSV form: their JSON.
    return [None if v is None else json.dumps(v, default=str, ensure_ascii=False) for v in values]


def _writable(batch: Any) -> Any:
    """``batch`` with every text column neutralised and every column CSV can write."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = []
    for column in batch.columns:
        kind = column.type
        if pa.types.is_dictionary(kind):
            column = column.cast(kind.value_type)
            kind = column.type
        if pa.types.is_nested(kind):
            column = pa.array(_as_text(column.to_pylist()), pa.string())
        elif pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
            column = pa.array([None if v is None else v.hex() for v in column.to_pylist()], pa.string())
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            column = pc.replace_substring_regex(column, pattern=r"^([=+\-@\t\r])", replacement=r"'\1")
        columns.append(column)
    names = [neutralised(name) for name in batch.schema.names]
    return pa.RecordBatch.from_arrays(columns, names=names)


def dataset_csv(blob: BinaryIO, *, batch_rows: int = BATCH_ROWS) -> Iterator[bytes]:
    """The dataset in ``blob`` (Parquet) as UTF-8 CSV: the header, then each batch's rows.

    Blocking (it reads and converts): call ``next`` off the event loop.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(blob)
    header = True
    for batch in parquet.iter_batches(batch_size=batch_rows):
        out = io.BytesIO()
        pacsv.write_csv(_writable(batch), out, write_options=pacsv.WriteOptions(include_header=header))
        header = False
        yield out.getvalue()
    if header:  # no rows: the header alone
        out = io.BytesIO()
        pacsv.write_csv(_writable(pa.RecordBatch.from_pylist([], schema=parquet.schema_arrow)), out)
        yield out.getvalue()
