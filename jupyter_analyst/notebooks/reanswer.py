"""``jupyter analyst verify NB --db SOURCE --reanswer``: the answer restated on today's data.

The exported answer cells carry their receipts (``metadata.jupyter_analyst.receipts``: the
answer as written, its citations and unsupported claims). The notebook is re-run as
``verify`` runs it (the sandboxed kernel, the source the user names, never the notebook's);
the cells its answers cite are read back from the query results the re-run kept, and each
cited number is restated with today's value (``reanswer_claims.py``). The result is printed
and written beside the notebook as ``NAME.reanswered.ipynb``: the step cells with today's
outputs (made inert as export makes them), each answer rewritten with ``new (was old)`` at
each changed number and its receipts' notes. The original is never written.

The receipts are hostile input like the rest of the notebook: they are read through strict
models, bounded in size, and every span, operand, step and artifact they name must exist,
else the notebook is refused with one clear error before any kernel starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from .._text import masked
from ..errors import ConfigError
from ..step_kinds import is_query_step
from ..untrusted import code_span, markdown_block, terminal_text
from .export import inert_output
from .reanswer_claims import AnswerReceipts, ReansweredAnswer, recheck
from .reproduction import MAX_CITED_ROW, ResultCapture
from .trail import META, read_notebook, write_atomically
from .verify import VerifyReport, manifest_of, verify_notebook

#: The claims an answer's receipts may hold (an answer's receipts are capped far below this).
MAX_RECEIPTS = 2_000
#: The longest answer read.
MAX_ANSWER = 200_000
SUFFIX = ".reanswered.ipynb"


class ReanswerReport(BaseModel):
    """The answers restated, what the re-run verified, and where the notebook was written."""

    notebook: str
    output: str
    source: str | None
    answers: list[ReansweredAnswer]
    verify: dict[str, Any]
    """The re-run's verify report (``verify --json``'s), with the causes of what differs."""

    @property
    def counts(self) -> dict[str, int]:
        statuses = [c.status for a in self.answers for c in a.claims]
        return {s: statuses.count(s) for s in ("changed", "unchanged", "gone", "not_rechecked")}

    def to_json(self) -> dict[str, Any]:
        return {**self.model_dump(), "counts": self.counts}


def output_path(path: Path) -> Path:
    """Where the re-answered notebook goes: beside ``path``, never ``path`` itself nor a link."""
    name = path.name[: -len(".ipynb")] if path.name.endswith(".ipynb") else path.name
    out = path.with_name(name + SUFFIX)
    if out.is_symlink():
        raise ConfigError(f"{out} is a link: a re-answered notebook is never written through one",
                          reason="output_is_link", hint="remove the link or move the notebook")
    if out.exists() and (out.resolve() == path.resolve() or not out.is_file()):
        raise ConfigError(f"{out} is not a notebook file that can be replaced", reason="output_refused",
                          hint="move it aside and run again")
    return out


def answer_receipts(nb: Any, path: Path) -> list[tuple[int, str | None, AnswerReceipts]]:
    """Each answer cell's receipts (its index, its turn), checked against the notebook."""
    found = []
    steps = _step_artifacts(nb, path)
    for index, cell in enumerate(nb.cells):
        meta = cell.get("metadata", {}).get(META) or {}
        if not isinstance(meta, Mapping) or meta.get("role") != "answer" or "receipts" not in meta:
            continue
        receipts = _read(meta["receipts"], index)
        _check(receipts, steps, index)
        found.append((index, meta.get("turn_id") if isinstance(meta.get("turn_id"), str) else None, receipts))
    if not found:
        raise ConfigError(
            f"{path} carries no receipts: its answers do not say which step each number came from, so "
            "there is nothing to re-answer", reason="no_receipts",
            hint="export the thread again with this version (jupyter analyst export --thread ID), "
                 "or run verify without --reanswer")
    return found


def _read(raw: Any, index: int) -> AnswerReceipts:
    def refuse(why: str) -> ConfigError:
        return ConfigError(f"the receipts of the answer in cell {index} are not valid: {why}",
                           reason="receipts_invalid", hint="re-export the thread; receipts are not edited by hand")

    if not isinstance(raw, Mapping):
        raise refuse("not an object")
    for key in ("citations", "unsupported"):
        if isinstance(raw.get(key), list) and len(raw[key]) > MAX_RECEIPTS:
            raise refuse(f"{len(raw[key])} {key}, more than the {MAX_RECEIPTS} read")
    if isinstance(raw.get("answer"), str) and len(raw["answer"]) > MAX_ANSWER:
        raise refuse(f"an answer of {len(raw['answer'])} characters, more than the {MAX_ANSWER} read")
    try:
        receipts = AnswerReceipts.model_validate(dict(raw))
    except ValidationError as exc:
        raise refuse(f"{exc.error_count()} malformed fields ({exc.errors()[0]['loc']})") from None
    for n, claim in enumerate([*receipts.citations, *receipts.unsupported], start=1):
        if not 0 <= claim.start < claim.end <= len(receipts.answer) or receipts.answer[claim.start:claim.end] != claim.text:
            raise refuse(f"claim {n} ({claim.text[:40]!r}) is not the answer's text at {claim.start}-{claim.end}")
    for n, citation in enumerate(receipts.citations, start=1):
        if citation.derived is not None and citation.derived.of is not None and any(
                not 0 <= i < len(receipts.citations) or receipts.citations[i].derived is not None
                for i in citation.derived.of):
            raise refuse(f"citation {n} is derived from citations that do not exist or are derived themselves")
        if citation.row is not None and not 0 <= citation.row <= MAX_CITED_ROW:
            raise refuse(f"citation {n} names row {citation.row}, outside 0-{MAX_CITED_ROW}")
    return receipts


def _step_artifacts(nb: Any, path: Path) -> dict[str, set[str]]:
    """Call id -> the manifest's artifacts of its step cell."""
    manifest = {e["artifact_id"] for e in manifest_of(nb, path)}
    steps: dict[str, set[str]] = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get(META) or {}
        if cell.get("cell_type") == "code" and isinstance(meta, Mapping) and isinstance(meta.get("call_id"), str):
            ids = meta.get("artifact_ids") if isinstance(meta.get("artifact_ids"), list) else []
            steps.setdefault(meta["call_id"], set()).update(a for a in ids if isinstance(a, str) and a in manifest)
    return steps


def _query_artifacts(nb: Any) -> set[str]:
    """The artifacts the notebook's query steps made: their cells are read back from the re-run."""
    found: set[str] = set()
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get(META) or {}
        if cell.get("cell_type") == "code" and isinstance(meta, Mapping) and is_query_step(meta.get("tool")) \
                and isinstance(meta.get("artifact_ids"), list):
            found.update(a for a in meta["artifact_ids"] if isinstance(a, str))
    return found


def _check(receipts: AnswerReceipts, steps: Mapping[str, set[str]], index: int) -> None:
    for citation in receipts.citations:
        if citation.derived is not None or citation.call_id is None:
            continue
        if citation.call_id not in steps:
            raise ConfigError(
                f"the answer in cell {index} cites step {citation.call_id[:80]!r}, which no cell of the notebook "
                "holds", reason="receipts_invalid", hint="re-export the thread; receipts are not edited by hand")
        if citation.artifact_id is not None and citation.artifact_id not in steps[citation.call_id]:
            raise ConfigError(
                f"the answer in cell {index} cites artifact {citation.artifact_id[:80]!r}, which step "
                f"{citation.call_id[:80]!r} did not make", reason="receipts_invalid",
                hint="re-export the thread; receipts are not edited by hand")


def reanswer_notebook(path: Path, *, source: str | None, progress: bool = False) -> ReanswerReport:
    """Re-run ``path`` on ``source`` and restate its answers; write ``NAME.reanswered.ipynb``."""
    path = Path(path)
    nb = read_notebook(path)
    answers = answer_receipts(nb, path)
    out = output_path(path)
    wanted: dict[str, tuple[set[str], int]] = {}
    for _, _, receipts in answers:
        for c in receipts.citations:
            if c.call_id and c.column is not None and c.row is not None:
                columns, last = wanted.get(c.call_id, (set(), 0))
                wanted[c.call_id] = (columns | {c.column}, max(last, c.row))
    capture = ResultCapture(wanted)
    report = verify_notebook(path, source=source, progress=progress, capture=capture)
    queried = _query_artifacts(nb)
    restated = [recheck(receipts, capture.values, queried, turn_id) for _, turn_id, receipts in answers]
    _write(nb, capture.executed, answers, restated, report, out)
    return ReanswerReport(notebook=str(path), output=str(out), source=report.source, answers=restated,
                          verify={**report.to_json(), "causes": sorted({c.cause for c in report.checks if c.cause})})


def _write(nb: Any, executed: Any, answers: list[tuple[int, str | None, AnswerReceipts]],
           restated: list[ReansweredAnswer], report: VerifyReport, out: Path) -> None:
    """The notebook with today's outputs and the restated answers, beside the original."""
    ran = {cell.get("id"): cell for cell in (executed.cells if executed is not None else [])}
    for cell in nb.cells:
        if cell.get("cell_type") == "code":
            again = ran.get(cell.get("id"))
            cell["outputs"] = [inert_output(o) for o in again.get("outputs", [])] if again is not None else []
            cell["execution_count"] = again.get("execution_count") if again is not None else None
    # The source is a label here, read and shared with the notebook: a URL's password stays out.
    source = masked(report.source or "")
    for (index, _, _), answer in zip(answers, restated, strict=True):
        cell = nb.cells[index]
        cell["source"] = (f"**Answer, re-answered on today's data** ({source}):\n\n"
                          f"{markdown_block(answer.marked)}\n\n---\n\n{notes(answer)}")
        cell["metadata"][META]["receipts"] = {
            "answer": answer.answer, "citations": [c.model_dump(mode="json") for c in answer.citations],
            "unsupported": [u.model_dump(mode="json") for u in answer.unsupported]}
        cell["metadata"][META]["reanswered"] = {"source": source, "verdict": report.verdict,
                                                "claims": [c.model_dump(mode="json") for c in answer.claims]}
    write_atomically(nb, out)


_SAID = {"changed": "changed", "unchanged": "unchanged", "gone": "⚠️ gone", "not_rechecked": "not re-checked"}


def notes(answer: ReansweredAnswer) -> str:
    """The claims, old -> new, as markdown notes under the answer."""
    lines = ["**Re-answer**", ""]
    for n, c in enumerate(answer.claims, start=1):
        moved = f"{code_span(c.text)} -> {code_span(c.new_text)}" if c.status == "changed" else code_span(c.text)
        where = f" (step {code_span(c.call_id)}, row {c.row + 1}, column {code_span(c.column)})" \
            if c.call_id and c.row is not None and c.column is not None else ""
        lines.append(f"{n}. {moved}: {_SAID[c.status]}{where}" + (f"; {c.note}" if c.note else ""))
    lines += ["", "The text around the cited numbers is as the model wrote it: not re-checked."]
    return "\n".join(lines)


def format_reanswer(report: ReanswerReport) -> str:
    """The restated answers for a terminal."""
    lines = []
    for answer in report.answers:
        lines += [terminal_text(answer.marked), ""]
        for c in answer.claims:
            moved = f"{c.text} -> {c.new_text}" if c.status == "changed" else c.text
            lines.append(terminal_text(f"  {_SAID[c.status]:15} {moved}" + (f"  ({c.note})" if c.note else "")))
        lines.append("")
    counts = report.counts
    lines.append(f"{counts['changed']} changed, {counts['unchanged']} unchanged, {counts['gone']} gone, "
                 f"{counts['not_rechecked']} not re-checked; the text around the cited numbers is not re-checked")
    lines.append(f"verify: {report.verify['verdict']}" + (f" ({', '.join(report.verify['causes'])})"
                                                          if report.verify["causes"] else "")
                 + (f"; {terminal_text(report.verify['error'])}" if report.verify["error"] else ""))
    lines.append(f"written: {report.output}")
    return "\n".join(lines)
