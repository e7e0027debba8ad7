"""The ``run_sql`` tool: one read-only query into a dataset artifact, loaded into the kernel.

The query is checked (parse, read-only guard, tables, columns, canonical text) when the
step is planned, off the event loop; its canonical text, the dataset's name and the
source's data version make the step's key, so the same query asked again is reused.

A query's run may start while the checker is still at work on it (``early_run.py``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._clock import now
from ..._disk import unavailable
from ..._text import json_safe
from ...agent_state import ActiveValue
from ...artifacts import Artifact, step_key, table_bundle
from ...step_kinds import QUERY_STEP
from ...errors import InvalidArguments, QueryFailed, StorageError
from ...kernel import over_thread_cap
from ...sql import ClearedQuery, DataIntent, PreparedQuery, QueryProgress, QueryResult, data_intent, table_prints
from ..guards import check_dataset_name
from ..spec import Observed, StateChange, StepSeen, ToolSpec, entity, expect_schema, failed_mark
from .early_run import EarlyStart
from .live_progress import LiveProgress
from ..spec import CallContext, StepOutcome, StepPlan
from ..spec import rows_shown, shown_line, shown_table, table_rows
from .result_models import ExpectationVerdict, ResultModel

if TYPE_CHECKING:
    from ...receipts import Evidence
    from ..environment import ThreadEnvironment


def staging(env: ThreadEnvironment) -> Path:
    """Where results are written before they enter the blob store: beside it, where no
    kernel can see them."""
    return env.artifacts.blobs.dir.parent / ".incoming"


async def execute(
    env: ThreadEnvironment, query: PreparedQuery | ClearedQuery, progress: QueryProgress | None = None
) -> tuple[QueryResult, Path]:
    """Run ``query`` into a staged Parquet file of its own: the result and the file."""
    tmp = staging(env) / f"{uuid.uuid4().hex}.parquet"
    return await env.runner.run_to_parquet(query, tmp, progress), tmp


def sql_step_key(prepared: PreparedQuery, name: str, data_version: str) -> str:
    """The key of a query step: its canonical text, its dataset's name, the source's data
    version and, for a query that reads the clock (``current_date``, ``now()``), the day it
    runs (UTC, by the clock budgets count days with), so asking again tomorrow runs it again."""
    arguments = {"sql": prepared.canonical, "name": name}
    if prepared.reads_clock:
        arguments["day"] = now().date().isoformat()
    return step_key("run_sql", arguments, data_version=data_version)


async def plan_sql(env: ThreadEnvironment, args: dict[str, Any]) -> StepPlan:
    """The step's plan: the query prepared (off the event loop, within the environment's
    limits, which also checks it against the schema) and its key.

    Raises:
        ToolRetry: the SQL is refused (``SqlRejected``).
    """
    # The query starts running once it has passed the read-only guard, while the rest is
    # checked: only where a run can be stopped midway, and not for a text or a dataset name
    # the thread asked for before (that call is most likely the same query again, and reused).
    start = EarlyStart(
        partial(execute, env),
        unless=partial(env.artifacts.sql_asked_before, env.thread_id, args["sql"], args["name"]),
    ) if getattr(env.source, "interruptible", False) else None
    early = None
    if env.preparer.cold and not await env.preparer.remembers(args["sql"], env.source):
        await env.starting("sql_checker")  # the first query of the process waits for its worker
    try:
        prepared = await env.preparer.prepare(
            args["sql"], env.source, on_cleared=start,
            meanwhile=start.meanwhile if start is not None else None,
        )
        early = start.close() if start is not None else None
        key = sql_step_key(prepared, args["name"], env.data_version())
    except BaseException:  # refused after all (an unknown column), or stopped: not run
        early = start.close() if start is not None else None
        if early is not None:
            await early.drop()
        raise
    return StepPlan(key, prepared, early)


async def run_sql(env: ThreadEnvironment, args: dict[str, Any], ctx: CallContext, plan: StepPlan) -> StepOutcome:
    name = args["name"]
    key = plan.key
    # Prepared when the step was planned: not parsed a second time.
    prepared = plan.query or await env.preparer.prepare(args["sql"], env.source)
    early = await plan.early.take(prepared.executable) if plan.early is not None else None
    progress = plan.early.progress if early is not None and plan.early is not None else QueryProgress()
    # How far the query is, told while it runs (where its engine estimates it).
    live = LiveProgress(ctx.emit, ctx.call_id, progress) if ctx.emit is not None else None
    try:
        result, tmp = await (early if early is not None else execute(env, prepared, progress))
    except (OSError, QueryFailed) as exc:
        # A result that does not fit on the disk is not the query's fault: the turn stops.
        problem = unavailable(exc, env.artifacts.blobs.root)
        if problem is not None:
            raise problem from exc
        if isinstance(exc, OSError):
            raise StorageError(f"cannot stage the query's result in {staging(env)}: {exc}") from exc
        raise
    finally:
        if live is not None:  # also when the step is stopped: nothing more is told
            await asyncio.shield(live.close())
    async with env.storing:
        artifact, created, intent = await _store_dataset(env, prepared, result, tmp, name, ctx, key)
    names_said = _names_said(env, name, artifact, created)
    await env.dataset_fetched(name, artifact.fingerprint)
    columns = [{"name": c.name, "type": c.type} for c in result.columns]
    capped = row_cap_note(result)
    # Whole when it fits the budget; otherwise the first rows, saying so and how to see more.
    head = json_safe(result.sample)
    names = [c["name"] for c in columns]
    shown = rows_shown(table_rows(names, head)[0], result.rows)
    sample = head[:shown]
    payload = {
        "dataset": name,
        "artifact_id": artifact.artifact_id,
        "rows": result.rows,
        "columns": columns,
        "sample": sample,
        "shown": shown_line(name, shown, result.rows, dropped=capped, cut=table_rows(names, sample)[1]),
        **names_said,
        **await _definition_notes(env, prepared),
        "truncated": result.truncated,
        "reused": False,
        "intent": intent.model_dump(exclude_defaults=True),
        # Beside rows all shown, the time ranges would repeat them: said in the description
        # kept for later turns (which do not see the rows), not here.
        "intent_note": intent.line(name=name, ranges=len(sample) < result.rows),
        "_description": intent.line(name=name),
    }
    if result.truncated:
        payload["row_cap"] = {"cap": result.row_cap, "kept": result.rows, "dropped": result.dropped}
    # The tables it read, as they were: kept with the step (not shown to the model) for the
    # audit notebook, where ``verify`` tells from them whether the data changed since.
    inputs = await table_prints(prepared.tables, env.source, preparer=env.preparer, folder=staging(env))
    payload["_inputs"] = [p.model_dump(exclude_none=True) for p in inputs]
    return StepOutcome(
        status="ok",
        result=payload,
        step_key=key,
        artifacts=[(artifact, created)],
        notebook_outputs=[_sample_output(name, result.rows, columns, sample, capped)],
    )


def _names_said(env: ThreadEnvironment, name: str, artifact: Artifact, created: bool) -> dict[str, str]:
    """What the fetch did to the kernel's names, where a model could not tell it from the
    rows: the name held another dataset or a Python value before (``replaces``), or another
    dataset already holds these rows, now under this name too (``same_rows_as``)."""
    said: dict[str, str] = {}
    before = env.bindings().get(name)
    if before is not None and before != artifact.fingerprint:
        if before.startswith("sha256:"):
            previous = env.dataset_ids().get(name)
            said["replaces"] = (f"{previous}, which `{name}` held before" if previous else
                                f"the dataset `{name}` held before") + " (fetch it under another name to keep both)"
        else:
            said["replaces"] = f"the value a Python step had assigned to `{name}`"
    if not created and artifact.name != name:
        said["same_rows_as"] = f"{artifact.artifact_id} (first fetched as `{artifact.name}`): not stored again"
    return said


async def _definition_notes(env: ThreadEnvironment, prepared: PreparedQuery) -> dict[str, list[str]]:
    """``definition_notes``, beside the rows, when the query computes a metric the team
    defined otherwise than its definition (the model's own text, in the source's dialect)."""
    team = env.team
    if team is None or not team.metrics:
        return {}
    from ...knowledge import divergences

    notes = await asyncio.to_thread(divergences, prepared.original, env.source.dialect, team.metrics, team.folder)
    return {"definition_notes": notes} if notes else {}


async def _store_dataset(
    env: ThreadEnvironment, prepared: PreparedQuery, result: QueryResult, tmp: Path, name: str, ctx: CallContext,
    key: str | None,
) -> tuple[Artifact, bool, DataIntent]:
    """The query's staged file as a dataset artifact, within the thread's caps."""
    artifacts = env.artifacts
    used, used_bytes = artifacts.usage(ctx.thread_id)
    refusal = over_thread_cap(env.output_caps, files=1, size=result.size, thread_files=used, thread_bytes=used_bytes)
    if refusal is not None:
        tmp.unlink(missing_ok=True)
        raise InvalidArguments(f"the dataset was not stored: {refusal}", reason="thread_cap_reached",
                               hint="fetch fewer rows or columns, or start a new thread")
    # The data-intent note: what this dataset means, for later steps and turns (its
    # shape was read when the SQL was prepared, its time range as the file was written).
    intent = data_intent(prepared.shape, tables=prepared.tables, rows=result.rows, time_range=result.time_range)
    # Hashed as it was written: handed to the blob store without being read again.
    artifact, created = await asyncio.to_thread(
        artifacts.add_file,
        tmp,
        thread_id=ctx.thread_id,
        name=name,
        type="dataset",
        mime="application/vnd.apache.parquet",
        producer="sql",
        source_call_id=ctx.call_id,
        logical_key=key,
        move=True,
        fingerprint=result.fingerprint,
    )
    tmp.unlink(missing_ok=True)
    return artifact, created, intent


def row_cap_note(result: QueryResult) -> str:
    """What the row cap dropped and how to get those rows; empty when nothing was dropped.

    >>> row_cap_note(QueryResult(rows=1000, columns=[], truncated=True, dropped=500, row_cap=1000, elapsed_s=0))
    'the dataset holds the first 1,000 of 1,500 rows: 500 rows past the row cap of 1,000 were dropped; to get them, narrow the query (filter or aggregate in SQL) or raise the row_cap setting'
    """
    if not result.truncated:
        return ""
    cap = f"{result.row_cap:,}" if result.row_cap is not None else "the"
    if result.dropped is None:
        what = (f"the dataset holds the first {result.rows:,} rows; more rows past the row cap of {cap} were "
                "dropped (too many to count quickly)")
    else:
        what = (f"the dataset holds the first {result.rows:,} of {result.rows + result.dropped:,} rows: "
                f"{result.dropped:,} rows past the row cap of {cap} were dropped")
    return what + "; to get them, narrow the query (filter or aggregate in SQL) or raise the row_cap setting"


def _sample_output(
    name: str, rows: int, columns: list[dict[str, str]], sample: list[dict[str, Any]], capped: str = ""
) -> dict[str, Any]:
    """A notebook display of a dataset's first rows, as HTML and plain text."""
    return {"output_type": "display_data", "data": table_bundle(name, rows, columns, sample, capped), "metadata": {}}


async def _reused(env: ThreadEnvironment, args: dict[str, Any], outcome: StepOutcome) -> None:
    """The dataset of a reused query is what its name holds now."""
    if outcome.artifacts:
        await env.dataset_fetched(args["name"], outcome.artifacts[0][0].fingerprint)


# ------------------------------------------------------------------ what its result means

def _observed(result: Mapping[str, Any], artifacts: Sequence[Artifact]) -> Observed:
    """Its rows and columns, and the dataset it made."""
    rows = result.get("rows")
    return Observed(tuple(a.artifact_id for a in artifacts), tuple(a.type for a in artifacts),
                    rows if isinstance(rows, int) else None, tuple(str(c["name"]) for c in result.get("columns", [])))


def _remembers(seen: StepSeen) -> StateChange:
    """The tables it read and the dataset made from them, which becomes the active one."""
    result = seen.result
    name = str(result.get("dataset") or seen.arguments.get("name"))
    tables = (result.get("intent") or {}).get("tables", [])
    described = result.get("_description") or result.get("intent_note")
    add = [entity("table", table, derived_from=[seen.source_id]) for table in tables]
    add.append(entity(
        "dataset", name, derived_from=[f"table:{t}" for t in tables], artifact_id=result.get("artifact_id"),
        rows=result.get("rows"), columns=[c["name"] for c in result.get("columns", [])],
        intent=described,
    ))
    detail = f"{result.get('artifact_id')}: {described or ''}".strip(": ")
    return add, {"dataset": ActiveValue(value=name, detail=detail, last_used=seen.now),
                 "source": ActiveValue(value=seen.source_label, last_used=seen.now)}


def _evidence(call_id: str, result: Mapping[str, Any]) -> list[Evidence]:
    """The rows it sent the model, its row count and, past the row cap, what the cap kept
    and dropped (the ``shown`` line says them)."""
    cap = result.get("row_cap") if isinstance(result.get("row_cap"), dict) else {}
    dropped = cap.get("dropped")
    scalars = {"row_count": result.get("rows"), "rows_dropped": dropped,
               "rows_before_cap": result["rows"] + dropped if isinstance(dropped, int) and isinstance(
                   result.get("rows"), int) else None}
    return [shown_table(call_id, "run_sql", result, artifact_id=result.get("artifact_id"), scalars=scalars)]


def _summarized(args: Mapping[str, Any]) -> str | None:
    """``run_sql → revenue``: the dataset it makes."""
    return f"run_sql → {str(args['name'])[:80]}" if args.get("name") else None


def _finished(args: Mapping[str, Any], result: Mapping[str, Any]) -> list[str]:
    """``run_sql `revenue```: the step, by the dataset it made."""
    made = result.get("dataset") or args.get("name")
    return [(f"run_sql `{made}`" if made else "run_sql") + failed_mark(result)]


def _answered(outcome: StepOutcome) -> str:
    """```revenue``: 4 rows (reused)``: the dataset the user's own query made."""
    how = "reused" if outcome.reused else "executed"
    return f"`{outcome.result.get('dataset')}`: {outcome.result.get('rows')} rows ({how})"
class ResultColumn(ResultModel):
    """A column of a dataset: its name and the engine's type name."""

    name: str
    type: str


class RowCap(ResultModel):
    """What the row cap kept of a result and what it dropped."""

    cap: int | None
    kept: int
    dropped: int | None
    """``None``: too many to count quickly."""


class RunSqlResult(ResultModel):
    """A query's dataset: its name and artifact, its shape, its first rows, what it means."""

    dataset: str
    """The DataFrame's variable name in the kernel."""
    artifact_id: str
    rows: int
    columns: list[ResultColumn]
    sample: list[dict[str, Any]]
    """The first rows, as many as the model is shown (``shown`` says which)."""
    shown: str
    replaces: str | None = None
    """What the name held before, when another dataset or a Python value: it holds these rows now."""
    same_rows_as: str | None = None
    """The dataset that already held these rows (under another name): not stored again."""
    definition_notes: list[str] | None = None
    """Where the query computes a metric the team's context folder defines, and computes it
    otherwise (another aggregate, a filter of the definition missing): how, naming the
    definition's file and line. Left out when it agrees, or defines none."""
    truncated: bool
    """The row cap cut the result (``row_cap`` says how)."""
    reused: bool
    intent: DataIntent
    intent_note: str
    """``intent`` in one line."""
    row_cap: RowCap | None = None
    expectation: ExpectationVerdict | None = None


RUN_SQL = ToolSpec(
    name="run_sql",
    description="One read-only SELECT (CTEs allowed); no writes, DDL or several statements.",
    properties={
        "sql": {"type": "string", "description": "the query"},
        "name": {"type": "string", "description": "the DataFrame's variable name, e.g. monthly_revenue"},
        "expect": expect_schema("rows", "columns"),
    },
    required=("sql", "name"),
    state="data_fetching",
    payload="sql",
    aliases={"query": "sql", "statement": "sql", "sql_query": "sql",
             "dataset": "name", "dataset_name": "name", "variable": "name", "df_name": "name"},
    step=True,
    user_step=True,
    recorded_as=QUERY_STEP,
    # Names that would clobber Python or the kernel are refused before the query is parsed.
    check=lambda args: check_dataset_name(str(args.get("name") or "")),
    plan=plan_sql,
    run=run_sql,
    # A query is coming: the SQL checker and the source's engine worker start now (they take
    # a moment to import).
    named=lambda env: env.warm_sql(side_by_side=False),
    reused=_reused,
    observed=_observed,
    remembers=_remembers,
    summarized=_summarized,
    finished=_finished,
    answered=_answered,
    evidence=_evidence,
    result_model=RunSqlResult,
)
