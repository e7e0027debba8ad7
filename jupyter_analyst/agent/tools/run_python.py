"""The ``run_python`` tool: code run in the thread's kernel, with its figures and files kept.

Before a step runs, what it reads is restored in the kernel as its key says (see
``environment/rehydrate.py``); its key is its canonical code and the bindings of the names
it reads, so identical code on the same inputs is reused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..._disk import unavailable
from ...agent_state import ActiveValue
from ...artifacts import Artifact, ArtifactType, canonical_python, step_key
from ...step_kinds import CODE_STEP
from ...errors import InvalidArguments, KernelError, StorageError
from ...kernel import collect_outputs, figure_file_names
from ..dataflow import names_used
from ..environment import inputs_of
from ..guards import check_python_code, unknown_python_names
from ..spec import Observed, StateChange, StepSeen, ToolSpec, entity, expect_schema
from .live_output import LiveOutput
from ..spec import MODEL_TEXT_CAP, CallContext, StepOutcome, StepPlan, clip, printed
from .python_errors import model_error
from .result_models import ExpectationVerdict, ResultModel, ToolErrorDetail
from .run_sql import staging

if TYPE_CHECKING:
    from ...receipts import Evidence
    from ..environment import ThreadEnvironment

#: How to see what the middle of a long output held (the notebook keeps it whole).
_PRINT_LESS = "print less at once to see it: a slice (df.iloc[a:b]), a filter, or one table per call"

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


async def plan_python(env: ThreadEnvironment, args: dict[str, Any]) -> StepPlan:
    """The step's key: its canonical code and what the names it reads hold (datasets'
    fingerprints, earlier steps' keys).

    Raises:
        ToolRetry: the code is too complex to key.
    """
    try:
        inputs = inputs_of(args["code"], env.bindings())
        canonical = canonical_python(args["code"])
    except (RecursionError, MemoryError):  # checked code does not get here; never a crash
        raise InvalidArguments("the code is too complex to analyse", reason="python_too_complex") from None
    return StepPlan(step_key("run_python", {"code": canonical}, list(inputs.values())))


async def run_python(env: ThreadEnvironment, args: dict[str, Any], ctx: CallContext, plan: StepPlan) -> StepOutcome:
    key = plan.key
    try:
        kernel = await env.kernel()
        # The kernel may hold later values than this step's key says (a reused step
        # changes nothing there), or none (a new kernel is restored lazily): its inputs
        # are made what the key says first.
        inputs = await env.restore_inputs(args["code"])
    except KernelError as exc:
        env.python_not_run(args["code"], ctx.call_id)
        raise KernelError(
            f"the step did not run: {exc.message}", reason="kernel_start_failed",
            hint="nothing it would define exists; the next run_python starts a kernel again",
        ) from exc
    live = LiveOutput(ctx.emit, ctx.call_id) if ctx.emit is not None else None
    try:
        execution = await kernel.execute(args["code"], timeout=env.python_timeout_s, caps=env.output_caps,
                                         on_stream=live.feed if live is not None else None)
    finally:
        # Also when the step is stopped: what it printed until then is told, and kept.
        if live is not None:
            await asyncio.shield(live.close())
    env.python_executed(args["code"], key, ok=execution.status == "ok")
    note = await _kernel_note(env, execution)
    made: list[tuple[Artifact, bool]] = []
    refused: list[tuple[str, str]] = list(execution.refused_files)
    refusal: str | None = None
    if execution.status == "ok":
        try:
            made, more, refusal = await asyncio.to_thread(_collect_outputs, env, execution, ctx, key)
        except OSError as exc:  # copying the step's files out: a full or read-only workspace
            raise unavailable(exc, env.artifacts.blobs.root) or StorageError(
                f"cannot store the step's files: {exc}") from exc
        refused += more
    payload: dict[str, Any] = {
        "stdout": clip(execution.stdout, how=_PRINT_LESS),
        "reused": False,
        "_inputs": inputs,
        "artifacts": [{"id": a.artifact_id, "name": a.name, "type": a.type} for a, _ in made],
    }
    if refused or refusal:
        # Told plainly, so the model does not cite files that are not in the inventory.
        payload["files_not_stored"] = [{"path": p, "reason": why} for p, why in refused[:20]]
        payload["files_note"] = refusal or f"{len(refused)} file(s) under outputs/ were ignored and not stored"
    if execution.stderr:
        payload["stderr"] = clip(execution.stderr, 1_000, how=_PRINT_LESS)
    if execution.result is not None:
        payload["result"] = clip(execution.result, 2_000, how=_PRINT_LESS)
    if execution.notes:
        payload["output_notes"] = [clip(n, 300) for n in execution.notes[:10]]
    if execution.error is not None:
        payload["error"] = {"reason": "python_error", "message": clip(model_error(execution.error), MODEL_TEXT_CAP)}
    if note:
        payload["error"] = {"reason": f"kernel_{execution.status}", "message": note}
    status: Literal["ok", "error"] = "ok" if execution.status == "ok" else "error"
    text_outputs = [o for o in execution.outputs if o.get("output_type") in ("stream", "error", "execute_result")]
    return StepOutcome(
        status=status, result=payload, step_key=key, artifacts=made, notebook_outputs=text_outputs
    )



async def _kernel_note(env: ThreadEnvironment, execution: Any) -> str | None:
    """What the model is told when the step did not end normally (the kernel died, the step
    timed out, or left something running); a kernel that died or was stopped is replaced."""
    if execution.status == "died":
        cause = f" ({execution.error.evalue})" if execution.error else ""
        try:
            await env.restart_kernel()
        except KernelError as exc:
            return (f"The kernel died while running this step{cause}, and a fresh one could not be "
                    f"started ({exc.message}); the next run_python starts a kernel again.")
        return (
            f"The kernel died while running this step{cause}; a fresh kernel was started, and the "
            "thread's datasets and earlier results are restored in it as later steps read them."
        )
    if execution.status == "timeout":
        return f"The step ran past {env.python_timeout_s:g} s and was interrupted."
    if execution.status == "runaway":
        note = (
            f"The kernel was stopped after this step: {execution.stopped}. Its files and figures were not "
            "stored, and a fresh kernel was started; the thread's datasets and earlier results are restored in "
            "it as later steps read them. A step must not leave threads, timers or processes running."
        )
        try:
            await env.restart_kernel()
        except KernelError as exc:
            note += f" (A fresh kernel could not be started: {exc.message}; the next run_python starts one.)"
        return note
    return None


def _collect_outputs(
    env: ThreadEnvironment, execution: Any, ctx: CallContext, key: str | None
) -> tuple[list[tuple[Artifact, bool]], list[tuple[str, str]], str | None]:
    """The step's figures and files as artifacts, within the caps; ``(made, refused, refusal)``.

    Files are read from the kernel's folder without following links (kernel/outputs.py)
    and staged host-side before they enter the blob store.
    """
    used, used_bytes = env.artifacts.usage(ctx.thread_id)
    figures = [(mime, data) for mime, data in execution.images]
    collection, refusal = collect_outputs(
        env.workdir, [str(p) for p in execution.new_files], caps=env.output_caps,
        staging=staging(env),
        figures=len(figures), figures_bytes=sum(len(d) for _, d in figures),
        thread_files=used, thread_bytes=used_bytes,
    )
    if refusal is not None:
        return [], collection.refused, refusal
    made: list[tuple[Artifact, bool]] = []
    # A figure is named after its title or the variable that held it, as the kernel said
    # (a label, cleaned and bounded: never a path).
    labels = list(getattr(execution, "figure_labels", []))
    labels += [""] * (len(figures) - len(labels))
    names = figure_file_names(labels[: len(figures)], ctx.call_id, [".svg" if "svg" in m else ".png" for m, _ in figures])
    try:
        for name, (mime, data) in zip(names, figures, strict=True):
            made.append(
                env.artifacts.add_bytes(
                    data, thread_id=ctx.thread_id, name=name, type="image",
                    mime=mime, producer="python", source_call_id=ctx.call_id, logical_key=key,
                )
            )
        for staged in collection.staged:
            kind, mime = _MIME_BY_SUFFIX.get(Path(staged.relpath).suffix.lower(), ("file", "application/octet-stream"))
            made.append(
                env.artifacts.add_file(
                    staged.path, thread_id=ctx.thread_id, name=staged.relpath,
                    type=kind,  # type: ignore[arg-type]
                    mime=mime, producer="python", source_call_id=ctx.call_id, logical_key=key, move=True,
                )
            )
    finally:
        collection.discard()  # whatever was not moved into the store
    return made, collection.refused, None


async def _reused(env: ThreadEnvironment, args: dict[str, Any], outcome: StepOutcome) -> None:
    """The names a reused step binds hold its values now, logically."""
    if outcome.status == "ok" and outcome.step_key is not None:
        env.python_reused(args["code"], outcome.step_key)


# ------------------------------------------------------------------ what its result means

def _observed(result: Mapping[str, Any], artifacts: Sequence[Artifact]) -> Observed:
    """The figures and files it made, and how many (none is a count too: a chart expected
    and not drawn is caught)."""
    ids = tuple(a.artifact_id for a in artifacts)
    return Observed(ids, tuple(a.type for a in artifacts), len(ids), None)


def _remembers(seen: StepSeen) -> StateChange:
    """Each artifact it made, from the datasets its code read; the last of those becomes
    the active dataset."""
    read = names_used(str(seen.arguments.get("code", "")))
    used = [name for name in seen.datasets() if name in read]
    inputs = [f"dataset:{d}" for d in used]
    add = [entity("artifact", a.artifact_id, derived_from=inputs, file=a.name, type=a.type, fingerprint=a.fingerprint)
           for a in seen.artifacts]
    if not used:
        return add, {}
    last = used[-1]
    known = seen.state.entities.get(f"dataset:{last}")
    # Said as every other active dataset is (its id, then its description): one form, which
    # an earlier result that made it points to.
    detail = (f"{known.detail.get('artifact_id') or ''}: {known.detail.get('intent') or ''}".strip(": ")
              if known else None)
    return add, {"dataset": ActiveValue(value=last, detail=detail or None, last_used=seen.now)}


def _evidence(call_id: str, result: Mapping[str, Any]) -> list[Evidence]:
    """What it printed and the repr of its last expression, as the model was sent them."""
    return printed(call_id, "run_python", {"stdout": result.get("stdout"), "result": result.get("result")})


def _summarized(args: Mapping[str, Any]) -> str | None:
    """``run_python: fig, ax = plt.subplots() …``: its first line of code."""
    if not isinstance(args.get("code"), str):
        return None
    lines = [line.strip() for line in args["code"].splitlines() if line.strip() and not line.strip().startswith("#")]
    return f"run_python: {lines[0][:120]}{' …' if len(lines) > 1 else ''}" if lines else "run_python"
class MadeArtifact(ResultModel):
    """A figure or file a step made, as the model can name it."""

    id: str
    name: str
    type: ArtifactType


class FileNotStored(ResultModel):
    """A file under outputs/ that was not stored, and why."""

    path: str
    reason: str


class RunPythonResult(ResultModel):
    """What a Python step printed and made; a step that raised (status ``error``) says so in ``error``."""

    stdout: str
    reused: bool
    artifacts: list[MadeArtifact]
    files_not_stored: list[FileNotStored] | None = None
    files_note: str | None = None
    stderr: str | None = None
    result: str | None = None
    """The repr of the code's last expression."""
    output_notes: list[str] | None = None
    """What the kernel's output held that is not shown (a widget, a too large figure)."""
    error: ToolErrorDetail | None = None
    expectation: ExpectationVerdict | None = None


RUN_PYTHON = ToolSpec(
    name="run_python",
    description="Python in the kernel (plt is matplotlib.pyplot). Print what you need to see; fetch data with "
                "run_sql, not from Python.",
    properties={
        "code": {"type": "string", "description": "the code"},
        "expect": expect_schema("count", "artifact_type", "artifact_ids"),
    },
    required=("code",),
    state="analyzing",
    payload="code",
    aliases={"source": "code", "script": "code", "python": "code", "python_code": "code", "program": "code"},
    step=True,
    user_step=True,
    recorded_as=CODE_STEP,
    empty_reason="empty_python_payload_retried",
    # What no analysis could handle is refused before anything parses the code.
    check=lambda args: check_python_code(args["code"]),
    plan=plan_python,
    run=run_python,
    reused=_reused,
    invented=lambda env, args: unknown_python_names(env, "run_python", str(args.get("code", ""))),
    observed=_observed,
    remembers=_remembers,
    summarized=_summarized,
    evidence=_evidence,
    result_model=RunPythonResult,
)
