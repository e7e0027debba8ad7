"""The command line: bad input gives one clear line, a hint and a non-zero exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "jupyter_analyst.cli"]


def run_cli(*args: str, env: dict[str, str] | None = None, cwd=None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run(
        [*CLI, *args], env={**base, **(env or {})}, capture_output=True, text=True, timeout=120, cwd=cwd
    )


MODEL = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}


def test_no_model_configured(tmp_path, sales_db):
    out = run_cli("run", "--db", str(sales_db), "--prompt", "hi", "--workspace", str(tmp_path))
    assert out.returncode == 2
    assert "error: no model is configured" in out.stderr
    assert "jupyter analyst demo" in out.stderr and "OPENAI_API_KEY" in out.stderr


def test_missing_source(tmp_path):
    out = run_cli("run", "--db", str(tmp_path / "nope.duckdb"), "--prompt", "hi",
                  "--workspace", str(tmp_path), env=MODEL)
    assert out.returncode == 2
    assert out.stderr.startswith("error: ") and "nope.duckdb" in out.stderr
    assert "hint: " in out.stderr


def test_unreadable_source(tmp_path):
    bad = tmp_path / "garbage.duckdb"
    bad.write_bytes(b"this is not a database" * 100)
    out = run_cli("run", "--db", str(bad), "--prompt", "hi", "--workspace", str(tmp_path), env=MODEL)
    assert out.returncode == 2 and out.stderr.startswith("error: ")
    assert "Traceback" not in out.stderr


def test_unknown_thread(tmp_path, sales_db):
    out = run_cli("run", "--thread", "thr_missing", "--prompt", "continue",
                  "--workspace", str(tmp_path), env=MODEL)
    assert out.returncode == 2
    assert "unknown thread 'thr_missing'" in out.stderr and "hint:" in out.stderr


def test_no_source_at_all(tmp_path):
    out = run_cli("run", "--prompt", "hi", "--workspace", str(tmp_path), env=MODEL)
    assert out.returncode == 2 and "no data source" in out.stderr and "--db" in out.stderr


def test_json_error_object(tmp_path):
    out = run_cli("run", "--db", str(tmp_path / "x.duckdb"), "--prompt", "hi", "--json",
                  "--workspace", str(tmp_path), env=MODEL)
    assert out.returncode == 2
    body = json.loads(out.stdout)
    assert body["status"] == "error" and body["error"]["reason"]


def test_model_endpoint_down_is_an_error_turn(tmp_path, sales_db):
    out = run_cli("run", "--db", str(sales_db), "--prompt", "hi", "--json",
                  "--workspace", str(tmp_path), env=MODEL)
    assert out.returncode == 1
    body = json.loads(out.stdout)
    assert body["status"] == "error" and body["error"]["reason"] == "model_error"


def test_help_lists_commands():
    out = run_cli("--help")
    assert out.returncode == 0
    for command in ("run", "artifacts", "threads", "demo"):
        assert command in out.stdout


@pytest.mark.parametrize("args", [["artifacts", "list", "--thread", "thr_missing"]])
def test_artifacts_of_unknown_thread(tmp_path, args):
    out = run_cli(*args, "--workspace", str(tmp_path))
    assert out.returncode == 2 and "unknown thread" in out.stderr


def test_state_command_shows_what_the_agent_established(tmp_path, sales_db):
    from jupyter_analyst.testing import ScriptedModelServer

    script = {"turns": [{"steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": "SELECT region FROM regions", "name": "regions_df"}}]},
        {"content": "[scripted model] done"},
    ]}]}
    with ScriptedModelServer(script) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        run = run_cli("run", "--db", str(sales_db), "--prompt", "regions", "--workspace", str(tmp_path), "--json", env=env)
        assert run.returncode == 0, run.stderr
        thread = json.loads(run.stdout.splitlines()[0])["thread_id"]
        # The summarizer ran before the process exited.
        assert len(server.summarizer_requests) == 1
    shown = run_cli("state", "--thread", thread, "--workspace", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    assert "- active dataset: `regions_df`" in shown.stdout and "from regions" in shown.stdout
    state = json.loads(run_cli("state", "--thread", thread, "--workspace", str(tmp_path), "--json").stdout)
    assert state["entities"]["dataset:regions_df"]["derived_from"] == ["table:regions"]
    missing = run_cli("state", "--thread", "thr_nope", "--workspace", str(tmp_path))
    assert missing.returncode == 2 and "thr_nope" in missing.stderr


def test_run_attaches_a_notebook_whose_outline_the_model_sees(tmp_path, sales_db):
    from jupyter_analyst.testing import ScriptedModelServer

    nb = {"cells": [{"id": "h1", "cell_type": "markdown", "source": "# Churn study"},
                    {"id": "k2", "cell_type": "code", "source": "churn = load()", "outputs": []}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "study.ipynb").write_text(json.dumps(nb))
    script = {"turns": [{"steps": [{"tool_calls": [{"name": "read_cells", "arguments": {"cell_ids": ["k2"]}}]},
                                   {"content": "[scripted model] read"}]}]}
    with ScriptedModelServer(script) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        run = run_cli("run", "--db", str(sales_db), "--prompt", "what is churn?", "--workspace", str(tmp_path / "ws"),
                      "--attach", str(tmp_path / "study.ipynb"), "--no-summarizer", "--json", env=env)
        assert run.returncode == 0, run.stderr
        system = server.requests[0]["messages"][0]["content"]
        assert "[0] markdown h1: # Churn study" in system and "[1] code k2: churn = load() (defines churn)" in system
        # The second call carries read_cells' answer: exactly the cell asked for.
        tool = next(m for m in server.requests[1]["messages"] if m["role"] == "tool")
        assert json.loads(tool["content"])["cells"] == [
            {"id": "k2", "index": 1, "type": "code", "source": "churn = load()", "outputs": ""}]


def test_the_demo_sends_a_newcomer_first_to_what_jupyterlab_can_open(tmp_path):
    """The first place the demo names is its audit notebook, outside any hidden folder (a
    file browser shows it), with the command that opens JupyterLab on it; the commands it
    prints run as pasted into a shell whose PATH does not have the venv (not activated)."""
    out = run_cli("demo", "--out", "demo", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    after = dict(line.strip().split(":", 1) for line in out.stdout.split("What to open next:\n", 1)[1].splitlines())
    audit = after["audit"].split()[0]
    assert audit == "demo/analysis.ipynb" and (tmp_path / audit).is_file()
    assert "demo --lab --out demo " in after["JupyterLab"]
    bare = {**{k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}, "PATH": "/usr/bin:/bin"}
    for name in ("inventory", "memory"):
        pasted = subprocess.run(after[name].strip(), shell=True, cwd=tmp_path, env=bare, capture_output=True,
                                text=True, timeout=120)
        assert pasted.returncode == 0, (name, after[name], pasted.stderr)
        if name == "inventory":
            header, *rows = pasted.stdout.splitlines()
            assert header.split()[:2] == ["ARTIFACT", "TYPE"] and rows and all(r.startswith("art_") for r in rows)
            # Each column starts under its heading.
            for r in rows:
                kind = r.split()[1]
                assert r.index(kind, len(r.split()[0])) == header.index("TYPE"), (header, r)
    check = after["audit"].split("(check it: ", 1)[1].rstrip(")")
    verified = subprocess.run(check, shell=True, cwd=tmp_path, env=bare, capture_output=True, text=True, timeout=300)
    assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr[-2000:]


LEDGER_SCRIPT = {"turns": [{"steps": [
    {"tool_calls": [{"name": "run_sql", "arguments": {"sql": "SELECT region FROM regions", "name": "regions_df"}}],
     "usage": {"prompt_tokens": 1000, "completion_tokens": 40}},
    {"content": "[scripted model] done", "usage": {"prompt_tokens": 1100, "completion_tokens": 20}},
]}]}


def test_run_prints_what_the_turn_cost_at_the_price_given(tmp_path, sales_db):
    from jupyter_analyst.testing import ScriptedModelServer

    with ScriptedModelServer(LEDGER_SCRIPT) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        args = ("run", "--db", str(sales_db), "--prompt", "regions", "--workspace", str(tmp_path), "--no-summarizer")
        priced = run_cli(*args, "--price", "0.15/0.60", "--json", env=env)
        assert priced.returncode == 0, priced.stderr
        ledger = json.loads(priced.stdout.splitlines()[0])["ledger"]
        assert ledger["usage"] == {"calls": 2, "prompt_tokens": 2100, "completion_tokens": 60,
                                   "counted_by": "server", "cost_usd": pytest.approx((2100 * 0.15 + 60 * 0.60) / 1e6)}
        assert ledger["price"] == {"prompt": 0.15, "completion": 0.6} and ledger["steps"] == 1
        # No price: tokens only, never a cost.
        unpriced = run_cli(*args, env=env)
    assert unpriced.returncode == 0, unpriced.stderr
    (line,) = [ln for ln in unpriced.stdout.splitlines() if ln.startswith("cost: ")]
    assert line.startswith("cost: 2 model calls, 2,100 prompt + 60 completion tokens (counted by the server), no price;")


def test_run_counts_the_summarizers_call_in_what_it_prints(tmp_path, sales_db):
    from jupyter_analyst.testing import ScriptedModelServer

    script = {**LEDGER_SCRIPT, "summarizer": [{"steps": [
        {"content": "{}", "usage": {"prompt_tokens": 700, "completion_tokens": 5}}]}]}
    with ScriptedModelServer(script) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        args = ("run", "--db", str(sales_db), "--prompt", "regions", "--workspace", str(tmp_path))
        out = run_cli(*args, "--json", env=env)
        assert out.returncode == 0, out.stderr
        # The one object is printed once the summarizer has answered, with its call counted.
        summary = json.loads(out.stdout.splitlines()[0])
        assert summary["ledger"]["summarizer"]["calls"] == 1 and summary["summarizer_pending"] is False
        assert summary["ledger"]["summarizer"]["prompt_tokens"] == 700
        assert summary["ledger"]["usage"]["calls"] == 2
        # Printed for people as soon as the turn ends: the summarizer's call is said to be to come, then counted.
        text = run_cli(*args, env=env)
    assert text.returncode == 0, text.stderr
    (line,) = [ln for ln in text.stdout.splitlines() if ln.startswith("cost: ")]
    assert line.endswith("; the summarizer call after the turn is pending")
    assert "; summarizer: 1 model call, 700 prompt + 5 completion tokens" in text.stderr


@pytest.mark.parametrize("price", ["0.15", "cheap", "-1/2", "1/2/3"])
def test_a_wrong_price_is_one_clear_line(tmp_path, price):
    out = run_cli("run", "--prompt", "hi", "--workspace", str(tmp_path), f"--price={price}", env=MODEL)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"argument --price: invalid price {price!r}: give USD per million prompt/completion tokens" in out.stderr


@pytest.mark.parametrize("transport", [[], ["--http"]])
def test_mcp_without_the_mcp_extra_says_which_extra_in_one_line(tmp_path, sales_db, transport):
    # The SDK cannot be imported, as where jupyter-analyst was installed without [mcp].
    code = ("import sys; sys.modules['mcp'] = None; from jupyter_analyst.cli.console import main; "
            "sys.exit(main(sys.argv[1:]))")
    out = subprocess.run([sys.executable, "-c", code, "mcp", "--db", str(sales_db), "--workspace",
                          str(tmp_path / "ws"), *transport], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert out.stderr.splitlines() == [
        "error: the MCP server needs the mcp extra (mcp is not installed): pip install 'jupyter-analyst[mcp]'"]
    assert not (tmp_path / "ws").exists()  # refused before anything opened


def test_mcp_refuses_one_source_name_given_twice_in_one_line(tmp_path, sales_db):
    out = run_cli("mcp", "--workspace", str(tmp_path / "ws"), "--source", f"sales={sales_db}",
                  "--source", f"sales={tmp_path / 'other.duckdb'}")
    assert out.returncode == 2, out.stderr
    assert out.stderr.splitlines() == ["error: the source name 'sales' is given twice"]
    assert not (tmp_path / "ws").exists()  # refused before anything opened


def test_a_run_out_of_steps_says_so_and_exits_as_a_turn_that_did_not_complete(tmp_path, sales_db):
    """``--max-steps 1`` on a model that wants more: the turn's line says it ran out, the exit
    status is that of a turn that did not complete (docs/memory.md), ``--json`` says ``step_limited``."""
    from jupyter_analyst.testing import ScriptedModelServer

    look = {"tool_calls": [{"name": "describe_table", "arguments": {"table": "orders"}}]}
    partial = "[scripted model] orders is described; regions is unfinished."
    script = {"turns": [{"match": "compare", "steps": [look, {"content": partial}]}]}
    with ScriptedModelServer(script) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        common = ["run", "--db", str(sales_db), "--prompt", "compare the regions", "--no-summarizer",
                  "--max-steps", "1"]
        said = run_cli(*common, "--workspace", str(tmp_path / "a"), env=env)
        as_json = run_cli(*common, "--workspace", str(tmp_path / "b"), "--json", env=env)
        assert server.requests[0].get("tools") and not server.requests[1].get("tools")  # the last call: no tools
    assert said.returncode == 1 and "Traceback" not in said.stderr, said.stderr[-2000:]
    ended = ("turn step_limited: the step budget (1 model call with tools) ran out; "
             "the answer says what is unfinished")
    # Said under the answer (stdout) and at the end of the progress (stderr).
    assert ended in said.stdout.splitlines() and said.stderr.splitlines()[-1] == ended, said.stderr[-2000:]
    assert partial in said.stdout
    assert "guard step_limit_reached: stopped after 1 model call with tools; asking for an answer" in said.stderr
    assert as_json.returncode == 1, as_json.stderr[-2000:]
    body = json.loads(as_json.stdout.strip().splitlines()[-1])
    assert body["status"] == "step_limited" and body["message"].startswith("the step budget (1 model call")


RECEIPTS_SCRIPT = {"turns": [{"steps": [
    {"tool_calls": [{"name": "run_sql", "arguments": {"sql": "SELECT COUNT(*) AS orders FROM orders", "name": "n"}}]},
    {"content": "There are 2,400 orders, 12% of them late."},
]}]}


def test_run_json_carries_the_answers_citations_and_unsupported_numbers(tmp_path, sales_db):
    from jupyter_analyst.testing import ScriptedModelServer

    with ScriptedModelServer(RECEIPTS_SCRIPT) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        args = ("run", "--db", str(sales_db), "--prompt", "orders?", "--workspace", str(tmp_path), "--no-summarizer")
        out = run_cli(*args, "--json", env=env)
        assert out.returncode == 0, out.stderr
        summary = json.loads(out.stdout.splitlines()[0])
        (cited,) = summary["citations"]
        assert (cited["text"], cited["value"], cited["row"], cited["column"]) == ("2,400", 2400, 0, "orders")
        assert cited["call_id"].startswith("call") and cited["artifact_id"].startswith("art_")
        assert [(u["text"], u["value"]) for u in summary["unsupported"]] == [("12%", 12.0)]
        # For people: one line of the receipts, the unsupported numbers named.
        text = run_cli(*args, env=env)
    assert text.returncode == 0, text.stderr
    (line,) = [ln for ln in text.stdout.splitlines() if ln.startswith("receipts: ")]
    assert line == "receipts: 1 cited; unsupported: 12%"


def test_the_summary_and_the_cost_line_count_tool_calls_and_steps_alike(tmp_path, sales_db):
    """A lookup (find, list_artifacts) is an executed tool call but no SQL/Python step: the
    counts line says both, and agrees with the cost line's steps."""
    from jupyter_analyst.testing import ScriptedModelServer

    script = {"turns": [{"steps": [
        {"tool_calls": [{"name": "find", "arguments": {"query": "region"}},
                        {"name": "list_artifacts", "arguments": {}}]},
        {"content": "[scripted model] done"},
    ]}]}
    with ScriptedModelServer(script) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        out = run_cli("run", "--db", str(sales_db), "--prompt", "regions", "--workspace", str(tmp_path),
                      "--no-summarizer", env=env)
    assert out.returncode == 0, out.stderr
    (counts,) = [ln for ln in out.stdout.splitlines() if ln.startswith("tool calls: ")]
    assert counts.startswith("tool calls: 2 executed (0 of them SQL/Python steps), 0 reused, 0 blocked;"), counts
    (cost,) = [ln for ln in out.stdout.splitlines() if ln.startswith("cost: ")]
    assert "; 0 SQL/Python steps executed in 0.00 s" in cost, cost
