"""A cheap fingerprint of a source's table: its row count and, on DuckDB, a hash of its rows.

A SQL step records one for each table it read, so that ``verify`` can later tell whether the
data under a step that no longer reproduces is the data the thread saw, and say what changed
(``notebooks/verify_causes.py``). The count and the hash are one aggregate query per table:
``count(*)`` and ``bit_xor(hash(columns...))``, which does not depend on the order the
engine scans the rows in. Elsewhere than on DuckDB hashing every row is left out (no function
of every engine hashes a row in SQL): the count only, and the fingerprint says so.

A table's name may come from a notebook, which anyone can hand over: a name is used only when
it is exactly one of the source's tables, the query is built from quoted identifiers, and it
goes through the same check (``SqlPreparer``: read-only, allowed functions, known tables and
columns) and the same sealed engine and timeout (``QueryRunner``) as the model's SQL. Past the
time allowed, the hash is given up for the count alone, then the count too; a name refused
is reported, never run.
"""

from __future__ import annotations

import tempfile
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..errors import AnalystError
from .check_cache import settled

if TYPE_CHECKING:
    from .preparer import SqlPreparer
    from .sources import DataSource

#: How long one table's fingerprint may take when a step records it (the step waits for it).
PRINT_TIMEOUT_S = 5.0
#: At most this many tables are fingerprinted for one step or one verification.
MAX_TABLES = 32
#: A table name longer than this is not a name of any real source's table: refused unread.
MAX_NAME = 256


#: How many measured fingerprints are kept (see ``_MEASURED``).
KEEP = 512


class TablePrint(BaseModel):
    """One table's fingerprint as a step read it, or as it is now."""

    table: str
    rows: int | None = None
    """Its row count; null when it could not be measured (``note`` says why)."""
    content: str | None = None
    """The hash of its rows (DuckDB only); null when not computed (``note`` says why)."""
    hashed_by: str | None = None
    """The engine and version that hashed it: hashes of another version are not comparable."""
    note: str | None = None


def print_sql(table: str, columns: Sequence[str], dialect: str) -> str:
    """The aggregate query that fingerprints ``table`` (its columns, quoted, in the source's order).

    >>> print_sql("items", ["id", "cat"], "duckdb")
    'SELECT COUNT(*) AS "rows", BIT_XOR(HASH("id", "cat")) AS "content" FROM "items"'
    >>> print_sql('od"d', ["x"], "sqlite")
    'SELECT COUNT(*) AS "rows" FROM "od""d"'
    """
    from sqlglot import exp  # here: a step that only imports the tools loads no SQL parser

    select = exp.select(exp.alias_(exp.Count(this=exp.Star()), "rows", quoted=True))
    if dialect == "duckdb" and columns:
        hashed = exp.Anonymous(this="hash", expressions=[exp.column(c, quoted=True) for c in columns])
        select = select.select(exp.alias_(exp.Anonymous(this="bit_xor", expressions=[hashed]), "content", quoted=True))
    # Built, not parsed: the host parses no SQL (the checker's worker does).
    return select.from_(exp.Table(this=exp.to_identifier(table, quoted=True))).sql(dialect="duckdb")


def engine_version(source: DataSource) -> str | None:
    """Who hashes on ``source``: ``duckdb X.Y.Z``; null where rows are not hashed."""
    if source.dialect != "duckdb":
        return None
    from importlib.metadata import version

    return f"duckdb {version('duckdb')}"


#: Fingerprints measured, by source, its data version and table: a table read by many steps
#: is measured once while its files stay the same, so a step pays for it once, not each time.
_MEASURED: OrderedDict[tuple[str, str, str], TablePrint] = OrderedDict()


async def table_prints(
    tables: Sequence[str], source: DataSource, *, preparer: SqlPreparer, folder: Path,
    timeout_s: float = PRINT_TIMEOUT_S,
) -> list[TablePrint]:
    """The fingerprint of each of ``tables`` on ``source`` now (see the module); ``folder``: a
    folder of the host's own where the one-row results are staged.

    Never raises for one table: what could not be measured is said in its ``note``.
    """
    schema = source.schema()
    known = {name.lower(): name for name in schema}
    hasher = engine_version(source)
    prints = []
    seen: set[str] = set()
    for raw in list(dict.fromkeys(str(t) for t in tables))[:MAX_TABLES]:
        name = known.get(raw.lower()) if len(raw) <= MAX_NAME else None
        if name is None:
            prints.append(TablePrint(table=raw[:MAX_NAME], note="refused: not a table of the source"))
            continue
        if name in seen:
            continue
        seen.add(name)
        prints.append(await _remembered(name, list(schema[name]), source, preparer, folder, timeout_s, hasher))
    return prints


async def _remembered(name: str, columns: list[str], source: DataSource, preparer: SqlPreparer, folder: Path,
                      timeout_s: float, hasher: str | None) -> TablePrint:
    """``name``'s fingerprint: measured, or as measured before on the same version of the data."""
    version = source.data_version()
    key = (source.spec, version, name)
    if settled(version) and key in _MEASURED:
        _MEASURED.move_to_end(key)
        return _MEASURED[key]
    measured = await _measure(name, columns, source, preparer, folder, timeout_s, hasher)
    if settled(version) and measured.rows is not None:
        _MEASURED[key] = measured
        while len(_MEASURED) > KEEP:
            _MEASURED.popitem(last=False)
    return measured


async def _measure(name: str, columns: list[str], source: DataSource, preparer: SqlPreparer, folder: Path,
                   timeout_s: float, hasher: str | None) -> TablePrint:
    """One table: count and hash, else (past the time allowed) the count alone."""
    note = None if hasher else f"rows only: the content is not hashed on {source.dialect} sources"
    try:
        row = await _one_row(print_sql(name, columns, source.dialect), source, preparer, folder, timeout_s)
    except AnalystError as exc:
        if hasher is None or getattr(exc, "reason", None) != "query_timeout":
            return TablePrint(table=name, note=f"not measured: {exc}")
        note = f"rows only: hashing its rows took longer than {timeout_s:g} s"
        try:
            row = await _one_row(print_sql(name, [], source.dialect), source, preparer, folder, timeout_s)
        except AnalystError as again:
            return TablePrint(table=name, note=f"not measured: {again}")
        hasher = None
    content = row.get("content")
    return TablePrint(table=name, rows=int(row["rows"]), content=None if content is None or hasher is None
                      else f"{int(content):016x}", hashed_by=hasher, note=note)


async def _one_row(sql: str, source: DataSource, preparer: SqlPreparer, folder: Path,
                   timeout_s: float) -> dict[str, Any]:
    """The one row of an aggregate query, checked and run as the model's SQL is."""
    import pyarrow.parquet as pq

    from .query_runner import QueryRunner

    prepared = await preparer.prepare(sql, source)
    runner = QueryRunner(source, timeout_s=timeout_s, row_cap=1)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix="table-print-") as tmp:
        await runner.run_to_parquet(prepared, Path(tmp) / "print.parquet")
        rows = pq.read_table(Path(tmp) / "print.parquet").to_pylist()
    return rows[0] if rows else {"rows": 0}
