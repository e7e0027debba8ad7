"""A suite from elsewhere attacking the host: its gold SQL and its tasks' sources.

A suite file is as untrusted as a notebook. Its ``gold_sql`` is checked and run as the model's
SQL is (the guard, the sealed engine), so ``eval SUITE --gold check|write`` and
``python -m jupyter_analyst.evals.gold`` read no host file, write none, attach no database and
change no setting: a refused query stops the check naming the task, the turn and the guard's
reason (exit status 2), and ``--gold write`` leaves the suite's bytes as they were. A task's
``source`` may name only the shipped sources or one the user gave this run: a host database
named by path, URL, ``:memory:`` or ``../`` is refused before any SQL or any model turn runs.

Each attack runs through the command line's own entry points (``eval``'s, in this process for
speed, and once as the real console script) against the real DuckDB of the shipped ``sample``
source.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from jupyter_analyst.cli.console import _command
from jupyter_analyst.evals import gold
from jupyter_analyst.testing import ScriptedModelServer

SECRET = "HOST-SECRET-7f3a9c"
ENTRY_POINTS = ("check", "write", "module")


@pytest.fixture
def host(tmp_path):
    """A host folder with a secret text file, CSV and DuckDB database, beside the suite's folder."""
    folder = tmp_path / "host"
    folder.mkdir()
    (folder / "secret.txt").write_text(f"{SECRET}\n")
    (folder / "secret.csv").write_text(f"word\n{SECRET}\n")
    with duckdb.connect(str(folder / "secret.duckdb")) as conn:
        conn.execute("CREATE TABLE secret AS SELECT ? AS word", [SECRET])
    return folder


def suite_of(tmp_path: Path, gold_sql: str, *, source: str = "sample", answer: object = 1) -> Path:
    folder = tmp_path / "suites"
    folder.mkdir(exist_ok=True)
    path = folder / "hostile.jsonl"
    task = {"id": "evil", "source": source, "question": "How many orders?", "answer": answer, "gold_sql": gold_sql}
    path.write_text(json.dumps({"id": "fine", "source": "sample", "question": "How many regions?", "answer": 5,
                                "gold_sql": "SELECT count(*) FROM regions"}) + "\n" + json.dumps(task) + "\n")
    return path


def gold_run(entry: str, suite: Path, workspace: Path, capsys) -> tuple[int, str]:
    """The exit status and everything printed, of ``eval SUITE --gold check|write`` or of
    ``python -m jupyter_analyst.evals.gold SUITE [--write]``."""
    if entry == "module":
        code = gold.main([str(suite), "--write", "--cache", str(workspace / "eval-data")])
    else:
        code = _command(["eval", str(suite), "--gold", entry, "--workspace", str(workspace)])
    out = capsys.readouterr()
    return code, out.out + out.err


def assert_refused(entry, suite, workspace, capsys, *, turn: str = "task 'evil' turn 1") -> str:
    before = suite.read_bytes()
    code, printed = gold_run(entry, suite, workspace, capsys)
    assert code == 2, printed
    assert f"error: {turn}: its gold_sql was refused: " in printed
    assert SECRET not in printed
    assert suite.read_bytes() == before  # --gold write rewrote nothing
    return printed


#: One gold query each, ``{host}`` the host folder: what it attempts, the guard's words for it
#: (``""``: refused, words not pinned), and the answer its task expects.
ATTACKS = {
    "read_text of a host file": ("SELECT read_text('{host}/secret.txt')", "read_text() is not allowed", "x"),
    "read_text of /etc/passwd": ("SELECT content FROM read_text('/etc/passwd')", "is not allowed", "x"),
    "COPY to a host file": ("COPY (SELECT 42) TO '{host}/written-by-the-suite.csv'", "COPY is not allowed", 1),
    "ATTACH a host database": ("ATTACH '{host}/secret.duckdb' AS s", "ATTACH is not allowed", 1),
    "ATTACH then read": ("ATTACH '{host}/secret.duckdb' AS s; SELECT word FROM s.secret", "", "x"),
    "read_csv of a host path": ("SELECT word FROM read_csv('{host}/secret.csv')", "read_csv() is not allowed", "x"),
    "a host file as a table": ("SELECT word FROM '{host}/secret.csv'", "reading the file", "x"),
    "SET a setting": ("SET enable_external_access = true", "SET is not allowed", 1),
    "PRAGMA": ("PRAGMA database_list", "", 1),
    "several statements": ("SELECT 1; SELECT 2", "", 2),
    "INSTALL an extension": ("INSTALL httpfs", "", 1),
    "LOAD an extension": ("LOAD httpfs", "", 1),
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("attack", ATTACKS)
def test_a_gold_query_that_reaches_for_the_host_is_refused(entry, attack, tmp_path, host, capsys):
    sql, said, answer = ATTACKS[attack]
    suite = suite_of(tmp_path, sql.format(host=host), answer=answer)
    printed = assert_refused(entry, suite, tmp_path / "ws", capsys)
    assert said in printed and "root:" not in printed
    assert not (host / "written-by-the-suite.csv").exists()


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_a_refusal_in_a_later_turn_names_that_turn(entry, tmp_path, host, capsys):
    folder = tmp_path / "suites"
    folder.mkdir()
    suite = folder / "hostile.jsonl"
    suite.write_text(json.dumps({"id": "evil", "source": "sample", "turns": [
        {"question": "How many regions?", "answer": 5, "gold_sql": "SELECT count(*) FROM regions"},
        {"question": "And?", "answer": "x", "gold_sql": f"SELECT read_text('{host / 'secret.txt'}')"}]}) + "\n")
    assert_refused(entry, suite, tmp_path / "ws", capsys, turn="task 'evil' turn 2")


def test_the_console_script_refuses_it_too(tmp_path, host):
    suite = suite_of(tmp_path, f"SELECT content FROM read_text('{host / 'secret.txt'}')", answer="x")
    before = suite.read_bytes()
    out = subprocess.run([sys.executable, "-m", "jupyter_analyst.cli", "eval", str(suite), "--gold", "write",
                          "--workspace", str(tmp_path / "ws")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "error: task 'evil' turn 1: its gold_sql was refused: function read_text() is not allowed" in out.stderr
    assert SECRET not in out.stdout + out.stderr and "Traceback" not in out.stderr
    assert suite.read_bytes() == before


# ------------------------------------------------------------------ sources the user did not name


def hostile_sources(host: Path) -> dict[str, str]:
    return {
        "absolute": str(host / "secret.duckdb"),
        "relative": "../host/secret.duckdb",
        "url": f"duckdb:///{host / 'secret.duckdb'}",
        "sqlite-url": f"sqlite:///{host / 'secret.sqlite'}",
        "memory": ":memory:",
        "home": "~/secret.duckdb",
    }


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("kind", ["absolute", "relative", "url", "sqlite-url", "memory", "home"])
def test_gold_sql_on_a_source_the_user_did_not_name(entry, kind, tmp_path, host, capsys):
    spec = hostile_sources(host)[kind]
    suite = suite_of(tmp_path, "SELECT word FROM secret", source=spec, answer="x")
    before = suite.read_bytes()
    code, printed = gold_run(entry, suite, tmp_path / "ws", capsys)
    assert code == 2, printed
    assert f"error: task 'evil' names the source {spec!r}, which this run was not given" in printed
    assert "--source" in printed and SECRET not in printed
    assert suite.read_bytes() == before
    # Refused before any SQL ran: not even the allowed task's source was built.
    assert not (tmp_path / "ws" / "eval-data" / "sample.duckdb").exists()


@pytest.mark.parametrize("kind", ["absolute", "relative", "url", "memory"])
def test_model_turns_on_a_source_the_user_did_not_name(kind, tmp_path, host, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "scripted")
    spec = hostile_sources(host)[kind]
    suite = suite_of(tmp_path, "SELECT word FROM secret", source=spec, answer="x")
    script = {"turns": [{"match": "", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": "SELECT word FROM secret", "name": "w"}}]},
        {"content": "ANSWER: x"}]}]}
    report = tmp_path / "out" / "report.json"
    with ScriptedModelServer(script) as server:
        code = _command(["eval", str(suite), "-o", str(report), "--workspace", str(tmp_path / "ws"),
                         "--base-url", server.base_url, "--model", "scripted", "--no-sandbox"])
        asked = list(server.requests)
    printed = capsys.readouterr()
    assert code == 2, printed
    assert f"task 'evil' names the source {spec!r}, which this run was not given" in printed.err
    # Nothing ran: no model call, no thread, no report that could carry the source's rows.
    assert asked == [] and not (tmp_path / "out").exists()
    assert not any(SECRET.encode() in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()
                   and host not in p.parents)
