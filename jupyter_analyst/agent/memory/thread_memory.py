"""A turn's view of the thread's memory: it reads the agent state, packs every prompt, and
records what each tool result establishes.

The loop asks it for the messages of each model call (with the ``context_usage`` report)
and hands it every tool result; it applies the deterministic updates and checks the
call's expectation there and then. None of this calls the model: the summarizer does
that, after the turn.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..._clock import utc_now
from ...errors import InvalidArguments
from ...store import ThreadStore, Turn
from ..context.sections import CHAT_RULES, STATE_ENTRIES, system_text
from ..guards.expectations import Verdict, expectation_delta, match, observe
from ...agent_state import AgentState, StateDelta
from ..guards.names import Flag, flag_answer
from ..._text import nearest
from ..dataflow import undefined_names
from .observations import observe_step, turn_closed, turn_opened
from ...events import ContextUsage
from ..context.pack import ContextBudget, PackedTurn, answers_only, assemble, shape_prior
from ..environment.thread import ThreadEnvironment
from ..tools import StepOutcome
from ..dataflow import names_used


#: Entities of each kind read for a turn (the prompt shows the newest of them).
RECENT_ENTITIES = 2 * STATE_ENTRIES


def _unknown(message: str, suggestions: list[str], hint: str) -> InvalidArguments:
    shown = ", ".join(suggestions) or "(none)"
    return InvalidArguments(f"{message}. Nearest real names: {shown}", reason="unknown_name",
                            suggestions=suggestions, hint=hint)


class TurnMemory:
    """The agent state and the prompt budget, for one turn of one thread."""

    def __init__(
        self, store: ThreadStore, runtime: ThreadEnvironment, turn: Turn, *, budget: ContextBudget, active_ttl_s: float
    ) -> None:
        self.store = store
        self.runtime = runtime
        self.turn = turn
        self.budget = budget
        self.active_ttl_s = active_ttl_s
        # Only the newest entities of each kind: what a prompt shows, at a flat cost.
        self.state: AgentState = store.agent_state(turn.thread_id, recent=RECENT_ENTITIES)
        self._prior: list[PackedTurn] = []

    @property
    def source_label(self) -> str:
        return self.runtime.source.spec

    def apply(self, delta: StateDelta, origin: str) -> None:
        """Apply a change to the agent state now (one transaction)."""
        if delta.is_empty():
            return
        new = self.store.apply_state_delta(self.turn.thread_id, delta, origin=origin, turn_id=self.turn.turn_id)
        # The store returns the entities the delta touched; the others are as loaded.
        entities = {**self.state.entities, **new.entities}
        for removal in delta.remove:
            if removal.section == "entities":
                entities.pop(removal.id, None)
        self.state = new.model_copy(update={"entities": entities})

    # ------------------------------------------------------------------ turn boundaries

    def open(self) -> None:
        """Record what the prompt itself changes and load the earlier turns to send."""
        self.apply(
            turn_opened(self.state, turn_number=self.turn.number, prompt=self.turn.prompt, source_label=self.source_label),
            "turn",
        )
        rows = self.store.recent_turn_messages(
            self.turn.thread_id,
            turns=self.budget.recent_turns,
            after_turn=self.state.summary.through_turn,
            before_turn=self.turn.number,
        )
        turns: dict[int, list[dict[str, Any]]] = {}
        for number, message in rows:
            turns.setdefault(number, []).append(message)
        self._prior = shape_prior(turns, self.budget)

    def close(self, notebook: str) -> None:
        self.apply(turn_closed(notebook=notebook), "turn")

    # ------------------------------------------------------------------ prompts

    def messages(
        self, call: int, current: Sequence[dict[str, Any]], *, chat: bool = False
    ) -> tuple[list[dict[str, Any]], ContextUsage]:
        """The messages of model call number ``call`` and what they cost."""
        started = time.perf_counter()
        source = self.runtime.source
        if chat:
            sections = {"rules": CHAT_RULES.format(source=self.source_label)}
            prior = [PackedTurn(t.number, answers_only(t.messages)) for t in self._prior]
        else:
            artifacts = self.runtime.artifacts
            sections = system_text(
                dialect=source.dialect,
                source_label=f"{source.kind} {source.spec}",
                schema=source.schema(),
                artifacts=artifacts.recent(self.turn.thread_id, 40),
                artifact_total=artifacts.count(self.turn.thread_id),
                state=self.state,
                ttl_s=self.active_ttl_s,
                state_chars=self.budget.state_chars,
                summary_chars=self.budget.summary_chars,
            )
            if self.runtime.attached is not None:
                from ...notebooks.outline import context_section

                sections["notebook"] = context_section(self.runtime.attached, self.budget.notebook_chars)
            prior = self._prior
        return assemble(
            sections=sections, prior=prior, current=current, budget=self.budget, call=call,
            summarized_through=self.state.summary.through_turn, started=started,
        )

    # ------------------------------------------------------------------ steps

    def invented_names(self, tool: str, arguments: dict[str, Any]) -> InvalidArguments | None:
        """Why a call must be refused for naming something that does not exist, if it must.

        SQL is checked by the SQL layer when its key is computed; this covers the dataset
        and variable names Python reads, the table ``describe_table`` names, and the
        artifact ids an ``expect`` names (ids are random: only existing ones can be expected).
        """
        if tool == "run_python":
            datasets = set(self.runtime.dataset_ids())
            known = datasets | self.runtime.python_names()
            missing = undefined_names(arguments.get("code", ""), known)
            unrun = {n: self.runtime.not_run[n] for n in missing if n in self.runtime.not_run}
            if unrun:
                names = ", ".join(repr(n) for n in unrun)
                calls = ", ".join(dict.fromkeys(unrun.values()))
                return _unknown(
                    f"run_python reads {names}, which step {calls} would have defined, but that step did not "
                    f"run (no kernel could start)", sorted(unrun),
                    "run that step's code again first (or in this step), or answer without it",
                )
            if missing:
                near = list(dict.fromkeys(n for name in missing for n in nearest(name, known))) or sorted(datasets)[:10]
                return _unknown(
                    f"run_python reads {', '.join(repr(n) for n in missing)}, which no dataset, earlier step or "
                    f"this code defines", near, "use a dataset listed in the agent state, or fetch it first with run_sql",
                )
        if tool == "describe_table":
            schema = self.runtime.source.schema()
            table = str(arguments.get("table") or "")
            if table and table.lower() not in {t.lower() for t in schema}:
                return _unknown(f"there is no table {table!r}", nearest(table, schema) or sorted(schema)[:10],
                                "call list_tables or find")
        ids = (arguments.get("expect") or {}).get("artifact_ids") or []
        if ids:
            known_ids = {a.artifact_id for a in self.runtime.artifacts.list(self.turn.thread_id)}
            missing = [i for i in ids if i not in known_ids]
            if missing:
                return _unknown(
                    f"'expect' names artifact ids that do not exist: {', '.join(missing)}",
                    [n for i in missing for n in nearest(i, known_ids, n=1)],
                    "expect only ids from the inventory (new artifacts get new ids), or leave artifact_ids out",
                )
        return None

    def record_step(
        self, *, tool: str, call_id: str, arguments: dict[str, Any], outcome: StepOutcome
    ) -> Verdict | None:
        """Apply what a tool result establishes; check its expectation, if it stated one."""
        artifacts = [a for a, _ in outcome.artifacts]
        used = []
        if tool == "run_python":
            code_names = names_used(arguments.get("code", ""))
            used = [name for name in self.runtime.dataset_ids() if name in code_names]
        delta = observe_step(
            self.state, tool=tool, arguments=arguments, status=outcome.status, result=outcome.result,
            artifacts=artifacts, source_label=self.source_label, datasets_used=used,
        )
        verdict = None
        expect = arguments.get("expect")
        if expect:
            verdict = match(expect, observe(tool, outcome.status, outcome.result, artifacts))
            delta = delta.merged(
                expectation_delta(tool=tool, call_id=call_id, expect=expect, verdict=verdict, checked_at=utc_now())
            )
        self.apply(delta, "tool")
        return verdict

    # ------------------------------------------------------------------ answers

    def check_answer(self, text: str) -> list[Flag]:
        """Names the answer cites that do not exist in this thread."""
        thread = self.turn.thread_id
        ids = {a.artifact_id for a in self.runtime.artifacts.list(thread)} if "art_" in text else set()
        datasets = set(self.runtime.dataset_ids()) | {
            e.name for e in self.state.entities.values() if e.kind == "dataset"
        }
        return flag_answer(text, artifact_ids=ids, datasets=datasets, tables=set(self.runtime.source.schema()))
