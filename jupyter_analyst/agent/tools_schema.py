"""The tool definitions the model is given (the canonical tool contract of DESIGN.md)."""

from __future__ import annotations

from typing import Any

_EXPECT: dict[str, Any] = {
    "type": "object",
    "description": "Optional: what you expect the step to produce; checked against the result.",
    "properties": {
        "rows": {"type": "integer", "description": "expected number of rows"},
        "columns": {"type": "array", "items": {"type": "string"}, "description": "expected column names"},
        "artifact_type": {"type": "string", "description": "dataset, image, file or text"},
        "artifact_ids": {"type": "array", "items": {"type": "string"}, "description": "expected artifact ids"},
    },
}


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOLS: list[dict[str, Any]] = [
    _tool("list_tables", "List the data source's tables and views with their row counts.", {}, []),
    _tool(
        "describe_table",
        "Show a table's columns, their types, its row count and a few sample rows.",
        {"table": {"type": "string", "description": "the table's name, as list_tables gives it"}},
        ["table"],
    ),
    _tool(
        "run_sql",
        "Run ONE read-only SQL query against the data source. The result is stored as a dataset "
        "artifact and loaded into the Python kernel as a pandas DataFrame named `name`. Returns the "
        "artifact id, row count, columns and sample rows. An identical query is not run twice.",
        {
            "sql": {"type": "string", "description": "one SELECT query (CTEs allowed)"},
            "name": {"type": "string", "description": "Python variable name for the DataFrame, e.g. monthly_revenue"},
            "expect": _EXPECT,
        },
        ["sql", "name"],
    ),
    _tool(
        "run_python",
        "Run Python code in the Jupyter kernel, where the datasets are pandas DataFrames. pandas is "
        "imported as pd. Figures you show (plt.show()) and files you write under outputs/ become "
        "artifacts. Returns printed output, errors and new artifact ids. Identical code is not run twice.",
        {"code": {"type": "string", "description": "the Python code"}, "expect": _EXPECT},
        ["code"],
    ),
    _tool(
        "list_artifacts",
        "List this thread's artifacts (datasets, charts, files): id, name, type, producer, fingerprint.",
        {
            "type": {"type": "string", "description": "only this type: dataset, image, file or text"},
            "name": {"type": "string", "description": "only names containing this text"},
        },
        [],
    ),
]
