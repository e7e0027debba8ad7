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


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_read_text_of_a_host_file(entry, tmp_path, host, capsys):
    suite = suite_of(tmp_path, f"SELECT read_text('{host / 'secret.txt'}')", answer="x")
    printed = assert_refused(entry, suite, tmp_path / "ws", capsys)
    assert "read_text() is not allowed" in printed


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_read_text_of_etc_passwd(entry, tmp_path, capsys):
    suite = suite_of(tmp_path, "SELECT content FROM read_text('/etc/passwd')", answer="x")
    printed = assert_refused(entry, suite, tmp_path / "ws", capsys)
    assert "root:" not in printed and "is not allowed" in printed


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_copy_to_a_host_file(entry, tmp_path, capsys):
    target = tmp_path / "written-by-the-suite.csv"
    suite = suite_of(tmp_path, f"COPY (SELECT 42) TO '{target}'")
    printed = assert_refused(entry, suite, tmp_path / "ws", capsys)
    assert not target.exists() and "COPY is not allowed" in printed


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_attach_a_host_database(entry, tmp_path, host, capsys):
    suite = suite_of(tmp_path, f"ATTACH '{host / 'secret.duckdb'}' AS s")
    printed = assert_refused(entry, suite, tmp_path / "ws", capsys)
    assert "ATTACH is not allowed" in printed


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_attach_then_read_in_several_statements(entry, tmp_path, host, capsys):
    suite = suite_of(tmp_path, f"ATTACH '{host / 'secret.duckdb'}' AS s; SELECT word FROM s.secret", answer="x")
    assert_refused(entry, suite, tmp_path / "ws", capsys)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_read_csv_of_a_host_path(entry, tmp_path, host, capsys):
    suite = suite_of(tmp_path, f"SELECT word FROM read_csv('{host / 'secret.csv'}')", answer="x")
    printed = assert_refused(entry, suite, tmp_path / "ws", capsys)
    assert "read_csv() is not allowed" in printed


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_a_host_file_named_as_a_table(entry, tmp_path, host, capsys):
    suite = suite_of(tmp_path, f"SELECT word FROM '{host / 'secret.csv'}'", answer="x")
    printed = assert_refused(entry, suite, tmp_path / "ws", capsys)
    assert "reading the file" in printed


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_set_a_setting(entry, tmp_path, capsys):
    suite = suite_of(tmp_path, "SET enable_external_access = true")
    printed = assert_refused(entry, suite, tmp_path / "ws", capsys)
    assert "SET is not allowed" in printed


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_pragma(entry, tmp_path, capsys):
    suite = suite_of(tmp_path, "PRAGMA database_list")
    assert_refused(entry, suite, tmp_path / "ws", capsys)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_several_statements(entry, tmp_path, capsys):
    suite = suite_of(tmp_path, "SELECT 1; SELECT 2", answer=2)
    assert_refused(entry, suite, tmp_path / "ws", capsys)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("sql", ["INSTALL httpfs", "LOAD httpfs"])
def test_install_or_load_an_extension(entry, sql, tmp_path, capsys):
    suite = suite_of(tmp_path, sql)
    assert_refused(entry, suite, tmp_path / "ws", capsys)


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
