"""``jupyter analyst eval`` as a process: killed mid-run it continues where it stopped, without
asking the finished tasks again; ``--compare`` shows what changed; ``--gold check`` holds the
shipped suite's answers to the data."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from jupyter_analyst.testing import ScriptedModelServer

CLI = [sys.executable, "-m", "jupyter_analyst.cli"]
TASKS = [
    {"id": "first", "question": "How many orders are there?", "answer": 2400},
    {"id": "second", "question": "How many regions are there?", "answer": 5},
    {"id": "third", "question": "How many products are there?", "answer": 6},
]
SCRIPT = {"turns": [
    {"match": "orders", "steps": [{"content": "ANSWER: 2400"}]},
    {"match": "regions", "steps": [{"content": "ANSWER: 5"}]},
    {"match": "products", "steps": [{"content": "ANSWER: 7"}]},
]}


def env(server):
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return {**base, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "scripted"}


def command(tmp_path, sales_db, report="report.json"):
    return [*CLI, "eval", str(tmp_path / "suite.jsonl"), "-o", str(tmp_path / report), "--workspace",
            str(tmp_path / "ws"), "--concurrency", "1", "--no-sandbox", "--source", f"sales={sales_db}"]


def asked(server, word):
    return sum(word in m["messages"][-1]["content"] for m in server.requests)


def test_a_killed_run_continues_without_asking_the_finished_tasks_again(tmp_path, sales_db):
    (tmp_path / "suite.jsonl").write_text("".join(json.dumps({**t, "source": "sales"}) + "\n" for t in TASKS))
    progress = tmp_path / "report.progress.jsonl"
    with ScriptedModelServer(SCRIPT) as server:
        # The first task asks once (its answer's number is the orders table's row count, which
        # the schema the model is sent gives); the second task's question waits here.
        held, release = server.hold_requests(after=1)
        process = subprocess.Popen(command(tmp_path, sales_db), env=env(server), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert held.wait(120), "the second task never asked the model"
            lines = [json.loads(line) for line in progress.read_text().splitlines()]
            assert [r["task"]["id"] for r in lines[1:]] == ["first"]
            process.kill()
            process.wait(30)
        finally:
            release.set()
            if process.poll() is None:
                process.kill()
                process.wait(30)
        assert process.returncode == -9 and not (tmp_path / "report.json").exists()
        again = subprocess.run(command(tmp_path, sales_db), env=env(server), capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        # The finished task was not asked again; the one killed midway was, and the last one once.
        assert (asked(server, "orders"), asked(server, "regions"), asked(server, "products")) == (1, 2, 1)
    assert "first: correct, 1 call, resumed" in again.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert [(t["id"], t["correct"], t["failure"]) for t in report["tasks"]] == [
        ("first", True, None), ("second", True, None), ("third", False, "wrong_number")]
    assert "**2/3 correct** (66.7%)" in again.stdout


def test_compare_shows_what_changed_between_two_runs(tmp_path, sales_db):
    (tmp_path / "suite.jsonl").write_text("".join(json.dumps({**t, "source": "sales"}) + "\n" for t in TASKS))
    better = {"turns": [*SCRIPT["turns"][:2], {"match": "products", "steps": [{"content": "ANSWER: 6"}]}]}
    worse = {"turns": [{"match": "orders", "steps": [{"content": "I do not know"}]}, *SCRIPT["turns"][1:]]}
    for name, script in (("a.json", better), ("b.json", worse)):
        with ScriptedModelServer(script) as server:
            out = subprocess.run(command(tmp_path, sales_db, name), env=env(server), capture_output=True, text=True, timeout=300)
            assert out.returncode == 0, out.stderr
    shown = subprocess.run([*CLI, "eval", "--compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "| correct | 3 | 1 | -2 |" in shown.stdout
    assert "| first | correct | wrong (no_answer) | broken |" in shown.stdout
    assert "| third | correct | wrong (wrong_number) | broken |" in shown.stdout
    assert "| second | correct | correct | same |" in shown.stdout
    assert "Changes: broken 2, same 1." in shown.stdout


def test_gold_check_of_the_shipped_sample_suite(tmp_path):
    out = subprocess.run([*CLI, "eval", "sample", "--gold", "check", "--workspace", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "every gold answer matches the data" in out.stdout


def test_a_suite_that_is_not_one_is_a_clear_error(tmp_path):
    (tmp_path / "bad.jsonl").write_text('{"id": "a", "question": "q", "answer": 1}\n{"id": "a", "question": "r", "answer": 2}\n')
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    out = subprocess.run([*CLI, "eval", str(tmp_path / "bad.jsonl"), "-o", str(tmp_path / "r.json")],
                         env={**base, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and "two tasks have the id 'a'" in out.stderr and "Traceback" not in out.stderr


def test_gold_check_on_a_source_named_on_the_command_line(tmp_path, sales_db):
    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps({"id": "n", "source": "sales", "question": "How many orders?", "answer": 2400,
                                 "gold_sql": "SELECT count(*) FROM orders"}) + "\n")
    out = subprocess.run([*CLI, "eval", str(suite), "--gold", "check", "--source", f"sales={sales_db}",
                          "--workspace", str(tmp_path / "ws")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "every gold answer matches the data" in out.stdout


def test_a_task_naming_a_source_the_run_was_not_given_is_refused_with_how_to_allow_it(tmp_path, sales_db):
    (tmp_path / "suite.jsonl").write_text("".join(json.dumps({**t, "source": str(sales_db)}) + "\n" for t in TASKS))
    plain = [a for a in command(tmp_path, sales_db) if not a.startswith("sales=") and a != "--source"]
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    out = subprocess.run(plain, env={**base, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "x"},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"error: task 'first' names the source '{sales_db}', which this run was not given" in out.stderr
    assert f"hint: pass --source {sales_db}=PATH_OR_URL to say what it reads" in out.stderr
    assert not (tmp_path / "report.progress.jsonl").exists() and "Traceback" not in out.stderr
    # Given by the user as it stands in the suite, it is read.
    allowed = subprocess.run([*plain, "--source", str(sales_db), "--gold", "check"], capture_output=True, text=True,
                             timeout=300)
    assert "names the source" not in allowed.stderr and "no gold_sql" in allowed.stderr


def test_help_says_what_a_suite_may_name_and_how_to_pass_a_source():
    out = subprocess.run([*CLI, "eval", "--help"], capture_output=True, text=True, timeout=120)
    text = " ".join(out.stdout.split())
    assert "--source NAME=PATH_OR_URL" in text and "may name only `sample`, `nycflights13`" in text
    assert "relative sources are read inside DIR" in text
