"""``jupyter analyst context verify`` and ``eval context`` as processes: a finished turn becomes
a verified query and a task of the team's suite; the suite passes with the model answering as
it did, fails (exit 1) when an answer changes, and ``--gold check`` names the task whose
answer moved when one row of the data changes."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from jupyter_analyst.knowledge import load_team_context
from jupyter_analyst.testing import ScriptedModelServer, sql_step, text_step

CLI = [sys.executable, "-m", "jupyter_analyst.cli"]
QUESTION = "What is the revenue of orders that were not cancelled?"
SQL = "SELECT SUM(revenue) AS revenue FROM orders WHERE quantity > 0"
TALK = "What is in the data?"
SCRIPT = {"turns": [
    {"match": "not cancelled", "steps": [sql_step(SQL, "revenue"), text_step("[scripted model] It is 613,135.60.")]},
    {"match": "in the data", "steps": [text_step("[scripted model] Orders, regions and products.")]},
]}


def cli(*args: str, server=None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    if server is not None:
        env |= {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "scripted"}
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def thread(tmp_path, sales_db):
    """A thread of two finished turns on a copy of the sample data: one answered by SQL, one by words."""
    data = tmp_path / "data" / "sales.duckdb"
    data.parent.mkdir()
    shutil.copy(sales_db, data)
    workspace = tmp_path / "team" / ".analyst"
    with ScriptedModelServer(SCRIPT) as server:
        first = cli("run", "--db", str(data), "--prompt", QUESTION, "--workspace", str(workspace), "--no-sandbox",
                    "--no-summarizer", "--json", server=server)
        assert first.returncode == 0, first.stderr
        thread_id = json.loads(first.stdout.splitlines()[-1])["thread_id"]
        second = cli("run", "--thread", thread_id, "--prompt", TALK, "--workspace", str(workspace), "--no-sandbox",
                     "--no-summarizer", server=server)
        assert second.returncode == 0, second.stderr
    return thread_id, workspace, data


def test_a_verified_turn_becomes_a_query_and_a_suite_task_that_eval_context_holds(tmp_path, thread):
    thread_id, workspace, data = thread
    verified = cli("context", "verify", "--thread", thread_id, "--turn", "1", "--workspace", str(workspace),
                   "--by", "Ana Lopez", "--json")
    assert verified.returncode == 0, verified.stderr
    told = json.loads(verified.stdout)
    expected = duckdb.connect(str(data), read_only=True).execute(SQL).fetchone()[0]
    assert told["answer"] == pytest.approx(expected, rel=1e-12) and told["tolerance"] == 0.01
    # The default folder is context/ beside the workspace; the query is one the folder's reader takes.
    folder = workspace.parent / "context"
    team = load_team_context(folder)
    assert team.problems == []
    (query,) = team.queries
    assert (query.file, query.questions, query.verified_by, query.sql) == (
        f"queries/{told['task_id']}.sql", [QUESTION], "Ana Lopez", SQL)
    assert f"-- from: thread {thread_id} turn 1" in (folder / query.file).read_text()
    (task,) = [json.loads(line) for line in (folder / "suite.jsonl").read_text().splitlines()]
    assert {k: task[k] for k in ("id", "question", "gold_sql", "source", "tolerance")} == {
        "id": told["task_id"], "question": QUESTION, "gold_sql": SQL, "source": "sales", "tolerance": 0.01}
    assert task["answer"] == told["answer"]

    # The suite passes with the model answering the question as the data says ...
    source = ["--source", f"sales={data}", "--workspace", str(workspace), "--no-sandbox"]
    right = {"turns": [{"match": "not cancelled", "steps": [sql_step(SQL, "revenue"),
                                                            text_step(f"ANSWER: {expected:,.2f}")]}]}
    with ScriptedModelServer(right) as server:
        passed = cli("eval", "context", *source, server=server)
        # The team's context reached the model's prompt.
        assert "The team's context (context/" in server.requests[0]["messages"][0]["content"]
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "every verified answer holds (1 tasks)" in passed.stdout
    # ... and fails, exit 1, once the model's answer changes; every task is asked again.
    wrong = {"turns": [{"match": "not cancelled", "steps": [text_step(f"ANSWER: {expected + 1000:,.2f}")]}]}
    with ScriptedModelServer(wrong) as server:
        failed = cli("eval", "context", *source, server=server)
        # The task's turn was run (no resume), its answer once checked: the number is no result's.
        assert len(server.requests) == 2 and "this check is not repeated" in str(server.requests[1]["messages"])
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert f"1 of 1 verified answers failed: {told['task_id']} (wrong_number)" in failed.stdout

    # The gold answers hold while the data does; one row changed, the task whose answer moved is named.
    held = cli("eval", "context", "--gold", "check", *source)
    assert held.returncode == 0 and "every gold answer matches the data: a task that fails is the model's" in held.stdout
    with duckdb.connect(str(data)) as conn:
        conn.execute("UPDATE orders SET revenue = revenue + 500 WHERE order_id = (SELECT min(order_id) FROM orders "
                     "WHERE quantity > 0)")
    moved = cli("eval", "context", "--gold", "check", *source)
    assert moved.returncode == 1, moved.stdout + moved.stderr
    assert moved.stdout.startswith(f"{told['task_id']} turn 1: file {told['answer']!r}") and "differ from the data" in moved.stdout


def test_a_second_verification_of_a_question_is_numbered_and_a_name_taken_is_refused(thread):
    thread_id, workspace, _ = thread
    args = ["context", "verify", "--thread", thread_id, "--turn", "1", "--workspace", str(workspace), "--json"]
    first, second = cli(*args), cli(*args)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert json.loads(second.stdout)["task_id"] == json.loads(first.stdout)["task_id"] + "_2"
    folder = workspace.parent / "context"
    before = (folder / "suite.jsonl").read_text()
    taken = cli(*args, "--name", json.loads(first.stdout)["task_id"])
    assert taken.returncode == 2 and "already exists: a verified query is never replaced" in taken.stderr
    assert (folder / "suite.jsonl").read_text() == before and len(list((folder / "queries").iterdir())) == 2


def test_what_cannot_be_verified_is_refused_with_one_line(thread):
    thread_id, workspace, _ = thread
    for extra, message in [
        (["--thread", "thr_0000000000000000"], "unknown thread 'thr_0000000000000000'"),
        (["--thread", thread_id, "--turn", "7"], f"the thread {thread_id} has no turn 7"),
        (["--thread", thread_id, "--turn", "2"], f"turn 2 of {thread_id} ran no SQL: there is no query to verify"),
        (["--thread", thread_id], f"turn 2 of {thread_id} ran no SQL"),  # the default: the last turn
        (["--thread", thread_id, "--turn", "1", "--step", "call_nope"], "'call_nope' is not a query that turn 1 ran"),
    ]:
        out = cli("context", "verify", *extra, "--workspace", str(workspace))
        assert out.returncode == 2, out.stdout + out.stderr
        assert message in out.stderr and "Traceback" not in out.stderr, extra
    assert not (workspace.parent / "context").exists()


def test_a_context_folder_that_is_a_link_is_neither_written_nor_run(tmp_path, thread):
    thread_id, workspace, _ = thread
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (workspace.parent / "context").symlink_to(elsewhere)
    out = cli("context", "verify", "--thread", thread_id, "--turn", "1", "--workspace", str(workspace))
    assert out.returncode == 2 and "is a link: the context folder is written only through its own folders" in out.stderr
    assert list(elsewhere.iterdir()) == []
    (elsewhere / "suite.jsonl").write_text(json.dumps({"id": "x", "question": "q", "answer": 1}) + "\n")
    ran = cli("eval", "context", "--workspace", str(workspace), "--db", "sample")
    assert ran.returncode == 2 and "is a link: the team's suite is read only as the context folder's own file" in ran.stderr


ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize("page", ["README.md", "docs/context.md"])
def test_the_ci_job_shown_is_valid_yaml_whose_commands_the_command_line_takes(page):
    import yaml

    from jupyter_analyst.cli.parser import build_parser

    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", (ROOT / page).read_text(), re.S) if "eval context" in b]
    job = yaml.safe_load(block)
    assert "context/**" in job[True]["pull_request"]["paths"]  # YAML reads the key `on` as true
    (steps,) = [j["steps"] for j in job["jobs"].values()]
    commands = [line.strip() for step in steps for line in step.get("run", "").splitlines()
                if line.strip().startswith("jupyter analyst")]
    assert any("--gold check" in c for c in commands) and any("--gold" not in c and "eval context" in c for c in commands)
    for command in commands:
        args = build_parser().parse_args(shlex.split(command.split("#")[0])[2:])
        if args.command == "eval":
            assert str(args.suite) == "context" and args.sources == [("sales", "data/sales.duckdb")], command


def test_the_team_suite_is_hostile_input_its_sql_and_sources_are_refused(tmp_path, sales_db):
    folder = tmp_path / "context"
    folder.mkdir()
    suite = folder / "suite.jsonl"
    common = ["--context", str(folder), "--workspace", str(tmp_path / "ws")]
    suite.write_text(json.dumps({"id": "peek", "question": "q", "answer": 1, "source": "sales",
                                 "gold_sql": "SELECT * FROM read_text('/etc/passwd')"}) + "\n")
    out = cli("eval", "context", "--gold", "check", "--source", f"sales={sales_db}", *common)
    assert out.returncode == 2 and "task 'peek' turn 1: its gold_sql was refused" in out.stderr, out.stderr
    assert "root:" not in out.stdout + out.stderr
    suite.write_text(json.dumps({"id": "elsewhere", "question": "q", "answer": 1, "source": str(sales_db),
                                 "gold_sql": "SELECT 1"}) + "\n")
    with ScriptedModelServer(SCRIPT) as server:
        for args in (["--gold", "check"], []):
            out = cli("eval", "context", *args, *common, server=server)
            assert out.returncode == 2 and "which this run was not given" in out.stderr, out.stderr
        assert server.requests == []  # refused before any task ran
