"""A server on a PostgreSQL store hears the events other processes write (server/event_feed.py:
LISTEN on a connection of its own, then a read of what it has not yet published): a turn
written elsewhere reaches its listeners whole, from where their backlog ended, and an event
committed while the server reads is not missed."""

from __future__ import annotations

import sys
import textwrap

import pytest

from jupyter_analyst.events import TextDelta
from jupyter_analyst.store import ThreadStore


_TURN_WRITER = textwrap.dedent("""
    import sys
    from jupyter_analyst.events import TextDelta, TurnEnded
    from jupyter_analyst.store import ThreadStore

    url, thread_id = sys.argv[1:]
    store = ThreadStore(url)
    turn = store.start_turn(thread_id, "elsewhere")
    for i in range(3):
        store.append_event(TextDelta(thread_id=thread_id, turn_id=turn.turn_id, text=str(i)))
    store.append_event(TurnEnded(thread_id=thread_id, turn_id=turn.turn_id, status="completed"))
    store.end_turn(turn.turn_id, "completed")
    store.close()
""")


async def _hear_a_turn_written_elsewhere(service, url: str, thread_id: str) -> list:
    """What a listener of the thread in ``service`` gets while another process writes a turn
    (three text deltas and its end): up to that end, and nothing after it."""
    import asyncio

    with service.listen(thread_id) as queue:
        assert service._feed is not None
        await asyncio.to_thread(service._feed.wait_ready)
        writer = await asyncio.create_subprocess_exec(sys.executable, "-c", _TURN_WRITER, url, thread_id)
        assert await writer.wait() == 0
        heard = [await queue.get()]
        while heard[-1].type != "turn_ended":
            heard.append(await queue.get())
        assert queue.empty()
    return heard


@pytest.mark.asyncio
async def test_a_server_hears_the_events_another_process_writes(postgres, tmp_path):
    from jupyter_analyst.turns import AnalystConfig
    from jupyter_analyst.server.service import ThreadService

    url = postgres.new_database()
    service = ThreadService(config=AnalystConfig(workspace=tmp_path / "ws", store=url, summarizer=False),
                            model=None, sources={})
    try:
        thread_id = service.workspace.store.create_thread().thread_id
        heard = await _hear_a_turn_written_elsewhere(service, url, thread_id)
        assert [(e.seq, e.type) for e in heard] == [(1, "text_delta"), (2, "text_delta"), (3, "text_delta"),
                                                   (4, "turn_ended")]
    finally:
        await service.close()


@pytest.mark.asyncio
async def test_a_listener_of_a_long_thread_hears_only_what_is_new(postgres, tmp_path):
    """Another process's events are caught up from what the listener's backlog read, never
    from the thread's first event."""
    from jupyter_analyst.turns import AnalystConfig
    from jupyter_analyst.server.service import ThreadService

    url = postgres.new_database()
    service = ThreadService(config=AnalystConfig(workspace=tmp_path / "ws", store=url, summarizer=False),
                            model=None, sources={})
    try:
        store = service.workspace.store
        thread_id = store.create_thread().thread_id
        old = store.start_turn(thread_id, "long ago")
        for i in range(300):
            store.append_event(TextDelta(thread_id=thread_id, turn_id=old.turn_id, text=str(i)))
        store.end_turn(old.turn_id, "completed")
        heard = await _hear_a_turn_written_elsewhere(service, url, thread_id)
        assert [(e.seq, e.type) for e in heard] == [(301, "text_delta"), (302, "text_delta"), (303, "text_delta"),
                                                   (304, "turn_ended")]
    finally:
        await service.close()


@pytest.mark.asyncio
async def test_an_event_announced_while_the_server_reads_is_not_missed(postgres, tmp_path):
    """An event committed just after the server's read of the store began (so that read
    cannot see it) is announced while the read is under way: the server reads once more.
    Missed, a stream following the thread would wait forever for its turn's end."""
    import asyncio
    import threading

    from jupyter_analyst.turns import AnalystConfig
    from jupyter_analyst.server.service import ThreadService

    url = postgres.new_database()
    service = ThreadService(config=AnalystConfig(workspace=tmp_path / "ws", store=url, summarizer=False),
                            model=None, sources={})
    other = ThreadStore(url)  # another process's writes, on connections of its own
    thread_id = other.create_thread().thread_id
    read, announce = service.workspace.store.events, service._announced
    second_heard = threading.Event()

    def announced(tid: str, seq: int) -> None:
        announce(tid, seq)
        if seq == 2:
            second_heard.set()

    def read_then_commit(tid: str, after: int = 0):
        seen = read(tid, after=after)
        if after == 1 and not second_heard.is_set():
            # The read has looked and found nothing new; the next event commits now, and
            # the read answers only once its announcement has reached the server, as a
            # query that took a little longer would.
            other.append_event(TextDelta(thread_id=thread_id, turn_id="t", text="second"))
            assert second_heard.wait(30)
        return seen

    service._announced = announced  # type: ignore[method-assign]
    service.workspace.store.events = read_then_commit  # type: ignore[method-assign]
    try:
        with service.listen(thread_id) as queue:
            await asyncio.to_thread(service._feed.wait_ready)
            other.append_event(TextDelta(thread_id=thread_id, turn_id="t", text="first"))
            heard = [await asyncio.wait_for(queue.get(), 30)]
            heard.append(await asyncio.wait_for(queue.get(), 30))
        assert [(e.seq, e.text) for e in heard] == [(1, "first"), (2, "second")]
    finally:
        other.close()
        await service.close()


@pytest.mark.asyncio
async def test_this_servers_own_events_reach_a_listener_once_when_its_feed_reads_them_first(postgres, tmp_path):
    """On a shared store a server also hears its own commits. A turn's writer hands its batch
    on once the store's call returns; when the feed's read of the same commit is published
    first, the writer's hand-on is a repeat and is not published again. (Published twice, a
    stream merging text deltas wrote the turn's text twice.)"""
    import asyncio
    import threading

    from jupyter_analyst.agent.eventlog import EventWriter
    from jupyter_analyst.turns import AnalystConfig
    from jupyter_analyst.server.service import ThreadService

    url = postgres.new_database()
    service = ThreadService(config=AnalystConfig(workspace=tmp_path / "ws", store=url, summarizer=False),
                            model=None, sources={})
    store = service.workspace.store
    thread_id = store.create_thread().thread_id
    append, publish = store.append_events, service._publish
    published_by_the_feed = threading.Event()
    writing = threading.Event()

    def feed_publishes(event):
        if writing.is_set():  # the writer is still inside the store's call: the feed's read
            published_by_the_feed.set()
        publish(event)

    def append_then_wait_for_the_feed(events):
        writing.set()
        stored = append(events)
        # Committed and announced: the writer answers only once the feed has published
        # the batch, as a store call that returned a little later would.
        assert published_by_the_feed.wait(30)
        writing.clear()
        return stored

    service._publish = feed_publishes  # type: ignore[method-assign]
    store.append_events = append_then_wait_for_the_feed  # type: ignore[method-assign]
    try:
        with service.listen(thread_id) as queue:
            await asyncio.to_thread(service._feed.wait_ready)
            writer = EventWriter(store, lambda e: service._publish(e))
            for text in ("a", "b"):
                writer.add(TextDelta(thread_id=thread_id, turn_id="t", text=text))
            await writer.drain()
            heard = []
            while not queue.empty():
                heard.append(queue.get_nowait())
        assert [(e.seq, e.text) for e in heard] == [(1, "a"), (2, "b")]
    finally:
        await service.close()
