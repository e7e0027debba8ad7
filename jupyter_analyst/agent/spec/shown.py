"""How much of a result the model is shown, and what it is told of the rest.

A result the model reads is either whole or says what it leaves out and how to see it. A
model trusts what it is sent: five rows of thirty-five beside "truncated: false" are read as
the whole answer. So a dataset's rows come back whole within a budget in rows and in
characters, or as "the first k of n rows" with the way to the others; printed text keeps its
head and its tail (a conclusion is printed last), the middle elided with its size and how to
see it.

The model is sent a view of a result (:func:`model_view`): rows as lists in the order of the
columns, not one object per row repeating every column name; flags it does not need left
out. The events and the notebook keep the result as it is.
"""

from __future__ import annotations

import json
from typing import Any

from ..._text import how_many

#: Rows of a dataset shown to the model at most...
RESULT_ROWS = 50
#: ...and the characters they may take (as JSON); a result within both comes back whole.
RESULT_CHARS = 4_000
#: A longer value in a shown row (text, or a nested value as JSON) is cut to this many
#: characters, saying so and its whole length: a dataset's rows and a table's sample alike.
CELL_CHARS = 200
#: Rows shown of a result that does not come back whole: a preview, the rest a print away.
PREVIEW_ROWS = 10
#: Significant digits a float is shown with: past them a double's digits are noise of its sums.
FLOAT_DIGITS = 12


def shown_value(value: Any) -> tuple[Any, bool]:
    """A cell as the model sees it, and whether it was cut: the one place every surface
    that shows the model a value of the data (a dataset's rows, a table's sample) goes through.

    >>> shown_value(113624.7700000001), shown_value("x" * 300)[0][-40:], shown_value(None)
    ((113624.77, False), 'xxx... (cut here: 300 characters in all)', (None, False))
    >>> shown_value({"k": "v" * 3_900})[0][-42:]
    'vvv... (cut here: 3,909 characters in all)'
    """
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        return float(f"{value:.{FLOAT_DIGITS}g}"), False
    text = value if isinstance(value, str) else None
    if isinstance(value, dict | list):  # a STRUCT, MAP or LIST: as long as its JSON
        text = json.dumps(value, default=str, ensure_ascii=False)
    if text is not None and len(text) > CELL_CHARS:
        return f"{text[:CELL_CHARS]}... (cut here: {how_many(len(text), 'character')} in all)", True
    return value, False


def sample_rows(sample: list[Any]) -> list[Any]:
    """A table's sample rows (objects by column) with each value as the model sees it.

    >>> sample_rows([{"a": 0.30000000000000004, "b": "x" * 300}])[0]["b"][-8:]
    ' in all)'
    """
    return [{k: shown_value(v)[0] for k, v in row.items()} if isinstance(row, dict) else row for row in sample]


def table_rows(columns: list[str], sample: list[dict[str, Any]]) -> tuple[list[list[Any]], bool]:
    """The rows as lists in the order of ``columns``, and whether a value was cut.

    >>> table_rows(["a", "b"], [{"a": 1, "b": "x"}, {"b": "y", "a": 2}])
    ([[1, 'x'], [2, 'y']], False)
    """
    rows: list[list[Any]] = []
    cut = False
    for row in sample:
        shown = []
        for column in columns:
            value, was_cut = shown_value(row.get(column))
            shown.append(value)
            cut = cut or was_cut
        rows.append(shown)
    return rows, cut


def rows_within(rows: list[list[Any]], *, max_rows: int = RESULT_ROWS, max_chars: int = RESULT_CHARS) -> int:
    """How many leading ``rows`` fit the budget (at least one, when there is one: a row
    alone over the budget is still shown, its long values already cut).

    >>> rows_within([[1], [2], [3]], max_rows=2), rows_within([["abcd"]] * 5, max_chars=20)
    (2, 2)
    """
    size = 0
    for n, row in enumerate(rows[:max_rows]):
        size += len(json.dumps(row, default=str)) + 2
        if size > max_chars and n > 0:
            return n
    return min(len(rows), max_rows)


def rows_shown(rows: list[list[Any]], total: int) -> int:
    """How many of a result's first ``rows`` (of ``total``) the model is sent: all of them
    when they fit the budget; otherwise a preview (the rest is in the kernel).

    >>> rows_shown([[i] for i in range(35)], 35), rows_shown([[i] for i in range(50)], 2000)
    (35, 10)
    """
    fit = rows_within(rows)
    if fit >= total:
        return total
    return min(fit, PREVIEW_ROWS)


def shown_line(name: str, shown: int, total: int, *, dropped: str = "", cut: bool = False) -> str:
    """What the rows sent are of the dataset, and how to see the others.

    >>> shown_line("d", 35, 35)
    'all 35 rows'
    >>> shown_line("d", 10, 2000)
    'the first 10 of 2,000 rows; all 2,000 are in the DataFrame `d`: print the part you need with run_python (e.g. print(d.iloc[10:50].to_string())), or aggregate or filter in SQL'
    """
    if shown >= total:
        line = f"all {total:,} rows" if total != 1 else "the one row"
        if total == 0:
            line = "no rows"
    else:
        line = (f"the first {shown:,} of {total:,} rows; all {total:,} are in the DataFrame `{name}`: print the part "
                f"you need with run_python (e.g. print({name}.iloc[{shown}:{shown + 40}].to_string())), "
                "or aggregate or filter in SQL")
    if cut:
        line += f"; values longer than {CELL_CHARS} characters are cut here (whole in the DataFrame)"
    if dropped:
        line += f"; {dropped}"
    return line


#: Keys of a dataset result the model is not sent: each says again what another says
#: (``truncated`` and ``row_cap``: ``shown`` says what the row cap dropped; ``intent``:
#: ``intent_note`` is the same in one line). The panel and the thread's memory read them.
_NOT_FOR_MODEL = ("truncated", "row_cap", "intent")


def model_view(result: dict[str, Any]) -> dict[str, Any]:
    """The result as the model is sent it (see the module docstring); results other than a
    dataset's are sent as they are, but for ``reused``, said only when true, and a table's
    sample (``describe_table``), its values shown as a dataset's are.

    >>> model_view({"dataset": "d", "rows": 1, "columns": [{"name": "a", "type": "INTEGER"}],
    ...             "sample": [{"a": 1}], "shown": "the one row", "truncated": False, "reused": False})
    {'dataset': 'd', 'rows': 1, 'columns': {'a': 'INTEGER'}, 'data': [[1]], 'shown': 'the one row'}
    """
    out = {k: v for k, v in result.items() if not (k == "reused" and v is False)}
    columns, sample = out.get("columns"), out.get("sample")
    if "shown" not in out or not isinstance(columns, list) or not isinstance(sample, list):
        if isinstance(sample, list):
            out["sample"] = sample_rows(sample)
        return out
    names = [str(c.get("name")) for c in columns if isinstance(c, dict)]
    view: dict[str, Any] = {}
    for key, value in out.items():
        if key in _NOT_FOR_MODEL:
            continue
        if key == "columns":
            view[key] = {str(c.get("name")): c.get("type") for c in columns if isinstance(c, dict)}
        elif key == "sample":
            view["data"] = table_rows(names, [r for r in sample if isinstance(r, dict)])[0]
        else:
            view[key] = value
    return view
