"""What a re-executed notebook made, step cell by step cell, as the host itself measures it.

``verify`` compares a notebook's manifest with what its re-run made. Everything compared is
the host's own hash of bytes it took out of the kernel, never a figure the kernel states: a
cell can print or display any fingerprint it likes. After each cell (nbclient's
``on_cell_executed`` hook, so a file a later step overwrites is hashed as this step left it):

- the figures the cell displayed: the image bytes of its displays (PNG, else SVG, as the
  agent's kernel session takes them);
- the files it wrote or rewrote under ``outputs/``: found by comparing scans of the kernel's
  folder before and after the cell, then copied out within the caps through the descriptor
  that was checked, no link followed (``kernel/workdir.py``, ``kernel/outputs.py``);
- the query results its ``analyst.sql`` calls kept in the kernel's results folder
  (``trail.RESULTS_ENV``), taken out the same way.

Where an artifact is looked for follows from how its step made it (its *origin*), never
from its type: a chart saved with ``savefig`` is an image *and* a file, a ``.parquet`` that
pandas wrote is a dataset *and* a file.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..artifacts import content_fingerprint
from ..step_kinds import is_query_step
from ..kernel import OutputCaps, WorkdirEntry, changed_outputs, collect_outputs, displayed_images, scan_workdir
from .trail import META

Origin = Literal["query", "display", "file"]

#: The kernel's folder (relative to its own) where ``analyst.sql`` keeps each result.
RESULTS_DIR = ".analyst-results"
PARQUET = "application/vnd.apache.parquet"


def origin_of(name: str, tool: Any) -> Origin:
    """How a step made the artifact ``name``, so where a re-run's copy is looked for.

    >>> origin_of("revenue", "run_sql")
    'query'
    >>> origin_of("outputs/by_cat.png", "run_python"), origin_of("outputs/sub/t.parquet", "run_python")
    ('file', 'file')
    >>> origin_of("call_1-figure-2.png", "run_python")
    'display'
    """
    if is_query_step(tool):
        return "query"
    return "file" if str(name).startswith("outputs/") else "display"


#: The rows of a result read back for ``--reanswer``: a cited row past this is refused
#: (the model is shown previews, not millions of rows).
MAX_CITED_ROW = 100_000


@dataclass
class ResultCapture:
    """What ``verify --reanswer`` wants read back from the results a re-run kept: by call
    id, the columns its answer cites and the last row it cites. Filled with the values of
    those cells, by artifact id then column (the first run of each artifact's step)."""

    wanted: Mapping[str, tuple[set[str], int]]
    values: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    executed: Any = None
    """The executed notebook (papermill's copy), for its outputs."""


@dataclass
class StepRun:
    """One executed step cell and what the host found it made."""

    call_id: str
    tool: Any
    artifact_ids: list[str]
    """The artifacts the cell says it made (the notebook's claim, checked against the manifest)."""
    failed: bool = False
    datasets: list[str] = field(default_factory=list)
    """Fingerprints of the query results it kept, in order."""
    figures: list[tuple[str, str]] = field(default_factory=list)
    """``(mime, fingerprint)`` of each figure it displayed, in order."""
    files: dict[str, str] = field(default_factory=dict)
    """Fingerprint of each file it wrote under ``outputs/``, by path."""
    unread: dict[str, str] = field(default_factory=dict)
    """Files it wrote that the host would not read, with why (a link, over the caps)."""
    figures_unread: str | None = None
    """Why its figures were not read (over the caps), when they were not."""
    results_unread: str | None = None
    """Why the query results it kept were not read, when they were not."""


class Recorder:
    """nbclient's ``on_cell_executed`` hook: after each cell, what it made (see the module).

    ``manifest`` is the notebook's, by artifact id: only the files and results a step cell
    should have made are copied out and hashed; everything is within ``caps`` (per cell,
    and for the whole run as for one thread).
    """

    def __init__(self, run_dir: Path, staging: Path, manifest: Mapping[str, Mapping[str, Any]],
                 caps: OutputCaps | None = None, capture: ResultCapture | None = None) -> None:
        self.capture = capture
        self.run_dir = run_dir
        self.staging = staging
        self.manifest = manifest
        self.caps = caps or OutputCaps()
        self.runs: list[StepRun] = []
        self.failed_cell: Any = None
        """The cell that raised (the run stops there), as nbclient holds it."""
        self._outputs: dict[str, WorkdirEntry] = {}
        self._results: dict[str, WorkdirEntry] = {}
        self._files = 0
        self._bytes = 0

    def __call__(self, cell: Any, cell_index: int, execute_reply: Any = None, **_: Any) -> None:
        outputs, results = scan_workdir(self.run_dir, "outputs"), scan_workdir(self.run_dir, RESULTS_DIR)
        written, refused = changed_outputs(self._outputs, outputs)
        kept, kept_refused = changed_outputs(self._results, results)
        self._outputs, self._results = outputs, results
        failed = ((execute_reply or {}).get("content") or {}).get("status") == "error"
        if failed and self.failed_cell is None:
            self.failed_cell = cell
        meta = cell.get("metadata", {}).get(META) or {}
        call_id, claimed = meta.get("call_id"), meta.get("artifact_ids")
        if not isinstance(call_id, str) or not isinstance(claimed, list):
            return
        ids = [a for a in claimed if isinstance(a, str) and a in self.manifest]
        run = StepRun(call_id=call_id, tool=meta.get("tool"), artifact_ids=ids, failed=failed)
        self.runs.append(run)
        origins = {a: origin_of(self.manifest[a].get("name", ""), run.tool) for a in ids}
        wanted = {self.manifest[a].get("name"): self.manifest[a] for a in ids if origins[a] == "file"}
        figures = [image for output in cell.get("outputs", []) if isinstance(output, Mapping)
                   for image in displayed_images(output.get("data") or {})] if "display" in origins.values() else []
        self._take_files(run, [str(p) for p in written if str(p) in wanted], wanted, figures)
        run.unread.update({path: why for path, why in refused if path in wanted})
        if "query" in origins.values():
            self._take_results(run, [str(p) for p in kept], kept_refused)

    def _take_files(self, run: StepRun, paths: list[str], wanted: Mapping[str, Mapping[str, Any]],
                    figures: list[tuple[str, bytes]]) -> None:
        """Hash the figures and copy out and hash the wanted files, all within the caps."""
        with tempfile.TemporaryDirectory(dir=self.staging) as staging:
            collection, refusal = collect_outputs(
                self.run_dir, paths, caps=self.caps, staging=Path(staging), figures=len(figures),
                figures_bytes=sum(len(data) for _, data in figures), thread_files=self._files,
                thread_bytes=self._bytes,
            )
            if refusal is not None:
                run.unread.update({path: refusal for path in paths})
                run.figures_unread = refusal
                return
            run.figures = [(mime, content_fingerprint(data, mime)) for mime, data in figures]
            for staged in collection.staged:
                run.files[staged.relpath] = content_fingerprint(staged.path, str(wanted[staged.relpath].get("mime", "")))
            run.unread.update(collection.refused)
            self._files += len(figures) + len(collection.staged)
            self._bytes += sum(len(d) for _, d in figures) + sum(s.size for s in collection.staged)

    def _take_results(self, run: StepRun, paths: list[str], refused: list[tuple[str, str]]) -> None:
        """Copy out and hash the query results the cell kept (a dataset may be larger than a
        step's files: only the run's total caps its bytes)."""
        caps = self.caps.model_copy(update={"step_bytes": self.caps.thread_bytes})
        with tempfile.TemporaryDirectory(dir=self.staging) as staging:
            collection, refusal = collect_outputs(self.run_dir, paths, caps=caps, staging=Path(staging),
                                          thread_files=self._files, thread_bytes=self._bytes)
            if refusal is not None or refused or collection.refused:
                run.results_unread = refusal or (refused + collection.refused)[0][1]
            by_path = {s.relpath: s for s in collection.staged}
            # In the order the calls kept them (the runtime numbers its files).
            run.datasets = [content_fingerprint(by_path[p].path, PARQUET) for p in sorted(by_path)]
            if self.capture is not None and run.call_id in self.capture.wanted:
                queries = [a for a in run.artifact_ids if origin_of(self.manifest[a].get("name", ""), run.tool) == "query"]
                for artifact_id, relpath in zip(queries, sorted(by_path), strict=False):
                    columns, last = self.capture.wanted[run.call_id]
                    self.capture.values.setdefault(artifact_id, _cells(by_path[relpath].path, columns, last))
            self._files += len(collection.staged)
            self._bytes += sum(s.size for s in collection.staged)


def _cells(path: Path, columns: set[str], last: int) -> dict[str, list[Any]]:
    """The first ``last + 1`` values of each of ``columns`` the Parquet file has (it is the
    kernel's: only those columns and rows are decoded, and a file pyarrow refuses gives none)."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
        present = [c for c in parquet.schema_arrow.names if c in columns]
        if not present:
            return {}
        values: dict[str, list[Any]] = {c: [] for c in present}
        for batch in parquet.iter_batches(batch_size=min(last + 1, MAX_CITED_ROW + 1), columns=present):
            for column in present:
                values[column] += batch.column(column).to_pylist()
            if len(values[present[0]]) > last:
                break
        return {c: v[: last + 1] for c, v in values.items()}
    except Exception:  # noqa: BLE001 - hostile bytes: pyarrow's errors are many; none is ours to raise
        return {}
