"""A measure the team's context lacks, from a headless run to the folder: the turn prints the
command that would save it and writes nothing; the command saves it (read back by
dbt-semantic-interfaces); the next turn computing it cites the definition instead."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_analyst.knowledge import load_team_context
from jupyter_analyst.testing import ScriptedModelServer, sql_step, text_step

pytest.importorskip("dbt_semantic_interfaces")

EXAMPLE = Path(__file__).parents[1] / "fixtures" / "context"
SQL = "SELECT SUM(o.quantity) AS units_shipped FROM orders o WHERE o.quantity > 0 AND o.region_id = 2"
SCRIPT = {"turns": [{"match": "units", "steps": [sql_step(SQL, "units"), text_step("[scripted model] Units counted.")]},
                    {"match": "revenue", "steps": [sql_step("SELECT SUM(revenue) AS revenue FROM orders WHERE quantity > 0",
                                                            "revenue"), text_step("[scripted model] Revenue.")]}]}


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run([sys.executable, "-m", "jupyter_analyst.cli", *args], env={**base, **(env or {})},
                          capture_output=True, text=True, timeout=300)


def test_a_suggested_metric_is_saved_only_by_its_command_and_then_cited(tmp_path, sales_db):
    team = tmp_path / "team-context"
    shutil.copytree(EXAMPLE, team)
    before = sorted(p.relative_to(team) for p in team.rglob("*"))
    common = ["--db", str(sales_db), "--workspace", str(tmp_path / "ws"), "--context", str(team), "--no-summarizer"]
    with ScriptedModelServer(SCRIPT) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        first = run_cli("run", "--prompt", "units shipped to region 2", *common, env=env)
        assert first.returncode == 0, first.stderr
        lines = first.stdout.splitlines()
        assert "not defined in the team's context: SUM(quantity) FROM orders WHERE quantity > 0 AND region_id = 2" in lines
        (command,) = [line.split(": ", 1)[1] for line in lines if line.startswith("  save it as a definition: ")]
        assert command == ("jupyter analyst context add-metric units_shipped --table orders --agg sum --expr quantity "
                           f"--filter 'quantity > 0' --filter 'region_id = 2' --context {team}")
        assert sorted(p.relative_to(team) for p in team.rglob("*")) == before, "a turn writes nothing to the folder"
        # The definition the turn followed is none: nothing is cited.
        assert not [line for line in lines if line.startswith("definition used:")]

        words = shlex.split(command)
        assert words[:2] == ["jupyter", "analyst"]
        saved = run_cli(*words[2:])
        assert saved.returncode == 0, saved.stderr
        assert saved.stdout.strip() == (f"saved the metric units_shipped to {team}/models/units_shipped.yml: "
                                        "SUM(quantity) FROM orders WHERE quantity > 0 AND region_id = 2")
        metric = load_team_context(team).metric("units_shipped")
        assert metric.formula() == "SUM(quantity) FROM orders WHERE quantity > 0 AND region_id = 2"
        again = run_cli(*words[2:])
        assert again.returncode == 2 and "already exists: a definition is never replaced" in again.stderr

        thread = json.loads(run_cli("run", "--prompt", "units shipped to region 2", "--json", *common,
                                    "--rerun", env=env).stdout)
        assert thread["suggestions"] == []
        assert thread["definitions"] == [{"kind": "definition", "name": "units_shipped", "definition": "metric",
                                          "file": f"team-context/{metric.origin}", "call_id": thread["definitions"][0]["call_id"]}]
        revenue = run_cli("run", "--prompt", "revenue", *common, env=env)
        assert f"definition used: the team's metric revenue (team-context/models/orders.yml:46)" in revenue.stdout


def test_add_metric_refuses_bad_input_in_one_line(tmp_path):
    team = tmp_path / "context"
    shutil.copytree(EXAMPLE, team)
    for args, words in [
        (["--agg", "sum", "--expr", "(SELECT 1)"], "is not a term of the table's columns"),
        (["--agg", "sum", "--expr", "quantity", "--filter", "quantity >"], "is not SQL"),
        (["--agg", "median", "--expr", "quantity"], "invalid choice: 'median'"),
    ]:
        refused = run_cli("context", "add-metric", "units", "--table", "orders", *args, "--context", str(team))
        assert refused.returncode == 2, refused
        assert words in refused.stderr.strip().splitlines()[-1] or words in refused.stderr.strip().splitlines()[0], \
            refused.stderr
    assert not (team / "models" / "units.yml").exists()
    shown = run_cli("context", "add-metric", "units", "--table", "orders", "--agg", "sum", "--expr", "quantity",
                    "--dry-run", "--context", str(team))
    assert shown.returncode == 0 and "measures:" in shown.stdout and not (team / "models" / "units.yml").exists()
