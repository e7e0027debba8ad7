"""The tools that read what exists without changing anything: the source's tables, one
table's columns, the thread's artifacts, and cells of the user's notebook.

They run in any state of the turn and move none; they have no logical key, so they are
never reused: what they read may have changed since.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._text import json_safe
from ...errors import InvalidArguments
from ...sql import OUTLINE_TABLES, ColumnInfo, TableInfo
from ..guards import unknown_table
from ..spec import StateChange, StepSeen, ToolSpec, entity, shown_table
from ..spec import CallContext, StepOutcome, StepPlan
from .provenance import CODE_ITEMS, CODE_PROPERTY, MadeBy, made_by, steps_by_key, wants_code
from ...artifacts import ArtifactType
from .result_models import ResultModel

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ...receipts import Evidence
    from ..environment import ThreadEnvironment


def list_tables(env: ThreadEnvironment, args: dict[str, Any], ctx: CallContext, plan: StepPlan) -> StepOutcome:
    tables = env.source.list_tables()
    return StepOutcome(
        status="ok",
        result={"tables": [_estimate_said(t.model_dump() if hasattr(t, "model_dump") else vars(t)) for t in tables]},
    )


def _estimate_said(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with ``rows_estimated`` only where it is true: a count is the usual case, and
    every listed table would otherwise cost the model the same word."""
    return data if data.get("rows_estimated") else {k: v for k, v in data.items() if k != "rows_estimated"}


def describe_table(env: ThreadEnvironment, args: dict[str, Any], ctx: CallContext, plan: StepPlan) -> StepOutcome:
    if not args.get("table"):
        raise InvalidArguments("describe_table needs a 'table' name", hint="call list_tables first")
    desc = env.source.describe_table(args["table"])
    # A column's nullability is said only where it is NOT NULL (see ColumnInfo.nullable).
    data = desc.model_dump(exclude_none=True) if hasattr(desc, "model_dump") else vars(desc)
    return StepOutcome(status="ok", result=json_safe(_estimate_said(dict(data))))


def list_artifacts(env: ThreadEnvironment, args: dict[str, Any], ctx: CallContext, plan: StepPlan) -> StepOutcome:
    items = env.artifacts.list(ctx.thread_id, type=args.get("type"), name=args.get("name"))
    listed = [a.summary() for a in items]
    _say_replaced(env, ctx.thread_id, items, listed)
    result: dict[str, Any] = {"artifacts": listed}
    if wants_code(args.get("with_code")) and items:
        # The newest few, with the code or SQL of the step that made each.
        steps = steps_by_key(env.artifacts.steps(ctx.thread_id))
        for artifact, entry in list(zip(items, listed, strict=True))[-CODE_ITEMS:]:
            entry.update(made_by(artifact, steps))
        if len(items) > CODE_ITEMS:
            result["code_note"] = (f"code is given for the newest {CODE_ITEMS} of {len(items)}; "
                                   "narrow the list with name or type for the others")
    return StepOutcome(status="ok", result=result)


def _say_replaced(env: ThreadEnvironment, thread_id: str, items: list[Any], listed: list[dict[str, Any]]) -> None:
    """Say which names hold each listed dataset now, where that is not just its own name
    (``in_kernel_as``: a query whose rows it already held bound it to another name; none
    when no name holds it), and what its own name holds instead (``replaced_by``: a later
    dataset's id, or a Python step's value). Two datasets of one name otherwise read alike,
    and the model would take the older for what the name holds."""
    if not any(a.type == "dataset" for a in items):
        return
    bindings = env.bindings()
    made = {(a.name, a.fingerprint): a.artifact_id for a in env.artifacts.list(thread_id, type="dataset")}
    for artifact, entry in zip(items, listed, strict=True):
        if artifact.type != "dataset":
            continue
        names = sorted(name for name, held in bindings.items() if held == artifact.fingerprint)
        if names != [artifact.name]:
            entry["in_kernel_as"] = names
        held = bindings.get(artifact.name)
        if held is None or held == artifact.fingerprint:
            continue
        if not held.startswith("sha256:"):  # a Python step's key: the step assigned the name
            entry["replaced_by"] = "a Python step's value"
        elif (artifact.name, held) in made:
            entry["replaced_by"] = made[(artifact.name, held)]


def read_cells(env: ThreadEnvironment, args: dict[str, Any], ctx: CallContext, plan: StepPlan) -> StepOutcome:
    from ...notebooks import read_cells

    attached = env.attached
    if attached is None:
        raise InvalidArguments("no notebook is attached to this conversation", reason="no_notebook",
                               hint="answer from the data and the artifacts")
    if attached.problem:
        raise InvalidArguments(f"the attached notebook {attached.path} cannot be read: {attached.problem}",
                               reason="no_notebook", hint="answer from the data and the artifacts")
    ids = list(args.get("cell_ids") or [])
    if not ids:
        raise InvalidArguments("read_cells needs 'cell_ids': ids from the notebook outline",
                               hint='e.g. {"cell_ids": ["a1b2c3"]}')
    result = read_cells(attached.content, ids)
    if result["unknown"]:
        result["note"] = "unknown ids are not in the notebook's outline; use the ids it lists"
    return StepOutcome(status="ok", result=result)


def _tables_not_all_listed(env: ThreadEnvironment) -> bool:
    """Whether the system message leaves tables out: it lists every table with its columns
    otherwise, and ``list_tables`` would repeat it."""
    return len(env.source.schema()) > OUTLINE_TABLES


def _has_artifacts(env: ThreadEnvironment) -> bool:
    return env.artifacts.count(env.thread_id) > 0


def _notebook_readable(env: ThreadEnvironment) -> bool:
    return env.attached is not None and not env.attached.problem


def _tables_seen(seen: StepSeen) -> StateChange:
    """Each table listed, with its row count."""
    return [entity("table", t["name"], derived_from=[seen.source_id], rows=t.get("rows"))
            for t in seen.result.get("tables", []) if isinstance(t, dict) and t.get("name")], {}


def _tables_shown(call_id: str, result: Mapping[str, Any]) -> list[Evidence]:
    """Each table listed with its row count, a row each."""
    listed = [t for t in result.get("tables", []) if isinstance(t, dict)]
    columns = [{"name": "name"}, {"name": "kind"}, {"name": "rows"}]
    return [shown_table(call_id, "list_tables", {"columns": columns, "sample": listed})]


def _table_shown(call_id: str, result: Mapping[str, Any]) -> list[Evidence]:
    """Its first rows as sent and its row count."""
    return [shown_table(call_id, "describe_table", result, scalars={"row_count": result.get("rows")})]


def _table_seen(seen: StepSeen) -> StateChange:
    """The table described, with its row count and columns."""
    name = seen.result.get("name") or seen.arguments.get("table")
    if not name:
        return [], {}
    columns = [c.get("name") for c in seen.result.get("columns", []) if isinstance(c, dict)]
    return [entity("table", name, derived_from=[seen.source_id], rows=seen.result.get("rows"), columns=columns)], {}
class ListTablesResult(ResultModel):
    """Every table and view of the source."""

    tables: list[TableInfo]


class DescribeTableResult(ResultModel):
    """One table: its columns, row count and first rows."""

    name: str
    columns: list[ColumnInfo]
    rows: int | None = None
    rows_estimated: bool = False
    """Whether ``rows`` is the engine's catalogue estimate (a table past a million rows is not
    counted: counting reads it whole); said only when true."""
    sample: list[dict[str, Any]]


class ListedArtifact(MadeBy):
    """An artifact as the model can name it, with the step that made it when asked."""

    id: str
    name: str
    type: ArtifactType
    replaced_by: str | None = None
    """A dataset its name no longer holds: the newer dataset's id fetched into the name, or a
    Python step's value assigned to it. It is still read by its id."""
    in_kernel_as: list[str] | None = None
    """The names that hold this dataset in the kernel now, where not just its own name: others
    a query fetched the same rows into; none when no name holds it. Left out otherwise."""


class ListArtifactsResult(ResultModel):
    """The thread's artifacts, newest last."""

    artifacts: list[ListedArtifact]
    code_note: str | None = None
    """Which of them have their code given, when not all."""


class CellRead(ResultModel):
    """One cell of the attached notebook."""

    id: str
    index: int
    type: str | None
    source: str
    outputs: str
    """A short text of a code cell's outputs."""


class ReadCellsResult(ResultModel):
    """The cells asked for, and the ids that are not in the notebook."""

    cells: list[CellRead]
    unknown: list[str]
    note: str | None = None


LIST_TABLES = ToolSpec(
    name="list_tables",
    description=f"Every table and view with its row count (the system message lists the first {OUTLINE_TABLES}).",
    run=list_tables,
    user_step=True,
    looks_only=True,
    offered=_tables_not_all_listed,
    remembers=_tables_seen,
    evidence=_tables_shown,
    result_model=ListTablesResult,
)

DESCRIBE_TABLE = ToolSpec(
    name="describe_table",
    description="One table's columns, row count and first rows: what its values look like.",
    properties={"table": {"type": "string", "description": "the table's name"}},
    required=("table",),
    payload="table",
    aliases={"table_name": "table", "name": "table"},
    run=describe_table,
    user_step=True,
    looks_only=True,
    invented=lambda env, args: unknown_table(env, str(args.get("table") or "")),
    remembers=_table_seen,
    evidence=_table_shown,
    result_model=DescribeTableResult,
)

LIST_ARTIFACTS = ToolSpec(
    name="list_artifacts",
    description="This conversation's artifacts (datasets, charts, files, texts), newest last.",
    properties={
        "type": {"type": "string", "enum": ["dataset", "image", "file", "text"], "description": "only this type"},
        "name": {"type": "string", "description": "only names containing this"},
        "with_code": CODE_PROPERTY,
    },
    aliases={"kind": "type", "artifact_type": "type", "code": "with_code", "include_code": "with_code"},
    run=list_artifacts,
    user_step=True,
    looks_only=True,
    offered=_has_artifacts,
    result_model=ListArtifactsResult,
)

READ_CELLS = ToolSpec(
    name="read_cells",
    description="Cells of the user's notebook by id (from the notebook outline): source and outputs. Read only "
                "the few you need.",
    properties={
        "cell_ids": {
            "type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 20,
            "description": "ids from the outline",
        },
    },
    required=("cell_ids",),
    payload="cell_ids",
    aliases={"ids": "cell_ids", "cells": "cell_ids", "cell_id": "cell_ids", "id": "cell_ids"},
    run=read_cells,
    offered=_notebook_readable,
    result_model=ReadCellsResult,
)
