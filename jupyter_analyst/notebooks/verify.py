"""``jupyter analyst verify``: re-execute an exported notebook and prove it reproduces.

The notebook is untrusted input: anyone can hand you one. So the data source is the one the
user names (``--db``, or the thread they name in their own workspace), never the one its
``parameters`` cell or metadata claim; the sandboxed kernel is shown that source and nothing
else; and every fingerprint compared is the host's own hash of bytes it took out of the
kernel's folder or displays (``reproduction.py``), never one the kernel prints.

The run is papermill's, with the ``analyst`` engine, in a fresh folder of the kernel's own.
Then each artifact of the manifest is looked for in what its step's cell made, by how the
step made it: a query's result, a displayed figure, a file under ``outputs/``. Each is
*matched*, *changed* (the step ran and made something else) or *missing* (nothing made it:
the step failed, never ran, or left something the host would not read). The verdict is
``verified`` (everything matched), ``not_verified``, or ``nothing_to_verify`` when the
manifest is empty: then no kernel starts, and the report says so rather than pass.

Each artifact that did not match is then given its cause with the evidence for it: its code
was edited, the tables its steps read changed, the recorded package versions moved, or a
second run makes other bytes again (``verify_causes.py``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from .._text import masked
from ..errors import ConfigError
from .hosted_queries import needs_host, run_hosted
from .reproduction import Recorder, ResultCapture, StepRun, origin_of
from .trail import META, read_notebook
from .verify_causes import Cause, CauseEvidence, Explainer, measure_tables

Status = Literal["matched", "changed", "missing"]
Verdict = Literal["verified", "not_verified", "nothing_to_verify"]

#: How much of a failed cell's error message a report repeats.
ERROR_CHARS = 500


class ArtifactCheck(BaseModel):
    """One manifest artifact and what the re-execution made of it."""

    artifact_id: str
    name: str
    type: str
    call_id: str | None
    step_key: str | None
    cell: int | None = None
    """The index of the code cell that made (or should have made) it."""
    expected: str
    actual: str | None = None
    """The host's own fingerprint of what the re-run made; null when it made nothing."""
    status: Status
    note: str | None = None
    """Why it is missing, when there is more to say: its cell failed or was not reached, or
    the host would not read what it wrote (a link, over the caps)."""
    cause: Cause | None = None
    """Why it did not match, when it did not and a cause was found (``verify_causes.py``):
    ``code_changed``, ``data_changed``, ``environment_changed``, ``not_deterministic``, or
    ``unexplained`` (two runs agree with each other, not with the record)."""
    evidence: CauseEvidence | None = None
    """What shows the cause: a diff, the tables that changed, the versions that moved, the two runs."""


class VerifyReport(BaseModel):
    """The outcome of one verification."""

    notebook: str
    source: str | None
    """The data source the run used, as the user named it; null when nothing ran."""
    verdict: Verdict
    checks: list[ArtifactCheck]
    error: str | None = None
    """The execution error, when a cell failed (the checks say what it left missing)."""
    data_version: str | None = None
    """The source's data version as the run found it (``...:live``: the source gives none)."""
    data_note: str | None = None
    """What a match means for this source: for a live one, that it assumes the data did not
    change (nothing tells it did)."""

    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(c.status == s for c in self.checks) for s in ("matched", "changed", "missing")}

    @property
    def ok(self) -> bool:
        """Verified: the notebook ran and reproduced every artifact (never true with nothing to check)."""
        return self.verdict == "verified"

    def to_json(self) -> dict[str, Any]:
        return {**self.model_dump(), "counts": self.counts, "ok": self.ok}


def verdict_of(checks: list[ArtifactCheck], error: str | None) -> Verdict:
    """The verdict on a run's checks.

    >>> verdict_of([], None)
    'nothing_to_verify'
    >>> check = ArtifactCheck(artifact_id="a", name="n", type="file", call_id=None, step_key=None,
    ...                       expected="sha256:1", actual="sha256:1", status="matched")
    >>> verdict_of([check], None), verdict_of([check], "cell 3 failed")
    ('verified', 'not_verified')
    """
    if not checks:
        return "nothing_to_verify"
    return "verified" if error is None and all(c.status == "matched" for c in checks) else "not_verified"


def manifest_of(nb: Any, path: Path) -> list[dict[str, Any]]:
    """The notebook's manifest, or a clear error for a notebook that has none."""
    meta = nb.metadata.get(META) or {}
    manifest = meta.get("manifest")
    if not isinstance(manifest, list) or not all(_is_entry(e) for e in manifest):
        raise ConfigError(
            f"{path} has no artifact manifest: it is not a notebook exported by jupyter-analyst",
            reason="no_manifest", hint="export a thread first: jupyter analyst export --thread ID -o NB.ipynb",
        )
    return manifest


def _is_entry(entry: Any) -> bool:
    return isinstance(entry, Mapping) and all(isinstance(entry.get(k), str) for k in ("artifact_id", "fingerprint"))


def check_source(spec: str | None) -> tuple[str, list[Path], str]:
    """The source the user named, opened once here so a missing one fails before any kernel
    starts; with the files or folder the kernel must be shown to open it, and its data version."""
    from ..sql import absolute_spec, local_path, open_source

    if not spec:
        raise ConfigError(
            "no data source to verify against", reason="no_source",
            hint="pass --db SOURCE (or --thread ID for a thread's own source); a notebook's own "
                 "parameters are never used, since anyone can hand you a notebook",
        )
    # A relative path means the caller's folder; the run happens in another one.
    resolved = absolute_spec(spec)
    opened = open_source(resolved)
    try:
        version = opened.data_version()
    finally:
        opened.close()
    path = local_path(resolved)
    return resolved, [path] if path is not None and path.exists() else [], version


def verify_notebook(
    path: Path,
    *,
    source: str | None = None,
    workdir: Path | None = None,
    progress: bool = False,
    capture: ResultCapture | None = None,
) -> VerifyReport:
    """Re-execute ``path`` against ``source`` (the user's) and compare with its manifest.

    ``workdir``: a new or empty folder for the kernel (default: a temporary one).
    ``progress`` shows papermill's per-cell bar on stderr (for a terminal). ``capture``
    is filled with the cited cells of the first run's results and its executed copy
    (``reanswer.py``).
    """
    path = Path(path)
    original = read_notebook(path)
    manifest = {entry["artifact_id"]: entry for entry in manifest_of(original, path)}
    if not manifest:
        return VerifyReport(notebook=str(path), source=None, verdict="nothing_to_verify", checks=[])
    from ..sql import data_version_note

    resolved, readable, version = check_source(source)

    def run(workdir: Path | None, capture: ResultCapture | None = None,
            ) -> tuple[list[ArtifactCheck], Recorder, str | None]:
        with tempfile.TemporaryDirectory(prefix="analyst-verify-") as tmp:
            # The kernel's folder is hostile ground: the executed copy and the staged files
            # are written beside it, never in it.
            run_dir = Path(workdir) if workdir is not None else Path(tmp) / "run"
            run_dir.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / "staging").mkdir()
            recorder = Recorder(run_dir, Path(tmp) / "staging", manifest, capture=capture)
            executed = Path(tmp) / "executed.ipynb"
            hosted = None
            if needs_host(resolved) and not readable:  # a server: its queries run here, results go in read-only
                hosted = Path(tmp) / "hosted"
                run_hosted(original, resolved, hosted)
            error = _execute(path, executed, run_dir, resolved, readable, recorder, progress, hosted)
            if capture is not None and executed.is_file():
                capture.executed = read_notebook(executed)
        return _checks(original, manifest, recorder.runs, reached=error is None), recorder, error

    checks, recorder, error = run(workdir, capture)
    # Each difference explained; a second run (in a folder of its own) only if one needs it.
    Explainer(original, measure_tables(resolved),
              lambda: {c.artifact_id: c.actual for c in run(None)[0]}).explain(checks)
    if error is not None:
        error = _failure(original, recorder.failed_cell, error)
    return VerifyReport(notebook=str(path), source=masked(resolved), verdict=verdict_of(checks, error), checks=checks,
                        error=error, data_version=version, data_note=data_version_note(version))


def _execute(path: Path, out: Path, run_dir: Path, source: str, readable: list[Path], recorder: Recorder,
             progress: bool, hosted: Path | None = None) -> str | None:
    """Run the notebook with papermill in the sandboxed kernel; the error, if a cell failed."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from .reproduction import RESULTS_DIR

    try:
        # A source the host runs the queries of is named to the kernel without its secret:
        # credentials never enter the sandbox (the kernel needs only the results' folder).
        given = masked(source) if hosted is not None else source
        papermill.execute_notebook(
            str(path.resolve()), str(out), parameters={"source": given}, engine_name="analyst",
            cwd=str(run_dir), progress_bar=progress, log_output=False,
            readable=readable, results=RESULTS_DIR, on_cell_executed=recorder, own_workdir=True,
            hosted=hosted,
        )
    except PapermillExecutionError as exc:
        return f"{exc.ename}: {exc.evalue}"
    return None


def _failure(original: Any, failed: Any, error: str) -> str:
    """The error, naming the failed cell by its index in the notebook as given (papermill
    adds cells to the executed copy)."""
    index_of_id = {cell.get("id"): i for i, cell in enumerate(original.cells) if cell.get("id")}
    where = index_of_id.get((failed or {}).get("id"))
    if where is not None:
        label = f"cell {where}"
    elif failed is not None and "injected-parameters" in failed.get("metadata", {}).get("tags", []):
        label = "the injected parameters cell"
    else:
        label = "a cell"
    text = " ".join(error.split())
    if len(text) > ERROR_CHARS:
        text = text[: ERROR_CHARS - 1] + "…"
    return f"{label} failed: {text}"


def _checks(original: Any, manifest: Mapping[str, Mapping[str, Any]], runs: list[StepRun], *,
            reached: bool) -> list[ArtifactCheck]:
    """Each manifest artifact against what its step cells made (a later cell that reused
    the step made it again: the first match wins, else the first attempt is reported)."""
    index_of_call: dict[str, int] = {}
    cell_of: dict[str, int] = {}
    for i, cell in enumerate(original.cells):
        meta = cell.get("metadata", {}).get(META) or {}
        if isinstance(meta.get("call_id"), str) and cell.cell_type == "code":
            index_of_call.setdefault(meta["call_id"], i)
            for artifact_id in meta.get("artifact_ids") or []:
                if isinstance(artifact_id, str):
                    cell_of.setdefault(artifact_id, i)
    made: dict[str, tuple[str | None, int | None, str | None]] = {}
    for run in runs:
        for artifact_id, (actual, note) in _found(run, manifest).items():
            current = made.get(artifact_id)
            expected = manifest[artifact_id]["fingerprint"]
            if current is None or (current[0] != expected and actual == expected) or (current[0] is None and actual):
                made[artifact_id] = (actual, index_of_call.get(run.call_id), note)
    checks = []
    for artifact_id, entry in manifest.items():
        default_note = "its cell did not run" if artifact_id in cell_of else "no cell of the notebook makes it"
        if not reached and artifact_id in cell_of:
            default_note = "its cell was not reached: an earlier cell failed"
        actual, index, note = made.get(artifact_id, (None, cell_of.get(artifact_id), default_note))
        status: Status = "missing" if actual is None else "matched" if actual == entry["fingerprint"] else "changed"
        checks.append(ArtifactCheck(
            artifact_id=artifact_id, name=str(entry.get("name", "")), type=str(entry.get("type", "")),
            call_id=_text(entry.get("call_id")), step_key=_text(entry.get("step_key")), cell=index,
            expected=entry["fingerprint"], actual=actual, status=status, note=note if actual is None else None,
        ))
    return checks


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _found(run: StepRun, manifest: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[str | None, str | None]]:
    """What one step cell made of each artifact it claims: ``(fingerprint or None, note)``."""
    datasets = iter(run.datasets)
    figures: dict[str, list[str]] = {}
    for mime, fingerprint in run.figures:
        figures.setdefault(mime, []).append(fingerprint)
    shown = {mime: iter(prints) for mime, prints in figures.items()}
    found: dict[str, tuple[str | None, str | None]] = {}
    for artifact_id in run.artifact_ids:
        entry = manifest[artifact_id]
        name = str(entry.get("name", ""))
        origin = origin_of(name, run.tool)
        actual: str | None
        if origin == "query":
            actual, why = next(datasets, None), run.results_unread
        elif origin == "display":
            actual, why = next(shown.get(str(entry.get("mime")), iter(())), None), run.figures_unread
        else:
            actual, why = run.files.get(name), run.unread.get(name)
        if actual is None and why is None:
            why = "its cell failed before making it" if run.failed else "its cell did not make it"
        found[artifact_id] = (actual, why)
    return found


def format_report(report: VerifyReport) -> str:
    """The report as a table for a terminal."""
    if report.verdict == "nothing_to_verify":
        return "nothing to verify: the notebook records no artifact (nothing was run)"
    rows = [("status", "artifact", "type", "step (call id, cell)", "expected", "actual")]
    for c in report.checks:
        where = f"{c.call_id or '-'}, cell {c.cell if c.cell is not None else '-'}"
        rows.append((c.status, c.name, c.type, where, c.expected[7:19], (c.actual or "-")[7:19] or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(value.ljust(widths[i]) for i, value in enumerate(row)).rstrip() for row in rows]
    notes = [f"  {c.name}: {c.note}" for c in report.checks if c.note]
    if notes:
        lines += ["", "missing:", *notes]
    causes = [c for c in report.checks if c.evidence is not None]
    if causes:
        lines += ["", "why:"]
        for c in causes:
            evidence = c.evidence or CauseEvidence(summary="")
            lines.append(f"  {c.name}: {evidence.summary}")
            lines += [f"    {line}" for line in (evidence.diff or "").splitlines()]
            if evidence.runs:
                lines.append("    runs: " + " then ".join(r[7:19] if r else "nothing" for r in evidence.runs))
    counts = report.counts
    lines.append(f"\n{counts['matched']} matched, {counts['changed']} changed, {counts['missing']} missing"
                 + (f"; {report.error}" if report.error else ""))
    lines.append("verified: the notebook reproduces every artifact" if report.ok else "NOT verified")
    if report.data_note:
        lines.append(f"note: {report.data_note}")
    return "\n".join(lines)
