"""The store on PostgreSQL: several processes on one database, bad URLs, a dying server."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from jupyter_analyst.events import TextDelta
from jupyter_analyst.cli import main
from jupyter_analyst.errors import StorageError
from jupyter_analyst.store import ThreadStore

_WRITER = textwrap.dedent("""
    import sys
    from jupyter_analyst.events import TextDelta
    from jupyter_analyst.store import ThreadStore

    url, name, *threads = sys.argv[1:]
    store = ThreadStore(url)
    print("ready", flush=True)
    sys.stdin.readline()  # both writers start together
    for i in range(60):
        for thread_id in threads:
            if i % 3 == 0:
                store.append_events([TextDelta(thread_id=thread_id, turn_id="t", text=f"{name}{i}a"),
                                     TextDelta(thread_id=thread_id, turn_id="t", text=f"{name}{i}b")])
            else:
                store.append_event(TextDelta(thread_id=thread_id, turn_id="t", text=f"{name}{i}"))
        if i % 20 == 0:
            store.start_turn(threads[0], f"{name}{i}")
    store.close()
""")


def _writer(url: str, name: str, *threads: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, url, name, *threads],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def test_two_processes_keep_every_thread_gap_free_and_a_listener_sees_the_other(postgres):
    import psycopg

    url = postgres.new_database()
    store = ThreadStore(url)
    shared, only_a, only_b = (store.create_thread().thread_id for _ in range(3))
    listener = psycopg.connect(url, autocommit=True)
    listener.execute("LISTEN analyst_events")
    a = _writer(url, "a", shared, only_a)
    b = _writer(url, "b", shared, only_b)
    for proc in (a, b):
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    assert a.wait() == 0 and b.wait() == 0

    per_thread = {shared: 160, only_a: 80, only_b: 80}  # 60 steps: 20 pairs + 40 singles
    for thread_id, n in per_thread.items():
        assert [e.seq for e in store.events(thread_id)] == list(range(1, n + 1))
    texts = [e.text for e in store.events(shared)]
    assert [t for t in texts if t.startswith("a")] == _expected("a")
    assert [t for t in texts if t.startswith("b")] == _expected("b")
    assert [t.number for t in store.turns(shared)] == list(range(1, 7))

    # What the other processes committed was announced, per thread in seq order, ending at N.
    seen: dict[str, list[int]] = {}
    for note in listener.notifies():
        thread_id, seq = note.payload.split()
        seen.setdefault(thread_id, []).append(int(seq))
        if all(seen.get(t, [0])[-1] == n for t, n in per_thread.items()):
            break
    for thread_id, n in per_thread.items():
        assert seen[thread_id] == sorted(seen[thread_id]) and seen[thread_id][-1] == n
    listener.close()
    store.close()


def _expected(name: str) -> list[str]:
    out: list[str] = []
    for i in range(60):
        out += [f"{name}{i}a", f"{name}{i}b"] if i % 3 == 0 else [f"{name}{i}"]
    return out


def test_bad_credentials_are_one_clear_error_with_the_password_masked(postgres, capsys):
    url = postgres.url("postgres", password="wrong-pass-1234")
    with pytest.raises(StorageError) as caught:
        ThreadStore(url)
    assert "password authentication failed" in caught.value.message
    assert "wrong-pass-1234" not in caught.value.message and "***" in caught.value.message
    assert main(["threads", "--store", url]) != 0
    err = capsys.readouterr().err
    assert err.startswith("error: cannot connect to the workspace database postgresql://analyst:***@")
    assert "wrong-pass-1234" not in err and "Traceback" not in err


def test_an_unreachable_store_is_a_clear_error(postgres):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        url = f"postgresql://ann:hidden-pw@127.0.0.1:{port}/x"
        with pytest.raises(StorageError, match="cannot connect to the workspace database") as caught:
            ThreadStore(url)
    assert "hidden-pw" not in caught.value.message


def test_the_cli_reads_threads_from_the_store(postgres, tmp_path, capsys):
    url = postgres.new_database()
    store = ThreadStore(url)
    store.create_thread(title="on postgres")
    store.close()
    assert main(["threads", "--workspace", str(tmp_path / "ws"), "--store", url]) == 0
    assert "on postgres" in capsys.readouterr().out
    assert not (tmp_path / "ws" / "analyst.sqlite3").exists()


def test_a_killed_server_is_a_storage_error_and_loses_nothing_committed(postgres):
    url = postgres.new_database()
    store = ThreadStore(url)
    thread_id = store.create_thread().thread_id
    for i in range(5):
        store.append_event(TextDelta(thread_id=thread_id, turn_id="t", text=str(i)))
    postgres.kill()
    try:
        with pytest.raises(StorageError, match="cannot (write to|read) the workspace database postgresql://analyst:\\*\\*\\*@"):
            store.append_event(TextDelta(thread_id=thread_id, turn_id="t", text="lost"))
    finally:
        store.close()
        postgres.start()
    again = ThreadStore(url)
    assert [e.text for e in again.events(thread_id)] == ["0", "1", "2", "3", "4"]
    again.close()


def test_a_malformed_store_url_is_refused_without_its_text(postgres):
    with pytest.raises(StorageError, match=r'postgresql://ann:\*\*\*@.*invalid integer value "notaport"') as caught:
        ThreadStore("postgresql://ann:top-secret@127.0.0.1:notaport/x")
    assert "top-secret" not in caught.value.message
