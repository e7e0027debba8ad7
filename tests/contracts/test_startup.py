"""Start-up of the command line and of the Jupyter server: each imports and starts only what
it needs (a turn, only what its steps need; a server's start, none of the engine).

Each check runs in a fresh interpreter, where ``sys.modules`` tells what was imported.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from jupyter_analyst.server.lazy_engine import EngineLoader, import_engine
from jupyter_analyst.testing import sql_step, text_step

#: Imported only by the work that needs them: a kernel, a query run, a notebook read by nbformat.
HEAVY = ("pandas", "pyarrow", "jupyter_client", "nbformat", "jsonschema", "sqlglot", "matplotlib")
#: What reads a team's context folder when it changed: not a turn on an unchanged one.
CONTEXT_PARSERS = ("dbt_semantic_interfaces", "yaml")
CONTEXT_EXAMPLE = Path(__file__).parents[1] / "fixtures" / "context"
#: What the engine needs and a Jupyter server's start does not (every JupyterLab user would pay for it).
ENGINE = ("openai", "duckdb", "sqlglot", "pandas", "pyarrow")
#: The model's SDK, and its optional aiohttp transport (3.x vendors it), which a turn never uses.
SDK_WATCHED = ("openai", "aiohttp", "openai._vendor.httpx_aiohttp", "httpx_aiohttp")
#: The Jupyter AI persona: imported by Jupyter AI's persona manager, when that runs, and by nothing else.
PERSONA = ("jupyter_analyst.persona", "jupyter_ai_persona_manager", "jupyterlab_chat")

SQL = "SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY region_id"
SCRIPT = {"turns": [
    {"match": "^hello", "steps": [text_step("[scripted] hello")]},
    {"match": "^(fetch|continue)", "steps": [sql_step(SQL, "by_region"), text_step("[scripted] fetched")]},
]}


def _fresh(code: str) -> dict:
    """What ``code`` prints as JSON on its last line, run in a new interpreter."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_the_command_line_imports_no_engine():
    loaded = _fresh(f"""
        import json, sys
        import jupyter_analyst.cli
        print(json.dumps(sorted(m for m in {HEAVY + ("openai", "duckdb", "mcp")!r} if m in sys.modules)))
    """)
    assert loaded == []


def test_jupyters_mcp_server_loading_the_analysts_tools_imports_no_sdk_or_engine():
    # As jupyter-server-mcp does at a Jupyter server's start: the entry point, then each tool.
    loaded = _fresh(f"""
        import importlib, json, sys
        from importlib.metadata import entry_points

        (point,) = [p for p in entry_points(group="jupyter_server_mcp.tools") if p.name == "analyst"]
        specs = point.load()()
        for spec in specs:
            module, name = spec.split(":")
            getattr(importlib.import_module(module), name)
        print(json.dumps({{"tools": len(specs),
                          "loaded": sorted(m for m in {ENGINE + ("mcp",)!r} if m in sys.modules)}}))
    """)
    assert loaded == {"tools": 15, "loaded": []}


@pytest.fixture
def private_analyst(tmp_path):
    """A turn runner on a database of this test's own: a kept check is keyed by the file's
    version, which no other test's leftover process may move between the two turns."""
    from jupyter_analyst.cli.demo import build_sample_database
    from jupyter_analyst.testing import ScriptedModelServer, TurnRunner

    db = build_sample_database(tmp_path / "sales.duckdb")
    with ScriptedModelServer(SCRIPT) as server:
        yield TurnRunner(tmp_path / "ws", server, db)


def test_a_turn_whose_steps_are_all_reused_imports_no_kernel_dataframe_or_sql_parser(private_analyst, tmp_path):
    # With the team's context folder beside the workspace: an unchanged folder is read from
    # its digest, without the YAML parser or dbt-semantic-interfaces.
    shutil.copytree(CONTEXT_EXAMPLE, tmp_path / "context")
    runner = private_analyst
    first = runner.run("fetch revenue by region")
    assert first.tool_calls["executed"] == 1
    workspace, url = runner.workspace, runner.server.base_url
    # A chat turn runs no SQL, so it starts no SQL checker; the reused turn then imports
    # nothing that only a kernel, a query run or a notebook conversion needs.
    report = _fresh(f"""
        import contextlib, io, json, sys, threading

        importers = {{}}

        class Watch:  # which thread imports the model's SDK, and its transports
            def find_spec(self, name, path=None, target=None):
                if name in {SDK_WATCHED!r}:
                    importers.setdefault(name, threading.current_thread().name)

        sys.meta_path.insert(0, Watch())
        from jupyter_analyst.cli import main
        from jupyter_analyst.sql import preparer

        def turn(prompt):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                status = main(["run", "--workspace", {str(workspace)!r}, "--thread", {first.thread_id!r},
                               "--prompt", prompt, "--base-url", {url!r}, "--no-summarizer", "--json"])
            return status, json.loads(out.getvalue())

        status, chat = turn("hello")
        workers_after_chat = preparer._pool is not None and len(preparer._pool._all)
        status2, reused = turn("continue")
        print(json.dumps({{
            "statuses": [status, status2], "chat": chat["tool_calls"], "reused": reused["tool_calls"],
            "workers_after_chat": workers_after_chat, "checked_by_a_worker": preparer.prepared_count(),
            "heavy": sorted(m for m in {HEAVY + CONTEXT_PARSERS!r} if m in sys.modules),
            "sdk": sorted(m for m in {SDK_WATCHED!r} if m in sys.modules), "importers": importers,
        }}))
    """)
    assert report["statuses"] == [0, 0]
    assert report["chat"]["executed"] == report["chat"]["reused"] == 0
    assert report["workers_after_chat"] in (False, 0)
    assert report["reused"] == {"executed": 0, "reused": 1, "blocked": 0}
    # The reused query's check was kept in the workspace by the first turn's process.
    assert report["checked_by_a_worker"] == 0
    assert report["heavy"] == []
    # The SDK was imported ahead, on a thread of its own, without the transport the turn never uses.
    assert report["sdk"] == ["openai"] and report["importers"] == {"openai": "openai-import"}


def test_the_console_script_collects_garbage_again_once_the_turn_has_started(analyst):
    runner = analyst(SCRIPT)
    first = runner.run("hello")
    # As the console script (no arguments given to main): the collector is off while the
    # command imports, on again for the turn; the status is the command's.
    report = _fresh(f"""
        import contextlib, gc, io, json, sys
        from jupyter_analyst.agent import loop

        seen = []
        original = loop.AgentLoop.run

        async def run(self, *a, **k):
            seen.append((gc.isenabled(), gc.get_freeze_count() > 0))
            return await original(self, *a, **k)

        loop.AgentLoop.run = run
        from jupyter_analyst import cli

        sys.argv = ["jupyter-analyst", "run", "--workspace", {str(runner.workspace)!r}, "--thread",
                    {first.thread_id!r}, "--prompt", "hello", "--base-url", {runner.server.base_url!r},
                    "--no-summarizer", "--json"]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = cli.main()
        print(json.dumps({{"status": status, "seen": seen, "answer": json.loads(out.getvalue())["answer"]}}))
    """)
    assert report == {"status": 0, "seen": [[True, True]], "answer": "[scripted] hello"}


def test_a_jupyter_server_loading_the_extension_imports_no_engine():
    loaded = _fresh(f"""
        import json, sys
        import jupyter_server.serverapp
        from jupyter_analyst.server import _jupyter_server_extension_points

        # As jupyter_server loads an extension: its entry point's app, then the app's handlers.
        (point,) = _jupyter_server_extension_points()
        app = point["app"]()
        app.initialize_handlers()
        assert len(app.handlers) > 10, app.handlers
        print(json.dumps(sorted(m for m in {ENGINE + ("jupyter_analyst.knowledge",)!r} if m in sys.modules)))
    """)
    assert loaded == []


def test_a_jupyter_server_starting_the_extension_imports_no_engine(tmp_path, sales_db):
    # The whole load, as `jupyter lab` does it (the other extensions aside): the server reads
    # the extension's entry point, links the app and runs its initialize_settings (the thread
    # service, its kernel launcher and warm pool, the model's settings) and its handlers.
    shutil.copytree(CONTEXT_EXAMPLE, tmp_path / "context")  # read by turns, not by the server's start
    config = {
        "ServerApp": {"jpserver_extensions": {"jupyter_analyst.server": True}, "root_dir": str(tmp_path),
                      "open_browser": False, "port": 0},
        "AnalystApp": {"workspace": str(tmp_path / "ws"), "sources": {"sales": str(sales_db)},
                       "model": "scripted", "model_base_url": "http://127.0.0.1:9/v1", "api_key": "scripted"},
    }
    report = _fresh(f"""
        import json, sys
        from jupyter_server.serverapp import ServerApp
        from traitlets.config import Config

        app = ServerApp(config=Config({config!r}))
        app.initialize(argv=[], find_extensions=False, new_httpserver=False)
        (analyst,) = app.extension_manager.extension_apps["jupyter_analyst.server"]
        service = app.web_app.settings["jupyter_analyst"]
        print(json.dumps({{
            "service": type(service).__name__, "sources": sorted(service.sources),
            "routes": sum(route.startswith("/analyst/") for route, *_ in analyst.handlers),
            "engine": sorted(m for m in {ENGINE + ("jupyter_analyst.knowledge", "dbt_semantic_interfaces")!r}
                             if m in sys.modules),
            "persona": sorted(m for m in {PERSONA!r} if m in sys.modules),
        }}))
    """)
    assert report["service"] == "ThreadService" and report["sources"] == ["sales"]
    assert report["routes"] > 10
    assert report["engine"] == []
    assert report["persona"] == []


@pytest.mark.asyncio
async def test_the_engine_is_imported_once_off_the_event_loop_for_every_waiter():
    imports: list[str] = []

    def load():
        imports.append(threading.current_thread().name)
        return import_engine()

    loader = EngineLoader(load)
    assert not loader.loaded
    first, second = await asyncio.gather(loader.ready(), loader.ready())
    assert first is second is loader.now() and loader.loaded
    assert imports == ["jupyter-analyst-engine"]

