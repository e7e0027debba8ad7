"""A server turn is announced while its request is answered, and never left running unended."""

from __future__ import annotations

import asyncio

import pytest
import pytest_asyncio

from jupyter_analyst.turns import AnalystConfig, ModelSettings
from jupyter_analyst.server.service import ThreadService

# Never contacted: these turns end before any model call.
MODEL = ModelSettings(model="never-called", base_url="http://127.0.0.1:9/v1", api_key="x")


@pytest_asyncio.fixture
async def service(tmp_path, sales_db):
    svc = ThreadService(config=AnalystConfig(workspace=tmp_path / "ws", summarizer=False), model=MODEL,
                        sources={"sales": str(sales_db)})
    yield svc
    await svc.close()


async def _engine_ready(service: ThreadService) -> None:
    """The engine imported, with what a first turn imports (a turn then waits for nothing)."""
    engine = await service.engine.ready()
    await asyncio.to_thread(engine.warmed.wait, 60)


def _types(service: ThreadService, thread_id: str) -> list[str]:
    return [e.type for e in service.workspace.store.events(thread_id)]


@pytest.mark.asyncio
async def test_the_turn_is_stored_and_announced_before_start_returns(service):
    thread = service.create_thread("alice", "sales", None)
    with service.listen(thread.thread_id) as queue:
        task = service.start_turn(thread, "how many orders?")
        # Nothing of the engine has run yet (it is not even imported): the announcement is
        # already stored and sent, and that the turn waits for the engine to load.
        assert _types(service, thread.thread_id) == ["turn_started", "starting"]
        first, waiting = queue.get_nowait(), queue.get_nowait()
        assert (first.type, first.seq, first.prompt, first.model) == ("turn_started", 1, "how many orders?", MODEL.model)
        assert (waiting.seq, waiting.turn_id, waiting.what) == (2, first.turn_id, "engine")
        assert waiting.message.startswith("Loading the analyst")
        (turn,) = service.workspace.store.turns(thread.thread_id)
        assert (turn.status, first.turn_id) == ("running", turn.turn_id)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


@pytest.mark.asyncio
async def test_a_turn_cancelled_before_it_ran_is_ended_as_interrupted(service):
    thread = service.create_thread("alice", "sales", None)
    await _engine_ready(service)
    with service.listen(thread.thread_id) as queue:
        task = service.start_turn(thread, "q")
        assert await service.cancel(thread.thread_id)
        assert task.cancelled()
        seen = [queue.get_nowait().type for _ in range(queue.qsize())]
    assert seen == ["turn_started", "turn_ended"]
    ended = service.workspace.store.events(thread.thread_id)[-1]
    assert (ended.type, ended.status, ended.message) == ("turn_ended", "interrupted", "cancelled by the user")
    assert [t.status for t in service.workspace.store.turns(thread.thread_id)] == ["interrupted"]
    assert not service.is_active(thread.thread_id)


@pytest.mark.asyncio
async def test_a_turn_whose_source_cannot_open_is_ended_once_with_the_error(tmp_path, sales_db):
    gone = tmp_path / "gone.duckdb"
    gone.write_bytes(sales_db.read_bytes())
    svc = ThreadService(config=AnalystConfig(workspace=tmp_path / "ws2", summarizer=False), model=MODEL,
                        sources={"gone": str(gone)})
    try:
        thread = svc.create_thread("alice", "gone", None)
        await _engine_ready(svc)
        gone.unlink()
        task = svc.start_turn(thread, "q")
        with pytest.raises(Exception) as failure:
            await task
        assert "gone.duckdb" in str(failure.value)
        types = _types(svc, thread.thread_id)
        assert types == ["turn_started", "turn_ended"], types  # ended once: by the engine, not again
        ended = svc.workspace.store.events(thread.thread_id)[-1]
        assert ended.status == "error" and "gone.duckdb" in ended.message
        assert [t.status for t in svc.workspace.store.turns(thread.thread_id)] == ["error"]
        assert not svc.is_active(thread.thread_id)
    finally:
        await svc.close()
