"""The Analyst persona in a real Jupyter server with Jupyter AI's persona manager, its router
and jupyterlab-chat: found by the manager through its entry point, answering a chat over the
chat's own WebSocket with the scripted model, one thread per chat (seen in the product's REST
API), its usage reported, and the chat's stop button cancelling the turn.

Needs the ``jupyter-ai`` extra: the suite runs this file in ``.venv-jupyter-ai`` (``make
persona-venv``); elsewhere it is skipped, saying so.
"""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest

pytest.importorskip("jupyter_ai_persona_manager", reason="the jupyter-ai extra is not installed here: "
                    "`make persona-venv` runs these tests in .venv-jupyter-ai")

from jupyter_analyst.persona.chat_message import open_link  # noqa: E402
from jupyter_analyst.testing import ScriptedModelServer, python_step, sql_step, text_step  # noqa: E402
from jupyter_analyst.testing.servers.jupyter import analyst_server_config  # noqa: E402

PERSONA_ID = "jupyter-ai-personas::jupyter_analyst::AnalystPersona"
SQL = "SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY region_id"
SCRIPT = {"turns": [
    {"match": "revenue", "steps": [sql_step(SQL, "by_region"), text_step("[scripted] North leads, see ![x](http://attacker.example/?q=1)")]},
    {"match": "slow", "steps": [python_step("import time\ntime.sleep(60)"), text_step("[scripted] woke up")]},
]}


@pytest.fixture
def scripted():
    with ScriptedModelServer(SCRIPT) as server:
        yield server


@pytest.fixture
def jp_server_config(tmp_path, sales_db, scripted):
    config = analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, scripted.base_url)
    config["ServerApp"]["jpserver_extensions"].update(
        {"jupyterlab_chat": True, "jupyter_ai_router": True, "jupyter_ai_persona_manager": True})
    return config


async def _api(jp_fetch, *path, **kw):
    return json.loads((await jp_fetch("analyst", "api", *path, **kw)).body)


async def _until(condition, what: str, timeout: float = 60.0):
    """Wait for a server-side condition that no frame announces (the persona manager's
    extension links itself to the router in a task of its own)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


class Chat:
    """A client of one chat over jupyterlab-chat's WebSocket, as the chat panel is."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.messages: dict[str, dict] = {}
        self.chat_id = ""

    async def frame(self) -> dict:
        raw = await asyncio.wait_for(self.ws.read_message(), 120)
        assert raw is not None, "the chat's WebSocket closed"
        frame = json.loads(raw)
        if frame.get("action") == "connection":
            self.chat_id = frame["id"]
        if frame.get("action") == "message":
            self.messages[frame["message"]["id"]] = frame["message"]
        return frame

    async def until(self, test) -> dict:
        while not test(frame := await self.frame()):
            pass
        return frame

    def send(self, body: str) -> None:
        self.ws.write_message(json.dumps({"type": "client", "action": "send", "id": str(uuid.uuid4()), "body": body,
                                          "metadata": {"to_persona": PERSONA_ID}}))

    async def answer(self) -> str:
        """The persona's reply once it stops writing (its last message's body)."""
        await self.until(lambda f: f.get("action") == "writing" and f["user"]["username"] == PERSONA_ID
                         and not f["state"])
        mine = [m for m in self.messages.values() if m["sender"] == PERSONA_ID]
        assert mine, "the persona posted nothing"
        return mine[-1]["body"]


async def _chat(jp_serverapp, jp_ws_fetch, path: str) -> Chat:
    settings = jp_serverapp.web_app.settings
    (extension,) = jp_serverapp.extension_manager.extension_apps["jupyter_ai_persona_manager"]
    await _until(lambda: hasattr(extension, "router"), "the persona manager to join the router")
    chat = Chat(await jp_ws_fetch("api", "chat", "ws", path))
    await chat.until(lambda f: f.get("action") == "connection")
    # The persona manager joins the chat in a task of its own: it registers its personas as
    # the chat's users, which every client is told.
    await chat.until(lambda f: f.get("action") == "users" and PERSONA_ID in f["users"])
    assert chat.chat_id in settings["jupyter-ai"]["persona-managers"]
    return chat


async def test_a_chat_message_runs_a_turn_of_the_chats_own_thread(jp_serverapp, jp_ws_fetch, jp_fetch):
    chat = await _chat(jp_serverapp, jp_ws_fetch, "analysis.chat")
    chat.send("revenue by region")
    body = await chat.answer()
    assert "[scripted] North leads" in body
    # The model's link and image are shown as text, never rendered (an image URL is a beacon).
    assert "Shown as written, not rendered" in body and "```text\n[scripted] North leads, see ![x](" in body
    assert "dataset `by_region` (new" in body
    # The dataset's first rows are in the message, as a table of inert text.
    assert "`by_region`, first 5 of 5 rows:\n\n| region\\_id | revenue |\n| --- | --- |\n| 1 | " in body

    (thread,) = (await _api(jp_fetch, "threads"))["threads"]
    assert f"Thread `{thread['thread_id']}`" in body and body.endswith(open_link(thread["thread_id"]))
    assert thread["source"] == "sales" and thread["title"] == "revenue by region"

    # The same chat goes on with the same thread: the query is reused, not run again.
    chat.send("revenue by region again")
    again = await chat.answer()
    assert "dataset `by_region` (reused" in again
    (same,) = (await _api(jp_fetch, "threads"))["threads"]
    assert same["thread_id"] == thread["thread_id"]
    one = await _api(jp_fetch, "threads", thread["thread_id"])
    assert [(t["prompt"], t["status"]) for t in one["turns"]] == [
        ("revenue by region", "completed"), ("revenue by region again", "completed")]

    # The usage reported is what the model server counted, over the thread's model calls.
    events = (await _api(jp_fetch, "threads", thread["thread_id"], "events"))["events"]
    counted = [e for e in events if e["type"] == "context_usage" and e["prompt_tokens"] is not None]
    assert counted
    manager = jp_serverapp.web_app.settings["jupyter-ai"]["persona-managers"][chat.chat_id]
    usage = manager.personas[PERSONA_ID].get_usage()
    assert usage.input_tokens == sum(e["prompt_tokens"] for e in counted)
    assert usage.output_tokens == sum(e["completion_tokens"] or 0 for e in counted)

    # The persona's avatar is served by the manager, from the package.
    avatar = await jp_fetch("api", "ai", "avatars", PERSONA_ID.replace(":", "%3A"))
    assert avatar.headers["Content-Type"] == "image/svg+xml" and avatar.body.startswith(b"<svg")

    # Another chat has a thread of its own.
    other = await _chat(jp_serverapp, jp_ws_fetch, "other.chat")
    other.send("revenue by region")
    await other.answer()
    threads = (await _api(jp_fetch, "threads"))["threads"]
    assert len(threads) == 2 and thread["thread_id"] in {t["thread_id"] for t in threads}


async def test_the_chats_stop_button_cancels_the_turn(jp_serverapp, jp_ws_fetch, jp_fetch):
    chat = await _chat(jp_serverapp, jp_ws_fetch, "stop.chat")
    chat.send("slow")
    # The persona says it is writing once the turn is started (in the same step of the loop).
    await chat.until(lambda f: f.get("action") == "writing" and f["user"]["username"] == PERSONA_ID and f["state"])
    (thread,) = (await _api(jp_fetch, "threads"))["threads"]
    await _until(lambda: jp_serverapp.web_app.settings["jupyter_analyst"].is_active(thread["thread_id"]),
                 "the turn to run")
    stopped = json.loads((await jp_fetch("api", "ai", "personas", "cancel", method="POST", body="",
                                         params={"chat_id": chat.chat_id})).body)
    assert stopped["cancelled"] == [PERSONA_ID]
    body = await chat.answer()
    assert "The turn ended: interrupted" in body and "woke up" not in body
    one = await _api(jp_fetch, "threads", thread["thread_id"])
    assert one["turns"][-1]["status"] == "interrupted" and one["active"] is False


async def test_the_persona_answers_through_the_managers_one_shot_message_api(jp_fetch):
    # Jupyter AI's REST route for one message to a persona, by name: a persona manager made
    # for the request finds the persona through its entry point.
    reply = json.loads((await jp_fetch("api", "ai", "message", "Analyst", method="POST",
                                       body=json.dumps({"message": "revenue by region"}))).body)
    assert "[scripted] North leads" in reply["response"]
    (thread,) = (await _api(jp_fetch, "threads"))["threads"]
    assert f"Thread `{thread['thread_id']}`" in reply["response"]
