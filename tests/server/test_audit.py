"""What the sidebar's buttons call, through a real Jupyter server: the server's set-up
(``config``), a thread's audit notebook exported into the user's folder and verified there,
one step as a runnable cell, and an artifact's preview as a notebook output."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
import sys

import duckdb
import nbformat
import pytest
from tornado.httpclient import HTTPClientError

from jupyter_analyst.notebooks.trail import META, sql_cell_source
from jupyter_analyst.events import parse_events
from jupyter_analyst.testing import ScriptedModelServer
from jupyter_analyst.testing.servers.jupyter import analyst_server_config

SQL = "SELECT region_id, region FROM regions ORDER BY region_id"
CHART = "import matplotlib.pyplot as plt\nregions.plot.bar(x='region', y='region_id')\nplt.show()"
SCRIPT = {"turns": [{"match": ".", "steps": [
    {"tool_calls": [{"name": "run_sql", "arguments": {"sql": SQL, "name": "regions"}}]},
    {"tool_calls": [{"name": "run_python", "arguments": {"code": CHART}}]},
    {"content": "[scripted model] regions charted"},
]}]}
KEY = "sk-never-shown-0123456789"


@pytest.fixture
def db(tmp_path, sales_db):
    """A copy of the sample database this test may change."""
    return shutil.copy(sales_db, tmp_path / "sales.duckdb")


@pytest.fixture
def model_configured():
    return True


@pytest.fixture
def jp_server_config(tmp_path, db, model_configured):
    with ScriptedModelServer(SCRIPT) as server:
        url = server.base_url if model_configured else None
        extra = {"api_key": KEY} if model_configured else {}
        yield analyst_server_config(tmp_path / "ws", {"sales": str(db)}, url, **extra)


async def api(jp_fetch, *path, method="GET", body=None, **kw):
    if body is not None:
        kw["body"] = json.dumps(body)
    response = await jp_fetch("analyst", "api", *path, method=method, **kw)
    return json.loads(response.body) if "json" in response.headers.get("Content-Type", "") else response


async def refused(jp_fetch, *path, method="POST", body=None, **kw) -> tuple[int, dict]:
    with pytest.raises(HTTPClientError) as info:
        await api(jp_fetch, *path, method=method, body=body, **kw)
    return info.value.code, json.loads(info.value.response.body)


async def start_verify(jp_fetch, tid: str, body: dict) -> tuple[dict, object]:
    """``POST verify``: 202 at once, the verification queued, where to follow it and when."""
    response = await jp_fetch("analyst", "api", "threads", tid, "verify", method="POST", body=json.dumps(body))
    started = json.loads(response.body)
    assert response.code == 202, started
    assert started["status"] == "queued" and started["report"] is None and started["error"] is None
    assert started["thread_id"] == tid and started["verification_id"].startswith("ver_")
    location = response.headers["Location"]
    assert location.startswith("/") and location.endswith(
        f"/analyst/api/threads/{tid}/verifications/{started['verification_id']}")
    assert response.headers["Retry-After"] == "1"
    return started, response


async def verified(jp_fetch, service, tid: str, body: dict) -> dict:
    """The verification's resource once it has finished (waited for in the server's process,
    as a client would poll it every Retry-After seconds)."""
    started, _ = await start_verify(jp_fetch, tid, body)
    await service.verifications.wait(started["verification_id"])
    response = await jp_fetch("analyst", "api", "threads", tid, "verifications", started["verification_id"])
    assert "Retry-After" not in response.headers  # finished: nothing more to wait for
    finished = json.loads(response.body)
    assert finished["status"] in ("done", "failed") and finished["finished_at"] >= finished["started_at"]
    return finished


@pytest.fixture
def service(jp_serverapp):
    return jp_serverapp.web_app.settings["jupyter_analyst"]


async def thread_with_a_turn(jp_fetch) -> tuple[str, list[dict]]:
    thread = await api(jp_fetch, "threads", method="POST", body={"source": "sales", "title": "Regions / chart"})
    tid = thread["thread_id"]
    response = await api(jp_fetch, "threads", tid, "turns", method="POST", body={"prompt": "regions please"})
    events = parse_events(response.body.decode())
    assert events[-1]["type"] == "turn_ended" and events[-1]["status"] == "completed"
    return tid, events


async def test_config_names_the_model_and_sources_but_never_the_key(jp_fetch):
    response = await jp_fetch("analyst", "api", "config")
    assert KEY not in response.body.decode()
    config = json.loads(response.body)
    assert config["model"] == {"configured": True, "name": "jupyter-analyst-scripted",
                               "base_url": config["model"]["base_url"], "scripted": True, "hint": None}
    assert config["model"]["base_url"].startswith("http://127.0.0.1:")
    assert config["sources"] == ["sales"]
    assert config["limits"]["max_prompt_bytes"] == 100_000
    # No context folder set and none beside the workspace: nothing to verify answers into.
    assert config["context"] == {"configured": False}


@pytest.mark.parametrize("model_configured", [False])
async def test_config_without_a_model_says_how_to_set_one(jp_fetch, monkeypatch):
    config = await api(jp_fetch, "config")
    assert config["model"]["configured"] is False and config["model"]["name"] is None
    assert "OPENAI_API_KEY" in config["model"]["hint"] and "c.AnalystApp" in config["model"]["hint"]
    tid = (await api(jp_fetch, "threads", method="POST", body={}))["thread_id"]
    status, error = await refused(jp_fetch, "threads", tid, "turns", body={"prompt": "hello"})
    assert (status, error["reason"], error["hint"]) == (400, "no_model", config["model"]["hint"])


async def test_export_writes_the_audit_notebook_into_the_users_folder_and_it_verifies(jp_fetch, jp_root_dir, db,
                                                                                      service):
    tid, events = await thread_with_a_turn(jp_fetch)
    exported = await api(jp_fetch, "threads", tid, "export", method="POST", body={})
    assert exported["path"] == f"analyst/regions-chart-{tid[-8:]}.ipynb"
    nb = nbformat.read(jp_root_dir / exported["path"], as_version=4)
    nbformat.validate(nb)
    assert nb.metadata[META]["thread_id"] == tid and exported["artifacts"] == len(nb.metadata[META]["manifest"]) == 2
    # The same notebook through Jupyter's own contents API, as the sidebar opens it.
    contents = await jp_fetch("api", "contents", *exported["path"].split("/"))
    assert json.loads(contents.body)["type"] == "notebook"

    verification = await verified(jp_fetch, service, tid, {"path": exported["path"]})
    assert verification["status"] == "done", verification
    assert (verification["notebook"], verification["source"]) == (exported["path"], "sales")
    report = verification["report"]
    assert report["ok"] is True and report["counts"] == {"matched": 2, "changed": 0, "missing": 0}, report
    assert report["notebook"] == exported["path"] and report["source"] == "sales"

    # One source row changes: the dataset and the chart drawn from it no longer match.
    with duckdb.connect(str(db)) as conn:
        conn.execute("UPDATE regions SET region = 'Elsewhere' WHERE region_id = 1")
    report = (await verified(jp_fetch, service, tid, {}))["report"]
    assert report["ok"] is False and report["notebook"] is None
    changed = {c["name"]: c["status"] for c in report["checks"]}
    assert changed["regions"] == "changed"


async def test_a_verification_is_answered_at_once_and_one_runs_at_a_time_per_thread(jp_fetch, service):
    tid, _ = await thread_with_a_turn(jp_fetch)
    other, _ = await thread_with_a_turn(jp_fetch)
    started, _ = await start_verify(jp_fetch, tid, {})  # queued: the answer did not wait for the run
    vid = started["verification_id"]
    status, error = await refused(jp_fetch, "threads", tid, "verify", body={})
    assert (status, error["reason"], error["verification_id"]) == (409, "verify_in_progress", vid)
    following = await api(jp_fetch, "threads", tid, "verifications", vid)
    assert following["verification_id"] == vid and following["status"] in ("queued", "running", "done")
    # Another thread's verification runs beside it; neither is seen through the other thread.
    second, _ = await start_verify(jp_fetch, other, {})
    for thread, verification in [(other, vid), (tid, second["verification_id"]), (tid, "ver_0123456789abcdef")]:
        status, error = await refused(jp_fetch, "threads", thread, "verifications", verification, method="GET")
        assert (status, error["reason"]) == (404, "verification_not_found")
    done = [await service.verifications.wait(v) for v in (vid, second["verification_id"])]
    assert [v.status for v in done] == ["done", "done"]
    assert all(v.report["ok"] and len(v.report["checks"]) == 2 for v in done)
    # Finished: the thread may be verified again.
    assert (await verified(jp_fetch, service, tid, {}))["status"] == "done"


async def test_a_verification_that_cannot_run_fails_and_says_why(jp_fetch, service, db):
    tid, _ = await thread_with_a_turn(jp_fetch)
    db.unlink()  # the thread's source is gone: the CLI cannot verify
    verification = await verified(jp_fetch, service, tid, {})
    assert verification["status"] == "failed" and verification["report"] is None
    assert verification["error"]["reason"] == "verify_failed" and verification["error"]["message"]
    assert str(db) not in json.dumps(verification)  # the source by its name only


async def test_a_verification_under_way_is_stopped_with_the_server_and_its_process_killed(jp_fetch, service):
    import psutil

    tid, _ = await thread_with_a_turn(jp_fetch)
    started, _ = await start_verify(jp_fetch, tid, {})
    me = psutil.Process()

    def command(process: psutil.Process) -> list[str]:
        # A child that ended since it was listed (a zombie not yet reaped, or gone) runs nothing.
        try:
            return process.cmdline()
        except (psutil.ZombieProcess, psutil.NoSuchProcess):
            return []

    def verifying() -> list[psutil.Process]:
        # The command's own word, or the folders it runs its kernel in (not any path that
        # happens to hold the word, such as the checkout's).
        return [p for p in me.children(recursive=True)
                if any(arg == "verify" or "analyst-verify-" in arg for arg in command(p))]

    # Under way once its process is there (started by the server's task, not by this test).
    deadline = asyncio.get_running_loop().time() + 60
    while not verifying():
        assert asyncio.get_running_loop().time() < deadline, "the verification's process never started"
        await asyncio.sleep(0.05)
    await service.verifications.close()
    stopped = service.verifications.get(tid, started["verification_id"])
    assert (stopped.status, stopped.error["reason"]) == ("failed", "verify_cancelled")
    assert verifying() == []


async def test_export_paths_are_checked_and_a_thread_without_turns_has_no_notebook(jp_fetch, jp_root_dir):
    thread = await api(jp_fetch, "threads", method="POST", body={"source": "sales"})
    tid = thread["thread_id"]
    status, error = await refused(jp_fetch, "threads", tid, "export", body={})
    assert (status, error["reason"]) == (409, "notebook_not_found")
    tid, _ = await thread_with_a_turn(jp_fetch)
    for bad in ("../outside.ipynb", "/etc/x.ipynb", "a//b.ipynb", "notes.txt", "a\\..\\b.ipynb"):
        status, error = await refused(jp_fetch, "threads", tid, "export", body={"path": bad})
        assert (status, error["reason"], error["field"]) == (400, "invalid_path", "path"), bad
    assert not (jp_root_dir.parent / "outside.ipynb").exists()
    # What the contents manager cannot write there is one answer, whatever its own status was
    # (400 for a hidden folder, a 500 for a folder where the notebook goes or a name too long).
    (jp_root_dir / "taken.ipynb").mkdir()
    (jp_root_dir / "plain").write_text("a file, not a folder")
    too_long = ("\U0001F600" * 63 + "/") * 15 + "\U0001F600" * 57 + ".ipynb"  # 1023 characters, over 4 KiB
    for unwritable in (".secret/x.ipynb", "taken.ipynb", "plain/x.ipynb", too_long):
        status, error = await refused(jp_fetch, "threads", tid, "export", body={"path": unwritable})
        assert (status, error["reason"]) == (409, "path_not_writable"), (unwritable, error)
        assert str(jp_root_dir) not in json.dumps(error)
    assert not (jp_root_dir / ".secret").exists()
    done = await api(jp_fetch, "threads", tid, "export", method="POST", body={"path": "reports/q3/regions.ipynb"})
    assert done["path"] == "reports/q3/regions.ipynb" and (jp_root_dir / "reports/q3/regions.ipynb").is_file()


async def test_verify_refuses_a_notebook_of_another_thread_or_none_at_all(jp_fetch, jp_root_dir):
    first, _ = await thread_with_a_turn(jp_fetch)
    second, _ = await thread_with_a_turn(jp_fetch)
    path = (await api(jp_fetch, "threads", first, "export", method="POST", body={}))["path"]
    status, error = await refused(jp_fetch, "threads", second, "verify", body={"path": path})
    assert (status, error["reason"]) == (409, "notebook_of_another_thread")
    (jp_root_dir / "garbled.ipynb").write_text("{not json")
    (jp_root_dir / "folder.ipynb").mkdir()
    for path in ("garbled.ipynb", "folder.ipynb"):
        status, error = await refused(jp_fetch, "threads", second, "verify", body={"path": path})
        assert (status, error["reason"]) == (409, "notebook_unreadable"), path
    # A body naming no notebook names what the folder does not hold (409, as for the notebooks
    # above); 404 is kept for a thread that is not there.
    (jp_root_dir / "elsewhere").mkdir()
    (jp_root_dir / "linked").symlink_to(jp_root_dir / "elsewhere")
    for path in ("missing.ipynb", ".hidden.ipynb", "linked/x.ipynb"):
        status, error = await refused(jp_fetch, "threads", second, "verify", body={"path": path})
        assert (status, error["reason"]) == (409, "notebook_not_found"), path
    status, error = await refused(jp_fetch, "threads", "thr_0123456789abcdef", "verify", body={"path": "missing.ipynb"})
    assert (status, error["reason"]) == (404, "thread_not_found")


async def test_a_step_as_a_cell_runs_in_a_fresh_python(jp_fetch, tmp_path, db):
    tid, events = await thread_with_a_turn(jp_fetch)
    calls = {e["tool"]: e["call_id"] for e in events if e["type"] == "tool_call"}
    cell = await api(jp_fetch, "threads", tid, "steps", calls["run_sql"], "cell")
    assert cell["tool"] == "run_sql" and cell["name"] == "regions"
    assert cell["source"] == sql_cell_source("regions", SQL)
    assert f"analyst.connect({str(db)!r})" in cell["setup"]
    code = cell["setup"] + "\n" + cell["source"] + "\nprint(len(regions), list(regions.columns))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert out.stdout.strip() == "5 ['region_id', 'region']"

    python = await api(jp_fetch, "threads", tid, "steps", calls["run_python"], "cell")
    assert python["source"] == CHART and python["name"] is None

    status, error = await refused(jp_fetch, "threads", tid, "steps", "call_nope", "cell", method="GET")
    assert (status, error["reason"]) == (404, "step_not_found")


async def test_previews_are_notebook_outputs_of_the_checked_bytes(jp_fetch):
    tid, _ = await thread_with_a_turn(jp_fetch)
    artifacts = {a["type"]: a for a in (await api(jp_fetch, "threads", tid, "artifacts"))["artifacts"]}
    table = await api(jp_fetch, "artifacts", artifacts["dataset"]["artifact_id"], "preview")
    assert table["metadata"] == {"rows": 5, "shown": 5, "columns": table["metadata"]["columns"],
                                 "sample": table["metadata"]["sample"]}
    assert [sorted(r) for r in table["metadata"]["sample"]] == [["region", "region_id"]] * 5
    assert isinstance(table["metadata"]["sample"][0]["region_id"], int)
    assert [c["name"] for c in table["metadata"]["columns"]] == ["region_id", "region"]
    assert "<table>" in table["data"]["text/html"] and table["data"]["text/plain"] == "regions: 5 rows x 2 columns"
    two = await api(jp_fetch, "artifacts", artifacts["dataset"]["artifact_id"], "preview", params={"rows": "2"})
    assert two["metadata"]["shown"] == 2 and "first 2 shown" in two["data"]["text/html"]
    assert len(two["metadata"]["sample"]) == 2
    chart = await api(jp_fetch, "artifacts", artifacts["image"]["artifact_id"], "preview")
    assert base64.b64decode(chart["data"]["image/png"]).startswith(b"\x89PNG")
    for bad in ("-1", "201", "x", "2.5"):
        status, error = await refused(jp_fetch, "artifacts", artifacts["dataset"]["artifact_id"], "preview",
                                      method="GET", params={"rows": bad})
        assert (status, error["reason"]) == (400, "invalid_rows"), bad


async def test_the_served_notebook_masks_a_source_password(jp_fetch, jp_serverapp):
    from jupyter_analyst.notebooks.export import write_thread_notebook

    service = jp_serverapp.web_app.settings["jupyter_analyst"]
    workspace = service.workspace
    thread = workspace.store.create_thread(user="local", source="postgresql://ann:s3cret@db:5432/sales", title="w")
    path = workspace.notebook_path(thread.thread_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_thread_notebook(workspace.store, workspace.artifacts, thread.thread_id, path)
    # The thread's own copy neither: verify takes the source from the thread, not the notebook.
    assert "s3cret" not in path.read_text() and "ann:***@" in path.read_text()
    served = (await jp_fetch("analyst", "api", "threads", thread.thread_id, "notebook")).body.decode()
    assert "s3cret" not in served and "postgresql://ann:***@db:5432/sales" in served
    nbformat.validate(nbformat.reads(served, as_version=4))
