"""A file the model's code wrote, opened from the Jupyter server: it cannot script the origin.

``GET /analyst/api/artifacts/{id}/content`` is served from the origin that can start
kernels, to a browser that sends that origin's cookies; the model can put that address in
a link of its answer. Its code writes an HTML page and an SVG image holding script under
``outputs/``. Before the fix both were served ``inline`` with their own type: only
jupyter_server's API policy (``default-src 'none'``) kept a current browser from running
their script as the Jupyter page. Now the document is also sandboxed (an opaque origin),
never sniffed, and downloaded rather than shown.
"""

from __future__ import annotations

import json

import pytest

from jupyter_analyst.events import parse_events
from jupyter_analyst.testing import ScriptedModelServer, python_step, text_step
from jupyter_analyst.testing.servers.jupyter import analyst_server_config

from .conftest import sandboxed_root

pytestmark = sandboxed_root()

WRITE = """
from pathlib import Path
Path("outputs").mkdir(exist_ok=True)
Path("outputs/report.html").write_text("<script>fetch('/api/kernels', {method: 'POST'})</script>")
Path("outputs/chart.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg' onload='alert(document.cookie)'/>")
Path("outputs/notes.txt").write_text("<html><script>alert(1)</script>")
"""
SCRIPT = {"turns": [{"match": ".", "steps": [python_step(WRITE), text_step("see the report")]}]}


@pytest.fixture
def jp_server_config(tmp_path, sales_db):
    with ScriptedModelServer(SCRIPT) as server:
        yield analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, server.base_url)


async def api(jp_fetch, *path, method="GET", body=None):
    kw = {"body": json.dumps(body)} if body is not None else {}
    return await jp_fetch("analyst", "api", *path, method=method, **kw)


async def test_a_model_written_page_or_image_is_never_a_script_of_the_servers_origin(jp_fetch):
    thread = json.loads((await api(jp_fetch, "threads", method="POST", body={"source": "sales"})).body)
    tid = thread["thread_id"]
    turn = await api(jp_fetch, "threads", tid, "turns", method="POST", body={"prompt": "write the report"})
    assert parse_events(turn.body.decode())[-1]["status"] == "completed"
    artifacts = json.loads((await api(jp_fetch, "threads", tid, "artifacts")).body)["artifacts"]
    by_name = {a["name"]: a for a in artifacts}
    assert {"outputs/report.html", "outputs/chart.svg", "outputs/notes.txt"} <= set(by_name)

    for name in ("outputs/report.html", "outputs/chart.svg", "outputs/notes.txt"):
        response = await api(jp_fetch, "artifacts", by_name[name]["artifact_id"], "content")
        headers = response.headers
        assert b"<script>" in response.body or b"onload" in response.body  # the bytes are served as they are
        policy = [p.strip() for p in headers.get("Content-Security-Policy", "").split(";")]
        assert "sandbox" in policy, (name, headers.get("Content-Security-Policy"))  # no script, an opaque origin
        assert "default-src 'none'" in policy
        assert headers.get("X-Content-Type-Options") == "nosniff", name  # text stays text
        disposition = headers.get("Content-Disposition", "")
        if name != "outputs/notes.txt":  # types that can hold script are downloaded, not shown
            assert disposition.startswith("attachment;"), (name, disposition)
