"""SQL checks kept in the workspace: a query another process checked against the same data is
answered from the folder, with no worker; anything else (other data, another checker, an
entry that does not read back, a source in memory, a refusal) is checked as before.

"Another process" is this one with its own memory of checks emptied, so that only the
folder can answer; a worker is counted by ``prepared_count``.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import duckdb
import pytest

from jupyter_analyst.errors import SqlRejected
from jupyter_analyst.sql import SqlPreparer, open_source
from jupyter_analyst.sql import check_cache
from jupyter_analyst.sql import preparer as preparation

SQL = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region"


@pytest.fixture
def shop(tmp_path) -> Path:
    db = tmp_path / "shop.duckdb"
    with duckdb.connect(str(db)) as conn:
        conn.execute("CREATE TABLE sales AS SELECT 'north' AS region, 10.0 AS amount")
    return db


@pytest.fixture
def another_process(monkeypatch):
    """Forget the checks this process made (as a new process would start), and again on demand."""
    def forget() -> None:
        monkeypatch.setattr(preparation, "_checked", preparation._Checked())
    forget()
    return forget


def _check(preparer: SqlPreparer, spec: str, sql: str = SQL):
    async def go():
        source = open_source(spec)
        try:
            return await preparer.remembers(sql, source), await preparer.prepare(sql, source)
        finally:
            source.close()
    return asyncio.run(go())


def test_a_query_checked_by_one_process_is_answered_in_another_from_the_workspace(tmp_path, shop, another_process):
    kept = tmp_path / "checks"
    before = preparation.prepared_count()
    remembered, first = _check(SqlPreparer(kept=kept), str(shop))
    assert not remembered and preparation.prepared_count() - before == 1
    (entry,) = kept.rglob("*.json")  # one file per query, named by its key's digest
    assert entry.parent.parent == kept and entry.name.startswith(entry.parent.name)

    another_process()
    remembered, again = _check(SqlPreparer(kept=kept), str(shop))
    assert remembered and again == first
    assert preparation.prepared_count() - before == 1  # no worker asked
    # Without the folder, the other process checks it itself.
    another_process()
    assert _check(SqlPreparer(), str(shop)) == (False, first)
    assert preparation.prepared_count() - before == 2


def test_a_kept_check_is_not_taken_once_the_data_changed(tmp_path, shop, another_process):
    kept = tmp_path / "checks"
    _, first = _check(SqlPreparer(kept=kept), str(shop))
    with duckdb.connect(str(shop)) as conn:  # a new column: the data version changes
        conn.execute("ALTER TABLE sales ADD COLUMN country VARCHAR")
    another_process()
    before = preparation.prepared_count()
    remembered, again = _check(SqlPreparer(kept=kept), str(shop))
    assert not remembered and preparation.prepared_count() - before == 1
    assert again.canonical == first.canonical
    assert len(list(kept.rglob("*.json"))) == 2  # the check of each version


def test_a_check_made_by_another_checker_is_not_taken(tmp_path, shop, another_process, monkeypatch):
    kept = tmp_path / "checks"
    _check(SqlPreparer(kept=kept), str(shop))
    # Another version of the SQL layer or of sqlglot is another checker: its keys are others.
    monkeypatch.setattr(check_cache, "checker_identity", lambda: "0" * 64)
    another_process()
    before = preparation.prepared_count()
    assert _check(SqlPreparer(kept=kept), str(shop))[0] is False
    assert preparation.prepared_count() - before == 1


def test_the_checker_is_named_by_its_code_and_its_parser(tmp_path, monkeypatch):
    import importlib.metadata

    identity = check_cache.checker_identity()
    assert len(identity) == 64 and check_cache.checker_identity() == identity  # once per process
    sqlglot = importlib.metadata.version("sqlglot")
    here = Path(check_cache.__file__).parent
    copy = tmp_path / "sql"
    shutil.copytree(here, copy, ignore=shutil.ignore_patterns("__pycache__"))

    def named(folder: Path, sqlglot: str) -> str:
        monkeypatch.setattr(check_cache, "__file__", str(folder / "check_cache.py"))
        monkeypatch.setattr(importlib.metadata, "version", lambda name: sqlglot)
        check_cache.checker_identity.cache_clear()
        return check_cache.checker_identity()

    try:
        same = named(copy, sqlglot)
        other_parser = named(copy, "0.0.1")
        (copy / "allowed" / "duckdb.txt").write_text((copy / "allowed" / "duckdb.txt").read_text() + "read_text\n")
        other_allow_list = named(copy, sqlglot)
    finally:
        monkeypatch.undo()
        check_cache.checker_identity.cache_clear()
    assert same == identity
    assert len({identity, other_parser, other_allow_list}) == 3


@pytest.mark.parametrize("damage", ["truncated", "not json", "another query's", "a folder"])
def test_an_entry_that_does_not_read_back_is_checked_again_and_rewritten(tmp_path, shop, another_process, damage):
    kept = tmp_path / "checks"
    _, first = _check(SqlPreparer(kept=kept), str(shop))
    (entry,) = kept.rglob("*.json")
    if damage == "truncated":
        entry.write_text(entry.read_text()[:40])
    elif damage == "not json":
        entry.write_bytes(b"\xff\xfe not a check")
    elif damage == "another query's":
        _, other = _check(SqlPreparer(), str(shop), "SELECT COUNT(*) AS n FROM sales")
        entry.write_text(other.model_dump_json())
    else:
        entry.unlink()
        entry.mkdir()
    another_process()
    before = preparation.prepared_count()
    remembered, again = _check(SqlPreparer(kept=kept), str(shop))
    assert not remembered and again == first and preparation.prepared_count() - before == 1
    if damage != "a folder":
        assert entry.read_text() == first.model_dump_json()  # made whole again


def test_a_workspace_that_cannot_keep_checks_still_checks(tmp_path, shop, another_process):
    kept = tmp_path / "checks"
    kept.write_text("a file where the folder would be")  # no folder can be made there
    before = preparation.prepared_count()
    _, first = _check(SqlPreparer(kept=kept), str(shop))
    assert first.tables == ["sales"] and kept.read_text() == "a file where the folder would be"
    another_process()
    assert _check(SqlPreparer(kept=kept), str(shop)) == (False, first)
    assert preparation.prepared_count() - before == 2


def test_a_source_in_memory_or_a_live_database_is_never_kept(tmp_path, another_process):
    kept = tmp_path / "checks"
    csv = tmp_path / "data"
    csv.mkdir()
    (csv / "sales.csv").write_text("region,amount\nnorth,10\n")
    _check(SqlPreparer(kept=kept), str(csv / "sales.csv"))  # files: their version is settled
    assert len(list(kept.rglob("*.json"))) == 1
    _check(SqlPreparer(kept=kept), ":memory:", "SELECT 1 AS one")
    assert len(list(kept.rglob("*.json"))) == 1
    assert [check_cache.settled(v) for v in ("memory", "postgresql://u:***@h/db:live", "/d/x.duckdb:1:2.0")] == [
        False, False, True]


def test_a_refused_query_is_not_kept_and_is_refused_again(tmp_path, shop, another_process):
    kept = tmp_path / "checks"
    for _ in range(2):
        with pytest.raises(SqlRejected) as refused:
            _check(SqlPreparer(kept=kept), str(shop), "DELETE FROM sales")
        assert refused.value.reason == "sql_not_read_only"
        another_process()
    assert not kept.exists() or list(kept.rglob("*.json")) == []


def test_bad_input_is_not_remembered(tmp_path, shop):
    async def go():
        source = open_source(str(shop))
        try:
            return await SqlPreparer(kept=tmp_path / "checks").remembers(42, source)  # type: ignore[arg-type]
        finally:
            source.close()
    assert asyncio.run(go()) is False


def test_a_workspace_keeps_its_checks_beside_its_database_outside_every_kernels_folder(tmp_path):
    from jupyter_analyst.workspace import Workspace

    workspace = Workspace(tmp_path / "ws")
    try:
        assert workspace.checks_dir.parent == workspace.root
        assert not workspace.checks_dir.is_relative_to(workspace.root / "kernels")
    finally:
        workspace.close()
    shutil.rmtree(tmp_path / "ws")
