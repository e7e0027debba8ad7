"""The tools that read what exists without changing anything: the source's tables, one
table's columns, the thread's artifacts, and cells of the user's notebook.

They run in any state of the turn and move none; they have no logical key, so they are
never reused: what they read may have changed since.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._text import json_safe
from ...errors import InvalidArguments
from .contract import ToolSpec
from .outcome import CallContext, StepOutcome, StepPlan
from .provenance import CODE_ITEMS, CODE_PROPERTY, made_by, steps_by_key, wants_code

if TYPE_CHECKING:
    from ..environment import ThreadEnvironment


def list_tables(env: ThreadEnvironment, args: dict[str, Any], ctx: CallContext, plan: StepPlan) -> StepOutcome:
    tables = env.source.list_tables()
    return StepOutcome(
        status="ok",
        result={"tables": [t.model_dump() if hasattr(t, "model_dump") else vars(t) for t in tables]},
    )


def describe_table(env: ThreadEnvironment, args: dict[str, Any], ctx: CallContext, plan: StepPlan) -> StepOutcome:
    if not args.get("table"):
        raise InvalidArguments("describe_table needs a 'table' name", hint="call list_tables first")
    desc = env.source.describe_table(args["table"])
    data = desc.model_dump() if hasattr(desc, "model_dump") else vars(desc)
    return StepOutcome(status="ok", result=json_safe(data))


def list_artifacts(env: ThreadEnvironment, args: dict[str, Any], ctx: CallContext, plan: StepPlan) -> StepOutcome:
    items = env.artifacts.list(ctx.thread_id, type=args.get("type"), name=args.get("name"))
    listed = [a.summary() for a in items]
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


LIST_TABLES = ToolSpec(
    name="list_tables",
    description="List the tables and views of the data source, with their row counts. Call it first when you "
                "do not know the schema yet; never guess table names.",
    run=list_tables,
)

DESCRIBE_TABLE = ToolSpec(
    name="describe_table",
    description="Show one table's columns with their types, its row count and a few sample rows. Use it "
                "before writing SQL against a table whose columns you have not seen.",
    properties={"table": {"type": "string", "description": "the table's name exactly as list_tables gives it"}},
    required=("table",),
    payload="table",
    aliases={"table_name": "table", "name": "table"},
    run=describe_table,
)

LIST_ARTIFACTS = ToolSpec(
    name="list_artifacts",
    description="List this conversation's artifacts (datasets, charts, files, texts): id, name, type, the step "
                "that produced it, content fingerprint and creation time; with_code=true also the code or SQL "
                "that made each. Check it before redoing work: an artifact that exists can be used directly.",
    properties={
        "type": {
            "type": "string", "enum": ["dataset", "image", "file", "text"],
            "description": "only artifacts of this type",
        },
        "name": {"type": "string", "description": "only artifacts whose name contains this text"},
        "with_code": CODE_PROPERTY,
    },
    aliases={"kind": "type", "artifact_type": "type", "code": "with_code", "include_code": "with_code"},
    run=list_artifacts,
)

READ_CELLS = ToolSpec(
    name="read_cells",
    description="Read cells of the user's notebook by their ids, as the notebook outline in the system "
                "message lists them: each cell's source and a short text of its outputs. Read only the "
                "few cells you need (what a variable holds, how a chart was made), never the whole notebook.",
    properties={
        "cell_ids": {
            "type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 20,
            "description": "ids from the notebook outline",
        },
    },
    required=("cell_ids",),
    payload="cell_ids",
    aliases={"ids": "cell_ids", "cells": "cell_ids", "cell_id": "cell_ids", "id": "cell_ids"},
    run=read_cells,
)
