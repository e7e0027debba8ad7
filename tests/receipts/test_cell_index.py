"""The evidence's values indexed: numbers by interval, dates by day and month, in one order
of preference."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from jupyter_analyst.receipts import Evidence
from jupyter_analyst.receipts.cell_index import CellIndex


def _table(call_id: str, columns: list[str], rows: list[list], **scalars) -> Evidence:
    return Evidence(call_id=call_id, tool="run_sql", columns=columns, rows=rows, scalars=scalars)


def _where(refs) -> list[tuple[int, int | None, str]]:
    return [(r.evidence, r.row, r.column) for r in refs]


def test_cells_of_one_value_come_latest_step_first_then_table_then_row_and_column():
    index = CellIndex([_table("a", ["x", "y"], [[5, 5], [5, 1]], n=5), _table("b", ["z"], [[1], [5]], total=5)])
    _, refs = index.nearest(4.5, 5.5, 5)
    assert _where(refs) == [(1, 1, "z"), (1, None, "total"), (0, 0, "x"), (0, 0, "y"), (0, 1, "x"), (0, None, "n")]


def test_the_value_nearest_the_one_written_wins_within_the_interval():
    index = CellIndex([_table("a", ["v"], [[21.86], [21.91], [21.94], [22.4]])])
    distance, refs = index.nearest(21.85, 21.95, 21.9)
    assert [r.value for r in refs] == [21.91] and distance == pytest.approx(0.01)
    assert index.nearest(21.95, 22.05, 22.0) is None


def test_an_edge_written_as_a_float_is_inside():
    index = CellIndex([_table("a", ["v"], [[21.85], [21.95]])])
    assert index.nearest(21.85, 21.95, 21.9) is not None
    assert [r.value for r in index.nearest(21.75, 21.85, 21.8)[1]] == [21.85]


def test_text_holding_numbers_counts_and_booleans_nan_and_words_do_not():
    index = CellIndex([_table("a", ["v"], [["1,620.00"], [True], [float("nan")], ["AA"], ["$12"], ["45%"]])])
    assert [r.row for r in index.nearest(1619.5, 1620.5, 1620)[1]] == [0]
    assert index.nearest(0.5, 1.5, 1) is None
    assert [r.number for r in index.nearest(11.5, 12.5, 12)[1]] == [12.0]
    assert [r.number for r in index.nearest(44.5, 45.5, 45)[1]] == [45.0]


def test_days_and_months_from_dates_times_and_iso_text():
    index = CellIndex([_table("a", ["d"], [[date(2024, 3, 5)], [datetime(2024, 3, 5, 10)], ["2024-03-05T00:00:00"],
                                           ["2024-03"], [date(2024, 3, 1)], ["2024-02-30"]])])
    assert [r.row for r in index.on_day(date(2024, 3, 5))] == [0, 1, 2]
    assert [r.row for r in index.in_month(2024, 3)] == [3, 4, 0, 1, 2]  # the month as written first
    assert index.on_day(date(2024, 2, 28)) == [] and index.in_month(2024, 2) == []


def test_cells_past_the_cap_are_left_and_said_to_be():
    index = CellIndex([_table("a", ["v"], [[i] for i in range(100)])], max_cells=10)
    assert index.truncated
    assert index.nearest(8.5, 9.5, 9) is not None and index.nearest(10.5, 11.5, 11) is None
    assert not CellIndex([_table("a", ["v"], [[1]])]).truncated


def test_a_row_must_have_a_cell_per_column():
    with pytest.raises(ValueError, match="row 1 has 1 cells for 2 columns"):
        _table("a", ["x", "y"], [[1, 2], [3]])
