"""A SQL step's notebook cell runs exactly the SQL the step ran."""

from __future__ import annotations

import ast

import pytest

from jupyter_analyst.notebooks.trail import sql_cell_source


@pytest.mark.parametrize("sql", [
    "SELECT 'a\\nb' AS text",
    "SELECT '\\\\' AS backslash, '\\t' AS tab",
    'SELECT \'"""\' AS quotes',
    "SELECT 'ends with a backslash \\\\'",
])
def test_the_cell_holds_the_sql_unchanged(sql):
    cell = sql_cell_source("result", sql)
    call = ast.parse(cell).body[0].value
    assert ast.literal_eval(call.args[0]).strip() == sql
