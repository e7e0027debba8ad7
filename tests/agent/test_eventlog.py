"""The event writer: a turn's events stored off the event loop, in order, text deltas in batches."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from jupyter_analyst.agent.eventlog import EventWriter
from jupyter_analyst.events import AnswerReady, TextDelta, TurnEnded
from jupyter_analyst.errors import StorageError
from jupyter_analyst.store import ThreadStore


@pytest.fixture
def turn(tmp_path):
    store = ThreadStore(tmp_path / "ws.sqlite3")
    thread = store.create_thread(user="local", source="x.duckdb", title="t")
    yield store, store.start_turn(thread.thread_id, "hi")
    store.close()


def _of(turn, event):
    return event.model_copy(update={"thread_id": turn.thread_id, "turn_id": turn.turn_id})


def test_deltas_queued_together_are_stored_in_one_batch_all_readable_in_order(turn):
    store, t = turn
    seen: list = []

    async def run() -> EventWriter:
        writer = EventWriter(store, seen.append)
        for i in range(200):
            writer.add(_of(t, TextDelta(text=f"{i} ")))
        answer = await writer.append(_of(t, AnswerReady(text="done")))
        assert answer.seq == 201
        return writer

    writer = asyncio.run(run())
    stored = store.events(t.thread_id)
    assert [e.seq for e in stored] == list(range(1, 202))
    assert "".join(e.text for e in stored[:-1]) == "".join(f"{i} " for i in range(200))
    assert stored[-1].type == "answer"
    # The sink saw exactly what was stored, in the same order, each after it was stored.
    assert seen == stored
    # Everything queued before the writer ran went in one transaction.
    assert writer.batches == 1


def test_a_turn_cancelled_midway_keeps_and_hands_on_every_delta(turn):
    store, t = turn
    seen: list = []
    holding: dict = {}

    async def run() -> None:
        delivered, release = asyncio.Event(), asyncio.Event()

        async def sink(event):
            seen.append(event)
            delivered.set()
            await release.wait()  # the client is slow: the writer is midway through its batch

        writer = EventWriter(store, sink)

        async def turn_body() -> None:
            for i in range(50):
                writer.add(_of(t, TextDelta(text=f"{i} ")))
            await writer.append(_of(t, AnswerReady(text="never waited for")))

        task = asyncio.create_task(turn_body())
        await delivered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The loop's own ending after a cancel: it comes after everything queued before it.
        release.set()
        ended = await writer.append(_of(t, TurnEnded(status="interrupted", message="cancelled")))
        holding["ended"] = ended

    asyncio.run(run())
    stored = store.events(t.thread_id)
    assert [e.seq for e in stored] == list(range(1, 53))
    assert "".join(e.text for e in stored[:50]) == "".join(f"{i} " for i in range(50))
    assert [e.type for e in stored[50:]] == ["answer", "turn_ended"]
    assert holding["ended"].seq == 52
    assert seen == stored


def test_a_delta_that_cannot_be_stored_fails_the_next_event(turn, tmp_path):
    store, t = turn
    # The database refuses the write (here: its events table is gone).
    with sqlite3.connect(tmp_path / "ws.sqlite3") as other:
        other.execute("DROP TABLE events")

    async def run() -> None:
        writer = EventWriter(store, None)
        writer.add(_of(t, TextDelta(text="a")))
        with pytest.raises(StorageError):
            await writer.append(_of(t, AnswerReady(text="b")))

    asyncio.run(run())


def test_a_continuing_turn_is_announced_before_its_source_opens_and_ended_if_it_cannot(analyst, sales_db, tmp_path):
    import shutil

    from jupyter_analyst.errors import SourceError
    from jupyter_analyst.testing import text_step

    own = tmp_path / "own.duckdb"
    shutil.copy(sales_db, own)
    runner = analyst({"turns": [{"steps": [text_step("[scripted] hi")]}]})
    runner.source = own
    first = runner.run("hello")
    own.unlink()  # the thread's database is gone before its next turn
    runner.events.clear()
    with pytest.raises(SourceError):
        runner.run("hello again", thread=first.thread_id)
    # The client saw the turn begin (before the source was tried), then end with the reason.
    assert [e.type for e in runner.events] == ["turn_started", "turn_ended"]
    ended = runner.events[-1]
    assert ended.status == "error" and "own.duckdb" in ended.message
    store = ThreadStore(runner.workspace / "analyst.sqlite3")
    try:
        turns = store.turns(first.thread_id)
        assert [t.status for t in turns] == ["completed", "error"]
        assert [e.seq for e in store.events(first.thread_id, turn_id=turns[-1].turn_id)] == [
            e.seq for e in runner.events]
    finally:
        store.close()
