"""A turn's life, told once: the only module that makes ``turn_started`` and ``turn_ended``.

A turn begins in one of three places (a server announces it while it answers the request;
:func:`~.frame.open_turn` starts it on a thread that goes on; :meth:`~.frame.TurnFrame.run`
on a new thread) and ends in one of four (the agent loop closes the turns it ran; a turn
the loop never took is abandoned by the frame or, on a server, by the task that held it; a
turn whose process died is cut by any server of the store). Each of them asks here for the
event it tells, so every surface (server, CLI, magics, MCP, persona, eval) says a turn
began and ended in the same words, with the same status for the same cause
(``tests/contracts/test_turn_life.py`` finds no other maker of either event).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..events import MetricSuggestion, TurnEnded, TurnEndStatus, TurnStarted

if TYPE_CHECKING:
    from ..ledger import Ledger
    from ..receipts import Receipts
    from ..store import Turn

#: What a turn stopped by its user says, in its ``turn_ended`` and the thread's history.
CANCELLED = "cancelled by the user"
#: What a turn cut by its process's death says (its lease in the shared store ran out).
CUT = "the process running this turn stopped (its lease in the shared store ran out)"


@dataclass(frozen=True)
class TurnLife:
    """How one turn is told: who speaks in it (the model, or the user's own step) and
    whether the user asked to re-execute what could be reused."""

    speaker: str
    rerun: bool = False

    def started(self, turn: Turn) -> TurnStarted:
        """The turn's ``turn_started``."""
        return TurnStarted(thread_id=turn.thread_id, turn_id=turn.turn_id, prompt=turn.prompt,
                           model=self.speaker, rerun=self.rerun)

    def ended(self, turn: Turn, status: TurnEndStatus, message: str | None = None, *,
              counters: dict[str, int] | None = None, ledger: Ledger | None = None,
              receipts: Receipts | None = None, suggestions: Sequence[MetricSuggestion] = ()) -> TurnEnded:
        """The ``turn_ended`` of a turn the loop ran to its end (its counters, ledger and the
        answer's receipts); an interrupted one without a message was stopped by its user."""
        if status == "interrupted" and message is None:
            message = CANCELLED
        cited = {"citations": receipts.citations, "unsupported": receipts.unsupported,
                 "definitions": receipts.definitions} if receipts is not None else {}
        return TurnEnded(thread_id=turn.thread_id, turn_id=turn.turn_id, status=status, message=message,
                         counters=dict(counters or {}), ledger=ledger, suggestions=list(suggestions), **cited)


def abandoned_turn(turn: Turn, exc: BaseException | None) -> TurnEnded:
    """The ``turn_ended`` of a turn started but never run to its end by the loop (its source
    did not open, its task was cancelled before it ran): ``interrupted`` when it was
    cancelled (``exc`` a cancellation, or ``None``), else ``error`` with the failure's words."""
    if exc is None or isinstance(exc, asyncio.CancelledError):
        return TurnEnded(thread_id=turn.thread_id, turn_id=turn.turn_id, status="interrupted", message=CANCELLED)
    return TurnEnded(thread_id=turn.thread_id, turn_id=turn.turn_id, status="error", message=str(exc))


def cut_turn(turn: Turn) -> TurnEnded:
    """The ``turn_ended`` of a turn whose process stopped renewing its lease: no ledger, for
    nothing is known of how far it got."""
    return TurnEnded(thread_id=turn.thread_id, turn_id=turn.turn_id, status="interrupted", message=CUT)
