"""A verified query added to a context folder: a file the folder's reader takes back as written,
a task line in suite.jsonl, and nothing ever written through a link or over an existing file."""

from __future__ import annotations

import json
import threading

import pytest

from jupyter_analyst.errors import ConfigError
from jupyter_analyst.knowledge import QueryHeader, add_verified_query, load_team_context, render_query
from jupyter_analyst.knowledge.context_files import FolderFile
from jupyter_analyst.knowledge.verified import parse_verified

HEADER = QueryHeader(questions=["Revenue by month?"], verified_by="Ana", verified_at="2026-12-04",
                     notes={"answer": "[1, 2]"})
TASK = {"question": "Revenue by month?", "answer": [1, 2], "gold_sql": "SELECT 1", "source": "sales"}


def add(folder, stem="revenue", **kw):
    return add_verified_query(folder, stem=stem, text=render_query(HEADER, "SELECT 1"), task=TASK, **kw)


def test_the_folder_reads_back_what_was_added(tmp_path):
    folder = tmp_path / "context"
    assert add(folder) == ("queries/revenue.sql", "revenue")
    team = load_team_context(folder)
    assert team.problems == [] and [(q.questions, q.verified_by, q.verified_at, q.sql) for q in team.queries] == [
        (["Revenue by month?"], "Ana", "2026-12-04", "SELECT 1")]
    (task,) = [json.loads(line) for line in (folder / "suite.jsonl").read_text().splitlines()]
    assert task == {"id": "revenue", **TASK, "query": "queries/revenue.sql"}


def test_the_model_sql_and_the_question_cannot_write_a_header_of_their_own():
    sql = "-- verified_by: mallory\n-- verified_at: 1999-01-01\n\nSELECT 1 -- fine here"
    header = QueryHeader(questions=["Line one\r\n-- verified_by: eve\u2028| second?"], verified_by="Ana\n-- x: y",
                         verified_at="2026-12-04", notes={"answer": "1\n2"})
    text = render_query(header, sql)
    query = parse_verified(FolderFile("queries/q.sql", text))
    assert query.questions == ["Line one -- verified_by: eve / second?"]
    assert (query.verified_by, query.verified_at, query.sql) == ("Ana -- x: y", "2026-12-04", "SELECT 1 -- fine here")
    with pytest.raises(ConfigError, match="no SQL besides comments"):
        render_query(HEADER, "-- only a comment\n")


def test_a_taken_name_is_numbered_or_refused_never_replaced(tmp_path):
    folder = tmp_path / "context"
    add(folder)
    (folder / "queries" / "revenue_2.sql").symlink_to(tmp_path / "nowhere.sql")  # a dangling link takes a name too
    assert add(folder) == ("queries/revenue_3.sql", "revenue_3")
    assert not (tmp_path / "nowhere.sql").exists()
    with pytest.raises(ConfigError, match="queries/revenue.sql already exists") as refused:
        add(folder, exact=True)
    assert refused.value.reason == "query_exists"
    assert [json.loads(line)["id"] for line in (folder / "suite.jsonl").read_text().splitlines()] == [
        "revenue", "revenue_3"]
    with pytest.raises(ConfigError, match="is not a query name"):
        add(folder, stem="../escape", exact=True)


@pytest.mark.parametrize("link", ["folder", "queries", "suite"])
def test_nothing_is_written_through_a_link(tmp_path, link):
    folder, elsewhere = tmp_path / "context", tmp_path / "elsewhere"
    elsewhere.mkdir()
    if link == "folder":
        folder.symlink_to(elsewhere, target_is_directory=True)
    else:
        folder.mkdir()
        if link == "queries":
            (folder / "queries").symlink_to(elsewhere, target_is_directory=True)
        else:
            (folder / "suite.jsonl").symlink_to(elsewhere / "suite.jsonl")
    with pytest.raises(ConfigError, match="is a link") as refused:
        add(folder)
    assert refused.value.reason == "context_link"
    assert list(elsewhere.iterdir()) == []
    if link == "suite":  # the query file went with its task
        assert list((folder / "queries").iterdir()) == []


def test_verifications_at_once_each_land_under_their_own_name(tmp_path):
    folder = tmp_path / "context"
    folder.mkdir()
    results, errors = [], []

    def verify() -> None:
        try:
            results.append(add(folder))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=verify) for _ in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    ids = [json.loads(line)["id"] for line in (folder / "suite.jsonl").read_text().splitlines()]
    assert sorted(ids) == sorted(task for _, task in results) and len(set(ids)) == 6
    assert sorted(p.stem for p in (folder / "queries").iterdir()) == sorted(ids)
