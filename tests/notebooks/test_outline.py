"""The user's notebook as context: its outline in the prompt, within budget, and the cells
the model asks for by id (``read_cells``), through the engine, the CLI and the server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_analyst.notebooks.outline import (
    MAX_READ_CELLS, AttachedNotebook, defined_names, load_attached, outline, read_cells, render,
)
from jupyter_analyst.testing import ScriptedModelServer, text_step
from jupyter_analyst.testing.script import call_step


def _notebook(cells: int = 6) -> dict:
    body = [
        {"id": "intro", "cell_type": "markdown", "metadata": {}, "source": ["# Revenue review\n", "Q3 numbers"]},
        {"id": "load", "cell_type": "code", "metadata": {}, "execution_count": 1,
         "source": "%matplotlib inline\nimport pandas as pd\nsales = pd.read_parquet('sales.parquet')\n",
         "outputs": []},
        {"id": "broken", "cell_type": "code", "metadata": {}, "execution_count": 2, "source": "monthly = sales.groupby(",
         "outputs": [{"output_type": "error", "ename": "SyntaxError", "evalue": "'(' was never closed", "traceback": []}]},
        {"id": "plot", "cell_type": "code", "metadata": {}, "execution_count": 3,
         "source": "# the chart\nax, fig = sales.plot(), None\nfor region in regions: pass\n",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "drawn\n"}]},
    ]
    for i in range(len(body), cells):
        body.append({"id": f"c{i}", "cell_type": "code", "metadata": {}, "execution_count": i,
                     "source": f"step_{i} = {i}", "outputs": []})
    return {"cells": body, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_the_outline_has_headings_ids_summaries_and_defined_names_never_contents():
    shape = outline(_notebook(), "review.ipynb")
    by_id = {c.id: c for c in shape.cells}
    assert [c.id for c in shape.cells][:4] == ["intro", "load", "broken", "plot"]
    assert by_id["intro"].heading == "# Revenue review" and by_id["intro"].kind == "markdown"
    assert by_id["load"].defines == ["pd", "sales"] and by_id["load"].summary == "%matplotlib inline"
    assert by_id["broken"].defines == [] and by_id["broken"].error is True
    assert by_id["plot"].summary == "ax, fig = sales.plot(), None" and by_id["plot"].defines == ["ax", "fig", "region"]
    text = render(shape, 6_000)
    assert "[1] code load: %matplotlib inline (defines pd, sales)" in text
    assert "Q3 numbers" not in text and "read_parquet" not in text  # contents stay out


@pytest.mark.parametrize("nb", [{}, {"cells": "x"}, {"cells": [None, 3, {"cell_type": 5, "source": {"a": 1}}]},
                                {"cells": [{"id": "x" * 500, "cell_type": "code", "source": ["a", 1, None]}]}])
def test_any_json_gives_an_outline(nb):
    shape = outline(nb, "odd.ipynb")
    assert len(shape.cells) == len(nb.get("cells") or []) if isinstance(nb.get("cells"), list) else shape.cells == []
    render(shape, 500)


def test_a_500_cell_outline_stays_within_its_budget_keeping_headings_and_the_last_cells():
    nb = _notebook(500)
    for i in (100, 250, 400):
        nb["cells"][i] = {"id": f"h{i}", "cell_type": "markdown", "source": f"## Part {i}"}
    text = render(outline(nb, "big.ipynb"), 6_000)
    assert len(text) <= 6_000
    assert all(f"## Part {i}" in text for i in (100, 250, 400)) and "# Revenue review" in text
    assert "[499] code c499" in text and "cells not shown" in text
    assert "[300] code c300" not in text


def test_read_cells_returns_exactly_the_cells_asked_for():
    nb = _notebook()
    got = read_cells(nb, ["plot", "nope", "load", "plot"])
    assert [c["id"] for c in got["cells"]] == ["plot", "load"] and got["unknown"] == ["nope"]
    assert got["cells"][0]["source"].startswith("# the chart") and got["cells"][0]["outputs"] == "drawn\n"
    assert read_cells(nb, ["broken"])["cells"][0]["outputs"] == "SyntaxError: '(' was never closed"
    many = read_cells(_notebook(60), [f"c{i}" for i in range(10, 50)])
    assert len(many["cells"]) == MAX_READ_CELLS and "note" in many


def test_defined_names_survive_magics_and_bad_code():
    assert defined_names("!pip list\n%%time\nx = 1") == ["x"]
    assert defined_names("def (") == []
    assert defined_names("(" * 10_000) == []


def test_an_unreadable_attachment_is_a_note_never_a_failure(tmp_path):
    assert load_attached(tmp_path / "missing.ipynb").problem
    (tmp_path / "text.ipynb").write_text("not json")
    assert "could not be read" in load_attached(tmp_path / "text.ipynb").problem
    (tmp_path / "list.ipynb").write_text("[1, 2]")
    assert "not a notebook" in load_attached(tmp_path / "list.ipynb").problem
    good = tmp_path / "good.ipynb"
    good.write_text(json.dumps(_notebook()))
    assert load_attached(good).content["cells"][1]["id"] == "load"


def _system_prompt(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "system")


def test_a_turn_sees_the_outline_and_reads_the_cells_it_asks_for(analyst):
    a = analyst({"turns": [{"steps": [call_step("read_cells", cell_ids=["load", "ghost"]), text_step("read")]}]})
    attached = AttachedNotebook(path="review.ipynb", content=_notebook(500))
    summary = a.run("what does my notebook load?", attached=attached)
    assert summary.status == "completed"
    first = a.server.requests[0]
    system = _system_prompt(first)
    assert "Notebook review.ipynb: 500 cells" in system and "[0] markdown intro: # Revenue review" in system
    assert len(system) < 40_000  # the 500 cells are an outline, not their contents
    assert any(t["function"]["name"] == "read_cells" for t in first["tools"])
    (result,) = [e for e in a.events if e.type == "tool_result" and e.tool == "read_cells"]
    assert result.status == "ok"
    assert [c["id"] for c in result.result["cells"]] == ["load"] and result.result["unknown"] == ["ghost"]
    assert "read_parquet" in result.result["cells"][0]["source"]


def test_without_a_notebook_read_cells_is_a_clear_error(analyst):
    a = analyst({"turns": [{"steps": [call_step("read_cells", cell_ids=["load"]), text_step("none")]}]})
    summary = a.run("read my notebook")
    assert summary.status == "completed"
    assert "Notebook " not in _system_prompt(a.server.requests[0])
    (result,) = [e for e in a.events if e.type == "tool_result" and e.tool == "read_cells"]
    assert result.status == "error" and result.result["error"]["reason"] == "no_notebook"


# ------------------------------------------------------------------ through the server

SERVER_SCRIPT = {"turns": [{"match": ".", "steps": [call_step("read_cells", cell_ids=["plot"]), text_step("ok")]}]}


@pytest.fixture
def scripted():
    with ScriptedModelServer(SERVER_SCRIPT) as server:
        yield server


@pytest.fixture
def jp_server_config(tmp_path, sales_db, scripted):
    from jupyter_analyst.testing.servers.jupyter import analyst_server_config

    return analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, scripted.base_url)


async def _turn(jp_fetch, tid: str, body: dict):
    return await jp_fetch("analyst", "api", "threads", tid, "turns", method="POST", body=json.dumps(body))


async def test_the_server_attaches_the_callers_notebook(jp_fetch, jp_root_dir, scripted):
    from jupyter_analyst.events import parse_events

    (jp_root_dir / "work").mkdir()
    (jp_root_dir / "work" / "review.ipynb").write_text(json.dumps(_notebook()))
    thread = json.loads((await jp_fetch("analyst", "api", "threads", method="POST", body="{}")).body)
    response = await _turn(jp_fetch, thread["thread_id"], {"prompt": "what is plotted?", "notebook": "work/review.ipynb"})
    events = parse_events(response.body.decode())
    (result,) = [e for e in events if e["type"] == "tool_result" and e["tool"] == "read_cells"]
    assert result["status"] == "ok" and result["result"]["cells"][0]["id"] == "plot"
    assert "Notebook work/review.ipynb: 6 cells" in _system_prompt(scripted.requests[0])


async def test_the_server_refuses_a_path_outside_the_folder(jp_fetch):
    from tornado.httpclient import HTTPClientError

    thread = json.loads((await jp_fetch("analyst", "api", "threads", method="POST", body="{}")).body)
    for path in ("../secret.ipynb", "/etc/x.ipynb", "notes.txt", "a//b.ipynb"):
        with pytest.raises(HTTPClientError) as info:
            await _turn(jp_fetch, thread["thread_id"], {"prompt": "x", "notebook": path})
        assert info.value.code == 400, path
        assert json.loads(info.value.response.body)["reason"] == "invalid_notebook", path


@pytest.mark.parametrize("path, said", [("absent.ipynb", "no such notebook"), ("link.ipynb", "link")])
async def test_an_absent_or_linked_notebook_is_a_note_and_the_turn_runs(jp_fetch, jp_root_dir, tmp_path, scripted,
                                                                         path, said):
    from jupyter_analyst.events import parse_events

    outside = tmp_path / "secret.ipynb"
    outside.write_text(json.dumps(_notebook()))
    (jp_root_dir / "link.ipynb").symlink_to(outside)
    thread = json.loads((await jp_fetch("analyst", "api", "threads", method="POST", body="{}")).body)
    events = parse_events((await _turn(jp_fetch, thread["thread_id"], {"prompt": "x", "notebook": path})).body.decode())
    assert events[-1]["type"] == "turn_ended" and events[-1]["status"] == "completed"
    system = _system_prompt(scripted.requests[0])
    assert f"The user's notebook {path} is attached, but" in system and said in system
    assert "read_parquet" not in json.dumps(events)  # the linked file's cells were never read
    (result,) = [e for e in events if e["type"] == "tool_result" and e["tool"] == "read_cells"]
    assert result["status"] == "error" and result["result"]["error"]["reason"] == "no_notebook"


async def test_export_and_verify_do_not_go_through_links(jp_fetch, jp_root_dir, tmp_path):
    from tornado.httpclient import HTTPClientError

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.ipynb").write_text(json.dumps(_notebook()))
    (jp_root_dir / "out").symlink_to(elsewhere)
    thread = json.loads((await jp_fetch("analyst", "api", "threads", method="POST", body="{}")).body)
    await _turn(jp_fetch, thread["thread_id"], {"prompt": "anything"})
    for action in ("export", "verify"):
        with pytest.raises(HTTPClientError) as info:
            await jp_fetch("analyst", "api", "threads", thread["thread_id"], action, method="POST",
                           body=json.dumps({"path": "out/x.ipynb"}))
        assert info.value.code == 409 and json.loads(info.value.response.body)["reason"] == "notebook_not_found"
    assert json.loads((elsewhere / "x.ipynb").read_text()) == _notebook()  # not overwritten
    saved = json.loads((await jp_fetch("analyst", "api", "threads", thread["thread_id"], "export", method="POST",
                                       body=json.dumps({"path": "fine/x.ipynb"}))).body)
    assert saved["path"] == "fine/x.ipynb" and (jp_root_dir / "fine" / "x.ipynb").is_file()
