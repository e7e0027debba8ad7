"""No invented names: checks of what a step or an answer refers to.

SQL names are checked by the SQL layer (unknown tables and columns are refused with the
nearest real names). This module covers the rest:

- a Python step that reads a name nothing ever defined (not the step itself, not an earlier
  step, not a dataset, not the kernel's set-up, not a builtin) would only fail with a
  ``NameError``; it is refused before execution with the nearest dataset names instead;
- a final answer that cites an artifact id, a dataset or a table that does not exist is
  flagged, and the answer is marked so that the reader is not misled.

Both checks are conservative: code that defines names dynamically (``exec``, ``globals()``,
star imports) is not judged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..._text import nearest
from ...errors import InvalidArguments
from ..dataflow import undefined_names
from ..spec import spec_of

if TYPE_CHECKING:
    from ...agent_state import AgentState
    from ..environment import ThreadEnvironment


@dataclass(frozen=True)
class Flag:
    """A name an answer cites that does not exist."""

    kind: str
    name: str
    suggestions: tuple[str, ...] = ()

    def describe(self) -> str:
        hint = f" (nearest: {', '.join(self.suggestions)})" if self.suggestions else ""
        return f"{self.kind} `{self.name}`{hint}"


_ARTIFACT_ID = re.compile(r"\bart_[0-9A-Za-z]+\b")
_NAMED = re.compile(
    r"\b(?P<before>dataset|dataframe|table)s?\s+`(?P<a>[A-Za-z_][\w.]*)`"
    r"|`(?P<b>[A-Za-z_][\w.]*)`\s+(?P<after>dataset|dataframe|table)\b",
    re.IGNORECASE,
)


def flag_answer(text: str, *, artifact_ids: set[str], datasets: set[str], tables: set[str]) -> list[Flag]:
    """Artifact ids, datasets and tables an answer cites that do not exist.

    Ids are recognised by their form (``art_...``); datasets and tables where the answer
    calls a quoted name one ("the dataset `x`", "`x` table").

    >>> [f.name for f in flag_answer("See art_0123456789abcdef and the dataset `revnue`.",
    ...     artifact_ids=set(), datasets={"revenue"}, tables={"orders"})]
    ['art_0123456789abcdef', 'revnue']
    """
    flags: list[Flag] = []
    for found in dict.fromkeys(_ARTIFACT_ID.findall(text)):
        if found not in artifact_ids:
            flags.append(Flag("artifact", found, tuple(nearest(found, artifact_ids, n=1))))
    for match in _NAMED.finditer(text):
        name = match.group("a") or match.group("b")
        kind = (match.group("before") or match.group("after")).lower()
        kind = "dataset" if kind == "dataframe" else kind
        known = tables if kind == "table" else datasets
        # A dataset called a table (or the reverse) is still a real name.
        if name in tables or name in datasets or name.split(".")[-1] in tables:
            continue
        if all(f.name != name for f in flags):
            flags.append(Flag(kind, name, tuple(nearest(name, known))))
    return flags


def mark_answer(text: str, flags: list[Flag]) -> str:
    """The answer with a visible note about the names it cites that do not exist."""
    if not flags:
        return text
    listed = "; ".join(f.describe() for f in flags)
    return f"{text}\n\n> **Note:** this answer cites names that do not exist in this thread: {listed}."


def _unknown(message: str, suggestions: list[str], hint: str) -> InvalidArguments:
    shown = ", ".join(suggestions) or "(none)"
    return InvalidArguments(f"{message}. Nearest real names: {shown}", reason="unknown_name",
                            suggestions=suggestions, hint=hint)


def _step(call_id: str) -> str:
    """A step as the model knows it: a call by the id it was given, a plan's step by the
    step's own id (its call id, ``<plan call>.<step id>``, is nowhere the model sees it).

    >>> _step("call_7"), _step("call_7.q1")
    ('step call_7', "plan step 'q1' (of call call_7)")
    """
    plan, dot, step = call_id.partition(".")
    return f"plan step {step!r} (of call {plan})" if dot else f"step {call_id}"


def invented_names(env: ThreadEnvironment, tool: str, arguments: dict[str, Any]) -> InvalidArguments | None:
    """Why a call must be refused for naming something that does not exist, if it must.

    SQL is checked by the SQL layer when its key is computed; the names a tool's own
    payload reads (the dataset and variable names Python reads, the table a description
    names) are checked by its spec's ``invented``; the artifact ids an ``expect`` names are
    checked here for every tool (ids are random: only existing ones can be expected).
    Blocking (it reads the thread's steps): call it off the event loop.
    """
    spec = spec_of(tool)
    if spec is not None and spec.invented is not None and (refused := spec.invented(env, arguments)) is not None:
        return refused
    ids = (arguments.get("expect") or {}).get("artifact_ids") or []
    if ids:
        known_ids = {a.artifact_id for a in env.artifacts.list(env.thread_id)}
        missing = [i for i in ids if i not in known_ids]
        if missing:
            return _unknown(
                f"'expect' names artifact ids that do not exist: {', '.join(missing)}",
                [n for i in missing for n in nearest(i, known_ids, n=1)],
                "expect only ids from the inventory (new artifacts get new ids), or leave artifact_ids out",
            )
    return None


def unknown_python_names(env: ThreadEnvironment, tool: str, code: str) -> InvalidArguments | None:
    """Why ``code`` (of a call to ``tool``) must be refused for reading names that no
    dataset, earlier step or the code itself defines, if it must; a name a step that could
    not run would have defined is said so."""
    datasets = set(env.dataset_ids())
    known = datasets | env.python_names()
    missing = undefined_names(code, known)
    unrun = {n: env.not_run[n] for n in missing if n in env.not_run}
    if unrun:
        names = ", ".join(repr(n) for n in unrun)
        calls = ", ".join(dict.fromkeys(_step(c) for c in unrun.values()))
        return _unknown(
            f"{tool} reads {names}, which {calls} would have defined, but that step did not "
            f"run (no kernel could start)", sorted(unrun),
            "run that step's code again first (or in this step), or answer without it",
        )
    if missing:
        near = list(dict.fromkeys(n for name in missing for n in nearest(name, known))) or sorted(datasets)[:10]
        return _unknown(
            f"{tool} reads {', '.join(repr(n) for n in missing)}, which no dataset, earlier step or "
            f"this code defines", near, "use a dataset listed in the agent state, or fetch it first with run_sql",
        )
    return None


def unknown_table(env: ThreadEnvironment, table: str) -> InvalidArguments | None:
    """Why a call naming ``table`` must be refused (the source has no such table), if it must."""
    schema = env.source.schema()
    if table and table.lower() not in {t.lower() for t in schema}:
        return _unknown(f"there is no table {table!r}", nearest(table, schema) or sorted(schema)[:10],
                        "use one of these, or call find")
    return None


def check_answer(env: ThreadEnvironment, state: AgentState, text: str) -> list[Flag]:
    """Names the answer cites that do not exist in this thread. Blocking: call it off the event loop."""
    ids = {a.artifact_id for a in env.artifacts.list(env.thread_id)} if "art_" in text else set()
    datasets = set(env.dataset_ids()) | {e.name for e in state.entities.values() if e.kind == "dataset"}
    return flag_answer(text, artifact_ids=ids, datasets=datasets, tables=set(env.source.schema()))
