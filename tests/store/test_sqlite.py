"""A SQLite workspace written by several connections: a write waits for another's
transaction in short steps, and gives up with a clear error past the time limit."""

import sqlite3

import pytest

from jupyter_analyst.store import sqlite as db
from jupyter_analyst.errors import StorageError
from jupyter_analyst.store import ThreadStore


@pytest.fixture
def stores(tmp_path):
    """A workspace's thread store, and a second connection to its database that takes the
    write lock when told to."""
    path = tmp_path / "a.sqlite3"
    store = ThreadStore(path)
    other = sqlite3.connect(path, isolation_level=None, timeout=0)
    yield store, other
    if other.in_transaction:
        other.execute("ROLLBACK")
    other.close()
    store.close()


def test_a_write_waits_for_another_connections_transaction_in_short_steps(stores, monkeypatch):
    store, other = stores
    other.execute("BEGIN IMMEDIATE")
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 3:  # the other transaction ends while this one waits
            other.execute("COMMIT")

    monkeypatch.setattr(db.time, "sleep", sleep)
    thread = store.create_thread(source="x.duckdb", title="waited")
    assert store.get_thread(thread.thread_id).title == "waited"
    # Tens of microseconds at first, doubling (SQLite's own wait sleeps a whole millisecond).
    assert waits == [db._BUSY_STEP_S, 2 * db._BUSY_STEP_S, 4 * db._BUSY_STEP_S]


def test_a_write_gives_up_past_the_limit_and_names_the_file(stores, monkeypatch):
    store, other = stores
    other.execute("BEGIN IMMEDIATE")
    monkeypatch.setattr(db, "BUSY_TIMEOUT_S", 0.05)
    with pytest.raises(StorageError, match="cannot write to the workspace database .*a.sqlite3.*locked"):
        store.create_thread(source="x.duckdb", title="refused")
    other.execute("ROLLBACK")
    assert store.list_threads() == []  # nothing half-written; the store still works
    assert store.create_thread(source="x.duckdb", title="later").title == "later"


def test_a_checkpoint_held_back_by_a_reader_does_not_fail_the_turn(tmp_path, monkeypatch):
    path = tmp_path / "a.sqlite3"
    store = ThreadStore(path)
    thread = store.create_thread(source="x.duckdb", title="t")
    reader = sqlite3.connect(path, isolation_level=None, timeout=0)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM threads").fetchall()  # holds this snapshot
    store.create_thread(source="x.duckdb", title="after the reader's snapshot")
    monkeypatch.setattr(db, "BUSY_TIMEOUT_S", 0.05)
    store.checkpoint()  # cannot copy past the reader's snapshot: done as far as it can
    reader.execute("COMMIT")
    store.checkpoint()
    ((busy, *_),) = sqlite3.connect(path).execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    assert busy == 0 and store.get_thread(thread.thread_id).title == "t"
    reader.close()
    store.close()


def test_a_lock_this_connection_holds_itself_is_raised_at_once(monkeypatch):
    """SQLITE_LOCKED (a table in use by this very connection) does not end by waiting."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (x)")
    conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(10)])
    reading = conn.execute("SELECT * FROM t")
    reading.fetchone()  # a statement of this connection still reads the table
    waits: list[float] = []
    monkeypatch.setattr(db.time, "sleep", waits.append)
    with pytest.raises(sqlite3.OperationalError, match="table is locked"):
        db._patiently(lambda: conn.execute("DROP TABLE t"))
    assert waits == []
    conn.close()
