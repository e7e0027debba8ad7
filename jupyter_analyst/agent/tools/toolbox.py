"""The tools the model may call, and how each becomes a step.

A step is identified by its logical key (tool, canonical arguments, input fingerprints,
source data version). A step whose key was already executed in this thread is *reused*:
its recorded result is returned and nothing runs or is stored again, unless the user asked
to rerun.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from ...artifacts import Artifact, StepRecord, canonical_python, step_key
from ..._disk import unavailable
from ..._text import json_safe
from ...errors import (
    AnalystError,
    DiskUnavailable,
    InvalidArguments,
    KernelError,
    QueryFailed,
    StorageError,
    ToolRetry,
)
from ...kernel.outputs import collect, over_thread_cap
from ...sql import ClearedQuery, DataIntent, PreparedQuery, QueryResult, data_intent
from ..environment.bindings import inputs_of
from .early_sql import EarlyRun, EarlyStart
from .find import find
from ..._clock import utc_now
from ..environment.thread import ThreadRuntime

#: How much of a step's printed output the model is shown.
MODEL_TEXT_CAP = 4_000

_MIME_BY_SUFFIX = {
    ".png": ("image", "image/png"),
    ".jpg": ("image", "image/jpeg"),
    ".jpeg": ("image", "image/jpeg"),
    ".svg": ("image", "image/svg+xml"),
    ".pdf": ("file", "application/pdf"),
    ".csv": ("file", "text/csv"),
    ".json": ("file", "application/json"),
    ".parquet": ("dataset", "application/vnd.apache.parquet"),
    ".html": ("file", "text/html"),
    ".txt": ("text", "text/plain"),
    ".md": ("text", "text/markdown"),
}


@dataclass
class StepOutcome:
    """What one tool call did: its result for the model and what it left behind."""

    status: Literal["ok", "error", "refused"]
    result: dict[str, Any]
    reused: bool = False
    step_key: str | None = None
    artifacts: list[tuple[Artifact, bool]] = field(default_factory=list)
    duration_s: float = 0.0
    notebook_outputs: list[dict[str, Any]] = field(default_factory=list)
    failure: AnalystError | None = None
    """A real failure (not a signal to retry): the step could not run for a reason the
    model cannot fix, such as a kernel that does not start or damaged stored data."""

    @property
    def public_result(self) -> dict[str, Any]:
        """The result as the model and the events see it (no ``_`` bookkeeping keys)."""
        return {k: v for k, v in self.result.items() if not k.startswith("_")}

    @property
    def artifact_ids(self) -> list[str]:
        """Ids of the artifacts the step produced or reused."""
        return [a.artifact_id for a, _ in self.artifacts]


@dataclass(frozen=True)
class StepPlan:
    """What a call will do, worked out before it runs: its logical key and, for SQL, the
    checked query (prepared once, used for the key and for the execution) and the run of it
    that started while it was checked."""

    key: str | None = None
    query: PreparedQuery | None = None
    early: EarlyRun | None = None

    async def drop(self) -> None:
        """The call will not run (reused, or the turn stopped): an early run is interrupted and
        its staged file removed. Does nothing once the call has taken the run."""
        if self.early is not None:
            await self.early.drop()


@dataclass
class CallContext:
    """Who is calling: the turn, the call id, whether reuse is allowed."""

    thread_id: str
    turn_id: str
    call_id: str
    rerun: bool = False


def clip(text: str, cap: int = MODEL_TEXT_CAP) -> str:
    """Shorten ``text`` for the model, saying how much was left out.

    >>> clip("abcdef", 4)
    'abcd\\n[... 2 more characters not shown]'
    """
    if len(text) <= cap:
        return text
    return f"{text[:cap]}\n[... {len(text) - cap} more characters not shown]"


class ToolBox:
    """Executes tool calls for one thread, reusing recorded steps."""

    def __init__(self, runtime: ThreadRuntime) -> None:
        self.runtime = runtime
        self.artifacts = runtime.artifacts
        #: A dataset is checked against the thread's caps and stored by one step at a time, so
        #: queries that run together (a plan's) cannot each pass a cap they pass only together.
        self._storing = asyncio.Lock()

    # ------------------------------------------------------------------ keys

    async def plan(self, tool: str, args: dict[str, Any]) -> StepPlan:
        """The step's plan: its logical key (``None`` for metadata tools, never cached).

        SQL is prepared here, off the event loop and within the runtime's limits; that also
        checks it against the schema.

        Raises:
            ToolRetry: the SQL is refused (``SqlRejected``) or the code too complex to key.
        """
        if tool == "run_sql":
            # The query starts running once it has passed the read-only guard, while the
            # rest is checked (see early_sql.py): only where a run can be stopped midway, and
            # not for a text or a dataset name the thread asked for before (that call is most
            # likely the same query again, and reused).
            start = EarlyStart(
                self._execute,
                unless=partial(self.artifacts.sql_asked_before, self.runtime.thread_id, args["sql"], args["name"]),
            ) if getattr(self.runtime.source, "interruptible", False) else None
            early = None
            try:
                prepared = await self.runtime.preparer.prepare(
                    args["sql"], self.runtime.source, on_cleared=start,
                    meanwhile=start.meanwhile if start is not None else None,
                )
                early = start.close() if start is not None else None
                key = step_key(
                    "run_sql",
                    {"sql": prepared.canonical, "name": args["name"]},
                    data_version=self.runtime.data_version(),
                )
            except BaseException:  # refused after all (an unknown column), or stopped: not run
                early = start.close() if start is not None else None
                if early is not None:
                    await early.drop()
                raise
            return StepPlan(key, prepared, early)
        if tool == "run_python":
            # What the names it reads hold: datasets' fingerprints, earlier steps' keys.
            try:
                inputs = inputs_of(args["code"], self.runtime.bindings())
                canonical = canonical_python(args["code"])
            except (RecursionError, MemoryError):  # checked code does not get here; never a crash
                raise InvalidArguments("the code is too complex to analyse", reason="python_too_complex") from None
            return StepPlan(step_key("run_python", {"code": canonical}, list(inputs.values())))
        return StepPlan()

    def recorded(self, ctx: CallContext, key: str | None) -> StepRecord | None:
        """The earlier step with this key, if reuse is allowed."""
        if key is None or ctx.rerun:
            return None
        return self.artifacts.find_step(ctx.thread_id, key)

    def reuse(self, record: StepRecord) -> StepOutcome:
        """The outcome of a step that is not run again."""
        arts = [(self.artifacts.get(a), False) for a in record.artifact_ids]
        result = {**record.result, "reused": True}
        return StepOutcome(
            status=record.status,
            result=result,
            reused=True,
            step_key=record.step_key,
            artifacts=arts,
            notebook_outputs=list(record.result.get("_notebook", [])),
        )

    # ------------------------------------------------------------------ dispatch

    async def call(self, tool: str, args: dict[str, Any], ctx: CallContext, plan: StepPlan) -> StepOutcome:
        """Run one (already normalised, guarded and planned) tool call."""
        key = plan.key
        # A run that started while the call was planned counts from its own start.
        started = plan.early.started if plan.early is not None else time.perf_counter()
        try:
            match tool:
                case "list_tables":
                    outcome = self._list_tables()
                case "describe_table":
                    outcome = self._describe_table(args)
                case "list_artifacts":
                    outcome = self._list_artifacts(args, ctx)
                case "find":
                    outcome = self._find(args, ctx)
                case "read_cells":
                    outcome = self._read_cells(args)
                case "run_sql":
                    outcome = await self._run_sql(args, ctx, plan)
                case "run_python":
                    outcome = await self._run_python(args, ctx, key)
                case _:
                    raise InvalidArguments(f"unknown tool {tool!r}", reason="unknown_tool")
        except ToolRetry as exc:
            outcome = StepOutcome(status="error", result={"error": exc.to_dict()}, step_key=key)
        except DiskUnavailable:
            raise  # a read-only or full workspace ends the turn; the model cannot help it
        except AnalystError as exc:
            outcome = StepOutcome(status="error", result={"error": exc.to_dict()}, step_key=key, failure=exc)
        outcome.duration_s = time.perf_counter() - started
        if key is not None and tool in ("run_sql", "run_python") and outcome.status == "ok":
            self.artifacts.record_step(
                StepRecord(
                    thread_id=ctx.thread_id,
                    step_key=key,
                    tool=tool,
                    call_id=ctx.call_id,
                    turn_id=ctx.turn_id,
                    arguments=args,
                    status=outcome.status,
                    result={**outcome.result, "_notebook": outcome.notebook_outputs},
                    artifact_ids=outcome.artifact_ids,
                    created_at=utc_now(),
                    duration_s=outcome.duration_s,
                )
            )
        return outcome

    # ------------------------------------------------------------------ metadata tools

    def _list_tables(self) -> StepOutcome:
        tables = self.runtime.source.list_tables()
        return StepOutcome(
            status="ok",
            result={"tables": [t.model_dump() if hasattr(t, "model_dump") else vars(t) for t in tables]},
        )

    def _describe_table(self, args: dict[str, Any]) -> StepOutcome:
        if not args.get("table"):
            raise InvalidArguments("describe_table needs a 'table' name", hint="call list_tables first")
        desc = self.runtime.source.describe_table(args["table"])
        data = desc.model_dump() if hasattr(desc, "model_dump") else vars(desc)
        return StepOutcome(status="ok", result=json_safe(data))

    def _list_artifacts(self, args: dict[str, Any], ctx: CallContext) -> StepOutcome:
        items = self.artifacts.list(ctx.thread_id, type=args.get("type"), name=args.get("name"))
        return StepOutcome(status="ok", result={"artifacts": [a.summary() for a in items]})

    def _find(self, args: dict[str, Any], ctx: CallContext) -> StepOutcome:
        query = str(args.get("query") or "").strip()
        if not query:
            raise InvalidArguments("find needs a 'query': the words the user used", hint='e.g. {"query": "sales"}')
        kind = args.get("kind") or None
        if kind not in (None, "table", "column", "dataset", "artifact"):
            raise InvalidArguments(
                f"find cannot look for {kind!r}", hint="kind is one of: table, column, dataset, artifact"
            )
        matches = find(
            query,
            schema=self.runtime.source.schema(),
            datasets=self.runtime.dataset_ids(),
            artifacts=self.artifacts.list(ctx.thread_id) if kind in (None, "artifact") else (),
            kind=kind,
        )
        result: dict[str, Any] = {"query": query, "matches": [m.model_dump(exclude_none=True) for m in matches]}
        if not matches:
            result["note"] = "nothing matches; call list_tables or list_artifacts, or ask the user"
        return StepOutcome(status="ok", result=result)

    def _read_cells(self, args: dict[str, Any]) -> StepOutcome:
        from ...notebooks.outline import read_cells

        attached = self.runtime.attached
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

    # ------------------------------------------------------------------ run_sql

    async def _run_sql(self, args: dict[str, Any], ctx: CallContext, plan: StepPlan) -> StepOutcome:
        name = args["name"]
        key = plan.key
        # Prepared when the step was planned: not parsed a second time.
        prepared = plan.query or await self.runtime.preparer.prepare(args["sql"], self.runtime.source)
        early = await plan.early.take(prepared.executable) if plan.early is not None else None
        try:
            result, tmp = await (early if early is not None else self._execute(prepared))
        except (OSError, QueryFailed) as exc:
            # A result that does not fit on the disk is not the query's fault: the turn stops.
            problem = unavailable(exc, self.artifacts.blobs.root)
            if problem is not None:
                raise problem from exc
            if isinstance(exc, OSError):
                raise StorageError(f"cannot stage the query's result in {self._staging}: {exc}") from exc
            raise
        async with self._storing:
            artifact, created, intent = await self._store_dataset(prepared, result, tmp, name, ctx, key)
        await self.runtime.dataset_fetched(name, artifact.fingerprint)
        columns = [{"name": c.name, "type": c.type} for c in result.columns]
        capped = row_cap_note(result)
        payload = {
            "dataset": name,
            "artifact_id": artifact.artifact_id,
            "rows": result.rows,
            "columns": columns,
            "sample": json_safe(result.sample),
            "truncated": result.truncated,
            "reused": False,
            "intent": intent.model_dump(exclude_defaults=True),
            "intent_note": intent.line(),
            "note": (
                f"`{name}` is a pandas DataFrame in the kernel with {result.rows} rows"
                + (f" ({capped})" if capped else "")
                + f"; columns: {', '.join(c['name'] for c in columns)}."
            ),
        }
        if result.truncated:
            payload["row_cap"] = {"cap": result.row_cap, "kept": result.rows, "dropped": result.dropped}
        return StepOutcome(
            status="ok",
            result=payload,
            step_key=key,
            artifacts=[(artifact, created)],
            notebook_outputs=[_sample_output(name, result.rows, columns, result.sample, capped)],
        )

    async def _store_dataset(
        self, prepared: PreparedQuery, result: QueryResult, tmp: Path, name: str, ctx: CallContext, key: str | None
    ) -> tuple[Artifact, bool, DataIntent]:
        """The query's staged file as a dataset artifact, within the thread's caps."""
        used, used_bytes = self.artifacts.usage(ctx.thread_id)
        refusal = over_thread_cap(self.runtime.output_caps, files=1, size=result.size,
                                  thread_files=used, thread_bytes=used_bytes)
        if refusal is not None:
            tmp.unlink(missing_ok=True)
            raise InvalidArguments(f"the dataset was not stored: {refusal}", reason="thread_cap_reached",
                                   hint="fetch fewer rows or columns, or start a new thread")
        # The data-intent note: what this dataset means, for later steps and turns (its
        # shape was read when the SQL was prepared, its time range as the file was written).
        intent = data_intent(prepared.shape, tables=prepared.tables, rows=result.rows, time_range=result.time_range)
        # Hashed as it was written: handed to the blob store without being read again.
        artifact, created = await asyncio.to_thread(
            self.artifacts.add_file,
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

    @property
    def _staging(self) -> Path:
        """Where results are written before they enter the blob store: beside it, where no
        kernel can see them."""
        return self.artifacts.blobs.dir.parent / ".incoming"

    async def _execute(self, query: PreparedQuery | ClearedQuery) -> tuple[QueryResult, Path]:
        """Run ``query`` into a staged Parquet file of its own: the result and the file."""
        tmp = self._staging / f"{uuid.uuid4().hex}.parquet"
        return await self.runtime.runner.run_to_parquet(query, tmp), tmp

    # ------------------------------------------------------------------ run_python

    async def _run_python(self, args: dict[str, Any], ctx: CallContext, key: str | None) -> StepOutcome:
        try:
            kernel = await self.runtime.kernel()
            # The kernel may hold later values than this step's key says (a reused step
            # changes nothing there), or none (a new kernel is restored lazily): its inputs
            # are made what the key says first.
            inputs = await self.runtime.restore_inputs(args["code"])
        except KernelError as exc:
            self.runtime.python_not_run(args["code"], ctx.call_id)
            raise KernelError(
                f"the step did not run: {exc.message}", reason="kernel_start_failed",
                hint="nothing it would define exists; the next run_python starts a kernel again",
            ) from exc
        execution = await kernel.execute(args["code"], timeout=self.runtime.python_timeout_s)
        self.runtime.python_executed(args["code"], key, ok=execution.status == "ok")
        note = None
        if execution.status == "died":
            cause = f" ({execution.error.evalue})" if execution.error else ""
            note = (
                f"The kernel died while running this step{cause}; a fresh kernel was started, and the "
                "thread's datasets and earlier results are restored in it as later steps read them."
            )
            try:
                await self.runtime.restart_kernel()
            except KernelError as exc:
                note = (f"The kernel died while running this step{cause}, and a fresh one could not be "
                        f"started ({exc.message}); the next run_python starts a kernel again.")
        elif execution.status == "timeout":
            note = f"The step ran past {self.runtime.python_timeout_s:g} s and was interrupted."
        made: list[tuple[Artifact, bool]] = []
        refused: list[tuple[str, str]] = list(execution.refused_files)
        refusal: str | None = None
        if execution.status == "ok":
            try:
                made, more, refusal = await asyncio.to_thread(self._collect_outputs, execution, ctx, key)
            except OSError as exc:  # copying the step's files out: a full or read-only workspace
                raise unavailable(exc, self.artifacts.blobs.root) or StorageError(
                    f"cannot store the step's files: {exc}") from exc
            refused += more
        payload: dict[str, Any] = {
            "stdout": clip(execution.stdout),
            "reused": False,
            "_inputs": inputs,
            "artifacts": [{"id": a.artifact_id, "name": a.name, "type": a.type} for a, _ in made],
        }
        if refused or refusal:
            # Told plainly, so the model does not cite files that are not in the inventory.
            payload["files_not_stored"] = [{"path": p, "reason": why} for p, why in refused[:20]]
            payload["files_note"] = refusal or f"{len(refused)} file(s) under outputs/ were ignored and not stored"
        if execution.stderr:
            payload["stderr"] = clip(execution.stderr, 1_000)
        if execution.result is not None:
            payload["result"] = clip(execution.result, 2_000)
        if execution.error is not None:
            payload["error"] = {"reason": "python_error", "message": execution.error.short()}
        if note:
            payload["error"] = {"reason": f"kernel_{execution.status}", "message": note}
        status: Literal["ok", "error"] = "ok" if execution.status == "ok" else "error"
        text_outputs = [o for o in execution.outputs if o.get("output_type") in ("stream", "error", "execute_result")]
        return StepOutcome(
            status=status, result=payload, step_key=key, artifacts=made, notebook_outputs=text_outputs
        )

    def _collect_outputs(
        self, execution: Any, ctx: CallContext, key: str | None
    ) -> tuple[list[tuple[Artifact, bool]], list[tuple[str, str]], str | None]:
        """The step's figures and files as artifacts, within the caps; ``(made, refused, refusal)``.

        Files are read from the kernel's folder without following links (kernel/outputs.py)
        and staged host-side before they enter the blob store.
        """
        used, used_bytes = self.artifacts.usage(ctx.thread_id)
        figures = [(mime, data) for mime, data in execution.images]
        collection, refusal = collect(
            self.runtime.workdir, [str(p) for p in execution.new_files], caps=self.runtime.output_caps,
            staging=self._staging,
            figures=len(figures), figures_bytes=sum(len(d) for _, d in figures),
            thread_files=used, thread_bytes=used_bytes,
        )
        if refusal is not None:
            return [], collection.refused, refusal
        made: list[tuple[Artifact, bool]] = []
        try:
            for n, (mime, data) in enumerate(figures, start=1):
                suffix = ".svg" if "svg" in mime else ".png"
                made.append(
                    self.artifacts.add_bytes(
                        data, thread_id=ctx.thread_id, name=f"{ctx.call_id}-figure-{n}{suffix}", type="image",
                        mime=mime, producer="python", source_call_id=ctx.call_id, logical_key=key,
                    )
                )
            for staged in collection.staged:
                kind, mime = _MIME_BY_SUFFIX.get(Path(staged.relpath).suffix.lower(), ("file", "application/octet-stream"))
                made.append(
                    self.artifacts.add_file(
                        staged.path, thread_id=ctx.thread_id, name=staged.relpath,
                        type=kind,  # type: ignore[arg-type]
                        mime=mime, producer="python", source_call_id=ctx.call_id, logical_key=key, move=True,
                    )
                )
        finally:
            collection.discard()  # whatever was not moved into the store
        return made, collection.refused, None


def row_cap_note(result: QueryResult) -> str:
    """What the row cap dropped and how to get those rows; empty when nothing was dropped.

    >>> row_cap_note(QueryResult(rows=1000, columns=[], truncated=True, dropped=500, row_cap=1000, elapsed_s=0))
    'the first 1,000 of 1,500 rows: 500 rows past the row cap of 1,000 were dropped; to get them, narrow the query (filter or aggregate in SQL) or raise the row_cap setting'
    """
    if not result.truncated:
        return ""
    cap = f"{result.row_cap:,}" if result.row_cap is not None else "the"
    if result.dropped is None:
        what = f"the first {result.rows:,} rows; more rows past the row cap of {cap} were dropped (too many to count quickly)"
    else:
        what = (f"the first {result.rows:,} of {result.rows + result.dropped:,} rows: {result.dropped:,} rows "
                f"past the row cap of {cap} were dropped")
    return what + "; to get them, narrow the query (filter or aggregate in SQL) or raise the row_cap setting"


def _sample_output(
    name: str, rows: int, columns: list[dict[str, str]], sample: list[dict[str, Any]], capped: str = ""
) -> dict[str, Any]:
    """A notebook display of a dataset's first rows, as HTML and plain text."""
    from ...artifacts.preview import table_bundle

    return {"output_type": "display_data", "data": table_bundle(name, rows, columns, sample, capped), "metadata": {}}
