"""A finished turn made a verified query of the team's context folder and a task of its suite.

What a person accepts is the turn's question, the SQL step that produced its answer, and the
answer as that SQL computes it from the data now: the query is written to ``queries/`` (the
header ``knowledge.verified`` reads: the question, who verified it, when) and the task is
appended to the folder's ``suite.jsonl`` in the suite format (``gold_sql``, the answer, a
tolerance), so ``jupyter analyst eval context`` asks the model the question again and
``--gold check`` recomputes the answer when the data moves.

The SQL is the model's: the answer is computed from it as any gold SQL is (``gold.compute``:
the SQL check, then the source's sealed engine, within the run's limits), never trusted as
the turn showed it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..errors import AnalystError, ConfigError, SqlRejected
from ..events import ToolCallStarted, ToolResult, TurnEnded
from ..step_kinds import QUERY_STEP, is_query_step
from ..store import ThreadStore
from ..turns import AnalystConfig
from ..untrusted import terminal_text
from .suite import DEFAULT_GUIDELINES

#: The most values (or rows) a verified answer holds: a suite's answer is read by people.
MAX_VALUES = 200
#: The tolerance of an answer with a number that is not whole: what rounding to cents leaves.
DECIMAL_TOLERANCE = 0.01
#: The tag of every task made from a verified answer.
TAG = "verified"


class AnswerToVerify(BaseModel):
    """What a turn answered, read from the thread's records."""

    thread_id: str
    turn: int
    question: str
    answer: str
    call_id: str
    """The query step whose SQL becomes the gold SQL."""
    sql: str
    queries: int
    """How many query steps the turn ran (the last, or the one its answer cites, is taken)."""


class VerifiedAnswer(BaseModel):
    """A verified answer as written: the query file, the suite's task, what they hold."""

    thread_id: str
    turn: int
    call_id: str
    query_file: str
    """The query's file, relative to the context folder (``queries/<name>.sql``)."""
    suite_file: str
    """The suite, relative to the context folder (``suite.jsonl``)."""
    task_id: str
    question: str
    gold_sql: str
    answer: Any
    """The answer as the SQL computes it from the data now."""
    tolerance: float
    source: str
    """The name the task gives its source (``eval context --source NAME=PATH_OR_URL`` says what it reads)."""
    verified_by: str
    verified_at: str
    queries: int


def answer_of(store: ThreadStore, thread_id: str, turn: int | None = None, call_id: str | None = None,
              user: str | None = None) -> AnswerToVerify:
    """The question, answer and SQL of turn ``turn`` (default: the thread's last) of a thread.

    The SQL is that of ``call_id`` when given, else the last query step the answer cites, else
    the turn's last query step that ran.

    Raises:
        ConfigError: an unknown thread (``thread_not_found``) or turn (``turn_not_found``), a turn
            that did not complete (``turn_not_finished``), or one without a query step that ran
            (``no_sql``), or a ``call_id`` that is not one of its queries (``step_not_found``).
    """
    store.get_thread(thread_id, user=user)
    turns = store.turns(thread_id)
    if not turns:
        raise ConfigError(f"the thread {thread_id} has no turn yet", reason="turn_not_found",
                          hint="ask a question first")
    if turn is None:
        chosen = turns[-1]
    else:
        chosen = next((t for t in turns if t.number == turn), None)
        if chosen is None:
            raise ConfigError(f"the thread {thread_id} has no turn {turn}", reason="turn_not_found",
                              hint=f"its turns are 1 to {turns[-1].number}")
    if chosen.status != "completed" or not chosen.answer:
        state = "is still running" if chosen.status == "running" else f"ended {chosen.status}"
        raise ConfigError(f"turn {chosen.number} of {thread_id} {state}: only a completed turn's answer is verified",
                          reason="turn_not_finished", hint="pick a completed turn with --turn N")
    events = store.events(thread_id, turn_id=chosen.turn_id, types=["tool_call", "tool_result", "turn_ended"])
    ran = {e.call_id for e in events if isinstance(e, ToolResult) and e.status == "ok" and is_query_step(e.tool)}
    calls = [e for e in events if isinstance(e, ToolCallStarted) and e.call_id in ran and is_query_step(e.tool)
             and QUERY_STEP.text(e.arguments).strip()]
    if not calls:
        raise ConfigError(f"turn {chosen.number} of {thread_id} ran no SQL: there is no query to verify",
                          reason="no_sql", hint="verify a turn whose answer comes from a query it ran")
    if call_id is not None:
        step = next((c for c in calls if c.call_id == call_id), None)
        if step is None:
            raise ConfigError(f"{call_id!r} is not a query that turn {chosen.number} ran", reason="step_not_found",
                              hint=f"its queries: {', '.join(c.call_id for c in calls)}")
    else:
        ended = next((e for e in events if isinstance(e, TurnEnded)), None)
        cited = {c.call_id for c in ended.citations} if ended is not None else set()
        step = next((c for c in reversed(calls) if c.call_id in cited), calls[-1])
    return AnswerToVerify(thread_id=thread_id, turn=chosen.number, question=chosen.prompt, answer=chosen.answer,
                          call_id=step.call_id, sql=QUERY_STEP.text(step.arguments).strip(), queries=len(calls))


def readable(answer: Any) -> Any:
    """An answer with its floats cut to 12 significant digits (a sum of doubles ends in noise).

    >>> readable(613135.5999999999), readable([["North", 0.30000000000000004, 3]])
    (613135.6, [['North', 0.3, 3]])
    """
    if isinstance(answer, list):
        return [readable(value) for value in answer]
    if isinstance(answer, float) and math.isfinite(answer):
        return float(f"{answer:.12g}")
    return answer


def tolerance_of(answer: Any) -> float:
    """The tolerance a verified answer gets: none for whole numbers and text, else cents.

    >>> tolerance_of(2400), tolerance_of([["North", 12.5]]), tolerance_of("NL")
    (0.0, 0.01, 0.0)
    """
    values = [v for row in (answer if isinstance(answer, list) else [answer])
              for v in (row if isinstance(row, list) else [row])]
    decimal = any(isinstance(v, float) and not v.is_integer() for v in values)
    return DECIMAL_TOLERANCE if decimal else 0.0


async def gold_answer(sql: str, source_spec: str, config: AnalystConfig) -> Any:
    """The answer ``sql`` computes on the source now, checked and run as gold SQL is.

    Raises:
        ConfigError: the SQL is refused or fails (``gold_failed``), or its answer is too large.
    """
    from ..sql import open_source
    from .gold import compute

    source = await asyncio.to_thread(open_source, source_spec, limits=config.engine)
    try:
        answer = await compute(sql, source, config)
    except SqlRejected as exc:
        raise ConfigError(f"the turn's SQL is refused as gold SQL: {terminal_text(exc.message)}",
                          reason="gold_failed", hint=exc.hint) from exc
    except AnalystError as exc:
        raise ConfigError(f"the turn's SQL fails on the data now: {terminal_text(exc.message)}",
                          reason="gold_failed") from exc
    finally:
        source.close()
    if isinstance(answer, list) and len(answer) > MAX_VALUES:
        raise ConfigError(f"the query returns {len(answer):,} rows: a verified answer is a value, a list or a table "
                          f"of at most {MAX_VALUES} rows", reason="answer_too_large",
                          hint="verify a turn whose query aggregates to the answer")
    return readable(answer)


async def verify_answer(
    store: ThreadStore, *, thread_id: str, context_folder: Path, verified_by: str, source_spec: str,
    source_name: str, config: AnalystConfig, turn: int | None = None, call_id: str | None = None,
    name: str | None = None, tolerance: float | None = None, user: str | None = None, today: dt.date | None = None,
) -> VerifiedAnswer:
    """Turn ``turn`` of the thread made a verified query and a suite task in ``context_folder``.

    ``source_spec`` is what the thread's SQL runs on (the answer is computed there);
    ``source_name`` the name its task gives it. ``name``: the query's file name (a taken one
    is refused); else one made from the question, numbered when taken. ``user``: the
    thread's owner, when only theirs may be read.

    Raises:
        ConfigError: see :func:`answer_of`, :func:`gold_answer` and ``knowledge.add_verified_query``.
    """
    from ..knowledge import SUITE, QueryHeader, add_verified_query, render_query, stem_of

    turn_read = await asyncio.to_thread(answer_of, store, thread_id, turn, call_id, user)
    answer = await gold_answer(turn_read.sql, source_spec, config)
    when = (today or dt.datetime.now(dt.UTC).date()).isoformat()
    chosen_tolerance = tolerance_of(answer) if tolerance is None else tolerance
    header = QueryHeader(questions=[turn_read.question], verified_by=verified_by, verified_at=when,
                         notes={"answer": json.dumps(answer)[:300],
                                "from": f"thread {thread_id} turn {turn_read.turn}"})
    text = render_query(header, turn_read.sql)
    task = {"question": turn_read.question, "answer": answer, "tolerance": chosen_tolerance,
            "guidelines": DEFAULT_GUIDELINES, "gold_sql": turn_read.sql, "source": source_name, "tags": [TAG],
            "verified_by": verified_by, "verified_at": when}
    query_file, task_id = await asyncio.to_thread(
        add_verified_query, context_folder, stem=name or stem_of(turn_read.question), text=text,
        task=task, exact=name is not None)
    return VerifiedAnswer(
        thread_id=thread_id, turn=turn_read.turn, call_id=turn_read.call_id, query_file=query_file, suite_file=SUITE,
        task_id=task_id, question=turn_read.question, gold_sql=turn_read.sql, answer=answer,
        tolerance=chosen_tolerance, source=source_name, verified_by=verified_by, verified_at=when,
        queries=turn_read.queries)
