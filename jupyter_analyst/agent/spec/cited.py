"""What a result offers an answer's receipts: the values it showed the model, as
:class:`~jupyter_analyst.receipts.Evidence` (a tool's ``evidence`` hook builds it with these).

Only what the model was shown counts: a dataset's rows as it was sent them (values as
``shown.py`` shows them), its row count, and printed text as its lines' tokens. A value the
model never saw is no support for a number it wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...receipts import Cell, Evidence, printed_rows
from .shown import table_rows


def shown_table(call_id: str, tool: str, result: Mapping[str, Any], *, artifact_id: str | None = None,
                scalars: Mapping[str, Any] | None = None) -> Evidence:
    """A result's table (its ``columns`` and the ``sample`` rows sent) and named values.

    >>> found = shown_table("call_1", "run_sql", {"columns": [{"name": "n", "type": "DOUBLE"}],
    ...                     "sample": [{"n": 0.30000000000000004}]}, scalars={"row_count": 1})
    >>> found.rows, found.scalars
    ([[0.3]], {'row_count': 1})
    """
    columns = [str(c.get("name")) for c in result.get("columns") or () if isinstance(c, dict)]
    sample = [r for r in result.get("sample") or () if isinstance(r, dict)]
    rows = [[_cell(v) for v in row] for row in table_rows(columns, sample)[0]]
    named = {k: _cell(v) for k, v in (scalars or {}).items() if v is not None}
    return Evidence(call_id=call_id, tool=tool, artifact_id=artifact_id, columns=columns, rows=rows, scalars=named)


def printed(call_id: str, tool: str, texts: Mapping[str, Any]) -> list[Evidence]:
    """The texts a result showed (``{"stdout": ..., "result": ...}``), each as rows of its
    lines' tokens (``receipts/printed.py``); empty texts give nothing.

    >>> [(e.columns, e.rows) for e in printed("call_2", "run_python", {"stdout": "mean 21.93", "result": None})]
    [(['stdout:1', 'stdout:2'], [['mean', '21.93']])]
    """
    found = []
    for name, text in texts.items():
        if isinstance(text, str) and text.strip():
            columns, rows = printed_rows(name, text)
            if rows:
                found.append(Evidence(call_id=call_id, tool=tool, columns=columns, rows=rows))
    return found


def _cell(value: Any) -> Cell:
    """A value as a cell: a nested value (a list, a struct) as its text."""
    return value if value is None or isinstance(value, bool | int | float | str) else str(value)

