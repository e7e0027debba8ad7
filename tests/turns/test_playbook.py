"""Playbooks: a notebook of prompts asked in order (``jupyter-analyst execute``), its
parameters checked before any prompt runs, its output the thread's audit notebook.

Real parts throughout: a real DuckDB file, the command line as a user runs it, the scripted
model over the real SDK.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from jupyter_analyst.errors import ConfigError, SourceError


def cli(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jupyter_analyst.cli", *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})}, cwd=cwd)


PLAYBOOK_SCRIPT = {"turns": [
    {"match": "^Revenue in North$", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {
            "sql": "SELECT SUM(o.revenue) AS revenue FROM orders o JOIN regions r ON o.region_id = r.region_id "
                   "WHERE r.region = 'North'", "name": "north"}}]},
        {"content": "[scripted model] North revenue fetched"}]},
    {"match": "^How many orders in North", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {
            "sql": "SELECT COUNT(*) AS orders FROM orders o JOIN regions r ON o.region_id = r.region_id "
                   "WHERE r.region = 'North'", "name": "north_orders"}}]},
        {"content": "[scripted model] counted"}]},
]}


def _playbook(path: Path) -> Path:
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Regional review (not a prompt)"),
        nbformat.v4.new_markdown_cell("Revenue in {region}", metadata={"tags": ["prompt"]}),
        nbformat.v4.new_markdown_cell("How many orders in {region}?", metadata={"tags": ["prompt"]}),
    ])
    nbformat.write(nb, path)
    return path


def test_playbook_with_two_prompts_and_a_parameter(tmp_path, sales_db):
    from jupyter_analyst.testing import ScriptedModelServer

    book = _playbook(tmp_path / "review.ipynb")
    out = tmp_path / "out.ipynb"
    with ScriptedModelServer(PLAYBOOK_SCRIPT) as server:
        run = cli("execute", str(book), "-o", str(out), "-p", "region", "North", "--db", str(sales_db),
                  "--workspace", str(tmp_path / "ws"), env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"})
    assert run.returncode == 0, run.stderr[-2000:]
    assert "[1/2] Revenue in North" in run.stderr and "[2/2] How many orders in North?" in run.stderr
    nb = nbformat.read(out, as_version=4)
    nbformat.validate(nb)
    prompts = [c.source for c in nb.cells if c.metadata.get("jupyter_analyst", {}).get("role") == "prompt"]
    assert prompts == ["## Turn 1\n\n**Prompt:** Revenue in North", "## Turn 2\n\n**Prompt:** How many orders in North?"]
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert "region = 'North'" in params.source
    meta = nb.metadata["jupyter_analyst"]
    assert meta["parameters"]["region"] == "North" and meta["playbook"]["prompts"] == 2
    assert [e["name"] for e in meta["manifest"]] == ["north", "north_orders"]


def test_playbook_bad_input_fails_before_any_prompt(tmp_path, sales_db):
    from jupyter_analyst.turns import plan_playbook

    book = _playbook(tmp_path / "review.ipynb")
    with pytest.raises(ConfigError, match="needs the parameter.*region"):
        plan_playbook(book, parameters={}, source=str(sales_db))
    with pytest.raises(ConfigError, match="unknown parameter.*year"):
        plan_playbook(book, parameters={"region": "North", "year": "2025"}, source=str(sales_db))
    with pytest.raises(SourceError, match="data source not found"):
        plan_playbook(book, parameters={"region": "North"}, source=str(tmp_path / "gone.duckdb"))
    with pytest.raises(ConfigError, match="no playbook at"):
        plan_playbook(tmp_path / "nope.ipynb", parameters={}, source=str(sales_db))
    plan = plan_playbook(book, parameters={"region": "North"}, source=str(sales_db))
    assert plan.prompts == ["Revenue in North", "How many orders in North?"]
    empty = tmp_path / "empty.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("no tags")]), empty)
    # No model is configured: the playbook's own errors come first.
    no_model = {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}
    run = cli("execute", str(empty), "-o", str(tmp_path / "x.ipynb"), "--db", str(sales_db), env=no_model)
    assert run.returncode == 2 and "no prompts" in run.stderr
    run = cli("execute", str(book), "-o", str(tmp_path / "x.ipynb"), "-p", "region", "North",
              "--db", str(tmp_path / "gone.duckdb"), env=no_model)
    assert run.returncode == 2 and "data source not found" in run.stderr and "[1/" not in run.stderr


def test_playbook_progress_is_a_bar_on_a_terminal_and_lines_otherwise():
    import io

    from jupyter_analyst.turns import PromptProgress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    plain, tty = io.StringIO(), Terminal()
    for stream in (plain, tty):
        progress = PromptProgress(stream)
        progress(1, 2, "Revenue in North")
        progress(2, 2, "How many orders?")
        progress.close()
    assert plain.getvalue() == "[1/2] Revenue in North\n[2/2] How many orders?\n"
    assert "2/2" in tty.getvalue() and "\r" in tty.getvalue() and "[1/2]" not in tty.getvalue()


def _playbook_with_parameters(path: Path, prompt: str = "How many orders in {region}?") -> Path:
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Regional review\n\nWhat one region sold."),
        nbformat.v4.new_code_cell("region = 'South'\nmin_orders = 1", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_markdown_cell("Revenue in {region}", metadata={"tags": ["prompt"]}),
        nbformat.v4.new_markdown_cell("Then the order count:"),
        nbformat.v4.new_markdown_cell(prompt, metadata={"tags": ["prompt"]}),
        nbformat.v4.new_markdown_cell("*Reviewed monthly.*"),
    ])
    nbformat.write(nb, path)
    return path


def test_playbook_parameters_cell_gives_defaults_that_p_overrides(tmp_path, sales_db):
    from jupyter_analyst.testing import ScriptedModelServer

    book = _playbook_with_parameters(tmp_path / "review.ipynb")
    out = tmp_path / "out.ipynb"
    with ScriptedModelServer(PLAYBOOK_SCRIPT) as server:
        run = cli("execute", str(book), "-o", str(out), "-p", "region", "North", "-p", "min_orders", "5",
                  "--db", str(sales_db), "--workspace", str(tmp_path / "ws"),
                  env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"})
    assert run.returncode == 0, run.stderr[-2000:]
    assert "[1/2] Revenue in North" in run.stderr
    nb = nbformat.read(out, as_version=4)
    nbformat.validate(nb)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    # -p overrides the default, typed as the default is; the output's code can use them on a re-run.
    assert "region = 'North'" in params.source and "min_orders = 5" in params.source
    assert nb.metadata["jupyter_analyst"]["parameters"]["min_orders"] == 5
    # The untagged markdown stays where it stood among the prompts.
    order = [c.source.split("\n")[0] for c in nb.cells if c.cell_type == "markdown"
             and c.metadata.get("jupyter_analyst", {}).get("role") in ("playbook", "prompt")]
    assert order == ["# Regional review", "## Turn 1", "Then the order count:", "## Turn 2", "*Reviewed monthly.*"]


def test_playbook_defaults_and_placeholders_that_are_not_parameters(tmp_path, sales_db):
    from jupyter_analyst.turns import plan_playbook

    book = _playbook_with_parameters(tmp_path / "review.ipynb")
    plan = plan_playbook(book, parameters={}, source=str(sales_db))
    assert plan.prompts == ["Revenue in South", "How many orders in South?"]  # the defaults
    assert plan.parameters == {"region": "South", "min_orders": 1, "source": str(sales_db)}
    with pytest.raises(ConfigError, match="unknown parameter.*year.*does not declare") as err:
        plan_playbook(book, parameters={"year": "2025"}, source=str(sales_db))
    assert "min_orders, region" in err.value.hint
    with pytest.raises(ConfigError, match="'many' does not read as int"):
        plan_playbook(book, parameters={"min_orders": "many"}, source=str(sales_db))
    typo = _playbook_with_parameters(tmp_path / "typo.ipynb", prompt="Orders in {regoin} for {year}?")
    run = cli("execute", str(typo), "-o", str(tmp_path / "x.ipynb"), "--db", str(sales_db),
              env={"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""})
    assert run.returncode == 2 and "{regoin}, {year} in the playbook is not a parameter" in run.stderr
    assert "hint: declare it in the parameters cell (its parameters: min_orders, region)" in run.stderr
