"""Start-up of the command line: a turn imports and starts only what its steps need.

Each check runs in a fresh interpreter, where ``sys.modules`` tells what was imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from jupyter_analyst.testing import sql_step, text_step

#: Imported only by the work that needs them: a kernel, a query run, a notebook read by nbformat.
HEAVY = ("pandas", "pyarrow", "jupyter_client", "nbformat", "jsonschema", "sqlglot", "matplotlib")

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
        print(json.dumps(sorted(m for m in {HEAVY + ("openai", "duckdb")!r} if m in sys.modules)))
    """)
    assert loaded == []


def test_a_turn_whose_steps_are_all_reused_imports_no_kernel_dataframe_or_sql_parser(analyst, tmp_path):
    runner = analyst(SCRIPT)
    first = runner.run("fetch revenue by region")
    assert first.tool_calls["executed"] == 1
    workspace, url = runner.workspace, runner.server.base_url
    # A chat turn runs no SQL, so it starts no SQL checker; the reused turn then imports
    # nothing that only a kernel, a query run or a notebook conversion needs.
    report = _fresh(f"""
        import contextlib, io, json, sys
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
            "workers_after_chat": workers_after_chat,
            "heavy": sorted(m for m in {HEAVY!r} if m in sys.modules),
        }}))
    """)
    assert report["statuses"] == [0, 0]
    assert report["chat"]["executed"] == report["chat"]["reused"] == 0
    assert report["workers_after_chat"] in (False, 0)
    assert report["reused"] == {"executed": 0, "reused": 1, "blocked": 0}
    assert report["heavy"] == []


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
