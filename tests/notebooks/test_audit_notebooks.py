"""Audit-trail notebooks: export, stock papermill, the analyst engine, verify.

Real parts throughout: the demo's two turns run against a real DuckDB file with real
(sandboxed) kernels; papermill is the released one, run as a command.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import nbformat
import pytest

from jupyter_analyst.errors import ConfigError

BIN = Path(sys.executable).parent
ARTIFACT_MIME = "application/vnd.jupyter-analyst.artifact+json"


def cli(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jupyter_analyst.cli", *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})}, cwd=cwd)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The demo's thread (a query, a chart and a CSV; then "continue"), exported."""
    from jupyter_analyst.turns import AnalystConfig, ModelSettings, TurnRequest, run_turn
    from jupyter_analyst.cli.demo import DEMO_SCRIPT, FIRST_PROMPT, build_sample_database
    from jupyter_analyst.notebooks.export import export_thread, write_export
    from jupyter_analyst.testing import ScriptedModelServer
    from jupyter_analyst.workspace import Workspace

    root = tmp_path_factory.mktemp("audit")
    db = build_sample_database(root / "sales.duckdb")
    with ScriptedModelServer(DEMO_SCRIPT) as server:
        model = ModelSettings(model="jupyter-analyst-scripted", base_url=server.base_url, api_key="x")
        config = AnalystConfig(workspace=root / "ws")
        first = asyncio.run(run_turn(TurnRequest(prompt=FIRST_PROMPT, source=str(db)), config=config, model=model))
        asyncio.run(run_turn(TurnRequest(prompt="continue", thread_id=first.thread_id), config=config, model=model))
    ws = Workspace(root / "ws")
    nb = export_thread(ws.store, ws.artifacts, first.thread_id)
    inventory = {a.artifact_id: a.fingerprint for a in ws.artifacts.list(first.thread_id)}
    thread_notebook = ws.notebook_path(first.thread_id)
    ws.close()
    path = write_export(nb, root / "exported.ipynb")
    changed = root / "changed.duckdb"
    shutil.copy(db, changed)
    with duckdb.connect(str(changed)) as con:
        con.execute("UPDATE orders SET revenue = revenue + 1 WHERE order_id = 1")
    return {"root": root, "db": db, "changed": changed, "path": path, "thread": first.thread_id, "inventory": inventory,
            "thread_notebook": thread_notebook}


def test_export_is_valid_readable_and_carries_its_provenance(exported):
    nb = nbformat.read(exported["path"], as_version=4)
    nbformat.validate(nb)
    meta = nb.metadata["jupyter_analyst"]
    assert meta["thread_id"] == exported["thread"] and meta["source"] == str(exported["db"])
    assert meta["model"] == "jupyter-analyst-scripted" and meta["turns"] == 2
    assert meta["created_at"] and meta["finished_at"]
    assert {e["artifact_id"]: e["fingerprint"] for e in meta["manifest"]} == exported["inventory"]
    assert {e["type"] for e in meta["manifest"]} == {"dataset", "image", "file"}

    params = nb.cells[1]
    assert params.metadata["tags"] == ["parameters"] and f"source = {str(exported['db'])!r}" in params.source
    assert "analyst.connect(source)" in nb.cells[2].source
    steps = [c for c in nb.cells if "call_id" in c.metadata.get("jupyter_analyst", {})]
    assert [c.metadata["jupyter_analyst"]["tool"] for c in steps] == ["run_sql", "run_python"] * 2
    assert [c.metadata["jupyter_analyst"]["reused"] for c in steps] == [False, False, True, True]
    for cell in steps:
        assert {"call_id", "step_key", "state", "artifact_ids", "duration_s", "reused"} <= set(cell.metadata["jupyter_analyst"])
    sql = steps[0]
    # The model's code, and its first line says so (the assignment still opens the code).
    assert sql.source.startswith("# Written by a language model") and "model-written" in sql.metadata["tags"]
    assert sql.source.splitlines()[1].startswith("revenue_by_region = analyst.sql(")
    table = sql.outputs[0]["data"]
    assert "text/html" in table and table["application/vnd.dataresource+json"]["schema"]["fields"]
    assert any("image/png" in o.get("data", {}) for o in steps[1].outputs)
    prompts = [c.source for c in nb.cells if c.metadata.get("jupyter_analyst", {}).get("role") == "prompt"]
    assert len(prompts) == 2 and "continue" in prompts[1]


def test_the_summary_says_what_the_thread_cost_and_what_reuse_saved(exported):
    from jupyter_analyst.ledger import Ledger, describe
    from jupyter_analyst.workspace import Workspace

    nb = nbformat.read(exported["path"], as_version=4)
    ws = Workspace(exported["root"] / "ws")
    try:
        turns = ws.store.turns(exported["thread"])
        steps = ws.artifacts.steps(exported["thread"])
    finally:
        ws.close()
    total = Ledger.total([t.ledger for t in turns])
    assert Ledger.model_validate(nb.metadata["jupyter_analyst"]["ledger"]) == total
    # The server's counts; no price was set: no cost.
    assert total.usage.calls == sum(t.ledger.usage.calls for t in turns) >= 4
    assert total.usage.counted_by == "server" and total.usage.cost_usd is None
    # "continue" reused the first turn's steps: what they cost when they ran is what it saved.
    assert total.saved.steps == len(steps) == 2 and turns[1].ledger.steps == 0
    assert total.saved.prompt_tokens == sum(s.cost.prompt_tokens for s in steps) > 0
    assert total.saved.execution_s == pytest.approx(sum(s.duration_s for s in steps), abs=1e-3)
    line = next(ln for ln in nb.cells[0].source.splitlines() if ln.startswith("| Cost |"))
    assert line == f"| Cost | {describe(total)} |"
    assert "no price" in line and "reuse saved 2 steps' run" in line and "they first cost" in line


def test_the_threads_own_notebook_is_the_audit_notebook_kept_after_every_turn(exported):
    """What `run` points to is the exported form, rewritten from the store after each turn."""
    nb = nbformat.read(exported["thread_notebook"], as_version=4)
    nbformat.validate(nb)
    meta = nb.metadata["jupyter_analyst"]
    assert meta["turns"] == 2 and {e["artifact_id"]: e["fingerprint"] for e in meta["manifest"]} == exported["inventory"]
    assert meta["data_version"].startswith("sales.duckdb:")  # the source as the last turn read it
    assert "parameters" in nb.cells[1].metadata["tags"] and "analyst.connect(source)" in nb.cells[2].source
    roles = [c.metadata.get("jupyter_analyst", {}).get("role") for c in nb.cells]
    assert roles.count("prompt") == 2 and roles.count("answer") == 2 and roles[0] == "summary"
    # The same cells as `export` makes (cell ids and the verify command's file name aside).
    again = nbformat.read(exported["path"], as_version=4)
    assert [c.source for c in nb.cells[1:]] == [c.source for c in again.cells[1:]]


def test_each_step_shows_its_provenance_and_the_notebook_opens_with_a_summary(exported):
    nb = nbformat.read(exported["thread_notebook"], as_version=4)
    meta = nb.metadata["jupyter_analyst"]
    steps = [i for i, c in enumerate(nb.cells) if "call_id" in c.metadata.get("jupyter_analyst", {})]
    reused = [nb.cells[i].metadata["jupyter_analyst"]["reused"] for i in steps]
    assert reused == [False, False, True, True]
    for i, was_reused in zip(steps, reused, strict=True):
        step, note = nb.cells[i], nb.cells[i - 1]
        call = step.metadata["jupyter_analyst"]["call_id"]
        assert note.cell_type == "markdown" and note.metadata["jupyter_analyst"] == {"role": "provenance", "for_call": call}
        line = note.source
        assert "\n" not in line and call in line
        assert ("**reused** (not run again; it ran in turn 1, " in line) == was_reused
        assert ("**executed** in " in line) != was_reused
        for artifact_id in step.metadata["jupyter_analyst"]["artifact_ids"]:
            fingerprint = exported["inventory"][artifact_id]
            assert f"`{fingerprint[7:19]}`" in line  # the short fingerprint verify prints
    # Execution counts: every code cell numbered, in order.
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1))
    summary = nb.cells[0].source
    assert nb.cells[0].metadata["jupyter_analyst"] == {"role": "summary"}
    assert f"| Thread | `{exported['thread']}` |" in summary and "| Model | `jupyter-analyst-scripted` |" in summary
    assert f"| Source | `{exported['db']}` |" in summary and f"| Data version | `{meta['data_version']}` |" in summary
    for entry in meta["manifest"]:
        assert f"| `{entry['name']}` | {entry['type']} | `{entry['fingerprint'][7:19]}` | `{entry['call_id']}` (turn 1) |" in summary
    assert "jupyter analyst verify notebook.ipynb" in summary


def test_nbconvert_html_shows_the_summary_and_the_provenance_lines(exported):
    from nbconvert import HTMLExporter

    html, _ = HTMLExporter().from_filename(str(exported["thread_notebook"]))
    assert "Audit summary" in html and exported["thread"] in html and "How to verify" in html
    assert html.count("Provenance: ") == 4
    assert html.count("<strong>reused</strong>") == 2 and html.count("<strong>executed</strong>") == 2
    for fingerprint in exported["inventory"].values():
        assert fingerprint[7:19] in html


def test_a_password_in_the_source_is_masked_in_the_summary():
    from jupyter_analyst.notebooks.export import _summary

    meta = {"thread_id": "thr_x", "models": ["m"], "source": "postgresql://ann:s3cret@db/sales", "data_version": None,
            "finished_at": None, "created_at": "now", "version": "0"}
    text = _summary("t", meta, [], [], {}, None)
    assert "s3cret" not in text and "postgresql://ann:***@db/sales" in text and "| Data version | not recorded |" in text


@pytest.mark.parametrize("source", [
    "postgresql://ann:s3cret@db/sales",
    "sc://cluster:15002/;token=s3cret;use_ssl=true",
    "trino://ann@host:443/hive?password=s3cret",
])
def test_no_export_holds_a_sources_secret(tmp_path, source):
    """An exported notebook is shared, and runs in a sandboxed kernel: the secret of its
    source is in none of its cells nor its metadata, and its parameters cell says how to give
    the whole URL (verify takes the source from the user, never from the notebook)."""
    from jupyter_analyst.artifacts import ArtifactStore
    from jupyter_analyst.notebooks.export import export_thread
    from jupyter_analyst.store import ThreadStore

    store = ThreadStore(tmp_path / "a.sqlite3")
    artifacts = ArtifactStore(tmp_path / "a.sqlite3", tmp_path)
    try:
        thread = store.create_thread(source=source)
        for parameters in (None, {"source": source, "region": "EMEA"}):
            nb = export_thread(store, artifacts, thread.thread_id, parameters=parameters)
            text = json.dumps(nb)
            assert "s3cret" not in text and "***" in text
            params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
            assert "-p source" in params.source and "secret is not written here" in params.source
    finally:
        artifacts.close()
        store.close()


def test_the_notebook_opens_on_the_sandboxed_kernel_as_that_kernel_describes_itself(exported):
    """JupyterLab writes the kernel's name and its ``kernel_info`` language into a notebook
    when the kernel starts: the export writes what the sandboxed kernel (ipykernel on this
    interpreter) says, so opening the notebook changes nothing."""
    from jupyter_client.manager import start_new_kernel

    from jupyter_analyst.kernel.sandbox.kernelspec import SANDBOX_KERNEL, kernelspec

    meta = json.loads(exported["path"].read_text())["metadata"]
    assert meta["kernelspec"] == {"name": SANDBOX_KERNEL, "display_name": kernelspec()["display_name"],
                                  "language": "python"}
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        reply = client.kernel_info(reply=True, timeout=60)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert meta["language_info"] == reply["content"]["language_info"]


def test_stock_papermill_reexecutes_with_another_source(exported, tmp_path):
    out = tmp_path / "out.ipynb"
    # The notebook names the sandboxed kernel, which stock papermill finds only once installed
    # (``jupyter analyst install-kernelspec``): here it is told to use the plain one.
    run = subprocess.run([str(BIN / "papermill"), str(exported["path"]), str(out), "-k", "python3",
                          "-p", "source", str(exported["changed"]),
                          "--cwd", str(tmp_path), "--no-progress-bar"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    nb = nbformat.read(out, as_version=4)
    injected = next(c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert str(exported["changed"]) in injected.source
    published = [o["data"][ARTIFACT_MIME] for c in nb.cells if c.cell_type == "code"
                 for o in c.get("outputs", []) if ARTIFACT_MIME in o.get("data", {})]
    manifest = {e["name"]: e["fingerprint"] for e in nb.metadata["jupyter_analyst"]["manifest"]}
    assert published and published[0]["name"] == "revenue_by_region"
    assert published[0]["fingerprint"] != manifest["revenue_by_region"]  # other data, other bytes
    assert (tmp_path / "outputs" / "revenue_by_region_month.csv").is_file()


def test_verify_passes_on_unchanged_data(exported):
    from jupyter_analyst.notebooks.verify import verify_notebook

    report = verify_notebook(exported["path"], source=str(exported["db"]))
    assert report.ok and report.verdict == "verified", report.model_dump()
    assert report.source == str(exported["db"])  # the source the run used: the one the user named
    assert report.counts == {"matched": 3, "changed": 0, "missing": 0}


def test_verify_fails_naming_the_step_when_one_row_changes(exported):
    run = cli("verify", str(exported["path"]), "--db", str(exported["changed"]), "--json")
    assert run.returncode == 1, run.stderr[-2000:]
    report = json.loads(run.stdout)
    assert report["ok"] is False and report["counts"]["changed"] == 3
    nb = nbformat.read(exported["path"], as_version=4)
    dataset = next(e for e in nb.metadata["jupyter_analyst"]["manifest"] if e["type"] == "dataset")
    check = next(c for c in report["checks"] if c["artifact_id"] == dataset["artifact_id"])
    assert check["status"] == "changed" and check["call_id"] == dataset["call_id"]
    assert check["actual"] != check["expected"]
    # The cell is the step's index in the notebook as exported, not in papermill's copy.
    assert nb.cells[check["cell"]].metadata["jupyter_analyst"]["call_id"] == dataset["call_id"]
    table = cli("verify", str(exported["path"]), "--db", str(exported["changed"]))
    changed_row = next(line for line in table.stdout.splitlines() if line.startswith("changed  revenue_by_region "))
    assert table.returncode == 1 and dataset["call_id"] in changed_row and "NOT verified" in table.stdout


def test_the_notebook_run_reports_verifies_as_it_is_and_names_the_step_after_a_row_changes(tmp_path, sales_db):
    from jupyter_analyst.cli.demo import DEMO_SCRIPT, FIRST_PROMPT
    from jupyter_analyst.testing import ScriptedModelServer

    db = tmp_path / "sales.duckdb"
    shutil.copy(sales_db, db)  # a real DuckDB file of the test's own, changed below
    with ScriptedModelServer(DEMO_SCRIPT) as server:
        run = cli("run", "--db", str(db), "--prompt", FIRST_PROMPT, "--json", "--no-summarizer",
                  "--workspace", str(tmp_path / "ws"), env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"})
    assert run.returncode == 0, run.stderr[-2000:]
    summary = json.loads(run.stdout.splitlines()[0])
    notebook = summary["notebook"]
    # The notebook alone does not say what to run it on: its own source is never trusted.
    unnamed = cli("verify", notebook, "--json")
    assert unnamed.returncode == 2 and "no data source to verify against" in unnamed.stderr
    assert "--db SOURCE" in unnamed.stderr
    # The thread, named in the user's own workspace, gives its source and its notebook.
    passed = cli("verify", "--thread", summary["thread_id"], "--workspace", str(tmp_path / "ws"), "--json")
    assert passed.returncode == 0, passed.stdout + passed.stderr[-2000:]
    assert json.loads(passed.stdout)["counts"] == {"matched": 3, "changed": 0, "missing": 0}

    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE orders SET revenue = revenue + 1 WHERE order_id = 1")
    failed = cli("verify", notebook, "--db", str(db), "--json")
    assert failed.returncode == 1, failed.stderr[-2000:]
    report = json.loads(failed.stdout)
    nb = nbformat.read(notebook, as_version=4)
    dataset = next(c for c in report["checks"] if c["type"] == "dataset")
    assert dataset["status"] == "changed" and dataset["name"] == "revenue_by_region"
    step = nb.cells[dataset["cell"]]
    assert step.metadata["jupyter_analyst"]["call_id"] == dataset["call_id"] and step.source.splitlines()[1].startswith("revenue_by_region =")


def test_verify_refuses_what_it_cannot_check(exported, tmp_path):
    from jupyter_analyst.notebooks.verify import verify_notebook

    with pytest.raises(ConfigError, match="no notebook"):
        verify_notebook(tmp_path / "nope.ipynb")
    plain = tmp_path / "plain.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")]), plain)
    run = cli("verify", str(plain), "--db", str(exported["db"]))
    assert run.returncode == 2 and "no artifact manifest" in run.stderr and "hint:" in run.stderr
    # A source that does not exist fails before any kernel starts.
    run = cli("verify", str(exported["path"]), "--db", str(tmp_path / "gone.duckdb"))
    assert run.returncode == 2 and "data source not found" in run.stderr
    # Without one named, there is nothing to run on, whatever the notebook's parameters say.
    with pytest.raises(ConfigError, match="no data source to verify against") as err:
        verify_notebook(exported["path"])
    assert "--db SOURCE" in err.value.hint


def test_a_failing_step_leaves_its_artifacts_missing(exported, tmp_path):
    from jupyter_analyst.notebooks.verify import verify_notebook

    # A source without the orders table: the SQL step fails, and everything after it.
    empty = tmp_path / "empty.duckdb"
    with duckdb.connect(str(empty)) as con:
        con.execute("CREATE TABLE regions AS SELECT 1 AS region_id")
    report = verify_notebook(exported["path"], source=str(empty))
    assert not report.ok and "Unknown table 'orders'" in report.error
    assert report.counts["missing"] == 3
    # The error names the failing cell by its index in the exported notebook: the SQL step.
    nb = nbformat.read(exported["path"], as_version=4)
    failed = int(report.error.split()[1])
    assert nb.cells[failed].metadata["jupyter_analyst"]["tool"] == "run_sql"


def test_the_analyst_engine_runs_any_notebook_in_the_sandbox(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("data = 'x'", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(
            "import os, socket\n"
            "print(socket.gethostname(), os.getuid())\n"
            "open('inside.txt', 'w').write(data)\n"
            "try:\n    open('/etc/escaped', 'w')\nexcept OSError as e:\n    print('refused', type(e).__name__)"
        ),
    ])
    # It names the plain kernel, as notebooks do; the engine runs it in the sandbox anyway.
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = tmp_path / "in.ipynb"
    nbformat.write(nb, src)
    work = tmp_path / "work"
    work.mkdir()
    out = tmp_path / "out.ipynb"
    run = subprocess.run([str(BIN / "papermill"), str(src), str(out), "--engine", "analyst", "-p", "data", "hello",
                          "--cwd", str(work), "--no-progress-bar"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    # The engine disconnects from the kernel it stopped: nothing is left to warn at exit.
    assert "Could not destroy zmq context" not in run.stderr
    text = "".join(o.get("text", "") for o in nbformat.read(out, as_version=4).cells[-1].outputs)
    assert text.startswith("analyst-sandbox ") and "refused" in text
    assert (work / "inside.txt").read_text() == "hello"


MARKS_SCRIPT = {"turns": [
    {"match": "^broken", "steps": [{"error": {"status": 400, "message": "the model refused"}}]},
    {"match": "^count", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": "SELECT COUNT(*) AS n FROM orders", "name": "n_orders"}}]},
        {"content": "[scripted model] counted"}]},
    {"match": "^slow", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": "SELECT region FROM regions", "name": "regions_df"}}]},
        {"content": "[scripted model] never reached: the turn is stopped before this reply"}]},
]}


def test_failed_and_interrupted_turns_are_in_the_notebook_marked(tmp_path, sales_db):
    from jupyter_analyst.turns import AnalystConfig, ModelSettings, TurnRequest, run_turn
    from jupyter_analyst.testing import ScriptedModelServer

    config = AnalystConfig(workspace=tmp_path / "ws", summarizer=False)

    async def thread(server: ScriptedModelServer) -> str:
        model = ModelSettings(model="jupyter-analyst-scripted", base_url=server.base_url, api_key="x")
        first = await run_turn(TurnRequest(prompt="count", source=str(sales_db)), config=config, model=model)
        failed = await run_turn(TurnRequest(prompt="broken", thread_id=first.thread_id), config=config, model=model)
        assert failed.status == "error"
        # The third turn is held after its SQL step, when it asks the model what to do next; then stopped.
        held, release = server.hold_requests(after=len(server.requests) + 1)
        task = asyncio.create_task(run_turn(TurnRequest(prompt="slow", thread_id=first.thread_id),
                                            config=config, model=model))
        try:
            assert await asyncio.to_thread(held.wait, 60), "the turn did not reach its second model call"
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            release.set()
        return first.notebook

    with ScriptedModelServer(MARKS_SCRIPT) as server:
        path = asyncio.run(thread(server))
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    cells = {(c.metadata.get("jupyter_analyst", {}).get("role"), c.metadata["jupyter_analyst"].get("turn_id")): c
             for c in nb.cells if c.metadata.get("jupyter_analyst", {}).get("role") in ("prompt", "answer")}
    by_status = {c.metadata["jupyter_analyst"]["status"]: c for (role, _), c in cells.items() if role == "prompt"}
    assert set(by_status) == {"completed", "error", "interrupted"}
    assert by_status["error"].source.startswith("## Turn 2 (error)\n\n> ❌ **Failed**: this turn ended with an error (")
    assert "the model refused" in by_status["error"].source and "**Prompt:** broken" in by_status["error"].source
    assert by_status["interrupted"].source.startswith("## Turn 3 (interrupted)\n\n> ⚠️ **Interrupted**")
    assert "> " not in by_status["completed"].source
    answers = [c for (role, _), c in cells.items() if role == "answer"]
    assert [a.metadata["jupyter_analyst"]["status"] for a in answers] == ["completed", "error", "interrupted"]
    assert "**Interrupted**" in answers[2].source and "**Failed**" in answers[1].source
    # The step the interrupted turn finished is there, with its provenance, and re-runs.
    steps = [c for c in nb.cells if c.metadata.get("jupyter_analyst", {}).get("tool") == "run_sql"]
    assert [s.source.splitlines()[1].split(" =")[0] for s in steps] == ["n_orders", "regions_df"]
    assert "| Turns | 3 (turn 2 error, turn 3 interrupted) |" in nb.cells[0].source


def test_export_to_html_and_markdown_carries_the_summary_and_provenance(exported, tmp_path):
    ws = str(exported["root"] / "ws")
    run = cli("export", "--thread", exported["thread"], "--workspace", ws, "--to", "html", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    # Named from the thread's title when -o is not given.
    page = tmp_path / f"revenue-by-region-per-month-with-a-chart-{exported['thread'][-8:]}.html"
    assert str(page.name) in run.stdout and page.is_file()
    html = page.read_text()
    assert "Audit summary" in html and html.count("Provenance: ") == 4 and "<strong>reused</strong>" in html
    assert "data:image/png;base64," in html  # the charts are in the page itself
    for fingerprint in exported["inventory"].values():
        assert fingerprint[7:19] in html

    out = tmp_path / "pages" / "review.md"
    run = cli("export", "--thread", exported["thread"], "--workspace", ws, "--to", "markdown", "-o", str(out))
    assert run.returncode == 0, run.stderr
    text = out.read_text()
    assert "| Audit summary | |" in text and text.count("Provenance: ") == 4
    images = sorted((tmp_path / "pages" / "review_files").iterdir())
    assert len(images) == 2 and all(f"](review_files/{i.name})" in text for i in images)

    run = cli("export", "--thread", exported["thread"], "--workspace", ws, cwd=tmp_path)  # the default: ipynb
    assert run.returncode == 0 and nbformat.read(page.with_suffix(".ipynb"), as_version=4).metadata["jupyter_analyst"]


def test_export_errors_are_one_clear_line(exported, tmp_path):
    ws = str(exported["root"] / "ws")
    run = cli("export", "--thread", "thr_missing", "--workspace", ws, "--to", "html", cwd=tmp_path)
    assert run.returncode == 2 and "unknown thread 'thr_missing'" in run.stderr and "Traceback" not in run.stderr
    run = cli("export", "--thread", exported["thread"], "--workspace", ws, "--to", "pdf")
    assert run.returncode == 2 and "invalid choice: 'pdf'" in run.stderr
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    run = cli("export", "--thread", exported["thread"], "--workspace", ws, "--to", "html", "-o", str(blocked / "x.html"))
    assert run.returncode != 0 and run.stderr.startswith("error: ") and "Traceback" not in run.stderr


def test_a_notebook_with_no_artifact_has_nothing_to_verify_and_says_so_at_once(tmp_path, sales_db):
    """Not a pass: a verify with nothing to check says so, with its own exit status, and
    starts no kernel."""
    from jupyter_analyst.notebooks.export import export_thread, write_export
    from jupyter_analyst.notebooks.verify import verify_notebook
    from jupyter_analyst.testing import ScriptedModelServer, TurnRunner, text_step
    from jupyter_analyst.workspace import Workspace

    with ScriptedModelServer({"turns": [{"match": ".", "steps": [text_step("[scripted model] nothing to fetch")]}]}) as server:
        turn = TurnRunner(tmp_path / "ws", server, sales_db).run("hello")
    assert turn.status == "completed"
    ws = Workspace(tmp_path / "ws")
    try:
        path = write_export(export_thread(ws.store, ws.artifacts, turn.thread_id), tmp_path / "empty.ipynb")
    finally:
        ws.close()
    workdir = tmp_path / "run"
    report = verify_notebook(path, source=str(sales_db), workdir=workdir)
    assert report.verdict == "nothing_to_verify" and not report.ok and report.checks == []
    assert report.source is None and not workdir.exists()  # nothing ran: no kernel's folder was made
    run = cli("verify", str(path), "--json")  # no source is needed to say there is nothing to check
    assert run.returncode == 3, run.stderr[-2000:]
    assert json.loads(run.stdout) | {"notebook": None} == {
        "notebook": None, "source": None, "verdict": "nothing_to_verify", "checks": [], "error": None,
        "data_version": None, "data_note": None, "counts": {"matched": 0, "changed": 0, "missing": 0}, "ok": False}
    table = cli("verify", str(path), "--db", str(sales_db))
    assert table.returncode == 3 and "nothing to verify" in table.stdout and "verified:" not in table.stdout
