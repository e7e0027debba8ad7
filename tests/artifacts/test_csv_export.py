"""Every Arrow type becomes a CSV cell: numbers as they are, anything else text, neutralised,
including the types a Parquet file cannot hold (a dataset's batch may be any Arrow batch)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

from jupyter_analyst.artifacts.csv_export import cells

F = "=SUM(A1:Z99)"


class Opaque(pa.ExtensionType):
    """An extension type the export does not know: its storage's cells."""

    def __init__(self) -> None:
        super().__init__(pa.binary(), "test.opaque")

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        return cls()


@pytest.mark.parametrize(("column", "expected"), [
    (pa.array([pa.MonthDayNano([14, 3, 5_000_000_000]), pa.MonthDayNano([0, -1, 0])], pa.month_day_nano_interval()),
     ["P1Y2M3DT5S", "P-1D"]),
    (pa.UnionArray.from_sparse(pa.array([0, 1], pa.int8()), [pa.array([F, "s"]), pa.array([1, 2])]),
     ['"=SUM(A1:Z99)"', "2"]),
    (pa.array([[F], None], pa.list_view(pa.string())), ['["=SUM(A1:Z99)"]', None]),
    (pa.array([[1]], pa.large_list_view(pa.int8())), ["[1]"]),
    (pa.array([np.float16(1.5), None], pa.float16()), [1.5, None]),
    (pa.array([float("nan"), float("-inf")]), None),  # floats stay floats
    (pa.ExtensionArray.from_storage(Opaque(), pa.array([F.encode()])), [F.encode().hex()]),
    (pa.RunEndEncodedArray.from_arrays([2], pa.array([F])), ["'" + F, "'" + F]),
    (pa.array([dt.timedelta(days=-1)], pa.duration("s")), ["PT-24H"]),
    (pa.array([" =1+1", "\n@x", "|cmd", "%x", "＝1", "plain", "a=b"]),
     ["' =1+1", "'\n@x", "'|cmd", "'%x", "'＝1", "plain", "a=b"]),
])
def test_a_column_of_any_type_becomes_cells(column, expected):
    written = cells(column)
    if expected is None:
        assert written is column
    else:
        assert written.to_pylist() == expected


def test_a_time_zone_the_database_does_not_know_is_written_in_utc():
    column = pa.array([0], pa.int64()).view(pa.timestamp("s", "Mars/Olympus_Mons"))
    assert cells(column).to_pylist() == ["1970-01-01 00:00:00+00:00"]


def test_a_value_python_cannot_hold_says_so_in_its_cell_and_the_rest_convert():
    column = pa.array([[300_000_000_000_000], [1]], pa.list_(pa.int64())).cast(pa.list_(pa.timestamp("s")))
    first, second = cells(column).to_pylist()
    assert first.startswith('"(unreadable: ')
    assert second == '["1970-01-01 00:00:01"]'
