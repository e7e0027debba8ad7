"""A turn's view of its thread's memory: the agent state as the turn changes it.

The turn opens it (what the prompt itself changes), hands it every tool result (the
deterministic updates it implies, and the call's expectation checked there and then), and
reads the earlier turns to send through it. None of this calls the model: the summarizer
does that, after the turn. Every call blocks on the store: call it off the event loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._clock import utc_now
from ...agent_state import AgentState, Item, StateDelta
from ...sql import model_spec
from ..context import STATE_ENTRIES
from ..guards import Verdict, expectation_delta, match, observe
from ..spec import spec_of
from .observations import observe_step, stamped, turn_answered, turn_opened
from .thread_memory import ThreadMemory

if TYPE_CHECKING:
    from ...store import Turn
    from ..environment import ThreadEnvironment
    from ..spec import StepOutcome

#: Entities of each kind read for a turn (the prompt shows the newest of them).
RECENT_ENTITIES = 2 * STATE_ENTRIES


class TurnMemory:
    """The agent state of one thread, for one turn of it."""

    def __init__(self, thread: ThreadMemory, environment: ThreadEnvironment, turn: Turn) -> None:
        self.thread = thread
        self.environment = environment
        self.turn = turn
        # Only the newest entities of each kind: what a prompt shows, at a flat cost.
        self.state: AgentState = thread.state(recent=RECENT_ENTITIES)
        self.previous: Turn | None = None
        """The turn before this one (read when the turn opens)."""
        self.previous_messages: list[dict[str, Any]] = []

    @property
    def source_label(self) -> str:
        """The source as the agent state (which the model reads) names it: never a path here."""
        return model_spec(self.environment.source.spec)

    def apply(self, delta: StateDelta, origin: str) -> None:
        """Apply a change to the agent state now (one transaction)."""
        if delta.is_empty():
            return
        delta = stamped(delta, self.turn.number)  # an item says which turn raised it
        new = self.thread.apply(delta, origin=origin, turn_id=self.turn.turn_id)
        # The store returns the entities the delta touched; the others are as loaded.
        entities = {**self.state.entities, **new.entities}
        for removal in delta.remove:
            if removal.section == "entities":
                entities.pop(removal.id, None)
        self.state = new.model_copy(update={"entities": entities})

    def open(self) -> None:
        """Read how the previous turn ended, and record what the prompt itself changes (the
        active source, a pasted text, the answer to the question the previous turn asked)."""
        number = self.turn.number - 1
        self.previous = self.thread.turn(number) if number > 0 else None
        self.previous_messages = (
            self.thread.turn_messages(turns=1, after_turn=number - 1, before_turn=number + 1).get(number, [])
            if self.previous is not None else []
        )
        schema = self.environment.source.schema()  # cached by the source: read once per data version
        names = [*schema, *(column for columns in schema.values() for column in columns)]
        self.apply(
            turn_opened(self.state, turn_number=self.turn.number, prompt=self.turn.prompt, source_label=self.source_label,
                        asked=self.asked_before(), names=names),
            "turn",
        )

    def asked_before(self) -> Item | None:
        """The question the previous turn ended with (``clarify``), when it waits for an answer."""
        if self.previous is None or self.previous.status != "needs_input":
            return None
        for message in reversed(self.previous_messages):
            for call in message.get("tool_calls") or ():
                if _asks((call.get("function") or {}).get("name")):
                    item = next((i for i in self.state.items.values() if i.ref.get("call") == call.get("id")),
                                self.state.items.get(f"question:{call.get('id')}"))  # as states kept it before
                    if item is not None:
                        return item
        return None

    def answered(self, answer: str) -> None:
        """The answer is given: the dataset it cites becomes the active dataset."""
        self.apply(turn_answered(self.state, answer), "turn")

    def earlier_turns(self, turns: int) -> dict[int, list[dict[str, Any]]]:
        """The messages of the last ``turns`` turns before this one that the rolling summary
        does not hold yet, by turn number."""
        return self.thread.turn_messages(
            turns=turns, after_turn=self.state.summary.through_turn, before_turn=self.turn.number
        )

    def remember(self, message: dict[str, Any]) -> None:
        """Keep one message of this turn."""
        self.thread.append_message(self.turn.turn_id, message)

    def record_step(
        self, *, tool: str, call_id: str, arguments: dict[str, Any], outcome: StepOutcome
    ) -> Verdict | None:
        """Apply what a tool result establishes; check its expectation, if it stated one."""
        artifacts = [a for a, _ in outcome.artifacts]
        delta = observe_step(
            self.state, tool=tool, arguments=arguments, status=outcome.status, result=outcome.result,
            artifacts=artifacts, source_label=self.source_label, datasets=lambda: self.environment.dataset_ids(),
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


def _asks(tool: object) -> bool:
    """Whether a call of ``tool`` asked the user a question (its spec's ``asks``)."""
    spec = spec_of(tool) if isinstance(tool, str) else None
    return spec is not None and spec.asks
