"""The read-only guard: checks a parsed statement's whole syntax tree.

Regexes are not enough (a DELETE can hide in a CTE, a file read in a subquery), so every
node is visited. Only one statement, a query, may pass (DuckDB's PIVOT and UNPIVOT
statements are queries too); anything that writes, changes settings or loads code is
refused, and every function call, wherever it stands, must be on the dialect's allow-list
(``functions.py``). The engine refuses the same on its own (``../sealed.py``).
"""

from __future__ import annotations

from sqlglot import exp

from ...errors import SqlRejected
from .functions import check_call
from .pivot import is_statement_pivot
from .preparation import Preparation

#: Statement and clause nodes that write, configure or leave the database.
FORBIDDEN_NODES: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name)
    for name in (
        "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "TruncateTable",
        "Command", "Set", "Pragma", "Copy", "Attach", "Detach", "Install", "Use", "Transaction",
        "Commit", "Rollback", "LoadData", "Grant", "Revoke", "Analyze", "Refresh", "Cache",
        "Uncache", "Into", "Export", "Describe", "Summarize", "Show", "Comment", "Kill",
        # Hive's script transform (``SELECT TRANSFORM(x) USING 'cmd'``) runs a command on the
        # cluster's machines for each row.
        "QueryTransform",
    )
    if hasattr(exp, name)
)

#: A table read as it was at another time or version: Trino's, BigQuery's and Databricks'
#: ``FOR TIMESTAMP/VERSION/SYSTEM_TIME AS OF`` and ``VERSION/TIMESTAMP AS OF`` (``Version``),
#: Snowflake's ``AT(...)``/``BEFORE(...)`` and DuckDB's ``AT (VERSION => ...)``
#: (``HistoricalData``), Snowflake's ``CHANGES(...)``. Read-only, but refused: a step is keyed,
#: checked and verified against the tables as they are now (the source's data version, the
#: columns the qualifier knows, the table fingerprints ``verify`` compares), none of which
#: says what a table held at another point, so a step keyed so could reuse or verify wrongly.
TIME_TRAVEL_NODES: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name) for name in ("Version", "HistoricalData", "Changes") if hasattr(exp, name)
)

#: Dialects of Spark: a file can be read as a table (``csv.`path```, whatever the path looks
#: like) and ``${...}`` anywhere in the text is replaced before parsing (``${env:HOME}``).
_SPARK_DIALECTS = ("spark", "spark2", "databricks")
#: Spark's data source formats: ``format.`path``` reads the path with that reader.
_SPARK_FORMATS = frozenset({"csv", "json", "parquet", "orc", "text", "avro", "binaryfile", "delta", "jdbc", "xml",
                            "hive", "libsvm", "image", "iceberg", "hudi", "kafka", "noop", "file"})
_FILE_SUFFIXES = (".csv", ".tsv", ".parquet", ".json", ".ndjson", ".jsonl", ".txt", ".gz", ".zst", ".xlsx", ".db", ".duckdb")


def _refuse(message: str) -> SqlRejected:
    return SqlRejected(
        message,
        reason="sql_not_read_only",
        hint="only one read-only SELECT over the source's tables is allowed",
    )


def guard(prep: Preparation) -> Preparation:
    """The pass: refuse ``prep.tree`` unless it is one read-only query (see :func:`check_read_only`).

    >>> import sqlglot
    >>> def read(sql): return Preparation(sql, schema={}, dialect="duckdb", tree=sqlglot.parse_one(sql))
    >>> guard(read("SELECT abs(x) FROM t")).tree.sql()
    'SELECT ABS(x) FROM t'
    >>> guard(read("SELECT getenv('HOME')"))
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.SqlRejected: function getenv() is not allowed (hint: only functions that compute on values are available: no reading files, settings, the catalogue or the session, no running SQL given as text; query the source's tables)

    Raises:
        SqlRejected: ``sql_not_read_only`` or ``sql_function_not_allowed``.
    """
    check_read_only(prep.tree, dialect=prep.dialect)
    return prep


def check_read_only(statement: exp.Expression, *, dialect: str = "duckdb") -> None:
    """Refuse anything but one read-only query that calls only allowed functions (``dialect``'s
    list, see ``functions.py``) and names no file.

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
        if isinstance(node, FORBIDDEN_NODES):
            raise _refuse(f"{_statement_word(node)} is not allowed: queries are read-only")
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier) and _looks_like_path(node.this.name):
            # DuckDB reads a file named as a table (a replacement scan).
            raise _refuse(f"reading the file {node.this.name!r} is not allowed")
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Var) and node.this.name.startswith("@"):
            # A Snowflake stage (``FROM @stage/file.csv``): files, not a table of the source.
            raise _refuse(f"reading the staged files {node.this.name!r} is not allowed")
        if isinstance(node, TIME_TRAVEL_NODES):
            raise _time_travel(shown_clause(node, dialect))
        if isinstance(node, exp.Table) and isinstance(node.args.get("alias"), exp.TableAlias) \
                and isinstance(node.args["alias"].this, exp.Parameter):
            # Databricks' ``t@v3`` and ``t@20240101000000000``, which sqlglot reads as an alias.
            raise _time_travel(f"{node.name}@{node.args['alias'].this.this.sql()}")
        if isinstance(node, exp.Func):
            check_call(node, dialect)
        if dialect in _SPARK_DIALECTS:
            _check_spark(node)


def _check_spark(node: exp.Expression) -> None:
    """Refuse what Spark reads in a query's text besides tables and values.

    >>> import sqlglot
    >>> _check_spark(sqlglot.parse_one("SELECT * FROM json.`events`", read="spark").find(exp.Table))
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.SqlRejected: reading files as a table (json.`events`) is not allowed (hint: only one read-only SELECT over the source's tables is allowed)
    """
    if isinstance(node, exp.Table) and node.db and node.db.lower() in _SPARK_FORMATS:
        raise _refuse(f"reading files as a table ({node.db}.`{node.name}`) is not allowed")
    # Spark substitutes ``${name}`` anywhere in a statement's text, string literals included,
    # before it parses it: configuration values, and with ``env:``/``system:`` the server's
    # environment.
    if isinstance(node, exp.Parameter) or (isinstance(node, exp.Literal | exp.Identifier) and "${" in str(node.this)):
        raise _refuse("${...} is not allowed: Spark replaces it with settings or the environment")


def _time_travel(clause: str) -> SqlRejected:
    return SqlRejected(
        f"reading a table as it was at another time or version ({clause}) is not supported",
        reason="sql_unsupported",
        hint="query the tables as they are now; to compare periods, filter on their date columns",
    )


def shown_clause(node: exp.Expression, dialect: str = "duckdb") -> str:
    """A time-travel clause as the model wrote it, within a line.

    >>> import sqlglot
    >>> tree = sqlglot.parse_one("SELECT * FROM t FOR VERSION AS OF 3", read="trino")
    >>> shown_clause(tree.find(exp.Version))
    'FOR VERSION AS OF 3'
    """
    text = " ".join(node.sql(dialect=dialect).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _looks_like_path(name: str) -> bool:
    lowered = name.lower()
    return "/" in name or "\\" in name or "://" in name or lowered.endswith(_FILE_SUFFIXES) or "*" in name


def _statement_word(node: exp.Expression) -> str:
    key = type(node).__name__
    if isinstance(node, exp.Command):
        return str(node.this).upper()
    return {"TruncateTable": "TRUNCATE", "LoadData": "LOAD DATA", "QueryTransform": "TRANSFORM ... USING"}.get(
        key, key.upper())
