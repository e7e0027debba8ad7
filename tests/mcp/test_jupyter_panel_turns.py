"""A panel turn and an MCP step on the same thread, in Jupyter's own MCP server: the step waits
for the panel's turn (within a bound, past which it is refused saying what it waited for), a
look-up answers beside it, and a client that sent a progress token is told the step's progress
meanwhile. A real Jupyter server with jupyter-server-mcp, the scripted model behind the panel's
turn (held at its first model call), the SDK's own client."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mcp.client import Client

from jupyter_analyst.testing import ScriptedModelServer, sql_step, text_step
from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess, free_port

REVENUE = "SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY region_id ORDER BY region_id"
SCRIPT = {"turns": [{"match": ".", "steps": [sql_step(REVENUE, "revenue"), text_step()]}]}


def _text(result) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


@contextmanager
def panel_turn_held(tmp_path: Path, sales_db: Path,
                    *extra: str) -> Iterator[tuple[int, str, threading.Event, list]]:
    """A Jupyter server whose panel runs a turn on a new thread, held at its first model call:
    Jupyter's MCP port, the thread, the event that lets the turn go on, and what the turn's
    request ended with (once it has)."""
    port = free_port()
    with ScriptedModelServer(SCRIPT) as model:
        server = JupyterServerProcess(tmp_path, sources={"sales": str(sales_db)}, model_url=model.base_url, mcp_port=port,
                                      extra=["--AnalystApp.jupyter_mcp_tools=True",
                                             "--AnalystApp.summarizer=False", *extra])
        with server:
            thread = server.request("/analyst/api/threads", method="POST", body={"source": "sales"})["thread_id"]
            held, release = model.hold_requests(after=len(model.requests))
            ended: list = []

            def panel() -> None:  # the panel's request: it answers once the turn has ended
                try:
                    ended.append(server.request(f"/analyst/api/threads/{thread}/turns", method="POST",
                                                body={"prompt": "Revenue by region"}, raw=True, timeout=180))
                except Exception as exc:  # noqa: BLE001 - kept for the test to show
                    ended.append(exc)

            turn = threading.Thread(target=panel, daemon=True)
            turn.start()
            try:
                assert held.wait(60), "the panel's turn did not reach its model call"
                yield port, thread, release, ended
            finally:
                release.set()
                turn.join(120)


def test_a_step_waits_for_the_panels_turn_and_a_look_up_answers_beside_it(tmp_path, sales_db):
    with panel_turn_held(tmp_path, sales_db) as (port, thread, release, ended):
        async def session():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                told: list[str] = []
                waiting = asyncio.Event()

                async def progress(value, total, message):
                    told.append(message or "")
                    if "running" in (message or ""):
                        waiting.set()

                step = asyncio.create_task(client.call_tool(
                    "analyst_run_python", {"code": "print(len(revenue))", "thread": thread},
                    progress_callback=progress))
                look = await client.call_tool("analyst_describe_table", {"table": "orders", "thread": thread})
                await asyncio.wait_for(waiting.wait(), 60)  # a beat: the step has waited a second
                waited = not step.done()
                release.set()  # the panel's turn goes on, and ends
                result = await asyncio.wait_for(step, 180)
                state = await client.call_tool("analyst_thread_state", {"thread": thread})
                return look, waited, result, told, state

        look, waited, result, told, state = asyncio.run(session())
    assert ended and not isinstance(ended[0], Exception), ended
    assert not look.is_error and look.structured_content["thread"] == thread, _text(look)
    assert waited, "the step waited for the panel's turn rather than be refused"
    assert not result.is_error, _text(result)
    # It ran after the panel's turn, on the dataset that turn made.
    assert result.structured_content["result"]["stdout"].strip() == "5"
    assert result.structured_content["thread"] == thread and result.structured_content["source"] == "sales"
    turns = state.structured_content["turns"]
    assert turns[0]["prompt"] == "Revenue by region" and turns[0]["status"] == "completed", turns
    assert turns[-1]["status"] == "completed"
    # The client that sent a progress token was told: beats while it waited, then the step's events.
    assert any("run_python running" in message for message in told), told
    assert any(message.startswith("tool_call") for message in told), told


def test_a_step_waits_for_the_panels_turn_only_so_long_and_says_what_it_waited_for(tmp_path, sales_db):
    with panel_turn_held(tmp_path, sales_db, "--AnalystApp.jupyter_mcp_wait=2") as (port, thread, release, ended):
        async def session():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                refused = await client.call_tool("analyst_run_sql", {"sql": "SELECT 1 AS one", "name": "one",
                                                                    "thread": thread})
                release.set()
                return refused

        refused = asyncio.run(session())
    assert refused.is_error and refused.structured_content["error"]["reason"] == "turn_in_progress"
    assert f"the panel's turn on thread {thread} still ran after 2 s of waiting: nothing ran" in _text(refused)
    assert ended and not isinstance(ended[0], Exception), ended
