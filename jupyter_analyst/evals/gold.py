"""Gold answers computed from the data: each turn's ``gold_sql`` run on its source, the
result shaped as the scorer compares it, and the suite file checked or rewritten with them.

A result of one value is that value; of one column, the list of its values (a set); of more
columns, the list of rows (a set of rows). A question the data cannot answer has the SQL
``SELECT 'not in the data'``.

A suite is a file from elsewhere: its gold SQL is treated as the model's. It goes through the
same check (``sql.SqlPreparer``: one read-only query of the source's tables, allowed functions
only) and runs in the source's sealed engine (``sql.QueryRunner``: the timeout, the row cap,
the memory limit), and its task's source is one the run was given (``sources.SourcePolicy``).
A refused query stops the whole check before the file is touched.

    python -m jupyter_analyst.evals.gold SUITE.jsonl --check   # exit 1 on any difference
    python -m jupyter_analyst.evals.gold SUITE.jsonl --write   # rewrite the answers
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import decimal
import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..errors import AnalystError, ConfigError, SqlRejected
from ..turns import AnalystConfig
from ..untrusted import terminal_text
from .suite_sources import SourcePolicy, parse_source_option
from .suite import read_records


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


def same_gold(computed: Any, recorded: Any) -> bool:
    """Whether a recomputed gold answer is the recorded one: equal, numbers up to the last
    bits of a float (a parallel engine's sum of doubles varies there from run to run).

    >>> same_gold(613135.5999999999, 613135.6), same_gold([["a", 1.0]], [["a", 1]]), same_gold(2400, 2401)
    (True, True, False)
    """
    if isinstance(computed, list) and isinstance(recorded, list):
        return len(computed) == len(recorded) and all(same_gold(a, b) for a, b in zip(computed, recorded, strict=True))
    numbers = (int, float)
    if isinstance(computed, numbers) and isinstance(recorded, numbers) and not isinstance(computed, bool) \
            and not isinstance(recorded, bool):
        return math.isclose(computed, recorded, rel_tol=1e-9, abs_tol=1e-9)
    return computed == recorded


async def compute(sql: str, source: Any, config: AnalystConfig) -> Any:
    """The gold answer ``sql`` gives on the open ``source`` (a ``sql.DataSource``), checked and
    run as the model's SQL is, within ``config``'s limits.

    Raises:
        SqlRejected: the check refused it.
        QueryFailed: it failed or timed out in the engine.
        ConfigError: it returned more rows than the row cap.
    """
    import pyarrow.parquet as pq

    from ..sql import QueryRunner, SqlPreparer

    preparer = SqlPreparer(max_chars=config.sql_max_chars, timeout_s=config.sql_prepare_timeout_s)
    prepared = await preparer.prepare(sql, source)
    runner = QueryRunner(source, timeout_s=config.query_timeout_s, row_cap=config.row_cap)
    with tempfile.TemporaryDirectory(prefix="analyst-gold-") as folder:
        result = await runner.run_to_parquet(prepared, Path(folder) / "gold.parquet")
        if result.truncated:
            raise ConfigError(f"it returned more than the row cap of {config.row_cap:,} rows", reason="bad_suite")
        table = pq.read_table(Path(folder) / "gold.parquet")
    rows = list(zip(*(column.to_pylist() for column in table.columns), strict=True))
    return shaped(rows, table.num_columns)


def regenerate(
    path: Path, *, cache: Path, write: bool, sources: dict[str, str] | None = None, data_dir: Path | None = None,
    db: str | None = None, config: AnalystConfig | None = None,
) -> list[str]:
    """The suite at ``path`` with every gold answer recomputed; the differences found, as
    lines (each task id and turn), and the file rewritten with ``write``.

    ``sources``, ``data_dir`` and ``db`` are the sources the user gave (see
    ``sources.SourcePolicy``); ``config`` the limits the SQL is checked and run within.

    Raises:
        ConfigError: a task names no source or one it was not given, a turn has no
            ``gold_sql``, or its SQL is refused or fails on the task's source; nothing is
            written then.
    """
    policy = SourcePolicy(cache=cache, named=dict(sources or {}), data_dir=data_dir, every=db)
    records = read_records(path)
    for record in records:  # every source allowed before any SQL runs
        if not record.get("source") and db is None:
            raise ConfigError(f"task {record.get('id')!r} names no source", reason="bad_suite")
        if not isinstance(record.get("source"), str | None):
            raise ConfigError(f"task {record.get('id')!r}: its source is not a text", reason="bad_suite")
        policy.check(str(record.get("id")), record.get("source"))
        turns = record["turns"] if "turns" in record else [record]
        if not isinstance(turns, list) or not all(isinstance(turn, dict) for turn in turns):
            raise ConfigError(f"task {record.get('id')!r}: its turns are not a list of objects", reason="bad_suite")
        for number, turn in enumerate(turns, 1):
            if not isinstance(turn.get("gold_sql"), str) or not turn["gold_sql"]:
                raise ConfigError(f"task {record.get('id')!r} turn {number} has no gold_sql", reason="bad_suite")
    differences = asyncio.run(_recompute(records, policy, config or AnalystConfig()))
    if write:
        # Written aside and renamed over it: whole or not at all, and a link in its place is
        # replaced, never written through (a suite may sit in a folder others write).
        fd, aside = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
            os.replace(aside, path)
        finally:
            if os.path.exists(aside):
                os.unlink(aside)
    return differences


async def _recompute(records: list[dict[str, Any]], policy: SourcePolicy, config: AnalystConfig) -> list[str]:
    """Each turn's answer set to its gold SQL's (``records`` changed in place); the differences."""
    from ..sql import open_source

    differences: list[str] = []
    opened: dict[str, Any] = {}
    try:
        for record in records:
            spec = policy.resolve(record.get("source"))
            assert spec is not None
            if spec not in opened:
                opened[spec] = await asyncio.to_thread(open_source, spec, limits=config.engine)
            turns = record["turns"] if "turns" in record else [record]
            for number, turn in enumerate(turns, 1):
                where = f"task {record.get('id')!r} turn {number}"
                try:
                    gold = await compute(turn["gold_sql"], opened[spec], config)
                except SqlRejected as exc:  # the guard's words quote the suite's SQL: shown inert
                    raise ConfigError(f"{where}: its gold_sql was refused: {terminal_text(exc.message)}",
                                      reason="bad_suite", hint=exc.hint) from exc
                except AnalystError as exc:
                    raise ConfigError(f"{where}: its gold_sql failed: {terminal_text(exc.message)}",
                                      reason="bad_suite") from exc
                if not same_gold(gold, turn.get("answer")):
                    # The suite's words, printed on a terminal: shown inert.
                    differences.append(terminal_text(
                        f"{record.get('id')} turn {number}: file {turn.get('answer')!r}, data {gold!r}"))
                    turn["answer"] = gold
    finally:
        for source in opened.values():
            source.close()
    return differences


def main(argv: list[str] | None = None) -> int:
    """``python -m jupyter_analyst.evals.gold``: check or rewrite a suite's gold answers."""
    parser = argparse.ArgumentParser(prog="python -m jupyter_analyst.evals.gold", description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--write", action="store_true", help="rewrite the answers (default: check only)")
    parser.add_argument("--cache", type=Path, default=Path(".analyst/eval-data"),
                        help="where named sources are built (default .analyst/eval-data)")
    source_arguments(parser)
    args = parser.parse_args(argv)
    try:
        differences = regenerate(args.suite, cache=args.cache, write=args.write, sources=dict(args.sources),
                                 data_dir=args.data_dir, db=args.db)
    except AnalystError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        return 2
    for line in differences:
        print(line)
    verb = "rewritten" if args.write else "differ"
    print(f"{len(differences)} gold answers {verb}" if differences else "every gold answer matches the data")
    return 1 if differences and not args.write else 0


def source_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that give a suite's tasks their sources (``eval`` has the same)."""
    parser.add_argument("--source", dest="sources", action="append", type=parse_source_option, default=[],
                        metavar="NAME=PATH_OR_URL",
                        help="a task whose source is NAME reads PATH_OR_URL (repeatable); SPEC alone allows "
                             "tasks naming SPEC. A suite may name only sample, nycflights13 and these")
    parser.add_argument("--data-dir", type=Path, metavar="DIR", help="tasks' relative sources are read inside DIR")
    parser.add_argument("--db", metavar="PATH_OR_URL", help="the source of every task, whatever it names")


if __name__ == "__main__":
    sys.exit(main())
