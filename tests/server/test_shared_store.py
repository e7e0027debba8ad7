"""A server on a shared PostgreSQL store follows the turns another process runs: a client's
event stream of such a turn always reaches the turn's end."""

from __future__ import annotations

import pytest

from jupyter_analyst.events import TextDelta, TurnEnded
from jupyter_analyst.events import parse_events
from jupyter_analyst.store import ThreadStore
from jupyter_analyst.testing.servers.jupyter import analyst_server_config


@pytest.fixture
def store_url(postgres):
    return postgres.new_database()


@pytest.fixture
def jp_server_config(tmp_path, sales_db, store_url):
    return analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, store_url=store_url)


async def test_a_turn_ending_elsewhere_while_the_stream_opens_is_followed_to_its_end(jp_fetch, jp_serverapp,
                                                                                   store_url):
    """The other process ends its turn just after this server read the backlog: the stream
    must still follow (and end with ``turn_ended``), not stop as if no turn were running."""
    other = ThreadStore(store_url)  # the process running the turn, on connections of its own
    try:
        thread_id = other.create_thread(user="local").thread_id
        turn = other.start_turn(thread_id, "elsewhere")
        other.append_event(TextDelta(thread_id=thread_id, turn_id=turn.turn_id, text="working"))
        store = jp_serverapp.web_app.settings["jupyter_analyst"].workspace.store
        read = store.events
        reads = []

        def read_then_the_turn_ends(tid: str, after: int = 0):
            seen = read(tid, after=after)
            if not reads:  # the stream's backlog: the turn ends right after it was read
                other.append_event(TurnEnded(thread_id=thread_id, turn_id=turn.turn_id, status="completed"))
                other.end_turn(turn.turn_id, "completed")
            reads.append(after)
            return seen

        store.events = read_then_the_turn_ends
        response = await jp_fetch("analyst", "api", "threads", thread_id, "events",
                                  headers={"Accept": "text/event-stream"}, request_timeout=60)
        streamed = parse_events(response.body.decode())
        assert [(e["seq"], e["type"]) for e in streamed] == [(1, "text_delta"), (2, "turn_ended")]
    finally:
        other.close()
