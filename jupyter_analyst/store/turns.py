"""A thread's turns: opened under the thread's lock (one running at a time, across the
processes sharing a store), leased, closed with their status, answer and ledger."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel

from .._clock import new_id, utc_now
from .._clock import now as clock_now
from ..errors import AnalystError
from ..events import Event
from ..ledger import Ledger, Usage
from ..receipts import Citation, DefinitionCitation, UnsupportedClaim
from .events_log import EventLog
from .spending import insert_spend

TurnStatus = Literal["running", "completed", "needs_input", "step_limited", "no_answer", "budget_exhausted", "error",
                     "interrupted"]

#: How long a title taken from a thread's first question may be.
TITLE_CHARS = 80


def title_of(prompt: str) -> str | None:
    """A thread's title from its first question: the first line that says something,
    cut at a word under :data:`TITLE_CHARS`.

    >>> title_of("  \\nWhich region grew fastest in 2024?\\nShow it by month.")
    'Which region grew fastest in 2024?'
    >>> title_of("Compare the average basket size of returning customers with that of first-time buyers per region")
    'Compare the average basket size of returning customers with that of first-time…'
    >>> title_of("   ") is None
    True
    """
    line = next((ln.strip() for ln in prompt.splitlines() if ln.strip()), "")
    if len(line) <= TITLE_CHARS:
        return line or None
    cut = line[: TITLE_CHARS - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:.") + "…"


class Turn(BaseModel):
    """One prompt and everything done to answer it."""

    turn_id: str
    thread_id: str
    number: int
    prompt: str
    status: TurnStatus
    answer: str | None = None
    started_at: str
    ended_at: str | None = None
    ledger: Ledger | None = None
    """What the turn cost (see jupyter_analyst/ledger.py); ``None`` while it runs, and for a
    turn closed without running to its end."""
    citations: list[Citation] = []
    """The answer's numbers, dates and names tied to the step results that hold them (see
    jupyter_analyst/receipts)."""
    unsupported: list[UnsupportedClaim] = []
    """The answer's numbers and dates no result supports."""
    definitions: list[DefinitionCitation] = []
    """The team's definitions (metrics, verified queries) the answer's queries followed."""


class TurnReceipts(BaseModel):
    """What the ``receipts`` column holds: an answer's citations and unsupported claims."""

    citations: list[Citation] = []
    unsupported: list[UnsupportedClaim] = []
    definitions: list[DefinitionCitation] = []


def _turn(row: Any) -> Turn:
    """A turn from its row (the lease is the store's own business)."""
    keys = row.keys()
    fields = {k: row[k] for k in keys if k in Turn.model_fields}
    ledger = fields.pop("ledger", None)
    kept = TurnReceipts.model_validate_json(row["receipts"]) if "receipts" in keys and row["receipts"] else None
    return Turn(**fields, ledger=Ledger.model_validate_json(ledger) if ledger else None,
                **(dict(kept) if kept is not None else {}))


class ThreadBusy(AnalystError):
    """A turn is already running on the thread (here, or in another process on a shared store)."""

    reason = "turn_in_progress"


def lease_end(seconds: float) -> str:
    """When a lease taken now for ``seconds`` runs out, as stored (ISO-8601 UTC, ms)."""
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TurnLog(EventLog):
    """The turns of a workspace's threads (a part of :class:`~.threads.ThreadStore`); a turn's
    first and last events are stored with it, in its transaction."""


    def start_turn(self, thread_id: str, prompt: str, *, lease_s: float | None = None, beside: bool = False) -> Turn:
        """Open a new turn; turns left running by a dead process are marked interrupted
        (``lease_s`` as for :meth:`announce_turn`). ``beside``: the turn runs beside the
        thread's running one (a look-up a host sends while a step runs), which it leaves be."""
        with self._tx() as cur:
            return self._open_turn(cur, thread_id, prompt, lease_s, beside=beside)

    def announce_turn(self, thread_id: str, prompt: str, started: Callable[[Turn], Event], *,
                      lease_s: float | None = None) -> tuple[Turn, Event]:
        """Open a new turn and store its first event, ``started(turn)``, in one transaction:
        a turn is never seen without its announcement. Returns both, the event numbered.

        With ``lease_s`` the turn holds a lease for that long, which its process renews
        (:meth:`renew_leases`). A turn of the thread whose lease still runs is another
        process's live turn: this one is refused (:class:`ThreadBusy`), leased or not,
        instead of marking that one interrupted.
        """
        with self._tx() as cur:
            turn = self._open_turn(cur, thread_id, prompt, lease_s)
            (event,) = self._insert_events(cur, [started(turn)])
        return turn, event

    def _open_turn(self, cur: Any, thread_id: str, prompt: str, lease_s: float | None = None, *,
                   beside: bool = False) -> Turn:
        self.backend.lock_thread(cur, thread_id)
        now = utc_now()
        if not beside:
            if cur.execute(
                "SELECT 1 FROM turns WHERE thread_id = ? AND status = 'running' AND lease_until > ?", (thread_id, now),
            ).fetchone():
                raise ThreadBusy("a turn is already running on this thread, in another process sharing the store",
                                 hint="wait for it, or cancel it where it runs")
            cur.execute(
                "UPDATE turns SET status = 'interrupted', ended_at = ? "
                "WHERE thread_id = ? AND status = 'running'",
                (now, thread_id),
            )
        (number,) = cur.execute(
            "SELECT COALESCE(MAX(number), 0) + 1 FROM turns WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        turn = Turn(
            turn_id=new_id("turn"),
            thread_id=thread_id,
            number=number,
            prompt=prompt,
            status="running",
            started_at=utc_now(),
        )
        if number == 1 and (title := title_of(prompt)) is not None:
            # A thread is known by its first question until the user names it.
            cur.execute("UPDATE threads SET title = ? WHERE thread_id = ? AND title IS NULL", (title, thread_id))
        cur.execute(
            "INSERT INTO turns (turn_id, thread_id, number, prompt, status, started_at, lease_until) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (turn.turn_id, thread_id, number, prompt, turn.status, turn.started_at,
             None if lease_s is None else lease_end(lease_s)),
        )
        return turn

    def renew_leases(self, turn_ids: Sequence[str], lease_s: float) -> None:
        """Extend the leases of these running turns (this process's) to ``lease_s`` from now."""
        if not turn_ids:
            return
        marks = ", ".join("?" for _ in turn_ids)
        with self._tx() as cur:
            cur.execute(f"UPDATE turns SET lease_until = ? WHERE status = 'running' AND turn_id IN ({marks})",
                        (lease_end(lease_s), *turn_ids))

    def expire_leases(self, ended: Callable[[Turn], Event]) -> list[Event]:
        """Close every running turn whose lease ran out (its process stopped renewing it: it
        was killed, or lost the database) as interrupted, each with its ``ended(turn)``
        event stored in the same transaction; the events, numbered. A turn without a lease
        is left alone: nothing tells whether its process lives."""
        now = utc_now()
        rows = self._query("SELECT * FROM turns WHERE status = 'running' AND lease_until < ?", (now,))
        out: list[Event] = []
        for turn in (_turn(r) for r in rows):
            with self._tx() as cur:
                self.backend.lock_thread(cur, turn.thread_id)
                cur.execute("UPDATE turns SET status = 'interrupted', ended_at = ? "
                            "WHERE turn_id = ? AND status = 'running' AND lease_until < ?", (utc_now(), turn.turn_id, now))
                if cur.rowcount == 1:  # not renewed or closed meanwhile (by its process, or another's sweep)
                    out += self._insert_events(cur, [ended(turn)])
        return out

    def interrupt_running(self) -> int:
        """Mark every turn left running (its process is gone) as interrupted; returns how many."""
        with self._tx() as cur:
            cur.execute("UPDATE turns SET status = 'interrupted', ended_at = ? WHERE status = 'running'", (utc_now(),))
            return cur.rowcount

    def end_turn(self, turn_id: str, status: TurnStatus, *, answer: str | None = None,
                 ledger: Ledger | None = None, citations: Sequence[Citation] = (),
                 unsupported: Sequence[UnsupportedClaim] = (),
                 definitions: Sequence[DefinitionCitation] = ()) -> None:
        """Close a turn with its final status, answer, cost ledger and the answer's receipts;
        the whole turn is then in the database file itself, not only in its write-ahead log
        (see :meth:`checkpoint`)."""
        kept = TurnReceipts(citations=list(citations), unsupported=list(unsupported), definitions=list(definitions)) \
            if citations or unsupported or definitions else None
        with self._tx() as cur:
            cur.execute(
                "UPDATE turns SET status = ?, answer = ?, ended_at = ?, ledger = ?, receipts = ? WHERE turn_id = ?",
                (status, answer, utc_now(), ledger.model_dump_json() if ledger is not None else None,
                 kept.model_dump_json() if kept is not None else None, turn_id),
            )
        self.checkpoint()

    def add_summarizer_usage(self, turn_id: str, usage: Usage) -> None:
        """Add the end-of-turn summarizer's call to the ended turn's ledger (a new ledger for a
        turn closed without one): it answers after the turn, and is paid for all the same,
        against the thread owner's budgets too."""
        with self._tx() as cur:
            row = cur.execute('SELECT turns.ledger, turns.thread_id, threads."user" FROM turns '
                              "JOIN threads ON threads.thread_id = turns.thread_id WHERE turn_id = ?",
                              (turn_id,)).fetchone()
            if row is None:
                return
            ledger = Ledger.model_validate_json(row[0]) if row[0] else Ledger()
            ledger = ledger.model_copy(update={"summarizer": ledger.summarizer.plus(usage)})
            cur.execute("UPDATE turns SET ledger = ? WHERE turn_id = ?", (ledger.model_dump_json(), turn_id))
            if usage.calls:
                insert_spend(cur, user=row[2], thread_id=row[1], turn_id=turn_id, at=clock_now(),
                             tokens=usage.prompt_tokens + usage.completion_tokens, usd=usage.cost_usd, settled=True)

    def abandon_turn(self, turn_id: str, ended: Event, status: TurnStatus) -> Event | None:
        """Close a turn that is still running with ``status`` and store ``ended`` (its
        ``turn_ended``), in one transaction; ``None`` (and nothing done) when the turn has
        been closed already, by whoever ran it."""
        with self._tx() as cur:
            cur.execute("UPDATE turns SET status = ?, ended_at = ? WHERE turn_id = ? AND status = 'running'",
                        (status, utc_now(), turn_id))
            if cur.rowcount == 0:
                return None
            (event,) = self._insert_events(cur, [ended])
        return event

    def has_running_turn(self, thread_id: str) -> bool:
        """Whether a turn of the thread is marked running (by any process sharing the store)."""
        return bool(self._query("SELECT 1 FROM turns WHERE thread_id = ? AND status = 'running' LIMIT 1", (thread_id,)))

    def turns(self, thread_id: str) -> list[Turn]:
        """The thread's turns in order."""
        rows = self._query("SELECT * FROM turns WHERE thread_id = ? ORDER BY number", (thread_id,))
        return [_turn(r) for r in rows]

    def turn_numbered(self, thread_id: str, number: int) -> Turn | None:
        """The thread's turn ``number``, if there is one (a prompt reads the previous turn's end)."""
        rows = self._query("SELECT * FROM turns WHERE thread_id = ? AND number = ?", (thread_id, number))
        return _turn(rows[0]) if rows else None
