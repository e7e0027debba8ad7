"""``--context DIR``: the team's context folder of a headless run, and its problems on stderr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).parents[1] / "fixtures" / "context"


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run([sys.executable, "-m", "jupyter_analyst.cli", *args], env={**base, **env},
                          capture_output=True, text=True, timeout=300)


def test_run_reads_the_context_folder_given_and_tells_a_broken_file_on_one_line(tmp_path, sales_db):
    from jupyter_analyst.testing import ScriptedModelServer

    team = tmp_path / "shared" / "team-context"
    shutil.copytree(EXAMPLE, team)
    (team / "queries" / "undated.sql").write_text("-- question: top regions\n-- verified_by: ana\nSELECT 1\n")
    script = {"turns": [{"steps": [{"tool_calls": [{"name": "find", "arguments": {"query": "sales"}}]},
                                   {"content": "[scripted model] found"}]}]}
    with ScriptedModelServer(script) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        run = run_cli("run", "--db", str(sales_db), "--prompt", "sales by month", "--workspace", str(tmp_path / "ws"),
                      "--context", str(team), "--no-summarizer", env=env)
        assert run.returncode == 0, run.stderr
        system = server.requests[0]["messages"][0]["content"]
        assert "The team's context (team-context/" in system and "Cancelled orders" in system
        found = json.loads(next(m for m in server.requests[1]["messages"] if m["role"] == "tool")["content"])
        assert found["matches"][0]["name"] == "revenue"
    told = [line for line in run.stderr.splitlines() if "context_file_invalid" in line]
    assert len(told) == 1 and "team-context/queries/undated.sql:2: a verified query's header says verified at" in told[0]
