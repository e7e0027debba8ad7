"""``jupyter analyst verify``: re-execute an exported notebook and prove it reproduces.

The notebook runs with papermill in the sandboxed kernel (the ``analyst`` engine), in a
fresh folder, optionally against another data source. Then every artifact of its manifest
is looked for in what the run produced: the dataset a SQL cell published (the runtime
helper shows its fingerprint), the charts a Python cell displayed (normalised as the
inventory normalises them), the files it wrote under ``outputs/``. Each artifact is
*matched*, *changed* (the step ran and made something else) or *missing* (nothing made
it: the step failed or never ran).
"""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

import nbformat
from pydantic import BaseModel

from ..artifacts import content_fingerprint
from ..errors import ConfigError, SourceError
from ..runtime import ARTIFACT_MIME
from .trail import META, parameter_values, read_notebook

Status = Literal["matched", "changed", "missing"]


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
    status: Status


class VerifyReport(BaseModel):
    """The outcome of one verification."""

    notebook: str
    source: str
    """The data source the run used: ``--db``, else the notebook's ``parameters`` cell."""
    checks: list[ArtifactCheck]
    error: str | None = None
    """The execution error, when a cell failed (the checks say what it left missing)."""

    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(c.status == s for c in self.checks) for s in ("matched", "changed", "missing")}

    @property
    def ok(self) -> bool:
        return self.error is None and all(c.status == "matched" for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {**self.model_dump(), "counts": self.counts, "ok": self.ok}


def manifest_of(nb: Any, path: Path) -> list[dict[str, Any]]:
    """The notebook's manifest, or a clear error for a notebook that has none."""
    meta = nb.metadata.get(META) or {}
    manifest = meta.get("manifest")
    if not isinstance(manifest, list):
        raise ConfigError(
            f"{path} has no artifact manifest: it is not a notebook exported by jupyter-analyst",
            reason="no_manifest", hint="export a thread first: jupyter analyst export --thread ID -o NB.ipynb",
        )
    return manifest


def check_source(spec: str | None, *, given: bool) -> str:
    """The source the run will use, opened once here so a missing one fails before any kernel starts."""
    from ..sql import absolute_spec, open_source

    if not spec:
        raise ConfigError("the notebook names no data source", reason="no_source", hint="pass --db SOURCE")
    # A relative path means the caller's folder; the run happens in a fresh one.
    resolved = absolute_spec(spec)
    try:
        open_source(resolved).close()
    except SourceError as exc:
        where = "--db" if given else "the notebook's parameters cell"
        raise SourceError(
            f"{exc.message} (named by {where})", reason=exc.reason,
            hint="pass --db with a source that exists here" if not given else exc.hint,
        ) from exc
    return resolved


def _file_fingerprint(run_dir: Path, name: str, mime: str) -> str | None:
    """The fingerprint of a file the re-run kernel wrote, read without following any link."""
    from ..kernel.workdir import open_regular

    try:
        fd, _ = open_regular(run_dir, name)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        return content_fingerprint(fh.read(), mime)


def _produced(cell: Any, outputs_dir: Path, manifest: dict[str, dict[str, Any]]) -> dict[str, str]:
    """What one executed step cell produced, as artifact id -> fingerprint."""
    expected = [manifest[a] for a in cell.metadata.get(META, {}).get("artifact_ids", []) if a in manifest]
    datasets: list[str] = []
    images: list[str] = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if ARTIFACT_MIME in data:
            datasets.append(data[ARTIFACT_MIME]["fingerprint"])
        elif "image/png" in data and not output.get("metadata", {}).get(META):
            images.append(content_fingerprint(base64.b64decode(data["image/png"]), "image/png"))
    made: dict[str, str] = {}
    by_type = {"dataset": iter(datasets), "image": iter(images)}
    for entry in expected:
        if entry["type"] in by_type:
            found = next(by_type[entry["type"]], None)
        else:
            found = _file_fingerprint(outputs_dir.parent, entry["name"], entry["mime"])
        if found is not None:
            made[entry["artifact_id"]] = found
    return made


def verify_notebook(
    path: Path,
    *,
    source: str | None = None,
    workdir: Path | None = None,
    engine: str = "analyst",
    progress: bool = False,
) -> VerifyReport:
    """Re-execute ``path`` (against ``source`` when given) and compare with its manifest.

    ``progress`` shows papermill's per-cell bar on stderr (for a terminal).
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError

    path = Path(path)
    original = read_notebook(path)
    manifest = {entry["artifact_id"]: entry for entry in manifest_of(original, path)}
    # The parameters cell first: a reviewer may have edited it.
    given = parameter_values(original).get("source")
    default = (given if isinstance(given, str) else None) or (original.metadata.get(META) or {}).get("source")
    resolved = check_source(source or default, given=bool(source))
    # Injected only when it differs: a relative default is resolved, as the run is elsewhere.
    parameters = {"source": resolved} if resolved != default else {}
    # Cells are reported by their index in the notebook as given: papermill adds cells
    # (injected parameters, error banners) to the executed copy.
    index_of_id = {cell["id"]: i for i, cell in enumerate(original.cells) if cell.get("id")}
    index_of_call = {cell.metadata[META]["call_id"]: i for i, cell in enumerate(original.cells)
                     if "call_id" in cell.get("metadata", {}).get(META, {})}
    with tempfile.TemporaryDirectory(prefix="analyst-verify-") as tmp:
        run_dir = Path(workdir or tmp)
        run_dir.mkdir(parents=True, exist_ok=True)
        out_path = Path(tmp) / "executed.ipynb"
        error = None
        try:
            papermill.execute_notebook(
                str(path.resolve()), str(out_path), parameters=parameters, engine_name=engine,
                cwd=str(run_dir), progress_bar=progress, log_output=False,
            )
        except PapermillExecutionError as exc:
            executed = nbformat.read(out_path, as_version=4) if out_path.exists() else original
            # exc.cell_index counts cells before papermill inserted its error banners into the
            # written copy, so the failed cell is found by its error output instead.
            failed = next((c for c in executed.cells if c.cell_type == "code" and (
                any(o.get("output_type") == "error" for o in c.get("outputs", []))
                or c.get("metadata", {}).get("papermill", {}).get("exception"))), {})
            where = index_of_id.get(failed.get("id"))
            if where is not None:
                label = f"cell {where}"
            elif "injected-parameters" in failed.get("metadata", {}).get("tags", []):
                label = "the injected parameters cell"
            else:
                label = f"cell {exc.cell_index} of the executed copy"
            error = f"{label} failed: {exc.ename}: {exc.evalue}"
        executed = nbformat.read(out_path, as_version=4) if out_path.exists() else original
        made: dict[str, tuple[str, int | None]] = {}
        cell_of: dict[str, int | None] = {}
        for cell in executed.cells:
            meta = cell.get("metadata", {}).get(META, {})
            if cell.cell_type != "code" or "call_id" not in meta:
                continue
            index = index_of_call.get(meta["call_id"])
            for artifact_id in meta.get("artifact_ids", []):
                cell_of.setdefault(artifact_id, index)
            if cell.get("execution_count") is None:
                continue  # not reached
            for artifact_id, fingerprint in _produced(cell, run_dir / "outputs", manifest).items():
                # A later cell that reused the step made the same artifact again: the first
                # match wins, else the first attempt is reported.
                current = made.get(artifact_id)
                expected = manifest[artifact_id]["fingerprint"]
                if current is None or (current[0] != expected and fingerprint == expected):
                    made[artifact_id] = (fingerprint, index)
    checks = []
    for artifact_id, entry in manifest.items():
        actual, index = made.get(artifact_id, (None, cell_of.get(artifact_id)))
        status: Status = "missing" if actual is None else "matched" if actual == entry["fingerprint"] else "changed"
        checks.append(ArtifactCheck(
            artifact_id=artifact_id, name=entry["name"], type=entry["type"], call_id=entry.get("call_id"),
            step_key=entry.get("step_key"), cell=index, expected=entry["fingerprint"], actual=actual, status=status,
        ))
    return VerifyReport(notebook=str(path), source=resolved, checks=checks, error=error)


def format_report(report: VerifyReport) -> str:
    """The report as a table for a terminal."""
    rows = [("status", "artifact", "type", "step (call id, cell)", "expected", "actual")]
    for c in report.checks:
        where = f"{c.call_id or '-'}, cell {c.cell if c.cell is not None else '-'}"
        rows.append((c.status, c.name, c.type, where, c.expected[7:19], (c.actual or "-")[7:19] or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(value.ljust(widths[i]) for i, value in enumerate(row)).rstrip() for row in rows]
    counts = report.counts
    lines.append(f"\n{counts['matched']} matched, {counts['changed']} changed, {counts['missing']} missing"
                 + (f"; {report.error}" if report.error else ""))
    lines.append("verified: the notebook reproduces every artifact" if report.ok else "NOT verified")
    return "\n".join(lines)
