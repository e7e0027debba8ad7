"""What the receipts are handed: values as cells, kept as the types they are, and no data
library imported to read them."""

from __future__ import annotations

import ast
import sys
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest

import jupyter_analyst.receipts as receipts_package
from jupyter_analyst.receipts import Evidence


def test_cells_keep_their_types_and_a_decimal_is_a_number():
    row = [True, 1, 1.5, "AA", date(2024, 3, 1), datetime(2024, 3, 1, 5), Decimal("1.25"), None]
    shown = Evidence(call_id="c", tool="run_sql", columns=list("abcdefgh"), rows=[row]).rows[0]
    assert [type(v) for v in shown] == [bool, int, float, str, date, datetime, float, type(None)]


def test_a_result_with_a_table_and_named_values_or_neither():
    assert Evidence(call_id="c", tool="run_python", scalars={"mean": 21.93}).rows == []
    assert Evidence(call_id="c", tool="list_tables").scalars == {}
    with pytest.raises(ValueError, match="extra"):
        Evidence(call_id="c", tool="t", cells=[1])


def test_the_package_imports_only_the_standard_library_and_pydantic():
    """Callers hand values in; nothing here reads a dataset (no pandas, Arrow or DuckDB)."""
    imported = set()
    for path in Path(receipts_package.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                imported.add((node.module or "").split(".")[0])
    assert imported - sys.stdlib_module_names == {"pydantic"}
