"""Why an artifact did not reproduce: one cause per check of ``verify``, with its evidence.

Each artifact that did not match is given the first cause that holds, in this order:

1. **code changed**: its step cell's code, or the code of a step it depends on, differs from
   the code the step ran (recorded in the cell's metadata at export); a unified diff shows it.
   First because it is certain and local: the notebook itself says so, and a step whose code
   was edited proves nothing about the data or the packages.
2. **data changed**: a table read by the SQL steps it depends on has another row count or,
   on DuckDB, other rows than the step recorded when it ran (``sql/table_fingerprints.py``). Before
   the environment because it is measured on the very input, while a version that moved may
   or may not touch these bytes.
3. **environment changed**: the versions of the packages the bytes depend on (and Python's)
   recorded at export differ from the ones now.
4. **not deterministic**: none of the above, and the notebook run a second time makes other
   bytes again: the step draws at random or relies on an order nothing fixes.
   Last because only the elimination of the others and a second run establish it.

What is left is *unexplained*: two runs agree with each other but not with the record, so
something not recorded changed (a package not listed, the platform, fonts). An artifact that
is missing (its cell failed or never ran) and none of the first three explains keeps its
note: no second run is made for it.

A step *depends on* the earlier step cells that last defined a name it reads (read from the
cells' code; a name an import defines counts too), and on theirs in turn.

The notebook is hostile input: its recorded code is only compared, never run; the table
names it records are used only when they are tables of the source the user named, and are
measured through the SQL check and the sealed engine (``sql.table_prints``); its recorded
versions are only compared and shown, cut to a few characters.
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import platform
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from .trail import META, MODEL_WRITTEN_COMMENT

Cause = Literal["code_changed", "data_changed", "environment_changed", "not_deterministic", "unexplained"]

#: The packages whose versions decide an artifact's bytes (Python's own is ``python``).
PACKAGES = ("pandas", "numpy", "matplotlib", "pyarrow", "duckdb")
#: At most this many lines of a code diff are kept in a report.
DIFF_LINES = 40
#: A recorded version or table name is shown cut to this many characters.
SHOWN_CHARS = 80
#: A name longer than this is refused unread, and named by this much (``sql.table_prints``).
NAME_CAP = 256


class TableChange(BaseModel):
    """A table a step read, as recorded and as it is now."""

    table: str
    rows_recorded: int | None = None
    rows_now: int | None = None
    content_changed: bool | None = None
    """Whether its rows hash differently (null: not compared, ``note`` says why)."""
    note: str | None = None

    def line(self) -> str:
        """``items: 13 rows now, 12 recorded (+1 row)`` and the like.

        >>> TableChange(table="items", rows_recorded=12, rows_now=12, content_changed=True).line()
        'items: same count (12 rows), different content'
        >>> TableChange(table="t", rows_recorded=2, rows_now=1).line()
        't: 1 rows now, 2 recorded (-1 row)'
        """
        if self.rows_now is None:
            return f"{self.table}: {self.note or 'not measured'}"
        if self.rows_recorded is not None and self.rows_now != self.rows_recorded:
            delta = self.rows_now - self.rows_recorded
            text = (f"{self.table}: {self.rows_now:,} rows now, {self.rows_recorded:,} recorded "
                    f"({delta:+,} row{'s' if abs(delta) != 1 else ''})")
        else:
            text = f"{self.table}: same count ({self.rows_now:,} rows), different content"
        return text + (f"; {self.note}" if self.note else "")


class VersionChange(BaseModel):
    """A package whose version moved since the export."""

    package: str
    recorded: str | None
    now: str | None


class CauseEvidence(BaseModel):
    """What shows a check's cause."""

    summary: str
    """The cause in one line, for people."""
    cell: int | None = None
    """The code cell where the cause lies (the edited cell, the step whose data or draw it is)."""
    call_id: str | None = None
    diff: str | None = None
    """Code changed: the recorded code against the cell's now, as a unified diff (capped)."""
    tables: list[TableChange] = []
    """Data changed: the tables that differ."""
    versions: list[VersionChange] = []
    """Environment changed: each package old -> new."""
    runs: list[str | None] = []
    """Not deterministic (or unexplained): what the first and the second run made."""


@cache
def package_versions() -> dict[str, str | None]:
    """The versions of :data:`PACKAGES` and Python in this environment (null: not installed).

    >>> sorted(package_versions())
    ['duckdb', 'matplotlib', 'numpy', 'pandas', 'pyarrow', 'python']
    """
    from importlib.metadata import PackageNotFoundError, version

    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = None
    return versions


def _shown(value: Any) -> str | None:
    return None if value is None else str(value)[:SHOWN_CHARS]


def version_changes(recorded: Any, now: Mapping[str, str | None]) -> list[VersionChange]:
    """The packages of ``now`` whose recorded version differs (none when nothing was recorded).

    >>> version_changes({"pandas": "1.0", "numpy": "2.0"}, {"pandas": "2.2", "numpy": "2.0", "python": "3.12"})
    [VersionChange(package='pandas', recorded='1.0', now='2.2')]
    >>> version_changes("forged", {"pandas": "2.2"})
    []
    """
    if not isinstance(recorded, Mapping):
        return []
    return [VersionChange(package=name, recorded=_shown(recorded[name]), now=version)
            for name, version in now.items()
            if name in recorded and _shown(recorded[name]) != version]


def code_diff(recorded: str, now: str, label: str) -> str:
    """A unified diff of a step's recorded code against its cell's, at most :data:`DIFF_LINES` lines.

    >>> print(code_diff("x = 1\\n", "x = 2\\n", "cell 4"))
    --- cell 4 (as recorded)
    +++ cell 4 (now)
    @@ -1 +1 @@
    -x = 1
    +x = 2
    """
    lines = list(difflib.unified_diff(recorded.splitlines(), now.splitlines(), f"{label} (as recorded)",
                                      f"{label} (now)", lineterm=""))
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"... ({len(lines) - DIFF_LINES} more lines)"]
    return "\n".join(lines)


@dataclass
class StepCell:
    """A step's code cell of the notebook as given, with what it records."""

    index: int
    call_id: str
    tool: str
    code: str
    """Its code now, without the line that says the model wrote it."""
    recorded: str | None
    inputs: list[Mapping[str, Any]]
    defines: set[str] = field(default_factory=set)
    reads: set[str] = field(default_factory=set)


def step_cells(nb: Any) -> dict[int, StepCell]:
    """The notebook's step cells by index, each with the names it defines and reads."""
    cells = {}
    for index, cell in enumerate(nb.cells):
        meta = cell.get("metadata", {}).get(META) or {}
        if cell.get("cell_type") != "code" or not isinstance(meta.get("call_id"), str):
            continue
        code = str(cell.get("source", ""))
        head, _, rest = code.partition("\n")
        code = rest if head == MODEL_WRITTEN_COMMENT else code
        inputs = meta.get("inputs") if isinstance(meta.get("inputs"), list) else []
        step = StepCell(index, meta["call_id"], str(meta.get("tool")), code,
                        meta["code"] if isinstance(meta.get("code"), str) else None,
                        [i for i in inputs if isinstance(i, Mapping) and isinstance(i.get("table"), str)])
        step.defines, step.reads = _names(code)
        cells[index] = step
    return cells


def _names(code: str) -> tuple[set[str], set[str]]:
    """The names ``code`` binds and the names it reads (none when it does not parse)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return set(), set()
    defines, reads = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (reads if isinstance(node.ctx, ast.Load) else defines).add(node.id)
        elif isinstance(node, ast.alias):
            defines.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defines.add(node.name)
    return defines, reads


def upstream(cells: Mapping[int, StepCell]) -> dict[int, list[int]]:
    """For each step cell, itself and the step cells it depends on (see the module), in order.

    >>> cells = {2: StepCell(2, "a", "run_sql", "", None, [], {"t"}, {"analyst"}),
    ...          3: StepCell(3, "b", "run_python", "", None, [], {"u"}, {"t"}),
    ...          4: StepCell(4, "c", "run_python", "", None, [], set(), {"u"})}
    >>> upstream(cells)
    {2: [2], 3: [2, 3], 4: [2, 3, 4]}
    """
    last: dict[str, int] = {}
    deps: dict[int, list[int]] = {}
    for index in sorted(cells):
        found = {index}
        for name in cells[index].reads:
            if name in last:
                found.update(deps[last[name]])
        deps[index] = sorted(found)
        for name in cells[index].defines:
            last[name] = index
    return deps


class Explainer:
    """The causes of one verification's differences (see the module).

    ``measure(tables)`` gives the tables' fingerprints on the user's source now
    (``sql.TablePrint``); ``rerun()`` the fingerprint each artifact has after a second run of
    the notebook. Each is called at most once, and only when a check needs it.
    """

    def __init__(self, nb: Any, measure: Callable[[list[str]], Sequence[Any]],
                 rerun: Callable[[], Mapping[str, str | None]]) -> None:
        self.cells = step_cells(nb)
        self.deps = upstream(self.cells)
        self.recorded_versions = (nb.metadata.get(META) or {}).get("environment")
        self.measure = measure
        self.rerun = rerun
        self._now: dict[str, Any] | None = None
        self._second: Mapping[str, str | None] | None = None

    def explain(self, checks: Iterable[Any]) -> None:
        """Set ``cause`` and ``evidence`` on each check that did not match (``ArtifactCheck``)."""
        pending = [c for c in checks if c.status != "matched" and c.cell in self.cells]
        for check in pending:
            found = self.code(check.cell) or self.data(check.cell, pending) or self.environment()
            if found is not None:
                check.cause, check.evidence = found
        # Chance is told by bytes that differ again; an artifact nothing made (its cell
        # failed) keeps its note rather than cost a second run.
        for check in pending:
            if check.cause is None and check.status == "changed":
                self.by_second_run(check)

    def code(self, cell: int) -> tuple[Cause, CauseEvidence] | None:
        for index in self.deps[cell]:
            step = self.cells[index]
            if step.recorded is not None and step.recorded.strip() != step.code.strip():
                where = f"cell {index}" + ("" if index == cell else f" (a step cell {cell} depends on)")
                return "code_changed", CauseEvidence(
                    summary=f"code changed: {where} was edited since the step ran", cell=index,
                    call_id=step.call_id, diff=code_diff(step.recorded, step.code, f"cell {index}"))
        return None

    def data(self, cell: int, pending: Sequence[Any]) -> tuple[Cause, CauseEvidence] | None:
        recorded = self._inputs(self.deps[cell])
        if not recorded:
            return None
        if self._now is None:  # every table of every difference, measured once
            tables = sorted({t for c in pending for t in self._inputs(self.deps[c.cell])})
            self._now = {p.table: p for p in self.measure(tables)}
        changes = [change for table, (index, was) in recorded.items()
                   if (change := _compare(table, was, self._now.get(table[:NAME_CAP]))) is not None]
        if not changes:
            return None
        index = recorded[changes[0].table][0]
        return "data_changed", CauseEvidence(
            summary="data changed: " + "; ".join(c.line() for c in changes), cell=index,
            call_id=self.cells[index].call_id, tables=changes)

    def _inputs(self, indices: Iterable[int]) -> dict[str, tuple[int, Mapping[str, Any]]]:
        """The tables the given step cells recorded reading, each with its first cell."""
        found: dict[str, tuple[int, Mapping[str, Any]]] = {}
        for index in indices:
            for entry in self.cells[index].inputs:
                found.setdefault(str(entry["table"]), (index, entry))
        return found

    def environment(self) -> tuple[Cause, CauseEvidence] | None:
        changes = version_changes(self.recorded_versions, package_versions())
        if not changes:
            return None
        said = ", ".join(f"{c.package} {c.recorded or 'none'} -> {c.now or 'none'}" for c in changes)
        return "environment_changed", CauseEvidence(summary=f"environment changed: {said}", versions=changes)

    def by_second_run(self, check: Any) -> None:
        if self._second is None:
            self._second = self.rerun()
        again = self._second.get(check.artifact_id)
        step = self.cells[check.cell]
        if again != check.actual:
            check.cause, check.evidence = "not_deterministic", CauseEvidence(
                summary=(f"not deterministic: the same code, data and versions made other bytes on a second run; "
                         f"fix the seed or the sort in cell {check.cell} or a cell it depends on"),
                cell=check.cell, call_id=step.call_id, runs=[check.actual, again])
        else:
            check.cause, check.evidence = "unexplained", CauseEvidence(
                summary=("unexplained: the same code, data and recorded versions made the same other bytes twice; "
                         "something not recorded changed (another package, the platform, fonts)"),
                cell=check.cell, call_id=step.call_id, runs=[check.actual, again])


def _compare(table: str, was: Mapping[str, Any], now: Any) -> TableChange | None:
    """A recorded table's change, or ``None`` when it is the same as far as can be told.

    >>> from jupyter_analyst.sql.table_fingerprints import TablePrint
    >>> was = {"rows": 12, "content": "00ff", "hashed_by": "duckdb 2.0.1"}
    >>> _compare("items", was, TablePrint(table="items", rows=12, content="0f0f", hashed_by="duckdb 2.0.1")).line()
    'items: same count (12 rows), different content'
    >>> _compare("items", was, TablePrint(table="items", rows=12, content="0f0f", hashed_by="duckdb 9.0.0")) is None
    True
    >>> _compare("items", was, TablePrint(table="items", note="refused: not a table of the source")).line()
    'items: refused: not a table of the source'
    >>> _compare("items", was, TablePrint(table="items", note="not measured: too slow")) is None
    True
    """
    shown = table[:SHOWN_CHARS]
    rows = was.get("rows") if isinstance(was.get("rows"), int) else None
    if now is None or now.rows is None:
        # A table the source no longer has (or a name that never was one: refused, not run) is
        # a change; one that could not be measured in time says nothing either way.
        if now is not None and str(now.note or "").startswith("refused"):
            return TableChange(table=shown, rows_recorded=rows, note=now.note)
        return None
    if rows is not None and rows != now.rows:
        return TableChange(table=shown, rows_recorded=rows, rows_now=now.rows)
    content = was.get("content")
    if not isinstance(content, str) or now.content is None:
        return None
    if was.get("hashed_by") != now.hashed_by:
        return None  # hashed by another engine version: only the counts compare
    if content != now.content:
        return TableChange(table=shown, rows_recorded=rows, rows_now=now.rows, content_changed=True)
    return None


def measure_tables(source: str) -> Callable[[list[str]], Sequence[Any]]:
    """``Explainer``'s ``measure`` on the user's ``source`` (a spec): opened, checked and run
    as the model's SQL is (``sql.table_prints``)."""

    def measure(tables: list[str]) -> Sequence[Any]:
        from ..sql import SqlPreparer, open_source, table_prints

        opened = open_source(source)
        try:
            with tempfile.TemporaryDirectory(prefix="analyst-verify-prints-") as folder:
                return _run(table_prints(tables, opened, preparer=SqlPreparer(), folder=Path(folder)))
        finally:
            opened.close()

    return measure


def _run(coroutine: Any) -> Any:
    """``coroutine`` to its end, from a thread with or without a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    thread = threading.Thread(target=work, name="verify-table-prints")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
