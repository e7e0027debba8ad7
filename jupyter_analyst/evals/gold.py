"""Gold answers computed from the data: each turn's ``gold_sql`` run on its source, the
result shaped as the scorer compares it, and the suite file checked or rewritten with them.

A result of one value is that value; of one column, the list of its values (a set); of more
columns, the list of rows (a set of rows). A question the data cannot answer has SQL that
shows it (e.g. the column is absent from ``information_schema``) and returns
``'not in the data'``. The SQL runs on a read-only DuckDB connection.

    python -m jupyter_analyst.evals.gold SUITE.jsonl --check   # exit 1 on any difference
    python -m jupyter_analyst.evals.gold SUITE.jsonl --write   # rewrite the answers
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import AnalystError, ConfigError
from .sources import resolve_source


def shaped(rows: list[tuple[Any, ...]], columns: int) -> Any:
    """A query's rows as a gold answer.

    >>> shaped([(42,)], 1), shaped([("JFK",), ("LGA",)], 1), shaped([("UA", 3)], 2)
    (42, ['JFK', 'LGA'], [['UA', 3]])
    >>> shaped([(decimal.Decimal("2.50"),)], 1), shaped([(datetime.date(2013, 1, 2),)], 1)
    (2.5, '2013-01-02')
    """
    values = [[_plain(v) for v in row] for row in rows]
    if columns == 1:
        return values[0][0] if len(values) == 1 else [row[0] for row in values]
    return values


def _plain(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def compute(sql: str, database: str) -> Any:
    """The gold answer ``sql`` gives on the DuckDB file ``database``."""
    import duckdb

    with duckdb.connect(database, read_only=True) as conn:
        cursor = conn.execute(sql)
        return shaped(cursor.fetchall(), len(cursor.description or ()))


def regenerate(path: Path, *, cache: Path, write: bool) -> list[str]:
    """The suite at ``path`` with every gold answer recomputed; the differences found, as
    lines (each task id and turn), and the file rewritten with ``write``.

    Raises:
        ConfigError: a turn has no ``gold_sql``, or its SQL fails on the task's source (a DuckDB file).
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    differences: list[str] = []
    for record in records:
        source = record.get("source")
        if not source:
            raise ConfigError(f"task {record.get('id')!r} names no source", reason="bad_suite")
        database = resolve_source(source, folder=path.resolve().parent, cache=cache)
        turns = record["turns"] if "turns" in record else [record]
        for number, turn in enumerate(turns, 1):
            if not turn.get("gold_sql"):
                raise ConfigError(f"task {record.get('id')!r} turn {number} has no gold_sql", reason="bad_suite")
            try:
                gold = compute(turn["gold_sql"], database)
            except Exception as exc:  # duckdb.Error and its kin: the suite's SQL, reported with its task
                raise ConfigError(f"task {record.get('id')!r} turn {number}: its gold_sql failed: {exc}",
                                  reason="bad_suite") from exc
            if gold != turn.get("answer"):
                differences.append(f"{record.get('id')} turn {number}: file {turn.get('answer')!r}, data {gold!r}")
                turn["answer"] = gold
    if write:
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return differences


def main(argv: list[str] | None = None) -> int:
    """``python -m jupyter_analyst.evals.gold``: check or rewrite a suite's gold answers."""
    parser = argparse.ArgumentParser(prog="python -m jupyter_analyst.evals.gold", description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--write", action="store_true", help="rewrite the answers (default: check only)")
    parser.add_argument("--cache", type=Path, default=Path(".analyst/eval-data"),
                        help="where named sources are built (default .analyst/eval-data)")
    args = parser.parse_args(argv)
    try:
        differences = regenerate(args.suite, cache=args.cache, write=args.write)
    except AnalystError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    for line in differences:
        print(line)
    verb = "rewritten" if args.write else "differ"
    print(f"{len(differences)} gold answers {verb}" if differences else "every gold answer matches the data")
    return 1 if differences and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
