"""A dataset as CSV: its Parquet blob converted batch by batch, safe to open in a spreadsheet.

The rows are the model's (its SQL or code chose them, and the source's data may be hostile):
a cell such as ``=HYPERLINK("http://evil", "x")`` would run as a formula where the file is
opened in a spreadsheet, whatever the column's type held it (text, bytes, a UUID, an
interval's twelve bytes, a list). So only numbers (integers, floats, decimals), booleans and
nulls are written as they are; every other column is made text first, as people read it,
and then neutralised (``csv_cells``), column names too:

- text (dictionary-encoded or not, any of Arrow's string types) as it is;
- dates ``2024-01-31``; times and timestamps ``2024-01-31 12:00:00``, the fraction of a second
  only when there is one, a time zone's offset after (``+01:00``);
- durations and intervals as ISO 8601 (``P1M2DT3H``), Parquet's INTERVAL bytes too;
- bytes in hex, a UUID in its usual form, JSON as its text;
- lists, structs, maps and unions as JSON.

A dataset is never read whole: one batch of rows at a time, so a large one takes the memory
of a batch.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import struct
import uuid
from collections.abc import Iterator
from typing import Any, BinaryIO

from .csv_cells import FORMULA, neutralised

#: Rows converted at a time.
BATCH_ROWS = 10_000


def iso_duration(months: int, days: int, nanoseconds: int) -> str:
    """A duration or interval as ISO 8601 reads it: ``P1Y2M3DT4H5M6.5S``, zero parts left out.

    >>> iso_duration(14, 3, 4 * 3600 * 10**9 + 5 * 60 * 10**9 + 6_500_000_000)
    'P1Y2M3DT4H5M6.5S'
    >>> iso_duration(0, 0, 0), iso_duration(0, -1, -1_000), iso_duration(0, 0, 90 * 10**9)
    ('PT0S', 'P-1DT-0.000001S', 'PT1M30S')
    """
    date = "".join(f"{n}{unit}" for n, unit in ((int(months / 12), "Y"), (months - int(months / 12) * 12, "M"),
                                                 (days, "D")) if n)
    sign = "-" if nanoseconds < 0 else ""
    hours, rest = divmod(abs(nanoseconds), 3600 * 10**9)
    minutes, rest = divmod(rest, 60 * 10**9)
    seconds = f"{rest // 10**9}.{rest % 10**9:09d}".rstrip("0").rstrip(".") if rest else ""
    time = "".join(f"{sign}{n}{unit}" for n, unit in ((hours, "H"), (minutes, "M"), (seconds, "S")) if n)
    return "P" + date + ("T" + time if time else "") if date or time else "PT0S"


def _plain(value: Any) -> Any:
    """A value inside a list, struct or map as JSON can hold it (``json.dumps``'s ``default``)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return iso_duration(0, value.days, (value.seconds * 10**6 + value.microseconds) * 1000)
    if isinstance(value, tuple) and hasattr(value, "nanoseconds"):  # pyarrow's MonthDayNano
        return iso_duration(value.months, value.days, value.nanoseconds)
    return str(value)  # a Decimal, a UUID, what else Arrow gives


def _texts(values: list[Any], text: Any) -> Any:
    import pyarrow as pa

    return pa.array([None if v is None else text(v) for v in values], pa.string())


def _values(column: Any) -> list[Any]:
    """``column``'s Python values; a value Python cannot hold (a timestamp past the year 9999
    inside a list) says so in its cell rather than failing the whole download."""
    import pyarrow as pa

    try:
        return column.to_pylist()
    except (ValueError, OverflowError, pa.ArrowException):
        values = []
        for scalar in column:
            try:
                values.append(scalar.as_py())
            except (ValueError, OverflowError, pa.ArrowException) as exc:
                values.append(f"(unreadable: {exc})")
        return values


def _json(value: Any) -> str:
    return json.dumps(value, default=_plain, ensure_ascii=False)


def _map(pairs: list[tuple[Any, Any]]) -> str:
    return _json(dict(pairs) if all(isinstance(k, str) for k, _ in pairs) else pairs)


def _interval(raw: bytes) -> str:
    # Parquet's INTERVAL: months, days and milliseconds, each an unsigned 32-bit little-endian.
    months, days, millis = struct.unpack("<III", raw)
    return iso_duration(months, days, millis * 10**6)


_NANOS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


def _clock(column: Any, fmt: str) -> Any:
    """Times or timestamps through ``strftime``, a fraction of zeros dropped."""
    import pyarrow.compute as pc

    return pc.replace_substring_regex(pc.strftime(column, format=fmt), pattern=r"\.0+$", replacement="")


def _timestamps(column: Any) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if kind.tz is None:
        return _clock(column, "%Y-%m-%d %H:%M:%S")
    try:
        offset = pc.strftime(column, format="%z")
    except pa.ArrowException:  # a zone the time zone database does not know: the instant in UTC
        column = column.view(pa.timestamp(kind.unit, "UTC"))
        offset = pc.strftime(column, format="%z")
    offset = pc.replace_substring_regex(offset, pattern=r"^([+-]\d\d)(\d\d)$", replacement=r"\1:\2")
    return pc.binary_join_element_wise(_clock(column, "%Y-%m-%d %H:%M:%S"), offset, "")


def _text(column: Any, *, interval: bool = False) -> Any:
    """``column`` (of any type but a number's) as text, before it is neutralised."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    types = pa.types
    if types.is_string(kind) or types.is_large_string(kind) or _is(types, "is_string_view", kind):
        return column.cast(pa.string())
    if types.is_fixed_size_binary(kind) and interval and kind.byte_width == 12:
        return _texts(column.to_pylist(), _interval)
    if types.is_binary(kind) or types.is_large_binary(kind) or types.is_fixed_size_binary(kind) \
            or _is(types, "is_binary_view", kind):
        return _texts(column.to_pylist(), bytes.hex)
    if types.is_date(kind):
        return pc.strftime(column, format="%Y-%m-%d")
    if types.is_time(kind):
        return _clock(column, "%H:%M:%S")
    if types.is_timestamp(kind):
        return _timestamps(column)
    if types.is_duration(kind):
        nanos = _NANOS[kind.unit]
        return _texts(column.cast(pa.int64()).to_pylist(), lambda n: iso_duration(0, 0, n * nanos))
    if types.is_interval(kind):
        return _texts(_values(column), _plain)
    if types.is_map(kind):  # an object when its keys are text, as JSON's are; else its pairs
        return _texts(_values(column), _map)
    if types.is_nested(kind) or isinstance(kind, (pa.ListType, pa.LargeListType, pa.MapType, pa.StructType)) \
            or types.is_union(kind) or type(kind).__name__.endswith("ListViewType"):
        return _texts(_values(column), _json)
    return _texts(_values(column), _plain)  # whatever else Arrow grows: its Python value's text


def _is(types: Any, name: str, kind: Any) -> bool:
    # Types newer than the oldest pyarrow supported (string_view, binary_view: pyarrow 16).
    return bool(getattr(types, name, lambda _: False)(kind))


def _unwrapped(column: Any) -> tuple[Any, str | None]:
    """``column`` decoded (dictionary, run-end encoding) and unwrapped from an extension type
    the export does not know (to its storage); with the name of one it knows."""
    import pyarrow as pa
    import pyarrow.compute as pc

    while True:
        kind = column.type
        if pa.types.is_dictionary(kind):
            column = column.dictionary_decode()
        elif _is(pa.types, "is_run_end_encoded", kind):
            column = pc.run_end_decode(column)
        elif isinstance(kind, pa.BaseExtensionType):
            if kind.extension_name in ("arrow.uuid", "arrow.json"):
                return column.storage, kind.extension_name
            column = column.storage
        else:
            return column, None


def cells(column: Any, *, interval: bool = False) -> Any:
    """``column`` as CSV writes it: numbers, booleans and nulls as they are; anything else as
    text, neutralised (``interval``: a Parquet INTERVAL's twelve bytes).

    >>> import pyarrow as pa
    >>> cells(pa.array([b"=SUM(A1:Z99)"], pa.binary(12))).to_pylist()
    ['3d53554d2841313a5a393929']
    >>> cells(pa.array(["=1+1", " @x", "a"]).dictionary_encode()).to_pylist()
    ["'=1+1", "' @x", 'a']
    >>> cells(pa.array([-1.5, None])).to_pylist()
    [-1.5, None]
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    column, extension = _unwrapped(column)
    kind = column.type
    if extension == "arrow.uuid":
        text = _texts(column.to_pylist(), lambda b: str(uuid.UUID(bytes=bytes(b))))
    elif extension == "arrow.json":
        text = column.cast(pa.string())
    elif pa.types.is_floating(kind):
        return column.cast(pa.float64()) if pa.types.is_float16(kind) else column
    elif pa.types.is_integer(kind) or pa.types.is_decimal(kind) or pa.types.is_boolean(kind) \
            or pa.types.is_null(kind):
        return column
    else:
        text = _text(column, interval=interval)
    return pc.replace_substring_regex(text, pattern=f"({FORMULA})", replacement=r"'\1", max_replacements=1)


def _writable(batch: Any, intervals: frozenset[str]) -> Any:
    """``batch`` as CSV writes it: every column ``cells`` of it, every name neutralised."""
    import pyarrow as pa

    names = batch.schema.names
    columns = [cells(column, interval=name in intervals) for name, column in zip(names, batch.columns, strict=True)]
    return pa.RecordBatch.from_arrays(columns, names=[neutralised(name) for name in names])


def _intervals(parquet: Any) -> frozenset[str]:
    """The top-level columns Parquet calls INTERVAL (Arrow reads their bytes, unnamed)."""
    schema = parquet.schema
    return frozenset(
        column.path for column in (schema.column(i) for i in range(len(schema)))
        if column.converted_type == "INTERVAL" and column.max_repetition_level == 0 and "." not in column.path
    )


def dataset_csv(blob: BinaryIO, *, batch_rows: int = BATCH_ROWS) -> Iterator[bytes]:
    """The dataset in ``blob`` (Parquet) as UTF-8 CSV: the header, then each batch's rows.

    Blocking (it reads and converts): call ``next`` off the event loop.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(blob)
    intervals = _intervals(parquet)
    header = True
    for batch in parquet.iter_batches(batch_size=batch_rows):
        out = io.BytesIO()
        pacsv.write_csv(_writable(batch, intervals), out, write_options=pacsv.WriteOptions(include_header=header))
        header = False
        yield out.getvalue()
    if header:  # no rows: the header alone
        out = io.BytesIO()
        pacsv.write_csv(_writable(pa.RecordBatch.from_pylist([], schema=parquet.schema_arrow), intervals), out)
        yield out.getvalue()
