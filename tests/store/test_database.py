"""Versioned, forward-only schemas: workspaces from before the version table keep opening."""

import sqlite3

import pytest

from jupyter_analyst.artifacts import ArtifactStore
from jupyter_analyst.store import DatabaseStore
from jupyter_analyst.errors import StorageError
from jupyter_analyst.store.schema import SCHEMA as _SCHEMA
from jupyter_analyst.store import ThreadStore


def test_a_workspace_without_the_version_table_opens_with_its_rows(tmp_path):
    db = tmp_path / "a.sqlite3"
    old = sqlite3.connect(db)
    old.executescript(_SCHEMA)  # the schema as written before schema_version existed
    old.execute("INSERT INTO threads VALUES ('thr_old', 'ann', 'kept', NULL, '2026-01-01T00:00:00.000Z')")
    old.commit()
    old.close()
    store = ThreadStore(db)
    assert store.schema_version == 1 + len(ThreadStore.migrations)
    assert store.get_thread("thr_old").title == "kept"
    store.close()


def test_each_store_records_its_own_version(tmp_path):
    threads = ThreadStore(tmp_path / "a.sqlite3")
    artifacts = ArtifactStore(tmp_path / "a.sqlite3", tmp_path)
    rows = dict(sqlite3.connect(tmp_path / "a.sqlite3").execute("SELECT component, version FROM schema_version"))
    assert rows == {"ThreadStore": 1 + len(ThreadStore.migrations), "ArtifactStore": 1 + len(ArtifactStore.migrations)}
    threads.close()
    artifacts.close()


class _Grown(DatabaseStore):
    component = "grown"
    schema = "CREATE TABLE IF NOT EXISTS things (name TEXT PRIMARY KEY);"


def test_later_steps_apply_once_in_order(tmp_path):
    db = tmp_path / "g.sqlite3"
    first = _Grown(db)
    assert first.schema_version == 1
    first.close()

    class Later(_Grown):
        migrations = (
            "ALTER TABLE things ADD COLUMN size INTEGER NOT NULL DEFAULT 0;",
            "-- an index for listing\nCREATE INDEX things_by_size ON things(size);",
        )

    later = Later(db)
    assert later.schema_version == 3
    later.close()
    again = Later(db)  # nothing re-applied: a second CREATE INDEX would fail
    assert again.schema_version == 3
    again.close()


def test_a_newer_database_is_refused_with_the_upgrade_hint(tmp_path):
    db = tmp_path / "g.sqlite3"
    _Grown(db).close()
    conn = sqlite3.connect(db)
    conn.execute("UPDATE schema_version SET version = 9 WHERE component = 'grown'")
    conn.commit()
    conn.close()
    with pytest.raises(StorageError, match="newer than this jupyter-analyst knows"):
        _Grown(db)
