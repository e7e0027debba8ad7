"""The read-only guard: checks a parsed statement's whole syntax tree.

Regexes are not enough (a DELETE can hide in a CTE, a file read in a subquery), so every
node is visited. Only one statement, a query, may pass (DuckDB's PIVOT and UNPIVOT
statements are queries too); anything that writes, changes settings, loads code or reads
files is refused.
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import SqlRejected
from .pivot import is_statement_pivot

#: Statement and clause nodes that write, configure or leave the database.
_FORBIDDEN_NODES: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name)
    for name in (
        "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "TruncateTable",
        "Command", "Set", "Pragma", "Copy", "Attach", "Detach", "Install", "Use", "Transaction",
        "Commit", "Rollback", "LoadData", "Grant", "Revoke", "Analyze", "Refresh", "Cache",
        "Uncache", "Into", "Export", "Describe", "Summarize", "Show", "Comment", "Kill",
    )
    if hasattr(exp, name)
)

#: Table functions that only compute, never read files or the network.
SAFE_TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest", "values"})
#: Scalar functions that reveal the environment or read files.
UNSAFE_FUNCTIONS = frozenset({"getenv", "current_setting", "read_text", "read_blob", "read_csv",
                              "read_parquet", "read_json", "glob", "query", "query_table"})
_FILE_SUFFIXES = (".csv", ".tsv", ".parquet", ".json", ".ndjson", ".jsonl", ".txt", ".gz", ".zst", ".xlsx", ".db", ".duckdb")


def _function_name(node: exp.Expression) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return (node.sql_name() if hasattr(node, "sql_name") else type(node).__name__).lower()


def _refuse(message: str) -> SqlRejected:
    return SqlRejected(
        message,
        reason="sql_not_read_only",
        hint="only one read-only SELECT over the source's tables is allowed",
    )


def check_read_only(statement: exp.Expression, *, allow_file_functions: bool = False) -> None:
    """Refuse anything but one read-only query.

    >>> import sqlglot
    >>> check_read_only(sqlglot.parse_one("SELECT 1"))
    >>> check_read_only(sqlglot.parse_one("PIVOT t ON a USING SUM(b)", read="duckdb"))
    >>> check_read_only(sqlglot.parse_one("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d"))
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.SqlRejected: DELETE is not allowed: queries are read-only (hint: only one read-only SELECT over the source's tables is allowed)
    """
    if not isinstance(statement, exp.Query) and not is_statement_pivot(statement):
        raise _refuse(f"{_statement_word(statement)} is not allowed: only queries (SELECT) may run")
    for node in statement.walk():
        if isinstance(node, _FORBIDDEN_NODES):
            raise _refuse(f"{_statement_word(node)} is not allowed: queries are read-only")
        if allow_file_functions:
            continue
        if isinstance(node, exp.Table):
            target = node.this
            if isinstance(target, exp.Func):
                name = _function_name(target)
                if name not in SAFE_TABLE_FUNCTIONS:
                    raise _refuse(f"table function {name}() is not allowed: it can read files")
            elif isinstance(target, exp.Identifier) and _looks_like_path(target.name):
                raise _refuse(f"reading the file {target.name!r} is not allowed")
        elif isinstance(node, exp.Func) and _function_name(node) in UNSAFE_FUNCTIONS:
            raise _refuse(f"function {_function_name(node)}() is not allowed")
        elif isinstance(node, exp.Func) and _function_name(node).startswith("read"):
            raise _refuse(f"function {_function_name(node)}() is not allowed: it can read files")


def _looks_like_path(name: str) -> bool:
    lowered = name.lower()
    return "/" in name or "\\" in name or "://" in name or lowered.endswith(_FILE_SUFFIXES) or "*" in name


def _statement_word(node: exp.Expression) -> str:
    key = type(node).__name__
    if isinstance(node, exp.Command):
        return str(node.this).upper()
    return {"TruncateTable": "TRUNCATE", "LoadData": "LOAD DATA"}.get(key, key.upper())
